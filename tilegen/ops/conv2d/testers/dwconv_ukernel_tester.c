/*
 * Depthwise-convolution micro-kernel tester: runs one generated dwconv kernel through the case
 * matrix of its family and checks every result against a float64 reference.
 *
 * Built once per kernel (natively, or with aarch64-linux-gnu-gcc to run under qemu-aarch64):
 *   -DTG_T=float -DTG_DT=f32 -DTG_UKERNEL=<fn> -DTG_ISA_ID=TG_ISA_<NAME> -DTG_MR=.. -DTG_NR=..
 *   -DTG_KH=.. -DTG_KW=.. -DTG_S=<stride> -DTG_NCHW=0|1 (channel-first kernels: MR channels x
 *   NR pixels, one pointer per tap, channel i at i*cs) -DTG_D1=0|1 (unit dilation only: dps unused)
 *   -DTG_ROW_TILES=0|1 (channel-first row tiles, "_nchw_rows": MR output rows of one channel)
 *   -DTG_REACH=<values a row tile reads before its centred input pointer and past NR pixels>
 *   -DTG_STEP=<pixels a channels-last tile computes at a time> -DTG_ROWS=<output rows a
 *   channels-last call may compute ("rN" kernels; 1 otherwise)> -DTG_GROUP=<pixels per step of
 *   a channels-last tile>
 *
 * Cases: every m <= MR and n <= NR; dilation 1 and 2; a prime pixel stride ps > n whose
 * channels past n hold NaN (a kernel that uses them returns NaN); each filter row in its own
 * allocation ending at a PROT_NONE page right after channel n-1 of the last pixel the tile may
 * read (pixel round_up(m, TG_STEP) - 1, tap KW-1: the driver plans its border copies by that
 * reach); the weight panel likewise; the output with a prime pixel stride
 * and sentinels in every gap; every activation, and a wide input range; every row count
 * nrows <= TG_ROWS (input row r + kh for output row r, the output rows a prime stride apart
 * with sentinels between them). Channel-first kernels:
 * each tap's input in its own allocation ending right after the last value of channel m-1 (a
 * kernel must not touch channel m), a prime channel stride whose gap holds NaN, NaN in the odd
 * values of stride-2 rows; the same m, n, output and activation cases. Row tiles: m + KH - 1
 * input rows of a prime-ish pitch (a whole number of vectors) in one allocation that starts
 * TG_REACH values before the centred pointer or ends right after the last value the tile may
 * read, the columns no output pixel q < n uses NaN, the output rows a prime pitch apart with
 * sentinels between them. ReLU and ReLU6 once more for every m and n (and every output row)
 * with positive inputs and weights of one sign per channel (alternating), scaled so that every
 * exact result lies beyond the clamps at 0 and 6: both sides of each clamp at every position of
 * the tile.
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

#ifndef TG_ROWS
#define TG_ROWS 1
#endif
/* Tile positions whose clamps are tracked: output rows x MR x NR. */
#define POSITIONS (TG_ROWS * TG_MR * TG_NR)

/* 0: inputs U(-1, 1) (times the case's scale), weights U(-1, 1). +1 or -1: the clamp cases,
   inputs positive (times the scale), the weights of channel j of sign clamp_sign * (-1)^j,
   magnitudes in [0.5, 1], biases U(-1, 1). */
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
  if (act == TG_ACT_RELU) clamp_seen("relu", 0, POSITIONS, pos, x);
  if (act == TG_ACT_RELU6) {
    clamp_seen("relu6", 0, POSITIONS, pos, x);
    clamp_seen("relu6", 6, POSITIONS, pos, x);
  }
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

/* A guarded panel of count weights for `channels` channels: biases, then the taps' weights. */
static inline T* weight_panel(size_t count, int64_t channels, region* r) {
  T* w = guarded(count, r);
  for (size_t e = 0; e < count; e++)
    w[e] = (T) (e < (size_t) channels ? uniform() : weight_value((int64_t) e % channels));
  return w;
}

/* A guarded output of m rows of n values ys apart: NaN where the kernel must write, the
   sentinel in the gaps it must not touch. */
static inline T* sentinel_output(int m, int n, int64_t ys, size_t* count, region* r) {
  *count = (size_t) ((m - 1) * ys + n);
  T* y = guarded(*count, r);
  for (size_t e = 0; e < *count; e++) y[e] = (int64_t) e % ys < n ? (T) NAN : SENTINEL;
  return y;
}

#if !TG_NCHW
enum { IN_ROWS = TG_KH + TG_ROWS - 1 };

