/* float16 GEMM: tilegen_gemm_f16, tilegen_gemm_f16_ex and the IEEE half conversions. A and B
   are float16; by default the products are summed in float32 (NumPy's float16 matmul answers
   so: its loop sums in float) and C is float32, or float16 rounded once (to nearest, ties to
   even) from the float32 sum.

   That default widens: A and B are converted to float32 (threads split the rows), then the
   float32 GEMM runs on the best float32 kernels. The widening reads each operand once,
   O(mk + kn) against the product's O(mnk): a few percent of a 1024^3 product.

   Opt-in half accumulation (tilegen_gemm_f16_ex with TILEGEN_ACCUMULATE_F16), where an ISA
   computes in half natively (neonfp16: FMLA .8h, avx512fp16: VFMADD231PH, twice float32's FMA
   rate): A and B are packed into half panels, the gemmf16 kernels sum in half (each
   multiply-add rounded once to half), and alpha, beta, bias and the activation then apply in
   float32, rounded once to C's type.
   Elsewhere float32 accumulation serves it (faster there, and more accurate). */
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
#include "tg_workspace.h"
#include "tilegen.h"

#define TG_F16_CONVERT_PARALLEL_MIN (1 << 16)  /* values below which one thread converts */

/* The conversions are branch-free (each case computed, one picked by masks) so that loops over
   them vectorize at the library's base flags: widening 2^21 halves went from 2.8 ms (branches on
   the exponent) to 0.8 ms on SSE2 (Zen 4). Both agree bit for bit with the branching forms on
   every input (checked exhaustively when they were written). */
static inline uint32_t mask_if(int c) { return 0u - (uint32_t) c; }

/* Exact: every half is a float. Inf and NaN (payload kept) rebias as normals do, plus 2^28 in
   the exponent field; subnormals and zero are em * 2^-24, exact in float. */
static inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t) (h & 0x8000u) << 16, em = h & 0x7fffu;
  const uint32_t big = mask_if(em >= 0x7c00u), small = mask_if(em < 0x0400u);
  const uint32_t normal = (em << 13) + 0x38000000u + (big & 0x38000000u);
  const float s = (float) (int32_t) em * 0x1p-24f;
  uint32_t sub;
  memcpy(&sub, &s, sizeof(sub));
  const uint32_t bits = ((sub & small) | (normal & ~small)) | sign;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

/* To nearest, ties to even; beyond the largest half (65504 + half an ulp) Inf; NaN stays a
   (quiet) NaN. */
static inline uint16_t f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  const uint32_t nan = mask_if(ax > 0x7f800000u), inf = mask_if(ax >= 0x477ff000u) & ~nan,
                 sub = mask_if(ax < 0x38800000u);
  /* a normal half: drop 13 mantissa bits, rounding */
  const uint32_t r = ax - 0x38000000u, normal = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
  /* a subnormal half (or zero): |f| * 2^24 < 1024 rounded to an integer (adding and taking
     away 2^23 rounds to even); |f| is masked to 0 elsewhere so the conversion stays in range.
     1024 is the smallest normal's encoding. */
  const uint32_t as = ax & sub;
  float a;
  memcpy(&a, &as, sizeof(a));
  const uint32_t subnormal = (uint32_t) (int32_t) ((a * 0x1p24f + 0x1p23f) - 0x1p23f);
  uint32_t v = (normal & ~sub) | (subnormal & sub);
  v = (v & ~inf) | (0x7c00u & inf);
  v = (v & ~nan) | ((0x7e00u | ((ax >> 13) & 0x3ffu)) & nan);
  return (uint16_t) (sign | v);
}

__attribute__((optimize("tree-vectorize")))
void tilegen_f16_from_f32(int64_t n, const float* x, int64_t incx, uint16_t* y, int64_t incy) {
  for (int64_t i = 0; i < n; i++) y[i * incy] = f32_to_f16(x[i * incx]);
}

