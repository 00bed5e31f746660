/*
 * 2-D convolution: tilegen_conv2d_f32/f64 and the packed-weight plans.
 *
 * Paths (plan_method_):
 * - gemm: 1x1 filters at stride 1 with no padding as one GEMM per image and group (the
 *   GEMM driver, with the bias per output channel: per column in NHWC, per row in NCHW):
 *   float64's path; float32 measured faster on the conv kernels (direct, direct-nchw).
 * - direct: a conv kernel of the filter's shape reads the input rows in place (NHWC) or from a
 *   per-thread cache of a few padded rows, KH row pointers per output row; a stride-1 kernel
 *   serves any stride through the pixel stride, and with no horizontal dilation and one group
 *   a KHx1 kernel covers all KW taps as one run of KW*C channels.
 * - im2col: any other filter: each tile of MR output pixels gathers its MR x (KH*KW*C) patch
 *   (bounded scratch, reused by every block of output channels) for the 1x1 kernel.
 * - depthwise: groups == channels, one output channel each: the dwconv kernels.
 * - plain: float64, and what no kernel serves (depthwise with a channel multiplier): loops.
 * Rows are cached padded and channels last: NCHW input rows are transposed into the cache as
 * they are first needed (once per row), and NCHW output rows are transposed out of a per-thread
 * row buffer, so NCHW never reorders a whole tensor and scratch stays a few rows per thread.
 * Threads split the output rows of the batch.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tg_conv.h"
#include "tg_gemm.h"
#include "tg_threads.h"
#include "tg_workspace.h"

_Static_assert(TILEGEN_ACT_NONE == TG_ACT_NONE && TILEGEN_ACT_RELU == TG_ACT_RELU &&
                   TILEGEN_ACT_RELU6 == TG_ACT_RELU6 && TILEGEN_ACT_GELU == TG_ACT_GELU &&
                   TILEGEN_ACT_SILU == TG_ACT_SILU,
               "the kernels' activation codes are tilegen.h's");

#define TG_CONV_PARALLEL_MIN_FLOPS 2.0e6  /* below this a convolution runs on one thread */
#ifndef TG_CONV_COPY_MACS
#define TG_CONV_COPY_MACS 16  /* a copied-out output value costs about this many MACs (band_job.tiling;
                                 Zen 5: rows beat copies on the stem, 837 <= 16 * 112) */
#endif
#define TG_CONV_MAX_KH 64                 /* taller filters take the plain path */
#define TG_CONV_MAX_OUT_ROWS 2            /* output rows of a depthwise call (dw_rows) */

typedef struct {
  int layout;  /* TILEGEN_NCHW or TILEGEN_NHWC */
  int64_t cin, cout, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, groups;
  int act;
} geom;

enum { M_GEMM, M_DIRECT, M_NCHW, M_IM2COL, M_DEPTHWISE, M_DW_NCHW, M_DW_ROWS, M_PLAIN, M_COUNT };
static const char* const method_names[M_COUNT] = {"gemm", "direct", "direct-nchw", "im2col",
                                                  "depthwise", "depthwise-nchw",
                                                  "depthwise-nchw-rows", "plain"};
static atomic_int forced_method = -1;  /* a test hook: take this path where it applies */

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

/* ---- parameter checks (numbers: the tilegen_conv2d_* signature) ---- */

static int check_geom(const geom* g) {
  if (g->layout != TILEGEN_NCHW && g->layout != TILEGEN_NHWC) return -1;
  if (g->cin < 1) return -5;
  if (g->cout < 1) return -7;
  if (g->kh < 1) return -8;
  if (g->kw < 1) return -9;
  if (g->sh < 1) return -12;
  if (g->sw < 1) return -13;
  if (g->pt < 0) return -14;
  if (g->pl < 0) return -15;
  if (g->pb < 0) return -16;
  if (g->pr < 0) return -17;
  if (g->dh < 1) return -18;
  if (g->dw < 1) return -19;
  if (g->groups < 1 || g->cin % g->groups || g->cout % g->groups) return -20;
  if (g->act < TILEGEN_ACT_NONE || g->act > TILEGEN_ACT_SILU) return -21;
  /* Sizes whose products could overflow int64 are not convolutions anyone runs. */
  if (g->cin > (1 << 24) || g->cout > (1 << 24)) return g->cin > (1 << 24) ? -5 : -7;
  if (g->kh > 4096 || g->kw > 4096) return g->kh > 4096 ? -8 : -9;
  return 0;
}

/* The spatial checks: the kernel must fit the padded input. */
static int check_input(const geom* g, int64_t n, int64_t h, int64_t w) {
  if (n < 0) return -2;
  if (h < 1 || h > (1 << 28)) return -3;
  if (w < 1 || w > (1 << 28)) return -4;
  if (out_size(h, g->kh, g->sh, g->pt, g->pb, g->dh) < 1) return -8;
  if (out_size(w, g->kw, g->sw, g->pl, g->pr, g->dw) < 1) return -9;
  return 0;
}

/* ---- the plain path (float64, and shapes no kernel serves), both layouts ---- */

static inline double activate(double x, int act) {
  switch (act) {
    case TILEGEN_ACT_RELU: return x > 0 ? x : (x == x ? 0.0 : x);
    case TILEGEN_ACT_RELU6: return x > 0 ? (x < 6 ? x : 6.0) : (x == x ? 0.0 : x);
    case TILEGEN_ACT_GELU: return 0.5 * x * erfc(-x * 0.70710678118654752440);
    case TILEGEN_ACT_SILU: return x / (1.0 + exp(-x));
    default: return x;
  }
}

/* Element strides of x (n, c, h, w), the weights (o, i, kh, kw) and y for the layout. */
typedef struct { int64_t n, c, h, w; } strides4;

static void layout_strides(const geom* g, int64_t h, int64_t w, int64_t oh, int64_t ow,
                           strides4* sx, strides4* sk, strides4* sy) {
  const int64_t cg = g->cin / g->groups;
  if (g->layout == TILEGEN_NCHW) {
    *sx = (strides4){g->cin * h * w, h * w, w, 1};
    *sy = (strides4){g->cout * oh * ow, oh * ow, ow, 1};
    *sk = (strides4){cg * g->kh * g->kw, g->kh * g->kw, g->kw, 1};
  } else {
    *sx = (strides4){h * w * g->cin, 1, w * g->cin, g->cin};
    *sy = (strides4){oh * ow * g->cout, 1, ow * g->cout, g->cout};
    *sk = (strides4){g->kh * g->kw * cg, 1, g->kw * cg, cg};
  }
}

#define TG_DEFINE_PLAIN(DT, T)                                                                 \
  typedef struct {                                                                             \
    const geom* g;                                                                             \
    int64_t n, h, w, oh, ow;                                                                   \
    const T *x, *k, *bias;                                                                     \
    T* y;                                                                                      \
  } plain_job_##DT;                                                                              \
                                                                                               \
  static void plain_task_##DT(void* ctx, int tid, int nt) {                                    \
    const plain_job_##DT* q = ctx;                                                                 \
    const geom* g = q->g;                                                                      \
    strides4 sx, sk, sy;                                                                       \
    layout_strides(g, q->h, q->w, q->oh, q->ow, &sx, &sk, &sy);                               \
    const int64_t cg = g->cin / g->groups, kg = g->cout / g->groups;                          \
    const int64_t rows = q->n * q->oh;                                                         \
    for (int64_t r = rows * tid / nt; r < rows * (tid + 1) / nt; r++) {                        \
      const int64_t ni = r / q->oh, oy = r % q->oh;                                            \
      for (int64_t ox = 0; ox < q->ow; ox++)                                                   \
        for (int64_t co = 0; co < g->cout; co++) {                                             \
          const int64_t gi = co / kg;                                                          \
          double acc = q->bias ? (double) q->bias[co] : 0.0;                                   \
          for (int64_t ky = 0; ky < g->kh; ky++) {                                             \
            const int64_t iy = oy * g->sh + ky * g->dh - g->pt;                                \
            if (iy < 0 || iy >= q->h) continue;                                                \
            for (int64_t kx = 0; kx < g->kw; kx++) {                                           \
              const int64_t ix = ox * g->sw + kx * g->dw - g->pl;                              \
              if (ix < 0 || ix >= q->w) continue;                                              \
              const T* xp = q->x + ni * sx.n + (gi * cg) * sx.c + iy * sx.h + ix * sx.w;       \
              const T* kp = q->k + co * sk.n + ky * sk.h + kx * sk.w;                          \
              for (int64_t ci = 0; ci < cg; ci++)                                              \
                acc += (double) xp[ci * sx.c] * (double) kp[ci * sk.c];                        \
            }                                                                                  \
          }                                                                                    \
          q->y[ni * sy.n + co * sy.c + oy * sy.h + ox * sy.w] = (T) activate(acc, g->act);    \
        }                                                                                      \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  static void plain_##DT(const geom* g, int64_t n, int64_t h, int64_t w, const T* x,          \
                         const T* k, const T* bias, T* y) {                                    \
    plain_job_##DT q = {g, n, h, w, out_size(h, g->kh, g->sh, g->pt, g->pb, g->dh),               \
                    out_size(w, g->kw, g->sw, g->pl, g->pr, g->dw), x, k, bias, y};            \
    const double flops = 2.0 * (double) n * (double) q.oh * (double) q.ow *                    \
                         (double) g->cout * (double) (g->cin / g->groups) * g->kh * g->kw;     \
    int nt = flops < TG_CONV_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();                        \
    if (nt > n * q.oh) nt = (int) (n * q.oh);                                                  \
    tg_parallel_run(nt, plain_task_##DT, &q);                                                  \
  }

