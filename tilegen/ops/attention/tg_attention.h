/*
 * The attention op's dispatch table (attention_dispatch.c): the fused-attention (prefill)
 * kernel of the best usable ISA, from the generated TG_FOREACH_ATTENTION_UKERNEL_f32 list,
 * published immutable (see dispatch.h). float64 runs the driver's plain C path. Scratch comes
 * from the op's workspace slot TG_WS_ATTENTION_WORK.
 */
#ifndef TG_ATTENTION_H
#define TG_ATTENTION_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_attention_config {
  int isa;                            /* TG_ISA_* of the kernel */
  tg_f32_attention_ukernel_fn fn;
  tg_f32_attention_exp_fn exp;
  int mr, nr, kb, cw, work;           /* queries per tile, keys per S tile / per call, PV chunk
                                         floats (O rows are padded to it), scratch floats */
  const char* name;
} tg_attention_config;

/* The current table (initialising the dispatch on first use). */
const tg_attention_config* tg_attention_cfg(void);

/* The family's select function (TG_FOREACH_FAMILY_SELECT). */
void tg_attention_select(void);

/* ---- tuning and test hooks ---- */
/* The float32 kernel in use, or NULL. */
TG_XAPI_FN(const char*, tilegen_x_attention_kernel, (void))
/* The float32 kernel: `name`, a registered kernel of the ISA it selected (tilegen tune's
   choice), or the built-in one for NULL or ""; 0, or -1 for no such kernel. */
TG_XAPI_FN(int, tilegen_x_set_attention_kernel, (const char* name))
/* The i-th registered kernel of that ISA, or NULL past the last. */
TG_XAPI_FN(const char*, tilegen_x_attention_kernel_name, (int i))
/* 1: every call runs the plain C path (the allocation-free fallback), 0: the kernels. */
TG_XAPI_FN(void, tilegen_x_attention_force_plain, (int on))
int tg_attention_plain_forced(void);

#endif
