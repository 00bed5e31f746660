/* int8 GEMM: tilegen_gemm_s8 and tilegen_gemm_u8s8 run here. A is int8 or uint8, B int8, C
   int32, the sums exact (wrapping modulo 2^32 past 2^31, as NumPy's integer matmul). The driver
   packs A and B into panels of k groups of the kernel's KR (quads; SMMLA's octets: gemms8.py)
   -- A with its top bits flipped where the kernel reads its bytes with the other signedness,
   and 128 x B's column sums after each panel to take that back (run) -- blocks k by KC and
   columns by NC (from the core's caches, as the float GEMM does) and threads as the bfloat16
   driver does: B's block packed in parallel and the row panels split, or for a few rows B
   streamed through L2 per thread. Up to TG_S8_GEMV_ROWS rows of A (2 or 4) with row-major B
   take the GEMV kernel instead (gemvs8.py), once per row: B read in place, the columns split
   between threads. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_gemm.h"
#include "tg_gemm_s8.h"
#include "tg_threads.h"
#include "tg_workspace.h"
#include "tilegen.h"

#define TG_S8_PARALLEL_MIN_OPS 4.0e6  /* below this a product runs on one thread */
/* Up to this many rows of A, one GEMV per row (B read in place, once per row) beats packing B,
   which moves B's bytes about three times (read, packed, read again) and pays for a tile of at
   least 6 rows: up to 4 rows where B is packed by a C loop (AMD Zen 4, 4 x 4096 x 4096: 2.6 ms
   by rows, 6.4 ms packed), up to 2 where the ISA packs it in registers (cfg->packb; there 3 and
   4 rows take 1.4 and 1.7 ms packed against 1.7 and 2.3 by rows, 2 rows 1.3 against 1.0). */
#define TG_S8_GEMV_ROWS(cfg) ((cfg)->packb != NULL ? 2 : 4)
#define TG_S8_STREAM_PANELS 4         /* up to this many row panels, B is streamed */
#define TG_S8_STREAM_KC 512           /* its k block: a multiple of every KR; short (few rows) */

/* ---- dispatch ---- */

static tg_interned* interned;
static tg_gemm_s8_config first;
static _Atomic(const tg_gemm_s8_config*) current;

/* 1-byte values; KC a multiple of every kernel's KR (4 or 8) and of a tile kernel's A group
   (16 quads: 64, so no block but the last ends in a partial group). */
static void blocking(tg_gemm_s8_config* c) {
  tg_gemm_lowp_blocking(tg_caches(), c->mr, c->nr, 1, 64, 256, 8192, &c->kc, &c->nc);
}

static void publish(const tg_gemm_s8_config* c) {
  const tg_gemm_s8_config* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  tg_dispatch_report("gemm", NULL, "s8", c->isa, c->name);
}

#define TG_PICK(ISA, MR, NR, KR, PROD, OFFSET, AG, FN, PACKB, NAME)                         \
  if ((ISA) == isa && ((PROD) || want != NULL) && c->fn == NULL &&                          \
      (want == NULL || strcmp(NAME, want) == 0)) {                                          \
    c->isa = (ISA); c->fn = FN; c->mr = (MR); c->nr = (NR); c->kr = (KR);                   \
    c->a_offset = (OFFSET); c->a_group = (AG); c->packb = PACKB; c->name = NAME;            \
  }

static void pick(tg_gemm_s8_config* c, int isa, const char* want) {
  c->fn = NULL;
  TG_FOREACH_GEMMS8_UKERNEL_s8(TG_PICK)
  if (c->fn != NULL) blocking(c);
}

#define TG_PICK_GEMV(ISA, NR, KR, PROD, FN, NAME)                     \
  if ((ISA) == isa && (PROD) && c.gemv == NULL) {                     \
    c.gemv = FN; c.gemv_nr = (NR); c.gemv_name = NAME;                \
  }

void tg_gemm_s8_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  tg_gemm_s8_config c;
  memset(&c, 0, sizeof(c));
  for (int i = 0; i < n && c.fn == NULL; i++) pick(&c, order[i], NULL);
  /* The GEMV's own best ISA: a tier may have GEMM kernels and no GEMV of its own. */
  for (int i = 0; i < n && c.gemv == NULL; i++) {
    const int isa = order[i];
    TG_FOREACH_GEMVS8_UKERNEL_s8(TG_PICK_GEMV)
  }
  publish(&c);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: s8 gemm: %s, %s (KC %lld, NC %lld); m <= %d: %s\n",
            tg_isa_name_of(c.isa), c.name, (long long) c.kc, (long long) c.nc, TG_S8_GEMV_ROWS(&c),
            c.gemv_name != NULL ? c.gemv_name : "(blocked)");
}

