/*
 * RMSNorm micro-kernel tester: y = x * w / sqrt(mean(x^2) + eps) for every row length n from 1
 * to 3 NR + lanes + 1 (every remainder of the NR step and of the vector), a few long rows, with
 * and without a weight, out of place and in place (y = x); x, w and y each end (or, alternately,
 * start) at a PROT_NONE page, so a read or write past the row faults. Against a double-precision
 * loop, within TOL * sqrt(n) relative; rows of zeros give zeros (eps keeps the scale finite).
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

static void run_case(int64_t n, int weighted, int in_place, int zeros) {
  region rx, rw = {0}, ry = {0};
  guard_alternate();
  T* x = guarded((size_t) n, &rx);
  T* w = weighted ? guarded((size_t) n, &rw) : NULL;
  T* y = in_place ? x : guarded((size_t) n, &ry);
  T* x0 = malloc((size_t) n * sizeof(T));
  for (int64_t i = 0; i < n; i++) x0[i] = x[i] = zeros ? (T) 0 : (T) (4 * uniform());
  for (int64_t i = 0; weighted && i < n; i++) w[i] = (T) uniform();
  if (!in_place)
    for (int64_t i = 0; i < n; i++) y[i] = (T) NAN;
  const T eps = (T) 1e-6;
  TG_UKERNEL(n, x, w, eps, y);
  cover("n", TG_NR, n);  /* n % NR fixes the vector steps and the tail of both passes too */
  cases++;
  double ss = 0;
  for (int64_t i = 0; i < n; i++) ss += (double) x0[i] * (double) x0[i];
  const double scale = 1.0 / sqrt(ss / (double) n + (double) eps);
  for (int64_t i = 0; i < n; i++) {
    const double want = (double) x0[i] * scale * (weighted ? (double) w[i] : 1.0);
    const double tol = TOL * sqrt((double) n) * (fabs(want) + 1e-30) + 1e-30;
    if (!(fabs((double) y[i] - want) <= tol)) {
      if (++failed <= 20)
        fprintf(stderr, "FAIL n=%ld weighted=%d in_place=%d zeros=%d at %ld: got %.17g want %.17g\n",
                (long) n, weighted, in_place, zeros, (long) i, (double) y[i], want);
      break;
    }
  }
  free(x0);
  release(&rx);
  if (weighted) release(&rw);
  if (!in_place) release(&ry);
}

int main(void) {
  if (!cpu_supported()) return 77;
  for (int64_t n = 1; n <= 3 * TG_NR + TG_LANES + 1; n++)
    for (int weighted = 0; weighted < 2; weighted++)
      for (int in_place = 0; in_place < 2; in_place++) run_case(n, weighted, in_place, 0);
  const int64_t long_rows[] = {576, 1000, 4097};
  for (int r = 0; r < 3; r++) {
    run_case(long_rows[r], 1, 0, 0);
    run_case(long_rows[r], 1, 1, 0);
    run_case(long_rows[r], 1, 0, 1);
  }
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
