/*
 * GEMV micro-kernel tester, both forms.
 * Dot form (NR = 1): y[i*inc_y] = alpha * dot(A[i, :k], x) + beta * y[i*inc_y] for every m <= MR,
 * k in 0 .. 2KR+1 (every remainder of the KR step, alone and after a full one) and 300, prime
 * row strides of A, prime inc_y with sentinels between the outputs.
 * Axpy form (MR = 1, NR > 1): y[j] = alpha * sum_r x[r] * A[r, j] + beta * y[j] for n around
 * the vector width and NR and k around KR, then n = 1 .. 2NR+1 (every column remainder of the
 * NR step, alone and after a full one), k = 0 .. 2KR+1 (every row remainder of a pass) and rows
 * whole lines apart starting at every offset into a line (every count of the kernel's head
 * columns); prime row strides of A elsewhere (the gap between rows poisoned with NaN, so a
 * column past n that reaches y shows).
 * Both: beta 0 with NaN in y, beta 1, alpha 0; every buffer ends (or, alternately, starts) at a
 * PROT_NONE page so an over-read of a row, of x or of y faults.
 *
 * Built per kernel with -DTG_T=float|double -DTG_DT=f32|f64 -DTG_UKERNEL=<fn> -DTG_MR=..
 * -DTG_NR=.. -DTG_KR=.. -DTG_LANES=.. -DTG_ISA_ID=TG_ISA_<NAME>; prints the COVER lines
 * (ukernel_tester.h) and "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77 (77: the CPU
 * lacks the ISA).
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef TG_T T;
#include "ukernel_tester.h"

typedef CAT(CAT(tg_, TG_DT), _gemm_params) params_t;

static long cases = 0, failed = 0;

static void fail(const char* what, int m, int k, double alpha, double beta, int i, double got,
                 double want) {
  failed++;
  if (failed <= 20)
    fprintf(stderr, "FAIL %s: m=%d k=%d alpha=%g beta=%g row %d: got %.17g want %.17g\n", what, m,
            k, alpha, beta, i, got, want);
}

#if TG_NR > 1
#define LINE ((int64_t) (64 / sizeof(T)))

/* The axpy form: n columns of y from k rows of A. lead < 0: a prime row stride; else the rows
   are whole lines apart and start lead elements into a line (the kernel's head columns). */
static void run_axpy_case(int n, int k, double alpha, double beta, int lead) {
  region ra, rx, ry;
  guard_alternate();
  const int64_t rs_a = lead < 0 ? next_prime(n + 1) : (n + 1 + LINE - 1) / LINE * LINE;
  const size_t a_count = k ? (size_t) ((k - 1) * rs_a + n) : 0;
  const size_t slack = lead < 0 ? 0 : (size_t) LINE;  /* room to move the start into a line */
  T* a = guarded(a_count + slack, &ra);
  for (size_t i = 0; i < a_count + slack; i++) a[i] = (T) NAN;
  if (lead >= 0)
    a += (size_t) ((lead * (int64_t) sizeof(T) - (int64_t) ((uintptr_t) a % 64) + 64) % 64) /
         sizeof(T);
  for (size_t i = 0; i < a_count; i++) if ((size_t) (i % rs_a) < (size_t) n) a[i] = (T) uniform();
  T* x = guarded((size_t) k, &rx);
  for (int i = 0; i < k; i++) x[i] = (T) uniform();
  T* y = guarded((size_t) n, &ry);
  T* y0 = malloc(((size_t) n + 1) * sizeof(T));
  for (int j = 0; j < n; j++) y0[j] = y[j] = beta == 0 ? (T) NAN : (T) uniform();
  params_t params;
  params.alpha = (T) alpha;
  params.beta = (T) beta;
  params.bias = NULL;
  TG_UKERNEL(n, k, a, rs_a, x, y, 1, &params);
  /* The head: the columns before the rows' first line boundary (rows whole lines apart). */
  const int64_t head_cols = lead < 0 ? 0 : (LINE - lead) % LINE;
  const int64_t head = head_cols < n ? head_cols : n;
  cover("n", TG_NR, n - head);
  cover("k", TG_KR, k);
  if (lead >= 0 && TG_LANES > 1) cover("head", LINE, head_cols);  /* scalar: no head */
  cases++;
  for (int j = 0; j < n; j++) {
    double acc = 0, mag = 0;
    for (int r = 0; r < k; r++) {
      const double p = (double) a[r * rs_a + j] * (double) x[r];
      acc += p;
      mag += fabs(p);
    }
    double want = alpha * acc;
    mag = fabs(alpha) * mag;
    if (beta != 0) { want += beta * (double) y0[j]; mag += fabs(beta * (double) y0[j]); }
    const double tol = TOL * sqrt((double) (k > 1 ? k : 1)) * (mag + 1e-30) + 1e-30;
    if (!(fabs((double) y[j] - want) <= tol)) fail("value", n, k, alpha, beta, j, y[j], want);
  }
  free(y0);
  release(&ra); release(&rx); release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  const int ns[] = {1, 2, 3, 7, 8, 15, 16, 17, 31, TG_NR - 1, TG_NR, TG_NR + 1, 2 * TG_NR + 19, 300};
  const int ks[] = {0, 1, TG_KR - 1, TG_KR, TG_KR + 1, 2 * TG_KR + 3, 37};
  for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
    for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
      if (ks[ki] < 0 || (ki > 0 && ks[ki] == ks[ki - 1])) continue;
      run_axpy_case(ns[ni], ks[ki], 1.0, 0.0, -1);
      run_axpy_case(ns[ni], ks[ki], -1.5, 1.0, -1);
      run_axpy_case(ns[ni], ks[ki], 0.0, 0.5, -1);
      run_axpy_case(ns[ni], ks[ki], 0.75, -2.0, -1);
      /* rows whole lines apart, starting at every few offsets into a line */
      for (int lead = 0; lead < LINE; lead += lead < 2 ? 1 : 3) {
        run_axpy_case(ns[ni], ks[ki], 1.0, 0.0, lead);
        run_axpy_case(ns[ni], ks[ki], 0.75, -2.0, lead);
      }
    }
  }
  /* Every remainder of every tiled dimension: columns (a full pass of KR rows and the
     remainder rows), rows, and the head columns at every offset into a line. */
  for (int n = 1; n <= 2 * TG_NR + 1; n++) {
    run_axpy_case(n, TG_KR + 3, 1.0, 0.0, -1);
    run_axpy_case(n, TG_KR + 3, -1.5, 1.0, -1);
  }
  for (int k = 0; k <= 2 * TG_KR + 1; k++) {
    run_axpy_case(TG_NR + 5, k, 1.0, 0.0, -1);
    run_axpy_case(3, k, 0.75, -2.0, -1);
  }
  const int hn[] = {1, 3, TG_NR + 1, 2 * TG_NR + 19};
  for (int lead = 0; lead < LINE; lead++)
    for (int i = 0; i < 4; i++) {
      run_axpy_case(hn[i], TG_KR + 1, 1.0, 0.0, lead);
      run_axpy_case(hn[i], 2 * TG_KR, 0.75, -2.0, lead);
    }
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
#else
static const T SENTINEL = (T) -777.25;

