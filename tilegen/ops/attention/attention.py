"""Fused attention (prefill): one tile of MR queries against one block of up to KB keys.

Queries run along the SIMD lanes: the tile's Q is packed transposed (Q^T, element (dd, i) at
qt[dd*MR + i], pre-scaled), K rows are read in place and broadcast one element at a time, so
S^T (NR keys x MR queries) builds on a register tile like a GEMM's, and the softmax statistics
of a query are plain lane-wise maxima and sums (no horizontal reductions). One call:

  1. S = Q K^T for the block, NR keys at a time (+ an optional additive bias tile), into a
     KB x MR scratch, keeping the running lane-wise maximum;
  2. online softmax: new maximum m, rescale factor alpha = exp(m_old - m), P = exp(S - m)
     (the polynomial exp of dsl/templates/common/exp.j2), l = alpha*l + sum(P);
  3. O = alpha*O + P V on a PV_ROWS x PV_VECS register tile, V rows read in place (the dv tail
     through masked loads or a zero-padded copy).

MR = lanes x (vectors per query tile); NR = keys per S register tile; KB (multiple of NR) keys
per call. The driver (attention.c) packs Q^T, builds bias tiles (masks, causal
edges), owns O, m and l and normalises O at the end. The family also generates, per ISA, the
exp over an array (`tg_f32_attention_exp__<isa>`), which the C tester checks in ULPs.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from tilegen.dsl.isa import DTYPES, Isa, VecOps, get_isa
from tilegen.dsl.family import ExtraFile, OpFamily, RegisterBudget
from tilegen.dsl.lowering import RowsPlan, row_addressing

GENERATED = os.path.join("tilegen", "generated")
EXP_TEMPLATE = "attention/exp.c.j2"
MAX_KB = 512  # keys per call the driver's per-key scratch holds (TG_ATTN_MAX_KB, attention.c)


def exp_name(dtype: str, isa: str) -> str:
    return f"tg_{dtype}_attention_exp__{isa}"


def exp_path(dtype: str, isa: str) -> str:
    return os.path.join(GENERATED, "attention", "exp", f"{exp_name(dtype, isa)}.c")


@dataclass(frozen=True)
class AttentionPlan(RowsPlan):
    # mr: queries per tile (lanes x w)
    # nr: keys per S register tile
    w: int                     # vectors per query tile
    kb: int                    # keys per call
    pv_rows: int               # O register tile: query rows ...
    pv_vecs: int               # ... x vectors of dv
    unroll: int                # d steps per S loop iteration
    prefetch: int              # 0, or prefetch the next key sub-tile's rows

    @property
    def cw(self) -> int:
        """Floats of dv per PV chunk (the O scratch is padded to a multiple of it)."""
        return self.pv_vecs * self.lanes


def work_floats(mr: int, kb: int, cw: int) -> int:
    """Scratch a call needs: the KB x MR score/probability tile, MR rescale factors and (for the
    zero-padded dv tail) KB x CW floats. One formula for the template and the driver (C row)."""
    return kb * mr + mr + kb * cw


class Attention(OpFamily):
    name = "attention"
    template = "attention/ukernel.c.j2"
    types_template = "attention/types.h.j2"
    vector_dim = "m"
    dtypes = ("f32",)
    fields = {"kb": (48, None), "pv_rows": (4, None), "pv_vecs": (4, None)}
    c_select = "tg_attention_select"
    c_row_doc = ("X(isa id, MR, NR, KB, PV chunk floats, work floats, production, kernel, "
                 "exp over an array, \"name\")")

    # Fields off their defaults are name tokens after the ISA: ..._kb16_pv4x2 (the name is the
    # schema, so a kernel's name alone rebuilds it).
    def variant_tokens(self, spec) -> List[str]:
        tokens = []
        if spec.kb != self.fields["kb"][0]:
            tokens.append(f"kb{spec.kb}")
        if (spec.pv_rows, spec.pv_vecs) != (self.fields["pv_rows"][0], self.fields["pv_vecs"][0]):
            tokens.append(f"pv{spec.pv_rows}x{spec.pv_vecs}")
        return tokens

    def parse_variant(self, variant: str) -> Tuple[Dict[str, Any], str]:
        fields: Dict[str, Any] = {}
        rest = variant.split("_") if variant else []
        if rest and re.fullmatch(r"kb[0-9]+", rest[0]):
            fields["kb"] = int(rest.pop(0)[2:])
        if rest and re.fullmatch(r"pv[0-9]+x[0-9]+", rest[0]):
            r, c = rest.pop(0)[2:].split("x")
            fields["pv_rows"], fields["pv_vecs"] = int(r), int(c)
        return fields, "_".join(rest)

    def check(self, spec) -> None:
        if spec.kr != 1:
            raise ValueError(f"kr: attention kernels take KR=1, got KR={spec.kr}")
        self.check_multiple("mr", spec.mr, spec, "MR (queries per tile)")
        if spec.kb > MAX_KB:
            raise ValueError(f"kb: {spec.kb} keys per call is over the driver's limit of {MAX_KB}")
        if spec.kb % spec.nr:
            raise ValueError(f"kb: {spec.kb} keys per call is not a multiple of NR={spec.nr}; "
                             f"allowed: multiples of {spec.nr}")
        if spec.mr % spec.pv_rows:
            raise ValueError(f"pv_rows: {spec.pv_rows} does not divide MR={spec.mr}; allowed: "
                             "divisors of MR")

    def _phases(self, spec) -> Tuple[RegisterBudget, RegisterBudget]:
        isa = get_isa(spec.isa)
        w = spec.mr // isa.lanes(spec.dtype)
        s = RegisterBudget(spec.nr * w, w, 1, isa.num_vregs, input_name="Q^T",
                           broadcast_name="K broadcast")
        pv = RegisterBudget(spec.pv_rows * spec.pv_vecs, spec.pv_vecs, 1, isa.num_vregs,
                            input_name="V", broadcast_name="P broadcast")
        return s, pv

    def register_budget(self, spec) -> RegisterBudget:
        s, pv = self._phases(spec)
        return s if s.used >= pv.used else pv

    def budget_rule(self, spec) -> str:
        lanes = self.lanes(spec)
        return (f"S phase NR*MR/{lanes} + MR/{lanes} + 1, and PV phase "
                "PV_ROWS*PV_VECS + PV_VECS + 1")

    def lower(self, spec) -> AttentionPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        bases, rows = row_addressing(spec.nr)
        return AttentionPlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, nr=spec.nr,
            w=spec.mr // v.lanes, kb=spec.kb, pv_rows=spec.pv_rows, pv_vecs=spec.pv_vecs,
            lanes=v.lanes, unroll=spec.unroll, prefetch=spec.prefetch, tail=spec.tail,
            row_bases=bases, row_addr=rows, isa=isa, v=v, budget=self.register_budget(spec))

    def c_declaration(self, spec) -> str:
        return f"void {spec.name}(int64_t, const tg_{spec.dtype}_attention_args*);"

    def c_row(self, entry) -> str:
        s = entry.spec
        cw = s.pv_vecs * self.lanes(s)
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {s.kb}, {cw}, "
                f"{work_floats(s.mr, s.kb, cw)}, {int(entry.production)}, {s.name}, "
                f"{exp_name(s.dtype, s.isa)}, \"{s.name}\"")

    def extra_files(self, entries, env) -> List[ExtraFile]:
        """The exp over an array, per (dtype, ISA) with kernels: the code the kernels inline,
        callable on its own for the tester's ULP check."""
        out = []
        for dtype, isa in sorted({(e.spec.dtype, e.spec.isa) for e in entries}):
            table = get_isa(isa)
            body = env.get_template(EXP_TEMPLATE).render(
                name=exp_name(dtype, isa), isa=table, v=table.vec(dtype))
            t = DTYPES[dtype]
            out.append(ExtraFile(
                path=exp_path(dtype, isa), content=body, template=EXP_TEMPLATE,
                note=f"{self.registry_file}: every {dtype} {isa} kernel's exp", isa=isa,
                declarations=(f"void {exp_name(dtype, isa)}(int64_t, const {t}*, {t}*);",)))
        return out


    # The exp's error bound in ULPs (dsl/templates/common/exp.j2) that the tester checks: 1 with
    # fused multiply-adds, 1.5 on the scalar fallback, whose multiply-adds round twice.
    EXP_ULP = {"scalar": 1.5}

    def tester_defines(self, s) -> Dict[str, object]:
        cw = s.pv_vecs * self.lanes(s)
        return {"TG_EXP": exp_name(s.dtype, s.isa), "TG_MR": s.mr, "TG_NR": s.nr, "TG_KB": s.kb,
                "TG_UNROLL": s.unroll, "TG_CW": cw, "TG_LANES": self.lanes(s),
                "TG_WORK": work_floats(s.mr, s.kb, cw), "TG_EXP_ULP": self.EXP_ULP.get(s.isa, 1.0)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Keys per S register tile, d steps per S loop iteration, dv per PV chunk; and the exp
        over an array, a vector at a time. The MR queries are the lanes of whole vectors."""
        return {"keys": s.nr, "d": s.unroll, "dv": s.pv_vecs * self.lanes(s),
                "exp_n": self.lanes(s)}

    def tester_sources(self, s) -> List[str]:
        return [exp_path(s.dtype, s.isa)]


FAMILY = Attention()
