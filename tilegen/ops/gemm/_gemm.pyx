# cython: language_level=3
"""The gemm op's bindings: argument checks, the GIL released around every C call, nothing else.

`matmul` handles the common case (two aligned 2-D float32/float64 arrays of one dtype) here with
minimal overhead and hands everything else to tilegen.ops.gemm.api, which implements NumPy's
full semantics on top of `gemm_into` / `gemm_batched_into`.
"""
cimport numpy as cnp
from libc.stdint cimport int8_t, int32_t, int64_t, intptr_t, uint8_t, uint16_t

import numpy as np

from tilegen.core._core import ACTIVATIONS

cnp.import_array()

cdef extern from "tilegen.h" nogil:
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

cdef extern from "tilegen.h" nogil:
    int tilegen_gemm_bf16(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                          int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b,
                          int64_t cs_b, float beta, void* c, int c_dtype, int64_t rs_c,
                          int64_t cs_c, const float* bias, int64_t bias_stride, int act)

    int tilegen_gemm_f16(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                         int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b,
                         int64_t cs_b, float beta, void* c, int c_dtype, int64_t rs_c,
                         int64_t cs_c, const float* bias, int64_t bias_stride, int act)
    int tilegen_gemm_f16_ex(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                            int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b,
                            int64_t cs_b, float beta, void* c, int c_dtype, int64_t rs_c,
                            int64_t cs_c, const float* bias, int64_t bias_stride, int act,
                            int accumulate)
    void tilegen_f16_from_f32(int64_t n, const float* x, int64_t incx, uint16_t* y,
                              int64_t incy)
    void tilegen_f32_from_f16(int64_t n, const uint16_t* x, int64_t incx, float* y,
                              int64_t incy)

    int tilegen_gemm_s8(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t rs_a,
                        int64_t cs_a, const int8_t* b, int64_t rs_b, int64_t cs_b,
                        int accumulate, int32_t* c, int64_t rs_c, int64_t cs_c)
    int tilegen_gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t rs_a,
                          int64_t cs_a, const int8_t* b, int64_t rs_b, int64_t cs_b,
                          int accumulate, int32_t* c, int64_t rs_c, int64_t cs_c)

cdef extern from "tg_gemm_s8.h" nogil:
    const char* tilegen_x_gemm_s8_kernel()
    int tilegen_x_set_gemm_s8_kernel(const char* name)
    const char* tilegen_x_gemm_s8_kernel_name(int i)

cdef extern from "tg_gemm_bf16.h" nogil:
    const char* tilegen_x_gemm_bf16_kernel()
    int tilegen_x_set_gemm_bf16_kernel(const char* name)
    const char* tilegen_x_gemm_bf16_kernel_name(int i)

cdef extern from "tg_gemm_f16.h" nogil:
    const char* tilegen_x_gemm_f16acc_kernel()

cdef extern from "tg_gemm_dispatch.h" nogil:
    int tilegen_x_gemm_isa(int dtype)
    void tilegen_x_gemm_tile(int dtype, int layout, int* mr, int* nr)
    const char* tilegen_x_gemm_kernel(int dtype, int layout, int rows)
    void tilegen_x_gemm_blocking(int dtype, int64_t* kc, int64_t* nc)
    int tilegen_x_set_gemm_blocking(int dtype, int64_t kc, int64_t nc)
    int tilegen_x_set_gemm_main_kernel(int dtype, const char* name)
    const char* tilegen_x_gemv_kernel(int dtype, int form)
    int64_t tilegen_x_gemm_stream_rows(int dtype)
    int tilegen_x_set_gemm_stream_rows(int dtype, int64_t rows)
    int64_t tilegen_x_gemm_b_inner_rows(int dtype)
    int tilegen_x_set_gemm_b_inner_rows(int dtype, int64_t rows)
    enum: TG_B_INNER_ROWS_MAX

cdef extern from "dispatch.h" nogil:
    const char* tilegen_x_isa_name_of(int isa)

cdef int NPY_F32 = cnp.NPY_FLOAT32
cdef int NPY_F64 = cnp.NPY_FLOAT64


