"""AVX-512 with AVX512-FP16 (Intel Sapphire Rapids and later Xeons): the AVX-512 table plus
arithmetic on 32 half lanes, for the half-accumulating float16 GEMM. Its own tier (flags,
translation units, feature check) so that no other ISA's code carries the instructions; every
other dtype's kernels stay avx512's (the dispatcher falls through to it).

Priority avx512 + 6 (36): above avx512vnni (34) and avx512bf16 (35), whose dtypes it has no
kernels for, so the order among them only matters for the report; room is left between for
other AVX-512 tiers."""
from dataclasses import replace

from .avx512 import ISA as AVX512
from .base import HalfOps

# VFMADD231PH: fused, one rounding to half per multiply-add (AVX512-FP16 ignores MXCSR's DAZ and
# FTZ: half denormals are always kept). x86 has no FMA by element: A's values are broadcast, a
# half read through memcpy (the kernels' memory type is uint16_t).
F16 = HalfOps(
    vtype="__m512h", lanes=32,
    zero_="_mm512_setzero_ph()",
    load_="_mm512_loadu_ph((const void*) ({p}))",
    store_="_mm512_storeu_ph((void*) ({p}), {x})",
    bcast_="_mm512_set1_ph(tg_half_value({p}))",
    fma_="_mm512_fmadd_ph({b}, {a}, {acc})",
    helpers=(
        "static inline _Float16 tg_half_value(const uint16_t* p) {\n"
        "  _Float16 v;\n"
        "  __builtin_memcpy(&v, p, sizeof(v));\n"
        "  return v;\n"
        "}\n"))

ISA = replace(
    AVX512, name="avx512fp16",
    cflags=AVX512.cflags + ("-mavx512fp16",),
    requires=AVX512.requires + ("avx512_fp16",),
    priority=AVX512.priority + 6,
    dot_ops={}, quad_ops={}, half_ops={"f16": F16},
    description="AVX-512 + AVX512-FP16 (VFMADD231PH half-precision FMAs)",
)
