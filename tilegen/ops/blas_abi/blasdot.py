"""The BLAS dot product of contiguous vectors: sum_i x[i] * y[i] (?dot, and ?nrm2's sum of
squares with y = x; complex data as 2n reals).

i runs along the SIMD lanes, NR values (NR/lanes vectors, each its own accumulator, so the
FMAs do not wait on each other) per step; the tile is 1xNR. The remainder takes a masked load
where the ISA has masks, else a scalar loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import DTYPES, get_isa
from tilegen.dsl.lowering import VectorPlan


@dataclass(frozen=True)
class BlasdotPlan(VectorPlan):
    nv: int                    # vectors per step (independent accumulators)


class Blasdot(OpFamily):
    name = "blasdot"
    template = "blasdot/ukernel.c.j2"
    types_template = "blasdot/types.h.j2"
    vector_dim = "n"
    c_select = "tg_blas_kernels_select"  # and the blasaxpy kernels
    c_row_doc = "X(isa id, NR, production, kernel, \"name\")"
    what = "compute one sum"
    example_dims = (("n", 1 << 16),)

    def python_call(self, spec, kernel):
        """sum(x * y) of two contiguous vectors of one length, one kernel call."""
        import ctypes

        from tilegen.dsl import jit

        t = spec.dtype
        fn = kernel.function(jit.CTYPES[t], ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)

        def call(x, y):
            x = jit.check_array("x", x, t, 1)
            y = jit.check_array("y", y, t, 1, shape=x.shape)
            return jit.NP_DTYPES[t](fn(x.shape[0], x.ctypes.data, y.ctypes.data))

        call.__doc__ = (f"{spec.name}: the dot product sum(x * y) of x and y (n,) (contiguous), "
                        f"as a NumPy scalar")
        return call

    def python_example(self, spec, dims, rng):
        import numpy as np

        from tilegen.dsl import jit

        (n,) = dims
        nt = jit.NP_DTYPES[spec.dtype]
        x, y = (rng.standard_normal(n).astype(nt) for _ in range(2))
        eps = float(np.finfo(nt).eps)
        return jit.Example(args=(x, y), kwargs={}, expected=np.asarray(
            np.dot(x.astype(np.float64), y.astype(np.float64)), dtype=nt), work=2.0 * x.nbytes,
            unit="byte", shape=f"{n}", rtol=0.0, atol=8 * eps * n * float(
                np.abs(x).max(initial=1) * np.abs(y).max(initial=1)))

    def check(self, spec) -> None:
        if spec.mr != 1:
            raise ValueError(f"mr: {self.name} kernels {self.what} (MR=1), got MR={spec.mr}")
        self.check_multiple("nr", spec.nr, spec, "NR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        # Accumulators, and the x and y vectors of one step.
        return RegisterBudget(nv, 2 * nv, 0, isa.num_vregs, input_name="x and y")

    def budget_rule(self, spec) -> str:
        return "3 * NR/lanes"

    def lower(self, spec) -> BlasdotPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        return BlasdotPlan(name=spec.name, dtype=spec.dtype, mr=1, nr=spec.nr, lanes=v.lanes,
                           isa=isa, budget=self.register_budget(spec), ctype=v.ctype, v=v,
                           tail=spec.tail, nv=spec.nr // v.lanes)

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        return f"{t} {spec.name}(int64_t, const {t}*, const {t}*);"

    def c_row(self, entry) -> str:
        s = entry.spec
        return f"TG_ISA_{s.isa.upper()}, {s.nr}, {int(entry.production)}, {s.name}, \"{s.name}\""

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_NR": s.nr, "TG_LANES": self.lanes(s)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """The vector, NR values per step (n % NR also fixes the single-vector steps and the
        tail)."""
        return {"n": s.nr}


FAMILY = Blasdot()
