/* A C client of the SDK's conv2d and attention ops: reads its float32 inputs from IN (written by
   tests/test_sdk.py, in the order below), runs tilegen_conv2d_f32 (NHWC 3x3 stride 1 with ReLU,
   NCHW 3x3 stride 2), tilegen_attention_f32 (grouped-query, causal) and
   tilegen_paged_attention_f32, and writes the outputs to OUT in the same order. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tilegen.h"

enum { H = 9, W = 11, CI = 5, CO = 4, OH2 = 5, OW2 = 6 };                 /* convolution */
enum { HQ = 2, SQ = 5, SK = 7, D = 8, DV = 6 };                           /* attention */
enum { PB = 2, PHQ = 4, PHKV = 2, BS = 4, NB = 6, MAXB = 3 };             /* paged decode */

static float* take(FILE* f, size_t n) {
  float* p = malloc(n * sizeof(float));
  if (!p || fread(p, sizeof(float), n, f) != n) exit(3);
  return p;
}

static void put(FILE* f, const float* p, size_t n) {
  if (fwrite(p, sizeof(float), n, f) != n) exit(4);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  FILE* in = fopen(argv[1], "rb");
  FILE* out = fopen(argv[2], "wb");
  if (!in || !out) return 2;
  float* x = take(in, H * W * CI);          /* NHWC */
  float* w = take(in, CO * 3 * 3 * CI);     /* OHWI */
  float* bias = take(in, CO);
  float* xc = take(in, CI * H * W);         /* NCHW */
  float* wc = take(in, CO * CI * 3 * 3);    /* OIHW */
  float* q = take(in, HQ * SQ * D);
  float* k = take(in, SK * D);
  float* v = take(in, SK * DV);
  float* pq = take(in, PB * PHQ * D);
  float* kc = take(in, NB * BS * PHKV * D);
  float* vc = take(in, NB * BS * PHKV * D);
  float y[H * W * CO], yc[CO * OH2 * OW2], o[HQ * SQ * DV], po[PB * PHQ * D];
  int rc = tilegen_conv2d_f32(TILEGEN_NHWC, 1, H, W, CI, x, CO, 3, 3, w, bias, 1, 1, 1, 1, 1, 1,
                              1, 1, 1, TILEGEN_ACT_RELU, y);
  rc |= tilegen_conv2d_f32(TILEGEN_NCHW, 1, H, W, CI, xc, CO, 3, 3, wc, NULL, 2, 2, 1, 1, 1, 1,
                           1, 1, 1, TILEGEN_ACT_NONE, yc);
  /* q (HQ, SQ, D), k (1, SK, D), v (1, SK, DV): no batch dims, strides head, row */
  const int64_t qs[2] = {SQ * D, D}, ks[2] = {SK * D, D}, vs[2] = {SK * DV, DV};
  const int64_t os[2] = {SQ * DV, DV};
  rc |= tilegen_attention_f32(0, NULL, HQ, 1, SQ, SK, D, DV, q, qs, k, ks, v, vs, NULL, NULL,
                              NULL, 1, 1.0f / sqrtf((float) D), o, os);
  const int32_t table[PB * MAXB] = {5, 1, 3, 0, 2, 4}, lens[PB] = {5, 9};
  const int64_t cs[3] = {BS * PHKV * D, PHKV * D, D};
  rc |= tilegen_paged_attention_f32(PB, PHQ, PHKV, D, pq, PHQ * D, D, kc, cs, vc, cs, NB, BS,
                                    table, MAXB, MAXB, lens, 1.0f / sqrtf((float) D), po,
                                    PHQ * D, D);
  put(out, y, H * W * CO);
  put(out, yc, CO * OH2 * OW2);
  put(out, o, HQ * SQ * DV);
  put(out, po, PB * PHQ * D);
  fclose(in);
  printf("isa %s rc %d\n", tilegen_isa_name(), rc);
  return fclose(out) != 0 || rc != 0;
}
