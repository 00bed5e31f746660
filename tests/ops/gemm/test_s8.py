"""int8 products (int8 or uint8 A, int8 B): tg.matmul / tg.dot give NumPy's dtypes and NumPy's exact
answers -- int8 (wrapping) by default, dtype=int32/int16/int64 as asked -- against an int64
reference, including the extreme values (-128, 127) and K up to 2^16 (every int32 sum exact)
and past 2^17 (sums wrap as NumPy's int32 sums wrap); every registered kernel, few rows on two
threads, strides, stacks and 1-D operands; one row of A (the GEMV that reads B in place); the C
API's results and its argument checks."""
import numpy as np
import pytest
from conftest import on_a_worker

import cprog
import tilegen as tg
from tilegen.ops.gemm import _gemm


def i8(rng, shape, lo=-128, hi=128):
    return rng.integers(lo, hi, shape, dtype=np.int8)


def ref(a, b, dtype=np.int32):
    """The exact product, then wrapped to `dtype` as NumPy's integer sums wrap."""
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)


@pytest.fixture(params=["built-in", "every kernel"])
def kernels(request):
    names = [None] if request.param == "built-in" else _gemm.s8_kernels()
    yield names
    _gemm.set_s8_kernel(None)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (1, 7, 5), (5, 7, 1), (13, 33, 37), (29, 101, 65),
                                   (64, 300, 96), (130, 1, 17), (3, 0, 4), (70, 515, 200)])
def test_matmul_int32_exact(m, k, n, kernels):
    rng = np.random.default_rng(m * 1000 + k + n)
    a, b = i8(rng, (m, k)), i8(rng, (k, n))
    for name in kernels:
        _gemm.set_s8_kernel(name)
        got = tg.matmul(a, b, dtype=np.int32)
        assert got.dtype == np.matmul(a, b, dtype=np.int32).dtype == np.int32
        assert np.array_equal(got, ref(a, b)), name


@pytest.mark.parametrize("fill", [-128, 127])
def test_extremes_and_deep_k(fill, kernels):
    """K = 2^16 of one extreme value: 2^30 (or just under) per element, still exact; then
    K = 2^17 + 5: past 2^31, where NumPy's int32 sums wrap and so must ours."""
    for k in (1 << 16, (1 << 17) + 5):
        a = np.full((5, k), fill, np.int8)
        b = np.full((k, 3), -128, np.int8)
        b[::7] = 127
        for name in kernels:
            _gemm.set_s8_kernel(name)
            got = tg.matmul(a, b, dtype=np.int32)
            assert np.array_equal(got, ref(a, b)), (name, k)
            assert np.array_equal(got, np.matmul(a, b, dtype=np.int32)), (name, k)


@pytest.mark.parametrize("m,k,n", [(1, 7, 5), (13, 33, 37), (70, 515, 200), (16, 1501, 1500)])
def test_uint8_times_int8(m, k, n, kernels):
    """uint8 A (quantized activations): exact, and NumPy's int16 (wrapping) by default. VNNI
    kernels read it as is; signed kernels read it offset by -128 and add 128 x B's sums back."""
    rng = np.random.default_rng(m + k)
    a = rng.integers(0, 256, (m, k), dtype=np.uint8)
    a[0, : min(k, 3)] = 255  # the largest unsigned values
    b = i8(rng, (k, n))
    for name in kernels:
        _gemm.set_s8_kernel(name)
        assert np.array_equal(tg.matmul(a, b, dtype=np.int32), ref(a, b)), name
        got, want = tg.matmul(a, b), np.matmul(a, b)
        assert got.dtype == want.dtype == np.int16 and np.array_equal(got, want), name
    deep = np.full((2, 1 << 16), 255, np.uint8), np.full((1 << 16, 3), -128, np.int8)
    assert np.array_equal(tg.matmul(*deep, dtype=np.int32), ref(*deep))  # -2^31 + 2^23: exact
    assert np.array_equal(tg.dot(a, b), np.dot(a, b))
    for dtype in (np.int8, np.int16, np.int64):  # NumPy's wrapping (or exact) answers
        got, want = tg.matmul(a, b, dtype=dtype), np.matmul(a, b, dtype=dtype)
        assert got.dtype == want.dtype and np.array_equal(got, want), dtype


