"""GEMM paths and values the NumPy-compatibility suites do not reach, each against an
independent reference (float64 NumPy, or a plain double loop in C):

- tilegen_?gemm_strided / _batched from C: negative strides, alpha/beta on stacks, error codes
  (tests/c/gemm_native_api.c);
- depths past 1000 (several KC blocks, deepened KC for narrow products, long GEMV rows);
- beta = -0.0 (C not read, as for +0.0), alpha = -0.0 (A and B not read), NaN and Inf as
  alpha or beta;
- NaN and Inf in A and B through packed kernels, packed B and threads: exactly the elements
  IEEE arithmetic says become NaN/Inf do;
- the fallback when no workspace memory can be had (tilegen's test hook).
"""
import numpy as np
import pytest

import cprog
import tilegen as tg
from conftest import on_a_worker
from tilegen.core import _core
from tilegen.ops.gemm import _gemm

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
TOL = {F32: 1e-5, F64: 1e-12}


@pytest.fixture
def threads():
    try:
        yield tg.set_num_threads
    finally:
        tg.set_num_threads(None)


def reference(a, b, c=None, alpha=1.0, beta=0.0):
    """BLAS semantics in float64: alpha = 0 or K = 0 leaves beta*C; beta = 0 does not read C.
    Returns (result, error scale)."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    m, n = a64.shape[0], b64.shape[1]
    with np.errstate(invalid="ignore", over="ignore"):
        if alpha != 0 and a64.shape[1] > 0:
            out, scale = alpha * (a64 @ b64), abs(alpha) * (np.abs(a64) @ np.abs(b64))
        else:
            out, scale = np.zeros((m, n)), np.zeros((m, n))
        if beta != 0:
            c64 = np.asarray(c, np.float64)
            out, scale = out + beta * c64, scale + np.abs(beta * c64)
    return out, scale


def assert_close(got, want, scale, dtype, k):
    tol = TOL[np.dtype(dtype)] * np.sqrt(max(k, 1))
    bad = ~(np.abs(got.astype(np.float64) - want) <= tol * scale + 1e-300)
    assert not bad.any(), (f"{int(bad.sum())} of {bad.size} elements off; first at "
                           f"{tuple(np.argwhere(bad)[0])}")


def assert_same_specials(got, want):
    """The same elements NaN, +Inf and -Inf."""
    for name, f in (("NaN", np.isnan), ("+Inf", np.isposinf), ("-Inf", np.isneginf)):
        diff = f(got) != f(want)
        assert not diff.any(), (f"{int(diff.sum())} elements differ in being {name}; first at "
                                f"{tuple(np.argwhere(diff)[0])}: got {got[tuple(np.argwhere(diff)[0])]}")


# ------------------------------------------------------------------------------ the C API

def test_strided_and_batched_from_c(tmp_path):
    exe = cprog.build("gemm_native_api.c", tmp_path / "gemm_native_api", link_tilegen=True)
    r = cprog.run([exe], timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr[-4000:]}"
    words = r.stdout.split()
    cases, fails, workers = int(words[1]), int(words[3]), int(words[5])
    assert fails == 0 and cases > 200, r.stdout
    assert workers > 0, "no batched or strided product ran on a worker thread"


# ------------------------------------------------------------------------------ K > 1000

DEEP = [(37, 1500, 45), (200, 2100, 96), (8, 3000, 700), (1, 3000, 200), (300, 3000, 1),
        (64, 1200, 20)]   # the last: few columns, KC deepened


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("m,k,n", DEEP)
@pytest.mark.parametrize("order", ["C", "F"])
def test_deep_products(dtype, m, k, n, order):
    rng = np.random.default_rng(m + k + n)
    a = np.asarray(rng.standard_normal((m, k)), dtype, order=order)
    b = np.asarray(rng.standard_normal((k, n)), dtype, order=order)
    c = rng.standard_normal((m, n)).astype(dtype)
    want, scale = reference(a, b, c, -0.75, 0.5)
    assert_close(tg.gemm(a, b, c, alpha=-0.75, beta=0.5), want, scale, dtype, k)
    want, scale = reference(a, b)
    assert_close(tg.matmul(a, b), want, scale, dtype, k)
    # the epilogue after the last of the KC blocks, not after the first
    bias = rng.standard_normal(n).astype(dtype)
    want, scale = reference(a, b, c, 2.0, -1.0)
    got = tg.gemm(a, b, c, alpha=2.0, beta=-1.0, bias=bias, activation="relu")
    assert_close(got, np.maximum(want + bias, 0), scale + np.abs(bias), dtype, k)


# ------------------------------------------------------------------------------ special alpha, beta

SHAPES = [(5, 7, 3), (70, 45, 90), (300, 257, 310), (1, 300, 700), (600, 400, 1)]


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_negative_zero_alpha_and_beta(dtype, m, k, n):
    """-0.0 == 0: beta = -0.0 does not read C (NaN there vanishes), alpha = -0.0 does not read
    A or B (NaN there vanishes)."""
    rng = np.random.default_rng(k)
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    c_nan = np.full((m, n), np.nan, dtype)
    want, scale = reference(a, b, alpha=1.5)
    got = tg.gemm(a, b, c_nan, alpha=1.5, beta=-0.0)
    assert np.isfinite(got).all()
    assert_close(got, want, scale, dtype, k)
    c = rng.standard_normal((m, n)).astype(dtype)
    nan_a, nan_b = np.full_like(a, np.nan), np.full_like(b, np.inf)
    got = tg.gemm(nan_a, nan_b, c, alpha=-0.0, beta=2.0)
    assert np.array_equal(got, (2.0 * c.astype(np.float64)).astype(dtype))
    got = tg.gemm(nan_a, nan_b, c_nan, alpha=-0.0, beta=-0.0)
    assert not got.any() and np.isfinite(got).all()


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_nan_and_inf_alpha_beta(dtype, m, k, n, threads):
    """NaN as alpha or beta makes every element NaN; Inf as beta gives Inf of beta*C's sign
    (C has no zeros); Inf as alpha leaves no element finite (NaN where partial sums of both
    signs meet: the order of the sum decides, in any BLAS)."""
    threads(2)
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    c = (rng.uniform(0.5, 1.0, (m, n)) * rng.choice([-1, 1], (m, n))).astype(dtype)
    assert np.isnan(tg.gemm(a, b, c, alpha=np.nan, beta=0.0)).all()
    assert np.isnan(tg.gemm(a, b, c, alpha=1.0, beta=np.nan)).all()
    assert np.isnan(tg.gemm(a, b, c, alpha=np.nan, beta=1.0)).all()
    for beta in (np.inf, -np.inf):
        got = tg.gemm(a, b, c, alpha=1.0, beta=beta)
        assert np.array_equal(got, np.where(beta * c.astype(np.float64) > 0, np.inf, -np.inf))
    for alpha in (np.inf, -np.inf):
        assert not np.isfinite(tg.gemm(a, b, c, alpha=alpha, beta=0.5)).any()
        assert not np.isfinite(tg.gemm(a, b, alpha=alpha)).any()
    # k = 0 or alpha = 0: C = beta*C, alpha never applied (the reference BLAS's rule)
    empty_a, empty_b = np.ones((m, 0), dtype), np.ones((0, n), dtype)
    assert np.array_equal(tg.gemm(empty_a, empty_b, c, alpha=np.nan, beta=2.0),
                          (2.0 * c.astype(np.float64)).astype(dtype))


# ------------------------------------------------------------------------------ NaN/Inf inputs

def ieee_specials(a, b):
    """Which elements of a @ b IEEE arithmetic makes NaN, +Inf, -Inf (any summation order):
    a NaN term, or +Inf and -Inf terms, give NaN; otherwise an infinite term gives its Inf.
    Returned as a float64 array: NaN / +-Inf there, 0 elsewhere."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    fa, fb = np.isfinite(a), np.isfinite(b)
    one = lambda x: x.astype(np.float64)  # noqa: E731
    nan = (one(np.isnan(a)) @ one(~np.isnan(b)) + one(~np.isnan(a)) @ one(np.isnan(b))
           + one(np.isinf(a)) @ one(b == 0) + one(a == 0) @ one(np.isinf(b))
           + one(np.isnan(a)) @ one(np.isnan(b)))
    pos = (one(a == np.inf) @ one(b > 0) + one(a == -np.inf) @ one(b < 0)
           + one(fa & (a > 0)) @ one(b == np.inf) + one(fa & (a < 0)) @ one(b == -np.inf))
    neg = (one(a == np.inf) @ one(b < 0) + one(a == -np.inf) @ one(b > 0)
           + one(fa & (a > 0)) @ one(b == -np.inf) + one(fa & (a < 0)) @ one(b == np.inf))
    del fb
    out = np.zeros(nan.shape)
    out[pos > 0] = np.inf
    out[neg > 0] = -np.inf
    out[(nan > 0) | ((pos > 0) & (neg > 0))] = np.nan
    return out


