/*
 * tilegen.h -- the public C API of libtilegen.
 *
 * libtilegen is a drop-in BLAS (Fortran sgemm_/dgemm_, CBLAS cblas_sgemm/cblas_dgemm) plus the
 * native tilegen_* functions below. It picks the best micro-kernels for the CPU at run time
 * (cpuid + XGETBV on x86-64, HWCAP on AArch64); TILEGEN_ISA caps that choice,
 * TILEGEN_NUM_THREADS sets the default thread count, TILEGEN_VERBOSE=1 logs the kernels chosen.
 * Every size and stride is int64_t; strides are in elements and may be negative.
 */
#ifndef TILEGEN_H
#define TILEGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TILEGEN_API __declspec(dllexport)
#else
#define TILEGEN_API __attribute__((visibility("default")))
#endif

/* Values match CBLAS, so a CBLAS enum converts directly. */
typedef enum { TILEGEN_ROW_MAJOR = 101, TILEGEN_COL_MAJOR = 102 } tilegen_layout;
typedef enum { TILEGEN_NO_TRANS = 111, TILEGEN_TRANS = 112, TILEGEN_CONJ_TRANS = 113 } tilegen_transpose;

typedef enum {
  TILEGEN_ACT_NONE = 0,
  TILEGEN_ACT_RELU = 1,   /* max(x, 0); NaN stays NaN */
  TILEGEN_ACT_RELU6 = 2,  /* min(max(x, 0), 6) */
  TILEGEN_ACT_GELU = 3,   /* x/2 * (1 + erf(x/sqrt(2))), the exact form */
  TILEGEN_ACT_SILU = 4    /* x / (1 + exp(-x)) */
} tilegen_activation;

/* Initialise dispatch (done implicitly by every entry point; thread-safe, idempotent).
   Returns 0, or -1 when TILEGEN_ISA names an ISA that is unknown or that this CPU/build lacks;
   tilegen_init_error() then says why, and the library runs with no cap. */
TILEGEN_API int tilegen_init(void);
TILEGEN_API const char* tilegen_init_error(void);

/* The ISA that serves float32 GEMM: "avx512", "avx2", "neon" or "scalar". */
TILEGEN_API const char* tilegen_isa_name(void);

TILEGEN_API void tilegen_set_num_threads(int n);  /* n < 1 restores the default */
TILEGEN_API int tilegen_get_num_threads(void);

/*
 * C = alpha * op(A) * op(B) + beta * C, then C = act(C + bias) when bias/act are given.
 * Reference-BLAS rules: beta == 0 means C is not read (NaN in C does not propagate);
 * alpha == 0 or k == 0 means A and B are not read; m == 0 or n == 0 returns at once.
 * bias has n elements (one per column of C), or is NULL.
 * Returns 0, or -p when parameter p (1-based, in this signature's order) is invalid.
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
 * Threads split the batch when the matrices are small.
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

/* ---- convolution (tilegen/nn/) ---- */

/* NCHW input takes OIHW weights (out, in/groups, kh, kw) and gives NCHW output; NHWC takes
   OHWI (out, kh, kw, in/groups) and gives NHWC. Tensors are contiguous. */
typedef enum { TILEGEN_NCHW = 0, TILEGEN_NHWC = 1 } tilegen_conv_layout;

/*
 * y = act(conv2d(x, weight) + bias), the semantics of torch.nn.functional.conv2d: x is n images
 * of h x w with c_in channels; y has c_out channels of oh x ow, oh = (h + pad_top + pad_bottom -
 * dilation_h*(kh-1) - 1) / stride_h + 1 (likewise ow). Padding is zeros, per side; groups
 * divides c_in and c_out; bias has c_out values, or is NULL. Returns 0, or -p when parameter p
 * (1-based) is invalid -- kh (8) or kw (9) also when the filter is larger than the padded input
 * -- and then writes nothing.
 */
TILEGEN_API int tilegen_conv2d_f32(tilegen_conv_layout layout, int64_t n, int64_t h, int64_t w,
                                   int64_t c_in, const float* x, int64_t c_out, int64_t kh,
                                   int64_t kw, const float* weight, const float* bias,
                                   int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                   int64_t pad_left, int64_t pad_bottom, int64_t pad_right,
                                   int64_t dilation_h, int64_t dilation_w, int64_t groups,
                                   tilegen_activation act, float* y);
TILEGEN_API int tilegen_conv2d_f64(tilegen_conv_layout layout, int64_t n, int64_t h, int64_t w,
                                   int64_t c_in, const double* x, int64_t c_out, int64_t kh,
                                   int64_t kw, const double* weight, const double* bias,
                                   int64_t stride_h, int64_t stride_w, int64_t pad_top,
                                   int64_t pad_left, int64_t pad_bottom, int64_t pad_right,
                                   int64_t dilation_h, int64_t dilation_w, int64_t groups,
                                   tilegen_activation act, double* y);

/*
 * The packed-weight form: a plan packs (and copies) the weights and bias once, for the kernels
 * this CPU runs; tilegen_conv2d_f32_run then convolves any batch and image size with them.
 * A plan is immutable: several threads may run it at once. pack returns 0, or -p for an
 * invalid parameter p (and -18 when memory for the plan cannot be had); run returns 0 or -p.
 */
typedef struct tilegen_conv2d_f32_plan tilegen_conv2d_f32_plan;
TILEGEN_API int tilegen_conv2d_f32_pack(tilegen_conv_layout layout, int64_t c_in, int64_t c_out,
                                        int64_t kh, int64_t kw, const float* weight,
                                        const float* bias, int64_t stride_h, int64_t stride_w,
                                        int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
                                        int64_t pad_right, int64_t dilation_h,
                                        int64_t dilation_w, int64_t groups,
                                        tilegen_activation act, tilegen_conv2d_f32_plan** plan);
TILEGEN_API int tilegen_conv2d_f32_run(const tilegen_conv2d_f32_plan* plan, int64_t n,
                                       int64_t h, int64_t w, const float* x, float* y);
TILEGEN_API void tilegen_conv2d_f32_plan_free(tilegen_conv2d_f32_plan* plan);

/* ---- attention (tilegen/nn/) ---- */

/* ---- image filters (tilegen/image/) ---- */

/* ---- standard BLAS ABIs (LP64: 32-bit integers) ---- */
TILEGEN_API void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const float* alpha, const float* a, const int* lda,
                        const float* b, const int* ldb, const float* beta, float* c,
                        const int* ldc);
TILEGEN_API void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                        const int* k, const double* alpha, const double* a, const int* lda,
                        const double* b, const int* ldb, const double* beta, double* c,
                        const int* ldc);

/* Enum values are CBLAS's (101/102, 111/112/113). */
TILEGEN_API void cblas_sgemm(int layout, int trans_a, int trans_b, const int m, const int n,
                             const int k, const float alpha, const float* a, const int lda,
                             const float* b, const int ldb, const float beta, float* c,
                             const int ldc);
TILEGEN_API void cblas_dgemm(int layout, int trans_a, int trans_b, const int m, const int n,
                             const int k, const double alpha, const double* a, const int lda,
                             const double* b, const int ldb, const double beta, double* c,
                             const int ldc);

/* Error reporters, as in the reference BLAS; weak, so a program may supply its own. The
   defaults print the reference message to stderr and return (they do not exit). */
TILEGEN_API void xerbla_(const char* srname, const int* info, size_t srname_len);
TILEGEN_API void cblas_xerbla(int p, const char* rout, const char* form, ...);

#ifdef __cplusplus
}
#endif

#endif /* TILEGEN_H */
