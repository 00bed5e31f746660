/* The convolution families' selection (conv and dwconv dispatch tables): built for the
   platform baseline, like the dispatcher, so it never executes an ISA it has not checked. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tg_conv.h"

static tg_interned* interned;
static tg_conv_config first;
static _Atomic(const tg_conv_config*) current;
/* The tallest main tile the conv kernels may use, per layout (0 channels last, 1 channel
   first; 0: no limit): `tilegen tune` may find a shorter tile faster on a core whose load
   ports or L1 favour fewer accumulators. Changed under the dispatch lock. */
static int mr_cap[2];

/* Makes *c current. Caller holds the dispatch lock. Returns 0, or -1 (unchanged). */
static int publish(const tg_conv_config* c) {
  const tg_conv_config* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return -1;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  return 0;
}

/* One shape's kernels: for each pixel count r <= the tallest tile, the smallest tile >= r, and
   what it computes for r: round_up(r, its step), at most its MR. */
#define TG_FILL_BY_ROWS(SHAPE, BY_ROWS, TILES, STEPS, FNS, NAMES, COUNT)               \
  do {                                                                                 \
    (SHAPE)->mr = 0;                                                                   \
    for (int q = 0; q < (COUNT); q++)                                                  \
      if ((TILES)[q] > (SHAPE)->mr) { (SHAPE)->mr = (TILES)[q]; (SHAPE)->name = (NAMES)[q]; } \
    for (int r = 1; r <= (SHAPE)->mr; r++) {                                           \
      int best = -1;                                                                   \
      for (int q = 0; q < (COUNT); q++)                                                \
        if ((TILES)[q] >= r && (best < 0 || (TILES)[q] < (TILES)[best])) best = q;     \
      (SHAPE)->BY_ROWS[r] = (FNS)[best];                                               \
      const int reach = (r + (STEPS)[best] - 1) / (STEPS)[best] * (STEPS)[best];        \
      (SHAPE)->tile_mr[r] = reach < (TILES)[best] ? reach : (TILES)[best];             \
    }                                                                                  \
  } while (0)

typedef struct {
  int kh, kw, stride, fixed_c, layout, mr, nr, lanes;
  tg_f32_conv_ukernel_fn fn;
  tg_f32_conv_nchw_ukernel_fn nchw_fn;
  const char* name;
} conv_row;

typedef struct {
  int kh, kw, stride, layout, d1, out_rows, mr, nr, step;
  tg_f32_dwconv_ukernel_fn fn;
  tg_f32_dwconv_nchw_ukernel_fn nchw_fn;
  const char* name;
} dw_row;

#define TG_COLLECT_CONV(ISA, KH, KW, S, FC, LAYOUT, MR, NR, VL, PROD, FN, NCHW_FN, NAME) \
  if ((ISA) == isa && (PROD) && count < 256 && (MR) <= TG_CONV_MAX_MR &&                 \
      (!mr_cap[(LAYOUT) != 0] || (MR) <= mr_cap[(LAYOUT) != 0])) {                        \
    rows[count] = (conv_row){(KH), (KW), (S), (FC), (LAYOUT), (MR), (NR), (VL), FN, NCHW_FN, NAME}; \
    count++;                                                                             \
  }

#define TG_COLLECT_DW(ISA, KH, KW, S, LAYOUT, D1, ROWS, MR, NR, STEP, PROD, FN, NCHW_FN, NAME) \
  if ((ISA) == isa && (PROD) && count < 256 && (MR) <= TG_CONV_MAX_MR) {                 \
    rows[count] = (dw_row){(KH), (KW), (S), (LAYOUT), (D1), (ROWS), (MR), (NR), (STEP), FN,    \
                           NCHW_FN, NAME};                                               \
    count++;                                                                             \
  }

