/*
 * Direct-convolution micro-kernel tester: runs one generated conv kernel through the case
 * matrix of its family and checks every result against a float64 reference.
 *
 * Built once per kernel (natively, or with aarch64-linux-gnu-gcc to run under qemu-aarch64):
 *   -DTG_T=float -DTG_DT=f32 -DTG_UKERNEL=<fn> -DTG_ISA_ID=TG_ISA_<NAME> -DTG_MR=.. -DTG_NR=..
 *   -DTG_KH=.. -DTG_KW=.. -DTG_S=<stride> -DTG_FIXED_C=<input channels, 0: any> -DTG_UNROLL=..
 *   -DTG_NCHW=0|1 (channel-first kernels: MR output channels x NR pixels, one pointer per tap)
 *
 * Cases: every m <= MR and n <= NR; input channels c in 1 .. 2*unroll+1 (every remainder of the
 * unrolled channel loop, alone and after a full step) and 37 (or the kernel's fixed count);
 * dilation 1 and 2 (the tap step dps = D*ps);
 * a prime pixel stride ps > c whose gap channels hold NaN (a kernel that reads past channel c
 * returns NaN); each filter row in its own allocation that ends at a PROT_NONE page right after
 * the last input the tile may read (MR pixels); the weight panel likewise; the output with a
 * prime pixel stride and sentinels in every gap; every activation. Any over-read or over-write
 * faults or is caught by a sentinel. Channel-first kernels: each tap's input in its own
 * allocation ending right after the last value read (channel c-1, S*NR values), a prime
 * channel stride whose gap holds NaN, and NaN in the odd values of stride-2 rows (read, then
 * dropped by the stride-2 load); the same m, n, c, output and activation cases. ReLU and ReLU6
 * once more for every m and n with positive inputs and weights of one sign per output channel
 * (alternating), scaled so that every exact result lies beyond the clamps at 0 and 6: both
 * sides of each clamp at every position of the tile.
 *
 * Prints the COVER and CLAMP lines (ukernel_tester.h) and "KERNEL <name> CASES <n> FAILED <f>";
 * exits 0 when all pass, 1 on failure, 77 when the CPU lacks the ISA.
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef TG_T T;
#include "ukernel_tester.h"

typedef CAT(CAT(tg_, TG_DT), _conv_params) params_t;

static const T SENTINEL = (T) -12345.625;
static long cases = 0, failed = 0;

/* 0: inputs U(-1, 1) (times the case's scale), weights U(-1, 1). +1 or -1: the clamp cases,
   inputs positive (times the scale), the weights of output channel j (the tile's column j:
   NR columns channels-last, MR rows channel-first) of sign clamp_sign * (-1)^j, magnitudes in
   [0.5, 1], biases U(-1, 1). */
static int clamp_sign = 0;
static inline double magnitude(void) { return 0.5 + 0.5 * fabs(uniform()); }
static inline double input_value(double scale) {
  return scale * (clamp_sign ? magnitude() : uniform());
}
static inline double weight_value(int64_t channel) {
  if (!clamp_sign) return uniform();
  return ((clamp_sign < 0) ^ (int) (channel & 1)) ? -magnitude() : magnitude();
}

/* act(x), noting which side of its clamps x fell at tile position pos. */
static double activate_at(double x, int act, int pos) {
  if (act == TG_ACT_RELU) clamp_seen("relu", 0, TG_MR * TG_NR, pos, x);
  if (act == TG_ACT_RELU6) {
    clamp_seen("relu6", 0, TG_MR * TG_NR, pos, x);
    clamp_seen("relu6", 6, TG_MR * TG_NR, pos, x);
  }
  switch (act) {
    case TG_ACT_RELU: return x > 0 ? x : 0;
    case TG_ACT_RELU6: return x > 0 ? (x < 6 ? x : 6) : 0;
    case TG_ACT_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case TG_ACT_SILU: return x / (1.0 + exp(-x));
    default: return x;
  }
}

static void report(int m, int n, int c, int d, int act, int i, int j, double got, double want,
                   double tol) {
  failed++;
  if (failed <= 20)
    fprintf(stderr, "FAIL m=%d n=%d c=%d dilation=%d act=%d at (%d,%d): got %.9g want %.9g "
            "(tol %.3g)\n", m, n, c, d, act, i, j, got, want, tol);
}

