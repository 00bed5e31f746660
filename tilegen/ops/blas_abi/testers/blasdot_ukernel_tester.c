/*
 * BLAS dot-product micro-kernel tester: sum x[i] * y[i] for every length n from 0 to
 * 3 NR + lanes + 1 (every remainder of the NR step and of the vector), a few long vectors, y = x
 * (the sum of squares of nrm2) and y distinct; x and y each end (or, alternately, start) at a
 * PROT_NONE page, so a read past the vector faults. Against a double-precision loop, within
 * TOL * sqrt(n) of the sum of |x[i] y[i]|.
 *
 * Built per kernel with -DTG_T=float|double -DTG_DT=f32|f64 -DTG_UKERNEL=<fn> -DTG_NR=..
 * -DTG_LANES=.. -DTG_ISA_ID=TG_ISA_<NAME>; prints the COVER line (ukernel_tester.h) and
 * "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77 (77: the CPU lacks the ISA).
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef TG_T T;
#include "ukernel_tester.h"

static long cases = 0, failed = 0;

static void run_case(int64_t n, int same) {
  region rx, ry = {0};
  guard_alternate();
  T* x = guarded((size_t) (n > 0 ? n : 1), &rx);
  T* y = same ? x : guarded((size_t) (n > 0 ? n : 1), &ry);
  for (int64_t i = 0; i < n; i++) x[i] = (T) (2 * uniform() - 1);
  for (int64_t i = 0; !same && i < n; i++) y[i] = (T) (2 * uniform() - 1);
  const T got = TG_UKERNEL(n, x, y);
  cover("n", TG_NR, n);
  cases++;
  double want = 0, mag = 0;
  for (int64_t i = 0; i < n; i++) {
    want += (double) x[i] * (double) y[i];
    mag += fabs((double) x[i] * (double) y[i]);
  }
  const double tol = TOL * sqrt((double) n + 1) * mag + 1e-30;
  if (!(fabs((double) got - want) <= tol)) {
    if (++failed <= 20)
      fprintf(stderr, "FAIL n=%ld same=%d: got %.17g want %.17g\n", (long) n, same,
              (double) got, want);
  }
  release(&rx);
  if (!same) release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  for (int64_t n = 0; n <= 3 * TG_NR + TG_LANES + 1; n++)
    for (int same = 0; same < 2; same++) run_case(n, same);
  const int64_t long_rows[] = {576, 1000, 4097};
  for (int r = 0; r < 3; r++) {
    run_case(long_rows[r], 0);
    run_case(long_rows[r], 1);
  }
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
