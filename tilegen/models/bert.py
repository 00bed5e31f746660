"""`tilegen bench --op bert`: a 6-layer BERT-style encoder forward, float32, random weights.

Each layer: the fused QKV projection, scaled dot-product attention with a key-padding mask, the
output projection, residual + layer norm, the feed-forward pair (the first with gelu), residual +
layer norm. tilegen runs every linear layer as a `tg.Linear` (weights packed once, when the
model is built, outside the timing; bias and gelu fused) and the attention through
`tg.attention`; NumPy runs the same forward in float32 (`@`, scores
materialised; the exact gelu with SciPy's erf where installed); torch runs `F.linear`, `F.gelu`,
`F.scaled_dot_product_attention` and `F.layer_norm`. The layer norms and reshapes are NumPy in
both the tilegen and NumPy forwards. Work is the forward's multiply-add flops.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import case_dict

NAME = "bert"
SUMMARY = ("a model, not an op: a 6-layer BERT-style encoder forward (hidden 768, 12 heads, "
           "float32, random weights) on tg.Linear and tg.attention, against the same forward in "
           "NumPy and torch")
LIBS = ("tilegen", "numpy", "torch")
RATIO_VS = ("torch", "numpy")
SHOWS = ("gemm", "attention")  # the ops whose dispatch choice the report shows
UNIT, UNIT_SCALE = "GFLOP/s", 1e9
EPS = 1e-12  # BERT's layer-norm epsilon


@dataclass(frozen=True)
class Case:
    group: str
    dtype: str
    b: int
    s: int
    layers: int = 6
    hidden: int = 768
    heads: int = 12
    ffn: int = 3072

    @property
    def id(self) -> str:
        return (f"bert-{self.dtype}-b{self.b}s{self.s}l{self.layers}h{self.hidden}"
                f"a{self.heads}f{self.ffn}")

    @property
    def label(self) -> str:
        return (f"{self.dtype} BERT {self.layers} layers B{self.b} S{self.s} "
                f"hidden {self.hidden}")

    @property
    def flops(self) -> int:
        t, h = self.b * self.s, self.hidden
        linear = 2 * t * (h * 3 * h + h * h + 2 * h * self.ffn)
        attention = 4 * self.b * self.s * self.s * h
        return self.layers * (linear + attention)

    work = flops
    size = None

    def runs_on(self, lib: str) -> bool:
        return True

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0):
        """(x, keep, weights): the input (B, S, hidden), the key-padding mask (B, S; the last
        quarter of every other sequence is padding) and per layer (Wqkv, bqkv, Wo, bo, W1, b1,
        W2, b2, ln1 gain, ln1 bias, ln2 gain, ln2 bias); W is (in, out)."""
        import numpy as np

        rng = np.random.default_rng(seed)
        f = lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)  # noqa: E731
        h, ffn = self.hidden, self.ffn
        layers = []
        for _ in range(self.layers):
            layers.append((f(h, 3 * h, scale=h ** -0.5), f(3 * h, scale=0.02),
                           f(h, h, scale=h ** -0.5), f(h, scale=0.02),
                           f(h, ffn, scale=h ** -0.5), f(ffn, scale=0.02),
                           f(ffn, h, scale=ffn ** -0.5), f(h, scale=0.02),
                           1 + f(h, scale=0.1), f(h, scale=0.1), 1 + f(h, scale=0.1),
                           f(h, scale=0.1)))
        keep = np.ones((self.b, self.s), bool)
        keep[1::2, self.s - self.s // 4:] = False
        return f(self.b, self.s, h), keep, layers

    def check(self, operands, result) -> Optional[str]:
        """None when `result` is the float64 forward's within 2e-3 (outputs are layer-normed,
        of order 1; float32 through 6 layers)."""
        import numpy as np

        want = numpy_forward(self, *operands, np.float64)
        result = np.asarray(result)
        if result.shape != want.shape:
            return f"shape {result.shape}, expected {want.shape}"
        err = np.abs(result.astype(np.float64) - want)
        rows = operands[1].reshape(-1)  # padded positions are free to differ
        worst = float(err.reshape(-1, self.hidden)[rows].max())
        if not np.isfinite(result).all() or worst > 2e-3:
            return f"max error {worst:.3g} over the tolerance 2e-3"
        return None


def _erf(x):
    """erf, elementwise: SciPy's where it is installed (NumPy has none), else math.erf."""
    import numpy as np

    try:
        from scipy.special import erf
    except ImportError:
        return np.vectorize(math.erf, otypes=[x.dtype])(x)
    return erf(x)


def _layer_norm(x, gain, bias):
    import numpy as np

    # Over the last axis of 2-D x, in place on one centred copy: five passes, not nine.
    xc = x - x.mean(-1, keepdims=True)
    var = np.einsum("ij,ij->i", xc, xc) / x.dtype.type(x.shape[-1])
    xc *= (1 / np.sqrt(var + x.dtype.type(EPS)))[:, None]
    xc *= gain
    xc += bias
    return xc


