"""The gemm op's API: numpy.matmul's and numpy.dot's semantics on tilegen's kernels
(tg.matmul, tg.dot), and BLAS's gemm with a fused epilogue (tg.gemm).

Rule of the module: whatever tilegen computes, it computes exactly as NumPy defines it (shapes,
broadcasting, 1-D promotion, dtype promotion, `out=` casting); whatever it does not compute
(other dtypes, array subclasses, invalid arguments) goes to NumPy itself, which then gives NumPy's
result or raises NumPy's exception, message included.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from tilegen.core._core import ACTIVATIONS

from . import _gemm
from ._gemm import matmul

__all__ = ["dot", "gemm", "kernel_info", "matmul"]

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_SCALARS = (int, float, bool, complex, np.generic)
_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)


def _bf16_dtype() -> Optional[np.dtype]:
    """ml_dtypes' bfloat16 (a declared dependency; None if it cannot be imported)."""
    global _BF16
    if _BF16 is False:
        try:
            import ml_dtypes
            _BF16 = np.dtype(ml_dtypes.bfloat16)
        except ImportError:  # pragma: no cover - a broken install
            _BF16 = None
    return _BF16


_BF16: Any = False


def _both_bf16(x: np.ndarray, y: np.ndarray) -> bool:
    """Both operands bfloat16: tilegen's bfloat16 kernels compute the product (in float32)."""
    bf = _bf16_dtype()
    return bf is not None and x.dtype == bf and y.dtype == bf


def _both_f16(x: np.ndarray, y: np.ndarray) -> bool:
    """Both operands native float16: tilegen computes the product (float32 sums), as NumPy does
    (its float16 loop sums in float) but on the float32 kernels."""
    return x.dtype == np.float16 and y.dtype == np.float16 and x.flags.aligned and y.flags.aligned


def _both_int8(x: np.ndarray, y: np.ndarray) -> bool:
    """int8 or uint8 times int8: tilegen's int8 kernels compute the product (exact int32 sums)."""
    return x.dtype in (np.int8, np.uint8) and y.dtype == np.int8


# Result dtypes an int8 product can be given from exact int32 sums: NumPy's sums in a narrower
# integer type wrap, which is the int32 sum wrapped (integer arithmetic is modular).
_INT8_RESULTS = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32))


_RESULT_DTYPES: dict = {}


def _numpy_result_dtype(func, x: np.ndarray, y: np.ndarray) -> np.dtype:
    """The dtype NumPy's `func` (matmul, dot) gives for x and y's dtypes: asked of NumPy (and
    ml_dtypes' loops) on 1 x 1 operands once, never assumed."""
    key = (func.__name__, x.dtype, y.dtype)
    if key not in _RESULT_DTYPES:
        _RESULT_DTYPES[key] = np.asarray(func(np.zeros((1, 1), x.dtype),
                                              np.zeros((1, 1), y.dtype))).dtype
    return _RESULT_DTYPES[key]


_SAME_KIND: dict = {}


def _same_kind(src: np.dtype, dst: np.dtype) -> bool:
    """np.can_cast(src, dst, casting="same_kind"), remembered per pair of dtypes."""
    key = (src, dst)
    if key not in _SAME_KIND:
        _SAME_KIND[key] = bool(np.can_cast(src, dst, casting="same_kind"))
    return _SAME_KIND[key]


def _each_matrix(product, a2: np.ndarray, b2: np.ndarray, c: np.ndarray) -> None:
    """product(a, b, c) for each matrix of (..., m, k) @ (..., k, n) -> c (..., m, n), batch
    dims broadcast (the low-precision kernels have no batched C call)."""
    batch = c.shape[:-2]
    if not batch and a2.ndim == b2.ndim == 2:  # one matrix: no broadcast views (~10 us a call)
        product(a2, b2, c)
        return
    a3 = np.broadcast_to(a2, batch + a2.shape[-2:])
    b3 = np.broadcast_to(b2, batch + b2.shape[-2:])
    for idx in np.ndindex(*batch):
        product(a3[idx], b3[idx], c[idx])


