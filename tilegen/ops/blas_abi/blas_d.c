/* The BLAS/CBLAS routines for double: blas_impl.h instantiated for this type. */
#define TG_T double
#define TG_CPLX 0
#define TG_RDOUBLE 1
#define TG_L d
#define TG_U "D"
#define TG_LSTR "d"
#define TG_LR d
#define TG_LS d
#define TG_RL d

#include "blas_impl.h"
