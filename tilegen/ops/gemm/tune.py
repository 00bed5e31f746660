"""The gemm op's tune plug-in (interface: tilegen/ops/plugins.py). Per dtype, in order:

1. the main tile of each A layout, among the registry's production kernels of the ISA in use
   (the C side lists them: gemm_config's kernels; the driver keeps one non-default main tile
   per dtype, of either layout);
2. KC (the depth of a packed block), then NC (the width of a packed B block), on squares, a
   deep product, an M=16 product and a column-major A;
3. the stream rows: how many rows of an A streamed from beyond L2 one kernel call reads at once
   (each a prefetch stream; what a core follows well differs most between Intel and AMD), on a
   product with 16 columns;
4. the b-inner rows: up to how many rows of C a B beyond L2 is read one column panel at a time
   for all the rows instead of blocked, on 16 to 128 rows times a B read from memory and times
   a transformer layer's B (768x3072, between L2 and memory), which the b-inner order must not
   slow (AMD Zen 4: 48 rows gained 3% on 16x4096x4096 and lost 20% on 16x768x3072).

Then the bfloat16 kernel (bf16 @ bf16, float32 sums) and the int8 kernel (int8 @ int8, int32
sums), each among the registered kernels of the ISA that serves it (tiles differ in how many
zmm accumulators they keep and how far B streams), on squares and an M=16 product. Their
blocking derives from the caches as float32's does.

Cache keys: <dtype>_kernel, <dtype>_kc, <dtype>_nc, <dtype>_stream_rows, <dtype>_b_inner_rows
for f32 and f64; bf16_kernel; s8_kernel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Tuple

import numpy as np

from tilegen.ops.plugins import Knob, TuneCase

from . import _gemm

DTYPES = {"f32": np.float32, "f64": np.float64}
_MAX = {"kc": 1 << 16, "nc": 1 << 24, "stream_rows": 64, "b_inner_rows": _gemm.B_INNER_ROWS_MAX}


def _config(dtype: str) -> Dict[str, Any]:
    c = _gemm.gemm_config(DTYPES[dtype])
    return {"kc": int(c["kc"]), "nc": int(c["nc"]), "nr": int(c["nr"]),
            "rows": c["rows"]["kernel"], "packed": c["packed"]["kernel"],
            "stream_rows": int(c["stream_rows"]), "b_inner_rows": int(c["b_inner_rows"])}


# The built-in configuration, as the dispatcher chose it before any cache was applied (this
# module is imported before `import tilegen` applies a cache).
BUILTIN = {dt: _config(dt) for dt in DTYPES}


def _setter(dtype: str, what: str):
    dt, base = DTYPES[dtype], BUILTIN[dtype]

    def apply(value) -> None:
        if what == "kernel":
            _gemm.set_gemm_kernel(dt, value or base["rows"] or base["packed"])
        elif what in ("kc", "nc"):
            v = int(value or base[what])
            _gemm.set_gemm_blocking(dt, v if what == "kc" else 0, v if what == "nc" else 0)
        elif what == "stream_rows":
            _gemm.set_gemm_stream_rows(dt, int(value or 0))
        else:
            _gemm.set_gemm_b_inner_rows(dt, int(value or 0))
    return apply


KEYS = {f"{dt}_{what}": (dt, what) for dt in DTYPES
        for what in ("kernel", "kc", "nc", "stream_rows", "b_inner_rows")}


def _bf16_operands(rng, m: int, k: int, n: int):
    from .api import _bf16_dtype

    bf = _bf16_dtype()
    return (rng.uniform(-1, 1, (m, k)).astype(bf), rng.uniform(-1, 1, (k, n)).astype(bf),
            np.zeros((m, n), np.float32))


def _s8_operands(rng, m: int, k: int, n: int):
    return (rng.integers(-128, 128, (m, k)).astype(np.int8),
            rng.integers(-128, 128, (k, n)).astype(np.int8), np.zeros((m, n), np.int32))


@dataclass(frozen=True)
class LowPrecision:
    """A low-precision product's kernel knob: _gemm's functions for it, and a case's operands."""

    label: str
    kernel: Callable[[], str]
    kernels: Callable[[], List[str]]
    set_kernel: Callable[[Any], None]
    into: Callable[..., None]
    operands: Callable[..., tuple]


LOWP = {
    "bf16": LowPrecision("bf16 tile", _gemm.bf16_kernel, _gemm.bf16_kernels,
                         _gemm.set_bf16_kernel, _gemm.gemm_bf16_into, _bf16_operands),
    "s8": LowPrecision("int8 tile", _gemm.s8_kernel, _gemm.s8_kernels, _gemm.set_s8_kernel,
                       _gemm.gemm_s8_into, _s8_operands),
}
LOWP_BUILTIN = {dt: lp.kernel() for dt, lp in LOWP.items()}
KEYS.update({f"{dt}_kernel": (dt, "kernel") for dt in LOWP})


