/*
 * 2-D convolution: tilegen_conv2d_f32/f64 and the packed-weight plans: the parameter checks,
 * the choice of path (plan_method_), the plans, and the hooks for the Python layer and tests.
 * Each path runs in its own file (conv_internal.h lists them); conv_pack.c packs the weights.
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
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "tg_workspace.h"

_Static_assert(TILEGEN_ACT_NONE == TG_ACT_NONE && TILEGEN_ACT_RELU == TG_ACT_RELU &&
                   TILEGEN_ACT_RELU6 == TG_ACT_RELU6 && TILEGEN_ACT_GELU == TG_ACT_GELU &&
                   TILEGEN_ACT_SILU == TG_ACT_SILU,
               "the kernels' activation codes are tilegen.h's");

static const char* const method_names[M_COUNT] = {"gemm", "direct", "direct-nchw", "im2col",
                                                  "depthwise", "depthwise-nchw",
                                                  "depthwise-nchw-rows", "plain"};
static atomic_int forced_method = -1;  /* a test hook: take this path where it applies */

/* The path `tilegen tune` preferred for each layer class (layout x kind), -1 for the built-in
   order; like the test hook, it is taken where it applies. Which path wins (channel-first
   bands or cached channels-last rows, the 1x1 kernels or GEMM, depthwise row tiles or channel
   tiles) depends on the core's caches and load ports, so it is measured, not assumed. */
enum { K_POINTWISE, K_SPATIAL, K_STRIDED, K_DEPTHWISE, K_COUNT };
static const char* const kind_names[K_COUNT] = {"pointwise", "spatial", "strided", "depthwise"};
static atomic_int preferred[2][K_COUNT] = {{-1, -1, -1, -1}, {-1, -1, -1, -1}};

static int layer_kind(const geom* g) {
  if (g->groups == g->cin && g->cout == g->cin) return K_DEPTHWISE;
  if (g->sh > 1 || g->sw > 1) return K_STRIDED;
  return g->kh == 1 && g->kw == 1 ? K_POINTWISE : K_SPATIAL;
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
  /* Nor paddings or dilations beyond the largest image (h, w <= 2^28): the padded size and the
     dilated filter stay far from overflow. */
  const int64_t big = (int64_t) 1 << 28;
  if (g->pt > big) return -14;
  if (g->pl > big) return -15;
  if (g->pb > big) return -16;
  if (g->pr > big) return -17;
  if (g->dh > big) return -18;
  if (g->dw > big) return -19;
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

/* ---- the path of a float32 plan ---- */

static int is_depthwise(const geom* g) { return g->groups == g->cin && g->cout == g->cin; }

/* Picks the path and kernels of a float32 plan. */
static void plan_method_(tilegen_conv2d_f32_plan* p) {
  const geom* g = &p->g;
  const tg_conv_config* cfg = p->cfg;
  int force = atomic_load(&forced_method);
  if (force < 0) force = atomic_load(&preferred[g->layout == TILEGEN_NHWC][layer_kind(g)]);
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
      tg_conv_gemm_path_f32(&p->g, n, h * w, x, p->w, p->bias, y);
      return 0;
    case M_PLAIN:
      tg_conv_plain_f32(&p->g, n, h, w, x, p->w, p->bias, y);
      return 0;
    case M_NCHW:
    case M_DW_NCHW:
    case M_DW_ROWS:
      if (tg_conv_run_bands(p, n, h, w, x, y) == 0) return 0;
      tg_conv_plain_f32(&p->g, n, h, w, x, p->w, p->bias, y);  /* no scratch memory: slow but right */
      return 0;
    default:
      if (tg_conv_run_rows(p, n, h, w, x, y) == 0) return 0;
      tg_conv_plain_f32(&p->g, n, h, w, x, p->w, p->bias, y);  /* no scratch memory: slow but right */
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
  const int64_t floats = tg_conv_pack_floats(&p);
  if (floats > 0) {
    p.wpack = tg_workspace(TG_WS_CONV2D_PACK, (size_t) floats * sizeof(float));
    if (p.wpack == NULL) {
      p.method = M_PLAIN;
    } else {
      tg_conv_pack(&p, weight, bias);
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
    tg_conv_gemm_path_f64(&g, n, h * w, x, weight, bias, y);
  else
    tg_conv_plain_f64(&g, n, h, w, x, weight, bias, y);
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
  const int64_t floats = tg_conv_pack_floats(p);
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
  tg_conv_pack(p, weight, bias);
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

static int method_of(const char* name) {
  for (int m = 0; m < M_COUNT; m++)
    if (!strcmp(name, method_names[m])) return m;
  return -1;
}

int tilegen_x_set_conv_preferred(int layout, const char* kind, const char* name) {
  if (layout != TILEGEN_NCHW && layout != TILEGEN_NHWC) return -1;
  int k = 0;
  while (k < K_COUNT && strcmp(kind, kind_names[k])) k++;
  if (k == K_COUNT) return -2;
  const int m = name == NULL || name[0] == '\0' ? -1 : method_of(name);
  if (m < 0 && name != NULL && name[0] != '\0') return -3;
  if (m == M_PLAIN) return -3;  /* never a preference: the fallback of last resort */
  atomic_store(&preferred[layout == TILEGEN_NHWC][k], m);
  return 0;
}

const char* tilegen_x_conv_preferred(int layout, const char* kind) {
  for (int k = 0; k < K_COUNT; k++)
    if (!strcmp(kind, kind_names[k]) && (layout == TILEGEN_NCHW || layout == TILEGEN_NHWC)) {
      const int m = atomic_load(&preferred[layout == TILEGEN_NHWC][k]);
      return m < 0 ? NULL : method_names[m];
    }
  return NULL;
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
