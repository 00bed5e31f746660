"""`tilegen bench --op rmsnorm`: RMS normalisation of rows as a memory rate (bytes read and
written per second), against NumPy's expression and torch.nn.functional.rms_norm.

RMSNorm reads each row twice (the sum of squares, then the scaled row) and writes it once, so
it is bound by memory once rows outgrow the caches: work = 3 * rows * n * itemsize bytes (the
weight is read once per row but stays in L1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import case_dict, placed

NAME = "rmsnorm"
LIBS = ("tilegen", "numpy", "torch")
RATIO_VS = ("numpy", "torch")
UNIT, UNIT_SCALE = "GB/s", 1e9
EPS = 1e-6


@dataclass(frozen=True)
class Case:
    group: str
    rows: int
    n: int
    dtype: str = "f32"

    @property
    def id(self) -> str:
        return f"rmsnorm-{self.rows}x{self.n}-{self.dtype}"

    @property
    def label(self) -> str:
        return f"{self.rows} x {self.n} {self.dtype}"

    @property
    def work(self) -> int:
        return 3 * self.rows * self.n * (4 if self.dtype == "f32" else 8)

    size = None

    def runs_on(self, lib: str) -> bool:
        return True

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0):
        import numpy as np

        rng = np.random.default_rng(seed)
        t = np.float32 if self.dtype == "f32" else np.float64
        return (placed(rng.standard_normal((self.rows, self.n)).astype(t)),
                rng.standard_normal(self.n).astype(t))

    def check(self, operands, result) -> Optional[str]:
        import numpy as np

        x, w = operands
        x64 = x.astype(np.float64)
        want = x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + EPS) * w
        err = np.abs(np.asarray(result, np.float64) - want).max()
        tol = (1e-5 if self.dtype == "f32" else 1e-12) * max(1.0, float(np.abs(want).max()))
        return None if err <= tol else f"max error {err:.3g} over {tol:.3g}"


def cases(quick: bool = False) -> List[Case]:
    if quick:
        return [Case("rows", 64, 576)]
    return [Case("decode", 1, 576), Case("decode", 16, 4096), Case("prefill", 128, 576),
            Case("prefill", 512, 4096), Case("prefill", 2048, 768),
            Case("prefill", 512, 4096, "f64")]


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    x, w = operands
    if lib == "tilegen":
        import tilegen
        return (lambda: tilegen.rmsnorm(x, w, eps=EPS)), (lambda r: r)
    if lib == "numpy":
        import numpy as np
        return (lambda: x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * w), \
            (lambda r: r)
    if lib == "torch":
        import torch
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        return (lambda: torch.nn.functional.rms_norm(tx, (case.n,), tw, EPS)), \
            (lambda r: r.numpy())
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("rows x n: rows normalised over n values each (576: SmolLM2's hidden size, 4096: "
            "a 7B model's); work = bytes read twice and written once",)
