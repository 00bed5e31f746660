/*
 * The int8 GEMM's dispatch table (gemm_s8.c): the kernel of the best usable ISA that has one
 * (avx512vnni's or neondot's four-way dot products, neoni8mm's SMMLA, else a widening kernel),
 * from the generated
 * TG_FOREACH_GEMMS8_UKERNEL_s8 list, published immutable (dispatch.h); `tilegen tune` may pick
 * another registered kernel of that ISA. One row of A takes the GEMV kernel (gemvs8) instead.
 */
#ifndef TG_GEMM_S8_H
#define TG_GEMM_S8_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_gemm_s8_config {
  int isa;
  tg_s8_gemm_ukernel_fn fn;
  int mr, nr;
  int kr;                     /* k values per packed group: 4, or 8 (SMMLA) */
  int a_offset;               /* the kernel takes A + 128 (VPDPBUSD's unsigned operand) */
  int a_group;                /* k groups per group of A's panel (gemms8.py's a_group) */
  int64_t kc, nc;             /* k values per packed block (a multiple of kr), columns per B block */
  tg_s8_packb_fn packb;       /* row-major B's full quads of whole panels (NULL: the C loop) */
  const char* name;
  /* One row of A with row-major B (m == 1): the GEMV that reads B in place, the first
     production gemvs8 kernel of the best usable ISA that has one (NULL: none). */
  tg_s8_gemv_ukernel_fn gemv;
  int gemv_nr;                /* its columns per step: threads split the columns by these */
  const char* gemv_name;
} tg_gemm_s8_config;

const tg_gemm_s8_config* tg_gemm_s8_cfg(void);
void tg_gemm_s8_select(void);

/* ---- tuning and test hooks ---- */
TG_XAPI_FN(const char*, tilegen_x_gemm_s8_kernel, (void))
/* `name`, a registered kernel of the selected ISA, or the built-in for NULL or ""; 0 or -1. */
TG_XAPI_FN(int, tilegen_x_set_gemm_s8_kernel, (const char* name))
TG_XAPI_FN(const char*, tilegen_x_gemm_s8_kernel_name, (int i))

#endif
