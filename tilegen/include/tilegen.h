/*
 * tilegen.h -- the public C API of libtilegen.
 *
 * libtilegen is a drop-in BLAS (Fortran sgemm_/dgemm_, CBLAS cblas_sgemm/cblas_dgemm: see
 * tilegen_cblas.h) plus the native tilegen_* functions below. It picks the best micro-kernels
 * for the CPU at run time (cpuid + XGETBV on x86-64, HWCAP on AArch64); TILEGEN_ISA caps that choice,
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

/* The version of this header; tilegen_version() is that of the library loaded (the same, unless
   a program was built against another release). tilegen/_version.py is the one source: a test
   holds these to it. */
#define TILEGEN_VERSION_MAJOR 0
#define TILEGEN_VERSION_MINOR 1
#define TILEGEN_VERSION_PATCH 0
#define TILEGEN_VERSION "0.1.0"
TILEGEN_API const char* tilegen_version(void);

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

/* @op gemm: the GEMM functions (a C SDK without the gemm op leaves them out) */
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

/* @end gemm */

/* ---- convolution (tilegen/nn/) ---- */

/* @op conv2d: convolution */
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
/* @end conv2d */

/* ---- attention (tilegen/nn/) ---- */

/* @op attention: fused and paged attention */
#define TILEGEN_ATTENTION_MAX_BATCH_NDIM 8

/*
 * Scaled dot-product attention, fused (online softmax; the sq x sk scores are never stored):
 *   out[b, h, i, :] = sum_j softmax_j(scale * q[b, h, i, :] . k[b, h/g, j, :] + mask[b, h, i, j])
 *                     * v[b, h/g, j, :]
 * over a batch of batch_ndim dimensions (extents batch_shape[]) and heads_q query heads; key and
 * value head h/g serves query head h, g = heads_q / heads_kv (grouped-query attention; 1: one
 * head per head, heads_q: multi-query). Rows are contiguous: element x of row i of head h of
 * batch index (b_0, ..) is at q[sum_t b_t*q_strides[t] + h*q_strides[batch_ndim] +
 * i*q_strides[batch_ndim+1] + x], likewise k, v and out (batch_ndim + 2 strides each, in
 * elements; 0 broadcasts). Masks (optional, both may be given; batch_ndim + 3 strides: batch
 * dims, head, query row, key column): mask_keep[...] == 0 hides key j from query i,
 * mask_add[...] is added to the score. causal = 1 hides key j from query i when
 * j > i + sk - sq (the diagonal aligned bottom-right, torch's is_causal when sq == sk).
 * scale is used as given (1/sqrt(d) is the usual). A query that sees no key gets zeros.
 * out must not overlap the inputs. Returns 0, or -p when parameter p (1-based) is invalid, and
 * then writes nothing. float32 runs the generated kernels; float64 a plain C path.
 */
TILEGEN_API int tilegen_attention_f32(int64_t batch_ndim, const int64_t* batch_shape,
                                      int64_t heads_q, int64_t heads_kv, int64_t sq, int64_t sk,
                                      int64_t d, int64_t dv, const float* q,
                                      const int64_t* q_strides, const float* k,
                                      const int64_t* k_strides, const float* v,
                                      const int64_t* v_strides, const uint8_t* mask_keep,
                                      const float* mask_add, const int64_t* mask_strides,
                                      int causal, float scale, float* out,
                                      const int64_t* out_strides);
TILEGEN_API int tilegen_attention_f64(int64_t batch_ndim, const int64_t* batch_shape,
                                      int64_t heads_q, int64_t heads_kv, int64_t sq, int64_t sk,
                                      int64_t d, int64_t dv, const double* q,
                                      const int64_t* q_strides, const double* k,
                                      const int64_t* k_strides, const double* v,
                                      const int64_t* v_strides, const uint8_t* mask_keep,
                                      const double* mask_add, const int64_t* mask_strides,
                                      int causal, double scale, double* out,
                                      const int64_t* out_strides);

/*
 * Decode attention over a paged KV cache (FlashAttention's block_table layout, vLLM's):
 * one new query token per sequence b < batch, heads_q query heads; sequence b attends to its
 * first seq_lens[b] cached tokens, token t's key for kv head g being the d elements at
 *   k_cache + block_table[b*block_table_stride + t/block_size]*k_strides[0]
 *           + (t % block_size)*k_strides[1] + g*k_strides[2]
 * (likewise v_cache with v_strides; strides in elements). Query head h reads kv head
 * h / (heads_q/heads_kv). q row (b, h) is at q + b*q_stride_b + h*q_stride_h, out row likewise
 * with out_stride_b/h; rows are d contiguous elements. seq_lens[b] = 0 gives zeros. Only the
 * block_table entries below a sequence's length are read (and checked: each must be in
 * [0, num_blocks)); seq_lens[b] may not need more than max_blocks blocks. Returns 0, or -p
 * when parameter p (1-based) is invalid, and then writes nothing.
 */
