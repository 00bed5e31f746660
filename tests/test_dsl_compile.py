"""tilegen.dsl.compile: a spec compiled from Python, called on NumPy arrays and checked against
NumPy; the kernel cache; the errors (an ISA this machine lacks, no compiler, bad arrays); the
builder of every family; `tilegen emit --compile --bench`.

Kernels are compiled into one temporary cache for the session (few, small tiles), so the file
stays fast; the scalar ISA always runs, AVX2 and AVX-512 where the CPU has them."""
import os

import numpy as np
import pytest

from tilegen import dsl
from tilegen.dsl import FAMILIES, jit, load_registry
from tilegen.dsl.builder import op
from tilegen.dsl.isa import ISAS, get_isa, host_arch
from tilegen.tools.cli import main

USABLE = jit.usable_isas()
RNG = np.random.default_rng(38)


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("kernel-cache")


@pytest.fixture(autouse=True)
def cache(cache_root, monkeypatch):
    """Every compile of the session goes to one temporary cache (TILEGEN_CACHE_DIR)."""
    monkeypatch.setenv("TILEGEN_CACHE_DIR", str(cache_root))
    return cache_root


def isa_param(name):
    """pytest param of an ISA, skipped with the reason when this machine cannot run it."""
    ok = USABLE.get(name, False)
    return pytest.param(name, marks=pytest.mark.skipif(
        not ok, reason=f"this CPU (or OS) lacks {name} ({', '.join(get_isa(name).requires)})"))


X86 = [isa_param(n) for n in ("scalar", "avx2", "avx512")]


def lanes(isa, dtype="f32"):
    return get_isa(isa).lanes(dtype)


def close(got, want, depth=1):
    eps = np.finfo(got.dtype).eps
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=8 * eps * max(depth, 1) * scale)


# --- each family's callable against NumPy ---

@pytest.mark.parametrize("isa", X86)
def test_gemm_tiles_a_whole_product(isa):
    """Edge tiles in both directions (7 x 19 is no multiple of the tile), bias + relu fused."""
    k = dsl.compile(op("gemm", "f32").tile(m=3, n=2 * lanes(isa)).epilogue("bias", "relu")
                    .target(isa))
    a, b = RNG.standard_normal((7, 13), np.float32), RNG.standard_normal((13, 19), np.float32)
    bias = RNG.standard_normal(19).astype(np.float32)
    got = k(a, b, bias=bias)
    close(got, np.maximum(a.astype(np.float64) @ b + bias, 0), 13)
    assert "C = act(alpha * A @ B" in k.__doc__


def test_gemm_alpha_beta_rows_layout_f64_and_strided_views():
    k = dsl.compile({"op": "gemm", "dtype": "f64", "isa": "scalar", "tile": "2x3",
                     "a_layout": "rows", "unroll": 2})
    a = RNG.standard_normal((5, 20))[:, ::2].copy()
    b_big = RNG.standard_normal((10, 16))
    b = b_big[:, 3:10]          # a row stride of 16, not 7
    c = RNG.standard_normal((5, 7))
    got = k(a, b, c, alpha=0.5, beta=-2.0)
    close(got, 0.5 * a @ b - 2.0 * c, 10)
    assert np.shares_memory(b, b_big) and not np.shares_memory(got, c)
    close(k(np.zeros((3, 0)), np.zeros((0, 4))), np.zeros((3, 4)))


@pytest.mark.parametrize("isa", X86)
def test_gemv_both_forms(isa):
    w = lanes(isa)
    dot = dsl.compile(op("gemv", "f32").tile(m=3, n=1, k=w).target(isa))
    a = RNG.standard_normal((11, 2 * w + 3), np.float32)
    x = RNG.standard_normal(a.shape[1], np.float32)
    y = RNG.standard_normal(11, np.float32)
    close(dot(a, x, y, alpha=2.0, beta=0.5), 2.0 * a.astype(np.float64) @ x + 0.5 * y, a.shape[1])
    axpy = dsl.compile(op("gemv", "f32").tile(m=1, n=2 * w, k=2).target(isa))
    x2 = RNG.standard_normal(11, np.float32)
    close(axpy(a, x2), x2.astype(np.float64) @ a, 11)


@pytest.mark.parametrize("isa", X86)
def test_vector_families(isa):
    w = lanes(isa)
    n = 5 * w + 3
    x, y = RNG.standard_normal(n, np.float32), RNG.standard_normal(n, np.float32)
    dot = dsl.compile(op("blasdot", "f32").tile(m=1, n=2 * w).target(isa))
    close(np.float32(dot(x, y)), np.float32(np.dot(x.astype(np.float64), y)), n)
    axpy = dsl.compile(op("blasaxpy", "f32").tile(m=1, n=w).target(isa))
    y2 = y.copy()
    assert axpy(1.5, x, y2) is y2
    close(y2, 1.5 * x.astype(np.float64) + y)
    norm = dsl.compile(op("rmsnorm", "f32").tile(m=1, n=w).target(isa))
    rows = RNG.standard_normal((3, n), np.float32)
    wt = RNG.standard_normal(n, np.float32)
    r64 = rows.astype(np.float64)
    close(norm(rows, wt, eps=1e-5), r64 * wt / np.sqrt((r64 ** 2).mean(-1, keepdims=True) + 1e-5),
          n)
    close(norm(rows[0]), r64[0] / np.sqrt((r64[0] ** 2).mean() + 1e-6), n)