def _s8_into(a2: np.ndarray, b2: np.ndarray, c: np.ndarray) -> None:
    """c = a2 @ b2 for int8 (..., m, k) @ (..., k, n) into c (..., m, n) of an _INT8_RESULTS
    dtype, batch dims broadcast: exact int32 sums, wrapped to c's type as NumPy's wrap."""
    t = c if c.dtype == np.int32 else np.empty(c.shape, np.int32)
    _each_matrix(_gemm.gemm_s8_into, a2, b2, t)
    if t is not c:
        np.copyto(c, t, casting="unsafe")  # wraps, as NumPy's narrower sums do


def _int8_as(A: np.ndarray, B: np.ndarray, dt: np.dtype):
    """numpy.matmul(A, B, dtype=dt) for int8 A and B on the int8 kernels, or None when NumPy
    must answer (0-d operands, shapes it rejects, a dtype the int32 sums cannot give: int64
    only while K < 2^17 keeps every int32 sum exact)."""
    if A.ndim == 0 or B.ndim == 0 or not (
            dt in _INT8_RESULTS or dt == np.int64 and A.shape[-1] < 2 ** 17):
        return None
    A2 = A[np.newaxis, :] if A.ndim == 1 else A
    B2 = B[:, np.newaxis] if B.ndim == 1 else B
    if A2.shape[-1] != B2.shape[-2]:
        return None
    try:
        batch = np.broadcast_shapes(A2.shape[:-2], B2.shape[:-2])
    except ValueError:
        return None
    c = np.empty(batch + (A2.shape[-2], B2.shape[-1]), np.int32 if dt == np.int64 else dt)
    _s8_into(A2, B2, c)
    if B.ndim == 1:
        c = c[..., 0]
    if A.ndim == 1:
        c = c[..., 0, :] if B.ndim > 1 else c[..., 0]
    c = c.astype(dt, copy=False)
    return c[()] if c.ndim == 0 else c


def _bf16_into(a2: np.ndarray, b2: np.ndarray, c: np.ndarray) -> None:
    """c = a2 @ b2 for bfloat16 (..., m, k) @ (..., k, n) into float32 or bfloat16 c (..., m, n),
    batch dims broadcast; float32 sums, a bfloat16 c rounded once."""
    _each_matrix(_gemm.gemm_bf16_into, a2, b2, c)


def _f16_into(a2: np.ndarray, b2: np.ndarray, c: np.ndarray) -> None:
    """c = a2 @ b2 for float16 (..., m, k) @ (..., k, n) into float32 or float16 c (..., m, n),
    batch dims broadcast; float32 sums, a float16 c rounded once."""
    _each_matrix(_gemm.gemm_f16_into, a2, b2, c)


def _plain(x) -> bool:
    """Inputs NumPy would turn into a base-class ndarray (no subclass, no __array_ufunc__)."""
    return type(x) is np.ndarray or isinstance(x, (list, tuple) + _SCALARS)


def _ready(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """x as an aligned, native-order array of `dtype` (a copy only when needed)."""
    if x.dtype != dtype or not x.flags.aligned or not x.dtype.isnative:
        x = x.astype(dtype.newbyteorder("="), order="K")
    return x


def _overlaps(out: np.ndarray, *inputs: np.ndarray) -> bool:
    return any(x is not None and np.may_share_memory(out, x) for x in inputs)


def _no_self_overlap(x: np.ndarray) -> bool:
    """True when no two elements of x share memory (a sufficient test on shape and strides)."""
    if x.flags.c_contiguous or x.flags.f_contiguous or x.size == 0:
        return True
    span = x.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(x.strides, x.shape) if n > 1):
        if stride < span:
            return False
        span += stride * (n - 1)
    return True


def _kernel_dtype(x: np.ndarray, y: np.ndarray):
    """The float32/float64 dtype NumPy computes x * y in, or None (another dtype, or none)."""
    try:
        dt = np.promote_types(x.dtype, y.dtype)
    except TypeError:
        return None
    return dt if dt in _KERNEL_DTYPES else None


def _matmul_into(a2: np.ndarray, b2: np.ndarray, c: np.ndarray) -> None:
    """c = a2 @ b2 for (..., m, k) @ (..., k, n) -> c (..., m, n), batch dims broadcast."""
    if c.ndim == 2:
        _gemm.gemm_into(a2, b2, c)
        return
    batch = c.shape[:-2]
    _gemm.gemm_batched_into(np.broadcast_to(a2, batch + a2.shape[-2:]),
                            np.broadcast_to(b2, batch + b2.shape[-2:]), c)


