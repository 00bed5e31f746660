"""bfloat16 products (ml_dtypes.bfloat16): tg.matmul / tg.dot give NumPy's dtypes and, on
integer-valued inputs whose float32 sums are exact, NumPy's exact answers; random inputs are
within a K-scaled bound of a float64 product of the same (rounded) inputs; a bfloat16 result is
the float32 sum rounded once; tg.gemm's alpha/beta/bias/activation/out_dtype; strides, stacks,
threads, every registered kernel; the C API and OpenBLAS's sbgemm ABI."""
import math

import numpy as np
import pytest
from conftest import on_a_worker

import cprog
import tilegen as tg
from tilegen.ops.gemm import _gemm

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)


def ints(rng, shape, lo=-4, hi=5):
    """Integer-valued bfloat16: every product and every float32 sum of up to 2^16 of them is exact."""
    return rng.integers(lo, hi, shape).astype(np.float32).astype(BF16)


def ref(a, b):
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def bound(a, b):
    """A K-scaled bound on float32 summation error, from sum |a||b|."""
    k = a.shape[-1]
    return 2e-7 * math.sqrt(k) * 4 * (np.abs(np.asarray(a, np.float64)) @
                                      np.abs(np.asarray(b, np.float64))) + 1e-30


@pytest.fixture(params=["built-in", "every kernel"])
def kernels(request):
    names = [None] if request.param == "built-in" else _gemm.bf16_kernels()
    yield names
    _gemm.set_bf16_kernel(None)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (1, 7, 5), (5, 7, 1), (13, 33, 37), (29, 100, 65),
                                   (64, 300, 96), (130, 1, 17), (3, 0, 4)])
def test_matmul_exact_on_integers(m, k, n, kernels):
    rng = np.random.default_rng(m * 1000 + k + n)
    a, b = ints(rng, (m, k)), ints(rng, (k, n))
    for name in kernels:
        _gemm.set_bf16_kernel(name)
        got = tg.matmul(a, b)
        want = np.matmul(a, b)
        assert got.dtype == want.dtype == np.float32
        assert np.array_equal(got, ref(a, b)), name


def test_deep_k_exact():
    """K across several packed blocks (and an odd K): still exact on integer inputs."""
    rng = np.random.default_rng(2)
    a, b = ints(rng, (20, 5001), -2, 3), ints(rng, (5001, 40), -2, 3)
    assert np.array_equal(tg.matmul(a, b), ref(a, b))


@pytest.mark.parametrize("m,k,n", [(33, 257, 65), (200, 1024, 130)])
def test_matmul_random_within_bound(m, k, n):
    rng = np.random.default_rng(k)
    a = rng.standard_normal((m, k)).astype(BF16)
    b = rng.standard_normal((k, n)).astype(BF16)
    got = tg.matmul(a, b)
    assert np.all(np.abs(got - ref(a, b)) <= bound(a, b))


def test_dot_gives_bfloat16_rounded_once():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 300)).astype(BF16)
    b = rng.standard_normal((300, 50)).astype(BF16)
    got = tg.dot(a, b)
    assert got.dtype == np.dot(a, b).dtype == BF16
    # The float32 sum (tilegen's own float32 result) rounded once, to nearest even.
    assert np.array_equal(got, tg.matmul(a, b).astype(BF16))
    ia, ib = ints(rng, (9, 70)), ints(rng, (70, 11))
    assert np.array_equal(tg.dot(ia, ib), np.dot(ia, ib))  # exact sums: NumPy's bits
    v = ints(rng, (70,))
    assert tg.dot(v, v).dtype == np.dot(v, v).dtype and float(tg.dot(v, v)) == float(np.dot(v, v))