def test_dtypes_follow_numpy():
    rng = np.random.default_rng(3)
    a, b = i8(rng, (9, 40)), i8(rng, (40, 11))
    for dtype in (None, np.int8, np.int16, np.int32, np.int64, np.float32, np.float64):
        got, want = tg.matmul(a, b, dtype=dtype), np.matmul(a, b, dtype=dtype)
        assert got.dtype == want.dtype and np.array_equal(got, want), dtype
    assert tg.matmul(a, b).dtype == np.int8 and np.array_equal(tg.matmul(a, b), ref(a, b, np.int8))
    assert tg.dot(a, b).dtype == np.dot(a, b).dtype == np.int8
    assert np.array_equal(tg.dot(a, b), np.dot(a, b))
    with pytest.raises(TypeError):  # NumPy's refusal of an unsafe cast under casting="safe"
        np.matmul(a, b, dtype=np.int32, casting="no")
    with pytest.raises(TypeError):
        tg.matmul(a, b, dtype=np.int32, casting="no")


def test_strides_views_stacks_and_vectors():
    rng = np.random.default_rng(4)
    a, b = i8(rng, (3, 20, 77)), i8(rng, (77, 30))
    assert np.array_equal(tg.matmul(a, b, dtype=np.int32), np.matmul(a, b, dtype=np.int32))
    assert np.array_equal(tg.matmul(a, b), np.matmul(a, b))
    at, bt = a[0].T.copy().T, b[::2, ::3]  # column-major A; a strided view of B
    assert np.array_equal(tg.matmul(at, b, dtype=np.int32), ref(at, b))
    assert np.array_equal(tg.matmul(a[0][:, :39], bt, dtype=np.int32), ref(a[0][:, :39], bt))
    x, y = a[0, 0], b[:, 0]
    assert np.array_equal(tg.matmul(x, b, dtype=np.int32), np.matmul(x, b, dtype=np.int32))
    assert np.array_equal(tg.matmul(a[0], y, dtype=np.int32), np.matmul(a[0], y, dtype=np.int32))
    s = tg.matmul(x, y, dtype=np.int32)
    assert isinstance(s, np.int32) and s == np.matmul(x, y, dtype=np.int32)
    assert np.array_equal(tg.dot(a, b), np.dot(a, b))  # N-D . 2-D
    out = np.empty((20, 30), np.int32)
    assert tg.matmul(a[1], b, out=out, dtype=np.int32) is out
    assert np.array_equal(out, ref(a[1], b))


@pytest.mark.parametrize("m", [1, 7, 16, 40, 100])
def test_two_threads_give_the_exact_product(m):
    """Few rows split columns (B streamed per thread), more rows split the row panels."""
    rng = np.random.default_rng(m)
    a, b = i8(rng, (m, 1501)), i8(rng, (1501, 1500))
    tg.set_num_threads(2)
    assert np.array_equal(on_a_worker(lambda: tg.matmul(a, b, dtype=np.int32)), ref(a, b))


# ---- one row of A: the GEMV kernel (gemvs8) reads row-major B in place ----

@pytest.mark.parametrize("k,n", [(1, 1), (3, 5), (7, 63), (33, 64), (65, 65), (101, 130),
                                 (515, 200), (1027, 1031)])