const tg_gemm_s8_config* tg_gemm_s8_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}

int tilegen_x_set_gemm_s8_kernel(const char* name) {
  tg_dispatch_init();
  tg_dispatch_lock();
  tg_gemm_s8_config c = *atomic_load(&current);
  pick(&c, c.isa, name != NULL && name[0] != '\0' ? name : NULL);
  const int found = c.fn != NULL;
  if (found) publish(&c);
  tg_dispatch_unlock();
  return found ? 0 : -1;
}

const char* tilegen_x_gemm_s8_kernel_name(int i) {
  const int isa = tg_gemm_s8_cfg()->isa;
  const char* out = NULL;
#define TG_NTH(ISA, MR, NR, KR, PROD, OFFSET, AG, FN, PACKB, NAME) if ((ISA) == isa && i-- == 0) out = NAME;
  TG_FOREACH_GEMMS8_UKERNEL_s8(TG_NTH)
#undef TG_NTH
  return out;
}

const char* tilegen_x_gemm_s8_kernel(void) { return tg_gemm_s8_cfg()->name; }

/* ---- packing ---- */

/* A's rows [i0, i0 + MR) x k [k0, k0 + kc) into panel order: per k group, MR groups of kr
   bytes (row i's at kr i: for SMMLA's kr = 8 that pairs the rows in 16 bytes), each byte XOR
   0x80 (A + 128 as unsigned) when `offset`. Padding is 0 before the offset: past k it meets
   B's zero padding, and rows past m are never stored. */
static void pack_a(const int8_t* a, int64_t rs_a, int64_t cs_a, int64_t i0, int64_t m,
                   int64_t k0, int64_t kc, int mr, int kr, int group, int offset, int8_t* dst) {
  const int64_t rows = m - i0 < mr ? m - i0 : mr, kq = (kc + kr - 1) / kr;
  const int64_t kq_a = (kq + group - 1) / group * group;  /* a tile kernel's whole groups */
  const uint8_t flip = offset ? 0x80u : 0;
  for (int64_t p = 0; p < kq_a; p++) {
    const int64_t k = k0 + kr * p, have = kc - kr * p < kr ? kc - kr * p : kr;
    /* Row i's group p: per group of `group` k groups, MR rows of them (1: per k group). */
    int8_t* d = dst + ((p / group * mr) * group + p % group) * kr;
    for (int64_t i = 0; i < mr; i++, d += kr * group) {
      const int8_t* row = a + (i0 + i) * rs_a + k * cs_a;
      if (i < rows && have == kr && cs_a == 1) {
        for (int h = 0; h < kr; h += 4) {
          uint32_t v;
          memcpy(&v, row + h, 4);
          v ^= flip * 0x01010101u;
          memcpy(d + h, &v, 4);
        }
        continue;
      }
      for (int64_t h = 0; h < kr; h++)
        d[h] = (int8_t) ((uint8_t) (i < rows && h < have ? row[h * cs_a] : 0) ^ flip);
    }
  }
}

/* Four rows of B, nr columns, into quads (one 32-bit word per column, the first row in the
   low byte; column j's at d32[j * step]: step kr / 4, a quad of each column's group), and
   their column sums added into `sums`: separate arrays (restrict) and words, so that GCC
   vectorizes it. */
__attribute__((optimize("tree-vectorize")))
static void quads_of_rows(const int8_t* restrict r0, const int8_t* restrict r1,
                          const int8_t* restrict r2, const int8_t* restrict r3, int64_t nr,
                          int64_t step, uint32_t* restrict d32, uint32_t* restrict sums) {
  for (int64_t j = 0; j < nr; j++) {
    d32[j * step] = (uint32_t) (uint8_t) r0[j] | (uint32_t) (uint8_t) r1[j] << 8 |
                    (uint32_t) (uint8_t) r2[j] << 16 | (uint32_t) (uint8_t) r3[j] << 24;
    sums[j] += (uint32_t) (r0[j] + r1[j] + r2[j] + r3[j]);
  }
}

