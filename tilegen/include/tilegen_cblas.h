/* Copied by `tilegen generate` from tilegen/ops/gemm/tilegen_cblas.h -- DO NOT EDIT. */
/*
 * tilegen_cblas.h -- the standard BLAS ABIs that libtilegen exports, for programs that call them
 * through libtilegen: Fortran sgemm_/dgemm_ and CBLAS cblas_sgemm/cblas_dgemm (LP64: 32-bit
 * integers), and the reference BLAS's error reporters.
 *
 * A program that already has a <cblas.h> (netlib's, OpenBLAS's) needs nothing from here: link
 * libtilegen (or LD_PRELOAD it) and keep its own header. This header may also be included after
 * such a <cblas.h>: it then uses that header's CBLAS_LAYOUT / CBLAS_TRANSPOSE types, and declares
 * the same functions compatibly. Included alone, it defines those two types itself (the values
 * CBLAS fixes); include it after <cblas.h>, not before, when a file uses both.
 */
#ifndef TILEGEN_CBLAS_H
#define TILEGEN_CBLAS_H

#include <stddef.h>

#include "tilegen.h"

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(CBLAS_H) && !defined(TILEGEN_CBLAS_TYPES)
#define TILEGEN_CBLAS_TYPES
typedef enum CBLAS_LAYOUT { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_LAYOUT;
typedef enum CBLAS_TRANSPOSE {
  CblasNoTrans = 111,
  CblasTrans = 112,
  CblasConjTrans = 113
} CBLAS_TRANSPOSE;
#endif

/* C = alpha*op(A)*op(B) + beta*C, column-major, reference-BLAS argument checks: an invalid
   argument is reported through xerbla_ and C is left untouched. */
TILEGEN_API void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const float* alpha, const float* a, const int* lda,
                        const float* b, const int* ldb, const float* beta, float* c,
                        const int* ldc);
TILEGEN_API void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const double* alpha, const double* a, const int* lda,
                        const double* b, const int* ldb, const double* beta, double* c,
                        const int* ldc);

/* The same for either layout; errors through cblas_xerbla with CBLAS's parameter numbers. */
TILEGEN_API void cblas_sgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a,
                             CBLAS_TRANSPOSE trans_b, const int m, const int n, const int k,
                             const float alpha, const float* a, const int lda, const float* b,
                             const int ldb, const float beta, float* c, const int ldc);
TILEGEN_API void cblas_dgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a,
                             CBLAS_TRANSPOSE trans_b, const int m, const int n, const int k,
                             const double alpha, const double* a, const int lda,
                             const double* b, const int ldb, const double beta, double* c,
                             const int ldc);

/* OpenBLAS's bfloat16 GEMM (bfloat16 as its 16 bits): the same checks and numbering as sgemm_
   and cblas_sgemm; products summed in float32 into a float32 C. */
TILEGEN_API void sbgemm_(const char* transa, const char* transb, const int* m, const int* n,
                         const int* k, const float* alpha, const uint16_t* a, const int* lda,
                         const uint16_t* b, const int* ldb, const float* beta, float* c,
                         const int* ldc);
TILEGEN_API void cblas_sbgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a,
                              CBLAS_TRANSPOSE trans_b, const int m, const int n, const int k,
                              const float alpha, const uint16_t* a, const int lda,
                              const uint16_t* b, const int ldb, const float beta, float* c,
                              const int ldc);
/* float32 -> bfloat16 (to nearest, ties to even) and back, OpenBLAS's names. */
TILEGEN_API void cblas_sbstobf16(const int n, const float* in, const int incin, uint16_t* out,
                                 const int incout);
TILEGEN_API void cblas_sbf16tos(const int n, const uint16_t* in, const int incin, float* out,
                                const int incout);

/* Error reporters, as in the reference BLAS; weak, so a program may supply its own. The
   defaults print the reference message to stderr and return (they do not exit). */
TILEGEN_API void xerbla_(const char* srname, const int* info, size_t srname_len);
TILEGEN_API void cblas_xerbla(int p, const char* rout, const char* form, ...);

#ifdef __cplusplus
}
#endif

#endif /* TILEGEN_CBLAS_H */
