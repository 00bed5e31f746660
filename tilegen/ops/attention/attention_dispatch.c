/* The attention op's selection: built for the platform baseline, like the dispatcher. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tg_attention.h"

static tg_interned* interned;
static tg_attention_config first;
static _Atomic(const tg_attention_config*) current;
static atomic_int force_plain;

/* Makes *c current (caller holds the dispatch lock); the first table needs no allocation. */
static void publish(const tg_attention_config* c) {
  const tg_attention_config* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
}

#define TG_COLLECT_ATTN(ISA, MR, NR, KB, CW, WORK, PROD, FN, EXP, NAME)                     \
  if ((ISA) == isa && (PROD) && c.fn == NULL) {                                            \
    c.isa = (ISA); c.fn = FN; c.exp = EXP; c.mr = (MR); c.nr = (NR); c.kb = (KB);          \
    c.cw = (CW); c.work = (WORK); c.name = NAME;                                           \
  }

static void report(const tg_attention_config* c) {
  tg_dispatch_report("attention", NULL, "f32", c->isa, c->name);
  tg_dispatch_report("attention", NULL, "f64", TG_ISA_SCALAR, "plain C (libm exp)");
}

void tg_attention_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  tg_attention_config c;
  memset(&c, 0, sizeof(c));
  for (int i = 0; i < n && c.fn == NULL; i++) {
    const int isa = order[i];
    TG_FOREACH_ATTENTION_UKERNEL_f32(TG_COLLECT_ATTN)
  }
  publish(&c);
  report(&c);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: f32 attention: %s, %s (%dx%d, %d keys per call)\n",
            tg_isa_name_of(c.isa), c.name, c.mr, c.nr, c.kb);
}

int tilegen_x_set_attention_kernel(const char* name) {
  const int builtin = name == NULL || name[0] == '\0';
  tg_dispatch_lock();
  tg_attention_config c = *atomic_load(&current);
  const int isa = c.isa;
  /* TG_COLLECT_ATTN takes the first match: the first production kernel, or the named one. */
#define TG_PICK_ATTN(ISA, MR, NR, KB, CW, WORK, PROD, FN, EXP, NAME)                         \
  if (builtin || strcmp(NAME, name) == 0)                                                  \
    TG_COLLECT_ATTN(ISA, MR, NR, KB, CW, WORK, (PROD) || !builtin, FN, EXP, NAME)
  c.fn = NULL;
  TG_FOREACH_ATTENTION_UKERNEL_f32(TG_PICK_ATTN)
#undef TG_PICK_ATTN
  const int found = c.fn != NULL;
  if (found) {
    publish(&c);
    report(&c);
  }
  tg_dispatch_unlock();
  return found ? 0 : -1;
}

const char* tilegen_x_attention_kernel_name(int i) {
  const int isa = tg_attention_cfg()->isa;
  const char* out = NULL;
#define TG_NTH_ATTN(ISA, MR, NR, KB, CW, WORK, PROD, FN, EXP, NAME) \
  if ((ISA) == isa && i-- == 0) out = NAME;
  TG_FOREACH_ATTENTION_UKERNEL_f32(TG_NTH_ATTN)
#undef TG_NTH_ATTN
  return out;
}

const tg_attention_config* tg_attention_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}

const char* tilegen_x_attention_kernel(void) { return tg_attention_cfg()->name; }

void tilegen_x_attention_force_plain(int on) { atomic_store(&force_plain, on != 0); }

int tg_attention_plain_forced(void) { return atomic_load(&force_plain); }
