/*
 * sdk_demo: a photo-editing pipeline on the tilegen C SDK (plain C, libtilegen.a -lpthread -lm).
 *
 *   sdk_demo IN.ppm|IN.pgm OUT [THREADS]
 *
 * Reads a binary PPM (P6) or PGM (P5) with maxval 255 and applies, in order:
 *   1. a colour matrix (3-channel images only): every pixel times a 3x3 matrix plus an offset,
 *      one GEMM of (pixels x 3) by (3 x 3) with the offset as its bias, rounded to nearest even
 *      and saturated;
 *   2. a 5x5 Gaussian blur, sigma 1.1;
 *   3. an unsharp mask (5x5, sigma 1.0, amount 1.5, threshold 2);
 *   4. a 3x3 sharpening filter.
 * and writes the result in the input's format. tests/test_sdk.py runs the same pipeline through
 * the Python API and compares the pixels.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegen.h"

/* Sepia-like toning: out = M * rgb + offset (per channel). */
static const float COLOUR_MATRIX[3][3] = {
    {0.393f, 0.769f, 0.189f}, {0.349f, 0.686f, 0.168f}, {0.272f, 0.534f, 0.131f}};
static const float COLOUR_OFFSET[3] = {-10.0f, -5.0f, 8.0f};
static const float SHARPEN[9] = {0.0f, -0.25f, 0.0f, -0.25f, 2.0f, -0.25f, 0.0f, -0.25f, 0.0f};

typedef struct {
  int64_t width, height, channels;
  uint8_t* pixels;
} image;

static int skip_space_and_comments(FILE* f) {
  int c;
  while ((c = fgetc(f)) != EOF) {
    if (c == '#') {
      while ((c = fgetc(f)) != EOF && c != '\n') {
      }
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      ungetc(c, f);
      return 0;
    }
  }
  return -1;
}

static int read_pnm(const char* path, image* img) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  char magic[3] = {0};
  long w = 0, h = 0, maxval = 0;
  int ok = fread(magic, 1, 2, f) == 2 && (magic[1] == '5' || magic[1] == '6') && magic[0] == 'P' &&
           !skip_space_and_comments(f) && fscanf(f, "%ld", &w) == 1 &&
           !skip_space_and_comments(f) && fscanf(f, "%ld", &h) == 1 &&
           !skip_space_and_comments(f) && fscanf(f, "%ld", &maxval) == 1 && maxval == 255 &&
           w > 0 && h > 0 && fgetc(f) != EOF;
  if (ok) {
    img->width = w;
    img->height = h;
    img->channels = magic[1] == '6' ? 3 : 1;
    const size_t n = (size_t) (w * h * img->channels);
    img->pixels = malloc(n);
    ok = img->pixels && fread(img->pixels, 1, n, f) == n;
  }
  fclose(f);
  return ok ? 0 : -1;
}

static int write_pnm(const char* path, const image* img) {
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  fprintf(f, "P%c\n%lld %lld\n255\n", img->channels == 3 ? '6' : '5', (long long) img->width,
          (long long) img->height);
  const size_t n = (size_t) (img->width * img->height * img->channels);
  const int ok = fwrite(img->pixels, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* Step 1: every pixel (a row of the HW x 3 matrix P) becomes P * M^T + offset. */
static int colour_matrix(image* img) {
  const int64_t n = img->width * img->height;
  float* rgb = malloc(sizeof(float) * n * 3);
  float* out = malloc(sizeof(float) * n * 3);
  float mt[9];
  if (!rgb || !out) return 1;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) mt[j * 3 + i] = COLOUR_MATRIX[i][j];
  for (int64_t i = 0; i < n * 3; i++) rgb[i] = (float) img->pixels[i];
  int rc = tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, n, 3, 3, 1.0f,
                            rgb, 3, mt, 3, 0.0f, out, 3, COLOUR_OFFSET, TILEGEN_ACT_NONE);
  for (int64_t i = 0; rc == 0 && i < n * 3; i++) {
    const float v = nearbyintf(out[i]);  /* the default rounding: to nearest, ties to even */
    img->pixels[i] = (uint8_t) (v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
  }
  free(rgb);
  free(out);
  return rc;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s IN.ppm|IN.pgm OUT [THREADS]\n", argv[0]);
    return 2;
  }
  if (argc > 3) tilegen_set_num_threads(atoi(argv[3]));
  image img, tmp;
  if (read_pnm(argv[1], &img) != 0) {
    fprintf(stderr, "%s: not a binary PPM/PGM with maxval 255\n", argv[1]);
    return 1;
  }
  tmp = img;
  tmp.pixels = malloc((size_t) (img.width * img.height * img.channels));
  const int64_t stride = img.width * img.channels;
  int rc = img.channels == 3 ? colour_matrix(&img) : 0;
  if (rc == 0)
    rc = tilegen_gaussian_blur_u8(img.pixels, stride, tmp.pixels, stride, img.height, img.width,
                                  img.channels, 5, 1.1, TILEGEN_BORDER_REFLECT101);
  if (rc == 0)
    rc = tilegen_unsharp_mask_u8(tmp.pixels, stride, img.pixels, stride, img.height, img.width,
                                 img.channels, 5, 1.0, 1.5, 2.0, TILEGEN_BORDER_REFLECT101);
  if (rc == 0)
    rc = tilegen_filter2d_u8(img.pixels, stride, tmp.pixels, stride, img.height, img.width,
                             img.channels, SHARPEN, 3, 3, TILEGEN_BORDER_REFLECT101);
  if (rc != 0 || write_pnm(argv[2], &tmp) != 0) {
    fprintf(stderr, "sdk_demo: failed (%d)\n", rc);
    return 1;
  }
  printf("%s: %lldx%lldx%lld on %s, tilegen %s\n", argv[2], (long long) img.width,
         (long long) img.height, (long long) img.channels, tilegen_isa_name(), tilegen_version());
  free(img.pixels);
  free(tmp.pixels);
  return 0;
}
