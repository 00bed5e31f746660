"""tg.conv_transpose2d and tg.ConvTranspose2d against torch.nn.functional.conv_transpose2d
(computed in float64): strides 1-3, paddings, output paddings, dilations, groups, kernels 1-5,
odd sizes, batches, both layouts (NHWC weights are torch's permuted (0, 2, 3, 1)), bias,
float32 and float64, out=, and the errors torch raises, as ValueErrors naming the argument.
"""
import itertools

import numpy as np
import pytest
from conftest import reference

import tilegen as tg

torch = reference("torch")
F = torch.nn.functional


def torch_convt(x, w, b, stride, padding, output_padding, groups, dilation):
    t = lambda a: None if a is None else torch.from_numpy(np.asarray(a, np.float64))  # noqa: E731
    return F.conv_transpose2d(t(x), t(w), t(b), stride, padding, output_padding, groups,
                              dilation).numpy()


def run(case, layout, dtype, rng, *, module=False):
    (n, cin, h, w_), (kg, kh, kw), stride, padding, output_padding, groups, dilation, bias = case
    x = rng.standard_normal((n, cin, h, w_)).astype(dtype)
    w = rng.standard_normal((cin, kg, kh, kw)).astype(dtype)
    b = rng.standard_normal(kg * groups).astype(dtype) if bias else None
    want = torch_convt(x, w, b, stride, padding, output_padding, groups, dilation)
    mag = torch_convt(np.abs(x), np.abs(w), None if b is None else np.abs(b), stride, padding,
                      output_padding, groups, dilation)
    if layout == "NHWC":
        x, w = x.transpose(0, 2, 3, 1), np.ascontiguousarray(w.transpose(0, 2, 3, 1))
    args = (b, stride, padding, output_padding, groups, dilation)
    if module:
        got = tg.ConvTranspose2d(w, *args, layout=layout)(x)
    else:
        got = tg.conv_transpose2d(x, w, *args, layout=layout)
    assert got.dtype == dtype
    if layout == "NHWC":
        got = got.transpose(0, 3, 1, 2)
    assert got.shape == want.shape
    eps = 2e-6 if dtype == np.float32 else 1e-13
    tol = eps * np.sqrt(cin // groups * kh * kw) * (mag + 1)
    assert np.all(np.abs(got - want) <= tol), np.max(np.abs(got - want))


# (n, cin, h, w), (cout/groups, kh, kw), stride, padding, output_padding, groups, dilation, bias
GRID = [
    ((1, 3, 5, 7), (4, 3, 3), 1, 0, 0, 1, 1, True),
    ((2, 4, 6, 5), (3, 2, 2), 2, 0, 0, 1, 1, False),
    ((1, 8, 7, 9), (5, 4, 4), 2, 1, 0, 1, 1, True),
    ((2, 6, 5, 4), (2, 3, 3), 2, 1, 1, 2, 1, True),
    ((1, 5, 4, 6), (3, 5, 5), 3, 2, 2, 1, 1, True),
    ((1, 3, 3, 3), (2, 1, 1), 1, 0, 0, 1, 1, True),
    ((1, 4, 5, 5), (3, 1, 3), (2, 3), (0, 1), (1, 2), 1, 1, False),
    ((3, 6, 4, 5), (1, 3, 2), 1, 1, 0, 6, 2, True),                # depthwise, dilated
    ((1, 4, 6, 7), (3, 3, 3), 2, 2, 1, 1, 2, True),                # dilation, output padding
    ((1, 6, 5, 3), (2, 4, 5), (3, 1), (1, 2), (2, 0), 3, (1, 2), False),
    ((2, 9, 1, 1), (7, 4, 4), 1, 0, 0, 1, 1, True),                # 1x1 input: the filter
    ((1, 16, 9, 11), (8, 4, 4), 2, 1, 0, 2, 1, True),
    ((2, 8, 9, 30), (64, 5, 5), 2, 2, 1, 1, 1, True),             # col in blocks of 2 rows
    ((1, 4, 7, 300), (40, 3, 3), 1, 1, 0, 2, 1, False),            # blocks of one row
]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", GRID)
def test_grid_float32(case, layout):
    run(case, layout, np.float32, np.random.default_rng(3))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", GRID[::2])
def test_grid_float64_and_module(case, layout):
    run(case, layout, np.float64, np.random.default_rng(4))
    run(case, layout, np.float32, np.random.default_rng(5), module=True)


def test_random_geometries():
    """Random small geometries over strides 1-3, kernels 1-5, every legal output padding."""
    rng = np.random.default_rng(6)
    for _ in range(40):
        groups = int(rng.integers(1, 4))
        s, d = (int(v) for v in rng.integers(1, 4, 2)), (int(v) for v in rng.integers(1, 3, 2))
        s, d = tuple(s), tuple(d)
        k = tuple(int(v) for v in rng.integers(1, 6, 2))
        p = tuple(int(rng.integers(0, (dd * (kk - 1)) // 2 + 1)) for dd, kk in zip(d, k))
        op = tuple(int(rng.integers(0, max(ss, dd))) for ss, dd in zip(s, d))
        case = ((int(rng.integers(1, 3)), groups * int(rng.integers(1, 4)),
                 int(rng.integers(1, 8)), int(rng.integers(1, 8))),
                (int(rng.integers(1, 4)), *k), s, p, op, groups, d, bool(rng.integers(2)))
        run(case, ["NCHW", "NHWC"][int(rng.integers(2))], np.float32, rng)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_and_larger_images(threads):
    """Upsampling layers big enough for the threaded col2im (threads split the output
    channels, unevenly at 3); a worker thread computes part of the result."""
    from tilegen.core import _core

    rng = np.random.default_rng(7)
    before = tg.get_num_threads()
    tg.set_num_threads(threads)
    try:
        tasks = _core._worker_tasks()
        # The calling thread may win every task of a region (the pool hands them out first come,
        # first served): repeat, checking each result, until a worker has run one.
        for _ in range(50):
            for layout in ("NCHW", "NHWC"):
                run(((1, 32, 24, 20), (16, 4, 4), 2, 1, 0, 1, 1, True), layout, np.float32, rng)
                run(((2, 16, 13, 17), (10, 3, 3), 2, 1, 1, 2, 1, True), layout, np.float64, rng)
            if threads == 1 or _core._worker_tasks() > tasks:
                break
        if threads > 1:
            assert _core._worker_tasks() > tasks
    finally:
        tg.set_num_threads(before)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_without_scratch_memory(layout):
    """When the col workspace cannot be had, the plain loops give the same answer."""
    from tilegen.core import _core

    _core._workspace_fail(True)
    try:
        for case in GRID[:6]:
            run(case, layout, np.float32, np.random.default_rng(9))
    finally:
        _core._workspace_fail(False)


def test_unbatched_lists_and_out():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    want = torch_convt(x[None], w, None, 2, 1, 1, 1, 1)[0]
    got = tg.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
    assert np.allclose(got, want, atol=1e-5)
    out = np.full(want.shape, np.nan, np.float32)
    assert tg.conv_transpose2d(x, w, None, 2, 1, 1, out=out) is out
    assert np.allclose(out, want, atol=1e-5)
    assert np.allclose(tg.conv_transpose2d(x.tolist(), w, None, 2, 1, 1), want, atol=1e-5)
    with pytest.raises(ValueError, match="out: shape"):
        tg.conv_transpose2d(x, w, None, 2, 1, 1, out=np.empty((1,) + want.shape, np.float32))
    with pytest.raises(TypeError, match="out: dtype"):
        tg.conv_transpose2d(x, w, None, 2, 1, 1, out=np.empty(want.shape, np.float64))
    # The input itself as out (same shape at stride 1 with "same"-like padding): handled.
    x2 = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    w2 = rng.standard_normal((3, 3, 3, 3)).astype(np.float32)
    want2 = torch_convt(x2, w2, None, 1, 1, 0, 1, 1)
    tg.conv_transpose2d(x2, w2, padding=1, out=x2)
    assert np.allclose(x2, want2, atol=1e-4)


def test_empty_batch():
    w = np.ones((2, 3, 2, 2), np.float32)
    assert tg.conv_transpose2d(np.zeros((0, 2, 4, 4), np.float32), w, stride=2).shape == \
        (0, 3, 8, 8)


@pytest.mark.parametrize("call, exc, words", [
    (lambda x, w: tg.conv_transpose2d(x, w, stride=2, output_padding=2), ValueError,
     "output_padding"),
    (lambda x, w: tg.conv_transpose2d(x, w, output_padding=1), ValueError, "output_padding"),
    (lambda x, w: tg.conv_transpose2d(x, w, padding=5), ValueError, "padding"),
    (lambda x, w: tg.conv_transpose2d(x, w, padding="same"), ValueError, "padding"),
    (lambda x, w: tg.conv_transpose2d(x, w, stride=0), ValueError, "stride"),
    (lambda x, w: tg.conv_transpose2d(x, w, dilation=0), ValueError, "dilation"),
    (lambda x, w: tg.conv_transpose2d(x, w, groups=3), ValueError, "groups"),
    (lambda x, w: tg.conv_transpose2d(x, w[:2]), ValueError, "x: has 4 channels"),
    (lambda x, w: tg.conv_transpose2d(x, w, np.zeros(5)), ValueError, "bias"),
    (lambda x, w: tg.conv_transpose2d(x, w, layout="NWHC"), ValueError, "layout"),
    (lambda x, w: tg.conv_transpose2d(x.astype(np.int32), w), TypeError, "x: dtype"),
    (lambda x, w: tg.conv_transpose2d(x, w[0]), ValueError, "weight"),
    (lambda x, w: tg.conv_transpose2d(x.astype(np.float64), w), TypeError, "x: dtype"),
])
def test_bad_input(call, exc, words):
    x = np.zeros((1, 4, 3, 3), np.float32)
    w = np.zeros((4, 2, 3, 3), np.float32)
    with pytest.raises(exc, match=words):
        call(x, w)


def test_torch_rejects_the_same():
    """The output_padding rule and the empty output are torch's too."""
    x, w = torch.zeros(1, 4, 3, 3), torch.zeros(4, 2, 3, 3)
    for kw in (dict(stride=2, output_padding=2), dict(output_padding=1), dict(padding=5)):
        with pytest.raises(RuntimeError):
            F.conv_transpose2d(x, w, **kw)
    # output_padding below the dilation is legal at stride 1, as in torch.
    F.conv_transpose2d(x, w, output_padding=1, dilation=2)
    tg.conv_transpose2d(np.zeros((1, 4, 3, 3), np.float32), np.zeros((4, 2, 3, 3), np.float32),
                        output_padding=1, dilation=2)


def test_module_repr_and_properties():
    w = np.ones((4, 2, 2, 2), np.float32)
    m = tg.ConvTranspose2d(w, np.zeros(4), stride=2, groups=2, layout="NHWC")
    assert m.layout == "NHWC" and m.weight.shape == (4, 2, 2, 2) and m.bias.dtype == np.float32
    assert repr(m).startswith("ConvTranspose2d(4, 4, kernel=(2, 2), stride=(2, 2)")
    y = m(np.ones((1, 3, 3, 4), np.float32))
    assert y.shape == (1, 6, 6, 4) and np.allclose(y, 2.0)


def test_c_api_checks_parameters():
    """The C entry point refuses a bad output padding (parameter 16) and writes nothing."""
    import ctypes

    lib = ctypes.CDLL(tg.get_library())
    f = lib.tilegen_conv_transpose2d_f32
    i64 = ctypes.c_int64
    f.argtypes = [ctypes.c_int] + [i64] * 4 + [ctypes.c_void_p] + [i64] * 3 + \
        [ctypes.c_void_p] * 2 + [i64] * 9 + [ctypes.c_void_p]
    x = np.ones((1, 2, 3, 3), np.float32)
    w = np.ones((2, 2, 2, 2), np.float32)
    y = np.full((1, 2, 6, 6), 7.0, np.float32)
    p = lambda a: a.ctypes.data  # noqa: E731
    args = [0, 1, 3, 3, 2, p(x), 2, 2, 2, p(w), None, 2, 2, 0, 0, 0, 0, 1, 1, 1, p(y)]
    bad = list(args)
    bad[15] = 2  # output_padding_h == stride
    assert f(*bad) == -16 and np.all(y == 7.0)
    bad = list(args)
    bad[19] = 3  # groups
    assert f(*bad) == -20
    assert f(*args) == 0 and np.allclose(y, 2.0)
