# cython: language_level=3
"""Bindings to libtilegen: argument checks, the GIL released around every C call, nothing else.

`matmul` handles the common case (two aligned 2-D float32/float64 arrays of one dtype) here with
minimal overhead and hands everything else to tilegen.numpy_api, which implements NumPy's full
semantics on top of `gemm_into` / `gemm_batched_into`.
"""
cimport numpy as cnp
from libc.stdint cimport int64_t, uint32_t, intptr_t

import numpy as np

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    int tilegen_init()
    const char* tilegen_init_error()
    void tilegen_set_num_threads(int n)
    int tilegen_get_num_threads()
    int tilegen_sgemm_strided(int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                              int64_t rs_a, int64_t cs_a, const float* b, int64_t rs_b,
                              int64_t cs_b, float beta, float* c, int64_t rs_c, int64_t cs_c,
                              const float* bias, int64_t bias_stride, int act)
    int tilegen_dgemm_strided(int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                              int64_t rs_a, int64_t cs_a, const double* b, int64_t rs_b,
                              int64_t cs_b, double beta, double* c, int64_t rs_c, int64_t cs_c,
                              const double* bias, int64_t bias_stride, int act)
    int tilegen_sgemm_batched(int64_t ndim, const int64_t* shape, const int64_t* sa,
                              const int64_t* sb, const int64_t* sc, int64_t m, int64_t n,
                              int64_t k, float alpha, const float* a, int64_t rs_a, int64_t cs_a,
                              const float* b, int64_t rs_b, int64_t cs_b, float beta, float* c,
                              int64_t rs_c, int64_t cs_c)
    int tilegen_dgemm_batched(int64_t ndim, const int64_t* shape, const int64_t* sa,
                              const int64_t* sb, const int64_t* sc, int64_t m, int64_t n,
                              int64_t k, double alpha, const double* a, int64_t rs_a,
                              int64_t cs_a, const double* b, int64_t rs_b, int64_t cs_b,
                              double beta, double* c, int64_t rs_c, int64_t cs_c)

cdef extern from "dispatch.h" nogil:
    uint32_t tilegen_x_features_reported()
    uint32_t tilegen_x_features_usable()
    int tilegen_x_feature_count()
    const char* tilegen_x_feature_name(int bit)
    int tilegen_x_isa_count()
    const char* tilegen_x_isa_name_of(int isa)
    int tilegen_x_isa_usable(int isa)
    const char* tilegen_x_isa_cap()
    int tilegen_x_gemm_isa(int dtype)
    void tilegen_x_gemm_tile(int dtype, int* mr, int* nr)
    const char* tilegen_x_gemm_kernel(int dtype, int rows)
    void tilegen_x_gemm_blocking(int dtype, int64_t* mc, int64_t* kc, int64_t* nc)
    int tilegen_x_set_gemm_blocking(int dtype, int64_t mc, int64_t kc, int64_t nc)
    int tilegen_x_set_gemm_main_kernel(int dtype, const char* name)
    int tilegen_x_reinit(int fake, uint32_t usable)

if tilegen_init() != 0:
    raise ImportError("tilegen: " + tilegen_init_error().decode())

# Activation codes of tilegen.h (tilegen_activation).
ACTIVATIONS = {None: 0, "relu": 1, "relu6": 2, "gelu": 3, "silu": 4}

cdef int NPY_F32 = cnp.NPY_FLOAT32
cdef int NPY_F64 = cnp.NPY_FLOAT64


# ---------------------------------------------------------------- introspection / control

cdef object _s(const char* p):
    return None if p == NULL else p.decode()


def features():
    """(reported, usable): CPU feature names the CPU advertises / that the OS also enables."""
    cdef uint32_t rep = tilegen_x_features_reported(), use = tilegen_x_features_usable()
    names = [_s(tilegen_x_feature_name(i)) for i in range(tilegen_x_feature_count())]
    return ([n for i, n in enumerate(names) if rep >> i & 1],
            [n for i, n in enumerate(names) if use >> i & 1])


def isas():
    """Every ISA of the table with whether it is usable here (built, CPU and OS support it)."""
    return {_s(tilegen_x_isa_name_of(i)): bool(tilegen_x_isa_usable(i))
            for i in range(tilegen_x_isa_count())}


def isa_cap():
    return _s(tilegen_x_isa_cap())


cdef int _dtype_index(dtype) except -1:
    d = np.dtype(dtype)
    if d == np.float32:
        return 0
    if d == np.float64:
        return 1
    raise TypeError(f"dtype: {d} has no tilegen GEMM kernels; allowed: float32, float64")