cdef object _s(const char* p):
    return None if p == NULL else p.decode()


cdef int _dtype_index(dtype) except -1:
    d = np.dtype(dtype)
    if d == np.float32:
        return 0
    if d == np.float64:
        return 1
    raise TypeError(f"dtype: {d} has no tilegen GEMM kernels; allowed: float32, float64")


# ---------------------------------------------------------------- configuration

def gemm_config(dtype):
    """The GEMM configuration chosen for a dtype: ISA, blocking, and per kernel set ("rows" for
    row-major A, "narrow" for row-major A and few columns, "packed" for the rest) the main kernel
    and the kernel serving each row count. "kernel" is the main kernel a C-ordered float matmul
    runs."""
    cdef int d = _dtype_index(dtype), mr = 0, nr = 0, layout
    cdef int64_t kc = 0, nc = 0
    tilegen_x_gemm_blocking(d, &kc, &nc)
    out = {"isa": _s(tilegen_x_isa_name_of(tilegen_x_gemm_isa(d))), "kc": kc, "nc": nc}
    for layout, name in ((0, "packed"), (1, "rows"), (2, "narrow")):
        tilegen_x_gemm_tile(d, layout, &mr, &nr)
        if layout == 0:
            out["nr"] = nr
        out[name] = {
            "mr": mr, "nr": nr,
            "kernel": _s(tilegen_x_gemm_kernel(d, layout, 0)),
            "kernels_by_rows": [_s(tilegen_x_gemm_kernel(d, layout, r)) for r in range(1, mr + 1)],
        }
    out["kernel"] = out["rows"]["kernel"] or out["packed"]["kernel"]
    out["gemv_kernel"] = _s(tilegen_x_gemv_kernel(d, 0))
    out["gemv_axpy_kernel"] = _s(tilegen_x_gemv_kernel(d, 1))
    out["stream_rows"] = tilegen_x_gemm_stream_rows(d)
    out["b_inner_rows"] = tilegen_x_gemm_b_inner_rows(d)
    return out


def set_gemm_blocking(dtype, int64_t kc=0, int64_t nc=0):
    """Override KC/NC (0 keeps a value); NC is rounded to NR."""
    if tilegen_x_set_gemm_blocking(_dtype_index(dtype), kc, nc) != 0:
        raise ValueError(f"blocking: kc={kc}, nc={nc} out of range")


def set_gemm_stream_rows(dtype, int64_t rows=0):
    """Rows of an A streamed from beyond L2 under few columns of C that one kernel call reads
    at once, each a prefetch stream (1..64; 0: the built-in): the height of its row panels."""
    if tilegen_x_set_gemm_stream_rows(_dtype_index(dtype), rows) != 0:
        raise ValueError(f"stream_rows: rows={rows} out of range; allowed: 0 to 64")


B_INNER_ROWS_MAX = TG_B_INNER_ROWS_MAX


def set_gemm_b_inner_rows(dtype, int64_t rows=0):
    """Up to how many rows of C a B beyond L2 is read one column panel at a time, each used by
    all the rows from L1, instead of blocked (1..B_INNER_ROWS_MAX, 1 in effect never; 0: the
    built-in)."""
    if tilegen_x_set_gemm_b_inner_rows(_dtype_index(dtype), rows) != 0:
        raise ValueError(f"b_inner_rows: rows={rows} out of range; allowed: 0 to "
                         f"{TG_B_INNER_ROWS_MAX}")


def set_gemm_kernel(dtype, str name):
    """Use `name` (a production kernel of the current ISA) as the main tile of its A layout."""
    if tilegen_x_set_gemm_main_kernel(_dtype_index(dtype), name.encode()) != 0:
        raise ValueError(f"kernel: {name!r} is not a production kernel of the ISA in use")


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


