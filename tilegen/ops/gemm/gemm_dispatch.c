/* The GEMM family's selection (its dispatch tables): built for the platform baseline, like the
   dispatcher, so it never executes an ISA it has not checked. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_gemm_dispatch.h"


#define TG_DTYPE_INDEX_f32 0
#define TG_DTYPE_INDEX_f64 1

/* Default (KC, NC) per ISA and dtype (0 f32, 1 f64), from the gemm family's table. */
static int64_t default_blocking[TG_ISA_COUNT][2][2];
static void load_default_blocking(void) {
#define TG_BLOCKING_ROW(ISA, DT, KC, NC) \
  default_blocking[ISA][TG_DTYPE_INDEX_##DT][0] = KC; default_blocking[ISA][TG_DTYPE_INDEX_##DT][1] = NC;
  TG_GEMM_BLOCKING(TG_BLOCKING_ROW)
#undef TG_BLOCKING_ROW
}

/* Built-in height of the row panels of an A streamed from beyond L2 under few columns of C,
   one prefetch stream per row: 8 measured best on AMD Zen 5 (4096x4096x16: 8-row panels 148
   GFLOP/s, 14-row 107), as OpenBLAS's gemv_n reads 8 columns; `tilegen tune` measures it per
   CPU. */
#define TG_STREAM_ROWS 8
#define TG_STREAM_ROWS_MAX 64

/* Built-in limit of the few-rows-times-big-B order (b_inner): f32, K = N = 4096, AMD Zen 3 6x16
   wins to 48 rows of C and ties at 96; Intel Xeon (model 167) AVX-512 14x32 wins at 16 and 48
   rows and loses 10-25% from 64 to 1024. `tilegen tune` measures it per CPU. */
#define TG_B_INNER_ROWS 48

/* Publishing: interned immutable tables behind an atomic pointer (dispatch.h). The first table
   of a dtype is kept in static storage, so selection needs no allocation to succeed. */
#define TG_DEFINE_PUBLISH(DT)                                                                   \
  static tg_interned* interned_##DT;                                                           \
  static tg_gemm_config_##DT first_##DT;                                                       \
  static _Atomic(const tg_gemm_config_##DT*) cur_##DT;                                         \
  /* Makes *c current. Caller holds the dispatch lock. Returns 0, or -1 (unchanged). */        \
  static int publish_##DT(const tg_gemm_config_##DT* c) {                                      \
    const tg_gemm_config_##DT* p = tg_intern(&interned_##DT, c, sizeof(*c));                   \
    if (p == NULL) {                                                                           \
      if (atomic_load(&cur_##DT) != NULL) return -1;                                           \
      first_##DT = *c;                                                                         \
      p = &first_##DT;                                                                         \
    }                                                                                          \
    atomic_store_explicit(&cur_##DT, p, memory_order_release);                                 \
    return 0;                                                                                  \
  }                                                                                            \
  static const tg_gemm_config_##DT* current_##DT(void) {                                       \
    return atomic_load_explicit(&cur_##DT, memory_order_acquire);                              \
  }
TG_DEFINE_PUBLISH(f32)
TG_DEFINE_PUBLISH(f64)

/* Fills cfg with the ISA's production kernels of one dtype: both A layouts, the packers, the
   GEMV kernel. `only` (a kernel name) or NULL: restrict that kernel's layout to tiles no taller.
   Returns 0 when the ISA has no usable GEMM kernels for the dtype. */
#define TG_DEFINE_FILL(DT)                                                                      \
  static void fill_set_##DT(tg_gemm_set_##DT* set, const tg_ukernel_##DT* k, int count,        \
                            int layout, int nr, int max_mr) {                                   \
    memset(set, 0, sizeof(*set));                                                              \
    for (int i = 0; i < count; i++)                                                            \
      if (k[i].layout == layout && k[i].nr == nr && k[i].mr <= max_mr && k[i].mr > set->mr)    \
        set->mr = k[i].mr;                                                                     \
    for (int r = 1; r <= set->mr; r++) {                                                       \
      int best = -1;                                                                           \
      for (int i = 0; i < count; i++)                                                          \
        if (k[i].layout == layout && k[i].nr == nr && k[i].mr >= r && k[i].mr <= set->mr &&    \
            (best < 0 || k[i].mr < k[best].mr)) best = i;                                      \
      set->by_rows[r] = k[best].fn;                                                            \
      set->packa_by_rows[r] = k[best].pa;                                                      \
      set->tile_mr[r] = k[best].mr;                                                            \
      set->name_by_rows[r] = k[best].name;                                                     \
      set->nr = nr;                                                                            \
      set->packb = k[best].pb;                                                                 \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* The rows and narrow sets with panels of at most stream_rows rows: the tallest registered \
     tile no taller (or the shortest), the same kernel for every smaller panel. */              \
  static void stream_set_##DT(tg_gemm_set_##DT* dst, const tg_gemm_set_##DT* src, int64_t cap) { \
    *dst = *src;                                                                               \
    if (src->mr == 0) return;                                                                  \
    int mr = 1;                                                                                \
    for (int r = 1; r <= src->mr && r <= cap; r++)                                            \
      if (src->tile_mr[r] == r) mr = r;                                                        \
    dst->mr = mr;                                                                              \
  }                                                                                            \
  static void stream_sets_##DT(tg_gemm_config_##DT* c) {                                       \
    stream_set_##DT(&c->rows_stream, &c->rows, c->stream_rows);                                \
    stream_set_##DT(&c->narrow_stream, &c->narrow, c->stream_rows);                            \
  }                                                                                            \
                                                                                               \
  static int fill_##DT(tg_gemm_config_##DT* cfg, int isa, const char* only) {                  \
    tg_ukernel_##DT k[64];                                                                     \
    int count = 0, nr = 0;                                                                     \
    TG_FOREACH_GEMM_UKERNEL_##DT(TG_COLLECT)                                                   \
    for (int i = 0; i < count; i++) if (k[i].layout == 0 && k[i].nr > nr) nr = k[i].nr;        \
    int limit[3] = {TG_MAX_MR, TG_MAX_MR, TG_MAX_MR}, found = only == NULL;                    \
    for (int i = 0; i < count && only; i++)                                                    \
      if (!strcmp(k[i].name, only)) {                                                          \
        limit[k[i].layout == 1 && k[i].nr != nr ? 2 : k[i].layout] = k[i].mr;                  \
        found = 1;                                                                             \
      }                                                                                        \
    if (!found) return 0;                                                                      \
    tg_gemm_config_##DT next;                                                                  \
    memset(&next, 0, sizeof(next));                                                            \
    next.isa = isa;                                                                            \
    fill_set_##DT(&next.packed, k, count, 0, nr, limit[0]);                                    \
    fill_set_##DT(&next.rows, k, count, 1, nr, limit[1]);                                      \
    fill_set_##DT(&next.narrow, k, count, 1, nr / 2, limit[2]);                                \
    if (next.packed.mr == 0) return 0; /* the packed layout is the one every ISA must have */  \
    for (int i = 0; i < count; i++)                                                            \
      if (k[i].layout == 0 && k[i].mr == next.packed.mr && k[i].nr == nr) {                   \
        next.packr = k[i].pr;                                                                  \
        next.epi = k[i].epi;                                                                   \
      }                                                                                        \
    TG_FOREACH_GEMV_UKERNEL_##DT(TG_COLLECT_GEMV)                                              \
    if (next.gemv == NULL || next.gemv_axpy == NULL) { /* missing forms: the portable ones */   \
      const int want = isa;                                                                    \
      isa = TG_ISA_SCALAR;                                                                     \
      TG_FOREACH_GEMV_UKERNEL_##DT(TG_COLLECT_GEMV)                                            \
      isa = want;                                                                              \
    }                                                                                          \
    next.stream_rows = cfg->isa == isa && cfg->stream_rows > 0 ? cfg->stream_rows : TG_STREAM_ROWS; \
    next.b_inner_rows = cfg->isa == isa && cfg->b_inner_rows > 0 ? cfg->b_inner_rows            \
                                                                : TG_B_INNER_ROWS;             \
    stream_sets_##DT(&next);                                                                   \
    next.l1d = tg_caches()->l1d;                                                               \
    next.l2 = tg_caches()->l2;                                                                 \
    next.kc = cfg->isa == isa ? cfg->kc : 0;  /* a re-fill keeps tuned blocking */             \
    next.nc = cfg->isa == isa ? cfg->nc : 0;                                                   \
    *cfg = next;                                                                               \
    return 1;                                                                                  \
  }

#define TG_DEFINE_UKERNEL_T(DT)                                                               \
  typedef struct {                                                                            \
    int mr, nr, layout;                                                                       \
    tg_##DT##_gemm_ukernel_fn fn;                                                             \
    tg_##DT##_packa_fn pa;                                                                    \
    tg_##DT##_packr_fn pr;                                                                    \
    tg_##DT##_packb_fn pb;                                                                    \
    tg_##DT##_epi_fn epi;                                                                     \
    const char* name;                                                                         \
  } tg_ukernel_##DT;
TG_DEFINE_UKERNEL_T(f32)
TG_DEFINE_UKERNEL_T(f64)

#define TG_COLLECT(ISA, MR, NR, U, EPI, PROD, LAYOUT, FN, PA, PR, PB, EPIFN, NAME)           \
  if ((ISA) == isa && (PROD) && (EPI) == 0u && count < 64 && (MR) <= TG_MAX_MR) {            \
    k[count] = (__typeof__(k[0])){(MR), (NR), (LAYOUT), FN, PA, PR, PB, EPIFN, NAME};        \
    count++;                                                                                  \
  }

#define TG_COLLECT_GEMV(ISA, MR, NR, KR, PROD, FN, NAME)                                      \
  if ((ISA) == isa && (PROD) && (NR) == 1 && next.gemv == NULL) {                            \
    next.gemv = FN; next.gemv_mr = (MR); next.gemv_name = NAME;                              \
  }                                                                                           \
  if ((ISA) == isa && (PROD) && (NR) > 1 && next.gemv_axpy == NULL) {                        \
    next.gemv_axpy = FN; next.gemv_axpy_name = NAME;                                         \
  }

TG_DEFINE_FILL(f32)
TG_DEFINE_FILL(f64)
#undef TG_COLLECT
#undef TG_COLLECT_GEMV

/* The built-in blocking from this core's caches, below the family's KC and 4x its NC. The
   kernel's tile does enough arithmetic per operand that A's panel can stream from L2 and the B
   block from L3 (a 14x16 float64 tile needs 184 bytes a k step, 28 FMA cycles): what the
   blocks must amortise is C's tile, loaded and stored once per KC block, and A's panel, copied
   once per NC block. So A's MR x KC panel takes at most a quarter of L2, and the KC x NC block
   of B the smaller of 4 x L2 and an eighth of L3 (L3 is shared; where none is reported, half of
   L2). AMD Zen 4 (32 KiB L1d, 1 MiB L2, 32 MiB L3), 1 thread: float32 4096^3 KC 256 NC 512
   (A in 3/4 of L1, B in half of L2) 101 GFLOP/s, KC 1024 NC 512 108, NC 1024 109; float64
   2048^3 KC 216 NC 288 49, KC 1024 NC 256 53, NC 512 54. */
#define TG_DEFINE_CACHE_BLOCKING(DT, IDX, T)                                                \
  static void cache_blocking_##DT(const tg_gemm_config_##DT* cfg, int64_t* kc, int64_t* nc) { \
    const int64_t* d = default_blocking[cfg->isa][IDX], sz = (int64_t) sizeof(T);           \
    const int64_t kc_l2 = cfg->l2 / 4 / (cfg->packed.mr * sz) / 8 * 8;                     \
    *kc = kc_l2 >= d[0] ? d[0] : kc_l2 < 64 ? 64 : kc_l2;  /* short k loops cost more */     \
    const int64_t l3 = tg_caches()->l3;                                                    \
    const int64_t b_max = l3 <= 0 ? cfg->l2 / 2 : l3 / 8 < 4 * cfg->l2 ? l3 / 8 : 4 * cfg->l2; \
    const int64_t nc_b = b_max / (*kc * sz);                                               \
    *nc = nc_b < d[1] * 4 ? nc_b : d[1] * 4;                                               \
  }
TG_DEFINE_CACHE_BLOCKING(f32, 0, float)
TG_DEFINE_CACHE_BLOCKING(f64, 1, double)

/* Fills kc/nc from the cache-derived defaults where unset (0) and keeps them sane. */
#define TG_DEFINE_APPLY_BLOCKING(DT)                                                        \
  static void apply_blocking_##DT(tg_gemm_config_##DT* cfg, int64_t kc, int64_t nc) {      \
    int64_t d[2];                                                                          \
    cache_blocking_##DT(cfg, &d[0], &d[1]);                                                \
    cfg->kc = kc > 0 ? kc : (cfg->kc > 0 ? cfg->kc : d[0]);                                \
    nc = nc > 0 ? nc : (cfg->nc > 0 ? cfg->nc : d[1]);                                     \
    nc = nc / cfg->packed.nr * cfg->packed.nr;                                             \
    cfg->nc = nc < cfg->packed.nr ? cfg->packed.nr : nc;                                   \
  }
