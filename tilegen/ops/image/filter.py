"""Image filters: the 1-D passes and the 2-D pass that separable and general filters are built of.

Images are interleaved H x W x C; a pass runs along one row of W*C values, so neighbours along
a row are `step` = C values apart and every kernel serves any channel count. The op token is
the pass (the kind):

  vfilt  u8:  out[x] = bias + sum_t coef[t] * rows[t][x]            u8 rows -> int16 (wrapping)
  vsum   u8:  out[x] = sum_t rows[t][x]                             u8 rows -> uint16
  vupd   u8:  out[x] = prev[x] + add[x] - sub[x]                    the next row's vsum (uint16)
  hfilt  u8:  S = sum_t coef[t] * in[x + t*step] (int16 in, 32-bit sums), then
              mode 0: sat_u8((S + add) >> 16), mode 1: sat_u8(round_even((S + add) * scale))
  hsum   u8:  s = sum_t in[x + t*step] (uint16), out = sat_u8(mulhi_u16(s + add, mul) >> shift)
  filt2d f32: out[r][x] = sum_i sum_j coef[i*kw + j] * rows[r + i][x + j*step], r < m <= MR
              (MR output rows share each loaded input vector: kh + MR - 1 row loads, not MR*kh)
  tof32  u8:  out[x] = (float) in[x]                               (filter2d's float rows)
  fround u8:  out[x] = round_even(clamp(in[x], 0, 255))            (filter2d's results)
  sharpen u8: d = in - blur; out = |d| > thr ? sat_u8(round_even(in + amount * d)) : in

GaussianBlur on uint8 is vfilt then hfilt in OpenCV's exact fixed point (8-bit coefficients
that sum to 256, the vertical sums kept biased by -32768 so that they fit int16; see
filters.c); box blur is vsum then hsum with OpenCV's division (box_divisor());
float32 runs every pass through filt2d (kw = 1 vertical, kh = 1 horizontal, or both).

A kernel computes NR values per block (tile MRxNR, NR a multiple of the vector width of its
working type: int16 for u8 passes, int32 for the element-wise ones, f32 for filt2d; MR = 1 except
for filt2d). Tails: a block that would run past n is
moved back to end at n (recomputing a few values: outputs never alias inputs), and n < NR goes
through zero-padded copies, one tap at a time. The `tail` field is not used.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from tilegen.dsl.isa import IntOps, Isa, VecOps, get_isa
from tilegen.dsl.lowering import Plan
from tilegen.dsl.family import OpFamily, RegisterBudget

KINDS: Tuple[str, ...] = ("vfilt", "vsum", "hfilt", "hsum", "filt2d", "tof32", "fround", "sharpen",
                          "vupd")
# The dtype each pass serves (the image's element type).
KIND_DTYPE = {"vfilt": "u8", "vsum": "u8", "hfilt": "u8", "hsum": "u8", "filt2d": "f32",
              "tof32": "u8", "fround": "u8", "sharpen": "u8", "vupd": "u8"}
# Element-wise kinds, lanes of i32 per vector.
_ELEMENTWISE = ("tof32", "fround", "sharpen")
# The C arguments of each pass (after its name), as the types template spells its typedef.
_ARGS = {
    "vfilt": "int64_t, int64_t, const uint8_t* const*, const int16_t*, int16_t, int16_t*",
    "vsum": "int64_t, int64_t, const uint8_t* const*, uint16_t*",
    "hfilt": "int64_t, int64_t, int64_t, const int16_t*, const int16_t*, uint8_t*, "
             "const tg_u8_hfilt_params*",
    "hsum": "int64_t, int64_t, int64_t, const uint16_t*, uint8_t*, const tg_u8_hsum_params*",
    "filt2d": "int64_t, int64_t, int64_t, int64_t, int64_t, const float* const*, const float*, "
              "float*, int64_t",
    "tof32": "int64_t, const uint8_t*, float*",
    "fround": "int64_t, const float*, uint8_t*",
    "sharpen": "int64_t, const uint8_t*, const uint8_t*, uint8_t*, const tg_u8_sharpen_params*",
    "vupd": "int64_t, const uint16_t*, const uint8_t*, const uint8_t*, uint16_t*",
}


def box_divisor(d: int) -> Tuple[int, int, int]:
    """(add, mul, shift) with min(255, ((s + add) * mul >> 16) >> shift) equal to OpenCV's
    normalised uint8 box result for every sum s of d pixels (2 <= d <= 256). OpenCV divides
    16-bit sums by d as ((s + dd) * ds) >> 23 with ds ~ 2^23/d and dd ~ d/2 (its rounding, which
    rounds some even-d ties up); the same answers come from a 16-bit multiply-high, found here
    and proven over every possible sum."""
    if not 2 <= d <= 256:
        raise ValueError(f"d: box areas 2..256 have 16-bit sums, got {d}")
    scale = (1 << 23) / d
    ds = int(scale)
    dd = d // 2
    if scale - ds < 0.5:
        dd += 1
    else:
        ds += 1
    import numpy as np

    t = np.arange(255 * d + 1, dtype=np.int64) + dd
    want = np.minimum(255, (t * ds) >> 23)
    for shift in range(9):
        base = (1 << (16 + shift)) // d
        for mul in (base, base + 1, base - 1, base + 2):
            if 0 < mul < 65536 and np.array_equal(
                    np.minimum(255, ((t * mul) >> 16) >> shift), want):
                return dd, mul, shift
    raise ValueError(f"d: no 16-bit divisor reproduces OpenCV's box rounding for {d}")


def _work_lanes(isa: Isa, kind: str) -> int:
    if kind in _ELEMENTWISE:
        return isa.lanes("i32")
    return isa.lanes("f32") if kind == "filt2d" else isa.lanes("i16")


@dataclass(frozen=True)
class FilterPlan(Plan):
    # lanes: values per vector of the working type (int16 or f32)
    kind: str
    nv: int                     # vectors per block
    f: VecOps                   # f32 spellings (filt2d, hfilt's float mode)
    i16: Optional[IntOps]       # int16 spellings (u8 kernels)
    i32: Optional[IntOps]       # int32 spellings (hfilt's sums)


class Filter(OpFamily):
    name = "filter"
    template = "filter/ukernel.c.j2"
    types_template = "filter/types.h.j2"
    vector_dim = "x"
    dtypes = ("u8", "f32")
    fields = {"kind": ("filt2d", KINDS)}
    c_select = "tg_filter_select"
    c_row_doc = "X(isa id, kind (TG_FILTER_KIND_*), MR, NR, production, kernel, \"name\")"

    def op_token(self, spec) -> str:
        return spec.kind

    def parse_op_token(self, token: str) -> Optional[Dict[str, Any]]:
        return {"kind": token} if token in KINDS else None

    def check(self, spec) -> None:
        if spec.dtype != KIND_DTYPE[spec.kind]:
            raise ValueError(f"dtype: {spec.kind} kernels take {KIND_DTYPE[spec.kind]} images, "
                             f"got {spec.dtype}")
        if spec.mr != 1 and spec.kind != "filt2d":
            raise ValueError(f"mr: {spec.kind} kernels compute one row (MR=1), got MR={spec.mr}")
        if spec.kr != 1:
            raise ValueError(f"kr: filter kernels take KR=1, got KR={spec.kr}")
        lanes = _work_lanes(get_isa(spec.isa), spec.kind)
        if spec.nr % lanes:
            raise ValueError(f"nr: NR={spec.nr} is not a multiple of the {spec.isa} vector "
                             f"width of {spec.kind} ({lanes} lanes)")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // _work_lanes(isa, spec.kind)
        # hfilt keeps two 32-bit accumulators per int16 vector and loads two taps at a time.
        acc, inputs = {"hfilt": (2 * nv, 2 * nv), "filt2d": (spec.mr * nv, nv)}.get(
            spec.kind, (nv, 1))
        return RegisterBudget(acc, inputs, 1, isa.num_vregs, input_name="input",
                              broadcast_name="coefficient")

    def budget_rule(self, spec) -> str:
        lanes = _work_lanes(get_isa(spec.isa), spec.kind)
        return {"hfilt": f"4*NR/{lanes} + 1", "filt2d": f"(MR+1)*NR/{lanes} + 1"}.get(
            spec.kind, f"NR/{lanes} + 2")

    def lower(self, spec) -> FilterPlan:
        isa = get_isa(spec.isa)
        lanes = _work_lanes(isa, spec.kind)
        ints = spec.dtype == "u8"
        return FilterPlan(
            name=spec.name, kind=spec.kind, dtype=spec.dtype, mr=spec.mr, nr=spec.nr, lanes=lanes,
            nv=spec.nr // lanes, isa=isa, f=isa.vec("f32"),
            i16=isa.ints("i16") if ints else None, i32=isa.ints("i32") if ints else None,
            budget=self.register_budget(spec))

    def c_declaration(self, spec) -> str:
        return f"void {spec.name}({_ARGS[spec.kind]});"

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, TG_FILTER_KIND_{s.kind.upper()}, {s.mr}, {s.nr}, "
                f"{int(entry.production)}, (tg_filter_any_fn) {s.name}, \"{s.name}\"")

    def validate_registry(self, entries, where: str) -> None:
        """Every ISA with filter kernels has a production kernel of every pass (the driver
        takes one ISA's set whole), and the portable ISA has them all."""
        if not entries:
            return
        isas = {e.spec.isa for e in entries} | {"scalar"}
        for isa in sorted(isas):
            have = {e.spec.kind for e in entries if e.production and e.spec.isa == isa}
            missing = [k for k in KINDS if k not in have]
            if missing:
                raise ValueError(f"{where}: filter kernels for {isa} lack a production "
                                 f"kernel of {', '.join(missing)}")

    def c_constants(self) -> str:
        """TG_FILTER_BOX_DIVISORS(X): X(d, add, mul, shift) for box areas d = 2..256."""
        return _box_divisor_macro()

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_KIND": f"TG_FILTER_KIND_{s.kind.upper()}", "TG_MR": s.mr, "TG_NR": s.nr}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Values per block along the row; hfilt's taps, taken two at a time; filt2d's rows."""
        return {"x": s.nr, **({"taps": 2} if s.kind == "hfilt" else {}),
                **({"m": s.mr} if s.kind == "filt2d" else {})}


@functools.lru_cache(maxsize=None)
def _box_divisor_macro() -> str:
    rows = [f"  X({d}, {a}, {m}, {s}) \\" for d in range(2, 257) for a, m, s in [box_divisor(d)]]
    return "#define TG_FILTER_BOX_DIVISORS(X) \\\n" + "\n".join(rows) + "\n"


FAMILY = Filter()
