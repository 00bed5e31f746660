"""tg.Linear: quantized layers against a float64 reference of the same arithmetic (the weights'
dequantized values times the activations quantized per 32 values as the layer quantizes them),
exact on integer-valued cases; float32 layers against NumPy; every row and column remainder of
the kernels, threads, bias and activations, bad input."""
import math

import numpy as np
import pytest

import tilegen as tg
from tilegen.ops.gemm import _gemm
from tilegen.ops.linear import _linear

from tilegen.ops.linear.formats import FORMATS as _STORED

FORMATS = list(_STORED)  # q4_0, q4_1, q8_0, int4-g32, int4-g64, int4-g128


def quantize_activations(x):
    """The layer's rule: per 32 values d = max|x| / 127, codes round-half-even(x / d)."""
    b = np.asarray(x, np.float32).reshape(-1, 32)
    d = np.abs(b).max(1, keepdims=True) / np.float32(127)
    inv = np.where(d > 0, np.float32(1) / np.where(d > 0, d, 1), np.float32(0)).astype(np.float32)
    codes = np.clip(np.rint(b * inv), -127, 127)
    return (codes * d.astype(np.float64)).reshape(np.shape(x)), d


def reference(x, blocks, fmt, bias=None):
    """float64 products of what the layer multiplies, and the sum of |products| per output."""
    xq, _ = quantize_activations(x)
    w = tg.dequantize(blocks, fmt).astype(np.float64)
    y = xq @ w.T
    mag = np.abs(xq) @ np.abs(w).T
    if bias is not None:
        y = y + bias
    return y, mag


def check(got, want, mag, k):
    tol = 2e-6 * np.sqrt(k) * mag + 1e-6
    bad = np.abs(got - want) > tol
    assert not bad.any(), f"{bad.sum()} outputs off, worst {np.abs(got - want).max()}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_row_and_column_remainder(fmt):
    """m = 1..9 (the narrow and wide kernels and their mixes) and n across panel remainders."""
    rng = np.random.default_rng(1)
    g = _STORED[fmt].group
    for n in (1, 7, 8, 9, 31, 32, 33, 65, 100):
        for k in (g, 3 * g, 576 if g == 32 else 5 * g):
            w = rng.standard_normal((n, k)).astype(np.float32)
            blocks = tg.quantize(w, fmt)
            layer = tg.Linear(blocks, quant=fmt)
            assert (layer.out_features, layer.in_features) == (n, k)
            for m in (1, 2, 3, 4, 5, 8, 9):
                x = rng.standard_normal((m, k)).astype(np.float32)
                want, mag = reference(x, blocks, fmt)
                check(layer(x), want, mag, k)


@pytest.mark.parametrize("fmt", FORMATS)
def test_integer_valued_exact(fmt):
    """Weights and activations whose quantization is exact (scales 1): the integer product."""
    rng = np.random.default_rng(2)
    n, k, m = 40, 256, 6
    lo, hi = {"q4_0": (-8, 7), "q4_1": (0, 15), "q8_0": (-127, 127)}.get(fmt, (-5, 10))
    w = rng.integers(lo, hi + 1, (n, k)).reshape(n, -1, 32)
    w[:, :, 0] = -8 if fmt == "q4_0" else hi  # the block's largest magnitude sets d = 1
    if fmt == "q4_1" or fmt.startswith("int4"):
        w[:, :, 1] = lo  # and its range (int4: s = 1, zero point 5)
    w = w.reshape(n, k).astype(np.float32)
    x = rng.integers(-127, 128, (m, k)).reshape(m, -1, 32)
    x[:, :, 5] = 127
    x = x.reshape(m, k).astype(np.float32)
    np.testing.assert_array_equal(tg.dequantize(tg.quantize(w, fmt), fmt), w)
    got = tg.Linear(w, quant=fmt)(x)
    np.testing.assert_array_equal(got, x.astype(np.int64) @ w.astype(np.int64).T)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("activation", [None, "relu", "relu6", "gelu", "silu"])