# numpy.matmul's ufunc keywords that tilegen computes with (the rest go to NumPy).
_MATMUL_KEYWORDS = {"dtype": None, "casting": "same_kind", "order": "K", "subok": True}


def _matmul_keywords(a, b, out, kw):
    """numpy.matmul(a, b, out=out, **kw) with ufunc keywords: dtype, casting and order are
    applied around tilegen's product; anything else (axes, axis, keepdims, signature, subok with
    a subclass, an unknown keyword, a cast the casting rule forbids) is numpy.matmul's to
    compute or reject."""
    if not set(kw) <= set(_MATMUL_KEYWORDS) or kw.get("subok", True) is not True and not (
            _plain(a) and _plain(b)):
        return np.matmul(a, b, out=out, **kw)
    dtype, casting, order = kw.get("dtype"), kw.get("casting", "same_kind"), kw.get("order", "K")
    if not (_plain(a) and _plain(b)) or not (out is None or type(out) is np.ndarray) or \
            not isinstance(casting, str) or order not in ("K", "A", "C", "F"):
        return np.matmul(a, b, out=out, **kw)
    A, B = np.asarray(a), np.asarray(b)
    try:
        dt = np.dtype(dtype) if dtype is not None else np.result_type(A, B)
        castable = all(np.can_cast(x.dtype, dt, casting=casting) for x in (A, B)) and (
            out is None or np.can_cast(dt, out.dtype, casting=casting))
    except (TypeError, ValueError):
        return np.matmul(a, b, out=out, **kw)  # NumPy's error for a bad dtype or casting
    result = _int8_as(A, B, dt) if castable and _both_int8(A, B) else None
    if result is None and (dt not in _KERNEL_DTYPES or not castable or A.ndim == 0 or B.ndim == 0):
        return np.matmul(a, b, out=out, **kw)
    if result is None:
        result = matmul_general(A.astype(dt, copy=False), B.astype(dt, copy=False))
    if out is not None:
        if out.shape != np.shape(result) or not out.flags.writeable:
            return np.matmul(a, b, out=out, **kw)  # NumPy broadcasts into out, or raises
        np.copyto(out, result, casting=casting)
        return out
    fortran = order == "F" or order == "A" and all(
        x.flags.f_contiguous and not x.flags.c_contiguous for x in (A, B))
    if fortran and np.ndim(result) >= 2:
        return np.asfortranarray(result)
    return result


def matmul_general(a, b, out=None, **kwargs):
    """numpy.matmul(a, b, out=out, **kwargs) for any input; float32/float64 on tilegen's kernels.

    tilegen.matmul's own fast path serves aligned 2-D arrays of one float dtype; everything else
    comes here. Inputs NumPy computes in float32/float64 (lists, mixed dtypes, stacks, 1-D
    operands, any strides or byte order) run on the kernels; other dtypes, array subclasses and
    array-likes, and every call NumPy rejects go to numpy.matmul itself.
    """
    if kwargs:
        return _matmul_keywords(a, b, out, kwargs)
    if not (_plain(a) and _plain(b)) or not (out is None or type(out) is np.ndarray):
        return np.matmul(a, b, out=out)
    A, B = np.asarray(a), np.asarray(b)
    dt = None if A.ndim == 0 or B.ndim == 0 else _kernel_dtype(A, B)
    lowp = dt is None and A.ndim > 0 and B.ndim > 0 and _both_bf16(A, B)
    half = dt is None and A.ndim > 0 and B.ndim > 0 and _both_f16(A, B)
    int8 = dt is None and A.ndim > 0 and B.ndim > 0 and _both_int8(A, B)
    if lowp or half:
        # bfloat16: float32 (ml_dtypes 0.7's loop); float16: float16, rounded once
        dt = _numpy_result_dtype(np.matmul, A, B)
        if dt not in (_F32, A.dtype):
            return np.matmul(a, b, out=out)
    if int8:
        dt = _numpy_result_dtype(np.matmul, A, B)  # int8: NumPy's sums wrap in int8
        if dt not in _INT8_RESULTS:
            return np.matmul(a, b, out=out)
    if dt is None:
        return np.matmul(a, b, out=out)
    A2 = A[np.newaxis, :] if A.ndim == 1 else A
    B2 = B[:, np.newaxis] if B.ndim == 1 else B
    if A2.shape[-1] != B2.shape[-2]:
        return np.matmul(a, b, out=out)  # NumPy raises its core-dimension ValueError
    try:  # (broadcast_shapes costs 1.5 us: a low-precision GEMV's tenth at 1 x 1024 x 1024)
        batch = () if A2.ndim == B2.ndim == 2 else np.broadcast_shapes(A2.shape[:-2],
                                                                       B2.shape[:-2])
    except ValueError:
        return np.matmul(a, b, out=out)
    m, n = A2.shape[-2], B2.shape[-1]
    shape = batch + ((m,) if A.ndim > 1 else ()) + ((n,) if B.ndim > 1 else ())
    if out is not None and (
        out.shape != shape or not out.flags.writeable or not _same_kind(dt, out.dtype)
    ):
        return np.matmul(a, b, out=out)  # NumPy broadcasts into out, or raises its error
    if not (lowp or half or int8):
        A2, B2 = _ready(A2, dt), _ready(B2, dt)
    product = (_bf16_into if lowp else _f16_into if half else _s8_into if int8
               else _matmul_into)

    def full_view(x):  # the (..., m, n) view of an array of the result's shape
        if A.ndim == 1:
            return x[..., np.newaxis, :] if B.ndim > 1 else x[np.newaxis, np.newaxis]
        return x[..., np.newaxis] if B.ndim == 1 else x

    if out is not None and out.dtype == dt and out.flags.aligned and out.dtype.isnative \
            and not _overlaps(out, A2, B2) and _no_self_overlap(out):
        product(A2, B2, full_view(out))
        return out
    result = np.empty(shape, dtype=dt)
    product(A2, B2, full_view(result))
    if out is None:
        return result[()] if result.ndim == 0 else result  # NumPy returns a scalar for 1-D @ 1-D
    np.copyto(out, result, casting="same_kind")
    return out


