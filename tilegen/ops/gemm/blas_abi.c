/*
 * The standard BLAS ABIs, so libtilegen drops into a program the way OpenBLAS does (linking or
 * LD_PRELOAD): Fortran sgemm_/dgemm_ (LP64) and CBLAS cblas_sgemm/cblas_dgemm. Argument checks
 * and parameter numbers follow the reference implementations; errors go through xerbla_ /
 * cblas_xerbla and the call returns without touching C.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tg_gemm.h"
#include "tilegen_cblas.h"

__attribute__((weak)) void xerbla_(const char* srname, const int* info, size_t srname_len) {
  size_t n = srname_len;
  while (n > 0 && srname[n - 1] == ' ') n--;
  fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n", (int) n,
          srname, *info);
}

/* Set while a row-major cblas_?gemm reports an error (see cblas_report below). */
static __thread int cblas_row_major_error;

/* The reference CBLAS serves a row-major call with the Fortran routine on the transposed
   problem (N and M swapped, B before A), so its cblas_xerbla receives that call's numbers and
   swaps 4<->5 and 9<->11 back before printing; programs that define their own cblas_xerbla
   (the reference test suite does) expect exactly that. */
static int cblas_row_major_number(int p) {
  switch (p) {
    case 4: return 5;
    case 5: return 4;
    case 9: return 11;
    case 11: return 9;
    default: return p;
  }
}

__attribute__((weak)) void cblas_xerbla(int p, const char* rout, const char* form, ...) {
  if (cblas_row_major_error) p = cblas_row_major_number(p);  /* print the signature's number */
  fprintf(stderr, "Parameter %d to routine %s was incorrect\n", p, rout);
  va_list ap;
  va_start(ap, form);
  vfprintf(stderr, form, ap);
  va_end(ap);
}

/* Reports CBLAS parameter p (its number in the cblas_?gemm signature) as the reference does. */
static void cblas_report(int layout, int p, const char* rout) {
  const int row_major = layout == TILEGEN_ROW_MAJOR;
  cblas_row_major_error = row_major;
  cblas_xerbla(row_major ? cblas_row_major_number(p) : p, rout, "");
  cblas_row_major_error = 0;
}

/* Fortran TRANS character -> tilegen_transpose, or 0 when invalid. */
static int f77_trans(char t) {
  switch (t) {
    case 'N': case 'n': return TILEGEN_NO_TRANS;
    case 'T': case 't': return TILEGEN_TRANS;
    case 'C': case 'c': return TILEGEN_CONJ_TRANS;
    default: return 0;
  }
}

static int max1(int x) { return x > 1 ? x : 1; }

/* Reference xGEMM checks, in its order; returns INFO (0 = valid). */
static int f77_check(int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc) {
  if (!ta) return 1;
  if (!tb) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < max1(ta == TILEGEN_NO_TRANS ? m : k)) return 8;
  if (ldb < max1(tb == TILEGEN_NO_TRANS ? k : n)) return 10;
  if (ldc < max1(m)) return 13;
  return 0;
}

/* Reference CBLAS checks (parameter numbers of the cblas_?gemm signature); the row-major order
   is that of the transposed Fortran call the reference makes (cblas_report renumbers). */
static int cblas_check(int layout, int ta, int tb, int m, int n, int k, int lda, int ldb,
                       int ldc) {
  if (layout != TILEGEN_ROW_MAJOR && layout != TILEGEN_COL_MAJOR) return 1;
  if (ta != TILEGEN_NO_TRANS && ta != TILEGEN_TRANS && ta != TILEGEN_CONJ_TRANS) return 2;
  if (tb != TILEGEN_NO_TRANS && tb != TILEGEN_TRANS && tb != TILEGEN_CONJ_TRANS) return 3;
  const int lda_min = max1(layout == TILEGEN_COL_MAJOR ? (ta == TILEGEN_NO_TRANS ? m : k)
                                                        : (ta == TILEGEN_NO_TRANS ? k : m));
  const int ldb_min = max1(layout == TILEGEN_COL_MAJOR ? (tb == TILEGEN_NO_TRANS ? k : n)
                                                        : (tb == TILEGEN_NO_TRANS ? n : k));
  if (layout == TILEGEN_COL_MAJOR) {
    if (m < 0) return 4;
    if (n < 0) return 5;
    if (k < 0) return 6;
    if (lda < lda_min) return 9;
    if (ldb < ldb_min) return 11;
    if (ldc < max1(m)) return 14;
  } else {
    if (n < 0) return 5;
    if (m < 0) return 4;
    if (k < 0) return 6;
    if (ldb < ldb_min) return 11;
    if (lda < lda_min) return 9;
    if (ldc < max1(n)) return 14;
  }
  return 0;
}

