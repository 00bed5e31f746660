"""Depthwise convolution, channels last: each channel filtered by its own KH x KW taps.

    y[i*ys + j] = act(bias[j] + sum over (kh, kw) of x_i(kh, kw)[j] * w(kh, kw)[j])

for i < m <= MR output pixels of one output row and j < n <= NR channels (along the SIMD lanes).
Pixel i's input at tap (kh, kw) starts at rows[kh] + (i*S + kw*D)*ps, as for the conv family;
the weights come packed per block of NR channels (NR bias values, then NR weights per tap).
Each input vector meets one weight vector: a tap is NV weight loads, then MR*NV input loads
and FMAs. Only channels j < n are read or written (masked, or through a temporary on ISAs
without masks). The conv family's driver selects these kernels.

Channel-first kernels (layout "nchw", named ``..._nchw``) take MR channels x NR pixels of a
flattened band of output rows, as the conv family's do:

    y[i*ys + j] = act(bias[i] + sum over taps t of w(t)[i] * taps[t][i*cs + j])

(one pointer per tap for channel 0, channel i at i*cs; weights: MR bias values, then MR per
tap). Each channel's weight is broadcast and meets NV pixel vectors of its own plane. These
are stride 1: the driver splits a strided input into phase planes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from tilegen.dsl.isa import DTYPES, Isa, VecOps, get_isa
from tilegen.dsl.family import OpFamily, RegisterBudget
from .conv import (ACT_CLAMPS, LAYOUTS, MAX_TAPS_SIDE, MAX_UNROLLED_TAPS, STRIDES, conv_driver,
                   conv_example, conv_runner)
from tilegen.dsl.lowering import FMA_CHAINS, RowsPlan, row_addressing

TOKEN = re.compile(r"^dwconv([0-9]+)x([0-9]+)s([0-9]+)$")
OUT_ROWS = (1, 2)  # output rows a channels-last unit-dilation kernel can compute per call
# Channel-first tiles: MR channels of one output row ("channels"), or MR output rows of one
# channel ("rows", named ..._nchw_rows: rows share input rows, taps come from aligned loads).
TILINGS = ("channels", "rows")


@dataclass(frozen=True)
class DwconvPlan(RowsPlan):
    nv: int
    kh: int
    kw: int
    stride: int
    unroll_taps: bool
    params_type: str
    layout: str = "nhwc"
    group: int = 1             # channels last: pixels per step of the tile's pixel loop
    group_bases: Tuple[int, ...] = (0,)
    slide: bool = False        # unit dilation: each input column loaded once per filter row
    pos_bases: Tuple[int, ...] = (0,)
    pos_addr: Tuple[Tuple[int, int], ...] = ((0, 0),)
    out_rows: int = 1          # unit dilation, stride 1: output rows per call (nrows <= this)
    tiling: str = "channels"   # channel first: MR channels, or MR output rows of one channel
    hoist: bool = False        # every tap's weights held in registers for the whole call
    reach: int = 0             # row tiles: aligned vectors each side of NR that taps reach

    @property
    def positions(self) -> int:
        """Input columns a pixel group's filter row covers (unit dilation)."""
        return (self.group - 1) * self.stride + self.kw

    def pos_elem(self, k: int, j: int) -> str:
        """Address of input column k (of the group's filter row) at channel vector j."""
        base, scale = self.pos_addr[k]
        row = f"ap{base}" if scale == 0 else f"ap{base} + {scale} * psb"
        return f"(const {self.ctype}*) ({row}) + {j * self.lanes}"

    def x_elem(self, i: int, j: int) -> str:
        """Address of pixel i's channel vector j at the current tap."""
        base, scale = self.row_addr[i]
        row = f"ab{base}" if scale == 0 else f"ab{base} + {scale} * rsb"
        return f"(const {self.ctype}*) ({row}) + {j * self.lanes}"


