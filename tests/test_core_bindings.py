"""The Cython bindings' own checks (tilegen.ops.gemm._gemm.gemm_into / gemm_batched_into), which
tilegen.numpy_api builds on: they must never write where NumPy would refuse to."""
import numpy as np
import pytest

from tilegen.core import _core

from tilegen.ops.gemm import _gemm


def test_gemm_into_rejects_read_only_c():
    a, b = np.ones((3, 2)), np.ones((2, 5))
    base = np.zeros((1, 5))
    with pytest.raises(ValueError, match="read-only"):
        _gemm.gemm_into(a, b, np.broadcast_to(base, (3, 5)))
    assert not base.any()


def test_gemm_batched_into_rejects_read_only_c():
    a, b = np.ones((4, 3, 2)), np.ones((4, 2, 5))
    base = np.zeros((1, 3, 5))
    with pytest.raises(ValueError, match="read-only"):
        _gemm.gemm_batched_into(a, b, np.broadcast_to(base, (4, 3, 5)))
    assert not base.any()
    frozen = np.zeros((4, 3, 5))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _gemm.gemm_batched_into(a, b, frozen)
    assert not frozen.any()


def close(got, want, scale, dtype):
    """Within the project's tolerance of the float64 result: 1e-5 (float32) or 1e-12 (float64)
    relative to sum |a||b| (times sqrt(K)); not NumPy's allclose, whose atol = rtol = 1e-5
    would let a float64 result be wrong in its sixth digit."""
    tol = (1e-5 if dtype == np.float32 else 1e-12) * np.sqrt(7)
    return bool((np.abs(got.astype(np.float64) - want) <= tol * scale + 1e-300).all())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_into_blas_rules(dtype):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (9, 7)).astype(dtype)
    b = rng.uniform(-1, 1, (7, 11)).astype(dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = np.abs(a64) @ np.abs(b64)
    c = np.full((9, 11), np.nan, dtype)
    _gemm.gemm_into(a, b, c, 1.0, 0.0)            # beta = 0: C is not read
    assert close(c, a64 @ b64, scale, dtype)
    nan_a = np.full_like(a, np.nan)
    _gemm.gemm_into(nan_a, b, c, 0.0, 2.0)        # alpha = 0: A is not read
    assert close(c, 2 * (a64 @ b64), 2 * scale, dtype)
    bias = rng.uniform(-1, 1, 11).astype(dtype)
    _gemm.gemm_into(a, b, c, 1.0, 0.0, bias, "relu")
    want = np.maximum(a64 @ b64 + bias, 0)
    assert close(c, want, scale + np.abs(bias), dtype)
    with pytest.raises(ValueError, match="allowed"):
        _gemm.gemm_into(a, b, c, act="tanh")