def dot(a: npt.ArrayLike, b: npt.ArrayLike, out: Optional[np.ndarray] = None) -> Any:
    """numpy.dot(a, b, out=out); float32/float64 products run on tilegen's kernels.

    dot sums over the last axis of a and the second-to-last axis of b (the only axis of a 1-D
    b): the result has shape a.shape[:-1] + b.shape[:-2] + b.shape[-1:], computed as one GEMM
    (b 1-D or 2-D) or a stack of GEMMs sharing a (b N-D). 0-d operands multiply. As in NumPy,
    out= must be C-contiguous, aligned, writeable and of the result's exact dtype and shape;
    it may overlap a or b. 1-D . 1-D gives a NumPy scalar (even with out=). Other dtypes,
    subclasses, array-likes and invalid calls go to numpy.dot itself.
    """
    if not (_plain(a) and _plain(b)) or not (out is None or type(out) is np.ndarray):
        return np.dot(a, b, out=out)
    A, B = np.asarray(a), np.asarray(b)
    dt = None if A.ndim == 0 or B.ndim == 0 else _kernel_dtype(A, B)  # 0-d: multiplication
    lowp = dt is None and A.ndim > 0 and B.ndim > 0 and _both_bf16(A, B)
    half = dt is None and A.ndim > 0 and B.ndim > 0 and _both_f16(A, B)
    int8 = dt is None and A.ndim > 0 and B.ndim > 0 and _both_int8(A, B)
    if lowp or half:
        # bfloat16 (ml_dtypes' dot) or float16: the float32 sums rounded once
        dt = _numpy_result_dtype(np.dot, A, B)
        if dt not in (_F32, A.dtype):
            return np.dot(a, b, out=out)
    if int8:
        dt = _numpy_result_dtype(np.dot, A, B)  # int8, wrapping
        if dt not in _INT8_RESULTS:
            return np.dot(a, b, out=out)
    k_axis_b = 0 if B.ndim == 1 else B.ndim - 2
    if dt is None or A.shape[-1] != B.shape[k_axis_b]:
        return np.dot(a, b, out=out)
    shape = A.shape[:-1] + B.shape[:k_axis_b] + B.shape[k_axis_b + 1:]
    if out is not None and not (out.dtype == dt and out.shape == shape and out.flags.c_contiguous
                                and out.flags.aligned and out.flags.writeable):
        return np.dot(a, b, out=out)  # NumPy raises "output array is not acceptable" or similar
    k, n = A.shape[-1], 1 if B.ndim == 1 else B.shape[-1]
    p, q = math.prod(A.shape[:-1]), math.prod(B.shape[:-2])
    native = lowp or half or int8  # the low-precision kernels read their own dtypes
    A2 = A.reshape(p, k) if native else _ready(A.reshape(p, k), dt)       # (P, K)
    B3 = B.reshape(q, k, n) if native else _ready(B.reshape(q, k, n), dt)  # (Q, K, N)
    direct = out is not None and not _overlaps(out, A2, B3)
    target = out if direct else np.empty(shape, dtype=dt)
    c3 = target.reshape(p, q, n).transpose(1, 0, 2)  # (Q, P, N) view; memory order (P, Q, N)
    if lowp or half:
        into = _gemm.gemm_bf16_into if lowp else _gemm.gemm_f16_into
        for i in range(q):
            into(A2, B3[i], c3[i])
    elif int8:
        for i in range(q):
            _s8_into(A2, B3[i], c3[i])
    elif q == 1:
        _gemm.gemm_into(A2, B3[0], c3[0])
    else:
        _gemm.gemm_batched_into(np.broadcast_to(A2, (q,) + A2.shape), B3, c3)
    if out is not None and not direct:
        np.copyto(out, target)
    result = target if out is None else out
    return result[()] if result.ndim == 0 else result


