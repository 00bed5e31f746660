"""The BLAS update y <- a x + y of contiguous vectors (?axpy).

i runs along the SIMD lanes, NR values (NR/lanes vectors) per step; the tile is 1xNR. The
remainder takes masked loads and stores where the ISA has masks, else a scalar loop. The shape
rules, plan, dispatch rows and tester coverage are blasdot's.
"""
from __future__ import annotations

from tilegen.dsl.family import RegisterBudget
from tilegen.dsl.isa import DTYPES, get_isa

from tilegen.ops.blas_abi.blasdot import Blasdot


class Blasaxpy(Blasdot):
    name = "blasaxpy"
    template = "blasaxpy/ukernel.c.j2"
    types_template = "blasaxpy/types.h.j2"
    c_select = None  # blas_dispatch.c selects it with the blasdot kernels
    what = "update one vector"

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        # The y vectors of one step, their x vectors, and the broadcast a.
        return RegisterBudget(nv, nv, 1, isa.num_vregs, input_name="x", broadcast_name="a")

    def budget_rule(self, spec) -> str:
        return "2 * NR/lanes + 1"

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        return f"void {spec.name}(int64_t, {t}, const {t}*, {t}*);"


FAMILY = Blasaxpy()
