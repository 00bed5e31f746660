/* bfloat16 GEMM: tilegen_gemm_bf16 and OpenBLAS's sbgemm (in blas_abi.c) run here. A and B are
   bfloat16, products are summed in float32 and C is float32, or bfloat16 rounded once (to
   nearest, ties to even) from the float32 sum. The driver packs A and B into pair panels (the
   kernels' KR = 2: gemmbf16.py), blocks k by KC and columns by NC (from the core's caches, as
   the float GEMM does) and splits the row panels of each block across threads. One row of C
   from row-major B (x @ B: the decode shapes) instead takes a GEMV kernel that reads B in place
   (gemvbf16.py), the threads splitting the columns. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_activation.h"
#include "tg_gemm.h"
#include "tg_gemm_bf16.h"
#include "tg_threads.h"
#include "tg_workspace.h"
#include "tilegen.h"

#define TG_BF16_PARALLEL_MIN_FLOPS 4.0e6  /* below this a product runs on one thread */
#define TG_BF16_STREAM_PANELS 4  /* up to this many row panels, B is streamed (stream_task) */
#define TG_BF16_STREAM_KC 256    /* its k block: even; short, as few rows make C updates cheap */

/* ---- dispatch ---- */

static tg_interned* interned;
static tg_gemm_bf16_config first;
static _Atomic(const tg_gemm_bf16_config*) current;

/* 2-byte values; KC even (pairs) and a multiple of 16, and of A's groups (a tile kernel's 16
   pairs: no block then ends in a partial group but the last). */
static void blocking(tg_gemm_bf16_config* c) {
  const int step = 2 * c->a_group > 16 ? 2 * c->a_group : 16;
  tg_gemm_lowp_blocking(tg_caches(), c->mr, c->nr, 2, step, 64, 4096, &c->kc, &c->nc);
}

static void publish(const tg_gemm_bf16_config* c) {
  const tg_gemm_bf16_config* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  tg_dispatch_report("gemm", NULL, "bf16", c->isa, c->name);
}

#define TG_PICK(ISA, MR, NR, PROD, AG, FN, PACKB, NAME)                                     \
  if ((ISA) == isa && ((PROD) || want != NULL) && c->fn == NULL &&                          \
      (want == NULL || strcmp(NAME, want) == 0)) {                                          \
    c->isa = (ISA); c->fn = FN; c->mr = (MR); c->nr = (NR); c->a_group = (AG);               \
    c->packb = PACKB; c->name = NAME;                                                        \
  }

static void pick(tg_gemm_bf16_config* c, int isa, const char* want) {
  c->fn = NULL;
  TG_FOREACH_GEMMBF16_UKERNEL_bf16(TG_PICK)
  if (c->fn != NULL) blocking(c);
}

#define TG_PICK_GEMV(ISA, MR, NR, KR, PROD, FN, NAME)                                      \
  if ((ISA) == isa && (PROD) && (NR) > 1 && c->gemv == NULL) {                              \
    c->gemv = FN; c->gemv_nr = (NR); c->gemv_name = NAME;                                    \
  }
#define TG_PICK_GEMV_DOT(ISA, MR, NR, KR, PROD, FN, NAME)                                  \
  if ((ISA) == isa && (PROD) && (NR) == 1 && c->gemv_dot == NULL) {                         \
    c->gemv_dot = FN; c->gemv_mr = (MR); c->gemv_dot_name = NAME;                            \
  }

static void pick_gemv(tg_gemm_bf16_config* c, int isa) {
  TG_FOREACH_GEMVBF16_UKERNEL_bf16(TG_PICK_GEMV)
}

static void pick_gemv_dot(tg_gemm_bf16_config* c, int isa) {
  TG_FOREACH_GEMVBF16_UKERNEL_bf16(TG_PICK_GEMV_DOT)
}

void tg_gemm_bf16_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  tg_gemm_bf16_config c;
  memset(&c, 0, sizeof(c));
  for (int i = 0; i < n && c.fn == NULL; i++) pick(&c, order[i], NULL);
  for (int i = 0; i < n && c.gemv == NULL; i++) pick_gemv(&c, order[i]);
  for (int i = 0; i < n && c.gemv_dot == NULL; i++) pick_gemv_dot(&c, order[i]);
  publish(&c);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: bf16 gemm: %s, %s (KC %lld, NC %lld); m == 1: %s, %s\n",
            tg_isa_name_of(c.isa), c.name, (long long) c.kc, (long long) c.nc,
            c.gemv_name ? c.gemv_name : "none", c.gemv_dot_name ? c.gemv_dot_name : "none");
}

