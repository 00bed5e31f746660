/* Fused attention: tilegen_attention_f32 / _f64, their checks, and the driver for both dtypes
   (attention_impl.h). */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg_attention.h"
#include "tg_threads.h"
#include "tg_workspace.h"
#include "tilegen.h"

#define TG_ATTN_PLAIN_ROWS 16            /* query rows per unit of the plain path */
#define TG_ATTN_PARALLEL_MIN_FLOPS 2.0e6 /* below this a call runs on one thread */
#define TG_ATTN_MAX_KB 512               /* keys per kernel call (the family refuses more) */
#ifndef TG_ATTN_TILES_PER_UNIT
#define TG_ATTN_TILES_PER_UNIT 4         /* query tiles sharing each key block's reads */
#define TG_ATTN_UNITS_PER_THREAD 4       /* ... unless there would be fewer units a thread */
#endif

/* Shapes and strides (in elements) of one call, the dtype aside. */
typedef struct {
  int ndim;
  int64_t shape[TILEGEN_ATTENTION_MAX_BATCH_NDIM];
  int64_t q_b[TILEGEN_ATTENTION_MAX_BATCH_NDIM], k_b[TILEGEN_ATTENTION_MAX_BATCH_NDIM];
  int64_t v_b[TILEGEN_ATTENTION_MAX_BATCH_NDIM], mask_b[TILEGEN_ATTENTION_MAX_BATCH_NDIM];
  int64_t out_b[TILEGEN_ATTENTION_MAX_BATCH_NDIM];
  int64_t nbatch, hq, hkv, group, sq, sk, d, dv;
  int64_t q_h, q_row, k_h, k_row, v_h, v_row, mask_h, mask_row, mask_col, out_h, out_row;
  int causal;
  int64_t off;  /* causal: query i sees keys j <= i + off (bottom-right Sk - Sq, top-left 0) */
} tg_attn_shape;

typedef struct { int64_t q, k, v, mask, out; } tg_attn_offsets;

enum { TG_BIAS_NONE = 0, TG_BIAS_SOME = 1, TG_BIAS_ALL_MASKED = 2 };

/* Element offsets of (flat batch index bi, query head h) in every operand. */
static void tg_attn_locate(const tg_attn_shape* s, int64_t bi, int64_t h, tg_attn_offsets* o) {
  o->q = o->k = o->v = o->mask = o->out = 0;
  for (int x = s->ndim - 1; x >= 0; x--) {
    const int64_t idx = bi % s->shape[x];
    bi /= s->shape[x];
    o->q += idx * s->q_b[x];
    o->k += idx * s->k_b[x];
    o->v += idx * s->v_b[x];
    o->mask += idx * s->mask_b[x];
    o->out += idx * s->out_b[x];
  }
  const int64_t hk = h / s->group;
  o->q += h * s->q_h;
  o->k += hk * s->k_h;
  o->v += hk * s->v_h;
  o->mask += h * s->mask_h;
  o->out += h * s->out_h;
}

/* Keys [0, result) are visible to query i (causal: j <= i + off). */
static inline int64_t tg_attn_keys_seen(const tg_attn_shape* s, int64_t i) {
  if (!s->causal) return s->sk;
  const int64_t e = i + s->off + 1;
  return e < 0 ? 0 : (e > s->sk ? s->sk : e);
}

static inline int64_t tg_attn_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
static inline int64_t tg_attn_align(int64_t floats) { return tg_attn_round_up(floats, 16); }

static int tg_attn_threads(const tg_attn_shape* s, int64_t units) {
  const double flops = 2.0 * (double) s->nbatch * (double) s->hq * (double) s->sq *
                       (double) s->sk * (double) (s->d + s->dv);
  if (flops < TG_ATTN_PARALLEL_MIN_FLOPS) return 1;
  const int64_t t = tg_threads_max();
  return (int) (units < t ? units : t);
}

#define DT f32
#define T float
#define EXP expf
#define TG_ATTN_TILED 1
#include "attention_impl.h"
#undef DT
#undef T
#undef EXP
#undef TG_ATTN_TILED

#define DT f64
#define T double
#define EXP exp
#define TG_ATTN_TILED 0
#include "attention_impl.h"
#undef DT
#undef T
#undef EXP
#undef TG_ATTN_TILED