/* B's k [k0, k0 + kc) x the NR-wide column panels [q0, q1) of the columns from j0 (nc of them)
   into panels, one after another from dst: per k group NR groups of kr (column j's at kr j),
   then NR int32 corrections,
   `corr` x each column's sum (+128 where A was offset for unsigned bytes, -128 for uint8 A on
   signed ones, else 0; wrapping, as the kernels' sums do). k groups are the outer loop so that
   row-major B is read along its rows. Where the ISA has its own B packing (cfg->packb:
   templates/gemms8/pack.c.j2, four rows interleaved in registers) it takes row-major B's full
   quads of the whole panels, and this loop the rest (16 x 4096 x 4096 on one AMD Zen 4 core:
   5.4 ms -> 3.6 ms, packing B having taken most of it). */
static void pack_b(const tg_gemm_s8_config* cfg, const int8_t* b, int64_t rs_b, int64_t cs_b,
                   int64_t k0, int64_t kc, int64_t j0, int64_t nc, int64_t q0, int64_t q1,
                   int32_t corr, int8_t* dst) {
  const int nr = cfg->nr, kr = cfg->kr;
  const int64_t kq = (kc + kr - 1) / kr, panel = kr * nr * kq + 4 * nr;
  for (int64_t q = q0; q < q1; q++) memset(dst + (q - q0) * panel + kr * nr * kq, 0, 4 * (size_t) nr);
  /* Row-major B: the ISA's packing takes the full quads of the whole panels. */
  const int64_t q_done =
      tg_gemm_lowp_whole_panels(cfg->packb != NULL && cs_b == 1, nc, nr, q0, q1);
  const int64_t kq_done = q_done > q0 ? kc / kr : 0;
  if (kq_done > 0)
    cfg->packb(q_done - q0, kq_done, b + k0 * rs_b + j0 + q0 * nr, rs_b, dst, panel);
  for (int64_t p = 0; p < kq; p++) {
    const int64_t k = k0 + kr * p, have = kc - kr * p < kr ? kc - kr * p : kr;
    for (int64_t q = p < kq_done ? q_done : q0; q < q1; q++) {
      const int64_t jp = q * nr, cols = nc - jp < nr ? nc - jp : nr;
      const int8_t* r = b + k * rs_b + (j0 + jp) * cs_b;
      int8_t* d = dst + (q - q0) * panel + p * kr * nr;
      uint32_t* sums = (uint32_t*) (dst + (q - q0) * panel + kr * nr * kq);
      if (cols == nr && have == kr && cs_b == 1) {  /* row-major B: kr / 4 quads a column */
        for (int h = 0; h < kr; h += 4)
          quads_of_rows(r + h * rs_b, r + (h + 1) * rs_b, r + (h + 2) * rs_b,
                        r + (h + 3) * rs_b, nr, kr / 4, (uint32_t*) d + h / 4, sums);
        continue;
      }
      for (int64_t j = 0; j < nr; j++) {
        uint32_t s = 0;
        for (int64_t h = 0; h < kr; h++) {
          const int8_t v = j < cols && h < have ? r[h * rs_b + j * cs_b] : 0;
          d[kr * j + h] = v;
          s += (uint32_t) v;
        }
        sums[j] += s;
      }
    }
  }
  for (int64_t q = q0; q < q1; q++) {
    uint32_t* sums = (uint32_t*) (dst + (q - q0) * panel + kr * nr * kq);
    for (int64_t j = 0; j < nr; j++) sums[j] *= (uint32_t) corr;
  }
}

/* ---- the driver ---- */

/* Few rows: the registered kernel of the selected ISA that pads m the least, the selected one
   on ties. */
static tg_gemm_s8_config for_rows(const tg_gemm_s8_config* cfg, int64_t m) {
  tg_gemm_s8_config best = *cfg;
  if (m >= 4 * (int64_t) cfg->mr) return best;
  int64_t best_rows = (m + cfg->mr - 1) / cfg->mr * cfg->mr;
#define TG_ROWS(ISA, MR, NR, KR, PROD, OFFSET, AG, FN, PACKB, NAME)        \
  if ((ISA) == cfg->isa && (m + (MR) - 1) / (MR) * (MR) < best_rows) {     \
    best_rows = (m + (MR) - 1) / (MR) * (MR);                              \
    best.fn = FN; best.mr = (MR); best.nr = (NR); best.kr = (KR);          \
    best.a_offset = (OFFSET); best.a_group = (AG); best.packb = PACKB;     \
    best.name = NAME;                                                      \
  }
  TG_FOREACH_GEMMS8_UKERNEL_s8(TG_ROWS)
#undef TG_ROWS
  if (best.fn != cfg->fn) blocking(&best);
  return best;
}

