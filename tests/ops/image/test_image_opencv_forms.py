"""tg.image with OpenCV's argument forms, against cv2 (issue 38): Gaussian sizes derived from
sigma (ksize (0, 0)), non-square (width, height) sizes with sigmaX / sigmaY, the borders
reflect, wrap and constant with a value, OpenCV's integer cv2.BORDER_* constants, out= / dst=,
uint16 and float64 images, and batches threaded over images.

Tolerances: uint8 and uint16 Gaussians are OpenCV's bit-exact fixed point, checked equal; uint16
box and filter2d are checked equal (OpenCV rounds float or integer sums the same way); float64
within 1e-12 of the magnitude of the sum. Where OpenCV lacks a form (wrap for blur/filter2D, a
constant border's value), the reference is OpenCV on an array padded by np.pad, cropped.
"""
import numpy as np
import pytest
from conftest import reference

import tilegen as tg

cv2 = reference("cv2")
RNG = np.random.default_rng(20261206)

CV = {"reflect101": cv2.BORDER_REFLECT_101, "replicate": cv2.BORDER_REPLICATE,
      "constant": cv2.BORDER_CONSTANT, "reflect": cv2.BORDER_REFLECT, "wrap": cv2.BORDER_WRAP}
NP_PAD = {"reflect101": "reflect", "replicate": "edge", "constant": "constant",
          "reflect": "symmetric", "wrap": "wrap"}
DTYPES = [np.uint8, np.uint16, np.float32, np.float64]


def image(shape, dtype):
    if dtype == np.uint8:
        return RNG.integers(0, 256, shape, dtype=np.uint8)
    if dtype == np.uint16:  # the full range: saturation and the 16.16 sums' top bits
        return RNG.integers(0, 65536, shape, dtype=np.uint16)
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def padded_reference(fn, img, ky, kx, border, value=0.0):
    """fn (an OpenCV call) on img padded by np.pad (ky rows, kx columns, anchors at k // 2),
    cropped back: OpenCV's answer for a border it has no flag for."""
    ay, ax = ky // 2, kx // 2
    widths = [(ay, ky - 1 - ay), (ax, kx - 1 - ax)] + [(0, 0)] * (img.ndim - 2)
    kw = {"constant_values": value} if border == "constant" else {}
    p = np.pad(img, widths, mode=NP_PAD[border], **kw)
    r = fn(p)
    return r.reshape(p.shape)[ay:ay + img.shape[0], ax:ax + img.shape[1]]


def cv_gaussian(img, size, sx, sy, border):
    """cv2.GaussianBlur(img, size, sx, sigmaY=sy, borderType=border); OpenCV wraps only its
    fixed-point (uint8, uint16) Gaussians, so float wrap is OpenCV's on a wrap-padded copy."""
    if border == "wrap" and img.dtype.kind == "f":
        kw = size[0] or derived_size(sx, img.dtype)
        kh = size[1] or derived_size(sy if sy > 0 else sx, img.dtype)
        return padded_reference(lambda p: cv2.GaussianBlur(p, size, sx, sigmaY=sy), img, kh, kw,
                                border)
    return cv2.GaussianBlur(img, size, sx, sigmaY=sy, borderType=CV[border]).reshape(img.shape)


def derived_size(sigma, dtype):
    """OpenCV's Gaussian size for sigma: 3 sigmas each side for uint8, 4 for other depths."""
    return int(np.rint(sigma * (3 if dtype == np.uint8 else 4) * 2 + 1)) | 1


def assert_close(got, want, dtype, scale=1.0):
    assert got.dtype == dtype and got.shape == want.shape
    if dtype in (np.uint8, np.uint16):
        np.testing.assert_array_equal(got, want)
    elif dtype == np.float32:
        err = np.abs(got.astype(np.float64) - want).max()
        assert err <= 2e-5 * scale, f"max error {err:.3g}"
    else:
        err = np.abs(got - want).max()
        assert err <= 1e-12 * scale, f"max error {err:.3g} (scale {scale:.3g})"


def mag(img):
    return float(np.abs(img.astype(np.float64)).max()) + 1.0


# --- Gaussian: sizes from sigma, (width, height), sigmaX / sigmaY, every dtype and border ---

GAUSS_FORMS = [((0, 0), 1.3, 0), ((0, 0), 0.6, 2.2), ((5, 3), 1.1, 0), ((3, 7), 0, 0),
               ((1, 5), 1.0, 0.7), ((7, 1), 2.0, 0), ((0, 5), 1.4, 0), (9, 0, 0), (11, 1.7, 0)]
SHAPES = [(37, 29), (23, 41, 3), (17, 13, 4), (3, 2), (2, 5, 3), (1, 9), (9, 1, 4), (1, 1)]


