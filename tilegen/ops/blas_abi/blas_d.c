/* The BLAS/CBLAS routines for double: blas_impl.h instantiated for this type. */
#include <math.h>

#include "tg_gemm.h"

#define TG_T double
#define TG_R double
#define TG_CPLX 0
#define TG_L d
#define TG_U "D"
#define TG_LSTR "d"
#define TG_LR d
#define TG_LS d
#define TG_RL d
#define TG_RADIX ((double) __FLT_RADIX__)
#define TG_MINEXP __DBL_MIN_EXP__
#define TG_MAXEXP __DBL_MAX_EXP__
#define TG_DIGITS __DBL_MANT_DIG__
#define TG_RMIN __DBL_MIN__
#define TG_RMAX __DBL_MAX__
#define TG_GEMM_REAL tg_gemm_f64
#define sqrt_r sqrt
#define pow_r pow
#define ceil_r ceil
#define floor_r floor

#include "blas_impl.h"
