/*
 * GEMM micro-kernel tester: runs one generated kernel, with its real packing routines, through
 * the case matrix of the kernel family and checks every result against a float64 reference.
 *
 * Built once per kernel (natively, or with aarch64-linux-gnu-gcc to run under qemu-aarch64):
 *   -DTG_T=float|double -DTG_DT=f32|f64 -DTG_UKERNEL=<fn> -DTG_PACKA=<fn> -DTG_PACKR=<fn>
 *   -DTG_PACKB=<fn> -DTG_MR=.. -DTG_NR=.. -DTG_UNROLL=.. -DTG_EPI=<TG_EPI_* flags>
 *   -DTG_ROWS=0|1 (the kernel's A layout: packed panels, or rows) -DTG_PACK_KB=<k values per
 *   block of the packing routines' interleaving loops> -DTG_ISA_ID=TG_ISA_<NAME>
 *
 * "rows" kernels read A either in place (row-major, prime row stride; MR rows are allocated, as
 * the driver only hands full panels over in place) or from a TG_PACKR row panel with a prime
 * leading dimension; "packed" kernels read a TG_PACKA panel, or one with a wider stride.
 *
 * Cases: every m <= MR and n <= NR; k in 0 .. 2*unroll+1 (every remainder of the unrolled k
 * loop, alone and after a full step) and 300; k in 0 .. 2*PACK_KB+1 through the packing
 * routines' interleaving paths (row-major A, column-major B, full panels);
 * A and B packed from row- and column-major sources with prime leading dimensions; B also read
 * unpacked (prime row stride); panels read with a wider stride (NaN in the gaps; rows kernels: a
 * row copy with a prime stride); C with a prime row stride and sentinels in every gap; beta in
 * {0 with NaN in C, 1, 0.5} and alpha in {1, -1.5, 0}. Every buffer holds exactly what the
 * kernel may touch and sits against a PROT_NONE page, behind it or in front of it (alternating
 * case by case), so any access past either end faults.
 *
 * Prints "CASES <n> FAILED <f>"; exits 0 when all pass, 1 on failure, 77 when the CPU lacks the ISA.
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef TG_T T;
#include "ukernel_tester.h"

typedef CAT(CAT(tg_, TG_DT), _gemm_params) params_t;

static const T SENTINEL = (T) -12345.625;

static long cases = 0, failed = 0;

static void report(const char* what, int m, int n, int k, double alpha, double beta, int i, int j,
                   double got, double want, double tol) {
  failed++;
  if (failed <= 20) {
    fprintf(stderr,
            "FAIL %s: m=%d n=%d k=%d alpha=%g beta=%g at (%d,%d): got %.17g want %.17g (tol %.3g)\n",
            what, m, n, k, alpha, beta, i, j, got, want, tol);
  }
}

enum { A_ROW = 0, A_COL = 1 };
enum { B_PACKED_ROW = 0, B_PACKED_COL = 1, B_DIRECT = 2 };

/* 0: inputs U(-1, 1). +1 or -1: the clamp cases, A(i, kk) of sign (-1)^i and B(kk, j) of
   sign clamp_sign * (-1)^j, magnitudes in [0.5, 1]: every product of (i, j) has the sign
   clamp_sign * (-1)^(i+j). */
static int clamp_sign = 0;
static inline double signed_value(int negative) {
  const double x = 0.5 + 0.5 * fabs(uniform());
  return negative ? -x : x;
}

