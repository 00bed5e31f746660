/*
 * The paged_attention op's dispatch table (paged_attention_dispatch.c): the decode kernel of
 * the best usable ISA, from the generated TG_FOREACH_ATTNDECODE_UKERNEL_f32 list, published
 * immutable (see dispatch.h); `tilegen tune` may pick another registered kernel of that ISA.
 * float64 runs the driver's plain C path. Scratch comes from the op's workspace slot
 * TG_WS_PAGED_ATTENTION_WORK.
 */
#ifndef TG_PAGED_ATTENTION_H
#define TG_PAGED_ATTENTION_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_paged_attention_config {
  int isa;                              /* TG_ISA_* of the kernel */
  tg_f32_attndecode_ukernel_fn fn;
  int mr, nr, cw, prefetch;             /* heads per slice, tokens per call, PV chunk floats,
                                           tokens ahead */
  int work, slice_work;                 /* scratch floats per call and per slice */
  const char* name;
} tg_paged_attention_config;

/* The current table (initialising the dispatch on first use). */
const tg_paged_attention_config* tg_paged_attention_cfg(void);

/* The family's select function (TG_FOREACH_FAMILY_SELECT). */
void tg_paged_attention_select(void);

/* ---- tuning and test hooks ---- */
/* The float32 decode kernel in use, or NULL. */
TG_XAPI_FN(const char*, tilegen_x_paged_attention_kernel, (void))
/* The float32 decode kernel: `name`, a registered kernel of the ISA it selected (tilegen tune's
   choice), or the built-in one for NULL or ""; 0, or -1 for no such kernel. */
TG_XAPI_FN(int, tilegen_x_set_paged_kernel, (const char* name))
/* The i-th registered decode kernel of that ISA, or NULL past the last. */
TG_XAPI_FN(const char*, tilegen_x_paged_kernel_name, (int i))
/* 1: every call runs the plain C path (the allocation-free fallback), 0: the kernels. */
TG_XAPI_FN(void, tilegen_x_paged_attention_force_plain, (int on))
int tg_paged_attention_plain_forced(void);

#endif
