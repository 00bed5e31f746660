/* The blas_abi op's kernel selection: built for the platform baseline, like the dispatcher. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "tg_blas_kernels.h"

static tg_interned* interned;
static tg_blas_kernels first;
static _Atomic(const tg_blas_kernels*) current;

/* Makes *c current (caller holds the dispatch lock); the first table needs no allocation. */
static void publish(const tg_blas_kernels* c) {
  const tg_blas_kernels* p = tg_intern(&interned, c, sizeof(*c));
  if (p == NULL) {
    if (atomic_load(&current) != NULL) return;
    first = *c;
    p = &first;
  }
  atomic_store_explicit(&current, p, memory_order_release);
  tg_dispatch_report("blas_abi", "dot", "f32", c->isa[0], c->name[0]);
  tg_dispatch_report("blas_abi", "dot", "f64", c->isa[1], c->name[1]);
  tg_dispatch_report("blas_abi", "axpy", "f32", c->isa[0], c->axpy_name[0]);
  tg_dispatch_report("blas_abi", "axpy", "f64", c->isa[1], c->axpy_name[1]);
}

/* X(isa, NR, production, fn, name) rows: the first production kernel of `isa`. */
#define TG_PICK(FIELD, NAMEF, ISA, NR, PROD, FN, NAME) \
  if ((ISA) == isa && (PROD) && c->FIELD == NULL) {     \
    c->FIELD = FN;                                      \
    c->NAMEF = NAME;                                    \
  }
#define TG_DOT_F32(ISA, NR, PROD, FN, NAME) TG_PICK(dot_f32, name[0], ISA, NR, PROD, FN, NAME)
#define TG_DOT_F64(ISA, NR, PROD, FN, NAME) TG_PICK(dot_f64, name[1], ISA, NR, PROD, FN, NAME)
#define TG_AXPY_F32(ISA, NR, PROD, FN, NAME) \
  TG_PICK(axpy_f32, axpy_name[0], ISA, NR, PROD, FN, NAME)
#define TG_AXPY_F64(ISA, NR, PROD, FN, NAME) \
  TG_PICK(axpy_f64, axpy_name[1], ISA, NR, PROD, FN, NAME)

/* The kernels of dtype d (0 f32, 1 f64) of `isa` into *c; nonzero when it has both. */
static int pick(tg_blas_kernels* c, int d, int isa) {
  if (d == 0) {
    TG_FOREACH_BLASDOT_UKERNEL_f32(TG_DOT_F32)
    TG_FOREACH_BLASAXPY_UKERNEL_f32(TG_AXPY_F32)
    return c->dot_f32 && c->axpy_f32;
  }
  TG_FOREACH_BLASDOT_UKERNEL_f64(TG_DOT_F64)
  TG_FOREACH_BLASAXPY_UKERNEL_f64(TG_AXPY_F64)
  return c->dot_f64 && c->axpy_f64;
}

void tg_blas_kernels_select(void) {
  int order[TG_ISA_COUNT];
  const int n = tg_isa_candidates(order);
  tg_blas_kernels c;
  memset(&c, 0, sizeof(c));
  for (int d = 0; d < 2; d++)  /* per dtype, the best ISA that has both kernels */
    for (int i = 0; i < n; i++) {
      tg_blas_kernels t;
      memset(&t, 0, sizeof(t));
      if (!pick(&t, d, order[i])) continue;
      if (d == 0) c.dot_f32 = t.dot_f32, c.axpy_f32 = t.axpy_f32;
      else c.dot_f64 = t.dot_f64, c.axpy_f64 = t.axpy_f64;
      c.isa[d] = order[i], c.name[d] = t.name[d], c.axpy_name[d] = t.axpy_name[d];
      break;
    }
  publish(&c);
  if (tg_dispatch_verbose())
    fprintf(stderr, "tilegen: blas_abi: f32 %s, %s; f64 %s, %s\n", c.name[0], c.axpy_name[0],
            c.name[1], c.axpy_name[1]);
}

const tg_blas_kernels* tg_blas_kernels_cfg(void) {
  tg_dispatch_init();
  return atomic_load_explicit(&current, memory_order_acquire);
}
