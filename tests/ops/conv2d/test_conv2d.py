"""tg.conv2d and tg.Conv2d against torch.nn.functional.conv2d (computed in float64).

The grid: filters 1x1..7x7 and 1x3/3x1, strides, paddings (ints, pairs, "same" with even
filters, "valid"), dilations, groups, depthwise with and without a channel multiplier, odd
spatial and channel sizes, batches, both layouts, every activation, non-contiguous inputs,
float32 and float64; every path the driver has (direct kernels, per-tile im2col, depthwise,
GEMM for 1x1, the plain loops) is forced on a subset, so each is checked on the same cases.
"""
import itertools
import threading

import numpy as np
import pytest
from conftest import reference

import tilegen as tg
from tilegen.ops.plugins import placed
from tilegen.ops.conv2d import _conv2d as _conv
from tilegen.ops.conv2d.api import conv_method

torch = reference("torch")
# torch warns that it pads a copy for "same" with even filters; that is its business.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
F = torch.nn.functional
ACTS = [None, "relu", "relu6", "gelu", "silu"]


def torch_conv(x, w, b, stride, padding, dilation, groups, activation):
    """The reference in float64, NCHW/OIHW."""
    t = lambda a: None if a is None else torch.from_numpy(np.asarray(a, np.float64))  # noqa: E731
    y = F.conv2d(t(x), t(w), t(b), stride, padding, dilation, groups)
    y = {None: y, "relu": F.relu(y), "relu6": F.relu6(y), "gelu": F.gelu(y),
         "silu": F.silu(y)}[activation]
    return y.numpy()


def to_layout(x, w, layout):
    if layout == "NCHW":
        return x, w
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(w.transpose(0, 2, 3, 1))


