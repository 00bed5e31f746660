"""bfloat16 GEMM: C[MR x NR] (float32) = alpha * A B + beta * C, A and B bfloat16, products summed
in float32. Named like the float GEMM kernels (op token "gemm", dtype bf16), KR = 2: A and B are
packed in pairs along k -- a panel of A holds, per k pair, MR pairs (A[i, k], A[i, k+1]); a
panel of B, per k pair, NR pairs (B[k, j], B[k+1, j]) -- which is the operand layout of a pair
dot product (VDPBF16PS: the avx512bf16 tier). ISAs without one widen each pair's values to
float32 (a bfloat16 is a float32's high half) and take two FMAs. The ISA table's DotOps spell
both (dsl/isa/base.py). Where the table has a lane-indexed form -- of the dot product (BFDOT
on neonbf16) or, widened, of the FMA (NEON's by-element FMLA) -- one load takes `lanes` rows'
A pairs and each row picks its lane, instead of one broadcast per row (for the dot product MR
must be a multiple of the pair vector width; widened tiles of other MR keep the broadcast). The
driver (gemm_bf16.c) packs, blocks and threads.

Where the ISA table has a tile unit for bfloat16 (TileOps: AMX's TDPBF16PS on amxbf16) the
kernel is a grid of (MR/16) x (NR/16) float32 accumulator tiles (templates/gemmbf16/
ukernel_tile.c.j2). B's panel is already a B tile's rows (per k pair, NR pairs: 16 columns of
4 bytes per row). A tile wants A's rows contiguous along k instead, so such a kernel's A panel
is packed in k groups (a_group: 16 pairs, a tile's 64 bytes): per group, MR rows of 16 pairs,
the last group zero-padded to 16 pairs. The kernel copies B's last, partial group into a zeroed
buffer (its panel ends at kp).

Where the table pairs two rows in registers (DotOps.zip_lo / zip_hi with order2 and store) the
family also generates that ISA's B packing (templates/gemmbf16/pack.c.j2, one routine per NR:
tg_bf16_packb_<NR>c2__<isa>, named in each kernel's row), which the driver runs on row-major B.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

from tilegen.dsl.family import ExtraFile, OpFamily, RegisterBudget
from tilegen.dsl.isa import DotOps, TileOps, VecOps, get_isa
from tilegen.dsl.lowering import Plan

from .b_packing import BPacking
from .tile_units import (BUDGET_RULE, a_group, check_whole_tiles, grouped_a_panels, tile_budget,
                         tiles)


def has_packb(isa: str) -> bool:
    """The ISA packs B in registers (templates/gemmbf16/pack.c.j2): its table zips two rows into
    pair vectors (order2 puts them in column order where zip does not) and stores them.
    Elsewhere the driver's C loop packs B."""
    d = get_isa(isa).dot("bf16")
    return bool(d.zip_lo_ and d.zip_hi_ and d.store_)


PACKING = BPacking("gemmbf16", "bf16", 2, "uint16_t", has_packb)


@dataclass(frozen=True)
class GemmBf16Plan(Plan):
    nv: int                    # pair vectors per k pair of the B panel (NR / lanes)
    unroll: int
    tail: str                  # how C's edge columns are stored: "mask" or a temporary
    a_by_lane: bool            # A's pairs loaded `lanes` rows at a time, each row by lane
    d: DotOps                  # the pair spellings
    v: VecOps                  # the float32 accumulators' spellings
    t: Optional[TileOps] = None  # the tile unit's spellings (tile kernels only)
    a_group: int = 1           # k pairs per group of A's panel (a_group())


