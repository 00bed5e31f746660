"""AVX-512 with the BF16 extension (AMD Zen 4/5, Intel Cooper Lake, Sapphire Rapids and later):
the AVX-512 table plus VDPBF16PS, a float32 += bfloat16 pair dot product. Its own tier (flags,
translation units, feature check) so that no other ISA's code carries the instruction; f32 and
f64 kernels stay avx512's (the dispatcher falls through to it)."""
from dataclasses import replace

from .avx512 import ISA as AVX512
from .x86 import bf16_ops

ISA = replace(
    AVX512, name="avx512bf16",
    cflags=AVX512.cflags + ("-mavx512bf16",),
    requires=AVX512.requires + ("avx512_bf16",),
    priority=AVX512.priority + 5,
    dot_ops={"bf16": bf16_ops(512, native=True)},
    description="AVX-512 + AVX512-BF16 (VDPBF16PS bfloat16 pair dot products)",
)