TG_DEFINE_APPLY_BLOCKING(f32)
TG_DEFINE_APPLY_BLOCKING(f64)

/* The best candidate ISA with production kernels for the dtype. */
#define TG_DEFINE_SELECT(DT)                                                                 \
  static void select_##DT(const int* order, int n) {                                       \
    tg_gemm_config_##DT c;                                                                 \
    memset(&c, 0, sizeof(c));                                                              \
    for (int i = 0; i < n; i++)                                                            \
      if (fill_##DT(&c, order[i], NULL)) {                                                 \
        apply_blocking_##DT(&c, 0, 0);                                                     \
        publish_##DT(&c);                                                                  \
        return;                                                                            \
      }                                                                                    \
  }
TG_DEFINE_SELECT(f32)
TG_DEFINE_SELECT(f64)

static void report_choice(void) {
  tg_dispatch_report("gemm", NULL, "f32", current_f32()->isa,
                     current_f32()->packed.name_by_rows[current_f32()->packed.mr]);
  tg_dispatch_report("gemm", NULL, "f64", current_f64()->isa,
                     current_f64()->packed.name_by_rows[current_f64()->packed.mr]);
  if (!tg_dispatch_verbose()) return;
  const tg_gemm_config_f32* c32 = current_f32();
  const tg_gemm_config_f64* c64 = current_f64();
  fprintf(stderr, "tilegen: f32 gemm: %s, %s / %s (KC=%lld NC=%lld); gemv %s / %s\n",
          tg_isa_name_of(c32->isa), c32->packed.name_by_rows[c32->packed.mr],
          c32->rows.mr ? c32->rows.name_by_rows[c32->rows.mr] : "-",
          (long long) c32->kc, (long long) c32->nc, c32->gemv_name, c32->gemv_axpy_name);
  fprintf(stderr, "tilegen: f64 gemm: %s, %s / %s (KC=%lld NC=%lld); gemv %s / %s\n",
          tg_isa_name_of(c64->isa), c64->packed.name_by_rows[c64->packed.mr],
          c64->rows.mr ? c64->rows.name_by_rows[c64->rows.mr] : "-",
          (long long) c64->kc, (long long) c64->nc, c64->gemv_name, c64->gemv_axpy_name);
}

