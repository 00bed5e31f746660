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
    c_row_doc = ("X(isa id, KH, KW, stride, fixed input channels (0: any), layout (0 nhwc, 1 "
                 "nchw), MR, NR, pixels per vector (channel-first tiles short of NR compute only the "
                 "vectors that hold their pixels), production, channels-last kernel or NULL, "
                 "channel-first kernel or NULL, \"name\")")

    def template_for(self, spec) -> str:
        return "conv/ukernel_nchw.c.j2" if spec.layout == "nchw" else self.template

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