_ALLOWED_ACTIVATIONS = ", ".join(repr(x) for x in ACTIVATIONS)
_REAL_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def _gemm_operand(name, x, ndim):
    """x as an ndarray of a real dtype with `ndim` dims; TypeError/ValueError naming `name`."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf" and arr.dtype != _bf16_dtype():
        raise TypeError(f"gemm: {name} has dtype {arr.dtype}; allowed: float32, float64, "
                        "bfloat16 (bool, integer and float16 inputs are converted)")
    if arr.ndim != ndim:
        raise ValueError(f"gemm: {name} must be {ndim}-D, got shape {arr.shape}")
    return arr


def _gemm_scalar(name, x) -> float:
    v = x[()] if type(x) is np.ndarray and x.ndim == 0 else x
    if not isinstance(v, _REAL_SCALARS):
        raise TypeError(f"gemm: {name} must be a real number, got {type(x).__name__}")
    return float(v)


def _gemm_flag(name, x) -> bool:
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"gemm: {name} must be a bool, got {type(x).__name__}")
    return bool(x)


def gemm(a: npt.ArrayLike, b: npt.ArrayLike, c: Optional[npt.ArrayLike] = None, *,
         alpha: float = 1.0, beta: float = 0.0, trans_a: bool = False, trans_b: bool = False,
         bias: Optional[npt.ArrayLike] = None, activation: Optional[str] = None,
         out: Optional[np.ndarray] = None, overwrite_c: bool = False,
         out_dtype: Optional[npt.DTypeLike] = None, accumulate: str = "float32") -> np.ndarray:
    """act(alpha * op(a) @ op(b) + beta * c + bias), BLAS semantics with a fused epilogue.

    op(x) is x.T when trans_x. beta == 0 means c is not read (NaN in c does not propagate);
    alpha == 0 means a and b are not read. bias has one value per column (length N);
    activation is one of None, "relu", "relu6", "gelu" (the exact erf form), "silu". The result
    goes to `out` (which may be `c`, for an in-place update, or overlap any input) or to a new
    array. The computation dtype is float32 or float64: NumPy's promotion of a, b, c and bias
    together, where integer and bool compute in float64 and float16 in float32. When a and b
    are both bfloat16 (ml_dtypes), the products are summed in float32 on tilegen's bfloat16
    kernels and bias and activation apply in float32; the result is float32, or bfloat16
    (rounded once, to nearest even) with ``out_dtype=ml_dtypes.bfloat16``. ``out_dtype``
    otherwise names the result's dtype (the float32/float64 result cast to it), except that
    int8 or uint8 ``a`` with int8 ``b`` and an int32 result (``out_dtype=numpy.int32`` or an
    int32 ``out``) run on tilegen's int8 kernels: exact int32 sums (wrapping past 2^31), alpha 1,
    beta 0 or 1, an integer c and bias added in int32, activation None, "relu" or "relu6".

    ``accumulate="float16"`` (a and b both float16 only; the default is "float32") sums the
    products in half precision, as XNNPACK's f16 kernels do, where the CPU computes in half
    natively (AArch64 with FP16 arithmetic): every multiply-add rounded once to half, so
    |P - AB| <= gamma_k sum |a||b| elementwise, gamma_k = k u / (1 - k u), u = 2**-11; alpha,
    beta, bias and activation then apply in float32. The result is float32, or float16 (rounded
    once) with ``out_dtype=np.float16``. Elsewhere (x86) float32 accumulation serves it: the
    default's result.

    `c` is only read: like SciPy's BLAS wrappers (scipy.linalg.blas.sgemm) and NumPy, gemm
    returns a new array unless told where to write. ``overwrite_c=True`` updates c in place (the
    BLAS way; c must then be an ndarray that can take the result, as `out` must) and returns it;
    it is the same as ``out=c``.

    Raises TypeError (naming the argument) for a wrong type: a non-real dtype, a non-real
    alpha/beta, a non-bool trans_a/trans_b, a non-str activation or accumulate,
    accumulate="float16" with a or b not float16, an out that is not an ndarray or cannot take
    the result with same_kind casting. Raises ValueError for a wrong
    value: a/b/c not 2-D or of mismatched shapes, a bias that is not of length N, beta != 0
    without c, an unknown activation (the message lists the allowed ones), a read-only out,
    an accumulate other than "float32" or "float16".
    """
    if not isinstance(overwrite_c, (bool, np.bool_)):
        raise TypeError(f"gemm: overwrite_c must be a bool, got {type(overwrite_c).__name__}")
    if overwrite_c:
        if c is None:
            raise ValueError("gemm: overwrite_c=True needs c")
        if out is not None and out is not c:
            raise ValueError("gemm: overwrite_c=True writes into c; do not also give another out")
        if type(c) is not np.ndarray:
            raise TypeError(f"gemm: overwrite_c=True needs c to be a numpy.ndarray, got "
                            f"{type(c).__name__}")
        out = c
    if activation is not None and not isinstance(activation, str):
        raise TypeError(f"gemm: activation must be a str or None, got "
                        f"{type(activation).__name__}; allowed: {_ALLOWED_ACTIVATIONS}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"gemm: activation={activation!r} is not supported; allowed: "
                         f"{_ALLOWED_ACTIVATIONS}")
    if not isinstance(accumulate, str):
        raise TypeError(f"gemm: accumulate must be a str, got {type(accumulate).__name__}; "
                        "allowed: 'float32', 'float16'")
    if accumulate not in ("float32", "float16"):
        raise ValueError(f"gemm: accumulate={accumulate!r} is not supported; allowed: "
                         "'float32', 'float16'")
    alpha, beta = _gemm_scalar("alpha", alpha), _gemm_scalar("beta", beta)
    trans_a, trans_b = _gemm_flag("trans_a", trans_a), _gemm_flag("trans_b", trans_b)
    A, B = _gemm_operand("a", a, 2), _gemm_operand("b", b, 2)
    accumulate_f16 = accumulate == "float16"
    if accumulate_f16 and not (A.dtype.newbyteorder("=") == _F16 and
                               B.dtype.newbyteorder("=") == _F16):
        raise TypeError(f"gemm: accumulate='float16' needs float16 a and b, got {A.dtype} and "
                        f"{B.dtype}")
    A = A.T if trans_a else A
    B = B.T if trans_b else B
    m, k = A.shape
    if B.shape[0] != k:
        raise ValueError(f"gemm: shapes {A.shape} (op(a)) and {B.shape} (op(b)) do not align: "
                         f"{k} != {B.shape[0]}")
    n = B.shape[1]
    C = None
    if c is not None:
        C = _gemm_operand("c", c, 2)
        if C.shape != (m, n):
            raise ValueError(f"gemm: c has shape {C.shape}; expected {(m, n)}")
    elif beta != 0:
        raise ValueError(f"gemm: beta={beta} needs c")
    bias_v = None
    if bias is not None:
        bias_v = _gemm_operand("bias", bias, 1)
        if bias_v.shape != (n,):
            raise ValueError(f"gemm: bias has shape {bias_v.shape}; expected ({n},)")
    if out_dtype is not None:
        try:
            out_dtype = np.dtype(out_dtype)
        except TypeError:
            raise TypeError(f"gemm: out_dtype={out_dtype!r} is not a dtype") from None
    if _both_bf16(A, B):
        return _gemm_lowp(A, B, C, alpha, beta, bias_v, activation, out, out_dtype, m, n)
    if accumulate_f16:
        return _gemm_lowp(A, B, C, alpha, beta, bias_v, activation, out, out_dtype, m, n,
                          half=True)
    wanted = out_dtype if out_dtype is not None else out.dtype if isinstance(
        out, np.ndarray) else None
    if _both_int8(A, B) and wanted == np.int32:
        return _gemm_s8(A, B, C, alpha, beta, bias_v, activation, out, m, n)
    dt = np.result_type(*(x.astype(np.float32) if x.dtype == _bf16_dtype() else x
                          for x in (A, B, C, bias_v) if x is not None))
    dt = np.dtype(np.float32) if dt == np.float16 else dt
    dt = dt if dt in _KERNEL_DTYPES else np.dtype(np.float64)
    if _both_f16(A, B) and dt == _F32 and out_dtype in (None, _F32, _F16):
        # float32 sums of float16 operands, widened in C (not by NumPy's casts, a third slower)
        return _gemm_lowp(A, B, C, alpha, beta, bias_v, activation, out, out_dtype, m, n,
                          half=True, accumulate_f16=False)
    if out_dtype is not None and out_dtype != dt:
        if out is not None:
            raise ValueError("gemm: give out or out_dtype, not both")
        return gemm(A, B, C, alpha=alpha, beta=beta, bias=bias_v, activation=activation
                    ).astype(out_dtype)
    if out is not None:
        # overwrite_c=True writes the result into c: the messages name c, the argument given.
        name = "c (overwrite_c=True writes the result into it)" if overwrite_c else "out"
        if type(out) is not np.ndarray:
            raise TypeError(f"gemm: out must be a numpy.ndarray, got {type(out).__name__}")
        if not np.can_cast(dt, out.dtype, casting="same_kind"):
            raise TypeError(f"gemm: cannot cast the {dt} result to {name}'s dtype {out.dtype} "
                            "(same_kind casting)")
        if out.shape != (m, n):
            raise ValueError(f"gemm: {name} has shape {out.shape}; expected {(m, n)}")
        if not out.flags.writeable:
            raise ValueError(f"gemm: {name} is read-only" + (
                "; pass a writeable c, or leave overwrite_c False for a new array"
                if overwrite_c else ""))
    A, B = _ready(A, dt), _ready(B, dt)
    bias_v = None if bias_v is None else _ready(bias_v, dt)
    use_c = C is not None and beta != 0
    direct = (out is not None and out.dtype == dt and out.flags.aligned and out.dtype.isnative
              and _no_self_overlap(out) and not _overlaps(out, A, B, bias_v)
              and (not use_c or C is out or not np.may_share_memory(out, C)))
    target = out if direct else np.empty((m, n), dtype=dt)
    if use_c and C is not target:
        np.copyto(target, C, casting="unsafe")
    _gemm.gemm_into(A, B, target, alpha=alpha, beta=beta if use_c else 0.0, bias=bias_v,
                    act=activation)
    if out is None or direct:
        return target
    np.copyto(out, target, casting="same_kind")
    return out


def _check_lowp_out(out, rd: np.dtype, m: int, n: int) -> None:
    """The low-precision paths' checks of `out` for an (m, n) result of dtype rd."""
    if out is None:
        return
    if type(out) is not np.ndarray:
        raise TypeError(f"gemm: out must be a numpy.ndarray, got {type(out).__name__}")
    if not np.can_cast(rd, out.dtype, casting="same_kind"):
        raise TypeError(f"gemm: cannot cast the {rd} result to out's {out.dtype} "
                        "(same_kind casting)")
    if out.shape != (m, n):
        raise ValueError(f"gemm: out has shape {out.shape}; expected {(m, n)}")
    if not out.flags.writeable:
        raise ValueError("gemm: out is read-only")


