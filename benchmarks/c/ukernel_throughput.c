/*
 * One GEMM micro-kernel timed alone: the MR x NR tile over kc steps, B from `panels` distinct
 * kc x NR panels (1: B stays in L1; ~1 MiB of panels: B streams from L2, as in the blocked
 * driver), A one panel (L1), C one tile per B panel. Built by benchmarks/ukernel_throughput.py
 * with -DT=<float|double> -DTG_UKERNEL=<name> -DTG_MR -DTG_NR -DTG_ROWS (A by rows) -DTG_DT.
 *
 *   usage: ukernel_throughput KC PANELS BETA SECONDS REPS
 *   prints: GFLOPS best median
 */
#define _POSIX_C_SOURCE 199309L  /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tg_ukernels.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef CAT(CAT(tg_, TG_DT), _gemm_params) params_t;
void TG_UKERNEL(int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*, int64_t,
                const params_t*);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static int by_value(const void* x, const void* y) {
  const double a = *(const double*) x, b = *(const double*) y;
  return (a > b) - (a < b);
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s KC PANELS BETA SECONDS REPS\n", argv[0]);
    return 2;
  }
  const int64_t kc = atol(argv[1]), panels = atol(argv[2]);
  const double beta = atof(argv[3]), seconds = atof(argv[4]);
  const int reps = atoi(argv[5]);
  if (kc < 1 || panels < 1 || reps < 1 || reps > 1000 || seconds <= 0) return 2;
  /* A: rows a padded row apart (rows layout) or MR values per k step (packed layout). */
  const int64_t lda = TG_ROWS ? kc + 16 : TG_MR;
  T* a = aligned_alloc(64, (size_t) ((TG_ROWS ? TG_MR * lda : kc * TG_MR) + 16) * sizeof(T));
  T* b = aligned_alloc(64, (size_t) (kc * TG_NR * panels) * sizeof(T));
  T* c = aligned_alloc(64, (size_t) (TG_MR * TG_NR * panels) * sizeof(T));
  if (!a || !b || !c) return 2;
  for (int64_t i = 0; i < (TG_ROWS ? TG_MR * lda : kc * TG_MR) + 16; i++) a[i] = (T) (1e-3 * (i % 7));
  for (int64_t i = 0; i < kc * TG_NR * panels; i++) b[i] = (T) (1e-3 * (i % 5));
  for (int64_t i = 0; i < TG_MR * TG_NR * panels; i++) c[i] = 0;
  const params_t prm = {1, (T) beta, NULL};
  const double flops = 2.0 * TG_MR * TG_NR * (double) kc;
  int64_t calls = 1;
  for (;;) {  /* calibrate (also the warm-up): one repetition lasts about `seconds` */
    const double t0 = now();
    for (int64_t i = 0; i < calls; i++)
      TG_UKERNEL(TG_MR, TG_NR, kc, a, TG_ROWS ? lda : TG_MR, b + (i % panels) * kc * TG_NR,
                 TG_NR, c + (i % panels) * TG_NR, TG_NR * panels, &prm);
    if (now() - t0 >= seconds / 4 || calls >= (1L << 40)) break;
    calls *= 2;
  }
  calls *= 4;
  double* rate = malloc(sizeof(double) * (size_t) reps);
  for (int r = 0; r < reps; r++) {
    const double t0 = now();
    for (int64_t i = 0; i < calls; i++)
      TG_UKERNEL(TG_MR, TG_NR, kc, a, TG_ROWS ? lda : TG_MR, b + (i % panels) * kc * TG_NR,
                 TG_NR, c + (i % panels) * TG_NR, TG_NR * panels, &prm);
    rate[r] = flops * (double) calls / (now() - t0) / 1e9;
  }
  qsort(rate, (size_t) reps, sizeof(double), by_value);
  printf("GFLOPS %.2f %.2f\n", rate[reps - 1], rate[reps / 2]);
  return 0;
}
