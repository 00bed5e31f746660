"""tg.conv2d / tg.Conv2d: padding_mode against torch.nn.Conv2d(padding_mode=...) (float64
reference), and out= (written in place, checked as NumPy's ufuncs check out=, overlap handled).
"""
import numpy as np
import pytest
from conftest import reference

import tilegen as tg

torch = reference("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")

MODES = ["zeros", "reflect", "replicate", "circular"]


def torch_module(w, b, stride, padding, dilation, groups, mode):
    """torch.nn.Conv2d with these weights, float64. padding: int, pair or "same" (torch's
    module has no 4-value form; those go through F.pad, see below)."""
    cout, cg, kh, kw = w.shape
    m = torch.nn.Conv2d(cg * groups, cout, (kh, kw), stride, padding, dilation, groups,
                        bias=b is not None, padding_mode=mode).double()
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(w.astype(np.float64)))
        if b is not None:
            m.bias.copy_(torch.from_numpy(b.astype(np.float64)))
    return m


def reference_conv(x, w, b, stride, padding, dilation, groups, mode):
    if isinstance(padding, tuple) and len(padding) == 4:  # (top, bottom, left, right)
        t, bot, left, right = padding
        xt = torch.from_numpy(x.astype(np.float64))
        xt = torch.nn.functional.pad(xt, (left, right, t, bot),
                                     mode="constant" if mode == "zeros" else mode)
        return torch_module(w, b, stride, 0, dilation, groups, "zeros")(xt).detach().numpy()
    m = torch_module(w, b, stride, padding, dilation, groups, mode)
    return m(torch.from_numpy(x.astype(np.float64))).detach().numpy()