def _gemm_lowp(A, B, C, alpha, beta, bias_v, activation, out, out_dtype, m, n, half=False,
               accumulate_f16=True):
    """gemm of two bfloat16 operands: float32 sums on the bfloat16 kernels, a float32 result,
    or bfloat16 rounded once (out_dtype, or out's dtype). half: two float16 operands, summed in
    half where a kernel serves it if accumulate_f16 (else in float32), float32 or float16."""
    bf = np.dtype(np.float16) if half else _bf16_dtype()
    rd = out_dtype if out_dtype is not None else (out.dtype if out is not None and
                                                  out.dtype == bf else _F32)
    if rd not in (_F32, bf):
        what = "float16 inputs with accumulate='float16'" if half else "bfloat16 inputs"
        raise TypeError(f"gemm: out_dtype={rd} is not supported for {what}; allowed: "
                        f"float32, {bf}")
    _check_lowp_out(out, rd, m, n)
    bias_f = None if bias_v is None else _ready(bias_v.astype(np.float32, copy=False), _F32)
    use_c = C is not None and beta != 0
    direct = (out is not None and out.dtype == rd and out.flags.aligned
              and _no_self_overlap(out) and not _overlaps(out, A, B, bias_f)
              and (not use_c or C is out or not np.may_share_memory(out, C)))
    target = out if direct else np.empty((m, n), dtype=rd)
    if use_c and C is not target:
        np.copyto(target, C, casting="unsafe")
    if half:
        _gemm.gemm_f16_into(_ready(A, _F16), _ready(B, _F16), target, alpha=alpha,
                            beta=beta if use_c else 0.0, bias=bias_f, act=activation,
                            accumulate_f16=accumulate_f16)
    else:
        _gemm.gemm_bf16_into(A, B, target, alpha=alpha, beta=beta if use_c else 0.0,
                             bias=bias_f, act=activation)
    if out is None or direct:
        return target
    np.copyto(out, target, casting="same_kind")
    return out