class Dwconv(OpFamily):
    name = "dwconv"
    template = "dwconv/ukernel.c.j2"
    types_template = "dwconv/types.h.j2"
    vector_dim = "n"
    dtypes = ("f32",)
    fields = {"kh": (1, None), "kw": (1, None), "stride": (1, STRIDES),
              "layout": ("nhwc", LAYOUTS), "dilation": ("any", ("any", "1")),
              "out_rows": (1, OUT_ROWS), "tiling": ("channels", TILINGS)}
    c_row_doc = ("X(isa id, KH, KW, stride, layout (0 nhwc, 1 nchw, 2 nchw row tiles), "
                 "unit dilation only, "
                 "output rows per call (at most), MR, NR, "
                 "pixel step (a channels-last tile of m pixels reads round_up(m, step); "
                 "channel-first: MR; row tiles: 1), production, "
                 "channels-last kernel or NULL, channel-first kernel or NULL, \"name\")")

    example_dims = (("h", 56), ("w", 56), ("c", 128))

    def python_call(self, spec, kernel):
        if spec.tiling == "rows":
            return _rows_runner(spec, kernel)
        return conv_runner(spec, kernel, depthwise=True)

    def python_driver(self, spec) -> str:
        """The conv family's loop; a channel block starts the input pointers at its channel."""
        if spec.tiling == "rows":
            return _rows_driver(spec)
        taps = spec.kh * spec.kw
        if spec.layout == "nchw":
            call = (f"for (int64_t t = 0; t < {taps}; t++) tp[t] = ptrs[t] + c0 * plane;\n"
                    f"          {spec.name}(nc, np_, tp, plane, w + (c0 / {spec.mr}) * w_block, "
                    f"y + ((b * co + c0) * oh + oy) * ow + p0, oh * ow, &params);")
            return conv_driver(spec, call)
        call = (f"for (int64_t t = 0; t < {spec.kh} + nr_ - 1; t++) tp[t] = ptrs[t] + c0;\n"
                f"          {spec.name}(np_, nc, tp, c, dil * c, w + (c0 / {spec.nr}) * w_block, "
                f"y + ((b * oh + oy) * ow + p0) * co + c0, co, nr_, ow * co, &params);")
        return conv_driver(spec, call, spec.out_rows)

    def python_example(self, spec, dims, rng):
        return conv_example(spec, dims, rng, depthwise=True)

    def template_for(self, spec) -> str:
        if spec.layout == "nchw":
            return ("dwconv/ukernel_nchw_rows.c.j2" if spec.tiling == "rows"
                    else "dwconv/ukernel_nchw.c.j2")
        return self.template

    def variant_tokens(self, spec):
        return (["nchw"] if spec.layout == "nchw" else []) + (
            ["rows"] if spec.tiling == "rows" else []) + (
            ["d1"] if spec.dilation == "1" else []) + (
            [f"r{spec.out_rows}"] if spec.out_rows > 1 else [])

    def parse_variant(self, variant: str):
        fields = {"layout": "nhwc", "dilation": "any"}
        tokens = variant.split("_") if variant else []
        if tokens[:1] == ["nchw"]:
            fields["layout"] = "nchw"
            tokens = tokens[1:]
            if tokens[:1] == ["rows"]:
                fields["tiling"] = "rows"
                tokens = tokens[1:]
        if tokens[:1] == ["d1"]:
            fields["dilation"] = "1"
            tokens = tokens[1:]
        if tokens[:1] and re.fullmatch(r"r[0-9]+", tokens[0]):
            fields["out_rows"] = int(tokens[0][1:])
            tokens = tokens[1:]
        return fields, "_".join(tokens)

    def op_token(self, spec) -> str:
        return f"dwconv{spec.kh}x{spec.kw}s{spec.stride}"

    def parse_op_token(self, token: str) -> Optional[Dict[str, Any]]:
        m = TOKEN.match(token)
        if not m:
            return None
        return {"kh": int(m.group(1)), "kw": int(m.group(2)), "stride": int(m.group(3))}

    def check(self, spec) -> None:
        if spec.kr != 1:
            raise ValueError(f"kr: dwconv kernels take KR=1, got KR={spec.kr}")
        if spec.layout == "nchw" and spec.stride != 1:
            raise ValueError("stride: channel-first (nchw) dwconv kernels are stride 1 (the "
                             "driver splits a strided input into phase planes)")
        if spec.dilation == "1" and spec.layout != "nhwc":
            raise ValueError("dilation: unit-dilation (sliding) dwconv kernels are channels last")
        if spec.tiling == "rows" and spec.layout != "nchw":
            raise ValueError("tiling: row tiles (\"rows\") are channel-first (nchw) kernels")
        if spec.tiling == "rows" and not get_isa(spec.isa).vec(spec.dtype).ext_ and \
                get_isa(spec.isa).lanes(spec.dtype) > 1:
            raise ValueError(f"tiling: row tiles build shifted taps from aligned vectors, "
                             f"which {spec.isa} cannot (no lane extract)")
        if spec.out_rows > 1 and (spec.dilation != "1" or spec.stride != 1):
            raise ValueError("out_rows: kernels of several output rows are unit dilation "
                             "(dilation \"1\"), stride 1 (where rows share input rows)")
        self.check_multiple("nr", spec.nr, spec, "NR")
        for f in ("kh", "kw"):
            if getattr(spec, f) > MAX_TAPS_SIDE:
                raise ValueError(f"{f}: {getattr(spec, f)} is over the limit of {MAX_TAPS_SIDE}")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        if spec.layout == "nchw" and spec.tiling == "rows":
            # MR x NV accumulators, an input row's aligned vectors (NV and the neighbours the
            # shifts reach), every tap's weight, one shifted tap.
            return RegisterBudget(spec.mr * nv, nv + 2 * self.reach_vectors(spec),
                                  spec.kh * spec.kw + 1, isa.num_vregs,
                                  input_name="input", broadcast_name="weight / tap")
        if spec.layout == "nchw":
            # MR x NV accumulators, a channel's NV pixel vectors, one weight.
            return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs,
                                  input_name="input", broadcast_name="weight broadcast")
        if spec.dilation == "1":
            return self._slide_budget(spec, self.hoists(spec))
        # A pixel group's NV accumulators each, a tap's NV weight vectors, NV input vectors.
        return RegisterBudget(self.group(spec) * nv, nv, nv, isa.num_vregs,
                              input_name="weight", broadcast_name="input")

    def budget_rule(self, spec) -> str:
        lanes = self.lanes(spec)
        if spec.layout == "nchw":
            return f"MR*NR/{lanes} + NR/{lanes} + 1"
        if spec.dilation == "1":
            return (f"rows*group*NR/{lanes} + columns*NR/{lanes} + NR/{lanes} (or KH*KW*NR/"
                    f"{lanes} hoisted; group: pixels per step, <= MR)")
        return f"group*NR/{lanes} + 2*NR/{lanes} (group: pixels per step, <= MR)"

    def lower(self, spec) -> DwconvPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        bases, rows = row_addressing(spec.mr)
        group = self.group(spec)
        gbases, grows = row_addressing(group)
        pbases, prows = row_addressing((group - 1) * spec.stride + spec.kw)
        if spec.layout == "nhwc":
            bases, rows = gbases, grows
        return DwconvPlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, nr=spec.nr,
            lanes=v.lanes, nv=spec.nr // v.lanes, kh=spec.kh, kw=spec.kw, stride=spec.stride,
            unroll_taps=spec.kh * spec.kw <= MAX_UNROLLED_TAPS, tail=spec.tail,
            row_bases=bases, row_addr=rows, isa=isa, v=v, budget=self.register_budget(spec),
            params_type=f"tg_{spec.dtype}_conv_params", layout=spec.layout, group=group,
            group_bases=gbases, slide=spec.dilation == "1", pos_bases=pbases, pos_addr=prows,
            out_rows=spec.out_rows, hoist=self.hoists(spec), tiling=spec.tiling,
            reach=self.reach_vectors(spec) if spec.tiling == "rows" else 0)

    @staticmethod
    def group(spec) -> int:
        """Pixels per step of a channels-last tile: enough accumulators (over its output
        rows) for FMA_CHAINS independent chains, dividing MR."""
        nv = spec.nr // get_isa(spec.isa).lanes(spec.dtype)
        want = max(1, -(-FMA_CHAINS // (nv * spec.out_rows)))
        return max(d for d in range(1, spec.mr + 1) if spec.mr % d == 0 and d <= want)

    @staticmethod
    def reach_vectors(spec) -> int:
        """Row tiles: vectors on each side of a tile's NV that its taps' shifts reach (tap kw
        of pixel q reads column q + kw - KW//2 of the centred row)."""
        lanes = get_isa(spec.isa).lanes(spec.dtype)
        return -(-(spec.kw // 2) // lanes)

    def _slide_budget(self, spec, hoisted: bool) -> RegisterBudget:
        """Unit dilation: a pixel group's accumulators (per output row), a filter row's input
        columns (each loaded once), one weight vector or (hoisted) every tap's."""
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        cols = (self.group(spec) - 1) * spec.stride + spec.kw
        return RegisterBudget(spec.out_rows * self.group(spec) * nv, cols * nv,
                              (spec.kh * spec.kw if hoisted else 1) * nv, isa.num_vregs,
                              input_name="input column", broadcast_name="weight")

    def hoists(self, spec) -> bool:
        """Unit-dilation kernels keep every tap's weights in registers when they fit beside
        the accumulators and a filter row's columns: a weight is loaded once per call, not
        once per pixel group and row."""
        if spec.dilation != "1" or spec.layout != "nhwc":
            return False
        budget = self._slide_budget(spec, True)
        return budget.used <= budget.available

    def pixel_step(self, spec) -> int:
        """What a tile of m < MR computes: channels-last tiles round_up(m, group) pixels (the
        reach the driver plans its border copies by); channel-first tiles are MR channels."""
        if spec.layout == "nchw":
            return 1 if spec.tiling == "rows" else spec.mr
        return self.group(spec)

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        if spec.layout == "nchw":
            return (f"void {spec.name}(int64_t, int64_t, const {t}* const*, int64_t, "
                    f"const {t}*, {t}*, int64_t, const tg_{spec.dtype}_conv_params*);")
        return (f"void {spec.name}(int64_t, int64_t, const {t}* const*, int64_t, int64_t, "
                f"const {t}*, {t}*, int64_t, int64_t, int64_t, "
                f"const tg_{spec.dtype}_conv_params*);")

    def c_row(self, entry) -> str:
        s = entry.spec
        nchw = s.layout == "nchw"
        layout = 2 if s.tiling == "rows" else int(nchw)
        return (f"TG_ISA_{s.isa.upper()}, {s.kh}, {s.kw}, {s.stride}, {layout}, "
                f"{int(s.dilation == '1')}, {s.out_rows}, {s.mr}, {s.nr}, {self.pixel_step(s)}, "
                f"{int(entry.production)}, {'NULL' if nchw else s.name}, "
                f"{s.name if nchw else 'NULL'}, \"{s.name}\"")

    def validate_registry(self, entries, where: str) -> None:
        """Per ISA and layout, production dwconv kernels share one NR (one weight packing)."""
        nrs: Dict[Tuple[str, str, str], set] = {}
        for e in entries:
            if e.production:
                nrs.setdefault((e.spec.dtype, e.spec.isa, e.spec.layout), set()).add(e.spec.nr)
        for (dtype, isa, _), group in nrs.items():  # noqa: B007
            if len(group) > 1:
                raise ValueError(f"{where}: production dwconv {dtype} kernels for {isa} have NR "
                                 f"values {sorted(group)}; allowed: one NR per ISA")


    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_KH": s.kh, "TG_KW": s.kw, "TG_S": s.stride,
                "TG_NCHW": int(s.layout == "nchw"), "TG_D1": int(s.dilation == "1"),
                "TG_STEP": self.pixel_step(s), "TG_ROWS": s.out_rows,
                "TG_ROW_TILES": int(s.tiling == "rows"), "TG_GROUP": self.group(s),
                "TG_REACH": self.reach_vectors(s) * self.lanes(s)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Channel-first: the tile's rows (channels, or output rows of row tiles) and pixels.
        Channels-last: pixels (per tile and per step), channels and output rows."""
        if s.layout == "nchw":
            return {"m": s.mr, "n": s.nr}
        return {"m": s.mr, "m_group": self.group(s), "n": s.nr, "rows": s.out_rows}

    def tester_clamps(self, s) -> Dict[str, Tuple[float, ...]]:
        return dict(ACT_CLAMPS)  # the activation is a run-time choice of every kernel


FAMILY = Dwconv()


# --- tilegen.dsl.compile: channel-first row tiles ("_nchw_rows") ---

ROWS_DRIVE = "tg_dsl_dwconv_rows_drive"


def _rows_driver(spec) -> str:
    """For each channel, tiles of MR output rows x NR pixels: x points at the tile's first
    input row, at the column of its first pixel's centre tap (aligned by the caller's layout)."""
    taps = spec.kh * spec.kw
    return f"""#include <stdint.h>
#include "tg_ukernels.h"

{FAMILY.c_declaration(spec)}

__attribute__((visibility("default"))) void {ROWS_DRIVE}(
    int64_t planes, int64_t oh, int64_t ow, const float* x, int64_t cs, int64_t rows_in,
    const float* w, float* y, int act) {{
  const tg_f32_conv_params params = {{act}};
  for (int64_t ch = 0; ch < planes; ch++)
    for (int64_t oy = 0; oy < oh; oy += {spec.mr})
      for (int64_t p0 = 0; p0 < ow; p0 += {spec.nr}) {{
        const float* taps[1] = {{x + (ch * rows_in + oy) * cs + p0}};
        {spec.name}(oh - oy < {spec.mr} ? oh - oy : {spec.mr},
                    ow - p0 < {spec.nr} ? ow - p0 : {spec.nr}, taps, cs, w + ch * {1 + taps},
                    y + (ch * oh + oy) * ow + p0, ow, &params);
      }}
}}
"""


def _rows_runner(spec, kernel):
    """The NumPy callable of a row-tile kernel: each channel plane zero-padded into rows of a
    whole number of vectors, the centre tap's column of pixel 0 on a 64-byte boundary."""
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    from .conv import ACTIVATIONS, act_code, conv_geometry

    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(ROWS_DRIVE, None, i64, i64, i64, vp, i64, i64, vp, vp, ctypes.c_int)
    kh, kw, lanes = spec.kh, spec.kw, FAMILY.lanes(spec)
    reach = FAMILY.reach_vectors(spec) * lanes
    centre = kw // 2
    lead = -(-max(reach + centre, 1) // 16) * 16  # the centre column: 16 floats = 64 bytes

    def call(x, w, bias=None, *, padding=0, dilation=1, act="none"):
        x = jit.check_array("x", x, "f32", 4)
        nb, c = x.shape[:2]
        w = jit.check_array("w", w, "f32", 3, shape=(c, kh, kw))
        if bias is not None:
            bias = jit.check_array("bias", bias, "f32", 1, shape=(c,))
        code = act_code(act)
        _, h, wd, oh, ow = conv_geometry(spec, x.shape, (kh, kw), padding, dilation, True)
        if dilation != 1:
            raise ValueError(f"dilation: {spec.name} is a unit-dilation kernel, got {dilation}")
        hp = h + 2 * padding
        cs = -(-(lead + max(-(-ow // spec.nr) * spec.nr + reach, wd + 2 * padding)) // 16) * 16
        raw = np.zeros(nb * c * hp * cs + 16, np.float32)
        start = (-raw.ctypes.data // 4) % 16   # the plane buffer on a 64-byte boundary
        planes = raw[start:start + nb * c * hp * cs].reshape(nb * c, hp, cs)
        first = lead - centre                  # padded column 0
        planes[:, padding:padding + h, first + padding:first + padding + wd] = \
            x.reshape(nb * c, h, wd)
        packed = np.zeros((c, 1 + kh * kw), np.float32)
        packed[:, 0] = 0 if bias is None else bias
        packed[:, 1:] = w.reshape(c, kh * kw)
        packed = np.ascontiguousarray(np.tile(packed, (nb, 1)))
        y = np.empty((nb, c, oh, ow), np.float32)
        drive(nb * c, oh, ow, planes.ctypes.data + lead * 4, cs, hp, packed.ctypes.data,
              y.ctypes.data, code)
        return y

    call.__doc__ = (
        f"{spec.name}: y = act(depthwise conv2d(x, w, stride 1, padding) + bias) of float32 "
        f"arrays x (N, C, H, W), w (C, {kh}, {kw}), y (N, C, OH, OW); bias (C,) optional; "
        f"keywords padding (zeros each side), dilation (1 only), act (one of "
        f"{', '.join(ACTIVATIONS)}). Each channel plane is zero-padded in NumPy into rows of a "
        f"whole number of vectors, then a C loop calls the micro-kernel on tiles of {spec.mr} "
        f"output rows x {spec.nr} pixels of each channel, edges too.")
    return call
