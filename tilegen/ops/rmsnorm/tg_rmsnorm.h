/*
 * The rmsnorm op's dispatch table (rmsnorm_dispatch.c): per dtype, the kernel of the best usable
 * ISA, from the generated TG_FOREACH_RMSNORM_UKERNEL_<dtype> lists, published immutable (see
 * dispatch.h); `tilegen tune` may pick another registered kernel of that ISA.
 */
#ifndef TG_RMSNORM_H
#define TG_RMSNORM_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_rmsnorm_config {
  int isa[2];                          /* per dtype: 0 f32, 1 f64 */
  tg_f32_rmsnorm_ukernel_fn f32;
  tg_f64_rmsnorm_ukernel_fn f64;
  int nr[2];
  const char* name[2];
} tg_rmsnorm_config;

/* The current table (initialising the dispatch on first use). */
const tg_rmsnorm_config* tg_rmsnorm_cfg(void);

/* The family's select function (TG_FOREACH_FAMILY_SELECT). */
void tg_rmsnorm_select(void);

/* ---- tuning and test hooks (dtype 0: float32, 1: float64) ---- */
/* The kernel in use, or NULL. */
TG_XAPI_FN(const char*, tilegen_x_rmsnorm_kernel, (int dtype))
/* `name`, a registered kernel of the ISA selected for the dtype, or the built-in one for NULL
   or ""; 0, or -1 for no such kernel. */
TG_XAPI_FN(int, tilegen_x_set_rmsnorm_kernel, (int dtype, const char* name))
/* The i-th registered kernel of that ISA, or NULL past the last. */
TG_XAPI_FN(const char*, tilegen_x_rmsnorm_kernel_name, (int dtype, int i))

#endif