LAYOUTS = {  # how A and B are stored: which kernels and packing they meet
    "rows kernels, B packed": ("C", "C"),
    "packed kernels (A column-major)": ("F", "C"),
    "B transposed (packed from columns)": ("C", "F"),
}


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("m,k,n", [(300, 257, 310), (129, 600, 257), (1, 700, 1024),
                                   (1024, 700, 1)])
def test_nan_and_inf_inputs_threaded(dtype, layout, m, k, n, threads):
    rng = np.random.default_rng(m * 7 + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    for x in (a, b):   # a few of each special, and zeros to meet Inf
        flat = x.reshape(-1)
        for value in (np.nan, np.inf, -np.inf, 0.0):
            flat[rng.integers(0, flat.size, 3)] = value
    oa, ob = LAYOUTS[layout]
    a, b = np.asarray(a, order=oa), np.asarray(b, order=ob)
    threads(2)
    got = on_a_worker(lambda: tg.matmul(a, b))
    specials = ieee_specials(a, b)
    assert_same_specials(got, specials)
    finite = specials == 0
    want, scale = reference(np.where(np.isfinite(a), a, 0), np.where(np.isfinite(b), b, 0))
    assert_close(np.where(finite, got, 0), np.where(finite, want, 0), scale, dtype, k)


# ------------------------------------------------------------------------------ no memory

@pytest.fixture
def no_workspace():
    _core._workspace_fail(True)
    try:
        yield
    finally:
        _core._workspace_fail(False)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("case", ["rows", "packed", "strided C", "x @ A", "strided x",
                                  "stack", "bias relu", "alpha beta"])
@pytest.mark.parametrize("nthreads", [1, 2])
def test_without_workspace_memory(dtype, case, nthreads, no_workspace, threads):
    """Every request for packing memory fails (as when memory is exhausted): each path falls
    back to computing unpacked, and gets the right answer."""
    threads(nthreads)
    rng = np.random.default_rng(len(case))
    shapes = {"x @ A": ((1, 700), (700, 1024)), "strided x": ((1024, 700), (1400,)),
              "stack": ((4, 150, 130), (4, 130, 170))}
    sa, sb = shapes.get(case, ((300, 257), (257, 310)))
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    if case == "packed":
        a = np.asfortranarray(a)
    if case == "strided x":
        b = b[::2]
    if case == "strided C":
        out = np.full((sa[0], 2 * sb[1]), np.nan, dtype)[:, ::2]
        got = tg.matmul(a, b, out=out)
    elif case == "alpha beta":
        c = rng.standard_normal((sa[0], sb[1])).astype(dtype)
        got = tg.gemm(a, b, c, alpha=-0.5, beta=2.0)
        want, scale = reference(a, b, c, -0.5, 2.0)
        assert_close(got, want, scale, dtype, sa[-1])
        return
    elif case == "bias relu":
        bias = rng.standard_normal(sb[1]).astype(dtype)
        got = tg.gemm(a, b, bias=bias, activation="relu")
        want, scale = reference(a, b)
        assert_close(got, np.maximum(want + bias, 0), scale + np.abs(bias), dtype, sa[-1])
        return
    else:
        got = tg.matmul(a, b)
    if case == "stack":
        for i in range(sa[0]):
            want, scale = reference(a[i], b[i])
            assert_close(got[i], want, scale, dtype, sa[-1])
        return
    b2 = b if b.ndim == 2 else b[:, None]
    want, scale = reference(a, b2)
    assert_close(got.reshape(want.shape), want, scale, dtype, sa[-1])


# ------------------------------------------------------------------- y = x B (axpy-form GEMV)

@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("k", [1, 7, 8, 9, 19, 64])
@pytest.mark.parametrize("n", [2, 15, 16, 17, 63, 64, 65, 129, 1000])
def test_row_vector_times_matrix(dtype, k, n):
    """x @ B with B's rows contiguous (the axpy-form GEMV): every column tail and row
    remainder; B's rows padded with NaN past n (an over-read reaches y as NaN); x strided;
    alpha, beta (C not read at beta = 0) and the epilogue; a strided output (another path)."""
    rng = np.random.default_rng(k * 1000 + n)
    wide = np.full((k, n + 5), np.nan, dtype)
    wide[:, :n] = rng.uniform(-1, 1, (k, n))
    b = wide[:, :n]
    x2 = rng.uniform(-1, 1, 2 * k).astype(dtype)
    for x in (x2[:k], x2[::2]):
        want, scale = reference(x[None, :], b)
        assert_close(tg.matmul(x, b), want[0], scale[0], dtype, k)
    x = x2[::2]
    c = np.full((1, n), np.nan, dtype)
    want, scale = reference(x[None, :], b, alpha=-1.5)
    assert_close(tg.gemm(x[None, :], b, c, alpha=-1.5), want, scale, dtype, k)
    c = rng.uniform(-1, 1, (1, n)).astype(dtype)
    bias = rng.uniform(-1, 1, n).astype(dtype)
    want, scale = reference(x[None, :], b, c, alpha=0.5, beta=-2.0)
    want = np.maximum(want + bias, 0)
    got = tg.gemm(x[None, :], b, c, alpha=0.5, beta=-2.0, bias=bias, activation="relu")
    assert_close(got, want, scale + np.abs(bias), dtype, k)
    out = np.full((1, 2 * n), np.nan, dtype)
    want, scale = reference(x[None, :], b)
    tg.matmul(x[None, :], b, out=out[:, ::2])
    assert_close(out[:, ::2], want, scale, dtype, k)
    assert np.isnan(out[:, 1::2]).all()


@pytest.mark.parametrize("dtype", [F32, F64])
def test_row_vector_times_matrix_threaded(dtype, threads):
    """x @ B past the GEMV thread threshold: the columns split across threads (a worker proven
    to take part), rows whole lines apart starting 16 (f32) or 32 (f64) bytes into a line (the
    kernel's head columns, then line-aligned ranges), against float64."""
    rng = np.random.default_rng(3)
    k, n, rs = 700, 1203, 1216  # 1216 elements: a whole number of 64-byte lines either dtype
    store = np.empty(k * rs + 32, dtype)
    lead = (-store.ctypes.data % 64) // store.itemsize + 4  # 4 elements past a line
    b = store[lead:lead + k * rs].reshape(k, rs)[:, :n]
    assert b.ctypes.data % 64 == 4 * store.itemsize
    b[...] = rng.uniform(-1, 1, (k, n))
    x = rng.uniform(-1, 1, k).astype(dtype)
    threads(2)
    got = on_a_worker(lambda: tg.matmul(x, b))
    want, scale = reference(x[None, :], b)
    assert_close(got, want[0], scale[0], dtype, k)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("k", [129, 257, 1001])
def test_row_vector_times_big_matrix_in_two_halves(dtype, k, threads):
    """x @ B past the thread threshold sums the two halves of B's rows apart (the second into a
    scratch row): odd k (the first half rounded to the kernel's rows), alpha and beta (C not
    read at beta = 0), the bias epilogue after the sum, against float64; the same bits on one
    and two threads, a worker proven to take part."""
    rng = np.random.default_rng(k)
    n = 1000 if dtype == F64 else 1990  # B over 1 MB either dtype
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    x = rng.uniform(-1, 1, k).astype(dtype)
    bias = rng.uniform(-1, 1, n).astype(dtype)
    c0 = rng.uniform(-1, 1, (1, n)).astype(dtype)
    results = []
    for nthreads in (1, 2):
        threads(nthreads)
        run = (lambda f: on_a_worker(f)) if nthreads == 2 else (lambda f: f())
        got = run(lambda: tg.matmul(x, b))
        want, scale = reference(x[None, :], b)
        assert_close(got, want[0], scale[0], dtype, k)
        c = np.full((1, n), np.nan, dtype)
        got_c = tg.gemm(x[None, :], b, c, alpha=-1.5)
        want, scale = reference(x[None, :], b, alpha=-1.5)
        assert_close(got_c, want, scale, dtype, k)
        c = c0.copy()
        got_e = tg.gemm(x[None, :], b, c, alpha=0.5, beta=2.0, bias=bias, activation="relu")
        want, scale = reference(x[None, :], b, c0, alpha=0.5, beta=2.0)
        assert_close(got_e, np.maximum(want + bias, 0), scale + np.abs(bias), dtype, k)
        results.append((got.copy(), got_c.copy(), got_e.copy()))
    for one, two in zip(*results):
        assert np.array_equal(one, two)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_threaded_stack_of_several_dims(dtype, threads):
    """A (3, 7) stack of small products split across threads: the second thread starts inside
    a row of the stack (its offsets carried across dimensions), B broadcast along the first
    dimension and C written to a transposed stack; against float64, a worker proven to run."""
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (3, 7, 64, 48)).astype(dtype)
    b = rng.uniform(-1, 1, (7, 48, 40)).astype(dtype)
    out = np.full((7, 3, 64, 40), np.nan, dtype).transpose(1, 0, 2, 3)
    threads(2)
    got = on_a_worker(lambda: tg.matmul(a, b, out=out))
    assert got is out
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    scale = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    assert_close(got, want, scale, dtype, 48)


