/*
 * C = alpha * op(A) * op(B) + beta * C, then C = act(C + bias) when bias/act are given.
 * Reference-BLAS rules: beta == 0 means C is not read (NaN in C does not propagate);
 * alpha == 0 or k == 0 means A and B are not read; m == 0 or n == 0 returns at once.
 * bias has n elements (one per column of C), or is NULL. a and b may be NULL only when they
 * are not read, c only when m or n is 0; a NULL array that would be touched is invalid.
 * Returns 0, or -p when parameter p (1-based, in this signature's order) is invalid, and then
 * writes nothing.
 */
TILEGEN_API int tilegen_sgemm_ex(tilegen_layout layout, tilegen_transpose trans_a,
                                 tilegen_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                 float alpha, const float* a, int64_t lda, const float* b,
                                 int64_t ldb, float beta, float* c, int64_t ldc,
                                 const float* bias, tilegen_activation act);
TILEGEN_API int tilegen_dgemm_ex(tilegen_layout layout, tilegen_transpose trans_a,
                                 tilegen_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                 double alpha, const double* a, int64_t lda, const double* b,
                                 int64_t ldb, double beta, double* c, int64_t ldc,
                                 const double* bias, tilegen_activation act);

/*
 * The general form: element (i, j) of A is a[i*rs_a + j*cs_a], and likewise for B and C, with
 * any strides (negative and zero strides included; C must not overlap A, B or itself).
 * bias[j*bias_stride] is added to column j. Returns 0 or -p as above.
 */
TILEGEN_API int tilegen_sgemm_strided(int64_t m, int64_t n, int64_t k, float alpha,
                                      const float* a, int64_t rs_a, int64_t cs_a,
                                      const float* b, int64_t rs_b, int64_t cs_b, float beta,
                                      float* c, int64_t rs_c, int64_t cs_c, const float* bias,
                                      int64_t bias_stride, tilegen_activation act);
TILEGEN_API int tilegen_dgemm_strided(int64_t m, int64_t n, int64_t k, double alpha,
                                      const double* a, int64_t rs_a, int64_t cs_a,
                                      const double* b, int64_t rs_b, int64_t cs_b, double beta,
                                      double* c, int64_t rs_c, int64_t cs_c, const double* bias,
                                      int64_t bias_stride, tilegen_activation act);

/*
 * A stack of products C[idx] = alpha * A[idx] * B[idx] + beta * C[idx] over a batch of
 * `batch_ndim` dimensions of extents batch_shape[]: matrix idx of A starts at
 * a + sum_d idx[d]*batch_stride_a[d] (a zero stride broadcasts), and likewise for B and C.
 * Threads split the batch when the matrices are small. With batch_ndim > 0, batch_shape and
 * (unless the batch or C is empty) the three batch strides may not be NULL; a, b and c as in
 * tilegen_sgemm_ex. Returns 0 or -p as above.
 */
TILEGEN_API int tilegen_sgemm_batched(int64_t batch_ndim, const int64_t* batch_shape,
                                      const int64_t* batch_stride_a,
                                      const int64_t* batch_stride_b,
                                      const int64_t* batch_stride_c, int64_t m, int64_t n,
                                      int64_t k, float alpha, const float* a, int64_t rs_a,
                                      int64_t cs_a, const float* b, int64_t rs_b, int64_t cs_b,
                                      float beta, float* c, int64_t rs_c, int64_t cs_c);
TILEGEN_API int tilegen_dgemm_batched(int64_t batch_ndim, const int64_t* batch_shape,
                                      const int64_t* batch_stride_a,
                                      const int64_t* batch_stride_b,
                                      const int64_t* batch_stride_c, int64_t m, int64_t n,
                                      int64_t k, double alpha, const double* a, int64_t rs_a,
                                      int64_t cs_a, const double* b, int64_t rs_b, int64_t cs_b,
                                      double beta, double* c, int64_t rs_c, int64_t cs_c);


/*
 * bfloat16 GEMM (bfloat16 values as their 16 bits, uint16_t): C = act(alpha * A B + beta * C
 * + bias) with A (m x k: element (i, p) at a[i*rs_a + p*cs_a]) and B (k x n) bfloat16, the
 * products summed in float32, bias (NULL, or one float32 per column at bias[j*bias_stride]) and
 * the activation applied in float32. C is float32 (c_dtype TILEGEN_F32) or bfloat16
 * (TILEGEN_BF16: the float32 result rounded once to nearest, ties to even). Strides in
 * elements, any sign. beta == 0 never reads C; alpha == 0 or k == 0 never reads A or B.
 * Threads split the rows (a few rows: the columns). Returns 0, -p when parameter p (1-based)
 * is invalid (nothing written), or 1 when memory runs out (C may be partly written).
 */