# (n, cin, h, w), (cout, kh, kw), stride, padding, dilation, groups
CASES = [
    ((1, 3, 7, 9), (4, 3, 3), 1, 1, 1, 1),
    ((2, 4, 6, 5), (6, 5, 3), 2, (2, 1), 1, 2),
    ((1, 2, 5, 8), (3, 3, 3), (1, 2), (1, 2), 2, 1),
    ((1, 4, 9, 7), (4, 3, 3), 1, 1, 1, 4),                  # depthwise
    ((2, 3, 6, 6), (2, 2, 4), 1, "same", 1, 1),             # even filter, asymmetric sides
    ((1, 3, 5, 7), (5, 3, 3), 1, (1, 2, 0, 3), 1, 1),       # (top, bottom, left, right)
    ((1, 8, 11, 13), (16, 3, 3), 2, 1, 1, 1),
]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_padding_mode_matches_torch(case, mode, layout):
    rng = np.random.default_rng(11)
    (n, cin, h, w_), (cout, kh, kw), stride, padding, dilation, groups = case
    x = rng.standard_normal((n, cin, h, w_)).astype(np.float32)
    w = rng.standard_normal((cout, cin // groups, kh, kw)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    want = reference_conv(x, w, b, stride, padding, dilation, groups, mode)
    xl, wl = x, w
    if layout == "NHWC":
        xl, wl = x.transpose(0, 2, 3, 1), np.ascontiguousarray(w.transpose(0, 2, 3, 1))
    got = tg.conv2d(xl, wl, b, stride, padding, dilation, groups, layout=layout,
                    padding_mode=mode)
    mod = tg.Conv2d(wl, b, stride, padding, dilation, groups, layout=layout, padding_mode=mode)
    got2 = mod(xl)
    if layout == "NHWC":
        got, got2 = got.transpose(0, 3, 1, 2), got2.transpose(0, 3, 1, 2)
    assert got.shape == want.shape
    tol = 1e-5 * np.sqrt(cin * kh * kw) * (np.abs(want) + 1)
    assert np.all(np.abs(got - want) <= tol)
    assert np.all(np.abs(got2 - want) <= tol)
    if mode != "zeros":
        assert f"padding_mode={mode!r}" in repr(mod)
        assert repr(tg.Conv2d(wl, b, stride, padding, dilation, groups, layout=layout,
                              padding_mode=mode)) == repr(mod)


def test_padding_mode_float64_unbatched():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((3, 5, 6))
    w = rng.standard_normal((2, 3, 3, 3))
    for mode in MODES[1:]:
        want = reference_conv(x[None], w, None, 1, 2, 1, 1, mode)[0]
        got = tg.conv2d(x, w, padding=2, padding_mode=mode)
        assert got.dtype == np.float64 and np.allclose(got, want, rtol=1e-12, atol=1e-12)


def test_padding_limits_as_torch():
    """reflect needs padding < the input's size, circular <= it (torch's F.pad rules); the
    error is a ValueError naming padding."""
    x = np.ones((1, 1, 3, 4), np.float32)
    w = np.ones((1, 1, 3, 3), np.float32)
    with pytest.raises(ValueError, match="padding: .*reflect"):
        tg.conv2d(x, w, padding=3, padding_mode="reflect")
    with pytest.raises(ValueError, match="padding"):
        tg.conv2d(x, w, padding=(2, 4), padding_mode="reflect")  # 4 >= width 4
    assert tg.conv2d(x, w, padding=(2, 3), padding_mode="reflect").shape == (1, 1, 5, 8)
    assert tg.conv2d(x, w, padding=3, padding_mode="circular").shape == (1, 1, 7, 8)
    with pytest.raises(ValueError, match="padding"):
        tg.conv2d(x, w, padding=4, padding_mode="circular")
    assert tg.conv2d(x, w, padding=9, padding_mode="replicate").shape == (1, 1, 19, 20)
    for bad, mode in ((3, "reflect"), (4, "circular")):
        with pytest.raises(RuntimeError):
            torch_module(w, None, 1, bad, 1, 1, mode)(torch.ones(1, 1, 3, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="padding_mode"):
        tg.conv2d(x, w, padding_mode="mirror")
    with pytest.raises(ValueError, match="padding_mode"):
        tg.Conv2d(w, padding_mode="zero")


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_out(layout):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 6, 7, 5)).astype(np.float32)
    w = rng.standard_normal((6, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    if layout == "NHWC":
        x, w = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(
            w.transpose(0, 2, 3, 1))
    want = tg.conv2d(x, w, b, 1, 1, groups=2, layout=layout, activation="relu")
    out = np.full(want.shape, np.nan, np.float32)
    got = tg.conv2d(x, w, b, 1, 1, groups=2, layout=layout, activation="relu", out=out)
    assert got is out and np.array_equal(out, want)
    conv = tg.Conv2d(w, b, 1, 1, groups=2, layout=layout, activation="relu")
    out[...] = np.nan
    assert conv(x, out=out) is out and np.allclose(out, want, atol=1e-5)
    # Unbatched input: out takes the unbatched shape.
    out1 = np.empty(want.shape[1:], np.float32)
    assert tg.conv2d(x[0], w, b, 1, 1, groups=2, layout=layout, activation="relu",
                     out=out1) is out1
    assert np.allclose(out1, want[0], atol=1e-5)
    # out is x itself (same shape: 6 -> 6 channels, "same" padding): computed through a copy.
    want_same = tg.conv2d(x, w, b, 1, 1, groups=2, layout=layout)
    xc = x.copy()
    assert tg.conv2d(xc, w, b, 1, 1, groups=2, layout=layout, out=xc) is xc
    assert np.allclose(xc, want_same, atol=1e-5)
    xc = x.copy()
    assert conv(xc, out=xc) is xc and np.allclose(xc, np.maximum(want_same, 0), atol=1e-5)
    # float64 and padding modes take out= too.
    want64 = tg.conv2d(x.astype(np.float64), w.astype(np.float64), None, 1, 1, groups=2,
                       layout=layout, padding_mode="reflect")
    out64 = np.empty_like(want64)
    tg.conv2d(x.astype(np.float64), w.astype(np.float64), None, 1, 1, groups=2, layout=layout,
              padding_mode="reflect", out=out64)
    assert np.array_equal(out64, want64)


def test_out_errors_follow_numpy():
    x = np.ones((1, 2, 4, 4), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    shape = (1, 3, 2, 2)
    # NumPy's ufuncs: a dtype they cannot cast to is a TypeError, a wrong shape or a read-only
    # array a ValueError.
    with pytest.raises(TypeError):
        np.add(np.ones(2), np.ones(2), out=np.empty(2, np.int64))
    with pytest.raises(ValueError):
        np.add(np.ones(2), np.ones(2), out=np.empty(3))
    with pytest.raises(TypeError, match="out: dtype"):
        tg.conv2d(x, w, out=np.empty(shape, np.float64))
    with pytest.raises(ValueError, match="out: shape"):
        tg.conv2d(x, w, out=np.empty((1, 3, 2, 3), np.float32))
    ro = np.empty(shape, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out: is read-only"):
        tg.conv2d(x, w, out=ro)
    with pytest.raises(ValueError, match="out: must be C-contiguous"):
        tg.conv2d(x, w, out=np.empty((1, 3, 2, 4), np.float32)[..., ::2])
    with pytest.raises(TypeError, match="out: expected a numpy.ndarray"):
        tg.conv2d(x, w, out=[[0.0]])
    with pytest.raises(TypeError, match="out"):
        tg.Conv2d(w)(x, out=np.empty(shape, np.float64))
