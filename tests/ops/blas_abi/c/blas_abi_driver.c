/*
 * Drives the standard BLAS ABIs (Fortran sgemm_/dgemm_, CBLAS cblas_sgemm/cblas_dgemm) for
 * tests/test_blas_abi.py. The same source is built against the reference BLAS (-lblas; Debian's
 * reference libblas also carries the reference CBLAS) and against libtilegen, and run plainly or
 * with LD_PRELOAD, so the test can compare the implementations call for call.
 *
 *   whoami                  which library serves sgemm_ and cblas_sgemm (dladdr), and whether
 *                           a tilegen-only symbol is visible
 *   run IN OUT              the GEMM calls described in IN (written by the test); every C
 *                           buffer, padding included, goes to OUT. Each operand sits against a
 *                           guard page (guard_pages.h), behind or in front, alternating
 *   f77err                  stdin lines "dt ta tb m n k lda ldb ldc": invalid Fortran calls;
 *                           prints "routine|info|calls|C untouched" (needs -DRECORD_ERRORS)
 *   cblaserr                stdin lines "dt layout ta tb m n k lda ldb ldc": the same for CBLAS
 *   cblaserr1 dt layout ta tb m n k lda ldb ldc
 *                           one CBLAS call with the library's own cblas_xerbla (the reference's
 *                           prints and exits); prints "returned" if the call returns
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard_pages.h"

void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*);
void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                 float*, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int,
                 double, double*, int);

#ifdef RECORD_ERRORS
/* The program's own error handlers take precedence over the library's (as with the reference
   BLAS, a program may define xerbla_); they record instead of printing. */
static char err_name[64];
static int err_info, err_calls;

void xerbla_(const char* srname, const int* info, size_t len) {
  if (len >= sizeof(err_name)) len = sizeof(err_name) - 1;
  memcpy(err_name, srname, len);
  err_name[len] = '\0';
  err_info = *info;
  err_calls++;
}

void cblas_xerbla(int p, const char* rout, const char* form, ...) {
  snprintf(err_name, sizeof(err_name), "%s", rout);
  err_info = p;
  err_calls++;
}
#endif

static const char* where(const char* sym) {
  void* p = dlsym(RTLD_DEFAULT, sym);
  Dl_info info;
  if (p == NULL) return "(none)";
  if (dladdr(p, &info) == 0 || info.dli_fname == NULL) return "(unknown)";
  return info.dli_fname;
}

static int whoami(void) {
  printf("sgemm_ %s\n", where("sgemm_"));
  printf("dgemm_ %s\n", where("dgemm_"));
  printf("cblas_sgemm %s\n", where("cblas_sgemm"));
  printf("cblas_dgemm %s\n", where("cblas_dgemm"));
  typedef const char* (*isa_fn)(void);
  isa_fn isa = (isa_fn) dlsym(RTLD_DEFAULT, "tilegen_isa_name");
  printf("tilegen_isa_name %s\n", isa ? isa() : "(none)");
  return 0;
}

static void read_exact(FILE* f, void* p, size_t bytes) {
  if (bytes && fread(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "short read\n");
    exit(3);
  }
}

/* Record: int32 api (0 Fortran, 1 CBLAS), dt (0 f32, 1 f64), layout, ta, tb, m, n, k, lda, ldb,
   ldc, pad; float64 alpha, beta; int64 na, nb, nc (elements); then A, B, C. The Fortran ta/tb
   are character codes, the CBLAS ones enum values. */
