"""Direct convolution, channels last: an output-width x output-channel register tile.

    y[i*ys + j] = act(bias[j] + sum over (kh, kw, ci) of x_i(kh, kw, ci) * w(kh, kw, ci, j))

for i < m <= MR output pixels of one output row and j < n <= NR output channels (along the
SIMD lanes; NR a multiple of the vector width). Pixel i's input at tap (kh, kw) starts at
rows[kh] + (i*S + kw*D)*ps elements: ps is the input's pixel stride, dps = D*ps the dilated tap
step (a run-time value), and its c input channels follow contiguously. Each input value is
broadcast and multiplied into NR/lanes weight vectors, as a GEMM "rows" kernel does with A:
the taps are unrolled around a loop over the input channels. The weights come packed per block
of NR output channels: NR bias values, then NR weights per (kh, kw, ci).

Channel-first kernels (layout "nchw", named ``..._nchw``) turn the tile around for NCHW data:
MR output channels x NR output pixels along the lanes,

    y[i*ys + j] = act(bias[i] + sum over (tap, ci) of w(tap, ci)[i] * taps[tap][j + ci*cs])

with one input pointer per tap (the driver lays padded input rows out so that the pixels of a
band of output rows are one flattened run: a stride splits the rows and columns into phase
planes, so these kernels are stride 1 and every load is of consecutive values) and weights
packed as MR bias values, then MR per (tap, ci): a GEMM tile whose B rows are shifted input
rows, read in place. A tile short of NR pixels computes only the vectors that hold them.

The op token carries the filter size and the stride (``conv3x3s2``); a tile ``MRxNRcK`` fixes
the input channels at K and unrolls them completely (the 3-channel stem, ``14x32c3``). With
KH = KW = 1 and c = K the kernel is a GEMM tile whose B is a packed NR-wide panel: the driver
uses it so for channel-first inputs (the weights as the broadcast operand) and for filters with
no kernel of their own (a per-tile im2col of MR pixels). The activation (none, relu, relu6,
gelu, silu) is chosen at run time and applied before the store.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from tilegen.dsl.isa import DTYPES, Isa, VecOps, get_isa
from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.lowering import RowsPlan, row_addressing

# The activations the kernels apply at run time that clamp, with their clamp points.
ACT_CLAMPS: Dict[str, Tuple[float, ...]] = {"relu": (0.0,), "relu6": (0.0, 6.0)}

TOKEN = re.compile(r"^conv([0-9]+)x([0-9]+)s([0-9]+)$")
STRIDES = (1, 2)
MAX_TAPS_SIDE = 11
# Taps unrolled in straight-line code up to this many; larger filters loop over their rows.
MAX_UNROLLED_TAPS = 9
# Activation codes, as TILEGEN_ACT_* in tilegen.h (the drivers check that they agree).
ACTIVATIONS = ("none", "relu", "relu6", "gelu", "silu")
LAYOUTS = ("nhwc", "nchw")


@dataclass(frozen=True)
class ConvPlan(RowsPlan):
    """Everything the conv template needs, already decided."""

    nv: int                    # vectors per pixel of the tile
    kh: int
    kw: int
    stride: int
    unroll: int                # input-channel loop unroll
    fixed_c: int               # > 0: exactly this many input channels, fully unrolled
    unroll_taps: bool          # every tap in straight-line code (else a loop over kh)
    params_type: str
    layout: str = "nhwc"
    prefetch: int = 0          # nchw: prefetch each input row this many pixels ahead (0: off)
    activations: Tuple[str, ...] = ACTIVATIONS

    def a_elem(self, i: int, u: int) -> str:
        """Address of pixel i's input channel ci + u (ci: the loop's position)."""
        base, scale = self.row_addr[i]
        row = f"ab{base}" if scale == 0 else f"ab{base} + {scale} * rsb"
        return f"(const {self.ctype}*) ({row}) + {u}"


def conv_token(kh: int, kw: int, stride: int) -> str:
    return f"conv{kh}x{kw}s{stride}"


class Conv(OpFamily):
    name = "conv"
    template = "conv/ukernel.c.j2"
    types_template = "conv/types.h.j2"
    vector_dim = "n"
    dtypes = ("f32",)
    fields = {"kh": (1, None), "kw": (1, None), "stride": (1, STRIDES),
              "layout": ("nhwc", LAYOUTS)}
    c_select = "tg_conv_select"
    example_dims = (("h", 56), ("w", 56), ("c", 64), ("co", 64))
    c_row_doc = ("X(isa id, KH, KW, stride, fixed input channels (0: any), layout (0 nhwc, 1 "
                 "nchw), MR, NR, pixels per vector (channel-first tiles short of NR compute only the "
                 "vectors that hold their pixels), production, channels-last kernel or NULL, "
                 "channel-first kernel or NULL, \"name\")")

    def template_for(self, spec) -> str:
        return "conv/ukernel_nchw.c.j2" if spec.layout == "nchw" else self.template

    def python_call(self, spec, kernel):
        return conv_runner(spec, kernel, depthwise=False)

    def python_driver(self, spec) -> str:
        if spec.layout == "nchw":  # taps: one per (kh, kw); channel planes plane apart
            call = (f"{spec.name}(nc, np_, c, ptrs, plane, w + (c0 / {spec.mr}) * w_block, "
                    f"y + ((b * co + c0) * oh + oy) * ow + p0, oh * ow, &params);")
        else:      # rows: one per kh; pixels c apart, taps dil*c apart
            call = (f"{spec.name}(np_, nc, c, ptrs, c, dil * c, w + (c0 / {spec.nr}) * w_block, "
                    f"y + ((b * oh + oy) * ow + p0) * co + c0, co, &params);")
        return conv_driver(spec, call)

    def python_example(self, spec, dims, rng):
        return conv_example(spec, dims, rng, depthwise=False)

    def variant_tokens(self, spec) -> List[str]:
        return ["nchw"] if spec.layout == "nchw" else []

    def parse_variant(self, variant: str) -> Tuple[Dict[str, Any], str]:
        if variant == "nchw" or variant.startswith("nchw_"):
            return {"layout": "nchw"}, variant[5:]
        return {"layout": "nhwc"}, variant

    def op_token(self, spec) -> str:
        return conv_token(spec.kh, spec.kw, spec.stride)

    def parse_op_token(self, token: str) -> Optional[Dict[str, Any]]:
        m = TOKEN.match(token)
        if not m:
            return None
        return {"kh": int(m.group(1)), "kw": int(m.group(2)), "stride": int(m.group(3))}

    def check(self, spec) -> None:
        self.check_multiple("nr", spec.nr, spec, "NR")
        for f in ("kh", "kw"):
            if getattr(spec, f) > MAX_TAPS_SIDE:
                raise ValueError(f"{f}: {getattr(spec, f)} is over the limit of {MAX_TAPS_SIDE}")
        if spec.layout == "nchw" and spec.kr > 1:
            raise ValueError("kr: channel-first (nchw) conv kernels take any input channels (KR=1)")
        if spec.prefetch and spec.layout != "nchw":
            raise ValueError("prefetch: only channel-first (nchw) conv kernels prefetch")
        if spec.layout == "nchw" and spec.stride != 1:
            raise ValueError("stride: channel-first (nchw) conv kernels are stride 1 (the driver "
                             "splits a strided input into phase planes)")
        if spec.kr > 1 and spec.kr * spec.kh * spec.kw > 64:
            raise ValueError(f"kr: {spec.kr} fixed input channels x {spec.kh * spec.kw} taps "
                             "unroll past 64 steps; allowed: kr * kh * kw <= 64")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        if spec.layout == "nchw":
            # MR x NV accumulators, NV input vectors per step, one weight.
            return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs,
                                  input_name="input", broadcast_name="weight broadcast")
        # MR x NV accumulators, one pixel's NV weight vectors per step, one input broadcast.
        return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs, input_name="weight",
                              broadcast_name="input broadcast")

    def budget_rule(self, spec) -> str:
        lanes = self.lanes(spec)
        if spec.layout == "nchw":
            return f"MR*NR/{lanes} + NR/{lanes} + 1"
        return f"MR*NR/{lanes} + NR/{lanes} + 1"

    def lower(self, spec) -> ConvPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        bases, rows = row_addressing(spec.mr)
        return ConvPlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, nr=spec.nr,
            lanes=v.lanes, nv=spec.nr // v.lanes, kh=spec.kh, kw=spec.kw, stride=spec.stride,
            unroll=spec.unroll, fixed_c=spec.kr if spec.kr > 1 else 0,
            unroll_taps=spec.kh * spec.kw <= MAX_UNROLLED_TAPS, tail=spec.tail,
            row_bases=bases, row_addr=rows, isa=isa, v=v, budget=self.register_budget(spec),
            params_type=f"tg_{spec.dtype}_conv_params", layout=spec.layout,
            prefetch=spec.prefetch)

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        if spec.layout == "nchw":
            return (f"void {spec.name}(int64_t, int64_t, int64_t, const {t}* const*, int64_t, "
                    f"const {t}*, {t}*, int64_t, const tg_{spec.dtype}_conv_params*);")
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const {t}* const*, int64_t, "
                f"int64_t, const {t}*, {t}*, int64_t, const tg_{spec.dtype}_conv_params*);")

    def c_row(self, entry) -> str:
        s = entry.spec
        nchw = s.layout == "nchw"
        return (f"TG_ISA_{s.isa.upper()}, {s.kh}, {s.kw}, {s.stride}, "
                f"{s.kr if s.kr > 1 else 0}, {int(nchw)}, {s.mr}, {s.nr}, {self.lanes(s)}, "
                f"{int(entry.production)}, {'NULL' if nchw else s.name}, "
                f"{s.name if nchw else 'NULL'}, \"{s.name}\"")

    def validate_registry(self, entries, where: str) -> None:
        """Per ISA and layout, production conv kernels share one NR (one packed-weight format),
        and channels-last ones include a 1x1 stride-1 kernel (the one every convolution can
        fall back on)."""
        groups: Dict[Tuple[str, str, str], List] = {}
        for e in entries:
            if e.production:
                groups.setdefault((e.spec.dtype, e.spec.isa, e.spec.layout), []).append(e)
        for (dtype, isa, layout), group in groups.items():
            nrs = sorted({e.spec.nr for e in group})
            if len(nrs) > 1:
                raise ValueError(f"{where}: production conv {dtype} {layout} kernels for {isa} "
                                 f"have NR values {nrs}; allowed: one NR per ISA and layout")
            if layout == "nhwc" and not any(e.spec.kh == e.spec.kw == e.spec.stride == 1 and e.spec.kr == 1
                       for e in group):
                raise ValueError(f"{where}: production conv {dtype} kernels for {isa} lack a "
                                 "conv1x1s1 kernel with any input channels (the fallback)")


    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KH": s.kh, "TG_KW": s.kw, "TG_S": s.stride,
                "TG_FIXED_C": s.kr if s.kr > 1 else 0, "TG_UNROLL": s.unroll,
                "TG_NCHW": int(s.layout == "nchw")}

    def tester_coverage(self, s) -> Dict[str, int]:
        """The tile's rows and columns (pixels x output channels, or output channels x pixels
        channel-first) and the unrolled input-channel loop (none when the tile fixes c)."""
        return {"m": s.mr, "n": s.nr, **({"c": s.unroll} if s.kr == 1 else {})}

    def tester_clamps(self, s) -> Dict[str, Tuple[float, ...]]:
        return dict(ACT_CLAMPS)  # the activation is a run-time choice of every kernel


FAMILY = Conv()


# --- tilegen.dsl.compile: the micro-kernel driven over a whole convolution from Python ---
# (the depthwise family, dwconv.py, shares these helpers)

DRIVE = "tg_dsl_conv_drive"


def act_code(act: Any) -> int:
    """The run-time activation code (TG_ACT_*) of a name; ValueError naming `act`."""
    if act not in ACTIVATIONS:
        raise ValueError(f"act: expected one of {', '.join(ACTIVATIONS)}, got {act!r}")
    return ACTIVATIONS.index(act)


def numpy_act(y, act: str):
    """NumPy's activation (float64 in and out), the forms tilegen.h documents."""
    import math

    import numpy as np

    if act == "relu":
        return np.maximum(y, 0)
    if act == "relu6":
        return np.clip(y, 0, 6)
    if act == "gelu":
        return 0.5 * y * (1 + np.vectorize(math.erf)(y / math.sqrt(2)))
    if act == "silu":
        return y / (1 + np.exp(-y))
    return y


