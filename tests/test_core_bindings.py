"""The Cython bindings' own checks (tilegen.blas._core.gemm_into / gemm_batched_into), which
tilegen.numpy_api builds on: they must never write where NumPy would refuse to."""
import numpy as np
import pytest

from tilegen.blas import _core


def test_gemm_into_rejects_read_only_c():
    a, b = np.ones((3, 2)), np.ones((2, 5))
    base = np.zeros((1, 5))
    with pytest.raises(ValueError, match="read-only"):
        _core.gemm_into(a, b, np.broadcast_to(base, (3, 5)))
    assert not base.any()


def test_gemm_batched_into_rejects_read_only_c():
    a, b = np.ones((4, 3, 2)), np.ones((4, 2, 5))
    base = np.zeros((1, 3, 5))
    with pytest.raises(ValueError, match="read-only"):
        _core.gemm_batched_into(a, b, np.broadcast_to(base, (4, 3, 5)))
    assert not base.any()
    frozen = np.zeros((4, 3, 5))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _core.gemm_batched_into(a, b, frozen)
    assert not frozen.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_into_blas_rules(dtype):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (9, 7)).astype(dtype)
    b = rng.uniform(-1, 1, (7, 11)).astype(dtype)
    c = np.full((9, 11), np.nan, dtype)
    _core.gemm_into(a, b, c, 1.0, 0.0)            # beta = 0: C is not read
    assert np.allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    nan_a = np.full_like(a, np.nan)
    _core.gemm_into(nan_a, b, c, 0.0, 2.0)        # alpha = 0: A is not read
    assert np.allclose(c, 2 * (a.astype(np.float64) @ b), rtol=1e-5, atol=1e-5)
    bias = rng.uniform(-1, 1, 11).astype(dtype)
    _core.gemm_into(a, b, c, 1.0, 0.0, bias, "relu")
    want = np.maximum(a.astype(np.float64) @ b + bias, 0)
    assert np.allclose(c, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="allowed"):
        _core.gemm_into(a, b, c, act="tanh")