void tg_gemm_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  load_default_blocking();
  select_f32(order, n);
  select_f64(order, n);
  report_choice();
}

const tg_gemm_config_f32* tg_gemm_cfg_f32(void) {
  tg_dispatch_init();
  return current_f32();
}

const tg_gemm_config_f64* tg_gemm_cfg_f64(void) {
  tg_dispatch_init();
  return current_f64();
}

/* ---- introspection and tuning hooks ---- */

int tilegen_x_gemm_isa(int dtype) {
  return dtype == 0 ? tg_gemm_cfg_f32()->isa : tg_gemm_cfg_f64()->isa;
}

#define TG_PICK_SET(c, layout) \
  ((layout) == 2 ? &(c)->narrow : (layout) == 1 ? &(c)->rows : &(c)->packed)

void tilegen_x_gemm_tile(int dtype, int layout, int* mr, int* nr) {
  if (dtype == 0) {
    const tg_gemm_set_f32* st = TG_PICK_SET(tg_gemm_cfg_f32(), layout);
    *mr = st->mr;
    *nr = st->nr;
  } else {
    const tg_gemm_set_f64* st = TG_PICK_SET(tg_gemm_cfg_f64(), layout);
    *mr = st->mr;
    *nr = st->nr;
  }
}

const char* tilegen_x_gemm_kernel(int dtype, int layout, int rows) {
  if (dtype == 0) {
    const tg_gemm_set_f32* st = TG_PICK_SET(tg_gemm_cfg_f32(), layout);
    return st->mr && rows >= 0 && rows <= st->mr ? st->name_by_rows[rows ? rows : st->mr] : NULL;
  }
  const tg_gemm_set_f64* st = TG_PICK_SET(tg_gemm_cfg_f64(), layout);
  return st->mr && rows >= 0 && rows <= st->mr ? st->name_by_rows[rows ? rows : st->mr] : NULL;
}

