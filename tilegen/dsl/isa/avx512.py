from .base import FLOAT_DTYPES, INT_NARROW, Isa
from .x86 import PREFETCH, X86_GNU_ASM, bf16_ops, int_ops, s8_ops, vec_ops

ISA = Isa(
    name="avx512", arch="x86_64", vector_bits=512, num_vregs=32, tail="mask",
    cflags=("-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq"),
    headers=("immintrin.h",),
    requires=("avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"),
    priority=30,
    prefetch_=PREFETCH,
    ops={d: vec_ops(512, d) for d in FLOAT_DTYPES},
    int_ops={d: int_ops(512, d) for d in INT_NARROW},
    dot_ops={"bf16": bf16_ops(512)},
    quad_ops={"s8": s8_ops(512)},
    asm_guard=X86_GNU_ASM,
    description="AVX-512 F/VL/BW/DQ, 32 zmm registers, masked tails",
)