def test_one_row(k, n):
    """Every k remainder of the kernels' passes (k odd, not a multiple of 4) and n not a
    multiple of any vector width; int8 and uint8 x, the extremes, both result types."""
    rng = np.random.default_rng(k * 7 + n)
    x, b = i8(rng, k), i8(rng, (k, n))
    x[: min(k, 2)], b[0] = -128, -128
    b[-1, ::2] = 127
    for lhs in (x, x[None]):  # 1-D and (1, k)
        got = tg.matmul(lhs, b, dtype=np.int32)
        assert got.dtype == np.int32 and np.array_equal(got, ref(lhs, b))
        got, want = tg.matmul(lhs, b), np.matmul(lhs, b)  # NumPy's wrapping int8 result
        assert got.dtype == want.dtype == np.int8 and np.array_equal(got, want)
    u = rng.integers(0, 256, k, dtype=np.uint8)
    u[: min(k, 3)] = 255
    assert np.array_equal(tg.matmul(u, b, dtype=np.int32), ref(u, b))
    wide = i8(rng, (k, n + 13))  # B's rows further apart than n; x strided
    bs, xs = wide[:, 5:5 + n], i8(rng, 2 * k)[::2]
    assert np.array_equal(tg.matmul(xs, bs, dtype=np.int32), ref(xs, bs))
    assert np.array_equal(tg.matmul(x, b[::-1], dtype=np.int32), ref(x, b[::-1]))  # rs_b < 0
    assert np.array_equal(tg.matmul(x, b[:, ::2], dtype=np.int32), ref(x, b[:, ::2]))  # packed


@pytest.mark.parametrize("fill", [-128, 127])
def test_one_row_deep_k_wraps(fill):
    k = (1 << 17) + 5  # past 2^31: the sums wrap as NumPy's int32 sums do
    x = np.full(k, fill, np.int8)
    b = np.full((k, 70), -128, np.int8)
    b[::7] = 127
    assert np.array_equal(tg.matmul(x, b, dtype=np.int32), np.matmul(x, b, dtype=np.int32))
    u = np.full(k, 255, np.uint8)
    assert np.array_equal(tg.matmul(u, b, dtype=np.int32), ref(u, b))


def test_one_row_two_threads_give_one_threads_bits():
    """Two threads split the columns (n not a multiple of the kernel's step)."""
    rng = np.random.default_rng(11)
    x, b = i8(rng, 3001), i8(rng, (3001, 1999))
    u = rng.integers(0, 256, 3001, dtype=np.uint8)
    tg.set_num_threads(1)
    one = tg.matmul(x, b, dtype=np.int32), tg.matmul(u, b, dtype=np.int32)
    tg.set_num_threads(2)
    two = on_a_worker(lambda: (tg.matmul(x, b, dtype=np.int32), tg.matmul(u, b, dtype=np.int32)))
    assert np.array_equal(one[0], ref(x, b)) and np.array_equal(one[1], ref(u, b))
    assert np.array_equal(two[0], one[0]) and np.array_equal(two[1], one[1])


def test_kernel_is_reported():
    info = tg.runtime_info()["kernels"]["gemm"]["s8"]
    assert info["kernel"] == _gemm.s8_kernel() and info["kernel"].startswith("tg_s8_gemm_")
    with pytest.raises(ValueError, match="name"):
        _gemm.set_s8_kernel("tg_s8_gemm_ukernel_99x99c4__nowhere")