def gemm_config(dtype):
    """The GEMM configuration chosen for a dtype: ISA, tile, kernels by row count, blocking."""
    cdef int d = _dtype_index(dtype), mr = 0, nr = 0
    cdef int64_t mc = 0, kc = 0, nc = 0
    tilegen_x_gemm_tile(d, &mr, &nr)
    tilegen_x_gemm_blocking(d, &mc, &kc, &nc)
    return {
        "isa": _s(tilegen_x_isa_name_of(tilegen_x_gemm_isa(d))),
        "kernel": _s(tilegen_x_gemm_kernel(d, 0)),
        "mr": mr, "nr": nr,
        "kernels_by_rows": [_s(tilegen_x_gemm_kernel(d, r)) for r in range(1, mr + 1)],
        "mc": mc, "kc": kc, "nc": nc,
    }


def set_gemm_blocking(dtype, int64_t mc=0, int64_t kc=0, int64_t nc=0):
    """Override MC/KC/NC (0 keeps a value); values are rounded to the tile."""
    if tilegen_x_set_gemm_blocking(_dtype_index(dtype), mc, kc, nc) != 0:
        raise ValueError(f"blocking: mc={mc}, kc={kc}, nc={nc} out of range")


def set_gemm_kernel(dtype, str name):
    """Use `name` (a production kernel of the current ISA) as the main tile."""
    if tilegen_x_set_gemm_main_kernel(_dtype_index(dtype), name.encode()) != 0:
        raise ValueError(f"kernel: {name!r} is not a production kernel of the ISA in use")


def _reinit(fake_features=None):
    """Test hook: re-run kernel selection as if the CPU had exactly `fake_features` (names)."""
    cdef uint32_t mask = 0
    names = [_s(tilegen_x_feature_name(i)) for i in range(tilegen_x_feature_count())]
    if fake_features is not None:
        for f in fake_features:
            if f not in names:
                raise ValueError(f"fake_features: unknown feature {f!r}; allowed: {names}")
            mask |= 1u << names.index(f)
    return tilegen_x_reinit(0 if fake_features is None else 1, mask)


def set_num_threads(int n):
    tilegen_set_num_threads(n)


def get_num_threads():
    return tilegen_get_num_threads()


# ---------------------------------------------------------------- GEMM

cdef inline bint _gemm_ready(cnp.ndarray x, int typenum):
    """Aligned, native byte order, of the given type: usable by the kernels as it is."""
    return (cnp.PyArray_TYPE(x) == typenum and cnp.PyArray_ISALIGNED(x)
            and cnp.PyArray_ISNOTSWAPPED(x))


cdef inline void _bounds(cnp.ndarray x, intptr_t* lo, intptr_t* hi):
    """The byte range [lo, hi) the array's elements span (empty arrays span nothing)."""
    cdef int d
    cdef intptr_t start = <intptr_t> cnp.PyArray_DATA(x), end = start
    cdef cnp.npy_intp n, s
    for d in range(cnp.PyArray_NDIM(x)):
        n = cnp.PyArray_DIM(x, d)
        if n == 0:
            lo[0] = hi[0] = start
            return
        s = cnp.PyArray_STRIDE(x, d)
        if s < 0:
            start += (n - 1) * s
        else:
            end += (n - 1) * s
    lo[0] = start
    hi[0] = end + cnp.PyArray_ITEMSIZE(x)


cdef inline bint _overlap(cnp.ndarray x, cnp.ndarray y):
    cdef intptr_t xl, xh, yl, yh
    _bounds(x, &xl, &xh)
    _bounds(y, &yl, &yh)
    return xl < yh and yl < xh


