"""int8 GEMM: C[MR x NR] (int32) = A B (+ C), A and B int8, exact int32 sums (wrapping past
2^31, as NumPy's integer matmul wraps). Named like the float GEMM kernels (op token "gemm",
dtype s8), KR = 4: A and B are packed in quads along k -- a panel of A holds, per k quad, MR
quads (A[i, k..k+3]); a panel of B, per k quad, NR quads (B[k..k+3, j]) and after the last quad
NR int32 column sums -- the operand layout of a four-way dot product (VPDPBUSD: the avx512vnni
tier). VPDPBUSD multiplies unsigned by signed bytes, so for it the driver packs A + 128 (its
bytes with the top bit flipped) and the kernel subtracts 128 x B's column sums. ISAs without
it sign-extend each byte to int32 and multiply. The ISA table's QuadOps spell both
(dsl/isa/base.py). The driver (gemm_s8.c) packs, blocks and threads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import QuadOps, get_isa
from tilegen.dsl.lowering import Plan


@dataclass(frozen=True)
class GemmS8Plan(Plan):
    nv: int                    # quad vectors per k quad of the B panel (NR / lanes)
    q: QuadOps                 # the quad spellings


class GemmS8(OpFamily):
    name = "gemms8"
    template = "gemms8/ukernel.c.j2"
    types_template = "gemms8/types.h.j2"
    vector_dim = "n"
    dtypes = ("s8",)
    c_select = "tg_gemm_s8_select"
    c_row_doc = "X(isa id, MR, NR, production, A offset by 128 (VPDPBUSD), kernel, \"name\")"

    def op_token(self, spec) -> str:
        return "gemm"

    def parse_op_token(self, token: str):
        return {} if token == "gemm" else None

    def check(self, spec) -> None:
        if spec.kr != 4:
            raise ValueError(f"kr: int8 GEMM kernels take k in quads (KR=4), got {spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        q = isa.quad(spec.dtype)
        nv = spec.nr // q.lanes
        if q.native:  # the B quad vectors, one broadcast A quad
            return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs, input_name="B quad",
                                  broadcast_name="A quad")
        # Widened one byte at a time: B's byte vectors, A's quad and its byte.
        return RegisterBudget(spec.mr * nv, nv + 1, 2, isa.num_vregs, input_name="B quad + byte",
                              broadcast_name="A quad + byte")

    def budget_rule(self, spec) -> str:
        q = get_isa(spec.isa).quad(spec.dtype)
        return "MR*NR/lanes + NR/lanes + 1" if q.native else "MR*NR/lanes + NR/lanes + 3"

    def lower(self, spec) -> GemmS8Plan:
        isa = get_isa(spec.isa)
        q = isa.quad(spec.dtype)
        return GemmS8Plan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                          lanes=q.lanes, isa=isa, budget=self.register_budget(spec),
                          nv=spec.nr // q.lanes, q=q)

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const int8_t*, const int8_t*, "
                f"int32_t*, int64_t, int64_t, int);")

    def c_row(self, entry) -> str:
        s = entry.spec
        native = int(get_isa(s.isa).quad(s.dtype).native)
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {int(entry.production)}, {native}, "
                f"{s.name}, \"{s.name}\"")

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_LANES": self.lanes(s),
                "TG_A_OFFSET": int(get_isa(s.isa).quad(s.dtype).native)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """The tile's rows and columns; the k quads run one at a time (no unrolled
        remainder)."""
        return {"m": s.mr, "n": s.nr}


FAMILY = GemmS8()
