/*
 * int8 GEMM micro-kernel tester: C (int32) = A B (+ C when accumulating) from panels packed in
 * groups of KR k values (quads, or SMMLA's octets: per group, row i's KR bytes at KR i), for
 * every m <= MR and n <= NR (every row and column remainder), k groups 0-3 and 17,
 * row and column strides of C (column stride 1 and a prime), accumulate 0 (C's old values must
 * not show) and 1. Values cover all of int8, and cases of all -128 or all 127 (the largest
 * products; VPDPBUSD's A + 128 reaches 255), and one deep case near 2^31 (K = 2^16 of
 * -128 x -128 = 2^30, then K = 160000, past 2^31: the sums must wrap as int32). A kernel whose row says
 * so takes A + 128 and B's column sums times 128 after the quads, as the driver packs them;
 * the others take arbitrary corrections there, which they must subtract.
 * The reference is an int64 sum wrapped to int32, so the result must match exactly. A, B and C
 * each end (or, alternately, start) at a PROT_NONE page; every element of C's buffer outside
 * the tile holds a sentinel that must survive.
 *
 * A's panel is packed in groups of TG_A_GROUP k groups (1: per k group, MR groups; a tile
 * kernel's 16: per group, MR rows of 16 quads, the last group zero-padded), as gemms8.py's
 * a_group says.
 *
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_MR=.. -DTG_NR=.. -DTG_KR=4|8 -DTG_LANES=..
 * -DTG_A_OFFSET=0|1 -DTG_A_GROUP=..
 * -DTG_ISA_ID=TG_ISA_<NAME> [-DTG_PACKB=<fn>: the ISA's B packing (tg_s8_packb_fn), checked
 * byte for byte against a plain loop on row-major B for 1-9 panels (every count of columns
 * past the last strip of four vectors), 0-3 and 17 k quads, row strides with padding, panels
 * with a quad more than packed, sums that must be added to, B ending at a PROT_NONE page and the
 * panels too]; prints the COVER lines (ukernel_tester.h) and
 * "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77 (77: the CPU lacks the ISA).
 */
#define _GNU_SOURCE
#include "tg_ukernels.h"

typedef int32_t T;  /* the tester's guarded buffers hold C; A and B get their own below */
#include "ukernel_tester.h"

static long cases = 0, failed = 0;

enum fill { RANDOM, ALL_MIN, ALL_MAX, MIXED_EXTREMES };

static int8_t value(enum fill f, int which) {
  switch (f) {
    case ALL_MIN: return -128;
    case ALL_MAX: return 127;
    case MIXED_EXTREMES: return which ? -128 : 127;
    default: return (int8_t) ((int) (uniform() * 256) - 128);
  }
}

/* Row i's k group p in A's panel (its first byte). */
static size_t a_at(int p, int i) {
  return ((size_t) (p / TG_A_GROUP * TG_MR + i) * TG_A_GROUP + p % TG_A_GROUP) * TG_KR;
}

