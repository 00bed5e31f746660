/*
 * Transposed 2-D convolution (torch.nn.functional.conv_transpose2d): per image and group one
 * GEMM of the weights and a block of input rows gives every tap's contribution (col, one value
 * per output channel x tap x input pixel), and col2im adds them into the output, which starts
 * as the bias; threads split the output channels, so none races another. col is a per-thread
 * workspace slot; when it cannot be had the plain loops compute the same sums.
 *
 * Layouts: NCHW takes torch's weights (c_in, c_out/groups, kh, kw) ("IOHW"); NHWC takes
 * (c_in, kh, kw, c_out/groups) ("IHWO"), the transpose(0, 2, 3, 1) that turns conv2d's OIHW
 * into OHWI, so both layouts keep the per-group output channel last in the same place.
 *   NCHW: col[(co, ky, kx), p] = sum_ci w[ci, co, ky, kx] x[ci, p]   (kg*kh*kw x P, row-major)
 *   NHWC: col[p, (ky, kx, co)] = sum_ci x[p, ci] w[ci, ky, kx, co]   (P x kh*kw*kg, row-major)
 */
#include "tg_gemm.h"
#include "tg_threads.h"
#include "tg_workspace.h"
#include "tilegen.h"

#define TG_CONVT_PARALLEL_MIN_ADDS 32768  /* below this a block's col2im runs on one thread */

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

/* col for a block of input rows, scattered into y by threads that each own a slice of the
   output channels (so no two threads write one element). A block's col is sized to stay in the
   L2 cache: read once right after the GEMM wrote it, where one col for the whole image (8 MB for
   64->32 channels, 4x4 at 64x64) went to memory and back. */
#define TG_CONVT_BLOCK_FLOATS (128 * 1024)

/* The input columns ix whose tap at offset off = kx*dw - pw lands in [0, ow). */
static inline void ix_range(const tgeom* g, int64_t off, int64_t* ix0, int64_t* ix1) {
  *ix0 = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
  *ix1 = g->ow - 1 - off < 0 ? -1 : (g->ow - 1 - off) / g->sw;
  if (*ix1 >= g->w) *ix1 = g->w - 1;
}