C_PROGRAM = r"""
#include <stdio.h>
#include <stdint.h>
#include <tilegen.h>

int main(void) {
  int8_t a[2 * 5], b[5 * 3];
  int32_t c[2 * 3], want[2 * 3];
  for (int i = 0; i < 10; i++) a[i] = (int8_t) (i % 2 ? -128 : 127 - i);
  for (int i = 0; i < 15; i++) b[i] = (int8_t) (i * 37 - 100);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      int32_t s = 0;
      for (int p = 0; p < 5; p++) s += a[i * 5 + p] * b[p * 3 + j];
      want[i * 3 + j] = s;
      c[i * 3 + j] = 1000;
    }
  if (tilegen_gemm_s8(2, 3, 5, a, 5, 1, b, 3, 1, 0, c, 3, 1) != 0) return 2;
  for (int i = 0; i < 6; i++) if (c[i] != want[i]) { printf("bad %d\n", i); return 3; }
  if (tilegen_gemm_s8(2, 3, 5, a, 5, 1, b, 3, 1, 1, c, 3, 1) != 0) return 4;  /* C += A B */
  for (int i = 0; i < 6; i++) if (c[i] != 2 * want[i]) return 5;
  printf("m %d n %d k %d a %d b %d c %d\n", tilegen_gemm_s8(-1, 3, 5, a, 5, 1, b, 3, 1, 0, c, 3, 1),
         tilegen_gemm_s8(2, -1, 5, a, 5, 1, b, 3, 1, 0, c, 3, 1),
         tilegen_gemm_s8(2, 3, -1, a, 5, 1, b, 3, 1, 0, c, 3, 1),
         tilegen_gemm_s8(2, 3, 5, NULL, 5, 1, b, 3, 1, 0, c, 3, 1),
         tilegen_gemm_s8(2, 3, 5, a, 5, 1, NULL, 3, 1, 0, c, 3, 1),
         tilegen_gemm_s8(2, 3, 5, a, 5, 1, b, 3, 1, 0, NULL, 3, 1));
  /* k == 0: C = 0 (A and B never read, may be NULL); accumulating leaves C alone */
  if (tilegen_gemm_s8(2, 3, 0, NULL, 0, 1, NULL, 3, 1, 1, c, 3, 1) != 0 || c[0] != 2 * want[0]) return 6;
  if (tilegen_gemm_s8(2, 3, 0, NULL, 0, 1, NULL, 3, 1, 0, c, 3, 1) != 0 || c[5] != 0) return 7;
  uint8_t ua[2 * 5];  /* uint8 A, with 255 and 128 */
  for (int i = 0; i < 10; i++) ua[i] = (uint8_t) (i % 3 ? 255 - i : 128 + i);
  if (tilegen_gemm_u8s8(2, 3, 5, ua, 5, 1, b, 3, 1, 0, c, 3, 1) != 0) return 8;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      int32_t s = 0;
      for (int p = 0; p < 5; p++) s += ua[i * 5 + p] * b[p * 3 + j];
      if (c[i * 3 + j] != s) return 9;
    }
  if (tilegen_gemm_u8s8(2, 3, 5, NULL, 5, 1, b, 3, 1, 0, c, 3, 1) != -4) return 10;
  /* One row of A (the GEMV): y = x B and y += x B, int8 and uint8 x read with a stride, B's
     rows 140 apart; n = 131 (past two steps of every kernel, then a remainder); k = 11. */
  static int8_t bb[11 * 140], xs[22];
  static int32_t y[131], y0[131], w[131];
  for (int i = 0; i < 11 * 140; i++) bb[i] = (int8_t) (i * 41 + 7);
  for (int i = 0; i < 22; i++) xs[i] = (int8_t) (i % 4 == 0 ? -128 : i * 29 - 90);
  for (int u = 0; u < 2; u++)
    for (int acc = 0; acc < 2; acc++) {
      for (int j = 0; j < 131; j++) {
        y[j] = y0[j] = (int32_t) (j * 1000003u + 17u);
        int64_t s = acc ? y0[j] : 0;
        for (int p = 0; p < 11; p++)
          s += (int64_t) (u ? (int) (uint8_t) xs[2 * p] : (int) xs[2 * p]) * bb[p * 140 + j];
        w[j] = (int32_t) (uint32_t) (uint64_t) s;
      }
      const int r = u ? tilegen_gemm_u8s8(1, 131, 11, (const uint8_t*) xs, 22, 2, bb, 140, 1, acc, y, 131, 1)
                      : tilegen_gemm_s8(1, 131, 11, xs, 22, 2, bb, 140, 1, acc, y, 131, 1);
      if (r != 0) return 11;
      for (int j = 0; j < 131; j++)
        if (y[j] != w[j]) { printf("gemv u %d acc %d bad %d: %d %d\n", u, acc, j, y[j], w[j]); return 12; }
    }
  printf("OK\n");
  return 0;
}
"""


