"""tg.dot against numpy.dot: results, shapes, dtypes, N-D semantics, out= rules, exceptions.

numpy.dot(a, b) sums over the last axis of a and the second-to-last of b (the only one of a 1-D
b): result shape a.shape[:-1] + b.shape[:-2] + b.shape[-1:]. 0-d operands multiply. out= must
be exactly right (C-contiguous, the result's dtype, shape); 1-D . 1-D returns a NumPy scalar.
float32/float64 products run on tilegen and are checked against a float64 reference within the
project's tolerance; other dtypes and every error are NumPy's own.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import npcompat
from npcompat import (F32, F64, LAYOUTS, LAYOUTS_1D, assert_close, dims, examples, outside_guard,
                      relayout, same_error, small_dims, values)

import tilegen as tg

_DOT = np.dot  # kept for references while a test forbids NumPy's products

HYPO = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

KERNEL_PAIRS = [(F32, F32)] * 4 + [(F64, F64)] * 4 + [
    (F32, F64), (F64, F32), (F32, np.dtype(np.int64)), (np.dtype(np.int16), F32),
    (np.dtype(np.float16), F32), (np.dtype(bool), F32), (np.dtype(np.uint64), np.dtype(np.int64)),
]


def reference(a, b):
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    k = a64.shape[-1] if a64.ndim else 1
    return _DOT(a64, b64), _DOT(np.abs(a64), np.abs(b64)), k


def check_like_numpy(got, expected, a, b, *dtypes):
    npcompat.check_like_numpy(got, expected, reference(a, b), *dtypes)


@st.composite
def operands(draw, dtype_pairs=KERNEL_PAIRS):
    """(a, b) for dot: a of 1..3 dims, b of 1..3 dims, any layout, sizes 0..300."""
    nda = draw(st.sampled_from((1, 2, 2, 2, 3)))
    ndb = draw(st.sampled_from((1, 2, 2, 2, 3)))
    size = small_dims() if nda + ndb > 4 else dims()
    k = draw(size)
    a_shape = tuple(draw(size) for _ in range(nda - 1)) + (k,)
    b_shape = (k,) if ndb == 1 else tuple(draw(size) for _ in range(ndb - 2)) + (k, draw(size))
    da, db = draw(st.sampled_from(dtype_pairs))
    la = draw(st.sampled_from(LAYOUTS_1D if nda == 1 else LAYOUTS))
    lb = draw(st.sampled_from(LAYOUTS_1D if ndb == 1 else LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return relayout(values(rng, a_shape, da), la), relayout(values(rng, b_shape, db), lb)


@settings(HYPO, max_examples=examples(800))
@given(operands())
def test_matches_numpy(ab):
    a, b = ab
    expected = np.dot(a, b)
    got = tg.dot(a, b)
    check_like_numpy(got, expected, a, b)


OUT_MODES = ("fresh", "F", "neg", "step2", "swapped", "unaligned", "wider", "narrower",
             "read-only")


def make_out(shape, dtype, mode):
    if mode == "wider":
        dtype = np.longdouble if dtype == F64 else F64
    elif mode == "narrower":
        dtype = F32 if dtype == F64 else np.float16
    out = np.full(shape, np.nan, dtype=dtype)
    if mode == "read-only":
        out.flags.writeable = False
    elif mode not in ("fresh", "wider", "narrower"):
        out = relayout(out, mode)
    return out


@settings(HYPO, max_examples=examples(400))
@given(operands(), st.sampled_from(OUT_MODES))
def test_out_matches_numpy(ab, mode):
    """out= is taken exactly when NumPy takes it, and otherwise raises NumPy's error."""
    a, b = ab
    plain = np.dot(a, b)
    out = make_out(np.shape(plain), plain.dtype, mode)
    out_np = make_out(np.shape(plain), plain.dtype, mode)
    try:
        expected = np.dot(a, b, out=out_np)
    except Exception:  # noqa: BLE001 -- NumPy refuses this out: so must tilegen, identically
        same_error(lambda: np.dot(a, b, out=out_np), lambda: tg.dot(a, b, out=out))
        return
    around = outside_guard(out)
    got = tg.dot(a, b, out=out)
    assert type(got) is type(expected)
    if isinstance(expected, np.ndarray):
        assert got is out
    ref, scale, k = reference(a, b)
    assert_close(out, ref, scale, k, plain.dtype, out.dtype)
    assert_close(got, ref, scale, k, plain.dtype, out.dtype)
    around.check()


