/*
 * Reference LAPACK (Debian's liblapack3) on whatever libblas.so.3 the loader finds: solves and
 * factorizations whose answers are checked here, in plain C, by their residuals. Built by
 * tests/ops/blas_abi/test_system_blas.py and run with libtilegen as libblas.so.3.
 * Prints one "ok <routine>" line per check; exits 1 on the first failure.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b,
            const int* ldb, int* info);
void zgetrf_(const int* m, const int* n, double complex* a, const int* lda, int* ipiv, int* info);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const double complex* a,
             const int* lda, const int* ipiv, double complex* b, const int* ldb, int* info);
void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
            double* w, double* work, const int* lwork, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, float complex* a, const int* lda,
             float* w, float complex* work, const int* lwork, float* rwork, const int* lrwork,
             int* iwork, const int* liwork, int* info);

static unsigned long long seed = 12345;
static double rnd(void) {
  seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double) (seed >> 11) / 9007199254740992.0 * 2 - 1;
}

static int fail(const char* what, double err) {
  printf("FAIL %s: %g\n", what, err);
  return 1;
}

int main(void) {
  enum { N = 150, R = 3 };
  int n = N, nrhs = R, info = 0, ipiv[N];
  /* dgesv: A X = B */
  static double a[N * N], a0[N * N], b[N * R], b0[N * R];
  for (int i = 0; i < N * N; i++) a[i] = a0[i] = rnd() + (i % (N + 1) == 0 ? N / 4.0 : 0);
  for (int i = 0; i < N * R; i++) b[i] = b0[i] = rnd();
  dgesv_(&n, &nrhs, a, &n, ipiv, b, &n, &info);
  if (info) return fail("dgesv info", info);
  double err = 0;
  for (int r = 0; r < R; r++)
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int j = 0; j < N; j++) s += a0[i + j * N] * b[j + r * N];
      err = fmax(err, fabs(s - b0[i + r * N]));
    }
  if (err > 1e-10) return fail("dgesv residual", err);
  printf("ok dgesv\n");

  /* zgetrf + zgetrs: A^H X = B */
  static double complex z[N * N], z0[N * N], zb[N * R], zb0[N * R];
  for (int i = 0; i < N * N; i++) z[i] = z0[i] = rnd() + I * rnd() + (i % (N + 1) == 0 ? N / 4.0 : 0);
  for (int i = 0; i < N * R; i++) zb[i] = zb0[i] = rnd() + I * rnd();
  zgetrf_(&n, &n, z, &n, ipiv, &info);
  if (info) return fail("zgetrf info", info);
  zgetrs_("C", &n, &nrhs, z, &n, ipiv, zb, &n, &info);
  if (info) return fail("zgetrs info", info);
  err = 0;
  for (int r = 0; r < R; r++)
    for (int i = 0; i < N; i++) {
      double complex s = 0;
      for (int j = 0; j < N; j++) s += conj(z0[j + i * N]) * zb[j + r * N];
      err = fmax(err, cabs(s - zb0[i + r * N]));
    }
  if (err > 1e-10) return fail("zgetrf/zgetrs residual", err);
  printf("ok zgetrf\n");

  /* dsyev: A V = V diag(w), V orthogonal */
  static double s[N * N], s0[N * N], w[N], work[N * 64];
  for (int j = 0; j < N; j++)
    for (int i = 0; i <= j; i++) s[i + j * N] = s[j + i * N] = rnd();
  for (int i = 0; i < N * N; i++) s0[i] = s[i];
  int lwork = N * 64;
  dsyev_("V", "U", &n, s, &n, w, work, &lwork, &info);
  if (info) return fail("dsyev info", info);
  err = 0;
  for (int k = 0; k < N; k++)
    for (int i = 0; i < N; i++) {
      double t = 0;
      for (int j = 0; j < N; j++) t += s0[i + j * N] * s[j + k * N];
      err = fmax(err, fabs(t - w[k] * s[i + k * N]));
    }
  for (int k = 1; k < N; k++)
    if (w[k] < w[k - 1]) return fail("dsyev order", w[k - 1] - w[k]);
  if (err > 1e-10) return fail("dsyev residual", err);
  printf("ok dsyev\n");

  /* spotrf: A = U^T U (single precision, A = M^T M + N I) */
  static float p[N * N], p0[N * N], m[N * N];
  for (int i = 0; i < N * N; i++) m[i] = (float) rnd();
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) {
      double t = i == j ? N : 0;
      for (int k = 0; k < N; k++) t += (double) m[k + i * N] * m[k + j * N];
      p[i + j * N] = p0[i + j * N] = (float) t;
    }
  spotrf_("U", &n, p, &n, &info);
  if (info) return fail("spotrf info", info);
  err = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i <= j; i++) {
      double t = 0;
      for (int k = 0; k <= i; k++) t += (double) p[k + i * N] * p[k + j * N];
      err = fmax(err, fabs(t - p0[i + j * N]) / p0[j + j * N]);
    }
  if (err > 1e-4) return fail("spotrf residual", err);
  printf("ok spotrf\n");

  /* cheevd: Hermitian eigenvalues (divide and conquer) */
  static float complex h[N * N], h0[N * N], cwork[N * N + 2 * N];
  static float hw[N], rwork[1 + 5 * N + 2 * N * N];
  static int iwork[3 + 5 * N];
  for (int j = 0; j < N; j++) {
    for (int i = 0; i < j; i++) {
      h[i + j * N] = (float) rnd() + I * (float) rnd();
      h[j + i * N] = conjf(h[i + j * N]);
    }
    h[j + j * N] = (float) rnd();
  }
  for (int i = 0; i < N * N; i++) h0[i] = h[i];
  int lcw = N * N + 2 * N, lrw = 1 + 5 * N + 2 * N * N, liw = 3 + 5 * N;
  cheevd_("V", "L", &n, h, &n, hw, cwork, &lcw, rwork, &lrw, iwork, &liw, &info);
  if (info) return fail("cheevd info", info);
  err = 0;
  for (int k = 0; k < N; k++)
    for (int i = 0; i < N; i++) {
      double complex t = 0;
      for (int j = 0; j < N; j++) t += h0[i + j * N] * h[j + k * N];
      err = fmax(err, cabs(t - hw[k] * h[i + k * N]));
    }
  if (err > 1e-3) return fail("cheevd residual", err);
  printf("ok cheevd\n");
  return 0;
}
