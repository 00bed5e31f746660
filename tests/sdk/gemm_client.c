/* A C client of the SDK (plain C, libtilegen.a + -lpthread -lm): prints the ISA it dispatched to
   and C = A*B + bias (ReLU) for a few shapes and thread counts; tests/test_sdk.py recomputes the
   same inputs (the LCG below) with NumPy and compares. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tilegen.h"

static uint32_t state = 12345u;
static float next(void) {  /* values in [-1, 1), exactly representable */
  state = state * 1664525u + 1013904223u;
  return (float) ((int32_t) (state >> 8) - (1 << 23)) / (float) (1 << 23);
}

int main(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {130, 70, 200}, {256, 300, 320}};
  printf("isa %s version %s\n", tilegen_isa_name(), tilegen_version());
  for (int t = 1; t <= 2; t++) {
    tilegen_set_num_threads(t);
    state = 12345u;  /* the same inputs for each thread count */
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
      const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      float* a = malloc(sizeof(float) * m * k);
      float* b = malloc(sizeof(float) * k * n);
      float* c = malloc(sizeof(float) * m * n);
      float* bias = malloc(sizeof(float) * n);
      for (int64_t i = 0; i < m * k; i++) a[i] = next();
      for (int64_t i = 0; i < k * n; i++) b[i] = next();
      for (int64_t i = 0; i < n; i++) bias[i] = next();
      const int rc = tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, m, n,
                                      k, 1.0f, a, k, b, n, 0.0f, c, n, bias, TILEGEN_ACT_RELU);
      printf("gemm %lld %lld %lld threads %d rc %d:", (long long) m, (long long) n,
             (long long) k, t, rc);
      for (int64_t i = 0; i < m * n; i++) printf(" %.9g", c[i]);
      printf("\n");
      free(a); free(b); free(c); free(bias);
    }
  }
  /* A bad argument: -p and nothing written. */
  float c0 = 42.0f;
  const int rc = tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, -1, 1, 1,
                                  1.0f, &c0, 1, &c0, 1, 0.0f, &c0, 1, NULL, TILEGEN_ACT_NONE);
  printf("bad rc %d c %g\n", rc, c0);
  return 0;
}