cdef int _call_gemm(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha, double beta,
                    cnp.ndarray bias, int act) except -1:
    """c = act(alpha * a @ b + beta * c + bias) for 2-D arrays of one float dtype."""
    cdef int64_t m = cnp.PyArray_DIM(a, 0), k = cnp.PyArray_DIM(a, 1), n = cnp.PyArray_DIM(b, 1)
    cdef int64_t isz = cnp.PyArray_ITEMSIZE(c)
    cdef int64_t rs_a = cnp.PyArray_STRIDE(a, 0) // isz, cs_a = cnp.PyArray_STRIDE(a, 1) // isz
    cdef int64_t rs_b = cnp.PyArray_STRIDE(b, 0) // isz, cs_b = cnp.PyArray_STRIDE(b, 1) // isz
    cdef int64_t rs_c = cnp.PyArray_STRIDE(c, 0) // isz, cs_c = cnp.PyArray_STRIDE(c, 1) // isz
    cdef void* pbias = NULL
    cdef int64_t bs = 0
    cdef int rc
    if bias is not None:
        pbias = cnp.PyArray_DATA(bias)
        bs = cnp.PyArray_STRIDE(bias, 0) // isz
    if cnp.PyArray_TYPE(c) == NPY_F32:
        with nogil:
            rc = tilegen_sgemm_strided(m, n, k, <float> alpha, <const float*> cnp.PyArray_DATA(a),
                                       rs_a, cs_a, <const float*> cnp.PyArray_DATA(b), rs_b, cs_b,
                                       <float> beta, <float*> cnp.PyArray_DATA(c), rs_c, cs_c,
                                       <const float*> pbias, bs, act)
    else:
        with nogil:
            rc = tilegen_dgemm_strided(m, n, k, alpha, <const double*> cnp.PyArray_DATA(a),
                                       rs_a, cs_a, <const double*> cnp.PyArray_DATA(b), rs_b, cs_b,
                                       beta, <double*> cnp.PyArray_DATA(c), rs_c, cs_c,
                                       <const double*> pbias, bs, act)
    if rc != 0:
        raise ValueError(f"tilegen gemm rejected argument {-rc}")
    return 0


def gemm_into(a, b, c, double alpha=1.0, double beta=0.0, bias=None, act=None):
    """c[...] = act(alpha * a @ b + beta * c + bias), in place.

    a (m, k), b (k, n), c (m, n) and bias (n,) share one float32/float64 dtype, are aligned and
    in native byte order; c is writeable and overlaps neither a, b nor bias (the caller makes
    sure; tilegen.numpy_api does). Any strides, negative and zero included.
    """
    for name, x in (("a", a), ("b", b), ("c", c), ("bias", bias)):
        if not (type(x) is cnp.ndarray or (name == "bias" and x is None)):
            raise TypeError(f"gemm_into: {name} must be a numpy.ndarray, got {type(x).__name__}")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray> c)
    if t != NPY_F32 and t != NPY_F64:
        raise TypeError(f"gemm_into: c has dtype {c.dtype}; allowed: float32, float64")
    if a.ndim != 2 or b.ndim != 2 or c.ndim != 2:
        raise ValueError("gemm_into: a, b and c must be 2-D")
    if a.shape[1] != b.shape[0] or a.shape[0] != c.shape[0] or b.shape[1] != c.shape[1]:
        raise ValueError(f"gemm_into: shapes {a.shape} @ {b.shape} -> {c.shape} do not match")
    for name, x in (("a", a), ("b", b), ("c", c), ("bias", bias)):
        if x is not None and not _gemm_ready(x, t):
            raise TypeError(f"gemm_into: {name} must be an aligned native {c.dtype} array")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != c.shape[1]):
        raise ValueError(f"gemm_into: bias of shape {bias.shape}; expected ({c.shape[1]},)")
    if not c.flags.writeable:
        raise ValueError("gemm_into: c is read-only")
    if act not in ACTIVATIONS:
        raise ValueError(f"activation: {act!r}; allowed: {list(ACTIVATIONS)}")
    _call_gemm(a, b, c, alpha, beta, bias, ACTIVATIONS[act])
    return c