cdef int _gemm_raw(int t, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
                   int64_t rs_a, int64_t cs_a, const void* b, int64_t rs_b, int64_t cs_b,
                   double beta, void* c, int64_t rs_c, int64_t cs_c, const void* bias,
                   int64_t bs, int act) except -1:
    """The C call, GIL released; strides in elements, t the NumPy type number of all operands."""
    cdef int rc
    if t == NPY_F32:
        with nogil:
            rc = tilegen_sgemm_strided(m, n, k, <float> alpha, <const float*> a, rs_a, cs_a,
                                       <const float*> b, rs_b, cs_b, <float> beta, <float*> c,
                                       rs_c, cs_c, <const float*> bias, bs, act)
    else:
        with nogil:
            rc = tilegen_dgemm_strided(m, n, k, alpha, <const double*> a, rs_a, cs_a,
                                       <const double*> b, rs_b, cs_b, beta, <double*> c,
                                       rs_c, cs_c, <const double*> bias, bs, act)
    if rc != 0:
        raise ValueError(f"tilegen gemm rejected argument {-rc}")
    return 0


cdef int _batched_raw(int t, int64_t nb, const int64_t* shape, const int64_t* sa,
                      const int64_t* sb, const int64_t* sc, int64_t m, int64_t n, int64_t k,
                      const void* a, int64_t rs_a, int64_t cs_a, const void* b, int64_t rs_b,
                      int64_t cs_b, void* c, int64_t rs_c, int64_t cs_c) except -1:
    """C = A @ B over nb batch dimensions (shape, and the batch strides of each operand), GIL
    released; strides in elements, t the NumPy type number of all operands."""
    cdef int rc
    if t == NPY_F32:
        with nogil:
            rc = tilegen_sgemm_batched(nb, shape, sa, sb, sc, m, n, k, 1.0, <const float*> a,
                                       rs_a, cs_a, <const float*> b, rs_b, cs_b, 0.0,
                                       <float*> c, rs_c, cs_c)
    else:
        with nogil:
            rc = tilegen_dgemm_batched(nb, shape, sa, sb, sc, m, n, k, 1.0, <const double*> a,
                                       rs_a, cs_a, <const double*> b, rs_b, cs_b, 0.0,
                                       <double*> c, rs_c, cs_c)
    if rc != 0:
        raise ValueError(f"tilegen batched gemm rejected argument {-rc}")
    return 0


cdef int _call_gemm(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha, double beta,
                    cnp.ndarray bias, int act) except -1:
    """c = act(alpha * a @ b + beta * c + bias) for 2-D arrays of one float dtype."""
    cdef int64_t isz = cnp.PyArray_ITEMSIZE(c)
    cdef void* pbias = NULL
    cdef int64_t bs = 0
    if bias is not None:
        pbias = cnp.PyArray_DATA(bias)
        bs = cnp.PyArray_STRIDE(bias, 0) // isz
    return _gemm_raw(cnp.PyArray_TYPE(c), cnp.PyArray_DIM(a, 0), cnp.PyArray_DIM(b, 1),
                     cnp.PyArray_DIM(a, 1), alpha, cnp.PyArray_DATA(a),
                     cnp.PyArray_STRIDE(a, 0) // isz, cnp.PyArray_STRIDE(a, 1) // isz,
                     cnp.PyArray_DATA(b), cnp.PyArray_STRIDE(b, 0) // isz,
                     cnp.PyArray_STRIDE(b, 1) // isz, beta, cnp.PyArray_DATA(c),
                     cnp.PyArray_STRIDE(c, 0) // isz, cnp.PyArray_STRIDE(c, 1) // isz, pbias, bs,
                     act)


