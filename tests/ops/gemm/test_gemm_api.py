"""tg.gemm: BLAS semantics with a fused bias + activation epilogue, against a NumPy reference.

    tg.gemm(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, bias=None,
            activation=None, out=None) = act(alpha * op(a) @ op(b) + beta * c + bias)

beta == 0: c is not read (NaN in c does not propagate); alpha == 0: a and b are not read.
bias has length N; activation in {None, "relu", "relu6", "gelu" (exact erf form), "silu"}.
Integer/bool inputs compute in float64, float16 in float32. Bad values raise ValueError (an
unknown activation lists the allowed ones), bad types raise TypeError naming the argument.
"""
import inspect
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from npcompat import (F32, F64, LAYOUTS, assert_close, dims, examples, outside_guard, relayout,
                      values)

import tilegen as tg
from tilegen.tools.benchcases import placed

try:
    from scipy.special import erf as _erf
except ImportError:  # pragma: no cover -- scipy is optional
    _erf = np.vectorize(math.erf, otypes=[np.float64])

HYPO = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

ACTIVATIONS = {
    None: lambda x: x,
    "relu": lambda x: np.where(np.isnan(x), x, np.maximum(x, 0.0)),
    "relu6": lambda x: np.where(np.isnan(x), x, np.clip(x, 0.0, 6.0)),
    "gelu": lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
    "silu": lambda x: x / (1.0 + np.exp(-x)),
}
# Largest slope of each activation: an error e before it is at most LIP * e after it.
LIP = 1.2


def reference(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, bias=None,
              activation=None):
    """(act(...) in float64, the error scale sum of |terms| per element, K)."""
    A = np.asarray(a, dtype=np.float64)
    B = np.asarray(b, dtype=np.float64)
    A, B = (A.T if trans_a else A), (B.T if trans_b else B)
    with np.errstate(invalid="ignore", over="ignore"):
        pre = alpha * (A @ B) if alpha != 0 else np.zeros((A.shape[0], B.shape[1]))
        scale = abs(alpha) * (np.abs(A) @ np.abs(B)) if alpha != 0 else np.zeros_like(pre)
        if beta != 0:
            c64 = np.asarray(c, dtype=np.float64)
            pre = pre + beta * c64
            scale = scale + np.abs(beta * c64)
        if bias is not None:
            b64 = np.asarray(bias, dtype=np.float64)
            pre = pre + b64
            scale = scale + np.abs(b64)
        return ACTIVATIONS[activation](pre), LIP * scale, A.shape[1]


@st.composite
def gemm_cases(draw):
    m, n, k = (draw(dims(large_weight=0)) for _ in range(3))
    if draw(st.integers(0, 9)) == 0:  # now and then one large dimension
        m = draw(dims())
    dtype = draw(st.sampled_from([F32, F64]))
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    alpha = draw(st.sampled_from([1.0, 1.0, 0.0, -1.5, 2.0, 0.5, 1e-3]))
    beta = draw(st.sampled_from([0.0, 0.0, 1.0, -0.5, 2.0]))
    with_c = beta != 0 or draw(st.booleans())
    with_bias = draw(st.booleans())
    activation = draw(st.sampled_from(list(ACTIVATIONS)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = relayout(values(rng, (k, m) if trans_a else (m, k), dtype), draw(st.sampled_from(LAYOUTS)))
    b = relayout(values(rng, (n, k) if trans_b else (k, n), dtype), draw(st.sampled_from(LAYOUTS)))
    c = None
    if with_c:
        c = values(rng, (m, n), dtype) if beta != 0 else np.full((m, n), np.nan, dtype)
        c = relayout(c, draw(st.sampled_from(LAYOUTS)))
    bias = relayout(values(rng, (n,), dtype), draw(st.sampled_from(("C", "neg", "step2")))) \
        if with_bias else None
    out_mode = draw(st.sampled_from(["none", "none", "fresh", "F", "step2", "wider", "narrower"]
                                    + (["out=c"] * 2 if with_c else [])))
    kw = dict(alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b, bias=bias,
              activation=activation)
    return a, b, c, kw, out_mode


@settings(HYPO, max_examples=examples(600))
@given(gemm_cases())
def test_matches_reference(case):
    a, b, c, kw, out_mode = case
    dt = a.dtype.newbyteorder("=")
    m, n = (a.shape[1] if kw["trans_a"] else a.shape[0]), (b.shape[0] if kw["trans_b"] else b.shape[1])
    ref, scale, k = reference(a, b, c, **kw)
    out = {"none": None, "out=c": c, "fresh": np.full((m, n), np.nan, dt),
           "F": np.full((m, n), np.nan, dt, order="F"),
           "step2": relayout(np.full((m, n), np.nan, dt), "step2"),
           "wider": np.full((m, n), np.nan, np.longdouble if dt == F64 else F64),
           "narrower": np.full((m, n), np.nan, F32 if dt == F64 else np.float16)}[out_mode]
    around = outside_guard(out if out is not None else c)   # c's gaps too, when c is a view
    got = tg.gemm(a, b, c, out=out, **kw)
    around.check()
    if out is None:
        assert type(got) is np.ndarray and got.dtype == dt and got.shape == (m, n)
    else:
        assert got is out
    assert_close(got, ref, scale, k, dt, got.dtype)


# ---------------------------------------------------------------- BLAS semantics

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m,n,k", [(7, 11, 13), (64, 33, 97), (1, 300, 5), (131, 1, 257),
                                   (50, 200, 300)])  # the last: op(a) panels copied, N > 2 NR