def test_c_api(tmp_path):
    src = tmp_path / "s8_client.c"
    src.write_text(C_PROGRAM)
    exe = tmp_path / "s8_client"
    r = cprog.run([cprog.cc(), "-std=gnu11", f"-I{tg.get_include()}", str(src), "-o", str(exe),
                   *cprog.tilegen_link_args()])
    assert r.returncode == 0, r.stderr
    r = cprog.run([str(exe)])
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), (r.returncode, r.stdout, r.stderr)
    assert "m -1 n -2 k -3 a -4 b -7 c -11" in r.stdout


# ---- tg.gemm with an int32 result: the integer GEMM of quantized inference ----

@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8])
def test_gemm_int32_result_with_c_bias_and_activation(a_dtype):
    rng = np.random.default_rng(7)
    a = rng.integers(np.iinfo(a_dtype).min, np.iinfo(a_dtype).max + 1, (37, 300)).astype(a_dtype)
    b = i8(rng, (300, 45))
    exact = a.astype(np.int64) @ b.astype(np.int64)
    got = tg.gemm(a, b, out_dtype=np.int32)
    assert got.dtype == np.int32 and np.array_equal(got, exact)
    c = rng.integers(-10 ** 6, 10 ** 6, (37, 45)).astype(np.int32)
    bias = rng.integers(-300, 300, 45).astype(np.int16)
    for act, clip in ((None, (None, None)), ("relu", (0, None)), ("relu6", (0, 6))):
        got = tg.gemm(a, b, c, beta=1, bias=bias, activation=act, out_dtype=np.int32)
        want = exact + c + bias
        assert np.array_equal(got, want if act is None else np.clip(want, *clip)), act
    # beta 0: c (NaN-free here, but never read) is ignored; trans_a reads a transposed copy;
    # an F-ordered int32 out is written in place.
    out = np.empty((45, 37), np.int32).T
    got = tg.gemm(np.ascontiguousarray(a.T), b, c, beta=0, trans_a=True, out=out)
    assert got is out and np.array_equal(out, exact)

def test_gemm_int32_result_in_place_and_wrapping():
    rng = np.random.default_rng(8)
    a, b = i8(rng, (9, 70), -128, -127), i8(rng, (70, 11), -128, -127)  # every product 2^14
    c = np.full((9, 11), 2 ** 31 - 1, np.int32)
    got = tg.gemm(a, b, c, beta=1, overwrite_c=True)
    assert got is c
    want = (np.int64(2 ** 31 - 1) + 70 * 2 ** 14 + 2 ** 31) % 2 ** 32 - 2 ** 31  # wraps as int32
    assert np.all(c == want)


def test_gemm_int32_result_refuses_what_is_not_exact():
    a, b = np.ones((3, 4), np.int8), np.ones((4, 5), np.int8)
    with pytest.raises(ValueError, match="alpha"):
        tg.gemm(a, b, alpha=2, out_dtype=np.int32)
    with pytest.raises(ValueError, match="beta"):
        tg.gemm(a, b, np.ones((3, 5), np.int32), beta=0.5, out_dtype=np.int32)
    with pytest.raises(ValueError, match="activation"):
        tg.gemm(a, b, activation="gelu", out_dtype=np.int32)
    with pytest.raises(TypeError, match="bias"):
        tg.gemm(a, b, bias=np.ones(5, np.float32), out_dtype=np.int32)
    with pytest.raises(TypeError, match="c has dtype"):
        tg.gemm(a, b, np.ones((3, 5), np.int64), beta=1, out_dtype=np.int32)
    with pytest.raises(ValueError, match="out has shape"):
        tg.gemm(a, b, out=np.empty((5, 3), np.int32))
    with pytest.raises(TypeError, match="out must be a numpy.ndarray"):
        tg.gemm(a, b, out=[[0] * 5] * 3, out_dtype=np.int32)
    with pytest.raises(TypeError, match="cannot cast the int32 result"):
        tg.gemm(a, b, out=np.empty((3, 5), np.uint8), out_dtype=np.int32)
    # The int32 result into a wider integer out: through a temporary, the same values.
    wide = np.zeros((3, 5), np.int64)
    assert tg.gemm(a, b, out=wide, out_dtype=np.int32) is wide and np.all(wide == 4)
    # Without an int32 result, gemm computes in float64 as documented.
    assert tg.gemm(a, b).dtype == np.float64