@pytest.mark.parametrize("isa", [isa_param("scalar"), isa_param("avx512bf16")])
def test_gemmbf16_pair_packed(isa):
    """Odd K (a pair half padded), integer values: float32 sums exact, so equal to NumPy's."""
    from ml_dtypes import bfloat16

    k = dsl.compile(op("gemmbf16", "bf16").tile(m=3, n=2 * lanes(isa, "bf16"), k=2).target(isa))
    a = RNG.integers(-8, 9, (5, 7)).astype(bfloat16)
    b = RNG.integers(-8, 9, (7, 2 * lanes(isa, "bf16") + 3)).astype(bfloat16)
    c = RNG.integers(-8, 9, (5, b.shape[1])).astype(np.float32)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_array_equal(k(a, b), want)
    np.testing.assert_array_equal(k(a, b, c, alpha=2.0, beta=1.0), 2 * want + c)


@pytest.mark.parametrize("isa", [isa_param("scalar"), isa_param("avx2"), isa_param("avx512vnni")])
def test_gemms8_exact_and_wrapping(isa):
    """-128 x -128 products (VPDPBUSD's offset path), K not a multiple of 4, C += A B."""
    k = dsl.compile(op("gemms8", "s8").tile(m=2, n=lanes(isa, "s8"), k=4).target(isa))
    a = RNG.integers(-128, 128, (5, 9)).astype(np.int8)
    a[0] = -128
    b = RNG.integers(-128, 128, (9, lanes(isa, "s8") + 1)).astype(np.int8)
    b[:, 0] = -128
    c = RNG.integers(-2 ** 31, 2 ** 31, (5, b.shape[1])).astype(np.int32)
    want = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(k(a, b), want.astype(np.int32))
    np.testing.assert_array_equal(k(a, b, c), (want + c).astype(np.int32))  # wraps as int32


@pytest.mark.parametrize("isa", [isa_param("scalar"), isa_param("avx2"), isa_param("avx512vnni")])
def test_gemvs8_int8_and_uint8_x(isa):
    """y = x B from row-major B read in place: int8 x (VNNI: B + 128, then 128 sum(x) back),
    uint8 x, y += x B; n past a step with a remainder, k not a multiple of 4, strided rows."""
    q = get_isa(isa).quad("s8")  # columns per step: 4 quad vectors, a pair, or one vector
    step = q.lanes * (4 if q.rows4_ else 2 if q.madd2_ else 1)
    k = dsl.compile(op("gemvs8", "s8").tile(m=1, n=step, k=8).target(isa))
    wide = RNG.integers(-128, 128, (19, 2 * step + 9)).astype(np.int8)
    b = wide[:, 2:2 * step + 5]
    b[0] = -128
    x = RNG.integers(-128, 128, 19).astype(np.int8)
    x[:2] = -128
    u = RNG.integers(0, 256, 19).astype(np.uint8)
    u[0] = 255
    y = RNG.integers(-2 ** 31, 2 ** 31, b.shape[1]).astype(np.int32)
    for v in (x, u):
        want = v.astype(np.int64) @ b.astype(np.int64)
        np.testing.assert_array_equal(k(b, v), want.astype(np.int32))
        np.testing.assert_array_equal(k(b, v, y), (want + y).astype(np.int32))  # wraps


@pytest.mark.parametrize("isa, fmt, tile", [
    ("scalar", "q4_0", (1, 2)), ("scalar", "q4_1", (1, 2)), ("scalar", "q8_0", (1, 2)),
    ("avx2", "q4_0", (2, 8)), ("avx512vnni", "q8_0", (2, 32)), ("avx512vnni", "q4_1", (2, 32)),
])
def test_qgemv_on_gguf_blocks(isa, fmt, tile):
    """Y = X W^T with W as tilegen.quantize's GGUF blocks (dequantized by tilegen.dequantize,
    which matches gguf's) and X quantized per 32 values as tg.Linear does."""
    if not USABLE.get(isa, False):
        pytest.skip(f"this CPU (or OS) lacks {isa}")
    import tilegen as tg

    k = dsl.compile(op("qgemv", "s8").tile(m=tile[0], n=tile[1]).set(fmt=fmt).target(isa))
    x = RNG.standard_normal((3, 96)).astype(np.float32)
    w = tg.quantize(RNG.standard_normal((tile[1] + 3, 96)).astype(np.float32), fmt)
    blocks = x.reshape(3, 3, 32)
    dx = np.abs(blocks).max(axis=2, keepdims=True) / np.float32(127)
    xv = (np.round(blocks / dx) * dx).reshape(3, 96).astype(np.float64)
    wv = tg.dequantize(w, fmt).astype(np.float64)
    got = k(x, w)
    np.testing.assert_allclose(got, xv @ wv.T, rtol=0,
                               atol=1e-5 * float((np.abs(xv) @ np.abs(wv).T).max()))
    with pytest.raises(ValueError, match="^x: K = 95 is not a multiple"):
        k(x[:, :95].copy(), w)


