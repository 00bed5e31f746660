/* A C client of the SDK for half accumulation (tilegen_gemm_f16_ex, TILEGEN_ACCUMULATE_F16):
   per shape and thread count, checks the float16 C against the model of half accumulation
   computed here (each element's sum from 0, the k products in order, every multiply-add
   rounded once to half with frexp/ldexp/nearbyint, as FMLA .8h rounds), bit for bit, and
   whether it equals the float32-accumulated answer (TILEGEN_ACCUMULATE_F32). Prints
   "isa <name> kernel-model-equal <0|1> f32-equal <0|1> epilogue-ok <0|1>" per case;
   tests/ops/gemm/test_f16.py runs it under qemu-aarch64 with and without FP16. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tilegen.h"

static uint32_t state = 2024u;
static float next(void) {  /* values in [-1, 1) */
  state = state * 1664525u + 1013904223u;
  return (float) ((int32_t) (state >> 8) - (1 << 23)) / (float) (1 << 23);
}

static double round_half(double x) {  /* to nearest half, ties to even; Inf past 65504 */
  if (x != x || x == 0 || isinf(x)) return x;
  int e;
  frexp(x, &e);
  int q = e - 11;
  if (q < -24) q = -24;
  const double r = ldexp(nearbyint(ldexp(x, -q)), q);
  return fabs(r) > 65504.0 ? copysign(INFINITY, x) : r;
}

int main(void) {
  /* (m, n, k): tile edges, and with TILEGEN_L2_SIZE=16K (KC 256, NC 128) several k and
     column blocks; the last three are big enough for two threads, the last one with a single
     row panel (the threads split its column panels). */
  static const int64_t shapes[][3] = {{1, 1, 1}, {9, 17, 3}, {8, 16, 300}, {37, 300, 700},
                                      {70, 45, 600}, {8, 600, 600}};
  for (int t = 1; t <= 2; t++) {
    tilegen_set_num_threads(t);
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
      const int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      uint16_t* a = malloc(sizeof(uint16_t) * m * k);
      uint16_t* b = malloc(sizeof(uint16_t) * k * n);
      uint16_t* c = malloc(sizeof(uint16_t) * m * n);
      uint16_t* c32 = malloc(sizeof(uint16_t) * m * n);
      float* af = malloc(sizeof(float) * m * k);
      float* bf = malloc(sizeof(float) * k * n);
      float* cf = malloc(sizeof(float) * m * n);
      float* bias = malloc(sizeof(float) * n);
      for (int64_t i = 0; i < m * k; i++) af[i] = next();
      for (int64_t i = 0; i < k * n; i++) bf[i] = next();
      for (int64_t j = 0; j < n; j++) bias[j] = next();
      tilegen_f16_from_f32(m * k, af, 1, a, 1);
      tilegen_f16_from_f32(k * n, bf, 1, b, 1);
      tilegen_f32_from_f16(m * k, a, 1, af, 1);  /* the half values, as floats */
      tilegen_f32_from_f16(k * n, b, 1, bf, 1);
      int rc = tilegen_gemm_f16_ex(m, n, k, 1, a, k, 1, b, n, 1, 0, c, TILEGEN_F16, n, 1, NULL,
                                   0, TILEGEN_ACT_NONE, TILEGEN_ACCUMULATE_F16);
      rc |= tilegen_gemm_f16_ex(m, n, k, 1, a, k, 1, b, n, 1, 0, c32, TILEGEN_F16, n, 1, NULL,
                                0, TILEGEN_ACT_NONE, TILEGEN_ACCUMULATE_F32);
      /* float32 C through the epilogue: relu(2 P + 0.5 C + bias), C column-major. */
      for (int64_t i = 0; i < m * n; i++) cf[i] = 1;
      rc |= tilegen_gemm_f16_ex(m, n, k, 2, a, k, 1, b, n, 1, 0.5f, cf, TILEGEN_F32, 1, m, bias,
                                1, TILEGEN_ACT_RELU, TILEGEN_ACCUMULATE_F16);
      int model_equal = 1, f32_equal = 1, epilogue_ok = 1;
      float* p = malloc(sizeof(float) * m * n);
      tilegen_f32_from_f16(m * n, c, 1, p, 1);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double sum = 0;
          for (int64_t q = 0; q < k; q++)
            sum = round_half(sum + (double) af[i * k + q] * bf[q * n + j]);
          if ((double) p[i * n + j] != sum) model_equal = 0;
          if (c[i * n + j] != c32[i * n + j]) f32_equal = 0;
          const double want = fmax(2 * (double) p[i * n + j] + 0.5 + bias[j], 0);
          if (fabs(cf[j * m + i] - want) > 1e-6 * (fabs(want) + 1)) epilogue_ok = 0;
        }
      printf("isa %s m %lld n %lld k %lld threads %d rc %d kernel-model-equal %d f32-equal %d "
             "epilogue-ok %d\n", tilegen_isa_name(), (long long) m, (long long) n, (long long) k,
             t, rc, model_equal, f32_equal, epilogue_ok);
      free(a); free(b); free(c); free(c32); free(af); free(bf); free(cf); free(bias); free(p);
    }
  }
  /* An invalid accumulate is -19, and C is untouched. */
  float one = 42;
  uint16_t h[1] = {0x3c00};
  const int bad = tilegen_gemm_f16_ex(1, 1, 1, 1, h, 1, 1, h, 1, 1, 0, &one, TILEGEN_F32, 1, 1,
                                      NULL, 0, TILEGEN_ACT_NONE, 7);
  printf("bad rc %d c %g\n", bad, one);
  return 0;
}
