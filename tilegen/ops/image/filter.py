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

    example_dims = (("n", 1 << 16),)

    def python_call(self, spec, kernel):
        return _python_call(spec, kernel)

    def python_driver(self, spec) -> str:
        return _python_driver(spec)

    def python_example(self, spec, dims, rng):
        return _python_example(spec, dims, rng)

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


# --- tilegen.dsl.compile: one pass over NumPy rows ---

DRIVE = "tg_dsl_filt2d_drive"


def _row(jit, name, x, dtype, n=None):
    """A 1-D array of `dtype` (a NumPy dtype name for the unsigned 16-bit rows jit does not
    list), contiguous; ValueError / TypeError naming it."""
    import numpy as np

    if dtype == "u16":
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{name}: expected a numpy.ndarray, got {type(x).__name__}")
        if x.dtype != np.uint16:
            raise TypeError(f"{name}: expected dtype uint16, got {x.dtype}")
        if x.ndim != 1 or (n is not None and x.shape[0] != n):
            raise ValueError(f"{name}: expected shape ({n if n is not None else 'n'},), "
                             f"got {x.shape}")
    else:
        x = jit.check_array(name, x, dtype, 1, shape=None if n is None else (n,))
    if x.shape[0] > 1 and x.strides[0] != x.itemsize:
        raise ValueError(f"{name}: must be contiguous; pass numpy.ascontiguousarray({name})")
    return x