#define TG_DEFINE_CONVT(DT, T)                                                                 \
  typedef struct {                                                                             \
    const tgeom* g;                                                                            \
    const T* col;  /* the block's: rows iy0 .. iy0 + rows - 1 */                               \
    int64_t iy0, rows;                                                                         \
    T* y;          /* the image's, at the group's first channel */                             \
  } scatter_##DT;                                                                              \
                                                                                               \
  /* NCHW: col is (kg, kh, kw) x (rows * w); the task's channels are a range of co. */         \
  static void scatter_nchw_##DT(void* ctx, int tid, int nt) {                                  \
    const scatter_##DT* q = ctx;                                                               \
    const tgeom* g = q->g;                                                                     \
    const int64_t kg = g->cout / g->groups, bw = q->rows * g->w;                               \
    for (int64_t co = kg * tid / nt; co < kg * (tid + 1) / nt; co++)                           \
      for (int64_t ky = 0; ky < g->kh; ky++)                                                   \
        for (int64_t kx = 0; kx < g->kw; kx++) {                                               \
          const T* c = q->col + ((co * g->kh + ky) * g->kw + kx) * bw;                         \
          const int64_t off = kx * g->dw - g->pw;                                              \
          int64_t ix0, ix1;                                                                    \
          ix_range(g, off, &ix0, &ix1);                                                        \
          for (int64_t r = 0; r < q->rows; r++) {                                              \
            const int64_t oy = (q->iy0 + r) * g->sh - g->ph + ky * g->dh;                      \
            if (oy < 0 || oy >= g->oh) continue;                                               \
            T* yr = q->y + (co * g->oh + oy) * g->ow + off;                                    \
            const T* cr = c + r * g->w;                                                        \
            if (g->sw == 1)                                                                    \
              for (int64_t ix = ix0; ix <= ix1; ix++) yr[ix] += cr[ix];                        \
            else                                                                               \
              for (int64_t ix = ix0; ix <= ix1; ix++) yr[ix * g->sw] += cr[ix];                \
          }                                                                                    \
        }                                                                                      \
  }                                                                                            \
                                                                                               \
  /* NHWC: col is (rows * w) x (kh, kw, kg); the task's channels are a range of co. */        \
  static void scatter_nhwc_##DT(void* ctx, int tid, int nt) {                                  \
    const scatter_##DT* q = ctx;                                                               \
    const tgeom* g = q->g;                                                                     \
    const int64_t kg = g->cout / g->groups, cc = g->kh * g->kw * kg;                           \
    const int64_t c0 = kg * tid / nt, c1 = kg * (tid + 1) / nt;                                \
    for (int64_t r = 0; r < q->rows; r++)                                                      \
      for (int64_t ky = 0; ky < g->kh; ky++) {                                                 \
        const int64_t oy = (q->iy0 + r) * g->sh - g->ph + ky * g->dh;                          \
        if (oy < 0 || oy >= g->oh) continue;                                                   \
        T* yr = q->y + oy * g->ow * g->cout;                                                   \
        for (int64_t kx = 0; kx < g->kw; kx++) {                                               \
          const int64_t off = kx * g->dw - g->pw;                                              \
          int64_t ix0, ix1;                                                                    \
          ix_range(g, off, &ix0, &ix1);                                                        \
          const T* c = q->col + r * g->w * cc + (ky * g->kw + kx) * kg;                        \
          for (int64_t ix = ix0; ix <= ix1; ix++) {                                            \
            const T* cp = c + ix * cc;                                                         \
            T* yo = yr + (ix * g->sw + off) * g->cout;                                         \
            for (int64_t co = c0; co < c1; co++) yo[co] += cp[co];                             \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
  }                                                                                            \
                                                                                               \
  /* y = bias (per output channel) or 0, before the taps are added. */                         \
  static void fill_bias_##DT(const tgeom* g, const T* bias, T* y) {                            \
    const int64_t ohw = g->oh * g->ow;                                                         \
    if (g->layout == TILEGEN_NHWC) { /* pixel by pixel: the channels are contiguous */        \
      for (int64_t i = 0; i < g->n * ohw; i++)                                                 \
        for (int64_t co = 0; co < g->cout; co++) y[i * g->cout + co] = bias ? bias[co] : 0;   \
      return;                                                                                  \
    }                                                                                          \
    for (int64_t ni = 0; ni < g->n; ni++)                                                      \
      for (int64_t co = 0; co < g->cout; co++) {                                               \
        const T b = bias ? bias[co] : (T) 0;                                                   \
        T* p = y + (ni * g->cout + co) * ohw;                                                  \
        for (int64_t i = 0; i < ohw; i++) p[i] = b;                                            \
      }                                                                                        \
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
    const int64_t cg = c_in / groups, kg = c_out / groups, hw = h * w;                         \
    const int64_t ohw = g.oh * g.ow, cols = kh * kw * kg;                                      \
    int64_t bh = TG_CONVT_BLOCK_FLOATS / (w * cols);                                           \
    if (bh < 1) bh = 1;                                                                        \
    if (bh > h) bh = h;                                                                        \
    T* col = tg_workspace(TG_WS_CONV2D_COL, (size_t) (bh * w * cols) * sizeof(T));             \
    if (col == NULL) {                                                                         \
      plain_##DT(&g, x, weight, bias, y);                                                      \
      return 0;                                                                                \
    }                                                                                          \
    fill_bias_##DT(&g, bias, y);                                                               \
    int nt = bh * w * cols < TG_CONVT_PARALLEL_MIN_ADDS ? 1 : tg_threads_max();                \
    if (nt > kg) nt = (int) kg;                                                                \
    for (int64_t ni = 0; ni < n; ni++)                                                         \
      for (int64_t gi = 0; gi < groups; gi++)                                                  \
        for (int64_t iy0 = 0; iy0 < h; iy0 += bh) {                                            \
          const int64_t rows = h - iy0 < bh ? h - iy0 : bh, bw = rows * w;                     \
          const T* wg = weight + gi * cg * cols;                                               \
          scatter_##DT q = {&g, col, iy0, rows, NULL};                                         \
          if (layout == TILEGEN_NCHW) {                                                        \
            /* col (kg*taps x bw) = W_g^T (kg*taps x cg) X_g (cg x bw, rows hw apart) */       \
            tg_gemm_##DT(cols, bw, cg, 1, wg, 1, cols, x + (ni * c_in + gi * cg) * hw + iy0 * w,\
                         hw, 1, 0, col, bw, 1, NULL, 0, 0);                                    \
            q.y = y + (ni * c_out + gi * kg) * ohw;                                            \
            tg_parallel_run(nt, scatter_nchw_##DT, &q);                                        \
          } else {                                                                             \
            /* col (bw x taps*kg) = X_g (bw x cg, rows c_in apart) W_g (cg x taps*kg) */       \
            tg_gemm_##DT(bw, cols, cg, 1, x + (ni * hw + iy0 * w) * c_in + gi * cg, c_in, 1,   \
                         wg, cols, 1, 0, col, cols, 1, NULL, 0, 0);                            \
            q.y = y + ni * ohw * c_out + gi * kg;                                              \
            tg_parallel_run(nt, scatter_nhwc_##DT, &q);                                        \
          }                                                                                    \
        }                                                                                      \
    return 0;                                                                                  \
  }

TG_DEFINE_CONVT(f32, float)
TG_DEFINE_CONVT(f64, double)