cdef object _matvec(cnp.ndarray A, cnp.ndarray B, object out, int t):
    """The matrix-vector cases of matmul (exactly one operand 1-D) for aligned operands of one
    float dtype with matching core dimensions; None when `out` needs the general path."""
    cdef int64_t isz = cnp.PyArray_ITEMSIZE(A), m, n, k, cs_a, rs_b, stride_c
    cdef cnp.npy_intp length
    cdef cnp.ndarray C
    if cnp.PyArray_NDIM(A) == 1:      # x @ B: one row
        k = cnp.PyArray_DIM(A, 0)
        length = cnp.PyArray_DIM(B, 1)
    else:                              # A @ x: one column
        k = cnp.PyArray_DIM(A, 1)
        length = cnp.PyArray_DIM(A, 0)
    if out is None:
        C = cnp.PyArray_EMPTY(1, &length, t, 0)
    elif type(out) is cnp.ndarray:
        C = <cnp.ndarray> out
        if not (cnp.PyArray_NDIM(C) == 1 and cnp.PyArray_DIM(C, 0) == length
                and _gemm_ready(C, t) and cnp.PyArray_ISWRITEABLE(C) and not _overlap(C, A)
                and not _overlap(C, B) and (length <= 1 or cnp.PyArray_STRIDE(C, 0) != 0)):
            return None
    else:
        return None
    stride_c = cnp.PyArray_STRIDE(C, 0) // isz
    if cnp.PyArray_NDIM(A) == 1:
        _gemm_raw(t, 1, length, k, 1.0, cnp.PyArray_DATA(A), k, cnp.PyArray_STRIDE(A, 0) // isz,
                  cnp.PyArray_DATA(B), cnp.PyArray_STRIDE(B, 0) // isz,
                  cnp.PyArray_STRIDE(B, 1) // isz, 0.0, cnp.PyArray_DATA(C), 0, stride_c,
                  NULL, 0, 0)
    else:
        _gemm_raw(t, length, 1, k, 1.0, cnp.PyArray_DATA(A), cnp.PyArray_STRIDE(A, 0) // isz,
                  cnp.PyArray_STRIDE(A, 1) // isz, cnp.PyArray_DATA(B),
                  cnp.PyArray_STRIDE(B, 0) // isz, 1, 0.0, cnp.PyArray_DATA(C), stride_c, 1,
                  NULL, 0, 0)
    return C