# ------------------------------------------------------------------------ streamed operands

def _both_dtypes(setter):
    """A fixture's body: sets a tuned count for float32 and float64, restores the built-in."""
    try:
        yield lambda value: setter(np.float32, value) or setter(np.float64, value)
    finally:
        setter(np.float32, 0)
        setter(np.float64, 0)


@pytest.fixture
def stream_rows():
    yield from _both_dtypes(_gemm.set_gemm_stream_rows)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("rows", [1, 3, 8, 64])
@pytest.mark.parametrize("m,k,n", [(1500, 700, 5), (1500, 700, 16), (1500, 700, 40),
                                   (2, 900, 700), (17, 900, 700)])
def test_streamed_operands(dtype, rows, m, k, n, stream_rows, threads):
    """A beyond L2 under few columns of C (row panels at most `rows` tall) and few rows of C
    times a B beyond L2/2 (B swept `rows` rows at a time), on 1 and 2 threads, against
    float64, alpha/beta included."""
    stream_rows(rows)
    assert _gemm.gemm_config(dtype)["stream_rows"] == rows
    rng = np.random.default_rng(m + k + n + rows)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    c = rng.uniform(-1, 1, (m, n)).astype(dtype)
    want, scale = reference(a, b, c, alpha=-0.5, beta=2.0)
    for nt in (1, 2):
        threads(nt)
        assert_close(tg.gemm(a, b, c, alpha=-0.5, beta=2.0), want, scale, dtype, k)