TILEGEN_API int tilegen_paged_attention_f32(int64_t batch, int64_t heads_q, int64_t heads_kv,
                                            int64_t d, const float* q, int64_t q_stride_b,
                                            int64_t q_stride_h, const float* k_cache,
                                            const int64_t* k_strides, const float* v_cache,
                                            const int64_t* v_strides, int64_t num_blocks,
                                            int64_t block_size, const int32_t* block_table,
                                            int64_t max_blocks, int64_t block_table_stride,
                                            const int32_t* seq_lens, float scale, float* out,
                                            int64_t out_stride_b, int64_t out_stride_h);
TILEGEN_API int tilegen_paged_attention_f64(int64_t batch, int64_t heads_q, int64_t heads_kv,
                                            int64_t d, const double* q, int64_t q_stride_b,
                                            int64_t q_stride_h, const double* k_cache,
                                            const int64_t* k_strides, const double* v_cache,
                                            const int64_t* v_strides, int64_t num_blocks,
                                            int64_t block_size, const int32_t* block_table,
                                            int64_t max_blocks, int64_t block_table_stride,
                                            const int32_t* seq_lens, double scale, double* out,
                                            int64_t out_stride_b, int64_t out_stride_h);

/* @end attention */

/* ---- image filters (tilegen/image/) ---- */

/* @op image: the image filters */
/*
 * Neighbourhood filters on interleaved images (height x width x channels, channels <= 512),
 * with OpenCV's answers: filter2D's correlation (anchor at the kernel's centre, k/2 for even
 * sizes), GaussianBlur (its kernel, its fixed tables for sigma <= 0 and ksize <= 9, and for
 * uint8 its bit-exact fixed point), blur's normalised box (uint8 rounded as OpenCV rounds).
 * Strides are in elements (bytes for uint8) and may be negative; dst may be src (the source is
 * then copied first). Threads split the rows; the result does not depend on the thread count.
 * Returns 0, -p when parameter p (1-based) is invalid (nothing is written), or 1 when memory
 * runs out (nothing is written).
 */
#define TILEGEN_BORDER_REFLECT101 0  /* gfedcb|abcdefgh|gfedcba (OpenCV's default) */
#define TILEGEN_BORDER_REPLICATE 1   /* aaaaaa|abcdefgh|hhhhhhh */
#define TILEGEN_BORDER_CONSTANT 2    /* 000000|abcdefgh|0000000 */

/* dst(y, x) = sum_ij kernel[i*kw + j] * src(y + i - kh/2, x + j - kw/2); uint8 results are
   computed in float and rounded to nearest (ties to even), saturated. */
TILEGEN_API int tilegen_filter2d_f32(const float* src, int64_t src_stride, float* dst,
                                     int64_t dst_stride, int64_t height, int64_t width,
                                     int64_t channels, const float* kernel, int64_t kh,
                                     int64_t kw, int border);
TILEGEN_API int tilegen_filter2d_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst,
                                    int64_t dst_stride, int64_t height, int64_t width,
                                    int64_t channels, const float* kernel, int64_t kh,
                                    int64_t kw, int border);

/* A ksize x ksize Gaussian (ksize odd and positive); sigma <= 0 derives it from ksize. */
TILEGEN_API int tilegen_gaussian_blur_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst,
                                         int64_t dst_stride, int64_t height, int64_t width,
                                         int64_t channels, int64_t ksize, double sigma,
                                         int border);
TILEGEN_API int tilegen_gaussian_blur_f32(const float* src, int64_t src_stride, float* dst,
                                          int64_t dst_stride, int64_t height, int64_t width,
                                          int64_t channels, int64_t ksize, double sigma,
                                          int border);

/* The mean over a ksize x ksize box (ksize >= 1; uint8: at most 257). */
TILEGEN_API int tilegen_box_blur_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst,
                                    int64_t dst_stride, int64_t height, int64_t width,
                                    int64_t channels, int64_t ksize, int border);
TILEGEN_API int tilegen_box_blur_f32(const float* src, int64_t src_stride, float* dst,
                                     int64_t dst_stride, int64_t height, int64_t width,
                                     int64_t channels, int64_t ksize, int border);

/* dst = saturate(src + amount * (src - blur)) where |src - blur| > threshold, else src; blur is
   the Gaussian above (uint8: its uint8 result, the sum in float32 rounded to nearest even). */
TILEGEN_API int tilegen_unsharp_mask_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst,
                                        int64_t dst_stride, int64_t height, int64_t width,
                                        int64_t channels, int64_t ksize, double sigma,
                                        double amount, double threshold, int border);
TILEGEN_API int tilegen_unsharp_mask_f32(const float* src, int64_t src_stride, float* dst,
                                         int64_t dst_stride, int64_t height, int64_t width,
                                         int64_t channels, int64_t ksize, double sigma,
                                         double amount, double threshold, int border);
/* @end image */

/* For tilegen's own Python bindings: the library's private hook `name` (dispatch/tg_xapi.h), or
   NULL. Not a stable API; nothing else needs it. */
TILEGEN_API void* tilegen_private_symbol(const char* name);

/* The standard BLAS ABIs libtilegen also exports (Fortran sgemm_/dgemm_, CBLAS cblas_sgemm/
   cblas_dgemm, xerbla_) are declared in tilegen_cblas.h, not here, so that this header can sit
   beside any <cblas.h>. */

#ifdef __cplusplus
}
#endif

#endif /* TILEGEN_H */
