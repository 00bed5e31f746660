/* The BLAS/CBLAS routines for float: blas_impl.h instantiated for this type. */
#include <math.h>

#include "tg_gemm.h"

#define TG_T float
#define TG_R float
#define TG_CPLX 0
#define TG_L s
#define TG_U "S"
#define TG_LSTR "s"
#define TG_LR s
#define TG_LS s
#define TG_RL s
#define TG_RADIX ((float) __FLT_RADIX__)
#define TG_MINEXP __FLT_MIN_EXP__
#define TG_MAXEXP __FLT_MAX_EXP__
#define TG_DIGITS __FLT_MANT_DIG__
#define TG_RMIN __FLT_MIN__
#define TG_RMAX __FLT_MAX__
#define TG_GEMM_REAL tg_gemm_f32
#define TG_MIXED_DOT 1
#define sqrt_r sqrtf
#define pow_r powf
#define ceil_r ceilf
#define floor_r floorf

#include "blas_impl.h"