def test_dtype_rules_follow_numpy():
    rng = np.random.default_rng(4)
    a, b = ints(rng, (3, 4)), ints(rng, (4, 5))
    f = rng.standard_normal((4, 5)).astype(np.float32)
    for x, y in ((a, b), (a, f), (f.T, a.T)):
        assert tg.matmul(x, y).dtype == np.matmul(x, y).dtype
        np.testing.assert_allclose(tg.matmul(x, y), np.matmul(x, y), rtol=1e-6)
    with pytest.raises(TypeError) as ours:
        tg.matmul(a, b, dtype=BF16)
    with pytest.raises(TypeError) as theirs:
        np.matmul(a, b, dtype=BF16)
    assert str(ours.value) == str(theirs.value)
    assert tg.matmul(a, b, dtype=np.float32).dtype == np.float32


def test_strides_views_stacks_and_vectors():
    rng = np.random.default_rng(5)
    base_a, base_b = ints(rng, (30, 50)), ints(rng, (60, 40))
    for a, b in ((base_a[::2, 3:43], base_b[5:45, ::3]), (base_a[::-1, ::-2][:, :20], base_b[:20, ::-1]),
                 (base_b.T[:, :50], base_a.T[:50, :7]), (np.asfortranarray(base_a), base_b[:50])):
        assert np.array_equal(tg.matmul(a, b), ref(a, b))
    stack_a, stack_b = ints(rng, (3, 1, 7, 9)), ints(rng, (4, 9, 5))
    assert np.array_equal(tg.matmul(stack_a, stack_b), np.matmul(stack_a, stack_b))
    v = ints(rng, (9,))
    assert np.array_equal(tg.matmul(v, stack_b), np.matmul(v, stack_b))
    assert np.array_equal(tg.matmul(stack_a, v), np.matmul(stack_a, v))
    out = np.full((3, 4, 7, 5), np.nan, np.float32)
    assert tg.matmul(stack_a, stack_b, out=out) is out
    assert np.array_equal(out, np.matmul(stack_a, stack_b))


def test_gemm_epilogue_and_out_dtype():
    rng = np.random.default_rng(6)
    a, b = ints(rng, (37, 20)), ints(rng, (20, 29))
    c = rng.integers(-5, 5, (37, 29)).astype(np.float32)
    bias = rng.integers(-3, 3, 29).astype(np.float32)
    want = np.maximum(0.5 * ref(a, b) + 2 * c + bias, 0)
    got = tg.gemm(a, b, c, alpha=0.5, beta=2.0, bias=bias, activation="relu")
    assert got.dtype == np.float32 and np.array_equal(got, want)
    got16 = tg.gemm(a, b, c, alpha=0.5, beta=2.0, bias=bias, activation="relu", out_dtype=BF16)
    assert got16.dtype == BF16 and np.array_equal(got16, want.astype(np.float32).astype(BF16))
    t = tg.gemm(a.T.copy(), b.T.copy(), trans_a=True, trans_b=True)
    assert np.array_equal(t, ref(a, b))
    cn = np.full((37, 29), np.nan, np.float32)
    assert np.array_equal(tg.gemm(a, b, cn, beta=0.0), ref(a, b))  # beta 0: c never read
    an = np.full((37, 20), np.nan, np.float32).astype(BF16)
    assert np.array_equal(tg.gemm(an, b, c, alpha=0.0, beta=1.0), c)  # alpha 0: a never read
    with pytest.raises(TypeError, match="out_dtype"):
        tg.gemm(a, b, out_dtype=np.float64)


