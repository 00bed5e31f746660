"""tg.matmul against numpy.matmul: results, shapes, dtypes, broadcasting, out= rules, exceptions.

float32/float64 products must run on tilegen's kernels and agree with a float64 reference within
the project's tolerance (f32 1e-5*sqrt(K), f64 1e-12*sqrt(K), relative to sum|a||b| per element);
every other dtype defers to NumPy and must give NumPy's result bit for bit, and every input NumPy
rejects must raise NumPy's exception type (and, where tilegen defers, NumPy's message).
"""
import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import npcompat
from npcompat import (F32, F64, LAYOUTS, LAYOUTS_1D, assert_close, dims, examples, outside_guard,
                      relayout, same_error, small_dims, values)

import tilegen as tg
from tilegen.ops.gemm import api as numpy_api
from tilegen.core import _core
from tilegen.ops.gemm import _gemm

# The real product functions, kept for references while a test forbids NumPy's products.
_MATMUL = np.matmul

HYPO = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Input dtype pairs whose product NumPy computes in float32/float64 (so tilegen computes it).
KERNEL_PAIRS = [(F32, F32)] * 4 + [(F64, F64)] * 4 + [
    (F32, F64), (F64, F32), (F32, np.dtype(np.int64)), (np.dtype(np.int32), F32),
    (np.dtype(np.int8), F32), (np.dtype(np.float16), F32), (np.dtype(bool), F64),
    (np.dtype(np.uint64), np.dtype(np.int64)),  # NumPy's matmul computes this mix in float64
]