def check(case, layout, dtype, activation, rng, *, contiguous=True):
    (n, cin, h, w_), (cout, kh, kw), stride, padding, dilation, groups, bias = case
    x = rng.standard_normal((n, cin, h, w_)).astype(dtype)
    w = rng.standard_normal((cout, cin // groups, kh, kw)).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype) if bias else None
    want = torch_conv(x, w, b, stride, padding, dilation, groups, activation)
    xl, wl = to_layout(x, w, layout)
    if not contiguous:  # a strided view of a bigger array, same values
        big = np.zeros(tuple(2 * s for s in xl.shape), dtype)
        big[tuple(slice(0, None, 2) for _ in xl.shape)] = xl
        xl = big[tuple(slice(0, None, 2) for _ in xl.shape)]
        assert not xl.flags.c_contiguous
    got = tg.conv2d(xl, wl, b, stride, padding, dilation, groups, layout=layout,
                    activation=activation)
    assert got.dtype == dtype
    if layout == "NHWC":
        got = got.transpose(0, 3, 1, 2)
    assert got.shape == want.shape
    k = cin // groups * kh * kw
    mag = torch_conv(np.abs(x), np.abs(w), None if b is None else np.abs(b), stride, padding,
                     dilation, groups, None)
    tol = (2e-6 if dtype == np.float32 else 1e-13) * np.sqrt(k) * (mag + 1)
    err = np.abs(got - want)
    assert np.all(err <= tol), f"max error {err.max():.3g} (tol {tol.max():.3g})"


# (N, C_in, H, W), (C_out, kH, kW), stride, padding, dilation, groups, bias
GRID = [
    ((1, 3, 9, 10), (5, 1, 1), 1, 0, 1, 1, True),
    ((2, 16, 7, 9), (24, 1, 1), 1, 0, 1, 1, False),
    ((1, 8, 9, 9), (12, 1, 1), 2, 0, 1, 1, True),
    ((1, 5, 8, 7), (7, 1, 1), 1, 1, 1, 1, True),
    ((1, 6, 11, 13), (9, 2, 2), 1, 0, 1, 1, True),
    ((2, 7, 12, 10), (10, 3, 3), 1, 1, 1, 1, True),
    ((1, 16, 15, 17), (33, 3, 3), 1, (1, 2), 1, 1, True),
    ((1, 3, 17, 16), (32, 3, 3), 2, 1, 1, 1, True),
    ((1, 4, 11, 11), (6, 3, 3), 2, 0, 2, 1, False),
    ((1, 8, 13, 12), (16, 3, 3), 1, "same", 2, 1, True),
    ((1, 5, 10, 9), (6, 4, 4), 1, "same", 1, 1, True),
    ((1, 6, 9, 11), (7, 4, 2), 1, "same", (1, 2), 1, True),
    ((2, 4, 12, 13), (5, 5, 5), 1, 2, 1, 1, True),
    ((1, 3, 14, 15), (8, 5, 5), 2, 2, 1, 1, False),
    ((1, 3, 23, 21), (9, 7, 7), 2, 3, 1, 1, True),
    ((1, 2, 12, 12), (4, 6, 6), 1, "valid", 1, 1, True),
    ((1, 9, 8, 11), (10, 1, 3), 1, (0, 1), 1, 1, True),
    ((1, 9, 11, 8), (10, 3, 1), (2, 1), (1, 0), 1, 1, True),
    ((1, 12, 10, 10), (12, 3, 3), 1, 1, 1, 3, True),
    ((2, 8, 9, 9), (16, 3, 3), 2, 1, 1, 4, False),
    ((1, 6, 7, 9), (6, 1, 1), 1, 0, 1, 2, True),
    ((1, 20, 11, 12), (20, 3, 3), 1, 1, 1, 20, True),
    ((2, 19, 9, 10), (19, 3, 3), 2, 1, 1, 19, True),
    ((1, 17, 13, 14), (17, 5, 5), 1, 2, 1, 17, False),
    ((1, 16, 13, 13), (16, 5, 5), 2, 2, 1, 16, True),
    ((1, 18, 12, 12), (18, 3, 3), 1, 2, 2, 18, True),
    ((1, 7, 10, 10), (7, 7, 7), 1, 3, 1, 7, True),
    ((1, 6, 9, 9), (12, 3, 3), 1, 1, 1, 6, True),
    ((1, 5, 8, 9), (15, 3, 3), 2, 1, 1, 5, True),
    ((1, 3, 9, 9), (4, 9, 9), 1, 0, 1, 1, True),
    ((3, 4, 5, 6), (6, 3, 3), 1, 2, 1, 1, True),
    # Wide rows: the NCHW band driver tiles each output row on its own (cheap pixels) or runs
    # the band flat and copies tiles out (costly ones); both, with short last tiles.
    ((1, 3, 10, 190), (8, 3, 3), 2, 1, 1, 1, True),
    ((1, 24, 9, 61), (24, 3, 3), 1, 1, 1, 24, True),
    ((1, 16, 6, 61), (8, 3, 3), 1, 1, 1, 1, False),
    # Several bands per group (the last one short, pad rows at both ends, stride-2 phases): one
    # thread's band buffer serves them all, its pad columns zeroed once per call.
    ((1, 64, 29, 61), (16, 3, 3), 1, 1, 1, 1, True),
    ((2, 48, 31, 33), (8, 3, 3), 2, 1, 1, 1, False),
    # Horizontal strides split the NCHW band into column phase planes: stride 3, a stride only
    # across (first input column in phase 0), depthwise with dilation across the phases.
    ((1, 5, 13, 20), (7, 3, 3), 3, 1, 1, 1, True),
    ((1, 6, 9, 14), (8, 3, 3), (1, 2), (1, 0), 1, 1, False),
    ((1, 10, 9, 31), (10, 3, 3), 2, 1, 2, 10, True),
    ((1, 9, 11, 37), (9, 5, 5), 3, 2, 1, 9, False),
]


def case_id(case):
    (n, cin, h, w), (cout, kh, kw), s, p, d, g, b = case
    return f"n{n}c{cin}-{h}x{w}-k{kh}x{kw}o{cout}-s{s}-p{p}-d{d}-g{g}" + ("-b" if b else "")


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", GRID, ids=case_id)
def test_grid_float32(case, layout):
    rng = np.random.default_rng(abs(hash(case_id(case))) % 2**32)
    act = ACTS[GRID.index(case) % len(ACTS)]
    check(case, layout, np.float32, act, rng)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", GRID[::3], ids=case_id)
def test_grid_float64(case, layout):
    rng = np.random.default_rng(1)
    check(case, layout, np.float64, ACTS[(GRID.index(case) + 2) % len(ACTS)], rng)


@pytest.mark.parametrize("activation", ACTS)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_every_activation(activation, layout):
    rng = np.random.default_rng(7)
    for case in (GRID[5], GRID[21], GRID[1]):  # direct, depthwise, 1x1 (GEMM)
        check(case, layout, np.float32, activation, rng)


def test_activation_range():
    """Large pre-activations: exp's clamps and erfc's tails, against torch."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((1, 16, 9, 9)) * 30).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    for act in ("gelu", "silu"):
        got = tg.conv2d(x, w, padding=1, activation=act)
        want = torch_conv(x, w, None, 1, 1, 1, 1, act)
        assert np.allclose(got, want, rtol=1e-5, atol=1e-3), act


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_non_contiguous(layout):
    rng = np.random.default_rng(5)
    for case in (GRID[5], GRID[7], GRID[21], GRID[1]):
        check(case, layout, np.float32, "relu", rng, contiguous=False)
    check(GRID[5], layout, np.float64, None, rng, contiguous=False)


FORCED = [GRID[i] for i in (0, 3, 5, 7, 9, 11, 14, 17, 19, 22, 27)]


@pytest.mark.parametrize("method", ["im2col", "plain", "direct", "gemm", "depthwise",
                                    "depthwise-nchw"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_every_path(method, layout):
    """The fallbacks, on shapes that normally take a kernel of their own."""
    rng = np.random.default_rng(11)
    _conv.force_method(method)
    try:
        for i, case in enumerate(FORCED):
            check(case, layout, np.float32, ACTS[i % len(ACTS)], rng)
    finally:
        _conv.force_method(None)


@pytest.mark.parametrize("threads", [1, 2])
def test_depthwise_nhwc_at_every_line_offset(threads):
    """Channels-last depthwise moves its channel blocks to x's vector boundaries (the first
    block short, the last one the rest) and runs two output rows a call where it can: x at
    every float offset into a 64-byte line, channel counts that are and are not multiples of a
    vector, odd and even heights (a last single row), padded and not, 1 and 2 threads (each
    thread's rows start anywhere, so a pair never spans two threads' ranges)."""
    rng = np.random.default_rng(21)
    old = tg.get_num_threads()
    tg.set_num_threads(threads)
    try:
        # 4 pixels wide: too narrow for wrap blocks. The last: 3 images of 30 rows, 3.8 MFLOP
        # (threaded): the second thread starts at row 15 of image 1.
        for n, c, h, w_, pad, k in ((2, 48, 9, 21, 1, 3), (2, 32, 8, 17, 0, 3),
                                    (2, 64, 7, 40, 1, 3), (2, 48, 11, 19, 2, 5),
                                    (2, 24, 9, 13, 1, 3), (2, 48, 5, 4, 1, 3),
                                    (3, 64, 30, 37, 1, 3)):
            x = rng.standard_normal((n, c, h, w_)).astype(np.float32)
            wt = rng.standard_normal((c, 1, k, k)).astype(np.float32)
            b = rng.standard_normal(c).astype(np.float32)
            want = torch_conv(x, wt, b, 1, pad, 1, c, "relu")
            xl, wl = to_layout(x, wt, "NHWC")
            conv = tg.Conv2d(wl, b, padding=pad, groups=c, layout="NHWC", activation="relu")
            for off in range(0, 64, 4):
                xo = placed(xl, off)
                assert xo.ctypes.data % 64 == off
                got = conv(xo).transpose(0, 3, 1, 2)
                tol = 2e-6 * k * (torch_conv(np.abs(x), np.abs(wt), np.abs(b), 1, pad, 1, c,
                                             None) + 1)
                err = np.abs(got - want)
                assert np.all(err <= tol), (c, h, w_, pad, off, float(err.max()))
    finally:
        tg.set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 2])
def test_depthwise_nchw_row_tiles(threads):
    """Channel-first depthwise in row tiles (MR output rows of a channel, each input row's
    taps from aligned vectors): rows past a multiple of MR, rows longer than a tile (NR) and
    exactly one, one-pixel rows, no padding, unequal padding, batches, 1 and 2 threads."""
    rng = np.random.default_rng(23)
    old = tg.get_num_threads()
    tg.set_num_threads(threads)
    try:
        for n, c, h, w_, pad in ((2, 5, 13, 150, 1), (1, 7, 4, 64, 1), (1, 3, 2, 1, 1),
                                 (1, 4, 10, 70, 0), (2, 6, 9, 33, (0, 1)), (1, 3, 6, 20, (2, 1)),
                                 (2, 32, 40, 90, 1)):  # the last: 8.3 MFLOP, threaded
            x = rng.standard_normal((n, c, h, w_)).astype(np.float32)
            wt = rng.standard_normal((c, 1, 3, 3)).astype(np.float32)
            b = rng.standard_normal(c).astype(np.float32)
            want = torch_conv(x, wt, b, 1, pad, 1, c, "silu")
            got = tg.conv2d(x, wt, b, padding=pad, groups=c, activation="silu")
            tol = 2e-6 * 3 * (torch_conv(np.abs(x), np.abs(wt), np.abs(b), 1, pad, 1, c, None) + 1)
            err = np.abs(got - want)
            assert np.all(err <= tol), ((n, c, h, w_, pad), float(err.max()))
    finally:
        tg.set_num_threads(old)


def test_paths_chosen():
    m = lambda *a, **k: conv_method(*a, **k)[0]  # noqa: E731
    assert m((64, 256, 1, 1)) == "direct-nchw"
    assert m((64, 1, 1, 256), layout="NHWC") == "direct"
    assert m((64, 64, 3, 3), padding=1) == "direct-nchw"
    assert m((64, 3, 3, 64), padding=1, layout="NHWC") == "direct"
    assert m((32, 3, 3, 3), stride=2, padding=1) == "direct-nchw"
    # Channel first, a stride is phase planes under a stride-1 kernel.
    assert "3x3s1_ukernel_" in conv_method((32, 3, 3, 3), stride=2, padding=1)[1]
    assert "3x3s1_ukernel_" in conv_method((144, 1, 3, 3), stride=2, padding=1, groups=144)[1]
    # Depthwise channel first: row tiles at unit stride and dilation where the ISA has them
    # (AVX-512 in ops/conv2d/dwconv.yaml), else channel tiles, which also take any dilation.
    rows = tg.runtime_info()["kernels"]["conv2d"]["f32"]["depthwise"]["isa"] == "avx512"
    assert m((144, 1, 3, 3), padding=1, groups=144) == (
        "depthwise-nchw-rows" if rows else "depthwise-nchw")
    assert m((144, 1, 3, 3), padding=2, dilation=2, groups=144) == "depthwise-nchw"
    assert m((144, 3, 3, 1), padding=1, groups=144, layout="NHWC") == "depthwise"
    # A channel multiplier is a grouped convolution of one input channel per group.
    assert m((288, 3, 3, 1), padding=1, groups=144, layout="NHWC") == "direct"
    # The stem's kernel has its 3 input channels unrolled.
    assert conv_method((32, 3, 3, 3), stride=2, padding=1, layout="NHWC")[1].startswith(
        "tg_f32_conv3x3s2_ukernel_") and "c3__" in conv_method(
        (32, 3, 3, 3), stride=2, padding=1, layout="NHWC")[1]
    # No kernel of their own: the 1x1 kernel over per-tile patches.
    assert m((8, 4, 4, 4), padding="same", layout="NHWC") == "im2col"


def test_unbatched_and_empty_batch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 7, 8)).astype(np.float32)
    w = rng.standard_normal((5, 4, 3, 3)).astype(np.float32)
    got = tg.conv2d(x, w, padding=1)
    assert got.shape == (5, 7, 8)
    assert np.allclose(got, torch_conv(x[None], w, None, 1, 1, 1, 1, None)[0], atol=1e-4)
    empty = tg.conv2d(np.zeros((0, 4, 7, 8), np.float32), w)
    assert empty.shape == (0, 5, 5, 6)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv2d_module(layout):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 12, 10, 11)).astype(np.float32)
    w = rng.standard_normal((20, 12, 3, 3)).astype(np.float32)
    b = rng.standard_normal(20).astype(np.float32)
    xl, wl = to_layout(x, w, layout)
    conv = tg.Conv2d(wl, b, stride=1, padding=1, layout=layout, activation="silu")
    assert conv.method[0] == ("direct-nchw" if layout == "NCHW" else "direct")
    want = torch_conv(x, w, b, 1, 1, 1, 1, "silu")
    w = w.copy()
    wl[...] = 0  # the module packed (and copied) its weights at construction
    for _ in range(2):
        got = conv(xl)
        got = got if layout == "NCHW" else got.transpose(0, 3, 1, 2)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-4)
    # Several threads calling one module at once.
    results = [None] * 4

    def call(i):
        results[i] = conv(xl)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert np.array_equal(r, results[0])
    w64 = to_layout(x, w, layout)[1].astype(np.float64)
    conv64 = tg.Conv2d(w64, b.astype(np.float64), padding=1, layout=layout)
    got = conv64(xl.astype(np.float64))
    got = got if layout == "NCHW" else got.transpose(0, 3, 1, 2)
    assert np.allclose(got, torch_conv(x, w, b, 1, 1, 1, 1, None), rtol=1e-10, atol=1e-10)


def test_module_paths():
    rng = np.random.default_rng(6)
    for shape, kw in [((16, 8, 1, 1), {}), ((16, 1, 3, 3), {"groups": 16, "padding": 1}),
                      ((4, 3, 4, 4), {"padding": "same"})]:
        w = rng.standard_normal(shape).astype(np.float32)
        x = rng.standard_normal((1, shape[1] * kw.get("groups", 1), 9, 9)).astype(np.float32)
        conv = tg.Conv2d(w, **kw)
        assert np.allclose(conv(x), tg.conv2d(x, w, **kw), rtol=1e-5, atol=1e-5)


# (N, C_in, H, W), (C_out, kH, kW), stride, (top, bottom, left, right), dilation, groups
ASYMMETRIC = [
    ((2, 5, 9, 11), (7, 3, 3), 1, (0, 2, 1, 0), 1, 1),
    ((1, 16, 12, 13), (32, 3, 3), 1, (2, 0, 0, 1), 1, 1),
    ((1, 8, 10, 9), (8, 1, 1), 1, (1, 0, 0, 2), 1, 1),        # 1x1 with padding
    ((1, 8, 10, 9), (8, 1, 1), 1, (0, 0, 0, 0), 1, 1),        # 1x1 without: GEMM
    ((2, 3, 15, 16), (16, 3, 3), 2, (1, 0, 1, 0), 1, 1),      # a stride-2 stem, TF's "same"
    ((1, 12, 11, 14), (12, 3, 3), 1, (0, 1, 2, 1), 1, 12),    # depthwise
    ((1, 6, 9, 10), (12, 3, 3), 1, (3, 1, 0, 2), 1, 6),       # depthwise, multiplier 2
    ((1, 8, 13, 12), (8, 3, 5), (2, 1), (2, 1, 4, 0), (1, 2), 2),
    ((1, 4, 6, 7), (6, 4, 2), 1, (5, 0, 0, 3), 1, 1),         # more padding than filter
    ((1, 4, 3, 3), (4, 5, 5), 1, (4, 0, 0, 4), 1, 1),         # output only from padding
]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("method", [None, "im2col", "plain", "direct", "gemm", "depthwise",
                                    "depthwise-nchw"])
def test_four_value_padding(layout, method):
    """padding=(top, bottom, left, right): torch's F.pad(x, (left, right, top, bottom)) then a
    convolution without padding, on every path, both layouts, float32 (tg.conv2d and
    tg.Conv2d) and float64."""
    rng = np.random.default_rng(31)
    _conv.force_method(method)
    try:
        for i, ((n, cin, h, w_), (cout, kh, kw), stride, pad, dil, groups) in \
                enumerate(ASYMMETRIC):
            x = rng.standard_normal((n, cin, h, w_))
            w = rng.standard_normal((cout, cin // groups, kh, kw))
            b = rng.standard_normal(cout)
            t, bot, left, right = pad
            act = ACTS[i % len(ACTS)]
            xp = F.pad(torch.from_numpy(x), (left, right, t, bot)).numpy()
            want = torch_conv(xp, w, b, stride, 0, dil, groups, act)
            mag = torch_conv(np.abs(xp), np.abs(w), np.abs(b), stride, 0, dil, groups, None)
            for dtype in (np.float32, np.float64):
                xl, wl = to_layout(x.astype(dtype), w.astype(dtype), layout)
                got = [tg.conv2d(xl, wl, b, stride, pad, dil, groups, layout=layout,
                                 activation=act),
                       tg.Conv2d(wl, b, stride, list(pad), dil, groups, layout=layout,
                                 activation=act)(xl)]
                tol = (2e-6 if dtype == np.float32 else 1e-13) * np.sqrt(w[0].size) * (mag + 1)
                for y in got:
                    assert y.dtype == dtype
                    y = y if layout == "NCHW" else y.transpose(0, 3, 1, 2)
                    assert y.shape == want.shape, (pad, y.shape, want.shape)
                    err = np.abs(y - want)
                    assert np.all(err <= tol), (i, dtype, float(err.max()))
    finally:
        _conv.force_method(None)
    # Symmetric four values are the pair; the C API gets (top, left, bottom, right).
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    np.testing.assert_array_equal(tg.conv2d(x, w, padding=(1, 1, 2, 2)),
                                  tg.conv2d(x, w, padding=(1, 2)))


def test_module_repr_round_trips():
    """Conv2d's repr shows padding as the constructor takes it ((h, w), or (top, bottom, left,
    right) when the sides differ, as "same" with an even filter makes them), and every keyword
    it shows, passed back in, builds the same convolution."""
    rng = np.random.default_rng(32)
    x = rng.standard_normal((1, 6, 11, 12)).astype(np.float32)
    for shape, kw, shown in [
            ((8, 6, 3, 3), {"padding": 1}, "padding=(1, 1)"),
            ((8, 6, 4, 4), {"padding": "same"}, "padding=(1, 2, 1, 2)"),
            ((8, 6, 2, 3), {"padding": "same", "dilation": (1, 2)}, "padding=(0, 1, 2, 2)"),
            ((8, 6, 3, 3), {"padding": (0, 2, 1, 0), "stride": 2}, "padding=(0, 2, 1, 0)"),
            ((6, 1, 3, 3), {"padding": (1, 0, 1, 0), "groups": 6, "activation": "relu"},
             "padding=(1, 0, 1, 0)"),
            ((8, 6, 3, 3), {"padding": "valid"}, "padding=(0, 0)")]:
        w = rng.standard_normal(shape).astype(np.float32)
        conv = tg.Conv2d(w, **kw)
        text = repr(conv)
        assert shown in text, text
        kwargs = eval("dict(" + text[text.index("stride="):-1] + ")")
        again = tg.Conv2d(w, **kwargs)
        assert repr(again) == text
        np.testing.assert_array_equal(again(x), conv(x))
        np.testing.assert_array_equal(again(x), tg.conv2d(x, w, **kwargs))


# ---------------------------------------------------------------- bad input

X = np.zeros((1, 4, 8, 8), np.float32)
W = np.zeros((6, 4, 3, 3), np.float32)


@pytest.mark.parametrize("call, exc, word", [
    (lambda: tg.conv2d(X, np.zeros((6, 3, 3, 3), np.float32)), ValueError, "x"),
    (lambda: tg.conv2d(X, W, groups=3), ValueError, "x"),  # in_channels 4 = 3 groups of 4?
    (lambda: tg.conv2d(X, np.zeros((6, 2, 3, 3), np.float32), groups=4), ValueError, "groups"),
    (lambda: tg.conv2d(X, W, groups=0), ValueError, "groups"),
    (lambda: tg.conv2d(X, W, padding=-1), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding=(1, -2)), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding="full"), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding="same", stride=2), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, stride=0), ValueError, "stride"),
    (lambda: tg.conv2d(X, W, stride=-1), ValueError, "stride"),
    (lambda: tg.conv2d(X, W, dilation=0), ValueError, "dilation"),
    (lambda: tg.conv2d(X, W, dilation=(1, 2, 3)), ValueError, "dilation"),
    (lambda: tg.conv2d(X, np.zeros((6, 4, 9, 9), np.float32)), ValueError, "weight"),
    (lambda: tg.conv2d(X, W, dilation=4), ValueError, "weight"),
    (lambda: tg.conv2d(X[0, 0], W), ValueError, "x"),
    (lambda: tg.conv2d(X[None], W), ValueError, "x"),
    (lambda: tg.conv2d(X, W[0]), ValueError, "weight"),
    (lambda: tg.conv2d(X, W, np.zeros(5, np.float32)), ValueError, "bias"),
    (lambda: tg.conv2d(X, W, np.zeros(6, bool)), TypeError, "bias"),
    (lambda: tg.conv2d(X, W, ["a"] * 6), TypeError, "bias"),
    (lambda: tg.conv2d(X, W, padding=10**9), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding=(1, 2**28 + 1)), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, dilation=10**9), ValueError, "dilation"),
    (lambda: tg.conv2d([[1, "a"]], W), TypeError, "x"),
    (lambda: tg.conv2d(X, [[[["w"]]]]), TypeError, "weight"),
    (lambda: tg.conv2d(X.astype(np.int32), W), TypeError, "x"),
    (lambda: tg.conv2d(X.astype(np.float16), W.astype(np.float16)), TypeError, "weight"),
    (lambda: tg.conv2d(X, W.astype(np.float64)), TypeError, "x"),
    (lambda: tg.conv2d(X, W, stride=1.5), TypeError, "stride"),
    (lambda: tg.conv2d(X, W, groups=True), TypeError, "groups"),
    (lambda: tg.conv2d(X, W, activation="tanh"), ValueError, "activation"),
    (lambda: tg.conv2d(X, W, layout="NCWH"), ValueError, "layout"),
    (lambda: tg.conv2d("x", W), TypeError, "x"),
    (lambda: tg.Conv2d(W, padding=-1), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding=(1, 2, 3)), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding=(1, 2, 3, 4, 5)), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding=(1, 2, 3, -1)), ValueError, "padding"),
    (lambda: tg.conv2d(X, W, padding=(1, 2, 3, 2**28 + 1)), ValueError, "padding"),
    (lambda: tg.Conv2d(W, padding=(1, 2, 3, 1.5)), TypeError, "padding"),
    (lambda: tg.conv2d(X, np.zeros((6, 4, 12, 3), np.float32), padding=(1, 2, 0, 0)),
     ValueError, "weight"),  # 12 rows of filter > 8 + 1 + 2 padded rows
    (lambda: tg.Conv2d(W)(np.zeros((1, 5, 8, 8), np.float32)), ValueError, "x"),
])
def test_bad_input(call, exc, word):
    with pytest.raises(exc, match=rf"^{word}:"):
        call()


def test_huge_padding_names_padding():
    """A padding the output cannot be allocated for (here 2^20 on each side: a 2-million-square
    output) is refused naming padding, not with NumPy's allocation error."""
    with pytest.raises(MemoryError, match=r"^padding: \(1048576, 1048576, 1048576, 1048576\) "
                                          r"\(top, bottom, left, right\) makes the output"):
        tg.conv2d(X, W, padding=2**20)