class GemmBf16(OpFamily):
    name = "gemmbf16"
    template = "gemmbf16/ukernel.c.j2"
    types_template = "gemmbf16/types.h.j2"
    vector_dim = "n"
    dtypes = ("bf16",)
    c_select = "tg_gemm_bf16_select"
    c_row_doc = ("X(isa id, MR, NR, production, A group (k pairs per group of A's panel: "
                 "a_group), kernel, B packing of row-major B (tg_bf16_packb_fn) or NULL, "
                 "\"name\")")
    example_dims = (("m", 256), ("n", 256), ("k", 256))

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

    def template_for(self, spec) -> str:
        return "gemmbf16/ukernel_tile.c.j2" if tiles(spec) else self.template

    def check(self, spec) -> None:
        if spec.kr != 2:
            raise ValueError(f"kr: bfloat16 GEMM kernels take k in pairs (KR=2), got {spec.kr}")
        t = tiles(spec)
        if t:
            check_whole_tiles(spec, t)
        self.check_multiple("nr", spec.nr, spec, "NR")
        if get_isa(spec.isa).dot(spec.dtype).lane_indexed:  # A loaded `lanes` rows at a time
            self.check_multiple("mr", spec.mr, spec, "MR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        t = tiles(spec)
        if t:
            return tile_budget(spec, t)
        d = isa.dot(spec.dtype)
        nv = spec.nr // d.lanes
        if d.lane_indexed:  # the B pair vectors, A's pair vectors (lanes rows each)
            return RegisterBudget(spec.mr * nv, nv, spec.mr // d.lanes, isa.num_vregs,
                                  input_name="B pair", broadcast_name="A pair vectors")
        if d.native:  # the B pair vectors, one broadcast A pair
            return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs, input_name="B pair",
                                  broadcast_name="A pair")
        # Widened: B's first and second values, A's pair (or, by lane, `lanes` rows' pairs,
        # one group of rows at a time) and its two widened values.
        return RegisterBudget(spec.mr * nv, 2 * nv, 3, isa.num_vregs, input_name="B widened",
                              broadcast_name="A pair + widened")

    def budget_rule(self, spec) -> str:
        if tiles(spec):
            return BUDGET_RULE
        d = get_isa(spec.isa).dot(spec.dtype)
        if d.lane_indexed:
            return "MR*NR/lanes + NR/lanes + MR/lanes"
        return "MR*NR/lanes + NR/lanes + 1" if d.native else "MR*NR/lanes + 2*NR/lanes + 3"

    def lower(self, spec) -> GemmBf16Plan:
        isa = get_isa(spec.isa)
        d = isa.dot(spec.dtype)
        v = isa.vec("f32")
        return GemmBf16Plan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                            lanes=d.lanes, isa=isa, budget=self.register_budget(spec),
                            nv=spec.nr // d.lanes, unroll=spec.unroll,
                            tail="mask" if v.mask_type else "temp", a_by_lane=a_by_lane(spec),
                            d=d, v=v, t=tiles(spec), a_group=a_group(spec))

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const uint16_t*, const uint16_t*, "
                f"float*, int64_t, int64_t, float, float);")

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {int(entry.production)}, "
                f"{a_group(s)}, {s.name}, {PACKING.row_field(s)}, \"{s.name}\"")

    def extra_files(self, entries, env) -> List[ExtraFile]:
        return PACKING.files(entries, env, self.registry_file)

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_LANES": self.lanes(s), "TG_A_GROUP": a_group(s),
                **PACKING.tester_defines(s)}

    def tester_sources(self, s) -> List[str]:
        return PACKING.tester_sources(s)

    def tester_coverage(self, s) -> Dict[str, int]:
        """The tile's rows and columns (n % NR also fixes the masked or temporary column
        vectors); the k pairs run one at a time (no unrolled remainder)."""
        return {"m": s.mr, "n": s.nr}


def a_by_lane(spec) -> bool:
    """Whether the kernel loads A's pairs `lanes` rows at a time and takes each row by lane:
    where its ISA has the lane-indexed form of the instruction it multiplies with (a dot
    product's requires MR a multiple of the lanes; widened tiles of other MR broadcast)."""
    isa = get_isa(spec.isa)
    d = isa.dot(spec.dtype)
    if d.native:
        return d.lane_indexed
    return bool(isa.vec("f32").fma_lane_) and spec.mr % d.lanes == 0


FAMILY = GemmBf16()


# --- tilegen.dsl.compile: the micro-kernel over a whole product from Python ---

DRIVE = "tg_dsl_gemmbf16_drive"