def reference(a, b):
    """(float64 product, sum |a||b| per element, K) of the inputs as given."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return _MATMUL(a64, b64), _MATMUL(np.abs(a64), np.abs(b64)), a64.shape[-1]


def check_like_numpy(got, expected, a, b, *dtypes):
    npcompat.check_like_numpy(got, expected, reference(a, b), *dtypes)


@st.composite
def operands(draw, dtype_pairs=KERNEL_PAIRS):
    """(a, b) for matmul: any sizes 0..300, stacked/broadcast batches, 1-D on either side,
    every memory layout, mixed dtypes."""
    a_1d = draw(st.integers(0, 5)) == 0
    b_1d = draw(st.integers(0, 5)) == 0
    batched = draw(st.integers(0, 2)) == 0
    size = small_dims() if batched else dims()
    m, n, k = draw(size), draw(size), draw(size)
    ba = bb = ()
    if batched:
        nd = draw(st.integers(1, 3))
        full = tuple(draw(st.sampled_from((1, 2, 3, 5, 2, 3, 0))) for _ in range(nd))

        def side():
            keep = list(full[nd - draw(st.integers(0, nd)):])
            return tuple(1 if draw(st.integers(0, 2)) == 0 else s for s in keep)

        ba, bb = side(), side()
    da, db = draw(st.sampled_from(dtype_pairs))
    la = draw(st.sampled_from(LAYOUTS_1D if a_1d else LAYOUTS))
    lb = draw(st.sampled_from(LAYOUTS_1D if b_1d else LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = relayout(values(rng, (k,) if a_1d else ba + (m, k), da), la)
    b = relayout(values(rng, (k,) if b_1d else bb + (k, n), db), lb)
    return a, b


# ---------------------------------------------------------------- agreement with NumPy

@settings(HYPO, max_examples=examples(800))
@given(operands())
def test_matches_numpy(ab):
    a, b = ab
    expected = np.matmul(a, b)
    got = tg.matmul(a, b)
    check_like_numpy(got, expected, a, b)


OUT_MODES = ("fresh", "nan", "F", "neg", "step2", "T", "swapped", "unaligned", "wider",
             "narrower", "half")


def make_out(shape, dtype, mode):
    """An output array of `shape` for a result of `dtype`, as `mode` says (NaN-filled but for
    "fresh", zeros)."""
    if mode == "wider":
        dtype = np.longdouble if dtype == F64 else F64
    elif mode == "narrower":
        dtype = F32 if dtype == F64 else np.float16
    elif mode == "half":
        dtype = np.float16
    base = np.full(shape, 0.0 if mode == "fresh" else np.nan, dtype=dtype)
    if mode in ("fresh", "nan", "wider", "narrower", "half"):
        return base
    return relayout(base, mode)


@settings(HYPO, max_examples=examples(400))
@given(operands(), st.sampled_from(OUT_MODES))
def test_out_matches_numpy(ab, mode):
    a, b = ab
    expected_plain = np.matmul(a, b)
    out = make_out(np.shape(expected_plain), expected_plain.dtype, mode)
    out_np = make_out(np.shape(expected_plain), expected_plain.dtype, mode)
    expected = np.matmul(a, b, out=out_np)
    around = outside_guard(out)
    got = tg.matmul(a, b, out=out)
    assert got is out
    assert type(got) is type(expected)
    ref, scale, k = reference(a, b)
    assert_close(out, ref, scale, k, expected_plain.dtype, out.dtype)
    around.check()


# ---------------------------------------------------------------- out= aliasing an input

ALIAS_SIZES = (1, 5, 16, 67, 131)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("n", ALIAS_SIZES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("which", ["out=a", "out=b", "a=b=out", "out=a.T", "out=b[::-1]"])
def test_out_is_an_input_2d(dtype, n, order, which):
    rng = np.random.default_rng(n)
    a = relayout(values(rng, (n, n), dtype), order)
    b = relayout(values(rng, (n, n), dtype), order)
    if which == "a=b=out":
        b = a
    a0, b0 = a.copy(), b.copy()
    out = {"out=a": a, "out=b": b, "a=b=out": a, "out=a.T": a.T, "out=b[::-1]": b[::-1]}[which]
    got = tg.matmul(a, b, out=out)
    assert got is out
    ref, scale, k = reference(a0, b0)
    assert_close(got, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", ["stack out=a", "stack out=b", "broadcast out=a", "matvec out=b",
                                  "vecmat out=a", "stack matvec out=b"])
def test_out_is_an_input_stacked(dtype, case):
    rng = np.random.default_rng(7)
    n = 13
    shapes = {
        "stack out=a": ((3, n, n), (3, n, n)),
        "stack out=b": ((3, n, n), (3, n, n)),
        "broadcast out=a": ((2, 3, n, n), (3, n, n)),
        "matvec out=b": ((n, n), (n,)),
        "vecmat out=a": ((n,), (n, n)),
        "stack matvec out=b": ((n, n), (4, n, n)),
    }[case]
    a = values(rng, shapes[0], dtype)
    b = values(rng, shapes[1], dtype)
    a0, b0 = a.copy(), b.copy()
    out = a if case.endswith("out=a") else b
    got = tg.matmul(a, b, out=out)
    assert got is out
    ref, scale, k = reference(a0, b0)
    assert_close(got, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("shift", [(1, 0), (0, 1), (2, 3), (-3, -1)])
@pytest.mark.parametrize("n", [6, 40])
def test_out_partially_overlaps_input(dtype, shift, n):
    """out is a window of the same buffer as a, shifted so that the two partly overlap."""
    rng = np.random.default_rng(n)
    big = values(rng, (n + 3, n + 3), dtype)
    i, j = shift
    a = big[max(-i, 0):max(-i, 0) + n, max(-j, 0):max(-j, 0) + n]
    out = big[max(i, 0):max(i, 0) + n, max(j, 0):max(j, 0) + n]
    b = values(rng, (n, n), dtype)
    a0 = a.copy()
    around = outside_guard(out)   # the rest of a (and big's last rows/columns) must stay
    got = tg.matmul(a, b, out=out)
    assert got is out
    ref, scale, k = reference(a0, b)
    assert_close(got, ref, scale, k, dtype)
    around.check()


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("m,n,k", [(4, 6, 5), (600, 40, 200)])  # one thread; threads split rows
@pytest.mark.parametrize("stack", [False, True])
def test_out_overlapping_itself_matches_numpy(dtype, m, n, k, stack):
    """A writeable out whose rows all alias one row (zero stride): NumPy's answer, the last row."""
    rng = np.random.default_rng(3)
    a, b = values(rng, (m, k), dtype), values(rng, (k, n), dtype)
    if stack:
        a = a.reshape(2, m // 2, k)
    stores = [np.zeros(n, dtype=dtype) for _ in range(2)]
    outs = [np.lib.stride_tricks.as_strided(st, shape=a.shape[:-1] + (n,),
                                            strides=(0,) * (a.ndim - 1) + (dtype.itemsize,),
                                            writeable=True) for st in stores]
    np.matmul(a, b, out=outs[0])
    ref, scale, k = reference(a.reshape(-1, k)[-1:], b)
    assert_close(stores[0], ref[0], scale[0], k, dtype)  # NumPy: the last row wins
    for _ in range(5):  # threads writing one row race: give a wrong order a few chances
        assert tg.matmul(a, b, out=outs[1]) is outs[1]
        assert_close(stores[1], ref[0], scale[0], k, dtype)


def test_out_with_extra_broadcast_dims_matches_numpy():
    """NumPy lets out= have leading dims the inputs broadcast to."""
    rng = np.random.default_rng(0)
    a, b = values(rng, (3, 4), F64), values(rng, (4, 2), F64)
    out, out_np = np.full((5, 3, 2), np.nan), np.full((5, 3, 2), np.nan)
    np.matmul(a, b, out=out_np)
    assert tg.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, out_np, rtol=1e-12)


