/*
 * The bfloat16 GEMM's dispatch table (gemm_bf16.c): the kernel of the best usable ISA that has
 * one (the avx512bf16 tier's pair dot products, else a widening kernel), from the generated
 * TG_FOREACH_GEMMBF16_UKERNEL_bf16 list, published immutable (dispatch.h); `tilegen tune` may
 * pick another registered kernel of that ISA.
 */
#ifndef TG_GEMM_BF16_H
#define TG_GEMM_BF16_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_gemm_bf16_config {
  int isa;
  tg_bf16_gemm_ukernel_fn fn;
  int mr, nr;
  int a_group;                /* k pairs per group of A's panel (gemmbf16.py's a_group) */
  int64_t kc, nc;             /* k values per packed block (even), columns per B block */
  tg_bf16_packb_fn packb;     /* row-major B's full pairs of whole panels (NULL: the C loop) */
  const char* name;
  /* One row of C (m == 1), B read in place: the first production gemvbf16 kernel of each form
     of the best usable ISA that has one (NULL: none built); axpy for row-major B, dot
     (gemv_mr columns a call) for column-major B. */
  tg_bf16_gemv_ukernel_fn gemv, gemv_dot;
  int gemv_nr, gemv_mr;
  const char *gemv_name, *gemv_dot_name;
} tg_gemm_bf16_config;

const tg_gemm_bf16_config* tg_gemm_bf16_cfg(void);
void tg_gemm_bf16_select(void);

/* ---- tuning and test hooks ---- */
TG_XAPI_FN(const char*, tilegen_x_gemm_bf16_kernel, (void))
/* `name`, a registered kernel of the selected ISA, or the built-in for NULL or ""; 0 or -1. */
TG_XAPI_FN(int, tilegen_x_set_gemm_bf16_kernel, (const char* name))
TG_XAPI_FN(const char*, tilegen_x_gemm_bf16_kernel_name, (int i))

#endif
