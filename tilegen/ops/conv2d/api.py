"""tg.conv2d and tg.Conv2d: torch.nn.functional.conv2d's semantics on NumPy arrays.

Everything is checked here, before any C runs: ranks, channel counts, groups, stride, padding,
dilation, the filter against the padded input, dtypes and the activation; errors are
ValueError (values, shapes) or TypeError (types) naming the argument. The C core gets
C-contiguous arrays in the layout's order (a non-contiguous input is copied once).
"""
from __future__ import annotations

import math
import numbers
import sys
from typing import Optional, Tuple, Union

import numpy as np

from tilegen import _memory
from . import _conv2d as _conv

ACTIVATIONS = {None: 0, "relu": 1, "relu6": 2, "gelu": 3, "silu": 4}
LAYOUTS = ("NCHW", "NHWC")
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Weight shapes by layout, for the messages.
_WEIGHT_DIMS = {"NCHW": "(out_channels, in_channels/groups, kH, kW) (OIHW)",
                "NHWC": "(out_channels, kH, kW, in_channels/groups) (OHWI)"}

IntPair = Union[int, Tuple[int, int]]
# padding: an int, (h, w), (top, bottom, left, right), "same" or "valid".
Padding = Union[int, Tuple[int, int], Tuple[int, int, int, int], str]
# Paddings and dilations beyond any image the C API takes (its h, w <= 2**28).
MAX_EXTENT = 1 << 28


def _int(name: str, v, minimum: int, maximum: int = sys.maxsize) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(v).__name__}")
    v = int(v)
    if v < minimum:
        what = "non-negative" if minimum == 0 else f">= {minimum}"
        raise ValueError(f"{name}: must be {what}, got {v}")
    if v > maximum:
        raise ValueError(f"{name}: must be at most {maximum}, got {v}")
    return v


def _pair(name: str, v, minimum: int, maximum: int = sys.maxsize) -> Tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{name}: expected an int or a pair, got {len(v)} values")
        return _int(name, v[0], minimum, maximum), _int(name, v[1], minimum, maximum)
    v = _int(name, v, minimum, maximum)
    return v, v


def _array(name: str, a, like: Optional[np.dtype] = None) -> np.ndarray:
    """An operand as an ndarray of float32 or float64. A Python sequence (list, tuple: numbers
    without a dtype of their own) takes `like`, the dtype of the array it goes with (float64,
    NumPy's, when there is none); an ndarray or an object with its own dtype (a torch tensor)
    keeps it."""
    if not isinstance(a, np.ndarray):
        if not (hasattr(a, "__array__") or isinstance(a, (list, tuple))):
            raise TypeError(f"{name}: expected a NumPy array (or a nested list of numbers), got "
                            f"{type(a).__name__}")
        plain = isinstance(a, (list, tuple))
        try:
            a = np.asarray(a, dtype=(like or np.float64) if plain else None)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name}: cannot be read as an array of numbers ({e})") from None
    if a.dtype not in DTYPES:
        hint = ""
        if a.dtype.kind in "iuf":
            hint = f" (convert it: {name}.astype(np.float32))"
        raise TypeError(f"{name}: dtype {a.dtype} is not supported; allowed: float32, "
                        f"float64{hint}")
    return a


def _bias(bias, dtype: np.dtype) -> np.ndarray:
    """bias in the weight's dtype: a float64 bias (NumPy's default, e.g. np.zeros(n)) with
    float32 weights is cast, as is an integer one; one value per output channel, it is added
    once, so casting it rounds no more than the result is rounded."""
    if isinstance(bias, (list, tuple)):
        return _array("bias", bias, dtype)
    b = np.asarray(bias) if hasattr(bias, "__array__") else bias
    if not isinstance(b, np.ndarray):
        raise TypeError(f"bias: expected a NumPy array (or a list of numbers), got "
                        f"{type(bias).__name__}")
    if b.dtype.kind not in "iuf":
        raise TypeError(f"bias: dtype {b.dtype} is not supported; allowed: real numbers "
                        f"(cast to weight's {dtype})")
    return b.astype(dtype, copy=False)


