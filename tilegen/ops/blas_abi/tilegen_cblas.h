/*
 * tilegen_cblas.h -- the standard BLAS ABIs libtilegen exports: every routine of the reference
 * BLAS (levels 1-3; s, d, c, z) through the Fortran ABI (gfortran's conventions: arguments by
 * reference, LP64 32-bit integers, complex function results returned by value) and through
 * CBLAS (the reference cblas.h's functions and enumerations), plus OpenBLAS's extensions
 * (?axpby, ?omatcopy / ?imatcopy, cblas_?gemm_batch, ?gemmt, the bfloat16 sbgemm) and the
 * error reporters xerbla_ / cblas_xerbla.
 *
 * A program that already has a <cblas.h> (netlib's, OpenBLAS's) needs nothing from here: link
 * libtilegen (or LD_PRELOAD it, or install it as libblas.so.3 / libcblas.so.3) and keep its own
 * header. This header may also be included after the reference <cblas.h>: it then uses that
 * header's enumerations and declares the same functions compatibly. Included alone, it defines
 * the enumerations itself (the values CBLAS fixes).
 *
 * The declarations between the GENERATED markers are those of the definitions in
 * tilegen/ops/blas_abi (tests/ops/blas_abi/test_blas_header.py keeps them equal).
 */
#ifndef TILEGEN_CBLAS_H
#define TILEGEN_CBLAS_H

#include <stddef.h>
#include <stdint.h>

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
typedef enum CBLAS_UPLO { CblasUpper = 121, CblasLower = 122 } CBLAS_UPLO;
typedef enum CBLAS_DIAG { CblasNonUnit = 131, CblasUnit = 132 } CBLAS_DIAG;
typedef enum CBLAS_SIDE { CblasLeft = 141, CblasRight = 142 } CBLAS_SIDE;
#endif
#ifndef CBLAS_ORDER
#define CBLAS_ORDER CBLAS_LAYOUT
#endif
/* OpenBLAS's extra transpose value for ?omatcopy / ?imatcopy: conjugate, not transposed. */
#define TILEGEN_CBLAS_CONJ_NO_TRANS 114

/* Complex values of the Fortran ABI (C99 complex in C; the same layout and return registers
   as a pair of reals in C++). */
#ifdef __cplusplus
typedef struct { float real, imag; } tilegen_complex_float;
typedef struct { double real, imag; } tilegen_complex_double;
#else
typedef float _Complex tilegen_complex_float;
typedef double _Complex tilegen_complex_double;
#endif

/* Error reporters, as in the reference BLAS; weak, so a program may supply its own. The
   defaults print the reference message to stderr and return (they do not exit). Every other
   routine reports an invalid argument through them, with the reference's parameter numbers,
   and then returns without writing anything. */

/* The reference CBLAS's row-major flag (programs written against the reference CBLAS, such as
   its test suite, use it); nonzero while a row-major call reports an error. */
TILEGEN_API extern int RowMajorStrg;

/* BEGIN GENERATED DECLARATIONS */
/* blas_errors.c */
TILEGEN_API void xerbla_(const char* srname, const int* info, size_t srname_len);
TILEGEN_API void cblas_xerbla(int p, const char* rout, const char* form, ...);
TILEGEN_API int lsame_(const char* ca, const char* cb);
TILEGEN_API void xerbla_array_(const char* srname_array, const int* srname_len, const int* info);
/* blas_s.c */
TILEGEN_API void sswap_(const int* n, float* x, const int* incx, float* y, const int* incy);
TILEGEN_API void sscal_(const int* n, const float* a, float* x, const int* incx);
TILEGEN_API void scopy_(const int* n, const float* x, const int* incx, float* y, const int* incy);
TILEGEN_API void saxpy_(const int* n, const float* a, const float* x, const int* incx, float* y,
                        const int* incy);
TILEGEN_API float sdot_(const int* n, const float* x, const int* incx, const float* y,
                        const int* incy);
TILEGEN_API float snrm2_(const int* n, const float* x, const int* incx);
TILEGEN_API float sasum_(const int* n, const float* x, const int* incx);
TILEGEN_API int isamax_(const int* n, const float* x, const int* incx);
TILEGEN_API void srot_(const int* n, float* x, const int* incx, float* y, const int* incy,
                       const float* c, const float* s);
TILEGEN_API void srotg_(float* a, float* b, float* c, float* s);
TILEGEN_API void srotmg_(float* d1, float* d2, float* x1, const float* y1, float* param);
TILEGEN_API void srotm_(const int* n, float* x, const int* incx, float* y, const int* incy,
                        const float* param);
TILEGEN_API float sdsdot_(const int* n, const float* sb, const float* x, const int* incx,
                          const float* y, const int* incy);
TILEGEN_API double dsdot_(const int* n, const float* x, const int* incx, const float* y,
                          const int* incy);
TILEGEN_API float cblas_sdsdot(const int n, const float alpha, const float* x, const int incx,
                               const float* y, const int incy);
TILEGEN_API double cblas_dsdot(const int n, const float* x, const int incx, const float* y,
                               const int incy);
TILEGEN_API void sgemv_(const char* trans, const int* m, const int* n, const float* alpha,
                        const float* a, const int* lda, const float* x, const int* incx,
                        const float* beta, float* y, const int* incy);
TILEGEN_API void sgbmv_(const char* trans, const int* m, const int* n, const int* kl, const int* ku,
                        const float* alpha, const float* a, const int* lda, const float* x,
                        const int* incx, const float* beta, float* y, const int* incy);
TILEGEN_API void ssymv_(const char* uplo, const int* n, const float* alpha, const float* a,
                        const int* lda, const float* x, const int* incx, const float* beta,
                        float* y, const int* incy);
TILEGEN_API void ssbmv_(const char* uplo, const int* n, const int* k, const float* alpha,
                        const float* a, const int* lda, const float* x, const int* incx,
                        const float* beta, float* y, const int* incy);
TILEGEN_API void sspmv_(const char* uplo, const int* n, const float* alpha, const float* ap,
                        const float* x, const int* incx, const float* beta, float* y,
                        const int* incy);
TILEGEN_API void strmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const float* a, const int* lda, float* x, const int* incx);
TILEGEN_API void stbmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const float* a, const int* lda, float* x, const int* incx);
TILEGEN_API void stpmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const float* ap, float* x, const int* incx);
TILEGEN_API void strsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const float* a, const int* lda, float* x, const int* incx);
TILEGEN_API void stbsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const float* a, const int* lda, float* x, const int* incx);
TILEGEN_API void stpsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const float* ap, float* x, const int* incx);
TILEGEN_API void sger_(const int* m, const int* n, const float* alpha, const float* x,
                       const int* incx, const float* y, const int* incy, float* a, const int* lda);