const tg_gemm_bf16_config* tg_gemm_bf16_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}

int tilegen_x_set_gemm_bf16_kernel(const char* name) {
  tg_dispatch_init();
  tg_dispatch_lock();
  tg_gemm_bf16_config c = *atomic_load(&current);
  pick(&c, c.isa, name != NULL && name[0] != '\0' ? name : NULL);
  const int found = c.fn != NULL;
  if (found) publish(&c);
  tg_dispatch_unlock();
  return found ? 0 : -1;
}

const char* tilegen_x_gemm_bf16_kernel_name(int i) {
  const int isa = tg_gemm_bf16_cfg()->isa;
  const char* out = NULL;
#define TG_NTH(ISA, MR, NR, PROD, AG, FN, PACKB, NAME) if ((ISA) == isa && i-- == 0) out = NAME;
  TG_FOREACH_GEMMBF16_UKERNEL_bf16(TG_NTH)
#undef TG_NTH
  return out;
}

const char* tilegen_x_gemm_bf16_kernel(void) { return tg_gemm_bf16_cfg()->name; }

/* ---- conversions ---- */

static inline float bf16_to_f32(uint16_t h) {
  const uint32_t b = (uint32_t) h << 16;
  float f;
  memcpy(&f, &b, sizeof(f));
  return f;
}

/* Round to nearest, ties to even; NaN stays a (quiet) NaN. */
static inline uint16_t f32_to_bf16(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof(b));
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t) ((b >> 16) | 0x40);
  b += 0x7FFFu + ((b >> 16) & 1);
  return (uint16_t) (b >> 16);
}

/* ---- packing ---- */

/* The pairs of A's panel for kc values of k, with its groups (a kernel's a_group) whole. */
static inline int64_t a_pairs(int64_t kc, int group) {
  return ((kc + 1) / 2 + group - 1) / group * group;
}

/* A tile kernel's panel (group > 1 pairs): per group, MR rows of `group` pairs (a tile's rows),
   the last group zero-padded; rows past m are zero. */
static void pack_a_grouped(const uint16_t* a, int64_t rs_a, int64_t cs_a, int64_t i0, int64_t rows,
                           int64_t k0, int64_t kc, int mr, int group, uint16_t* dst) {
  const int64_t kp = a_pairs(kc, group);
  for (int64_t g = 0; g < kp; g += group)
    for (int64_t i = 0; i < mr; i++, dst += 2 * group) {
      int64_t have = i < rows ? (kc - 2 * g < 2 * group ? kc - 2 * g : 2 * group) : 0;
      if (have < 0) have = 0;
      if (have > 0) {
        const uint16_t* row = a + (i0 + i) * rs_a + (k0 + 2 * g) * cs_a;
        if (cs_a == 1) {
          memcpy(dst, row, (size_t) have * sizeof(uint16_t));
        } else {
          for (int64_t q = 0; q < have; q++) dst[q] = row[q * cs_a];
        }
      }
      for (int64_t q = have; q < 2 * group; q++) dst[q] = 0;
    }
}

/* A's rows [i0, i0 + MR) x k [k0, k0 + kc) into pair panel order: per k pair, MR pairs (or, for
   a tile kernel, in groups: pack_a_grouped). Row-major A with a full panel copies each row's
   (k, k + 1) pair whole. */
