/* The image filters' C API (tilegen.h): -p for each invalid parameter with nothing written,
   in-place calls equal to out-of-place ones, negative strides equal to a flipped copy's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegen.h"

enum { H = 23, W = 37, C = 3, N = H * W * C };

static int failures = 0;

#define EXPECT(cond, ...)                        \
  do {                                           \
    if (!(cond)) {                               \
      failures++;                                \
      printf("FAIL line %d: ", __LINE__);        \
      printf(__VA_ARGS__);                       \
      printf("\n");                              \
    }                                            \
  } while (0)

static uint8_t src8[N], dst8[N], ref8[N];
static float srcf[N], dstf[N], reff[N];

static int untouched(void) {
  for (int i = 0; i < N; i++)
    if (dst8[i] != 0xCD || memcmp(&dstf[i], &(float){-9.5f}, sizeof(float)) != 0) return 0;
  return 1;
}

static void reset(void) {
  memset(dst8, 0xCD, sizeof(dst8));
  for (int i = 0; i < N; i++) dstf[i] = -9.5f;
}

#define CODE(call, want)                                                       \
  do {                                                                         \
    reset();                                                                   \
    const int rc_ = (call);                                                    \
    EXPECT(rc_ == (want), "%s returned %d, want %d", #call, rc_, (want));      \
    EXPECT(untouched(), "%s wrote to dst on error", #call);                    \
  } while (0)

int main(void) {
  for (int i = 0; i < N; i++) {
    src8[i] = (uint8_t) (i * 37 + (i / 7) * 11);
    srcf[i] = (float) src8[i] / 255.0f;
  }
  const float k3[9] = {0, -1, 0, -1, 5, -1, 0, -1, 0};
  const int64_t s = W * C;

  /* filter2d: src, src_stride, dst, dst_stride, height, width, channels, kernel, kh, kw, border */
  CODE(tilegen_filter2d_f32(NULL, s, dstf, s, H, W, C, k3, 3, 3, 0), -1);
  CODE(tilegen_filter2d_f32(srcf, 5, dstf, s, H, W, C, k3, 3, 3, 0), -2);
  CODE(tilegen_filter2d_f32(srcf, s, NULL, s, H, W, C, k3, 3, 3, 0), -3);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, -5, H, W, C, k3, 3, 3, 0), -4);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, s, 0, W, C, k3, 3, 3, 0), -5);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, s, H, -1, C, k3, 3, 3, 0), -6);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, s, H, W, 0, k3, 3, 3, 0), -7);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, s, H, W, C, NULL, 3, 3, 0), -8);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, s, H, W, C, k3, 0, 3, 0), -9);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, s, H, W, C, k3, 3, -3, 0), -10);
  CODE(tilegen_filter2d_f32(srcf, s, dstf, s, H, W, C, k3, 3, 3, 5), -11);
  CODE(tilegen_filter2d_u8(src8, s, dst8, s, H, W, C, k3, 3, 3, -1), -11);
  /* gaussian: ..., ksize, sigma, border */
  CODE(tilegen_gaussian_blur_u8(src8, s, dst8, s, H, W, C, 4, 1.0, 0), -8);
  CODE(tilegen_gaussian_blur_u8(src8, s, dst8, s, H, W, C, 0, 1.0, 0), -8);
  CODE(tilegen_gaussian_blur_f32(srcf, s, dstf, s, H, W, C, 3, 0.0 / 0.0, 0), -9);
  CODE(tilegen_gaussian_blur_f32(srcf, s, dstf, s, H, W, C, 3, 1.0, 7), -10);
  CODE(tilegen_gaussian_blur_u8(src8, s, dst8, s, H, W, 513, 3, 1.0, 0), -7);
  /* box: ..., ksize, border */
  CODE(tilegen_box_blur_u8(src8, s, dst8, s, H, W, C, 0, 0), -8);
  CODE(tilegen_box_blur_u8(src8, s, dst8, s, H, W, C, 258, 0), -8);
  CODE(tilegen_box_blur_f32(srcf, s, dstf, s, H, W, C, 3, 9), -9);
  /* unsharp: ..., ksize, sigma, amount, threshold, border */
  CODE(tilegen_unsharp_mask_u8(src8, s, dst8, s, H, W, C, 2, 1.0, 1.0, 0, 0), -8);
  CODE(tilegen_unsharp_mask_u8(src8, s, dst8, s, H, W, C, 5, 1.0, 1.0 / 0.0, 0, 0), -10);
  CODE(tilegen_unsharp_mask_f32(srcf, s, dstf, s, H, W, C, 5, 1.0, 1.0, -1, 0), -11);
  CODE(tilegen_unsharp_mask_f32(srcf, s, dstf, s, H, W, C, 5, 1.0, 1.0, 0, 5), -12);
  /* NULL images, every entry point: src is parameter 1, dst 3 (and filter2d_u8's kernel 8) */
  CODE(tilegen_filter2d_u8(NULL, s, dst8, s, H, W, C, k3, 3, 3, 0), -1);
  CODE(tilegen_filter2d_u8(src8, s, NULL, s, H, W, C, k3, 3, 3, 0), -3);
  CODE(tilegen_filter2d_u8(src8, s, dst8, s, H, W, C, NULL, 3, 3, 0), -8);
  CODE(tilegen_gaussian_blur_u8(NULL, s, dst8, s, H, W, C, 3, 1.0, 0), -1);
  CODE(tilegen_gaussian_blur_u8(src8, s, NULL, s, H, W, C, 3, 1.0, 0), -3);
  CODE(tilegen_gaussian_blur_f32(NULL, s, dstf, s, H, W, C, 3, 1.0, 0), -1);
  CODE(tilegen_gaussian_blur_f32(srcf, s, NULL, s, H, W, C, 3, 1.0, 0), -3);
  CODE(tilegen_box_blur_u8(NULL, s, dst8, s, H, W, C, 3, 0), -1);
  CODE(tilegen_box_blur_u8(src8, s, NULL, s, H, W, C, 3, 0), -3);
  CODE(tilegen_box_blur_f32(NULL, s, dstf, s, H, W, C, 3, 0), -1);
  CODE(tilegen_box_blur_f32(srcf, s, NULL, s, H, W, C, 3, 0), -3);
  CODE(tilegen_unsharp_mask_u8(NULL, s, dst8, s, H, W, C, 5, 1.0, 1.0, 0, 0), -1);
  CODE(tilegen_unsharp_mask_u8(src8, s, NULL, s, H, W, C, 5, 1.0, 1.0, 0, 0), -3);
  CODE(tilegen_unsharp_mask_f32(NULL, s, dstf, s, H, W, C, 5, 1.0, 1.0, 0, 0), -1);
  CODE(tilegen_unsharp_mask_f32(srcf, s, NULL, s, H, W, C, 5, 1.0, 1.0, 0, 0), -3);

  /* The _ex forms: type 1, src 2, ..., batch 9, then each function's own. */
  const double k3d[9] = {0, -1, 0, -1, 5, -1, 0, -1, 0}, val[3] = {1, 2, 3};
  CODE(tilegen_gaussian_blur_ex(7, src8, s, dst8, s, H, W, C, 1, 0, 0, 3, 3, 1, 0, 0, NULL), -1);
  CODE(tilegen_gaussian_blur_ex(0, NULL, s, dst8, s, H, W, C, 1, 0, 0, 3, 3, 1, 0, 0, NULL), -2);
  CODE(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, 0, 1, 0, 0, 3, 3, 1, 0, 0, NULL), -8);
  CODE(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, C, -1, 0, 0, 3, 3, 1, 0, 0, NULL), -9);
  CODE(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, C, 1, 0, 0, 4, 3, 1, 0, 0, NULL), -12);
  CODE(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, C, 1, 0, 0, 3, 0, 0, 0, 0, NULL), -13);
  CODE(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, C, 1, 0, 0, 0, 3, 1e9, 0, 0, NULL), -12);
  CODE(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, C, 1, 0, 0, 3, 3, 1, 0, 5, NULL), -16);
  CODE(tilegen_box_blur_ex(0, src8, s, dst8, s, H, W, C, 1, 0, 0, 258, 2, val), -12);
  CODE(tilegen_box_blur_ex(2, srcf, s, dstf, s, H, W, C, 1, 0, 0, 3, -1, val), -13);
  CODE(tilegen_filter2d_ex(3, srcf, s, dstf, s, H, W, C, 1, 0, 0, NULL, 3, 3, 0, NULL), -12);
  CODE(tilegen_filter2d_ex(1, src8, s, dst8, s, H, W, C, 1, 0, 0, k3d, 3, 0, 0, NULL), -14);
  CODE(tilegen_unsharp_mask_ex(0, src8, s, dst8, s, H, W, C, 1, 0, 0, 5, 1, 1, -1, 0, NULL), -15);
  CODE(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, C, 0, 0, 0, 3, 3, 1, 0, 0, NULL), 0);
  /* ... and equal the typed functions; a batch of one with the constant value unused */
  EXPECT(tilegen_gaussian_blur_u8(src8, s, ref8, s, H, W, C, 5, 1.1, 3) == 0, "gaussian");
  EXPECT(tilegen_gaussian_blur_ex(0, src8, s, dst8, s, H, W, C, 1, 0, 0, 5, 5, 1.1, 0, 3, val) ==
             0 && memcmp(dst8, ref8, sizeof(dst8)) == 0, "gaussian_ex differs");

  /* In place equals out of place. */
  EXPECT(tilegen_gaussian_blur_u8(src8, s, ref8, s, H, W, C, 5, 1.1, 0) == 0, "gaussian");
  memcpy(dst8, src8, sizeof(dst8));
  EXPECT(tilegen_gaussian_blur_u8(dst8, s, dst8, s, H, W, C, 5, 1.1, 0) == 0, "in place");
  EXPECT(memcmp(dst8, ref8, sizeof(dst8)) == 0, "in-place Gaussian differs");
  EXPECT(tilegen_filter2d_f32(srcf, s, reff, s, H, W, C, k3, 3, 3, 1) == 0, "filter2d");
  memcpy(dstf, srcf, sizeof(dstf));
  EXPECT(tilegen_filter2d_f32(dstf, s, dstf, s, H, W, C, k3, 3, 3, 1) == 0, "in place");
  EXPECT(memcmp(dstf, reff, sizeof(dstf)) == 0, "in-place filter2d differs");

  /* A negative source stride (the image upside down) equals filtering a flipped copy. */
  static uint8_t flip[N], out[N];
  for (int y = 0; y < H; y++) memcpy(flip + y * s, src8 + (H - 1 - y) * s, (size_t) s);
  EXPECT(tilegen_box_blur_u8(flip, s, ref8, s, H, W, C, 5, 2) == 0, "box");
  EXPECT(tilegen_box_blur_u8(src8 + (H - 1) * s, -s, out, s, H, W, C, 5, 2) == 0, "box -s");
  EXPECT(memcmp(out, ref8, sizeof(out)) == 0, "negative stride differs");

  /* A 1x1 box is a copy. */
  EXPECT(tilegen_box_blur_u8(src8, s, out, s, H, W, C, 1, 0) == 0 &&
             memcmp(out, src8, sizeof(out)) == 0, "1x1 box");

  if (failures == 0) printf("OK\n");
  return failures ? 1 : 0;
}