TILEGEN_API void ssyr_(const char* uplo, const int* n, const float* alpha, const float* x,
                       const int* incx, float* a, const int* lda);
TILEGEN_API void sspr_(const char* uplo, const int* n, const float* alpha, const float* x,
                       const int* incx, float* ap);
TILEGEN_API void ssyr2_(const char* uplo, const int* n, const float* alpha, const float* x,
                        const int* incx, const float* y, const int* incy, float* a, const int* lda);
TILEGEN_API void sspr2_(const char* uplo, const int* n, const float* alpha, const float* x,
                        const int* incx, const float* y, const int* incy, float* ap);
TILEGEN_API void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const float* alpha, const float* a, const int* lda,
                        const float* b, const int* ldb, const float* beta, float* c,
                        const int* ldc);
TILEGEN_API void sgemmt_(const char* uplo, const char* transa, const char* transb, const int* n,
                         const int* k, const float* alpha, const float* a, const int* lda,
                         const float* b, const int* ldb, const float* beta, float* c,
                         const int* ldc);
TILEGEN_API void sgemmtr_(const char* uplo, const char* transa, const char* transb, const int* n,
                          const int* k, const float* alpha, const float* a, const int* lda,
                          const float* b, const int* ldb, const float* beta, float* c,
                          const int* ldc);
TILEGEN_API void ssymm_(const char* side, const char* uplo, const int* m, const int* n,
                        const float* alpha, const float* a, const int* lda, const float* b,
                        const int* ldb, const float* beta, float* c, const int* ldc);
TILEGEN_API void ssyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                        const float* alpha, const float* a, const int* lda, const float* beta,
                        float* c, const int* ldc);
TILEGEN_API void ssyr2k_(const char* uplo, const char* trans, const int* n, const int* k,
                         const float* alpha, const float* a, const int* lda, const float* b,
                         const int* ldb, const float* beta, float* c, const int* ldc);
TILEGEN_API void strmm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const float* alpha, const float* a,
                        const int* lda, float* b, const int* ldb);
TILEGEN_API void strsm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const float* alpha, const float* a,
                        const int* lda, float* b, const int* ldb);
TILEGEN_API void cblas_sswap(const int n, float* x, const int incx, float* y, const int incy);
TILEGEN_API void cblas_sscal(const int n, const float a, float* x, const int incx);
TILEGEN_API void cblas_scopy(const int n, const float* x, const int incx, float* y, const int incy);
TILEGEN_API void cblas_saxpy(const int n, const float a, const float* x, const int incx, float* y,
                             const int incy);
TILEGEN_API float cblas_sdot(const int n, const float* x, const int incx, const float* y,
                             const int incy);
TILEGEN_API float cblas_snrm2(const int n, const float* x, const int incx);
TILEGEN_API float cblas_sasum(const int n, const float* x, const int incx);
TILEGEN_API size_t cblas_isamax(const int n, const float* x, const int incx);
TILEGEN_API void cblas_srot(const int n, float* x, const int incx, float* y, const int incy,
                            const float c, const float s);
TILEGEN_API void cblas_srotg(float* a, float* b, float* c, float* s);
TILEGEN_API void cblas_srotmg(float* d1, float* d2, float* b1, const float b2, float* p);
TILEGEN_API void cblas_srotm(const int n, float* x, const int incx, float* y, const int incy,
                             const float* p);
TILEGEN_API void cblas_sgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const float alpha, const float* a, const int lda,
                             const float* x, const int incx, const float beta, float* y,
                             const int incy);
TILEGEN_API void cblas_sgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const int kl, const int ku, const float alpha,
                             const float* a, const int lda, const float* x, const int incx,
                             const float beta, float* y, const int incy);
TILEGEN_API void cblas_ssymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const float alpha, const float* a, const int lda, const float* x,
                             const int incx, const float beta, float* y, const int incy);
TILEGEN_API void cblas_ssbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const int k, const float alpha, const float* a, const int lda,
                             const float* x, const int incx, const float beta, float* y,
                             const int incy);
TILEGEN_API void cblas_sspmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const float alpha, const float* ap, const float* x, const int incx,
                             const float beta, float* y, const int incy);
TILEGEN_API void cblas_strmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const float* a, const int lda, float* x, const int incx);
TILEGEN_API void cblas_stbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const float* a, const int lda, float* x, const int incx);
TILEGEN_API void cblas_stpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const float* ap, float* x, const int incx);
TILEGEN_API void cblas_strsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const float* a, const int lda, float* x, const int incx);
TILEGEN_API void cblas_stbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const float* a, const int lda, float* x, const int incx);
TILEGEN_API void cblas_stpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const float* ap, float* x, const int incx);
TILEGEN_API void cblas_sger(const CBLAS_LAYOUT layout, const int m, const int n, const float alpha,
                            const float* x, const int incx, const float* y, const int incy,
                            float* a, const int lda);
TILEGEN_API void cblas_ssyr(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const float alpha, const float* x, const int incx, float* a,
                            const int lda);
TILEGEN_API void cblas_ssyr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const float alpha, const float* x, const int incx, const float* y,
                             const int incy, float* a, const int lda);
TILEGEN_API void cblas_sspr(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const float alpha, const float* x, const int incx, float* a);
TILEGEN_API void cblas_sspr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const float alpha, const float* x, const int incx, const float* y,
                             const int incy, float* a);
TILEGEN_API void cblas_sgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                             const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                             const float alpha, const float* a, const int lda, const float* b,
                             const int ldb, const float beta, float* c, const int ldc);
TILEGEN_API void cblas_sgemmt(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE transa, const CBLAS_TRANSPOSE transb,
                              const int n, const int k, const float alpha, const float* a,
                              const int lda, const float* b, const int ldb, const float beta,
                              float* c, const int ldc);
TILEGEN_API void cblas_ssymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const int m, const int n, const float alpha,
                             const float* a, const int lda, const float* b, const int ldb,
                             const float beta, float* c, const int ldc);
TILEGEN_API void cblas_ssyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const int n, const int k,
                             const float alpha, const float* a, const int lda, const float beta,
                             float* c, const int ldc);
TILEGEN_API void cblas_ssyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE trans, const int n, const int k,
                              const float alpha, const float* a, const int lda, const float* b,
                              const int ldb, const float beta, float* c, const int ldc);
TILEGEN_API void cblas_strmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const float alpha,
                             const float* a, const int lda, float* b, const int ldb);