void tilegen_x_gemm_blocking(int dtype, int64_t* kc, int64_t* nc) {
  if (dtype == 0) { const tg_gemm_config_f32* c = tg_gemm_cfg_f32(); *kc = c->kc; *nc = c->nc; }
  else { const tg_gemm_config_f64* c = tg_gemm_cfg_f64(); *kc = c->kc; *nc = c->nc; }
}

int tilegen_x_set_gemm_blocking(int dtype, int64_t kc, int64_t nc) {
  if (kc > (1 << 16) || nc > (1 << 24)) return -1;
  int rc;
  tg_dispatch_lock();
  if (dtype == 0) {
    tg_gemm_config_f32 c = *current_f32();
    apply_blocking_f32(&c, kc, nc);
    rc = publish_f32(&c);
  } else {
    tg_gemm_config_f64 c = *current_f64();
    apply_blocking_f64(&c, kc, nc);
    rc = publish_f64(&c);
  }
  tg_dispatch_unlock();
  return rc;
}

int tilegen_x_set_gemm_main_kernel(int dtype, const char* name) {
  int ok;
  tg_dispatch_lock();
  if (dtype == 0) {
    tg_gemm_config_f32 c = *current_f32();
    ok = fill_f32(&c, c.isa, name);
    if (ok) { apply_blocking_f32(&c, 0, 0); ok = publish_f32(&c) == 0; }
  } else {
    tg_gemm_config_f64 c = *current_f64();
    ok = fill_f64(&c, c.isa, name);
    if (ok) { apply_blocking_f64(&c, 0, 0); ok = publish_f64(&c) == 0; }
  }
  if (ok) report_choice();
  tg_dispatch_unlock();
  return ok ? 0 : -1;
}

