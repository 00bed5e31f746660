/* NCHW input takes OIHW weights (out, in/groups, kh, kw) and gives NCHW output; NHWC takes
   OHWI (out, kh, kw, in/groups) and gives NHWC. Tensors are contiguous. */
typedef enum { TILEGEN_NCHW = 0, TILEGEN_NHWC = 1 } tilegen_conv_layout;

/*
 * y = act(conv2d(x, weight) + bias), the semantics of torch.nn.functional.conv2d: x is n images
 * of h x w with c_in channels; y has c_out channels of oh x ow, oh = (h + pad_top + pad_bottom -
 * dilation_h*(kh-1) - 1) / stride_h + 1 (likewise ow). Padding is zeros, per side; groups
 * divides c_in and c_out; bias has c_out values, or is NULL. h, w, each padding and each
 * dilation are at most 2^28. Returns 0, or -p when parameter p (1-based) is invalid -- kh (8)
 * or kw (9) also when the filter is larger than the padded input -- and then writes nothing.
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

/*
 * y = conv_transpose2d(x, weight) + bias, the semantics of torch.nn.functional.conv_transpose2d
 * (the gradient of conv2d with respect to its input): oh = (h - 1)*stride_h - 2*pad_h +
 * dilation_h*(kh - 1) + output_padding_h + 1 (likewise ow). NCHW takes torch's weights
 * (c_in, c_out/groups, kh, kw); NHWC takes (c_in, kh, kw, c_out/groups) (the same
 * transpose(0, 2, 3, 1) that turns OIHW into OHWI) and gives NHWC. output_padding must be
 * smaller than the stride or the dilation (as torch). Runs as one GEMM per image and group
 * plus a threaded col2im. Returns 0, or -p when parameter p (1-based) is invalid -- pad_h (14)
 * or pad_w (15) also when the padding leaves no output -- and then writes nothing.
 */
TILEGEN_API int tilegen_conv_transpose2d_f32(tilegen_conv_layout layout, int64_t n, int64_t h,
                                             int64_t w, int64_t c_in, const float* x,
                                             int64_t c_out, int64_t kh, int64_t kw,
                                             const float* weight, const float* bias,
                                             int64_t stride_h, int64_t stride_w, int64_t pad_h,
                                             int64_t pad_w, int64_t output_padding_h,
                                             int64_t output_padding_w, int64_t dilation_h,
                                             int64_t dilation_w, int64_t groups, float* y);
TILEGEN_API int tilegen_conv_transpose2d_f64(tilegen_conv_layout layout, int64_t n, int64_t h,
                                             int64_t w, int64_t c_in, const double* x,
                                             int64_t c_out, int64_t kh, int64_t kw,
                                             const double* weight, const double* bias,
                                             int64_t stride_h, int64_t stride_w, int64_t pad_h,
                                             int64_t pad_w, int64_t output_padding_h,
                                             int64_t output_padding_w, int64_t dilation_h,
                                             int64_t dilation_w, int64_t groups, double* y);
