/*
 * 2-D convolution's plain path, both layouts: float64, and float32 where no kernel serves
 * (conv.c's plan_method_; also its fallback when scratch memory cannot be had). Loops,
 * accumulating in double; threads split the output rows of the batch.
 */
#include <math.h>

#include "conv_internal.h"
#include "tg_threads.h"

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
  void tg_conv_plain_##DT(const geom* g, int64_t n, int64_t h, int64_t w, const T* x,         \
                          const T* k, const T* bias, T* y) {                                  \
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
