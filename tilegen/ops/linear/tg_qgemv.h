/*
 * The linear op's kernel table (qgemv_dispatch.c): per weight format, the production qgemv
 * kernels of the best usable ISA that has that format, from the generated
 * TG_FOREACH_QGEMV_UKERNEL_s8 list, by rising MR; all share one NR (the packed panel width)
 * and one code offset (how the packed codes are stored). Published immutable (dispatch.h).
 */
#ifndef TG_QGEMV_H
#define TG_QGEMV_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

#define TG_QFORMATS TG_QGEMV_KERNEL_FORMAT_COUNT  /* q4_0, q4_1, q8_0, q4_z (formats.py) */
#define TG_QGEMV_MAX_KERNELS 4

typedef struct tg_qgemv_kernel {
  int mr;
  tg_s8_qgemv_ukernel_fn fn;
  const char* name;
} tg_qgemv_kernel;

typedef struct tg_qgemv_format {
  int isa, nr, offset, count;
  tg_qgemv_kernel k[TG_QGEMV_MAX_KERNELS];  /* by rising MR */
} tg_qgemv_format;

typedef struct tg_qgemv_config {
  tg_qgemv_format f[TG_QFORMATS];
} tg_qgemv_config;

/* The current table (initialising the dispatch on first use). */
const tg_qgemv_config* tg_qgemv_cfg(void);

/* The family's select function (TG_FOREACH_FAMILY_SELECT). */
void tg_qgemv_select(void);

/* ---- tuning and test hooks (kernel format: 0 q4_0, 1 q4_1, 2 q8_0, 3 q4_z) ---- */
/* The i-th kernel (by rising MR) of a kernel format, or NULL past the last. */
TG_XAPI_FN(const char*, tilegen_x_qgemv_kernel, (int format, int i))

#endif
