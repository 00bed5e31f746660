/*
 * Depthwise-convolution micro-kernel tester: runs one generated dwconv kernel through the case
 * matrix of its family and checks every result against a float64 reference.
 *
 * Built once per kernel (natively, or with aarch64-linux-gnu-gcc to run under qemu-aarch64):
 *   -DTG_T=float -DTG_DT=f32 -DTG_UKERNEL=<fn> -DTG_ISA_ID=TG_ISA_<NAME> -DTG_MR=.. -DTG_NR=..
 *   -DTG_KH=.. -DTG_KW=.. -DTG_S=<stride>
 *
 * Cases: every m <= MR and n <= NR; dilation 1 and 2; a prime pixel stride ps > n whose
 * channels past n hold NaN (a kernel that uses them returns NaN); each filter row in its own
 * allocation ending at a PROT_NONE page right after channel n-1 of the last pixel the tile may
 * read (pixel MR-1, tap KW-1); the weight panel likewise; the output with a prime pixel stride
 * and sentinels in every gap; every activation, and a wide input range.
 *
 * Prints "KERNEL <name> CASES <n> FAILED <f>"; exits 0 when all pass, 1 on failure, 77 when the
 * CPU lacks the ISA.
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef TG_T T;
#include "ukernel_tester.h"

typedef CAT(CAT(tg_, TG_DT), _conv_params) params_t;

static const T SENTINEL = (T) -12345.625;
static long cases = 0, failed = 0;

static double activate(double x, int act) {
  switch (act) {
    case TG_ACT_RELU: return x > 0 ? x : 0;
    case TG_ACT_RELU6: return x > 0 ? (x < 6 ? x : 6) : 0;
    case TG_ACT_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case TG_ACT_SILU: return x / (1.0 + exp(-x));
    default: return x;
  }
}

static void report(int m, int n, int d, int act, int i, int j, double got, double want,
                   double tol) {
  failed++;
  if (failed <= 20)
    fprintf(stderr, "FAIL m=%d n=%d dilation=%d act=%d at (%d,%d): got %.9g want %.9g "
            "(tol %.3g)\n", m, n, d, act, i, j, got, want, tol);
}

static void run_case(int m, int n, int d, int act, double scale) {
  const int64_t ps = next_prime(n + 1), dps = d * ps;
  const size_t row_count = (size_t) (((TG_MR - 1) * TG_S + (TG_KW - 1) * d) * ps + n);
  region rr[TG_KH], rw, ry;
  const T* rows[TG_KH];
  T* xs[TG_KH];
  for (int kh = 0; kh < TG_KH; kh++) {
    T* x = guarded(row_count, &rr[kh]);
    for (size_t e = 0; e < row_count; e++)
      x[e] = (int64_t) e % ps < n ? (T) (scale * uniform()) : (T) NAN;
    rows[kh] = xs[kh] = x;
  }
  const size_t w_count = (size_t) TG_NR * (1 + TG_KH * TG_KW);
  T* w = guarded(w_count, &rw);
  for (size_t e = 0; e < w_count; e++) w[e] = (T) uniform();
  const int64_t ys = next_prime(n + 1);
  const size_t y_count = (size_t) ((m - 1) * ys + n);
  T* y = guarded(y_count, &ry);
  for (size_t e = 0; e < y_count; e++) y[e] = (int64_t) e % ys < n ? (T) NAN : SENTINEL;

  params_t params;
  params.act = act;
  TG_UKERNEL(m, n, rows, ps, dps, w, y, ys, &params);
  cases++;

  for (int i = 0; i < m; i++) {
    for (int j = 0; j < ys && (size_t) i * ys + j < y_count; j++) {
      const size_t idx = (size_t) i * ys + j;
      if (j >= n) {
        if (memcmp(&y[idx], &SENTINEL, sizeof(T)) != 0)
          report(m, n, d, act, i, j, y[idx], SENTINEL, 0);
        continue;
      }
      double acc = w[j], mag = fabs((double) w[j]);
      for (int kh = 0; kh < TG_KH; kh++)
        for (int kw = 0; kw < TG_KW; kw++) {
          const double p = (double) xs[kh][(i * TG_S + kw * d) * ps + j] *
                           (double) w[TG_NR * (1 + kh * TG_KW + kw) + j];
          acc += p;
          mag += fabs(p);
        }
      const double want = activate(acc, act);
      const double tol = 1.2 * TOL * sqrt((double) (TG_KH * TG_KW)) * mag + 1e-6 * fabs(want) + 1e-30;
      const double got = (double) y[idx];
      if (!(fabs(got - want) <= tol)) report(m, n, d, act, i, j, got, want, tol);
    }
  }
  for (int kh = 0; kh < TG_KH; kh++) release(&rr[kh]);
  release(&rw);
  release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++) {
      const int act = (m + n) % 5;
      run_case(m, n, 1, act, 1.0);
      if (TG_KW > 1 && (n == TG_NR || n % 3 == 1)) run_case(m, n, 2, (act + 1) % 5, 1.0);
    }
  for (int act = 0; act < 5; act++) run_case(TG_MR, TG_NR, 1, act, 8.0);
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