@pytest.mark.parametrize("isa, fmt, tile", [
    ("scalar", "int4-g32", (1, 2)), ("scalar", "int4-g128", (1, 2)), ("avx2", "int4-g64", (2, 8)),
    ("avx512vnni", "int4-g128", (2, 32)),
])
def test_qgemv_q4_z_on_int4_groups(isa, fmt, tile):
    """The q4_z kernels on tilegen.quantize's group-wise int4 (a scale and a zero point per
    group of 32..128 values, split into the kernel's 32-value blocks): Y = X W^T against
    tilegen.dequantize, X quantized per 32 values."""
    if not USABLE.get(isa, False):
        pytest.skip(f"this CPU (or OS) lacks {isa}")
    import tilegen as tg

    k = dsl.compile(op("qgemv", "s8").tile(m=tile[0], n=tile[1]).set(fmt="q4_z").target(isa))
    x = RNG.standard_normal((3, 256)).astype(np.float32)
    w = tg.quantize(RNG.standard_normal((tile[1] + 3, 256)).astype(np.float32), fmt)
    blocks = x.reshape(3, 8, 32)
    dx = np.abs(blocks).max(axis=2, keepdims=True) / np.float32(127)
    xv = (np.round(blocks / dx) * dx).reshape(3, 256).astype(np.float64)
    wv = tg.dequantize(w, fmt).astype(np.float64)
    np.testing.assert_allclose(k(x, w, fmt=fmt), xv @ wv.T, rtol=0,
                               atol=1e-5 * float((np.abs(xv) @ np.abs(wv).T).max()))
    with pytest.raises(ValueError, match="^fmt: .* reads int4-g128, int4-g32, int4-g64, got"):
        k(x, w, fmt="q4_0")
    with pytest.raises(ValueError, match="^w: axis 1 has"):
        k(x, w, fmt="int4-g32" if fmt != "int4-g32" else "int4-g64")


def conv_ref(x, w, stride=1, padding=0, dilation=1, bias=None, depthwise=False):
    """NumPy's convolution, channels last, float64: x (N, H, W, C), w (KH, KW, C[, CO])."""
    x = np.pad(x.astype(np.float64), ((0, 0), (padding,) * 2, (padding,) * 2, (0, 0)))
    kh, kw = w.shape[:2]
    oh = (x.shape[1] - dilation * (kh - 1) - 1) // stride + 1
    ow = (x.shape[2] - dilation * (kw - 1) - 1) // stride + 1
    y = 0
    for a in range(kh):
        for b in range(kw):
            win = x[:, a * dilation::stride, b * dilation::stride][:, :oh, :ow]
            y = y + (win * w[a, b] if depthwise else np.einsum("nhwc,co->nhwo", win, w[a, b]))
    return y + (0 if bias is None else bias)


@pytest.mark.parametrize("isa", X86)
def test_conv_whole_convolutions(isa):
    """Channels last: edge tiles of pixels (OW 11 and 5, tile 3) and channels (NR + 3), stride 2,
    dilation 2, padding, bias, relu6; channel first (OIHW weights): NR + 1 pixels, MR + 1
    output channels; the 3-channel stem (c fixed at 3)."""
    w = lanes(isa)
    k = dsl.compile(op("conv", "f32").tile(m=3, n=w).set(kh=3, kw=3, stride=2).target(isa))
    x = RNG.standard_normal((2, 9, 21, 5), np.float32)
    wt = RNG.standard_normal((3, 3, 5, w + 3), np.float32)
    bias = RNG.standard_normal(w + 3).astype(np.float32)
    got = k(x, wt, bias, padding=1, act="relu6")
    close(got, np.clip(conv_ref(x, wt, 2, 1, bias=bias), 0, 6), 45)
    assert got.shape == (2, 5, 11, w + 3) and "conv2d(x, w, stride 2" in k.__doc__
    close(k(x, wt, dilation=2), conv_ref(x, wt, 2, 0, 2), 45)
    nchw = dsl.compile(op("conv", "f32").tile(m=2, n=w).set(kh=3, kw=3, layout="nchw")
                       .target(isa))
    xc = RNG.standard_normal((1, 4, 6, w + 3), np.float32)          # OW = w + 1 at padding 1
    wc = RNG.standard_normal((3, 4, 3, 3), np.float32)              # OIHW, MR + 1 channels
    want = conv_ref(xc.transpose(0, 2, 3, 1), wc.transpose(2, 3, 1, 0), 1, 0, 1)
    close(nchw(xc, wc, dilation=1), want.transpose(0, 3, 1, 2), 36)
    want = conv_ref(xc.transpose(0, 2, 3, 1), wc.transpose(2, 3, 1, 0), 1, 1, 1)
    close(nchw(xc, wc, padding=1, act="silu"), (want / (1 + np.exp(-want))).transpose(0, 3, 1, 2),
          36)
    stem = dsl.compile(op("conv", "f32").tile(m=2, n=w, k=3).set(kh=3, kw=3, stride=2)
                       .target(isa))
    xs = RNG.standard_normal((1, 7, 7, 3), np.float32)
    ws = RNG.standard_normal((3, 3, 3, w), np.float32)
    close(stem(xs, ws, padding=1), conv_ref(xs, ws, 2, 1), 27)
    with pytest.raises(ValueError, match="^x: .* takes exactly 3 input channels, got 5"):
        stem(x, RNG.standard_normal((3, 3, 5, w), np.float32))


