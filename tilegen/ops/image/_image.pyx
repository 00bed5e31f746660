# cython: language_level=3
"""Bindings to libtilegen's image filters (tilegen.h): argument checks, the GIL released around
the C call. The public functions are re-exported by tilegen.image."""
from libc.stdint cimport int64_t, uint8_t, intptr_t
cimport numpy as cnp

import math
import numbers
import warnings

import numpy as np

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    int tilegen_filter2d_f32(const float* src, int64_t ss, float* dst, int64_t ds, int64_t h,
                             int64_t w, int64_t c, const float* kernel, int64_t kh, int64_t kw,
                             int border)
    int tilegen_filter2d_u8(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                            int64_t h, int64_t w, int64_t c, const float* kernel, int64_t kh,
                            int64_t kw, int border)
    int tilegen_gaussian_blur_u8(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                                 int64_t h, int64_t w, int64_t c, int64_t ksize, double sigma,
                                 int border)
    int tilegen_gaussian_blur_f32(const float* src, int64_t ss, float* dst, int64_t ds,
                                  int64_t h, int64_t w, int64_t c, int64_t ksize, double sigma,
                                  int border)
    int tilegen_box_blur_u8(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds, int64_t h,
                            int64_t w, int64_t c, int64_t ksize, int border)
    int tilegen_box_blur_f32(const float* src, int64_t ss, float* dst, int64_t ds, int64_t h,
                             int64_t w, int64_t c, int64_t ksize, int border)
    int tilegen_unsharp_mask_u8(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                                int64_t h, int64_t w, int64_t c, int64_t ksize, double sigma,
                                double amount, double threshold, int border)
    int tilegen_unsharp_mask_f32(const float* src, int64_t ss, float* dst, int64_t ds,
                                 int64_t h, int64_t w, int64_t c, int64_t ksize, double sigma,
                                 double amount, double threshold, int border)

    int tilegen_gaussian_blur_ex(int t, const void* src, int64_t ss, void* dst, int64_t ds,
                                 int64_t h, int64_t w, int64_t c, int64_t n, int64_t sb,
                                 int64_t db, int64_t kw, int64_t kh, double sx, double sy,
                                 int border, const double* value)
    int tilegen_box_blur_ex(int t, const void* src, int64_t ss, void* dst, int64_t ds,
                            int64_t h, int64_t w, int64_t c, int64_t n, int64_t sb, int64_t db,
                            int64_t ksize, int border, const double* value)
    int tilegen_filter2d_ex(int t, const void* src, int64_t ss, void* dst, int64_t ds,
                            int64_t h, int64_t w, int64_t c, int64_t n, int64_t sb, int64_t db,
                            const double* kernel, int64_t kh, int64_t kw, int border,
                            const double* value)
    int tilegen_unsharp_mask_ex(int t, const void* src, int64_t ss, void* dst, int64_t ds,
                                int64_t h, int64_t w, int64_t c, int64_t n, int64_t sb,
                                int64_t db, int64_t ksize, double sigma, double amount,
                                double threshold, int border, const double* value)

cdef extern from "tg_filter.h" nogil:
    const char* tilegen_x_filter_kernel(int kind)
    int tilegen_x_set_filter_isa(const char* isa)
    const char* tilegen_x_filter_isa(int i)

# TILEGEN_BORDER_* of tilegen.h, by name.
BORDERS = {"reflect101": 0, "replicate": 1, "constant": 2, "reflect": 3, "wrap": 4}
# OpenCV's integer cv2.BORDER_* (BORDER_DEFAULT = BORDER_REFLECT_101 = 4), by number.
CV_BORDERS = {0: "constant", 1: "replicate", 2: "reflect", 3: "wrap", 4: "reflect101"}
# cv2.BORDER_ISOLATED: OpenCV's flag to ignore pixels outside a ROI; a NumPy array is whole.
CV_BORDER_ISOLATED = 16
# TILEGEN_IMAGE_* of tilegen.h.
DTYPES = {np.dtype(np.uint8): 0, np.dtype(np.uint16): 1, np.dtype(np.float32): 2,
          np.dtype(np.float64): 3}
MAX_CHANNELS = 512
BOX_U8_MAX_KSIZE = 257
MAX_SIGMA = 8000  # a size derived from it (8 sigma + 1) stays within the C library's 65536
KINDS = ("vfilt", "vsum", "hfilt", "hsum", "filt2d", "tof32", "fround", "sharpen",
         "vupd")  # TG_FILTER_KIND_* order


