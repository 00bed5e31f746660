"""bfloat16 GEMV, float32 y from bfloat16 A and x read in place (no packing), products summed in
float32; the bfloat16 GEMM's m == 1 paths (gemm_bf16.c). Two forms named by the tile, as the
float GEMV's (gemv.py):

- axpy form, tile 1xNRcKR: y[:n] = alpha * sum_r x[r] * A[r, :n] + beta * y[:n], rows of A
  contiguous (x @ B with row-major B). Each pass streams KR rows of A across all n columns, NR
  per step, y staying in L1. With a pair dot product (VDPBF16PS: the avx512bf16 tier; BFDOT:
  neonbf16) rows k and k + 1 are zipped into pair vectors and take one instruction per pair vector with the
  broadcast (x[k], x[k+1]) pair; elsewhere each row is widened to float32 and takes an FMA.
- dot form, tile MRx1cKR: y[i] = alpha * dot(A[i, :k], x) + beta * y[i] for MR rows of A, rows
  contiguous (x @ B with column-major B, A = B's columns: x @ W.T for a row-major W, the Linear
  layout). KR values of k per step as pair vectors straight from memory: a pair dot product
  each, or both values widened and two FMAs; a horizontal sum per row.

The ISA table's DotOps spell both (dsl/isa/base.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import DotOps, VecOps, get_isa
from tilegen.dsl.lowering import Plan


@dataclass(frozen=True)
class GemvBf16Plan(Plan):
    kr: int                    # axpy form: rows of A per pass; dot form: k values per step
    nv: int                    # axpy form: float32 vectors of y per step (NR / lanes)
    d: DotOps                  # the bfloat16 spellings
    v: VecOps                  # the float32 accumulators' spellings


class GemvBf16(OpFamily):
    name = "gemvbf16"
    template = "gemvbf16/ukernel_axpy.c.j2"
    types_template = "gemvbf16/types.h.j2"
    vector_dim = "n"
    dtypes = ("bf16",)
    c_row_doc = "X(isa id, MR, NR, KR, production, kernel, \"name\")"
    example_dims = (("k", 1024), ("n", 1024))

    def python_call(self, spec, kernel):
        import ctypes

        import numpy as np

        from tilegen.dsl import jit

        i64, vp, f32 = ctypes.c_int64, ctypes.c_void_p, ctypes.c_float
        axpy = self.axpy(spec)
        fn = kernel.function(None, i64, i64, vp, i64, vp, vp, i64, f32, f32) if axpy else \
            kernel.symbol(DRIVE, None, i64, i64, vp, i64, vp, vp, f32, f32)

        def call(a, x, y=None, *, alpha=1.0, beta=0.0):
            a = jit.check_array("a", a, "bf16", 2)
            rows, cols = a.shape
            x = jit.check_array("x", x, "bf16", 1, shape=(rows if axpy else cols,))
            n_out = cols if axpy else rows
            if y is None:
                if beta != 0:
                    raise ValueError("y: beta != 0 reads y; pass y")
                out = np.empty(n_out, dtype=np.float32)
            else:
                out = jit.check_array("y", y, "f32", 1, shape=(n_out,)).copy()
            if axpy:
                fn(cols, rows, a.ctypes.data, jit.row_stride(a), x.ctypes.data, out.ctypes.data,
                   1, alpha, beta)
            else:  # a C loop over the blocks of MR rows
                fn(rows, cols, a.ctypes.data, jit.row_stride(a), x.ctypes.data, out.ctypes.data,
                   alpha, beta)
            return out

        call.__doc__ = f"{spec.name}: " + (
            "y = alpha * x @ a + beta * y for a (K, N) (rows contiguous) and x (K,), one call"
            if axpy else
            f"y = alpha * a @ x + beta * y for a (M, K) (rows contiguous) and x (K,), "
            f"{spec.mr} rows of a per kernel call") + (
            "; a and x bfloat16 (ml_dtypes.bfloat16), y float32, read only when beta != 0 (a "
            "new array is returned)")
        return call

    def python_driver(self, spec) -> str:
        """Dot form: C's loop over the blocks of MR rows of A."""
        if self.axpy(spec):
            return ""
        return f"""#include <stdint.h>

{self.c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t m, int64_t k, const uint16_t* a, int64_t rs_a, const uint16_t* x, float* y,
    float alpha, float beta) {{
  for (int64_t i0 = 0; i0 < m; i0 += {spec.mr})
    {spec.name}(m - i0 < {spec.mr} ? m - i0 : {spec.mr}, k, a + i0 * rs_a, rs_a, x, y + i0, 1,
                alpha, beta);
}}
"""

    def python_example(self, spec, dims, rng):
        import numpy as np

        from tilegen.dsl import jit

        rows, cols = dims
        bf16 = jit.NP_DTYPES["bf16"]
        # Small integers: every product and float32 sum is exact, so NumPy's answer is too.
        a = rng.integers(-4, 5, (rows, cols)).astype(bf16)
        x = rng.integers(-4, 5, rows if self.axpy(spec) else cols).astype(bf16)
        a64, x64 = a.astype(np.float64), x.astype(np.float64)
        want = x64 @ a64 if self.axpy(spec) else a64 @ x64
        return jit.Example(args=(a, x), kwargs={}, expected=want.astype(np.float32),
                           work=float(a.nbytes), unit="byte", shape=f"{rows}x{cols}", rtol=0.0)

    @staticmethod
    def axpy(spec) -> bool:
        """The axpy form (one row of C, NR columns along the lanes)."""
        return spec.nr > 1

    def template_for(self, spec) -> str:
        return self.template if self.axpy(spec) else "gemvbf16/ukernel_dot.c.j2"

    def op_token(self, spec) -> str:
        return "gemv"

    def parse_op_token(self, token: str):
        return {} if token == "gemv" else None

    def check(self, spec) -> None:
        d = get_isa(spec.isa).dot(spec.dtype)
        if not self.axpy(spec):
            if spec.kr % (2 * d.lanes):
                raise ValueError(f"kr: dot-form bfloat16 GEMV kernels take k in pair vectors: "
                                 f"KR must be a multiple of {2 * d.lanes}, got {spec.kr}")
            return
        if spec.mr != 1:
            raise ValueError(f"mr: bfloat16 GEMV kernels (axpy form) compute one row of C "
                             f"(MR=1), got MR={spec.mr}; the dot form is MRx1cKR")
        if d.native:  # pair vectors come two at a time from a zip of two rows
            if spec.nr % (2 * d.lanes) or spec.kr % 2:
                raise ValueError(f"nr, kr: with {spec.isa}'s pair dot product NR must be a "
                                 f"multiple of {2 * d.lanes} and KR even, got NR={spec.nr} "
                                 f"KR={spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        d = isa.dot(spec.dtype)
        nv = spec.nr // d.lanes
        if not self.axpy(spec):
            kv = spec.kr // (2 * d.lanes)
            if d.native:  # MR x KV accumulators, x's pair vectors, one A load
                return RegisterBudget(spec.mr * kv, kv, 1, isa.num_vregs, input_name="x pairs",
                                      broadcast_name="A load")
            # x's widened first and second values; A's load and its two widened values.
            return RegisterBudget(spec.mr * kv, 2 * kv, 3, isa.num_vregs,
                                  input_name="x widened", broadcast_name="A load + widened")
        if d.native:  # two row loads, their two zips; a pair broadcast per row pair and alpha
            return RegisterBudget(nv, 4, spec.kr // 2 + 1, isa.num_vregs,
                                  input_name="A rows + zips", broadcast_name="x pairs + alpha")
        # One widened A load; alpha * x[r] broadcast per row of the pass.
        return RegisterBudget(nv, 1, spec.kr, isa.num_vregs, input_name="A widened",
                              broadcast_name="x broadcast")

    def budget_rule(self, spec) -> str:
        d = get_isa(spec.isa).dot(spec.dtype)
        if not self.axpy(spec):
            kv = f"KR/{2 * d.lanes}"
            return f"MR*{kv} + {kv} + 1" if d.native else f"MR*{kv} + 2*{kv} + 3"
        return "NR/lanes + 4 + KR/2 + 1" if d.native else "NR/lanes + 1 + KR"

    def lower(self, spec) -> GemvBf16Plan:
        isa = get_isa(spec.isa)
        d = isa.dot(spec.dtype)
        return GemvBf16Plan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                            lanes=d.lanes, isa=isa, budget=self.register_budget(spec),
                            kr=spec.kr, nv=spec.nr // d.lanes, d=d, v=isa.vec("f32"))

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, const uint16_t*, int64_t, const uint16_t*, "
                f"float*, int64_t, float, float);")

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {s.kr}, {int(entry.production)}, "
                f"{s.name}, \"{s.name}\"")

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KR": s.kr, "TG_LANES": self.lanes(s)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Dot form: rows of A, k per step. Axpy form: columns per step (from the end of the
        head), rows per pass, and (vector ISAs) the head columns, up to a 64-byte line of them."""
        if not self.axpy(s):
            return {"m": s.mr, "k": s.kr}
        head = {"head": 32} if self.lanes(s) > 1 else {}
        return {"n": s.nr, "k": s.kr, **head}


FAMILY = GemvBf16()

DRIVE = "tg_dsl_gemvbf16_drive"