static void pack_a(const uint16_t* a, int64_t rs_a, int64_t cs_a, int64_t i0, int64_t m,
                   int64_t k0, int64_t kc, int mr, int group, uint16_t* dst) {
  const int64_t rows = m - i0 < mr ? m - i0 : mr;
  if (group > 1) {
    pack_a_grouped(a, rs_a, cs_a, i0, rows, k0, kc, mr, group, dst);
    return;
  }
  if (cs_a == 1 && rows == mr) {
    const uint16_t* r = a + i0 * rs_a + k0;
    for (int64_t p = 0; p < kc / 2; p++, dst += 2 * mr)
      for (int64_t i = 0; i < mr; i++) memcpy(dst + 2 * i, r + i * rs_a + 2 * p, 4);
    if (kc % 2 == 0) return;
    k0 += kc - 1;  /* the odd last k: the general path below, one pair */
    kc = 1;
  }
  for (int64_t p = 0; p < (kc + 1) / 2; p++) {
    const int64_t k = k0 + 2 * p;
    const int second = 2 * p + 1 < kc;
    for (int64_t i = 0; i < mr; i++) {
      if (i < rows) {
        const uint16_t* row = a + (i0 + i) * rs_a;
        dst[2 * i] = row[k * cs_a];
        dst[2 * i + 1] = second ? row[(k + 1) * cs_a] : 0;
      } else {
        dst[2 * i] = dst[2 * i + 1] = 0;
      }
    }
    dst += 2 * mr;
  }
}

/* B's k [k0, k0 + kc) x the NR-wide column panels [q0, q1) of the columns from j0 (nc of
   them) into pair panels, one after another from dst: per k pair, NR (k, k + 1) pairs. The k
   pairs are the outer loop so that row-major B is read along its rows (a panel at a time would
   walk kc rows a page apart for 64 bytes each); full panels take branch-free paths, which GCC
   vectorizes: packing is the whole cost of a product with few rows. Where the ISA has its own B
   packing (cfg->packb: templates/gemmbf16/pack.c.j2, rows paired in registers) it takes
   row-major B's full pairs of the whole panels, and this loop the rest. */
__attribute__((optimize("tree-vectorize")))
static void pack_b(const tg_gemm_bf16_config* cfg, const uint16_t* b, int64_t rs_b,
                   int64_t cs_b, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int64_t q0,
                   int64_t q1, uint16_t* dst) {
  const int nr = cfg->nr;
  const int64_t kp = (kc + 1) / 2, panel = 2 * nr * kp;
  /* Row-major B: the ISA's packing takes the full pairs of the whole panels. */
  const int64_t q_done =
      tg_gemm_lowp_whole_panels(cfg->packb != NULL && cs_b == 1, nc, nr, q0, q1);
  const int64_t kp_done = q_done > q0 ? kc / 2 : 0;
  if (kp_done > 0)
    cfg->packb(q_done - q0, kp_done, b + k0 * rs_b + j0 + q0 * nr, rs_b, dst, panel);
  for (int64_t p = 0; p < kp; p++) {
    const int64_t k = k0 + 2 * p;
    const int second = 2 * p + 1 < kc;
    for (int64_t q = p < kp_done ? q_done : q0; q < q1; q++) {
      const int64_t jp = q * nr, cols = nc - jp < nr ? nc - jp : nr;
      const uint16_t* r0 = b + k * rs_b + (j0 + jp) * cs_b;
      const uint16_t* r1 = r0 + rs_b;
      uint16_t* d = dst + (q - q0) * panel + p * 2 * nr;
      uint32_t* d32 = (uint32_t*) d;  /* 4-byte aligned: every offset is whole pairs */
      if (cols == nr && second && cs_b == 1) {  /* row-major B: merge two rows */
        for (int64_t j = 0; j < nr; j++) d32[j] = (uint32_t) r0[j] | (uint32_t) r1[j] << 16;
      } else if (cols == nr && second && rs_b == 1) {  /* column-major B: pairs are adjacent */
        for (int64_t j = 0; j < nr; j++) memcpy(d32 + j, r0 + j * cs_b, sizeof(uint32_t));
      } else {
        for (int64_t j = 0; j < nr; j++) {
          d[2 * j] = j < cols ? r0[j * cs_b] : 0;
          d[2 * j + 1] = j < cols && second ? r1[j * cs_b] : 0;
        }
      }
    }
  }
}

/* ---- the driver ---- */

/* Few rows: the registered kernel of the selected ISA that pads m the least (a 14-row kernel
   computes 28 rows for m = 16, an 8-row one 16), the selected one on ties. */
