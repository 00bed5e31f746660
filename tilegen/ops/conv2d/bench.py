"""`tilegen bench --op conv2d`: 2-D convolutions, float32, batch 1, in both layouts, against
torch (NCHW, and channels_last for NHWC) and ONNX Runtime (NCHW, its only layout).

A case is one layer and one layout. tilegen runs it as `tg.Conv2d` (weights packed once, as a
network does) on arrays in that layout; torch runs F.conv2d on tensors in that memory format.
tilegen's ratio is against the faster torch layout of the same layer (`ratio_cases`): a user
picks the layout, so tilegen NCHW has to beat torch at its best too. The ONNX Runtime session
is a one-node Conv graph, encoded here as protobuf bytes (no `onnx` package needed).

Transposed convolutions (kind "transpose": upsampling layers, tg.ConvTranspose2d against torch's
F.conv_transpose2d, checked against torch's float64 result) run in the same table; their FLOPs
are those of the equivalent direct convolution (2 x C_in x C_out/groups x k^2 per input pixel).
"""
from __future__ import annotations

import math
import struct
from dataclasses import asdict, dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import LINE_OFFSET, case_dict, placed

NAME = "conv2d"
LIBS = ("tilegen", "torch", "onnxruntime")
RATIO_VS = ("torch",)
UNIT, UNIT_SCALE = "GFLOP/s", 1e9
LAYOUTS = ("NCHW", "NHWC")


