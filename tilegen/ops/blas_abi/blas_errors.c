/*
 * The BLAS error reporters: xerbla_ (Fortran) and cblas_xerbla (CBLAS), each defined once and
 * weak, so a program may supply its own (the netlib test programs do). As the reference
 * implementations, they print and return; they do not exit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tg_blas.h"

TG_BLAS_API __attribute__((weak)) void xerbla_(const char* srname, const int* info,
                                               size_t srname_len) {
  size_t n = srname_len;
  while (n > 0 && srname[n - 1] == ' ') n--;
  fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n", (int) n,
          srname, *info);
}

/* The reference CBLAS's flag of a row-major call in progress: programs written against it (the
   netlib CBLAS tests) read it in their own cblas_xerbla, and copy-relocate it from the library
   that serves as their CBLAS, so it must be defined here. Set while a row-major call reports an
   error. */
TG_BLAS_API int RowMajorStrg = 0;

/* Set while a row-major CBLAS call reports an error (this thread's, for the default
   cblas_xerbla). */
static __thread int row_major_error;

/* The reference CBLAS serves a row-major call with the column-major routine on the transposed
   problem, so the number it passes is that call's; its cblas_xerbla maps the numbers that moved
   back to the CBLAS signature before printing. Programs that define their own cblas_xerbla
   (the netlib CBLAS tests) receive the unmapped number and map it themselves. */
static int row_major_number(const char* rout, int p) {
#define SWAP(x, y) \
  if (p == (x)) return (y); \
  if (p == (y)) return (x)
  if (strstr(rout, "gemm")) { SWAP(4, 5); SWAP(9, 11); return p; }
  if (strstr(rout, "symm") || strstr(rout, "hemm")) { SWAP(4, 5); return p; }
  if (strstr(rout, "trmm") || strstr(rout, "trsm")) { SWAP(6, 7); return p; }
  if (strstr(rout, "gemv")) { SWAP(3, 4); return p; }
  if (strstr(rout, "gbmv")) { SWAP(3, 4); SWAP(5, 6); return p; }
  if (strstr(rout, "ger")) { SWAP(2, 3); SWAP(6, 8); return p; }
  if ((strstr(rout, "her2") || strstr(rout, "hpr2")) && !strstr(rout, "her2k")) {
    SWAP(6, 8);
    return p;
  }
#undef SWAP
  return p;
}

TG_BLAS_API __attribute__((weak)) void cblas_xerbla(int p, const char* rout, const char* form,
                                                    ...) {
  if (row_major_error) p = row_major_number(rout, p);
  fprintf(stderr, "Parameter %d to routine %s was incorrect\n", p, rout);
  va_list ap;
  va_start(ap, form);
  vfprintf(stderr, form, ap);
  va_end(ap);
}

/* The reference BLAS's two other helpers: LSAME (case-insensitive comparison of two
   characters, Fortran LOGICAL) and XERBLA_ARRAY (xerbla_ for a name given as an array of
   characters, as C callers of LAPACK pass it). */
TG_BLAS_API int lsame_(const char* ca, const char* cb) { return tg_up(ca) == tg_up(cb); }

TG_BLAS_API void xerbla_array_(const char* srname_array, const int* srname_len,
                               const int* info) {
  char name[32];
  int n = *srname_len < 0 ? 0 : *srname_len > 31 ? 31 : *srname_len;
  memcpy(name, srname_array, (size_t) n);
  name[n] = 0;
  xerbla_(name, info, (size_t) n);
}

void tg_blas_error(const char* name, int info) { xerbla_(name, &info, strlen(name)); }

void tg_cblas_error(int row_major, int p, const char* rout) {
  const int saved = RowMajorStrg;
  row_major_error = row_major;
  RowMajorStrg = row_major;
  cblas_xerbla(p, rout, "");
  RowMajorStrg = saved;
  row_major_error = 0;
}
