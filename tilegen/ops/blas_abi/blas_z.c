/* The BLAS/CBLAS routines for double _Complex: blas_impl.h instantiated for this type. */
#define TG_T double _Complex
#define TG_CPLX 1
#define TG_RDOUBLE 1
#define TG_L z
#define TG_U "Z"
#define TG_LSTR "z"
#define TG_LR dz
#define TG_LS zd
#define TG_RL d

#include "blas_impl.h"