@pytest.mark.parametrize("isa", X86)
def test_dwconv_whole_convolutions(isa):
    """Channels last: 2 output rows per call (unit dilation), an odd row count left over, NR + 3
    channels; any-dilation kernel at dilation 2, stride 2; channel first, MR + 1 channels."""
    w = lanes(isa)
    x = RNG.standard_normal((1, 7, 10, w + 3), np.float32)
    wt = RNG.standard_normal((3, 3, w + 3), np.float32)
    bias = RNG.standard_normal(w + 3).astype(np.float32)
    rows = dsl.compile(op("dwconv", "f32").tile(m=4, n=w).set(kh=3, kw=3, dilation="1",
                                                               out_rows=2).target(isa))
    close(rows(x, wt, bias, padding=1), conv_ref(x, wt, 1, 1, bias=bias, depthwise=True), 9)
    with pytest.raises(ValueError, match="^dilation: .* unit-dilation kernel"):
        rows(x, wt, dilation=2)
    s2 = dsl.compile(op("dwconv", "f32").tile(m=3, n=w).set(kh=3, kw=3, stride=2).target(isa))
    close(s2(x, wt, padding=2, dilation=2, act="relu"),
          np.maximum(conv_ref(x, wt, 2, 2, 2, depthwise=True), 0), 9)
    nchw = dsl.compile(op("dwconv", "f32").tile(m=2, n=w).set(kh=5, kw=5, layout="nchw")
                       .target(isa))
    xc = RNG.standard_normal((2, 3, 8, w + 5), np.float32)
    wc = RNG.standard_normal((3, 5, 5), np.float32)
    want = conv_ref(xc.transpose(0, 2, 3, 1), wc.transpose(1, 2, 0), 1, 2, depthwise=True)
    close(nchw(xc, wc, padding=2), want.transpose(0, 3, 1, 2), 25)
    with pytest.raises(ValueError, match=r"^w: axis 0 has 5 elements, expected 3"):
        nchw(xc, RNG.standard_normal((5, 5, 5), np.float32))
    if isa != "avx2":  # row tiles (AVX2 lacks their lane extract): MR + 1 rows, 2 NR + 3 pixels
        rt = dsl.compile(op("dwconv", "f32").tile(m=2, n=w).set(kh=3, kw=3, layout="nchw",
                                                                 tiling="rows").target(isa))
        xr, wr = RNG.standard_normal((1, 2, 3, 2 * w + 3), np.float32), wt[..., :2]
        got = rt(xr, wr.transpose(2, 0, 1).copy(), bias[:2], padding=1, act="gelu")
        want = conv_ref(xr.transpose(0, 2, 3, 1), wr, 1, 1, bias=bias[:2], depthwise=True)
        from math import erf
        close(got, (want * (1 + np.vectorize(erf)(want / np.sqrt(2))) / 2).transpose(0, 3, 1, 2),
              9)
    with pytest.raises(ValueError, match="^act: expected one of"):
        nchw(xc, wc, act="tanh")