def test_out_rules_are_numpys():
    """The cases above, spelled out: only a C-contiguous out of the exact dtype is taken."""
    a, b = np.ones((3, 4)), np.ones((4, 5))
    out = np.empty((3, 5))
    assert tg.dot(a, b, out=out) is out
    for bad in [np.empty((3, 5), np.float32), np.empty((5, 3)).T, np.empty((3, 6))[:, :5],
                np.empty((3, 5), np.int64), np.empty((15,)), np.empty((5, 3)), [[0.0] * 5] * 3]:
        same_error(lambda: np.dot(a, b, out=bad), lambda: tg.dot(a, b, out=bad))


# ---------------------------------------------------------------- out= aliasing an input

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("n", [1, 5, 16, 67, 131])
@pytest.mark.parametrize("which", ["out=a", "out=b", "a=b=out"])
def test_out_is_an_input(dtype, n, which):
    rng = np.random.default_rng(n)
    a, b = values(rng, (n, n), dtype), values(rng, (n, n), dtype)
    if which == "a=b=out":
        b = a
    a0, b0 = a.copy(), b.copy()
    out = b if which == "out=b" else a
    got = tg.dot(a, b, out=out)
    assert got is out
    ref, scale, k = reference(a0, b0)
    assert_close(got, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", ["matvec out=b", "vecmat out=a", "3d.2d out=a", "partial"])
def test_out_overlaps_an_input(dtype, case):
    rng = np.random.default_rng(2)
    n = 24
    if case == "matvec out=b":
        a, b = values(rng, (n, n), dtype), values(rng, (n,), dtype)
        out = b
    elif case == "vecmat out=a":
        a, b = values(rng, (n,), dtype), values(rng, (n, n), dtype)
        out = a
    elif case == "3d.2d out=a":
        a, b = values(rng, (3, n, n), dtype), values(rng, (n, n), dtype)
        out = a
    else:  # out and a are C-contiguous windows of one buffer, half overlapping
        buf = values(rng, (3 * n * n // 2,), dtype)
        a, out = buf[:n * n].reshape(n, n), buf[n * n // 2:].reshape(n, n)
        b = values(rng, (n, n), dtype)
    ref, scale, k = reference(a.copy(), b.copy())
    got = tg.dot(a, b, out=out)
    assert got is out
    assert_close(got, ref, scale, k, dtype)


# ---------------------------------------------------------------- special values and sizes

@pytest.mark.parametrize("dtype", [F32, F64])
def test_nan_in_out_is_not_read(dtype):
    rng = np.random.default_rng(1)
    a, b = values(rng, (3, 7, 29), dtype), values(rng, (2, 29, 11), dtype)
    out = np.full((3, 7, 2, 11), np.nan, dtype=dtype)
    assert tg.dot(a, b, out=out) is out
    assert np.isfinite(out).all()
    ref, scale, k = reference(a, b)
    assert_close(out, ref, scale, k, dtype)


EMPTY_SHAPES = [
    ((0,), (0,)), ((3, 0), (0, 4)), ((0, 5), (5, 4)), ((3, 5), (5, 0)), ((0,), (0, 4)),
    ((3, 0), (0,)), ((2, 3, 0), (0, 4)), ((2, 3, 0), (5, 0, 4)), ((2, 3, 4), (0, 4, 5)),
    ((0, 3, 4), (2, 4, 5)), ((3, 4), (2, 0, 4, 5)), ((0, 0), (0, 0)),
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("sa,sb", EMPTY_SHAPES)
@pytest.mark.parametrize("with_out", [False, True])
def test_empty_cases(dtype, sa, sb, with_out):
    a, b = np.ones(sa, dtype), np.ones(sb, dtype)
    plain = np.dot(a, b)
    if with_out:
        out, out_np = (np.full(np.shape(plain), np.nan, dtype=dtype) for _ in range(2))
        expected, got = np.dot(a, b, out=out_np), tg.dot(a, b, out=out)
        np.testing.assert_array_equal(out, out_np)
    else:
        expected, got = plain, tg.dot(a, b)
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected) and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)  # zeros, or empty


def test_vector_dot_vector_returns_a_numpy_scalar():
    for dt in (F32, F64):
        a = np.arange(5, dtype=dt)
        for out in (None, np.empty((), dt)):
            got, expected = tg.dot(a, a, out=out), np.dot(a, a, out=None if out is None else
                                                           np.empty((), dt))
            assert type(got) is type(expected) is dt.type and got == expected == 30


def test_same_product_twice_is_bitwise_identical():
    rng = np.random.default_rng(7)
    a, b = values(rng, (512, 512), F32), values(rng, (512, 512), F32)
    assert tg.dot(a, b).tobytes() == tg.dot(a, b).tobytes()


# ---------------------------------------------------------------- other dtypes: NumPy's answer

DEFER_PAIRS = [
    (np.float16, np.float16), (np.int64, np.int64), (np.int32, np.int8), (bool, bool),
    (np.complex64, np.complex64), (np.complex128, np.float64), (object, object),
    (object, np.float64), (np.longdouble, np.float32),
]


@pytest.mark.parametrize("da,db", DEFER_PAIRS)
@pytest.mark.parametrize("sa,sb", [((4, 5), (5, 3)), ((2, 4, 5), (3, 5, 2)), ((5,), (5, 3)),
                                   ((4, 5), (5,)), ((5,), (5,)), ((), (5, 3)), ((4, 5), ())])
def test_other_dtypes_give_numpys_result_exactly(da, db, sa, sb):
    rng = np.random.default_rng(5)
    a, b = values(rng, sa, da), values(rng, sb, db)
    expected = np.dot(a, b)
    got = tg.dot(a, b)
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected) and np.result_type(got) == np.result_type(expected)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("sa,sb", [((), (3, 4)), ((3, 4), ()), ((), ()), ((2, 3, 4), ())])
def test_scalar_operands_multiply_like_numpy(dtype, sa, sb):
    rng = np.random.default_rng(9)
    a, b = values(rng, sa, dtype), values(rng, sb, dtype)
    expected, got = np.dot(a, b), tg.dot(a, b)
    assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
    assert np.result_type(got) == np.result_type(expected)
    np.testing.assert_array_equal(got, expected)
    for scalar in (2.5, np.float32(2.5)):
        expected, got = np.dot(scalar, b), tg.dot(scalar, b)
        assert type(got) is type(expected) and np.result_type(got) == np.result_type(expected)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_lists_subclasses_and_array_likes():
    a = [[1.5, 2.0, -1.0], [0.25, 3.0, 4.0]]
    b = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]]
    for x, y in [(a, b), (a, np.array(b, np.float32)), ([1.0, 2.0, 3.0], b), (a, [1, 2, 3])]:
        check_like_numpy(tg.dot(x, y), np.dot(x, y), x, y)
    m = np.matrix(a)
    got, expected = tg.dot(m, np.matrix(b)), np.dot(m, np.matrix(b))
    assert type(got) is type(expected) is np.matrix
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- errors: NumPy's type and message

