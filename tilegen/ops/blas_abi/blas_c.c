/* The BLAS/CBLAS routines for float _Complex: blas_impl.h instantiated for this type. */
#define TG_T float _Complex
#define TG_CPLX 1
#define TG_RDOUBLE 0
#define TG_L c
#define TG_U "C"
#define TG_LSTR "c"
#define TG_LR sc
#define TG_LS cs
#define TG_RL s

#include "blas_impl.h"
