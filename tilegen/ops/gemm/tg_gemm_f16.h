/*
 * The half-accumulating GEMM's dispatch table (gemm_f16.c): the production kernel of the best
 * usable ISA that computes in half natively (neonfp16's FMLA .8h), from the generated
 * TG_FOREACH_GEMMF16_UKERNEL_f16 list, published immutable (dispatch.h). fn is NULL where no
 * such ISA is usable (x86, NEON without FP16, a TILEGEN_ISA cap below it): float32
 * accumulation serves accumulate="float16" there.
 */
#ifndef TG_GEMM_F16_H
#define TG_GEMM_F16_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_gemm_f16_config {
  int isa;
  tg_f16_gemm_ukernel_fn fn;
  int mr, nr;
  int64_t kc, nc;             /* k values per packed block, columns per B block */
  const char* name;
} tg_gemm_f16_config;

const tg_gemm_f16_config* tg_gemm_f16_cfg(void);
void tg_gemm_f16_select(void);

/* The half-accumulating kernel in force, or NULL (float32 accumulation serves). */
TG_XAPI_FN(const char*, tilegen_x_gemm_f16acc_kernel, (void))

#endif
