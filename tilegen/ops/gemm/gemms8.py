"""int8 GEMM: C[MR x NR] (int32) = A B (+ C), A and B int8, exact int32 sums (wrapping past
2^31, as NumPy's integer matmul wraps). Named like the float GEMM kernels (op token "gemm",
dtype s8), KR = 4: A and B are packed in quads along k -- a panel of A holds, per k quad, MR
quads (A[i, k..k+3]); a panel of B, per k quad, NR quads (B[k..k+3, j]) and after the last quad
NR int32 column sums -- the operand layout of a four-way dot product (VPDPBUSD: the avx512vnni
tier; SDOT: neondot). SMMLA (neoni8mm, QuadOps.mmla) multiplies two rows of 8 k values by two
columns of 8: its kernels have KR = 8, the same layout with groups of 8 (per k group, row i's
8 bytes at 8 i: rows, and B's columns, paired in 16-byte vectors). VPDPBUSD multiplies unsigned by signed bytes (QuadOps.a_offset), so for
it the driver packs A + 128 (its bytes with the top bit flipped) and the kernel subtracts 128 x
B's column sums; SDOT multiplies signed by signed, and its indexed form (QuadOps.dot_lane) takes
four rows' A quads from one 16-byte load, so MR is a multiple of 4 there. ISAs without a dot
product sign-extend each byte to int32 and multiply. The ISA table's QuadOps spell all three
(dsl/isa/base.py). The driver (gemm_s8.c) packs, blocks and threads.

Where the ISA table has a tile unit for int8 (TileOps: AMX's TDPBUSD on amxint8, A offset as
for VPDPBUSD) the kernel is a grid of (MR/16) x (NR/16) int32 accumulator tiles
(templates/gemms8/ukernel_tile.c.j2). B's panel is already a B tile's rows (per k quad, NR
quads: 16 columns of 4 bytes per row); A's panel is packed in k groups (a_group: 16 quads, a
tile's 64 bytes): per group, MR rows of 16 quads, the last group zero-padded to 16 quads. The
kernel copies B's last, partial group into a zeroed buffer (its quads end at kq).

Where the table interleaves four rows into quads in registers (QuadOps.rows4, for its dot) the
family also generates that ISA's B packing (templates/gemms8/pack.c.j2, one routine per NR:
tg_s8_packb_<NR>c4__<isa>, named in each kernel's row), which the driver runs on row-major B.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from typing import List

from tilegen.dsl.family import ExtraFile, OpFamily, RegisterBudget
from tilegen.dsl.isa import QuadOps, TileOps, get_isa
from tilegen.dsl.lowering import Plan

from .b_packing import BPacking
from .tile_units import (BUDGET_RULE, a_group, check_whole_tiles, grouped_a_panels, tile_budget,
                         tiles)


@dataclass(frozen=True)
class GemmS8Plan(Plan):
    nv: int                    # quad vectors per k quad of the B panel (NR / lanes)
    q: QuadOps                 # the quad spellings
    kr: int                    # k values per group: 4, or 8 for SMMLA (kr_of)
    t: Optional[TileOps] = None  # the tile unit's spellings (tile kernels only)
    a_group: int = 1           # k groups per group of A's panel (a_group())


def kr_of(q: QuadOps) -> int:
    """The k group of an ISA's int8 GEMM kernels: SMMLA's 8 where the table has it, else 4."""
    return 8 if q.mmla_ else 4


def has_packb(isa: str) -> bool:
    """The ISA packs B in registers (templates/gemms8/pack.c.j2): its table interleaves four rows
    into quads (rows4, spelled for its four-way dot, which also sums the columns) and its
    kernels take k in quads. Elsewhere the driver's C loop packs B."""
    q = get_isa(isa).quad("s8")
    return bool(q.rows4_) and q.native and kr_of(q) == 4


PACKING = BPacking("gemms8", "s8", 4, "int8_t", has_packb)


