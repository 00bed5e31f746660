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

    example_dims = (("heads", 32), ("kv_heads", 8), ("tokens", 4096), ("d", 128))

    def python_call(self, spec, kernel):
        return _python_call(spec, kernel)

    def python_driver(self, spec) -> str:
        return _python_driver(spec)

    def python_example(self, spec, dims, rng):
        return _python_example(spec, dims, rng)

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


# --- tilegen.dsl.compile: one decode step of grouped-query attention from Python ---

DRIVE = "tg_dsl_attndecode_drive"


def _python_driver(spec) -> str:
    """Token row pointers (the last real row repeated for the prefetch past the end), kv-head
    offsets per slice, then the kernel on every chunk of up to NR tokens, O / l written out.
    q, o, m, l and the work come from the caller's scratch, laid out here."""
    mr, nr, pf = spec.mr, spec.nr, spec.prefetch
    fixed, per_slice = decode_work_floats(spec)
    cw = spec.pv_vecs * FAMILY.lanes(spec)
    return f"""#include <math.h>
#include <stdint.h>
#include <string.h>
#include "tg_ukernels.h"

{FAMILY.c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t hkv, int64_t group, int64_t len, int64_t d, const float* q, int64_t rs_qin,
    const float* k, int64_t k_tok, int64_t k_head, const float* v, int64_t v_tok,
    int64_t v_head, float* out, float scale, float* ws, const float** rows, int64_t* offs) {{
  const int64_t slices = (group + {mr - 1}) / {mr}, ns = hkv * slices, nrows = ns * {mr};
  const int64_t rs_q = (d + 15) / 16 * 16, rs_o = (d + {cw - 1}) / {cw} * {cw};
  float* qb = ws;
  float* o = qb + nrows * rs_q;
  float* m = o + nrows * rs_o;
  float* l = m + nrows;
  float* work = (float*) (((uintptr_t) (l + nrows) + 63) & ~(uintptr_t) 63);
  for (int64_t r = 0; r < nrows; r++) {{
    const int64_t j = r / {mr}, g = (j % slices) * {mr} + r % {mr};
    for (int64_t x = 0; x < rs_q; x++)
      qb[r * rs_q + x] =
          g < group && x < d ? q[((j / slices) * group + g) * rs_qin + x] * scale : 0;
    m[r] = -INFINITY;
    l[r] = 0;
  }}
  memset(o, 0, sizeof(float) * (size_t) (nrows * rs_o));
  const float** krows = rows;
  const float** vrows = rows + len + {pf};
  for (int64_t t = 0; t < len + {pf}; t++) {{
    const int64_t tt = t < len ? t : len - 1;
    krows[t] = k + tt * k_tok;
    vrows[t] = v + tt * v_tok;
  }}
  int64_t* koff = offs;
  int64_t* voff = offs + ns;
  for (int64_t j = 0; j < ns; j++) {{
    koff[j] = (j / slices) * k_head;
    voff[j] = (j / slices) * v_head;
  }}
  tg_f32_attndecode_args a;
  a.d = d; a.ns = ns; a.koff = koff; a.voff = voff; a.q = qb; a.rs_q = rs_q;
  a.o = o; a.rs_o = rs_o; a.m = m; a.l = l; a.work = work;
  for (int64_t t0 = 0; t0 < len; t0 += {nr}) {{
    a.k_rows = krows + t0;
    a.v_rows = vrows + t0;
    {spec.name}(len - t0 < {nr} ? len - t0 : {nr}, &a);
  }}
  for (int64_t r = 0; r < nrows; r++) {{
    const int64_t j = r / {mr}, g = (j % slices) * {mr} + r % {mr};
    if (g >= group) continue;
    float* dst = out + ((j / slices) * group + g) * d;
    for (int64_t x = 0; x < d; x++) dst[x] = l[r] == 0 ? 0.0f : o[r * rs_o + x] / l[r];
  }}
}}
"""


def _python_call(spec, kernel):
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, i64, vp, i64, vp, i64, i64, vp, i64, i64,
                          vp, ctypes.c_float, vp, vp, vp)
    mr, pf = spec.mr, spec.prefetch
    fixed, per_slice = decode_work_floats(spec)
    cw = spec.pv_vecs * FAMILY.lanes(spec)

    def call(q, k, v, *, scale=None):
        q = jit.check_array("q", q, "f32", 2)
        heads, d = q.shape
        k = jit.check_array("k", k, "f32", 3, shape=(None, None, d))
        hkv, length = k.shape[:2]
        v = jit.check_array("v", v, "f32", 3, shape=(hkv, length, d))
        if d < 1:
            raise ValueError(f"q: the head size must be positive, got shape {q.shape}")
        if hkv < 1 or heads % hkv:
            raise ValueError(f"k: {hkv} kv heads do not divide the {heads} query heads of q")
        scale = 1.0 / np.sqrt(d) if scale is None else float(scale)
        out = np.zeros((heads, d), np.float32)
        if heads == 0 or length == 0:
            return out
        group = heads // hkv
        ns = hkv * -(-group // mr)
        rows = ns * mr
        ws = np.zeros(rows * (-(-d // 16) * 16 + -(-d // cw) * cw + 2) + 16 + fixed
                      + ns * per_slice, np.float32)
        ptrs = np.zeros(2 * (length + pf), np.uintp)
        offs = np.zeros(2 * ns, np.int64)
        es = 4  # bytes per float: strides in elements
        drive(hkv, group, length, d, q.ctypes.data, jit.row_stride(q), k.ctypes.data,
              k.strides[1] // es, k.strides[0] // es, v.ctypes.data, v.strides[1] // es,
              v.strides[0] // es, out.ctypes.data, scale, ws.ctypes.data, ptrs.ctypes.data,
              offs.ctypes.data)
        return out

    call.__doc__ = (
        f"{spec.name}: one decode step of grouped-query attention, out[h] = softmax(scale * "
        f"k[h // G] @ q[h]) @ v[h // G] for float32 q (H, d) (one token's query heads), k and v "
        f"(Hkv, L, d) (the cached tokens of each kv head, any strides with d contiguous), G = "
        f"H / Hkv heads per kv head; scale defaults to 1/sqrt(d). A C loop calls the micro-"
        f"kernel on all kv heads at once (slices of {mr} heads) for each chunk of up to "
        f"{spec.nr} tokens, then divides by the sums.")
    return call


def _python_example(spec, dims, rng):
    import numpy as np

    from tilegen.dsl import jit

    heads, hkv, length, d = dims
    q = rng.standard_normal((heads, d)).astype(np.float32)
    k, v = (rng.standard_normal((hkv, length, d)).astype(np.float32) for _ in range(2))
    g = heads // max(hkv, 1)
    kk = np.repeat(k.astype(np.float64), g, axis=0)
    vv = np.repeat(v.astype(np.float64), g, axis=0)
    s = np.einsum("hld,hd->hl", kk, q.astype(np.float64)) / np.sqrt(d)
    p = np.exp(s - s.max(1, keepdims=True))
    want = np.einsum("hl,hld->hd", p / p.sum(1, keepdims=True), vv)
    return jit.Example(args=(q, k, v), kwargs={}, expected=want.astype(np.float32),
                       work=2.0 * hkv * length * d * 4, unit="byte",
                       shape=f"{heads}x{hkv}x{length}x{d}", rtol=0.0,
                       atol=2e-5 * float(np.abs(v).max()) * np.sqrt(d))