static void run_case(int m, int k, double alpha, double beta) {
  region ra, rx, ry;
  guard_alternate();
  const int64_t rs_a = next_prime(k + 1);
  const size_t a_count = (size_t) ((m - 1) * rs_a + k);
  T* a = guarded(a_count, &ra);
  for (size_t i = 0; i < a_count; i++) a[i] = (T) uniform();
  T* x = guarded((size_t) k, &rx);
  for (int i = 0; i < k; i++) x[i] = (T) uniform();
  const int64_t inc_y = m == 1 ? 1 : 3;
  const size_t y_count = (size_t) ((m - 1) * inc_y + 1);
  T* y = guarded(y_count, &ry);
  T* y0 = malloc(y_count * sizeof(T));
  for (size_t i = 0; i < y_count; i++) {
    y[i] = i % inc_y ? SENTINEL : (beta == 0 ? (T) NAN : (T) uniform());
    y0[i] = y[i];
  }
  params_t params;
  params.alpha = (T) alpha;
  params.beta = (T) beta;
  params.bias = NULL;
  TG_UKERNEL(m, k, a, rs_a, x, y, inc_y, &params);
  cover("m", TG_MR, m);
  cover("k", TG_KR, k);
  cases++;
  for (size_t idx = 0; idx < y_count; idx++) {
    if (idx % inc_y) {
      if (memcmp(&y[idx], &SENTINEL, sizeof(T)) != 0)
        fail("sentinel overwritten", m, k, alpha, beta, (int) idx, y[idx], SENTINEL);
      continue;
    }
    const int i = (int) (idx / inc_y);
    double acc = 0, mag = 0;
    for (int kk = 0; kk < k; kk++) {
      const double p = (double) a[i * rs_a + kk] * (double) x[kk];
      acc += p;
      mag += fabs(p);
    }
    double want = alpha * acc;
    mag = fabs(alpha) * mag;
    if (beta != 0) { want += beta * (double) y0[idx]; mag += fabs(beta * (double) y0[idx]); }
    const double tol = TOL * sqrt((double) (k > 1 ? k : 1)) * (mag + 1e-30) + 1e-30;
    if (!(fabs((double) y[idx] - want) <= tol)) fail("value", m, k, alpha, beta, i, y[idx], want);
  }
  free(y0);
  release(&ra); release(&rx); release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  /* k: every remainder of the KR step, alone and after a full one; and a long row */
  int ks[2 * TG_KR + 3], nk = 0;
  for (int k = 0; k <= 2 * TG_KR + 1; k++) ks[nk++] = k;
  ks[nk++] = 300;
  for (int ki = 0; ki < nk; ki++) {
    for (int m = 1; m <= TG_MR; m++) {
      run_case(m, ks[ki], 1.0, 0.0);
      run_case(m, ks[ki], -1.5, 1.0);
      run_case(m, ks[ki], 0.0, 0.5);
    }
  }
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
#endif