def _padding(padding, k: Tuple[int, int], d: Tuple[int, int], s: Tuple[int, int]):
    """(top, left, bottom, right), the C API's order, from an int, a pair (h, w), a 4-tuple
    (top, bottom, left, right) (each dimension's pair split into before and after, H first;
    torch.nn.functional.pad's order is the reverse, (left, right, top, bottom)), or torch's
    "same" (the odd pixel after) and "valid"."""
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0, 0, 0
        if padding == "same":
            if s != (1, 1):
                raise ValueError("padding: 'same' is not supported for strided convolutions "
                                 f"(stride={s})")
            th, tw = d[0] * (k[0] - 1), d[1] * (k[1] - 1)
            return th // 2, tw // 2, th - th // 2, tw - tw // 2
        raise ValueError(f"padding: {padding!r} is not supported; allowed: an int, a pair, "
                         "4 values (top, bottom, left, right), 'same', 'valid'")
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        pt, pb, pl, pr = (_int("padding", v, 0, MAX_EXTENT) for v in padding)
        return pt, pl, pb, pr
    if isinstance(padding, (tuple, list)) and len(padding) != 2:
        raise ValueError(f"padding: expected an int, a pair (h, w) or 4 values (top, bottom, "
                         f"left, right), got {len(padding)} values")
    ph, pw = _pair("padding", padding, 0, MAX_EXTENT)
    return ph, pw, ph, pw