#if !TG_NCHW
static void run_case(int m, int n, int c, int d, int act, double scale) {
  const int64_t ps = next_prime(c + 1), dps = d * ps;
  /* The last element a tile may read: pixel MR-1, tap KW-1, channel c-1. */
  const size_t row_count = (size_t) (((TG_MR - 1) * TG_S + (TG_KW - 1) * d) * ps + c);
  region rr[TG_KH], rw, ry;
  const T* rows[TG_KH];
  T* xs[TG_KH];
  for (int kh = 0; kh < TG_KH; kh++) {
    T* x = guarded(row_count, &rr[kh]);
    for (size_t e = 0; e < row_count; e++)
      x[e] = (int64_t) e % ps < c ? (T) input_value(scale) : (T) NAN;  /* NaN between pixels */
    rows[kh] = xs[kh] = x;
  }
  const size_t w_count = (size_t) TG_NR * (1 + (size_t) TG_KH * TG_KW * c);
  T* w = guarded(w_count, &rw);
  for (size_t e = 0; e < w_count; e++)
    w[e] = (T) (e < TG_NR ? uniform() : weight_value((int64_t) e % TG_NR));
  const int64_t ys = next_prime(n + 1);
  const size_t y_count = (size_t) ((m - 1) * ys + n);
  T* y = guarded(y_count, &ry);
  for (size_t e = 0; e < y_count; e++) y[e] = (int64_t) e % ys < n ? (T) NAN : SENTINEL;

  params_t params;
  params.act = act;
  TG_UKERNEL(m, n, c, rows, ps, dps, w, y, ys, &params);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  if (!TG_FIXED_C) cover("c", TG_UNROLL, c);
  cases++;

  for (int i = 0; i < m; i++) {
    for (int j = 0; j < ys && (size_t) i * ys + j < y_count; j++) {
      const size_t idx = (size_t) i * ys + j;
      if (j >= n) {
        if (memcmp(&y[idx], &SENTINEL, sizeof(T)) != 0)
          report(m, n, c, d, act, i, j, y[idx], SENTINEL, 0);
        continue;
      }
      double acc = w[j], mag = fabs((double) w[j]);
      for (int kh = 0; kh < TG_KH; kh++)
        for (int kw = 0; kw < TG_KW; kw++)
          for (int ci = 0; ci < c; ci++) {
            const double p = (double) xs[kh][(i * TG_S + kw * d) * ps + ci] *
                             (double) w[TG_NR * (1 + (size_t) (kh * TG_KW + kw) * c + ci) + j];
            acc += p;
            mag += fabs(p);
          }
      const double want = activate_at(acc, act, i * TG_NR + j);
      const int k = TG_KH * TG_KW * c;
      const double tol = 1.2 * TOL * sqrt((double) k) * mag + 1e-6 * fabs(want) + 1e-30;
      const double got = (double) y[idx];
      if (!(fabs(got - want) <= tol)) report(m, n, c, d, act, i, j, got, want, tol);
    }
  }
  for (int kh = 0; kh < TG_KH; kh++) release(&rr[kh]);
  release(&rw);
  release(&ry);
}

#endif

#if TG_NCHW
typedef void (*nchw_fn)(int64_t, int64_t, int64_t, const T* const*, int64_t, const T*, T*,
                        int64_t, const params_t*);

