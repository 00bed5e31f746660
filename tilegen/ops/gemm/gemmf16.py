"""Half-precision-accumulating GEMM (opt-in: `accumulate="float16"`): C[MR x NR] (float16) =
A B, or C + A B when accumulate is nonzero (else C is not read), A, B and C float16 as their 16
bits, and every multiply-add rounded once to half (a fused half FMA, in k order: XNNPACK's f16
GEMM kernels and NEON's FMLA .8h compute so). Named like the float GEMM kernels (op token
"gemm", dtype f16), KR = 1: a panel of A holds, per k, MR halves (one 16-byte load gives eight
rows: fma_lane takes each row's value from its lane, XNNPACK's ld128 form; where the ISA has no
by-element FMA, x86's, each row's value is broadcast); a panel of B, per k, NR halves. The ISA
table's HalfOps spell the arithmetic (dsl/isa/base.py): neonfp16 and avx512fp16 natively,
scalar as the exact reference. The driver (gemm_f16.c) packs, blocks and threads; the same C
element's k blocks continue from C, so blocking and threads never change a result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import HalfOps, get_isa
from tilegen.dsl.lowering import Plan


@dataclass(frozen=True)
class GemmF16Plan(Plan):
    nv: int                    # half vectors per k of the B panel (NR / lanes)
    na: int                    # half vectors per k of the A panel (MR / lanes)
    h: HalfOps                 # the half spellings


class GemmF16(OpFamily):
    name = "gemmf16"
    template = "gemmf16/ukernel.c.j2"
    types_template = "gemmf16/types.h.j2"
    vector_dim = "n"
    dtypes = ("f16",)
    c_select = "tg_gemm_f16_select"
    c_row_doc = "X(isa id, MR, NR, production, native half arithmetic, kernel, \"name\")"
    example_dims = (("m", 64), ("n", 64), ("k", 64))

    def python_call(self, spec, kernel):
        return _python_call(spec, kernel)

    def python_driver(self, spec) -> str:
        return _python_driver(spec)

    def python_example(self, spec, dims, rng):
        return _python_example(spec, dims, rng)

    def op_token(self, spec) -> str:
        return "gemm"

    def parse_op_token(self, token: str):
        return {} if token == "gemm" else None

    def check(self, spec) -> None:
        if spec.kr != 1:
            raise ValueError(f"kr: half-accumulating GEMM kernels take k one at a time (KR=1), "
                             f"got {spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR")
        if get_isa(spec.isa).half(spec.dtype).lane_indexed:
            # A's MR values per k are loaded whole vectors at a time (lanes rows a load).
            self.check_multiple("mr", spec.mr, spec, "MR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        h = isa.half(spec.dtype)
        nv = spec.nr // h.lanes
        # Lane-indexed: MR/lanes A vectors; else one broadcast A value at a time.
        na = spec.mr // h.lanes if h.lane_indexed else 1
        return RegisterBudget(spec.mr * nv, nv, na, isa.num_vregs, input_name="B",
                              broadcast_name="A")

    def budget_rule(self, spec) -> str:
        if get_isa(spec.isa).half(spec.dtype).lane_indexed:
            return "MR*NR/lanes + NR/lanes + MR/lanes"
        return "MR*NR/lanes + NR/lanes + 1"

    def lower(self, spec) -> GemmF16Plan:
        isa = get_isa(spec.isa)
        h = isa.half(spec.dtype)
        return GemmF16Plan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                           lanes=h.lanes, isa=isa, budget=self.register_budget(spec),
                           nv=spec.nr // h.lanes, na=-(-spec.mr // h.lanes), h=h)

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const uint16_t*, const uint16_t*, "
                f"uint16_t*, int64_t, int64_t, int);")

    def c_row(self, entry) -> str:
        s = entry.spec
        native = int(get_isa(s.isa).half(s.dtype).native)
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {int(entry.production)}, {native}, "
                f"{s.name}, \"{s.name}\"")

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_LANES": self.lanes(s)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """The tile's rows and columns (n % NR also fixes the temporary column vectors); k runs
        one value at a time (no unrolled remainder)."""
        return {"m": s.mr, "n": s.nr}


FAMILY = GemmF16()


# --- tilegen.dsl.compile: the micro-kernel over a whole product from Python ---

DRIVE = "tg_dsl_gemmf16_drive"


def _python_driver(spec) -> str:
    """C's loop over the MR x NR tiles of C, A and B packed by the caller (panel i of A at
    a + i * MR * k, panel j of B at b + j * NR * k)."""
    return f"""#include <stdint.h>

{GemmF16().c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t m, int64_t n, int64_t k, const uint16_t* a, const uint16_t* b, uint16_t* c,
    int64_t rs_c) {{
  for (int64_t i0 = 0; i0 < m; i0 += {spec.mr}) {{
    const int64_t mi = m - i0 < {spec.mr} ? m - i0 : {spec.mr};
    for (int64_t j0 = 0; j0 < n; j0 += {spec.nr}) {{
      const int64_t nj = n - j0 < {spec.nr} ? n - j0 : {spec.nr};
      {spec.name}(mi, nj, k, a + (i0 / {spec.mr}) * {spec.mr} * k,
                  b + (j0 / {spec.nr}) * {spec.nr} * k, c + i0 * rs_c + j0, rs_c, 1, 0);
    }}
  }}
}}
"""


def _panels(x, rows: int):
    """x's rows in zero-padded panels of `rows` rows, each holding per k (column of x) `rows`
    values: A's panels from A, B's from B transposed."""
    import numpy as np

    blocks = -(-x.shape[0] // rows)
    padded = np.zeros((blocks * rows, x.shape[1]), dtype=np.float16)
    padded[:x.shape[0]] = x
    return np.ascontiguousarray(padded.reshape(blocks, rows, x.shape[1]).transpose(0, 2, 1))


def _python_call(spec, kernel):
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, vp, vp, vp, i64)

    def prepare(a, b):
        """Checks and packs; the returned function runs the kernel loop and returns C."""
        a = jit.check_array("a", a, "f16", 2)
        m, k = a.shape
        b = jit.check_array("b", b, "f16", 2, shape=(k, None))
        n = b.shape[1]
        out = np.empty((m, n), dtype=np.float16)
        if m == 0 or n == 0:
            return lambda: out
        pa, pb = _panels(a, spec.mr), _panels(b.T, spec.nr)

        def run():
            drive(m, n, k, pa.ctypes.data, pb.ctypes.data, out.ctypes.data, n)
            return out
        return run

    doc = (
        f"{spec.name}: C = A @ B for a (M, K) and b (K, N) float16 arrays, summed in half "
        f"precision (each multiply-add rounded once to half, in k order), a new float16 "
        f"array. A and B are packed into panels, then a C loop calls the micro-kernel on each "
        f"{spec.mr}x{spec.nr} tile.")
    return jit.prepared_call(prepare, doc)


def _python_example(spec, dims, rng):
    import numpy as np

    from tilegen.dsl import jit

    m, n, k = dims
    # Small integers: every half sum is exact (|sums| <= 4 k <= 2048 for k up to 512), so
    # the float64 product is the answer.
    a = rng.integers(-4, 5, (m, k)).astype(np.float16)
    b = rng.integers(-1, 2, (k, n)).astype(np.float16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    return jit.Example(args=(a, b), kwargs={}, expected=want.astype(np.float16),
                       work=2.0 * m * n * k, unit="flop", shape=f"{m}x{n}x{k}", rtol=0.0)
