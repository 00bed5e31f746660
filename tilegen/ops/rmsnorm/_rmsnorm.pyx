# cython: language_level=3, wraparound=True, boundscheck=True
"""The rmsnorm op's binding: argument checks, the GIL released around the C call.
`rmsnorm` is exported as `tilegen.rmsnorm` (op.yaml)."""
cimport numpy as cnp
from libc.stdint cimport int64_t

import numbers

import numpy as np

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    int tilegen_rmsnorm_f32(int64_t rows, int64_t n, const float* x, int64_t x_stride,
                            const float* weight, float eps, float* y, int64_t y_stride)
    int tilegen_rmsnorm_f64(int64_t rows, int64_t n, const double* x, int64_t x_stride,
                            const double* weight, double eps, double* y, int64_t y_stride)

cdef extern from "tg_rmsnorm.h" nogil:
    const char* tilegen_x_rmsnorm_kernel(int dtype)
    int tilegen_x_set_rmsnorm_kernel(int dtype, const char* name)
    const char* tilegen_x_rmsnorm_kernel_name(int dtype, int i)

_DTYPES = {"f32": 0, "f64": 1}


def _dtype_index(dtype):
    if dtype not in _DTYPES:
        raise ValueError(f"dtype: {dtype!r}; allowed: {', '.join(_DTYPES)}")
    return _DTYPES[dtype]


def kernel_name(dtype="f32"):
    """The kernel in use for a dtype ("f32" or "f64")."""
    cdef const char* p = tilegen_x_rmsnorm_kernel(_dtype_index(dtype))
    return None if p == NULL else p.decode()


def kernels(dtype="f32"):
    """The registered kernels of the ISA the dtype runs on (the built-in one and the others
    `tilegen tune` may choose)."""
    cdef int d = _dtype_index(dtype)
    out = []
    cdef const char* p = tilegen_x_rmsnorm_kernel_name(d, 0)
    while p != NULL:
        out.append(p.decode())
        p = tilegen_x_rmsnorm_kernel_name(d, len(out))
    return out


def set_kernel(dtype, name=None):
    """Makes `name` (one of kernels(dtype)) the dtype's kernel; None restores the built-in."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a kernel name or None, not {type(name).__name__}")
    cdef bytes b = (name or "").encode()
    if tilegen_x_set_rmsnorm_kernel(_dtype_index(dtype), b) != 0:
        raise ValueError(f"name: {name!r} is not an rmsnorm kernel of this ISA "
                         f"(one of {', '.join(kernels(dtype))})")


def _float(name, a):
    if a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        raise TypeError(f"{name}: dtype {a.dtype} is not supported; expected float32 or float64")


def rmsnorm(x, weight=None, *, eps=None):
    """RMS normalisation over the last axis, torch.nn.functional.rms_norm's semantics:
    y = x / sqrt(mean(x**2, axis=-1, keepdims=True) + eps) * weight.

    x: float32 or float64, any shape (..., n) with n >= 1; weight: None or shape (n,); eps:
    None (the dtype's machine epsilon, as torch takes) or a finite number >= 0. Mixed float32
    and float64 compute in float64. Returns a new array; x is never modified.
    """
    x = np.asarray(x)
    _float("x", x)
    if x.ndim < 1 or x.shape[-1] < 1:
        raise ValueError(f"x: expected shape (..., n) with n >= 1, got {x.shape}")
    n = x.shape[-1]
    dtype = x.dtype
    if weight is not None:
        weight = np.asarray(weight)
        _float("weight", weight)
        if weight.shape != (n,):
            raise ValueError(f"weight: expected shape ({n},) (x's last axis), got {weight.shape}")
        dtype = np.result_type(dtype, weight.dtype)
    if eps is None:
        eps = float(np.finfo(dtype).eps)
    elif isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps: expected a real number, got {type(eps).__name__}")
    elif not (0 <= float(eps) < float("inf")):
        raise ValueError(f"eps: {eps!r} must be finite and >= 0")
    dtype = np.dtype(dtype).newbyteorder("=")
    xc = np.ascontiguousarray(x, dtype=dtype).reshape(-1, n)
    wc = None if weight is None else np.ascontiguousarray(weight, dtype=dtype)
    out = np.empty(xc.shape, dtype)
    cdef int64_t rows = xc.shape[0], nn = n
    cdef double e = float(eps)
    cdef cnp.ndarray X = xc, Y = out
    cdef void* pw = NULL if wc is None else cnp.PyArray_DATA(<cnp.ndarray> wc)
    cdef int rc
    if dtype == np.float32:
        with nogil:
            rc = tilegen_rmsnorm_f32(rows, nn, <const float*> cnp.PyArray_DATA(X), nn,
                                     <const float*> pw, <float> e,
                                     <float*> cnp.PyArray_DATA(Y), nn)
    else:
        with nogil:
            rc = tilegen_rmsnorm_f64(rows, nn, <const double*> cnp.PyArray_DATA(X), nn,
                                     <const double*> pw, e, <double*> cnp.PyArray_DATA(Y), nn)
    if rc != 0:  # the checks above make this unreachable
        raise ValueError(f"tilegen_rmsnorm: invalid argument {-rc}")
    return out.reshape(x.shape)
