/*
 * Linear layers y = act(x W^T + bias), W of out_features x in_features, packed once at
 * creation: float32 weights, or weight-only quantized ones: llama.cpp's GGUF blocks (the quant
 * values are GGML's type ids) or group-wise int4 with zero points (AWQ/GPTQ style). A quantized layer quantizes each row of x per 32 values
 * to int8 with a float scale, as llama.cpp quantizes activations to Q8_0, and multiplies codes
 * by codes; its results carry that rounding (about 2^-8 of each block's largest value).
 */
typedef enum tilegen_quant {
  TILEGEN_QUANT_NONE = 0,   /* float32 weights: W row-major, out_features x in_features */
  TILEGEN_QUANT_Q4_0 = 2,   /* per 32 values: half d, 16 bytes of 4-bit codes c; (c - 8) d */
  TILEGEN_QUANT_Q4_1 = 3,   /* per 32 values: half d, half m, 16 bytes of codes; c d + m */
  TILEGEN_QUANT_Q8_0 = 8,   /* per 32 values: half d, 32 int8 codes; c d */
  /* Per group of 32, 64 or 128 values: half s, half z (an integer 0..15), the 4-bit codes in
     GGUF's nibble order per 32 values (byte i: value i low, i + 16 high); (c - z) s. */
  TILEGEN_QUANT_INT4_G32 = 1032,
  TILEGEN_QUANT_INT4_G64 = 1064,
  TILEGEN_QUANT_INT4_G128 = 1128
} tilegen_quant;

typedef struct tilegen_linear tilegen_linear;

/*
 * A layer from `weight`: for TILEGEN_QUANT_NONE out_features rows of in_features floats; else
 * out_features rows of in_features / group blocks, exactly as a GGUF tensor (or tg.quantize)
 * stores them (in_features must then be a multiple of the group: 32, or 64 and 128). The layer copies what it needs: weight and bias
 * (NULL, or out_features floats) may be freed afterwards. Returns 0 and sets *out, or -p when
 * parameter p (1-based) is invalid, or -100 when memory is exhausted; *out is then NULL.
 */
TILEGEN_API int tilegen_linear_create(tilegen_quant quant, int64_t out_features,
                                      int64_t in_features, const void* weight,
                                      const float* bias, tilegen_activation act,
                                      tilegen_linear** out);

/*
 * y[i, :] = act(x[i, :] W^T + bias) for m rows: x[i, j] at x[i*ldx + j] (ldx >= in_features),
 * y[i, o] at y[i*ldy + o] (ldy >= out_features); y must not overlap x. Any m >= 0 (one token's
 * decode, a batch of sequences, a whole prompt); threads split the output features. Returns 0,
 * or -p when parameter p is invalid (writing nothing), or -100 when memory is exhausted.
 */
TILEGEN_API int tilegen_linear_run(const tilegen_linear* layer, int64_t m, const float* x,
                                   int64_t ldx, float* y, int64_t ldy);

/* The bytes the packed weights take (what every run streams once per row group). */
TILEGEN_API int64_t tilegen_linear_weight_bytes(const tilegen_linear* layer);

/* Frees the layer (NULL is allowed). */
TILEGEN_API void tilegen_linear_destroy(tilegen_linear* layer);
