/*
 * Drives tilegen_sgemm_ex / tilegen_dgemm_ex through tilegen.h, linked to libtilegen, for
 * tests/ops/blas_abi/test_blas_abi.py.
 *
 *   run IN OUT   the calls described in IN; for each, int32 return code then the C buffer
 *                (every operand against a guard page, behind or in front, alternating)
 *   errors       stdin lines "dt layout ta tb m n k lda ldb ldc act": prints "rc|C untouched"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard_pages.h"
#include "tilegen.h"

static void read_exact(FILE* f, void* p, size_t bytes) {
  if (bytes && fread(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "short read\n");
    exit(3);
  }
}

/* Record: int32 dt, layout, ta, tb, m, n, k, lda, ldb, ldc, act, has_bias; float64 alpha, beta;
   int64 na, nb, nc, nbias (elements); then A, B, C, bias. */
static int run(const char* in_path, const char* out_path) {
  FILE* in = fopen(in_path, "rb");
  FILE* out = fopen(out_path, "wb");
  if (!in || !out) return 3;
  int32_t h[12];
  while (fread(h, sizeof(int32_t), 12, in) == 12) {
    double ab[2];
    int64_t len[4];
    read_exact(in, ab, sizeof(ab));
    read_exact(in, len, sizeof(len));
    const size_t esz = h[0] ? sizeof(double) : sizeof(float);
    /* Every operand against a guard page: behind it in one call, in front in the next. */
    static int front = 0;
    front ^= 1;
    void* buf[4];
    region r[4];
    for (int i = 0; i < 4; i++) {
      buf[i] = guarded_bytes(len[i] * esz, front, &r[i]);
      read_exact(in, buf[i], len[i] * esz);
    }
    const void* bias = h[11] ? buf[3] : NULL;
    int32_t rc;
    if (h[0] == 0)
      rc = tilegen_sgemm_ex(h[1], h[2], h[3], h[4], h[5], h[6], (float) ab[0], buf[0], h[7],
                            buf[1], h[8], (float) ab[1], buf[2], h[9], bias, h[10]);
    else
      rc = tilegen_dgemm_ex(h[1], h[2], h[3], h[4], h[5], h[6], ab[0], buf[0], h[7], buf[1],
                            h[8], ab[1], buf[2], h[9], bias, h[10]);
    fwrite(&rc, sizeof(rc), 1, out);
    fwrite(buf[2], esz, len[2], out);
    for (int i = 0; i < 4; i++) release(&r[i]);
  }
  fclose(in);
  return fclose(out) == 0 ? 0 : 3;
}

#define BUF 512
static float fa[BUF], fb[BUF], fc[BUF], fbias[BUF];
static double da[BUF], db[BUF], dc[BUF], dbias[BUF];

static int errors(void) {
  int dt, layout, ta, tb, act;
  long long m, n, k, lda, ldb, ldc;
  while (scanf(" %d %d %d %d %lld %lld %lld %lld %lld %lld %d", &dt, &layout, &ta, &tb, &m, &n,
               &k, &lda, &ldb, &ldc, &act) == 11) {
    for (int i = 0; i < BUF; i++) {
      fa[i] = fb[i] = fbias[i] = 1.0f;
      da[i] = db[i] = dbias[i] = 1.0;
      fc[i] = 1234.5f;
      dc[i] = 1234.5;
    }
    int rc;
    if (dt == 0)
      rc = tilegen_sgemm_ex(layout, ta, tb, m, n, k, 1.0f, fa, lda, fb, ldb, 0.0f, fc, ldc, fbias,
                            act);
    else
      rc = tilegen_dgemm_ex(layout, ta, tb, m, n, k, 1.0, da, lda, db, ldb, 0.0, dc, ldc, dbias,
                            act);
    int untouched = 1;
    for (int i = 0; i < BUF; i++)
      if (fc[i] != 1234.5f || dc[i] != 1234.5) untouched = 0;
    printf("%d|%d\n", rc, untouched);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (tilegen_init() != 0) {
    fprintf(stderr, "tilegen_init: %s\n", tilegen_init_error());
    return 4;
  }
  if (argc >= 4 && !strcmp(argv[1], "run")) return run(argv[2], argv[3]);
  if (argc >= 2 && !strcmp(argv[1], "errors")) return errors();
  fprintf(stderr, "usage: gemm_ex_driver run IN OUT | errors\n");
  return 2;
}