def kernel_names():
    """The kernel serving each pass, {kind: name} (tests, tilegen info)."""
    return {k: tilegen_x_filter_kernel(i).decode() for i, k in enumerate(KINDS)}


def kernel_isas():
    """The usable ISAs with a kernel for every pass, best first (the first is the built-in
    choice; `tilegen tune` may pick another)."""
    out = []
    cdef const char* p = tilegen_x_filter_isa(0)
    while p != NULL:
        out.append(p.decode())
        p = tilegen_x_filter_isa(len(out))
    return out


def set_kernel_isa(isa=None):
    """Run the filters on `isa`'s kernel set (one of kernel_isas()); None restores the best."""
    if isa is not None and not isinstance(isa, str):
        raise TypeError(f"isa must be an ISA name or None, not {type(isa).__name__}")
    cdef bytes b = (isa or "").encode()
    if tilegen_x_set_filter_isa(b) != 0:
        raise ValueError(f"isa: {isa!r} has no complete filter kernel set here "
                         f"(one of {', '.join(kernel_isas())})")


class ImageLayoutWarning(UserWarning):
    """An image array whose shape looks planar (CxHxW, torch's order) rather than HxWxC."""


# More channels than this, with fewer rows than channels, is the shape of a planar CxHxW array
# (a (3, 512, 512) image read as 3 rows x 512 columns x 512 channels): it warns, then runs.
# Many-channel images are legitimate (up to MAX_CHANNELS; OpenCV 4 takes 512, OpenCV 5 128),
# so it is not refused; a real one has more rows than channels and does not warn.
PLANAR_SUSPECT_CHANNELS = 4


def _border(border):
    """TILEGEN_BORDER_* from a name of BORDERS or OpenCV's integer cv2.BORDER_*."""
    if isinstance(border, str):
        try:
            return BORDERS[border]
        except KeyError:
            raise ValueError(f"border: {border!r} is not supported; allowed values: "
                             f"{', '.join(BORDERS)} or OpenCV's cv2.BORDER_* numbers") from None
    if isinstance(border, bool) or not isinstance(border, numbers.Integral):
        raise TypeError(f"border: expected one of {', '.join(BORDERS)} or a cv2.BORDER_* "
                        f"int, got {type(border).__name__}")
    name = CV_BORDERS.get(int(border) & ~CV_BORDER_ISOLATED)
    if name is None:
        raise ValueError(f"border: {int(border)} is not a supported cv2.BORDER_* value; allowed: "
                         + ", ".join(f"{k} ({v})" for k, v in CV_BORDERS.items()))
    return BORDERS[name]


def _alias(name, value, cv_name, cv_value, default):
    """One of a keyword and its OpenCV spelling (sigmaY, borderType, dst, ...)."""
    if cv_value is None:
        return default if value is None else value
    if value is not None:
        raise TypeError(f"{name}: given twice (as {name} and as {cv_name})")
    return cv_value


def _border_args(border, borderType, border_value, borderValue, int c):
    """(TILEGEN_BORDER_*, the constant's value per channel as float64 or None)."""
    if borderType is None and border_value is None and borderValue is None:
        if border is None:  # the common call: no per-call work
            return 0, None
        if type(border) is str and border in BORDERS:
            return BORDERS[border], None
    b = _border(_alias("border", border, "borderType", borderType, "reflect101"))
    v = _alias("border_value", border_value, "borderValue", borderValue, None)
    if v is None:
        return b, None
    arr = np.asarray(v)
    if arr.dtype.kind not in "biuf" or arr.dtype.kind == "b":
        raise TypeError(f"border_value: expected a real number or one per channel, got "
                        f"{type(v).__name__}")
    arr = arr.astype(np.float64).ravel()
    if arr.size == 1:
        arr = np.repeat(arr, c)
    elif arr.size == 4 and c < 4:  # an OpenCV Scalar: its first C values
        arr = arr[:c]
    if arr.size != c:
        raise ValueError(f"border_value: expected one value or one per channel ({c}), got "
                         f"{arr.size}")
    if not np.isfinite(arr).all():
        raise ValueError(f"border_value: expected finite numbers, got {v!r}")
    return b, (np.ascontiguousarray(arr) if b == BORDERS["constant"] else None)