@pytest.mark.parametrize("isa", X86)
def test_filter_passes(isa):
    """Every pass on a row that is no multiple of the block (and one shorter than it); filt2d
    over MR + 1 output rows with a channel step."""
    nr = {"scalar": 4, "avx2": 32, "avx512": 64}[isa]
    n = 2 * nr + 5
    u8 = lambda *s: RNG.integers(0, 256, s, dtype=np.uint8)  # noqa: E731

    def kernel(kind, dtype="u8", m=1, block=None):
        return dsl.compile(op("filter", dtype).tile(m=m, n=block or nr).set(kind=kind)
                           .target(isa))

    f2 = kernel("filt2d", "f32", m=2, block=4 * lanes(isa))
    x = RNG.standard_normal((5, 3 * n), np.float32)
    coef = RNG.standard_normal((3, 2), np.float32)
    want = sum(coef[i, j] * x[i:i + 3, 3 * j:3 * j + 3 * n - 3].astype(np.float64)
               for i in range(3) for j in range(2))
    close(f2(x, coef, step=3), want, 6)
    for length in (n, 3):
        rows = u8(4, length)
        c16 = RNG.integers(-256, 257, 4).astype(np.int16)
        got = kernel("vfilt")(rows, c16, -5)
        np.testing.assert_array_equal(
            got, (-5 + (c16[:, None].astype(np.int64) * rows).sum(0)).astype(np.int16))
        np.testing.assert_array_equal(kernel("vsum")(rows), rows.sum(0, dtype=np.uint16))
        prev = RNG.integers(0, 1000, length).astype(np.uint16)
        a, b = u8(length), u8(length)
        np.testing.assert_array_equal(kernel("vupd")(prev, a, b), prev + a - b.astype(np.uint16))
    hf = kernel("hfilt", block=nr // 2)
    xi = RNG.integers(-3000, 3000, n + 6).astype(np.int16)
    c3 = RNG.integers(0, 200, 3).astype(np.int16)                  # odd taps: padded to even
    s = sum(c3[t].astype(np.int64) * xi[3 * t:3 * t + n] for t in range(3))
    np.testing.assert_array_equal(hf(xi, c3, step=3, add=1 << 15),
                                  np.clip((s + (1 << 15)) >> 16, 0, 255))
    np.testing.assert_array_equal(hf(xi, c3, step=3, scale=1 / 1024),
                                  np.clip(np.rint(s.astype(np.float32) * np.float32(1 / 1024)),
                                          0, 255))
    from tilegen.ops.image.filter import box_divisor

    xs = RNG.integers(0, 256, n + 4).astype(np.uint16)
    add, mul, shift = box_divisor(5)
    s = sum(xs[t:t + n].astype(np.int64) for t in range(5))
    np.testing.assert_array_equal(kernel("hsum")(xs, 5), np.minimum(255, ((s + add) * mul >> 16)
                                                                   >> shift))
    e = 8 if isa == "scalar" else 2 * lanes(isa, "i32")
    xu = u8(n)
    np.testing.assert_array_equal(kernel("tof32", block=e)(xu), xu.astype(np.float32))
    xf = (RNG.standard_normal(n) * 200 + 128).astype(np.float32)
    xf[:4] = [0.5, 1.5, 2.5, 300.0]                                  # ties to even, clamp
    np.testing.assert_array_equal(kernel("fround", block=e)(xf),
                                  np.rint(np.clip(xf, 0, 255)).astype(np.uint8))
    blur = u8(n)
    d = xu.astype(np.int64) - blur
    want = np.where(np.abs(d) > 3, np.clip(np.rint(xu + 0.5 * d), 0, 255), xu)
    np.testing.assert_array_equal(kernel("sharpen", block=e)(xu, blur, amount=0.5, threshold=3),
                                  want)
    assert kernel("vsum")(np.zeros((3, 0), np.uint8)).shape == (0,)
    with pytest.raises(TypeError, match="^prev: expected dtype uint16"):
        kernel("vupd")(a, a, b)
    with pytest.raises(ValueError, match="^coef: axis 0 has 3 elements, expected 4"):
        kernel("vfilt")(rows, c3)


def attention_ref(q, k, v, scale, causal):
    s = scale * (q.astype(np.float64) @ k.T.astype(np.float64))
    if causal:
        s[np.arange(k.shape[0])[None, :] > np.arange(q.shape[0])[:, None] + k.shape[0]
          - q.shape[0]] = -np.inf
    p = np.exp(s - s.max(1, keepdims=True))
    return (p / p.sum(1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.parametrize("isa", X86)
def test_attention_one_head(isa):
    """Partial query tiles, key blocks past KB with a short last one, dv != d, causal (keys
    and queries ends aligned), strided q."""
    w = lanes(isa)
    k = dsl.compile(op("attention", "f32").tile(m=2 * w, n=2).set(kb=8, pv_rows=2, pv_vecs=1)
                    .target(isa))
    q = RNG.standard_normal((2 * w + 3, 24), np.float32)[:, :13]
    keys = RNG.standard_normal((2 * w + 21, 13), np.float32)        # KB = 8: a short last block
    vals = RNG.standard_normal((2 * w + 21, w + 3), np.float32)
    np.testing.assert_allclose(k(q, keys, vals), attention_ref(q, keys, vals, 13 ** -0.5, False),
                               rtol=0, atol=2e-5)
    np.testing.assert_allclose(k(q, keys, vals, scale=0.5, causal=True),
                               attention_ref(q, keys, vals, 0.5, True), rtol=0, atol=2e-5)
    few, q9 = keys[:4], RNG.standard_normal((9, 13), np.float32)
    got = k(q9, few, vals[:4], causal=True)  # more queries than keys: the first 5 see none
    np.testing.assert_allclose(got[5:], attention_ref(q9[5:], few, vals[:4], 13 ** -0.5, True),
                               rtol=0, atol=2e-5)
    assert not got[:5].any()
    with pytest.raises(ValueError, match=f"^v: axis 0 has 20 elements, expected {2 * w + 21}"):
        k(q, keys, vals[:20])


@pytest.mark.parametrize("isa", X86)
def test_attndecode_grouped_heads(isa):
    """6 query heads per kv head (slices of 4: a partial one), tokens past NR with a short last
    chunk, a cache laid out (tokens, kv heads, d) and passed as a transposed view."""
    w = lanes(isa)
    k = dsl.compile(op("attndecode", "f32").tile(m=4, n=2 * w).set(pv_vecs=1).prefetch(2)
                    .target(isa))
    q = RNG.standard_normal((12, 19), np.float32)
    cache = RNG.standard_normal((2, 5 * w + 3, 2, 19), np.float32)  # k/v, tokens, kv heads, d
    keys, vals = cache[0].transpose(1, 0, 2), cache[1].transpose(1, 0, 2)
    want = np.concatenate([attention_ref(q[6 * h:6 * h + 6], keys[h], vals[h], 0.25, False)
                           for h in range(2)])
    np.testing.assert_allclose(k(q, keys, vals, scale=0.25), want, rtol=0, atol=2e-5)
    with pytest.raises(ValueError, match="^k: 5 kv heads do not divide the 12 query heads"):
        k(q, np.zeros((5, 3, 19), np.float32), np.zeros((5, 3, 19), np.float32))


# --- the cache ---

def test_second_compile_is_a_cache_hit(cache):
    spec = op("blasdot", "f64").tile(m=1, n=3).unroll("k", 1).target("scalar").spec
    first = dsl.compile(spec)
    mtime = os.stat(first.path).st_mtime_ns
    compiled = jit.STATS["compiled"]
    again = dsl.compile(spec.name)               # the same kernel, named
    assert again.cached and again.path == first.path
    assert jit.STATS["compiled"] == compiled and os.stat(first.path).st_mtime_ns == mtime
    assert os.path.dirname(first.path) == str(cache)
    assert dsl.compile(spec, force=True).cached is False
    assert jit.STATS["compiled"] == compiled + 1
    x = np.arange(7.0)
    assert again(x, x) == np.dot(x, x)


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert jit.cache_dir() == str(tmp_path / "tilegen" / "kernels")


def test_flags_are_the_package_builds():
    """One source: the ISA tables (setup.py reads the same BASE_CFLAGS and the manifest their
    cflags)."""
    import json

    from tilegen.dsl.registry import package_root

    with open(os.path.join(package_root(), "tilegen", "generated", "build_manifest.json")) as f:
        manifest = json.load(f)
    for name in ISAS:
        flags = jit.compile_flags(name)
        assert flags[:len(jit.BASE_CFLAGS)] == jit.BASE_CFLAGS
        assert list(flags[len(jit.BASE_CFLAGS):-1]) == manifest["isas"][name]["cflags"]


# --- errors ---

def test_an_isa_of_another_architecture_is_refused():
    other = "neon" if host_arch() == "x86_64" else "avx2"
    with pytest.raises(jit.UnsupportedISAError, match=rf"^isa: {other} kernels run on"):
        dsl.compile(op("blasdot", "f32").tile(m=1, n=2 * lanes(other)).target(other))


def test_an_isa_this_cpu_lacks_is_refused(monkeypatch):
    """Refused at compile time and, should the object exist, at call time: never SIGILL."""
    k = dsl.compile(op("blasdot", "f32").tile(m=1, n=2).target("scalar"))
    monkeypatch.setattr(jit, "usable_isas", lambda: {**USABLE, "scalar": False})
    with pytest.raises(jit.UnsupportedISAError, match="lacks scalar"):
        k(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(jit.UnsupportedISAError, match="lacks scalar"):
        dsl.compile(op("blasdot", "f32").tile(m=1, n=2).target("scalar"))


def test_no_compiler_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(jit.CompilerNotFoundError, match="no C compiler found"):
        dsl.compile(op("blasdot", "f32").tile(m=1, n=2).target("scalar"))


def test_a_family_without_a_callable_says_so(monkeypatch):
    missing = [f for f in FAMILIES.values() if not f.has_python_call]
    if not missing:  # every family has one: take blasdot's away for the test
        from tilegen.dsl.family import OpFamily

        monkeypatch.setattr(type(FAMILIES["blasdot"]), "python_call", OpFamily.python_call)
        missing = [FAMILIES["blasdot"]]
    entry = next(e for e in load_registry() if e.spec.op == missing[0].name)
    with pytest.raises(NotImplementedError, match=f"^op: {missing[0].name} kernels have no"):
        dsl.compile(entry.spec)


def test_raw_compile_gives_the_c_function():
    """Any family's kernel, as a ctypes function of its C prototype (here one with a callable,
    so the raw call can be checked against it)."""
    import ctypes

    k = dsl.compile(op("blasdot", "f64").tile(m=1, n=2).target("scalar"), raw=True)
    assert k.prototype == f"double {k.name}(int64_t, const double*, const double*);"
    fn = k.function(ctypes.c_double, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
    x = np.arange(5.0)
    assert fn(5, x.ctypes.data, x.ctypes.data) == 30.0
    with pytest.raises(NotImplementedError, match="compiled raw"):
        k(x, x)
    missing = [f for f in FAMILIES.values() if not f.has_python_call]
    usable = [e.spec for e in load_registry() if e.spec.op in {f.name for f in missing}
              and e.spec.isa == "scalar"]
    if usable:  # a family without a callable compiles raw too
        assert dsl.compile(usable[0], raw=True).address


@pytest.fixture
def small_gemm(cache):
    return dsl.compile(op("gemm", "f32").tile(m=2, n=2).epilogue("bias").target("scalar"))


@pytest.mark.parametrize("call, error, match", [
    (lambda k: k([[1.0]], np.ones((1, 1), np.float32)), TypeError, "^a: expected a numpy.ndarray"),
    (lambda k: k(np.ones((2, 3)), np.ones((3, 2), np.float32)), TypeError,
     "^a: expected dtype float32"),
    (lambda k: k(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32)), ValueError,
     "^b: axis 0 has 4 elements, expected 3"),
    (lambda k: k(np.ones(3, np.float32), np.ones((3, 2), np.float32)), ValueError,
     "^a: expected 2 axes"),
    (lambda k: k(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32).T), ValueError,
     "^b: the last axis must be contiguous"),
    (lambda k: k(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)), ValueError,
     "^bias: .* adds a bias"),
    (lambda k: k(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32),
                 bias=np.ones(3, np.float32)), ValueError, "^bias: axis 0 has 3 elements"),
    (lambda k: k(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), beta=1.0,
                 bias=np.ones(2, np.float32)), ValueError, "^c: beta != 0 reads C"),
])
def test_bad_arrays_name_the_argument(small_gemm, call, error, match):
    with pytest.raises(error, match=match):
        call(small_gemm)


