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

cdef extern from "tg_filter.h" nogil:
    const char* tilegen_x_filter_kernel(int kind)
    int tilegen_x_set_filter_isa(const char* isa)
    const char* tilegen_x_filter_isa(int i)

# TILEGEN_BORDER_* of tilegen.h.
BORDERS = {"reflect101": 0, "replicate": 1, "constant": 2}
MAX_CHANNELS = 512
BOX_U8_MAX_KSIZE = 257
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
    if not isinstance(border, str):
        raise TypeError(f"border: expected one of {', '.join(BORDERS)}, got "
                        f"{type(border).__name__}")
    try:
        return BORDERS[border]
    except KeyError:
        raise ValueError(f"border: {border!r} is not supported; allowed values: "
                         f"{', '.join(BORDERS)}") from None


def _image(img):
    """(array whose images have contiguous rows, N, H, W, C, row stride and image stride in
    elements): HxW and HxWxC are one image (N = 1), NxHxWxC a stack of N."""
    if not isinstance(img, np.ndarray):
        raise TypeError(f"img: expected a NumPy array, got {type(img).__name__}")
    if img.dtype != np.uint8 and img.dtype != np.float32:
        raise TypeError(f"img: dtype {img.dtype} is not supported; allowed: uint8, float32")
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


def _size(name, value):
    if isinstance(value, (tuple, list)) and len(value) == 2:
        if value[0] != value[1]:
            raise ValueError(f"{name}: only square kernels are supported, got {tuple(value)}")
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    return int(value)


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    return value


def _check(int rc, names):
    if rc == 1:
        raise MemoryError("tilegen image filter: out of memory")
    if rc < 0:
        raise ValueError(f"{names.get(-rc, 'argument %d' % -rc)}: rejected by the C library")


cdef int64_t _addr(cnp.ndarray a):
    return <int64_t> <intptr_t> cnp.PyArray_DATA(a)


def filter2d(img, kernel, *, border="reflect101"):
    """OpenCV's filter2D(img, -1, kernel, borderType=border): the correlation of img with
    kernel (2-D), the anchor at the kernel's centre (k//2 for even sizes). uint8 results are
    computed in float and rounded to nearest (ties to even), saturated."""
    cdef int b = _border(border)
    img, n, h, w, c, ss, bs = _image(img)
    k = np.asarray(kernel)
    if k.dtype.kind not in "biuf":
        raise TypeError(f"kernel: dtype {k.dtype} is not supported; expected real numbers")
    if k.ndim != 2:
        raise ValueError(f"kernel: expected a 2-D kernel, got {k.ndim} dimensions "
                         f"(shape {k.shape})")
    if k.shape[0] < 1 or k.shape[1] < 1:
        raise ValueError(f"kernel: every dimension must be positive, got shape {k.shape}")
    k = np.ascontiguousarray(k, dtype=np.float32)
    out = np.empty(img.shape, img.dtype)
    cdef int64_t src = _addr(img), dst = _addr(out), kp = _addr(k)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, d0 = w * c, kh = k.shape[0], kw = k.shape[1]
    cdef int64_t i, nn = n, sb = bs * img.itemsize, db = h * w * c * img.itemsize
    cdef int rc = 0
    if img.dtype == np.float32:
        with nogil:
            for i in range(nn):
                rc = tilegen_filter2d_f32(<const float*> (src + i * sb), s0,
                                          <float*> (dst + i * db), d0, hh, ww, cc,
                                          <const float*> kp, kh, kw, b)
                if rc:
                    break
    else:
        with nogil:
            for i in range(nn):
                rc = tilegen_filter2d_u8(<const uint8_t*> (src + i * sb), s0,
                                         <uint8_t*> (dst + i * db), d0, hh, ww, cc,
                                         <const float*> kp, kh, kw, b)
                if rc:
                    break
    _check(rc, {8: "kernel", 9: "kernel", 10: "kernel", 11: "border"})
    return out


def _gaussian_args(ksize, sigma):
    ksize = _size("ksize", ksize)
    if ksize < 1 or ksize % 2 == 0:
        raise ValueError(f"ksize: a Gaussian kernel size must be odd and positive, got {ksize}")
    return ksize, _real("sigma", sigma)