static void run_case(int m, int n, int d, int act, double scale, int nrows) {
  const int64_t ps = next_prime(n + 1), dps = d * ps;
  const int reach = (m + TG_STEP - 1) / TG_STEP * TG_STEP;  /* pixels the tile computes */
  const size_t row_count = (size_t) (((reach - 1) * TG_S + (TG_KW - 1) * d) * ps + n);
  const int in_rows = TG_KH + nrows - 1;
  region rr[IN_ROWS], rw, ry;
  const T* rows[IN_ROWS];
  T* xs[IN_ROWS];
  for (int kh = 0; kh < in_rows; kh++) {
    T* x = guarded(row_count, &rr[kh]);
    for (size_t e = 0; e < row_count; e++)
      x[e] = (int64_t) e % ps < n ? (T) input_value(scale) : (T) NAN;
    rows[kh] = xs[kh] = x;
  }
  T* w = weight_panel((size_t) TG_NR * (1 + TG_KH * TG_KW), TG_NR, &rw);
  const int64_t ys = next_prime(n + 1);
  const size_t row_y = (size_t) ((m - 1) * ys + n);       /* one output row's span */
  const int64_t yrs = next_prime((int64_t) row_y + 2);    /* sentinels between the rows */
  const size_t y_count = (size_t) (nrows - 1) * (size_t) yrs + row_y;
  T* y = guarded(y_count, &ry);
  for (size_t e = 0; e < y_count; e++) {
    const int64_t in_row = (int64_t) e % yrs;
    y[e] = in_row < (int64_t) row_y && in_row % ys < n ? (T) NAN : SENTINEL;
  }

  params_t params;
  params.act = act;
  TG_UKERNEL(m, n, rows, ps, dps, w, y, ys, nrows, yrs, &params);
  cover("m", TG_MR, m);
  cover("m_group", TG_GROUP, m);
  cover("n", TG_NR, n);
  cover("rows", TG_ROWS, nrows);
  cases++;

  for (size_t idx = 0; idx < y_count; idx++) {
    const int r = (int) (idx / (size_t) yrs), in_row = (int) (idx % (size_t) yrs);
    const int i = in_row / (int) ys, j = in_row % (int) ys;
    if (in_row >= (int) row_y || j >= n) {
      if (memcmp(&y[idx], &SENTINEL, sizeof(T)) != 0)
        report(m, n, d, act, r * 1000 + i, j, y[idx], SENTINEL, 0);
      continue;
    }
    double acc = w[j], mag = fabs((double) w[j]);
    for (int kh = 0; kh < TG_KH; kh++)
      for (int kw = 0; kw < TG_KW; kw++) {
        const double p = (double) xs[r + kh][(i * TG_S + kw * d) * ps + j] *
                         (double) w[TG_NR * (1 + kh * TG_KW + kw) + j];
        acc += p;
        mag += fabs(p);
      }
    const double want = activate_at(acc, act, (r * TG_MR + i) * TG_NR + j);
    const double tol = 1.2 * TOL * sqrt((double) (TG_KH * TG_KW)) * mag + 1e-6 * fabs(want) + 1e-30;
    const double got = (double) y[idx];
    if (!(fabs(got - want) <= tol)) report(m, n, d, act, r * 1000 + i, j, got, want, tol);
  }
  for (int kh = 0; kh < in_rows; kh++) release(&rr[kh]);
  release(&rw);
  release(&ry);
}

#endif

