/*
 * BLAS axpy micro-kernel tester: y <- a x + y for every length n from 0 to 3 NR + lanes + 1
 * (every remainder of the NR step and of the vector) and a few long vectors, a = 0.75 and
 * a = -2; x and y each end (or, alternately, start) at a PROT_NONE page, so a read or write past
 * the vector faults, and x must come back unchanged. Against a double-precision loop, within
 * TOL of |a x| + |y| per element.
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

static void run_case(int64_t n, T a) {
  region rx, ry;
  guard_alternate();
  T* x = guarded((size_t) (n > 0 ? n : 1), &rx);
  T* y = guarded((size_t) (n > 0 ? n : 1), &ry);
  T* x0 = malloc((size_t) (n > 0 ? n : 1) * sizeof(T));
  T* y0 = malloc((size_t) (n > 0 ? n : 1) * sizeof(T));
  for (int64_t i = 0; i < n; i++) x0[i] = x[i] = (T) (2 * uniform() - 1);
  for (int64_t i = 0; i < n; i++) y0[i] = y[i] = (T) (2 * uniform() - 1);
  TG_UKERNEL(n, a, x, y);
  cover("n", TG_NR, n);
  cases++;
  for (int64_t i = 0; i < n; i++) {
    const double want = (double) a * (double) x0[i] + (double) y0[i];
    const double tol = TOL * (fabs((double) a * (double) x0[i]) + fabs((double) y0[i])) + 1e-30;
    if (!(fabs((double) y[i] - want) <= tol) || x[i] != x0[i]) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL n=%ld a=%g at %ld: got %.17g want %.17g (x %s)\n", (long) n,
                (double) a, (long) i, (double) y[i], want, x[i] != x0[i] ? "changed" : "kept");
      break;
    }
  }
  free(x0);
  free(y0);
  release(&rx);
  release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  for (int64_t n = 0; n <= 3 * TG_NR + TG_LANES + 1; n++) {
    run_case(n, (T) 0.75);
    run_case(n, (T) -2);
  }
  const int64_t long_rows[] = {576, 1000, 4097};
  for (int r = 0; r < 3; r++) run_case(long_rows[r], (T) 1.5);
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