/* Getter and setter of a tuned count in the configuration (0 restores the built-in value);
   REFRESH(DT, cfg) re-derives what depends on it. */
#define TG_DEFINE_TUNED_COUNT(NAME, BUILTIN, MAX, REFRESH)                                   \
  int64_t tilegen_x_gemm_##NAME(int dtype) {                                                 \
    return dtype == 0 ? tg_gemm_cfg_f32()->NAME : tg_gemm_cfg_f64()->NAME;                   \
  }                                                                                          \
  int tilegen_x_set_gemm_##NAME(int dtype, int64_t value) {                                  \
    if (value < 0 || value > (MAX)) return -1;                                               \
    int rc;                                                                                  \
    tg_dispatch_lock();                                                                      \
    if (dtype == 0) {                                                                        \
      tg_gemm_config_f32 c = *current_f32();                                                 \
      c.NAME = value ? value : (BUILTIN);                                                    \
      REFRESH(f32, &c);                                                                      \
      rc = publish_f32(&c);                                                                  \
    } else {                                                                                 \
      tg_gemm_config_f64 c = *current_f64();                                                 \
      c.NAME = value ? value : (BUILTIN);                                                    \
      REFRESH(f64, &c);                                                                      \
      rc = publish_f64(&c);                                                                  \
    }                                                                                        \
    tg_dispatch_unlock();                                                                    \
    return rc;                                                                               \
  }
#define TG_REFRESH_NOTHING(DT, cfg) ((void) (cfg))
#define TG_REFRESH_STREAM_SETS(DT, cfg) stream_sets_##DT(cfg)

TG_DEFINE_TUNED_COUNT(stream_rows, TG_STREAM_ROWS, TG_STREAM_ROWS_MAX, TG_REFRESH_STREAM_SETS)
TG_DEFINE_TUNED_COUNT(b_inner_rows, TG_B_INNER_ROWS, TG_B_INNER_ROWS_MAX, TG_REFRESH_NOTHING)

const char* tilegen_x_gemv_kernel(int dtype, int form) {
  if (dtype == 0) return form ? tg_gemm_cfg_f32()->gemv_axpy_name : tg_gemm_cfg_f32()->gemv_name;
  return form ? tg_gemm_cfg_f64()->gemv_axpy_name : tg_gemm_cfg_f64()->gemv_name;
}