#if TG_NCHW && TG_ROW_TILES
static void run_rows_case(int m, int n, int act, double scale) {
  enum { P = TG_KW / 2, RF = TG_REACH };
  const int64_t cs = (TG_NR + 2 * RF + 16 + 15) / 16 * 16;  /* a pitch with slack columns */
  const int in_rows = m + TG_KH - 1;
  const int64_t span = (in_rows - 1) * cs + TG_NR + RF;     /* from x to the last value read */
  const size_t count = (size_t) (RF + (span + 15) / 16 * 16);
  region rx, rw, ry;
  T* buf = guarded(count, &rx);
  T* x = buf + RF;
  for (size_t e = 0; e < count; e++) {
    const int64_t off = (int64_t) e - RF, col = ((off % cs) + cs) % cs;
    const int64_t c = col >= cs - RF ? col - cs : col;  /* columns just before a row: -RF.. */
    x[off] = c >= -P && c < n - 1 + TG_KW - P ? (T) input_value(scale) : (T) NAN;
  }
  T* w = weight_panel((size_t) (1 + TG_KH * TG_KW), 1, &rw);
  const int64_t ys = next_prime(n + 1);
  size_t y_count;
  T* y = sentinel_output(m, n, ys, &y_count, &ry);
  params_t params;
  params.act = act;
  const T* taps[1] = {x};
  TG_UKERNEL(m, n, taps, cs, w, y, ys, &params);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  cases++;
  for (int r = 0; r < m; r++)
    for (int q = 0; q < ys && (size_t) r * ys + q < y_count; q++) {
      const size_t idx = (size_t) r * ys + q;
      if (q >= n) {
        if (memcmp(&y[idx], &SENTINEL, sizeof(T)) != 0) report(m, n, 1, act, r, q, y[idx], SENTINEL, 0);
        continue;
      }
      double acc = w[0], mag = fabs((double) w[0]);
      for (int kh = 0; kh < TG_KH; kh++)
        for (int kw = 0; kw < TG_KW; kw++) {
          const double p = (double) w[1 + kh * TG_KW + kw] * (double) x[(r + kh) * cs + q + kw - P];
          acc += p;
          mag += fabs(p);
        }
      const double want = activate_at(acc, act, r * TG_NR + q);
      const double tol = 1.2 * TOL * sqrt((double) (TG_KH * TG_KW)) * mag + 1e-6 * fabs(want) + 1e-30;
      if (!(fabs((double) y[idx] - want) <= tol)) report(m, n, 1, act, r, q, y[idx], want, tol);
    }
  release(&rx);
  release(&rw);
  release(&ry);
}
#elif TG_NCHW
static void run_nchw_case(int m, int n, int act, double scale) {
  enum { TAPS = TG_KH * TG_KW };
  const int64_t span = (int64_t) TG_S * TG_NR, cs = next_prime(span + 1);
  const size_t count = (size_t) ((m - 1) * cs + span);
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
  T* w = weight_panel((size_t) TG_MR * (1 + TAPS), TG_MR, &rw);
  const int64_t ys = next_prime(n + 1);
  size_t y_count;
  T* y = sentinel_output(m, n, ys, &y_count, &ry);
  params_t params;
  params.act = act;
  TG_UKERNEL(m, n, taps, cs, w, y, ys, &params);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  cases++;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < ys && (size_t) i * ys + j < y_count; j++) {
      const size_t idx = (size_t) i * ys + j;
      if (j >= n) {
        if (memcmp(&y[idx], &SENTINEL, sizeof(T)) != 0) report(m, n, 1, act, i, j, y[idx], SENTINEL, 0);
        continue;
      }
      double acc = w[i], mag = fabs((double) w[i]);
      for (int t = 0; t < TAPS; t++) {
        const double p = (double) w[TG_MR * (1 + t) + i] * (double) xs[t][i * cs + TG_S * j];
        acc += p;
        mag += fabs(p);
      }
      const double want = activate_at(acc, act, i * TG_NR + j);
      const double tol = 1.2 * TOL * sqrt((double) TAPS) * mag + 1e-6 * fabs(want) + 1e-30;
      if (!(fabs((double) y[idx] - want) <= tol)) report(m, n, 1, act, i, j, y[idx], want, tol);
    }
  for (int t = 0; t < TAPS; t++) release(&rt[t]);
  release(&rw);
  release(&ry);
}
#endif

int main(void) {
  if (!cpu_supported()) return 77;
  /* The clamp cases: |exact results| in [10, 40] + bias, beyond both clamps. */
  const double clamp_scale = 40.0 / (TG_KH * TG_KW);
#if TG_NCHW && TG_ROW_TILES
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++) {
      guard_alternate();
      run_rows_case(m, n, (m + n) % 5, 1.0);
    }
  for (int act = 0; act < 5; act++) run_rows_case(TG_MR, TG_NR, act, 8.0);
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (clamp_sign = -1; clamp_sign <= 1; clamp_sign += 2) {
        run_rows_case(m, n, TG_ACT_RELU, clamp_scale);
        run_rows_case(m, n, TG_ACT_RELU6, clamp_scale);
      }
#elif TG_NCHW
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++) run_nchw_case(m, n, (m + n) % 5, 1.0);
  for (int act = 0; act < 5; act++) run_nchw_case(TG_MR, TG_NR, act, 8.0);
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (clamp_sign = -1; clamp_sign <= 1; clamp_sign += 2) {
        run_nchw_case(m, n, TG_ACT_RELU, clamp_scale);
        run_nchw_case(m, n, TG_ACT_RELU6, clamp_scale);
      }
#else
  for (int nrows = 1; nrows <= TG_ROWS; nrows++) {
    for (int m = 1; m <= TG_MR; m++)
      for (int n = 1; n <= TG_NR; n++) {
        const int act = (m + n + nrows) % 5;
        run_case(m, n, 1, act, 1.0, nrows);
        if (TG_KW > 1 && !TG_D1 && (n == TG_NR || n % 3 == 1))
          run_case(m, n, 2, (act + 1) % 5, 1.0, nrows);
      }
    for (int act = 0; act < 5; act++) run_case(TG_MR, TG_NR, 1, act, 8.0, nrows);
  }
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (clamp_sign = -1; clamp_sign <= 1; clamp_sign += 2) {
        run_case(m, n, 1, TG_ACT_RELU, clamp_scale, TG_ROWS);
        run_case(m, n, 1, TG_ACT_RELU6, clamp_scale, TG_ROWS);
      }
#endif
  clamp_sign = 0;
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
