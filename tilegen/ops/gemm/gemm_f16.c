/* float16 GEMM: tilegen_gemm_f16 and the IEEE half conversions. A and B are float16; the
   products are summed in float32 (NumPy's float16 matmul answers so: its loop sums in float)
   and C is float32, or float16 rounded once (to nearest, ties to even) from the float32 sum.

   This tier widens: A and B are converted to float32 (threads split the rows), then the float32
   GEMM runs on the best float32 kernels. The widening reads each operand once, O(mk + kn)
   against the product's O(mnk): a few percent of a 1024^3 product. Native half arithmetic
   (AVX512-FP16, NEON FMLA .8h) and half-accumulating kernels are the next tiers: the
   half-accumulating kernels' dispatch table is below (gemmf16 family), the driver to come. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign under a strict -std=c11 too */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_activation.h"
#include "tg_gemm.h"
#include "tg_gemm_f16.h"
#include "tg_threads.h"
#include "tilegen.h"

#define TG_F16_CONVERT_PARALLEL_MIN (1 << 16)  /* values below which one thread converts */

/* Exact: every half is a float. */
static inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t) (h & 0x8000u) << 16, em = h & 0x7fffu;
  uint32_t bits;
  if (em >= 0x7c00u) {          /* Inf, NaN (payload kept) */
    bits = 0x7f800000u | ((em & 0x3ffu) << 13);
  } else if (em >= 0x0400u) {   /* normal: the exponent rebiased (127 - 15) */
    bits = (em << 13) + 0x38000000u;
  } else {                      /* subnormal or zero: em * 2^-24, exact in float */
    const float f = (float) em * 0x1p-24f;
    memcpy(&bits, &f, sizeof(bits));
  }
  bits |= sign;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

/* To nearest, ties to even; beyond the largest half (65504 + half an ulp) Inf; NaN stays a
   (quiet) NaN. */