def test_out_tuple_is_accepted_like_numpy():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    out = np.empty((2, 4))
    assert tg.matmul(a, b, out=(out,)) is out
    np.testing.assert_array_equal(out, np.full((2, 4), 3.0))


@pytest.mark.parametrize("dtype", [F32, F64])
def test_unaligned_read_only_inputs_from_a_bytes_buffer(dtype):
    rng = np.random.default_rng(12)
    a0, b0 = values(rng, (3, 17, 9), dtype), values(rng, (9, 11), dtype)
    a = np.frombuffer(b"\0" + a0.tobytes(), dtype=dtype, offset=1).reshape(a0.shape)
    b = np.frombuffer(b"\0" + b0.tobytes(), dtype=dtype, offset=1).reshape(b0.shape)
    assert not a.flags.aligned and not a.flags.writeable and not b.flags.aligned
    for x, y in [(a, b), (a[1], b), (a[0, 0, :], b), (a, b[:, 0])]:
        check_like_numpy(tg.matmul(x, y), np.matmul(x, y), x, y)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_inputs_with_zero_or_overlapping_strides(dtype):
    """Broadcast views (zero strides) and sliding windows (rows sharing memory) as inputs."""
    rng = np.random.default_rng(13)
    m, n, k = 40, 35, 50
    row, col = values(rng, (1, k), dtype), values(rng, (k, 1), dtype)
    windows = np.lib.stride_tricks.sliding_window_view(values(rng, (m + k,), dtype), k)[:m]
    full_b = values(rng, (k, n), dtype)
    for a, b in [(np.broadcast_to(row, (m, k)), full_b), (windows, np.broadcast_to(col, (k, n))),
                 (windows, full_b), (np.broadcast_to(row, (4, m, k)), full_b),
                 (windows, np.broadcast_to(full_b, (3, k, n)))]:
        check_like_numpy(tg.matmul(a, b), np.matmul(a, b), a, b)


def test_concurrent_calls_from_python_threads():
    """The GIL is released around the kernels: calls from several threads stay correct."""
    import threading

    rng = np.random.default_rng(14)
    jobs = []
    for m, n, k in [(300, 200, 250), (33, 47, 301), (5, 400, 60), (128, 128, 128)]:
        for dtype in (F32, F64):
            a, b = values(rng, (m, k), dtype), values(rng, (k, n), dtype)
            jobs.append((a, b, tg.matmul(a, b)))
    failures = []

    def work(seed):
        order = np.random.default_rng(seed).permutation(len(jobs) * 3) % len(jobs)
        for i in order:
            a, b, expected = jobs[i]
            if tg.matmul(a, b).tobytes() != expected.tobytes():
                failures.append((a.shape, b.shape, a.dtype))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