@pytest.mark.parametrize("dtype", [F32, F64, np.dtype(np.int64)])
@pytest.mark.parametrize("sa,sb", [
    ((3, 4), (5, 6)), ((4,), (5,)), ((3, 4), (5,)), ((5,), (4, 3)), ((2, 3, 4), (2, 5, 6)),
    ((3, 0), (3, 0)), ((2, 3, 4), (3, 5, 4)),
])
def test_bad_shapes_raise_numpys_error(dtype, sa, sb):
    a, b = np.ones(sa, dtype), np.ones(sb, dtype)
    same_error(lambda: np.dot(a, b), lambda: tg.dot(a, b))


@pytest.mark.parametrize("args", [([[1.0], [2.0, 3.0]], [[1.0]]), (np.array([["a"]]), np.ones((1, 1))),
                                  (np.ones((2, 2)), np.ones((2, 2)), [[0.0] * 2] * 2),
                                  (np.ones((2, 2)), np.ones((2, 2)), np.empty((2, 2), np.float32))])
def test_bad_arguments_raise_numpys_error(args):
    same_error(lambda: np.dot(*args), lambda: tg.dot(*args))


# ---------------------------------------------------------------- it really runs on tilegen



@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", ["C", "F", "neg", "step2", "T", "swapped", "unaligned",
                                  "vec.vec", "mat.vec", "vec.mat", "3d.3d", "3d.vec", "out"])
def test_float_products_run_on_tilegen(numpy_products_forbidden, dtype, case):
    rng = np.random.default_rng(13)
    layout = case if case in LAYOUTS else "C"
    shapes = {"vec.vec": ((29,), (29,)), "mat.vec": ((23, 29), (29,)), "vec.mat": ((29,), (29, 19)),
              "3d.3d": ((2, 23, 29), (3, 29, 19)), "3d.vec": ((2, 23, 29), (29,))}
    sa, sb = shapes.get(case, ((23, 29), (29, 19)))
    a = relayout(values(rng, sa, dtype), layout)
    b = relayout(values(rng, sb, dtype), layout)
    ref, scale, k = reference(a, b)
    out = np.empty(ref.shape, dtype) if case == "out" else None
    got = tg.dot(a, b, out=out)
    assert numpy_products_forbidden, "no tilegen GEMM call recorded"
    assert type(got) is (np.ndarray if ref.ndim else dtype.type) and got.dtype == dtype
    assert_close(got, ref, scale, k, dtype)
