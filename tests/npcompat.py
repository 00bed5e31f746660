"""Shared helpers of the NumPy-compatibility tests (test_matmul_numpy, test_dot_numpy, test_gemm_api).

- `relayout(x, layout)`: an array equal to x with another memory layout (F order, negative
  strides, step-2 view, transposed storage, non-native byte order, unaligned data).
- `assert_close(got, ref, scale, k, dtype)`: the project's tolerance, per element, against a
  float64 reference: |got - ref| <= tol(dtype) * sqrt(K) * scale, where scale is the matching
  product of absolute values (sum |a||b| for each element).
- `same_error(call_numpy, call_tilegen)`: both raise an exception of the same type and message.
- `outside_guard(out)`: a snapshot of the memory around an output view (the gaps of a step-2
  view, the rest of the buffer it is a window of); `.check()` asserts that only the view changed.
- `dims()` / `small_dims()`: hypothesis strategies of sizes 0..300, mostly small, with primes.
- `examples(n)`: n hypothesis examples, times $TILEGEN_TEST_EXAMPLES_SCALE (default 1) for a
  longer hunt, e.g. TILEGEN_TEST_EXAMPLES_SCALE=20 python -m pytest tests/test_matmul_numpy.py.
"""
import math
import os

import numpy as np
from hypothesis import strategies as st

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

LAYOUTS = ("C", "F", "neg", "step2", "T", "swapped", "unaligned")
LAYOUTS_1D = ("C", "neg", "step2", "swapped", "unaligned")

# Relative tolerance per sqrt(K), by the least precise dtype the value passed through.
_TOL = {np.dtype(np.float16): 2e-3, F32: 1e-5, F64: 1e-12}


def examples(n: int) -> int:
    return max(1, int(n * float(os.environ.get("TILEGEN_TEST_EXAMPLES_SCALE", "1"))))