def apply(values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        if key not in KEYS:
            raise ValueError(f"gemm: {key!r} is not a knob; allowed: {', '.join(KEYS)}")
        what = KEYS[key][1]
        if what == "kernel" and not isinstance(value, str):
            raise ValueError(f"gemm: {key} must be a kernel name, got {value!r}")
        if what != "kernel" and (type(value) is not int or not 0 < value <= _MAX[what]):
            raise ValueError(f"gemm: {key} is {value!r}; expected an integer in 1..{_MAX[what]}")
    for key, (dt, what) in KEYS.items():
        if dt in LOWP:
            LOWP[dt].set_kernel(values.get(key) or None)
        elif what != "nc":  # NC after KC: blocking is set as a pair
            _setter(dt, what)(values.get(key))
    for dt in DTYPES:
        _setter(dt, "nc")(values.get(f"{dt}_nc"))


@dataclass(frozen=True)
class Product:
    label: str
    m: int
    k: int
    n: int
    a_order: str = "C"  # "F": column-major A, which runs the packed A layout


@dataclass(frozen=True)
class Plan:
    products: Tuple[Product, ...]
    kc: Tuple[int, ...]
    nc: Tuple[int, ...]
    streamed: Tuple[Product, ...]
    streams: Tuple[int, ...]
    few_rows: Tuple[Product, ...]
    b_inner: Tuple[int, ...]


MID_B = tuple(Product(f"{m}x768x3072 (mid B)", m, 768, 3072) for m in (16, 128))
FULL = Plan(
    products=(Product("512x512x512", 512, 512, 512), Product("1024x1024x1024", 1024, 1024, 1024),
              Product("1024x2048x1024 (deep)", 1024, 2048, 1024),
              Product("16x1024x1024", 16, 1024, 1024),
              Product("512x512x512 (A col-major)", 512, 512, 512, "F")),
    kc=(128, 256, 384, 512, 768, 1024, 1536, 2048), nc=(256, 512, 1024, 2048, 4096),
    streamed=(Product("4096x4096x16 (A streamed)", 4096, 4096, 16),), streams=(4, 8, 12, 16, 32),
    few_rows=tuple(Product(f"{m}x4096x4096 (big B)", m, 4096, 4096) for m in (16, 32, 64, 128))
    + MID_B,
    b_inner=(1, 16, 32, 64, 128))
QUICK = Plan(
    products=(Product("256x256x256", 256, 256, 256), Product("512x512x512", 512, 512, 512),
              Product("16x512x512", 16, 512, 512),
              Product("256x256x256 (A col-major)", 256, 256, 256, "F")),
    kc=(128, 256, 384), nc=(512, 1024, 2048),
    streamed=(Product("2048x2048x16 (A streamed)", 2048, 2048, 16),), streams=(4, 8, 16),
    few_rows=tuple(Product(f"{m}x4096x4096 (big B)", m, 4096, 4096) for m in (16, 64)),
    b_inner=(1, 32, 96))


def _case(dtype: str, p: Product) -> TuneCase:
    def make():
        rng = np.random.default_rng(7)
        t = DTYPES[dtype]
        a = rng.uniform(-1, 1, (p.m, p.k)).astype(t)
        if p.a_order == "F":
            a = np.asfortranarray(a)
        b = rng.uniform(-1, 1, (p.k, p.n)).astype(t)
        c = np.zeros((p.m, p.n), t)
        return lambda: _gemm.matmul(a, b, out=c)
    return TuneCase(f"{dtype} {p.label}", 2.0 * p.m * p.k * p.n, make)


def _lowp_case(dtype: str, p: Product) -> TuneCase:
    def make():
        a, b, c = LOWP[dtype].operands(np.random.default_rng(7), p.m, p.k, p.n)
        return lambda: LOWP[dtype].into(a, b, c)
    return TuneCase(f"{dtype} {p.label}", 2.0 * p.m * p.k * p.n, make)


def _tiles(dtype: str) -> List[str]:
    """Main-tile candidates: each A layout's production kernels of the layout's NR (not the
    narrow set), tallest first, single-row kernels left out (they are the GEMV-like remainder)."""
    from tilegen.dsl.spec import parse_name

    cfg = _gemm.gemm_config(DTYPES[dtype])
    out = []
    for layout in ("rows", "packed"):
        names = [n for n in dict.fromkeys(cfg[layout]["kernels_by_rows"]) if n]
        names = [n for n in names if parse_name(n)["mr"] > 1]
        out += sorted(names, key=lambda n: -parse_name(n)["mr"])[1:]  # the tallest is built in
    return out


def knobs(quick: bool) -> List[Knob]:
    from tilegen.dsl.spec import parse_name

    plan = QUICK if quick else FULL
    out = []
    for dt in DTYPES:
        base = BUILTIN[dt]
        products = [_case(dt, p) for p in plan.products]
        nr = base["nr"]
        def tile(name: str) -> str:
            f = parse_name(name)
            return f"{f['mr']}x{f['nr']} {f.get('a_layout', 'packed')}"
        out += [
            Knob(f"{dt}_kernel", f"{dt} main tile", lambda chosen, dt=dt: _tiles(dt),
                 _setter(dt, "kernel"), products, show=tile,
                 builtin_label=f"{tile(base['rows'] or base['packed'])} (built-in)"),
            Knob(f"{dt}_kc", f"{dt} KC", lambda chosen, p=plan, b=base: [
                k for k in p.kc if k != b["kc"]], _setter(dt, "kc"), products,
                builtin_label=f"{base['kc']} (built-in)"),
            Knob(f"{dt}_nc", f"{dt} NC", lambda chosen, p=plan, b=base, nr=nr: [
                n for n in sorted({max(nr, n // nr * nr) for n in p.nc}) if n != b["nc"]],
                _setter(dt, "nc"), products, builtin_label=f"{base['nc']} (built-in)"),
            Knob(f"{dt}_stream_rows", f"{dt} stream rows", lambda chosen, p=plan, b=base: [
                r for r in p.streams if r != b["stream_rows"]], _setter(dt, "stream_rows"),
                [_case(dt, p) for p in plan.streamed],
                builtin_label=f"{base['stream_rows']} (built-in)"),
            Knob(f"{dt}_b_inner_rows", f"{dt} b-inner rows", lambda chosen, p=plan, b=base: [
                r for r in p.b_inner if r != b["b_inner_rows"]], _setter(dt, "b_inner_rows"),
                [_case(dt, p) for p in plan.few_rows],
                builtin_label=f"{base['b_inner_rows']} (built-in)"),
        ]
    for dt, lp in LOWP.items():
        out.append(Knob(f"{dt}_kernel", lp.label, lambda chosen, lp=lp, dt=dt: [
            n for n in lp.kernels() if n != LOWP_BUILTIN[dt]],
            lambda value, lp=lp: lp.set_kernel(value or None),
            [_lowp_case(dt, p) for p in plan.products if p.a_order == "C"],
            show=lambda name: name.split("__")[0].rsplit("_", 1)[-1],
            builtin_label=f"{LOWP_BUILTIN[dt]} (built-in)"))
    return out


def check() -> None:
    """The configuration in force computes right (edge tiles, several K blocks, both A orders)."""
    rng = np.random.default_rng(11)
    for dtype, t in DTYPES.items():
        for m, k, n in ((1, 7, 5), (17, 300, 45), (130, 777, 259), (40, 2500, 70)):
            for order in ("C", "F"):
                a = np.asarray(rng.uniform(-1, 1, (m, k)), t, order=order)
                b = rng.uniform(-1, 1, (k, n)).astype(t)
                want = a.astype(np.float64) @ b.astype(np.float64)
                scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
                tol = (2e-5 if dtype == "f32" else 1e-12) * math.sqrt(k)
                if not np.all(np.abs(_gemm.matmul(a, b) - want) <= tol * (scale + 1)):
                    raise RuntimeError(f"the tuned {dtype} gemm configuration gives wrong results "
                                       f"for {m}x{k}x{n} ({order}-ordered A); not stored")
    from .api import _bf16_dtype

    bf = _bf16_dtype()
    for m, k, n in ((1, 7, 5), (17, 300, 45), (130, 777, 259)):
        a = rng.integers(-8, 8, (m, k)).astype(bf)
        b = rng.integers(-8, 8, (k, n)).astype(bf)
        c = np.zeros((m, n), np.float32)
        _gemm.gemm_bf16_into(a, b, c)
        if not np.array_equal(c, a.astype(np.float32) @ b.astype(np.float32)):  # exact: small ints
            raise RuntimeError(f"the tuned bf16 gemm kernel gives wrong results for {m}x{k}x{n}; "
                               "not stored")
    for m, k, n in ((1, 7, 5), (17, 300, 45), (130, 777, 259)):
        a8 = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b8 = rng.integers(-128, 128, (k, n)).astype(np.int8)
        c8 = np.zeros((m, n), np.int32)
        _gemm.gemm_s8_into(a8, b8, c8)
        if not np.array_equal(c8, a8.astype(np.int64) @ b8.astype(np.int64)):  # exact
            raise RuntimeError(f"the tuned int8 gemm kernel gives wrong results for {m}x{k}x{n}; "
                               "not stored")
