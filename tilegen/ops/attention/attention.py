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

    example_dims = (("lq", 512), ("lk", 512), ("d", 64))

    def python_call(self, spec, kernel):
        return _python_call(spec, kernel)

    def python_driver(self, spec) -> str:
        return _python_driver(spec)

    def python_example(self, spec, dims, rng):
        return _python_example(spec, dims, rng)

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


# --- tilegen.dsl.compile: one head's attention from Python, a C loop over query tiles ---

DRIVE = "tg_dsl_attention_drive"


def _python_driver(spec) -> str:
    """For each tile of MR queries: Q^T packed and scaled, O, m, l reset; the kernel on every
    block of up to KB keys the tile's last query sees (a causal block past the first query's
    limit gets a bias tile, -INFINITY on hidden keys); O / l written out. Query i sees keys
    j <= i + off when causal (off = keys - queries: the ends aligned)."""
    mr, kb = spec.mr, spec.kb
    cw = spec.pv_vecs * FAMILY.lanes(spec)
    return f"""#include <math.h>
#include <stdint.h>
#include <string.h>
#include "tg_ukernels.h"

{FAMILY.c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t sq, int64_t sk, int64_t d, int64_t dv, const float* q, int64_t rs_q,
    const float* k, int64_t rs_k, const float* v, int64_t rs_v, float* out, int64_t rs_out,
    float scale, int causal, float* ws) {{
  const int64_t rs_o = (dv + {cw - 1}) / {cw} * {cw}, off = sk - sq;
  float* qt = ws;
  float* o = qt + d * {mr};
  float* m = o + {mr} * rs_o;
  float* l = m + {mr};
  float* bias = l + {mr};
  float* work = bias + {kb * mr};
  tg_f32_attention_args a;
  a.d = d; a.dv = dv; a.qt = qt; a.rs_k = rs_k; a.rs_v = rs_v; a.o = o; a.rs_o = rs_o;
  a.m = m; a.l = l; a.work = work;
  for (int64_t i0 = 0; i0 < sq; i0 += {mr}) {{
    const int64_t mi = sq - i0 < {mr} ? sq - i0 : {mr};
    for (int64_t x = 0; x < d; x++)
      for (int64_t i = 0; i < {mr}; i++)
        qt[x * {mr} + i] = i < mi ? q[(i0 + i) * rs_q + x] * scale : 0;
    for (int64_t i = 0; i < {mr}; i++) {{ m[i] = -INFINITY; l[i] = 0; }}
    memset(o, 0, sizeof(float) * (size_t) ({mr} * rs_o));
    int64_t jend = sk;
    if (causal) {{
      const int64_t seen = i0 + mi - 1 + off + 1;
      jend = seen < 0 ? 0 : seen < sk ? seen : sk;
    }}
    for (int64_t j0 = 0; j0 < jend; j0 += {kb}) {{
      const int64_t n = jend - j0 < {kb} ? jend - j0 : {kb};
      a.bias = NULL;
      if (causal && j0 + n - 1 > i0 + off) {{
        for (int64_t j = 0; j < n; j++)
          for (int64_t i = 0; i < {mr}; i++)
            bias[j * {mr} + i] = i < mi && j0 + j > i0 + i + off ? -INFINITY : 0.0f;
        a.bias = bias;
      }}
      a.k = k + j0 * rs_k;
      a.v = v + j0 * rs_v;
      {spec.name}(n, &a);
    }}
    for (int64_t i = 0; i < mi; i++)
      for (int64_t x = 0; x < dv; x++)
        out[(i0 + i) * rs_out + x] = l[i] == 0 ? 0.0f : o[i * rs_o + x] / l[i];
  }}
}}
"""


def _python_call(spec, kernel):
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, i64, vp, i64, vp, i64, vp, i64, vp, i64,
                          ctypes.c_float, ctypes.c_int, vp)
    mr, kb = spec.mr, spec.kb
    cw = spec.pv_vecs * FAMILY.lanes(spec)

    def call(q, k, v, *, scale=None, causal=False):
        q = jit.check_array("q", q, "f32", 2)
        sq, d = q.shape
        k = jit.check_array("k", k, "f32", 2, shape=(None, d))
        sk = k.shape[0]
        v = jit.check_array("v", v, "f32", 2, shape=(sk, None))
        dv = v.shape[1]
        if d < 1 or dv < 1:
            raise ValueError(f"q, v: head sizes must be positive, got d={d}, dv={dv}")
        scale = 1.0 / np.sqrt(d) if scale is None else float(scale)
        out = np.zeros((sq, dv), np.float32)
        if sq == 0 or sk == 0:
            return out
        rs_o = -(-dv // cw) * cw
        ws = np.zeros(d * mr + mr * rs_o + 2 * mr + kb * mr + work_floats(mr, kb, cw) + 16,
                      np.float32)
        drive(sq, sk, d, dv, q.ctypes.data, jit.row_stride(q), k.ctypes.data, jit.row_stride(k),
              v.ctypes.data, jit.row_stride(v), out.ctypes.data, dv, scale, int(bool(causal)),
              ws.ctypes.data)
        return out

    call.__doc__ = (
        f"{spec.name}: softmax(scale * q @ k.T [causal mask]) @ v for one head: float32 q "
        f"(Lq, d), k (Lk, d), v (Lk, dv) (rows contiguous, any row stride); scale defaults to "
        f"1/sqrt(d); causal: query i sees keys j <= i + Lk - Lq (a query seeing none gives "
        f"zeros). A C loop packs Q^T per {mr} queries and calls the micro-kernel on blocks of up "
        f"to {kb} keys (online softmax), then divides by the sums.")
    return call


def _python_example(spec, dims, rng):
    import numpy as np

    from tilegen.dsl import jit

    sq, sk, d = dims
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((sq, d), (sk, d), (sk, d)))
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) / np.sqrt(d)
    hidden = np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq)
    s[hidden] = -np.inf
    seen = (~hidden).any(1, keepdims=True)  # more queries than keys: the first see none (0)
    p = np.where(hidden, 0.0, np.exp(s - np.where(seen, s.max(1, keepdims=True), 0)))
    want = (p / np.where(seen, p.sum(1, keepdims=True), 1)) @ v.astype(np.float64)
    # The work counts the causal pairs (those seen) only.
    return jit.Example(args=(q, k, v), kwargs={"causal": True}, expected=want.astype(np.float32),
                       work=4.0 * d * float((~hidden).sum()), unit="flop",
                       shape=f"{sq}x{sk}x{d}", rtol=0.0,
                       atol=2e-5 * float(np.abs(v).max()) * np.sqrt(d))
