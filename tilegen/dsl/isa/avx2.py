from .base import FLOAT_DTYPES, INT_NARROW, Isa
from .x86 import PREFETCH, X86_GNU_ASM, bf16_ops, int_ops, s8_ops, vec_ops

ISA = Isa(
    name="avx2", arch="x86_64", vector_bits=256, num_vregs=16, tail="temp",
    cflags=("-mavx2", "-mfma"), headers=("immintrin.h",),
    requires=("avx", "avx2", "fma"), priority=20,
    prefetch_=PREFETCH,
    ops={d: vec_ops(256, d) for d in FLOAT_DTYPES},
    int_ops={d: int_ops(256, d) for d in INT_NARROW},
    dot_ops={"bf16": bf16_ops(256)},
    quad_ops={"s8": s8_ops(256)},
    asm_guard=X86_GNU_ASM,
    description="AVX2 + FMA3, 16 ymm registers",
)