TG_DEFINE_PLAIN(f32, float)
TG_DEFINE_PLAIN(f64, double)

/* ---- 1x1 convolutions as GEMM ---- */

/* One product per image and group. NHWC: Y[p, co] = X[p, ci] W[co, ci]^T, bias per column.
   NCHW: Y[co, p] = W[co, ci] X[ci, p], written as its transpose (p x co, C column-major) so
   that the driver's per-column bias becomes the per-row one when it turns the problem back. */
#define TG_DEFINE_GEMM_PATH(DT, T)                                                              \
  static void gemm_path_##DT(const geom* g, int64_t n, int64_t hw, const T* x, const T* k,     \
                             const T* bias, T* y) {                                            \
    const int64_t cg = g->cin / g->groups, kg = g->cout / g->groups;                           \
    for (int64_t ni = 0; ni < n; ni++)                                                         \
      for (int64_t gi = 0; gi < g->groups; gi++) {                                             \
        const T* b = bias ? bias + gi * kg : NULL;                                             \
        const T* kk = k + gi * kg * cg;                                                        \
        if (g->layout == TILEGEN_NHWC)                                                         \
          tg_gemm_##DT(hw, kg, cg, 1, x + ni * hw * g->cin + gi * cg, g->cin, 1, kk, 1, cg, 0, \
                       y + ni * hw * g->cout + gi * kg, g->cout, 1, b, 1, g->act);             \
        else                                                                                   \
          tg_gemm_##DT(hw, kg, cg, 1, x + (ni * g->cin + gi * cg) * hw, 1, hw, kk, 1, cg, 0,   \
                       y + (ni * g->cout + gi * kg) * hw, 1, hw, b, 1, g->act);                \
      }                                                                                        \
  }

TG_DEFINE_GEMM_PATH(f32, float)
TG_DEFINE_GEMM_PATH(f64, double)

/* ---- the kernel paths (float32) ---- */

static int is_depthwise(const geom* g) { return g->groups == g->cin && g->cout == g->cin; }

static int is_pointwise(const geom* g) {
  return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
         g->pb == 0 && g->pr == 0;
}

/* Picks the path and kernels of a float32 plan. */
static void plan_method_(tilegen_conv2d_f32_plan* p) {
  const geom* g = &p->g;
  const tg_conv_config* cfg = p->cfg;
  const int force = atomic_load(&forced_method);
  p->method = M_PLAIN;
  p->ps_mult = 1;
  p->fold = 0;
  p->shape = NULL;
  p->dw = NULL;
  if (is_depthwise(g)) {
    if (force == M_PLAIN || g->kh > TG_CONV_MAX_KH) return;
    /* Channel first, unit stride and dilation: row tiles of one channel where the ISA has
       them (each input row loaded once, as aligned vectors, for every output row it feeds). */
    if (g->layout == TILEGEN_NCHW && (force < 0 || force == M_DW_ROWS) && g->sh == 1 &&
        g->sw == 1 && g->dh == 1 && g->dw == 1 &&
        (p->dw = tg_dwconv_find(cfg, (int) g->kh, (int) g->kw, 1, 2, 0)) != NULL) {
      p->method = M_DW_ROWS;
      return;
    }
    /* Channel first: a stride-1 kernel, a stride splitting the band into phase planes. */
    if (g->layout == TILEGEN_NCHW && (force < 0 || force == M_DW_NCHW) &&
        (p->dw = tg_dwconv_find(cfg, (int) g->kh, (int) g->kw, 1, 1, 0)) != NULL) {
      p->method = M_DW_NCHW;
      return;
    }
    /* Unit dilation: the kernel that loads each input column once; else any dilation, at the
       stride or with a stride-1 kernel over a longer pixel stride. */
    p->dw = g->dw == 1 ? tg_dwconv_find(cfg, (int) g->kh, (int) g->kw, (int) g->sw, 0, 1) : NULL;
    if (p->dw == NULL) p->dw = tg_dwconv_find(cfg, (int) g->kh, (int) g->kw, (int) g->sw, 0, 0);
    if (p->dw == NULL && (p->dw = tg_dwconv_find(cfg, (int) g->kh, (int) g->kw, 1, 0, 0)) != NULL)
      p->ps_mult = g->sw;
    if (p->dw != NULL) p->method = M_DEPTHWISE;
    return;
  }
  if (force == M_PLAIN || g->kh > TG_CONV_MAX_KH) return;
  if (g->layout == TILEGEN_NCHW && (force < 0 || force == M_NCHW) &&
      g->kh * g->kw <= TG_CONV_MAX_KH * 16) {
    /* Channel first: a stride-1 kernel of the filter's shape; under a horizontal stride the
       band's columns are split into sw phase planes, where each tap reads consecutive
       values (a stride-2 kernel's loads need a permute per vector, on the port of an FMA). */
    p->shape = tg_conv_find(cfg, (int) g->kh, (int) g->kw, 1, 0, 1);
    if (p->shape != NULL) {
      p->method = M_NCHW;
      return;
    }
  }
  /* 1x1 at stride 1 without padding is a GEMM; the conv kernels beat the GEMM driver there
     (weights packed once, not per call; bias and activation fused into the store), so the
     GEMM route is float64's (and a test hook's). */
  if (is_pointwise(g) && force == M_GEMM) {
    p->method = M_GEMM;
    return;
  }
  const tg_conv_shape* one = tg_conv_find(cfg, 1, 1, 1, 0, 0);
  if (one == NULL) return;
  if (force != M_IM2COL) {
    const int kh = (int) g->kh, kw = (int) g->kw, sw = (int) g->sw, cg = (int) p->cg;
    const tg_conv_shape* s = tg_conv_find(cfg, kh, kw, sw, cg, 0);
    if (s == NULL) s = tg_conv_find(cfg, kh, kw, sw, 0, 0);
    if (s == NULL && (s = tg_conv_find(cfg, kh, kw, 1, 0, 0)) != NULL) p->ps_mult = g->sw;
    if (s == NULL && g->dw == 1 && g->groups == 1) {  /* KW taps as one channel run */
      p->fold = 1;
      s = tg_conv_find(cfg, kh, 1, sw, 0, 0);
      if (s == NULL && (s = tg_conv_find(cfg, kh, 1, 1, 0, 0)) != NULL) p->ps_mult = g->sw;
      if (s == NULL) p->fold = 0;
    }
    if (s != NULL) {
      p->method = M_DIRECT;
      p->shape = s;
      return;
    }
  }
  p->method = M_IM2COL;
  p->shape = one;
}

/* Panels of nr output channels per group: nr bias values, then nr weights per (kh, kw, ci). */
static void pack_panels(const geom* g, const float* k, const float* bias, int64_t nr,
                        float* dst) {
  const int64_t cg = g->cin / g->groups, kg = g->cout / g->groups;
  const int64_t nb = (kg + nr - 1) / nr, taps = g->kh * g->kw, panel = nr * (1 + taps * cg);
  const int nchw = g->layout == TILEGEN_NCHW;
  for (int64_t gi = 0; gi < g->groups; gi++)
    for (int64_t b = 0; b < nb; b++) {
      float* pp = dst + (gi * nb + b) * panel;
      for (int64_t j = 0; j < nr; j++) {
        const int64_t co = b * nr + j;
        pp[j] = co < kg && bias ? bias[gi * kg + co] : 0.0f;
      }
      for (int64_t t = 0; t < taps; t++)
        for (int64_t ci = 0; ci < cg; ci++) {
          float* row = pp + nr * (1 + t * cg + ci);
          for (int64_t j = 0; j < nr; j++) {
            const int64_t co = b * nr + j, o = gi * kg + co;
            /* OIHW: ((o*cg + ci)*KH + kh)*KW + kw; OHWI: ((o*KH + kh)*KW + kw)*cg + ci. */
            row[j] = co >= kg ? 0.0f : nchw ? k[(o * cg + ci) * taps + t] : k[(o * taps + t) * cg + ci];
          }
        }
    }
}

/* Depthwise panels of nr channels: nr bias values, then nr weights per tap. */
static void pack_dw_panels(const geom* g, const float* k, const float* bias, int64_t nr,
                           float* dst) {
  const int64_t nb = (g->cin + nr - 1) / nr, taps = g->kh * g->kw, panel = nr * (1 + taps);
  for (int64_t b = 0; b < nb; b++) {
    float* pp = dst + b * panel;
    for (int64_t j = 0; j < nr; j++) {
      const int64_t c = b * nr + j;
      pp[j] = c < g->cin && bias ? bias[c] : 0.0f;
      for (int64_t t = 0; t < taps; t++) pp[nr * (1 + t) + j] = c < g->cin ? k[c * taps + t] : 0.0f;
    }
  }
}