def _python_call(spec, kernel):
    """The callable of one pass (each kind's docstring below)."""
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    kind, i64, vp = spec.kind, ctypes.c_int64, ctypes.c_void_p
    P = ctypes.POINTER

    def rows_of(name, rows):
        rows = jit.check_array(name, rows, "u8", 2)
        if rows.shape[0] < 1:
            raise ValueError(f"{name}: expected at least one row (tap), got shape {rows.shape}")
        ptrs = (vp * rows.shape[0])(*[rows.ctypes.data + t * rows.strides[0]
                                      for t in range(rows.shape[0])])
        return rows, ptrs

    if kind == "filt2d":
        drive = kernel.symbol(DRIVE, None, i64, i64, i64, i64, i64, vp, i64, vp, vp)

        def call(x, coef, *, step=1):
            x = jit.check_array("x", x, "f32", 2)
            coef = np.ascontiguousarray(jit.check_array("coef", coef, "f32", 2))
            if not isinstance(step, int) or step < 1:
                raise ValueError(f"step: expected an integer >= 1, got {step!r}")
            kh, kw = coef.shape
            m, n = x.shape[0] - kh + 1, x.shape[1] - (kw - 1) * step
            if kh < 1 or kw < 1 or m < 1 or n < 1:
                raise ValueError(f"coef: a {coef.shape} filter (step {step}) does not fit "
                                 f"x of shape {x.shape}")
            out = np.empty((m, n), np.float32)
            drive(m, n, kh, kw, step, x.ctypes.data, jit.row_stride(x), coef.ctypes.data,
                  out.ctypes.data)
            return out
        what = ("out[r, x] = sum_i sum_j coef[i, j] * x[r + i, x + j*step] (a valid 2-D "
                "correlation along rows of W*C values, neighbours step = C apart) of float32 x "
                f"(H, W*C) and coef (KH, KW); a C loop calls the kernel on {spec.mr} output "
                "rows at a time")
    elif kind == "vfilt":
        fn = kernel.function(None, i64, i64, vp, vp, ctypes.c_int16, vp)

        def call(rows, coef, bias=0):
            rows, ptrs = rows_of("rows", rows)
            coef = np.ascontiguousarray(jit.check_array("coef", coef, "i16", 1,
                                                        shape=(rows.shape[0],)))
            out = np.empty(rows.shape[1], np.int16)
            fn(rows.shape[1], rows.shape[0], ptrs, coef.ctypes.data, bias, out.ctypes.data)
            return out
        what = ("out[x] = bias + sum_t coef[t] * rows[t, x] in wrapping int16, of uint8 rows "
                "(taps, n), int16 coef (taps,) and bias")
    elif kind == "vsum":
        fn = kernel.function(None, i64, i64, vp, vp)

        def call(rows):
            rows, ptrs = rows_of("rows", rows)
            out = np.empty(rows.shape[1], np.uint16)
            fn(rows.shape[1], rows.shape[0], ptrs, out.ctypes.data)
            return out
        what = "out[x] = sum_t rows[t, x] (uint16) of uint8 rows (taps, n)"
    elif kind == "vupd":
        fn = kernel.function(None, i64, vp, vp, vp, vp)

        def call(prev, add, sub):
            prev = _row(jit, "prev", prev, "u16")
            n = prev.shape[0]
            add, sub = _row(jit, "add", add, "u8", n), _row(jit, "sub", sub, "u8", n)
            out = np.empty(n, np.uint16)
            fn(n, prev.ctypes.data, add.ctypes.data, sub.ctypes.data, out.ctypes.data)
            return out
        what = ("out = prev + add - sub (uint16, wrapping) of uint16 prev and uint8 add, sub "
                "(n,): the next row's vertical box sum")
    elif kind == "hfilt":
        class Params(ctypes.Structure):
            _fields_ = [("add", ctypes.c_int32), ("scale", ctypes.c_float),
                        ("mode", ctypes.c_int32)]
        fn = kernel.function(None, i64, i64, i64, vp, vp, vp, P(Params))

        def call(x, coef, *, step=1, add=0, scale=None):
            x = _row(jit, "x", x, "i16")
            coef = _row(jit, "coef", coef, "i16")
            taps = coef.shape[0]
            if not isinstance(step, int) or step < 1:
                raise ValueError(f"step: expected an integer >= 1, got {step!r}")
            n = x.shape[0] - (taps - 1) * step
            if taps < 1 or n < 1:
                raise ValueError(f"x: {x.shape[0]} values are fewer than {taps} taps at step "
                                 f"{step} need")
            padded = np.zeros(taps + taps % 2, np.int16)  # taps rounded up to even, zero
            padded[:taps] = coef
            p = Params(add, 0.0 if scale is None else scale, 0 if scale is None else 1)
            out = np.empty(n, np.uint8)
            fn(n, taps, step, x.ctypes.data, padded.ctypes.data, out.ctypes.data,
               ctypes.byref(p))
            return out
        what = ("S = sum_t coef[t] * x[i + t*step] (32-bit) of int16 x and coef (taps,), then "
                "sat_u8((S + add) >> 16), or with scale= sat_u8(round_even(float32(S + add) * "
                "scale)); n = len(x) - (taps-1)*step values")
    elif kind == "hsum":
        class Params(ctypes.Structure):
            _fields_ = [("add", ctypes.c_uint16), ("mul", ctypes.c_uint16),
                        ("shift", ctypes.c_int32)]
        fn = kernel.function(None, i64, i64, i64, vp, vp, P(Params))

        def call(x, taps, *, step=1, divisor=None):
            x = _row(jit, "x", x, "u16")
            if not isinstance(taps, int) or taps < 1:
                raise ValueError(f"taps: expected an integer >= 1, got {taps!r}")
            if not isinstance(step, int) or step < 1:
                raise ValueError(f"step: expected an integer >= 1, got {step!r}")
            n = x.shape[0] - (taps - 1) * step
            if n < 1:
                raise ValueError(f"x: {x.shape[0]} values are fewer than {taps} taps at step "
                                 f"{step} need")
            add, mul, shift = box_divisor(taps) if divisor is None else divisor
            p = Params(add, mul, shift)
            out = np.empty(n, np.uint8)
            fn(n, taps, step, x.ctypes.data, out.ctypes.data, ctypes.byref(p))
            return out
        what = ("s = sum_t x[i + t*step] of uint16 x, then min(255, mulhi_u16(s + add, mul) >> "
                "shift) with divisor=(add, mul, shift), by default box_divisor(taps): the "
                "rounded mean (OpenCV's); n = len(x) - (taps-1)*step values")
    elif kind == "tof32":
        fn = kernel.function(None, i64, vp, vp)

        def call(x):
            x = _row(jit, "x", x, "u8")
            out = np.empty(x.shape[0], np.float32)
            fn(x.shape[0], x.ctypes.data, out.ctypes.data)
            return out
        what = "out = float32(x) of uint8 x (n,)"
    elif kind == "fround":
        fn = kernel.function(None, i64, vp, vp)

        def call(x):
            x = _row(jit, "x", x, "f32")
            out = np.empty(x.shape[0], np.uint8)
            fn(x.shape[0], x.ctypes.data, out.ctypes.data)
            return out
        what = "out = round_even(clip(x, 0, 255)) as uint8 of float32 x (n,)"
    else:  # sharpen
        class Params(ctypes.Structure):
            _fields_ = [("amount", ctypes.c_float), ("threshold", ctypes.c_int32)]
        fn = kernel.function(None, i64, vp, vp, vp, P(Params))

        def call(x, blur, *, amount, threshold=0):
            x = _row(jit, "x", x, "u8")
            blur = _row(jit, "blur", blur, "u8", x.shape[0])
            p = Params(amount, int(np.floor(threshold)))
            out = np.empty(x.shape[0], np.uint8)
            fn(x.shape[0], x.ctypes.data, blur.ctypes.data, out.ctypes.data, ctypes.byref(p))
            return out
        what = ("d = x - blur; out = |d| > threshold ? sat_u8(round_even(x + amount * d)) : x "
                "of uint8 x, blur (n,) (the product may be fused)")
    if kind != "filt2d":
        raw = fn

        def fn(n, *args):  # noqa: F811 -- the calls above find this one: an empty row runs nothing
            if n > 0:
                raw(n, *args)
    call.__doc__ = f"{spec.name}: {what}."
    return call