#define TG_DEFINE_BLAS(PFX, UPPER, DT, T)                                                       \
  void PFX##gemm_(const char* transa, const char* transb, const int* m, const int* n,           \
                  const int* k, const T* alpha, const T* a, const int* lda, const T* b,         \
                  const int* ldb, const T* beta, T* c, const int* ldc) {                        \
    const int ta = f77_trans(*transa), tb = f77_trans(*transb);                                 \
    const int info = f77_check(ta, tb, *m, *n, *k, *lda, *ldb, *ldc);                           \
    if (info) {                                                                                 \
      xerbla_(UPPER, &info, 6);                                                                 \
      return;                                                                                   \
    }                                                                                           \
    if (*m == 0 || *n == 0 || ((*alpha == 0 || *k == 0) && *beta == 1)) return;                 \
    int64_t rs_a = 0, cs_a = 0, rs_b = 0, cs_b = 0;                                             \
    tg_strides_from_blas(TILEGEN_COL_MAJOR, ta, *lda, &rs_a, &cs_a);                            \
    tg_strides_from_blas(TILEGEN_COL_MAJOR, tb, *ldb, &rs_b, &cs_b);                            \
    tg_gemm_##DT(*m, *n, *k, *alpha, a, rs_a, cs_a, b, rs_b, cs_b, *beta, c, 1, *ldc, NULL, 0,  \
                 TILEGEN_ACT_NONE);                                                             \
  }                                                                                             \
                                                                                                \
  void cblas_##PFX##gemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, \
                         const int m, const int n, const int k, const T alpha, const T* a,      \
                         const int lda, const T* b, const int ldb, const T beta, T* c,          \
                         const int ldc) {                                                       \
    const int info = cblas_check(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);             \
    if (info) {                                                                                 \
      cblas_report(layout, info, "cblas_" #PFX "gemm");                                         \
      return;                                                                                   \
    }                                                                                           \
    if (m == 0 || n == 0 || ((alpha == 0 || k == 0) && beta == 1)) return;                      \
    tilegen_##PFX##gemm_ex((tilegen_layout) layout, (tilegen_transpose) trans_a,                \
                           (tilegen_transpose) trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, \
                           ldc, NULL, TILEGEN_ACT_NONE);                                        \
  }

TG_DEFINE_BLAS(s, "SGEMM ", f32, float)
TG_DEFINE_BLAS(d, "DGEMM ", f64, double)

/* OpenBLAS's bfloat16 GEMM (bfloat16 as uint16_t, float32 alpha, beta and C): the same checks
   and numbering as ?gemm, on tilegen's bfloat16 kernels. */
void sbgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const float* alpha, const uint16_t* a, const int* lda, const uint16_t* b,
             const int* ldb, const float* beta, float* c, const int* ldc) {
  const int ta = f77_trans(*transa), tb = f77_trans(*transb);
  const int info = f77_check(ta, tb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info) {
    xerbla_("SBGEMM", &info, 6);
    return;
  }
  if (*m == 0 || *n == 0 || ((*alpha == 0 || *k == 0) && *beta == 1)) return;
  int64_t rs_a = 0, cs_a = 0, rs_b = 0, cs_b = 0;
  tg_strides_from_blas(TILEGEN_COL_MAJOR, ta, *lda, &rs_a, &cs_a);
  tg_strides_from_blas(TILEGEN_COL_MAJOR, tb, *ldb, &rs_b, &cs_b);
  tilegen_gemm_bf16(*m, *n, *k, *alpha, a, rs_a, cs_a, b, rs_b, cs_b, *beta, c, TILEGEN_F32, 1,
                    *ldc, NULL, 0, TILEGEN_ACT_NONE);
}

void cblas_sbgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,
                  const int m, const int n, const int k, const float alpha, const uint16_t* a,
                  const int lda, const uint16_t* b, const int ldb, const float beta, float* c,
                  const int ldc) {
  const int info = cblas_check(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
  if (info) {
    cblas_report(layout, info, "cblas_sbgemm");
    return;
  }
  if (m == 0 || n == 0 || ((alpha == 0 || k == 0) && beta == 1)) return;
  int64_t rs_a = 0, cs_a = 0, rs_b = 0, cs_b = 0, rs_c = 0, cs_c = 0;
  tg_strides_from_blas(layout, trans_a, lda, &rs_a, &cs_a);
  tg_strides_from_blas(layout, trans_b, ldb, &rs_b, &cs_b);
  tg_strides_from_blas(layout, TILEGEN_NO_TRANS, ldc, &rs_c, &cs_c);
  tilegen_gemm_bf16(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, TILEGEN_F32, rs_c,
                    cs_c, NULL, 0, TILEGEN_ACT_NONE);
}

/* OpenBLAS's conversions (n values, increments as ?copy's: negative starts from the end). */
void cblas_sbstobf16(const int n, const float* in, const int incin, uint16_t* out,
                     const int incout) {
  if (n <= 0) return;
  tilegen_bf16_from_f32(n, incin < 0 ? in - (int64_t) (n - 1) * incin : in, incin,
                        incout < 0 ? out - (int64_t) (n - 1) * incout : out, incout);
}

void cblas_sbf16tos(const int n, const uint16_t* in, const int incin, float* out,
                    const int incout) {
  if (n <= 0) return;
  tilegen_f32_from_bf16(n, incin < 0 ? in - (int64_t) (n - 1) * incin : in, incin,
                        incout < 0 ? out - (int64_t) (n - 1) * incout : out, incout);
}