static void run_case(int m, int n, int k, double alpha, double beta, int a_layout, int b_mode,
                     int a_pad) {
  region ra, rb, rpa, rpb, rc, rbias;
  guard_alternate();
  /* A: rows x k source, row-major (rs=prime >= k) or column-major (cs=prime >= rows). The
     "rows" kernels read all MR rows, so their source has MR rows (the extra ones not stored). */
  const int rows = TG_ROWS ? TG_MR : m;
  const int64_t lda = a_layout == A_ROW ? next_prime(k + 1) : next_prime(rows + 1);
  const int64_t a_rs = a_layout == A_ROW ? lda : 1, a_cs = a_layout == A_ROW ? 1 : lda;
  const size_t a_count = (size_t) (k == 0 ? 0 : a_layout == A_ROW ? (rows - 1) * lda + k : (k - 1) * lda + rows);
  T* a = guarded(a_count, &ra);
  for (size_t i = 0; i < a_count; i++) {
    const int64_t row = a_layout == A_ROW ? (int64_t) i / lda : (int64_t) i % lda;
    a[i] = (T) (clamp_sign ? signed_value((int) (row & 1)) : uniform());
  }

  /* B: k x n source; packed from row- or column-major, or read directly with a prime stride. */
  const int64_t ldb = b_mode == B_PACKED_COL ? next_prime(k + 1) : next_prime(TG_NR + 1);
  const int64_t b_rs = b_mode == B_PACKED_COL ? 1 : ldb, b_cs = b_mode == B_PACKED_COL ? ldb : 1;
  const int64_t b_cols = b_mode == B_DIRECT ? TG_NR : n;  /* the kernel reads NR per row */
  const size_t b_count = (size_t) (k == 0 ? 0 : b_mode == B_PACKED_COL ? (n - 1) * ldb + k : (k - 1) * ldb + b_cols);
  T* b = guarded(b_count, &rb);
  for (size_t i = 0; i < b_count; i++) {
    const int64_t col = b_mode == B_PACKED_COL ? (int64_t) i / ldb : (int64_t) i % ldb;
    b[i] = (T) (clamp_sign ? signed_value((clamp_sign < 0) ^ (int) (col & 1)) : uniform());
  }

  /* The A operand the kernel reads, through the real packing routines. */
  const T* ak;
  int64_t a_stride;
#if TG_ROWS
  const int64_t ld_p = next_prime(k + 2);
  T* pa = guarded((size_t) ((TG_MR - 1) * ld_p + k), &rpa);
  if (a_pad == 0 && a_layout == A_ROW) {  /* in place */
    ak = a; a_stride = lda;
  } else {
    TG_PACKR(m, TG_MR, k, a, a_rs, a_cs, pa, ld_p);
    for (int64_t i = 0; i < TG_MR; i++)
      for (int64_t kk = 0; kk < k; kk++) {
        const T want = i < m ? a[i * a_rs + kk * a_cs] : (T) 0;
        if (memcmp(&pa[i * ld_p + kk], &want, sizeof(T)) != 0)
          report("packr", m, n, k, alpha, beta, (int) i, (int) kk, pa[i * ld_p + kk], want, 0);
      }
    ak = pa; a_stride = ld_p;
  }
#else
  const int64_t cs_a = TG_MR + a_pad;
  T* pa = guarded((size_t) (k > 0 ? (k - 1) * cs_a + TG_MR : 0), &rpa);
  if (a_pad == 0) {
    TG_PACKA(m, k, a, a_rs, a_cs, pa);
    for (int64_t kk = 0; kk < k; kk++)  /* check the packed layout itself, padding included */
      for (int64_t i = 0; i < TG_MR; i++) {
        const T want = i < m ? a[i * a_rs + kk * a_cs] : (T) 0;
        if (memcmp(&pa[kk * TG_MR + i], &want, sizeof(T)) != 0)
          report("packa", m, n, k, alpha, beta, (int) i, (int) kk, pa[kk * TG_MR + i], want, 0);
      }
  } else {  /* a panel with a wider stride (column-major A read in place): MR values per k
               step, then a_pad NaNs that a kernel ignoring the stride would read */
    for (int64_t kk = 0; kk < k; kk++)
      for (int64_t i = 0; i < cs_a && kk * cs_a + i < (k - 1) * cs_a + TG_MR; i++)
        pa[kk * cs_a + i] = i < m ? a[i * a_rs + kk * a_cs] : i < TG_MR ? (T) 0 : (T) NAN;
  }
  ak = pa; a_stride = cs_a;
#endif
  const T* bk;
  int64_t rs_b;
  T* pb = guarded((size_t) (k > 0 ? k : 1) * TG_NR, &rpb);
  if (b_mode == B_DIRECT) {
    bk = b; rs_b = ldb;
  } else {
    TG_PACKB(n, k, b, b_rs, b_cs, pb);
    bk = pb; rs_b = TG_NR;
  }
  if (b_mode != B_DIRECT) {
    for (int64_t kk = 0; kk < k; kk++)
      for (int64_t j = 0; j < TG_NR; j++) {
        const T want = j < n ? b[kk * b_rs + j * b_cs] : (T) 0;
        if (memcmp(&pb[kk * TG_NR + j], &want, sizeof(T)) != 0)
          report("packb", m, n, k, alpha, beta, (int) kk, (int) j, pb[kk * TG_NR + j], want, 0);
      }
  }

  /* C: m x n with a prime row stride; sentinels everywhere outside the tile. */
  const int64_t ldc = next_prime(n + 1);
  const size_t c_count = (size_t) ((m - 1) * ldc + n);
  T* c = guarded(c_count, &rc);
  T* c0 = malloc(c_count * sizeof(T));
  for (size_t idx = 0; idx < c_count; idx++) {
    const int64_t j = (int64_t) idx % ldc;
    c[idx] = j < n ? (beta == 0 ? (T) NAN : (T) uniform()) : SENTINEL;
    c0[idx] = c[idx];
  }
  T* bias = guarded((size_t) n, &rbias);
  for (int j = 0; j < n; j++) bias[j] = (T) uniform();

  params_t params;
  params.alpha = (T) alpha;
  params.beta = (T) beta;
  params.bias = bias;
  TG_UKERNEL(m, n, k, ak, a_stride, bk, rs_b, c, ldc, &params);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  cover("k", TG_UNROLL, k);
  cases++;

  for (int i = 0; i < m; i++) {
    for (int j = 0; j < ldc && (int64_t) i * ldc + j < (int64_t) c_count; j++) {
      const size_t idx = (size_t) i * ldc + j;
      if (j >= n) {
        if (memcmp(&c[idx], &SENTINEL, sizeof(T)) != 0)
          report("sentinel overwritten", m, n, k, alpha, beta, i, j, c[idx], SENTINEL, 0);
        continue;
      }
      double acc = 0, mag = 0;
      for (int kk = 0; kk < k; kk++) {
        const double p = (double) a[i * a_rs + kk * a_cs] * (double) b[kk * b_rs + j * b_cs];
        acc += p;
        mag += fabs(p);
      }
      double want = alpha * acc;
      mag = fabs(alpha) * mag;
      if (beta != 0) { want += beta * (double) c0[idx]; mag += fabs(beta * (double) c0[idx]); }
#if TG_EPI & TG_EPI_BIAS
      want += (double) bias[j];
      mag += fabs((double) bias[j]);
#endif
#if TG_EPI & TG_EPI_RELU
      clamp_seen("relu", 0, TG_MR * TG_NR, i * TG_NR + j, want);
      want = want > 0 ? want : 0;
#endif
#if TG_EPI & TG_EPI_RELU6
      clamp_seen("relu6", 0, TG_MR * TG_NR, i * TG_NR + j, want);
      clamp_seen("relu6", 6, TG_MR * TG_NR, i * TG_NR + j, want);
      want = want > 0 ? (want < 6 ? want : 6) : 0;
#endif
      const double tol = TOL * sqrt((double) (k > 1 ? k : 1)) * (mag + 1e-30) + 1e-30;
      const double got = (double) c[idx];
      if (!(fabs(got - want) <= tol)) report("value", m, n, k, alpha, beta, i, j, got, want, tol);
    }
  }
  free(c0);
  release(&ra); release(&rb); release(&rpa); release(&rpb); release(&rc); release(&rbias);
}