# ---------------------------------------------------------------- BLAS-like edge semantics

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("layout", ["C", "F", "step2"])
@pytest.mark.parametrize("k", [29, 600])  # 600: several K blocks, the first one with beta = 0
def test_nan_in_out_is_not_read(dtype, layout, k):
    rng = np.random.default_rng(1)
    a, b = values(rng, (37, k), dtype), values(rng, (k, 41), dtype)
    out = relayout(np.full((37, 41), np.nan, dtype=dtype), layout)
    tg.matmul(a, b, out=out)
    assert np.isfinite(out).all()
    ref, scale, k = reference(a, b)
    assert_close(out, ref, scale, k, dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("m,n,k", [(5, 7, 3), (20, 33, 17), (1, 40, 8), (40, 1, 8)])
def test_nan_and_inf_propagate_like_ieee(dtype, m, n, k):
    """NaN/Inf in a or b reach exactly the elements IEEE arithmetic says (no more, no fewer)."""
    rng = np.random.default_rng(m * n * k)
    a, b = values(rng, (m, k), dtype), values(rng, (k, n), dtype)
    a[rng.integers(0, m), rng.integers(0, k)] = np.nan
    a[rng.integers(0, m), rng.integers(0, k)] = np.inf
    b[rng.integers(0, k), rng.integers(0, n)] = -np.inf
    b[rng.integers(0, k), rng.integers(0, n)] = 0.0
    with np.errstate(invalid="ignore"):
        exact = (a.astype(np.float64)[:, :, None] * b.astype(np.float64)[None, :, :]).sum(axis=1)
    got = tg.matmul(a, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(exact))
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(exact))


EMPTY_SHAPES = [
    ((0, 5), (5, 4)), ((3, 5), (5, 0)), ((3, 0), (0, 4)), ((0, 0), (0, 0)), ((0,), (0,)),
    ((0,), (0, 3)), ((3, 0), (0,)), ((0, 3, 4), (4, 2)), ((2, 0, 3, 4), (1, 4, 2)),
    ((2, 3, 0), (2, 0, 5)), ((4, 3, 4), (0, 1, 4, 5)), ((0, 2, 2), (2,)),
]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("sa,sb", EMPTY_SHAPES)
@pytest.mark.parametrize("with_out", [False, True])
def test_empty_cases(dtype, sa, sb, with_out):
    a, b = np.ones(sa, dtype), np.ones(sb, dtype)
    expected = np.matmul(a, b)
    if with_out:
        out = np.full(np.shape(expected), np.nan, dtype=dtype)
        got = tg.matmul(a, b, out=out)
        assert got is out
    else:
        got = tg.matmul(a, b)
        assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected) and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, np.zeros(np.shape(expected)))  # K == 0 gives zeros


def test_same_product_twice_is_bitwise_identical():
    rng = np.random.default_rng(2024)
    a, b = values(rng, (512, 512), F32), values(rng, (512, 512), F32)
    first = tg.matmul(a, b)
    second = tg.matmul(a, b)
    assert first.tobytes() == second.tobytes()
    assert tg.matmul(a, b, out=np.empty_like(first)).tobytes() == first.tobytes()


# ---------------------------------------------------------------- dtypes NumPy computes itself

DEFER_PAIRS = [
    (np.float16, np.float16), (np.int64, np.int64), (np.int32, np.int8), (np.uint8, np.uint8),
    (bool, bool), (np.complex64, np.complex64), (np.complex128, np.float64),
    (np.float32, np.complex64), (object, object), (object, np.float64),
    (np.longdouble, np.float64),
]


@pytest.mark.parametrize("da,db", DEFER_PAIRS)
@pytest.mark.parametrize("sa,sb", [((4, 5), (5, 3)), ((2, 1, 4, 5), (3, 5, 2)), ((5,), (5, 3)),
                                   ((4, 5), (5,)), ((5,), (5,)), ((0, 5), (5, 3))])
def test_other_dtypes_give_numpys_result_exactly(da, db, sa, sb):
    rng = np.random.default_rng(5)
    a, b = values(rng, sa, da), values(rng, sb, db)
    expected = np.matmul(a, b)
    got = tg.matmul(a, b)
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected) and np.result_type(got) == np.result_type(expected)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("da,db", [(np.int64, np.int64), (np.float16, np.float16), (bool, bool),
                                   (np.complex128, np.complex128), (object, object)])
