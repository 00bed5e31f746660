"""`tilegen bench --op attention`: fused scaled dot-product attention against torch's
scaled_dot_product_attention and a NumPy reference (scores materialised head by head).

A case is q (B, Hq, S, D), k and v (B, Hkv, S, D), optionally causal or with a key-padding mask
(B, 1, 1, S) as a BERT encoder uses. Its work is 4*B*Hq*S*S*D flops for every case, causal ones
included: a causal case's rate over the non-causal one's is its speedup.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import LINE_OFFSET, case_dict, placed

NAME = "attention"
LIBS = ("tilegen", "numpy", "torch")
RATIO_VS = ("torch", "numpy")
UNIT, UNIT_SCALE = "GFLOP/s", 1e9
DTYPES = {"f32": "float32", "f64": "float64"}


@dataclass(frozen=True)
class Case:
    group: str
    dtype: str
    b: int
    hq: int
    hkv: int
    s: int
    d: int
    causal: bool = False
    padded: bool = False   # a key-padding mask hides the last quarter of the keys of odd sequences

    @property
    def id(self) -> str:
        tail = ("-causal" if self.causal else "") + ("-padmask" if self.padded else "")
        heads = f"h{self.hq}" if self.hq == self.hkv else f"h{self.hq}kv{self.hkv}"
        return f"attention-{self.dtype}-b{self.b}{heads}s{self.s}d{self.d}{tail}"

    @property
    def label(self) -> str:
        heads = f"H{self.hq}" if self.hq == self.hkv else f"H{self.hq}/{self.hkv}"
        tail = (" causal" if self.causal else "") + (" padmask" if self.padded else "")
        return f"{self.dtype} B{self.b} {heads} S{self.s} D{self.d}{tail}"

    @property
    def flops(self) -> int:
        return 4 * self.b * self.hq * self.s * self.s * self.d

    work = flops
    size = None

    def runs_on(self, lib: str) -> bool:
        return True

    def as_dict(self) -> dict:
        return case_dict(self)

    def mask(self):
        """The boolean key-padding mask (True = attend), or None."""
        import numpy as np

        if not self.padded:
            return None
        keep = np.ones((self.b, 1, 1, self.s), bool)
        keep[1::2, ..., self.s - self.s // 4:] = False
        return keep

    def operands(self, seed: int = 0, offset: int = LINE_OFFSET):
        import numpy as np

        rng = np.random.default_rng(seed)
        dt = np.dtype(DTYPES[self.dtype])
        q = placed(rng.uniform(-1, 1, (self.b, self.hq, self.s, self.d)).astype(dt), offset)
        k = placed(rng.uniform(-1, 1, (self.b, self.hkv, self.s, self.d)).astype(dt), offset)
        v = placed(rng.uniform(-1, 1, (self.b, self.hkv, self.s, self.d)).astype(dt), offset)
        return q, k, v

    def check(self, operands, result) -> Optional[str]:
        """None when `result` matches a float64 reference on two heads (32 of their rows)."""
        import numpy as np

        q, k, v = operands
        result = np.asarray(result)
        if result.shape != q.shape:
            return f"shape {result.shape}, expected {q.shape}"
        keep = self.mask()
        rows = np.unique(np.linspace(0, self.s - 1, min(self.s, 32)).astype(np.intp))
        for bi, h in {(0, 0), (self.b - 1, self.hq - 1)}:
            want = _reference_head(q[bi, h, rows], k[bi, h * self.hkv // self.hq],
                                   v[bi, h * self.hkv // self.hq],
                                   None if keep is None else keep[bi, 0],
                                   rows if self.causal else None, np.float64)
            got = result[bi, h, rows].astype(np.float64)
            tol = 5e-5 if self.dtype == "f32" else 1e-10
            err = np.abs(got - want).max()
            if not np.isfinite(got).all() or err > tol:
                return f"batch {bi} head {h}: max error {err:.3g} over the tolerance {tol}"
        return None


def _reference_head(q, k, v, keep, causal_rows, dtype):
    """softmax(q k^T / sqrt(D) + mask) v for one head; causal_rows: the query rows' indices."""
    import numpy as np

    q, k, v = (np.asarray(x, dtype) for x in (q, k, v))
    s = q @ k.T / math.sqrt(q.shape[-1])
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    if causal_rows is not None:
        s = np.where(np.arange(k.shape[0])[None, :] <= np.asarray(causal_rows)[:, None], s, -np.inf)
    s -= s.max(-1, keepdims=True)
    p = np.exp(s)
    return (p @ v) / p.sum(-1, keepdims=True)


def cases(quick: bool = False) -> List[Case]:
    if quick:
        return [Case("prefill", "f32", 1, 2, 2, 64, 32),
                Case("prefill", "f32", 1, 2, 2, 64, 32, causal=True),
                Case("mask", "f32", 2, 2, 2, 48, 16, padded=True)]
    return [
        Case("prefill", "f32", 1, 12, 12, 512, 64),
        Case("prefill", "f32", 1, 12, 12, 512, 64, causal=True),
        Case("prefill", "f32", 1, 32, 32, 2048, 128),
        Case("prefill", "f32", 1, 32, 32, 2048, 128, causal=True),
        Case("gqa", "f32", 1, 32, 8, 1024, 128, causal=True),
        Case("mask", "f32", 8, 12, 12, 128, 64, padded=True),
        Case("f64", "f64", 1, 8, 8, 512, 64),
    ]


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    q, k, v = operands
    keep = case.mask()
    same = lambda r: r  # noqa: E731
    if lib == "tilegen":
        import tilegen
        return (lambda: tilegen.attention(q, k, v, mask=keep, causal=case.causal)), same
    if lib == "numpy":
        import numpy as np

        def call():
            out = np.empty_like(q)
            for bi in range(case.b):
                for h in range(case.hq):
                    g = h * case.hkv // case.hq
                    out[bi, h] = _reference_head(q[bi, h], k[bi, g], v[bi, g],
                                                 None if keep is None else keep[bi, 0],
                                                 np.arange(case.s) if case.causal else None,
                                                 q.dtype)
            return out
        return call, same
    if lib == "torch":
        import torch
        import torch.nn.functional as F

        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        tm = None if keep is None else torch.from_numpy(keep)
        gqa = case.hq != case.hkv

        def call():
            with torch.no_grad():
                return F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm,
                                                      is_causal=case.causal, enable_gqa=gqa)
        return call, lambda r: r.numpy()
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("q (B, H, S, D), k and v (B, Hkv, S, D) (H/Hkv: grouped-query heads); "
            "work = 4*B*H*S*S*D flops for every case, causal ones too (their rate over the "
            "non-causal case's is the speedup)",
            "padmask: a (B, 1, 1, S) key-padding mask hiding the last quarter of the keys of "
            "every other sequence; numpy: scores materialised head by head, then softmax @ v")
