/*
 * bfloat16 GEMV micro-kernel tester, both forms.
 * Dot form (NR = 1): y[i*inc_y] (float32) = alpha * dot(A[i, :k], x) + beta * y[i*inc_y] for
 * every m <= MR, k in 0 .. 2KR+1 (every remainder of the KR step, odd k too, alone and after a
 * full one), 300 and 1001, prime row strides of A, prime inc_y with sentinels between the
 * outputs.
 * Axpy form (MR = 1, NR > 1): y[j] (float32) = alpha * sum_r x[r] * A[r, j] +
 * beta * y[j] with A and x bfloat16, for n around the vector width and NR and k around KR, then
 * n = 1 .. 2NR+1 (every column remainder of the NR step, alone and after a full one), k = 0 ..
 * 2KR+1 (every row remainder of a pass, odd k: a row without its pair) and rows whole lines
 * apart starting at every offset into a line (every count of the kernel's head columns); prime
 * row strides of A elsewhere (the gap between rows poisoned with NaN, so a column past n that
 * reaches y shows). beta 0 with NaN in y (never read), 1, 0.5, -2; alpha 1, -1.5, 0.75, 0.
 * Integer-valued inputs (|v| <= 4) make every sum exact in float32: the result must match the
 * double reference bit for bit; random inputs are checked within a K-scaled float32 bound.
 * Every buffer ends (or, alternately, starts) at a PROT_NONE page so an over-read of a row, of x
 * or of y faults.
 *
 * Both: A and x bfloat16.
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_MR=..  -DTG_NR=.. -DTG_KR=.. -DTG_LANES=..
 * -DTG_ISA_ID=TG_ISA_<NAME>; prints the COVER lines (ukernel_tester.h) and
 * "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77 (77: the CPU lacks the ISA).
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef float T;  /* the tester's guarded buffers hold y; A and x get their own below */
#include "ukernel_tester.h"

#define LINE 32  /* bfloat16 values in a 64-byte line */

static long cases = 0, failed = 0;

static uint16_t to_bf16(float x) {  /* truncation: any bfloat16 is a valid input */
  uint32_t b;
  memcpy(&b, &x, 4);
  return (uint16_t) (b >> 16);
}

static double from_bf16(uint16_t h) {
  const uint32_t b = (uint32_t) h << 16;
  float x;
  memcpy(&x, &b, 4);
  return x;
}

static uint16_t* guarded_u16(size_t count, region* r) {
  return (uint16_t*) guarded_bytes((count ? count : 1) * sizeof(uint16_t), guard_front, r);
}

static double value(int exact) { return exact ? (double) (int) (uniform() * 5) : uniform(); }

#if TG_NR > 1
/* n columns of y from k rows of A. lead < 0: a prime row stride; else the rows are whole lines
   apart and start lead values into a line (the kernel's head columns). */
static void run_case(int n, int k, double alpha, double beta, int lead, int exact) {
  region ra, rx, ry;
  guard_alternate();
  const int64_t rs_a = lead < 0 ? next_prime(n + 1) : (n + 1 + LINE - 1) / LINE * LINE;
  const size_t a_count = k ? (size_t) ((k - 1) * rs_a + n) : 0;
  const size_t slack = lead < 0 ? 0 : (size_t) LINE;  /* room to move the start into a line */
  uint16_t* a = guarded_u16(a_count + slack, &ra);
  for (size_t i = 0; i < a_count + slack; i++) a[i] = 0x7FC0;  /* NaN */
  if (lead >= 0)
    a += (size_t) ((lead * 2 - (int64_t) ((uintptr_t) a % 64) + 64) % 64) / 2;
  for (size_t i = 0; i < a_count; i++)
    if ((size_t) (i % rs_a) < (size_t) n) a[i] = to_bf16((float) value(exact));
  uint16_t* x = guarded_u16((size_t) k, &rx);
  for (int i = 0; i < k; i++) x[i] = to_bf16((float) value(exact));
  float* y = guarded((size_t) n, &ry);
  float* y0 = malloc(((size_t) n + 1) * sizeof(float));
  for (int j = 0; j < n; j++) y0[j] = y[j] = beta == 0 ? NAN : (float) value(exact);
  TG_UKERNEL(n, k, a, rs_a, x, y, 1, (float) alpha, (float) beta);
  const int64_t head_cols = lead < 0 ? 0 : (LINE - lead) % LINE;
  const int64_t head = head_cols < n ? head_cols : n;
  cover("n", TG_NR, n - head);
  cover("k", TG_KR, k);
  if (lead >= 0 && TG_LANES > 1) cover("head", LINE, head_cols);  /* scalar: no head */
  cases++;
  for (int j = 0; j < n; j++) {
    double acc = 0, mag = 0;
    for (int r = 0; r < k; r++) {
      const double p = from_bf16(a[r * rs_a + j]) * from_bf16(x[r]);
      acc += p;
      mag += fabs(p);
    }
    double want = alpha * acc;
    mag = fabs(alpha) * mag;
    if (beta != 0) { want += beta * (double) y0[j]; mag += fabs(beta * (double) y0[j]); }
    const double tol = exact ? 0 : 1e-5 * sqrt((double) (k > 1 ? k : 1)) * (mag + 1e-30) + 1e-30;
    if (!(fabs((double) y[j] - want) <= tol)) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL n=%d k=%d alpha=%g beta=%g lead=%d exact=%d column %d: got %.9g "
                "want %.9g\n", n, k, alpha, beta, lead, exact, j, (double) y[j], want);
      break;
    }
  }
  free(y0);
  release(&ra); release(&rx); release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  const int ns[] = {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, TG_NR - 1, TG_NR, TG_NR + 1,
                    2 * TG_NR + 19, 300};
  const int ks[] = {0, 1, 2, TG_KR - 1, TG_KR, TG_KR + 1, 2 * TG_KR + 3, 37};
  for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++)
    for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
      const int n = ns[ni], k = ks[ki];
      if (n < 1 || (ki > 0 && k == ks[ki - 1])) continue;
      for (int e = 0; e < 2; e++) {
        run_case(n, k, 1.0, 0.0, -1, e);
        run_case(n, k, -1.5, 1.0, -1, e);
        run_case(n, k, 0.0, 0.5, -1, e);
        run_case(n, k, 0.75, -2.0, -1, e);
      }
      /* rows whole lines apart, starting at a few offsets into a line */
      for (int lead = 0; lead < LINE; lead += lead < 2 ? 1 : 5) {
        run_case(n, k, 1.0, 0.0, lead, 1);
        run_case(n, k, 0.75, -2.0, lead, 0);
      }
    }
  /* Every remainder of every tiled dimension: columns (a full pass of KR rows and the
     remainder rows), rows, and the head columns at every offset into a line. */
  for (int n = 1; n <= 2 * TG_NR + 1; n++) {
    run_case(n, TG_KR + 3, 1.0, 0.0, -1, 1);
    run_case(n, TG_KR + 3, -1.5, 1.0, -1, 0);
  }
  for (int k = 0; k <= 2 * TG_KR + 1; k++) {
    run_case(TG_NR + 5, k, 1.0, 0.0, -1, 1);
    run_case(3, k, 0.75, -2.0, -1, 0);
  }
  const int hn[] = {1, 3, TG_NR + 1, 2 * TG_NR + 19};
  for (int lead = 0; lead < LINE; lead++)
    for (int i = 0; i < 4; i++) {
      run_case(hn[i], TG_KR + 1, 1.0, 0.0, lead, 1);
      run_case(hn[i], 2 * TG_KR, 0.75, -2.0, lead, 0);
    }
  run_case(1000, 1001, 1.0, 0.5, -1, 0);  /* a long k: the bound at depth */
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
#else
static const float SENTINEL = -777.25f;

