"""Decode attention (paged KV cache): NS slices of MR query heads, each slice against its own kv
head of n <= NR cached tokens.

One new token per sequence: each cached key and value row is read once and serves the MR heads
of its group (grouped-query attention). Tokens arrive as row pointers (the driver resolves the
block table) and each slice adds its kv head's offset, so any block size, 1 included, is the same
loop, and the kernel prefetches the rows `prefetch` tokens ahead. One call:

  1. scores, token-major (a token's kv heads are read in address order, every slice in turn):
     four or two tokens at a time (steps), the d-long dot products of each token's key with
     the slice's MR query rows (pre-scaled, zero-padded) in vector partial sums, reduced to one
     score each;
  2. online softmax per head, over the tokens along the lanes (the family's polynomial exp,
     dsl/templates/common/exp.j2);
  3. O = alpha*O, then O += P V token-major like the scores (every slice of a token in turn, so
     the value rows too are read in address order), TP tokens a step: their value rows in
     registers, O (in L1) read and written once per step.

The paged_attention driver (paged_attention.c) selects these kernels.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from tilegen.dsl.isa import DTYPE_BYTES, PREFETCH_LEVELS, Isa, VecOps, get_isa
from tilegen.dsl.lowering import VectorPlan
from tilegen.dsl.family import OpFamily, RegisterBudget

# Tokens whose scores build together (independent FMA chains): 4 where the registers hold 4*MR
# partial sums (their per-head sums then leave in one store_sum4), else 2.
TOKENS_PER_STEP = (4, 2)


def _first_fit(candidates: Tuple[int, ...], fits) -> int:
    return next((x for x in candidates if fits(x)), candidates[-1])


# Tokens whose value rows one PV step adds into O (TP x PV_VECS value vectors, TP weights and
# PV_VECS O vectors in registers): O is read and written once per TP tokens.
PV_TOKENS_PER_STEP = (4, 2, 1)


def steps(spec) -> Tuple[int, int]:
    """(TK, TP): tokens per score step and per PV step, the most the ISA's registers hold."""
    regs = get_isa(spec.isa).num_vregs
    tk = _first_fit(TOKENS_PER_STEP, lambda t: t * spec.mr + t + 1 <= regs)
    tp = _first_fit(PV_TOKENS_PER_STEP, lambda t: t * spec.pv_vecs + t + spec.pv_vecs <= regs)
    return tk, tp


@dataclass(frozen=True)
class AttnDecodePlan(VectorPlan):
    # mr: query heads per call
    # nr: tokens per call (a multiple of the vector width)
    pv_vecs: int
    prefetch: int              # tokens ahead whose rows are prefetched (0 = off)
    prefetch_to: str           # the cache level they are prefetched to (PREFETCH_LEVELS)
    tk: int                    # tokens per score step
    tp: int                    # tokens per PV step

    @property
    def cw(self) -> int:
        return self.pv_vecs * self.lanes

    @property
    def fixed_pad(self) -> int:
        return FIXED_PAD

    @property
    def line(self) -> int:
        """Elements per 64-byte cache line: the prefetch granule."""
        return 64 // DTYPE_BYTES[self.dtype]


FIXED_PAD = 16  # floats for the key-row tail: a vector of any ISA, keeping the scores aligned


def decode_work_floats(spec) -> Tuple[int, int]:
    """Scratch a call needs, as (fixed, per slice): the zero-padded d tails of a PV step's TP
    value rows (TP x CW) and of a key row (FIXED_PAD); per slice MR x NR scores and MR rescale
    factors."""
    cw = spec.pv_vecs * get_isa(spec.isa).lanes(spec.dtype)
    return steps(spec)[1] * cw + FIXED_PAD, spec.mr * spec.nr + spec.mr