/* Sizes the packing needs (floats), 0 when the path packs nothing. */
/* Channel-first panels per group (depthwise: one group of one input channel each): for each
   tile of MR output channels (the last one as tall as the kernel that serves the remainder),
   MR bias values, then MR weights per (tap, ci). */
static void pack_nchw_panels(const tilegen_conv2d_f32_plan* p, const float* k, const float* bias,
                             float* dst) {
  const geom* g = &p->g;
  const int dw = p->method == M_DW_NCHW;
  const int64_t mr = dw ? p->dw->mr : p->shape->mr, taps = g->kh * g->kw;
  const int64_t groups = dw ? 1 : g->groups, cg = dw ? 1 : p->cg, kg = dw ? g->cout : p->kg;
  const int* tile_mr = dw ? p->dw->tile_mr : p->shape->tile_mr;
  for (int64_t gi = 0; gi < groups; gi++)
    for (int64_t co0 = 0; co0 < kg; co0 += mr) {
      const int64_t r = kg - co0 < mr ? kg - co0 : mr, t_mr = tile_mr[r];
      float* pp = dst + gi * p->gstride + co0 * (1 + taps * cg);
      for (int64_t i = 0; i < t_mr; i++) {
        const int64_t o = gi * kg + co0 + i;
        pp[i] = i < r && bias ? bias[o] : 0.0f;
        for (int64_t ci = 0; ci < cg; ci++)
          for (int64_t t = 0; t < taps; t++)
            pp[t_mr * (1 + t * cg + ci) + i] = i < r ? k[(o * cg + ci) * taps + t] : 0.0f;
      }
    }
}

static int64_t pack_floats(tilegen_conv2d_f32_plan* p) {
  const geom* g = &p->g;
  if (p->method == M_NCHW || p->method == M_DW_NCHW) {
    const int dw = p->method == M_DW_NCHW;
    const int64_t mr = dw ? p->dw->mr : p->shape->mr, kg = dw ? g->cout : p->kg;
    const int64_t rem = kg % mr, per = 1 + g->kh * g->kw * (dw ? 1 : p->cg);
    const int* tile_mr = dw ? p->dw->tile_mr : p->shape->tile_mr;
    p->nr = dw ? p->cfg->dw_nchw_nr : p->cfg->nchw_nr;
    p->gstride = (kg - rem) * per + (rem ? tile_mr[rem] * per : 0);
    return (dw ? 1 : g->groups) * p->gstride;
  }
  if (p->method == M_DIRECT || p->method == M_IM2COL) {
    p->nr = p->cfg->nr;
    p->nb = (p->kg + p->nr - 1) / p->nr;
    p->panel = p->nr * (1 + g->kh * g->kw * p->cg);
    return g->groups * p->nb * p->panel;
  }
  if (p->method == M_DEPTHWISE) {
    p->nr = p->cfg->dw_nr;
    p->nb = (g->cin + p->nr - 1) / p->nr;
    p->panel = p->nr * (1 + g->kh * g->kw);
    return p->nb * p->panel;
  }
  if (p->method == M_DW_ROWS) {  /* per channel: its bias, then its weight per tap */
    p->nr = p->cfg->dw_nchw_nr;
    return g->cin * (1 + g->kh * g->kw);
  }
  return 0;
}

static void pack(tilegen_conv2d_f32_plan* p, const float* k, const float* bias) {
  if (p->method == M_NCHW || p->method == M_DW_NCHW)
    pack_nchw_panels(p, k, bias, p->wpack);
  else if (p->method == M_DIRECT || p->method == M_IM2COL)
    pack_panels(&p->g, k, bias, p->nr, p->wpack);
  else if (p->method == M_DEPTHWISE)
    pack_dw_panels(&p->g, k, bias, p->nr, p->wpack);
  else if (p->method == M_DW_ROWS)
    for (int64_t c = 0, taps = p->g.kh * p->g.kw; c < p->g.cin; c++) {
      p->wpack[c * (1 + taps)] = bias ? bias[c] : 0.0f;
      memcpy(p->wpack + c * (1 + taps) + 1, k + c * taps, (size_t) taps * sizeof(float));
    }
}

/* ---- the row-cache driver (direct, im2col, depthwise) ----
   Rows are seen in padded columns (column 0 is input column -pl), channels last. NHWC rows are
   read in place wherever a tile's columns lie inside the input; only the border segments that
   tiles reach past it (the first lw padded columns, the columns from rs on) are cached, zero
   filled. Other cases (NCHW input, transposed into the cache; im2col; images so narrow that a
   tile crosses both borders) cache whole padded rows: lw = lp, in every tile's reach. */
enum { TILE_FLAT, TILE_COPY, TILE_ROWS };

typedef struct {
  const tilegen_conv2d_f32_plan* p;
  int64_t n, h, w, oh, ow;
  const float* x;
  float* y;
  int64_t lp;         /* padded row length (columns) the tiles reach */
  int64_t lw, rs;     /* cached: padded columns [0, lw) and [rs, lp); the rest read in place */
  int64_t slot_floats;
  const float* zero;  /* lp * cin zeros: the rows above and below the input */
  int64_t nslot;      /* cached rows per thread */
  int64_t mr;         /* the main tile */
  int64_t t_first, t_last;  /* tiles: [0, t_first), MR at a time to t_last, [t_last, ow) */
  /* Depthwise with shifted blocks, stride 1: the tiles in [t_wrap, t_last) run a wrap block
     (the last dw_shift channels of each pixel's left neighbour and the first NR - dw_shift of
     the pixel, one aligned vector) in place of the head and tail blocks; [t_first, t_wrap)
     is one tile of the main kernel, before which a pixel's left neighbour is padding. */
  int64_t t_wrap;
  int dw_wrap;
  int64_t lda, kdim;  /* im2col: patch row stride and length */
  /* Depthwise: the channel blocks start dw_shift channels before multiples of NR (block 0 is
     the first NR - dw_shift channels), so that in-place loads start on vector boundaries;
     dw_panels holds their weights (the plan's own panels when the shift is 0). */
  int64_t dw_shift, dw_nb;  /* dw_shift is also x's floats past a vector boundary: the cached
                               rows and the zero row start that far in too, like x's */
  int64_t dw_rows;    /* depthwise: output rows per kernel call (1, or the shape's out_rows) */
  const float* dw_panels;
  size_t thread_floats;
  atomic_int failed;  /* a thread could not get its scratch */
} job;

typedef struct {
  float* rows;        /* nslot cached rows (or border segments) */
  int64_t* tags;      /* which (image, row) each slot holds, -1 none */
  float* orow;        /* NCHW output: one row, ow * cout, channels last */
  float* patch;       /* im2col: mr x lda */
} scratch;

/* One input row as the tiles read it: the cached left segment (padded columns from 0), the
   row in place (from column pl) and the cached right segment (from column rs). */
typedef struct { const float *left, *mid, *right; } row_view;

/* Where a tile whose padded columns are [a, b] reads its row (a pointer to column a). */
static inline const float* tile_row(const job* jb, const row_view* v, int64_t a, int64_t b) {
  const int64_t cin = jb->p->g.cin;
  if (b < jb->lw) return v->left + a * cin;
  if (a >= jb->rs) return v->right + (a - jb->rs) * cin;
  return v->mid + (a - jb->p->g.pl) * cin;
}

/* Padded columns [c0, c1) of input row ih of image ni into dst, channels last, zero filled. */
static void fill_columns(const job* jb, int64_t ni, int64_t ih, int64_t c0, int64_t c1,
                         float* dst) {
  const geom* g = &jb->p->g;
  const int64_t cin = g->cin, w = jb->w;
  int64_t i0 = c0 - g->pl, i1 = c1 - g->pl;  /* input columns */
  const int64_t lo = i0 < 0 ? 0 : i0 > w ? w : i0, hi = i1 > w ? w : i1 < 0 ? 0 : i1;
  if (lo > i0) memset(dst, 0, (size_t) ((lo - i0) * cin) * sizeof(float));
  float* d = dst + (lo - i0) * cin;
  if (hi > lo && g->layout == TILEGEN_NHWC) {
    memcpy(d, jb->x + ((ni * jb->h + ih) * w + lo) * cin, (size_t) ((hi - lo) * cin) * sizeof(float));
  } else if (hi > lo) {  /* NCHW: transpose C x W into W x C, in blocks that stay in L1 */
    const float* src = jb->x + ni * cin * jb->h * w + ih * w + lo;
    const int64_t plane = jb->h * w;
    for (int64_t ch0 = 0; ch0 < cin; ch0 += 16)
      for (int64_t w0 = 0; w0 < hi - lo; w0 += 16) {
        const int64_t ch1 = ch0 + 16 < cin ? ch0 + 16 : cin, w1 = w0 + 16 < hi - lo ? w0 + 16 : hi - lo;
        for (int64_t c = ch0; c < ch1; c++)
          for (int64_t x = w0; x < w1; x++) d[x * cin + c] = src[c * plane + x];
      }
  }
  if (i1 > hi) memset(d + (hi - lo) * cin, 0, (size_t) ((i1 - hi) * cin) * sizeof(float));
}

