/*
 * What the float32 convolution driver's files share: the geometry, the plan, the path numbers,
 * small helpers, and the entry point each path's file gives conv.c (which checks the
 * parameters, builds plans, picks the path and runs it).
 *   conv_plain.c  the plain loops (float64, and what no kernel serves)
 *   conv_gemm.c   1x1 convolutions as GEMM
 *   conv_pack.c   the weights packed for the kernel paths
 *   conv_rows.c   the row-cache driver: direct (NHWC), im2col, depthwise (NHWC)
 *   conv_bands.c  the channel-first band driver: direct-nchw, depthwise-nchw(-rows)
 */
#ifndef TG_CONV_INTERNAL_H
#define TG_CONV_INTERNAL_H

#include <stdint.h>

#include "tg_conv.h"

#define TG_CONV_PARALLEL_MIN_FLOPS 2.0e6  /* below this a convolution runs on one thread */
#define TG_CONV_MAX_KH 64                 /* taller filters take the plain path */

typedef struct {
  int layout;  /* TILEGEN_NCHW or TILEGEN_NHWC */
  int64_t cin, cout, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, groups;
  int act;
} geom;

/* The paths, by their conv.c method_names. */
enum { M_GEMM, M_DIRECT, M_NCHW, M_IM2COL, M_DEPTHWISE, M_DW_NCHW, M_DW_ROWS, M_PLAIN, M_COUNT };

struct tilegen_conv2d_f32_plan {
  geom g;
  int method;
  const tg_conv_config* cfg;
  const tg_conv_shape* shape;    /* direct: the filter's kernels; im2col: the 1x1 kernels */
  const tg_dwconv_shape* dw;
  int fold;                      /* the kernel's channel loop runs over KW taps x C channels */
  int64_t ps_mult;               /* a stride-1 kernel serving stride sw: pixel stride x sw */
  int64_t cg, kg;                /* input / output channels per group */
  int64_t nr, nb, panel;         /* panel width, panels per group, floats per panel */
  int64_t gstride;               /* direct-nchw: packed floats per group */
  float* wpack;                  /* packed panels (direct, im2col, depthwise), 64-byte aligned */
  const float* w;                /* the weights as given (gemm, plain) */
  const float* bias;
  int owns;                      /* wpack, w and bias are the plan's own copies */
};

static inline int64_t round_up(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }

static inline int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t pa, int64_t pb,
                               int64_t d) {
  const int64_t span = d * (k - 1) + 1, padded = in + pa + pb;
  return padded < span ? 0 : (padded - span) / s + 1;
}

static inline int is_pointwise(const geom* g) {
  return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
         g->pb == 0 && g->pr == 0;
}

/* The plain path, both layouts (conv_plain.c). */
void tg_conv_plain_f32(const geom* g, int64_t n, int64_t h, int64_t w, const float* x,
                       const float* k, const float* bias, float* y);
void tg_conv_plain_f64(const geom* g, int64_t n, int64_t h, int64_t w, const double* x,
                       const double* k, const double* bias, double* y);
/* A 1x1 convolution (stride 1, no padding) of n images of hw pixels as GEMMs (conv_gemm.c). */
void tg_conv_gemm_path_f32(const geom* g, int64_t n, int64_t hw, const float* x, const float* k,
                           const float* bias, float* y);
void tg_conv_gemm_path_f64(const geom* g, int64_t n, int64_t hw, const double* x,
                           const double* k, const double* bias, double* y);
/* conv_pack.c: the floats p's path packs (setting p's panel sizes), 0 when it packs nothing;
   and the packing of the weights k and bias into p->wpack. */
int64_t tg_conv_pack_floats(tilegen_conv2d_f32_plan* p);
void tg_conv_pack(tilegen_conv2d_f32_plan* p, const float* k, const float* bias);
/* Runs a direct, im2col or depthwise plan (conv_rows.c), or a direct-nchw, depthwise-nchw or
   depthwise-nchw-rows plan (conv_bands.c); -1 when scratch memory cannot be had. */
int tg_conv_run_rows(const tilegen_conv2d_f32_plan* p, int64_t n, int64_t h, int64_t w,
                     const float* x, float* y);
int tg_conv_run_bands(const tilegen_conv2d_f32_plan* p, int64_t n, int64_t h, int64_t w,
                      const float* x, float* y);

#endif
