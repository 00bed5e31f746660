/*
 * GEMV micro-kernel tester, both forms.
 * Dot form (NR = 1): y[i*inc_y] = alpha * dot(A[i, :k], x) + beta * y[i*inc_y] for every m <= MR,
 * k in {0, 1, KR-1, KR, KR+1, 2KR+1, 300}, prime row strides of A, prime inc_y with sentinels
 * between the outputs.
 * Axpy form (MR = 1, NR > 1): y[j] = alpha * sum_r x[r] * A[r, j] + beta * y[j] for n around
 * the vector width and NR (every column tail) and k around KR (every row remainder), prime row
 * strides of A (the gap between rows poisoned with NaN, so a column past n that reaches y shows),
 * and rows whole lines apart starting at offsets into a line (the kernel's head columns).
 * Both: beta 0 with NaN in y, beta 1, alpha 0; every buffer ends (or, alternately, starts) at a
 * PROT_NONE page so an over-read of a row, of x or of y faults.
 *
 * Built per kernel with -DTG_T=float|double -DTG_DT=f32|f64 -DTG_UKERNEL=<fn> -DTG_MR=..
 * -DTG_NR=.. -DTG_KR=.. -DTG_ISA_ID=TG_ISA_<NAME>; prints "KERNEL <name> CASES <n> FAILED <f>";
 * exit 0 / 1 / 77 (77: the CPU lacks the ISA).
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
  const int candidates[] = {0, 1, TG_KR - 1, TG_KR, TG_KR + 1, 2 * TG_KR + 1, 300};
  int ks[8], nk = 0;
  for (size_t c = 0; c < sizeof(candidates) / sizeof(candidates[0]); c++) {
    int dup = candidates[c] < 0;
    for (int q = 0; q < nk; q++) dup |= ks[q] == candidates[c];
    if (!dup) ks[nk++] = candidates[c];
  }
  for (int ki = 0; ki < nk; ki++) {
    for (int m = 1; m <= TG_MR; m++) {
      run_case(m, ks[ki], 1.0, 0.0);
      run_case(m, ks[ki], -1.5, 1.0);
      run_case(m, ks[ki], 0.0, 0.5);
    }
  }
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
#endif
