/* Times tilegen_gaussian_blur_u8 and tilegen_box_blur_u8 (5x5) on a 1080p colour image, and
   tilegen_filter2d_f32 (3x3) on its float32 grayscale: best of REPS runs of LOOPS calls, in ms
   per call. Built against the C SDK and against the Python package's libtilegen by
   benchmarks/sdk_speed.py, which compares the two. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tilegen.h"

enum { H = 1080, W = 1920, C = 3, REPS = 7, LOOPS = 10 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  tilegen_set_num_threads(argc > 1 ? atoi(argv[1]) : 1);
  uint8_t* src = malloc((size_t) H * W * C);
  uint8_t* dst = malloc((size_t) H * W * C);
  float* fsrc = malloc(sizeof(float) * H * W);
  float* fdst = malloc(sizeof(float) * H * W);
  static const float k3[9] = {0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f, 0.125f,
                              0.0625f, 0.125f, 0.0625f};
  uint32_t s = 1;
  for (int64_t i = 0; i < (int64_t) H * W * C; i++) src[i] = (uint8_t) ((s = s * 1103515245u + 12345u) >> 24);
  for (int64_t i = 0; i < (int64_t) H * W; i++) fsrc[i] = src[i * C] / 255.0f;
  const char* names[3] = {"gaussian5x5_u8x3", "box5x5_u8x3", "filter2d3x3_f32"};
  for (int f = 0; f < 3; f++) {
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
      const double t0 = now();
      for (int l = 0; l < LOOPS; l++) {
        int rc = f == 0 ? tilegen_gaussian_blur_u8(src, W * C, dst, W * C, H, W, C, 5, 1.1, 0)
               : f == 1 ? tilegen_box_blur_u8(src, W * C, dst, W * C, H, W, C, 5, 0)
                        : tilegen_filter2d_f32(fsrc, W, fdst, W, H, W, 1, k3, 3, 3, 0);
        if (rc != 0) return 1;
      }
      const double t = (now() - t0) / LOOPS;
      if (t < best) best = t;
    }
    printf("%s %.4f\n", names[f], best * 1e3);
  }
  return 0;
}
