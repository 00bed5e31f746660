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
    example_dims = (("rows", 64), ("n", 4096))

    def python_call(self, spec, kernel):
        """RMSNorm over the last axis, the compiled kernel called once per row (python_driver's
        loop)."""
        import ctypes

        import numpy as np

        from tilegen.dsl import jit

        t = spec.dtype
        i64, vp = ctypes.c_int64, ctypes.c_void_p
        drive = kernel.symbol("tg_dsl_rmsnorm_drive", None, i64, i64, i64, vp, vp,
                              jit.CTYPES[t], vp)

        def call(x, weight=None, eps=1e-6):
            x = jit.check_array("x", x, t, 1 if getattr(x, "ndim", 2) == 1 else 2)
            rows = x.reshape(1, -1) if x.ndim == 1 else x
            n = rows.shape[1]
            if weight is not None:
                weight = jit.check_array("weight", weight, t, 1, shape=(n,))
            out = np.empty(rows.shape, dtype=x.dtype)
            drive(rows.shape[0], n, jit.row_stride(rows), rows.ctypes.data,
                  None if weight is None else weight.ctypes.data, eps, out.ctypes.data)
            return out.reshape(x.shape)

        call.__doc__ = (f"{spec.name}: y = x * weight / sqrt(mean(x**2, axis=-1) + eps) for x "
                        f"(n,) or (rows, n) (rows contiguous), weight (n,) or None; one kernel "
                        f"call per row; returns a new array")
        return call

    def python_driver(self, spec) -> str:
        """C's loop over the rows."""
        t = DTYPES[spec.dtype]
        return f"""#include <stdint.h>

{self.c_declaration(spec)}

__attribute__((visibility("default"))) void tg_dsl_rmsnorm_drive(
    int64_t rows, int64_t n, int64_t rs_x, const {t}* x, const {t}* w, {t} eps, {t}* y) {{
  for (int64_t r = 0; r < rows; r++) {spec.name}(n, x + r * rs_x, w, eps, y + r * n);
}}
"""

    def python_example(self, spec, dims, rng):
        import numpy as np

        from tilegen.dsl import jit

        rows, n = dims
        nt = jit.NP_DTYPES[spec.dtype]
        x = rng.standard_normal((rows, n)).astype(nt)
        w = rng.standard_normal(n).astype(nt)
        x64 = x.astype(np.float64)
        want = x64 * w / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6)
        eps = float(np.finfo(nt).eps)
        # Work: x read twice (its sum of squares, then the scaling), y written.
        return jit.Example(args=(x, w), kwargs={"eps": 1e-6}, expected=want.astype(nt),
                           work=3.0 * x.nbytes, unit="byte", shape=f"{rows}x{n}",
                           rtol=16 * eps * np.sqrt(n), atol=16 * eps)

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