typedef struct {
  const tg_gemm_s8_config* cfg;
  const int8_t* a;
  int64_t rs_a, cs_a, m;
  const int8_t* b;
  int64_t rs_b, cs_b, k, n;
  int8_t* pb;                 /* the packed B block (blocked form) */
  int64_t k0, kc, nc, j0;     /* the block (blocked form) */
  int32_t* c;
  int64_t rs_c, cs_c;
  int accumulate, accumulate0; /* accumulate0: the caller's, for the first k block */
  int flip;                   /* A packed with its top bits flipped (A +- 128) */
  int32_t corr;               /* pack_b's correction factor */
  int64_t panels, col_panels;
  int64_t stream_kc, stream_w;
  atomic_int failed;
} block_job;

static int64_t a_panel_bytes(const tg_gemm_s8_config* c, int64_t kc) {
  const int64_t kq = (kc + c->kr - 1) / c->kr;
  return (int64_t) c->kr * c->mr * ((kq + c->a_group - 1) / c->a_group * c->a_group);
}
static int64_t b_panel_bytes(const tg_gemm_s8_config* c, int64_t kc) {
  return (int64_t) c->kr * c->nr * ((kc + c->kr - 1) / c->kr) + 4 * c->nr;
}

static void multiply(const block_job* j, int64_t kc, int64_t j0, int64_t nc, const int8_t* pa,
                     int64_t p0, int64_t p1, const int8_t* pb, int64_t q0, int64_t q1, int acc) {
  const int mr = j->cfg->mr, nr = j->cfg->nr;
  const int64_t kq = (kc + j->cfg->kr - 1) / j->cfg->kr;
  for (int64_t pi = p0; pi < p1; pi++) {
    const int64_t i0 = pi * mr, rows = j->m - i0 < mr ? j->m - i0 : mr;
    for (int64_t q = q0; q < q1; q++) {
      const int64_t jp = q * nr, cols = nc - jp < nr ? nc - jp : nr;
      j->cfg->fn(rows, cols, kq, pa + (pi - p0) * a_panel_bytes(j->cfg, kc),
                 pb + (q - q0) * b_panel_bytes(j->cfg, kc),
                 j->c + i0 * j->rs_c + (j0 + jp) * j->cs_c, j->rs_c, j->cs_c, acc);
    }
  }
}

static void pack_task(void* ctx, int task, int ntasks) {
  block_job* j = ctx;
  const int64_t q0 = j->col_panels * task / ntasks, q1 = j->col_panels * (task + 1) / ntasks;
  pack_b(j->cfg, j->b, j->rs_b, j->cs_b, j->k0, j->kc, j->j0, j->nc, q0, q1, j->corr,
         j->pb + q0 * b_panel_bytes(j->cfg, j->kc));
}

static void rows_task(void* ctx, int task, int ntasks) {
  block_job* j = ctx;
  const int mr = j->cfg->mr;
  int8_t* pa = tg_workspace(TG_WS_GEMM_LP_A, (size_t) a_panel_bytes(j->cfg, j->kc));
  if (pa == NULL) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (int64_t pi = j->panels * task / ntasks; pi < j->panels * (task + 1) / ntasks; pi++) {
    pack_a(j->a, j->rs_a, j->cs_a, pi * mr, j->m, j->k0, j->kc, mr, j->cfg->kr, j->cfg->a_group,
           j->flip, pa);
    multiply(j, j->kc, j->j0, j->nc, pa, pi, pi + 1, j->pb, 0, j->col_panels, j->accumulate);
  }
}

static void stream_task(void* ctx, int task, int ntasks) {
  block_job* j = ctx;
  const int mr = j->cfg->mr, kr = j->cfg->kr;
  int8_t* pa = tg_workspace(TG_WS_GEMM_LP_A, (size_t) (j->panels * a_panel_bytes(j->cfg, j->stream_kc)));
  int8_t* pb = tg_workspace(TG_WS_GEMM_LP_B, (size_t) (j->stream_w * b_panel_bytes(j->cfg, j->stream_kc)));
  if (pa == NULL || pb == NULL) {
    atomic_store(&j->failed, 1);
    return;
  }
  const int64_t q0 = j->col_panels * task / ntasks, q1 = j->col_panels * (task + 1) / ntasks;
  for (int64_t k0 = 0; k0 < j->k; k0 += j->stream_kc) {
    const int64_t kc = j->k - k0 < j->stream_kc ? j->k - k0 : j->stream_kc;
    for (int64_t pi = 0; pi < j->panels; pi++)
      pack_a(j->a, j->rs_a, j->cs_a, pi * mr, j->m, k0, kc, mr, kr, j->cfg->a_group, j->flip,
             pa + pi * a_panel_bytes(j->cfg, kc));
    for (int64_t g = q0; g < q1; g += j->stream_w) {
      const int64_t g1 = q1 - g < j->stream_w ? q1 : g + j->stream_w;
      pack_b(j->cfg, j->b, j->rs_b, j->cs_b, k0, kc, 0, j->n, g, g1, j->corr, pb);
      multiply(j, kc, 0, j->n, pa, 0, j->panels, pb, g, g1, k0 == 0 ? j->accumulate0 : 1);
    }
  }
}

