/* A quantized Linear client of the SDK (plain C, libtilegen.a + -lpthread -lm): y = x W^T through
   tilegen_linear_create / _run for q4_0, q4_1, q8_0 and int4-g32 weights (GGUF's and tilegen's
   block layouts, built here from random codes and scales exact in half precision), against a
   double loop over the dequantized weights. Each 32-value block of x holds integers with one
   value of magnitude 127, so the layer's activation quantization (scale max|x| / 127) is exact
   and the only error left is the float32 arithmetic: within 1e-5 of sum |w x| (a few roundings
   per block). Prints the ISA, then per case "<quant> m n k bad <count>". tests/test_sdk.py runs
   it under qemu-aarch64 to drive the qgemv kernels of the tier it selects (SDOT on neondot). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegen.h"

static uint32_t state = 77u;
static uint32_t next(void) {
  state = state * 1664525u + 1013904223u;
  return state >> 8;
}

/* The half-precision bits of v, a value exact in half (normal or zero). */
static uint16_t half_bits(double v) {
  if (v == 0) return 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  int e;
  const double m = frexp(fabs(v), &e);  /* |v| = m 2^e, m in [0.5, 1) */
  return (uint16_t) (sign | (uint16_t) (e - 1 + 15) << 10 | (uint16_t) ((m * 2 - 1) * 1024));
}

/* A scale exact in half: k / 256, k = 1..31, with a random sign when `signed_`. */
static double scale(int signed_) {
  const double s = (double) (1 + next() % 31) / 256;
  return signed_ && next() % 2 ? -s : s;
}

static void put16(uint8_t* p, uint16_t h) { p[0] = (uint8_t) h; p[1] = (uint8_t) (h >> 8); }

/* One 32-value block of weight row values w[0..31] written at p in format q; returns its bytes. */
static int block(tilegen_quant q, uint8_t* p, double* w) {
  uint8_t c[32];
  if (q == TILEGEN_QUANT_Q8_0) {
    const double d = scale(1);
    put16(p, half_bits(d));
    for (int i = 0; i < 32; i++) {
      const int8_t v = (int8_t) (next() & 0xFF);
      p[2 + i] = (uint8_t) v;
      w[i] = v * d;
    }
    return 34;
  }
  const int head = q == TILEGEN_QUANT_Q4_0 ? 2 : 4;
  const double d = scale(1);
  const double second = q == TILEGEN_QUANT_Q4_1 ? scale(1) : (double) (next() % 16);  /* m or z */
  put16(p, half_bits(d));
  if (head == 4) put16(p + 2, half_bits(second));
  for (int i = 0; i < 32; i++) c[i] = (uint8_t) (next() % 16);
  for (int i = 0; i < 16; i++) p[head + i] = (uint8_t) (c[i] | c[i + 16] << 4);
  for (int i = 0; i < 32; i++)
    w[i] = q == TILEGEN_QUANT_Q4_0 ? (c[i] - 8) * d
         : q == TILEGEN_QUANT_Q4_1 ? c[i] * d + second
                                   : (c[i] - second) * d;
  return head + 16;
}

static long run(tilegen_quant q, int64_t m, int64_t n, int64_t k) {
  uint8_t* wq = malloc((size_t) (n * (k / 32) * 34));
  double* w = malloc(sizeof(double) * (size_t) (n * k));
  float* x = malloc(sizeof(float) * (size_t) (m * k));
  float* y = malloc(sizeof(float) * (size_t) (m * n + 1));
  size_t at = 0;
  for (int64_t o = 0; o < n; o++)
    for (int64_t b = 0; b < k / 32; b++) at += (size_t) block(q, wq + at, w + o * k + b * 32);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < k; j++)
      x[i * k + j] = j % 32 == (i * 7 + j / 32) % 32 ? (next() % 2 ? 127.0f : -127.0f)
                                                      : (float) ((int) (next() % 255) - 127);
  tilegen_linear* layer = NULL;
  long bad = 0;
  if (tilegen_linear_create(q, n, k, wq, NULL, TILEGEN_ACT_NONE, &layer) != 0 ||
      tilegen_linear_run(layer, m, x, k, y, n) != 0)
    bad = -1;
  for (int64_t i = 0; i < m && bad == 0; i++)
    for (int64_t o = 0; o < n; o++) {
      double want = 0, mag = 0;
      for (int64_t j = 0; j < k; j++) {
        want += w[o * k + j] * x[i * k + j];
        mag += fabs(w[o * k + j] * x[i * k + j]);
      }
      if (!(fabs((double) y[i * n + o] - want) <= 1e-5 * mag + 1e-6)) {
        if (bad == 0)
          fprintf(stderr, "quant %d m %lld n %lld k %lld at (%lld, %lld): got %.9g want %.9g\n",
                  (int) q, (long long) m, (long long) n, (long long) k, (long long) i,
                  (long long) o, (double) y[i * n + o], want);
        bad++;
      }
    }
  tilegen_linear_destroy(layer);
  free(wq); free(w); free(x); free(y);
  return bad;
}

int main(void) {
  static const tilegen_quant quants[] = {TILEGEN_QUANT_Q4_0, TILEGEN_QUANT_Q4_1,
                                         TILEGEN_QUANT_Q8_0, TILEGEN_QUANT_INT4_G32};
  static const char* names[] = {"q4_0", "q4_1", "q8_0", "int4-g32"};
  /* One to five rows (the MR = 1 and 4 kernels and their mix), output features off the panel
     width, one to ten blocks of k. */
  static const int64_t shapes[][3] = {{1, 1, 32}, {1, 37, 96}, {2, 13, 320}, {4, 29, 64},
                                      {5, 40, 160}, {3, 8, 32}};
  printf("isa %s\n", tilegen_isa_name());
  for (size_t f = 0; f < 4; f++)
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
      printf("%s %lld %lld %lld bad %ld\n", names[f], (long long) shapes[s][0],
             (long long) shapes[s][1], (long long) shapes[s][2],
             run(quants[f], shapes[s][0], shapes[s][1], shapes[s][2]));
  return 0;
}