def gaussian_blur(img, ksize, sigma, *, border="reflect101"):
    """OpenCV's GaussianBlur(img, (ksize, ksize), sigma, borderType=border): its kernel (the
    fixed tables for sigma <= 0 and ksize <= 9, else its formula, sigma <= 0 derived from
    ksize) and, for uint8, its bit-exact fixed-point arithmetic."""
    cdef int b = _border(border)
    ks, sg = _gaussian_args(ksize, sigma)
    img, n, h, w, c, ss, bs = _image(img)
    out = np.empty(img.shape, img.dtype)
    cdef int64_t src = _addr(img), dst = _addr(out)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, d0 = w * c, k = ks
    cdef int64_t i, nn = n, sb = bs * img.itemsize, db = h * w * c * img.itemsize
    cdef double s = sg
    cdef int rc = 0
    if img.dtype == np.float32:
        with nogil:
            for i in range(nn):
                rc = tilegen_gaussian_blur_f32(<const float*> (src + i * sb), s0,
                                               <float*> (dst + i * db), d0, hh, ww, cc, k, s, b)
                if rc:
                    break
    else:
        with nogil:
            for i in range(nn):
                rc = tilegen_gaussian_blur_u8(<const uint8_t*> (src + i * sb), s0,
                                              <uint8_t*> (dst + i * db), d0, hh, ww, cc, k, s,
                                              b)
                if rc:
                    break
    _check(rc, {8: "ksize", 9: "sigma", 10: "border"})
    return out


def box_blur(img, ksize, *, border="reflect101"):
    """OpenCV's blur(img, (ksize, ksize), borderType=border): the normalised box filter, uint8
    rounded as OpenCV rounds it (ksize at most 257 for uint8)."""
    cdef int b = _border(border)
    ks = _size("ksize", ksize)
    if ks < 1:
        raise ValueError(f"ksize: expected a positive kernel size, got {ks}")
    img, n, h, w, c, ss, bs = _image(img)
    if img.dtype == np.uint8 and ks > BOX_U8_MAX_KSIZE:
        raise ValueError(f"ksize: uint8 box filters take ksize <= {BOX_U8_MAX_KSIZE}, got {ks}")
    out = np.empty(img.shape, img.dtype)
    cdef int64_t src = _addr(img), dst = _addr(out)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, d0 = w * c, k = ks
    cdef int64_t i, nn = n, sb = bs * img.itemsize, db = h * w * c * img.itemsize
    cdef int rc = 0
    if img.dtype == np.float32:
        with nogil:
            for i in range(nn):
                rc = tilegen_box_blur_f32(<const float*> (src + i * sb), s0,
                                          <float*> (dst + i * db), d0, hh, ww, cc, k, b)
                if rc:
                    break
    else:
        with nogil:
            for i in range(nn):
                rc = tilegen_box_blur_u8(<const uint8_t*> (src + i * sb), s0,
                                         <uint8_t*> (dst + i * db), d0, hh, ww, cc, k, b)
                if rc:
                    break
    _check(rc, {8: "ksize", 9: "border"})
    return out


def unsharp_mask(img, ksize=5, sigma=1.0, amount=1.0, threshold=0, *, border="reflect101"):
    """saturate(img + amount * (img - gaussian_blur(img, ksize, sigma))) where
    |img - gaussian_blur(img, ksize, sigma)| > threshold, else img (uint8: the blur is
    gaussian_blur's uint8 result, the sum in float32 rounded to nearest, ties to even)."""
    cdef int b = _border(border)
    ks, sg = _gaussian_args(ksize, sigma)
    am = _real("amount", amount)
    th = _real("threshold", threshold)
    if th < 0:
        raise ValueError(f"threshold: expected a non-negative number, got {th}")
    img, n, h, w, c, ss, bs = _image(img)
    out = np.empty(img.shape, img.dtype)
    cdef int64_t src = _addr(img), dst = _addr(out)
    cdef int64_t hh = h, ww = w, cc = c, s0 = ss, d0 = w * c, k = ks
    cdef int64_t i, nn = n, sb = bs * img.itemsize, db = h * w * c * img.itemsize
    cdef double s = sg, a = am, t = th
    cdef int rc = 0
    if img.dtype == np.float32:
        with nogil:
            for i in range(nn):
                rc = tilegen_unsharp_mask_f32(<const float*> (src + i * sb), s0,
                                              <float*> (dst + i * db), d0, hh, ww, cc, k, s, a,
                                              t, b)
                if rc:
                    break
    else:
        with nogil:
            for i in range(nn):
                rc = tilegen_unsharp_mask_u8(<const uint8_t*> (src + i * sb), s0,
                                             <uint8_t*> (dst + i * db), d0, hh, ww, cc, k, s, a,
                                             t, b)
                if rc:
                    break
    _check(rc, {8: "ksize", 9: "sigma", 10: "amount", 11: "threshold", 12: "border"})
    return out