/* ---- few rows of A: a GEMV per row, B read in place ---- */

typedef struct {
  const tg_gemm_s8_config* cfg;
  int64_t n, k, rs_b;
  const int8_t* b;
  const int8_t* x;
  int x_unsigned, accumulate;
  int32_t* y;
  int64_t steps;              /* ceil(n / gemv_nr) */
  int64_t rows, rs_x, rs_y;   /* rows of A (each its own GEMV), their strides */
} gemv_job;

/* A contiguous share of the columns, whole steps of the kernel (the last share ends at n). */
static void gemv_task(void* ctx, int task, int ntasks) {
  const gemv_job* g = ctx;
  const int64_t nr = g->cfg->gemv_nr;
  const int64_t j0 = g->steps * task / ntasks * nr;
  int64_t j1 = g->steps * (task + 1) / ntasks * nr;
  if (j1 > g->n) j1 = g->n;
  for (int64_t i = 0; i < g->rows && j1 > j0; i++)
    g->cfg->gemv(j1 - j0, g->k, g->b + j0, g->rs_b, g->x + i * g->rs_x, g->x_unsigned,
                 g->y + i * g->rs_y + j0, g->accumulate);
}

/* C's rows (each contiguous) = A's rows times B (+ C), B row-major (cs_b == 1): no packing, B
   streamed once per row of A. */
static int gemv_run(const tg_gemm_s8_config* cfg, int64_t m, int64_t n, int64_t k,
                    const int8_t* a, int64_t rs_a, int64_t cs_a, int a_unsigned, const int8_t* b,
                    int64_t rs_b, int accumulate, int32_t* c, int64_t rs_c) {
  int8_t* copy = NULL;
  if (cs_a != 1 && k > 1) {  /* the kernel reads x contiguous */
    copy = malloc((size_t) (m * k));
    if (copy == NULL) return 1;
    for (int64_t i = 0; i < m; i++)
      for (int64_t r = 0; r < k; r++) copy[i * k + r] = a[i * rs_a + r * cs_a];
    a = copy;
    rs_a = k;
  }
  gemv_job g = {cfg, n, k, rs_b, b, a, a_unsigned, accumulate, c,
                (n + cfg->gemv_nr - 1) / cfg->gemv_nr, m, rs_a, rs_c};
  const double bytes = (double) m * (double) n * (double) k;  /* B's, once per row */
  const int threads = bytes < TG_GEMV_PARALLEL_MIN_BYTES ? 1 : tg_threads_max();
  tg_parallel_run(threads < g.steps ? threads : (int) g.steps, gemv_task, &g);
  free(copy);
  return 0;
}

/* a_unsigned: A's bytes are uint8. A kernel reads A's bytes unsigned (offset, VPDPBUSD) or
   signed; where that differs from A's type, A is packed with its top bits flipped -- int8 A as
   A + 128, uint8 A as A - 128 -- and 128 x B's column sums are taken back (+128 or -128). */