static tg_gemm_bf16_config for_rows(const tg_gemm_bf16_config* cfg, int64_t m) {
  tg_gemm_bf16_config best = *cfg;
  if (m >= 4 * (int64_t) cfg->mr) return best;
  int64_t best_rows = (m + cfg->mr - 1) / cfg->mr * cfg->mr;
#define TG_ROWS(ISA, MR, NR, PROD, AG, FN, PACKB, NAME)                    \
  if ((ISA) == cfg->isa && (m + (MR) - 1) / (MR) * (MR) < best_rows) {     \
    best_rows = (m + (MR) - 1) / (MR) * (MR);                              \
    best.fn = FN; best.mr = (MR); best.nr = (NR); best.a_group = (AG);     \
    best.packb = PACKB; best.name = NAME;                                  \
  }
  TG_FOREACH_GEMMBF16_UKERNEL_bf16(TG_ROWS)
#undef TG_ROWS
  if (best.fn != cfg->fn) blocking(&best);
  return best;
}

typedef struct {
  const tg_gemm_bf16_config* cfg;
  const uint16_t* a;
  int64_t rs_a, cs_a, m;
  const uint16_t* b;
  int64_t rs_b, cs_b, k, n;
  uint16_t* pb;               /* the packed B block (blocked form) */
  int64_t k0, kc, nc, j0;     /* the block (blocked form) */
  float* c;
  int64_t rs_c, cs_c;
  float alpha, beta, beta0;   /* beta0: the caller's, for the first k block */
  int64_t panels, col_panels; /* row panels of MR; column panels of NR (of the block, or all) */
  int64_t stream_kc, stream_w; /* streamed form: k per block, column panels per packed group */
  atomic_int failed;
} block_job;

/* Row panels [p0, p1) of A's k block against the packed column panels [q0, q1) of B, whose
   panel q0 is at pb; pa holds the row panels from p0 on. */
static void multiply(const block_job* j, int64_t kc, int64_t j0, int64_t nc, const uint16_t* pa,
                     int64_t p0, int64_t p1, const uint16_t* pb, int64_t q0, int64_t q1,
                     float beta) {
  const int mr = j->cfg->mr, nr = j->cfg->nr;
  const int64_t kp = (kc + 1) / 2, kp_a = a_pairs(kc, j->cfg->a_group);
  for (int64_t pi = p0; pi < p1; pi++) {
    const int64_t i0 = pi * mr, rows = j->m - i0 < mr ? j->m - i0 : mr;
    for (int64_t q = q0; q < q1; q++) {
      const int64_t jp = q * nr, cols = nc - jp < nr ? nc - jp : nr;
      j->cfg->fn(rows, cols, kp, pa + (pi - p0) * 2 * mr * kp_a, pb + (q - q0) * 2 * nr * kp,
                 j->c + i0 * j->rs_c + (j0 + jp) * j->cs_c, j->rs_c, j->cs_c, j->alpha, beta);
    }
  }
}

/* Blocked form, many row panels: B's block is packed whole, its column panels split across
   threads (pack_task); then each thread takes row panels (rows_task). */
static void pack_task(void* ctx, int task, int ntasks) {
  block_job* j = ctx;
  const int64_t q0 = j->col_panels * task / ntasks, q1 = j->col_panels * (task + 1) / ntasks;
  pack_b(j->cfg, j->b, j->rs_b, j->cs_b, j->k0, j->kc, j->j0, j->nc, q0, q1,
         j->pb + q0 * 2 * j->cfg->nr * ((j->kc + 1) / 2));
}

static void rows_task(void* ctx, int task, int ntasks) {
  block_job* j = ctx;
  const int mr = j->cfg->mr;
  const int64_t kp_a = a_pairs(j->kc, j->cfg->a_group);
  uint16_t* pa = tg_workspace(TG_WS_GEMM_LP_A, (size_t) (2 * mr * kp_a) * sizeof(uint16_t));
  if (pa == NULL) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t pi = j->panels * task / ntasks; pi < j->panels * (task + 1) / ntasks; pi++) {
    pack_a(j->a, j->rs_a, j->cs_a, pi * mr, j->m, j->k0, j->kc, mr, j->cfg->a_group, pa);
    multiply(j, j->kc, j->j0, j->nc, pa, pi, pi + 1, j->pb, 0, j->col_panels, j->beta);
  }
}

/* Streamed form, few row panels: each thread takes a share of all column panels and, per short
   k block, packs A whole and B a group of column panels at a time (the group stays in L2, so
   B goes through memory once); short k blocks keep the rows a group reads few. */