TILEGEN_API void cblas_strsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const float alpha,
                             const float* a, const int lda, float* b, const int ldb);
TILEGEN_API void saxpby_(const int* n, const float* alpha, const float* x, const int* incx,
                         const float* beta, float* y, const int* incy);
TILEGEN_API void cblas_saxpby(const int n, const float alpha, const float* x, const int incx,
                              const float beta, float* y, const int incy);
TILEGEN_API void somatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const float* alpha, const float* a, const int* lda, float* b,
                            const int* ldb);
TILEGEN_API void simatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const float* alpha, float* a, const int* lda, const int* ldb);
TILEGEN_API void cblas_somatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const float alpha, const float* a, const int lda,
                                 float* b, const int ldb);
TILEGEN_API void cblas_simatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const float alpha, float* a, const int lda,
                                 const int ldb);
TILEGEN_API void cblas_sgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE* transa,
                                   const CBLAS_TRANSPOSE* transb, const int* m, const int* n,
                                   const int* k, const float* alpha, const float* * a,
                                   const int* lda, const float* * b, const int* ldb,
                                   const float* beta, float* * c, const int* ldc,
                                   const int group_count, const int* group_size);
/* blas_d.c */
TILEGEN_API void dswap_(const int* n, double* x, const int* incx, double* y, const int* incy);
TILEGEN_API void dscal_(const int* n, const double* a, double* x, const int* incx);
TILEGEN_API void dcopy_(const int* n, const double* x, const int* incx, double* y, const int* incy);
TILEGEN_API void daxpy_(const int* n, const double* a, const double* x, const int* incx, double* y,
                        const int* incy);
TILEGEN_API double ddot_(const int* n, const double* x, const int* incx, const double* y,
                         const int* incy);
TILEGEN_API double dnrm2_(const int* n, const double* x, const int* incx);
TILEGEN_API double dasum_(const int* n, const double* x, const int* incx);
TILEGEN_API int idamax_(const int* n, const double* x, const int* incx);
TILEGEN_API void drot_(const int* n, double* x, const int* incx, double* y, const int* incy,
                       const double* c, const double* s);
TILEGEN_API void drotg_(double* a, double* b, double* c, double* s);
TILEGEN_API void drotmg_(double* d1, double* d2, double* x1, const double* y1, double* param);
TILEGEN_API void drotm_(const int* n, double* x, const int* incx, double* y, const int* incy,
                        const double* param);
TILEGEN_API void dgemv_(const char* trans, const int* m, const int* n, const double* alpha,
                        const double* a, const int* lda, const double* x, const int* incx,
                        const double* beta, double* y, const int* incy);
TILEGEN_API void dgbmv_(const char* trans, const int* m, const int* n, const int* kl, const int* ku,
                        const double* alpha, const double* a, const int* lda, const double* x,
                        const int* incx, const double* beta, double* y, const int* incy);
TILEGEN_API void dsymv_(const char* uplo, const int* n, const double* alpha, const double* a,
                        const int* lda, const double* x, const int* incx, const double* beta,
                        double* y, const int* incy);
TILEGEN_API void dsbmv_(const char* uplo, const int* n, const int* k, const double* alpha,
                        const double* a, const int* lda, const double* x, const int* incx,
                        const double* beta, double* y, const int* incy);
TILEGEN_API void dspmv_(const char* uplo, const int* n, const double* alpha, const double* ap,
                        const double* x, const int* incx, const double* beta, double* y,
                        const int* incy);
TILEGEN_API void dtrmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const double* a, const int* lda, double* x, const int* incx);
TILEGEN_API void dtbmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const double* a, const int* lda, double* x, const int* incx);
TILEGEN_API void dtpmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const double* ap, double* x, const int* incx);
TILEGEN_API void dtrsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const double* a, const int* lda, double* x, const int* incx);
TILEGEN_API void dtbsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const double* a, const int* lda, double* x, const int* incx);
TILEGEN_API void dtpsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const double* ap, double* x, const int* incx);
TILEGEN_API void dger_(const int* m, const int* n, const double* alpha, const double* x,
                       const int* incx, const double* y, const int* incy, double* a,
                       const int* lda);
TILEGEN_API void dsyr_(const char* uplo, const int* n, const double* alpha, const double* x,
                       const int* incx, double* a, const int* lda);
TILEGEN_API void dspr_(const char* uplo, const int* n, const double* alpha, const double* x,
                       const int* incx, double* ap);
TILEGEN_API void dsyr2_(const char* uplo, const int* n, const double* alpha, const double* x,
                        const int* incx, const double* y, const int* incy, double* a,
                        const int* lda);
TILEGEN_API void dspr2_(const char* uplo, const int* n, const double* alpha, const double* x,
                        const int* incx, const double* y, const int* incy, double* ap);
TILEGEN_API void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const double* alpha, const double* a, const int* lda,
                        const double* b, const int* ldb, const double* beta, double* c,
                        const int* ldc);
TILEGEN_API void dgemmt_(const char* uplo, const char* transa, const char* transb, const int* n,
                         const int* k, const double* alpha, const double* a, const int* lda,
                         const double* b, const int* ldb, const double* beta, double* c,
                         const int* ldc);
TILEGEN_API void dgemmtr_(const char* uplo, const char* transa, const char* transb, const int* n,
                          const int* k, const double* alpha, const double* a, const int* lda,
                          const double* b, const int* ldb, const double* beta, double* c,
                          const int* ldc);
TILEGEN_API void dsymm_(const char* side, const char* uplo, const int* m, const int* n,
                        const double* alpha, const double* a, const int* lda, const double* b,
                        const int* ldb, const double* beta, double* c, const int* ldc);
TILEGEN_API void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                        const double* alpha, const double* a, const int* lda, const double* beta,
                        double* c, const int* ldc);
TILEGEN_API void dsyr2k_(const char* uplo, const char* trans, const int* n, const int* k,
                         const double* alpha, const double* a, const int* lda, const double* b,
                         const int* ldb, const double* beta, double* c, const int* ldc);
TILEGEN_API void dtrmm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const double* alpha, const double* a,
                        const int* lda, double* b, const int* ldb);
TILEGEN_API void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const double* alpha, const double* a,
                        const int* lda, double* b, const int* ldb);
TILEGEN_API void cblas_dswap(const int n, double* x, const int incx, double* y, const int incy);
TILEGEN_API void cblas_dscal(const int n, const double a, double* x, const int incx);
TILEGEN_API void cblas_dcopy(const int n, const double* x, const int incx, double* y,
                             const int incy);
TILEGEN_API void cblas_daxpy(const int n, const double a, const double* x, const int incx,
                             double* y, const int incy);