# --------------------------------------------------- few rows of C times a B beyond L2

def _act_ref(x, act):
    if act == "relu":
        return np.maximum(x, 0)
    if act == "gelu":
        from math import erf
        return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))
    return x


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("m", [2, 5, 16, 17, 48, 49, 131])
@pytest.mark.parametrize("case", ["plain", "epilogue", "strided-c", "unaligned-b", "col-major-a"])
def test_few_rows_times_big_b(dtype, m, case, threads):
    """B (900 x 700, 2.5 MB in float32) beyond any L2's half, under 2 to 131 rows of C: to 48
    rows the path that copies one column panel of B at a time for all the row panels (KC not
    dividing 900, an edge panel of 700 % NR columns), beyond it the usual one; with alpha/beta,
    a fused bias + activation, C with a column stride, B not starting on a cache line, and
    column-major A, on 1 and 2 threads, against float64; a strided C's gaps stay untouched."""
    k, n = 900, 700
    rng = np.random.default_rng(m * 7 + len(case))
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n + 1)).astype(dtype)
    b = b[:, 1:] if case == "unaligned-b" else b[:, :n]
    if case == "col-major-a":
        a = np.asfortranarray(a)
    c = rng.uniform(-1, 1, (m, n)).astype(dtype)
    want, scale = reference(a, b, c, alpha=-0.5, beta=2.0)
    for nt in (1, 2):
        threads(nt)
        if case == "epilogue":
            bias = rng.uniform(-1, 1, n).astype(dtype)
            for act in ("relu", "gelu"):
                got = tg.gemm(a, b, c, alpha=-0.5, beta=2.0, bias=bias, activation=act)
                assert_close(got, _act_ref(want + bias, act), scale + np.abs(bias), dtype, k)
        elif case == "strided-c":
            big = np.full((m, 2 * n), 7.0, dtype)
            view = big[:, ::2]
            view[...] = c
            got = tg.gemm(a, b, view, alpha=-0.5, beta=2.0, out=view)
            assert got is view
            assert_close(view, want, scale, dtype, k)
            assert (big[:, 1::2] == 7.0).all(), "a gap of the strided C was written"
        else:
            assert_close(tg.gemm(a, b, c, alpha=-0.5, beta=2.0), want, scale, dtype, k)