def gemm_batched_into(a, b, c):
    """c[...] = a @ b over stacks: a (..., m, k), b (..., k, n), c (..., m, n) with the same
    leading shape (broadcast views with zero strides welcome); same conditions as gemm_into."""
    for name, x in (("a", a), ("b", b), ("c", c)):
        if type(x) is not cnp.ndarray:
            raise TypeError(f"gemm_batched_into: {name} must be a numpy.ndarray")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray> c)
    cdef int nd = c.ndim, d
    if nd < 2 or a.ndim != nd or b.ndim != nd:
        raise ValueError("gemm_batched_into: a, b and c need the same number (>= 2) of dims")
    if a.shape[:nd - 2] != c.shape[:nd - 2] or b.shape[:nd - 2] != c.shape[:nd - 2]:
        raise ValueError("gemm_batched_into: leading shapes differ")
    if (a.shape[nd - 1] != b.shape[nd - 2] or a.shape[nd - 2] != c.shape[nd - 2]
            or b.shape[nd - 1] != c.shape[nd - 1]):
        raise ValueError(f"gemm_batched_into: shapes {a.shape} @ {b.shape} -> {c.shape}")
    for name, x in (("a", a), ("b", b), ("c", c)):
        if not _gemm_ready(x, t) or (t != NPY_F32 and t != NPY_F64):
            raise TypeError(f"gemm_batched_into: {name} must be an aligned native float array")
    if not c.flags.writeable:
        raise ValueError("gemm_batched_into: c is read-only")
    cdef cnp.ndarray A = a, B = b, C = c
    cdef int64_t isz = cnp.PyArray_ITEMSIZE(C)
    cdef cnp.ndarray meta = np.empty((4, max(nd - 2, 1)), dtype=np.int64)
    cdef int64_t[:, ::1] mv = meta
    for d in range(nd - 2):
        mv[0, d] = c.shape[d]
        mv[1, d] = cnp.PyArray_STRIDE(A, d) // isz
        mv[2, d] = cnp.PyArray_STRIDE(B, d) // isz
        mv[3, d] = cnp.PyArray_STRIDE(C, d) // isz
    cdef int64_t m = c.shape[nd - 2], n = c.shape[nd - 1], k = a.shape[nd - 1]
    cdef int64_t rs_a = cnp.PyArray_STRIDE(A, nd - 2) // isz, cs_a = cnp.PyArray_STRIDE(A, nd - 1) // isz
    cdef int64_t rs_b = cnp.PyArray_STRIDE(B, nd - 2) // isz, cs_b = cnp.PyArray_STRIDE(B, nd - 1) // isz
    cdef int64_t rs_c = cnp.PyArray_STRIDE(C, nd - 2) // isz, cs_c = cnp.PyArray_STRIDE(C, nd - 1) // isz
    cdef int rc
    if t == NPY_F32:
        with nogil:
            rc = tilegen_sgemm_batched(nd - 2, &mv[0, 0], &mv[1, 0], &mv[2, 0], &mv[3, 0], m, n, k,
                                       1.0, <const float*> cnp.PyArray_DATA(A), rs_a, cs_a,
                                       <const float*> cnp.PyArray_DATA(B), rs_b, cs_b, 0.0,
                                       <float*> cnp.PyArray_DATA(C), rs_c, cs_c)
    else:
        with nogil:
            rc = tilegen_dgemm_batched(nd - 2, &mv[0, 0], &mv[1, 0], &mv[2, 0], &mv[3, 0], m, n, k,
                                       1.0, <const double*> cnp.PyArray_DATA(A), rs_a, cs_a,
                                       <const double*> cnp.PyArray_DATA(B), rs_b, cs_b, 0.0,
                                       <double*> cnp.PyArray_DATA(C), rs_c, cs_c)
    if rc != 0:
        raise ValueError(f"tilegen batched gemm rejected argument {-rc}")
    return c


def matmul(a, b, /, out=None):
    """numpy.matmul, computed by tilegen's kernels for float32/float64 (see tilegen.numpy_api)."""
    cdef cnp.ndarray A, B, C
    cdef int t
    cdef cnp.npy_intp dims[2]
    if type(a) is cnp.ndarray and type(b) is cnp.ndarray:
        A = <cnp.ndarray> a
        B = <cnp.ndarray> b
        t = cnp.PyArray_TYPE(A)
        if (cnp.PyArray_NDIM(A) == 2 and cnp.PyArray_NDIM(B) == 2 and (t == NPY_F32 or t == NPY_F64)
                and _gemm_ready(A, t) and _gemm_ready(B, t)
                and cnp.PyArray_DIM(A, 1) == cnp.PyArray_DIM(B, 0)):
            dims[0] = cnp.PyArray_DIM(A, 0)
            dims[1] = cnp.PyArray_DIM(B, 1)
            if out is None:
                C = cnp.PyArray_EMPTY(2, dims, t, 0)
                _call_gemm(A, B, C, 1.0, 0.0, None, 0)
                return C
            if type(out) is cnp.ndarray:
                C = <cnp.ndarray> out
                if (cnp.PyArray_NDIM(C) == 2 and cnp.PyArray_DIM(C, 0) == dims[0]
                        and cnp.PyArray_DIM(C, 1) == dims[1] and _gemm_ready(C, t)
                        and cnp.PyArray_ISWRITEABLE(C) and not _overlap(C, A)
                        and not _overlap(C, B)):
                    _call_gemm(A, B, C, 1.0, 0.0, None, 0)
                    return C
    from tilegen import numpy_api
    return numpy_api.matmul_general(a, b, out)