def _image(img):
    """(array whose images have contiguous rows, N, H, W, C, row stride and image stride in
    elements): HxW and HxWxC are one image (N = 1), NxHxWxC a stack of N."""
    if not isinstance(img, np.ndarray):
        raise TypeError(f"img: expected a NumPy array, got {type(img).__name__}")
    if img.dtype not in DTYPES:
        raise TypeError(f"img: dtype {img.dtype} is not supported; allowed: uint8, uint16, "
                        f"float32, float64")
    if img.ndim not in (2, 3, 4):
        raise ValueError(f"img: expected an HxW or HxWxC image or an NxHxWxC stack of images, "
                         f"got {img.ndim} dimensions (shape {img.shape})")
    shape = img.shape[1:] if img.ndim == 4 else img.shape
    n = img.shape[0] if img.ndim == 4 else 1
    h, w = shape[0], shape[1]
    c = shape[2] if len(shape) == 3 else 1
    if h < 1 or w < 1 or c < 1:
        raise ValueError(f"img: every dimension of an image must be positive, got shape "
                         f"{img.shape}")
    if c > MAX_CHANNELS:
        raise ValueError(f"img: at most {MAX_CHANNELS} channels, got {c}; images are HxWxC "
                         f"(channels last): for a planar CxHxW array use "
                         f"np.moveaxis(img, 0, -1)")
    if c > PLANAR_SUSPECT_CHANNELS and h < c:
        # Cython functions have no frame: stacklevel 1 is the caller's line.
        warnings.warn(f"img: shape {img.shape} is read as {h} rows x {w} columns x {c} "
                      f"channels; images are HxWxC (channels last). If this is a planar CxHxW "
                      f"array (torch's order), pass np.moveaxis(img, 0, -1) and move the "
                      f"result back with np.moveaxis(out, -1, 0)", ImageLayoutWarning,
                      stacklevel=1)
    item = img.itemsize
    st = img.strides[1:] if img.ndim == 4 else img.strides
    inner_ok = (len(shape) == 2 and st[1] == item) or (
        len(shape) == 3 and st[2] == item and st[1] == c * item)
    if (not inner_ok or st[0] % item or (h > 1 and abs(st[0]) < w * c * item) or
            (img.ndim == 4 and img.strides[0] % item)):
        img = np.ascontiguousarray(img)
        st = img.strides[1:] if img.ndim == 4 else img.strides
    return img, n, h, w, c, st[0] // item, (img.strides[0] // item if img.ndim == 4 else 0)


def _out(out, dst, img):
    """(the array the C library writes, the array returned): a new one, or the caller's
    out/dst (NumPy's rules: an ndarray of the image's shape and dtype). A caller's array whose
    pixels are not interleaved rows gets the result through a copy."""
    if out is None and dst is None:
        res = np.empty(img.shape, img.dtype)
        return res, res
    out = _alias("out", out, "dst", dst, None)
    name = "out" if dst is None else "dst"
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name}: expected a NumPy array, got {type(out).__name__}")
    if out.dtype != img.dtype:
        raise TypeError(f"{name}: dtype {out.dtype} does not match the image's {img.dtype}")
    if out.shape != img.shape:
        raise ValueError(f"{name}: shape {out.shape} does not match the image's {img.shape}")
    if not out.flags.writeable:
        raise ValueError(f"{name}: the array is read-only")
    # (the module is compiled with wraparound off: no negative indices)
    item = out.itemsize
    st = out.strides[1:] if out.ndim == 4 else out.strides
    shape = out.shape[1:] if out.ndim == 4 else out.shape
    h, w, c = shape[0], shape[1], (shape[2] if len(shape) == 3 else 1)
    inner_ok = (len(st) == 2 and st[1] == item) or (
        len(st) == 3 and st[2] == item and st[1] == c * item)
    ok = (inner_ok and st[0] % item == 0 and (h == 1 or abs(st[0]) >= w * c * item) and
          (out.ndim != 4 or out.strides[0] % item == 0))
    if ok and out.ndim == 4 and out.shape[0] > 1:
        # images must not share pixels (a zero or too small batch stride)
        ok = abs(out.strides[0]) >= (h - 1) * abs(st[0]) + w * c * item
    if ok:  # overlapping img too: the C library reads a copy of the source then
        return out, out
    return np.empty(img.shape, img.dtype), out


def _strides(a):
    """(row stride, batch stride) in elements."""
    st = a.strides[1:] if a.ndim == 4 else a.strides
    return st[0] // a.itemsize, (a.strides[0] // a.itemsize if a.ndim == 4 else 0)


def _finish(res, out):
    if res is not out:
        out[...] = res
    return out


def _size(name, value):
    if type(value) is int:  # the common call, without the ABC checks below (slow)
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        if value[0] != value[1]:
            raise ValueError(f"{name}: only square kernels are supported, got {tuple(value)}")
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    return int(value)