def relayout(x: np.ndarray, layout: str) -> np.ndarray:
    """An array with x's values, shape and dtype (byte order aside), stored as `layout` says."""
    x = np.ascontiguousarray(x)
    nd = x.ndim
    if layout == "C" or nd == 0:
        return x.copy()
    if layout == "F":
        return np.asfortranarray(x)
    if layout == "neg":  # negative strides on the last two axes
        sl = (Ellipsis,) + (slice(None, None, -1),) * min(nd, 2)
        return np.ascontiguousarray(x[sl])[sl]
    if layout == "step2":  # every other element of a bigger array, on every axis
        big = np.full(tuple(2 * s for s in x.shape), np.nan if x.dtype.kind == "f" else 0,
                      dtype=x.dtype)
        view = big[(slice(None, None, 2),) * nd]
        view[...] = x
        return view
    if layout == "T":  # stored transposed: a non-contiguous view of a contiguous array
        if nd < 2:
            return x.copy()
        return np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    if layout == "swapped":
        return x.astype(x.dtype.newbyteorder("S"))
    if layout == "unaligned":
        if x.dtype.itemsize == 1:
            return x.copy()
        buf = bytearray(x.nbytes + 1)
        y = np.frombuffer(buf, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
        y[...] = x
        assert x.size == 0 or not y.flags.aligned
        return y
    raise ValueError(layout)


def values(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Random test data of `dtype`: normals for floats, small integers for integers and bools."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "O":
        return rng.integers(-5, 6, shape).astype(object)
    return rng.standard_normal(shape).astype(dtype)


def tolerance(*dtypes) -> float:
    return max(_TOL.get(np.dtype(d).newbyteorder("="), 0.0) for d in dtypes)


def assert_close(got, ref, scale, k: int, *dtypes) -> None:
    """|got - ref| <= tol * sqrt(max(k, 1)) * scale + (the smallest subnormal of the dtypes)
    elementwise (scale 0 demands exactness up to that floor)."""
    got = np.asarray(got, dtype=np.float64)
    tol = tolerance(*dtypes) * math.sqrt(max(k, 1))
    # Rounding into a subnormal of the narrowest dtype loses up to half its spacing absolutely.
    floor = max((float(np.finfo(d).smallest_subnormal) for d in dtypes
                 if np.dtype(d).kind == "f"), default=0.0)
    err = np.abs(got - ref)
    bad = ~(err <= tol * scale + floor)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(
            f"{int(bad.sum())} of {bad.size} elements off; first at {idx}: got {got[idx]!r}, "
            f"reference {ref[idx]!r}, allowed error {tol * scale[idx]!r} (K={k})")


def check_like_numpy(got, expected, reference, *dtypes) -> None:
    """got has expected's (NumPy's) type, shape and dtype, and is within tolerance of
    reference = (float64 result, float64 result on |a|, |b| as the scale, K)."""
    assert type(got) is type(expected), (type(got), type(expected))
    assert np.shape(got) == np.shape(expected)
    assert got.dtype == expected.dtype
    ref, scale, k = reference
    assert_close(got, ref, scale, k, expected.dtype, *dtypes)


def same_error(call_numpy, call_tilegen) -> Exception:
    """Both callables raise: the same exception type and the same message. Returns NumPy's."""
    try:
        call_numpy()
    except Exception as e:  # noqa: BLE001 -- any exception NumPy raises is the expectation
        expected = e
    else:
        raise AssertionError("NumPy accepted the call; the test expects an error")
    try:
        call_tilegen()
    except Exception as e:  # noqa: BLE001
        assert type(e) is type(expected), f"{type(e).__name__}: {e} vs NumPy's {expected!r}"
        assert str(e) == str(expected), f"message {str(e)!r} vs NumPy's {str(expected)!r}"
        return expected
    raise AssertionError(f"tilegen accepted a call NumPy rejects with {expected!r}")


class outside_guard:
    """The bytes of the array that `out` is a view of, outside the view itself, remembered now;
    check() asserts they are still the same bits (a write into a gap or a neighbour fails)."""

    def __init__(self, out):
        root = out
        while isinstance(getattr(root, "base", None), np.ndarray):
            root = root.base
        self.root = root if isinstance(out, np.ndarray) and root is not out and \
            (root.flags.c_contiguous or root.flags.f_contiguous) else None
        if self.root is None:
            return
        start = self.root.__array_interface__["data"][0]
        offsets = np.zeros((), np.int64) + (out.__array_interface__["data"][0] - start)
        for axis, (size, stride) in enumerate(zip(out.shape, out.strides)):
            shape = [1] * out.ndim
            shape[axis] = size
            offsets = offsets + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
        self.inside = np.zeros(self.root.nbytes, bool)
        if out.size:
            byte = offsets.reshape(-1, 1) + np.arange(out.itemsize)
            self.inside[byte.ravel()] = True
        self.before = self._bytes().copy()

    def _bytes(self) -> np.ndarray:
        return self.root.reshape(-1, order="A").view(np.uint8)

    def check(self) -> None:
        if self.root is None:
            return
        changed = (self._bytes() != self.before) & ~self.inside
        assert not changed.any(), (
            f"{int(changed.sum())} bytes outside the output view were written (first at byte "
            f"{int(np.argmax(changed))} of its {self.root.nbytes}-byte buffer)")


PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 61, 97, 127, 131, 251, 257, 293)


@st.composite
def dims(draw, large_weight: int = 1):
    """One size in 0..300: mostly 0..17, sometimes a prime, sometimes large (100..300)."""
    kind = draw(st.integers(0, 9 + large_weight))
    if kind < 7:
        return draw(st.integers(0, 17))
    if kind < 10:
        return draw(st.sampled_from(PRIMES))
    return draw(st.one_of(st.integers(100, 300), st.sampled_from(PRIMES[-5:])))


@st.composite
def small_dims(draw):
    """One size in 0..37, for stacked shapes (where sizes multiply)."""
    return draw(st.one_of(st.integers(0, 9), st.sampled_from(PRIMES[:12])))
