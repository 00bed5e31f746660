/*
 * tilegen_?gemm_ex, _strided and _batched with NULL pointers: each array the call would touch,
 * NULL in turn with every other argument valid, returns -p (its parameter number) and writes
 * nothing; the arrays a call never touches may be NULL (A and B when alpha == 0 or k == 0, all
 * three when m or n is 0, bias always), as the reference BLAS allows.
 * Prints "CHECKS <n> FAILED <f>"; exits 0 when nothing failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tilegen.h"

static long checks = 0, failed = 0;

#define EXPECT(call, want)                                                                    \
  do {                                                                                        \
    checks++;                                                                                 \
    const int rc_ = (call);                                                                   \
    if (rc_ != (want)) {                                                                      \
      failed++;                                                                               \
      fprintf(stderr, "FAIL line %d: %s returned %d, want %d\n", __LINE__, #call, rc_, want); \
    }                                                                                         \
  } while (0)

#define SENTINEL -7.5

#define TG_DEFINE(T, PFX)                                                                      \
  static void PFX##check(void) {                                                               \
    enum { M = 5, N = 6, K = 4 };                                                              \
    T a[M * K], b[K * N], c[M * N], bias[N];                                                   \
    for (int i = 0; i < M * K; i++) a[i] = (T) (i % 7) - 3;                                    \
    for (int i = 0; i < K * N; i++) b[i] = (T) (i % 5) - 2;                                    \
    for (int i = 0; i < N; i++) bias[i] = (T) i;                                               \
    for (int i = 0; i < M * N; i++) c[i] = (T) SENTINEL;                                       \
    const tilegen_layout R = TILEGEN_ROW_MAJOR;                                                \
    const tilegen_transpose NT = TILEGEN_NO_TRANS;                                             \
    /* ex: a is parameter 8, b 10, c 13 */                                                     \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, K, 1, NULL, K, b, N, 0, c, N, bias, 0), -8); \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, K, 1, a, K, NULL, N, 0, c, N, bias, 0), -10); \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, K, 1, a, K, b, N, 0, NULL, N, bias, 0), -13); \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, K, 1, a, K, b, N, 1, NULL, N, NULL, 0), -13); \
    /* the first invalid parameter in signature order */                                       \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, K, 1, NULL, 0, b, N, 0, c, N, bias, 0), -8); \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, K, 1, a, 0, NULL, N, 0, c, N, bias, 0), -9); \
    /* strided: a is 5, b 8, c 12 */                                                           \
    EXPECT(tilegen_##PFX##gemm_strided(M, N, K, 1, NULL, K, 1, b, N, 1, 0, c, N, 1, bias, 1, 0), -5); \
    EXPECT(tilegen_##PFX##gemm_strided(M, N, K, 1, a, K, 1, NULL, N, 1, 0, c, N, 1, bias, 1, 0), -8); \
    EXPECT(tilegen_##PFX##gemm_strided(M, N, K, 1, a, K, 1, b, N, 1, 0, NULL, N, 1, bias, 1, 0), -12); \
    /* batched over one dimension of 2 (B broadcast): shape 2, strides 3-5, a 10, b 13, c 17 */ \
    const int64_t shape[1] = {1}, sa[1] = {M * K}, sb[1] = {0}, sc[1] = {M * N};             \
    EXPECT(tilegen_##PFX##gemm_batched(1, NULL, sa, sb, sc, M, N, K, 1, a, K, 1, b, N, 1, 0, c, N, 1), -2); \
    EXPECT(tilegen_##PFX##gemm_batched(1, shape, NULL, sb, sc, M, N, K, 1, a, K, 1, b, N, 1, 0, c, N, 1), -3); \
    EXPECT(tilegen_##PFX##gemm_batched(1, shape, sa, NULL, sc, M, N, K, 1, a, K, 1, b, N, 1, 0, c, N, 1), -4); \
    EXPECT(tilegen_##PFX##gemm_batched(1, shape, sa, sb, NULL, M, N, K, 1, a, K, 1, b, N, 1, 0, c, N, 1), -5); \
    EXPECT(tilegen_##PFX##gemm_batched(1, shape, sa, sb, sc, M, N, K, 1, NULL, K, 1, b, N, 1, 0, c, N, 1), -10); \
    EXPECT(tilegen_##PFX##gemm_batched(1, shape, sa, sb, sc, M, N, K, 1, a, K, 1, NULL, N, 1, 0, c, N, 1), -13); \
    EXPECT(tilegen_##PFX##gemm_batched(1, shape, sa, sb, sc, M, N, K, 1, a, K, 1, b, N, 1, 0, NULL, N, 1), -17); \
    EXPECT(tilegen_##PFX##gemm_batched(0, NULL, NULL, NULL, NULL, M, N, K, 1, NULL, K, 1, b, N, 1, 0, c, N, 1), -10); \
    for (int i = 0; i < M * N; i++)                                                            \
      if (c[i] != (T) SENTINEL) {                                                              \
        failed++;                                                                              \
        fprintf(stderr, "FAIL " #PFX ": a rejected call wrote c[%d]\n", i);                    \
        break;                                                                                 \
      }                                                                                        \
    /* What is never touched may be NULL: A and B with alpha = 0 or k = 0 (C = beta C), all  \
       arrays when m or n is 0, the batch arrays of an empty batch. */                         \
    for (int i = 0; i < M * N; i++) c[i] = 2;                                                  \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, K, 0, NULL, K, NULL, N, 0.5, c, N, NULL, 0), 0); \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, N, 0, 1, NULL, 1, NULL, N, 1, c, N, NULL, 0), 0); \
    EXPECT(tilegen_##PFX##gemm_strided(M, N, K, 0, NULL, K, 1, NULL, N, 1, 1, c, N, 1, NULL, 0, 0), 0); \
    EXPECT(tilegen_##PFX##gemm_batched(1, shape, sa, sb, sc, M, N, K, 0, NULL, K, 1, NULL, N, 1, 1, c, N, 1), 0); \
    for (int i = 0; i < M * N; i++)                                                            \
      if (c[i] != 1) {                                                                         \
        failed++;                                                                              \
        fprintf(stderr, "FAIL " #PFX ": C = beta*C gave %g at %d, want 1\n", (double) c[i], i); \
        break;                                                                                 \
      }                                                                                        \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, 0, N, K, 1, NULL, K, NULL, N, 0, NULL, N, NULL, 0), 0); \
    EXPECT(tilegen_##PFX##gemm_ex(R, NT, NT, M, 0, K, 1, NULL, K, NULL, 1, 0, NULL, 1, NULL, 0), 0); \
    EXPECT(tilegen_##PFX##gemm_strided(M, 0, K, 1, NULL, K, 1, NULL, 1, 1, 0, NULL, 1, 1, NULL, 1, 0), 0); \
    const int64_t none[1] = {0};                                                               \
    EXPECT(tilegen_##PFX##gemm_batched(1, none, NULL, NULL, NULL, M, N, K, 1, NULL, K, 1, NULL, N, 1, 0, NULL, N, 1), 0); \
  }

TG_DEFINE(float, s)
TG_DEFINE(double, d)

int main(void) {
  scheck();
  dcheck();
  printf("CHECKS %ld FAILED %ld\n", checks, failed);
  return failed != 0;
}