def test_other_dtypes_out_gives_numpys_result(da, db):
    rng = np.random.default_rng(6)
    a, b = values(rng, (3, 4), da), values(rng, (4, 2), db)
    dt = np.matmul(a, b).dtype
    out, out_np = np.zeros((3, 2), dt), np.zeros((3, 2), dt)
    assert tg.matmul(a, b, out=out) is out
    np.matmul(a, b, out=out_np)
    np.testing.assert_array_equal(out, out_np)


def test_lists_and_tuples_as_inputs():
    a = [[1.5, 2.0, -1.0], [0.25, 3.0, 4.0]]
    b = ((1.0, 2.0), (3.0, 4.0), (5.0, 6.5))
    for x, y in [(a, b), (a, np.array(b, np.float32)), (np.array(a, np.float32), b),
                 ([1.0, 2.0, 3.0], b), (a, [1, 2, 3]), ([1, 2], [[1, 2], [3, 4]])]:
        expected = np.matmul(x, y)
        got = tg.matmul(x, y)
        check_like_numpy(got, expected, x, y)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_array_subclasses_and_array_likes_follow_numpy():
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    got, expected = tg.matmul(m, m), np.matmul(m, m)
    assert type(got) is type(expected) is np.matrix
    np.testing.assert_array_equal(got, expected)

    ma = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=[[0, 1], [0, 0]])
    got, expected = tg.matmul(ma, ma), np.matmul(ma, ma)
    assert type(got) is type(expected)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.arange(6.0).reshape(2, 3)

    got, expected = tg.matmul(ArrayLike(), np.ones((3, 2))), np.matmul(ArrayLike(), np.ones((3, 2)))
    assert type(got) is type(expected)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- errors: NumPy's type and message

@pytest.mark.parametrize("dtype", [F32, F64, np.dtype(np.int64)])
@pytest.mark.parametrize("sa,sb", [
    ((), (3, 4)), ((3, 4), ()), ((), ()), ((3,), ()),
    ((3, 4), (5, 6)), ((4,), (5,)), ((3, 4), (5,)), ((5,), (4, 3)), ((2, 3, 4), (3, 4, 5)),
    ((2, 3, 4), (2, 5, 6)), ((2, 3, 4), (4, 4, 2)), ((3, 0), (3, 0)), ((2, 1, 3, 4), (3, 1, 2)),
])
def test_bad_shapes_raise_numpys_error(dtype, sa, sb):
    a, b = np.ones(sa, dtype), np.ones(sb, dtype)
    same_error(lambda: np.matmul(a, b), lambda: tg.matmul(a, b))


@pytest.mark.parametrize("args", [(2.0, [[1.0]]), ([[1.0]], 3), (np.float32(2), np.ones((2, 2), F32)),
                                  ([[1.0], [2.0, 3.0]], [[1.0]]), ("ab", [[1.0]])])
def test_scalars_and_bad_objects_raise_numpys_error(args):
    same_error(lambda: np.matmul(*args), lambda: tg.matmul(*args))


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("out", [
    lambda dt: np.empty((3, 4), dt), lambda dt: np.empty((2, 2), dt), lambda dt: np.empty((2,), dt),
    lambda dt: np.empty((2, 4, 1), dt), lambda dt: np.empty((3, 2, 4), dt)[:, :1, :1],
    lambda dt: np.empty((2, 4), np.int64), lambda dt: np.empty((2, 4), bool),
    lambda dt: np.empty((2, 4), np.uint8),
    lambda dt: np.broadcast_to(np.empty(4, dt), (2, 4)), lambda dt: [[0.0] * 4] * 2, lambda dt: 1.0,
    lambda dt: (np.empty((2, 4), dt), np.empty((2, 4), dt)),
], ids=["shape-3x4", "shape-2x2", "shape-2", "shape-2x4x1", "core-mismatch", "int", "bool", "uint8",
        "read-only", "list", "float", "two-outs"])
def test_bad_out_raises_numpys_error(dtype, out):
    rng = np.random.default_rng(0)
    a, b = values(rng, (2, 3), dtype), values(rng, (3, 4), dtype)
    o1, o2 = out(dtype), out(dtype)
    same_error(lambda: np.matmul(a, b, out=o1), lambda: tg.matmul(a, b, out=o2))


