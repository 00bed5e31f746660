/*
 * Half-accumulating GEMM micro-kernel tester: C (float16) = A B, or C + A B (accumulate), from
 * packed float16 panels, for every m <= MR and n <= NR (every row and column remainder), k 0-3
 * and 17, column strides of C 1 and 3 (prime row strides), accumulate 0 (NaN in C: never read)
 * and 1. Three checks per element:
 *   - the kernel's half equals the model of half accumulation, bit for bit: the sum starts at
 *     0 (or C) and takes the products in k order, each multiply-add rounded once to half (to
 *     nearest, ties to even), as FMLA .8h does; the model rounds with frexp/ldexp/nearbyint,
 *     not the kernels' bit manipulation;
 *   - on small integer-valued inputs, whose half sums are exact (|sums| <= 2048), the exact
 *     double sum;
 *   - on random data (k up to 300), within the K-scaled bound of a double reference of the
 *     half inputs: |C - exact| <= gamma_k (|C0| + sum |a b|), gamma_k = k u / (1 - k u),
 *     u = 2^-11 (half's unit roundoff).
 * A, B and C each end (or, alternately, start) at a PROT_NONE page; every element of C's
 * buffer outside the tile holds a sentinel that must survive.
 *
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_MR=.. -DTG_NR=.. -DTG_LANES=..
 * -DTG_ISA_ID=TG_ISA_<NAME> (-DTG_T=uint16_t); prints the COVER lines (ukernel_tester.h) and
 * "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77 (77: the CPU lacks the ISA).
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef uint16_t T;
#include "ukernel_tester.h"

static long cases = 0, failed = 0;

/* The nearest half to x (ties to even), as a double; Inf past the largest half. */
static double round_half(double x) {
  if (x != x || x == 0 || isinf(x)) return x;
  int e;
  frexp(x, &e);                 /* |x| in [2^(e-1), 2^e): the half ulp there is 2^(e-11) */
  int q = e - 11;
  if (q < -24) q = -24;         /* subnormal halves: a fixed 2^-24 grid */
  const double r = ldexp(nearbyint(ldexp(x, -q)), q);
  return fabs(r) > 65504.0 ? copysign(INFINITY, x) : r;
}

static double from_half(uint16_t h) {
  const int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  const double v = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(f | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* The bits of a half value x (exactly a half). */
static uint16_t to_half(double x) {
  const uint16_t sign = signbit(x) ? 0x8000 : 0;
  x = fabs(x);
  if (isinf(x)) return sign | 0x7c00;
  if (x < 0x1p-14) return sign | (uint16_t) (x * 0x1p24);
  int e;
  const double f = frexp(x, &e);  /* x = f 2^e, f in [0.5, 1) */
  return sign | (uint16_t) ((e + 14) << 10) | ((uint16_t) (f * 2048) & 0x3ff);
}

static uint16_t* guarded_u16(size_t count, region* r) {
  return (uint16_t*) guarded_bytes((count ? count : 1) * sizeof(uint16_t), guard_front, r);
}

static double value(int exact) {
  return exact ? (double) (int) (uniform() * 5) : round_half(uniform());
}

static void run_case(int m, int n, int k, int64_t cs_c, int accumulate, int exact) {
  region ra, rb, rc;
  guard_alternate();
  uint16_t* a = guarded_u16((size_t) (TG_MR * k), &ra);
  uint16_t* b = guarded_u16((size_t) (TG_NR * k), &rb);
  /* Packed panels: rows/columns past m/n are the driver's zero padding. */
  for (int p = 0; p < k; p++)
    for (int i = 0; i < TG_MR; i++) a[p * TG_MR + i] = i < m ? to_half(value(exact)) : 0;
  for (int p = 0; p < k; p++)
    for (int j = 0; j < TG_NR; j++) b[p * TG_NR + j] = j < n ? to_half(value(exact)) : 0;
  const int64_t rs_c = next_prime((int64_t) (n * cs_c + 1));
  const size_t c_count = (size_t) ((m - 1) * rs_c + (n - 1) * cs_c + 1);
  uint16_t* c = guarded_u16(c_count, &rc);
  uint16_t* c0 = malloc(c_count * sizeof(uint16_t));
  const uint16_t sentinel = 0x64d2;  /* 1234 */
  for (size_t q = 0; q < c_count; q++) c[q] = sentinel;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      c[i * rs_c + j * cs_c] = accumulate ? to_half(exact ? (int) (uniform() * 9) : round_half(uniform()))
                                          : 0x7e00;  /* NaN: must not be read */
  memcpy(c0, c, c_count * sizeof(uint16_t));
  TG_UKERNEL(m, n, k, a, b, c, rs_c, cs_c, accumulate);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  cases++;
  const double u = 0x1p-11, gamma = k * u / (1 - k * u);
  for (size_t q = 0; q < c_count; q++) {
    const int64_t i = (int64_t) q / rs_c, rest = (int64_t) q % rs_c;
    const int in_tile = rest % cs_c == 0 && rest / cs_c < n && i < m;
    if (in_tile) {
      const int64_t j = rest / cs_c;
      const double start = accumulate ? from_half(c0[q]) : 0;
      double model = start, exact_sum = start, mag = fabs(start);
      for (int p = 0; p < k; p++) {
        const double prod = from_half(a[p * TG_MR + i]) * from_half(b[p * TG_NR + j]);
        model = round_half(model + prod);
        exact_sum += prod;
        mag += fabs(prod);
      }
      const double got = from_half(c[q]);
      const int same_bits = c[q] == to_half(model) || (got != got && model != model);
      const double tol = exact ? 0 : gamma * mag;
      if (!same_bits || !(fabs(got - exact_sum) <= tol)) {
        if (++failed <= 20)
          fprintf(stderr, "FAIL m=%d n=%d k=%d cs_c=%ld accumulate=%d exact=%d at (%ld,%ld): got %.9g, "
                  "model %.9g, exact %.9g (bound %.3g)\n", m, n, k, (long) cs_c, accumulate, exact,
                  (long) i, (long) j, got, model, exact_sum, tol);
        break;
      }
    } else if (c[q] != sentinel) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL m=%d n=%d k=%d cs_c=%ld: wrote outside the tile at %zu\n", m, n, k,
                (long) cs_c, q);
      break;
    }
  }
  free(c0);
  release(&ra); release(&rb); release(&rc);
}

int main(void) {
  if (!cpu_supported()) return 77;
  const int ks[] = {0, 1, 2, 3, 17};
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (int q = 0; q < 5; q++)
        for (int s = 0; s < 2; s++)
          for (int x = 0; x < 2; x++) run_case(m, n, ks[q], s ? 3 : 1, x, 1);
  for (int m = 1; m <= TG_MR; m += TG_MR > 4 ? 3 : 1)
    for (int x = 0; x < 2; x++) run_case(m, TG_NR, 300, 1, x, 0);
  for (int n = 1; n <= TG_NR; n++) run_case(TG_MR, n, 64, 3, 1, 0);
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
