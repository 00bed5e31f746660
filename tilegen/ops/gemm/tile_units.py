"""What the bfloat16 and int8 GEMM families share about tile-unit kernels (AMX): the ISA's tile
spellings for a kernel, and the k grouping of A's panel that a tile row fixes."""
from __future__ import annotations

from typing import Optional

from tilegen.dsl.isa import TileOps, get_isa


def tiles(spec) -> Optional[TileOps]:
    """The tile unit's spellings where the kernel's ISA has one for its dtype, else None."""
    return get_isa(spec.isa).tile_ops.get(spec.dtype)


def a_group(spec) -> int:
    """k groups (4 bytes: a bfloat16 pair, an int8 quad) per group of the kernel's A panel: a
    tile row's (16) for tile kernels, else 1 (per k group, MR groups). Row i's group p is at
    ((p / G) * MR + i) * G + p % G groups."""
    t = tiles(spec)
    return t.colsb // 4 if t else 1
