/* The BLAS/CBLAS routines for float _Complex: blas_impl.h instantiated for this type. */
#include <math.h>

#include "tg_gemm.h"

#define TG_T float _Complex
#define TG_R float
#define TG_CPLX 1
#define TG_L c
#define TG_U "C"
#define TG_LSTR "c"
#define TG_LR sc
#define TG_LS cs
#define TG_RL s
#define TG_RADIX ((float) __FLT_RADIX__)
#define TG_MINEXP __FLT_MIN_EXP__
#define TG_MAXEXP __FLT_MAX_EXP__
#define TG_DIGITS __FLT_MANT_DIG__
#define TG_RMIN __FLT_MIN__
#define TG_RMAX __FLT_MAX__
#define TG_GEMM_REAL tg_gemm_f32
#define sqrt_r sqrtf
#define pow_r powf
#define ceil_r ceilf
#define floor_r floorf

#include "blas_impl.h"