__attribute__((optimize("tree-vectorize")))
void tilegen_f32_from_f16(int64_t n, const uint16_t* x, int64_t incx, float* y, int64_t incy) {
  for (int64_t i = 0; i < n; i++) y[i * incy] = f16_to_f32(x[i * incx]);
}

/* rows x cols halves at src (element (i, j) at src[i*rs + j*cs]) -> dst, row-major. */
typedef struct {
  const uint16_t* src;
  int64_t rows, cols, rs, cs;
  float* dst;
} widen_job;

__attribute__((optimize("tree-vectorize")))
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

/* The row-major float32 rows x cols at src, rounded into halves at dst (element (i, j) at
   dst[i*rs + j*cs]). */
typedef struct {
  const float* src;
  int64_t rows, cols, rs, cs;
  uint16_t* dst;
} narrow_job;

__attribute__((optimize("tree-vectorize")))
static void narrow_task(void* ctx, int tid, int nt) {
  const narrow_job* j = ctx;
  const int64_t i0 = j->rows * tid / nt, i1 = j->rows * (tid + 1) / nt;
  for (int64_t i = i0; i < i1; i++) {
    const float* s = j->src + i * j->cols;
    uint16_t* d = j->dst + i * j->rs;
    if (j->cs == 1)
      for (int64_t c = 0; c < j->cols; c++) d[c] = f32_to_f16(s[c]);
    else
      for (int64_t c = 0; c < j->cols; c++) d[c * j->cs] = f32_to_f16(s[c]);
  }
}

static void narrow(const float* src, int64_t rows, int64_t cols, uint16_t* dst, int64_t rs,
                   int64_t cs) {
  narrow_job j = {src, rows, cols, rs, cs, dst};
  const int nt = (double) rows * (double) cols < TG_F16_CONVERT_PARALLEL_MIN ? 1
                                                                              : tg_threads_max();
  tg_parallel_run(nt < rows ? nt : (int) rows, narrow_task, &j);
}

/* A float32 scratch of `count` values: the calling thread's workspace slot, kept between
   calls, up to TG_F16_KEEP_BYTES (fresh pages cost the kernel's zeroing: 6% of a 2048^3
   product's time on Zen 4 when each call allocated); beyond it, or when the workspace cannot
   grow, memory of this call only, returned in *owned for the caller to free. NULL when memory
   runs out. */
#define TG_F16_KEEP_BYTES ((size_t) 64 << 20)

static float* scratch(int slot, int64_t count, float** owned) {
  const size_t bytes = (size_t) count * sizeof(float);
  float* kept = bytes <= TG_F16_KEEP_BYTES ? tg_workspace(slot, bytes) : NULL;
  if (kept != NULL) return kept;
  void* p = NULL;
  if (posix_memalign(&p, 64, bytes) != 0) return NULL;
  return *owned = p;
}

/* tilegen_gemm_f16's parameter checks: 0, or -p for the first invalid parameter p. */
static int check_args(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                      const uint16_t* b, const void* c, int c_dtype, tilegen_activation act) {
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (k < 0) return -3;
  const int reads = m > 0 && n > 0 && k > 0 && alpha != 0;
  if (reads && a == NULL) return -5;
  if (reads && b == NULL) return -8;
  if (m > 0 && n > 0 && c == NULL) return -12;
  if (c_dtype != TILEGEN_F32 && c_dtype != TILEGEN_F16) return -13;
  if ((int) act < TILEGEN_ACT_NONE || (int) act > TILEGEN_ACT_SILU) return -18;
  return 0;
}

