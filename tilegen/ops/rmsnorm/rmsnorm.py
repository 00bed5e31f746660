"""RMSNorm, one row per call: y[j] = x[j] * w[j] / sqrt(sum(x^2) / n + eps) (w NULL: no weight).

n runs along the SIMD lanes, NR values (NR/lanes vectors, each its own sum of squares) per step;
the tile is 1xNR. The remainder takes masked loads where the ISA has them, else a scalar loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import DTYPES, get_isa
from tilegen.dsl.lowering import VectorPlan


@dataclass(frozen=True)
class RmsnormPlan(VectorPlan):
    nv: int                    # vectors per step (independent sums of squares)


class Rmsnorm(OpFamily):
    name = "rmsnorm"
    template = "rmsnorm/ukernel.c.j2"
    types_template = "rmsnorm/types.h.j2"
    vector_dim = "n"
    c_select = "tg_rmsnorm_select"
    c_row_doc = "X(isa id, NR, production, kernel, \"name\")"

    def check(self, spec) -> None:
        if spec.mr != 1:
            raise ValueError(f"mr: rmsnorm kernels compute one row (MR=1), got MR={spec.mr}")
        self.check_multiple("nr", spec.nr, spec, "NR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        # Sums of squares, the loaded x vectors, and the scale (second pass).
        return RegisterBudget(nv, nv, 1, isa.num_vregs, input_name="x",
                              broadcast_name="scale")

    def budget_rule(self, spec) -> str:
        return "2 * NR/lanes + 1"

    def lower(self, spec) -> RmsnormPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        return RmsnormPlan(name=spec.name, dtype=spec.dtype, mr=1, nr=spec.nr, lanes=v.lanes,
                           isa=isa, budget=self.register_budget(spec), ctype=v.ctype, v=v,
                           tail=spec.tail, nv=spec.nr // v.lanes)

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        return f"void {spec.name}(int64_t, const {t}*, const {t}*, {t}, {t}*);"

    def c_row(self, entry) -> str:
        s = entry.spec
        return f"TG_ISA_{s.isa.upper()}, {s.nr}, {int(entry.production)}, {s.name}, \"{s.name}\""

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_NR": s.nr, "TG_LANES": self.lanes(s)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """The row, NR values per step (n % NR also fixes the vector steps and the tail)."""
        return {"n": s.nr}


FAMILY = Rmsnorm()
