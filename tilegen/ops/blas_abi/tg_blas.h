/*
 * Shared pieces of the BLAS/CBLAS ABI (tilegen/ops/blas_abi): argument decoding, the error reports
 * (xerbla_ / cblas_xerbla with the reference numbering) and index helpers. The routines
 * themselves are written once, type-generically, in blas_impl.h.
 */
#ifndef TG_BLAS_H
#define TG_BLAS_H

#include <stddef.h>
#include <stdint.h>

/* Every ABI entry point is exported (the rest of the library is built hidden). */
#ifndef TG_BLAS_API
#define TG_BLAS_API __attribute__((visibility("default")))
#endif

/* CBLAS enumeration values, as cblas.h fixes them (compared as ints). */
#define TG_ROW 101
#define TG_COL 102
#define TG_NOTRANS 111
#define TG_TRANS 112
#define TG_CONJTRANS 113
#define TG_UPPER 121
#define TG_LOWER 122
#define TG_NONUNIT 131
#define TG_UNIT 132
#define TG_LEFT 141
#define TG_RIGHT 142

/* The CBLAS parameter types (cblas.h's), unless a <cblas.h> or tilegen_cblas.h defined them. */
#if !defined(CBLAS_H) && !defined(TILEGEN_CBLAS_TYPES)
#define TILEGEN_CBLAS_TYPES
typedef enum CBLAS_LAYOUT { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_LAYOUT;
typedef enum CBLAS_TRANSPOSE {
  CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113
} CBLAS_TRANSPOSE;
typedef enum CBLAS_UPLO { CblasUpper = 121, CblasLower = 122 } CBLAS_UPLO;
typedef enum CBLAS_DIAG { CblasNonUnit = 131, CblasUnit = 132 } CBLAS_DIAG;
typedef enum CBLAS_SIDE { CblasLeft = 141, CblasRight = 142 } CBLAS_SIDE;
#endif

/* Internal operation codes: 'N', 'T', 'C' as in BLAS, and 'R' = conjugate, not transposed
   (what a row-major ConjTrans call becomes on the column-major storage). */

void xerbla_(const char* srname, const int* info, size_t srname_len);
void cblas_xerbla(int p, const char* rout, const char* form, ...);

/* Reports Fortran INFO for routine `name` (6 characters, blank-padded, as the reference). */
void tg_blas_error(const char* name, int info);
/* Reports CBLAS parameter p of `rout`. For a row-major call, p is the number the reference
   CBLAS passes (that of the transposed column-major call, plus one), which cblas_xerbla maps
   back to the signature's numbering. */
void tg_cblas_error(int row_major, int p, const char* rout);

/* Fortran character arguments, upper-cased (gfortran's hidden lengths are not needed). */
static inline char tg_up(const char* c) {
  char x = *c;
  return (x >= 'a' && x <= 'z') ? (char) (x - 'a' + 'A') : x;
}

/* 0-based offset of the first element a BLAS vector of n elements with increment inc touches. */
static inline int64_t tg_vstart(int64_t n, int64_t inc) { return inc < 0 ? (1 - n) * inc : 0; }

static inline int tg_max1(int x) { return x > 1 ? x : 1; }
static inline int64_t tg_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t tg_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* CBLAS enum -> BLAS character (0 when invalid). */
static inline char tg_cb_trans(int t) {
  return t == TG_NOTRANS ? 'N' : t == TG_TRANS ? 'T' : t == TG_CONJTRANS ? 'C' : 0;
}
static inline char tg_cb_uplo(int u) { return u == TG_UPPER ? 'U' : u == TG_LOWER ? 'L' : 0; }
static inline char tg_cb_diag(int d) { return d == TG_UNIT ? 'U' : d == TG_NONUNIT ? 'N' : 0; }
static inline char tg_cb_side(int s) { return s == TG_LEFT ? 'L' : s == TG_RIGHT ? 'R' : 0; }
static inline char tg_flip_uplo(char u) { return u == 'U' ? 'L' : 'U'; }
static inline char tg_flip_side(char s) { return s == 'L' ? 'R' : 'L'; }


/* The reference xGEMM checks, in its order: INFO (0 = valid). */
static inline int gemm_check(char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc) {
  if (ta != 'N' && ta != 'T' && ta != 'C') return 1;
  if (tb != 'N' && tb != 'T' && tb != 'C') return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < tg_max1(ta == 'N' ? m : k)) return 8;
  if (ldb < tg_max1(tb == 'N' ? k : n)) return 10;
  if (ldc < tg_max1(m)) return 13;
  return 0;
}

#endif
