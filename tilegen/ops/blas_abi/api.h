/* The standard BLAS ABIs libtilegen also exports (every reference BLAS routine through the
   Fortran ABI and CBLAS, OpenBLAS's extensions, xerbla_ / cblas_xerbla) are declared in
   tilegen_cblas.h, not here, so that this header can sit beside any <cblas.h>. */