TILEGEN_API double cblas_ddot(const int n, const double* x, const int incx, const double* y,
                              const int incy);
TILEGEN_API double cblas_dnrm2(const int n, const double* x, const int incx);
TILEGEN_API double cblas_dasum(const int n, const double* x, const int incx);
TILEGEN_API size_t cblas_idamax(const int n, const double* x, const int incx);
TILEGEN_API void cblas_drot(const int n, double* x, const int incx, double* y, const int incy,
                            const double c, const double s);
TILEGEN_API void cblas_drotg(double* a, double* b, double* c, double* s);
TILEGEN_API void cblas_drotmg(double* d1, double* d2, double* b1, const double b2, double* p);
TILEGEN_API void cblas_drotm(const int n, double* x, const int incx, double* y, const int incy,
                             const double* p);
TILEGEN_API void cblas_dgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const double alpha, const double* a, const int lda,
                             const double* x, const int incx, const double beta, double* y,
                             const int incy);
TILEGEN_API void cblas_dgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const int kl, const int ku, const double alpha,
                             const double* a, const int lda, const double* x, const int incx,
                             const double beta, double* y, const int incy);
TILEGEN_API void cblas_dsymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const double alpha, const double* a, const int lda, const double* x,
                             const int incx, const double beta, double* y, const int incy);
TILEGEN_API void cblas_dsbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const int k, const double alpha, const double* a, const int lda,
                             const double* x, const int incx, const double beta, double* y,
                             const int incy);
TILEGEN_API void cblas_dspmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const double alpha, const double* ap, const double* x, const int incx,
                             const double beta, double* y, const int incy);
TILEGEN_API void cblas_dtrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const double* a, const int lda, double* x, const int incx);
TILEGEN_API void cblas_dtbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const double* a, const int lda, double* x,
                             const int incx);
TILEGEN_API void cblas_dtpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const double* ap, double* x, const int incx);
TILEGEN_API void cblas_dtrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const double* a, const int lda, double* x, const int incx);
TILEGEN_API void cblas_dtbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const double* a, const int lda, double* x,
                             const int incx);
TILEGEN_API void cblas_dtpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const double* ap, double* x, const int incx);
TILEGEN_API void cblas_dger(const CBLAS_LAYOUT layout, const int m, const int n, const double alpha,
                            const double* x, const int incx, const double* y, const int incy,
                            double* a, const int lda);
TILEGEN_API void cblas_dsyr(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const double alpha, const double* x, const int incx, double* a,
                            const int lda);
TILEGEN_API void cblas_dsyr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const double alpha, const double* x, const int incx, const double* y,
                             const int incy, double* a, const int lda);
TILEGEN_API void cblas_dspr(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const double alpha, const double* x, const int incx, double* a);
TILEGEN_API void cblas_dspr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const double alpha, const double* x, const int incx, const double* y,
                             const int incy, double* a);
TILEGEN_API void cblas_dgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                             const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                             const double alpha, const double* a, const int lda, const double* b,
                             const int ldb, const double beta, double* c, const int ldc);
TILEGEN_API void cblas_dgemmt(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE transa, const CBLAS_TRANSPOSE transb,
                              const int n, const int k, const double alpha, const double* a,
                              const int lda, const double* b, const int ldb, const double beta,
                              double* c, const int ldc);
TILEGEN_API void cblas_dsymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const int m, const int n, const double alpha,
                             const double* a, const int lda, const double* b, const int ldb,
                             const double beta, double* c, const int ldc);
TILEGEN_API void cblas_dsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const int n, const int k,
                             const double alpha, const double* a, const int lda, const double beta,
                             double* c, const int ldc);
TILEGEN_API void cblas_dsyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE trans, const int n, const int k,
                              const double alpha, const double* a, const int lda, const double* b,
                              const int ldb, const double beta, double* c, const int ldc);
TILEGEN_API void cblas_dtrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const double alpha,
                             const double* a, const int lda, double* b, const int ldb);
TILEGEN_API void cblas_dtrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const double alpha,
                             const double* a, const int lda, double* b, const int ldb);
TILEGEN_API void daxpby_(const int* n, const double* alpha, const double* x, const int* incx,
                         const double* beta, double* y, const int* incy);
TILEGEN_API void cblas_daxpby(const int n, const double alpha, const double* x, const int incx,
                              const double beta, double* y, const int incy);
TILEGEN_API void domatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const double* alpha, const double* a, const int* lda, double* b,
                            const int* ldb);
TILEGEN_API void dimatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const double* alpha, double* a, const int* lda, const int* ldb);
TILEGEN_API void cblas_domatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const double alpha, const double* a, const int lda,
                                 double* b, const int ldb);
TILEGEN_API void cblas_dimatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const double alpha, double* a, const int lda,
                                 const int ldb);
TILEGEN_API void cblas_dgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE* transa,
                                   const CBLAS_TRANSPOSE* transb, const int* m, const int* n,
                                   const int* k, const double* alpha, const double* * a,
                                   const int* lda, const double* * b, const int* ldb,
                                   const double* beta, double* * c, const int* ldc,
                                   const int group_count, const int* group_size);
/* blas_c.c */
TILEGEN_API void cswap_(const int* n, tilegen_complex_float* x, const int* incx,
                        tilegen_complex_float* y, const int* incy);
TILEGEN_API void cscal_(const int* n, const tilegen_complex_float* a, tilegen_complex_float* x,
                        const int* incx);
TILEGEN_API void csscal_(const int* n, const float* a, tilegen_complex_float* x, const int* incx);
TILEGEN_API void ccopy_(const int* n, const tilegen_complex_float* x, const int* incx,
                        tilegen_complex_float* y, const int* incy);
TILEGEN_API void caxpy_(const int* n, const tilegen_complex_float* a,
                        const tilegen_complex_float* x, const int* incx, tilegen_complex_float* y,
                        const int* incy);
TILEGEN_API tilegen_complex_float cdotu_(const int* n, const tilegen_complex_float* x,
                                         const int* incx, const tilegen_complex_float* y,
                                         const int* incy);
TILEGEN_API tilegen_complex_float cdotc_(const int* n, const tilegen_complex_float* x,
                                         const int* incx, const tilegen_complex_float* y,
                                         const int* incy);
TILEGEN_API float scnrm2_(const int* n, const tilegen_complex_float* x, const int* incx);
TILEGEN_API float scasum_(const int* n, const tilegen_complex_float* x, const int* incx);
TILEGEN_API int icamax_(const int* n, const tilegen_complex_float* x, const int* incx);
TILEGEN_API void csrot_(const int* n, tilegen_complex_float* x, const int* incx,
                        tilegen_complex_float* y, const int* incy, const float* c, const float* s);
