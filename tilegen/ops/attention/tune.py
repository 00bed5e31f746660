"""The attention op's tune plug-in (interface: tilegen/ops/plugins.py): the float32 kernel --
its query tile (MR queries along the lanes x NR keys of the S tile), keys per call (KB) and PV
tile -- among the registered kernels of the ISA in use (attention.yaml registers alternatives
with production: false), timed on a BERT-sized and an LLM-sized head.

Cache key: f32_kernel.
"""
from __future__ import annotations

from typing import Any, List, Mapping

import numpy as np

from tilegen.ops.plugins import Knob, TuneCase

from . import _attention


def apply(values: Mapping[str, Any]) -> None:
    unknown = set(values) - {"f32_kernel"}
    if unknown:
        raise ValueError(f"attention: {sorted(unknown)} not a knob; allowed: f32_kernel")
    _attention.set_kernel(values.get("f32_kernel"))


def _case(heads: int, s: int, d: int, causal: bool = False) -> TuneCase:
    flops = 4.0 * heads * s * s * d * (0.5 if causal else 1.0)

    def make():
        rng = np.random.default_rng(5)
        q, k, v = (rng.standard_normal((1, heads, s, d), dtype=np.float32) for _ in range(3))
        return lambda: _attention.attention(q, k, v, causal=causal)
    return TuneCase(f"H{heads} S{s} D{d}" + (" causal" if causal else ""), flops, make)


def knobs(quick: bool) -> List[Knob]:
    builtin = _attention.kernel_name()
    cases = ([_case(4, 256, 64)] if quick else
             [_case(12, 512, 64), _case(4, 1024, 128), _case(4, 1024, 128, causal=True)])
    return [Knob("f32_kernel", "f32 kernel",
                 lambda chosen: [n for n in _attention.kernels() if n != builtin],
                 _attention.set_kernel, cases, builtin_label=f"{builtin} (built-in)")]


def check() -> None:
    """The kernel in force gives the plain C path's answer (key tails, a mask, causal)."""
    rng = np.random.default_rng(9)
    q = rng.standard_normal((2, 3, 37, 72), dtype=np.float32)
    k = rng.standard_normal((2, 3, 101, 72), dtype=np.float32)
    v = rng.standard_normal((2, 3, 101, 40), dtype=np.float32)
    mask = rng.random((37, 101)) > 0.3
    runs = []
    for plain in (False, True):
        _attention._force_plain(plain)
        try:
            runs.append([_attention.attention(q, k, v, causal=True),
                         _attention.attention(q, k, v, mask=mask)])
        finally:
            _attention._force_plain(False)
    for got, want in zip(*runs):
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            raise RuntimeError(f"the tuned attention kernel {_attention.kernel_name()} disagrees "
                               "with the plain path; not stored")
