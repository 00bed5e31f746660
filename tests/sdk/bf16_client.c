/* tilegen_gemm_bf16 through the whole library (dispatch, packing, blocking, threads, the kernel
 * table of the tier it selects), against a double-precision loop over the same bfloat16 values:
 * integer-valued products must be exact; random ones within 2k + 2 float32 roundings of 2^-23
 * each (round to nearest, or BFDOT's round to odd), which covers the at most 2 per k pair, 1 per
 * k block (64 deep or more) added into C, and beta's. Shapes: few rows (the driver streams B and
 * takes the registered kernel that pads rows least), many rows, odd k (a zero pad in the last
 * pair), k beyond one KC block, and beta; one row (the driver's GEMV kernels, B read in place:
 * the axpy form for row-major B, the dot form for column-major B, x @ W.T) with n and k off
 * every vector step. Prints "OK <isa> <cases>" or the first failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tilegen.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;
static double uniform(void) { /* U(-1, 1) */
  state ^= state << 13; state ^= state >> 7; state ^= state << 17;
  return (double) (state >> 11) / 4503599627370496.0 - 1.0;
}

static double bf16_value(uint16_t h) {
  const uint32_t b = (uint32_t) h << 16;
  float x;
  memcpy(&x, &b, 4);
  return x;
}

/* col_b: B column-major (b[p + j*k], rs_b 1), else row-major (b[p*n + j]). */
static int run(int64_t m, int64_t n, int64_t k, float beta, int exact, int col_b) {
  float* af = malloc(sizeof(float) * (size_t) (m * k + 1));
  float* bf = malloc(sizeof(float) * (size_t) (k * n + 1));
  uint16_t* a = malloc(sizeof(uint16_t) * (size_t) (m * k + 1));
  uint16_t* b = malloc(sizeof(uint16_t) * (size_t) (k * n + 1));
  float* c = malloc(sizeof(float) * (size_t) (m * n));
  float* c0 = malloc(sizeof(float) * (size_t) (m * n));
  for (int64_t i = 0; i < m * k; i++) af[i] = exact ? (float) (int) (uniform() * 5) : (float) uniform();
  for (int64_t i = 0; i < k * n; i++) bf[i] = exact ? (float) (int) (uniform() * 5) : (float) uniform();
  for (int64_t i = 0; i < m * n; i++) c0[i] = c[i] = exact ? (float) (int) (uniform() * 9) : (float) uniform();
  tilegen_bf16_from_f32(m * k, af, 1, a, 1);
  tilegen_bf16_from_f32(k * n, bf, 1, b, 1);
  const int64_t rs_b = col_b ? 1 : n, cs_b = col_b ? k : 1;
  int bad = tilegen_gemm_bf16(m, n, k, 1.0f, a, k, 1, b, rs_b, cs_b, beta, c, TILEGEN_F32, n, 1,
                              NULL, 0, TILEGEN_ACT_NONE) != 0;
  for (int64_t i = 0; i < m && !bad; i++)
    for (int64_t j = 0; j < n && !bad; j++) {
      double acc = 0, mag = 0;
      for (int64_t p = 0; p < k; p++) {
        const double prod = bf16_value(a[i * k + p]) * bf16_value(b[p * rs_b + j * cs_b]);
        acc += prod;
        mag += fabs(prod);
      }
      const double want = acc + (double) beta * c0[i * n + j];
      const double scale = mag + fabs((double) beta * c0[i * n + j]);
      const double tol = exact ? 0 : (pow(1 + 0x1p-23, 2.0 * k + 2) - 1) * scale;
      if (!(fabs((double) c[i * n + j] - want) <= tol)) {
        printf("BAD m=%lld n=%lld k=%lld beta=%g exact=%d col_b=%d at (%lld,%lld): got %.9g "
               "want %.9g\n", (long long) m, (long long) n, (long long) k, beta, exact, col_b,
               (long long) i,
               (long long) j, (double) c[i * n + j], want);
        bad = 1;
      }
    }
  free(af); free(bf); free(a); free(b); free(c); free(c0);
  return bad;
}

int main(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {3, 17, 9}, {5, 33, 64}, {9, 20, 31},
                                      {13, 40, 7}, {40, 29, 300}, {100, 70, 1025},
                                      {1, 77, 37}, {1, 300, 130}, {1, 5, 1031}};
  int cases = 0;
  for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
    for (int exact = 0; exact < 2; exact++)
      for (int with_beta = 0; with_beta < 2; with_beta++)
        for (int col_b = 0; col_b < 2; col_b++) {
          if (run(shapes[s][0], shapes[s][1], shapes[s][2], with_beta ? 0.5f : 0.0f, exact, col_b))
            return 1;
          cases++;
        }
  printf("OK %s %d\n", tilegen_isa_name(), cases);
  return 0;
}
