"""bfloat16 GEMM: C[MR x NR] (float32) = alpha * A B + beta * C, A and B bfloat16, products summed
in float32. Named like the float GEMM kernels (op token "gemm", dtype bf16), KR = 2: A and B are
packed in pairs along k -- a panel of A holds, per k pair, MR pairs (A[i, k], A[i, k+1]); a
panel of B, per k pair, NR pairs (B[k, j], B[k+1, j]) -- which is the operand layout of a pair
dot product (VDPBF16PS: the avx512bf16 tier). ISAs without one widen each pair's values to
float32 (a bfloat16 is a float32's high half) and take two FMAs. The ISA table's DotOps spell
both (dsl/isa/base.py). The driver (gemm_bf16.c) packs, blocks and threads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import DotOps, VecOps, get_isa
from tilegen.dsl.lowering import Plan


@dataclass(frozen=True)
class GemmBf16Plan(Plan):
    nv: int                    # pair vectors per k pair of the B panel (NR / lanes)
    unroll: int
    tail: str                  # how C's edge columns are stored: "mask" or a temporary
    d: DotOps                  # the pair spellings
    v: VecOps                  # the float32 accumulators' spellings


class GemmBf16(OpFamily):
    name = "gemmbf16"
    template = "gemmbf16/ukernel.c.j2"
    types_template = "gemmbf16/types.h.j2"
    vector_dim = "n"
    dtypes = ("bf16",)
    c_select = "tg_gemm_bf16_select"
    c_row_doc = "X(isa id, MR, NR, production, kernel, \"name\")"

    def op_token(self, spec) -> str:
        return "gemm"

    def parse_op_token(self, token: str):
        return {} if token == "gemm" else None

    def check(self, spec) -> None:
        if spec.kr != 2:
            raise ValueError(f"kr: bfloat16 GEMM kernels take k in pairs (KR=2), got {spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        d = isa.dot(spec.dtype)
        nv = spec.nr // d.lanes
        if d.native:  # the B pair vectors, one broadcast A pair
            return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs, input_name="B pair",
                                  broadcast_name="A pair")
        # Widened: B's first and second values, A's pair and its two widened values.
        return RegisterBudget(spec.mr * nv, 2 * nv, 3, isa.num_vregs, input_name="B widened",
                              broadcast_name="A pair + widened")

    def budget_rule(self, spec) -> str:
        d = get_isa(spec.isa).dot(spec.dtype)
        return "MR*NR/lanes + NR/lanes + 1" if d.native else "MR*NR/lanes + 2*NR/lanes + 3"

    def lower(self, spec) -> GemmBf16Plan:
        isa = get_isa(spec.isa)
        d = isa.dot(spec.dtype)
        v = isa.vec("f32")
        return GemmBf16Plan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                            lanes=d.lanes, isa=isa, budget=self.register_budget(spec),
                            nv=spec.nr // d.lanes, unroll=spec.unroll,
                            tail="mask" if v.mask_type else "temp", d=d, v=v)

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const uint16_t*, const uint16_t*, "
                f"float*, int64_t, int64_t, float, float);")

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {int(entry.production)}, {s.name}, "
                f"\"{s.name}\"")

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_LANES": self.lanes(s)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """The tile's rows and columns (n % NR also fixes the masked or temporary column
        vectors); the k pairs run one at a time (no unrolled remainder)."""
        return {"m": s.mr, "n": s.nr}


FAMILY = GemmBf16()