def _python_driver(spec) -> str:
    """C's loop over the MR x NR tiles of C, A and B pair-packed by the caller (panel i of A at
    a + i * 2 * MR * kp_a, kp_a being kp rounded up to A's groups; panel j of B at
    b + j * 2 * NR * kp)."""
    g = a_group(spec)
    return f"""#include <stdint.h>

{GemmBf16().c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t m, int64_t n, int64_t kp, const uint16_t* a, const uint16_t* b, float* c,
    int64_t rs_c, float alpha, float beta) {{
  for (int64_t i0 = 0; i0 < m; i0 += {spec.mr}) {{
    const int64_t mi = m - i0 < {spec.mr} ? m - i0 : {spec.mr};
    for (int64_t j0 = 0; j0 < n; j0 += {spec.nr}) {{
      const int64_t nj = n - j0 < {spec.nr} ? n - j0 : {spec.nr};
      {spec.name}(mi, nj, kp, a + (i0 / {spec.mr}) * 2 * {spec.mr} * ((kp + {g - 1}) / {g} * {g}),
                  b + (j0 / {spec.nr}) * 2 * {spec.nr} * kp, c + i0 * rs_c + j0, rs_c, 1,
                  alpha, beta);
    }}
  }}
}}
"""


def pair_panels(x, rows: int, kp: int, across: bool):
    """x's values in zero-padded panels of `rows` rows (across=False: rows of x, A's panels)
    or columns (across=True: B's), each holding per k pair `rows` pairs (x[., 2p], x[., 2p+1])."""
    import numpy as np

    if across:
        x = x.T
    blocks = -(-x.shape[0] // rows)
    padded = np.zeros((blocks * rows, 2 * kp), dtype=x.dtype)
    padded[:x.shape[0], :x.shape[1]] = x
    return np.ascontiguousarray(padded.reshape(blocks, rows, kp, 2).transpose(0, 2, 1, 3))


def _python_call(spec, kernel):
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    i64, vp, f32 = ctypes.c_int64, ctypes.c_void_p, ctypes.c_float
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, vp, vp, vp, i64, f32, f32)

    def prepare(a, b, c=None, *, alpha=1.0, beta=0.0):
        """Checks and packs; the returned function runs the kernel loop and returns C."""
        a = jit.check_array("a", a, "bf16", 2)
        m, k = a.shape
        b = jit.check_array("b", b, "bf16", 2, shape=(k, None))
        n = b.shape[1]
        if c is None:
            if beta != 0:
                raise ValueError("c: beta != 0 reads C; pass c")
            out = np.empty((m, n), dtype=np.float32)
        else:
            out = np.array(jit.check_array("c", c, "f32", 2, shape=(m, n)), order="C")
        if m == 0 or n == 0:
            return lambda: out
        kp = -(-k // 2)
        pa, pb = pair_panels(a, spec.mr, kp, False), pair_panels(b, spec.nr, kp, True)
        if a_group(spec) > 1:  # a tile kernel's A, in k groups of a tile row
            pa = grouped_a_panels(pa, a_group(spec))

        def run():
            drive(m, n, kp, pa.ctypes.data, pb.ctypes.data, out.ctypes.data, n, alpha, beta)
            return out
        return run

    doc = (
        f"{spec.name}: C = alpha * A @ B + beta * C in float32 for a (M, K) and b (K, N) "
        f"bfloat16 arrays (ml_dtypes.bfloat16), c (M, N) float32 read only when beta != 0 (a "
        f"new array is returned). A and B are pair-packed, then a C loop calls the micro-kernel "
        f"on each {spec.mr}x{spec.nr} tile.")
    return jit.prepared_call(prepare, doc)


def _python_example(spec, dims, rng):
    import numpy as np

    from tilegen.dsl import jit

    m, n, k = dims
    bf16 = jit.NP_DTYPES["bf16"]
    # Small integers: every product and float32 sum is exact, so NumPy's answer is exact too.
    a = rng.integers(-4, 5, (m, k)).astype(bf16)
    b = rng.integers(-4, 5, (k, n)).astype(bf16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    return jit.Example(args=(a, b), kwargs={}, expected=want.astype(np.float32),
                       work=2.0 * m * n * k, unit="flop", shape=f"{m}x{n}x{k}", rtol=0.0)