def test_read_only_out_raises_numpys_error_on_every_path():
    for a, b in [(np.ones((2, 3)), np.ones((3, 4))), (np.ones((2, 2, 3)), np.ones((3, 4))),
                 (np.ones(3), np.ones((3, 4)))]:
        out = np.empty(np.matmul(a, b).shape)
        out.flags.writeable = False
        same_error(lambda: np.matmul(a, b, out=out), lambda: tg.matmul(a, b, out=out))


def test_bad_keyword_raises_numpys_error():
    a = np.ones((2, 2))
    same_error(lambda: np.matmul(a, a, where=True), lambda: tg.matmul(a, a, where=True))
    same_error(lambda: np.matmul(a, a, bogus=1), lambda: tg.matmul(a, a, bogus=1))
    with pytest.raises(TypeError):
        tg.matmul(a=np.ones((2, 2)), b=np.ones((2, 2)))


# numpy.matmul's ufunc keywords, each with operands of the dtypes and layouts it matters for.
UFUNC_KEYWORDS = [
    dict(dtype=np.float32), dict(dtype=np.float64), dict(dtype="f4", casting="same_kind"),
    dict(dtype=np.float32, casting="unsafe"), dict(casting="no"), dict(casting="equiv"),
    dict(casting="safe"), dict(order="C"), dict(order="F"), dict(order="A"), dict(order="K"),
    dict(subok=True), dict(subok=False), dict(dtype=np.float64, order="F", casting="safe"),
    dict(axes=[(-2, -1), (-2, -1), (-2, -1)]), dict(axes=[(0, 1), (0, 1), (1, 0)]),
    dict(keepdims=False), dict(signature=(None, None, np.float64)),
]


@pytest.mark.parametrize("kw", UFUNC_KEYWORDS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
@pytest.mark.parametrize("da, db, layout", [
    (F32, F32, "C"), (F64, F64, "F"), (F32, F64, "C"), (np.dtype(np.int64), F32, "F"),
    (np.dtype(np.int32), np.dtype(np.int32), "C"),
])
@pytest.mark.parametrize("with_out", [False, True])
def test_ufunc_keywords_like_numpy(kw, da, db, layout, with_out):
    """Every numpy.matmul keyword is accepted: the same result dtype, shape, memory order and
    values as NumPy, or NumPy's exception."""
    rng = np.random.default_rng(7)
    a = relayout(rng.uniform(-2, 2, (5, 7)).astype(da), layout)
    b = relayout(rng.uniform(-2, 2, (7, 3)).astype(db), layout)
    out_np = out_tg = None
    if with_out:
        out_np, out_tg = np.zeros((5, 3), F32), np.zeros((5, 3), F32)
    try:
        expected = np.matmul(a, b, out=out_np, **kw)
    except Exception:  # noqa: BLE001 -- NumPy rejects it: tilegen must raise the same
        same_error(lambda: np.matmul(a, b, out=out_np, **kw),
                   lambda: tg.matmul(a, b, out=out_tg, **kw))
        return
    got = tg.matmul(a, b, out=out_tg, **kw)
    if with_out:
        assert got is out_tg
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (
        expected.flags.c_contiguous, expected.flags.f_contiguous)
    if expected.dtype.kind == "f" and not {"axes", "signature"} & set(kw):
        check_like_numpy(got, expected, a, b, expected.dtype)
    else:  # computed by NumPy itself
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kw", [dict(dtype=np.float32), dict(order="F"), dict(casting="unsafe"),
                                dict(dtype=np.float64, casting="same_kind", order="A")])
def test_ufunc_keywords_run_on_tilegen(numpy_products_forbidden, kw):
    a, b = np.ones((6, 5), F64), np.ones((5, 4), F64)
    got = tg.matmul(a, b, **kw)
    assert numpy_products_forbidden and got.dtype == np.dtype(kw.get("dtype", F64))
    np.testing.assert_array_equal(got, np.full((6, 4), 5.0))


# ---------------------------------------------------------------- it really runs on tilegen



