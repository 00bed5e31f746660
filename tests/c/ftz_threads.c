/*
 * Worker threads must compute with the caller's floating-point control state (tests/
 * test_threads.py): with flush-to-zero set by the caller, a product whose every partial sum is
 * subnormal comes out 0 in every tile -- the caller's and the workers' alike; without it, none
 * is 0. The product is big enough (2*256*256*64 flops) for the driver to use 2 threads.
 * Prints "tasks=<threads in the process> ftz_off_zeros=<n> ftz_on_nonzeros=<n> of <m*n>";
 * exits 77 where flush-to-zero cannot be set from C.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tilegen.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
static unsigned int saved;
static void ftz_on(void) { saved = _mm_getcsr(); _mm_setcsr(saved | 0x8000u); }  /* MXCSR.FZ */
static void ftz_off(void) { _mm_setcsr(saved); }
#elif defined(__aarch64__)
static uint64_t saved;
static void ftz_on(void) {
  __asm__ volatile("mrs %0, fpcr" : "=r"(saved));
  const uint64_t v = saved | (1u << 24); /* FPCR.FZ */
  __asm__ volatile("msr fpcr, %0" : : "r"(v));
}
static void ftz_off(void) { __asm__ volatile("msr fpcr, %0" : : "r"(saved)); }
#else
#define NO_FTZ 1
#endif

static int tasks(void) {
  DIR* d = opendir("/proc/self/task");
  int n = 0;
  if (d == NULL) return -1;
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

int main(void) {
#ifdef NO_FTZ
  puts("flush-to-zero cannot be set on this architecture");
  return 77;
#else
  enum { M = 256, N = 256, K = 64 };
  float* a = malloc(sizeof(float) * M * K);
  float* b = malloc(sizeof(float) * K * N);
  float* c = malloc(sizeof(float) * M * N);
  for (int i = 0; i < M * K; i++) a[i] = 1e-20f;  /* each product 1e-40: subnormal */
  for (int i = 0; i < K * N; i++) b[i] = 1e-20f;
  tilegen_set_num_threads(2);

  int zeros = 0, nonzeros = 0;
  if (tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, M, N, K, 1.0f, a,
                       K, b, N, 0.0f, c, N, NULL, TILEGEN_ACT_NONE) != 0)
    return 2;
  for (int i = 0; i < M * N; i++) zeros += c[i] == 0.0f;

  ftz_on();
  if (tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, M, N, K, 1.0f, a,
                       K, b, N, 0.0f, c, N, NULL, TILEGEN_ACT_NONE) != 0)
    return 2;
  ftz_off();
  int first_bad = -1;
  for (int i = 0; i < M * N; i++)
    if (c[i] != 0.0f) {
      nonzeros++;
      if (first_bad < 0) first_bad = i;
    }
  printf("tasks=%d ftz_off_zeros=%d ftz_on_nonzeros=%d of %d first_nonzero=(%d,%d)\n", tasks(),
         zeros, nonzeros, M * N, first_bad < 0 ? -1 : first_bad / N,
         first_bad < 0 ? -1 : first_bad % N);
  return 0;
#endif
}