TILEGEN_API void crotg_(tilegen_complex_float* a, const tilegen_complex_float* b, float* c,
                        tilegen_complex_float* s);
TILEGEN_API float scabs1_(const tilegen_complex_float* z);
TILEGEN_API void cgemv_(const char* trans, const int* m, const int* n,
                        const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                        const int* lda, const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* beta, tilegen_complex_float* y,
                        const int* incy);
TILEGEN_API void cgbmv_(const char* trans, const int* m, const int* n, const int* kl, const int* ku,
                        const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                        const int* lda, const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* beta, tilegen_complex_float* y,
                        const int* incy);
TILEGEN_API void chemv_(const char* uplo, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* a, const int* lda,
                        const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* beta, tilegen_complex_float* y,
                        const int* incy);
TILEGEN_API void chbmv_(const char* uplo, const int* n, const int* k,
                        const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                        const int* lda, const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* beta, tilegen_complex_float* y,
                        const int* incy);
TILEGEN_API void chpmv_(const char* uplo, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* ap, const tilegen_complex_float* x,
                        const int* incx, const tilegen_complex_float* beta,
                        tilegen_complex_float* y, const int* incy);
TILEGEN_API void ctrmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_float* a, const int* lda, tilegen_complex_float* x,
                        const int* incx);
TILEGEN_API void ctbmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const tilegen_complex_float* a, const int* lda,
                        tilegen_complex_float* x, const int* incx);
TILEGEN_API void ctpmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_float* ap, tilegen_complex_float* x, const int* incx);
TILEGEN_API void ctrsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_float* a, const int* lda, tilegen_complex_float* x,
                        const int* incx);
TILEGEN_API void ctbsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const tilegen_complex_float* a, const int* lda,
                        tilegen_complex_float* x, const int* incx);
TILEGEN_API void ctpsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_float* ap, tilegen_complex_float* x, const int* incx);
TILEGEN_API void cgeru_(const int* m, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* y, const int* incy, tilegen_complex_float* a,
                        const int* lda);
TILEGEN_API void cgerc_(const int* m, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* y, const int* incy, tilegen_complex_float* a,
                        const int* lda);
TILEGEN_API void cher_(const char* uplo, const int* n, const float* alpha,
                       const tilegen_complex_float* x, const int* incx, tilegen_complex_float* a,
                       const int* lda);
TILEGEN_API void chpr_(const char* uplo, const int* n, const float* alpha,
                       const tilegen_complex_float* x, const int* incx, tilegen_complex_float* ap);
TILEGEN_API void cher2_(const char* uplo, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* y, const int* incy, tilegen_complex_float* a,
                        const int* lda);
TILEGEN_API void chpr2_(const char* uplo, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* x, const int* incx,
                        const tilegen_complex_float* y, const int* incy, tilegen_complex_float* ap);
TILEGEN_API void cgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* a, const int* lda,
                        const tilegen_complex_float* b, const int* ldb,
                        const tilegen_complex_float* beta, tilegen_complex_float* c,
                        const int* ldc);
TILEGEN_API void cgemmt_(const char* uplo, const char* transa, const char* transb, const int* n,
                         const int* k, const tilegen_complex_float* alpha,
                         const tilegen_complex_float* a, const int* lda,
                         const tilegen_complex_float* b, const int* ldb,
                         const tilegen_complex_float* beta, tilegen_complex_float* c,
                         const int* ldc);
TILEGEN_API void cgemmtr_(const char* uplo, const char* transa, const char* transb, const int* n,
                          const int* k, const tilegen_complex_float* alpha,
                          const tilegen_complex_float* a, const int* lda,
                          const tilegen_complex_float* b, const int* ldb,
                          const tilegen_complex_float* beta, tilegen_complex_float* c,
                          const int* ldc);
TILEGEN_API void csymm_(const char* side, const char* uplo, const int* m, const int* n,
                        const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                        const int* lda, const tilegen_complex_float* b, const int* ldb,
                        const tilegen_complex_float* beta, tilegen_complex_float* c,
                        const int* ldc);
TILEGEN_API void chemm_(const char* side, const char* uplo, const int* m, const int* n,
                        const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                        const int* lda, const tilegen_complex_float* b, const int* ldb,
                        const tilegen_complex_float* beta, tilegen_complex_float* c,
                        const int* ldc);
TILEGEN_API void csyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                        const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                        const int* lda, const tilegen_complex_float* beta, tilegen_complex_float* c,
                        const int* ldc);
TILEGEN_API void csyr2k_(const char* uplo, const char* trans, const int* n, const int* k,
                         const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                         const int* lda, const tilegen_complex_float* b, const int* ldb,
                         const tilegen_complex_float* beta, tilegen_complex_float* c,
                         const int* ldc);
TILEGEN_API void cherk_(const char* uplo, const char* trans, const int* n, const int* k,
                        const float* alpha, const tilegen_complex_float* a, const int* lda,
                        const float* beta, tilegen_complex_float* c, const int* ldc);
TILEGEN_API void cher2k_(const char* uplo, const char* trans, const int* n, const int* k,
                         const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                         const int* lda, const tilegen_complex_float* b, const int* ldb,
                         const float* beta, tilegen_complex_float* c, const int* ldc);
TILEGEN_API void ctrmm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* a, const int* lda, tilegen_complex_float* b,
                        const int* ldb);
TILEGEN_API void ctrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const tilegen_complex_float* alpha,
                        const tilegen_complex_float* a, const int* lda, tilegen_complex_float* b,
                        const int* ldb);
TILEGEN_API void cblas_cswap(const int n, void* x, const int incx, void* y, const int incy);
TILEGEN_API void cblas_cscal(const int n, const void* a, void* x, const int incx);
TILEGEN_API void cblas_csscal(const int n, const float a, void* x, const int incx);
TILEGEN_API void cblas_ccopy(const int n, const void* x, const int incx, void* y, const int incy);
TILEGEN_API void cblas_caxpy(const int n, const void* a, const void* x, const int incx, void* y,
                             const int incy);
TILEGEN_API void cblas_cdotu_sub(const int n, const void* x, const int incx, const void* y,
                                 const int incy, void* dotu);
TILEGEN_API void cblas_cdotc_sub(const int n, const void* x, const int incx, const void* y,
                                 const int incy, void* dotc);