/* Fills s from the arguments of tilegen_attention_*; returns 0 or -p (the C API's numbering). */
static int tg_attn_shape_from(tg_attn_shape* s, int64_t ndim, const int64_t* shape, int64_t hq,
                              int64_t hkv, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                              const void* q, const int64_t* qs, const void* k,
                              const int64_t* ks, const void* v, const int64_t* vs,
                              const void* keep, const void* add, const int64_t* ms, int causal,
                              const void* out, const int64_t* os) {
  memset(s, 0, sizeof(*s));
  if (ndim < 0 || ndim > TILEGEN_ATTENTION_MAX_BATCH_NDIM) return -1;
  if (ndim > 0 && shape == NULL) return -2;
  int64_t nbatch = 1;
  for (int64_t x = 0; x < ndim; x++) {
    if (shape[x] < 0) return -2;
    if (shape[x] > 0 && nbatch > ((int64_t) 1 << 40) / shape[x]) return -2;
    nbatch *= shape[x];
  }
  if (hq < 0 || hq > ((int64_t) 1 << 20)) return -3;
  if (hkv < 1 || hq % hkv != 0) return -4;
  if (sq < 0) return -5;
  if (sk < 0) return -6;
  if (d < 0) return -7;
  if (dv < 0) return -8;
  const int empty_out = nbatch == 0 || hq == 0 || sq == 0 || dv == 0;
  const int work = !empty_out && sk > 0;  /* any score to compute */
  if (work && d > 0 && q == NULL) return -9;
  if (qs == NULL) return -10;
  if (work && d > 0 && k == NULL) return -11;
  if (ks == NULL) return -12;
  if (work && v == NULL) return -13;
  if (vs == NULL) return -14;
  if ((keep != NULL || add != NULL) && ms == NULL) return -17;
  if (causal != TILEGEN_CAUSAL_NONE && causal != TILEGEN_CAUSAL_BOTTOM_RIGHT &&
      causal != TILEGEN_CAUSAL_TOP_LEFT)
    return -18;
  if (!empty_out && out == NULL) return -20;
  if (os == NULL) return -21;
  s->ndim = (int) ndim;
  for (int64_t x = 0; x < ndim; x++) {
    s->shape[x] = shape[x];
    s->q_b[x] = qs[x];
    s->k_b[x] = ks[x];
    s->v_b[x] = vs[x];
    s->mask_b[x] = ms ? ms[x] : 0;
    s->out_b[x] = os[x];
  }
  s->nbatch = nbatch;
  s->hq = hq;
  s->hkv = hkv;
  s->group = hq / hkv;
  s->sq = sq;
  s->sk = sk;
  s->d = d;
  s->dv = dv;
  s->q_h = qs[ndim];
  s->q_row = qs[ndim + 1];
  s->k_h = ks[ndim];
  s->k_row = ks[ndim + 1];
  s->v_h = vs[ndim];
  s->v_row = vs[ndim + 1];
  if (ms) {
    s->mask_h = ms[ndim];
    s->mask_row = ms[ndim + 1];
    s->mask_col = ms[ndim + 2];
  }
  s->out_h = os[ndim];
  s->out_row = os[ndim + 1];
  s->causal = causal != TILEGEN_CAUSAL_NONE;
  s->off = causal == TILEGEN_CAUSAL_TOP_LEFT ? 0 : sk - sq;
  return 0;
}

#define TG_DEFINE_ATTENTION_API(DT, T, NAME)                                                   \
  int NAME(int64_t batch_ndim, const int64_t* batch_shape, int64_t heads_q, int64_t heads_kv,  \
           int64_t sq, int64_t sk, int64_t d, int64_t dv, const T* q,                          \
           const int64_t* q_strides, const T* k, const int64_t* k_strides, const T* v,         \
           const int64_t* v_strides, const uint8_t* mask_keep, const T* mask_add,              \
           const int64_t* mask_strides, int causal, T scale, T* out,                           \
           const int64_t* out_strides) {                                                       \
    problem_##DT p;                                                                            \
    const int rc = tg_attn_shape_from(&p.s, batch_ndim, batch_shape, heads_q, heads_kv, sq,    \
                                      sk, d, dv, q, q_strides, k, k_strides, v, v_strides,     \
                                      mask_keep, mask_add, mask_strides, causal, out,          \
                                      out_strides);                                            \
    if (rc != 0) return rc;                                                                    \
    tg_dispatch_init();                                                                        \
    p.q = q; p.k = k; p.v = v; p.keep = mask_keep; p.add = mask_add; p.out = out;              \
    p.scale = scale;                                                                           \
    run_##DT(&p);                                                                              \
    return 0;                                                                                  \
  }

TG_DEFINE_ATTENTION_API(f32, float, tilegen_attention_f32)
TG_DEFINE_ATTENTION_API(f64, double, tilegen_attention_f64)
