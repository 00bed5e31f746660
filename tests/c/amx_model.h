/*
 * A software model of the Intel AMX instructions the amx* kernels use, so that their C testers
 * run on a CPU without AMX. Force-included (gcc -include amx_model.h) into a kernel's translation
 * unit compiled WITHOUT -mamx-*: it includes <immintrin.h>, then replaces the tile intrinsics by
 * calls into the model below (per thread: 8 tiles of 16 rows x 64 bytes and a 64-byte config).
 *
 * Follows the Intel SDM (vol. 2, "LDTILECFG", "TILELOADD", "TILESTORED", "TILEZERO",
 * "TILERELEASE", "TDPBF16PS", "TDPBSSD/TDPBSUD/TDPBUSD/TDPBUUD"): palette 1 only; a load fills
 * `rows` rows of `colsb` bytes and zeroes the rest of the tile; a product updates dst's rows and
 * zeroes everything past dst's rows and colsb. What the hardware faults on (#UD: tiles not
 * configured, shapes that do not chain; #GP: an invalid config) aborts here, so a kernel that
 * would fault on real AMX fails its tester.
 *
 * TDPBF16PS: per row m, per pair k (in order), per column n: two float32 additions, in the
 * SDM's order, C += A[m][2k] * B[k][2n], then C += A[m][2k+1] * B[k][2n+1]; inputs' subnormals
 * are zero (DAZ), every result's subnormal is zero (FTZ), round to nearest even (MXCSR is not
 * consulted). A product of two bfloat16 values is exact in float32 unless it is subnormal
 * (then flushed here) or overflows.
 */
#ifndef TG_AMX_MODEL_H
#define TG_AMX_MODEL_H

#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG_AMX_MODEL 1

typedef struct {
  int configured;
  uint8_t palette, start_row;
  uint16_t colsb[8];
  uint8_t rows[8];
  uint8_t data[8][16][64];
} tg_amx_state;

static __thread tg_amx_state tg_amx __attribute__((unused));

static inline void tg_amx_fault(const char* what) {
  fprintf(stderr, "amx model: %s (a fault on real AMX)\n", what);
  abort();
}

static inline void tg_amx_check_tile(int t) {
  if (!tg_amx.configured) tg_amx_fault("tile instruction before LDTILECFG (#UD)");
  if (t < 0 || t > 7 || tg_amx.rows[t] == 0 || tg_amx.colsb[t] == 0)
    tg_amx_fault("tile not configured (#UD)");
}

static inline void tg_amx_loadconfig(const void* p) {
  uint8_t cfg[64];
  memcpy(cfg, p, 64);
  memset(&tg_amx, 0, sizeof(tg_amx));  /* tiles are zeroed by LDTILECFG */
  if (cfg[0] == 0) return;  /* palette 0: the init state, tiles unconfigured */
  if (cfg[0] != 1) tg_amx_fault("palette other than 0 or 1 (#GP)");
  for (int i = 2; i < 16; i++)
    if (cfg[i]) tg_amx_fault("reserved config bytes 2..15 not zero (#GP)");
  for (int t = 0; t < 8; t++) {
    uint16_t c;
    memcpy(&c, cfg + 16 + 2 * t, 2);
    const uint8_t r = cfg[48 + t];
    if (c > 64 || r > 16) tg_amx_fault("tile larger than palette 1's 16 x 64 (#GP)");
    if ((c == 0) != (r == 0)) tg_amx_fault("tile with rows or colsb alone zero (#GP)");
    tg_amx.colsb[t] = c;
    tg_amx.rows[t] = r;
  }
  for (int i = 32; i < 48; i++)
    if (cfg[i]) tg_amx_fault("colsb of tiles 8..15 not zero (#GP)");
  for (int i = 56; i < 64; i++)
    if (cfg[i]) tg_amx_fault("rows of tiles 8..15 not zero (#GP)");
  tg_amx.palette = 1;
  tg_amx.start_row = cfg[1];
  if (tg_amx.start_row) tg_amx_fault("start_row nonzero: the model has no restarts");
  tg_amx.configured = 1;
}

static inline void tg_amx_release(void) { memset(&tg_amx, 0, sizeof(tg_amx)); }

static inline void tg_amx_zero(int t) {
  tg_amx_check_tile(t);
  memset(tg_amx.data[t], 0, sizeof(tg_amx.data[t]));
}

static inline void tg_amx_loadd(int t, const void* base, long stride) {
  tg_amx_check_tile(t);
  memset(tg_amx.data[t], 0, sizeof(tg_amx.data[t]));
  for (int r = 0; r < tg_amx.rows[t]; r++)
    memcpy(tg_amx.data[t][r], (const uint8_t*) base + (long) r * stride, tg_amx.colsb[t]);
}

static inline void tg_amx_stored(int t, void* base, long stride) {
  tg_amx_check_tile(t);
  for (int r = 0; r < tg_amx.rows[t]; r++)
    memcpy((uint8_t*) base + (long) r * stride, tg_amx.data[t][r], tg_amx.colsb[t]);
}