class GemmS8(OpFamily):
    name = "gemms8"
    template = "gemms8/ukernel.c.j2"
    types_template = "gemms8/types.h.j2"
    vector_dim = "n"
    dtypes = ("s8",)
    c_select = "tg_gemm_s8_select"
    c_row_doc = ("X(isa id, MR, NR, KR (k values per packed group: 4, SMMLA's 8), production, "
                 "A offset by 128 (QuadOps.a_offset: VPDPBUSD), A group (k groups per group of A's "
                 "panel: a_group), kernel, B packing of row-major B (tg_s8_packb_fn) or NULL, "
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
        return "gemms8/ukernel_tile.c.j2" if tiles(spec) else self.template

    def check(self, spec) -> None:
        q = get_isa(spec.isa).quad(spec.dtype)
        if spec.kr != kr_of(q):
            raise ValueError(f"kr: {spec.isa}'s int8 GEMM kernels take k in groups of "
                             f"KR={kr_of(q)}, got {spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR")
        t = tiles(spec)
        if t:
            check_whole_tiles(spec, t)
            return
        if q.mmla_:
            if spec.mr % 2:
                raise ValueError(f"mr: SMMLA takes A's rows in pairs; MR={spec.mr} is odd")
        elif q.dot_lane_ and spec.mr % q.lanes:
            raise ValueError(f"mr: {spec.isa}'s indexed dot product takes A's rows {q.lanes} at a "
                             f"time from one vector; MR={spec.mr} is not a multiple of {q.lanes}")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        t = tiles(spec)
        if t:
            return tile_budget(spec, t)
        q = isa.quad(spec.dtype)
        nv = spec.nr // q.lanes
        if q.mmla_:
            # 2x2 tiles (MR*NR/4 values: as many vectors), B's column pairs and A's row pairs,
            # all live at once: GCC 12 hoists every A load of the k step (8x12c8's 24 + 6 + 4
            # spilled in the loop).
            return RegisterBudget(spec.mr * nv, spec.nr // 2, spec.mr // 2, isa.num_vregs,
                                  input_name="B column pair", broadcast_name="A row pair")
        if q.dot_lane_:  # the B quad vectors, A's quads of all MR rows (four rows a vector)
            return RegisterBudget(spec.mr * nv, nv, -(-spec.mr // q.lanes), isa.num_vregs,
                                  input_name="B quad", broadcast_name="A quad vector")
        if q.native:  # the B quad vectors, one broadcast A quad
            return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs, input_name="B quad",
                                  broadcast_name="A quad")
        # Widened one byte at a time: B's byte vectors, A's quad and its byte.
        return RegisterBudget(spec.mr * nv, nv + 1, 2, isa.num_vregs, input_name="B quad + byte",
                              broadcast_name="A quad + byte")

    def budget_rule(self, spec) -> str:
        if tiles(spec):
            return BUDGET_RULE
        q = get_isa(spec.isa).quad(spec.dtype)
        if q.mmla_:
            return "MR*NR/lanes + NR/2 + MR/2"
        if q.dot_lane_:
            return "MR*NR/lanes + NR/lanes + MR/lanes"
        return "MR*NR/lanes + NR/lanes + 1" if q.native else "MR*NR/lanes + NR/lanes + 3"

    def lower(self, spec) -> GemmS8Plan:
        isa = get_isa(spec.isa)
        q = isa.quad(spec.dtype)
        return GemmS8Plan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                          lanes=q.lanes, isa=isa, budget=self.register_budget(spec),
                          nv=spec.nr // q.lanes, q=q, kr=kr_of(q), t=tiles(spec),
                          a_group=a_group(spec))

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const int8_t*, const int8_t*, "
                f"int32_t*, int64_t, int64_t, int);")

    def c_row(self, entry) -> str:
        s = entry.spec
        offset = int(get_isa(s.isa).quad(s.dtype).a_offset)
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {s.kr}, {int(entry.production)}, {offset}, "
                f"{a_group(s)}, {s.name}, {PACKING.row_field(s)}, \"{s.name}\"")

    def extra_files(self, entries, env) -> List[ExtraFile]:
        return PACKING.files(entries, env, self.registry_file)

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KR": s.kr, "TG_LANES": self.lanes(s),
                "TG_A_OFFSET": int(get_isa(s.isa).quad(s.dtype).a_offset),
                "TG_A_GROUP": a_group(s),
                **PACKING.tester_defines(s)}

    def tester_sources(self, s) -> List[str]:
        return PACKING.tester_sources(s)

    def tester_coverage(self, s) -> Dict[str, int]:
        """The tile's rows and columns; the k groups run one at a time (no unrolled
        remainder)."""
        return {"m": s.mr, "n": s.nr}


FAMILY = GemmS8()


# --- tilegen.dsl.compile: the micro-kernel over a whole product from Python ---

DRIVE = "tg_dsl_gemms8_drive"


