"""GEMV, dot form: y[i] = alpha * dot(A[i, :k], x) + beta * y[i] for MR rows of A.

Rows of A and x are contiguous along k, so k runs along the lanes: KR k values (a multiple of
the vector width) per step, NR = 1. The GEMM driver selects these kernels (matrix-vector
products); they share GEMM's parameter block.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..isa import DTYPES, Isa, VecOps, get_isa
from . import OpFamily, RegisterBudget


@dataclass(frozen=True)
class GemvPlan:
    name: str
    dtype: str
    ctype: str
    mr: int
    kr: int                    # k values per step
    lanes: int
    kv: int                    # vectors per row per step
    tail: str
    isa: Isa
    v: VecOps
    budget: RegisterBudget
    params_type: str


class Gemv(OpFamily):
    name = "gemv"
    template = "gemv/ukernel.c.j2"
    types_template = "gemv/types.h.j2"
    vector_dim = "k"
    sdk_op = "gemm"  # the GEMM driver selects and calls these kernels
    c_row_doc = "X(isa id, MR, KR, production, kernel, \"name\")"

    def check(self, spec) -> None:
        if spec.nr != 1:
            raise ValueError(f"nr: gemv kernels compute one column (NR=1), got NR={spec.nr}")
        self.check_multiple("kr", spec.kr, spec, "KR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        kv = spec.kr // isa.lanes(spec.dtype)
        # MR x KR/lanes partial sums, one x vector per lane group, one A load.
        return RegisterBudget(spec.mr * kv, kv, 1, isa.num_vregs, input_name="x",
                              broadcast_name="A load")

    def budget_rule(self, spec) -> str:
        lanes = self.lanes(spec)
        return f"MR*KR/{lanes} + KR/{lanes} + 1"

    def lower(self, spec) -> GemvPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        return GemvPlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, kr=spec.kr,
            lanes=v.lanes, kv=spec.kr // v.lanes, tail=spec.tail, isa=isa, v=v,
            budget=self.register_budget(spec), params_type=f"tg_{spec.dtype}_gemm_params",
        )

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        return (f"void {spec.name}(int64_t, int64_t, const {t}*, int64_t, const {t}*, {t}*, "
                f"int64_t, const tg_{spec.dtype}_gemm_params*);")

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.kr}, {int(entry.production)}, {s.name}, "
                f"\"{s.name}\"")


FAMILY = Gemv()