static row_view get_row(const job* jb, scratch* s, int64_t ni, int64_t ih) {
  const geom* g = &jb->p->g;
  const int64_t cin = g->cin;
  const float* mid = jb->lw < jb->rs ? jb->x + (ni * jb->h + ih) * jb->w * cin : NULL;
  if (jb->lw == 0 && jb->rs >= jb->lp) return (row_view){NULL, mid, NULL};  /* all in place */
  const int64_t slot = ih % jb->nslot, tag = ni * jb->h + ih;
  float* dst = s->rows + slot * jb->slot_floats;
  float* right = dst + jb->lw * cin;
  if (s->tags[slot] != tag) {
    s->tags[slot] = tag;
    if (jb->lw > 0) fill_columns(jb, ni, ih, 0, jb->lw, dst);
    if (jb->rs < jb->lp) fill_columns(jb, ni, ih, jb->rs, jb->lp, right);
  }
  return (row_view){dst, mid, right};
}
/* The KH input rows of output row oy of image ni, and `extra` more below them (the rows of
   output rows oy + 1, ..., oy + extra: stride 1, no vertical dilation). */
static void row_views(const job* jb, scratch* s, int64_t ni, int64_t oy, int64_t extra,
                      row_view* rv) {
  const geom* g = &jb->p->g;
  const int64_t cin = g->cin;
  for (int64_t ky = 0; ky < g->kh + extra; ky++) {
    const int64_t iy = oy * g->sh + ky * g->dh - g->pt;
    rv[ky] = iy < 0 || iy >= jb->h ? (row_view){jb->zero, jb->zero + g->pl * cin, jb->zero + jb->rs * cin}
                                   : get_row(jb, s, ni, iy);
  }
}

/* The output pixels of the tile starting at o0. */
static inline int64_t tile_len(const job* jb, int64_t o0) {
  const int64_t end = o0 < jb->t_first ? jb->t_first : o0 < jb->t_wrap ? jb->t_wrap
                      : o0 < jb->t_last ? jb->t_last : jb->ow;
  return end - o0 < jb->mr ? end - o0 : jb->mr;
}

/* Depthwise pixels are cheap next to copying the border columns a tile reaches past the
   image: the pixels that reach the left padding get a tile of their own (one pixel: 4% faster
   than a main-kernel tile of 4 whose 6 columns are copied, AMD Zen 4), the middle tiles stop
   where their computed pixels would reach the right padding or past it, and the rest is one
   last tile. */
static int main_kernel_exact(const tg_dwconv_shape* sh, int64_t r) {
  return sh->tile_mr[r] == r && sh->by_rows[r] == sh->by_rows[sh->mr];
}

static void plan_tiles(job* jb) {
  const geom* g = &jb->p->g;
  jb->t_first = jb->t_wrap = 0;
  jb->t_last = jb->ow;
  jb->dw_wrap = 0;
  if (jb->p->method != M_DEPTHWISE) return;
  const tg_dwconv_shape* sh = jb->p->dw;
  const int64_t span = (g->kw - 1) * g->dw, inside = g->pl + jb->w - span;  /* a + span < pl + w */
  int64_t first = (g->pl + g->sw - 1) / g->sw, right = inside <= 0 ? 0 : (inside + g->sw - 1) / g->sw;
  if (first > jb->ow) first = jb->ow;
  if (right > jb->ow) right = jb->ow;
  if (right < first) right = first;
  jb->t_first = jb->t_wrap = first;
  if (jb->dw_shift && g->sw == 1 && jb->p->ps_mult == 1) {
    /* A wrap tile's first pixel needs its left neighbour in place (o0 - 1 >= pl): the first
       tile is then the fewest pixels past that which the main kernel computes exactly, its
       columns cached (6 at pad 1, not the one-pixel tile's 3, but no one-pixel kernel calls
       and no tile between: 2% faster at 144 x 56x56, AMD Zen 4). */
    int64_t r = g->pl + 1 > first ? g->pl + 1 : first;
    while (r < jb->mr && !main_kernel_exact(sh, r)) r++;
    if (r < right) {
      jb->dw_wrap = 1;
      jb->t_first = jb->t_wrap = r;
    }
  }
  /* The middle's last tile: exact (computes no pixel past it) and the main kernel's (a pixel
     or two more in the last tile beats a one-pixel kernel call per channel block). */
  int64_t rem = (right - jb->t_wrap) % jb->mr;
  while (rem > 0 && !main_kernel_exact(sh, rem)) rem--;
  jb->t_last = jb->t_wrap + (right - jb->t_wrap) / jb->mr * jb->mr + rem;
}

/* Depthwise: nrows output rows (y: the first, channels last), up to DW_TILES tiles at a time,
   every channel block across them (the tiles' row pointers found once for all the blocks). */
enum { DW_TILES = 16 };
static void dw_rows(const job* jb, const row_view* rv, int64_t nrows, float* y) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const tg_dwconv_shape* sh = p->dw;
  const int64_t cin = g->cin, ps = cin * p->ps_mult, dps = g->dw * cin, in_rows = g->kh + nrows - 1;
  const tg_f32_conv_params prm = {g->act};
  const float* base[DW_TILES][TG_CONV_MAX_KH + TG_CONV_MAX_OUT_ROWS];
  const float* krows[TG_CONV_MAX_KH + TG_CONV_MAX_OUT_ROWS];
  int64_t at[DW_TILES], len[DW_TILES];
  int wrap[DW_TILES];
  const int64_t shift = jb->dw_shift, last = jb->dw_nb - 1;
  for (int64_t o0 = 0; o0 < jb->ow;) {
    int nt = 0;
    for (; nt < DW_TILES && o0 < jb->ow; nt++) {
      const int64_t r = tile_len(jb, o0);
      const int64_t a = o0 * g->sw, e = a + (sh->tile_mr[r] - 1) * g->sw + (g->kw - 1) * g->dw;
      for (int64_t ky = 0; ky < in_rows; ky++) base[nt][ky] = tile_row(jb, &rv[ky], a, e);
      at[nt] = o0;
      len[nt] = r;
      wrap[nt] = jb->dw_wrap && o0 >= jb->t_wrap && o0 + r <= jb->t_last;
      o0 += r;
    }
    for (int64_t b = 0; b < jb->dw_nb; b++) {
      const int64_t c0 = b == 0 ? 0 : b * p->nr - shift;
      const int64_t c1 = (b + 1) * p->nr - shift, nn = (c1 < cin ? c1 : cin) - c0;
      const float* wp = jb->dw_panels + b * p->panel;
      for (int t = 0; t < nt; t++) {
        int64_t r = len[t], off = c0, nw = nn;  /* off: from the tile's input pointers */
        const float* ww = wp;
        float* yo = y + at[t] * cin + c0;
        if (wrap[t] && b == 0) {  /* the wrap block: from `shift` channels before each pixel */
          off = -shift;
          nw = p->nr;
          ww = jb->dw_panels + jb->dw_nb * p->panel;
          yo = y + at[t] * cin - shift;
        } else if (wrap[t] && b == last) {  /* tails: the next tile's wrap block, but the last */
          if (at[t] + r != jb->t_last) continue;
          off = c0 + (r - 1) * ps;
          yo = y + (at[t] + r - 1) * cin + c0;
          r = 1;
        }
        for (int64_t ky = 0; ky < in_rows; ky++) krows[ky] = base[t][ky] + off;
        sh->by_rows[r](r, nw, krows, ps, dps, ww, yo, cin, nrows, jb->ow * cin, &prm);
      }
    }
  }
}

/* Output rows oy .. oy + nrows - 1 of image ni (nrows > 1: depthwise, channels last): every
   group, tile and block of output channels. */