static void run_case(int m, int n, int kq, int64_t cs_c, int accumulate, enum fill fill) {
  region ra, rb, rc;
  guard_alternate();
  const size_t b_bytes = (size_t) (TG_KR * TG_NR * kq) + 4 * TG_NR;  /* groups, then sums */
  const int kq_a = (kq + TG_A_GROUP - 1) / TG_A_GROUP * TG_A_GROUP;  /* A's padded groups */
  int8_t* a = (int8_t*) guarded_bytes((size_t) TG_KR * TG_MR * kq_a + 1, guard_front, &ra);
  int8_t* b = (int8_t*) guarded_bytes(b_bytes, guard_front, &rb);
  int8_t* av = malloc((size_t) TG_KR * TG_MR * kq_a + 1);  /* A's true values */
  /* Packed panels: rows/columns past m/n (and A's groups past kq) are the driver's zero
     padding. */
  for (int p = 0; p < kq_a; p++)
    for (int i = 0; i < TG_MR; i++)
      for (int h = 0; h < TG_KR; h++) {
        const size_t e = a_at(p, i) + h;
        av[e] = i < m && p < kq ? value(fill, (i + h) & 1) : 0;
        a[e] = TG_A_OFFSET ? (int8_t) ((uint8_t) av[e] ^ 0x80u) : av[e];
      }
  int32_t sums[TG_NR];
  for (int j = 0; j < TG_NR; j++) sums[j] = 0;
  for (int p = 0; p < kq; p++)
    for (int j = 0; j < TG_NR; j++)
      for (int h = 0; h < TG_KR; h++) {
        const int8_t v = j < n ? value(fill, (j + p) & 1) : 0;
        b[(p * TG_NR + j) * TG_KR + h] = v;
        sums[j] += v;
      }
  /* The corrections: 128 x the column sums for a kernel reading A + 128, else any value (the
     driver's uint8 A on signed kernels), which must simply be taken away. */
  int32_t comps[TG_NR];
  for (int j = 0; j < TG_NR; j++) {
    comps[j] = TG_A_OFFSET ? (int32_t) ((uint32_t) sums[j] * 128u)
                           : (int32_t) (uniform() * 2e6) - 1000000;
    memcpy(b + TG_KR * TG_NR * kq + 4 * j, &comps[j], 4);
  }
  const int64_t rs_c = next_prime((int64_t) (n * cs_c + 1));
  const size_t c_count = (size_t) ((m - 1) * rs_c + (n - 1) * cs_c + 1);
  int32_t* c = guarded(c_count, &rc);
  int32_t* c0 = malloc(c_count * sizeof(int32_t));
  const int32_t sentinel = 0x5EED;
  for (size_t q = 0; q < c_count; q++) c[q] = sentinel;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) c[i * rs_c + j * cs_c] = (int32_t) (uniform() * 2e9 - 1e9);
  memcpy(c0, c, c_count * sizeof(int32_t));
  TG_UKERNEL(m, n, kq, a, b, c, rs_c, cs_c, accumulate);
  cover("m", TG_MR, m);
  cover("n", TG_NR, n);
  cases++;
  for (size_t q = 0; q < c_count; q++) {
    const int64_t i = (int64_t) q / rs_c, rest = (int64_t) q % rs_c;
    const int in_tile = rest % cs_c == 0 && rest / cs_c < n && i < m;
    if (in_tile) {
      const int64_t j = rest / cs_c;
      int64_t acc = (int64_t) (accumulate ? c0[q] : 0) - (TG_A_OFFSET ? 0 : (int64_t) comps[j]);
      for (int p = 0; p < kq; p++)
        for (int h = 0; h < TG_KR; h++)
          acc += (int64_t) av[a_at(p, (int) i) + h] * b[(p * TG_NR + j) * TG_KR + h];
      const int32_t want = (int32_t) (uint32_t) (uint64_t) acc;  /* wrapped, as int32 sums */
      if (c[q] != want) {
        if (++failed <= 20)
          fprintf(stderr, "FAIL m=%d n=%d kq=%d cs_c=%ld accumulate=%d fill=%d at (%ld,%ld): got %d want %d\n",
                  m, n, kq, (long) cs_c, accumulate, (int) fill, (long) i, (long) j, c[q], want);
        break;
      }
    } else if (c[q] != sentinel) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL m=%d n=%d kq=%d cs_c=%ld: wrote outside the tile at %zu\n", m, n, kq,
                (long) cs_c, q);
      break;
    }
  }
  free(c0);
  free(av);
  release(&ra); release(&rb); release(&rc);
}

