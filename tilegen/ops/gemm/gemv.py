"""GEMV, matrix-vector products, in two forms named by the tile (both share GEMM's parameter
block; the GEMM driver selects them):

- dot form, tile MRx1cKR: y[i] = alpha * dot(A[i, :k], x) + beta * y[i] for MR rows of A. Rows
  of A and x are contiguous along k, so k runs along the lanes: KR k values (a multiple of the
  vector width) per step. For y = A x.
- axpy form, tile 1xNRcKR: y[:n] = alpha * sum_r x[r] * A[r, :n] + beta * y[:n]. Rows of A are
  contiguous along n, so n runs along the lanes: each pass sweeps KR rows of A at once (KR
  memory streams) across all n columns, NR (a multiple of the vector width) per step, y staying
  in L1. For y = x A with A row-major, the GEMM form with one row of C.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.isa import DTYPE_BYTES, DTYPES, Isa, VecOps, get_isa
from tilegen.dsl.lowering import VectorPlan
from tilegen.dsl.family import OpFamily, RegisterBudget


@dataclass(frozen=True)
class GemvPlan(VectorPlan):
    kr: int                    # k values per step (axpy form: rows of A per pass)
    kv: int                    # dot form: vectors per row per step
    nv: int                    # axpy form: vectors of y per step
    params_type: str


class Gemv(OpFamily):
    name = "gemv"
    template = "gemv/ukernel.c.j2"
    types_template = "gemv/types.h.j2"
    vector_dim = "k"
    c_row_doc = "X(isa id, MR, NR, KR, production, kernel, \"name\")"
    example_dims = (("m", 1024), ("k", 1024))

    def python_call(self, spec, kernel):
        """Dot form: y = alpha * A @ x + beta * y, MR rows per call; axpy form:
        y = alpha * x @ A + beta * y, one call."""
        import ctypes

        import numpy as np

        from tilegen.dsl import jit

        t = spec.dtype
        ct, nt = jit.CTYPES[t], jit.NP_DTYPES[t]
        i64, vp = ctypes.c_int64, ctypes.c_void_p

        class Params(ctypes.Structure):
            _fields_ = [("alpha", ct), ("beta", ct), ("bias", vp)]

        fn = kernel.function(None, i64, i64, vp, i64, vp, vp, i64, ctypes.POINTER(Params))
        axpy = self.axpy(spec)
        drive = None if axpy else kernel.symbol("tg_dsl_gemv_drive", None, i64, i64, vp, i64,
                                                vp, vp, ct, ct)

        def call(a, x, y=None, *, alpha=1.0, beta=0.0):
            a = jit.check_array("a", a, t, 2)
            rows, cols = a.shape
            x = jit.check_array("x", x, t, 1, shape=(rows if axpy else cols,))
            n_out = cols if axpy else rows
            if y is None:
                if beta != 0:
                    raise ValueError("y: beta != 0 reads y; pass y")
                out = np.empty(n_out, dtype=nt)
            else:
                out = jit.check_array("y", y, t, 1, shape=(n_out,)).copy()
            params = Params(alpha, beta, None)
            lda = jit.row_stride(a)
            if axpy:
                fn(cols, rows, a.ctypes.data, lda, x.ctypes.data, out.ctypes.data, 1,
                   ctypes.byref(params))
            else:  # a C loop over the blocks of MR rows
                drive(rows, cols, a.ctypes.data, lda, x.ctypes.data, out.ctypes.data, alpha,
                      beta)
            return out

        call.__doc__ = f"{spec.name}: " + (
            "y = alpha * x @ a + beta * y for a (K, N) (rows contiguous) and x (K,): one call "
            if axpy else
            f"y = alpha * a @ x + beta * y for a (M, K) (rows contiguous) and x (K,), "
            f"{spec.mr} rows of a per kernel call ") + (
            "(y read only when beta != 0; a new array is returned)")
        return call

    def python_driver(self, spec) -> str:
        """Dot form: C's loop over the blocks of MR rows of A."""
        if self.axpy(spec):
            return ""
        t = DTYPES[spec.dtype]
        return f"""#include <stdint.h>
#include "tg_ukernels.h"

{self.c_declaration(spec)}

__attribute__((visibility("default"))) void tg_dsl_gemv_drive(
    int64_t m, int64_t k, const {t}* a, int64_t rs_a, const {t}* x, {t}* y, {t} alpha,
    {t} beta) {{
  const tg_{spec.dtype}_gemm_params p = {{alpha, beta, 0}};
  for (int64_t i0 = 0; i0 < m; i0 += {spec.mr})
    {spec.name}(m - i0 < {spec.mr} ? m - i0 : {spec.mr}, k, a + i0 * rs_a, rs_a, x, y + i0, 1,
                &p);
}}
"""

    def python_example(self, spec, dims, rng):
        import numpy as np

        from tilegen.dsl import jit

        m, k = dims
        nt = jit.NP_DTYPES[spec.dtype]
        a = rng.standard_normal((m, k)).astype(nt)
        x = rng.standard_normal(m if self.axpy(spec) else k).astype(nt)
        a64, x64 = a.astype(np.float64), x.astype(np.float64)
        want = x64 @ a64 if self.axpy(spec) else a64 @ x64
        eps = float(np.finfo(nt).eps)
        depth = m if self.axpy(spec) else k
        return jit.Example(args=(a, x), kwargs={}, expected=want.astype(nt), work=float(a.nbytes),
                           unit="byte", shape=f"{m}x{k}", rtol=0.0, atol=8 * eps * depth * float(
                               np.abs(a).max(initial=1) * np.abs(x).max(initial=1)))

    @staticmethod
    def axpy(spec) -> bool:
        """The axpy form (one row of C, NR columns along the lanes)."""
        return spec.nr > 1

    def template_for(self, spec) -> str:
        return "gemv/ukernel_axpy.c.j2" if self.axpy(spec) else self.template

    def check(self, spec) -> None:
        if self.axpy(spec):
            if spec.mr != 1:
                raise ValueError(f"mr: axpy-form gemv kernels (NR > 1) compute one row of C "
                                 f"(MR=1), got MR={spec.mr}; the dot form is MRx1cKR")
            self.check_multiple("nr", spec.nr, spec, "NR")
            return
        self.check_multiple("kr", spec.kr, spec, "KR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        lanes = isa.lanes(spec.dtype)
        if self.axpy(spec):
            # NR/lanes partial sums of y, one A load, KR broadcast x values held for the pass.
            return RegisterBudget(spec.nr // lanes, 1, spec.kr, isa.num_vregs,
                                  input_name="A load", broadcast_name="x broadcast")
        kv = spec.kr // lanes
        # MR x KR/lanes partial sums, one x vector per lane group, one A load.
        return RegisterBudget(spec.mr * kv, kv, 1, isa.num_vregs, input_name="x",
                              broadcast_name="A load")

    def budget_rule(self, spec) -> str:
        lanes = self.lanes(spec)
        if self.axpy(spec):
            return f"NR/{lanes} + 1 + KR"
        return f"MR*KR/{lanes} + KR/{lanes} + 1"

    def lower(self, spec) -> GemvPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        return GemvPlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, nr=spec.nr, kr=spec.kr,
            lanes=v.lanes, kv=spec.kr // v.lanes, nv=spec.nr // v.lanes, tail=spec.tail, isa=isa,
            v=v,
            budget=self.register_budget(spec), params_type=f"tg_{spec.dtype}_gemm_params",
        )

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        return (f"void {spec.name}(int64_t, int64_t, const {t}*, int64_t, const {t}*, {t}*, "
                f"int64_t, const tg_{spec.dtype}_gemm_params*);")

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {s.kr}, {int(entry.production)}, {s.name}, "
                f"\"{s.name}\"")


    def tester_defines(self, s):
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KR": s.kr, "TG_LANES": self.lanes(s)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Dot form: rows of A, k per step. Axpy form: columns per step (from the end of the
        head), rows per pass, and (vector ISAs) the head columns, up to a 64-byte line of them."""
        if self.axpy(s):
            head = {"head": 64 // DTYPE_BYTES[s.dtype]} if self.lanes(s) > 1 else {}
            return {"n": s.nr, "k": s.kr, **head}
        return {"m": s.mr, "k": s.kr}


FAMILY = Gemv()
