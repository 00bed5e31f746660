"""The conv2d op's tune plug-in (interface: tilegen/ops/plugins.py): the path each layer class
takes, per layout. A class is a layout (NCHW, NHWC) and a kind: pointwise (1x1 at stride 1),
spatial (larger filters at stride 1), strided, depthwise. The paths (conv.c) trade differently
on different cores -- channel-first bands against cached channels-last rows, the 1x1 kernels
against the GEMM driver, depthwise row tiles against channel tiles -- so each class's
candidates are timed on a representative layer (ResNet's 3x3 and 1x1, the 3-channel stem, a
MobileNet depthwise layer; batch 1). A preferred path is taken where it applies; elsewhere the
built-in order decides.

Then, per layout, the tallest main tile the conv kernels may use (the built-in takes the
tallest registered): fewer accumulators can win on a core with fewer load ports or a smaller L1.

Cache keys: <layout>_<kind>_method (nchw_spatial_method, ...), <layout>_max_mr.
"""
from __future__ import annotations

from typing import Any, List, Mapping

import numpy as np

from tilegen.ops.plugins import Knob, TuneCase

from . import _conv2d
from .api import conv2d, conv_method

LAYOUTS = ("NCHW", "NHWC")
# Per kind: the layer it is timed on (cin, cout, size, kernel, stride, pad, groups), full and
# quick, and the paths worth trying.
LAYERS = {
    "pointwise": ((256, 64, 56, 1, 1, 0, 1), (64, 32, 14, 1, 1, 0, 1)),
    "spatial": ((64, 64, 56, 3, 1, 1, 1), (16, 16, 14, 3, 1, 1, 1)),
    "strided": ((3, 32, 224, 3, 2, 1, 1), (3, 16, 56, 3, 2, 1, 1)),
    "depthwise": ((144, 144, 56, 3, 1, 1, 144), (32, 32, 14, 3, 1, 1, 32)),
}
PATHS = {
    "pointwise": ("direct-nchw", "direct", "gemm", "im2col"),
    "spatial": ("direct-nchw", "direct", "im2col"),
    "strided": ("direct-nchw", "direct", "im2col"),
    "depthwise": ("depthwise-nchw-rows", "depthwise-nchw", "depthwise"),
}
KEYS = {f"{lay.lower()}_{kind}_method": (lay, kind) for lay in LAYOUTS for kind in LAYERS}
MR_KEYS = {f"{lay.lower()}_max_mr": lay for lay in LAYOUTS}


def apply(values: Mapping[str, Any]) -> None:
    unknown = set(values) - set(KEYS) - set(MR_KEYS)
    if unknown:
        raise ValueError(f"conv2d: {sorted(unknown)} not a knob; allowed: "
                         f"{', '.join([*KEYS, *MR_KEYS])}")
    for key, (lay, kind) in KEYS.items():
        value = values.get(key)
        if value is not None and value not in PATHS[kind]:
            raise ValueError(f"conv2d: {key} is {value!r}; allowed: {', '.join(PATHS[kind])}")
        _conv2d.set_preferred(lay, kind, value)
    for key, lay in MR_KEYS.items():
        value = values.get(key)
        if value is not None and value not in _conv2d.tile_heights(lay):
            raise ValueError(f"conv2d: {key} is {value!r}; allowed: "
                             f"{', '.join(map(str, _conv2d.tile_heights(lay)))}")
        _conv2d.set_max_tile_height(lay, value)


def _operands(layout: str, layer, seed: int = 3):
    cin, cout, size, k, stride, pad, groups = layer
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, cin, size, size)).astype(np.float32)
    w = rng.standard_normal((cout, cin // groups, k, k)).astype(np.float32) / k
    b = rng.standard_normal(cout).astype(np.float32)
    if layout == "NHWC":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        w = np.ascontiguousarray(w.transpose(0, 2, 3, 1))
    return x, w, b, dict(stride=stride, padding=pad, groups=groups, layout=layout)


def _case(layout: str, kind: str, quick: bool) -> TuneCase:
    layer = LAYERS[kind][1 if quick else 0]
    cin, cout, size, k, stride, pad, groups = layer
    out = (size + 2 * pad - k) // stride + 1
    flops = 2.0 * cout * out * out * (cin // groups) * k * k

    def make():
        x, w, b, kw = _operands(layout, layer)
        return lambda: conv2d(x, w, b, **kw)
    return TuneCase(f"{layout} {kind} {cin}->{cout} {k}x{k} s{stride} @{size}", flops, make)


def _taken(layout: str, kind: str, quick: bool) -> str:
    """The path the class's layer takes under the preference in force."""
    cin, cout, size, k, stride, pad, groups = LAYERS[kind][1 if quick else 0]
    w_shape = (cout, cin // groups, k, k) if layout == "NCHW" else (cout, k, k, cin // groups)
    return conv_method(w_shape, stride=stride, padding=pad, groups=groups, layout=layout)[0]


def _paths(layout: str, kind: str, quick: bool) -> List[str]:
    """The paths the class's layer really takes when preferred, other than the built-in one (a
    preference that does not apply falls back to another path: timing it would add noise)."""
    builtin, out = _taken(layout, kind, quick), []
    for path in PATHS[kind]:
        _conv2d.set_preferred(layout, kind, path)
        if _taken(layout, kind, quick) == path and path != builtin:
            out.append(path)
        _conv2d.set_preferred(layout, kind, None)
    return out


def knobs(quick: bool) -> List[Knob]:
    out = []
    for lay in LAYOUTS:
        for kind in LAYERS:
            key = f"{lay.lower()}_{kind}_method"
            paths = _paths(lay, kind, quick)
            builtin = _taken(lay, kind, quick)
            out.append(Knob(key, f"{lay} {kind} path", lambda chosen, p=paths: p,
                            lambda v, lay=lay, kind=kind: _conv2d.set_preferred(lay, kind, v),
                            [_case(lay, kind, quick)], builtin_label=f"{builtin} (built-in)"))
    for lay in LAYOUTS:
        heights = _conv2d.tile_heights(lay)
        out.append(Knob(f"{lay.lower()}_max_mr", f"{lay} main tile height",
                        lambda chosen, h=heights: [m for m in h[1:] if m > 1],
                        lambda v, lay=lay: _conv2d.set_max_tile_height(lay, v),
                        [_case(lay, "spatial", quick), _case(lay, "pointwise", quick)],
                        builtin_label=f"{heights[0] if heights else '-'} (built-in)"))
    return out


def check() -> None:
    """Each class's layer (a smaller one) under the paths in force gives the plain path's
    answer."""
    for lay in LAYOUTS:
        for kind, (_, quick_layer) in LAYERS.items():
            x, w, b, kw = _operands(lay, quick_layer, seed=8)
            got = conv2d(x, w, b, **kw)
            _conv2d.force_method("plain")
            try:
                want = conv2d(x, w, b, **kw)
            finally:
                _conv2d.force_method(None)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                raise RuntimeError(f"conv2d: the tuned {lay} {kind} path gives wrong results; "
                                   "not stored")