@pytest.mark.parametrize("border", ["reflect101", "replicate", "constant", "reflect", "wrap"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gaussian_forms_match_opencv(dtype, border):
    for shape in SHAPES:  # odd sizes, 1 / 3 / 4 channels, images smaller than the kernel
        img = image(shape, dtype)
        for ksize, sx, sy in GAUSS_FORMS:
            size = ksize if isinstance(ksize, tuple) else (ksize, ksize)
            want = cv_gaussian(img, size, sx, sy, border)
            got = tg.image.gaussian_blur(img, ksize, sx, sigmaY=sy, border=border)
            assert_close(got, want, dtype, mag(img))
            # OpenCV's integer constant and its keyword spellings give the same call
            again = tg.image.gaussian_blur(img, ksize, sigmaX=sx, sigmaY=sy,
                                           borderType=CV[border])
            np.testing.assert_array_equal(again, got)


def test_size_from_sigma_follows_the_depth():
    """OpenCV derives 3 sigmas each side for uint8, 4 for the other depths."""
    for dtype in DTYPES:
        img = image((64, 64), dtype)
        for sigma in (0.5, 1.0, 1.25, 2.3):
            k = derived_size(sigma, dtype)
            np.testing.assert_array_equal(tg.image.gaussian_blur(img, (0, 0), sigma),
                                          tg.image.gaussian_blur(img, (k, k), sigma))


def test_explicit_size_takes_any_sigma():
    """Only a size derived from sigma bounds it (8 sigma + 1 <= 65536); with a size given, a
    huge sigma is OpenCV's near-box Gaussian."""
    for dtype in DTYPES:
        img = image((20, 24, 3), dtype)
        assert_close(tg.image.gaussian_blur(img, (5, 3), 1e6),
                     cv2.GaussianBlur(img, (5, 3), 1e6), dtype, mag(img))


# --- box and filter2d on uint16 / float64, every border ---

@pytest.mark.parametrize("border", ["reflect101", "replicate", "constant", "reflect", "wrap"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_box_and_filter2d_every_dtype_and_border(dtype, border):
    kernels = [np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32),
               RNG.standard_normal((3, 5)).astype(np.float32) / 4,
               RNG.standard_normal((4, 2)).astype(np.float32) / 3]
    for shape in [(31, 27), (19, 22, 3), (11, 9, 4), (2, 3), (1, 7, 3)]:
        img = image(shape, dtype)
        if dtype == np.uint16:
            img //= 4  # filter2D's sums of a sharpening kernel stay inside the range mostly
        for k in (1, 2, 3, 5, 8):
            if border == "wrap":  # OpenCV's blur has no BORDER_WRAP
                want = padded_reference(lambda p: cv2.blur(p, (k, k)), img, k, k, border)
            else:
                want = cv2.blur(img, (k, k), borderType=CV[border]).reshape(img.shape)
            got = tg.image.box_blur(img, k, border=border)
            if dtype == np.float32:
                assert_close(got, want, dtype, mag(img))
            else:
                assert_close(got, want, dtype, mag(img))
        for kern in kernels:
            if border == "wrap":
                want = padded_reference(lambda p: cv2.filter2D(p, -1, kern), img, *kern.shape,
                                        border)
            else:
                want = cv2.filter2D(img, -1, kern, borderType=CV[border]).reshape(img.shape)
            got = tg.image.filter2d(img, kern, border=border)
            if dtype == np.uint16:
                # float sums (OpenCV's too) of random taps: a near-tie may round the other
                # way (measured: 0.07% of values of 200x200x3, by 1)
                diff = np.abs(got.astype(np.int64) - want)
                assert diff.max() <= 1 and (diff != 0).sum() <= max(2, 0.005 * diff.size)
            else:
                assert_close(got, want, dtype, mag(img) * np.abs(kern).sum())


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_constant_border_with_a_value(dtype):
    """border_value (or OpenCV's borderValue): per channel or one for all; the reference pads
    with np.pad's constant_values (OpenCV's GaussianBlur/blur/filter2D take no value)."""
    hi = {np.uint8: 255, np.uint16: 65535}.get(dtype, 1.0)
    for shape, value in [((21, 17, 3), (0.3 * hi, 0.7 * hi, 0.9 * hi)), ((15, 12), 0.5 * hi),
                         ((9, 11, 4), (hi, 0, 0.25 * hi, 0.5 * hi))]:
        img = image(shape, dtype)
        v = np.asarray(value, np.float64)
        if dtype in (np.uint8, np.uint16):
            v = np.rint(v)
        vpad = np.broadcast_to(v, shape[2:]).astype(dtype) if len(shape) == 3 else dtype(v)

        def pad_with(p_img, ky, kx):
            ay, ax = ky // 2, kx // 2
            p = np.empty((shape[0] + ky - 1, shape[1] + kx - 1) + shape[2:], dtype)
            p[...] = vpad
            p[ay:ay + shape[0], ax:ax + shape[1]] = p_img
            return p, ay, ax

        for ksize, sigma in [((5, 3), 1.2), ((0, 0), 1.5)]:
            got = tg.image.gaussian_blur(img, ksize, sigma, border="constant", border_value=value)
            kx, ky = ksize if ksize != (0, 0) else (derived_size(sigma, dtype),) * 2
            p, ay, ax = pad_with(img, ky, kx)
            want = cv2.GaussianBlur(p, (kx, ky), sigma).reshape(p.shape)[ay:ay + shape[0], ax:ax + shape[1]]
            assert_close(got, want, dtype, mag(img))
        p, ay, ax = pad_with(img, 5, 5)
        want = cv2.blur(p, (5, 5)).reshape(p.shape)[ay:ay + shape[0], ax:ax + shape[1]]
        assert_close(tg.image.box_blur(img, 5, borderType=0, borderValue=value), want, dtype,
                     mag(img))
        kern = RNG.standard_normal((3, 3)).astype(np.float32) / 3
        p, ay, ax = pad_with(img, 3, 3)
        want = cv2.filter2D(p, -1, kern).reshape(p.shape)[ay:ay + shape[0], ax:ax + shape[1]]
        got = tg.image.filter2d(img, kern, border="constant", border_value=value)
        if dtype in (np.uint8, np.uint16):  # float sums: a near-tie may round the other way
            assert np.abs(got.astype(np.int64) - want).max() <= 1
        else:
            assert_close(got, want, dtype, mag(img) * 3)


# --- unsharp mask on the new dtypes ---

def test_unsharp_mask_uint16_and_float64():
    for dtype in (np.uint16, np.float64):
        img = image((33, 28, 3), dtype)
        for border in ("reflect", "wrap", "constant"):
            blur = cv_gaussian(img, (5, 5), 1.0, 0, border).astype(np.float64)
            src = img.astype(np.float64)
            sharp = src + 1.5 * (src - blur)
            thr = 3.0 if dtype == np.uint16 else 0.1
            if dtype == np.uint16:
                sharp = np.clip(np.rint(sharp), 0, 65535)
            want = np.where(np.abs(src - blur) > thr, sharp, src)
            got = tg.image.unsharp_mask(img, 5, 1.0, 1.5, thr, border=border)
            if dtype == np.uint16:  # float32 sums of values up to 2^16: within 1
                assert np.abs(got.astype(np.int64) - want).max() <= 1
            else:
                assert np.abs(got - want).max() <= 1e-12 * mag(img)


# --- out= / dst= ---

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_out_and_dst(dtype):
    img = image((20, 30, 3), dtype)
    want = tg.image.gaussian_blur(img, (5, 3), 1.2)
    out = np.empty_like(img)
    assert tg.image.gaussian_blur(img, (5, 3), 1.2, out=out) is out
    np.testing.assert_array_equal(out, want)
    dst = np.empty_like(img)
    assert tg.image.box_blur(img, 3, dst=dst) is dst
    np.testing.assert_array_equal(dst, tg.image.box_blur(img, 3))
    # a strided view of a larger array: written in place, nothing around it touched
    big = np.full((22, 64, 3), 7, dtype)
    view = big[1:21, 2:62:2]
    assert tg.image.filter2d(img, np.ones((3, 3)) / 9, out=view) is view
    np.testing.assert_array_equal(view, tg.image.filter2d(img, np.ones((3, 3)) / 9))
    mask = np.ones(big.shape[:2], bool)
    mask[1:21, 2:62:2] = False
    assert (big[mask] == 7).all()
    # in place: out is img
    copy = img.copy()
    assert tg.image.unsharp_mask(copy, out=copy) is copy
    np.testing.assert_array_equal(copy, tg.image.unsharp_mask(img))
    # a batch
    stack = image((3, 9, 8, 1), dtype)
    o = np.empty_like(stack)
    tg.image.gaussian_blur(stack, 3, 0, out=o)
    np.testing.assert_array_equal(o, tg.image.gaussian_blur(stack, 3, 0))


@pytest.mark.parametrize("out, exc, match", [
    (np.empty((20, 30, 3), np.float32), TypeError, "out: dtype"),
    (np.empty((20, 30), np.uint8), ValueError, "out: shape"),
    (np.empty((30, 20, 3), np.uint8), ValueError, "out: shape"),
    ([[0]], TypeError, "out: expected a NumPy array"),
])
def test_bad_out(out, exc, match):
    img = image((20, 30, 3), np.uint8)
    with pytest.raises(exc, match=match):
        tg.image.gaussian_blur(img, 3, 0, out=out)
    with pytest.raises(TypeError, match="out: given twice"):
        tg.image.box_blur(img, 3, out=np.empty_like(img), dst=np.empty_like(img))
    ro = np.empty_like(img)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="dst: the array is read-only"):
        tg.image.box_blur(img, 3, dst=ro)


@pytest.mark.parametrize("call, exc, name", [
    (lambda i: tg.image.gaussian_blur(i, (3, 4), 1.0), ValueError, "ksize"),
    (lambda i: tg.image.gaussian_blur(i, (3, 3, 3), 1.0), ValueError, "ksize"),
    (lambda i: tg.image.gaussian_blur(i, (0, 3), 0.0), ValueError, "ksize"),
    (lambda i: tg.image.gaussian_blur(i, (-1, 3), 1.0), ValueError, "ksize"),
    (lambda i: tg.image.gaussian_blur(i, (3.0, 3), 1.0), TypeError, "ksize"),
    (lambda i: tg.image.gaussian_blur(i, 0, 1e6), ValueError, "sigma"),
    (lambda i: tg.image.gaussian_blur(i, 3, 1.0, sigmaX=1.0), TypeError, "sigma"),
    (lambda i: tg.image.gaussian_blur(i, 3, 1.0, sigmaY="x"), TypeError, "sigmaY"),
    (lambda i: tg.image.gaussian_blur(i, 3, 1.0, sigmaY=float("inf")), ValueError, "sigmaY"),
    (lambda i: tg.image.box_blur(i, 3, border=True), TypeError, "border"),
    (lambda i: tg.image.box_blur(i, 3, border=7), ValueError, "border"),
    (lambda i: tg.image.box_blur(i, 3, border="wrap", borderType=3), TypeError, "border"),
    (lambda i: tg.image.box_blur(i, 3, border="constant", border_value=(1, 2)), ValueError,
     "border_value"),
    (lambda i: tg.image.box_blur(i, 3, border="constant", border_value="x"), TypeError,
     "border_value"),
    (lambda i: tg.image.box_blur(i, 3, border="constant", border_value=float("nan")),
     ValueError, "border_value"),
    (lambda i: tg.image.filter2d(i, np.full((3, 3), np.inf)), ValueError, "kernel"),
])
def test_bad_arguments_name_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call(np.zeros((8, 8, 3), np.uint16))


def test_opencv_border_constants_and_isolated_flag():
    img = image((25, 19, 3), np.uint8)
    for name, code in CV.items():
        a = tg.image.gaussian_blur(img, 5, 1.0, border=name)
        np.testing.assert_array_equal(tg.image.gaussian_blur(img, 5, 1.0, border=code), a)
        np.testing.assert_array_equal(
            tg.image.gaussian_blur(img, 5, 1.0, borderType=code | cv2.BORDER_ISOLATED), a)
    assert cv2.BORDER_DEFAULT == 4
    np.testing.assert_array_equal(tg.image.box_blur(img, 3, border=cv2.BORDER_DEFAULT),
                                  cv2.blur(img, (3, 3)))


# --- a batch threads over its images ---

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_batch_is_threaded_and_equals_each_image(dtype):
    stack = image((16, 24, 20, 3), dtype)[:, :, ::-1]  # a view: reversed columns
    before = tg.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            tg.set_num_threads(n)
            results.append([tg.image.gaussian_blur(stack, (5, 3), 1.1, border="wrap"),
                            tg.image.box_blur(stack, 3, border="reflect"),
                            tg.image.filter2d(stack, np.ones((3, 2)) / 6, border=1)])
    finally:
        tg.set_num_threads(before)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    for i in range(stack.shape[0]):
        img = np.ascontiguousarray(stack[i])
        np.testing.assert_array_equal(results[0][0][i],
                                      tg.image.gaussian_blur(img, (5, 3), 1.1, border="wrap"))
        assert_close(results[0][0][i], cv_gaussian(img, (5, 3), 1.1, 0, "wrap"), dtype, mag(img))


def test_batch_splits_images_across_threads():
    """A batch of images each too small to thread is one call of the C library, whose worker
    threads take images (tilegen_x_worker_tasks counts the tasks workers ran)."""
    from tilegen.core import _core
    before = tg.get_num_threads()
    try:
        tg.set_num_threads(2)
        stack = image((64, 32, 32, 3), np.uint8)
        single = tg.image.gaussian_blur(stack[0], 5, 1.0)
        n0 = _core._worker_tasks()
        tg.image.gaussian_blur(stack[0], 5, 1.0)
        assert _core._worker_tasks() == n0  # one small image: no worker
        for _ in range(50):  # the caller takes every task when the worker wakes late
            got = tg.image.gaussian_blur(stack, 5, 1.0)
            if _core._worker_tasks() > n0:
                break
        assert _core._worker_tasks() > n0
    finally:
        tg.set_num_threads(before)
    np.testing.assert_array_equal(got[0], single)