def test_bad_specs():
    with pytest.raises(TypeError, match="^spec: expected a KernelSpec"):
        dsl.compile(42)
    with pytest.raises(ValueError, match="^tile:"):
        dsl.compile({"op": "gemm", "dtype": "f32", "isa": "scalar", "tile": "40x40"})


# --- the builder of every family ---

@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_has_a_builder(family):
    """The registry's first kernel of each family, rebuilt with the builder's verbs."""
    s = next(e.spec for e in load_registry() if e.spec.op == family)
    built = (getattr(dsl.builder, family)(s.dtype).tile(m=s.mr, n=s.nr, k=s.kr)
             .vectorize(FAMILIES[family].vector_dim).unroll("k", s.unroll)
             .epilogue(*s.epilogue).set(**dict(s.options)).target(s.isa))
    assert built.name == s.name and built.spec.options == s.options
    with pytest.raises(ValueError, match="^vectorize:"):
        op(family, s.dtype).vectorize("nowhere")
    with pytest.raises(ValueError, match="^epilogue:"):
        op(family, s.dtype).epilogue("tanh")
    with pytest.raises(ValueError, match="^nope: not a field"):
        op(family, s.dtype).set(nope=1)


def test_builder_refuses_unknown_families_and_dtypes():
    with pytest.raises(ValueError, match="^op: 'nope'"):
        op("nope", "f32")
    with pytest.raises(ValueError, match="^dtype: rmsnorm kernels take"):
        op("rmsnorm", "u8")


