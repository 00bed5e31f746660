/*
 * int8 GEMV micro-kernel tester: y (int32, n) = x B (+ y when accumulating) with B (k x n)
 * int8 read in place, for every n up to 2 NR (each column remainder alone and after full
 * steps) and every k up to 2 KR + 3 (each row remainder, k not a multiple of 4), x int8 and
 * uint8, accumulate 0 (y's old values must not show) and 1, B's row stride n and a prime above
 * it. Values cover all of int8 / uint8, and cases of all -128, all 127 (uint8 x: 255) and
 * mixed extremes, and deep cases near 2^31 (k = 2^17 of -128 x -128, 255 x -128: past 2^31,
 * the sums must wrap as int32). The reference is an int64 sum wrapped to int32: the result must
 * match exactly. B, x and y each end (or, alternately, start) at a PROT_NONE page; y's buffer
 * is exactly n values.
 *
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_NR=.. -DTG_KR=.. -DTG_ISA_ID=TG_ISA_<NAME>;
 * prints the COVER lines (ukernel_tester.h) and "KERNEL <name> CASES <n> FAILED <f>"; exit
 * 0 / 1 / 77 (77: the CPU lacks the ISA).
 */
#define _GNU_SOURCE
#include "tg_ukernels.h"

typedef int32_t T;  /* the guarded buffers hold y; B and x get their own below */
#include "ukernel_tester.h"

static long cases = 0, failed = 0;

enum fill { RANDOM, ALL_MIN, ALL_MAX, MIXED_EXTREMES };

/* One value of B (signed) or of x (signed, or unsigned when `u`). */
static int value(enum fill f, int which, int u) {
  switch (f) {
    case ALL_MIN: return u ? 255 : -128;
    case ALL_MAX: return u ? 255 : 127;
    case MIXED_EXTREMES: return which ? (u ? 255 : -128) : (u ? 0 : 127);
    default: return (int) (uniform() * 128 + 128) - (u ? 0 : 128);
  }
}

static void run_case(int64_t n, int64_t k, int64_t rs_b, int x_unsigned, int accumulate,
                     enum fill fill) {
  region rb, rx, ry;
  guard_alternate();
  const size_t b_bytes = k > 0 ? (size_t) ((k - 1) * rs_b + n) : 0;
  int8_t* b = (int8_t*) guarded_bytes(b_bytes ? b_bytes : 1, guard_front, &rb);
  int8_t* x = (int8_t*) guarded_bytes(k ? (size_t) k : 1, guard_front, &rx);
  int32_t* y = guarded((size_t) n, &ry);
  int32_t* y0 = malloc((size_t) n * sizeof(int32_t));
  /* Padding between rows holds values that must not be read into the sums. */
  for (size_t i = 0; i < b_bytes; i++) b[i] = (int8_t) value(RANDOM, 0, 0);
  for (int64_t r = 0; r < k; r++)
    for (int64_t j = 0; j < n; j++) b[r * rs_b + j] = (int8_t) value(fill, (int) ((r + j) & 1), 0);
  for (int64_t r = 0; r < k; r++) x[r] = (int8_t) (uint8_t) value(fill, (int) (r & 1), x_unsigned);
  for (int64_t j = 0; j < n; j++) y[j] = y0[j] = (int32_t) (uniform() * 2e9);
  TG_UKERNEL(n, k, b, rs_b, x, x_unsigned, y, accumulate);
  cover("n", TG_NR, n);
  cover("k", TG_KR, k);
  cases++;
  for (int64_t j = 0; j < n; j++) {
    int64_t acc = accumulate ? y0[j] : 0;
    for (int64_t r = 0; r < k; r++)
      acc += (int64_t) (x_unsigned ? (int64_t) (uint8_t) x[r] : (int64_t) x[r]) * b[r * rs_b + j];
    const int32_t want = (int32_t) (uint32_t) (uint64_t) acc;  /* wrapped, as int32 sums */
    if (y[j] != want) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL n=%ld k=%ld rs_b=%ld x_unsigned=%d accumulate=%d fill=%d at %ld: "
                "got %d want %d\n", (long) n, (long) k, (long) rs_b, x_unsigned, accumulate,
                (int) fill, (long) j, y[j], want);
      break;
    }
  }
  free(y0);
  release(&rb); release(&rx); release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  for (int64_t n = 1; n <= 2 * TG_NR; n++)
    for (int64_t k = 0; k <= 2 * TG_KR + 3; k++)
      for (int s = 0; s < 2; s++)
        for (int u = 0; u < 2; u++)
          for (int acc = 0; acc < 2; acc++)
            run_case(n, k, s ? next_prime(n + 1) : n, u, acc, RANDOM);
  for (int f = ALL_MIN; f <= MIXED_EXTREMES; f++)
    for (int u = 0; u < 2; u++)
      for (int acc = 0; acc < 2; acc++) {
        run_case(2 * TG_NR + 3, 2 * TG_KR + 5, 2 * TG_NR + 3, u, acc, (enum fill) f);
        run_case(TG_NR, TG_KR, TG_NR, u, acc, (enum fill) f);
      }
  /* 2^17 x 2^14 = 2^31 (int8), 2^17 x -32640 (uint8): past the int32 range both ways. */
  for (int u = 0; u < 2; u++) {
    run_case(TG_NR + 1, 131072 + 3, TG_NR + 1, u, 0, ALL_MIN);
    run_case(TG_NR + 1, 131072 + 3, TG_NR + 1, u, 1, ALL_MIN);
  }
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