TILEGEN_API float cblas_scabs1(const void* z);
TILEGEN_API float cblas_scnrm2(const int n, const void* x, const int incx);
TILEGEN_API float cblas_scasum(const int n, const void* x, const int incx);
TILEGEN_API size_t cblas_icamax(const int n, const void* x, const int incx);
TILEGEN_API void cblas_csrot(const int n, void* x, const int incx, void* y, const int incy,
                             const float c, const float s);
TILEGEN_API void cblas_crotg(void* a, void* b, float* c, void* s);
TILEGEN_API void cblas_cgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const void* alpha, const void* a, const int lda,
                             const void* x, const int incx, const void* beta, void* y,
                             const int incy);
TILEGEN_API void cblas_cgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const int kl, const int ku, const void* alpha,
                             const void* a, const int lda, const void* x, const int incx,
                             const void* beta, void* y, const int incy);
TILEGEN_API void cblas_chemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* a, const int lda, const void* x,
                             const int incx, const void* beta, void* y, const int incy);
TILEGEN_API void cblas_chbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const int k, const void* alpha, const void* a, const int lda,
                             const void* x, const int incx, const void* beta, void* y,
                             const int incy);
TILEGEN_API void cblas_chpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* ap, const void* x, const int incx,
                             const void* beta, void* y, const int incy);
TILEGEN_API void cblas_ctrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ctbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ctpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* ap, void* x, const int incx);
TILEGEN_API void cblas_ctrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ctbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ctpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* ap, void* x, const int incx);
TILEGEN_API void cblas_cgeru(const CBLAS_LAYOUT layout, const int m, const int n, const void* alpha,
                             const void* x, const int incx, const void* y, const int incy, void* a,
                             const int lda);
TILEGEN_API void cblas_cgerc(const CBLAS_LAYOUT layout, const int m, const int n, const void* alpha,
                             const void* x, const int incx, const void* y, const int incy, void* a,
                             const int lda);
TILEGEN_API void cblas_cher(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const float alpha, const void* x, const int incx, void* a,
                            const int lda);
TILEGEN_API void cblas_cher2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* x, const int incx, const void* y,
                             const int incy, void* a, const int lda);
TILEGEN_API void cblas_chpr(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const float alpha, const void* x, const int incx, void* a);
TILEGEN_API void cblas_chpr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* x, const int incx, const void* y,
                             const int incy, void* a);
TILEGEN_API void cblas_cgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                             const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                             const void* alpha, const void* a, const int lda, const void* b,
                             const int ldb, const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_cgemmt(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE transa, const CBLAS_TRANSPOSE transb,
                              const int n, const int k, const void* alpha, const void* a,
                              const int lda, const void* b, const int ldb, const void* beta,
                              void* c, const int ldc);
TILEGEN_API void cblas_csymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const int m, const int n, const void* alpha,
                             const void* a, const int lda, const void* b, const int ldb,
                             const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_chemm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const int m, const int n, const void* alpha,
                             const void* a, const int lda, const void* b, const int ldb,
                             const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_csyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const int n, const int k,
                             const void* alpha, const void* a, const int lda, const void* beta,
                             void* c, const int ldc);
TILEGEN_API void cblas_csyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE trans, const int n, const int k,
                              const void* alpha, const void* a, const int lda, const void* b,
                              const int ldb, const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_cherk(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const int n, const int k,
                             const float alpha, const void* a, const int lda, const float beta,
                             void* c, const int ldc);
TILEGEN_API void cblas_cher2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE trans, const int n, const int k,
                              const void* alpha, const void* a, const int lda, const void* b,
                              const int ldb, const float beta, void* c, const int ldc);
TILEGEN_API void cblas_ctrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const void* alpha,
                             const void* a, const int lda, void* b, const int ldb);
TILEGEN_API void cblas_ctrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const void* alpha,
                             const void* a, const int lda, void* b, const int ldb);
TILEGEN_API void caxpby_(const int* n, const tilegen_complex_float* alpha,
                         const tilegen_complex_float* x, const int* incx,
                         const tilegen_complex_float* beta, tilegen_complex_float* y,
                         const int* incy);
TILEGEN_API void cblas_caxpby(const int n, const void* alpha, const void* x, const int incx,
                              const void* beta, void* y, const int incy);
TILEGEN_API void comatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const tilegen_complex_float* alpha, const tilegen_complex_float* a,
                            const int* lda, tilegen_complex_float* b, const int* ldb);
TILEGEN_API void cimatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const tilegen_complex_float* alpha, tilegen_complex_float* a,
                            const int* lda, const int* ldb);
TILEGEN_API void cblas_comatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const float* alpha, const float* a, const int lda,
                                 float* b, const int ldb);
TILEGEN_API void cblas_cimatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const float* alpha, float* a, const int lda,
                                 const int ldb);
TILEGEN_API void cblas_cgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE* transa,
                                   const CBLAS_TRANSPOSE* transb, const int* m, const int* n,
                                   const int* k, const void* alpha, const void* * a, const int* lda,
                                   const void* * b, const int* ldb, const void* beta, void* * c,
                                   const int* ldc, const int group_count, const int* group_size);
/* blas_z.c */
TILEGEN_API void zswap_(const int* n, tilegen_complex_double* x, const int* incx,
                        tilegen_complex_double* y, const int* incy);
TILEGEN_API void zscal_(const int* n, const tilegen_complex_double* a, tilegen_complex_double* x,
                        const int* incx);
TILEGEN_API void zdscal_(const int* n, const double* a, tilegen_complex_double* x, const int* incx);
TILEGEN_API void zcopy_(const int* n, const tilegen_complex_double* x, const int* incx,
                        tilegen_complex_double* y, const int* incy);
TILEGEN_API void zaxpy_(const int* n, const tilegen_complex_double* a,
                        const tilegen_complex_double* x, const int* incx, tilegen_complex_double* y,
                        const int* incy);
TILEGEN_API tilegen_complex_double zdotu_(const int* n, const tilegen_complex_double* x,
                                          const int* incx, const tilegen_complex_double* y,
                                          const int* incy);
TILEGEN_API tilegen_complex_double zdotc_(const int* n, const tilegen_complex_double* x,
                                          const int* incx, const tilegen_complex_double* y,
                                          const int* incy);
TILEGEN_API double dznrm2_(const int* n, const tilegen_complex_double* x, const int* incx);
TILEGEN_API double dzasum_(const int* n, const tilegen_complex_double* x, const int* incx);
TILEGEN_API int izamax_(const int* n, const tilegen_complex_double* x, const int* incx);
TILEGEN_API void zdrot_(const int* n, tilegen_complex_double* x, const int* incx,
                        tilegen_complex_double* y, const int* incy, const double* c,
                        const double* s);
