/* The GEMM driver's internal entry points (one per dtype), used by the public API and BLAS ABIs. */
#ifndef TG_GEMM_H
#define TG_GEMM_H

#include <stdint.h>

#include "cpu_caches.h"
#include "tilegen.h"

/* The low-precision drivers' block sizes from the core's caches: A's MR x KC panel (`bytes` a
   value) in a quarter of L2, KC a multiple of `step` in [kc_min, kc_max]; B's KC x NC block in
   the smaller of 4 x L2 and L3 / 8 (the float GEMM's rule, gemm_dispatch.c), NC a multiple of
   NR. */
static inline void tg_gemm_lowp_blocking(const tg_cpu_caches* caches, int64_t mr, int64_t nr,
                                         int64_t bytes, int64_t step, int64_t kc_min,
                                         int64_t kc_max, int64_t* kc_out, int64_t* nc_out) {
  int64_t kc = caches->l2 / 4 / (mr * bytes) / step * step;
  kc = kc < kc_min ? kc_min : kc > kc_max ? kc_max : kc;
  const int64_t b_max = caches->l3 <= 0 ? caches->l2 / 2
                        : caches->l3 / 8 < 4 * caches->l2 ? caches->l3 / 8 : 4 * caches->l2;
  const int64_t nc = b_max / (kc * bytes) / nr * nr;
  *kc_out = kc;
  *nc_out = nc < nr ? nr : nc;
}

/* The NC of a product of depth k below KC: the B block's bytes (KC x NC, as sized above) spent
   on more columns, so that A is packed again for fewer column blocks (int8 on Zen 4, 1 thread:
   2048^3 375 -> 419 GOP/s, 4096^3 371 -> 404). */
static inline int64_t tg_gemm_lowp_nc_at_depth(int64_t nc, int64_t kc, int64_t k, int64_t nr) {
  if (k <= 0 || k >= kc) return nc;
  const int64_t wide = nc * kc / k / nr * nr;
  return wide < nc ? nc : wide;
}

/* The end of the column panels [q0, q1) of a packed B block (nc columns, NR-wide panels) that
   an ISA's own packing routine takes: the whole ones, where it has one for this B (`own`); q0
   (none) otherwise. The driver's loop packs the rest. */
static inline int64_t tg_gemm_lowp_whole_panels(int own, int64_t nc, int64_t nr, int64_t q0,
                                                int64_t q1) {
  const int64_t whole = nc / nr < q1 ? nc / nr : q1;
  return own && whole > q0 ? whole : q0;
}

/* Matrix-vector products (every dtype's GEMV path) run on threads from this many bytes of the
   matrix: below it a thread hand-off costs about what it saves. */
#define TG_GEMV_PARALLEL_MIN_BYTES 1.0e6


/* C = act(alpha*A*B + beta*C + bias) with general element strides; arguments already checked.
   bias element for column j is bias[j*bias_stride]. */
void tg_gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t rs_a,
                 int64_t cs_a, const float* b, int64_t rs_b, int64_t cs_b, float beta, float* c,
                 int64_t rs_c, int64_t cs_c, const float* bias, int64_t bias_stride, int act);
void tg_gemm_f64(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t rs_a,
                 int64_t cs_a, const double* b, int64_t rs_b, int64_t cs_b, double beta,
                 double* c, int64_t rs_c, int64_t cs_c, const double* bias, int64_t bias_stride,
                 int act);

/* B packed once for many products C = act(A B + bias) with row-major A (packed linear layers):
   pack_b returns NULL for an empty B, when out of memory or when the ISA has no row-major-A
   kernels; gemm_packed takes C row-major. */
#define TG_DECLARE_PACKED_B(DT, T)                                                           \
  typedef struct tg_packed_b_##DT tg_packed_b_##DT;                                          \
  tg_packed_b_##DT* tg_gemm_pack_b_##DT(int64_t k, int64_t n, const T* b, int64_t rs_b,      \
                                        int64_t cs_b);                                       \
  void tg_gemm_packed_##DT(int64_t m, const T* a, int64_t rs_a, const tg_packed_b_##DT* b,   \
                           T* c, int64_t rs_c, const T* bias, int act);                      \
  void tg_packed_b_free_##DT(tg_packed_b_##DT* b);                                           \
  int64_t tg_packed_b_bytes_##DT(const tg_packed_b_##DT* b);
TG_DECLARE_PACKED_B(f32, float)
TG_DECLARE_PACKED_B(f64, double)

/* Converts (layout, trans, ld) into element strides of the logical rows x cols matrix.
   Returns 0, or -1 for an invalid layout/trans value. */
int tg_strides_from_blas(int layout, int trans, int64_t ld, int64_t* rs, int64_t* cs);

#endif