/* TG_PACKB on blocks wider than one panel: ceil(n/NR) panels, row- and column-major sources. */
static void check_packb_block(void) {
  const int ns[] = {TG_NR + 1, 2 * TG_NR, 3 * TG_NR - 1};
  const int ks[] = {1, 7, 64};
  for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
    for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
      for (int col_major = 0; col_major < 2; col_major++) {
        const int n = ns[ni], k = ks[ki], panels = (n + TG_NR - 1) / TG_NR;
        const int64_t ld = next_prime(col_major ? k + 1 : n + 1);
        const int64_t rs = col_major ? 1 : ld, cs = col_major ? ld : 1;
        region rb, rp;
        const size_t count = (size_t) (col_major ? (n - 1) * ld + k : (k - 1) * ld + n);
        T* b = guarded(count, &rb);
        for (size_t i = 0; i < count; i++) b[i] = (T) uniform();
        T* dst = guarded((size_t) panels * (size_t) k * TG_NR, &rp);
        TG_PACKB(n, k, b, rs, cs, dst);
        cases++;
        for (int p = 0; p < panels; p++)
          for (int kk = 0; kk < k; kk++)
            for (int j = 0; j < TG_NR; j++) {
              const int col = p * TG_NR + j;
              const T want = col < n ? b[kk * rs + col * cs] : (T) 0;
              const T got = dst[((int64_t) p * k + kk) * TG_NR + j];
              if (memcmp(&got, &want, sizeof(T)) != 0)
                report("packb block", 0, n, k, 0, 0, kk, col, got, want, 0);
            }
        release(&rb);
        release(&rp);
      }
}

