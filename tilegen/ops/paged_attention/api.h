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

