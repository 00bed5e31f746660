/* The BLAS/CBLAS routines for float: blas_impl.h instantiated for this type. */
#define TG_T float
#define TG_CPLX 0
#define TG_RDOUBLE 0
#define TG_L s
#define TG_U "S"
#define TG_LSTR "s"
#define TG_LR s
#define TG_LS s
#define TG_RL s
#define TG_MIXED_DOT 1  /* sdsdot, dsdot */

#include "blas_impl.h"