def test_bias_and_activation(fmt, activation):
    rng = np.random.default_rng(3)
    n, k = 50, 128
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32) * 3
    x = rng.standard_normal((3, 5, k)).astype(np.float32)
    blocks = tg.quantize(w, fmt)
    got = tg.Linear(w, bias=b, quant=fmt, activation=activation)(x)
    assert got.shape == (3, 5, n) and got.dtype == np.float32
    y, mag = reference(x.reshape(-1, k), blocks, fmt, b)
    act = {None: lambda v: v, "relu": lambda v: np.maximum(v, 0),
           "relu6": lambda v: np.clip(v, 0, 6),
           "gelu": np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2)))),
           "silu": lambda v: v / (1 + np.exp(-v))}[activation]
    check(got.reshape(-1, n), act(y), mag + 1, k)


def test_float32_layer_is_numpy():
    rng = np.random.default_rng(4)
    w = rng.standard_normal((70, 45)).astype(np.float32)
    b = rng.standard_normal(70).astype(np.float32)
    x = rng.standard_normal((2, 9, 45)).astype(np.float32)
    layer = tg.Linear(w, b, activation="relu")
    nr = _gemm.gemm_config(np.float32)["nr"]
    # packed once into the GEMM kernels' column panels: the rows padded to whole panels
    assert w.nbytes <= layer.weight_bytes <= 45 * (70 + nr) * 4
    want = np.maximum(x.astype(np.float64) @ w.T.astype(np.float64) + b, 0)
    np.testing.assert_allclose(layer(x), want, rtol=1e-5, atol=1e-5)


def float_check(got, x, w, b=None):
    want = x.astype(np.float64) @ w.T.astype(np.float64) + (0 if b is None else b)
    tol = 4 * np.finfo(np.float32).eps * np.sqrt(w.shape[1]) * (np.abs(x) @ np.abs(w).T.astype(
        np.float64)) + 1e-6
    bad = np.abs(got - want) > tol
    assert not bad.any(), f"{bad.sum()} outputs off, worst {np.abs(got - want).max()}"


