"""AVX-512 with VNNI (Intel Cascade Lake and later, AMD Zen 4/5): the AVX-512 table plus
VPDPBUSD, an int32 += four u8 x s8 products. Its own tier (flags, translation units, feature
check) so that no other ISA's code carries the instruction; every other dtype's kernels stay
avx512's (the dispatcher falls through to it)."""
from dataclasses import replace

from .avx512 import ISA as AVX512
from .x86 import s8_ops

ISA = replace(
    AVX512, name="avx512vnni",
    cflags=AVX512.cflags + ("-mavx512vnni",),
    requires=AVX512.requires + ("avx512_vnni",),
    priority=AVX512.priority + 4,
    quad_ops={"s8": s8_ops(512, native=True)},
    dot_ops={},
    description="AVX-512 + AVX512-VNNI (VPDPBUSD int8 dot products)",
)