def test_channel_mismatch_names_the_weight_layout():
    """NHWC input with OIHW weights (the NCHW habit): the message says NHWC takes OHWI weights
    and how to transpose them; likewise NCHW input given OHWI weights."""
    x = np.zeros((1, 8, 8, 4), np.float32)
    oihw = np.zeros((6, 4, 3, 3), np.float32)
    with pytest.raises(ValueError, match=r"^x: has 4 channels.*layout='NHWC' takes .*OHWI.*"
                                         r"weight\.transpose\(0, 2, 3, 1\)"):
        tg.conv2d(x, oihw, layout="NHWC")
    got = tg.conv2d(x, oihw.transpose(0, 2, 3, 1), layout="NHWC")  # the fix it names works
    assert got.shape == (1, 6, 6, 6)
    with pytest.raises(ValueError, match=r"^x: has 4 channels.*layout='NCHW' takes .*OIHW.*"
                                         r"weight\.transpose\(0, 3, 1, 2\)"):
        tg.conv2d(X, oihw.transpose(0, 2, 3, 1))
    with pytest.raises(ValueError, match=r"^x: has 8 channels.*pass layout='NHWC'"):
        tg.conv2d(x, oihw)  # NHWC input, layout left at NCHW


def test_bias_and_lists_take_the_weights_dtype():
    """NumPy's default float64 bias (np.zeros(n)) or an integer one is cast to float32 weights'
    dtype (it is added once; casting rounds no more than the result is rounded); a nested list
    (no dtype of its own) as x or bias takes the weight's dtype, and as weight x's. An x array of
    another dtype is refused, saying how to convert it."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    b64 = rng.standard_normal(6)
    want = tg.conv2d(x, w, b64.astype(np.float32))
    for bias in (b64, b64.tolist(), tuple(b64)):
        got = tg.conv2d(x, w, bias)
        assert got.dtype == np.float32 and np.array_equal(got, want)
    assert np.array_equal(tg.conv2d(x, w, np.arange(6)), tg.conv2d(x, w, np.arange(6.0, dtype=np.float32)))
    assert np.array_equal(tg.conv2d(x.tolist(), w), tg.conv2d(x, w))
    assert tg.conv2d(x, w.tolist()).dtype == np.float32
    assert np.allclose(tg.conv2d(x, w.tolist()), tg.conv2d(x, w))
    assert tg.Conv2d(w, b64)(x).dtype == np.float32
    with pytest.raises(TypeError, match=r"^x: dtype float64 differs from weight's float32; "
                                        r"convert one of them, e.g. x\.astype\(np\.float32\)"):
        tg.conv2d(x.astype(np.float64), w)


def test_torch_rejects_the_same():
    """Where torch has a rule, the bad inputs above break it too (the messages differ)."""
    t = torch.from_numpy
    for kwargs in ({"stride": 0}, {"padding": -1}, {"dilation": 0}, {"groups": 3}):
        with pytest.raises((RuntimeError, ValueError)):
            F.conv2d(t(X), t(W), **kwargs)
    with pytest.raises(RuntimeError):
        F.conv2d(t(X), t(np.zeros((6, 4, 9, 9), np.float32)))


def test_shapes_sweep():
    """Every filter size up to 7x7 at a few strides, small and odd, both layouts (float32)."""
    rng = np.random.default_rng(9)
    for kh, kw, s in itertools.product(range(1, 8), range(1, 8), (1, 2)):
        if (kh + kw + s) % 3:  # a third of the combinations, covering every kh, kw and s
            continue
        case = ((1, 3, kh + 4, kw + 5), (5, kh, kw), s, (kh // 2, kw // 2), 1, 1, True)
        check(case, ["NCHW", "NHWC"][(kh * kw) % 2], np.float32, ACTS[kh % 5], rng)


def test_preferred_path_per_layer_class():
    """tilegen tune's per-class preference: taken by its class's layers where it applies, not
    by other classes, and the results stay torch's."""
    torch = reference("torch")
    rng = np.random.default_rng(31)
    x = rng.standard_normal((1, 8, 12, 12)).astype(np.float32)
    w3 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    w1 = rng.standard_normal((16, 8, 1, 1)).astype(np.float32)
    before3 = conv_method(w3.shape, padding=1)[0]
    before1 = conv_method(w1.shape)[0]
    try:
        _conv.set_preferred("NCHW", "spatial", "im2col")
        assert conv_method(w3.shape, padding=1)[0] == "im2col"
        assert conv_method(w1.shape)[0] == before1  # another class
        assert conv_method((16, 3, 3, 8), padding=1, layout="NHWC")[0] != "im2col" or \
            before3 == "im2col"
        want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w3),
                                          padding=1).numpy()
        np.testing.assert_allclose(tg.conv2d(x, w3, padding=1), want, rtol=1e-4, atol=1e-4)
        _conv.set_preferred("NCHW", "pointwise", "gemm")
        assert conv_method(w1.shape)[0] == "gemm"
        assert conv_method(w1.shape, padding=1)[0] != "gemm"  # padded: gemm does not apply
        with pytest.raises(ValueError, match="not a path"):
            _conv.set_preferred("NCHW", "spatial", "fft")
        with pytest.raises(ValueError, match="layer class"):
            _conv.set_preferred("NCDHW", "spatial", None)
    finally:
        for kind in _conv.KINDS:
            _conv.set_preferred("NCHW", kind, None)
    assert conv_method(w3.shape, padding=1)[0] == before3
    assert conv_method(w1.shape)[0] == before1


