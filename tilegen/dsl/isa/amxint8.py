"""Intel AMX with INT8 (Sapphire Rapids and later): the avx512vnni table plus the tile unit's
TDPBUSD, a 16 x 16 int32 tile += a 16 x 64 uint8 tile times a 16 (quads) x 64 int8 one:
unsigned A times signed B, as VPDPBUSD, so the int8 kernels' A offset (QuadOps.a_offset: A + 128
packed, 128 x B's column sums taken back) serves both tiers alike. Its own tier so that only its
translation units carry tile instructions; the other dtypes' kernels stay avx512vnni's and
avx512's."""
from dataclasses import replace

from .avx512vnni import ISA as AVX512VNNI
from .base import TileOps

ISA = replace(
    AVX512VNNI, name="amxint8",
    cflags=AVX512VNNI.cflags + ("-mamx-tile", "-mamx-int8"),
    requires=AVX512VNNI.requires + ("amx_tile", "amx_int8"),
    priority=AVX512VNNI.priority + 3,  # above avx512fp16 too
    tile_ops={"s8": TileOps(count=8, rows=16, colsb=64, group=4, acc_ctype="int32_t",
                            dot_="_tile_dpbusd({c}, {a}, {b})")},
    description="AMX-INT8 (TDPBUSD int8 tile products) + AVX-512 VNNI",
)
