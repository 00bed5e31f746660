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
#define TILEGEN_BORDER_CONSTANT 2    /* vvvvvv|abcdefgh|vvvvvvv (v: 0, or the _ex functions' value) */
#define TILEGEN_BORDER_REFLECT 3     /* fedcba|abcdefgh|hgfedcb (the edge pixel repeated) */
#define TILEGEN_BORDER_WRAP 4        /* cdefgh|abcdefgh|abcdefg */

/* Element types of the _ex functions' images. */
#define TILEGEN_IMAGE_U8 0
#define TILEGEN_IMAGE_U16 1
#define TILEGEN_IMAGE_F32 2
#define TILEGEN_IMAGE_F64 3

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

/* The general forms: any element type above (uint16 and float64 run plain C: uint16 Gaussian is
   OpenCV's bit-exact 16.16 fixed point, float64 is summed in double), a batch of `batch` images
   (src_bstride / dst_bstride elements apart; threads take whole images when they are small),
   and border_value (`channels` values, NULL for zeros) for TILEGEN_BORDER_CONSTANT.
   Gaussian: kw x kh taps (odd), sigma_y <= 0 means sigma_x, and a size <= 0 is derived from its
   sigma as OpenCV does (round(sigma * (uint8 ? 6 : 8) + 1) | 1). filter2d's kernel is double
   (float32 and uint16 images round it to float, as OpenCV does). Parameters are numbered as
   written; the return codes are those of the functions above. */
TILEGEN_API int tilegen_gaussian_blur_ex(int type, const void* src, int64_t src_stride, void* dst,
                                         int64_t dst_stride, int64_t height, int64_t width,
                                         int64_t channels, int64_t batch, int64_t src_bstride,
                                         int64_t dst_bstride, int64_t kw, int64_t kh,
                                         double sigma_x, double sigma_y, int border,
                                         const double* border_value);
TILEGEN_API int tilegen_box_blur_ex(int type, const void* src, int64_t src_stride, void* dst,
                                    int64_t dst_stride, int64_t height, int64_t width,
                                    int64_t channels, int64_t batch, int64_t src_bstride,
                                    int64_t dst_bstride, int64_t ksize, int border,
                                    const double* border_value);
TILEGEN_API int tilegen_filter2d_ex(int type, const void* src, int64_t src_stride, void* dst,
                                    int64_t dst_stride, int64_t height, int64_t width,
                                    int64_t channels, int64_t batch, int64_t src_bstride,
                                    int64_t dst_bstride, const double* kernel, int64_t kh,
                                    int64_t kw, int border, const double* border_value);
TILEGEN_API int tilegen_unsharp_mask_ex(int type, const void* src, int64_t src_stride, void* dst,
                                        int64_t dst_stride, int64_t height, int64_t width,
                                        int64_t channels, int64_t batch, int64_t src_bstride,
                                        int64_t dst_bstride, int64_t ksize, double sigma,
                                        double amount, double threshold, int border,
                                        const double* border_value);
