/*
 * bfloat16 GEMM micro-kernel tester: C (float32) = alpha * A B + beta * C from pair-packed
 * panels, for every m <= MR and n <= NR (every row and column remainder), k pairs 0-3 and 17,
 * row and column strides of C (column stride 1 and a prime), beta 0 (NaN in C: never read),
 * 1 and 0.5, alpha 1 and -0.5. Integer-valued inputs make every sum exact in float32, so the
 * result must match bit for bit; a random case is checked within the worst-case bound of 2 kp + 2
 * float32 roundings (each pair's two, alpha's and beta's), each off by less than 2^-23 of its
 * result: true for round to nearest (FMA, VDPBF16PS) and for BFDOT's round to odd. (Its inputs,
 * at least 2^-52 in size, give no subnormal product, which BFDOT and VDPBF16PS flush to zero.)
 * A, B and C each end (or, alternately, start) at a PROT_NONE page; every element of C's buffer
 * outside the tile holds a sentinel that must survive.
 *
 * A's panel is packed in groups of TG_A_GROUP k pairs (1: per k pair, MR pairs; a tile kernel's
 * 16: per group, MR rows of 16 pairs, the last group zero-padded), as gemmbf16.py's a_group says.
 *
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_MR=.. -DTG_NR=.. -DTG_LANES=.. -DTG_A_GROUP=..
 * -DTG_ISA_ID=TG_ISA_<NAME> (-DTG_T=uint16_t) [-DTG_PACKB=<fn>: the ISA's B packing
 * (tg_bf16_packb_fn), checked value for value against a plain loop on row-major B for 1-9
 * panels (every count of columns past the last whole vector), 0-3 and 17 k pairs, row strides
 * with padding, panels with a pair more than packed, B ending at a PROT_NONE page and the
 * panels too]; prints the COVER lines (ukernel_tester.h) and
 * "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77 (77: the CPU lacks the ISA).
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef float T;  /* the tester's guarded buffers hold C; A and B get their own below */
#include "ukernel_tester.h"

static long cases = 0, failed = 0;

static uint16_t to_bf16(float x) {  /* truncation: exact for the values used here */
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

/* Row i's pair p in A's panel (its first value; the second follows). */
static size_t a_at(int p, int i) {
  return ((size_t) (p / TG_A_GROUP * TG_MR + i) * TG_A_GROUP + p % TG_A_GROUP) * 2;
}

static void run_case(int m, int n, int kp, int64_t cs_c, double alpha, double beta, int exact) {
  region ra, rb, rc;
  guard_alternate();
  const int kp_a = (kp + TG_A_GROUP - 1) / TG_A_GROUP * TG_A_GROUP;  /* A's padded pairs */
  uint16_t* a = guarded_u16((size_t) (2 * TG_MR * kp_a), &ra);
  uint16_t* b = guarded_u16((size_t) (2 * TG_NR * kp), &rb);
  /* Packed panels: rows/columns past m/n and values past k are the driver's zero padding. */
  for (int p = 0; p < kp_a; p++)
    for (int i = 0; i < TG_MR; i++)
      for (int h = 0; h < 2; h++) {
        const double v = exact ? (double) ((int) (uniform() * 5)) : uniform();
        a[a_at(p, i) + h] = i < m && p < kp ? to_bf16((float) v) : 0;
      }
  for (int p = 0; p < kp; p++)
    for (int j = 0; j < TG_NR; j++)
      for (int h = 0; h < 2; h++) {
        const double v = exact ? (double) ((int) (uniform() * 5)) : uniform();
        b[(p * TG_NR + j) * 2 + h] = j < n ? to_bf16((float) v) : 0;
      }
  const int64_t rs_c = next_prime((int64_t) (n * cs_c + 1));
  const size_t c_count = (size_t) ((m - 1) * rs_c + (n - 1) * cs_c + 1);
  float* c = guarded(c_count, &rc);
  float* c0 = malloc(c_count * sizeof(float));
  const float sentinel = 1234.5f;
  for (size_t q = 0; q < c_count; q++) c[q] = sentinel;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      c[i * rs_c + j * cs_c] = beta == 0 ? NAN : (float) (exact ? (int) (uniform() * 9) : uniform());
  memcpy(c0, c, c_count * sizeof(float));
  TG_UKERNEL(m, n, kp, a, b, c, rs_c, cs_c, (float) alpha, (float) beta);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  cases++;
  for (size_t q = 0; q < c_count; q++) {
    const int64_t i = (int64_t) q / rs_c, rest = (int64_t) q % rs_c;
    const int in_tile = rest % cs_c == 0 && rest / cs_c < n && i < m;
    if (in_tile) {
      const int64_t j = rest / cs_c;
      double acc = 0, mag = 0;
      for (int p = 0; p < kp; p++)
        for (int h = 0; h < 2; h++) {
          const double prod = from_bf16(a[a_at(p, i) + h]) *
                              from_bf16(b[(p * TG_NR + j) * 2 + h]);
          acc += prod;
          mag += fabs(prod);
        }
      double want = alpha * acc;
      if (beta != 0) want += beta * (double) c0[q];
      const double scale = fabs(alpha) * mag + (beta != 0 ? fabs(beta * c0[q]) : 0) + 1e-30;
      const double tol = exact ? 0 : (pow(1 + 0x1p-23, 2.0 * kp + 2) - 1) * scale;
      if (!(fabs((double) c[q] - want) <= tol)) {
        if (++failed <= 20)
          fprintf(stderr, "FAIL m=%d n=%d kp=%d cs_c=%ld alpha=%g beta=%g exact=%d at (%ld,%ld): got %.9g want %.9g\n",
                  m, n, kp, (long) cs_c, alpha, beta, exact, (long) i, (long) j, (double) c[q], want);
        break;
      }
    } else if (c[q] != sentinel) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL m=%d n=%d kp=%d cs_c=%ld: wrote outside the tile at %zu\n", m, n, kp,
                (long) cs_c, q);
      break;
    }
  }
  free(c0);
  release(&ra); release(&rb); release(&rc);
}

