"""Lowering: from a KernelSpec to the concrete plan a template renders.

The plan fixes the vector layout of the register tile (which loop runs along
the lanes, how many vectors per row), the k-loop unroll, the tail strategy and
the register allocation, and refuses what the register file cannot hold.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Tuple

from .isa import DTYPE_BYTES, Isa, VecOps, get_isa

if TYPE_CHECKING:  # pragma: no cover
    from .spec import KernelSpec


@dataclass(frozen=True)
class RegisterBudget:
    accumulators: int
    b_vectors: int
    a_broadcasts: int
    available: int

    @property
    def used(self) -> int:
        return self.accumulators + self.b_vectors + self.a_broadcasts


def register_budget(spec: "KernelSpec") -> RegisterBudget:
    isa = get_isa(spec.isa)
    nv = spec.nr // isa.lanes(spec.dtype)
    # MR x NV accumulators, one row of B vectors per k step, one A broadcast.
    return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs)


def check_register_budget(spec: "KernelSpec") -> None:
    b = register_budget(spec)
    if b.used > b.available:
        raise ValueError(
            f"tile: {spec.mr}x{spec.nr} needs {b.accumulators} accumulators + {b.b_vectors} B "
            f"vectors + {b.a_broadcasts} A broadcast = {b.used} vector registers, over the "
            f"{spec.isa} budget of {b.available}; allowed: MR*NR/{isa_lanes(spec)} + "
            f"NR/{isa_lanes(spec)} + 1 <= {b.available}"
        )


def isa_lanes(spec: "KernelSpec") -> int:
    return get_isa(spec.isa).lanes(spec.dtype)


@dataclass(frozen=True)
class GemmPlan:
    """Everything the GEMM template needs, already decided."""

    name: str
    dtype: str
    ctype: str
    mr: int
    nr: int
    lanes: int
    nv: int                    # vectors per row of the tile
    unroll: int
    tail: str
    epilogue: Tuple[str, ...]
    prefetch: int              # k steps ahead, 0 = off
    isa: Isa
    v: VecOps
    budget: RegisterBudget
    params_type: str

    @property
    def elem_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]


def lower_gemm(spec: "KernelSpec") -> GemmPlan:
    isa = get_isa(spec.isa)
    v = isa.vec(spec.dtype)
    return GemmPlan(
        name=spec.name,
        dtype=spec.dtype,
        ctype=v.ctype,
        mr=spec.mr,
        nr=spec.nr,
        lanes=v.lanes,
        nv=spec.nr // v.lanes,
        unroll=spec.unroll,
        tail=spec.tail,
        epilogue=spec.epilogue,
        prefetch=spec.prefetch,
        isa=isa,
        v=v,
        budget=register_budget(spec),
        params_type=f"tg_{spec.dtype}_gemm_params",
    )


LOWERINGS = {"gemm": lower_gemm}


def lower(spec: "KernelSpec"):
    return LOWERINGS[spec.op](spec)
