/*
 * The blas_abi op's kernel table (blas_dispatch.c): per dtype, the dot-product and axpy kernels
 * of the best usable ISA, from the generated TG_FOREACH_BLASDOT/BLASAXPY_UKERNEL_<dtype> lists,
 * published immutable (see dispatch.h).
 */
#ifndef TG_BLAS_KERNELS_H
#define TG_BLAS_KERNELS_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_blas_kernels {
  int isa[2];                          /* per dtype: 0 f32, 1 f64 (the dot kernel's) */
  tg_f32_blasdot_ukernel_fn dot_f32;
  tg_f64_blasdot_ukernel_fn dot_f64;
  tg_f32_blasaxpy_ukernel_fn axpy_f32;
  tg_f64_blasaxpy_ukernel_fn axpy_f64;
  const char* name[2];                 /* the dot kernels' names */
  const char* axpy_name[2];
} tg_blas_kernels;

/* The current table (initialising the dispatch on first use). */
const tg_blas_kernels* tg_blas_kernels_cfg(void);

/* The families' select function (TG_FOREACH_FAMILY_SELECT). */
void tg_blas_kernels_select(void);

#endif