def _python_driver(spec) -> str:
    """C's loop over the MR x NR tiles of C, A and B packed by the caller in kq groups of KR
    (panel i of A at a + i * KR * MR * kq, panel j of B -- its groups, then NR int32
    corrections -- at b + j * (KR * NR * kq + 4 * NR)); A's kq rounded up to its groups."""
    g = a_group(spec)
    return f"""#include <stdint.h>

{GemmS8().c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t m, int64_t n, int64_t kq, const int8_t* a, const int8_t* b, int32_t* c,
    int64_t rs_c, int accumulate) {{
  for (int64_t i0 = 0; i0 < m; i0 += {spec.mr}) {{
    const int64_t mi = m - i0 < {spec.mr} ? m - i0 : {spec.mr};
    for (int64_t j0 = 0; j0 < n; j0 += {spec.nr}) {{
      const int64_t nj = n - j0 < {spec.nr} ? n - j0 : {spec.nr};
      {spec.name}(mi, nj, kq, a + (i0 / {spec.mr}) * {spec.kr} * {spec.mr} * ((kq + {g - 1}) / {g} * {g}),
                  b + (j0 / {spec.nr}) * ({spec.kr} * {spec.nr} * kq + 4 * {spec.nr}),
                  c + i0 * rs_c + j0, rs_c, 1, accumulate);
    }}
  }}
}}
"""


def quad_panels(x, rows: int, kq: int, across: bool, kr: int = 4):
    """x's values in zero-padded panels of `rows` rows (A's) or columns (across: B's), each
    holding per k group `rows` groups of kr (x[., kr q .. kr q + kr - 1]): shape
    (panels, kq, rows, kr)."""
    import numpy as np

    if across:
        x = x.T
    blocks = -(-x.shape[0] // rows)
    padded = np.zeros((blocks * rows, kr * kq), dtype=x.dtype)
    padded[:x.shape[0], :x.shape[1]] = x
    return np.ascontiguousarray(padded.reshape(blocks, rows, kq, kr).transpose(0, 2, 1, 3))


def _python_call(spec, kernel):
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, vp, vp, vp, i64, ctypes.c_int)
    # VPDPBUSD kernels multiply A + 128 (unsigned) and take back 128 x B's column sums.
    offset = get_isa(spec.isa).quad(spec.dtype).a_offset

    def prepare(a, b, c=None):
        """Checks and packs; the returned function runs the kernel loop and returns C."""
        a = jit.check_array("a", a, "s8", 2)
        m, k = a.shape
        b = jit.check_array("b", b, "s8", 2, shape=(k, None))
        n = b.shape[1]
        out = (np.zeros((m, n), dtype=np.int32) if c is None else
               np.array(jit.check_array("c", c, "i32", 2, shape=(m, n)), order="C"))
        if m == 0 or n == 0:
            return lambda: out
        kq = -(-k // spec.kr)
        pa = quad_panels(a, spec.mr, kq, False, spec.kr)
        if a_group(spec) > 1:  # a tile kernel's A, in k groups of a tile row
            pa = grouped_a_panels(pa, a_group(spec))
        if offset:
            pa = (pa.view(np.uint8) ^ 0x80).view(np.int8)
        quads = quad_panels(b, spec.nr, kq, True, spec.kr)
        blocks = quads.shape[0]
        sums = quads.astype(np.int32).sum(axis=(1, 3))  # (panels, NR)
        corr = (sums * 128 if offset else np.zeros_like(sums)).astype(np.int32)
        pb = np.concatenate([quads.reshape(blocks, -1), corr.view(np.int8).reshape(blocks, -1)],
                            axis=1)
        pb = np.ascontiguousarray(pb)

        def run():
            drive(m, n, kq, pa.ctypes.data, pb.ctypes.data, out.ctypes.data, n,
                  int(c is not None))
            return out
        return run

    doc = (
        f"{spec.name}: C = A @ B (+ C when c is given) in int32 (exact, wrapping past 2^31 as "
        f"NumPy's integer matmul) for a (M, K) and b (K, N) int8 arrays, c (M, N) int32 (not "
        f"modified: a new array is returned). A and B are packed in groups of {spec.kr} along k, "
        f"then a C loop calls the "
        f"micro-kernel on each {spec.mr}x{spec.nr} tile.")
    return jit.prepared_call(prepare, doc)


def _python_example(spec, dims, rng):
    import numpy as np

    from tilegen.dsl import jit

    m, n, k = dims
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    want = a.astype(np.int64) @ b.astype(np.int64)
    return jit.Example(args=(a, b), kwargs={}, expected=want.astype(np.int32),
                       work=2.0 * m * n * k, unit="flop", shape=f"{m}x{n}x{k}", rtol=0.0)
