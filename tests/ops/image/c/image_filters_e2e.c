/* The image filters end to end on whatever ISA the dispatcher picks (TILEGEN_ISA caps it):
   prints the pass kernels chosen and an FNV-1a hash of each result. The inputs and kernels
   are chosen so that every ISA must give the same bits (uint8 fixed point, and float sums of
   small integers times powers of two, exact in any order, fused or not), so the hashes of a
   NEON run under qemu, of the scalar fallback and of a native x86 run must all agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegen.h"

/* The pass kernel of each kind, through libtilegen's private hook (dispatch/tg_xapi.h). */
static const char* tilegen_x_filter_kernel(int kind) {
  const char* (*hook)(int) = (const char* (*)(int)) tilegen_private_symbol("tilegen_x_filter_kernel");
  return hook ? hook(kind) : "?";
}

enum { H = 41, W = 67, C = 3, N = H * W * C };

static uint64_t fnv(const void* p, size_t n) {
  const unsigned char* b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

int main(void) {
  static uint8_t src[N], dst[N];
  static float fsrc[N], fdst[N];
  for (int i = 0; i < N; i++) {
    src[i] = (uint8_t) ((i * 131 + (i / 17) * 7) ^ (i >> 3));
    fsrc[i] = (float) (src[i] % 32);
  }
  const int64_t s = W * C;
  const float k3[9] = {1 / 16.f, 2 / 16.f, 1 / 16.f, 2 / 16.f, 4 / 16.f, 2 / 16.f,
                       1 / 16.f, 2 / 16.f, 1 / 16.f};
  const float k52[10] = {1, -2, 0.5f, 4, -1, 0.25f, 2, 1, -0.5f, 1};
  printf("kernels %s %s %s\n", tilegen_x_filter_kernel(0), tilegen_x_filter_kernel(2),
         tilegen_x_filter_kernel(4));
  int rc = 0;
#define HASH(name, call, buf)                                      \
  do {                                                             \
    memset(buf, 0, sizeof(buf));                                   \
    rc |= (call);                                                  \
    printf("%s %016llx\n", name, (unsigned long long) fnv(buf, sizeof(buf))); \
  } while (0)
  for (int border = 0; border < 3; border++) {
    printf("border %d\n", border);
    HASH("gauss5", tilegen_gaussian_blur_u8(src, s, dst, s, H, W, C, 5, 1.1, border), dst);
    HASH("gauss9", tilegen_gaussian_blur_u8(src, s, dst, s, H, W, C, 9, 0, border), dst);
    HASH("box5", tilegen_box_blur_u8(src, s, dst, s, H, W, C, 5, border), dst);
    HASH("box4", tilegen_box_blur_u8(src, s, dst, s, H, W, C, 4, border), dst);
    HASH("box19", tilegen_box_blur_u8(src, s, dst, s, H, W, C, 19, border), dst);
    HASH("box131", tilegen_box_blur_u8(src, s, dst, s, H, W, C, 131, border), dst);
    HASH("f2d_u8", tilegen_filter2d_u8(src, s, dst, s, H, W, C, k3, 3, 3, border), dst);
    HASH("unsharp", tilegen_unsharp_mask_u8(src, s, dst, s, H, W, C, 5, 1.0, 1.0, 2, border), dst);
    HASH("f2d_f32", tilegen_filter2d_f32(fsrc, s, fdst, s, H, W, C, k52, 5, 2, border), fdst);
    HASH("box_f32", tilegen_box_blur_f32(fsrc, s, fdst, s, H, W, C, 4, border), fdst);
  }
  printf(rc ? "ERROR\n" : "OK\n");
  return rc != 0;
}
