# cython: language_level=3
"""Bindings to libtilegen's convolution: the GIL released around every C call, nothing else.

Arguments arrive checked by api.py: C-contiguous arrays of one float dtype, in the
layout's order, with the output allocated; `geom` is (layout, c_in, c_out, kh, kw, stride_h,
stride_w, pad_top, pad_left, pad_bottom, pad_right, dilation_h, dilation_w, groups, act).
"""
cimport numpy as cnp
from libc.stdint cimport int64_t

import numpy as np

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    ctypedef struct tilegen_conv2d_f32_plan:
        pass
    int tilegen_conv2d_f32(int layout, int64_t n, int64_t h, int64_t w, int64_t c_in,
                           const float* x, int64_t c_out, int64_t kh, int64_t kw,
                           const float* weight, const float* bias, int64_t stride_h,
                           int64_t stride_w, int64_t pad_top, int64_t pad_left,
                           int64_t pad_bottom, int64_t pad_right, int64_t dilation_h,
                           int64_t dilation_w, int64_t groups, int act, float* y)
    int tilegen_conv2d_f64(int layout, int64_t n, int64_t h, int64_t w, int64_t c_in,
                           const double* x, int64_t c_out, int64_t kh, int64_t kw,
                           const double* weight, const double* bias, int64_t stride_h,
                           int64_t stride_w, int64_t pad_top, int64_t pad_left,
                           int64_t pad_bottom, int64_t pad_right, int64_t dilation_h,
                           int64_t dilation_w, int64_t groups, int act, double* y)
    int tilegen_conv2d_f32_pack(int layout, int64_t c_in, int64_t c_out, int64_t kh, int64_t kw,
                                const float* weight, const float* bias, int64_t stride_h,
                                int64_t stride_w, int64_t pad_top, int64_t pad_left,
                                int64_t pad_bottom, int64_t pad_right, int64_t dilation_h,
                                int64_t dilation_w, int64_t groups, int act,
                                tilegen_conv2d_f32_plan** plan)
    int tilegen_conv2d_f32_run(const tilegen_conv2d_f32_plan* plan, int64_t n, int64_t h,
                               int64_t w, const float* x, float* y)
    void tilegen_conv2d_f32_plan_free(tilegen_conv2d_f32_plan* plan)
    int tilegen_conv_transpose2d_f32(int layout, int64_t n, int64_t h, int64_t w, int64_t c_in,
                                     const float* x, int64_t c_out, int64_t kh, int64_t kw,
                                     const float* weight, const float* bias, int64_t stride_h,
                                     int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                     int64_t output_padding_h, int64_t output_padding_w,
                                     int64_t dilation_h, int64_t dilation_w, int64_t groups,
                                     float* y)
    int tilegen_conv_transpose2d_f64(int layout, int64_t n, int64_t h, int64_t w, int64_t c_in,
                                     const double* x, int64_t c_out, int64_t kh, int64_t kw,
                                     const double* weight, const double* bias, int64_t stride_h,
                                     int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                     int64_t output_padding_h, int64_t output_padding_w,
                                     int64_t dilation_h, int64_t dilation_w, int64_t groups,
                                     double* y)

cdef extern from "tg_conv.h" nogil:
    const char* tilegen_x_conv_method(int layout, int64_t c_in, int64_t c_out, int64_t kh,
                                      int64_t kw, int64_t stride_h, int64_t stride_w,
                                      int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
                                      int64_t pad_right, int64_t dilation_h,
                                      int64_t dilation_w, int64_t groups, const char** kernel)
    const char* tilegen_x_conv2d_f32_plan_method(const tilegen_conv2d_f32_plan* plan,
                                                 const char** kernel)
    int tilegen_x_conv_force_method(const char* name)
    int tilegen_x_set_conv_preferred(int layout, const char* kind, const char* name)
    const char* tilegen_x_conv_preferred(int layout, const char* kind)
    int tilegen_x_set_conv_max_mr(int nchw, int mr)
    int tilegen_x_conv_tile_height(int nchw, int i)

LAYOUTS = {"NCHW": 0, "NHWC": 1}


cdef object _s(const char* p):
    return None if p == NULL else p.decode()


def _fail(int rc, str where):
    if rc != 0:  # the Python layer checks everything first: this is a bug, not bad input
        raise RuntimeError(f"{where} rejected parameter {-rc}")


