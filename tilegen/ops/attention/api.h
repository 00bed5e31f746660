#define TILEGEN_ATTENTION_MAX_BATCH_NDIM 8
/* The causal argument of tilegen_attention_*. */
#define TILEGEN_CAUSAL_NONE 0
#define TILEGEN_CAUSAL_BOTTOM_RIGHT 1 /* key j hidden from query i when j > i + sk - sq */
#define TILEGEN_CAUSAL_TOP_LEFT 2     /* key j hidden from query i when j > i (torch's is_causal) */

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
 * mask_add[...] is added to the score. causal = TILEGEN_CAUSAL_BOTTOM_RIGHT (1) hides key j
 * from query i when j > i + sk - sq (the diagonal aligned bottom-right: the last query sees
 * every key, as in decoding with a KV cache); TILEGEN_CAUSAL_TOP_LEFT (2) when j > i (torch's
 * is_causal); the two agree when sq == sk. scale is used as given (1/sqrt(d) is the usual).
 * A query that sees no key (bottom-right with sq > sk: the first sq - sk rows; or a mask)
 * gets zeros.
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

