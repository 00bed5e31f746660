"""What the bfloat16 and int8 GEMM families share about tile-unit kernels (AMX): the ISA's tile
spellings for a kernel, the k grouping of A's panel that a tile row fixes, the whole-tile shape
rule and register budget, and A's grouped panels in NumPy (the Python driver's packing)."""
from __future__ import annotations

from typing import Optional

from tilegen.dsl.family import RegisterBudget
from tilegen.dsl.isa import TileOps, get_isa

BUDGET_RULE = "(MR/16)*(NR/16) + NR/16 + MR/16 tiles"


def tiles(spec) -> Optional[TileOps]:
    """The tile unit's spellings where the kernel's ISA has one for its dtype, else None."""
    return get_isa(spec.isa).tile_ops.get(spec.dtype)


def a_group(spec) -> int:
    """k groups (4 bytes: a bfloat16 pair, an int8 quad) per group of the kernel's A panel: a
    tile row's (16) for tile kernels, else 1 (per k group, MR groups). Row i's group p is at
    ((p / G) * MR + i) * G + p % G groups."""
    t = tiles(spec)
    return t.colsb // 4 if t else 1


def check_whole_tiles(spec, t: TileOps) -> None:
    """A tile kernel is a grid of whole tiles: MR rows and NR columns (of 4 bytes) in tiles."""
    tile_cols = t.colsb // 4
    if spec.mr % t.rows or spec.nr % tile_cols:
        raise ValueError(f"tile: {spec.isa} kernels are whole {t.rows}x{tile_cols} tiles; got "
                         f"{spec.mr}x{spec.nr}")


def tile_budget(spec, t: TileOps) -> RegisterBudget:
    """Tile registers: C's grid, a row of B tiles, a column of A tiles."""
    mt, nt = spec.mr // t.rows, spec.nr // (t.colsb // 4)
    return RegisterBudget(mt * nt, nt, mt, t.count, input_name="B tiles",
                          broadcast_name="A tiles")


def grouped_a_panels(pa, group: int):
    """A's panels (panels, k groups, MR, values a group) in a tile kernel's order: per `group`
    k groups, MR rows of them, the last group zero-padded."""
    import numpy as np

    panels, kg, mr, width = pa.shape
    kg_a = -(-kg // group) * group
    pa = np.concatenate([pa, np.zeros((panels, kg_a - kg, mr, width), pa.dtype)], axis=1)
    return np.ascontiguousarray(
        pa.reshape(panels, kg_a // group, group, mr, width).transpose(0, 1, 3, 2, 4))
