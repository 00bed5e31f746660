"""`out=` for functions that compute one array: the checks NumPy's ufuncs make, and where to
compute when the caller's array overlaps an input.

The exceptions follow NumPy's ufuncs: an `out` that is not an ndarray or has another dtype is a
TypeError (a ufunc's "cannot cast ... output" is one; here the dtype must be the result's
exactly, no cast is made); a wrong shape or a read-only array is a ValueError. Every message
names `out`.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np


def check(out, shape: Tuple[int, ...], dtype: np.dtype, *, contiguous: bool = False,
          rows: bool = False) -> np.ndarray:
    """`out`, checked to take a result of `shape` and `dtype`. contiguous: the C core writes
    C-contiguous arrays only; rows: it takes any strides but needs the last axis contiguous."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out: expected a numpy.ndarray, got {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"out: dtype {out.dtype} differs from the result's {dtype}; pass an "
                        f"array of dtype {dtype} (no cast is made)")
    if out.shape != tuple(shape):
        raise ValueError(f"out: shape {out.shape} differs from the result's {tuple(shape)}")
    if not out.flags.writeable:
        raise ValueError("out: is read-only")
    if not (out.flags.aligned and out.dtype.isnative):
        raise ValueError("out: must be aligned and in the machine's byte order")
    if any(s == 0 and n > 1 for s, n in zip(out.strides, out.shape)):
        raise ValueError("out: has a zero stride (a broadcast view): its elements overlap")
    if contiguous and not out.flags.c_contiguous:
        raise ValueError(f"out: must be C-contiguous (strides {out.strides}); pass "
                         "np.empty(shape, dtype) or copy the result into the view")
    if rows and out.ndim and out.shape[-1] > 1 and out.strides[-1] != out.itemsize:
        raise ValueError(f"out: its last axis must be contiguous (strides {out.strides})")
    return out


def target(out: np.ndarray, inputs: Sequence[Optional[np.ndarray]]) -> np.ndarray:
    """Where to compute: `out`, or a fresh array like it when it may share memory with an input
    (the C core reads inputs while it writes; the caller then copies it into out)."""
    if any(a is not None and np.may_share_memory(out, a) for a in inputs):
        return np.empty(out.shape, out.dtype)
    return out


def finish(out: np.ndarray, result: np.ndarray) -> np.ndarray:
    if result is not out:
        np.copyto(out, result)
    return out