/* The ISA's production conv kernels grouped by shape; 0 when it has none (or no 1x1). */
static int fill_conv(tg_conv_config* cfg, int isa) {
  conv_row rows[256];
  int count = 0, has_1x1 = 0;
  TG_FOREACH_CONV_UKERNEL_f32(TG_COLLECT_CONV)
  cfg->nshapes = 0;
  cfg->nr = cfg->nchw_nr = cfg->nchw_lanes = 0;
  for (int i = 0; i < count; i++) {
    const conv_row* k = &rows[i];
    has_1x1 |= k->kh == 1 && k->kw == 1 && k->stride == 1 && !k->fixed_c && !k->layout;
    if (k->layout) {
      cfg->nchw_nr = k->nr;
      cfg->nchw_lanes = k->lanes;
    } else {
      cfg->nr = k->nr;
    }
    if (tg_conv_find(cfg, k->kh, k->kw, k->stride, k->fixed_c, k->layout) ||
        cfg->nshapes == TG_CONV_MAX_SHAPES)
      continue;
    tg_conv_shape* sh = &cfg->shapes[cfg->nshapes++];
    memset(sh, 0, sizeof(*sh));
    sh->kh = k->kh; sh->kw = k->kw; sh->stride = k->stride;
    sh->fixed_c = k->fixed_c; sh->layout = k->layout;
    int tiles[256], n = 0;
    tg_f32_conv_ukernel_fn fns[256];
    tg_f32_conv_nchw_ukernel_fn nchw_fns[256];
    const char* names[256];
    for (int q = i; q < count; q++)
      if (rows[q].kh == sh->kh && rows[q].kw == sh->kw && rows[q].stride == sh->stride &&
          rows[q].fixed_c == sh->fixed_c && rows[q].layout == sh->layout) {
        tiles[n] = rows[q].mr; fns[n] = rows[q].fn; nchw_fns[n] = rows[q].nchw_fn;
        names[n] = rows[q].name; n++;
      }
    if (sh->layout) TG_FILL_BY_ROWS(sh, nchw_by_rows, tiles, tiles, nchw_fns, names, n);
    else TG_FILL_BY_ROWS(sh, by_rows, tiles, tiles, fns, names, n);
  }
  cfg->isa = isa;
  return has_1x1;
}

static int fill_dwconv(tg_conv_config* cfg, int isa) {
  dw_row rows[256];
  int count = 0;
  TG_FOREACH_DWCONV_UKERNEL_f32(TG_COLLECT_DW)
  cfg->dw_nshapes = 0;
  cfg->dw_nr = cfg->dw_nchw_nr = 0;
  for (int i = 0; i < count; i++) {
    const dw_row* k = &rows[i];
    if (k->layout) cfg->dw_nchw_nr = k->nr; else cfg->dw_nr = k->nr;
    if (tg_dwconv_find(cfg, k->kh, k->kw, k->stride, k->layout, k->d1) ||
        cfg->dw_nshapes == TG_CONV_MAX_SHAPES)
      continue;
    tg_dwconv_shape* sh = &cfg->dw_shapes[cfg->dw_nshapes++];
    memset(sh, 0, sizeof(*sh));
    sh->kh = k->kh; sh->kw = k->kw; sh->stride = k->stride; sh->layout = k->layout;
    sh->d1 = k->d1;
    sh->out_rows = k->out_rows;
    int tiles[256], steps[256], n = 0;
    tg_f32_dwconv_ukernel_fn fns[256];
    tg_f32_dwconv_nchw_ukernel_fn nchw_fns[256];
    const char* names[256];
    for (int q = i; q < count; q++)
      if (rows[q].kh == sh->kh && rows[q].kw == sh->kw && rows[q].stride == sh->stride &&
          rows[q].layout == sh->layout && rows[q].d1 == sh->d1) {
        tiles[n] = rows[q].mr; steps[n] = rows[q].step; fns[n] = rows[q].fn;
        nchw_fns[n] = rows[q].nchw_fn; names[n] = rows[q].name; n++;
        if (rows[q].out_rows < sh->out_rows) sh->out_rows = rows[q].out_rows;  /* all serve it */
      }
    if (sh->layout) TG_FILL_BY_ROWS(sh, nchw_by_rows, tiles, steps, nchw_fns, names, n);
    else TG_FILL_BY_ROWS(sh, by_rows, tiles, steps, fns, names, n);
  }
  cfg->dw_isa = isa;
  return count > 0;
}

#undef TG_COLLECT_CONV
#undef TG_COLLECT_DW

const tg_conv_shape* tg_conv_find(const tg_conv_config* cfg, int kh, int kw, int stride,
                                  int fixed_c, int layout) {
  for (int s = 0; s < cfg->nshapes; s++) {
    const tg_conv_shape* sh = &cfg->shapes[s];
    if (sh->kh == kh && sh->kw == kw && sh->stride == stride && sh->fixed_c == fixed_c &&
        sh->layout == layout)
      return sh;
  }
  return NULL;
}