#ifdef TG_PACKB
/* kq full quads packed into panels of kq + more quads (a driver's partial last quad) */
static void run_packb(int64_t panels, int64_t kq, int64_t pad, int64_t more) {
  region rb, rd;
  guard_alternate();
  const int64_t cols = panels * TG_NR, rs_b = cols + pad, rows = 4 * kq;
  const int64_t panel = 4 * TG_NR * (kq + more) + 4 * TG_NR, sums_at = panel - 4 * TG_NR;
  const size_t b_bytes = rows ? (size_t) ((rows - 1) * rs_b + cols) : 1;
  int8_t* b = (int8_t*) guarded_bytes(b_bytes, guard_front, &rb);
  for (size_t e = 0; e < b_bytes; e++) b[e] = value(RANDOM, 0);
  int8_t* d = (int8_t*) guarded_bytes((size_t) (panels * panel), !guard_front, &rd);
  int32_t* old = malloc((size_t) cols * sizeof(int32_t));  /* the sums before */
  for (int64_t q = 0; q < panels; q++)
    for (int j = 0; j < TG_NR; j++) {
      old[q * TG_NR + j] = (int32_t) (uniform() * 2e9);
      memcpy(d + q * panel + sums_at + 4 * j, &old[q * TG_NR + j], 4);
    }
  TG_PACKB(panels, kq, b, rs_b, d, panel);
  cases++;
  for (int64_t q = 0; q < panels; q++)
    for (int j = 0; j < TG_NR; j++) {
      const int64_t col = q * TG_NR + j;
      uint32_t sum = 0;
      int bad = 0;
      for (int64_t r = 0; r < rows; r++) {
        const int8_t want = b[r * rs_b + col];
        sum += (uint32_t) want;
        bad |= d[q * panel + ((r / 4) * TG_NR + j) * 4 + r % 4] != want;
      }
      int32_t got;
      memcpy(&got, d + q * panel + sums_at + 4 * j, 4);
      const int32_t want_sum = (int32_t) ((uint32_t) old[col] + sum);
      if (bad || got != want_sum) {
        if (++failed <= 20)
          fprintf(stderr, "FAIL packb panels=%ld kq=%ld pad=%ld more=%ld column %ld: %s\n",
                  (long) panels, (long) kq, (long) pad, (long) more, (long) col,
                  bad ? "quads" : "column sum");
        q = panels;
        break;
      }
    }
  free(old);
  release(&rb); release(&rd);
}
#endif

int main(void) {
  if (!cpu_supported()) return 77;
#ifdef TG_PACKB
  for (int64_t panels = 1; panels <= 9; panels++)
    for (int64_t kq = 0; kq <= 17; kq += kq == 3 ? 14 : 1)
      for (int64_t pad = 0; pad <= 5; pad += 5) run_packb(panels, kq, pad, pad ? 1 : 0);
#endif
#if TG_A_GROUP > 1  /* whole groups too, one and two (17 and 5 end in a partial one) */
  const int kqs[] = {0, 1, 2, 3, 17, TG_A_GROUP, 2 * TG_A_GROUP};
#else
  const int kqs[] = {0, 1, 2, 3, 17};
#endif
  const int nkq = (int) (sizeof(kqs) / sizeof(kqs[0]));
  for (int m = 1; m <= TG_MR; m++)
    for (int n = 1; n <= TG_NR; n++)
      for (int q = 0; q < nkq; q++)
        for (int s = 0; s < 2; s++)
          for (int acc = 0; acc < 2; acc++) run_case(m, n, kqs[q], s ? 3 : 1, acc, RANDOM);
  for (int f = ALL_MIN; f <= MIXED_EXTREMES; f++)
    for (int m = 1; m <= TG_MR; m += TG_MR > 4 ? 3 : 1) run_case(m, TG_NR, 5, 1, 1, (enum fill) f);
  run_case(TG_MR, TG_NR, 65536 / TG_KR, 1, 0, ALL_MIN);  /* 2^30 per element: exact */
  run_case(TG_MR, TG_NR, 65536 / TG_KR, 1, 1, ALL_MIN);  /* + C's old value: may wrap */
  run_case(TG_MR, TG_NR, 160000 / TG_KR, 1, 0, ALL_MIN);  /* past 2^31: wraps */
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
