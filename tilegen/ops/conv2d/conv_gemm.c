/*
 * 2-D convolution: 1x1 filters at stride 1 with no padding as GEMMs (float64's path, and
 * float32's when forced: conv.c's plan_method_ says why).
 */
#include "conv_internal.h"
#include "tg_gemm.h"

/* One product per image and group. NHWC: Y[p, co] = X[p, ci] W[co, ci]^T, bias per column.
   NCHW: Y[co, p] = W[co, ci] X[ci, p], written as its transpose (p x co, C column-major) so
   that the driver's per-column bias becomes the per-row one when it turns the problem back. */
#define TG_DEFINE_GEMM_PATH(DT, T)                                                              \
  void tg_conv_gemm_path_##DT(const geom* g, int64_t n, int64_t hw, const T* x, const T* k,    \
                              const T* bias, T* y) {                                           \
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