const tg_dwconv_shape* tg_dwconv_find(const tg_conv_config* cfg, int kh, int kw, int stride,
                                      int layout, int d1) {
  for (int s = 0; s < cfg->dw_nshapes; s++) {
    const tg_dwconv_shape* sh = &cfg->dw_shapes[s];
    if (sh->kh == kh && sh->kw == kw && sh->stride == stride && sh->layout == layout &&
        sh->d1 == d1)
      return sh;
  }
  return NULL;
}

/* The main kernel of the most common shape, for the report: 3x3 stride 1, else 1x1. */
static const char* headline(const tg_conv_config* c) {
  const tg_conv_shape* s = tg_conv_find(c, 3, 3, 1, 0, 0);
  if (s == NULL) s = tg_conv_find(c, 1, 1, 1, 0, 0);
  return s ? s->name : "-";
}

static const char* dw_headline(const tg_conv_config* c) {
  const tg_dwconv_shape* s = tg_dwconv_find(c, 3, 3, 1, 0, 1);
  if (s == NULL) s = tg_dwconv_find(c, 3, 3, 1, 0, 0);
  if (s == NULL && c->dw_nshapes) s = &c->dw_shapes[0];
  return s ? s->name : "-";
}

static void report(const tg_conv_config* cur) {
  tg_dispatch_report("conv2d", NULL, "f32", cur->isa, headline(cur));
  tg_dispatch_report("conv2d", "depthwise", "f32", cur->dw_isa, dw_headline(cur));
}

void tg_conv_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  tg_conv_config c;
  memset(&c, 0, sizeof(c));
  for (int i = 0; i < n; i++)
    if (fill_conv(&c, order[i])) break;
  for (int i = 0; i < n; i++)
    if (fill_dwconv(&c, order[i])) break;
  publish(&c);
  const tg_conv_config* cur = atomic_load(&current);
  report(cur);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: f32 conv: %s, %s (%d shapes); dwconv: %s, %s (%d shapes)\n",
            tg_isa_name_of(cur->isa), headline(cur), cur->nshapes, tg_isa_name_of(cur->dw_isa),
            dw_headline(cur), cur->dw_nshapes);
}

int tilegen_x_set_conv_max_mr(int nchw, int mr) {
  if ((nchw != 0 && nchw != 1) || mr < 0 || mr > TG_CONV_MAX_MR) return -1;
  tg_dispatch_init();
  tg_dispatch_lock();
  const int old = mr_cap[nchw];
  mr_cap[nchw] = mr;
  tg_conv_config c = *atomic_load(&current);
  int ok = fill_conv(&c, c.isa) && publish(&c) == 0;
  if (!ok) mr_cap[nchw] = old;  /* no 1x1 kernel under the cap, or out of memory: unchanged */
  else report(&c);
  tg_dispatch_unlock();
  return ok ? 0 : -1;
}

int tilegen_x_conv_tile_height(int nchw, int i) {
  /* The distinct MR of the ISA's production conv kernels of the layout, tallest first. */
  const int isa = tg_conv_cfg()->isa;
  int seen[64], n = 0;
#define TG_HEIGHTS(ISA, KH, KW, S, FC, LAYOUT, MR, NR, VL, PROD, FN, NCHW_FN, NAME)          \
  if ((ISA) == isa && (PROD) && ((LAYOUT) != 0) == nchw && (MR) <= TG_CONV_MAX_MR) {        \
    int known = 0;                                                                         \
    for (int q = 0; q < n; q++) known |= seen[q] == (MR);                                   \
    if (!known && n < 64) seen[n++] = (MR);                                                 \
  }
  TG_FOREACH_CONV_UKERNEL_f32(TG_HEIGHTS)
#undef TG_HEIGHTS
  for (int a = 1; a < n; a++)  /* tallest first */
    for (int b = a; b > 0 && seen[b] > seen[b - 1]; b--) {
      const int t = seen[b]; seen[b] = seen[b - 1]; seen[b - 1] = t;
    }
  return i >= 0 && i < n ? seen[i] : 0;
}

const tg_conv_config* tg_conv_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}
