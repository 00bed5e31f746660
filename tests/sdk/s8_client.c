/* An int8 GEMM client of the SDK (plain C, libtilegen.a + -lpthread -lm): prints the ISA it
   dispatched to, then per case how many elements of C differ from a plain int64 loop (wrapped
   to int32, as the library's sums wrap) for tilegen_gemm_s8 (int8 A) and tilegen_gemm_u8s8
   (uint8 A), row-major and column-major A, with and without accumulate, 1 and 2 threads.
   tests/test_sdk.py runs it under qemu-aarch64 to drive the dot-product tiers' kernels
   through the real driver (packing in groups of KR, A's top-bit flip and its column-sum
   correction). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tilegen.h"

static uint32_t state = 2024u;
static uint8_t next_byte(void) {
  state = state * 1664525u + 1013904223u;
  return (uint8_t) (state >> 24);
}

/* One case: A (m x k) int8 or uint8, row-major (cs_a 1) or column-major, B (k x n) int8; C
   starts with arbitrary values that must be kept (accumulate) or not read. */
static long run(int64_t m, int64_t n, int64_t k, int a_unsigned, int col_major, int accumulate) {
  uint8_t* a = malloc((size_t) (m * k));
  int8_t* b = malloc((size_t) (k * n));
  int32_t* c = malloc(sizeof(int32_t) * (size_t) (m * n));
  int32_t* c0 = malloc(sizeof(int32_t) * (size_t) (m * n));
  for (int64_t i = 0; i < m * k; i++) a[i] = next_byte();
  for (int64_t i = 0; i < k * n; i++) b[i] = (int8_t) next_byte();
  for (int64_t i = 0; i < m * n; i++) c[i] = c0[i] = (int32_t) (next_byte() * 40503u) - 5000000;
  const int64_t rs_a = col_major ? 1 : k, cs_a = col_major ? m : 1;
  const int rc = a_unsigned
      ? tilegen_gemm_u8s8(m, n, k, a, rs_a, cs_a, b, n, 1, accumulate, c, n, 1)
      : tilegen_gemm_s8(m, n, k, (const int8_t*) a, rs_a, cs_a, b, n, 1, accumulate, c, n, 1);
  long bad = rc != 0 ? -1 : 0;
  for (int64_t i = 0; i < m && rc == 0; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t s = accumulate ? c0[i * n + j] : 0;
      for (int64_t p = 0; p < k; p++) {
        const uint8_t v = a[i * rs_a + p * cs_a];
        s += (int64_t) (a_unsigned ? (int) v : (int) (int8_t) v) * b[p * n + j];
      }
      if (c[i * n + j] != (int32_t) (uint32_t) (uint64_t) s) bad++;
    }
  free(a); free(b); free(c); free(c0);
  return bad;
}

int main(void) {
  /* Up to 4 rows (a GEMV per row, B read in place), few rows (the driver streams B and may
     take a smaller-MR kernel), many (blocked), n and k off every vector and row step (k not a
     multiple of 4), and one product big enough for two threads. */
  static const int64_t shapes[][3] = {{1, 1, 1}, {3, 17, 9}, {1, 77, 37}, {4, 100, 131},
                                      {2, 33, 6}, {13, 40, 70}, {37, 29, 131}, {200, 70, 1030}};
  printf("isa %s\n", tilegen_isa_name());
  for (int t = 1; t <= 2; t++) {
    tilegen_set_num_threads(t);
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
      for (int u = 0; u < 2; u++)
        for (int col = 0; col < 2; col++)
          for (int acc = 0; acc < 2; acc++) {
            const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            printf("%s %lld %lld %lld threads %d col_major %d accumulate %d bad %ld\n",
                   u ? "u8s8" : "s8", (long long) m, (long long) n, (long long) k, t, col, acc,
                   run(m, n, k, u, col, acc));
          }
  }
  return 0;
}
