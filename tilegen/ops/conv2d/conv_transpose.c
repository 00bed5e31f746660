/*
 * Transposed 2-D convolution (torch.nn.functional.conv_transpose2d): per image and group one
 * GEMM of the weights and the input gives every tap's contribution (col, one value per output
 * channel x tap x input pixel), and col2im sums them into the output. col2im is written as a
 * gather (each output pixel adds the taps that land on it), so threads can split the output
 * rows without racing. When col cannot be allocated the plain loops compute the same sums.
 *
 * Layouts: NCHW takes torch's weights (c_in, c_out/groups, kh, kw) ("IOHW"); NHWC takes
 * (c_in, kh, kw, c_out/groups) ("IHWO"), the transpose(0, 2, 3, 1) that turns conv2d's OIHW
 * into OHWI, so both layouts keep the per-group output channel last in the same place.
 *   NCHW: col[(co, ky, kx), p] = sum_ci w[ci, co, ky, kx] x[ci, p]   (kg*kh*kw x P, row-major)
 *   NHWC: col[p, (ky, kx, co)] = sum_ci x[p, ci] w[ci, ky, kx, co]   (P x kh*kw*kg, row-major)
 */
#include <stdlib.h>

#include "tg_gemm.h"
#include "tg_threads.h"
#include "tilegen.h"

#define TG_CONVT_PARALLEL_MIN_FLOPS 2.0e6  /* below this the col2im gather runs on one thread */

typedef struct {
  int layout;
  int64_t n, h, w, cin, cout, kh, kw, sh, sw, ph, pw, oph, opw, dh, dw, groups, oh, ow;
} tgeom;

static int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t op, int64_t d) {
  return (in - 1) * s - 2 * p + d * (k - 1) + op + 1;
}

/* The parameter checks, numbered as tilegen_conv_transpose2d_*'s parameters. */
static int check(tgeom* g, const void* x, const void* weight, const void* y) {
  const int64_t big = (int64_t) 1 << 28;
  if (g->layout != TILEGEN_NCHW && g->layout != TILEGEN_NHWC) return -1;
  if (g->n < 0) return -2;
  if (g->h < 1 || g->h > big) return -3;
  if (g->w < 1 || g->w > big) return -4;
  if (g->cin < 1 || g->cin > (1 << 24)) return -5;
  if (x == NULL && g->n > 0) return -6;
  if (g->cout < 1 || g->cout > (1 << 24)) return -7;
  if (g->kh < 1 || g->kh > 4096) return -8;
  if (g->kw < 1 || g->kw > 4096) return -9;
  if (weight == NULL) return -10;
  if (g->sh < 1 || g->sh > big) return -12;
  if (g->sw < 1 || g->sw > big) return -13;
  if (g->ph < 0 || g->ph > big) return -14;
  if (g->pw < 0 || g->pw > big) return -15;
  /* As torch: the output padding must be smaller than the stride or the dilation. */
  if (g->oph < 0 || (g->oph >= g->sh && g->oph >= g->dh)) return -16;
  if (g->opw < 0 || (g->opw >= g->sw && g->opw >= g->dw)) return -17;
  if (g->dh < 1 || g->dh > big) return -18;
  if (g->dw < 1 || g->dw > big) return -19;
  if (g->groups < 1 || g->cin % g->groups || g->cout % g->groups) return -20;
  g->oh = out_extent(g->h, g->kh, g->sh, g->ph, g->oph, g->dh);
  g->ow = out_extent(g->w, g->kw, g->sw, g->pw, g->opw, g->dw);
  if (g->oh < 1) return -14;  /* the padding crops the whole output */
  if (g->ow < 1) return -15;
  if (y == NULL && g->n > 0) return -21;
  return 0;
}

/* The first tap k (>= 0) with (o + p - k*d) a non-negative multiple of s, and the input index
   it reads, are found by stepping k; taps that fail the divisibility are skipped. */