class AttnDecode(OpFamily):
    name = "attndecode"
    c_select = "tg_paged_attention_select"
    template = "attndecode/ukernel.c.j2"
    types_template = "attndecode/types.h.j2"
    vector_dim = "d"
    dtypes = ("f32",)
    fields = {"pv_vecs": (4, None), "prefetch_to": ("l1", tuple(PREFETCH_LEVELS))}
    c_row_doc = ("X(isa id, MR, NR, PV chunk floats, work floats per call, work floats per "
                 "slice, prefetch distance, production, kernel, \"name\")")

    def variant_tokens(self, spec) -> List[str]:
        tokens = [] if spec.pv_vecs == self.fields["pv_vecs"][0] else [f"pv{spec.pv_vecs}"]
        if spec.prefetch_to != self.fields["prefetch_to"][0]:
            tokens.append(f"pf{spec.prefetch_to}")
        return tokens

    def parse_variant(self, variant: str) -> Tuple[Dict[str, Any], str]:
        rest = variant.split("_") if variant else []
        fields: Dict[str, Any] = {}
        if rest and re.fullmatch(r"pv[0-9]+", rest[0]):
            fields["pv_vecs"] = int(rest.pop(0)[2:])
        if rest and rest[0] in {f"pf{lv}" for lv in PREFETCH_LEVELS}:
            fields["prefetch_to"] = rest.pop(0)[2:]
        return fields, "_".join(rest)

    def check(self, spec) -> None:
        if spec.kr != 1:
            raise ValueError(f"kr: attndecode kernels take KR=1, got KR={spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR (tokens per call)")

    def _phases(self, spec) -> Tuple[RegisterBudget, RegisterBudget]:
        isa = get_isa(spec.isa)
        tk, tp = steps(spec)
        s = RegisterBudget(tk * spec.mr, tk, 1, isa.num_vregs,
                           input_name="K", broadcast_name="Q load")
        pv = RegisterBudget(spec.pv_vecs, tp * spec.pv_vecs, tp, isa.num_vregs,
                            input_name="V", broadcast_name="P broadcast")
        return s, pv

    def register_budget(self, spec) -> RegisterBudget:
        s, pv = self._phases(spec)
        return s if s.used >= pv.used else pv

    def budget_rule(self, spec) -> str:
        tk, tp = steps(spec)
        return (f"scores {tk}*MR + {tk} + 1, and PV phase "
                f"PV_VECS + {tp}*PV_VECS + {tp}")

    def lower(self, spec) -> AttnDecodePlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        tk, tp = steps(spec)
        return AttnDecodePlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, nr=spec.nr,
            pv_vecs=spec.pv_vecs, lanes=v.lanes, prefetch=spec.prefetch,
            prefetch_to=spec.prefetch_to, tk=tk, tp=tp, tail=spec.tail,
            isa=isa, v=v, budget=self.register_budget(spec))

    def validate_registry(self, entries, where: str) -> None:
        """A prefetch level (in the name, as _pf<level>) needs a prefetch distance: the name alone
        (tune's and the reports' specs) cannot carry the distance, so the rule spans entries."""
        for e in entries:
            if e.spec.prefetch_to != self.fields["prefetch_to"][0] and not e.spec.prefetch:
                raise ValueError(f"{where}: {e.name}: prefetch_to {e.spec.prefetch_to!r} needs a "
                                 f"prefetch distance (prefetch > 0)")

    def c_declaration(self, spec) -> str:
        return f"void {spec.name}(int64_t, const tg_{spec.dtype}_attndecode_args*);"

    def c_row(self, entry) -> str:
        s = entry.spec
        cw = s.pv_vecs * self.lanes(s)
        fixed, per_slice = decode_work_floats(s)
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {cw}, {fixed}, {per_slice}, "
                f"{s.prefetch}, "
                f"{int(entry.production)}, {s.name}, \"{s.name}\"")


    def tester_defines(self, s) -> Dict[str, object]:
        lanes = self.lanes(s)
        fixed, per_slice = decode_work_floats(s)
        tk, tp = steps(s)
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_CW": s.pv_vecs * lanes, "TG_LANES": lanes,
                "TG_TK": tk, "TG_TP": tp, "TG_PF": s.prefetch, "TG_WORK": fixed,
                "TG_SLICE_WORK": per_slice}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Tokens per score step, per PV step and per softmax vector; d per key-row vector and
        per PV chunk. The MR heads of a slice are whole rows, the slices a count."""
        lanes = self.lanes(s)
        tk, tp = steps(s)
        return {"tokens_score": tk, "tokens_pv": tp, "tokens_lanes": lanes, "d_vector": lanes,
                "d_chunk": s.pv_vecs * lanes}


FAMILY = AttnDecode()