def gemm_into(a, b, c, double alpha=1.0, double beta=0.0, bias=None, act=None):
    """c[...] = act(alpha * a @ b + beta * c + bias), in place.

    a (m, k), b (k, n), c (m, n) and bias (n,) share one float32/float64 dtype, are aligned and
    in native byte order; c is writeable and overlaps neither a, b nor bias (the caller makes
    sure; tilegen.ops.gemm.api does). Any strides, negative and zero included.
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
    _batched_raw(t, nd - 2, &mv[0, 0], &mv[1, 0], &mv[2, 0], &mv[3, 0], m, n, k,
                 cnp.PyArray_DATA(A), rs_a, cs_a, cnp.PyArray_DATA(B), rs_b, cs_b,
                 cnp.PyArray_DATA(C), rs_c, cs_c)
    return c


cdef inline bint _disjoint_2d(cnp.ndarray x):
    """No two elements of the 2-D array x share memory (a sufficient test on its strides)."""
    if cnp.PyArray_IS_C_CONTIGUOUS(x) or cnp.PyArray_IS_F_CONTIGUOUS(x):
        return True
    cdef cnp.npy_intp n0 = cnp.PyArray_DIM(x, 0), n1 = cnp.PyArray_DIM(x, 1)
    cdef cnp.npy_intp s0 = cnp.PyArray_STRIDE(x, 0), s1 = cnp.PyArray_STRIDE(x, 1)
    cdef cnp.npy_intp isz = cnp.PyArray_ITEMSIZE(x)
    s0 = -s0 if s0 < 0 else s0
    s1 = -s1 if s1 < 0 else s1
    if n0 == 0 or n1 == 0:
        return True
    if n0 == 1:
        return n1 == 1 or s1 >= isz
    if n1 == 1:
        return s0 >= isz
    if s0 < s1:
        s0, s1, n1 = s1, s0, n0
    return s1 >= isz and s0 >= s1 * (n1 - 1) + isz


cdef object _stacked(cnp.ndarray A, cnp.ndarray B, object out, int t):
    """matmul of stacks (both operands >= 2-D, one > 2-D) for aligned operands of one float
    dtype with matching core dimensions: batch dimensions broadcast as NumPy does, with zero
    strides and no Python-level work. None when the general path must decide: batch shapes that
    do not broadcast (NumPy raises), or an `out` that is not an aligned, writeable, C-contiguous
    array of the result's shape and dtype, disjoint from the inputs."""
    cdef int na = cnp.PyArray_NDIM(A), nb = cnp.PyArray_NDIM(B)
    cdef int nd = na if na > nb else nb, d, da, db
    cdef int64_t isz = cnp.PyArray_ITEMSIZE(A), ea, eb
    cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
    cdef int64_t shape[cnp.NPY_MAXDIMS]
    cdef int64_t sa[cnp.NPY_MAXDIMS]
    cdef int64_t sb[cnp.NPY_MAXDIMS]
    cdef int64_t sc[cnp.NPY_MAXDIMS]
    cdef cnp.ndarray C
    for d in range(nd - 2):
        da = d - (nd - na)
        db = d - (nd - nb)
        ea = cnp.PyArray_DIM(A, da) if da >= 0 else 1
        eb = cnp.PyArray_DIM(B, db) if db >= 0 else 1
        if ea != eb and ea != 1 and eb != 1:
            return None
        shape[d] = ea if eb == 1 else eb
        dims[d] = shape[d]
        sa[d] = cnp.PyArray_STRIDE(A, da) // isz if da >= 0 and ea != 1 else 0
        sb[d] = cnp.PyArray_STRIDE(B, db) // isz if db >= 0 and eb != 1 else 0
    dims[nd - 2] = cnp.PyArray_DIM(A, na - 2)
    dims[nd - 1] = cnp.PyArray_DIM(B, nb - 1)
    if out is None:
        C = cnp.PyArray_EMPTY(nd, dims, t, 0)
    elif type(out) is cnp.ndarray:
        C = <cnp.ndarray> out
        if not (cnp.PyArray_NDIM(C) == nd and _gemm_ready(C, t) and cnp.PyArray_ISWRITEABLE(C)
                and cnp.PyArray_IS_C_CONTIGUOUS(C) and not _overlap(C, A) and not _overlap(C, B)):
            return None
        for d in range(nd):
            if cnp.PyArray_DIM(C, d) != dims[d]:
                return None
    else:
        return None
    for d in range(nd - 2):
        sc[d] = cnp.PyArray_STRIDE(C, d) // isz
    cdef int64_t m = dims[nd - 2], n = dims[nd - 1], k = cnp.PyArray_DIM(A, na - 1)
    cdef int64_t rs_a = cnp.PyArray_STRIDE(A, na - 2) // isz, cs_a = cnp.PyArray_STRIDE(A, na - 1) // isz
    cdef int64_t rs_b = cnp.PyArray_STRIDE(B, nb - 2) // isz, cs_b = cnp.PyArray_STRIDE(B, nb - 1) // isz
    cdef int64_t rs_c = cnp.PyArray_STRIDE(C, nd - 2) // isz, cs_c = cnp.PyArray_STRIDE(C, nd - 1) // isz
    _batched_raw(t, nd - 2, shape, sa, sb, sc, m, n, k, cnp.PyArray_DATA(A), rs_a, cs_a,
                 cnp.PyArray_DATA(B), rs_b, cs_b, cnp.PyArray_DATA(C), rs_c, cs_c)
    return C


cdef object _numpy_api = None  # tilegen.ops.gemm.api, imported on the first call that needs it