def test_gelu_and_silu_in_float32():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((11, 30)).astype(BF16)
    b = rng.standard_normal((30, 13)).astype(BF16)
    r = ref(a, b)
    erf = np.vectorize(math.erf)
    for act, f in (("gelu", lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
                   ("silu", lambda x: x / (1 + np.exp(-x)))):
        np.testing.assert_allclose(tg.gemm(a, b, activation=act), f(r), rtol=1e-5, atol=1e-5)


def test_threads_give_the_bits_of_one_thread():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((300, 700)).astype(BF16)
    b = rng.standard_normal((700, 200)).astype(BF16)
    tg.set_num_threads(1)
    one = tg.matmul(a, b)
    tg.set_num_threads(2)
    assert np.array_equal(on_a_worker(lambda: tg.matmul(a, b)), one)


@pytest.mark.parametrize("m", [1, 7, 16, 29, 40])
def test_few_rows_on_two_threads(m):
    """Few rows take the kernel that pads them least and split columns across threads, each
    thread packing its own panels of B (odd K, N not a multiple of any NR)."""
    rng = np.random.default_rng(m)
    a, b = ints(rng, (m, 1501), -2, 3), ints(rng, (1501, 1500), -2, 3)
    tg.set_num_threads(2)
    got = on_a_worker(lambda: tg.matmul(a, b))
    assert np.array_equal(got, ref(a, b))
    bt = np.asarray(b.T.copy().T)  # column-major B: the strided packing path
    assert not bt.flags.c_contiguous and np.array_equal(on_a_worker(lambda: tg.matmul(a, bt)), got)


@pytest.mark.parametrize("k,n", [(1, 1), (2, 3), (7, 5), (9, 65), (17, 31), (301, 257),
                                 (1024, 130)])
def test_one_row_reads_b_in_place(k, n):
    """m == 1 takes the bfloat16 GEMV (B read in place): row-major and column-major B, odd K,
    N off the vector width, strided x, B and C, B's rows whole lines apart from a misaligned
    start (the kernel's head columns), alpha/beta (beta 0 never reads C), a bfloat16 C with
    bias and activation; exact on integer inputs."""
    rng = np.random.default_rng(k * 31 + n)
    x, b = ints(rng, (1, k)), ints(rng, (k, n))
    want = ref(x, b)
    assert np.array_equal(tg.matmul(x, b), want)
    assert np.array_equal(tg.matmul(x[0], b), want[0])
    bt = np.asarray(b.T.copy().T)  # column-major B
    assert bt.flags.f_contiguous and np.array_equal(tg.matmul(x, bt), want)
    xs = np.asfortranarray(ints(rng, (3, k)))[1:2]  # x along a strided row of A
    bs = ints(rng, (2 * k, n + 7))[::2, 3:3 + n]  # strided rows of B
    assert np.array_equal(tg.matmul(xs, bs), ref(xs, bs))
    bl = ints(rng, (k, (n + 5 + 31) // 32 * 32))[:, 5:5 + n]  # rows whole lines apart
    assert bl.strides[0] % 64 == 0 and np.array_equal(tg.matmul(x, bl), ref(x, bl))
    c = rng.integers(-5, 5, (1, n)).astype(np.float32)
    assert np.array_equal(tg.gemm(x, b, c, alpha=0.5, beta=2.0), 0.5 * want + 2 * c)
    assert np.array_equal(tg.gemm(x, b, np.full((1, n), np.nan, np.float32), beta=0.0), want)
    out = np.full((1, 2 * n), np.nan, np.float32)
    assert tg.matmul(x, b, out=out[:, ::2]) is not None and np.array_equal(out[:, ::2], want)
    assert np.isnan(out[:, 1::2]).all()
    bias = rng.integers(-3, 3, n).astype(np.float32)
    got16 = tg.gemm(x, b, c, alpha=0.5, beta=2.0, bias=bias, activation="relu", out_dtype=BF16)
    assert np.array_equal(got16, np.maximum(0.5 * want + 2 * c + bias, 0).astype(np.float32)
                          .astype(BF16))


@pytest.mark.parametrize("start", [0, 5])
def test_one_row_on_two_threads_gives_the_bits_of_one(start):
    """m == 1 splits the columns across threads: random inputs (the kernel's paths round
    differently), B's rows whole lines apart from an aligned and a misaligned start, odd K,
    N not a multiple of the vector width."""
    rng = np.random.default_rng(9 + start)
    k, n = 2049, 3001
    x = rng.standard_normal((1, k)).astype(BF16)
    b = rng.standard_normal((k, 3072)).astype(BF16)[:, start:start + n]
    tg.set_num_threads(1)
    one = tg.matmul(x, b)
    assert np.all(np.abs(one - ref(x, b)) <= bound(x, b))
    tg.set_num_threads(2)
    assert np.array_equal(on_a_worker(lambda: tg.matmul(x, b)), one)
    bt = np.asfortranarray(b)  # column-major B: the dot form, MR-column blocks per thread
    tg.set_num_threads(1)
    one_t = tg.matmul(x, bt)
    assert np.all(np.abs(one_t - ref(x, b)) <= bound(x, b))
    tg.set_num_threads(2)
    assert np.array_equal(on_a_worker(lambda: tg.matmul(x, bt)), one_t)


def test_kernel_is_reported():
    info = tg.runtime_info()["kernels"]["gemm"]["bf16"]
    assert info["kernel"] == _gemm.bf16_kernel() and info["kernel"].startswith("tg_bf16_gemm_")
    with pytest.raises(ValueError, match="not a bfloat16 GEMM kernel"):
        _gemm.set_bf16_kernel("tg_bf16_gemm_ukernel_9x9c2__nope")


C_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tilegen.h"
#include "tilegen_cblas.h"

static uint16_t bf(float x) { uint32_t b; memcpy(&b, &x, 4); return (uint16_t) (b >> 16); }
static int errors = 0;
void cblas_xerbla(int p, const char* rout, const char* form, ...) {
  printf("cblas_xerbla %d %s\n", p, rout); errors++;
}
void xerbla_(const char* name, const int* info, size_t len) {
  printf("xerbla %.*s %d\n", (int) len, name, *info); errors++;
}

int main(void) {
  enum { M = 5, N = 7, K = 9 };
  uint16_t a[M * K], b[K * N];
  float af[M * K], bfl[K * N], c[M * N], want[M * N];
  for (int i = 0; i < M * K; i++) { af[i] = (float) (i % 7 - 3); a[i] = bf(af[i]); }
  for (int i = 0; i < K * N; i++) { bfl[i] = (float) (i % 5 - 2); b[i] = bf(bfl[i]); }
  /* Row-major C = A B (A M x K, B K x N) through CBLAS. */
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int p = 0; p < K; p++) s += (double) af[i * K + p] * bfl[p * N + j];
      want[i * N + j] = (float) s;
    }
  for (int i = 0; i < M * N; i++) c[i] = NAN;
  cblas_sbgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
  for (int i = 0; i < M * N; i++) if (c[i] != want[i]) { printf("row-major %d\n", i); return 1; }
  /* The same product column-major through the Fortran ABI: C^T = B^T A^T. */
  for (int i = 0; i < M * N; i++) c[i] = NAN;
  const int m = N, n = M, k = K, ldb = K, lda = N, ldc = N;
  const float one = 1, zero = 0;
  sbgemm_("N", "N", &m, &n, &k, &one, b, &lda, a, &ldb, &zero, c, &ldc);
  for (int i = 0; i < M * N; i++) if (c[i] != want[i]) { printf("fortran %d\n", i); return 2; }
  /* Errors: reported with the reference numbers, C untouched. */
  c[0] = 42;
  const int bad_lda = 0;
  sbgemm_("N", "N", &m, &n, &k, &one, b, &bad_lda, a, &ldb, &zero, c, &ldc);
  cblas_sbgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
  if (c[0] != 42 || errors != 2) return 3;
  /* The native API: bad parameters give -p and write nothing. */
  if (tilegen_gemm_bf16(-1, N, K, 1, a, K, 1, b, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                        TILEGEN_ACT_NONE) != -1) return 4;
  if (tilegen_gemm_bf16(M, N, K, 1, NULL, K, 1, b, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                        TILEGEN_ACT_NONE) != -5) return 5;
  if (tilegen_gemm_bf16(M, N, K, 1, a, K, 1, b, N, 1, 0, c, 7, N, 1, NULL, 0,
                        TILEGEN_ACT_NONE) != -13) return 6;
  if (c[0] != 42) return 7;
  /* bfloat16 C, rounded once; the conversions round to nearest even. */
  uint16_t cb[M * N];
  if (tilegen_gemm_bf16(M, N, K, 1, a, K, 1, b, N, 1, 0, cb, TILEGEN_BF16, N, 1, NULL, 0,
                        TILEGEN_ACT_NONE) != 0) return 8;
  float back[M * N];
  cblas_sbf16tos(M * N, cb, 1, back, 1);
  for (int i = 0; i < M * N; i++) if (back[i] != want[i]) return 9;  /* small integers: exact */
  const float ties[3] = {1.00390625f, 1.01171875f, -1.00390625f};  /* halfway between bf16s */
  uint16_t r[3];
  cblas_sbstobf16(3, ties, 1, r, 1);
  if (r[0] != 0x3F80 || r[1] != 0x3F82 || r[2] != 0xBF80) { printf("%x %x %x\n", r[0], r[1], r[2]); return 10; }
  puts("OK");
  return 0;
}
"""


def test_c_api_and_openblas_sbgemm(tmp_path):
    src = tmp_path / "bf16_client.c"
    src.write_text(C_PROGRAM)
    exe = tmp_path / "bf16_client"
    r = cprog.run([cprog.cc(), "-std=gnu11", f"-I{tg.get_include()}", str(src), "-o", str(exe),
                   *cprog.tilegen_link_args(), "-lm"])
    assert r.returncode == 0, r.stderr
    r = cprog.run([str(exe)])
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), (r.returncode, r.stdout, r.stderr)
    # A program's own cblas_xerbla gets the reference CBLAS's numbers: a row-major call is the
    # transposed Fortran problem, so M (argument 4) is reported as 5, as cblas_sgemm does.
    assert "xerbla SBGEMM 8" in r.stdout and "cblas_xerbla 5 cblas_sbgemm" in r.stdout


@pytest.mark.parametrize("k, n", [(4200, 1100), (700, 5000)])
def test_column_blocks_at_and_below_the_block_depth(k, n):
    """bfloat16 products whose columns span several packed B blocks, at the full block depth
    (k beyond KC) and below it (more columns a block): small integers, so every float32 sum
    is exact and the result equals the float64 product."""
    rng = np.random.default_rng(k + n)
    a = rng.integers(-4, 5, (61, k)).astype(BF16)
    b = rng.integers(-4, 5, (k, n)).astype(BF16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(tg.gemm(a, b), want)


@pytest.mark.parametrize("m", [16, 61])
def test_row_major_b_packing_every_edge(m, kernels):
    """Row-major B is packed by the ISA's own routine where it has one (the pairs of whole
    panels, one vector of columns of two rows at a time, templates/gemmbf16/pack.c.j2) and by
    the driver's loop for the rest: column counts around its vectors and panels, depths with an
    odd last row, B a view into wider rows at an odd column offset, streamed (16 rows) and
    blocked (61 rows) products, on one thread and (where the product is large enough to be
    split) two. Exact on integer values."""
    rng = np.random.default_rng(m)
    saved = tg.get_num_threads()
    try:
        for k in (2, 7, 515):
            wide = ints(rng, (k, 300))
            a = ints(rng, (m, k))
            for n in (15, 16, 17, 31, 32, 33, 64, 65, 97, 160, 191, 255):
                b = wide[:, 3:3 + n]
                want = ref(a, b)
                for name in kernels:
                    _gemm.set_bf16_kernel(name)
                    tg.set_num_threads(1)
                    assert np.array_equal(tg.matmul(a, b), want), (name, k, n)
                    if 2 * m * k * n >= 4e6:  # threaded (gemm_bf16.c: TG_BF16_PARALLEL_MIN_FLOPS)
                        tg.set_num_threads(2)
                        got = on_a_worker(lambda: tg.matmul(a, b))
                        assert np.array_equal(got, want), (name, k, n, "2 threads")
    finally:
        tg.set_num_threads(saved)
