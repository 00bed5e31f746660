/* The GEMM driver's internal entry points (one per dtype), used by the public API and BLAS ABIs. */
#ifndef TG_GEMM_H
#define TG_GEMM_H

#include <stdint.h>

#include "tilegen.h"

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
