"""bfloat16 GEMV, axpy form (tile 1xNRcKR): y[:n] (float32) = alpha * sum_r x[r] * A[r, :n] +
beta * y[:n], x and A bfloat16, A read in place (rows contiguous: no packing), products summed
in float32. For x @ B with row-major B, one row of C: the bfloat16 GEMM's m == 1 path
(gemm_bf16.c). As the float GEMV's axpy form (gemv.py), each pass streams KR rows of A across
all n columns, NR per step, y staying in L1. With a pair dot product (VDPBF16PS: the avx512bf16
tier) rows k and k + 1 are zipped into pair vectors and take one instruction per pair vector
with the broadcast (x[k], x[k+1]) pair; elsewhere each row is widened to float32 and takes an
FMA. The ISA table's DotOps spell both (dsl/isa/base.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import DotOps, VecOps, get_isa
from tilegen.dsl.lowering import Plan


@dataclass(frozen=True)
class GemvBf16Plan(Plan):
    kr: int                    # rows of A per pass
    nv: int                    # float32 vectors of y per step (NR / lanes)
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
        fn = kernel.function(None, i64, i64, vp, i64, vp, vp, i64, f32, f32)

        def call(a, x, y=None, *, alpha=1.0, beta=0.0):
            a = jit.check_array("a", a, "bf16", 2)
            rows, cols = a.shape
            x = jit.check_array("x", x, "bf16", 1, shape=(rows,))
            if y is None:
                if beta != 0:
                    raise ValueError("y: beta != 0 reads y; pass y")
                out = np.empty(cols, dtype=np.float32)
            else:
                out = jit.check_array("y", y, "f32", 1, shape=(cols,)).copy()
            fn(cols, rows, a.ctypes.data, jit.row_stride(a), x.ctypes.data, out.ctypes.data, 1,
               alpha, beta)
            return out

        call.__doc__ = (f"{spec.name}: y = alpha * x @ a + beta * y in float32 for a (K, N) "
                        f"(rows contiguous) and x (K,) bfloat16 (ml_dtypes.bfloat16); y float32, "
                        f"read only when beta != 0 (a new array is returned)")
        return call

    def python_example(self, spec, dims, rng):
        import numpy as np

        from tilegen.dsl import jit

        k, n = dims
        bf16 = jit.NP_DTYPES["bf16"]
        # Small integers: every product and float32 sum is exact, so NumPy's answer is too.
        a = rng.integers(-4, 5, (k, n)).astype(bf16)
        x = rng.integers(-4, 5, k).astype(bf16)
        want = x.astype(np.float64) @ a.astype(np.float64)
        return jit.Example(args=(a, x), kwargs={}, expected=want.astype(np.float32),
                           work=float(a.nbytes), unit="byte", shape=f"{k}x{n}", rtol=0.0)

    def op_token(self, spec) -> str:
        return "gemv"

    def parse_op_token(self, token: str):
        return {} if token == "gemv" else None

    def check(self, spec) -> None:
        if spec.mr != 1:
            raise ValueError(f"mr: bfloat16 GEMV kernels (axpy form) compute one row of C "
                             f"(MR=1), got MR={spec.mr}")
        d = get_isa(spec.isa).dot(spec.dtype)
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
        if d.native:  # two row loads, their two zips; a pair broadcast per row pair and alpha
            return RegisterBudget(nv, 4, spec.kr // 2 + 1, isa.num_vregs,
                                  input_name="A rows + zips", broadcast_name="x pairs + alpha")
        # One widened A load; alpha * x[r] broadcast per row of the pass.
        return RegisterBudget(nv, 1, spec.kr, isa.num_vregs, input_name="A widened",
                              broadcast_name="x broadcast")

    def budget_rule(self, spec) -> str:
        d = get_isa(spec.isa).dot(spec.dtype)
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
        """Columns per step (from the end of the head), rows per pass, and (vector ISAs) the
        head columns, up to a 64-byte line of them."""
        head = {"head": 32} if self.lanes(s) > 1 else {}
        return {"n": s.nr, "k": s.kr, **head}


FAMILY = GemvBf16()
