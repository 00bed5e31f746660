"""int8 GEMV, axpy form, B read in place: y (int32, n) = x B (+ y when accumulating) for x (k,)
int8 or uint8 and B (k, n) int8 with its rows contiguous (row stride rs_b), the sums exact
(wrapping past 2^31, as NumPy's integer matmul). The int8 driver (gemm_s8.c) runs it for one
row of A instead of packing B. Tile 1xNRcKR: each pass sweeps KR rows of B (KR memory streams)
across the columns, NR per step (a multiple of the vector width), y staying in L1; columns past
the last full step take a scalar loop.

Where the table spells rows4 for its four-way dot product (QuadOps.dot) four rows are
interleaved into quad vectors (QuadOps.rows4) and y is kept in rows4's column order between
passes (QuadOps.order4 there and back, once each). With an unsigned x signed dot (a_offset,
VPDPBUSD) uint8 x is the unsigned operand as it is; for int8 x, B + 128 is (its bytes' top bits
flipped) and x the signed one, and 128 x sum(x) is taken back once -- a scalar, so no column
sums of B are needed. With a signed x signed dot (SDOT) int8 x goes in as it is; uint8 x goes in
as x - 128 and a second dot per quad vector (against -128 in every byte) gives back the 128 x
B's column sums step by step. ISAs without rows4 take rows in
pairs where they can multiply-add two rows at once (QuadOps.madd2: PMADDWD, SMLAL by lane),
else sign-extend B's bytes to int32 (QuadOps.load8) and multiply-add by x.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import QuadOps, get_isa
from tilegen.dsl.lowering import Plan


@dataclass(frozen=True)
class GemvS8Plan(Plan):
    kr: int                    # rows of B per pass
    nv: int                    # int32 vectors of y per step (NR / lanes)
    q: QuadOps                 # the quad spellings
    quads: bool                # rows interleaved into quads for q.dot (else widened)


def _quads(q: QuadOps) -> bool:
    """The rows4 / dot form."""
    if q.rows4_ and not q.native:
        raise ValueError("gemvs8: rows4 interleaves rows for a four-way dot (QuadOps.dot)")
    return bool(q.rows4_)


class GemvS8(OpFamily):
    name = "gemvs8"
    template = "gemvs8/ukernel.c.j2"
    types_template = "gemvs8/types.h.j2"
    vector_dim = "n"
    dtypes = ("s8",)
    c_select = None  # gemm_s8.c selects these with the int8 GEMM kernels
    c_row_doc = "X(isa id, NR, KR, production, kernel, \"name\")"
    example_dims = (("k", 1024), ("n", 1024))

    def check(self, spec) -> None:
        if spec.mr != 1:
            raise ValueError(f"mr: int8 GEMV kernels compute one row (MR=1), got MR={spec.mr}")
        q = get_isa(spec.isa).quad(spec.dtype)
        if _quads(q):
            if spec.kr % 4:
                raise ValueError(f"kr: the {spec.isa} int8 GEMV takes rows in quads (KR a "
                                 f"multiple of 4), got KR={spec.kr}")
            if spec.nr % (4 * q.lanes):
                raise ValueError(f"nr: the {spec.isa} int8 GEMV interleaves four quad vectors "
                                 f"(NR a multiple of {4 * q.lanes}), got NR={spec.nr}")
            return
        self.check_multiple("nr", spec.nr, spec, "NR")
        if q.madd2_ and spec.nr % (2 * q.lanes):
            raise ValueError(f"nr: the {spec.isa} int8 GEMV takes vectors of y in pairs (NR a "
                             f"multiple of {2 * q.lanes}), got NR={spec.nr}")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        q = isa.quad(spec.dtype)
        nv = spec.nr // q.lanes
        if _quads(q):  # 4 row vectors + 4 quad vectors; KR/4 x quads and the flip constant
            if q.a_offset:
                return RegisterBudget(nv, 8, spec.kr // 4 + 1, isa.num_vregs,
                                      input_name="B rows + quads", broadcast_name="x quad")
            # signed x signed: uint8 x's column sums take NR/lanes more (and the -128 bytes)
            return RegisterBudget(2 * nv, 8, spec.kr // 4 + 2, isa.num_vregs,
                                  input_name="B rows + quads", broadcast_name="x quad")
        return RegisterBudget(nv, 1, spec.kr, isa.num_vregs, input_name="B load",
                              broadcast_name="x broadcast")

    def budget_rule(self, spec) -> str:
        q = get_isa(spec.isa).quad(spec.dtype)
        if _quads(q):
            return "NR/lanes + 8 + KR/4 + 1" if q.a_offset else "2*NR/lanes + 8 + KR/4 + 2"
        return "NR/lanes + 1 + KR"

    def lower(self, spec) -> GemvS8Plan:
        isa = get_isa(spec.isa)
        q = isa.quad(spec.dtype)
        return GemvS8Plan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                          lanes=q.lanes, isa=isa, budget=self.register_budget(spec),
                          kr=spec.kr, nv=spec.nr // q.lanes, q=q, quads=_quads(q))

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, const int8_t*, int64_t, const int8_t*, int, "
                f"int32_t*, int);")

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, {s.nr}, {s.kr}, {int(entry.production)}, {s.name}, "
                f"\"{s.name}\"")

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_NR": s.nr, "TG_KR": s.kr}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Columns per step and rows per pass, each alone and after full steps."""
        return {"n": s.nr, "k": s.kr}

    # --- tilegen.dsl.compile ---
    def python_call(self, spec, kernel):
        import ctypes

        import numpy as np

        from tilegen.dsl import jit

        i64, vp = ctypes.c_int64, ctypes.c_void_p
        fn = kernel.function(None, i64, i64, vp, i64, vp, ctypes.c_int, vp, ctypes.c_int)

        def call(b, x, y=None):
            b = jit.check_array("b", b, "s8", 2)
            k, n = b.shape
            if not isinstance(x, np.ndarray) or x.dtype not in (np.int8, np.uint8):
                raise TypeError("x: expected an int8 or uint8 numpy.ndarray")
            if x.shape != (k,):
                raise ValueError(f"x: expected shape ({k},), got {x.shape}")
            x = np.ascontiguousarray(x)
            out = (np.empty(n, dtype=np.int32) if y is None else
                   np.array(jit.check_array("y", y, "i32", 1, shape=(n,)), order="C"))
            fn(n, k, b.ctypes.data, jit.row_stride(b), x.ctypes.data, int(x.dtype == np.uint8),
               out.ctypes.data, int(y is not None))
            return out

        call.__doc__ = (f"{spec.name}: y = x @ b (+ y when y is given; a new array is returned) "
                        f"in int32 (exact, wrapping past 2^31) for b (K, N) int8 with its rows "
                        f"contiguous and x (K,) int8 or uint8: one call.")
        return call

    def python_example(self, spec, dims, rng):
        import numpy as np

        from tilegen.dsl import jit

        k, n = dims
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
        x = rng.integers(-128, 128, k).astype(np.int8)
        want = x.astype(np.int64) @ b.astype(np.int64)
        return jit.Example(args=(b, x), kwargs={}, expected=want.astype(np.int32),
                           work=float(b.nbytes), unit="byte", shape=f"{k}x{n}", rtol=0.0)


FAMILY = GemvS8()
