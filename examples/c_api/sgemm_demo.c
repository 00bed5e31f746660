/* A 20-line tilegen client: C = A*B + bias with a fused ReLU, checked against a plain loop. */
#include <math.h>
#include <stdio.h>
#include <tilegen.h>

int main(void) {
  enum { M = 3, N = 4, K = 5 };
  float a[M * K], b[K * N], c[M * N], bias[N] = {0.5f, -0.5f, 1.0f, -1.0f};
  for (int i = 0; i < M * K; i++) a[i] = (float) (i % 7) - 3;
  for (int i = 0; i < K * N; i++) b[i] = (float) (i % 5) - 2;
  int rc = tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, M, N, K, 1.0f,
                            a, K, b, N, 0.0f, c, N, bias, TILEGEN_ACT_RELU);
  double worst = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float want = bias[j];
      for (int p = 0; p < K; p++) want += a[i * K + p] * b[p * N + j];
      worst = fmax(worst, fabs(c[i * N + j] - fmaxf(want, 0.0f)));
    }
  printf("tilegen %s on %s: rc %d, max error %g\n", tilegen_version(), tilegen_isa_name(), rc, worst);
  return rc != 0 || worst > 1e-4;
}