class _Geometry:
    """A checked convolution: weights, bias, and the tuple the C core takes."""

    def __init__(self, weight, bias, stride, padding, dilation, groups, layout, activation,
                 weight_like: Optional[np.dtype] = None):
        if not isinstance(layout, str) or layout not in LAYOUTS:
            raise ValueError(f"layout: {layout!r} is not supported; allowed: 'NCHW', 'NHWC'")
        if not (activation is None or (isinstance(activation, str) and activation in ACTIVATIONS)):
            raise ValueError(f"activation: {activation!r} is not supported; allowed: None, "
                             "'relu', 'relu6', 'gelu', 'silu'")
        w = _array("weight", weight, weight_like)
        if w.ndim != 4:
            raise ValueError(f"weight: expected 4 dimensions {_WEIGHT_DIMS[layout]}, "
                             f"got {w.ndim}")
        if layout == "NCHW":
            cout, cg, kh, kw = w.shape
        else:
            cout, kh, kw, cg = w.shape
        if min(w.shape) < 1:
            raise ValueError(f"weight: every dimension must be >= 1, got shape {w.shape}")
        self.groups = _int("groups", groups, 1)
        if cout % self.groups:
            raise ValueError(f"groups: {self.groups} does not divide out_channels={cout} "
                             "(weight.shape[0])")
        self.stride = _pair("stride", stride, 1)
        self.dilation = _pair("dilation", dilation, 1, MAX_EXTENT)
        self.pads = _padding(padding, (kh, kw), self.dilation, self.stride)  # C order: t, l, b, r
        if bias is not None:
            bias = _bias(bias, w.dtype)
            if bias.shape != (cout,):
                raise ValueError(f"bias: expected shape ({cout},) (out_channels), got "
                                 f"{bias.shape}")
            bias = np.ascontiguousarray(bias)
        self.weight = np.ascontiguousarray(w)
        self.bias = bias
        self.layout = layout
        self.activation = activation
        self.cin = cg * self.groups
        self.cout, self.kh, self.kw = cout, kh, kw
        pt, pl, pb, pr = self.pads
        self.tuple = (LAYOUTS.index(layout), self.cin, cout, kh, kw, *self.stride, pt, pl, pb, pr,
                      *self.dilation, self.groups, ACTIVATIONS[activation])

    @property
    def padding(self):
        """The padding as conv2d takes it: (h, w) when symmetric, else (top, bottom, left,
        right)."""
        pt, pl, pb, pr = self.pads
        return (pt, pl) if (pt, pl) == (pb, pr) else (pt, pb, pl, pr)

    def _layout_hint(self, xshape) -> str:
        """What to say when the channels differ: the weight layout this layout takes, and the
        transpose that fixes weights in the other layout's order, or the input's."""
        w = self.weight.shape
        if self.layout == "NHWC":
            text = (f"; layout='NHWC' takes x (N, H, W, C) and weights {_WEIGHT_DIMS['NHWC']}")
            if w[1] * self.groups == xshape[3]:
                text += ": OIHW weights become OHWI with weight.transpose(0, 2, 3, 1)"
            elif w[3] * self.groups == xshape[1]:
                text += (": for NCHW input, pass layout='NCHW' with OIHW weights, or "
                         "x.transpose(0, 2, 3, 1)")
            return text
        text = f"; layout='NCHW' takes x (N, C, H, W) and weights {_WEIGHT_DIMS['NCHW']}"
        if w[3] * self.groups == xshape[1]:
            text += ": OHWI weights become OIHW with weight.transpose(0, 3, 1, 2)"
        elif w[1] * self.groups == xshape[3]:
            text += (": for channels-last (NHWC) input, pass layout='NHWC' (with OHWI weights), "
                     "or x.transpose(0, 3, 1, 2)")
        return text

    def output(self, x, shape) -> np.ndarray:
        """The uninitialised result for x: on a cache line, or where x starts in its line
        for depthwise NHWC (whose driver aligns its channel vectors to x's lines)."""
        depthwise_nhwc = self.layout == "NHWC" and self.groups == self.cin == self.cout
        nbytes = math.prod(shape) * x.dtype.itemsize
        # Named after what made it so large: the padding, when there is one.
        pt, pl, pb, pr = self.pads
        culprit = (f"padding: {(pt, pb, pl, pr)} (top, bottom, left, right) makes"
                   if any(self.pads)
                   else "x: makes")
        if nbytes > sys.maxsize:
            raise ValueError(f"{culprit} the output {shape}, {nbytes:.3g} bytes: more than "
                             f"any array can hold")
        try:
            return _memory.empty_aligned(shape, x.dtype, like=x if depthwise_nhwc else None)
        except MemoryError:
            raise MemoryError(f"{culprit} the output {shape}, {nbytes / 2**30:.3g} GiB: more "
                              f"than can be allocated") from None

    def prepare(self, x):
        """(x as a C-contiguous 4-D array, output shape, whether x had no batch dimension)."""
        x = _array("x", x, self.weight.dtype)
        if x.dtype != self.weight.dtype:
            wdt = self.weight.dtype
            raise TypeError(f"x: dtype {x.dtype} differs from weight's {wdt}; convert one of "
                            f"them, e.g. x.astype(np.{wdt})")
        unbatched = x.ndim == 3
        if x.ndim not in (3, 4):
            dims = "(N, C, H, W) or (C, H, W)" if self.layout == "NCHW" else \
                   "(N, H, W, C) or (H, W, C)"
            raise ValueError(f"x: expected 4 dimensions {dims}, got {x.ndim}")
        if unbatched:
            x = x[None]
        if self.layout == "NCHW":
            n, c, h, w = x.shape
        else:
            n, h, w, c = x.shape
        if c != self.cin:
            raise ValueError(
                f"x: has {c} channels, but weight expects in_channels = "
                f"{self.cin // self.groups} x groups {self.groups} = {self.cin}"
                + self._layout_hint(x.shape))
        if h < 1 or w < 1:
            raise ValueError(f"x: spatial size {h}x{w} is empty")
        pt, pl, pb, pr = self.pads
        sh, sw = self.stride
        dh, dw = self.dilation
        eh, ew = dh * (self.kh - 1) + 1, dw * (self.kw - 1) + 1
        if eh > h + pt + pb or ew > w + pl + pr:
            raise ValueError(
                f"weight: the (dilated) filter {eh}x{ew} is larger than the padded input "
                f"{h + pt + pb}x{w + pl + pr}")
        oh, ow = (h + pt + pb - eh) // sh + 1, (w + pl + pr - ew) // sw + 1
        shape = (n, self.cout, oh, ow) if self.layout == "NCHW" else (n, oh, ow, self.cout)
        return np.ascontiguousarray(x), shape, unbatched