def float_shapes():
    """Rows: every remainder of the tallest tile and one past two; columns: every remainder of
    NR (and of the narrow set's, below it) and past NC; depth: 1, and past one and two KC blocks
    with a remainder."""
    cfg = _gemm.gemm_config(np.float32)
    mr, nr, kc, nc = cfg["rows"]["mr"], cfg["nr"], cfg["kc"], cfg["nc"]
    rows = list(range(1, mr + 1)) + [2 * mr + 1]
    cols = [1, nr // 2 - 1, nr // 2 + 1, nr - 1, nr, nr + 1, 2 * nr + 3, nc + 5]
    depths = [1, 7, kc + 3, 2 * kc + 17]
    return rows, cols, depths


def test_float32_every_tile_edge_and_block():
    rng = np.random.default_rng(6)
    rows, cols, depths = float_shapes()
    for k in depths:
        for n in cols:
            w = rng.standard_normal((n, k)).astype(np.float32)
            b = rng.standard_normal(n).astype(np.float32)
            layer = tg.Linear(w, b)
            x = rng.standard_normal((max(rows), k)).astype(np.float32)
            for m in rows:
                float_check(layer(x[:m]), x[:m], w, b)


def test_float32_strided_rows_and_threads():
    """x as a view with a row stride past its width; two threads give one thread's bits."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((300, 1100)).astype(np.float32)
    big = rng.standard_normal((97, 1300)).astype(np.float32)
    x = big[:, 50:1150]
    layer = tg.Linear(w, activation="gelu")
    tg.set_num_threads(1)
    try:
        one = layer(x)
    finally:
        tg.set_num_threads(None)
    tg.set_num_threads(2)
    try:
        np.testing.assert_array_equal(layer(x), one)
    finally:
        tg.set_num_threads(None)
    y = x.astype(np.float64) @ w.T.astype(np.float64)
    gelu = y * 0.5 * (1 + np.vectorize(math.erf)(y / math.sqrt(2)))
    np.testing.assert_allclose(one, gelu, rtol=1e-4, atol=1e-3)


def test_float32_layer_survives_a_retune():
    """The layer keeps the kernels and KC it was packed for: changing the GEMM's blocking or
    main tile afterwards (what `tilegen tune` does) leaves its answers right."""
    rng = np.random.default_rng(8)
    w = rng.standard_normal((130, 700)).astype(np.float32)
    x = rng.standard_normal((40, 700)).astype(np.float32)
    layer = tg.Linear(w)
    cfg = _gemm.gemm_config(np.float32)
    smallest = cfg["rows"]["kernels_by_rows"][0]
    try:
        _gemm.set_gemm_blocking(np.float32, kc=64, nc=cfg["nr"] * 2)
        _gemm.set_gemm_kernel(np.float32, smallest)
        float_check(layer(x), x, w)
    finally:
        _gemm.set_gemm_blocking(np.float32, kc=cfg["kc"], nc=cfg["nc"])
        _gemm.set_gemm_kernel(np.float32, cfg["rows"]["kernel"])
    assert _gemm.gemm_config(np.float32) == cfg


@pytest.mark.parametrize("fmt", FORMATS)
def test_threads_agree(fmt):
    """A run large enough to split across threads gives the one-thread result exactly."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((1000, 1024)).astype(np.float32)
    x = rng.standard_normal((5, 1024)).astype(np.float32)
    layer = tg.Linear(w, quant=fmt)
    tg.set_num_threads(1)
    try:
        one = layer(x)
    finally:
        tg.set_num_threads(None)
    tg.set_num_threads(2)
    try:
        np.testing.assert_array_equal(layer(x), one)
    finally:
        tg.set_num_threads(None)


def test_weight_bytes_and_kernels():
    w = np.ones((64, 256), np.float32)
    for fmt, per_block in (("q4_0", 18), ("q4_1", 20), ("q8_0", 34), ("int4-g32", 20),
                           ("int4-g64", 20), ("int4-g128", 20)):
        layer = tg.Linear(w, quant=fmt)
        assert layer.weight_bytes == 64 * 8 * per_block  # a scale (and zero point) per 32
        names = _linear.kernels(fmt)
        kernel = _STORED[fmt].kernel
        assert names and all(kernel.replace("_", "") + "gemv" in s for s in names)


def test_nonfinite_activations_give_nan_rows():
    w = np.ones((8, 64), np.float32)
    x = np.ones((3, 64), np.float32)
    x[1, 40] = np.nan
    x[2, 3] = np.inf
    y = tg.Linear(w, quant="q8_0")(x)
    assert np.isfinite(y[0]).all() and np.isnan(y[1]).all() and np.isnan(y[2]).all()


def test_empty_batch():
    layer = tg.Linear(np.ones((8, 32), np.float32), quant="q4_0")
    assert layer(np.ones((0, 32), np.float32)).shape == (0, 8)


def test_bad_input():
    w = np.ones((8, 64), np.float32)
    with pytest.raises(ValueError, match="quant"):
        tg.Linear(w, quant="q5_1")
    with pytest.raises(ValueError, match="activation"):
        tg.Linear(w, activation="tanh")
    with pytest.raises(TypeError, match="activation"):
        tg.Linear(w, activation=1)
    with pytest.raises(ValueError, match="weight"):
        tg.Linear(np.ones(8), quant="q8_0")
    with pytest.raises(ValueError, match="multiple of 32"):
        tg.Linear(np.ones((8, 40)), quant="q8_0")
    with pytest.raises(ValueError, match="whole q4_0 blocks"):
        tg.Linear(np.ones((8, 20), np.uint8), quant="q4_0")
    with pytest.raises(ValueError, match="bias"):
        tg.Linear(w, bias=np.ones(7))
    layer = tg.Linear(w, quant="q4_1")
    with pytest.raises(ValueError, match="x"):
        layer(np.ones((2, 63), np.float32))
    with pytest.raises(TypeError, match="x"):
        layer(np.ones((2, 64), complex))