def matmul(a, b, /, out=None, **kwargs):
    """Matrix product of two arrays: numpy.matmul's semantics, computed by tilegen's kernels.

    Parameters
    ----------
    a, b : array_like
        Operands; scalars (0-d) are not allowed. 1-D operands are promoted to a matrix by a
        prepended (a) or appended (b) 1 that is removed from the result; operands with more
        than two dimensions are stacks of matrices whose leading dimensions broadcast.
    out : ndarray, optional
        Where to put the result: the exact result shape (or one the result broadcasts to) and a
        dtype the result casts to with ``same_kind`` casting. It may overlap `a` or `b` (even be
        one of them): the result is computed as if from copies of the inputs.
    **kwargs
        numpy.matmul's ufunc keywords: ``dtype``, ``casting``, ``order`` (computed on tilegen's
        kernels for float32/float64 results) and ``subok``, ``axes``, ``axis``, ``keepdims``,
        ``signature`` (handed to numpy.matmul); an unknown keyword raises NumPy's TypeError.

    Returns
    -------
    ndarray or scalar
        ``numpy.matmul(a, b, out=out)``: the same shape, dtype and type (a NumPy scalar when
        both operands are 1-D); `out` itself when given.

    Raises
    ------
    ValueError, TypeError
        Exactly where numpy.matmul raises them (0-d operands, mismatched core dimensions,
        batch shapes that do not broadcast, an `out` of the wrong shape, an uncastable or
        read-only `out`, ...), with NumPy's messages.

    Notes
    -----
    Products NumPy computes in float32 or float64 -- those dtypes, mixes that promote to them
    (e.g. float32 with int8, float64 with int64), lists of floats -- run on tilegen's kernels
    for any strides, memory order, byte order or alignment; aligned 2-D arrays of one float
    dtype, and stacks of them (broadcast or not), take a direct path with no Python-level work.
    Every other dtype (float16, integers, bool, complex, object, ...), array subclasses and
    other array-likes are handed to numpy.matmul, so they give NumPy's result exactly.
    """
    cdef cnp.ndarray A, B, C
    cdef int t
    cdef cnp.npy_intp dims[2]
    global _numpy_api
    if kwargs:
        if _numpy_api is None:
            from tilegen.ops.gemm import api
            _numpy_api = api
        return _numpy_api.matmul_general(a, b, out, **kwargs)
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
                        and not _overlap(C, B) and _disjoint_2d(C)):
                    _call_gemm(A, B, C, 1.0, 0.0, None, 0)
                    return C
        elif ((t == NPY_F32 or t == NPY_F64) and cnp.PyArray_NDIM(A) + cnp.PyArray_NDIM(B) == 3
                and cnp.PyArray_NDIM(A) >= 1 and cnp.PyArray_NDIM(B) >= 1
                and _gemm_ready(A, t) and _gemm_ready(B, t)
                and cnp.PyArray_DIM(A, cnp.PyArray_NDIM(A) - 1) == cnp.PyArray_DIM(B, 0)):
            C = _matvec(A, B, out, t)
            if C is not None:
                return C
        elif ((t == NPY_F32 or t == NPY_F64) and cnp.PyArray_NDIM(A) >= 2
                and cnp.PyArray_NDIM(B) >= 2 and _gemm_ready(A, t) and _gemm_ready(B, t)
                and cnp.PyArray_DIM(A, cnp.PyArray_NDIM(A) - 1)
                == cnp.PyArray_DIM(B, cnp.PyArray_NDIM(B) - 2)):
            C = _stacked(A, B, out, t)
            if C is not None:
                return C
    if _numpy_api is None:
        from tilegen.ops.gemm import api
        _numpy_api = api
    return _numpy_api.matmul_general(a, b, out)


# ---------------------------------------------------------------- bfloat16

def bf16_kernel():
    """The bfloat16 GEMM kernel in use."""
    return _s(tilegen_x_gemm_bf16_kernel())


def bf16_kernels():
    """The registered bfloat16 GEMM kernels of the ISA it runs on (tune's candidates)."""
    out = []
    cdef const char* p = tilegen_x_gemm_bf16_kernel_name(0)
    while p != NULL:
        out.append(p.decode())
        p = tilegen_x_gemm_bf16_kernel_name(len(out))
    return out