def _python_driver(spec) -> str:
    """filt2d's loop over MR output rows at a time (row pointers into x)."""
    if spec.kind != "filt2d":
        return ""
    return f"""#include <stdint.h>
#include "tg_ukernels.h"

{FAMILY.c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t m, int64_t n, int64_t kh, int64_t kw, int64_t step, const float* x, int64_t rs,
    const float* coef, float* out) {{
  const float* rows[{spec.mr} + 64];
  for (int64_t r0 = 0; r0 < m; r0 += {spec.mr}) {{
    const int64_t mi = m - r0 < {spec.mr} ? m - r0 : {spec.mr};
    for (int64_t t = 0; t < mi + kh - 1; t++) rows[t] = x + (r0 + t) * rs;
    {spec.name}(mi, n, kh, kw, step, rows, coef, out + r0 * n, n);
  }}
}}
"""


def _python_example(spec, dims, rng):
    """A row of n values (filt2d: about n output values, rows of 256 pixels x 3 channels, a 5x5
    filter)."""
    import numpy as np

    from tilegen.dsl import jit

    n = dims[0]
    kind = spec.kind
    u8 = lambda *s: rng.integers(0, 256, s, dtype=np.uint8)  # noqa: E731
    kw, work = {}, float(n)
    if kind == "filt2d":
        m, w = -(-n // 768), min(n, 768)
        x = rng.standard_normal((m + 4, w + 12)).astype(np.float32)
        coef = rng.standard_normal((5, 5)).astype(np.float32)
        args, kw = (x, coef), {"step": 3}
        want = np.zeros((m, w))
        for i in range(5):
            for j in range(5):
                want += coef[i, j] * x[i:i + m, 3 * j:3 * j + w].astype(np.float64)
        work = 2.0 * 25 * want.size
        eps = float(np.finfo(np.float32).eps)
        return jit.Example(args=args, kwargs=kw, expected=want.astype(np.float32), work=work,
                           unit="flop", shape=str(n), rtol=0.0,
                           atol=64 * eps * float(np.abs(x).max() * np.abs(coef).max()))
    if kind in ("vfilt", "vsum"):
        rows = u8(5, n)
        if kind == "vfilt":
            coef = rng.integers(-256, 257, 5).astype(np.int16)
            args = (rows, coef, 7)
            want = (7 + (coef[:, None].astype(np.int64) * rows).sum(0)).astype(np.int16)
        else:
            args, want = (rows,), rows.astype(np.uint16).sum(0, dtype=np.uint16)
        work = 6.0 * n
    elif kind == "vupd":
        prev = rng.integers(0, 2000, n).astype(np.uint16)
        add, sub = u8(n), u8(n)
        args, want = (prev, add, sub), prev + add.astype(np.uint16) - sub
        work = 6.0 * n
    elif kind == "hfilt":
        x = rng.integers(-2000, 2000, n + 4).astype(np.int16)
        coef = rng.integers(0, 256, 5).astype(np.int16)
        s = sum(coef[t].astype(np.int64) * x[t:t + n] for t in range(5))
        args, kw = (x, coef), {"add": 1 << 15}
        want = np.clip((s + (1 << 15)) >> 16, 0, 255).astype(np.uint8)
        work = 3.0 * n
    elif kind == "hsum":
        x = rng.integers(0, 256, n + 2).astype(np.uint16)
        args = (x, 3)
        add, mul, shift = box_divisor(3)  # the divisor's formula (box_divisor proves it)
        s = x[:n].astype(np.int64) + x[1:n + 1] + x[2:]
        want = np.minimum(255, ((s + add) * mul >> 16) >> shift).astype(np.uint8)
        work = 3.0 * n
    elif kind == "tof32":
        x = u8(n)
        args, want, work = (x,), x.astype(np.float32), 5.0 * n
    elif kind == "fround":
        x = (rng.standard_normal(n) * 200 + 128).astype(np.float32)
        args, want, work = (x,), np.rint(np.clip(x, 0, 255)).astype(np.uint8), 5.0 * n
    else:
        x, blur = u8(n), u8(n)
        d = x.astype(np.int64) - blur
        sharp = np.clip(np.rint(x + 1.5 * d), 0, 255)  # 1.5 * d is exact in float32
        args, kw = (x, blur), {"amount": 1.5, "threshold": 4}
        want = np.where(np.abs(d) > 4, sharp, x).astype(np.uint8)
        work = 3.0 * n
    return jit.Example(args=args, kwargs=kw, expected=want, work=work, unit="byte",
                       shape=str(n), rtol=0.0)