def conv2d(x, weight, bias=None, stride: IntPair = 1, padding: Padding = 0,
           dilation: IntPair = 1, groups: int = 1, *, layout: str = "NCHW",
           activation: Optional[str] = None) -> np.ndarray:
    """torch.nn.functional.conv2d on NumPy arrays, with a fused activation.

    layout="NCHW": x (N, C, H, W) or (C, H, W), weight OIHW (out, in/groups, kH, kW), result
    NCHW; layout="NHWC": x (N, H, W, C) or (H, W, C), weight OHWI (out, kH, kW, in/groups),
    result NHWC. padding: an int, a pair (h, w), four values (top, bottom, left, right) (as
    F.pad(x, (left, right, top, bottom)) then padding=0), "same" (stride 1; even filters get the
    extra pixel after, as torch pads) or "valid". activation: None, "relu", "relu6", "gelu", "silu",
    applied after the bias. float32 and float64; the result has the input's dtype. bias is
    cast to the weight's dtype (NumPy's float64 np.zeros(n) with float32 weights, say); nested
    lists take the dtype of the array they go with (x and bias the weight's, weight x's).
    """
    like = x.dtype if isinstance(x, np.ndarray) and x.dtype in DTYPES else None
    geom = _Geometry(weight, bias, stride, padding, dilation, groups, layout, activation, like)
    xc, shape, unbatched = geom.prepare(x)
    y = geom.output(xc, shape)
    if y.size:
        _conv.conv2d(xc, geom.weight, geom.bias, y, geom.tuple)
    return y[0] if unbatched else y


class Conv2d:
    """A convolution with fixed weights: packs them once, for the kernels this CPU runs.

        conv = tg.Conv2d(weight, bias, stride=1, padding=1, layout="NHWC", activation="relu")
        y = conv(x)          # == tg.conv2d(x, weight, bias, 1, 1, layout="NHWC", activation="relu")

    The packed form is the C API's tilegen_conv2d_f32_pack (float32); float64 weights are kept
    as given and run on the plain path. Calls may come from several threads at once. The repr's
    keywords (stride= onwards) are accepted back by the constructor: padding shows as (h, w),
    or (top, bottom, left, right) when the sides differ ("same" with an even filter).
    """

    def __init__(self, weight, bias=None, stride: IntPair = 1, padding: Padding = 0,
                 dilation: IntPair = 1, groups: int = 1, *, layout: str = "NCHW",
                 activation: Optional[str] = None) -> None:
        self._geom = _Geometry(weight, bias, stride, padding, dilation, groups, layout,
                               activation)
        g = self._geom
        self._plan = _conv.Plan(g.weight, g.bias, g.tuple) if g.weight.dtype == np.float32 \
            else None

    @property
    def weight(self) -> np.ndarray:
        return self._geom.weight

    @property
    def bias(self) -> Optional[np.ndarray]:
        return self._geom.bias

    @property
    def layout(self) -> str:
        return self._geom.layout

    @property
    def method(self) -> Tuple[str, Optional[str]]:
        """(path, kernel): how calls run ('gemm', 'direct', 'im2col', 'depthwise', 'plain')."""
        return self._plan.method if self._plan is not None else ("plain", None)

    def __call__(self, x) -> np.ndarray:
        g = self._geom
        xc, shape, unbatched = g.prepare(x)
        y = g.output(xc, shape)
        if y.size:
            if self._plan is not None:
                self._plan.run(xc, y)
            else:
                _conv.conv2d(xc, g.weight, g.bias, y, g.tuple)
        return y[0] if unbatched else y

    def __repr__(self) -> str:
        g = self._geom
        return (f"Conv2d({g.cin}, {g.cout}, kernel=({g.kh}, {g.kw}), stride={g.stride}, "
                f"padding={g.padding}, dilation={g.dilation}, groups={g.groups}, "
                f"layout={g.layout!r}, activation={g.activation!r})")


def conv_method(weight_shape, stride=1, padding=0, dilation=1, groups=1, *, layout="NCHW"):
    """(path, kernel) a float32 convolution of these weights takes on this machine."""
    g = _Geometry(np.empty(weight_shape, np.float32), None, stride, padding, dilation, groups,
                  layout, None)
    return _conv.method(g.tuple)
