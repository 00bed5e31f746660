/*
 * Quantized-weight product micro-kernel tester: Y = X W^T over nb blocks of 32, for every
 * m <= MR and n <= NR (every row and column remainder), nb 0-3 and 17, y's row stride at a
 * prime. The weight panel is built in the packed layout (qgemv.py): random half scales
 * (normal, subnormal and zero ones, both signs), q4_1 minimums, random codes stored with the
 * kernel's code offset; activation codes over all of -127..127 and blocks of all -127 / all
 * 127 with all-15 / all-0 codes (the largest sums). dx is random, sx = dx * the block's code
 * sum, as the driver makes them. The reference sums the weights' values (qgemv.py's formulas,
 * from the codes before any offset) times dx * code in double; the result must agree within
 * TOL * sqrt(32 nb) of the sum of |terms|. x, xs, w and y each end (or, alternately, start) at
 * a PROT_NONE page, and y's buffer outside the tile holds a sentinel that must survive.
 *
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_MR=.. -DTG_NR=.. -DTG_LANES=.. -DTG_FORMAT=0|1|2
 * -DTG_OFFSET=.. -DTG_ISA_ID=TG_ISA_<NAME>; prints the COVER lines (ukernel_tester.h) and
 * "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77 (77: the CPU lacks the ISA).
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef float T;
#include "ukernel_tester.h"

#define NIBBLES (TG_FORMAT != 2)
#define HAS_MIN (TG_FORMAT == 1 || TG_FORMAT == 3) /* a second half: q4_1's minimum, q4_z's zero */
#define HDR (HAS_MIN ? 4 : 2)
#define CODE_BYTES (NIBBLES ? 16 : 32)
#define BLOCK_BYTES (TG_NR * (HDR + CODE_BYTES))

static long cases = 0, failed = 0;

enum fill { RANDOM, EXTREME_LOW, EXTREME_HIGH };

static double half_value(uint16_t h) {
  const int e = (h >> 10) & 31, f = h & 1023;
  const double v = e == 0 ? ldexp(f, -24) : ldexp(1024 + f, e - 25);
  return (h & 0x8000) ? -v : v;
}

static uint16_t random_half(void) {
  const double u = uniform();
  uint16_t h;
  if (u < -0.9) h = 0;                                                  /* zero */
  else if (u < -0.8) h = (uint16_t) (1 + (int) ((uniform() + 1) * 500));  /* subnormal */
  else h = (uint16_t) (((10 + (int) ((uniform() + 1) * 4)) << 10) | (int) ((uniform() + 1) * 511));
  return (uint16_t) (h | (uniform() < 0 ? 0x8000 : 0));
}

/* The value code c (as the format stores it, before the kernel's offset) stands for. */
static double weight_value(int c, double d, double mn) {
  if (TG_FORMAT == 0) return (c - 8) * d;
  if (TG_FORMAT == 1) return c * d + mn;
  if (TG_FORMAT == 3) return (c - mn) * d;  /* mn: the zero point */
  return c * d;  /* q8_0: c signed */
}