typedef enum { TILEGEN_F32 = 0, TILEGEN_BF16 = 1, TILEGEN_F16 = 2 } tilegen_dtype;
TILEGEN_API int tilegen_gemm_bf16(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                                  int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b,
                                  int64_t cs_b, float beta, void* c, int c_dtype, int64_t rs_c,
                                  int64_t cs_c, const float* bias, int64_t bias_stride,
                                  tilegen_activation act);
/* Conversions: to bfloat16 rounding to nearest (ties to even), and back (exact). */
TILEGEN_API void tilegen_bf16_from_f32(int64_t n, const float* x, int64_t incx, uint16_t* y,
                                       int64_t incy);
TILEGEN_API void tilegen_f32_from_bf16(int64_t n, const uint16_t* x, int64_t incx, float* y,
                                       int64_t incy);

/*
 * float16 GEMM (IEEE half values as their 16 bits): tilegen_gemm_bf16's contract with float16
 * A and B; C is float32 (TILEGEN_F32) or float16 (TILEGEN_F16, the float32 result rounded once
 * to nearest, ties to even; beyond the largest half, Inf). The products are summed in float32.
 * Returns 0, -p for an invalid parameter p (nothing written), or 1 when memory runs out.
 */
TILEGEN_API int tilegen_gemm_f16(int64_t m, int64_t n, int64_t k, float alpha, const uint16_t* a,
                                 int64_t rs_a, int64_t cs_a, const uint16_t* b, int64_t rs_b,
                                 int64_t cs_b, float beta, void* c, int c_dtype, int64_t rs_c,
                                 int64_t cs_c, const float* bias, int64_t bias_stride,
                                 tilegen_activation act);
/*
 * tilegen_gemm_f16 with the choice of accumulation (parameter 19): TILEGEN_ACCUMULATE_F32 is
 * tilegen_gemm_f16 itself. TILEGEN_ACCUMULATE_F16 sums the products in half precision where
 * the CPU computes in half natively (AArch64 with FP16 arithmetic, `asimdhp`: FMLA .8h), as
 * XNNPACK's f16 GEMMs do: each C element's sum starts at zero and takes the k products in
 * order, every multiply-add rounded once to half (to nearest, ties to even; past 65504, Inf).
 * Against the exact product, |P - AB| <= gamma_k * sum_p |a_ip| |b_pj| with
 * gamma_k = k u / (1 - k u), u = 2^-11 (k < 2048). alpha, beta, bias and the activation then
 * apply in float32, rounded once to C's type. Where no such ISA is usable (x86; NEON without
 * FP16; a TILEGEN_ISA cap below it) the products are summed in float32, as with
 * TILEGEN_ACCUMULATE_F32: faster there, and more accurate. Returns as tilegen_gemm_f16, or
 * -19 for another accumulate value.
 */
enum { TILEGEN_ACCUMULATE_F32 = 0, TILEGEN_ACCUMULATE_F16 = 1 };
TILEGEN_API int tilegen_gemm_f16_ex(int64_t m, int64_t n, int64_t k, float alpha,
                                    const uint16_t* a, int64_t rs_a, int64_t cs_a,
                                    const uint16_t* b, int64_t rs_b, int64_t cs_b, float beta,
                                    void* c, int c_dtype, int64_t rs_c, int64_t cs_c,
                                    const float* bias, int64_t bias_stride,
                                    tilegen_activation act, int accumulate);
/* Conversions: to float16 rounding to nearest (ties to even; Inf beyond 65504 + half an ulp,
   NaN kept), and back (exact). */
TILEGEN_API void tilegen_f16_from_f32(int64_t n, const float* x, int64_t incx, uint16_t* y,
                                      int64_t incy);
TILEGEN_API void tilegen_f32_from_f16(int64_t n, const uint16_t* x, int64_t incx, float* y,
                                      int64_t incy);

/*
 * int8 GEMM: C (int32) = A B, or C += A B when accumulate is nonzero, with A (m x k: element
 * (i, p) at a[i*rs_a + p*cs_a]) and B (k x n) int8. Exact: the int32 sums wrap modulo 2^32
 * only past 2^31 (K over 2^17 of extreme values), as NumPy's int32 matmul wraps. Strides in
 * elements, any sign. accumulate == 0 never reads C; k == 0 never reads A or B. Threads split
 * the rows (a few rows: the columns). Returns 0, -p when parameter p (1-based) is invalid
 * (nothing written), or 1 when memory runs out (C may be partly written).
 */
TILEGEN_API int tilegen_gemm_s8(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t rs_a,
                                int64_t cs_a, const int8_t* b, int64_t rs_b, int64_t cs_b,
                                int accumulate, int32_t* c, int64_t rs_c, int64_t cs_c);
/* The same with uint8 A (quantized activations: VPDPBUSD's own operand types). */
TILEGEN_API int tilegen_gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t* a,
                                  int64_t rs_a, int64_t cs_a, const int8_t* b, int64_t rs_b,
                                  int64_t cs_b, int accumulate, int32_t* c, int64_t rs_c,
                                  int64_t cs_c);