@pytest.fixture
def b_inner_rows():
    yield from _both_dtypes(_gemm.set_gemm_b_inner_rows)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("cap", [1, 100, _gemm.B_INNER_ROWS_MAX])
@pytest.mark.parametrize("m", [33, 100, 101, _gemm.B_INNER_ROWS_MAX])
def test_few_rows_limit_set_by_tune(dtype, cap, m, b_inner_rows, threads):
    """The row limit of that path as `tilegen tune` may set it (1: never, up to the most row
    panels the driver holds): rows on both sides of it, edge row panels, alpha/beta and a fused
    bias + relu, on 1 and 2 threads, against float64."""
    b_inner_rows(cap)
    assert _gemm.gemm_config(dtype)["b_inner_rows"] == cap
    k, n = 900, 700
    rng = np.random.default_rng(m + cap)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    c = rng.uniform(-1, 1, (m, n)).astype(dtype)
    bias = rng.uniform(-1, 1, n).astype(dtype)
    want, scale = reference(a, b, c, alpha=1.5, beta=-1.0)
    for nt in (1, 2):
        threads(nt)
        got = tg.gemm(a, b, c, alpha=1.5, beta=-1.0, bias=bias, activation="relu")
        assert_close(got, np.maximum(want + bias, 0), scale + np.abs(bias), dtype, k)


def test_null_pointers_from_c(tmp_path):
    """tilegen_?gemm_ex/_strided/_batched: a NULL array the call would touch is -p (its
    parameter), never a crash, and nothing is written; arrays never touched may be NULL
    (tests/ops/gemm/c/gemm_null_pointers.c)."""
    exe = cprog.build("gemm_null_pointers.c", tmp_path / "gemm_null_pointers", link_tilegen=True)
    r = cprog.run([exe], timeout=60)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr[-4000:]}"
    checks, fails = int(r.stdout.split()[1]), int(r.stdout.split()[3])
    assert fails == 0 and checks == 2 * 25, r.stdout