static int run(const char* in_path, const char* out_path) {
  FILE* in = fopen(in_path, "rb");
  FILE* out = fopen(out_path, "wb");
  if (!in || !out) return 3;
  int32_t h[12];
  while (fread(h, sizeof(int32_t), 12, in) == 12) {
    double ab[2];
    int64_t len[3];
    read_exact(in, ab, sizeof(ab));
    read_exact(in, len, sizeof(len));
    const int api = h[0], dt = h[1], layout = h[2], ta = h[3], tb = h[4];
    const int m = h[5], n = h[6], k = h[7], lda = h[8], ldb = h[9], ldc = h[10];
    const size_t esz = dt ? sizeof(double) : sizeof(float);
    /* Every operand against a guard page: behind it in one call, in front in the next. */
    static int front = 0;
    front ^= 1;
    region ra, rb, rc;
    void* a = guarded_bytes(len[0] * esz, front, &ra);
    void* b = guarded_bytes(len[1] * esz, front, &rb);
    void* c = guarded_bytes(len[2] * esz, front, &rc);
    read_exact(in, a, len[0] * esz);
    read_exact(in, b, len[1] * esz);
    read_exact(in, c, len[2] * esz);
    const char cta = (char) ta, ctb = (char) tb;
    if (api == 0 && dt == 0) {
      const float alpha = (float) ab[0], beta = (float) ab[1];
      sgemm_(&cta, &ctb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    } else if (api == 0) {
      dgemm_(&cta, &ctb, &m, &n, &k, &ab[0], a, &lda, b, &ldb, &ab[1], c, &ldc);
    } else if (dt == 0) {
      cblas_sgemm(layout, ta, tb, m, n, k, (float) ab[0], a, lda, b, ldb, (float) ab[1], c, ldc);
    } else {
      cblas_dgemm(layout, ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc);
    }
    fwrite(c, esz, len[2], out);
    release(&ra);
    release(&rb);
    release(&rc);
  }
  fclose(in);
  return fclose(out) == 0 ? 0 : 3;
}

#define BUF 512
/* Operands for the error calls: big enough for every case, so a faulty implementation that
   did compute would write into C (caught) rather than out of bounds. */
static float fa[BUF], fb[BUF], fc[BUF];
static double da[BUF], db[BUF], dc[BUF];

static void fill(void) {
  for (int i = 0; i < BUF; i++) {
    fa[i] = fb[i] = 1.0f;
    da[i] = db[i] = 1.0;
    fc[i] = 1234.5f;
    dc[i] = 1234.5;
  }
}

static int c_untouched(void) {
  for (int i = 0; i < BUF; i++)
    if (fc[i] != 1234.5f || dc[i] != 1234.5) return 0;
  return 1;
}

static void cblas_call(int dt, int layout, int ta, int tb, int m, int n, int k, int lda, int ldb,
                       int ldc) {
  if (dt == 0)
    cblas_sgemm(layout, ta, tb, m, n, k, 1.0f, fa, lda, fb, ldb, 0.0f, fc, ldc);
  else
    cblas_dgemm(layout, ta, tb, m, n, k, 1.0, da, lda, db, ldb, 0.0, dc, ldc);
}

#ifdef RECORD_ERRORS
static void f77_call(int dt, char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc) {
  if (dt == 0) {
    const float alpha = 1, beta = 0;
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, fa, &lda, fb, &ldb, &beta, fc, &ldc);
  } else {
    const double alpha = 1, beta = 0;
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, da, &lda, db, &ldb, &beta, dc, &ldc);
  }
}

static void report(void) { printf("%s|%d|%d|%d\n", err_name, err_info, err_calls, c_untouched()); }

static void reset(void) {
  fill();
  err_calls = err_info = 0;
  err_name[0] = '\0';
}

static int f77err(void) {
  int dt, m, n, k, lda, ldb, ldc;
  char ta, tb;
  while (scanf(" %d %c %c %d %d %d %d %d %d", &dt, &ta, &tb, &m, &n, &k, &lda, &ldb, &ldc) == 9) {
    reset();
    f77_call(dt, ta, tb, m, n, k, lda, ldb, ldc);
    report();
  }
  return 0;
}

static int cblaserr(void) {
  int dt, layout, ta, tb, m, n, k, lda, ldb, ldc;
  while (scanf(" %d %d %d %d %d %d %d %d %d %d", &dt, &layout, &ta, &tb, &m, &n, &k, &lda, &ldb,
               &ldc) == 10) {
    reset();
    cblas_call(dt, layout, ta, tb, m, n, k, lda, ldb, ldc);
    report();
  }
  return 0;
}
#endif

static int cblaserr1(char** v) {
  int x[10];
  for (int i = 0; i < 10; i++) x[i] = atoi(v[i]);
  fill();
  cblas_call(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
  fflush(stderr);
  printf("returned %d\n", c_untouched());
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && !strcmp(argv[1], "whoami")) return whoami();
  if (argc >= 4 && !strcmp(argv[1], "run")) return run(argv[2], argv[3]);
#ifdef RECORD_ERRORS
  if (argc >= 2 && !strcmp(argv[1], "f77err")) return f77err();
  if (argc >= 2 && !strcmp(argv[1], "cblaserr")) return cblaserr();
#endif
  if (argc >= 12 && !strcmp(argv[1], "cblaserr1")) return cblaserr1(argv + 2);
  fprintf(stderr, "usage: see the comment at the top of blas_abi_driver.c\n");
  return 2;
}