def reference(x, w, bias, stride: int, padding: int, dilation: int, act: str, depthwise: bool):
    """NumPy's convolution in float64, channels last: x (N, H, W, C), w (KH, KW, C, CO) or
    (KH, KW, C) depthwise; the answer (N, OH, OW, CO or C)."""
    import numpy as np

    x = np.pad(x.astype(np.float64), ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    kh, kw = w.shape[:2]
    oh = (x.shape[1] - dilation * (kh - 1) - 1) // stride + 1
    ow = (x.shape[2] - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((x.shape[0], oh, ow, w.shape[-1]))
    for a in range(kh):
        for b in range(kw):
            win = x[:, a * dilation::stride, b * dilation::stride][:, :oh, :ow]
            y += win * w[a, b] if depthwise else win @ w[a, b].astype(np.float64)
    if bias is not None:
        y += bias
    return numpy_act(y, act)


def conv_geometry(spec, x_shape, k_shape, padding: Any, dilation: Any, nchw: bool):
    """(N, H, W, OH, OW) of a convolution; ValueError naming the argument."""
    for name, v, low in (("padding", padding, 0), ("dilation", dilation, 1)):
        if not isinstance(v, (int,)) or isinstance(v, bool) or v < low:
            raise ValueError(f"{name}: expected an integer >= {low}, got {v!r}")
    nb, h, w = (x_shape[0], x_shape[2], x_shape[3]) if nchw else x_shape[:3]
    kh, kw = k_shape
    oh = (h + 2 * padding - dilation * (kh - 1) - 1) // spec.stride + 1
    ow = (w + 2 * padding - dilation * (kw - 1) - 1) // spec.stride + 1
    if oh < 1 or ow < 1:
        raise ValueError(f"x: an image of {h}x{w} (padding {padding}) is smaller than the "
                         f"{kh}x{kw} filter at dilation {dilation}")
    return nb, h, w, oh, ow


def padded_input(x, padding: int, hp: int, wp: int, nchw: bool):
    """x zero-padded to hp x wp (padding rows/columns before; the rest after: what the
    kernels read past the last output pixel of a tile) as a contiguous float32 array."""
    import numpy as np

    if nchw:
        out = np.zeros((x.shape[0], x.shape[1], hp, wp), np.float32)
        out[:, :, padding:padding + x.shape[2], padding:padding + x.shape[3]] = x
    else:
        out = np.zeros((x.shape[0], hp, wp, x.shape[3]), np.float32)
        out[:, padding:padding + x.shape[1], padding:padding + x.shape[2]] = x
    return out


def pack_blocks(bias, taps, block: int):
    """Weights packed per block of `block` channels: `block` bias values, then `block` values per
    row of `taps` (rows x channels), zeros past the last channel; one flat float32 array."""
    import numpy as np

    ch = taps.shape[1]
    nb = -(-ch // block)
    full = np.zeros((1 + taps.shape[0], nb * block), np.float32)
    full[0, :ch] = bias
    full[1:, :ch] = taps
    return np.ascontiguousarray(full.reshape(1 + taps.shape[0], nb, block).transpose(1, 0, 2)
                                ).reshape(-1)


def conv_driver(spec, call: str, rows_per_call: int = 1) -> str:
    """C's loop over output rows, pixel tiles and channel blocks of a padded input (padded
    channels last (N, HP, WP, C), or channel first (N, C, HP, WP)); `call` is the kernel call
    for one tile, in terms of the loop's variables. Channels last: pixel tiles of MR, channel
    blocks of NR; channel first: channel blocks of MR, pixel tiles of NR. Channels last, a call
    may cover `rows_per_call` output rows (nr_ of them, KH + nr_ - 1 row pointers, unit
    dilation and stride)."""
    nchw = spec.layout == "nchw"
    taps = spec.kh * spec.kw
    if nchw:
        setup = f"""        for (int64_t t = 0; t < {taps}; t++)
          ptrs[t] = x + b * c * plane + (oy + (t / {spec.kw}) * dil) * wp
                    + (t % {spec.kw}) * dil + p0;"""
        pix, chan = spec.nr, spec.mr
    else:
        setup = f"""        for (int64_t t = 0; t < {spec.kh} + nr_ - 1; t++)
          ptrs[t] = x + ((b * hp + oy * {spec.stride} + t * dil) * wp + p0 * {spec.stride}) * c;"""
        pix, chan = spec.mr, spec.nr
    return f"""#include <stdint.h>
#include "tg_ukernels.h"

{spec.family.c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t nb, int64_t oh, int64_t ow, int64_t c, int64_t co, const float* x, int64_t hp,
    int64_t wp, int64_t dil, const float* w, int64_t w_block, float* y, int act) {{
  const tg_f32_conv_params params = {{act}};
  const int64_t plane = hp * wp;
  const float* ptrs[{max(taps, spec.kh + rows_per_call - 1)}];
  const float* tp[{max(taps, spec.kh + rows_per_call - 1)}];
  (void) tp;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t oy = 0; oy < oh; oy += {rows_per_call}) {{
      const int64_t nr_ = oh - oy < {rows_per_call} ? oh - oy : {rows_per_call};
      (void) nr_;
      for (int64_t p0 = 0; p0 < ow; p0 += {pix}) {{
        const int64_t np_ = ow - p0 < {pix} ? ow - p0 : {pix};
{setup}
        for (int64_t c0 = 0; c0 < co; c0 += {chan}) {{
          const int64_t nc = co - c0 < {chan} ? co - c0 : {chan};
          {call}
        }}
      }}
    }}
}}
"""


def conv_runner(spec, kernel, depthwise: bool):
    """The NumPy callable of a conv or dwconv kernel (see the docstring it gets)."""
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, i64, i64, vp, i64, i64, i64, vp, i64, vp,
                          ctypes.c_int)
    nchw = spec.layout == "nchw"
    s, kh, kw, mr, nr = spec.stride, spec.kh, spec.kw, spec.mr, spec.nr
    fixed_c = spec.kr if spec.kr > 1 and not depthwise else 0
    unit_dilation = depthwise and getattr(spec, "dilation", "any") == "1"
    group = getattr(spec.family.lower(spec), "group", 1)  # pixels a step of the tile reads

    def prepare(x, w, bias=None, *, padding=0, dilation=1, act="none"):
        x = jit.check_array("x", x, "f32", 4)
        c = x.shape[1] if nchw else x.shape[3]
        if depthwise:
            want = (c, kh, kw) if nchw else (kh, kw, c)
            w = jit.check_array("w", w, "f32", 3, shape=want)
            co = c
        else:
            want = (None, c, kh, kw) if nchw else (kh, kw, c, None)
            w = jit.check_array("w", w, "f32", 4, shape=want)
            co = w.shape[0] if nchw else w.shape[3]
        if fixed_c and c != fixed_c:
            raise ValueError(f"x: {spec.name} takes exactly {fixed_c} input channels, got {c}")
        if bias is not None:
            bias = jit.check_array("bias", bias, "f32", 1, shape=(co,))
        code = act_code(act)
        nb, h, wd, oh, ow = conv_geometry(spec, x.shape, (kh, kw), padding, dilation, nchw)
        if unit_dilation and dilation != 1:
            raise ValueError(f"dilation: {spec.name} is a unit-dilation kernel, got {dilation}")
        # Pad past the image so that every tile's reads (all MR / NR pixels, rounded up to a
        # whole depthwise pixel group) stay inside the array.
        tile = nr if nchw else mr
        reach = (-(-ow // tile) * tile + group) * s + (kw - 1) * dilation
        hp, wp = max(h + 2 * padding, (oh - 1) * s + (kh - 1) * dilation + 2), \
            max(wd + 2 * padding, reach)
        xp = padded_input(x, padding, hp, wp, nchw)
        b = np.zeros(co, np.float32) if bias is None else bias
        if depthwise:  # taps (KH*KW) x channels
            taps = (w.reshape(c, kh * kw).T if nchw else w.reshape(kh * kw, c))
        elif nchw:     # (tap, ci) x output channels
            taps = w.transpose(2, 3, 1, 0).reshape(kh * kw * c, co)
        else:          # (kh, kw, ci) x output channels
            taps = w.reshape(kh * kw * c, co)
        block = mr if nchw else nr
        packed = pack_blocks(b, taps, block)
        w_block = block * (1 + taps.shape[0])
        y = np.empty((nb, co, oh, ow) if nchw else (nb, oh, ow, co), np.float32)

        def run():
            drive(nb, oh, ow, c, co, xp.ctypes.data, hp, wp, dilation, packed.ctypes.data,
                  w_block, y.ctypes.data, code)
            return y
        return run

    if nchw:
        shapes = (f"x (N, C, H, W), w ({'C, ' if depthwise else 'CO, C, '}{kh}, {kw})"
                  f", y (N, {'C' if depthwise else 'CO'}, OH, OW)")
        loop = f"blocks of {mr} channels x {nr} pixels of each output row"
    else:
        shapes = (f"x (N, H, W, C), w ({kh}, {kw}, C{'' if depthwise else ', CO'})"
                  f", y (N, OH, OW, {'C' if depthwise else 'CO'})")
        loop = f"tiles of {mr} pixels of each output row x {nr} channels"
    doc = (
        f"{spec.name}: y = act({'depthwise ' if depthwise else ''}conv2d(x, w, stride {s}, "
        f"padding, dilation) + bias) of float32 arrays {shapes}; bias (one per output channel) "
        f"optional; keywords padding (zeros each side), dilation"
        f"{' (1 only: a unit-dilation kernel)' if unit_dilation else ''}, act (one of "
        f"{', '.join(ACTIVATIONS)}){f'; exactly {fixed_c} input channels' if fixed_c else ''}. "
        f"The input is zero-padded and the weights packed in NumPy, then a C loop calls the "
        f"micro-kernel on {loop}, edges too.")
    return jit.prepared_call(prepare, doc)


def conv_example(spec, dims, rng, depthwise: bool):
    """A bench problem: one image of `dims` = (H, W, C[, CO]), padding keeping the size at
    stride 1, a bias and relu."""
    import numpy as np

    from tilegen.dsl import jit

    h, wd, c = dims[:3]
    if spec.kr > 1 and not depthwise:
        c = spec.kr
    co = c if depthwise else dims[3]
    nchw = spec.layout == "nchw"
    pad = (spec.kh - 1) // 2
    x = rng.standard_normal((1, h, wd, c)).astype(np.float32)
    w = (rng.standard_normal((spec.kh, spec.kw, c) if depthwise else (spec.kh, spec.kw, c, co))
         / np.sqrt(spec.kh * spec.kw * (1 if depthwise else c))).astype(np.float32)
    bias = rng.standard_normal(co).astype(np.float32)
    want = reference(x, w, bias, spec.stride, pad, 1, "relu", depthwise)
    if nchw:
        x, want = x.transpose(0, 3, 1, 2).copy(), want.transpose(0, 3, 1, 2)
        w = w.transpose(2, 0, 1).copy() if depthwise else w.transpose(3, 2, 0, 1).copy()
    taps = spec.kh * spec.kw * (1 if depthwise else c)
    eps = float(np.finfo(np.float32).eps)
    scale = float(np.abs(x).max() * np.abs(w).max())
    return jit.Example(args=(x, w, bias), kwargs={"padding": pad, "act": "relu"},
                       expected=want.astype(np.float32), work=2.0 * want.size * taps,
                       unit="flop", shape=",".join(map(str, dims)), rtol=0.0,
                       atol=8 * eps * taps * scale + 8 * eps * float(np.abs(want).max()))