@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", [
    "C", "F", "neg", "step2", "T", "swapped", "unaligned", "stacked", "broadcast", "vec@mat",
    "mat@vec", "vec@vec", "stack@vec", "stack@mat", "out-F", "out-wider", "out=a", "out-unaligned",
    "out-stacked", "out-stacked-F", "lists",
])
def test_float_products_run_on_tilegen(numpy_products_forbidden, dtype, case):
    rng = np.random.default_rng(11)
    m, n, k = 23, 19, 29
    layout = case if case in LAYOUTS else "C"
    shapes = {"stacked": ((3, m, k), (3, k, n)), "broadcast": ((2, 1, m, k), (1, 5, k, n)),
              "vec@mat": ((k,), (k, n)), "mat@vec": ((m, k), (k,)), "vec@vec": ((k,), (k,)),
              "stack@vec": ((4, m, k), (k,)), "stack@mat": ((2, 3, m, k), (k, n)),
              "out=a": ((k, k), (k, k)), "out-stacked": ((3, m, k), (1, k, n)),
              "out-stacked-F": ((3, m, k), (3, k, n))}
    sa, sb = shapes.get(case, ((m, k), (k, n)))
    a = relayout(values(rng, sa, dtype), layout)
    b = relayout(values(rng, sb, dtype), layout)
    ref, scale, kk = reference(a, b)  # with the real np.matmul, kept aside
    out = None
    if case == "out-F":
        out = np.empty((m, n), dtype, order="F")
    elif case == "out-wider":
        out = np.empty((m, n), np.longdouble if dtype == F64 else F64)
    elif case == "out=a":
        out = a
    elif case == "out-unaligned":
        out = relayout(np.zeros((m, n), dtype), "unaligned")
    elif case == "out-stacked":
        out = np.empty((3, m, n), dtype)
    elif case == "out-stacked-F":
        out = np.empty((3, m, n), dtype, order="F")
    if case == "lists":
        a, b = a.tolist(), b.tolist()
    got = tg.matmul(a, b, out=out)
    if out is not None:
        assert got is out
    result_dtype = F64 if case == "lists" else dtype
    assert type(got) is (np.ndarray if ref.ndim or out is not None else result_dtype.type)
    assert got.dtype == (result_dtype if out is None else out.dtype)
    assert_close(got, ref, scale, kk, result_dtype)
    if case in ("C", "F", "neg", "step2", "T", "out-F", "vec@mat", "mat@vec", "stacked",
                "broadcast", "stack@mat", "out-stacked"):
        assert numpy_products_forbidden == []  # the Cython fast path, no Python helper
    else:
        assert numpy_products_forbidden, "no tilegen GEMM call recorded"


# ---------------------------------------------------------------- the function itself

def test_signature_and_docstring():
    sig = inspect.signature(tg.matmul)
    params = list(sig.parameters.values())
    assert [p.name for p in params] == ["a", "b", "out", "kwargs"]
    assert [p.kind for p in params] == [inspect.Parameter.POSITIONAL_ONLY] * 2 + [
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_KEYWORD]
    assert params[2].default is None
    doc = inspect.getdoc(tg.matmul)
    assert "numpy.matmul" in doc and "out" in doc and "float32" in doc and len(doc) > 300
    assert tg.matmul is _gemm.matmul
    assert numpy_api.matmul_general.__doc__


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [31, 33, 47, 64, 65])
@pytest.mark.parametrize("b_transposed", [False, True])
def test_stacks_one_or_two_column_panels_match_a_float64_reference(dtype, n, b_transposed):
    # A stack of one-KC-block products up to two column panels wide takes the driver's short
    # path (panel_block_): whole panels of B read in place, edge panels and transposed B packed.
    rng = np.random.default_rng(n)
    for m, k in [(1, 7), (13, 64), (29, 255), (64, 64)]:
        a = rng.standard_normal((3, m, k)).astype(dtype)
        b = rng.standard_normal((3, n, k) if b_transposed else (3, k, n)).astype(dtype)
        if b_transposed:
            b = b.transpose(0, 2, 1)
        ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
        tol = 1e-4 if dtype == np.float32 else 1e-11
        np.testing.assert_allclose(tg.matmul(a, b), ref, rtol=tol, atol=tol * np.sqrt(k))
