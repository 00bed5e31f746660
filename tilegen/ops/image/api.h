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