static void conv_row(const job* jb, scratch* s, int64_t ni, int64_t oy, int64_t nrows) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const int64_t cin = g->cin, cout = g->cout, ow = jb->ow;
  row_view rv[TG_CONV_MAX_KH + TG_CONV_MAX_OUT_ROWS];
  row_views(jb, s, ni, oy, nrows - 1, rv);
  const int nchw_out = g->layout == TILEGEN_NCHW;
  float* ybase = nchw_out ? s->orow : jb->y + (ni * jb->oh + oy) * ow * cout;
  const tg_f32_conv_params prm = {g->act};
  const int64_t ps = cin * p->ps_mult, dps = g->dw * cin, step = g->sw * cin;
  const float* krows[TG_CONV_MAX_KH];
  if (p->method == M_DEPTHWISE) {
    dw_rows(jb, rv, nrows, ybase);
  } else {
    const tg_conv_shape* sh = p->shape;
    const int64_t cg = p->cg, kg = p->kg, taps = g->kh * g->kw;
    for (int64_t gi = 0; gi < g->groups; gi++) {
      for (int64_t o0 = 0; o0 < ow; o0 += sh->mr) {
        const int64_t r = ow - o0 < sh->mr ? ow - o0 : sh->mr;
        const float* const* kr = krows;
        int64_t c = p->fold ? g->kw * cg : cg, kps = ps;
        if (p->method == M_IM2COL) {  /* gather the tile's patch: r rows of KH*KW*cg */
          for (int64_t i = 0; i < r; i++)
            for (int64_t ky = 0; ky < g->kh; ky++)
              for (int64_t kx = 0; kx < g->kw; kx++)
                memcpy(s->patch + i * jb->lda + (ky * g->kw + kx) * cg,  /* whole rows cached */
                       rv[ky].left + (o0 + i) * step + kx * dps + gi * cg, (size_t) cg * sizeof(float));
          krows[0] = s->patch;
          c = taps * cg;
          kps = jb->lda;
        } else {
          /* Pixel i, tap kx reads column a + i*sw + kx*dw (folded taps too: dw is 1). */
          const int64_t a = o0 * g->sw, b = a + (sh->tile_mr[r] - 1) * g->sw + (g->kw - 1) * g->dw;
          for (int64_t ky = 0; ky < g->kh; ky++) krows[ky] = tile_row(jb, &rv[ky], a, b) + gi * cg;
        }
        for (int64_t b = 0; b < p->nb; b++) {
          const int64_t co0 = b * p->nr, nn = kg - co0 < p->nr ? kg - co0 : p->nr;
          sh->by_rows[r](r, nn, c, kr, kps, dps, p->wpack + (gi * p->nb + b) * p->panel,
                         ybase + o0 * cout + gi * kg + co0, cout, &prm);
        }
      }
    }
  }
  if (nchw_out) {  /* the row, channels last, into its place in each output plane */
    float* y = jb->y + ni * cout * jb->oh * ow + oy * ow;
    const int64_t plane = jb->oh * ow;
    for (int64_t c0 = 0; c0 < cout; c0 += 16)
      for (int64_t w0 = 0; w0 < ow; w0 += 16) {
        const int64_t c1 = c0 + 16 < cout ? c0 + 16 : cout, w1 = w0 + 16 < ow ? w0 + 16 : ow;
        for (int64_t co = c0; co < c1; co++)
          for (int64_t x = w0; x < w1; x++) y[co * plane + x] = s->orow[x * cout + co];
      }
  }
}

static int setup_scratch(const job* jb, scratch* s) {
  float* base = tg_workspace(TG_WS_CONV2D_ROWS, (size_t) round_up((int64_t) jb->thread_floats, 16) *
                                                  sizeof(float) +
                                              (size_t) jb->nslot * sizeof(int64_t));
  if (base == NULL) return -1;
  const tilegen_conv2d_f32_plan* p = jb->p;
  s->rows = base + jb->dw_shift;
  float* next = base + round_up(jb->nslot * jb->slot_floats + jb->dw_shift, 16);
  s->orow = next;
  next += p->g.layout == TILEGEN_NCHW ? round_up(jb->ow * p->g.cout, 16) : 0;
  s->patch = next;
  if (p->method == M_IM2COL) {
    memset(s->patch, 0, (size_t) (jb->mr * jb->lda) * sizeof(float));
    next += jb->mr * jb->lda;
  }
  s->tags = (int64_t*) (void*) (base + round_up((int64_t) jb->thread_floats, 16));
  for (int64_t i = 0; i < jb->nslot; i++) s->tags[i] = -1;
  return 0;
}

static void rows_task(void* ctx, int tid, int nt) {
  job* jb = ctx;
  scratch s;
  if (setup_scratch(jb, &s) != 0) {
    atomic_store(&jb->failed, 1);
    return;
  }
  const int64_t rows = jb->n * jb->oh, r1 = rows * (tid + 1) / nt;
  for (int64_t r = rows * tid / nt; r < r1;) {
    const int64_t oy = r % jb->oh;
    const int64_t nrows = jb->dw_rows > 1 && r + 1 < r1 && oy + 1 < jb->oh ? 2 : 1;
    conv_row(jb, &s, r / jb->oh, oy, nrows);
    r += nrows;
  }
}

/* The shift that puts depthwise channel blocks on vector boundaries of x (NR floats): where
   every pixel of an NHWC image starts at the same place in a vector, loads that straddle two
   cache lines cost about a third of the kernel's time (AMD Zen 4). */
static int64_t dw_block_shift(const tilegen_conv2d_f32_plan* p, const float* x) {
  const int64_t vbytes = p->nr * (int64_t) sizeof(float);
  const int64_t at = (int64_t) ((uintptr_t) x % (uintptr_t) vbytes);
  if (p->method != M_DEPTHWISE || p->g.layout != TILEGEN_NHWC || p->g.cin % p->nr != 0 ||
      at % (int64_t) sizeof(float) != 0 || at == 0)
    return 0;
  return at / (int64_t) sizeof(float);  /* block 0: channels [0, NR - shift) */
}

/* The plan's depthwise panels re-cut into blocks that start `shift` channels earlier, then
   the wrap block's (lanes j < shift: channel cin - shift + j; then channel j - shift). */
static void shift_dw_panels(const tilegen_conv2d_f32_plan* p, int64_t shift, int64_t nb, float* dst) {
  const int64_t nr = p->nr, per = p->panel / nr, cin = p->g.cin;
  for (int64_t b = 0; b <= nb; b++)
    for (int64_t j = 0; j < nr; j++) {
      const int64_t c = b == nb ? (j < shift ? cin - shift + j : j - shift)  /* lane j's channel */
                                : (b == 0 ? 0 : b * nr - shift) + j;
      const int ok = b == nb || (c < (b + 1) * nr - shift && c < cin);
      const float* src = p->wpack + (ok ? c / nr * p->panel + c % nr : 0);
      for (int64_t t = 0; t < per; t++) dst[b * p->panel + t * nr + j] = ok ? src[t * nr] : 0.0f;
    }
}

/* Runs a direct, im2col or depthwise plan; -1 when scratch memory cannot be had. */
static int run_rows(const tilegen_conv2d_f32_plan* p, int64_t n, int64_t h, int64_t w,
                    const float* x, float* y) {
  const geom* g = &p->g;
  job jb;
  memset(&jb, 0, sizeof(jb));
  jb.p = p;
  jb.n = n; jb.h = h; jb.w = w;
  jb.oh = out_size(h, g->kh, g->sh, g->pt, g->pb, g->dh);
  jb.ow = out_size(w, g->kw, g->sw, g->pl, g->pr, g->dw);
  jb.x = x; jb.y = y;
  jb.dw_shift = dw_block_shift(p, x);
  jb.mr = p->method == M_DEPTHWISE ? p->dw->mr : p->shape->mr;
  const int* tile_mr = p->method == M_DEPTHWISE ? p->dw->tile_mr : p->shape->tile_mr;
  /* The padded columns each tile reads ([a, b]: its kernel reads all its tile's pixels; im2col
     gathers only real ones), the border segments they reach, and the row length. */
  const int64_t span = (g->kw - 1) * g->dw, pl = g->pl;
  int64_t lw = 0, rs = INT64_MAX, lp = pl + w;
  plan_tiles(&jb);
  for (int64_t o0 = 0, r; o0 < jb.ow; o0 += r) {
    r = tile_len(&jb, o0);
    const int64_t t = p->method == M_IM2COL ? r : tile_mr[r];
    const int64_t a = o0 * g->sw, b = a + (t - 1) * g->sw + span;
    if (b + 1 > lp) lp = b + 1;
    if (a < pl && b + 1 > lw) lw = b + 1;
    if (b >= pl + w && a < rs) rs = a;
  }
  if (rs > lp) rs = lp;
  if (g->layout == TILEGEN_NCHW || p->method == M_IM2COL || lw >= rs) {
    lw = lp;  /* whole rows */
    rs = lp;
  }
  jb.lp = lp; jb.lw = lw; jb.rs = rs;
  jb.slot_floats = round_up((lw + lp - rs) * g->cin, 16);
  /* Two output rows a call where the shape's kernels take them (they share KH - 1 input
     rows): depthwise, channels last, stride 1 and no dilation down the image. */
  jb.dw_rows = p->method == M_DEPTHWISE && g->layout == TILEGEN_NHWC && g->sh == 1 &&
                       g->dh == 1 && p->dw->out_rows > 1 ? 2 : 1;
  jb.nslot = (g->kh - 1) * g->dh + jb.dw_rows;
  if (jb.nslot > n * h) jb.nslot = n * h;
  if (p->method == M_IM2COL) {
    jb.kdim = g->kh * g->kw * p->cg;
    jb.lda = round_up(jb.kdim, 16);
    if ((jb.lda * 4) % 4096 == 0) jb.lda += 16;
  }
  jb.thread_floats = (size_t) round_up(jb.nslot * jb.slot_floats + jb.dw_shift, 16) +
                     (size_t) (g->layout == TILEGEN_NCHW ? round_up(jb.ow * g->cout, 16) : 0) +
                     (size_t) (jb.mr * jb.lda);
  const size_t zero_floats = (size_t) round_up(jb.lp * g->cin + jb.dw_shift, 16);
  jb.dw_nb = jb.dw_shift ? g->cin / p->nr + 1 : p->nb;  /* a shift needs cin % NR == 0 */
  const size_t shifted = jb.dw_shift ? (size_t) ((jb.dw_nb + 1) * p->panel) : 0;
  float* zero = tg_workspace(TG_WS_CONV2D_ZERO, (zero_floats + shifted) * sizeof(float));
  if (zero == NULL) return -1;
  memset(zero, 0, zero_floats * sizeof(float));
  jb.zero = zero + jb.dw_shift;
  jb.dw_panels = p->wpack;
  if (jb.dw_shift) {
    shift_dw_panels(p, jb.dw_shift, jb.dw_nb, zero + zero_floats);
    jb.dw_panels = zero + zero_floats;
  }
  const int64_t taps = g->kh * g->kw;
  const double flops = 2.0 * (double) n * (double) jb.oh * (double) jb.ow * (double) g->cout *
                       (double) (p->method == M_DEPTHWISE ? 1 : p->cg) * (double) taps;
  int nt = flops < TG_CONV_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();
  if (nt > n * jb.oh) nt = (int) (n * jb.oh);
  atomic_store(&jb.failed, 0);
  tg_parallel_run(nt, rows_task, &jb);
  return atomic_load(&jb.failed) ? -1 : 0;
}