def _size2(name, value):
    """OpenCV's Size: an int or (width, height)."""
    if type(value) is int:
        return value, value
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"{name}: expected an int or (width, height), got {len(value)} values")
        pair = value
    else:
        pair = (value, value)
    for v in pair:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name}: expected ints, got {type(v).__name__}")
    return int(pair[0]), int(pair[1])


def _real(name, value):
    if type(value) is not float and type(value) is not int and (
            isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    return value


def _check(int rc, names):
    if rc == 1:
        raise MemoryError("tilegen image filter: out of memory")
    if rc < 0:
        raise ValueError(f"{names.get(-rc, 'argument %d' % -rc)}: rejected by the C library")


cdef int64_t _addr(cnp.ndarray a):
    return <int64_t> <intptr_t> cnp.PyArray_DATA(a)


cdef const double* _vptr(v):
    return NULL if v is None else <const double*> <intptr_t> _addr(v)


def filter2d(img, kernel, *, border=None, borderType=None, border_value=None, borderValue=None,
             out=None, dst=None):
    """OpenCV's filter2D(img, -1, kernel, borderType=border): the correlation of img with
    kernel (2-D), the anchor at the kernel's centre (k//2 for even sizes). uint8 and uint16
    results are computed in float and rounded to nearest (ties to even), saturated; float64 in
    double."""
    img, n, h, w, c, ss, bs = _image(img)
    b, val = _border_args(border, borderType, border_value, borderValue, c)
    k = np.asarray(kernel)
    if k.dtype.kind not in "biuf":
        raise TypeError(f"kernel: dtype {k.dtype} is not supported; expected real numbers")
    if k.ndim != 2:
        raise ValueError(f"kernel: expected a 2-D kernel, got {k.ndim} dimensions "
                         f"(shape {k.shape})")
    if k.shape[0] < 1 or k.shape[1] < 1:
        raise ValueError(f"kernel: every dimension must be positive, got shape {k.shape}")
    # double taps; the C library rounds them to float for uint8, uint16 and float32 images
    # (OpenCV's float taps)
    k = np.ascontiguousarray(k, dtype=np.float64)
    if not np.isfinite(k).all():
        raise ValueError("kernel: expected finite values")
    res, final = _out(out, dst, img)
    if n == 0:
        return final
    ds, db = _strides(res)
    cdef int t = DTYPES[img.dtype], bb = b, rc
    cdef int64_t src = _addr(img), dp = _addr(res), kp = _addr(k)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, s1 = bs, d0 = ds, d1 = db, nn = n
    cdef int64_t kh = k.shape[0], kw = k.shape[1]
    cdef const double* vp = _vptr(val)
    with nogil:
        rc = tilegen_filter2d_ex(t, <const void*> src, s0, <void*> dp, d0, hh, ww, cc, nn, s1,
                                 d1, <const double*> kp, kh, kw, bb, vp)
    _check(rc, {12: "kernel", 13: "kernel", 14: "kernel", 15: "border"})
    return _finish(res, final)


def _gaussian_args(ksize, sigma):
    """A square Gaussian's (ksize, sigma), checked (tilegen.dask.image's form)."""
    ksize = _size("ksize", ksize)
    if ksize < 1 or ksize % 2 == 0:
        raise ValueError(f"ksize: a Gaussian kernel size must be odd and positive, got {ksize}")
    return ksize, _real("sigma", sigma)


def _gaussian_sizes(ksize, sx, sy):
    kw, kh = _size2("ksize", ksize)
    sy = sy if sy > 0 else sx
    for k, s in ((kw, sx), (kh, sy)):
        if k < 0 or (k > 0 and k % 2 == 0):
            raise ValueError(f"ksize: a Gaussian kernel size must be odd and positive (or 0, "
                             f"derived from sigma), got {ksize}")
        if k == 0 and not s > 0:
            raise ValueError(f"ksize: a size of 0 is derived from sigma, which must then be "
                             f"positive; got ksize {ksize} and sigma {s}")
        if k == 0 and s > MAX_SIGMA:
            raise ValueError(f"sigma: a size derived from sigma takes sigma <= {MAX_SIGMA}, "
                             f"got {s}")
    return kw, kh


def gaussian_blur(img, ksize, sigma=None, *, sigmaX=None, sigmaY=None, sigma_y=None,
                  border=None, borderType=None, border_value=None, borderValue=None, out=None,
                  dst=None):
    """OpenCV's GaussianBlur(img, ksize, sigmaX, dst, sigmaY, borderType): ksize an int or
    (width, height), each odd or 0 (derived from its sigma as OpenCV does); sigmaY <= 0 means
    sigmaX; sigma <= 0 derives it from the size. Its kernel (the fixed tables for sigma <= 0 and
    ksize <= 9, else its formula) and, for uint8 and uint16, its bit-exact fixed point."""
    sx = _real("sigma", _alias("sigma", sigma, "sigmaX", sigmaX, None)
               if sigma is not None or sigmaX is not None else 0.0)
    sy = _real("sigmaY", _alias("sigma_y", sigma_y, "sigmaY", sigmaY, 0.0))
    kw, kh = _gaussian_sizes(ksize, sx, sy)
    img, n, h, w, c, ss, bs = _image(img)
    b, val = _border_args(border, borderType, border_value, borderValue, c)
    res, final = _out(out, dst, img)
    if n == 0:
        return final
    ds, db = _strides(res)
    cdef int t = DTYPES[img.dtype], bb = b, rc
    cdef int64_t src = _addr(img), dp = _addr(res)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, s1 = bs, d0 = ds, d1 = db, nn = n
    cdef int64_t kx = kw, ky = kh
    cdef double dsx = sx, dsy = sy
    cdef const double* vp = _vptr(val)
    with nogil:
        rc = tilegen_gaussian_blur_ex(t, <const void*> src, s0, <void*> dp, d0, hh, ww, cc, nn,
                                      s1, d1, kx, ky, dsx, dsy, bb, vp)
    _check(rc, {12: "ksize", 13: "ksize", 14: "sigma", 15: "sigmaY", 16: "border"})
    return _finish(res, final)


def box_blur(img, ksize, *, border=None, borderType=None, border_value=None, borderValue=None,
             out=None, dst=None):
    """OpenCV's blur(img, (ksize, ksize), borderType=border): the normalised box filter, uint8
    rounded as OpenCV rounds it (ksize at most 257 for uint8), uint16 sums times 1/area rounded
    to nearest, float64 in double."""
    ks = _size("ksize", ksize)
    if ks < 1:
        raise ValueError(f"ksize: expected a positive kernel size, got {ks}")
    img, n, h, w, c, ss, bs = _image(img)
    if img.dtype == np.uint8 and ks > BOX_U8_MAX_KSIZE:
        raise ValueError(f"ksize: uint8 box filters take ksize <= {BOX_U8_MAX_KSIZE}, got {ks}")
    b, val = _border_args(border, borderType, border_value, borderValue, c)
    res, final = _out(out, dst, img)
    if n == 0:
        return final
    ds, db = _strides(res)
    cdef int t = DTYPES[img.dtype], bb = b, rc
    cdef int64_t src = _addr(img), dp = _addr(res)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, s1 = bs, d0 = ds, d1 = db, nn = n, k = ks
    cdef const double* vp = _vptr(val)
    with nogil:
        rc = tilegen_box_blur_ex(t, <const void*> src, s0, <void*> dp, d0, hh, ww, cc, nn, s1,
                                 d1, k, bb, vp)
    _check(rc, {12: "ksize", 13: "border"})
    return _finish(res, final)


def unsharp_mask(img, ksize=5, sigma=1.0, amount=1.0, threshold=0, *, border=None,
                 borderType=None, border_value=None, borderValue=None, out=None, dst=None):
    """saturate(img + amount * (img - gaussian_blur(img, ksize, sigma))) where
    |img - gaussian_blur(img, ksize, sigma)| > threshold, else img (uint8 and uint16: the blur
    is gaussian_blur's rounded result, the sum in float32 rounded to nearest, ties to even;
    float64 in double)."""
    ks, sg = _gaussian_args(ksize, sigma)
    am = _real("amount", amount)
    th = _real("threshold", threshold)
    if th < 0:
        raise ValueError(f"threshold: expected a non-negative number, got {th}")
    img, n, h, w, c, ss, bs = _image(img)
    b, val = _border_args(border, borderType, border_value, borderValue, c)
    res, final = _out(out, dst, img)
    if n == 0:
        return final
    ds, db = _strides(res)
    cdef int t = DTYPES[img.dtype], bb = b, rc
    cdef int64_t src = _addr(img), dp = _addr(res)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, s1 = bs, d0 = ds, d1 = db, nn = n, k = ks
    cdef double s = sg, a = am, tt = th
    cdef const double* vp = _vptr(val)
    with nogil:
        rc = tilegen_unsharp_mask_ex(t, <const void*> src, s0, <void*> dp, d0, hh, ww, cc, nn,
                                     s1, d1, k, s, a, tt, bb, vp)
    _check(rc, {12: "ksize", 13: "sigma", 14: "amount", 15: "threshold", 16: "border"})
    return _finish(res, final)
