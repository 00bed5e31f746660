"""The rmsnorm op's tune plug-in (interface: tilegen/ops/plugins.py): the float32 kernel --
how many values (independent sums of squares) a step of its first pass takes -- among the
registered kernels of the ISA in use, on decode- and prefill-sized rows.

Cache key: f32_kernel.
"""
from __future__ import annotations

from typing import Any, List, Mapping

import numpy as np

from tilegen.ops.plugins import Knob, TuneCase

from . import _rmsnorm


def apply(values: Mapping[str, Any]) -> None:
    unknown = set(values) - {"f32_kernel"}
    if unknown:
        raise ValueError(f"rmsnorm: {sorted(unknown)} not a knob; allowed: f32_kernel")
    _rmsnorm.set_kernel("f32", values.get("f32_kernel"))


def _case(rows: int, n: int) -> TuneCase:
    def make():
        rng = np.random.default_rng(4)
        x = rng.standard_normal((rows, n)).astype(np.float32)
        w = rng.standard_normal(n).astype(np.float32)
        return lambda: _rmsnorm.rmsnorm(x, w, eps=1e-6)
    return TuneCase(f"{rows} x {n}", 3 * rows * n * 4, make, unit="GB/s")


def knobs(quick: bool) -> List[Knob]:
    builtin = _rmsnorm.kernel_name("f32")
    cases = [_case(64, 576)] if quick else [_case(16, 576), _case(64, 4096), _case(256, 2048)]
    return [Knob("f32_kernel", "f32 kernel",
                 lambda chosen: [n for n in _rmsnorm.kernels("f32") if n != builtin],
                 lambda name: _rmsnorm.set_kernel("f32", name), cases,
                 builtin_label=f"{builtin} (built-in)")]


def check() -> None:
    """The kernel in force gives a float64 reference's answer on every row remainder."""
    rng = np.random.default_rng(6)
    for n in (1, 7, 31, 64, 129, 1000):
        x = rng.standard_normal((3, n)).astype(np.float32)
        w = rng.standard_normal(n).astype(np.float32)
        x64 = x.astype(np.float64)
        want = x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * w
        if not np.allclose(_rmsnorm.rmsnorm(x, w, eps=1e-6), want, rtol=1e-5, atol=1e-6):
            raise RuntimeError(f"the tuned rmsnorm kernel {_rmsnorm.kernel_name('f32')} gives "
                               f"wrong results for n={n}; not stored")