@pytest.mark.parametrize("m", [2, 3, 4])
@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8])
def test_few_rows_take_a_gemv_each(m, a_dtype):
    """Up to four rows of A with row-major B run the GEMV once per row (B read in place; up to
    two where the ISA packs B in registers, the packed path past them): exact
    for strided rows of A, odd k, n off the vector width, on 1 and 2 threads alike."""
    rng = np.random.default_rng(m)
    k, n = 1031, 1100
    info = np.iinfo(a_dtype)
    a = rng.integers(info.min, info.max + 1, (m, 2 * k)).astype(a_dtype)[:, ::2]
    b = i8(rng, (k, n))
    want = a.astype(np.int64) @ b.astype(np.int64)
    saved = tg.get_num_threads()
    try:
        for threads in (1, 2):
            tg.set_num_threads(threads)
            assert np.array_equal(tg.matmul(a, b, dtype=np.int32), want), threads
    finally:
        tg.set_num_threads(saved)
    c = rng.integers(-1000, 1000, (m, n)).astype(np.int32)
    assert np.array_equal(tg.gemm(a, b, c, beta=1, out_dtype=np.int32), want + c)


@pytest.mark.parametrize("k, n", [(8200, 1100), (1000, 4500)])
def test_column_blocks_at_and_below_the_block_depth(k, n):
    """Products past the streamed rows whose columns span several packed B blocks: at the
    full block depth (k beyond KC: k blocks too) and at a shallower depth, where a block spans
    more columns (KC x NC bytes at that depth). Exact against a float64 product (|sums| below
    2^53)."""
    rng = np.random.default_rng(k + n)
    a = rng.integers(-128, 128, (61, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.int64)
    got = tg.gemm(a, b, out_dtype=np.int32)
    np.testing.assert_array_equal(got, want)
    u = a.view(np.uint8)
    np.testing.assert_array_equal(tg.gemm(u, b, out_dtype=np.int32),
                                  (u.astype(np.float64) @ b.astype(np.float64)).astype(np.int64))


@pytest.mark.parametrize("m", [16, 61])
@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8])
def test_row_major_b_packing_every_edge(m, a_dtype, kernels):
    """Row-major B is packed by the ISA's own routine where it has one (the quads and column
    sums of whole panels, four vectors of columns at a time, templates/gemms8/pack.c.j2) and by
    the driver's loop for the rest: column counts around its strips and panels, depths that end
    in a partial quad, B a view into wider rows at an odd column offset, streamed (16 rows) and
    blocked (61 rows) products, on one thread and (where the product is large enough to be
    split) two. Exact against an int64 product."""
    rng = np.random.default_rng(m)
    saved = tg.get_num_threads()
    try:
        _packing_edges(rng, m, a_dtype, kernels)
    finally:
        tg.set_num_threads(saved)


def _packing_edges(rng, m, a_dtype, kernels):
    for k in (4, 7, 515):
        wide = i8(rng, (k, 300))
        a = rng.integers(0 if a_dtype == np.uint8 else -128, 256 if a_dtype == np.uint8 else 128,
                         (m, k)).astype(a_dtype)
        for n in (31, 32, 33, 64, 65, 97, 160, 191, 255):
            b = wide[:, 3:3 + n]
            want = ref(a, b)
            for name in kernels:
                _gemm.set_s8_kernel(name)
                tg.set_num_threads(1)
                assert np.array_equal(tg.matmul(a, b, dtype=np.int32), want), (name, k, n)
                if 2 * m * k * n >= 4e6:  # threaded (gemm_s8.c: TG_S8_PARALLEL_MIN_OPS)
                    tg.set_num_threads(2)
                    got = on_a_worker(lambda: tg.matmul(a, b, dtype=np.int32))
                    assert np.array_equal(got, want), (name, k, n, "2 threads")