#define TG_DEFINE_CONVT(DT, T)                                                                 \
  typedef struct {                                                                             \
    const tgeom* g;                                                                            \
    const T* col;  /* one image and group */                                                   \
    const T* bias; /* the group's */                                                           \
    T* y;          /* the image's, at the group's first channel */                             \
  } gather_##DT;                                                                               \
                                                                                               \
  /* NCHW: rows are (co, oy) of the group; col is (kg, kh, kw) x (h*w). */                     \
  static void gather_nchw_##DT(void* ctx, int tid, int nt) {                                   \
    const gather_##DT* q = ctx;                                                                \
    const tgeom* g = q->g;                                                                     \
    const int64_t kg = g->cout / g->groups, hw = g->h * g->w, rows = kg * g->oh;               \
    for (int64_t r = rows * tid / nt; r < rows * (tid + 1) / nt; r++) {                        \
      const int64_t co = r / g->oh, oy = r % g->oh;                                            \
      T* yr = q->y + (co * g->oh + oy) * g->ow;                                                \
      const T b = q->bias ? q->bias[co] : (T) 0;                                               \
      for (int64_t ox = 0; ox < g->ow; ox++) yr[ox] = b;                                       \
      for (int64_t ky = 0; ky < g->kh; ky++) {                                                 \
        const int64_t ty = oy + g->ph - ky * g->dh;                                            \
        if (ty < 0 || ty % g->sh) continue;                                                    \
        const int64_t iy = ty / g->sh;                                                         \
        if (iy >= g->h) continue;                                                              \
        for (int64_t kx = 0; kx < g->kw; kx++) {                                               \
          const T* c = q->col + ((co * g->kh + ky) * g->kw + kx) * hw + iy * g->w;             \
          /* ox = ix*sw - pw + kx*dw: walk the input columns that land inside the output */    \
          const int64_t off = kx * g->dw - g->pw;                                              \
          int64_t ix0 = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;                             \
          int64_t ix1 = g->ow - 1 - off < 0 ? -1 : (g->ow - 1 - off) / g->sw;                  \
          if (ix1 >= g->w) ix1 = g->w - 1;                                                     \
          if (g->sw == 1) {                                                                    \
            T* yo = yr + off;                                                                  \
            for (int64_t ix = ix0; ix <= ix1; ix++) yo[ix] += c[ix];                           \
          } else {                                                                             \
            for (int64_t ix = ix0; ix <= ix1; ix++) yr[ix * g->sw + off] += c[ix];             \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* NHWC: rows are oy; col is (h*w) x (kh, kw, kg); y rows hold cout channels per pixel. */   \
  static void gather_nhwc_##DT(void* ctx, int tid, int nt) {                                   \
    const gather_##DT* q = ctx;                                                                \
    const tgeom* g = q->g;                                                                     \
    const int64_t kg = g->cout / g->groups, cc = g->kh * g->kw * kg;                           \
    for (int64_t oy = g->oh * tid / nt; oy < g->oh * (tid + 1) / nt; oy++) {                   \
      T* yr = q->y + oy * g->ow * g->cout;                                                     \
      for (int64_t ox = 0; ox < g->ow; ox++)                                                   \
        for (int64_t co = 0; co < kg; co++) yr[ox * g->cout + co] = q->bias ? q->bias[co] : 0; \
      for (int64_t ky = 0; ky < g->kh; ky++) {                                                 \
        const int64_t ty = oy + g->ph - ky * g->dh;                                            \
        if (ty < 0 || ty % g->sh) continue;                                                    \
        const int64_t iy = ty / g->sh;                                                         \
        if (iy >= g->h) continue;                                                              \
        for (int64_t kx = 0; kx < g->kw; kx++) {                                               \
          const int64_t off = kx * g->dw - g->pw;                                              \
          int64_t ix0 = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;                             \
          int64_t ix1 = g->ow - 1 - off < 0 ? -1 : (g->ow - 1 - off) / g->sw;                  \
          if (ix1 >= g->w) ix1 = g->w - 1;                                                     \
          for (int64_t ix = ix0; ix <= ix1; ix++) {                                            \
            const T* c = q->col + (iy * g->w + ix) * cc + (ky * g->kw + kx) * kg;              \
            T* yo = yr + (ix * g->sw + off) * g->cout;                                         \
            for (int64_t co = 0; co < kg; co++) yo[co] += c[co];                               \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* No col buffer: the same sums, straight from x and the weights. */                        \
  static void plain_##DT(const tgeom* g, const T* x, const T* k, const T* bias, T* y) {        \
    const int64_t cg = g->cin / g->groups, kg = g->cout / g->groups;                           \
    const int nhwc = g->layout == TILEGEN_NHWC;                                                \
    for (int64_t ni = 0; ni < g->n; ni++)                                                      \
      for (int64_t oy = 0; oy < g->oh; oy++)                                                   \
        for (int64_t ox = 0; ox < g->ow; ox++)                                                 \
          for (int64_t co = 0; co < g->cout; co++) {                                           \
            const int64_t gi = co / kg, cl = co % kg;                                          \
            double acc = bias ? (double) bias[co] : 0.0;                                       \
            for (int64_t ky = 0; ky < g->kh; ky++) {                                           \
              const int64_t ty = oy + g->ph - ky * g->dh;                                      \
              if (ty < 0 || ty % g->sh || ty / g->sh >= g->h) continue;                        \
              for (int64_t kx = 0; kx < g->kw; kx++) {                                         \
                const int64_t tx = ox + g->pw - kx * g->dw;                                    \
                if (tx < 0 || tx % g->sw || tx / g->sw >= g->w) continue;                      \
                const int64_t iy = ty / g->sh, ix = tx / g->sw;                                \
                for (int64_t c = gi * cg; c < (gi + 1) * cg; c++) {                            \
                  const T xv = nhwc ? x[((ni * g->h + iy) * g->w + ix) * g->cin + c]           \
                                    : x[((ni * g->cin + c) * g->h + iy) * g->w + ix];          \
                  const T wv = nhwc ? k[((c * g->kh + ky) * g->kw + kx) * kg + cl]             \
                                    : k[((c * kg + cl) * g->kh + ky) * g->kw + kx];            \
                  acc += (double) xv * (double) wv;                                            \
                }                                                                              \
              }                                                                                \
            }                                                                                  \
            if (nhwc)                                                                          \
              y[((ni * g->oh + oy) * g->ow + ox) * g->cout + co] = (T) acc;                    \
            else                                                                               \
              y[((ni * g->cout + co) * g->oh + oy) * g->ow + ox] = (T) acc;                    \
          }                                                                                    \
  }                                                                                            \
                                                                                               \
  int tilegen_conv_transpose2d_##DT(tilegen_conv_layout layout, int64_t n, int64_t h,          \
                                    int64_t w, int64_t c_in, const T* x, int64_t c_out,        \
                                    int64_t kh, int64_t kw, const T* weight, const T* bias,    \
                                    int64_t stride_h, int64_t stride_w, int64_t pad_h,         \
                                    int64_t pad_w, int64_t output_padding_h,                   \
                                    int64_t output_padding_w, int64_t dilation_h,              \
                                    int64_t dilation_w, int64_t groups, T* y) {                \
    tgeom g = {(int) layout, n, h, w, c_in, c_out, kh, kw, stride_h, stride_w, pad_h, pad_w,   \
               output_padding_h, output_padding_w, dilation_h, dilation_w, groups, 0, 0};      \
    const int err = check(&g, x, weight, y);                                                   \
    if (err || n == 0) return err;                                                             \
    const int64_t cg = c_in / groups, kg = c_out / groups, hw = h * w, taps = kh * kw;         \
    const int64_t ohw = g.oh * g.ow, cols = taps * kg;                                         \
    T* col = malloc((size_t) (hw * cols) * sizeof(T));                                         \
    if (col == NULL) {                                                                         \
      plain_##DT(&g, x, weight, bias, y);                                                      \
      return 0;                                                                                \
    }                                                                                          \
    const double flops = 2.0 * (double) hw * (double) cols;                                    \
    int nt = flops < TG_CONVT_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();                       \
    for (int64_t ni = 0; ni < n; ni++)                                                         \
      for (int64_t gi = 0; gi < groups; gi++) {                                                \
        gather_##DT q = {&g, col, bias ? bias + gi * kg : NULL, NULL};                         \
        if (layout == TILEGEN_NCHW) {                                                          \
          /* col (kg*taps x hw) = W_g^T (kg*taps x cg) X_g (cg x hw) */                        \
          tg_gemm_##DT(cols, hw, cg, 1, weight + gi * cg * cols, 1, cols,                      \
                       x + (ni * c_in + gi * cg) * hw, hw, 1, 0, col, hw, 1, NULL, 0, 0);      \
          q.y = y + (ni * c_out + gi * kg) * ohw;                                              \
          int t = (int) (nt < kg * g.oh ? nt : kg * g.oh);                                     \
          tg_parallel_run(t, gather_nchw_##DT, &q);                                            \
        } else {                                                                               \
          /* col (hw x taps*kg) = X_g (hw x cg, rows c_in apart) W_g (cg x taps*kg) */         \
          tg_gemm_##DT(hw, cols, cg, 1, x + ni * hw * c_in + gi * cg, c_in, 1,                 \
                       weight + gi * cg * cols, cols, 1, 0, col, cols, 1, NULL, 0, 0);         \
          q.y = y + ni * ohw * c_out + gi * kg;                                                \
          int t = (int) (nt < g.oh ? nt : g.oh);                                               \
          tg_parallel_run(t, gather_nhwc_##DT, &q);                                            \
        }                                                                                      \
      }                                                                                        \
    free(col);                                                                                 \
    return 0;                                                                                  \
  }

TG_DEFINE_CONVT(f32, float)
TG_DEFINE_CONVT(f64, double)