/* ---- the channel-first band driver (direct-nchw) ----
   A band of output rows is computed as one flattened run of pixels q = row * wq + column over
   a padded copy of its input rows (wp = S*wq columns, S the horizontal stride): tap (kh, kw) of
   pixel q reads band[q + off(kh, kw)], so each tap is one pointer to consecutive values (the
   kernels are stride 1): a band row is split into its S column phases and the band's rows
   into their sh row phases, sh * S planes of rows of wq values, so that consecutive output
   pixels and rows stay one value and one plane row apart. The wq - ow columns past each
   output row are either computed and dropped (tiles through a small buffer) or, where pixels
   are cheap, never computed: each output row is then tiled on its own (band_job.tiling). With
   wq == ow (1x1 filters, no padding) the input and output planes are read and written in
   place. */
typedef struct {
  const tilegen_conv2d_f32_plan* p;
  int64_t n, h, w, oh, ow;
  const float* x;
  float* y;
  int64_t wq, wp, bh, nbands, ps, cs;  /* pitch, padded width, band rows, phase plane, channel */
  int64_t off[TG_CONV_MAX_KH * 16];       /* tap offsets in the band */
  int64_t groups, chans;                  /* items per image: groups, or depthwise blocks */
  int in_place;                           /* pointwise: the input planes are the band */
  int tiling;                             /* TILE_FLAT, TILE_COPY or TILE_ROWS (band_item) */
  int64_t lead;                           /* zeros before a band row's padding (TILE_ROWS) */
  size_t thread_floats;
  atomic_int failed;
} band_job;

/* A short copy (a tile's run): fixed-size moves the compiler inlines, not a memcpy call. */
static inline void copy_floats(float* d, const float* s, int64_t n) {
  for (; n >= 8; n -= 8, d += 8, s += 8) memcpy(d, s, 8 * sizeof(float));
  if (n >= 4) { memcpy(d, s, 4 * sizeof(float)); n -= 4; d += 4; s += 4; }
  for (; n > 0; n--) *d++ = *s++;
}

/* Input columns src[0, w) at padded columns pl.. into S column phase planes ps apart: padded
   column c goes to plane c % S, value c / S. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize")))  /* -O2 GCC leaves the 2-way split scalar */
#endif
static void split_columns(float* restrict dst, int64_t ps, int64_t S, int64_t pl,
                          const float* restrict src, int64_t w) {
  int64_t iw = 0;
  for (; iw < w && (pl + iw) % S; iw++) dst[(pl + iw) % S * ps + (pl + iw) / S] = src[iw];
  if (S == 2) {
    float* restrict even = dst + (pl + iw) / 2;
    float* restrict odd = even + ps;
    const int64_t pairs = (w - iw) / 2;
    for (int64_t i = 0; i < pairs; i++) {
      even[i] = src[iw + 2 * i];
      odd[i] = src[iw + 2 * i + 1];
    }
    iw += 2 * pairs;
  }
  for (; iw < w; iw++) dst[(pl + iw) % S * ps + (pl + iw) / S] = src[iw];
}

static void band_item(const band_job* jb, float* band, float* obuf, int64_t item) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const tg_conv_shape* sh = p->shape;
  const int dw = p->method == M_DW_NCHW || p->method == M_DW_ROWS;
  const int64_t taps = g->kh * g->kw, S = g->sw;
  const int64_t bi = item % jb->nbands, gi = item / jb->nbands % jb->groups;
  const int64_t ni = item / jb->nbands / jb->groups;
  /* The item's input channels (cg) and output channels (kg): a group, or a depthwise block. */
  const int64_t cg = dw ? (g->cin - gi * jb->chans < jb->chans ? g->cin - gi * jb->chans : jb->chans)
                        : p->cg;
  const int64_t kg = dw ? cg : p->kg;
  const int64_t oh0 = bi * jb->bh, bhr = jb->oh - oh0 < jb->bh ? jb->oh - oh0 : jb->bh;
  const int64_t q_count = (bhr - 1) * jb->wq + jb->ow, nr = p->nr;
  const int64_t in_plane = jb->h * jb->w;
  const float* xg = jb->x + (ni * g->cin + gi * jb->chans) * in_plane;
  const float* base;
  int64_t cs;
  if (jb->in_place) {
    base = xg + oh0 * jb->w;
    cs = in_plane;
  } else {  /* copy the band's input rows, padded, split into row and column phases */
    const int64_t rows = (bhr - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t rp = jb->wq, ps = jb->ps;  /* a plane's row pitch, its size */
    for (int64_t ci = 0; ci < cg; ci++) {
      float* bc = band + ci * jb->cs;
      for (int64_t a = 0; a < g->sh; a++) {
        const int64_t filled = a < rows ? (rows - a + g->sh - 1) / g->sh : 0;
        for (int64_t b = 0; b < S; b++)
          memset(bc + (a * S + b) * ps + filled * rp, 0, (size_t) (ps - filled * rp) * sizeof(float));
      }
      for (int64_t r = 0, ph = 0, pr = 0; r < rows; r++) {  /* ph, pr: r's phase and its row */
        float* dst = bc + ph * S * ps + pr * rp;
        if (++ph == g->sh) { ph = 0; pr++; }
        const int64_t ih = oh0 * g->sh + r - g->pt;
        if (ih < 0 || ih >= jb->h) {
          for (int64_t b = 0; b < S; b++) memset(dst + b * ps, 0, (size_t) rp * sizeof(float));
          continue;
        }
        /* The row's pad columns are zero: band_task cleared the band, and nothing but zeros
           is written outside the rows' input columns. */
        const float* src = xg + ci * in_plane + ih * jb->w;
        if (S == 1) memcpy(dst + jb->lead + g->pl, src, (size_t) jb->w * sizeof(float));
        else split_columns(dst, ps, S, g->pl, src, jb->w);
      }
    }
    base = band + jb->lead;
    cs = jb->cs;
  }
  /* Output (jb->tiling): TILE_FLAT, the band one run of tiles written in place (wq == ow);
     TILE_COPY, the same run with the wq - ow dropped columns, each tile through a small buffer
     (still in L1) into its rows of the output planes; TILE_ROWS, each output row its own run,
     written in place, its last tile short (the kernels store only a tile's n pixels). */
  const int64_t plane = jb->oh * jb->ow;
  float* yg = jb->y + (ni * g->cout + gi * (dw ? jb->chans : kg)) * plane;
  const tg_f32_conv_params prm = {g->act};
  const float* tp[TG_CONV_MAX_KH * 16];
  const float* wg = p->wpack + (dw ? gi * jb->chans * (1 + taps) : gi * p->gstride);
  if (p->method == M_DW_ROWS) {
    /* Row tiles: MR output rows of a channel from its pointer to input row 0 at the centre
       tap of the tile's first pixel (on a vector: run_bands' lead), the row pitch wq. */
    const tg_dwconv_shape* ds = p->dw;
    for (int64_t ci = 0; ci < cg; ci++)
      for (int64_t o = 0; o < bhr; o += ds->mr) {
        const int64_t rr = bhr - o < ds->mr ? bhr - o : ds->mr;
        for (int64_t x0 = 0; x0 < jb->ow; x0 += p->nr) {
          const int64_t nn = jb->ow - x0 < p->nr ? jb->ow - x0 : p->nr;
          tp[0] = base + ci * cs + o * jb->wq + x0 + g->kw / 2;
          ds->nchw_by_rows[rr](rr, nn, tp, jb->wq, wg + ci * (1 + taps),
                               yg + ci * plane + (oh0 + o) * jb->ow + x0, jb->ow, &prm);
        }
      }
    return;
  }
  const int64_t per = 1 + taps * cg, mr = dw ? cg : sh->mr;
  /* In place, the kernel reads all nr pixels of a tile: a partial tile at the very end of the
     input would read past it, so it runs on a copy. */
  const int last = ni == jb->n - 1 && gi == jb->groups - 1 && bi == jb->nbands - 1;
  /* In place, a short first tile puts the others' input runs on cache-line boundaries
     (NumPy's arrays start 16 bytes into a line: every load would span two). */
  const int64_t peel = jb->in_place ? ((64 - (int64_t) ((uintptr_t) base % 64)) % 64) / 4 % nr : 0;
  const int by_row = jb->tiling == TILE_ROWS, copy = jb->tiling == TILE_COPY;
  const int64_t runs = by_row ? bhr : 1, run_len = by_row ? jb->ow : q_count;
  for (int64_t o = 0; o < runs; o++) {
    int64_t q0_row = 0, q0_col = 0;  /* TILE_COPY: band row and column of q0 (no division) */
    for (int64_t x0 = 0; x0 < run_len;) {
      const int64_t want = x0 == 0 && peel ? peel : nr;
      const int64_t nn = run_len - x0 < want ? run_len - x0 : want, q0 = o * jb->wq + x0;
      int64_t tcs = cs;
      if (jb->in_place && last && q0 + nr > q_count) {
        for (int64_t ci = 0; ci < cg; ci++) {
          memcpy(band + ci * nr, base + ci * cs + q0, (size_t) nn * sizeof(float));
          memset(band + ci * nr + nn, 0, (size_t) (nr - nn) * sizeof(float));
        }
        tp[0] = band;
        tcs = nr;
      } else {
        for (int64_t t = 0; t < taps; t++) tp[t] = base + jb->off[t] + q0;
      }
      for (int64_t co0 = 0; co0 < kg; co0 += mr) {
        const int64_t r = kg - co0 < mr ? kg - co0 : mr;
        float* out = copy ? obuf : yg + co0 * plane + (oh0 + o) * jb->ow + x0;
        const int64_t ys = copy ? nr : plane;
        if (dw) p->dw->nchw_by_rows[r](r, nn, tp, tcs, wg, out, ys, &prm);
        else sh->nchw_by_rows[r](r, nn, cg, tp, tcs, wg + co0 * per, out, ys, &prm);
        if (!copy) continue;
        /* The tile's runs of real columns, row by row (b, c: the band row and column of q). */
        for (int64_t q = q0, b = q0_row, c = q0_col; q < q0 + nn; b++, c = 0) {
          const int64_t run = jb->wq - c < q0 + nn - q ? jb->wq - c : q0 + nn - q;
          const int64_t keep = c >= jb->ow ? 0 : (jb->ow - c < run ? jb->ow - c : run);
          for (int64_t i = 0; i < r && keep; i++)
            copy_floats(yg + (co0 + i) * plane + (oh0 + b) * jb->ow + c,
                        obuf + i * nr + (q - q0), keep);
          q += run;
        }
      }
      x0 += nn;
      for (q0_col += nn; q0_col >= jb->wq; q0_col -= jb->wq) q0_row++;
    }
  }
}