def test_every_transpose_combination(dtype, trans_a, trans_b, m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = values(rng, (k, m) if trans_a else (m, k), dtype)
    b = values(rng, (n, k) if trans_b else (k, n), dtype)
    c = values(rng, (m, n), dtype)
    for alpha, beta in [(1.0, 0.0), (-2.0, 0.5), (0.5, 1.0)]:
        kw = dict(alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b)
        ref, scale, kk = reference(a, b, c, **kw)
        got = tg.gemm(a, b, c, **kw)
        assert got.shape == (m, n) and got.dtype == dtype
        assert_close(got, ref, scale, kk, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("offset", [0, 8, 16, 48])
@pytest.mark.parametrize("m,k,n", [(1, 64, 256), (1, 300, 160), (16, 600, 512), (3, 40, 1024)])
@pytest.mark.parametrize("threads", [1, 2])
def test_b_rows_off_a_cache_line(dtype, offset, m, k, n, threads):
    """B read in place with every row `offset` bytes into a cache line (NumPy's arrays are
    16-byte aligned): the driver computes the first columns apart so the others load whole
    lines. Rows of one element, few rows, a B past L2, and the column split across threads."""
    rng = np.random.default_rng(offset + m + k + n)
    a = values(rng, (m, k), dtype)
    b = placed(values(rng, (k, n), dtype), offset)
    c = placed(values(rng, (m, n), dtype), offset)
    bias = values(rng, (n,), dtype)
    tg.set_num_threads(threads)
    try:
        ref, scale, kk = reference(a, b)
        assert_close(tg.matmul(a, b), ref, scale, kk, dtype)
        assert_close(tg.matmul(a[0], b), ref[0], scale[0], kk, dtype)
        kw = dict(alpha=-1.5, beta=0.5, bias=bias, activation="relu")
        ref, scale, kk = reference(a, b, c, **kw)
        got = tg.gemm(a, b, c, out=c, **kw)
        assert got is c
        assert_close(got, ref, scale, kk, dtype)
    finally:
        tg.set_num_threads(None)  # the default


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("offset", [0, 8, 16, 48])
@pytest.mark.parametrize("m,k", [(256, 256), (5, 1000), (70, 130), (9, 127)])
def test_matrix_vector_rows_off_a_cache_line(dtype, offset, m, k):
    """The dot-form GEMV (A @ x, and x @ B for a column-major B) with rows `offset` bytes into
    a cache line: the first columns are summed apart, then the rest on top."""
    rng = np.random.default_rng(offset + m + k)
    a = placed(values(rng, (m, k), dtype), offset)
    x = values(rng, (k,), dtype)
    ref, scale, kk = reference(a, x[:, None])
    assert_close(tg.matmul(a, x), ref[:, 0], scale[:, 0], kk, dtype)
    assert_close(tg.matmul(x, a.T), ref[:, 0], scale[:, 0], kk, dtype)  # a.T: column-major
    c = np.full((m, 1), np.nan, dtype)
    assert_close(tg.gemm(a, x[:, None], c, alpha=2.0), 2 * ref, 2 * scale, kk, dtype)
    c = values(rng, (m, 1), dtype)
    ref, scale, kk = reference(a, x[:, None], c, alpha=-1.0, beta=0.5, bias=c[0])
    assert_close(tg.gemm(a, x[:, None], c, alpha=-1.0, beta=0.5, bias=c[0]), ref, scale, kk,
                 dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("with_bias", [False, True])
def test_bias_and_activation(dtype, activation, with_bias):
    rng = np.random.default_rng(4)
    a, b, c = values(rng, (45, 70), dtype), values(rng, (70, 37), dtype), values(rng, (45, 37), dtype)
    bias = (3 * values(rng, (37,), dtype)) if with_bias else None
    for beta in (0.0, 0.7):
        ref, scale, k = reference(a, b, c, beta=beta, bias=bias, activation=activation)
        got = tg.gemm(a, b, c, beta=beta, bias=bias, activation=activation)
        assert_close(got, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_gelu_is_the_exact_erf_form(dtype):
    """Not the tanh approximation: the two differ by up to ~5e-4 near |x| = 2."""
    x = np.linspace(-6, 6, 241).astype(dtype).reshape(-1, 1)
    got = tg.gemm(x, np.ones((1, 1), dtype), activation="gelu")
    x64 = x.astype(np.float64)
    exact = 0.5 * x64 * (1.0 + _erf(x64 / math.sqrt(2.0)))
    tol = 1e-6 if dtype == F32 else 1e-14
    np.testing.assert_allclose(got, exact, rtol=tol, atol=tol)
    tanh_form = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
    assert np.abs(got - tanh_form).max() > 1e-4


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("layout", ["C", "F", "step2"])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_beta_zero_never_reads_c(dtype, layout, activation):
    rng = np.random.default_rng(5)
    a, b = values(rng, (33, 21), dtype), values(rng, (21, 19), dtype)
    c = relayout(np.full((33, 19), np.nan, dtype), layout)
    got = tg.gemm(a, b, c, beta=0.0, activation=activation)
    assert np.isfinite(got).all()
    ref, scale, k = reference(a, b, activation=activation)
    assert_close(got, ref, scale, k, dtype)
    got = tg.gemm(a, b, c, beta=0.0, activation=activation, out=c)  # in place, over the NaNs
    assert got is c and np.isfinite(c).all()
    assert_close(c, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("beta", [0.0, 1.0, -2.5])
@pytest.mark.parametrize("trans_a", [False, True])
def test_alpha_zero_never_reads_a_and_b(dtype, beta, trans_a):
    rng = np.random.default_rng(6)
    m, n, k = 23, 17, 40
    a = np.full((k, m) if trans_a else (m, k), np.nan, dtype)
    a[0, :3] = np.inf
    b = np.full((k, n), -np.inf, dtype)
    b[1, 1] = np.nan
    c = values(rng, (m, n), dtype)
    got = tg.gemm(a, b, c, alpha=0.0, beta=beta, trans_a=trans_a)
    np.testing.assert_array_equal(got, (dtype.type(beta) * c).astype(dtype))  # exactly beta*c
    bias = values(rng, (n,), dtype)
    got = tg.gemm(a, b, c, alpha=0.0, beta=beta, trans_a=trans_a, bias=bias, activation="relu")
    expected = np.maximum(dtype.type(beta) * c + bias, 0)
    np.testing.assert_array_equal(got, expected)
    out = c.copy()
    assert tg.gemm(a, b, out, alpha=0.0, beta=beta, trans_a=trans_a, out=out) is out
    np.testing.assert_array_equal(out, (dtype.type(beta) * c).astype(dtype))


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("trans_a", [False, True])
def test_alpha_zero_beta_zero_never_reads_c(dtype, trans_a):
    """alpha = 0 and beta = 0: C is set to zero (plus the epilogue), its NaN and Inf dropped,
    as BLAS defines beta = 0 (C is not read)."""
    m, n, k = 23, 17, 40
    a = np.ones((k, m) if trans_a else (m, k), dtype)
    b = np.ones((k, n), dtype)
    c = np.full((m, n), np.nan, dtype)
    c[::2, ::3] = np.inf
    c[1::2, ::5] = -np.inf
    got = tg.gemm(a, b, c, alpha=0.0, beta=0.0, trans_a=trans_a, out=c)
    assert got is c
    np.testing.assert_array_equal(c, np.zeros((m, n), dtype))
    c[:] = np.nan
    bias = np.arange(n, dtype=dtype) - 3
    got = tg.gemm(a, b, c, alpha=0.0, beta=0.0, trans_a=trans_a, bias=bias, activation="relu")
    np.testing.assert_array_equal(got, np.broadcast_to(np.maximum(bias, 0), (m, n)))


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_nan_in_c_with_nonzero_beta_propagates(dtype, activation):
    a, b = np.ones((3, 4), dtype), np.ones((4, 5), dtype)
    c = np.zeros((3, 5), dtype)
    c[1, 2] = np.nan
    got = tg.gemm(a, b, c, beta=1.0, activation=activation)
    assert np.isnan(got[1, 2]) and np.isfinite(np.delete(got.ravel(), 1 * 5 + 2)).all()


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("m,n,k", [(0, 5, 3), (4, 0, 3), (4, 5, 0), (0, 0, 0), (0, 5, 0)])
@pytest.mark.parametrize("activation", [None, "relu6", "gelu"])
def test_empty_dimensions(dtype, m, n, k, activation):
    rng = np.random.default_rng(8)
    a, b, c = np.ones((m, k), dtype), np.ones((k, n), dtype), values(rng, (m, n), dtype)
    bias = values(rng, (n,), dtype)
    got = tg.gemm(a, b, c, beta=2.0, bias=bias, activation=activation)
    assert got.shape == (m, n) and got.dtype == dtype
    ref, scale, kk = reference(a, b, c, beta=2.0, bias=bias, activation=activation)
    assert_close(got, ref, scale, kk, dtype)
    if k == 0 and activation is None:  # K == 0: exactly beta*c + bias
        np.testing.assert_array_equal(got, dtype.type(2.0) * c + bias)
    np.testing.assert_array_equal(tg.gemm(a, b), np.zeros((m, n), dtype))


# ---------------------------------------------------------------- out=, in place and overlapping

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("with_bias", [False, True])
def test_out_is_c_updates_in_place(dtype, layout, with_bias):
    rng = np.random.default_rng(9)
    a, b = values(rng, (29, 31), dtype), values(rng, (31, 18), dtype)
    c = relayout(values(rng, (29, 18), dtype), layout)
    bias = values(rng, (18,), dtype) if with_bias else None
    ref, scale, k = reference(a, b, c.copy(), alpha=1.5, beta=-0.5, bias=bias, activation="silu")
    got = tg.gemm(a, b, c, alpha=1.5, beta=-0.5, bias=bias, activation="silu", out=c)
    assert got is c
    assert_close(c, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("layout", ["C", "F", "step2"])
def test_c_is_only_read_unless_overwrite_c(dtype, layout):
    """SciPy's rule: without overwrite_c (or out=c) c is an input and stays as it was; with
    overwrite_c=True it is updated in place and returned."""
    rng = np.random.default_rng(4)
    a, b = values(rng, (13, 9), dtype), values(rng, (9, 11), dtype)
    c = relayout(values(rng, (13, 11), dtype), layout)
    before = c.copy()
    ref, scale, k = reference(a, b, c.copy(), alpha=2.0, beta=0.5)
    got = tg.gemm(a, b, c, alpha=2.0, beta=0.5)
    assert got is not c and np.array_equal(c, before)
    assert_close(got, ref, scale, k, dtype)
    got = tg.gemm(a, b, c, alpha=2.0, beta=0.5, overwrite_c=True)
    assert got is c
    assert_close(c, ref, scale, k, dtype)


@pytest.mark.parametrize("kw, error, words", [
    (dict(overwrite_c=True, c=None), ValueError, "needs c"),
    (dict(overwrite_c=True, out=np.empty((4, 5))), ValueError, "do not also give"),
    (dict(overwrite_c=True, c=[[1.0] * 5] * 4), TypeError, "overwrite_c=True needs c"),
    (dict(overwrite_c=True, c=np.ones((4, 5), np.int32)), TypeError,
     r"^gemm: cannot cast the float64 result to c \(overwrite_c=True"),
    (dict(overwrite_c=1), TypeError, "overwrite_c must be a bool"),
])
def test_overwrite_c_errors(kw, error, words):
    args = dict(c=np.ones((4, 5)), beta=1.0)
    args.update(kw)
    if args["c"] is None:
        args["beta"] = 0.0
    with pytest.raises(error, match=words):
        tg.gemm(np.ones((4, 3)), np.ones((3, 5)), **args)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("n", [1, 8, 45, 130])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("which", ["out=a", "out=b", "out=a.T", "out=c=a", "out=b, bias=out[0]"])
def test_out_overlapping_inputs(dtype, n, trans_a, which):
    rng = np.random.default_rng(n)
    a, b, c = values(rng, (n, n), dtype), values(rng, (n, n), dtype), values(rng, (n, n), dtype)
    bias = None
    if which == "out=c=a":
        c = a
    if which == "out=b, bias=out[0]":
        bias = b[0]
    beta = 0.5 if which == "out=c=a" else 0.0
    ref, scale, k = reference(a.copy(), b.copy(), c.copy(), beta=beta, trans_a=trans_a,
                              bias=None if bias is None else bias.copy(), activation="relu")
    out = {"out=a": a, "out=b": b, "out=a.T": a.T, "out=c=a": a, "out=b, bias=out[0]": b}[which]
    got = tg.gemm(a, b, c, beta=beta, trans_a=trans_a, bias=bias, activation="relu", out=out)
    assert got is out
    assert_close(got, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("shift", [1, 7, -3])
def test_out_partially_overlapping_c(dtype, shift):
    """out and c are windows of one buffer, offset by `shift` rows: beta*c must be the old c."""
    rng = np.random.default_rng(10)
    m, n, k = 20, 16, 9
    buf = values(rng, (m + abs(shift), n), dtype)
    c = buf[max(-shift, 0):max(-shift, 0) + m]
    out = buf[max(shift, 0):max(shift, 0) + m]
    a, b = values(rng, (m, k), dtype), values(rng, (k, n), dtype)
    ref, scale, kk = reference(a, b, c.copy(), alpha=2.0, beta=3.0)
    assert tg.gemm(a, b, c, alpha=2.0, beta=3.0, out=out) is out
    assert_close(out, ref, scale, kk, dtype)


def test_out_dtypes():
    rng = np.random.default_rng(11)
    a, b = values(rng, (6, 7), F32), values(rng, (7, 5), F32)
    ref, scale, k = reference(a, b)
    for out_dtype in (F64, np.float16, np.longdouble, np.complex128):
        out = np.zeros((6, 5), out_dtype)
        assert tg.gemm(a, b, out=out) is out
        assert_close(out.real, ref, scale, k, F32, out_dtype)
    for out_dtype in (np.int64, np.int8, bool):
        with pytest.raises(TypeError, match="out"):
            tg.gemm(a, b, out=np.zeros((6, 5), out_dtype))


# ---------------------------------------------------------------- dtype promotion

@pytest.mark.parametrize("da,db,dc,dbias,expected", [
    (np.int64, np.int64, None, None, F64), (np.int8, np.int32, None, None, F64),
    (bool, bool, None, None, F64), (np.uint8, np.float32, None, None, F32),
    (np.int64, np.float32, None, None, F64), (np.float16, np.float16, None, None, F32),
    (np.int8, np.float16, None, None, F32), (np.float16, np.float32, None, None, F32),
    (np.float32, np.float64, None, None, F64),
    # c and bias take part in the promotion, as in NumPy's act(alpha*a@b + beta*c + bias)
    (np.float32, np.float32, np.float64, None, F64), (np.float16, np.float16, np.int16, None, F32),
    (np.float32, np.float32, np.float16, np.float16, F32), (np.float32, np.float32, None, np.int32, F64),
    (np.float16, np.float16, None, np.float32, F32), (np.int32, np.int32, None, np.float32, F64),
])
def test_dtype_promotion(da, db, dc, dbias, expected):
    rng = np.random.default_rng(12)
    a, b = values(rng, (5, 6), da), values(rng, (6, 4), db)
    c = None if dc is None else values(rng, (5, 4), dc)
    bias = None if dbias is None else values(rng, (4,), dbias)
    beta = 0.0 if c is None else 1.0
    got = tg.gemm(a, b, c, beta=beta, bias=bias)
    assert got.dtype == expected and type(got) is np.ndarray
    ref, scale, k = reference(a, b, c, beta=beta, bias=bias)
    assert_close(got, ref, scale, k, expected)


def test_lists_and_read_only_inputs():
    a = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    b = np.array([[1.0, 0.5, -1.0], [2.0, 0.0, 1.0]])
    b.flags.writeable = False
    got = tg.gemm(a, b, bias=[1.0, 2.0, 3.0], activation="relu")
    np.testing.assert_allclose(got, np.maximum(np.array(a) @ b + [1.0, 2.0, 3.0], 0), rtol=1e-15)


# ---------------------------------------------------------------- bad input

def _ok():
    """Valid arguments: a (4, 3), b (3, 5), c (4, 5)."""
    return dict(a=np.ones((4, 3)), b=np.ones((3, 5)), c=np.ones((4, 5)))


BAD_VALUES = [
    ("a 1-D", dict(a=np.ones(3)), "a"),
    ("a 3-D", dict(a=np.ones((1, 4, 3))), "a"),
    ("a 0-d", dict(a=np.float64(1.0)), "a"),
    ("b 1-D", dict(b=np.ones(3)), "b"),
    ("b 3-D", dict(b=np.ones((2, 3, 5))), "b"),
    ("k mismatch", dict(b=np.ones((4, 5))), "shapes"),
    ("trans mismatch", dict(trans_a=True), "shapes"),
    ("trans_b mismatch", dict(trans_b=True), "shapes"),
    ("c shape", dict(c=np.ones((5, 4)), beta=1.0), "c"),
    ("c 1-D", dict(c=np.ones(5), beta=1.0), "c"),
    ("bias length", dict(bias=np.ones(4)), "bias"),
    ("bias 2-D", dict(bias=np.ones((1, 5))), "bias"),
    ("bias 0-d", dict(bias=1.0), "bias"),
    ("beta without c", dict(c=None, beta=0.5), "beta"),
    ("unknown activation", dict(activation="tanh"), "activation"),
    ("activation case", dict(activation="ReLU"), "activation"),
    ("out shape", dict(out=np.empty((5, 4))), "out"),
]


@pytest.mark.parametrize("name,changes,word", BAD_VALUES, ids=[x[0] for x in BAD_VALUES])
def test_bad_values_raise_valueerror(name, changes, word):
    kw = {**_ok(), **changes}
    with pytest.raises(ValueError, match=word) as e:
        tg.gemm(kw.pop("a"), kw.pop("b"), kw.pop("c"), **kw)
    if "activation" in name:
        for allowed in ("None", "'relu'", "'relu6'", "'gelu'", "'silu'"):
            assert allowed in str(e.value)


def test_read_only_out_raises_valueerror():
    out = np.empty((4, 5))
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out.*read-only"):
        tg.gemm(np.ones((4, 3)), np.ones((3, 5)), out=out)
    with pytest.raises(ValueError, match="read-only"):  # c itself as out, in place
        c = np.ones((4, 5))
        c.flags.writeable = False
        tg.gemm(np.ones((4, 3)), np.ones((3, 5)), c, beta=1.0, out=c)


def test_read_only_c_with_overwrite_c_names_c():
    """overwrite_c=True writes into c: a read-only c is named as c (the argument the caller
    gave), with the way out, not as an `out` the caller never passed."""
    c = np.ones((4, 5))
    c.flags.writeable = False
    with pytest.raises(ValueError, match=r"^gemm: c \(overwrite_c=True writes the result into "
                                         r"it\) is read-only; pass a writeable c") as e:
        tg.gemm(np.ones((4, 3)), np.ones((3, 5)), c, beta=1.0, overwrite_c=True)
    assert "out" not in str(e.value)


BAD_TYPES = [
    ("a complex", dict(a=np.ones((4, 3), complex)), "a"),
    ("b complex", dict(b=np.ones((3, 5), np.complex64)), "b"),
    ("c complex", dict(c=np.ones((4, 5), complex), beta=1.0), "c"),
    ("c complex beta 0", dict(c=np.ones((4, 5), complex)), "c"),
    ("bias complex", dict(bias=np.ones(5, complex)), "bias"),
    ("a object", dict(a=np.ones((4, 3), object)), "a"),
    ("a None", dict(a=None), "a"),
    ("b string", dict(b="abc"), "b"),
    ("a str array", dict(a=np.full((4, 3), "x")), "a"),
    ("a datetime", dict(a=np.zeros((4, 3), "M8[s]")), "a"),
    ("bias object", dict(bias=np.array([None] * 5)), "bias"),
    ("alpha complex", dict(alpha=1j), "alpha"),
    ("alpha str", dict(alpha="2"), "alpha"),
    ("alpha None", dict(alpha=None), "alpha"),
    ("alpha array", dict(alpha=np.ones(2)), "alpha"),
    ("beta complex", dict(beta=1j), "beta"),
    ("beta str", dict(beta="0"), "beta"),
    ("trans_a str", dict(trans_a="N"), "trans_a"),
    ("trans_b None", dict(trans_b=None), "trans_b"),
    ("activation int", dict(activation=1), "activation"),
    ("activation list", dict(activation=["relu"]), "activation"),
    ("out list", dict(out=[[0.0] * 5] * 4), "out"),
    ("out int", dict(out=np.empty((4, 5), np.int64)), "out"),
]


@pytest.mark.parametrize("name,changes,word", BAD_TYPES, ids=[x[0] for x in BAD_TYPES])
def test_bad_types_raise_typeerror_naming_the_argument(name, changes, word):
    kw = {**_ok(), **changes}
    with pytest.raises(TypeError, match=rf"\b{word}\b"):
        tg.gemm(kw.pop("a"), kw.pop("b"), kw.pop("c"), **kw)


def test_scalar_arguments_of_any_real_type_are_accepted():
    a, b, c = np.ones((2, 3)), np.ones((3, 2)), np.ones((2, 2))
    for alpha, beta in [(2, 1), (np.float32(2), np.int64(1)), (np.array(2.0), True),
                        (2.0, np.float16(1))]:
        np.testing.assert_array_equal(tg.gemm(a, b, c, alpha=alpha, beta=beta), np.full((2, 2), 7.0))
    for flag in (True, np.bool_(True)):
        np.testing.assert_array_equal(tg.gemm(a.T, b, trans_a=flag), np.full((2, 2), 3.0))


def test_signature():
    params = inspect.signature(tg.gemm).parameters
    assert list(params) == ["a", "b", "c", "alpha", "beta", "trans_a", "trans_b", "bias",
                            "activation", "out", "overwrite_c", "out_dtype", "accumulate"]
    assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY for p in list(params)[3:])
    assert {p: params[p].default for p in list(params)[2:]} == dict(
        c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, bias=None, activation=None,
        out=None, overwrite_c=False, out_dtype=None, accumulate="float32")
