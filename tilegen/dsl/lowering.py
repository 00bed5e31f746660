"""Lowering: from a KernelSpec to the concrete plan its family's template renders, and the
helpers every family's lowering shares.

The plan fixes the vector layout of the register tile, the unroll, the tail strategy and the
register allocation; each family lowers its own kernels (tilegen/ops/<op>/<family>.py) into a
subclass of `Plan`. The spec has already refused what the register file cannot hold.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Tuple

from .family import RegisterBudget
from .isa import Isa, VecOps

if TYPE_CHECKING:  # pragma: no cover
    from .spec import KernelSpec

# Independent FMA chains a core needs in flight to keep its FMA units busy (latency x ports, with
# margin): a tile with fewer accumulators is latency-bound.
FMA_CHAINS = 8


@dataclass(frozen=True)
class Plan:
    """What every family's plan carries: the kernel's name and dtype, its register tile, the
    ISA table it renders with and the register budget it was checked against."""

    name: str
    dtype: str
    mr: int
    nr: int
    lanes: int                 # elements per vector of the dtype the tile computes in
    isa: Isa
    budget: RegisterBudget


@dataclass(frozen=True)
class VectorPlan(Plan):
    """A plan computing in one vector type: its C element type, spellings and tail strategy."""

    ctype: str
    v: VecOps
    tail: str


@dataclass(frozen=True)
class RowsPlan(VectorPlan):
    """A plan whose tile reads MR rows through a few base pointers (`row_addressing`)."""

    row_bases: Tuple[int, ...]
    row_addr: Tuple[Tuple[int, int], ...]


def row_addressing(mr: int) -> Tuple[Tuple[int, ...], Tuple[Tuple[int, int], ...]]:
    """How a kernel reaching its operand by rows addresses MR rows with few registers.

    Row i is read as base_b + s * rs (bytes), with s in {0, 1, 2, 4, 8}: the scales x86
    addressing applies for free (other targets compute the address once per row). Returns the
    base rows and, per row, (base row, scale).
    """
    bases, rows = [], []
    for i in range(mr):
        hit = next(((b, i - b) for b in bases if i - b in (0, 1, 2, 4, 8)), None)
        if hit is None:
            bases.append(i)
            hit = (i, 0)
        rows.append(hit)
    return tuple(bases), tuple(rows)


def register_budget(spec: "KernelSpec") -> RegisterBudget:
    return spec.family.register_budget(spec)


def lower(spec: "KernelSpec") -> Any:
    return spec.family.lower(spec)


__all__ = ["FMA_CHAINS", "Plan", "RegisterBudget", "RowsPlan", "VectorPlan", "lower",
           "register_budget", "row_addressing"]
