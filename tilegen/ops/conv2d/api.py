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

from tilegen import _memory, _out
from . import _conv2d as _conv

ACTIVATIONS = {None: 0, "relu": 1, "relu6": 2, "gelu": 3, "silu": 4}
LAYOUTS = ("NCHW", "NHWC")
# torch.nn.Conv2d's padding_mode values -> np.pad's mode ("zeros" is the C core's own padding).
PADDING_MODES = {"zeros": None, "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
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


def _layout(layout) -> None:
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(f"layout: {layout!r} is not supported; allowed: 'NCHW', 'NHWC'")


def _weight4(weight, like: Optional[np.dtype], layout: str, dims: dict):
    """The checked 4-D weight array and its (first, channel, kH, kW) sizes: channel-first
    layouts keep the kernel's spatial dimensions last, channels-last put them second.
    `dims` names the layout's dimensions for the error message."""
    w = _array("weight", weight, like)
    if w.ndim != 4:
        raise ValueError(f"weight: expected 4 dimensions {dims[layout]}, got {w.ndim}")
    if min(w.shape) < 1:
        raise ValueError(f"weight: every dimension must be >= 1, got shape {w.shape}")
    a, b, c, d = w.shape
    return w, ((a, b, c, d) if layout == "NCHW" else (a, d, b, c))


class _Geometry:
    """A checked convolution: weights, bias, and the tuple the C core takes."""

    def __init__(self, weight, bias, stride, padding, dilation, groups, layout, activation,
                 weight_like: Optional[np.dtype] = None, padding_mode: str = "zeros"):
        if not isinstance(padding_mode, str) or padding_mode not in PADDING_MODES:
            raise ValueError(f"padding_mode: {padding_mode!r} is not supported; allowed: "
                             "'zeros', 'reflect', 'replicate', 'circular'")
        self.padding_mode = padding_mode
        _layout(layout)
        if not (activation is None or (isinstance(activation, str) and activation in ACTIVATIONS)):
            raise ValueError(f"activation: {activation!r} is not supported; allowed: None, "
                             "'relu', 'relu6', 'gelu', 'silu'")
        w, (cout, cg, kh, kw) = _weight4(weight, weight_like, layout, _WEIGHT_DIMS)
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
        # Other modes pad x here (prepare) and run the C core without padding.
        pt, pl, pb, pr = self.pads if padding_mode == "zeros" else (0, 0, 0, 0)
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
        if self.padding_mode != "zeros" and any(self.pads):
            x = self._pad(x, h, w)
        return np.ascontiguousarray(x), shape, unbatched

    def _pad(self, x, h, w):
        """x padded as torch.nn.Conv2d(padding_mode=...) pads it (F.pad's reflect, replicate,
        circular), with torch's limits: reflect needs each side < the input's extent, circular
        <= it."""
        pt, pl, pb, pr = self.pads
        mode = self.padding_mode
        limit = {"reflect": (lambda p, n: p < n), "circular": (lambda p, n: p <= n)}.get(mode)
        if limit and not all(limit(p, n) for p, n in ((pt, h), (pb, h), (pl, w), (pr, w))):
            rule = "smaller than" if mode == "reflect" else "at most"
            raise ValueError(f"padding: {(pt, pb, pl, pr)} (top, bottom, left, right) with "
                             f"padding_mode={mode!r} must be {rule} the input's size {h}x{w} "
                             "on each side")
        widths = [(0, 0)] * 4
        hw_axes = (2, 3) if self.layout == "NCHW" else (1, 2)
        widths[hw_axes[0]], widths[hw_axes[1]] = (pt, pb), (pl, pr)
        return np.pad(x, widths, mode=PADDING_MODES[mode])

    def result(self, x, shape, unbatched, out, inputs) -> np.ndarray:
        """Where the C core writes: a new array, or `out` (checked; an unbatched x takes an
        out of the unbatched shape), or a temporary when `out` overlaps an input."""
        if out is None:
            return self.output(x, shape)
        _out.check(out, shape[1:] if unbatched else shape, x.dtype, contiguous=True)
        return _out.target(out.reshape(shape), inputs)


def conv2d(x, weight, bias=None, stride: IntPair = 1, padding: Padding = 0,
           dilation: IntPair = 1, groups: int = 1, *, layout: str = "NCHW",
           activation: Optional[str] = None, padding_mode: str = "zeros",
           out: Optional[np.ndarray] = None) -> np.ndarray:
    """torch.nn.functional.conv2d on NumPy arrays, with a fused activation.

    layout="NCHW": x (N, C, H, W) or (C, H, W), weight OIHW (out, in/groups, kH, kW), result
    NCHW; layout="NHWC": x (N, H, W, C) or (H, W, C), weight OHWI (out, kH, kW, in/groups),
    result NHWC. padding: an int, a pair (h, w), four values (top, bottom, left, right) (as
    F.pad(x, (left, right, top, bottom)) then padding=0), "same" (stride 1; even filters get the
    extra pixel after, as torch pads) or "valid". padding_mode: what the padding holds, as
    torch.nn.Conv2d(padding_mode=...): "zeros", "reflect" (each side < the input's size),
    "replicate" or "circular" (each side <= the input's size). activation: None, "relu", "relu6",
    "gelu", "silu", applied after the bias. float32 and float64; the result has the input's
    dtype. bias is cast to the weight's dtype (NumPy's float64 np.zeros(n) with float32 weights,
    say); nested lists take the dtype of the array they go with (x and bias the weight's,
    weight x's). out: a C-contiguous array of the result's shape and dtype to write into
    (returned); it may overlap x.
    """
    like = x.dtype if isinstance(x, np.ndarray) and x.dtype in DTYPES else None
    geom = _Geometry(weight, bias, stride, padding, dilation, groups, layout, activation, like,
                     padding_mode)
    xc, shape, unbatched = geom.prepare(x)
    y = geom.result(xc, shape, unbatched, out, (x, xc, geom.weight, geom.bias))
    if y.size:
        _conv.conv2d(xc, geom.weight, geom.bias, y, geom.tuple)
    if out is not None:
        _out.finish(out.reshape(shape), y)
        return out
    return y[0] if unbatched else y


class Conv2d:
    """A convolution with fixed weights: packs them once, for the kernels this CPU runs.

        conv = tg.Conv2d(weight, bias, stride=1, padding=1, layout="NHWC", activation="relu")
        y = conv(x)          # == tg.conv2d(x, weight, bias, 1, 1, layout="NHWC", activation="relu")

    padding_mode as tg.conv2d's (torch.nn.Conv2d's). `conv(x, out=y)` writes into y as
    tg.conv2d's out= does. The packed form is the C API's tilegen_conv2d_f32_pack (float32);
    float64 weights are kept as given and run on the plain path. Calls may come from several
    threads at once. The repr's keywords (stride= onwards) are accepted back by the
    constructor: padding shows as (h, w), or (top, bottom, left, right) when the sides differ
    ("same" with an even filter).
    """

    def __init__(self, weight, bias=None, stride: IntPair = 1, padding: Padding = 0,
                 dilation: IntPair = 1, groups: int = 1, *, layout: str = "NCHW",
                 activation: Optional[str] = None, padding_mode: str = "zeros") -> None:
        self._geom = _Geometry(weight, bias, stride, padding, dilation, groups, layout,
                               activation, padding_mode=padding_mode)
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

    def __call__(self, x, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        g = self._geom
        xc, shape, unbatched = g.prepare(x)
        y = g.result(xc, shape, unbatched, out, (x, xc, g.weight, g.bias))
        if y.size:
            if self._plan is not None:
                self._plan.run(xc, y)
            else:
                _conv.conv2d(xc, g.weight, g.bias, y, g.tuple)
        if out is not None:
            _out.finish(out.reshape(shape), y)
            return out
        return y[0] if unbatched else y

    def __repr__(self) -> str:
        g = self._geom
        return (f"Conv2d({g.cin}, {g.cout}, kernel=({g.kh}, {g.kw}), stride={g.stride}, "
                f"padding={g.padding}, dilation={g.dilation}, groups={g.groups}, "
                f"layout={g.layout!r}, activation={g.activation!r}"
                + (f", padding_mode={g.padding_mode!r})" if g.padding_mode != "zeros" else ")"))


def conv_method(weight_shape, stride=1, padding=0, dilation=1, groups=1, *, layout="NCHW"):
    """(path, kernel) a float32 convolution of these weights takes on this machine."""
    g = _Geometry(np.empty(weight_shape, np.float32), None, stride, padding, dilation, groups,
                  layout, None)
    return _conv.method(g.tuple)


# Weight shapes of the transposed convolution by layout: torch's for NCHW; for NHWC the same
# transpose(0, 2, 3, 1) that turns conv2d's OIHW into OHWI.
_TWEIGHT_DIMS = {"NCHW": "(in_channels, out_channels/groups, kH, kW) (IOHW, torch's)",
                 "NHWC": "(in_channels, kH, kW, out_channels/groups) (IHWO)"}


class _TGeometry:
    """A checked transposed convolution: weights, bias and the C core's tuple."""

    def __init__(self, weight, bias, stride, padding, output_padding, groups, dilation, layout,
                 weight_like: Optional[np.dtype] = None):
        _layout(layout)
        w, (cin, kg, kh, kw) = _weight4(weight, weight_like, layout, _TWEIGHT_DIMS)
        self.groups = _int("groups", groups, 1)
        if cin % self.groups:
            raise ValueError(f"groups: {self.groups} does not divide in_channels={cin} "
                             "(weight.shape[0])")
        if isinstance(padding, str):
            raise ValueError(f"padding: {padding!r} is not supported by conv_transpose2d; "
                             "allowed: an int or a pair (h, w), as torch")
        self.stride = _pair("stride", stride, 1, MAX_EXTENT)
        self.padding = _pair("padding", padding, 0, MAX_EXTENT)
        self.dilation = _pair("dilation", dilation, 1, MAX_EXTENT)
        self.output_padding = _pair("output_padding", output_padding, 0, MAX_EXTENT)
        for op, s, d in zip(self.output_padding, self.stride, self.dilation):
            if op >= s and op >= d:
                raise ValueError(f"output_padding: {self.output_padding} must be smaller than "
                                 f"either stride {self.stride} or dilation {self.dilation}")
        cout = kg * self.groups
        if bias is not None:
            bias = _bias(bias, w.dtype)
            if bias.shape != (cout,):
                raise ValueError(f"bias: expected shape ({cout},) (out_channels), got "
                                 f"{bias.shape}")
            bias = np.ascontiguousarray(bias)
        self.weight = np.ascontiguousarray(w)
        self.bias = bias
        self.layout = layout
        self.cin, self.cout, self.kh, self.kw = cin, cout, kh, kw
        self.tuple = (LAYOUTS.index(layout), cin, cout, kh, kw, *self.stride, *self.padding,
                      *self.output_padding, *self.dilation, self.groups)

    def prepare(self, x):
        """(x as a C-contiguous 4-D array, output shape, whether x had no batch dimension)."""
        x = _array("x", x, self.weight.dtype)
        if x.dtype != self.weight.dtype:
            wdt = self.weight.dtype
            raise TypeError(f"x: dtype {x.dtype} differs from weight's {wdt}; convert one of "
                            f"them, e.g. x.astype(np.{wdt})")
        if x.ndim not in (3, 4):
            dims = "(N, C, H, W) or (C, H, W)" if self.layout == "NCHW" else \
                   "(N, H, W, C) or (H, W, C)"
            raise ValueError(f"x: expected 4 dimensions {dims}, got {x.ndim}")
        unbatched = x.ndim == 3
        if unbatched:
            x = x[None]
        n, c, h, w = x.shape if self.layout == "NCHW" else np.take(x.shape, (0, 3, 1, 2))
        if c != self.cin:
            raise ValueError(f"x: has {c} channels, but weight expects in_channels = {self.cin} "
                             f"(weight.shape[0]; layout={self.layout!r} takes weights "
                             f"{_TWEIGHT_DIMS[self.layout]})")
        if h < 1 or w < 1:
            raise ValueError(f"x: spatial size {h}x{w} is empty")
        (sh, sw), (ph, pw) = self.stride, self.padding
        (oph, opw), (dh, dw) = self.output_padding, self.dilation
        oh = (h - 1) * sh - 2 * ph + dh * (self.kh - 1) + oph + 1
        ow = (w - 1) * sw - 2 * pw + dw * (self.kw - 1) + opw + 1
        if oh < 1 or ow < 1:
            raise ValueError(f"padding: {self.padding} leaves an empty output ({oh}x{ow}) for "
                             f"the input {h}x{w}")
        shape = (n, self.cout, oh, ow) if self.layout == "NCHW" else (n, oh, ow, self.cout)
        return np.ascontiguousarray(x), tuple(int(v) for v in shape), unbatched

    def run(self, x, out, inputs):
        xc, shape, unbatched = self.prepare(x)
        if out is None:
            y = _memory.empty_aligned(shape, xc.dtype)
        else:
            _out.check(out, shape[1:] if unbatched else shape, xc.dtype, contiguous=True)
            y = _out.target(out.reshape(shape), (x, xc) + inputs)
        if y.size:
            _conv.conv_transpose2d(xc, self.weight, self.bias, y, self.tuple)
        if out is not None:
            _out.finish(out.reshape(shape), y)
            return out
        return y[0] if unbatched else y


def conv_transpose2d(x, weight, bias=None, stride: IntPair = 1, padding: IntPair = 0,
                     output_padding: IntPair = 0, groups: int = 1, dilation: IntPair = 1, *,
                     layout: str = "NCHW", out: Optional[np.ndarray] = None) -> np.ndarray:
    """torch.nn.functional.conv_transpose2d on NumPy arrays (the arguments in torch's order).

    layout="NCHW": x (N, C_in, H, W) or (C_in, H, W), weight (C_in, C_out/groups, kH, kW)
    (torch's), result NCHW; layout="NHWC": x (N, H, W, C_in) or (H, W, C_in), weight
    (C_in, kH, kW, C_out/groups) (torch's weight.permute(0, 2, 3, 1): the same transpose that
    turns conv2d's OIHW into OHWI), result NHWC. The output is H_out = (H - 1)*stride -
    2*padding + dilation*(kH - 1) + output_padding + 1 (likewise W); output_padding must be
    smaller than the stride or the dilation. float32 and float64. out: as tg.conv2d's.
    Runs as one GEMM (tilegen's) per image and group and a threaded col2im.
    """
    like = x.dtype if isinstance(x, np.ndarray) and x.dtype in DTYPES else None
    g = _TGeometry(weight, bias, stride, padding, output_padding, groups, dilation, layout, like)
    return g.run(x, out, (g.weight, g.bias))


class ConvTranspose2d:
    """A transposed convolution with fixed weights (checked once):

        up = tg.ConvTranspose2d(weight, bias, stride=2, padding=1, layout="NHWC")
        y = up(x)        # == tg.conv_transpose2d(x, weight, bias, 2, 1, layout="NHWC")
    """

    def __init__(self, weight, bias=None, stride: IntPair = 1, padding: IntPair = 0,
                 output_padding: IntPair = 0, groups: int = 1, dilation: IntPair = 1, *,
                 layout: str = "NCHW") -> None:
        self._geom = _TGeometry(weight, bias, stride, padding, output_padding, groups, dilation,
                                layout)

    @property
    def weight(self) -> np.ndarray:
        return self._geom.weight

    @property
    def bias(self) -> Optional[np.ndarray]:
        return self._geom.bias

    @property
    def layout(self) -> str:
        return self._geom.layout

    def __call__(self, x, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        return self._geom.run(x, out, (self._geom.weight, self._geom.bias))

    def __repr__(self) -> str:
        g = self._geom
        return (f"ConvTranspose2d({g.cin}, {g.cout}, kernel=({g.kh}, {g.kw}), stride={g.stride}, "
                f"padding={g.padding}, output_padding={g.output_padding}, groups={g.groups}, "
                f"dilation={g.dilation}, layout={g.layout!r})")
