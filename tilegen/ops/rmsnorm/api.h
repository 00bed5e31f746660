/*
 * RMS normalisation of `rows` rows of n values (torch.nn.functional.rms_norm over the last
 * dimension): y[r, j] = x[r, j] / sqrt(mean_j x[r, j]^2 + eps) * weight[j] (weight NULL: 1).
 * Row r of x starts at x + r * x_stride, of y at y + r * y_stride (elements); rows are
 * contiguous. y may be x (with the same stride); otherwise they must not overlap. eps >= 0.
 * Threads split the rows. Returns 0, or -p when parameter p (1-based) is invalid, and then
 * writes nothing.
 */
TILEGEN_API int tilegen_rmsnorm_f32(int64_t rows, int64_t n, const float* x, int64_t x_stride,
                                    const float* weight, float eps, float* y, int64_t y_stride);
TILEGEN_API int tilegen_rmsnorm_f64(int64_t rows, int64_t n, const double* x, int64_t x_stride,
                                    const double* weight, double eps, double* y,
                                    int64_t y_stride);
