/* The image filters' selection: the best usable ISA that has a production kernel of every pass
   (the registry guarantees the portable ISA has them all). Built for the platform baseline. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tg_filter.h"

static tg_interned* interned;
static tg_filter_config first;
static _Atomic(const tg_filter_config*) current;

/* Fills cfg with the ISA's first production kernel of each pass; 0 if it lacks one. */
static int fill(tg_filter_config* cfg, int isa) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->isa = isa;
  tg_filter_any_fn fn[TG_FILTER_KIND_COUNT] = {0};
#define TG_COLLECT(ISA, KIND, MR, NR, PROD, FN, NAME)                                    \
  if ((ISA) == isa && (PROD) && fn[KIND] == NULL) {                                      \
    fn[KIND] = (FN); cfg->mr[KIND] = (MR); cfg->nr[KIND] = (NR); cfg->name[KIND] = NAME; \
  }
  TG_FOREACH_FILTER_UKERNEL_u8(TG_COLLECT)
  TG_FOREACH_FILTER_UKERNEL_f32(TG_COLLECT)
#undef TG_COLLECT
  for (int k = 0; k < TG_FILTER_KIND_COUNT; k++)
    if (fn[k] == NULL) return 0;
  cfg->vfilt = (tg_u8_vfilt_fn) fn[TG_FILTER_KIND_VFILT];
  cfg->vsum = (tg_u8_vsum_fn) fn[TG_FILTER_KIND_VSUM];
  cfg->hfilt = (tg_u8_hfilt_fn) fn[TG_FILTER_KIND_HFILT];
  cfg->hsum = (tg_u8_hsum_fn) fn[TG_FILTER_KIND_HSUM];
  cfg->filt2d = (tg_f32_filt2d_fn) fn[TG_FILTER_KIND_FILT2D];
  cfg->tof32 = (tg_u8_tof32_fn) fn[TG_FILTER_KIND_TOF32];
  cfg->fround = (tg_u8_fround_fn) fn[TG_FILTER_KIND_FROUND];
  cfg->sharpen = (tg_u8_sharpen_fn) fn[TG_FILTER_KIND_SHARPEN];
  cfg->vupd = (tg_u8_vupd_fn) fn[TG_FILTER_KIND_VUPD];
  return 1;
}

/* Makes *c current (caller holds the dispatch lock); the first table needs no allocation. */
static void publish(const tg_filter_config* c) {
  const tg_filter_config* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  tg_dispatch_report("image", NULL, "u8", c->isa, c->name[TG_FILTER_KIND_HFILT]);
  tg_dispatch_report("image", NULL, "f32", c->isa, c->name[TG_FILTER_KIND_FILT2D]);
}

/* The i-th usable ISA (best first) with a production kernel of every pass, into *c; 0 past
   the last. */
static int nth_complete(int i, tg_filter_config* c) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  for (int j = 0; j < n; j++)
    if (fill(c, order[j]) && i-- == 0) return 1;
  return 0;
}

void tg_filter_select(void) {
  tg_filter_config c;
  if (!nth_complete(0, &c)) return;
  publish(&c);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: image filters: %s, u8 %s / %s / %s / %s, f32 %s\n",
            tg_isa_name_of(c.isa), c.name[TG_FILTER_KIND_VFILT], c.name[TG_FILTER_KIND_HFILT],
            c.name[TG_FILTER_KIND_VSUM], c.name[TG_FILTER_KIND_HSUM],
            c.name[TG_FILTER_KIND_FILT2D]);
}

int tilegen_x_set_filter_isa(const char* isa) {
  tg_dispatch_init();
  tg_dispatch_lock();
  tg_filter_config c;
  int found = 0;
  for (int i = 0; !found && nth_complete(i, &c); i++)
    found = isa == NULL || isa[0] == '\0' || strcmp(tg_isa_name_of(c.isa), isa) == 0;
  if (found) publish(&c);
  tg_dispatch_unlock();
  return found ? 0 : -1;
}

const char* tilegen_x_filter_isa(int i) {
  tg_dispatch_init();
  tg_dispatch_lock();
  tg_filter_config c;
  const char* out = nth_complete(i, &c) ? tg_isa_name_of(c.isa) : NULL;
  tg_dispatch_unlock();
  return out;
}

const tg_filter_config* tg_filter_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}

const char* tilegen_x_filter_kernel(int kind) {
  if (kind < 0 || kind >= TG_FILTER_KIND_COUNT) return NULL;
  return tg_filter_cfg()->name[kind];
}