int main(void) {
  if (!cpu_supported()) return 77;
  const int u = TG_UNROLL;
  /* k: every remainder of the unrolled loop, alone and after a full step; and a deep one */
  int ks[2 * TG_UNROLL + 3], nk = 0;
  for (int k = 0; k <= 2 * u + 1; k++) ks[nk++] = k;
  ks[nk++] = 300;
  const double ab[][2] = {{1.0, 0.0}, {-1.5, 1.0}, {1.0, 0.5}, {0.0, 0.5}};
  for (int ki = 0; ki < nk; ki++) {
    const int k = ks[ki];
    for (int m = 1; m <= TG_MR; m++) {
      for (int n = 1; n <= TG_NR; n++) {
        run_case(m, n, k, ab[0][0], ab[0][1], A_ROW, B_PACKED_ROW, 0);   /* beta 0, NaN in C */
        run_case(m, n, k, ab[1][0], ab[1][1], A_COL, B_PACKED_COL, 0);   /* alpha -1.5, beta 1 */
        if (n == TG_NR) run_case(m, n, k, ab[2][0], ab[2][1], A_ROW, B_DIRECT, 0);
        if (k == 300 || k == u) {
          run_case(m, n, k, ab[3][0], ab[3][1], A_ROW, B_PACKED_ROW, 0);  /* alpha 0 */
          /* A through the wider panel stride (packed kernels) or a row copy (rows kernels),
             with its values reaching C */
          run_case(m, n, k, -1.5, 0.5, A_ROW, B_PACKED_ROW, 3);
        }
      }
    }
  }
  /* The packing routines' interleaving paths (a full panel of row-major A, column-major B):
     every remainder of their k blocks, alone and after a full block. */
  for (int k = 0; k <= 2 * TG_PACK_KB + 1; k++) {
    run_case(TG_MR, TG_NR, k, 1.0, 0.0, A_ROW, B_PACKED_COL, 0);
    cover("k_pack", TG_PACK_KB, k);
  }
#if TG_EPI & (TG_EPI_RELU | TG_EPI_RELU6)
  /* Both sides of every clamp at every position of every tile: |products| in [0.25, 1], so
     alpha = 40/k puts |alpha * A B| in [10, 40], beyond bias and beta*C (|.| < 1) and the
     clamps at 0 and 6; each sign of the checkerboard, with beta 0 and 1. */
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (int sign = -1; sign <= 1; sign += 2) {
        const int k = u + 1;
        clamp_sign = sign;
        run_case(m, n, k, 40.0 / k, 0.0, A_ROW, B_PACKED_ROW, 0);
        run_case(m, n, k, 40.0 / k, 1.0, A_COL, B_PACKED_COL, 0);
        clamp_sign = 0;
      }
#endif
  check_packb_block();
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