TILEGEN_API void zrotg_(tilegen_complex_double* a, const tilegen_complex_double* b, double* c,
                        tilegen_complex_double* s);
TILEGEN_API double dcabs1_(const tilegen_complex_double* z);
TILEGEN_API void zgemv_(const char* trans, const int* m, const int* n,
                        const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                        const int* lda, const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* beta, tilegen_complex_double* y,
                        const int* incy);
TILEGEN_API void zgbmv_(const char* trans, const int* m, const int* n, const int* kl, const int* ku,
                        const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                        const int* lda, const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* beta, tilegen_complex_double* y,
                        const int* incy);
TILEGEN_API void zhemv_(const char* uplo, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* a, const int* lda,
                        const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* beta, tilegen_complex_double* y,
                        const int* incy);
TILEGEN_API void zhbmv_(const char* uplo, const int* n, const int* k,
                        const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                        const int* lda, const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* beta, tilegen_complex_double* y,
                        const int* incy);
TILEGEN_API void zhpmv_(const char* uplo, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* ap, const tilegen_complex_double* x,
                        const int* incx, const tilegen_complex_double* beta,
                        tilegen_complex_double* y, const int* incy);
TILEGEN_API void ztrmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_double* a, const int* lda, tilegen_complex_double* x,
                        const int* incx);
TILEGEN_API void ztbmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const tilegen_complex_double* a, const int* lda,
                        tilegen_complex_double* x, const int* incx);
TILEGEN_API void ztpmv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_double* ap, tilegen_complex_double* x,
                        const int* incx);
TILEGEN_API void ztrsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_double* a, const int* lda, tilegen_complex_double* x,
                        const int* incx);
TILEGEN_API void ztbsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const int* k, const tilegen_complex_double* a, const int* lda,
                        tilegen_complex_double* x, const int* incx);
TILEGEN_API void ztpsv_(const char* uplo, const char* trans, const char* diag, const int* n,
                        const tilegen_complex_double* ap, tilegen_complex_double* x,
                        const int* incx);
TILEGEN_API void zgeru_(const int* m, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* y, const int* incy, tilegen_complex_double* a,
                        const int* lda);
TILEGEN_API void zgerc_(const int* m, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* y, const int* incy, tilegen_complex_double* a,
                        const int* lda);
TILEGEN_API void zher_(const char* uplo, const int* n, const double* alpha,
                       const tilegen_complex_double* x, const int* incx, tilegen_complex_double* a,
                       const int* lda);
TILEGEN_API void zhpr_(const char* uplo, const int* n, const double* alpha,
                       const tilegen_complex_double* x, const int* incx,
                       tilegen_complex_double* ap);
TILEGEN_API void zher2_(const char* uplo, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* y, const int* incy, tilegen_complex_double* a,
                        const int* lda);
TILEGEN_API void zhpr2_(const char* uplo, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* x, const int* incx,
                        const tilegen_complex_double* y, const int* incy,
                        tilegen_complex_double* ap);
TILEGEN_API void zgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* a, const int* lda,
                        const tilegen_complex_double* b, const int* ldb,
                        const tilegen_complex_double* beta, tilegen_complex_double* c,
                        const int* ldc);
TILEGEN_API void zgemmt_(const char* uplo, const char* transa, const char* transb, const int* n,
                         const int* k, const tilegen_complex_double* alpha,
                         const tilegen_complex_double* a, const int* lda,
                         const tilegen_complex_double* b, const int* ldb,
                         const tilegen_complex_double* beta, tilegen_complex_double* c,
                         const int* ldc);
TILEGEN_API void zgemmtr_(const char* uplo, const char* transa, const char* transb, const int* n,
                          const int* k, const tilegen_complex_double* alpha,
                          const tilegen_complex_double* a, const int* lda,
                          const tilegen_complex_double* b, const int* ldb,
                          const tilegen_complex_double* beta, tilegen_complex_double* c,
                          const int* ldc);
TILEGEN_API void zsymm_(const char* side, const char* uplo, const int* m, const int* n,
                        const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                        const int* lda, const tilegen_complex_double* b, const int* ldb,
                        const tilegen_complex_double* beta, tilegen_complex_double* c,
                        const int* ldc);
TILEGEN_API void zhemm_(const char* side, const char* uplo, const int* m, const int* n,
                        const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                        const int* lda, const tilegen_complex_double* b, const int* ldb,
                        const tilegen_complex_double* beta, tilegen_complex_double* c,
                        const int* ldc);
TILEGEN_API void zsyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                        const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                        const int* lda, const tilegen_complex_double* beta,
                        tilegen_complex_double* c, const int* ldc);
TILEGEN_API void zsyr2k_(const char* uplo, const char* trans, const int* n, const int* k,
                         const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                         const int* lda, const tilegen_complex_double* b, const int* ldb,
                         const tilegen_complex_double* beta, tilegen_complex_double* c,
                         const int* ldc);
TILEGEN_API void zherk_(const char* uplo, const char* trans, const int* n, const int* k,
                        const double* alpha, const tilegen_complex_double* a, const int* lda,
                        const double* beta, tilegen_complex_double* c, const int* ldc);
TILEGEN_API void zher2k_(const char* uplo, const char* trans, const int* n, const int* k,
                         const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                         const int* lda, const tilegen_complex_double* b, const int* ldb,
                         const double* beta, tilegen_complex_double* c, const int* ldc);
TILEGEN_API void ztrmm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* a, const int* lda, tilegen_complex_double* b,
                        const int* ldb);
TILEGEN_API void ztrsm_(const char* side, const char* uplo, const char* transa, const char* diag,
                        const int* m, const int* n, const tilegen_complex_double* alpha,
                        const tilegen_complex_double* a, const int* lda, tilegen_complex_double* b,
                        const int* ldb);
TILEGEN_API void cblas_zswap(const int n, void* x, const int incx, void* y, const int incy);
TILEGEN_API void cblas_zscal(const int n, const void* a, void* x, const int incx);
TILEGEN_API void cblas_zdscal(const int n, const double a, void* x, const int incx);
TILEGEN_API void cblas_zcopy(const int n, const void* x, const int incx, void* y, const int incy);
TILEGEN_API void cblas_zaxpy(const int n, const void* a, const void* x, const int incx, void* y,
                             const int incy);
TILEGEN_API void cblas_zdotu_sub(const int n, const void* x, const int incx, const void* y,
                                 const int incy, void* dotu);
TILEGEN_API void cblas_zdotc_sub(const int n, const void* x, const int incx, const void* y,
                                 const int incy, void* dotc);