#ifdef TG_PACKB
/* kp full pairs packed into panels of kp + more pairs (a driver's odd last row) */
static void run_packb(int64_t panels, int64_t kp, int64_t pad, int64_t more) {
  region rb, rd;
  guard_alternate();
  const int64_t cols = panels * TG_NR, rs_b = cols + pad, rows = 2 * kp;
  const int64_t panel = 2 * TG_NR * (kp + more);
  const size_t b_count = rows ? (size_t) ((rows - 1) * rs_b + cols) : 1;
  uint16_t* b = guarded_u16(b_count, &rb);
  for (size_t e = 0; e < b_count; e++) b[e] = (uint16_t) (uniform() * 32768 + 32768);
  uint16_t* d = guarded_u16((size_t) (panels * panel), &rd);
  TG_PACKB(panels, kp, b, rs_b, d, panel);
  cases++;
  for (int64_t q = 0; q < panels; q++)
    for (int j = 0; j < TG_NR; j++)
      for (int64_t r = 0; r < rows; r++)
        if (d[q * panel + ((r / 2) * TG_NR + j) * 2 + r % 2] != b[r * rs_b + q * TG_NR + j]) {
          if (++failed <= 20)
            fprintf(stderr, "FAIL packb panels=%ld kp=%ld pad=%ld more=%ld: column %ld row %ld\n",
                    (long) panels, (long) kp, (long) pad, (long) more, (long) (q * TG_NR + j),
                    (long) r);
          q = panels;
          j = TG_NR;
          break;
        }
  release(&rb); release(&rd);
}
#endif

int main(void) {
  if (!cpu_supported()) return 77;
#ifdef TG_PACKB
  for (int64_t panels = 1; panels <= 9; panels++)
    for (int64_t kp = 0; kp <= 17; kp += kp == 3 ? 14 : 1)
      for (int64_t pad = 0; pad <= 5; pad += 5) run_packb(panels, kp, pad, pad ? 1 : 0);
#endif
#if TG_A_GROUP > 1  /* whole groups too, one and two (17 and 300 end in a partial one) */
  const int kps[] = {0, 1, 2, 3, 17, TG_A_GROUP, 2 * TG_A_GROUP};
#else
  const int kps[] = {0, 1, 2, 3, 17};
#endif
  const int nkp = (int) (sizeof(kps) / sizeof(kps[0]));
  const double alphas[] = {1, -0.5}, betas[] = {0, 1, 0.5};
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (int q = 0; q < nkp; q++)
        for (int s = 0; s < 2; s++)
          for (int x = 0; x < 2; x++)
            for (int y = 0; y < 3; y++)
              run_case(m, n, kps[q], s ? 3 : 1, alphas[x], betas[y], 1);
  for (int m = 1; m <= TG_MR; m += TG_MR > 4 ? 3 : 1)
    run_case(m, TG_NR, 300, 1, 1, 0, 0);
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