static void stream_task(void* ctx, int task, int ntasks) {
  block_job* j = ctx;
  const int mr = j->cfg->mr, nr = j->cfg->nr;
  const int64_t kp = (j->stream_kc + 1) / 2, kp_a = a_pairs(j->stream_kc, j->cfg->a_group);
  uint16_t* pa = tg_workspace(TG_WS_GEMM_LP_A, (size_t) (j->panels * 2 * mr * kp_a) * sizeof(uint16_t));
  uint16_t* pb = tg_workspace(TG_WS_GEMM_LP_B, (size_t) (j->stream_w * 2 * nr * kp) * sizeof(uint16_t));
  if (pa == NULL || pb == NULL) {
    atomic_store(&j->failed, 1);
    return;
  }
  const int64_t q0 = j->col_panels * task / ntasks, q1 = j->col_panels * (task + 1) / ntasks;
  for (int64_t k0 = 0; k0 < j->k; k0 += j->stream_kc) {
    const int64_t kc = j->k - k0 < j->stream_kc ? j->k - k0 : j->stream_kc;
    for (int64_t pi = 0; pi < j->panels; pi++)
      pack_a(j->a, j->rs_a, j->cs_a, pi * mr, j->m, k0, kc, mr, j->cfg->a_group,
             pa + pi * 2 * mr * a_pairs(kc, j->cfg->a_group));
    for (int64_t g = q0; g < q1; g += j->stream_w) {
      const int64_t g1 = q1 - g < j->stream_w ? q1 : g + j->stream_w;
      pack_b(j->cfg, j->b, j->rs_b, j->cs_b, k0, kc, 0, j->n, g, g1, pb);
      multiply(j, kc, 0, j->n, pa, 0, j->panels, pb, g, g1, k0 == 0 ? j->beta0 : 1.0f);
    }
  }
}

/* One row of C, B read in place. Row-major B (axpy form): each thread a contiguous share of the
   columns, a multiple of the kernel's NR counted from the end of its head (the columns before
   B's first 64-byte line boundary, when B's rows are whole lines apart: gemvbf16's ABI), so
   that every column takes the same kernel path, and so gets the same bits, whatever the thread
   count. Column-major B (dot form): each thread a contiguous share of MR-column blocks (each
   column's sum is its own). */
typedef struct {
  tg_bf16_gemv_ukernel_fn fn;
  const uint16_t* b;
  int64_t ld_b, k, n, head, share;  /* ld_b: B's row stride (axpy), column stride (dot) */
  const uint16_t* x;
  float* y;
  int64_t inc_y;
  int mr;                           /* dot form: columns per call; 0: axpy form */
  float alpha, beta;
} gemv_job;

static void gemv_task(void* ctx, int task, int ntasks) {
  const gemv_job* g = ctx;
  (void) ntasks;
  const int64_t j0 = task == 0 ? 0 : g->head + task * g->share;
  int64_t j1 = g->head + (task + 1) * g->share;
  if (j1 > g->n) j1 = g->n;
  if (g->mr == 0) {
    if (j0 < j1) g->fn(j1 - j0, g->k, g->b + j0, g->ld_b, g->x, g->y + j0, 1, g->alpha, g->beta);
    return;
  }
  for (int64_t j = j0; j < j1; j += g->mr)
    g->fn(j1 - j < g->mr ? j1 - j : g->mr, g->k, g->b + j * g->ld_b, g->ld_b, g->x,
          g->y + j * g->inc_y, g->inc_y, g->alpha, g->beta);
}

