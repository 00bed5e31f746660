/* The BLAS/CBLAS routines for double _Complex: blas_impl.h instantiated for this type. */
#include <math.h>

#include "tg_gemm.h"

#define TG_T double _Complex
#define TG_R double
#define TG_CPLX 1
#define TG_L z
#define TG_U "Z"
#define TG_LSTR "z"
#define TG_LR dz
#define TG_LS zd
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
