/* The rmsnorm op's selection: built for the platform baseline, like the dispatcher. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tg_rmsnorm.h"

static tg_interned* interned;
static tg_rmsnorm_config first;
static _Atomic(const tg_rmsnorm_config*) current;

/* Makes *c current (caller holds the dispatch lock); the first table needs no allocation. */
static void publish(const tg_rmsnorm_config* c) {
  const tg_rmsnorm_config* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  tg_dispatch_report("rmsnorm", NULL, "f32", c->isa[0], c->name[0]);
  tg_dispatch_report("rmsnorm", NULL, "f64", c->isa[1], c->name[1]);
}

/* X(isa, NR, production, fn, name) rows of one dtype: the first production kernel of `isa`, or
   with `want` the kernel of that name (production or not). */
#define TG_PICK(D, FIELD, ISA, NR, PROD, FN, NAME)                                         \
  if ((ISA) == isa && ((PROD) || want != NULL) && c->FIELD == NULL &&                       \
      (want == NULL || strcmp(NAME, want) == 0)) {                                          \
    c->FIELD = FN; c->isa[D] = (ISA); c->nr[D] = (NR); c->name[D] = NAME;                    \
  }
#define TG_PICK_F32(ISA, NR, PROD, FN, NAME) TG_PICK(0, f32, ISA, NR, PROD, FN, NAME)
#define TG_PICK_F64(ISA, NR, PROD, FN, NAME) TG_PICK(1, f64, ISA, NR, PROD, FN, NAME)

static void pick(tg_rmsnorm_config* c, int dtype, int isa, const char* want) {
  if (dtype == 0) {
    c->f32 = NULL;
    TG_FOREACH_RMSNORM_UKERNEL_f32(TG_PICK_F32)
  } else {
    c->f64 = NULL;
    TG_FOREACH_RMSNORM_UKERNEL_f64(TG_PICK_F64)
  }
}

void tg_rmsnorm_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  tg_rmsnorm_config c;
  memset(&c, 0, sizeof(c));
  for (int i = 0; i < n && c.f32 == NULL; i++) pick(&c, 0, order[i], NULL);
  for (int i = 0; i < n && c.f64 == NULL; i++) pick(&c, 1, order[i], NULL);
  publish(&c);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: rmsnorm: f32 %s, f64 %s\n", c.name[0], c.name[1]);
}

int tilegen_x_set_rmsnorm_kernel(int dtype, const char* name) {
  if (dtype != 0 && dtype != 1) return -1;
  tg_dispatch_init();
  tg_dispatch_lock();
  tg_rmsnorm_config c = *atomic_load(&current);
  pick(&c, dtype, c.isa[dtype], name != NULL && name[0] != '\0' ? name : NULL);
  const int found = dtype == 0 ? c.f32 != NULL : c.f64 != NULL;
  if (found) publish(&c);
  tg_dispatch_unlock();
  return found ? 0 : -1;
}

const char* tilegen_x_rmsnorm_kernel_name(int dtype, int i) {
  if (dtype != 0 && dtype != 1) return NULL;
  const int isa = tg_rmsnorm_cfg()->isa[dtype];
  const char* out = NULL;
#define TG_NTH(ISA, NR, PROD, FN, NAME) if ((ISA) == isa && i-- == 0) out = NAME;
  if (dtype == 0) {
    TG_FOREACH_RMSNORM_UKERNEL_f32(TG_NTH)
  } else {
    TG_FOREACH_RMSNORM_UKERNEL_f64(TG_NTH)
  }
#undef TG_NTH
  return out;
}

const tg_rmsnorm_config* tg_rmsnorm_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}

const char* tilegen_x_rmsnorm_kernel(int dtype) {
  return dtype == 0 || dtype == 1 ? tg_rmsnorm_cfg()->name[dtype] : NULL;
}