def conv2d(cnp.ndarray x, cnp.ndarray w, object bias, cnp.ndarray y, tuple geom):
    """y = conv2d(x, w) + bias with the fused activation; x (N, H, W, C) or (N, C, H, W)."""
    cdef int64_t g[15]
    for i in range(15):
        g[i] = geom[i]
    cdef int64_t n = x.shape[0]
    cdef int64_t h = x.shape[2] if g[0] == 0 else x.shape[1]
    cdef int64_t wd = x.shape[3] if g[0] == 0 else x.shape[2]
    cdef cnp.ndarray b = bias
    cdef int rc
    cdef void* bp = NULL if bias is None else cnp.PyArray_DATA(b)
    cdef void* xp = cnp.PyArray_DATA(x)
    cdef void* wp = cnp.PyArray_DATA(w)
    cdef void* yp = cnp.PyArray_DATA(y)
    if x.dtype == np.float32:
        with nogil:
            rc = tilegen_conv2d_f32(<int> g[0], n, h, wd, g[1], <const float*> xp, g[2], g[3],
                                    g[4], <const float*> wp, <const float*> bp, g[5], g[6], g[7],
                                    g[8], g[9], g[10], g[11], g[12], g[13], <int> g[14],
                                    <float*> yp)
    else:
        with nogil:
            rc = tilegen_conv2d_f64(<int> g[0], n, h, wd, g[1], <const double*> xp, g[2], g[3],
                                    g[4], <const double*> wp, <const double*> bp, g[5], g[6],
                                    g[7], g[8], g[9], g[10], g[11], g[12], g[13], <int> g[14],
                                    <double*> yp)
    _fail(rc, "tilegen_conv2d")
    return y


def conv_transpose2d(cnp.ndarray x, cnp.ndarray w, object bias, cnp.ndarray y, tuple geom):
    """y = conv_transpose2d(x, w) + bias; geom is (layout, c_in, c_out, kh, kw, stride_h,
    stride_w, pad_h, pad_w, output_padding_h, output_padding_w, dilation_h, dilation_w,
    groups)."""
    cdef int64_t g[14]
    for i in range(14):
        g[i] = geom[i]
    cdef int64_t n = x.shape[0]
    cdef int64_t h = x.shape[2] if g[0] == 0 else x.shape[1]
    cdef int64_t wd = x.shape[3] if g[0] == 0 else x.shape[2]
    cdef cnp.ndarray b = bias
    cdef int rc
    cdef void* bp = NULL if bias is None else cnp.PyArray_DATA(b)
    cdef void* xp = cnp.PyArray_DATA(x)
    cdef void* wp = cnp.PyArray_DATA(w)
    cdef void* yp = cnp.PyArray_DATA(y)
    if x.dtype == np.float32:
        with nogil:
            rc = tilegen_conv_transpose2d_f32(<int> g[0], n, h, wd, g[1], <const float*> xp,
                                              g[2], g[3], g[4], <const float*> wp,
                                              <const float*> bp, g[5], g[6], g[7], g[8], g[9],
                                              g[10], g[11], g[12], g[13], <float*> yp)
    else:
        with nogil:
            rc = tilegen_conv_transpose2d_f64(<int> g[0], n, h, wd, g[1], <const double*> xp,
                                              g[2], g[3], g[4], <const double*> wp,
                                              <const double*> bp, g[5], g[6], g[7], g[8], g[9],
                                              g[10], g[11], g[12], g[13], <double*> yp)
    _fail(rc, "tilegen_conv_transpose2d")
    return y