static int run(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t rs_a, int64_t cs_a,
               int a_unsigned, const int8_t* b, int64_t rs_b, int64_t cs_b, int accumulate,
               int32_t* c, int64_t rs_c, int64_t cs_c) {
  const tg_gemm_s8_config* selected = tg_gemm_s8_cfg();
  if (m <= TG_S8_GEMV_ROWS(selected) && cs_b == 1 && cs_c == 1 && selected->gemv != NULL)
    return gemv_run(selected, m, n, k, a, rs_a, cs_a, a_unsigned, b, rs_b, accumulate, c, rs_c);
  const tg_gemm_s8_config cfg = for_rows(selected, m);
  const int64_t panels = (m + cfg.mr - 1) / cfg.mr;
  const double ops = 2.0 * (double) m * (double) n * (double) k;
  const int threads = ops < TG_S8_PARALLEL_MIN_OPS ? 1 : tg_threads_max();
  block_job j;
  memset(&j, 0, sizeof(j));
  j.cfg = &cfg; j.a = a; j.rs_a = rs_a; j.cs_a = cs_a; j.m = m;
  j.b = b; j.rs_b = rs_b; j.cs_b = cs_b; j.k = k; j.n = n;
  j.c = c; j.rs_c = rs_c; j.cs_c = cs_c; j.accumulate0 = accumulate; j.panels = panels;
  j.flip = cfg.a_offset != a_unsigned;
  j.corr = !j.flip ? 0 : cfg.a_offset ? 128 : -128;
  atomic_init(&j.failed, 0);
  if (panels <= TG_S8_STREAM_PANELS) {
    j.stream_kc = k < TG_S8_STREAM_KC ? k : TG_S8_STREAM_KC;
    const int64_t w = tg_caches()->l2 / 2 / b_panel_bytes(&cfg, j.stream_kc);
    j.stream_w = w < 1 ? 1 : w;
    j.col_panels = (n + cfg.nr - 1) / cfg.nr;
    tg_parallel_run(threads < j.col_panels ? threads : (int) j.col_panels, stream_task, &j);
    return atomic_load(&j.failed);
  }
  const int64_t kc_max = k < cfg.kc ? k : cfg.kc;
  /* column blocks of the block's bytes at this depth */
  const int64_t nc_blk = tg_gemm_lowp_nc_at_depth(cfg.nc, cfg.kc, k, cfg.nr);
  const int64_t nc_max = n < nc_blk ? n : nc_blk;
  j.pb = tg_workspace(TG_WS_GEMM_LP_B,
                      (size_t) ((nc_max + cfg.nr - 1) / cfg.nr * b_panel_bytes(&cfg, kc_max)));
  if (j.pb == NULL) return 1;
  for (int64_t j0 = 0; j0 < n; j0 += nc_blk) {
    const int64_t nc = n - j0 < nc_blk ? n - j0 : nc_blk;
    for (int64_t k0 = 0; k0 < k; k0 += cfg.kc) {
      j.k0 = k0; j.kc = k - k0 < cfg.kc ? k - k0 : cfg.kc; j.nc = nc; j.j0 = j0;
      j.col_panels = (nc + cfg.nr - 1) / cfg.nr;
      j.accumulate = k0 == 0 ? accumulate : 1;
      tg_parallel_run(threads < j.col_panels ? threads : (int) j.col_panels, pack_task, &j);
      tg_parallel_run(threads < panels ? threads : (int) panels, rows_task, &j);
      if (atomic_load(&j.failed)) return 1;
    }
  }
  return 0;
}

static int entry(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t rs_a, int64_t cs_a,
                 int a_unsigned, const int8_t* b, int64_t rs_b, int64_t cs_b, int accumulate,
                 int32_t* c, int64_t rs_c, int64_t cs_c) {
  if (m < 0) return -1;
  if (n < 0) return -2;
  if (k < 0) return -3;
  const int reads = m > 0 && n > 0 && k > 0;
  if (reads && a == NULL) return -4;
  if (reads && b == NULL) return -7;
  if (m > 0 && n > 0 && c == NULL) return -11;
  if (m == 0 || n == 0) return 0;
  if (!reads) {  /* no product: C = 0, or C unchanged */
    if (!accumulate)
      for (int64_t i = 0; i < m; i++)
        for (int64_t jj = 0; jj < n; jj++) c[i * rs_c + jj * cs_c] = 0;
    return 0;
  }
  return run(m, n, k, a, rs_a, cs_a, a_unsigned, b, rs_b, cs_b, accumulate != 0, c, rs_c, cs_c);
}

int tilegen_gemm_s8(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t rs_a,
                    int64_t cs_a, const int8_t* b, int64_t rs_b, int64_t cs_b, int accumulate,
                    int32_t* c, int64_t rs_c, int64_t cs_c) {
  return entry(m, n, k, a, rs_a, cs_a, 0, b, rs_b, cs_b, accumulate, c, rs_c, cs_c);
}

int tilegen_gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t rs_a,
                      int64_t cs_a, const int8_t* b, int64_t rs_b, int64_t cs_b, int accumulate,
                      int32_t* c, int64_t rs_c, int64_t cs_c) {
  return entry(m, n, k, (const int8_t*) a, rs_a, cs_a, 1, b, rs_b, cs_b, accumulate, c, rs_c,
               cs_c);
}