static void band_task(void* ctx, int tid, int nt) {
  band_job* jb = ctx;
  float* band = tg_workspace(TG_WS_CONV2D_ROWS, jb->thread_floats * sizeof(float));
  if (band == NULL) {
    atomic_store(&jb->failed, 1);
    return;
  }
  float* obuf = band + round_up(jb->chans * jb->cs, 16);  /* TILE_COPY's tile buffer */
  if (!jb->in_place) memset(band, 0, (size_t) (jb->chans * jb->cs) * sizeof(float));
  const int64_t items = jb->n * jb->groups * jb->nbands;
  for (int64_t it = items * tid / nt; it < items * (tid + 1) / nt; it++)
    band_item(jb, band, obuf, it);
}

static int run_bands(const tilegen_conv2d_f32_plan* p, int64_t n, int64_t h, int64_t w,
                     const float* x, float* y) {
  const geom* g = &p->g;
  band_job jb;
  memset(&jb, 0, sizeof(jb));
  jb.p = p;
  jb.n = n; jb.h = h; jb.w = w; jb.x = x; jb.y = y;
  jb.oh = out_size(h, g->kh, g->sh, g->pt, g->pb, g->dh);
  jb.ow = out_size(w, g->kw, g->sw, g->pl, g->pr, g->dw);
  const int64_t S = g->sw, taps = g->kh * g->kw, nr = p->nr;
  const int rows = p->method == M_DW_ROWS, dw = p->method == M_DW_NCHW || rows;
  /* input channels per item (at most): row tiles take a channel's whole plane at a time */
  jb.chans = rows ? 1 : dw ? p->dw->mr : p->cg;
  jb.groups = dw ? (g->cin + jb.chans - 1) / jb.chans : g->groups;
  jb.wq = (g->pl + w + g->pr + S - 1) / S;
  if (jb.wq < jb.ow) jb.wq = jb.ow;
  jb.wp = S * jb.wq;
  jb.in_place = is_pointwise(g);
  /* With dropped columns, rows of tiles compute round_up(ow, step) pixels a row where the
     flat run computes wq and copies each out (step: nr, or the vector for conv kernels, whose
     short tiles compute only the vectors they need): rows win where the extra pixels cost
     less than the copies, i.e. where a pixel is cheap (depthwise: taps FMAs; else cg * taps). */
  const int64_t pixel_macs = (dw ? 1 : p->cg) * taps, step = dw ? nr : p->cfg->nchw_lanes;
  jb.tiling = rows ? TILE_ROWS
              : jb.wq == jb.ow ? TILE_FLAT
              : (round_up(jb.ow, step) - jb.wq) * pixel_macs <= TG_CONV_COPY_MACS * jb.ow
                  ? TILE_ROWS : TILE_COPY;
  if (jb.tiling == TILE_ROWS) {
    /* Rows tiles never read the pitch's slack, so the pitch can put every row's first input
       column on a 64-byte line (lead zeros before the padding): the tap that reads it loads
       whole lines. */
    jb.lead = S > 1 ? 0 : (16 - g->pl % 16) % 16;  /* column phases: planes on lines */
    if (rows) jb.lead = (16 - g->kw / 2 % 16) % 16;  /* the centre tap on a line instead */
    jb.wq = round_up((jb.lead + g->pl + w + g->pr + S - 1) / S, 16);
    jb.wp = S * jb.wq;
  }

  /* Band height: the input band near 256 KiB (an L2 share), and at least a band per thread. */
  const int nt_max = tg_threads_max();
  int64_t bh = (65536 / (jb.chans * jb.wp) - (g->kh - 1) * g->dh) / g->sh;
  if (jb.in_place) bh = (jb.oh + nt_max - 1) / nt_max;  /* no copy: bands only share the work */
  if (bh < 1) bh = 1;
  if (bh > jb.oh) bh = jb.oh;
  int64_t nbands = (jb.oh + bh - 1) / bh;
  if (n * jb.groups < 4 * nt_max && nbands % nt_max) nbands += nt_max - nbands % nt_max;
  if (nbands > jb.oh) nbands = jb.oh;
  jb.bh = (jb.oh + nbands - 1) / nbands;
  jb.nbands = (jb.oh + jb.bh - 1) / jb.bh;
  /* Phase plane: its rows, then slack for the last tile's reads (all nr pixels, S apart). */
  const int64_t prows = ((jb.bh - 1) * g->sh + (g->kh - 1) * g->dh) / g->sh + 1;
  const int64_t q_end = jb.tiling == TILE_ROWS ? (jb.bh - 1) * jb.wq + round_up(jb.ow, nr)
                                               : round_up((jb.bh - 1) * jb.wq + jb.ow, nr);
  const int64_t reach = jb.lead + q_end + ((g->kh - 1) * g->dh / g->sh) * jb.wq +
                        (g->kw - 1) * g->dw / S + (rows ? 16 : 0);  /* row tiles: + a vector */
  jb.ps = round_up(reach > prows * jb.wq ? reach : prows * jb.wq, 16);
  for (int64_t t = 0; t < taps; t++) {  /* row and column phase, row within it, column */
    const int64_t dy = t / g->kw * g->dh, dx = t % g->kw * g->dw;
    jb.off[t] = (dy % g->sh * S + dx % S) * jb.ps + dy / g->sh * jb.wq + dx / S;
  }
  jb.cs = g->sh * S * jb.ps;
  if ((jb.cs * 4) % 4096 == 0) jb.cs += 16;  /* channels a page apart alias in L1 */
  const int64_t tile_rows = dw ? p->dw->mr : p->shape->mr;
  jb.thread_floats = jb.in_place ? (size_t) round_up(p->cg * nr, 16)  /* a last partial tile */
                                 : (size_t) (round_up(jb.chans * jb.cs, 16) + tile_rows * nr);
  const double flops = 2.0 * (double) n * (double) jb.oh * (double) jb.ow * (double) g->cout *
                       (double) (dw ? 1 : p->cg) * (double) taps;
  int nt = flops < TG_CONV_PARALLEL_MIN_FLOPS ? 1 : nt_max;
  const int64_t items = n * jb.groups * jb.nbands;
  if (nt > items) nt = (int) items;
  atomic_store(&jb.failed, 0);
  tg_parallel_run(nt, band_task, &jb);
  return atomic_load(&jb.failed) ? -1 : 0;
}