# --- the CLI ---

def test_emit_compile_bench_prints_both_kernels(capsys):
    code = main(["emit", "--op", "gemm", "--dtype", "f32", "--isa", "scalar", "--tile", "3x2",
                 "--compile", "--bench", "--shape", "9,10,11", "--repeat", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "tg_f32_gemm_ukernel_3x2__scalar (spec)" in out and "(registered)" in out
    assert "GFLOP/s" in out and "m,n,k = 9x10x11" in out
    rows = [line for line in out.splitlines() if "(spec)" in line or "(registered)" in line]
    assert len(rows) == 2 and rows[1].split()[-1] == "1.00"


def test_gemmf16_sums_in_half():
    """The scalar reference of half accumulation from Python: integer products exact; random
    ones each multiply-add rounded to half in k order (the model, computed here with NumPy's
    float16 rounding of the float64 sum, which rounds as one fused half FMA: gemmf16's
    scalar table says why),
    hence within the K-scaled half bound of the float64 product."""
    k = dsl.compile(op("gemmf16", "f16").tile(m=2, n=2).target("scalar"))
    a = RNG.integers(-4, 5, (5, 7)).astype(np.float16)
    b = RNG.integers(-4, 5, (7, 3)).astype(np.float16)
    np.testing.assert_array_equal(k(a, b), (a.astype(np.int64) @ b.astype(np.int64)))
    a = RNG.standard_normal((3, 40)).astype(np.float16)
    b = RNG.standard_normal((40, 5)).astype(np.float16)
    model = np.zeros((3, 5), np.float16)
    for p in range(40):
        prod = np.outer(a[:, p].astype(np.float64), b[p].astype(np.float64))  # exact
        model = (model.astype(np.float64) + prod).astype(np.float16)
    np.testing.assert_array_equal(k(a, b), model)
    with pytest.raises(TypeError, match="^a: expected dtype float16"):
        k(a.astype(np.float32), b)


BENCH_DIMS = {"conv": (5, 6, 3, 5), "dwconv": (5, 6, 3), "filter": (37,), "attention": (9, 4, 3),
              "attndecode": (4, 2, 9, 5), "qgemv": (2, 3, 64), "gemmf16": (5, 3, 9),
              "gemvbf16": (9, 13), "gemvs8": (9, 13)}


@pytest.mark.parametrize("name", [
    "tg_f32_conv3x3s1_ukernel_2x4__scalar", "tg_f32_conv3x3s1_ukernel_2x4__scalar_nchw",
    "tg_f32_dwconv3x3s2_ukernel_4x4__scalar", "tg_f32_attention_ukernel_4x2__scalar_kb16_pv4x2",
    *(f"tg_{'f32' if k == 'filt2d' else 'u8'}_{k}_ukernel_{t}__scalar" for k, t in (
        ("filt2d", "2x4"), ("vfilt", "1x4"), ("vsum", "1x4"), ("vupd", "1x4"), ("hfilt", "1x2"),
        ("hsum", "1x4"), ("tof32", "1x8"), ("fround", "1x8"), ("sharpen", "1x8"))),
    "tg_s8_q4zgemv_ukernel_1x2__scalar", "tg_f16_gemm_ukernel_2x2__scalar",
    "tg_bf16_gemv_ukernel_1x4c4__scalar", "tg_bf16_gemv_ukernel_2x1c2__scalar",
    "tg_s8_gemvs8_ukernel_1x4c4__scalar",
])
def test_bench_problems_match_numpy(name):
    """Each new family's bench problem (python_example, what `emit --bench` checks and times)
    is answered by its kernel within the problem's tolerance, at tiny sizes."""
    from tilegen.tools import jitbench

    k = dsl.compile(name)
    example = k.spec.family.python_example(k.spec, BENCH_DIMS[k.spec.op], np.random.default_rng(1))
    assert example.expected.size and example.work > 0
    assert jitbench.check(k, example) <= example.atol + 1e-12


def test_emit_bench_times_the_spec_alone_when_no_registered_kernel_fits(capsys):
    """A 5x5 conv: the registry's closest conv kernel is 3x3, whose callable refuses the
    problem's weights; the spec is checked and timed alone, and the output says why."""
    code = main(["emit", "--op", "conv", "--field", "kh=5", "--field", "kw=5", "--dtype", "f32",
                 "--isa", "scalar", "--tile", "1x4", "--compile", "--bench", "--shape", "7,6,2,5",
                 "--repeat", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "does not take this problem: w: axis 0 has 5 elements" in out
    assert "the spec checked against NumPy" in out and "(registered)" not in out
    assert "tg_f32_conv5x5s1_ukernel_1x4__scalar (spec)" in out


def test_emit_compile_errors_are_one_line(capsys):
    other = "neon" if host_arch() == "x86_64" else "avx2"
    code = main(["emit", "--op", "blasdot", "--dtype", "f32", "--isa", other, "--tile",
                 f"1x{lanes(other)}", "--compile"])
    _, err = capsys.readouterr()
    assert code == 1 and err.startswith("tilegen: error: isa:") and err.count("\n") == 1
    code = main(["emit", "--op", "gemm", "--dtype", "f32", "--isa", "scalar", "--tile", "2x2",
                 "--bench"])
    _, err = capsys.readouterr()
    assert code == 2 and "--bench needs --compile" in err


def test_emit_compile_from_an_empty_folder(tmp_path, cache):
    """`python -m tilegen` in a fresh process, started in an empty folder (CI runs the tests
    from an unpacked sdist): templates, headers and flags come from the installed package."""
    import subprocess
    import sys

    work = tmp_path / "empty"
    work.mkdir()
    env = {**os.environ, "TILEGEN_CACHE_DIR": str(cache)}
    r = subprocess.run([sys.executable, "-m", "tilegen", "emit", "--op", "rmsnorm", "--dtype",
                        "f64", "--isa", "scalar", "--tile", "1x2", "--compile", "--bench",
                        "--shape", "3,17", "--repeat", "1"],
                       cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "tg_f64_rmsnorm_ukernel_1x2__scalar (spec)" in r.stdout and "(registered)" in r.stdout
    assert "GB/s" in r.stdout
