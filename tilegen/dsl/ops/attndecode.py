"""Decode attention (paged KV cache): MR query heads of one group against n <= NR cached tokens.

One new token per sequence: each cached key and value row is read once and serves the MR heads
of its group (grouped-query attention). Tokens arrive as row pointers (the driver resolves the
block table), so any block size, 1 included, is the same loop, and the kernel prefetches the
rows `prefetch` tokens ahead. One call:

  1. scores: two tokens at a time, the d-long dot products of each token's key with the MR
     query rows (pre-scaled, zero-padded) in vector partial sums, reduced to one score each;
  2. online softmax per head, over the tokens along the lanes (the family's polynomial exp,
     templates/attention/exp.j2);
  3. O = alpha*O + P V on an MR x PV_VECS register tile, each value row loaded once per chunk.

The attention driver (tilegen/nn/attention_paged.c) selects these kernels.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from ..isa import Isa, VecOps, get_isa
from . import OpFamily, RegisterBudget

TOKENS_PER_STEP = 2  # tokens whose scores build together (independent FMA chains)


@dataclass(frozen=True)
class AttnDecodePlan:
    name: str
    dtype: str
    ctype: str
    mr: int                    # query heads per call
    nr: int                    # tokens per call (a multiple of the vector width)
    pv_vecs: int
    lanes: int
    prefetch: int              # tokens ahead whose rows are prefetched (0 = off)
    tail: str
    isa: Isa
    v: VecOps
    budget: RegisterBudget

    @property
    def cw(self) -> int:
        return self.pv_vecs * self.lanes

    @property
    def tk(self) -> int:
        return TOKENS_PER_STEP


def decode_work_floats(mr: int, nr: int, cw: int, lanes: int) -> int:
    """Scratch a call needs: MR x NR scores, MR rescale factors, a zero-padded value-row tail
    (CW) and key-row tail (one vector)."""
    return mr * nr + mr + cw + lanes


class AttnDecode(OpFamily):
    name = "attndecode"
    sdk_op = "attention"  # the attention driver selects and calls these kernels
    template = "attndecode/ukernel.c.j2"
    types_template = "attndecode/types.h.j2"
    vector_dim = "d"
    dtypes = ("f32",)
    fields = {"pv_vecs": (4, None)}
    c_row_doc = ("X(isa id, MR, NR, PV chunk floats, work floats, prefetch distance, "
                 "production, kernel, \"name\")")

    def variant_tokens(self, spec) -> List[str]:
        return [] if spec.pv_vecs == self.fields["pv_vecs"][0] else [f"pv{spec.pv_vecs}"]

    def parse_variant(self, variant: str) -> Tuple[Dict[str, Any], str]:
        rest = variant.split("_") if variant else []
        if rest and re.fullmatch(r"pv[0-9]+", rest[0]):
            return {"pv_vecs": int(rest.pop(0)[2:])}, "_".join(rest)
        return {}, variant

    def check(self, spec) -> None:
        if spec.kr != 1:
            raise ValueError(f"kr: attndecode kernels take KR=1, got KR={spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR (tokens per call)")

    def _phases(self, spec) -> Tuple[RegisterBudget, RegisterBudget]:
        isa = get_isa(spec.isa)
        s = RegisterBudget(TOKENS_PER_STEP * spec.mr, TOKENS_PER_STEP, 1, isa.num_vregs,
                           input_name="K", broadcast_name="Q load")
        pv = RegisterBudget(spec.mr * spec.pv_vecs, spec.pv_vecs, 1, isa.num_vregs,
                            input_name="V", broadcast_name="P broadcast")
        return s, pv

    def register_budget(self, spec) -> RegisterBudget:
        s, pv = self._phases(spec)
        return s if s.used >= pv.used else pv

    def budget_rule(self, spec) -> str:
        return (f"scores {TOKENS_PER_STEP}*MR + {TOKENS_PER_STEP} + 1, and PV phase "
                "MR*PV_VECS + PV_VECS + 1")

    def lower(self, spec) -> AttnDecodePlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        return AttnDecodePlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, nr=spec.nr,
            pv_vecs=spec.pv_vecs, lanes=v.lanes, prefetch=spec.prefetch, tail=spec.tail,
            isa=isa, v=v, budget=self.register_budget(spec))

    def c_declaration(self, spec) -> str:
        return f"void {spec.name}(int64_t, const tg_{spec.dtype}_attndecode_args*);"

    def c_row(self, entry) -> str:
        s = entry.spec
        lanes = self.lanes(s)
        cw = s.pv_vecs * lanes
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {cw}, "
                f"{decode_work_floats(s.mr, s.nr, cw, lanes)}, {s.prefetch}, "
                f"{int(entry.production)}, {s.name}, \"{s.name}\"")


FAMILY = AttnDecode()