/* ---- plans ---- */

static void init_plan(tilegen_conv2d_f32_plan* p, const geom* g) {
  memset(p, 0, sizeof(*p));
  p->g = *g;
  p->cg = g->cin / g->groups;
  p->kg = g->cout / g->groups;
  p->cfg = tg_conv_cfg();
  plan_method_(p);
}

static int run_plan(const tilegen_conv2d_f32_plan* p, int64_t n, int64_t h, int64_t w,
                    const float* x, float* y) {
  if (n == 0) return 0;
  switch (p->method) {
    case M_GEMM:
      gemm_path_f32(&p->g, n, h * w, x, p->w, p->bias, y);
      return 0;
    case M_PLAIN:
      plain_f32(&p->g, n, h, w, x, p->w, p->bias, y);
      return 0;
    case M_NCHW:
    case M_DW_NCHW:
    case M_DW_ROWS:
      if (run_bands(p, n, h, w, x, y) == 0) return 0;
      plain_f32(&p->g, n, h, w, x, p->w, p->bias, y);  /* no scratch memory: slow but right */
      return 0;
    default:
      if (run_rows(p, n, h, w, x, y) == 0) return 0;
      plain_f32(&p->g, n, h, w, x, p->w, p->bias, y);  /* no scratch memory: slow but right */
      return 0;
  }
}

static geom make_geom(int layout, int64_t cin, int64_t cout, int64_t kh, int64_t kw, int64_t sh,
                      int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t dh,
                      int64_t dw, int64_t groups, int act) {
  return (geom){layout, cin, cout, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, groups, act};
}

int tilegen_conv2d_f32(tilegen_conv_layout layout, int64_t n, int64_t h, int64_t w, int64_t c_in,
                       const float* x, int64_t c_out, int64_t kh, int64_t kw, const float* weight,
                       const float* bias, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                       int64_t pad_left, int64_t pad_bottom, int64_t pad_right,
                       int64_t dilation_h, int64_t dilation_w, int64_t groups,
                       tilegen_activation act, float* y) {
  const geom g = make_geom(layout, c_in, c_out, kh, kw, stride_h, stride_w, pad_top, pad_left,
                           pad_bottom, pad_right, dilation_h, dilation_w, groups, act);
  int err = check_geom(&g);
  if (!err) err = check_input(&g, n, h, w);
  if (!err && x == NULL && n > 0) err = -6;
  if (!err && weight == NULL) err = -10;
  if (!err && y == NULL && n > 0) err = -22;
  if (err) return err;
  if (n == 0) return 0;
  tilegen_conv2d_f32_plan p;
  init_plan(&p, &g);
  p.w = weight;
  p.bias = bias;
  const int64_t floats = pack_floats(&p);
  if (floats > 0) {
    p.wpack = tg_workspace(TG_WS_CONV2D_PACK, (size_t) floats * sizeof(float));
    if (p.wpack == NULL) {
      p.method = M_PLAIN;
    } else {
      pack(&p, weight, bias);
    }
  }
  return run_plan(&p, n, h, w, x, y);
}

int tilegen_conv2d_f64(tilegen_conv_layout layout, int64_t n, int64_t h, int64_t w, int64_t c_in,
                       const double* x, int64_t c_out, int64_t kh, int64_t kw,
                       const double* weight, const double* bias, int64_t stride_h,
                       int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
                       int64_t pad_right, int64_t dilation_h, int64_t dilation_w,
                       int64_t groups, tilegen_activation act, double* y) {
  const geom g = make_geom(layout, c_in, c_out, kh, kw, stride_h, stride_w, pad_top, pad_left,
                           pad_bottom, pad_right, dilation_h, dilation_w, groups, act);
  int err = check_geom(&g);
  if (!err) err = check_input(&g, n, h, w);
  if (!err && x == NULL && n > 0) err = -6;
  if (!err && weight == NULL) err = -10;
  if (!err && y == NULL && n > 0) err = -22;
  if (err) return err;
  if (n == 0) return 0;
  tg_dispatch_init();
  if (is_pointwise(&g) && atomic_load(&forced_method) != M_PLAIN)
    gemm_path_f64(&g, n, h * w, x, weight, bias, y);
  else
    plain_f64(&g, n, h, w, x, weight, bias, y);
  return 0;
}

int tilegen_conv2d_f32_pack(tilegen_conv_layout layout, int64_t c_in, int64_t c_out, int64_t kh,
                            int64_t kw, const float* weight, const float* bias,
                            int64_t stride_h, int64_t stride_w, int64_t pad_top,
                            int64_t pad_left, int64_t pad_bottom, int64_t pad_right,
                            int64_t dilation_h, int64_t dilation_w, int64_t groups,
                            tilegen_activation act, tilegen_conv2d_f32_plan** plan) {
  const geom g = make_geom(layout, c_in, c_out, kh, kw, stride_h, stride_w, pad_top, pad_left,
                           pad_bottom, pad_right, dilation_h, dilation_w, groups, act);
  /* Parameter numbers of this signature: the geometry's shifted to its positions. */
  static const int renumber[23] = {0, 1, 0, 0, 0, 2, 0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                   14, 15, 16, 17, 0};
  if (plan == NULL) return -18;
  const int err = check_geom(&g);
  if (err) return -renumber[-err];
  if (weight == NULL) return -6;
  tilegen_conv2d_f32_plan* p = malloc(sizeof(*p));
  if (p == NULL) return -18;
  init_plan(p, &g);
  p->owns = 1;
  const int64_t wcount = c_out * (c_in / groups) * kh * kw;
  float* wcopy = malloc((size_t) wcount * sizeof(float));
  float* bcopy = bias ? malloc((size_t) c_out * sizeof(float)) : NULL;
  const int64_t floats = pack_floats(p);
  float* wpack = floats > 0 ? aligned_alloc(64, (size_t) round_up(floats * 4, 64)) : NULL;
  if (wcopy == NULL || (bias && bcopy == NULL) || (floats > 0 && wpack == NULL)) {
    free(wcopy); free(bcopy); free(wpack); free(p);
    return -18;
  }
  memcpy(wcopy, weight, (size_t) wcount * sizeof(float));
  if (bias) memcpy(bcopy, bias, (size_t) c_out * sizeof(float));
  p->w = wcopy;
  p->bias = bcopy;
  p->wpack = wpack;
  pack(p, weight, bias);
  *plan = p;
  return 0;
}

int tilegen_conv2d_f32_run(const tilegen_conv2d_f32_plan* plan, int64_t n, int64_t h, int64_t w,
                           const float* x, float* y) {
  if (plan == NULL) return -1;
  static const int renumber[10] = {0, 0, 2, 3, 4, 0, 0, 0, 0, 0};
  const int err = check_input(&plan->g, n, h, w);
  if (err) return err == -8 ? -3 : err == -9 ? -4 : -renumber[-err];
  if (x == NULL && n > 0) return -5;
  if (y == NULL && n > 0) return -6;
  return run_plan(plan, n, h, w, x, y);
}

void tilegen_conv2d_f32_plan_free(tilegen_conv2d_f32_plan* plan) {
  if (plan == NULL) return;
  if (plan->owns) {
    free((void*) plan->w);
    free((void*) plan->bias);
    free(plan->wpack);
  }
  free(plan);
}

/* ---- hooks for tilegen's Python layer and tests ---- */

const char* tilegen_x_conv2d_f32_plan_method(const tilegen_conv2d_f32_plan* plan,
                                                     const char** kernel) {
  if (kernel)
    *kernel = plan->method == M_GEMM || plan->method == M_PLAIN ? NULL
              : plan->method == M_DEPTHWISE || plan->method == M_DW_NCHW ||
                        plan->method == M_DW_ROWS ? plan->dw->name
              : plan->shape               ? plan->shape->name
                                          : NULL;
  return method_names[plan->method];
}

const char* tilegen_x_conv_method(int layout, int64_t c_in, int64_t c_out, int64_t kh,
                                  int64_t kw, int64_t stride_h, int64_t stride_w,
                                  int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
                                  int64_t pad_right, int64_t dilation_h, int64_t dilation_w,
                                  int64_t groups, const char** kernel) {
  const geom g = make_geom(layout, c_in, c_out, kh, kw, stride_h, stride_w, pad_top, pad_left,
                           pad_bottom, pad_right, dilation_h, dilation_w, groups, 0);
  if (check_geom(&g)) return NULL;
  tilegen_conv2d_f32_plan p;
  init_plan(&p, &g);
  return tilegen_x_conv2d_f32_plan_method(&p, kernel);
}

/* Forces a path by name where it applies (NULL or "" restores the automatic choice). */
int tilegen_x_conv_force_method(const char* name) {
  if (name == NULL || name[0] == '\0') {
    atomic_store(&forced_method, -1);
    return 0;
  }
  for (int m = 0; m < M_COUNT; m++)
    if (!strcmp(name, method_names[m])) {
      atomic_store(&forced_method, m);
      return 0;
    }
  return -1;
}