def _heads(x, case: Case):
    """(B*S, hidden) -> (B, heads, S, hidden/heads)."""
    return x.reshape(case.b, case.s, case.heads, -1).transpose(0, 2, 1, 3)


def _merge(a, case: Case):
    return a.transpose(0, 2, 1, 3).reshape(case.b * case.s, case.hidden)


def numpy_forward(case: Case, x, keep, layers, dtype):
    """The encoder in NumPy (float32 for the bench, float64 for the reference)."""
    import numpy as np

    x = x.astype(dtype).reshape(-1, case.hidden)
    mask = np.where(keep, 0.0, -np.inf).astype(dtype)[:, None, None, :]
    d = case.hidden // case.heads
    for layer in layers:
        wqkv, bqkv, wo, bo, w1, b1, w2, b2, g1, c1, g2, c2 = (a.astype(dtype) for a in layer)
        qkv = x @ wqkv + bqkv
        q, k, v = (_heads(qkv[:, i * case.hidden:(i + 1) * case.hidden], case) for i in range(3))
        s = q @ k.transpose(0, 1, 3, 2) / dtype(math.sqrt(d)) + mask
        p = np.exp(s - s.max(-1, keepdims=True))
        a = _merge((p / p.sum(-1, keepdims=True)) @ v, case)
        x = _layer_norm(x + (a @ wo + bo), g1, c1)
        h = x @ w1 + b1
        h = h * dtype(0.5) * (1 + _erf(h / dtype(math.sqrt(2))).astype(dtype))
        x = _layer_norm(x + (h @ w2 + b2), g2, c2)
    return x.reshape(case.b, case.s, case.hidden)


def tilegen_layers(layers):
    """Each layer's four linear maps as tg.Linear (W given (in, out), Linear takes (out, in)),
    with the layer norms' parameters."""
    import numpy as np

    import tilegen as tg

    def linear(w, b, activation=None):
        return tg.Linear(np.ascontiguousarray(w.T), b, activation=activation)

    return [(linear(wqkv, bqkv), linear(wo, bo), linear(w1, b1, "gelu"), linear(w2, b2),
             g1, c1, g2, c2)
            for wqkv, bqkv, wo, bo, w1, b1, w2, b2, g1, c1, g2, c2 in layers]


def tilegen_forward(case: Case, x, keep, layers):
    """layers: tilegen_layers(...)."""
    import tilegen as tg

    x = x.reshape(-1, case.hidden)
    mask = keep[:, None, None, :]
    for qkv_map, o_map, up_map, down_map, g1, c1, g2, c2 in layers:
        qkv = qkv_map(x)
        q, k, v = (_heads(qkv[:, i * case.hidden:(i + 1) * case.hidden], case) for i in range(3))
        a = _merge(tg.attention(q, k, v, mask=mask), case)
        y = o_map(a)
        y += x  # the residual, in place
        x = _layer_norm(y, g1, c1)
        y = down_map(up_map(x))
        y += x
        x = _layer_norm(y, g2, c2)
    return x.reshape(case.b, case.s, case.hidden)


def cases(quick: bool = False) -> List[Case]:
    if quick:
        return [Case("encoder", "f32", 2, 32, layers=2, hidden=64, heads=4, ffn=128)]
    return [Case("encoder", "f32", 1, 128), Case("encoder", "f32", 4, 128)]


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    import numpy as np

    x, keep, layers = operands
    same = lambda r: r  # noqa: E731
    if lib == "tilegen":
        packed = tilegen_layers(layers)
        return (lambda: tilegen_forward(case, x, keep, packed)), same
    if lib == "numpy":
        return (lambda: numpy_forward(case, x, keep, layers, np.float32)), same
    if lib == "torch":
        import torch
        import torch.nn.functional as F

        tx, tmask = torch.from_numpy(x), torch.from_numpy(keep)[:, None, None, :]
        # F.linear takes (out, in) weights: transposed once, outside the timing.
        tl = [tuple(torch.from_numpy(np.ascontiguousarray(a.T) if a.ndim == 2 else a)
                    for a in layer) for layer in layers]

        def call():
            with torch.inference_mode():
                h = tx
                for wqkv, bqkv, wo, bo, w1, b1, w2, b2, g1, c1, g2, c2 in tl:
                    qkv = F.linear(h, wqkv, bqkv)
                    q, k, v = (t.reshape(case.b, case.s, case.heads, -1).transpose(1, 2)
                               for t in qkv.split(case.hidden, -1))
                    a = F.scaled_dot_product_attention(q, k, v, attn_mask=tmask)
                    a = a.transpose(1, 2).reshape(case.b, case.s, case.hidden)
                    h = F.layer_norm(h + F.linear(a, wo, bo), (case.hidden,), g1, c1, EPS)
                    f = F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)
                    h = F.layer_norm(h + f, (case.hidden,), g2, c2, EPS)
                return h
        return call, lambda r: r.numpy()
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("BERT: B sequences of S tokens, hidden 768, 12 heads, FFN 3072, a key-padding mask "
            "on every other sequence; work = the forward's flops (linear layers and attention)",)
