/*
 * OpenBLAS's bfloat16 extensions: sbgemm_ / cblas_sbgemm (bfloat16 as uint16_t, float32 alpha,
 * beta and C; the same checks and numbering as ?gemm, on tilegen's bfloat16 kernels) and the
 * conversions cblas_sbstobf16 / cblas_sbf16tos.
 */
#include "tg_blas.h"
#include "tg_gemm.h"
#include "tilegen.h"

/* C <- alpha op(A) op(B) + beta C, column-major, after the checks. */
static void sbgemm_col(char ta, char tb, int m, int n, int k, float alpha, const uint16_t* a,
                       int lda, const uint16_t* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0 || ((alpha == 0 || k == 0) && beta == 1)) return;
  const int64_t rs_a = ta == 'N' ? 1 : lda, cs_a = ta == 'N' ? lda : 1;
  const int64_t rs_b = tb == 'N' ? 1 : ldb, cs_b = tb == 'N' ? ldb : 1;
  tilegen_gemm_bf16(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, TILEGEN_F32, 1, ldc,
                    NULL, 0, TILEGEN_ACT_NONE);
}

/* OpenBLAS's bfloat16 GEMM (bfloat16 as uint16_t, float32 alpha, beta and C): the same checks
   and numbering as ?gemm, on tilegen's bfloat16 kernels. */
TG_BLAS_API void sbgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const float* alpha, const uint16_t* a, const int* lda, const uint16_t* b,
             const int* ldb, const float* beta, float* c, const int* ldc) {
  const char ta = tg_up(transa), tb = tg_up(transb);
  const int info = gemm_check(ta, tb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info) return tg_blas_error("SBGEMM", info);
  sbgemm_col(ta, tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
}

TG_BLAS_API void cblas_sbgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,
                  const int m, const int n, const int k, const float alpha, const uint16_t* a,
                  const int lda, const uint16_t* b, const int ldb, const float beta, float* c,
                  const int ldc) {
  const int row = layout == TG_ROW;
  if (!row && layout != TG_COL) return tg_cblas_error(0, 1, "cblas_sbgemm");
  const char ta = tg_cb_trans(trans_a), tb = tg_cb_trans(trans_b);
  if (!ta) return tg_cblas_error(row, 2, "cblas_sbgemm");
  if (!tb) return tg_cblas_error(row, 3, "cblas_sbgemm");
  /* row-major: the column-major product of the transposes (B first), as cblas_sgemm */
  const int info = row ? gemm_check(tb, ta, n, m, k, ldb, lda, ldc)
                       : gemm_check(ta, tb, m, n, k, lda, ldb, ldc);
  if (info) return tg_cblas_error(row, info + 1, "cblas_sbgemm");
  if (row)
    sbgemm_col(tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
  else
    sbgemm_col(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* OpenBLAS's conversions (n values, increments as ?copy's: negative starts from the end). */
TG_BLAS_API void cblas_sbstobf16(const int n, const float* in, const int incin, uint16_t* out,
                     const int incout) {
  if (n <= 0) return;
  tilegen_bf16_from_f32(n, incin < 0 ? in - (int64_t) (n - 1) * incin : in, incin,
                        incout < 0 ? out - (int64_t) (n - 1) * incout : out, incout);
}

TG_BLAS_API void cblas_sbf16tos(const int n, const uint16_t* in, const int incin, float* out,
                    const int incout) {
  if (n <= 0) return;
  tilegen_f32_from_bf16(n, incin < 0 ? in - (int64_t) (n - 1) * incin : in, incin,
                        incout < 0 ? out - (int64_t) (n - 1) * incout : out, incout);
}