/* The SDM's shape checks of a tile product (#UD otherwise); group: bytes per 32-bit lane. */
static inline void tg_amx_check_dp(int c, int a, int b) {
  tg_amx_check_tile(c);
  tg_amx_check_tile(a);
  tg_amx_check_tile(b);
  if (c == a || c == b || a == b) tg_amx_fault("tile product with a tile twice (#UD)");
  if (tg_amx.colsb[a] % 4 || tg_amx.colsb[c] % 4 || tg_amx.colsb[b] % 4)
    tg_amx_fault("colsb not a multiple of 4 (#UD)");
  if (tg_amx.colsb[a] / 4 != tg_amx.rows[b]) tg_amx_fault("A's colsb / 4 != B's rows (#UD)");
  if (tg_amx.rows[c] != tg_amx.rows[a]) tg_amx_fault("C's rows != A's rows (#UD)");
  if (tg_amx.colsb[c] != tg_amx.colsb[b]) tg_amx_fault("C's colsb != B's colsb (#UD)");
}

static inline float tg_amx_f32(uint32_t bits) {
  float x;
  memcpy(&x, &bits, 4);
  return x;
}

static inline float tg_amx_ftz(float x) {  /* FTZ: a subnormal result is a zero of its sign */
  uint32_t bits;
  memcpy(&bits, &x, 4);
  if ((bits & 0x7f800000u) == 0) bits &= 0x80000000u;
  return tg_amx_f32(bits);
}

static inline float tg_amx_bf16_daz(const uint8_t* p) {  /* DAZ: a subnormal input is zero */
  uint16_t h;
  memcpy(&h, p, 2);
  if ((h & 0x7f80u) == 0) h &= 0x8000u;
  return tg_amx_f32((uint32_t) h << 16);
}

static inline void tg_amx_dpbf16ps(int c, int a, int b) {
  tg_amx_check_dp(c, a, b);
  const int kp = tg_amx.colsb[a] / 4, cols = tg_amx.colsb[c] / 4;
  for (int m = 0; m < tg_amx.rows[c]; m++) {
    float tmp[16];
    memcpy(tmp, tg_amx.data[c][m], 64);
    for (int k = 0; k < kp; k++)
      for (int n = 0; n < cols; n++)
        for (int h = 0; h < 2; h++) {
          /* volatile: each step one float32 rounding, no contraction or wider evaluation */
          volatile float prod = tg_amx_bf16_daz(tg_amx.data[a][m] + 4 * k + 2 * h) *
                                tg_amx_bf16_daz(tg_amx.data[b][k] + 4 * n + 2 * h);
          volatile float sum = tmp[n] + tg_amx_ftz(prod);
          tmp[n] = tg_amx_ftz(sum);
        }
    memset(tg_amx.data[c][m], 0, 64);
    memcpy(tg_amx.data[c][m], tmp, (size_t) tg_amx.colsb[c]);
  }
  for (int m = tg_amx.rows[c]; m < 16; m++) memset(tg_amx.data[c][m], 0, 64);
}

/* TDPB[SU][SU]D: int32 += four products of A's bytes (signed if sa) by B's (signed if sb),
   wrapping (modulo 2^32). */
static inline void tg_amx_dpb(int c, int a, int b, int sa, int sb) {
  tg_amx_check_dp(c, a, b);
  const int kq = tg_amx.colsb[a] / 4, cols = tg_amx.colsb[c] / 4;
  for (int m = 0; m < tg_amx.rows[c]; m++) {
    uint32_t tmp[16];
    memcpy(tmp, tg_amx.data[c][m], 64);
    for (int k = 0; k < kq; k++)
      for (int n = 0; n < cols; n++)
        for (int q = 0; q < 4; q++) {
          const uint8_t x = tg_amx.data[a][m][4 * k + q], y = tg_amx.data[b][k][4 * n + q];
          const int32_t xv = sa ? (int32_t) (int8_t) x : (int32_t) x;
          const int32_t yv = sb ? (int32_t) (int8_t) y : (int32_t) y;
          tmp[n] += (uint32_t) (xv * yv);
        }
    memset(tg_amx.data[c][m], 0, 64);
    memcpy(tg_amx.data[c][m], tmp, (size_t) tg_amx.colsb[c]);
  }
  for (int m = tg_amx.rows[c]; m < 16; m++) memset(tg_amx.data[c][m], 0, 64);
}

#undef _tile_loadconfig
#undef _tile_release
#undef _tile_zero
#undef _tile_loadd
#undef _tile_stream_loadd
#undef _tile_stored
#undef _tile_dpbf16ps
#undef _tile_dpbssd
#undef _tile_dpbsud
#undef _tile_dpbusd
#undef _tile_dpbuud
/* _tile_loadconfig and _tile_release are inline functions in GCC's header: these function-like
   macros shadow them at every call. */
#define _tile_loadconfig(p) tg_amx_loadconfig(p)
#define _tile_release() tg_amx_release()
#define _tile_zero(t) tg_amx_zero(t)
#define _tile_loadd(t, base, stride) tg_amx_loadd((t), (base), (long) (stride))
#define _tile_stream_loadd(t, base, stride) tg_amx_loadd((t), (base), (long) (stride))
#define _tile_stored(t, base, stride) tg_amx_stored((t), (base), (long) (stride))
#define _tile_dpbf16ps(c, a, b) tg_amx_dpbf16ps((c), (a), (b))
#define _tile_dpbssd(c, a, b) tg_amx_dpb((c), (a), (b), 1, 1)
#define _tile_dpbsud(c, a, b) tg_amx_dpb((c), (a), (b), 1, 0)
#define _tile_dpbusd(c, a, b) tg_amx_dpb((c), (a), (b), 0, 1)
#define _tile_dpbuud(c, a, b) tg_amx_dpb((c), (a), (b), 0, 0)

#endif
