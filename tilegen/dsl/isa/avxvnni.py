"""AVX-VNNI (Intel Alder Lake and later clients, which lack AVX-512): the AVX2 table plus the
VEX VPDPBUSD on ymm, an int32 += four u8 x s8 products. Its own tier, as avx512vnni is
avx512's: only its int8 kernels carry the instruction; every other dtype stays avx2's (the
dispatcher falls through to it). Priority between avx2 (20) and avx512 (30): a CPU with
AVX-512 takes the wider tiers first."""
from dataclasses import replace

from .avx2 import ISA as AVX2
from .x86 import s8_ops

ISA = replace(
    AVX2, name="avxvnni",
    cflags=AVX2.cflags + ("-mavxvnni",),
    requires=AVX2.requires + ("avx_vnni",),
    priority=AVX2.priority + 4,
    quad_ops={"s8": s8_ops(256, native=True)},
    dot_ops={},
    description="AVX2 + AVX-VNNI (VEX VPDPBUSD int8 dot products on ymm)",
)
