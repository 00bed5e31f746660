/* The linear op's kernel selection: built for the platform baseline, like the dispatcher. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tg_qgemv.h"

static tg_interned* interned;
static tg_qgemv_config first;
static _Atomic(const tg_qgemv_config*) current;

#define TG_FORMAT_NAME(KFMT, NAME, NIBBLES, SECOND) NAME,
static const char* const FORMAT_NAMES[TG_QFORMATS] = {TG_QGEMV_KERNEL_FORMATS(TG_FORMAT_NAME)};
#undef TG_FORMAT_NAME

static void publish(const tg_qgemv_config* c) {
  const tg_qgemv_config* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  for (int f = 0; f < TG_QFORMATS; f++)
    if (c->f[f].count > 0)
      tg_dispatch_report("linear", NULL, FORMAT_NAMES[f], c->f[f].isa,
                         c->f[f].k[c->f[f].count - 1].name);
}

/* X(isa, format, MR, NR, production, offset, fn, name): the production kernels of `isa` for
   one format, inserted by rising MR. */
#define TG_ADD(ISA, FMT, MR, NR, PROD, OFF, FN, NAME)                                      \
  if ((ISA) == isa && (FMT) == fmt && (PROD) && f->count < TG_QGEMV_MAX_KERNELS) {        \
    int at = f->count++;                                                                 \
    while (at > 0 && f->k[at - 1].mr > (MR)) { f->k[at] = f->k[at - 1]; at--; }          \
    f->k[at] = (tg_qgemv_kernel) {(MR), FN, NAME};                                        \
    f->isa = (ISA); f->nr = (NR); f->offset = (OFF);                                      \
  }

static void pick(tg_qgemv_format* f, int fmt, int isa) {
  memset(f, 0, sizeof(*f));
  TG_FOREACH_QGEMV_UKERNEL_s8(TG_ADD)
}
#undef TG_ADD

void tg_qgemv_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  tg_qgemv_config c;
  memset(&c, 0, sizeof(c));
  for (int fmt = 0; fmt < TG_QFORMATS; fmt++)
    for (int i = 0; i < n && c.f[fmt].count == 0; i++) pick(&c.f[fmt], fmt, order[i]);
  publish(&c);
  if (tg_dispatch_verbose())
    for (int fmt = 0; fmt < TG_QFORMATS; fmt++)
      fprintf(stderr, "tilegen: linear: %s %s (%d kernels)\n", FORMAT_NAMES[fmt],
              c.f[fmt].count ? c.f[fmt].k[c.f[fmt].count - 1].name : "none", c.f[fmt].count);
}

const tg_qgemv_config* tg_qgemv_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}

const char* tilegen_x_qgemv_kernel(int format, int i) {
  if (format < 0 || format >= TG_QFORMATS) return NULL;
  const tg_qgemv_format* f = &tg_qgemv_cfg()->f[format];
  return i >= 0 && i < f->count ? f->k[i].name : NULL;
}