def test_main_tile_height_cap():
    """tilegen tune's cap on the conv kernels' main tile: the paths take the tallest tile under
    it (the report names it), results stay torch's, and None restores the tallest."""
    torch = reference("torch")
    heights = _conv.tile_heights("NHWC")
    assert heights == sorted(heights, reverse=True) and len(heights) >= 2
    rng = np.random.default_rng(32)
    x = rng.standard_normal((1, 9, 17, 8)).astype(np.float32)
    w = rng.standard_normal((16, 3, 3, 8)).astype(np.float32)
    want = torch.nn.functional.conv2d(torch.from_numpy(x.transpose(0, 3, 1, 2)),
                                      torch.from_numpy(w.transpose(0, 3, 1, 2)),
                                      padding=1).numpy().transpose(0, 2, 3, 1)
    tallest = tg.runtime_info()["kernels"]["conv2d"]["f32"]["kernel"]
    try:
        for cap in heights[1:]:
            _conv.set_max_tile_height("NHWC", cap)
            kernel = tg.runtime_info()["kernels"]["conv2d"]["f32"]["kernel"]
            assert int(kernel.split("_ukernel_")[1].split("x")[0]) <= cap, (cap, kernel)
            np.testing.assert_allclose(tg.conv2d(x, w, padding=1, layout="NHWC"), want,
                                       rtol=1e-4, atol=1e-4)
        with pytest.raises(ValueError, match="mr"):
            _conv.set_max_tile_height("NHWC", 0)
    finally:
        _conv.set_max_tile_height("NHWC", None)
    assert tg.runtime_info()["kernels"]["conv2d"]["f32"]["kernel"] == tallest