_INT_ACTIVATIONS = (None, "relu", "relu6")


def _gemm_s8(A, B, C, alpha, beta, bias_v, activation, out, m, n):
    """gemm of int8 (or uint8) A and int8 B into an int32 result: exact int32 sums on the int8
    kernels (wrapping past 2^31 as NumPy's integer sums), c and bias added and relu/relu6
    applied in int32 -- the integer GEMM of quantized inference, before requantization."""
    if alpha != 1:
        raise ValueError(f"gemm: alpha={alpha}: an int32 result of int8 operands is exact and "
                         "takes alpha=1 (scale after, in float)")
    if beta not in (0, 1):
        raise ValueError(f"gemm: beta={beta}: an int32 result of int8 operands takes beta 0 "
                         "or 1 (c + a @ b)")
    if activation not in _INT_ACTIVATIONS:
        raise ValueError(f"gemm: activation={activation!r} has no exact int32 form; allowed "
                         f"for an int32 result: {_INT_ACTIVATIONS}")
    for name, x in (("c", C), ("bias", bias_v)):
        if x is not None and not np.can_cast(x.dtype, np.int32, casting="safe"):
            raise TypeError(f"gemm: {name} has dtype {x.dtype}; an int32 result of int8 operands "
                            "takes integer values that int32 holds (int8/16/32, uint8/16, bool)")
    i32 = np.dtype(np.int32)
    _check_lowp_out(out, i32, m, n)
    use_c = C is not None and beta != 0
    direct = (out is not None and out.dtype == i32 and out.flags.aligned
              and _no_self_overlap(out) and not _overlaps(out, A, B, bias_v))
    target = out if direct else np.empty((m, n), dtype=i32)
    accumulate = False
    if use_c:
        if C is not target:
            np.copyto(target, C, casting="safe")
        accumulate = True
    _gemm.gemm_s8_into(A, B, target, accumulate)
    if bias_v is not None:
        np.add(target, bias_v.astype(i32, copy=False), out=target)  # int32: wraps as the sums do
    if activation is not None:
        np.clip(target, 0, 6 if activation == "relu6" else None, out=target)
    if out is None or direct:
        return target
    np.copyto(out, target)
    return out


def kernel_info() -> dict:
    """runtime_info()["kernels"]["gemm"]: per dtype, the ISA, blocking, kernel sets and GEMV
    kernels in force (tilegen info shows them)."""
    info = {"f32": _gemm.gemm_config(np.float32), "f64": _gemm.gemm_config(np.float64)}
    from tilegen.core import _core

    info.update({dt: k for dt, k in _core.choices().get("gemm", {}).items() if dt not in info})
    return info
