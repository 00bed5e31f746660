"""The image op's tune plug-in (interface: tilegen/ops/plugins.py): which ISA's kernel set the
filters run. The widest vectors are not always the fastest for 8-bit passes (a core that splits
512-bit operations in two gains little from AVX-512 on narrow integers and pays its masks), so
every usable ISA with a complete set is timed on a photo-sized uint8 Gaussian, box blur and
unsharp mask and a float32 filter2d.

Cache key: isa.
"""
from __future__ import annotations

from typing import Any, List, Mapping

import numpy as np

from tilegen.ops.plugins import Knob, TuneCase

from . import _image


def apply(values: Mapping[str, Any]) -> None:
    unknown = set(values) - {"isa"}
    if unknown:
        raise ValueError(f"image: {sorted(unknown)} not a knob; allowed: isa")
    _image.set_kernel_isa(values.get("isa"))


def _case(what: str, dtype, h: int, w: int, c: int, ksize: int) -> TuneCase:
    pixels = h * w * c

    def make():
        rng = np.random.default_rng(1)
        img = rng.integers(0, 256, (h, w, c)).astype(dtype) if dtype == np.uint8 else \
            rng.random((h, w, c), dtype=np.float32)
        kernel = rng.random((ksize, ksize), dtype=np.float32) / ksize ** 2
        call = {"gaussian": lambda: _image.gaussian_blur(img, ksize, 1.1),
                "box": lambda: _image.box_blur(img, ksize),
                "unsharp": lambda: _image.unsharp_mask(img, ksize, 1.0, 1.0),
                "filter2d": lambda: _image.filter2d(img, kernel)}[what]
        return call
    name = "u8" if dtype == np.uint8 else "f32"
    # The rate is pixels (channel values) per second, in G.
    return TuneCase(f"{what} {ksize}x{ksize} {name} {h}x{w}x{c}", pixels, make, unit="Gpx/s")


def knobs(quick: bool) -> List[Knob]:
    isas = _image.kernel_isas()
    h, w = (240, 320) if quick else (1080, 1920)
    cases = [_case("gaussian", np.uint8, h, w, 3, 5), _case("box", np.uint8, h, w, 3, 5)]
    if not quick:
        cases += [_case("unsharp", np.uint8, h, w, 3, 5),
                  _case("filter2d", np.float32, h, w, 1, 3)]
    return [Knob("isa", "kernel set", lambda chosen: isas[1:], _image.set_kernel_isa, cases,
                 builtin_label=f"{isas[0]} (built-in)" if isas else None)]


def check() -> None:
    """The set in force gives the portable set's answer (uint8 bit for bit)."""
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, (37, 53, 3)).astype(np.uint8)
    chosen = _image.kernel_names()["hfilt"]
    got = [_image.gaussian_blur(img, 5, 1.1), _image.box_blur(img, 7), _image.unsharp_mask(img)]
    isas = _image.kernel_isas()
    current = chosen.rsplit("__", 1)[1]
    _image.set_kernel_isa(isas[-1])  # the portable set
    try:
        want = [_image.gaussian_blur(img, 5, 1.1), _image.box_blur(img, 7),
                _image.unsharp_mask(img)]
    finally:
        _image.set_kernel_isa(current)
    if any(not np.array_equal(g, w) for g, w in zip(got, want)):
        raise RuntimeError(f"the tuned {current} filters disagree with the portable ones; "
                           "not stored")