@dataclass(frozen=True)
class Case:
    """One convolution layer: C_in -> C_out, a k x k filter, on an h x w image, in `layout`."""

    group: str
    name: str            # short layer name for the label
    cin: int
    cout: int
    hw: int              # input height = width
    k: int
    stride: int
    pad: int
    groups: int
    layout: str
    dtype: str = "f32"
    kind: str = "conv"   # or "transpose": conv_transpose2d, weights (C_in, C_out/groups, k, k)

    @property
    def id(self) -> str:
        what = "conv2d" if self.kind == "conv" else "convt2d"
        return (f"{what}-{self.layout}-{self.cin}x{self.hw}-{self.cout}k{self.k}s{self.stride}"
                f"p{self.pad}g{self.groups}")

    @property
    def label(self) -> str:
        return f"{self.name} {self.layout}"

    @property
    def out_hw(self) -> int:
        if self.kind == "transpose":
            return (self.hw - 1) * self.stride - 2 * self.pad + self.k
        return (self.hw + 2 * self.pad - self.k) // self.stride + 1

    @property
    def flops(self) -> int:
        if self.kind == "transpose":
            return 2 * self.cin * self.hw ** 2 * (self.cout // self.groups) * self.k * self.k
        return 2 * self.cout * self.out_hw ** 2 * (self.cin // self.groups) * self.k * self.k

    work = flops
    size = None

    def runs_on(self, lib: str) -> bool:
        return lib != "onnxruntime" or (self.layout == "NCHW" and self.kind == "conv")

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0, offset: int = LINE_OFFSET):
        """(x, weight, bias) in the case's layout (NCHW/OIHW or NHWC/OHWI), U(-1, 1)."""
        import numpy as np

        rng = np.random.default_rng(seed)
        x = rng.uniform(-1, 1, (1, self.cin, self.hw, self.hw)).astype(np.float32)
        wshape = ((self.cout, self.cin // self.groups) if self.kind == "conv"
                  else (self.cin, self.cout // self.groups)) + (self.k, self.k)
        w = rng.uniform(-1, 1, wshape).astype(np.float32)
        b = rng.uniform(-1, 1, self.cout).astype(np.float32)
        if self.layout == "NHWC":
            x, w = x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1)
        return placed(x, offset), placed(w, offset), b

    def nchw(self, operands):
        x, w, b = operands
        if self.layout == "NHWC":
            x, w = x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2)
        return x, w, b

    def check(self, operands, result) -> Optional[str]:
        """None when `result` matches a float64 reference on a few output channels."""
        import numpy as np

        x, w, b = (a.astype(np.float64) for a in self.nchw(operands))
        result = np.asarray(result)
        oh = self.out_hw
        want_shape = (1, self.cout, oh, oh) if self.layout == "NCHW" else (1, oh, oh, self.cout)
        if result.shape != want_shape:
            return f"shape {result.shape}, expected {want_shape}"
        got = result if self.layout == "NCHW" else result.transpose(0, 3, 1, 2)
        if self.kind == "transpose":
            return self._check_transpose(x, w, b, got)
        xp = np.pad(x, ((0, 0), (0, 0), (self.pad, self.pad), (self.pad, self.pad)))
        cg, kg = self.cin // self.groups, self.cout // self.groups
        worst = 0.0
        for co in sorted({0, self.cout // 2, self.cout - 1}):
            gi = co // kg
            acc = np.full((oh, oh), b[co])
            mag = np.full((oh, oh), abs(b[co]))
            for ky in range(self.k):
                for kx in range(self.k):
                    win = xp[0, gi * cg:(gi + 1) * cg, ky:ky + self.stride * oh:self.stride,
                             kx:kx + self.stride * oh:self.stride]
                    acc += np.tensordot(w[co, :, ky, kx], win, axes=1)
                    mag += np.tensordot(np.abs(w[co, :, ky, kx]), np.abs(win), axes=1)
            tol = 1e-5 * math.sqrt(cg * self.k * self.k) * (mag + 1)
            err = np.abs(got[0, co] - acc)
            if (err > tol).any():
                return f"output channel {co}: max error {err.max():.3g} (tol {tol.max():.3g})"
            worst = max(worst, float(err.max()))
        return None

    def _check_transpose(self, x, w, b, got) -> Optional[str]:
        """Against torch's F.conv_transpose2d in float64."""
        import numpy as np
        import torch

        t = torch.from_numpy
        F = torch.nn.functional
        args = (self.stride, self.pad, 0, self.groups)
        want = F.conv_transpose2d(t(x), t(w), t(b), *args).numpy()
        mag = F.conv_transpose2d(t(np.abs(x)), t(np.abs(w)), t(np.abs(b)), *args).numpy()
        tol = 1e-5 * math.sqrt(self.cin // self.groups * self.k * self.k) * (mag + 1)
        err = np.abs(got - want)
        if (err > tol).any():
            return f"max error {err.max():.3g} (tol {tol.max():.3g})"
        return None


def _layer(group, name, cin, cout, hw, k, stride, pad, groups=1, kind="conv") -> List[Case]:
    return [Case(group, name, cin, cout, hw, k, stride, pad, groups, lay, kind=kind)
            for lay in LAYOUTS]


def _up(name, cin, cout, hw, k, stride, pad, group="upsample") -> List[Case]:
    return _layer(group, name, cin, cout, hw, k, stride, pad, kind="transpose")


def cases(quick: bool = False) -> List[Case]:
    """The issue's target layers (ResNet 3x3, a 1x1 bottleneck, the 3-channel stem, a
    MobileNet depthwise layer) and typical upsampling layers (transposed 2x2 stride 2 and 4x4
    stride 2 pad 1, 64->32), batch 1, each in both layouts; quick: small ones."""
    if quick:
        return (_layer("quick", "3x3 16->16 @14", 16, 16, 14, 3, 1, 1)
                + _layer("quick", "dw3x3 32 @14", 32, 32, 14, 3, 1, 1, groups=32)
                + _up("up4x4 s2 32->16 @16", 32, 16, 16, 4, 2, 1, group="quick"))
    return (_layer("dense", "3x3 64->64 @56", 64, 64, 56, 3, 1, 1)
            + _layer("dense", "1x1 256->64 @56", 256, 64, 56, 1, 1, 0)
            + _layer("stem", "stem 3->32 s2 @224", 3, 32, 224, 3, 2, 1)
            + _layer("depthwise", "dw3x3 144 @56", 144, 144, 56, 3, 1, 1, groups=144)
            + _up("up2x2 s2 64->32 @64", 64, 32, 64, 2, 2, 0)
            + _up("up4x4 s2p1 64->32 @64", 64, 32, 64, 4, 2, 1)
            + _up("up2x2 s2 64->32 @128", 64, 32, 128, 2, 2, 0)
            + _up("up4x4 s2p1 64->32 @128", 64, 32, 128, 4, 2, 1))


def ratio_cases(case: Case) -> List[str]:
    """The cases whose peers tilegen's row is compared with: the layer in both layouts."""
    return [Case(**{**asdict(case), "layout": lay}).id for lay in LAYOUTS]


# ------------------------------------------------------------------ ONNX, without the onnx package

def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(num: int, value) -> bytes:
    """One protobuf field: ints as varints, bytes/str/nested messages length-delimited."""
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    if isinstance(value, str):
        value = value.encode()
    return _varint(num << 3 | 2) + _varint(len(value)) + value


def _tensor_type(shape) -> bytes:
    dims = b"".join(_field(1, _field(1, d)) for d in shape)          # Dimension.dim_value
    return _field(1, _field(1, 1) + _field(2, dims))                 # TypeProto.tensor_type


def onnx_conv_model(w, b, stride: int, pad: int, groups: int, x_shape, y_shape) -> bytes:
    """ModelProto bytes of y = Conv(x, w, b) (opset 13, float32)."""
    def initializer(name, a):
        a = a.astype("<f4", copy=False)
        return b"".join(_field(1, d) for d in a.shape) + _field(2, 1) + _field(8, name) + \
            _field(9, a.tobytes())

    def ints(name, values):
        return _field(1, name) + _field(20, 7) + b"".join(_field(8, v) for v in values)

    node = (_field(1, "x") + _field(1, "w") + _field(1, "b") + _field(2, "y") + _field(4, "Conv")
            + _field(5, ints("strides", [stride, stride]))
            + _field(5, ints("pads", [pad] * 4))
            + _field(5, ints("kernel_shape", list(w.shape[2:])))
            + _field(5, _field(1, "group") + _field(20, 2) + _field(3, groups)))
    graph = (_field(1, node) + _field(2, "conv") + _field(5, initializer("w", w))
             + _field(5, initializer("b", b))
             + _field(11, _field(1, "x") + _field(2, _tensor_type(x_shape)))
             + _field(12, _field(1, "y") + _field(2, _tensor_type(y_shape))))
    return (_field(1, 8) + _field(8, _field(1, "") + _field(2, 13)) + _field(7, graph)
            + _field(2, "tilegen-bench"))


def _bound(f, *args) -> Callable[[], object]:
    return lambda: f(*args)


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    """(call, to_numpy) for `lib` on the case's operands; weights prepared outside the timing."""
    x, w, b = operands
    same = lambda r: r  # noqa: E731
    if lib == "tilegen" and case.kind == "transpose":
        import tilegen
        up = tilegen.ConvTranspose2d(w, b, stride=case.stride, padding=case.pad,
                                     groups=case.groups, layout=case.layout)
        return _bound(up, x), same
    if lib == "tilegen":
        import tilegen
        conv = tilegen.Conv2d(w, b, stride=case.stride, padding=case.pad, groups=case.groups,
                              layout=case.layout)
        return _bound(conv, x), same
    if lib == "torch":
        import torch
        import torch.nn.functional as F
        xn, wn, _ = case.nchw(operands)
        tx, tw, tb = torch.from_numpy(xn), torch.from_numpy(wn), torch.from_numpy(b)
        if case.layout == "NHWC":  # the same memory as channels_last tensors
            tx = tx.contiguous(memory_format=torch.channels_last)
            tw = tw.contiguous(memory_format=torch.channels_last)
            to_numpy = lambda r: r.permute(0, 2, 3, 1).numpy()  # noqa: E731
        else:
            to_numpy = lambda r: r.numpy()  # noqa: E731
        if case.kind == "transpose":
            targs = (tx, tw, tb, case.stride, case.pad, 0, case.groups)
            return (lambda: F.conv_transpose2d(*targs)), to_numpy
        args = (tx, tw, tb, case.stride, case.pad, 1, case.groups)
        return (lambda: F.conv2d(*args)), to_numpy
    if lib == "onnxruntime":
        import onnxruntime as ort
        oh = case.out_hw
        model = onnx_conv_model(w, b, case.stride, case.pad, case.groups, x.shape,
                                (1, case.cout, oh, oh))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        feed = {"x": x}
        return (lambda: sess.run(None, feed)[0]), same
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("float32, batch 1; C_in->C_out @ input size; NCHW: tilegen NCHW/OIHW arrays, torch "
            "NCHW tensors, ONNX Runtime; NHWC: tilegen NHWC/OHWI arrays, torch channels_last",
            "tilegen runs tg.Conv2d (weights packed once); tg/pt: the faster torch layout of "
            "the same layer / tilegen",
            "up...: transposed convolutions (tg.ConvTranspose2d vs F.conv_transpose2d; weights "
            "(C_in, C_out, k, k), NHWC (C_in, k, k, C_out)); FLOPs of the equivalent conv")