/* m <= MR rows of A against x. */
static void run_case(int m, int k, double alpha, double beta, int exact) {
  region ra, rx, ry;
  guard_alternate();
  const int64_t rs_a = next_prime(k + 1);
  const size_t a_count = (size_t) ((m - 1) * rs_a + k);
  uint16_t* a = guarded_u16(a_count, &ra);
  for (size_t i = 0; i < a_count; i++)
    a[i] = (int64_t) (i % rs_a) < k ? to_bf16((float) value(exact)) : 0x7FC0;  /* NaN gaps */
  uint16_t* x = guarded_u16((size_t) k, &rx);
  for (int i = 0; i < k; i++) x[i] = to_bf16((float) value(exact));
  const int64_t inc_y = m == 1 ? 1 : 3;
  const size_t y_count = (size_t) ((m - 1) * inc_y + 1);
  float* y = guarded(y_count, &ry);
  float* y0 = malloc(y_count * sizeof(float));
  for (size_t i = 0; i < y_count; i++) {
    y[i] = i % inc_y ? SENTINEL : (beta == 0 ? NAN : (float) value(exact));
    y0[i] = y[i];
  }
  TG_UKERNEL(m, k, a, rs_a, x, y, inc_y, (float) alpha, (float) beta);
  cover("m", TG_MR, m);
  cover("k", TG_KR, k);
  cases++;
  for (size_t q = 0; q < y_count; q++) {
    if (q % inc_y) {
      if (y[q] != SENTINEL) {
        if (++failed <= 20) fprintf(stderr, "FAIL m=%d k=%d: wrote between outputs at %zu\n", m, k, q);
        break;
      }
      continue;
    }
    const int i = (int) (q / inc_y);
    double acc = 0, mag = 0;
    for (int r = 0; r < k; r++) {
      const double p = from_bf16(a[i * rs_a + r]) * from_bf16(x[r]);
      acc += p;
      mag += fabs(p);
    }
    double want = alpha * acc;
    mag = fabs(alpha) * mag;
    if (beta != 0) { want += beta * (double) y0[q]; mag += fabs(beta * (double) y0[q]); }
    const double tol = exact ? 0 : 1e-5 * sqrt((double) (k > 1 ? k : 1)) * (mag + 1e-30) + 1e-30;
    if (!(fabs((double) y[q] - want) <= tol)) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL m=%d k=%d alpha=%g beta=%g exact=%d row %d: got %.9g want %.9g\n",
                m, k, alpha, beta, exact, i, (double) y[q], want);
      break;
    }
  }
  free(y0);
  release(&ra); release(&rx); release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  for (int m = 1; m <= TG_MR; m++) {
    for (int k = 0; k <= 2 * TG_KR + 1; k++)
      for (int e = 0; e < 2; e++) {
        run_case(m, k, 1.0, 0.0, e);
        run_case(m, k, -1.5, 1.0, e);
        run_case(m, k, 0.0, 0.5, e);
        run_case(m, k, 0.75, -2.0, e);
      }
    run_case(m, 300, 1.0, 0.5, 1);
    run_case(m, 1001, 0.75, -2.0, 0);  /* a long k: the bound at depth */
  }
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
#endif