static int run_gemv(const tg_gemm_bf16_config* cfg, int dot, int64_t n, int64_t k,
                    float alpha, const uint16_t* a, int64_t cs_a, const uint16_t* b,
                    int64_t rs_b, int64_t cs_b, float beta, float* c, int64_t cs_c) {
  uint16_t* xt = NULL;
  float* yt = NULL;
  if (cs_a != 1) {  /* x contiguous: A's row gathered */
    xt = malloc(sizeof(uint16_t) * (size_t) k);
    if (xt == NULL) return 1;
    for (int64_t q = 0; q < k; q++) xt[q] = a[q * cs_a];
  }
  if (cs_c != 1 && !dot) {  /* y contiguous: C's row through a scratch */
    yt = malloc(sizeof(float) * (size_t) n);
    if (yt == NULL) {
      free(xt);
      return 1;
    }
    for (int64_t j = 0; j < n; j++) yt[j] = beta == 0 ? 0.0f : c[j * cs_c];
  }
  gemv_job g = {dot ? cfg->gemv_dot : cfg->gemv, b, dot ? cs_b : rs_b, k, n, 0, n,
                xt ? xt : a, yt ? yt : c, yt ? 1 : cs_c, dot ? cfg->gemv_mr : 0, alpha, beta};
  const double bytes = 2.0 * (double) n * (double) k;
  const int nr = dot ? cfg->gemv_mr : cfg->gemv_nr;
  if (!dot && rs_b % 32 == 0) g.head = (int64_t) ((64 - (uintptr_t) b % 64) % 64) / 2;
  if (g.head > n) g.head = n;
  int threads = bytes < TG_GEMV_PARALLEL_MIN_BYTES ? 1 : tg_threads_max();
  const int64_t steps = (n - g.head + nr - 1) / nr;
  if (threads > steps) threads = steps < 1 ? 1 : (int) steps;
  g.share = steps == 0 ? nr : (steps + threads - 1) / threads * nr;
  threads = steps == 0 ? 1 : (int) ((n - g.head + g.share - 1) / g.share);
  tg_parallel_run(threads, gemv_task, &g);
  if (yt != NULL)
    for (int64_t j = 0; j < n; j++) c[j * cs_c] = yt[j];
  free(xt);
  free(yt);
  return 0;
}

/* C (float32) = alpha * A B + beta * C. 0, or 1 when memory runs out (C may be part written). */
static int run_f32(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                   int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b, int64_t cs_b,
                   float beta, float* c, int64_t rs_c, int64_t cs_c) {
  const tg_gemm_bf16_config* base = tg_gemm_bf16_cfg();
  const int axpy = cs_b == 1 && base->gemv != NULL, dot = rs_b == 1 && base->gemv_dot != NULL;
  if (m == 1 && (axpy || dot))
    return run_gemv(base, !axpy, n, k, alpha, a, cs_a, b, rs_b, cs_b, beta, c, cs_c);
  const double flops = 2.0 * (double) m * (double) n * (double) k;
  const int threads = flops < TG_BF16_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();
  const tg_gemm_bf16_config cfg = for_rows(base, m);
  const int64_t panels = (m + cfg.mr - 1) / cfg.mr;
  block_job j;
  memset(&j, 0, sizeof(j));
  j.cfg = &cfg; j.a = a; j.rs_a = rs_a; j.cs_a = cs_a; j.m = m;
  j.b = b; j.rs_b = rs_b; j.cs_b = cs_b; j.k = k; j.n = n;
  j.c = c; j.rs_c = rs_c; j.cs_c = cs_c; j.alpha = alpha; j.beta0 = beta; j.panels = panels;
  atomic_init(&j.failed, 0);
  if (panels <= TG_BF16_STREAM_PANELS) {
    /* A group of packed B panels in half of L2 at the short k block. */
    j.stream_kc = k < TG_BF16_STREAM_KC ? k : TG_BF16_STREAM_KC;
    const int64_t w = tg_caches()->l2 / 2 / (j.stream_kc * 2 * cfg.nr);
    j.stream_w = w < 1 ? 1 : w;
    j.col_panels = (n + cfg.nr - 1) / cfg.nr;
    tg_parallel_run(threads < j.col_panels ? threads : (int) j.col_panels, stream_task, &j);
    return atomic_load(&j.failed);
  }
  const int64_t kc_max = k < cfg.kc ? k : cfg.kc;
  /* column blocks of the block's bytes at this depth */
  const int64_t nc_blk = tg_gemm_lowp_nc_at_depth(cfg.nc, cfg.kc, k, cfg.nr);
  const int64_t nc_max = n < nc_blk ? n : nc_blk;
  const int64_t nc_pad = (nc_max + cfg.nr - 1) / cfg.nr * cfg.nr;
  j.pb = tg_workspace(TG_WS_GEMM_LP_B, (size_t) (nc_pad * 2 * ((kc_max + 1) / 2)) * sizeof(uint16_t));
  if (j.pb == NULL) return 1;
  for (int64_t j0 = 0; j0 < n; j0 += nc_blk) {
    const int64_t nc = n - j0 < nc_blk ? n - j0 : nc_blk;
    for (int64_t k0 = 0; k0 < k; k0 += cfg.kc) {
      j.k0 = k0; j.kc = k - k0 < cfg.kc ? k - k0 : cfg.kc; j.nc = nc; j.j0 = j0;
      j.col_panels = (nc + cfg.nr - 1) / cfg.nr;
      j.beta = k0 == 0 ? beta : 1.0f;
      tg_parallel_run(threads < j.col_panels ? threads : (int) j.col_panels, pack_task, &j);
      tg_parallel_run(threads < panels ? threads : (int) panels, rows_task, &j);
      if (atomic_load(&j.failed)) return 1;
    }
  }
  return 0;
}