cdef class Plan:
    """Packed float32 weights (tilegen_conv2d_f32_pack) for one convolution geometry."""

    cdef tilegen_conv2d_f32_plan* plan
    cdef readonly tuple geom

    def __cinit__(self, cnp.ndarray w, object bias, tuple geom):
        cdef int64_t g[15]
        for i in range(15):
            g[i] = geom[i]
        cdef cnp.ndarray b = bias
        cdef void* bp = NULL if bias is None else cnp.PyArray_DATA(b)
        cdef void* wp = cnp.PyArray_DATA(w)
        cdef int rc
        self.plan = NULL
        with nogil:
            rc = tilegen_conv2d_f32_pack(<int> g[0], g[1], g[2], g[3], g[4], <const float*> wp,
                                         <const float*> bp, g[5], g[6], g[7], g[8], g[9], g[10],
                                         g[11], g[12], g[13], <int> g[14], &self.plan)
        if rc == -18:
            raise MemoryError("tilegen_conv2d_f32_pack: out of memory")
        _fail(rc, "tilegen_conv2d_f32_pack")
        self.geom = geom

    def __dealloc__(self):
        if self.plan != NULL:
            tilegen_conv2d_f32_plan_free(self.plan)

    def run(self, cnp.ndarray x, cnp.ndarray y):
        cdef int64_t n = x.shape[0]
        cdef int nchw = self.geom[0] == 0
        cdef int64_t h = x.shape[2] if nchw else x.shape[1]
        cdef int64_t wd = x.shape[3] if nchw else x.shape[2]
        cdef void* xp = cnp.PyArray_DATA(x)
        cdef void* yp = cnp.PyArray_DATA(y)
        cdef int rc
        with nogil:
            rc = tilegen_conv2d_f32_run(self.plan, n, h, wd, <const float*> xp, <float*> yp)
        _fail(rc, "tilegen_conv2d_f32_run")
        return y

    @property
    def method(self):
        """(path, kernel): 'gemm', 'direct', 'im2col', 'depthwise' or 'plain', and the main
        kernel's name (None for gemm and plain)."""
        cdef const char* k = NULL
        cdef const char* m = tilegen_x_conv2d_f32_plan_method(self.plan, &k)
        return _s(m), _s(k)


def method(tuple geom):
    """(path, kernel) a float32 convolution of this geometry takes (see Plan.method)."""
    cdef const char* k = NULL
    cdef const char* m = tilegen_x_conv_method(<int> geom[0], geom[1], geom[2], geom[3],
                                               geom[4], geom[5], geom[6], geom[7], geom[8],
                                               geom[9], geom[10], geom[11], geom[12], geom[13],
                                               &k)
    return _s(m), _s(k)


_LAYOUTS = {"NCHW": 0, "NHWC": 1}  # tilegen_conv_layout
KINDS = ("pointwise", "spatial", "strided", "depthwise")
METHODS = ("gemm", "direct", "direct-nchw", "im2col", "depthwise", "depthwise-nchw",
           "depthwise-nchw-rows")


def set_preferred(layout, kind, name=None):
    """Prefer path `name` (where it applies) for float32 layers of `kind` in `layout` (None:
    the built-in order): tilegen tune's choice per layer class."""
    if layout not in _LAYOUTS or kind not in KINDS:
        raise ValueError(f"layer class: {layout!r} {kind!r}; allowed: {list(_LAYOUTS)} x {KINDS}")
    cdef bytes raw = b"" if name is None else str(name).encode()
    if tilegen_x_set_conv_preferred(_LAYOUTS[layout], kind.encode(), raw) != 0:
        raise ValueError(f"method: {name!r} is not a path; allowed: {', '.join(METHODS)}")


def preferred(layout, kind):
    return _s(tilegen_x_conv_preferred(_LAYOUTS[layout], kind.encode()))


def tile_heights(layout):
    """The MR of the ISA's conv kernels for a layout's paths, tallest (the built-in) first."""
    cdef int nchw = _LAYOUTS[layout] == 0, i = 0
    out = []
    while tilegen_x_conv_tile_height(nchw, i):
        out.append(tilegen_x_conv_tile_height(nchw, i))
        i += 1
    return out


def set_max_tile_height(layout, mr=None):
    """The tallest conv kernel tile `layout`'s paths may use (None: no limit, the built-in)."""
    if layout not in _LAYOUTS:
        raise ValueError(f"layout: {layout!r}; allowed: {list(_LAYOUTS)}")
    if mr is not None and (isinstance(mr, bool) or not isinstance(mr, int) or mr < 1):
        raise ValueError(f"mr: {mr!r} must be a positive integer or None")
    if tilegen_x_set_conv_max_mr(_LAYOUTS[layout] == 0, mr or 0) != 0:
        raise ValueError(f"mr: {mr} leaves {layout} without kernels; allowed: "
                         f"{', '.join(map(str, tile_heights(layout)))}")


def force_method(name):
    """Test hook: take path `name` wherever it applies (None: the automatic choice)."""
    cdef bytes raw = b"" if name is None else name.encode()
    if tilegen_x_conv_force_method(raw) != 0:
        raise ValueError(f"method: unknown path {name!r}")
