/*
 * The attention family's dispatch tables and shared driver pieces (tilegen/nn/attention_*.c):
 * the fused-attention kernel (prefill) and the decode kernel (paged attention) of the best
 * usable ISA, from the generated TG_FOREACH_ATTENTION_UKERNEL_f32 / TG_FOREACH_ATTNDECODE_...
 * lists, published immutable (see dispatch.h). float64 runs the drivers' plain C paths.
 */
#ifndef TG_ATTENTION_H
#define TG_ATTENTION_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

/* Per-thread scratch (runtime/tg_workspace.h): GEMM owns slots 0-2. Attention and paged
   attention never run nested inside each other, so they share one. */
#define TG_ATTN_WS_SLOT 6

typedef struct tg_attention_config {
  int isa;                            /* TG_ISA_* of the prefill kernel */
  tg_f32_attention_ukernel_fn fn;
  tg_f32_attention_exp_fn exp;
  int mr, nr, kb, cw, work;           /* queries per tile, keys per S tile / per call, PV chunk
                                         floats (O rows are padded to it), scratch floats */
  const char* name;
  /* paged attention (decode) */
  int dec_isa;
  tg_f32_attndecode_ukernel_fn dec_fn;
  int dec_mr, dec_nr, dec_cw, dec_prefetch;  /* heads per slice, tokens per call, PV chunk
                                               floats, tokens ahead */
  int dec_work, dec_slice_work;               /* scratch floats per call and per slice */
  const char* dec_name;
} tg_attention_config;

/* The current table (initialising the dispatch on first use). */
const tg_attention_config* tg_attention_cfg(void);

/* The family's select function (TG_FOREACH_FAMILY_SELECT). */
void tg_attention_select(void);

/* ---- test hooks ---- */
/* The prefill (0) or decode (1) kernel in use for float32, or NULL. */
TG_XAPI_FN(const char*, tilegen_x_attention_kernel, (int decode))
/* The paged path's float32 decode kernel: `name`, a registered kernel of the ISA it selected
   (tilegen tune's choice), or the built-in one for NULL or ""; 0, or -1 for no such kernel. */
TG_XAPI_FN(int, tilegen_x_set_paged_kernel, (const char* name))
/* The i-th registered decode kernel of that ISA, or NULL past the last. */
TG_XAPI_FN(const char*, tilegen_x_paged_kernel_name, (int i))
/* 1: every call runs the plain C path (the allocation-free fallback), 0: the kernels. */
TG_XAPI_FN(void, tilegen_x_attention_force_plain, (int on))
int tg_attention_plain_forced(void);

#endif