static inline float activate(float x, int act) { return (float) tg_activate(x, act); }

/* bias (one value per column) and the activation over C. */
static void epilogue(float* c, int64_t m, int64_t n, int64_t rs_c, int64_t cs_c,
                     const float* bias, int64_t bias_stride, int act) {
  if (bias == NULL && act == TILEGEN_ACT_NONE) return;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float* o = c + i * rs_c + j * cs_c;
      *o = activate(bias ? *o + bias[j * bias_stride] : *o, act);
    }
}

int tilegen_gemm_bf16(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                      int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b,
                      int64_t cs_b, float beta, void* c, int c_dtype, int64_t rs_c,
                      int64_t cs_c, const float* bias, int64_t bias_stride,
                      tilegen_activation act) {
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (k < 0) return -3;
  const int reads = m > 0 && n > 0 && k > 0 && alpha != 0;
  if (reads && a == NULL) return -5;
  if (reads && b == NULL) return -8;
  if (m > 0 && n > 0 && c == NULL) return -12;
  if (c_dtype != TILEGEN_F32 && c_dtype != TILEGEN_BF16) return -13;
  if ((int) act < TILEGEN_ACT_NONE || (int) act > TILEGEN_ACT_SILU) return -18;
  if (m == 0 || n == 0) return 0;
  if (c_dtype == TILEGEN_F32) {
    float* cf = c;
    if (reads) {
      const int rc = run_f32(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, cf, rs_c, cs_c);
      if (rc) return rc;
    } else {  /* no product: C = beta * C (beta 0: zeros, C not read) */
      for (int64_t i = 0; i < m; i++)
        for (int64_t jj = 0; jj < n; jj++) {
          float* o = cf + i * rs_c + jj * cs_c;
          *o = beta == 0 ? 0.0f : beta * *o;
        }
    }
    epilogue(cf, m, n, rs_c, cs_c, bias, bias_stride, act);
    return 0;
  }
  /* bfloat16 C: the float32 result in a scratch, rounded once at the end. */
  float* t = malloc(sizeof(float) * (size_t) m * (size_t) n);
  if (t == NULL) return 1;
  uint16_t* ch = c;
  for (int64_t i = 0; i < m; i++)
    for (int64_t jj = 0; jj < n; jj++)
      t[i * n + jj] = beta == 0 ? 0.0f : beta * bf16_to_f32(ch[i * rs_c + jj * cs_c]);
  int rc = 0;
  if (reads) rc = run_f32(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, 1.0f, t, n, 1);
  if (rc == 0) {
    epilogue(t, m, n, n, 1, bias, bias_stride, act);
    for (int64_t i = 0; i < m; i++)
      for (int64_t jj = 0; jj < n; jj++) ch[i * rs_c + jj * cs_c] = f32_to_bf16(t[i * n + jj]);
  }
  free(t);
  return rc;
}

void tilegen_bf16_from_f32(int64_t n, const float* x, int64_t incx, uint16_t* y, int64_t incy) {
  for (int64_t i = 0; i < n; i++) y[i * incy] = f32_to_bf16(x[i * incx]);
}

void tilegen_f32_from_bf16(int64_t n, const uint16_t* x, int64_t incx, float* y, int64_t incy) {
  for (int64_t i = 0; i < n; i++) y[i * incy] = bf16_to_f32(x[i * incx]);
}
