"""Intel AMX with BF16 (Sapphire Rapids and later): the avx512bf16 table plus the tile unit's
TDPBF16PS, a 16 x 16 float32 tile += a 16 x 32 bfloat16 tile times a 16 (pairs) x 16 one. Its
own tier so that only its translation units carry tile instructions; the other dtypes' kernels
stay avx512bf16's and avx512's (the dispatcher falls through). Its kernels' epilogues are
AVX-512 (the avx512 float32 spellings)."""
from dataclasses import replace

from .avx512bf16 import ISA as AVX512BF16
from .base import TileOps

ISA = replace(
    AVX512BF16, name="amxbf16",
    cflags=AVX512BF16.cflags + ("-mamx-tile", "-mamx-bf16"),
    requires=AVX512BF16.requires + ("amx_tile", "amx_bf16"),
    priority=AVX512BF16.priority + 3,  # above avx512fp16 too
    tile_ops={"bf16": TileOps(count=8, rows=16, colsb=64, group=2, acc_ctype="float",
                              dot_="_tile_dpbf16ps({c}, {a}, {b})")},
    description="AMX-BF16 (TDPBF16PS bfloat16 tile products) + AVX-512 BF16",
)