TILEGEN_API double cblas_dcabs1(const void* z);
TILEGEN_API double cblas_dznrm2(const int n, const void* x, const int incx);
TILEGEN_API double cblas_dzasum(const int n, const void* x, const int incx);
TILEGEN_API size_t cblas_izamax(const int n, const void* x, const int incx);
TILEGEN_API void cblas_zdrot(const int n, void* x, const int incx, void* y, const int incy,
                             const double c, const double s);
TILEGEN_API void cblas_zrotg(void* a, void* b, double* c, void* s);
TILEGEN_API void cblas_zgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const void* alpha, const void* a, const int lda,
                             const void* x, const int incx, const void* beta, void* y,
                             const int incy);
TILEGEN_API void cblas_zgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m,
                             const int n, const int kl, const int ku, const void* alpha,
                             const void* a, const int lda, const void* x, const int incx,
                             const void* beta, void* y, const int incy);
TILEGEN_API void cblas_zhemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* a, const int lda, const void* x,
                             const int incx, const void* beta, void* y, const int incy);
TILEGEN_API void cblas_zhbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const int k, const void* alpha, const void* a, const int lda,
                             const void* x, const int incx, const void* beta, void* y,
                             const int incy);
TILEGEN_API void cblas_zhpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* ap, const void* x, const int incx,
                             const void* beta, void* y, const int incy);
TILEGEN_API void cblas_ztrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ztbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ztpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* ap, void* x, const int incx);
TILEGEN_API void cblas_ztrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ztbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const int k, const void* a, const int lda, void* x, const int incx);
TILEGEN_API void cblas_ztpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const CBLAS_DIAG diag, const int n,
                             const void* ap, void* x, const int incx);
TILEGEN_API void cblas_zgeru(const CBLAS_LAYOUT layout, const int m, const int n, const void* alpha,
                             const void* x, const int incx, const void* y, const int incy, void* a,
                             const int lda);
TILEGEN_API void cblas_zgerc(const CBLAS_LAYOUT layout, const int m, const int n, const void* alpha,
                             const void* x, const int incx, const void* y, const int incy, void* a,
                             const int lda);
TILEGEN_API void cblas_zher(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const double alpha, const void* x, const int incx, void* a,
                            const int lda);
TILEGEN_API void cblas_zher2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* x, const int incx, const void* y,
                             const int incy, void* a, const int lda);
TILEGEN_API void cblas_zhpr(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                            const double alpha, const void* x, const int incx, void* a);
TILEGEN_API void cblas_zhpr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n,
                             const void* alpha, const void* x, const int incx, const void* y,
                             const int incy, void* a);
TILEGEN_API void cblas_zgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                             const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                             const void* alpha, const void* a, const int lda, const void* b,
                             const int ldb, const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_zgemmt(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE transa, const CBLAS_TRANSPOSE transb,
                              const int n, const int k, const void* alpha, const void* a,
                              const int lda, const void* b, const int ldb, const void* beta,
                              void* c, const int ldc);
TILEGEN_API void cblas_zsymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const int m, const int n, const void* alpha,
                             const void* a, const int lda, const void* b, const int ldb,
                             const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_zhemm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const int m, const int n, const void* alpha,
                             const void* a, const int lda, const void* b, const int ldb,
                             const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_zsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const int n, const int k,
                             const void* alpha, const void* a, const int lda, const void* beta,
                             void* c, const int ldc);
TILEGEN_API void cblas_zsyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE trans, const int n, const int k,
                              const void* alpha, const void* a, const int lda, const void* b,
                              const int ldb, const void* beta, void* c, const int ldc);
TILEGEN_API void cblas_zherk(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                             const CBLAS_TRANSPOSE trans, const int n, const int k,
                             const double alpha, const void* a, const int lda, const double beta,
                             void* c, const int ldc);
TILEGEN_API void cblas_zher2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                              const CBLAS_TRANSPOSE trans, const int n, const int k,
                              const void* alpha, const void* a, const int lda, const void* b,
                              const int ldb, const double beta, void* c, const int ldc);
TILEGEN_API void cblas_ztrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const void* alpha,
                             const void* a, const int lda, void* b, const int ldb);
TILEGEN_API void cblas_ztrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE side,
                             const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa,
                             const CBLAS_DIAG diag, const int m, const int n, const void* alpha,
                             const void* a, const int lda, void* b, const int ldb);
TILEGEN_API void zaxpby_(const int* n, const tilegen_complex_double* alpha,
                         const tilegen_complex_double* x, const int* incx,
                         const tilegen_complex_double* beta, tilegen_complex_double* y,
                         const int* incy);
TILEGEN_API void cblas_zaxpby(const int n, const void* alpha, const void* x, const int incx,
                              const void* beta, void* y, const int incy);
TILEGEN_API void zomatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const tilegen_complex_double* alpha, const tilegen_complex_double* a,
                            const int* lda, tilegen_complex_double* b, const int* ldb);
TILEGEN_API void zimatcopy_(const char* order, const char* trans, const int* rows, const int* cols,
                            const tilegen_complex_double* alpha, tilegen_complex_double* a,
                            const int* lda, const int* ldb);
TILEGEN_API void cblas_zomatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const double* alpha, const double* a,
                                 const int lda, double* b, const int ldb);
TILEGEN_API void cblas_zimatcopy(const int order, const CBLAS_TRANSPOSE trans, const int rows,
                                 const int cols, const double* alpha, double* a, const int lda,
                                 const int ldb);
TILEGEN_API void cblas_zgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE* transa,
                                   const CBLAS_TRANSPOSE* transb, const int* m, const int* n,
                                   const int* k, const void* alpha, const void* * a, const int* lda,
                                   const void* * b, const int* ldb, const void* beta, void* * c,
                                   const int* ldc, const int group_count, const int* group_size);
/* sbgemm.c */
TILEGEN_API void sbgemm_(const char* transa, const char* transb, const int* m, const int* n,
                         const int* k, const float* alpha, const uint16_t* a, const int* lda,
                         const uint16_t* b, const int* ldb, const float* beta, float* c,
                         const int* ldc);
TILEGEN_API void cblas_sbgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,
                              const int m, const int n, const int k, const float alpha,
                              const uint16_t* a, const int lda, const uint16_t* b, const int ldb,
                              const float beta, float* c, const int ldc);
TILEGEN_API void cblas_sbstobf16(const int n, const float* in, const int incin, uint16_t* out,
                                 const int incout);
TILEGEN_API void cblas_sbf16tos(const int n, const uint16_t* in, const int incin, float* out,
                                const int incout);
/* END GENERATED DECLARATIONS */

#ifdef __cplusplus
}
#endif

#endif /* TILEGEN_CBLAS_H */