static inline uint16_t f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  const uint16_t sign = (uint16_t) ((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t) (sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t) (sign | 0x7c00u);  /* >= 65520: Inf */
  if (ax >= 0x38800000u) {      /* a normal half: drop 13 mantissa bits, rounding */
    const uint32_t r = ax - 0x38000000u;
    return (uint16_t) (sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  /* subnormal half (or zero): |f| * 2^24 rounded to an integer (exact product; rint rounds to
     even in the default mode); 1024 is the smallest normal's encoding. */
  float a;
  memcpy(&a, &ax, sizeof(a));
  return (uint16_t) (sign | (uint16_t) nearbyintf(a * 0x1p24f));
}

void tilegen_f16_from_f32(int64_t n, const float* x, int64_t incx, uint16_t* y, int64_t incy) {
  for (int64_t i = 0; i < n; i++) y[i * incy] = f32_to_f16(x[i * incx]);
}

void tilegen_f32_from_f16(int64_t n, const uint16_t* x, int64_t incx, float* y, int64_t incy) {
  for (int64_t i = 0; i < n; i++) y[i * incy] = f16_to_f32(x[i * incx]);
}

/* rows x cols halves at src (element (i, j) at src[i*rs + j*cs]) -> dst, row-major. */
typedef struct {
  const uint16_t* src;
  int64_t rows, cols, rs, cs;
  float* dst;
} widen_job;

static void widen_task(void* ctx, int tid, int nt) {
  const widen_job* j = ctx;
  const int64_t i0 = j->rows * tid / nt, i1 = j->rows * (tid + 1) / nt;
  for (int64_t i = i0; i < i1; i++) {
    const uint16_t* s = j->src + i * j->rs;
    float* d = j->dst + i * j->cols;
    if (j->cs == 1)
      for (int64_t c = 0; c < j->cols; c++) d[c] = f16_to_f32(s[c]);
    else
      for (int64_t c = 0; c < j->cols; c++) d[c] = f16_to_f32(s[c * j->cs]);
  }
}

static void widen(const uint16_t* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                  float* dst) {
  widen_job j = {src, rows, cols, rs, cs, dst};
  const int nt = (double) rows * (double) cols < TG_F16_CONVERT_PARALLEL_MIN ? 1
                                                                              : tg_threads_max();
  tg_parallel_run(nt < rows ? nt : (int) rows, widen_task, &j);
}

static float* alloc_floats(int64_t count) {
  void* p = NULL;
  return posix_memalign(&p, 64, (size_t) count * sizeof(float)) == 0 ? p : NULL;
}

int tilegen_gemm_f16(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                     int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b, int64_t cs_b,
                     float beta, void* c, int c_dtype, int64_t rs_c, int64_t cs_c,
                     const float* bias, int64_t bias_stride, tilegen_activation act) {
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (k < 0) return -3;
  const int reads = m > 0 && n > 0 && k > 0 && alpha != 0;
  if (reads && a == NULL) return -5;
  if (reads && b == NULL) return -8;
  if (m > 0 && n > 0 && c == NULL) return -12;
  if (c_dtype != TILEGEN_F32 && c_dtype != TILEGEN_F16) return -13;
  if ((int) act < TILEGEN_ACT_NONE || (int) act > TILEGEN_ACT_SILU) return -18;
  if (m == 0 || n == 0) return 0;
  float *af = NULL, *bf = NULL, *t = NULL;
  int rc = 1;
  if (reads) {
    af = alloc_floats(m * k);
    bf = alloc_floats(k * n);
    if (af == NULL || bf == NULL) goto done;
    widen(a, m, k, rs_a, cs_a, af);
    widen(b, k, n, rs_b, cs_b, bf);
  }
  if (c_dtype == TILEGEN_F32) {
    /* tg_gemm_f32 with k = 0 (or alpha 0) scales C by beta (never reading it when beta is 0)
       and applies the epilogue, as with a product. */
    tg_gemm_f32(m, n, reads ? k : 0, alpha, af, k, 1, bf, n, 1, beta, c, rs_c, cs_c, bias,
                bias_stride, (int) act);
    rc = 0;
    goto done;
  }
  /* float16 C: the float32 result in a scratch (beta * C widened), rounded once at the end. */
  t = alloc_floats(m * n);
  if (t == NULL) goto done;
  uint16_t* ch = c;
  if (beta != 0) widen(ch, m, n, rs_c, cs_c, t);
  tg_gemm_f32(m, n, reads ? k : 0, alpha, af, k, 1, bf, n, 1, beta, t, n, 1, bias, bias_stride,
              (int) act);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) ch[i * rs_c + j * cs_c] = f32_to_f16(t[i * n + j]);
  rc = 0;
done:
  free(af);
  free(bf);
  free(t);
  return rc;
}

/* ---- half accumulation: dispatch ---- */

#define TG_F16_PARALLEL_MIN_FLOPS 4.0e6  /* below this a product runs on one thread */

static tg_interned* interned;
static tg_gemm_f16_config first;
static _Atomic(const tg_gemm_f16_config*) current;

/* Block sizes from the caches, the bf16 driver's rule (gemm_bf16.c) for 2-byte values: A's
   MR x KC panel in a quarter of L2, B's KC x NC block in the smaller of 4 x L2 and L3 / 8. */
static void blocking(tg_gemm_f16_config* c) {
  const tg_cpu_caches* k = tg_caches();
  int64_t kc = k->l2 / 4 / (c->mr * 2) / 16 * 16;
  kc = kc < 64 ? 64 : kc > 4096 ? 4096 : kc;
  const int64_t b_max = k->l3 <= 0 ? k->l2 / 2 : k->l3 / 8 < 4 * k->l2 ? k->l3 / 8 : 4 * k->l2;
  const int64_t nc = b_max / (kc * 2) / c->nr * c->nr;
  c->kc = kc;
  c->nc = nc < c->nr ? c->nr : nc;
}

/* The first production kernel of the best usable ISA with native half arithmetic (NATIVE: the
   table's HalfOps.native; the scalar reference is never served). */
void tg_gemm_f16_select(void) {
  int order[TG_ISA_COUNT];
  const int count = tg_isa_candidates(order);
  tg_gemm_f16_config c;
  memset(&c, 0, sizeof(c));
  for (int i = 0; i < count && c.fn == NULL; i++) {
    const int isa = order[i];
#define TG_PICK(ISA, MR, NR, PROD, NATIVE, FN, NAME)                                     \
    if ((ISA) == isa && (PROD) && (NATIVE) && c.fn == NULL) {                            \
      c.isa = (ISA); c.fn = FN; c.mr = (MR); c.nr = (NR); c.name = NAME;                 \
    }
    TG_FOREACH_GEMMF16_UKERNEL_f16(TG_PICK)
#undef TG_PICK
  }
  if (c.fn != NULL) blocking(&c);
  const tg_gemm_f16_config* p = tg_intern(&interned, &c, sizeof(c));
  if (p == NULL) {
    first = c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  if (c.fn != NULL) tg_dispatch_report("gemm", "accumulate f16", "f16", c.isa, c.name);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: f16 gemm, half accumulation: %s\n",
            c.fn != NULL ? c.name : "none (float32 accumulation serves it)");
}

const tg_gemm_f16_config* tg_gemm_f16_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}

const char* tilegen_x_gemm_f16acc_kernel(void) {
  const tg_gemm_f16_config* c = tg_gemm_f16_cfg();
  return c->fn != NULL ? c->name : NULL;
}