static void run_case(int m, int n, int nb, enum fill fill) {
  region rx, rs, rw, ry;
  guard_alternate();
  const int64_t k = 32 * (int64_t) nb, ldx = k + 3, ldxs = 2 * (int64_t) nb + 1;
  int8_t* x = (int8_t*) guarded_bytes((size_t) (TG_MR * ldx) + 1, guard_front, &rx);
  float* xs = (float*) guarded_bytes((size_t) (TG_MR * ldxs + 1) * sizeof(float), guard_front, &rs);
  uint8_t* w = (uint8_t*) guarded_bytes((size_t) nb * BLOCK_BYTES + 1, guard_front, &rw);
  int* codes = calloc((size_t) (TG_NR * k + 1), sizeof(int));       /* logical codes, row-major */
  double* dw = calloc((size_t) (TG_NR * nb + 1), sizeof(double));
  double* mw = calloc((size_t) (TG_NR * nb + 1), sizeof(double));
  memset(x, 0, (size_t) (TG_MR * ldx) + 1);
  for (int i = 0; i < TG_MR; i++)
    for (int b = 0; b < nb; b++) {
      int sum = 0;
      for (int e = 0; e < 32; e++) {
        int q = fill == RANDOM ? (int) ((uniform() + 1) * 127.5) - 127 : (fill == EXTREME_LOW ? -127 : 127);
        if (q < -127) q = -127;
        if (q > 127) q = 127;
        if (i >= m) q = 0;  /* the driver's padding rows */
        x[i * ldx + b * 32 + e] = (int8_t) q;
        sum += q;
      }
      const float dx = (float) (0.001 + (uniform() + 1) * 0.02);
      xs[i * ldxs + 2 * b] = i < m ? dx : 0.0f;
      xs[i * ldxs + 2 * b + 1] = i < m ? dx * (float) sum : 0.0f;
    }
  for (int b = 0; b < nb; b++) {
    uint8_t* blk = w + (size_t) b * BLOCK_BYTES;
    memset(blk, 0, BLOCK_BYTES);
    for (int j = 0; j < n; j++) {
      uint16_t hd = random_half(), hm = random_half();
      if (TG_FORMAT == 3) {  /* zero point z in 0..15: the half of an integer */
        const int z = fill == RANDOM ? (int) ((uniform() + 1) * 8) & 15 : (fill == EXTREME_LOW ? 15 : 0);
        hm = z == 0 ? 0 : (uint16_t) (((15 + 31 - __builtin_clz((unsigned) z)) << 10) |
                                      ((z << (10 - (31 - __builtin_clz((unsigned) z)))) & 1023));
      }
      memcpy(blk + 2 * j, &hd, 2);
      dw[j * nb + b] = half_value(hd);
      if (HAS_MIN) {
        memcpy(blk + 2 * TG_NR + 2 * j, &hm, 2);
        mw[j * nb + b] = half_value(hm);
      }
      uint8_t* c = blk + HDR * TG_NR;
      for (int e = 0; e < 32; e++) {
        int v;
        if (fill == RANDOM) v = NIBBLES ? (int) ((uniform() + 1) * 8) & 15 : (int) ((uniform() + 1) * 128) - 128;
        else v = NIBBLES ? (fill == EXTREME_LOW ? 0 : 15) : (fill == EXTREME_LOW ? -128 : 127);
        codes[j * k + b * 32 + e] = v;
        /* value e lives in quad t = (e % 16) / 4 (nibbles: low half e < 16) or e / 4 */
        const int t = NIBBLES ? (e % 16) / 4 : e / 4, h = e % 4;
        uint8_t* at = c + (t * TG_NR + j) * 4 + h;
        if (NIBBLES) *at = (uint8_t) (*at | (e < 16 ? v : v << 4));
        else *at = (uint8_t) (TG_OFFSET == 128 ? (uint8_t) v ^ 0x80u : (uint8_t) v);
      }
    }
  }
  const int64_t ldy = next_prime((int64_t) n + 1);
  const size_t y_count = (size_t) ((m - 1) * ldy + n);
  float* y = guarded(y_count, &ry);
  const float sentinel = -7777.0f;
  for (size_t q = 0; q < y_count; q++) y[q] = sentinel;
  TG_UKERNEL(m, n, nb, x, ldx, xs, ldxs, w, y, ldy);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  cases++;
  for (size_t q = 0; q < y_count; q++) {
    const int64_t i = (int64_t) q / ldy, j = (int64_t) q % ldy;
    if (j < n) {
      double want = 0, mag = 0;
      for (int b = 0; b < nb; b++) {
        const double dx = xs[i * ldxs + 2 * b];
        for (int e = 0; e < 32; e++) {
          const double t = weight_value(codes[j * k + b * 32 + e], dw[j * nb + b], mw[j * nb + b]) *
                           dx * x[i * ldx + b * 32 + e];
          want += t;
          mag += fabs(t);
        }
      }
      const double tol = TOL * sqrt(32.0 * nb + 1) * mag + 1e-30;
      if (!(fabs((double) y[q] - want) <= tol)) {
        if (++failed <= 20)
          fprintf(stderr, "FAIL m=%d n=%d nb=%d fill=%d at (%ld,%ld): got %.9g want %.9g\n", m, n,
                  nb, (int) fill, (long) i, (long) j, (double) y[q], want);
        break;
      }
    } else if (y[q] != sentinel) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL m=%d n=%d nb=%d: wrote outside the tile at %zu\n", m, n, nb, q);
      break;
    }
  }
  free(codes);
  free(dw);
  free(mw);
  release(&rx); release(&rs); release(&rw); release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  const int nbs[] = {0, 1, 2, 3, 17};
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (int q = 0; q < 5; q++) run_case(m, n, nbs[q], RANDOM);
  for (int f = EXTREME_LOW; f <= EXTREME_HIGH; f++)
    for (int m = 1; m <= TG_MR; m++) run_case(m, TG_NR, 9, (enum fill) f);
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