int tilegen_gemm_f16(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                     int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b, int64_t cs_b,
                     float beta, void* c, int c_dtype, int64_t rs_c, int64_t cs_c,
                     const float* bias, int64_t bias_stride, tilegen_activation act) {
  const int bad = check_args(m, n, k, alpha, a, b, c, c_dtype, act);
  if (bad) return bad;
  const int reads = m > 0 && n > 0 && k > 0 && alpha != 0;
  if (m == 0 || n == 0) return 0;
  float *af = NULL, *bf = NULL, *t = NULL, *own_a = NULL, *own_b = NULL, *own_t = NULL;
  int rc = 1;
  if (reads) {
    af = scratch(TG_WS_GEMM_LP_A, m * k, &own_a);
    bf = scratch(TG_WS_GEMM_LP_B, k * n, &own_b);
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
  t = scratch(TG_WS_GEMM_LP_C, m * n, &own_t);
  if (t == NULL) goto done;
  uint16_t* ch = c;
  if (beta != 0) widen(ch, m, n, rs_c, cs_c, t);
  tg_gemm_f32(m, n, reads ? k : 0, alpha, af, k, 1, bf, n, 1, beta, t, n, 1, bias, bias_stride,
              (int) act);
  narrow(t, m, n, ch, rs_c, cs_c);
  rc = 0;
done:
  free(own_a);
  free(own_b);
  free(own_t);
  return rc;
}

/* ---- half accumulation: dispatch ---- */

#define TG_F16_PARALLEL_MIN_FLOPS 4.0e6  /* below this a product runs on one thread */

static tg_interned* interned;
static tg_gemm_f16_config first;
static _Atomic(const tg_gemm_f16_config*) current;

/* 2-byte values, as bfloat16's. */
static void blocking(tg_gemm_f16_config* c) {
  tg_gemm_lowp_blocking(tg_caches(), c->mr, c->nr, 2, 16, 64, 4096, &c->kc, &c->nc);
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

/* ---- half accumulation: packing ---- */

/* A's rows [i0, i0 + MR) x k [k0, k0 + kc) into a panel: per k, MR halves (zeros past m). */
static void pack_a16(const uint16_t* a, int64_t rs_a, int64_t cs_a, int64_t i0, int64_t m,
                     int64_t k0, int64_t kc, int mr, uint16_t* dst) {
  const int64_t rows = m - i0 < mr ? m - i0 : mr;
  for (int64_t p = 0; p < kc; p++, dst += mr) {
    const uint16_t* col = a + i0 * rs_a + (k0 + p) * cs_a;
    for (int64_t i = 0; i < rows; i++) dst[i] = col[i * rs_a];
    for (int64_t i = rows; i < mr; i++) dst[i] = 0;
  }
}

/* B's k [k0, k0 + kc) x the NR-wide column panels [q0, q1) of the columns from j0 (nc of
   them) into panels, one after another from dst: per k, NR halves (zeros past nc). */
__attribute__((optimize("tree-vectorize")))
static void pack_b16(const uint16_t* b, int64_t rs_b, int64_t cs_b, int64_t k0, int64_t kc,
                     int64_t j0, int64_t nc, int nr, int64_t q0, int64_t q1, uint16_t* dst) {
  for (int64_t q = q0; q < q1; q++) {
    const int64_t jp = q * nr, cols = nc - jp < nr ? nc - jp : nr;
    uint16_t* d = dst + (q - q0) * nr * kc;
    for (int64_t p = 0; p < kc; p++, d += nr) {
      const uint16_t* row = b + (k0 + p) * rs_b + (j0 + jp) * cs_b;
      if (cs_b == 1 && cols == nr) {
        memcpy(d, row, (size_t) nr * sizeof(uint16_t));
      } else {
        for (int64_t j = 0; j < cols; j++) d[j] = row[j * cs_b];
        for (int64_t j = cols; j < nr; j++) d[j] = 0;
      }
    }
  }
}

/* ---- half accumulation: the driver ---- */

typedef struct {
  const tg_gemm_f16_config* cfg;
  const uint16_t* a;
  int64_t rs_a, cs_a, m;
  const uint16_t* b;
  int64_t rs_b, cs_b;
  uint16_t* pb;               /* the packed B block */
  int64_t k0, kc, nc, j0;     /* the block */
  uint16_t* c;
  int64_t rs_c, cs_c;
  int64_t panels, col_panels; /* row panels of MR; column panels of NR in the block */
  int64_t col_groups;         /* column panels split this many ways (fewer row panels than threads) */
  atomic_int failed;
} half_job;

static void half_pack_task(void* ctx, int task, int ntasks) {
  half_job* j = ctx;
  const int64_t q0 = j->col_panels * task / ntasks, q1 = j->col_panels * (task + 1) / ntasks;
  pack_b16(j->b, j->rs_b, j->cs_b, j->k0, j->kc, j->j0, j->nc, j->cfg->nr, q0, q1,
           j->pb + q0 * j->cfg->nr * j->kc);
}

/* Units of the block, a row panel against a group of column panels (one group: all of
   them), each row panel packed once per task. The first k block starts the sums at zero,
   later ones continue them from C (accumulate), so every element takes its k products in
   order whatever the blocking and the threads. */
static void half_rows_task(void* ctx, int task, int ntasks) {
  half_job* j = ctx;
  const int mr = j->cfg->mr, nr = j->cfg->nr;
  uint16_t* pa = tg_workspace(TG_WS_GEMM_LP_A, (size_t) (mr * j->kc) * sizeof(uint16_t));
  if (pa == NULL) {
    atomic_store(&j->failed, 1);
    return;
  }
  const int64_t units = j->panels * j->col_groups;
  int64_t packed = -1;
  for (int64_t u = units * task / ntasks; u < units * (task + 1) / ntasks; u++) {
    const int64_t pi = u / j->col_groups, g = u % j->col_groups;
    const int64_t i0 = pi * mr, rows = j->m - i0 < mr ? j->m - i0 : mr;
    if (pi != packed) {
      pack_a16(j->a, j->rs_a, j->cs_a, i0, j->m, j->k0, j->kc, mr, pa);
      packed = pi;
    }
    const int64_t q0 = j->col_panels * g / j->col_groups;
    const int64_t q1 = j->col_panels * (g + 1) / j->col_groups;
    for (int64_t q = q0; q < q1; q++) {
      const int64_t jp = q * nr, cols = j->nc - jp < nr ? j->nc - jp : nr;
      j->cfg->fn(rows, cols, j->kc, pa, j->pb + q * nr * j->kc,
                 j->c + i0 * j->rs_c + (j->j0 + jp) * j->cs_c, j->rs_c, j->cs_c, j->k0 > 0);
    }
  }
}

/* C (float16) = A B summed in half, k >= 1. 0, or 1 when memory runs out. */
static int run_half(const tg_gemm_f16_config* cfg, int64_t m, int64_t n, int64_t k,
                    const uint16_t* a, int64_t rs_a, int64_t cs_a, const uint16_t* b,
                    int64_t rs_b, int64_t cs_b, uint16_t* c, int64_t rs_c, int64_t cs_c) {
  const double flops = 2.0 * (double) m * (double) n * (double) k;
  const int threads = flops < TG_F16_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();
  half_job j;
  memset(&j, 0, sizeof(j));
  j.cfg = cfg; j.a = a; j.rs_a = rs_a; j.cs_a = cs_a; j.m = m;
  j.b = b; j.rs_b = rs_b; j.cs_b = cs_b; j.c = c; j.rs_c = rs_c; j.cs_c = cs_c;
  j.panels = (m + cfg->mr - 1) / cfg->mr;
  atomic_init(&j.failed, 0);
  const int64_t kc_max = k < cfg->kc ? k : cfg->kc;
  /* column blocks of the block's bytes at this depth */
  const int64_t nc_blk = tg_gemm_lowp_nc_at_depth(cfg->nc, cfg->kc, k, cfg->nr);
  const int64_t nc_max = n < nc_blk ? n : nc_blk;
  const int64_t nc_pad = (nc_max + cfg->nr - 1) / cfg->nr * cfg->nr;
  j.pb = tg_workspace(TG_WS_GEMM_LP_B, (size_t) (nc_pad * kc_max) * sizeof(uint16_t));
  if (j.pb == NULL) return 1;
  for (int64_t j0 = 0; j0 < n; j0 += nc_blk) {
    const int64_t nc = n - j0 < nc_blk ? n - j0 : nc_blk;
    for (int64_t k0 = 0; k0 < k; k0 += cfg->kc) {
      j.k0 = k0; j.kc = k - k0 < cfg->kc ? k - k0 : cfg->kc; j.nc = nc; j.j0 = j0;
      j.col_panels = (nc + cfg->nr - 1) / cfg->nr;
      tg_parallel_run(threads < j.col_panels ? threads : (int) j.col_panels, half_pack_task, &j);
      /* Fewer row panels than threads: their column panels split too. */
      j.col_groups = j.panels >= threads ? 1 : (threads + j.panels - 1) / j.panels;
      if (j.col_groups > j.col_panels) j.col_groups = j.col_panels;
      const int64_t units = j.panels * j.col_groups;
      tg_parallel_run(threads < units ? threads : (int) units, half_rows_task, &j);
      if (atomic_load(&j.failed)) return 1;
    }
  }
  return 0;
}

int tilegen_gemm_f16_ex(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                        int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b,
                        int64_t cs_b, float beta, void* c, int c_dtype, int64_t rs_c,
                        int64_t cs_c, const float* bias, int64_t bias_stride,
                        tilegen_activation act, int accumulate) {
  const int bad = check_args(m, n, k, alpha, a, b, c, c_dtype, act);
  if (bad) return bad;
  if (accumulate != TILEGEN_ACCUMULATE_F32 && accumulate != TILEGEN_ACCUMULATE_F16) return -19;
  const tg_gemm_f16_config* cfg = tg_gemm_f16_cfg();
  const int reads = m > 0 && n > 0 && k > 0 && alpha != 0;
  /* float32 accumulation: asked for, or no native half kernel here, or no product to sum. */
  if (accumulate == TILEGEN_ACCUMULATE_F32 || cfg->fn == NULL || !reads)
    return tilegen_gemm_f16(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, c_dtype,
                            rs_c, cs_c, bias, bias_stride, act);
  if (c_dtype == TILEGEN_F16 && alpha == 1 && beta == 0 && bias == NULL &&
      act == TILEGEN_ACT_NONE)  /* the half sums are the result: straight into C */
    return run_half(cfg, m, n, k, a, rs_a, cs_a, b, rs_b, cs_b, c, rs_c, cs_c);
  /* The half product P in a scratch, then C = act(alpha P + beta C + bias) in float32,
     rounded once to C's type. */
  uint16_t* p = NULL;
  if (posix_memalign((void**) &p, 64, (size_t) m * (size_t) n * sizeof(uint16_t)) != 0)
    return 1;
  const int rc = run_half(cfg, m, n, k, a, rs_a, cs_a, b, rs_b, cs_b, p, n, 1);
  if (rc == 0) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t jj = 0; jj < n; jj++) {
        const int64_t at = i * rs_c + jj * cs_c;
        float r = alpha * f16_to_f32(p[i * n + jj]);
        if (beta != 0)
          r += beta * (c_dtype == TILEGEN_F32 ? ((float*) c)[at] : f16_to_f32(((uint16_t*) c)[at]));
        if (bias != NULL) r += bias[jj * bias_stride];
        r = (float) tg_activate(r, (int) act);
        if (c_dtype == TILEGEN_F32)
          ((float*) c)[at] = r;
        else
          ((uint16_t*) c)[at] = f32_to_f16(r);
      }
  }
  free(p);
  return rc;
}