def set_bf16_kernel(name=None):
    """Makes `name` (one of bf16_kernels()) the bfloat16 kernel; None restores the built-in."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a kernel name or None, not {type(name).__name__}")
    cdef bytes raw = (name or "").encode()
    if tilegen_x_set_gemm_bf16_kernel(raw) != 0:
        raise ValueError(f"name: {name!r} is not a bfloat16 GEMM kernel of this ISA "
                         f"(one of {', '.join(bf16_kernels())})")


cdef int64_t _estride(cnp.ndarray x, int axis) except? -1:
    cdef int64_t s = x.strides[axis]
    if s % x.itemsize:
        raise ValueError("strides must be multiples of the item size")
    return s // x.itemsize


def gemm_bf16_into(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha=1.0,
                   double beta=0.0, bias=None, act=None):
    """c[...] = act(alpha * a @ b + beta * c + bias), in place: a (m, k) and b (k, n) bfloat16
    (ml_dtypes), products summed in float32; c (m, n) float32, or bfloat16 rounded once;
    bias None or float32 (n,). Aligned, native byte order, strides multiples of the item size
    (any sign); c overlaps neither a, b nor bias (tilegen.ops.gemm.api makes sure)."""
    _half_into(a, b, c, alpha, beta, bias, act, 0)


def gemm_f16_into(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha=1.0,
                  double beta=0.0, bias=None, act=None, bint accumulate_f16=False):
    """gemm_bf16_into's contract for float16 a and b: c float32, or float16 rounded once.
    accumulate_f16: the products summed in half where a half-accumulating kernel serves this
    CPU (f16acc_kernel()), else in float32 (tilegen_gemm_f16_ex)."""
    _half_into(a, b, c, alpha, beta, bias, act, 2 if accumulate_f16 else 1)


def f16acc_kernel():
    """The half-accumulating float16 GEMM kernel serving accumulate="float16", or None where
    float32 accumulation serves it."""
    return _s(tilegen_x_gemm_f16acc_kernel())


cdef _half_into(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, double alpha, double beta, bias,
                act, int f16):
    """The bfloat16 (f16 = 0) or float16 GEMM into c (f16 = 1: float32 sums; 2: half sums
    where a kernel serves them)."""
    cdef int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1]
    if b.shape[0] != k or c.shape[0] != m or c.shape[1] != n:
        raise ValueError(f"gemm: shapes {(<object> a).shape} @ {(<object> b).shape} -> "
                         f"{(<object> c).shape} do not match")
    cdef int c_dtype = 0 if c.dtype == np.float32 else 2 if f16 else 1
    cdef int64_t rs_a = _estride(a, 0), cs_a = _estride(a, 1)
    cdef int64_t rs_b = _estride(b, 0), cs_b = _estride(b, 1)
    cdef int64_t rs_c = _estride(c, 0), cs_c = _estride(c, 1)
    cdef const float* pbias = NULL
    cdef int64_t bias_stride = 0
    cdef cnp.ndarray bv
    if bias is not None:
        bv = bias
        pbias = <const float*> cnp.PyArray_DATA(bv)
        bias_stride = _estride(bv, 0)
    if act not in ACTIVATIONS:
        raise ValueError(f"activation: {act!r}; allowed: {list(ACTIVATIONS)}")
    cdef int code = ACTIVATIONS[act], rc
    cdef const uint16_t* pa = <const uint16_t*> cnp.PyArray_DATA(a)
    cdef const uint16_t* pb = <const uint16_t*> cnp.PyArray_DATA(b)
    cdef void* pc = cnp.PyArray_DATA(c)
    with nogil:
        if f16:
            rc = tilegen_gemm_f16_ex(m, n, k, <float> alpha, pa, rs_a, cs_a, pb, rs_b, cs_b,
                                     <float> beta, pc, c_dtype, rs_c, cs_c, pbias, bias_stride,
                                     code, f16 - 1)
        else:
            rc = tilegen_gemm_bf16(m, n, k, <float> alpha, pa, rs_a, cs_a, pb, rs_b, cs_b,
                                   <float> beta, pc, c_dtype, rs_c, cs_c, pbias, bias_stride,
                                   code)
    if rc == 1:
        raise MemoryError("gemm: out of memory for the float16 operands' copies"
                          if f16 else "gemm: out of memory for the packed bfloat16 panels")
    if rc != 0:
        raise ValueError(f"tilegen_gemm_{'f16' if f16 else 'bf16'}: invalid argument {-rc}")


def f16_from_f32(cnp.ndarray[cnp.float32_t, ndim=1] x):
    """float32 (n,) -> float16 bits (uint16 (n,)), to nearest even (tilegen_f16_from_f32)."""
    cdef cnp.ndarray[cnp.uint16_t, ndim=1] y = np.empty(x.shape[0], np.uint16)
    tilegen_f16_from_f32(x.shape[0], &x[0] if x.shape[0] else NULL, _estride(x, 0),
                         &y[0] if y.shape[0] else NULL, 1)
    return y


def f32_from_f16(cnp.ndarray[cnp.uint16_t, ndim=1] x):
    """float16 bits (uint16 (n,)) -> float32 (n,), exactly (tilegen_f32_from_f16)."""
    cdef cnp.ndarray[cnp.float32_t, ndim=1] y = np.empty(x.shape[0], np.float32)
    tilegen_f32_from_f16(x.shape[0], &x[0] if x.shape[0] else NULL, _estride(x, 0),
                         &y[0] if y.shape[0] else NULL, 1)
    return y


# ---------------------------------------------------------------- int8

def s8_kernel():
    """The int8 GEMM kernel in use."""
    return _s(tilegen_x_gemm_s8_kernel())


def s8_kernels():
    """The registered int8 GEMM kernels of the ISA it runs on (tune's candidates)."""
    out = []
    cdef const char* p = tilegen_x_gemm_s8_kernel_name(0)
    while p != NULL:
        out.append(p.decode())
        p = tilegen_x_gemm_s8_kernel_name(len(out))
    return out


def set_s8_kernel(name=None):
    """Makes `name` (one of s8_kernels()) the int8 kernel; None restores the built-in."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a kernel name or None, not {type(name).__name__}")
    cdef bytes raw = (name or "").encode()
    if tilegen_x_set_gemm_s8_kernel(raw) != 0:
        raise ValueError(f"name: {name!r} is not an int8 GEMM kernel of this ISA "
                         f"(one of {', '.join(s8_kernels())})")


def gemm_s8_into(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, bint accumulate=False):
    """c[...] = a @ b (+ c when accumulate), in place: a (m, k) int8 or uint8, b (k, n) int8,
    c (m, n) int32, exact (int32 sums wrap past 2^31, as NumPy's). Aligned, native byte order,
    strides multiples of the item size (any sign); c overlaps neither a nor b (the API makes
    sure)."""
    cdef int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1]
    if b.shape[0] != k or c.shape[0] != m or c.shape[1] != n:
        raise ValueError(f"gemm: shapes {(<object> a).shape} @ {(<object> b).shape} -> "
                         f"{(<object> c).shape} do not match")
    if a.dtype not in (np.int8, np.uint8) or b.dtype != np.int8 or c.dtype != np.int32:
        raise TypeError(f"gemm: int8 or uint8 @ int8 -> int32 only, not {a.dtype} @ {b.dtype} "
                        f"-> {c.dtype}")
    cdef bint unsigned_a = a.dtype == np.uint8
    cdef int64_t rs_a = _estride(a, 0), cs_a = _estride(a, 1)
    cdef int64_t rs_b = _estride(b, 0), cs_b = _estride(b, 1)
    cdef int64_t rs_c = _estride(c, 0), cs_c = _estride(c, 1)
    cdef const int8_t* pa = <const int8_t*> cnp.PyArray_DATA(a)
    cdef const int8_t* pb = <const int8_t*> cnp.PyArray_DATA(b)
    cdef int32_t* pc = <int32_t*> cnp.PyArray_DATA(c)
    cdef int acc = 1 if accumulate else 0, rc
    with nogil:
        if unsigned_a:
            rc = tilegen_gemm_u8s8(m, n, k, <const uint8_t*> pa, rs_a, cs_a, pb, rs_b, cs_b, acc,
                                   pc, rs_c, cs_c)
        else:
            rc = tilegen_gemm_s8(m, n, k, pa, rs_a, cs_a, pb, rs_b, cs_b, acc, pc, rs_c, cs_c)
    if rc == 1:
        raise MemoryError("gemm: out of memory for the packed int8 panels")
    if rc != 0:
        raise ValueError(f"tilegen_gemm_s8: invalid argument {-rc}")