static void run_nchw_case(int m, int n, int c, int act, double scale) {
  enum { TAPS = TG_KH * TG_KW };
  const int64_t span = (int64_t) TG_S * TG_NR, cs = next_prime(span + 1);
  const size_t count = (size_t) ((c - 1) * cs + span);
  region rt[TAPS], rw, ry;
  const T* taps[TAPS];
  T* xs[TAPS];
  for (int t = 0; t < TAPS; t++) {
    T* x = guarded(count, &rt[t]);
    for (size_t e = 0; e < count; e++) {
      const int64_t off = (int64_t) e % cs;
      x[e] = off < span && off % TG_S == 0 ? (T) input_value(scale) : (T) NAN;
    }
    taps[t] = xs[t] = x;
  }
  const size_t w_count = (size_t) TG_MR * (1 + (size_t) TAPS * c);
  T* w = guarded(w_count, &rw);
  for (size_t e = 0; e < w_count; e++)
    w[e] = (T) (e < TG_MR ? uniform() : weight_value((int64_t) e % TG_MR));
  const int64_t ys = next_prime(n + 1);
  const size_t y_count = (size_t) ((m - 1) * ys + n);
  T* y = guarded(y_count, &ry);
  for (size_t e = 0; e < y_count; e++) y[e] = (int64_t) e % ys < n ? (T) NAN : SENTINEL;
  params_t params;
  params.act = act;
  const nchw_fn kernel = TG_UKERNEL;
  kernel(m, n, c, taps, cs, w, y, ys, &params);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  if (!TG_FIXED_C) cover("c", TG_UNROLL, c);
  cases++;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < ys && (size_t) i * ys + j < y_count; j++) {
      const size_t idx = (size_t) i * ys + j;
      if (j >= n) {
        if (memcmp(&y[idx], &SENTINEL, sizeof(T)) != 0) report(m, n, c, 1, act, i, j, y[idx], SENTINEL, 0);
        continue;
      }
      double acc = w[i], mag = fabs((double) w[i]);
      for (int t = 0; t < TAPS; t++)
        for (int ci = 0; ci < c; ci++) {
          const double p = (double) w[TG_MR * (1 + (size_t) t * c + ci) + i] *
                           (double) xs[t][ci * cs + TG_S * j];
          acc += p;
          mag += fabs(p);
        }
      const double want = activate_at(acc, act, i * TG_NR + j);
      const double tol = 1.2 * TOL * sqrt((double) (TAPS * c)) * mag + 1e-6 * fabs(want) + 1e-30;
      if (!(fabs((double) y[idx] - want) <= tol)) report(m, n, c, 1, act, i, j, y[idx], want, tol);
    }
  for (int t = 0; t < TAPS; t++) release(&rt[t]);
  release(&rw);
  release(&ry);
}
#endif

int main(void) {
  if (!cpu_supported()) return 77;
  const int u = TG_UNROLL;
  /* c: every remainder of the unrolled channel loop, alone and after a full step; and 37 */
  int cs[2 * TG_UNROLL + 2], nc = 0;
  if (TG_FIXED_C) {
    cs[nc++] = TG_FIXED_C;
  } else {
    for (int c = 1; c <= 2 * u + 1; c++) cs[nc++] = c;
    cs[nc++] = 37;
  }
  /* The clamp cases: |exact results| in [10, 40] + bias, beyond both clamps. */
  const int c_clamp = cs[0];
  const double clamp_scale = 40.0 / (TG_KH * TG_KW * c_clamp);
#if TG_NCHW
  for (int ci = 0; ci < nc; ci++)
    for (int m = 1; m <= TG_MR; m++)
      for (int n = 1; n <= TG_NR; n++) run_nchw_case(m, n, cs[ci], (m + n + ci) % 5, 1.0);
  for (int act = 0; act < 5; act++) run_nchw_case(TG_MR, TG_NR, cs[nc - 1], act, 8.0);
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (clamp_sign = -1; clamp_sign <= 1; clamp_sign += 2) {
        run_nchw_case(m, n, c_clamp, TG_ACT_RELU, clamp_scale);
        run_nchw_case(m, n, c_clamp, TG_ACT_RELU6, clamp_scale);
      }
#else
  for (int ci = 0; ci < nc; ci++)
    for (int m = 1; m <= TG_MR; m++)
      for (int n = 1; n <= TG_NR; n++) {
        const int act = (m + n + ci) % 5;
        run_case(m, n, cs[ci], 1, act, 1.0);
        if (TG_KW > 1 && (n == TG_NR || n == 1)) run_case(m, n, cs[ci], 2, act, 1.0);
      }
  /* The activations over a wide range of inputs (exp's clamps, erfc's tails). */
  for (int act = 0; act < 5; act++) run_case(TG_MR, TG_NR, cs[nc - 1], 1, act, 8.0);
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (clamp_sign = -1; clamp_sign <= 1; clamp_sign += 2) {
        run_case(m, n, c_clamp, 1, TG_ACT_RELU, clamp_scale);
        run_case(m, n, c_clamp, 1, TG_ACT_RELU6, clamp_scale);
      }
#endif
  clamp_sign = 0;
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
