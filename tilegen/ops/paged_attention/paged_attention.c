/* Paged (decode) attention: tilegen_paged_attention_f32 / _f64, their checks, the work split
   and the driver for both dtypes (paged_attention_impl.h). */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg_attention.h"  /* wide groups run the attention op's kernel */
#include "tg_paged_attention.h"
#include "tg_threads.h"
#include "tg_workspace.h"
#include "tilegen.h"

#define TG_PAGED_PARALLEL_MIN_BYTES 1.0e6 /* K/V bytes below which a call runs on one thread */
#define TG_PAGED_MIN_PART 512             /* a split sequence's parts have at least this many
                                             tokens (their merge costs O(d) per head) */
#define TG_PAGED_UNITS_PER_THREAD 4       /* the split aims at this many units a thread */
#ifndef TG_PAGED_CHUNK
#define TG_PAGED_CHUNK 64                 /* tokens per kernel call (at most the kernel's NR):
                                             one chunk is read for every kv head of a unit
                                             before the next, so each token's page of heads is
                                             read whole while its translation and lines are
                                             hot; 64 rather than 16 halves the calls' softmax,
                                             rescale and row setup per token (AMD Zen 4, B8
                                             H32/8 D128 len 4096 blk 16, 1 thread: 18.9 -> 21.3
                                             GB/s, AVX2 21.8 -> 22.9, 2 threads 31.3 -> 33.2) */
#endif

typedef struct {
  int64_t batch, hq, hkv, group, d, block_size, bt_stride;
  int64_t q_sb, q_sh, out_sb, out_sh;
  int64_t cs[2][3];        /* k (0) and v (1) cache strides: block, token, head */
  const int32_t* bt;
  const int32_t* lens;
  int64_t elem;            /* bytes per element */
  /* the work split (tg_paged_plan): a unit is one part of one sequence for a range of kv heads */
  int64_t heads_per_unit;  /* kv heads of a unit (the last range of a sequence may be short) */
  int64_t ranges;          /* kv-head ranges per sequence */
  int split;               /* some sequence has several parts */
  int64_t part;            /* tokens per part */
  int64_t units;
  int64_t* first;          /* split: first unit of each sequence (batch + 1 entries) */
} tg_paged_shape;

typedef struct {
  int64_t b, g0, g1, t0, t1, parts, index;
} tg_paged_unit;

static inline int64_t tg_paged_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* Element offset of token t's key (which 0) or value (1) row, kv head g, sequence b. */
static inline int64_t tg_paged_row(const tg_paged_shape* s, int64_t b, int64_t g, int64_t t,
                                   int which) {
  const int64_t blk = s->bt[b * s->bt_stride + t / s->block_size];
  return blk * s->cs[which][0] + (t % s->block_size) * s->cs[which][1] + g * s->cs[which][2];
}

static inline int64_t tg_paged_parts(const tg_paged_shape* s, int64_t b) {
  if (!s->split) return 1;
  const int64_t p = (s->lens[b] + s->part - 1) / s->part;
  return p > 1 ? p : 1;
}

static inline int64_t tg_paged_first_unit(const tg_paged_shape* s, int64_t b) {
  return s->split ? s->first[b] : b * s->ranges;
}

/* Units run sequence by sequence, kv-head range by range, part by part. */
static void tg_paged_unit_of(const tg_paged_shape* s, int64_t u, tg_paged_unit* un) {
  int64_t b;
  if (!s->split) {
    b = u / s->ranges;
  } else {
    int64_t lo = 0, hi = s->batch - 1;  /* the last b with first[b] <= u */
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (s->first[mid] <= u) lo = mid; else hi = mid - 1;
    }
    b = lo;
  }
  const int64_t parts = tg_paged_parts(s, b), r = u - tg_paged_first_unit(s, b);
  un->b = b;
  un->g0 = r / parts * s->heads_per_unit;
  un->g1 = un->g0 + s->heads_per_unit < s->hkv ? un->g0 + s->heads_per_unit : s->hkv;
  un->parts = parts;
  un->index = u;
  un->t0 = parts > 1 ? (r % parts) * s->part : 0;
  const int64_t end = un->t0 + (parts > 1 ? s->part : s->lens[b]);
  un->t1 = end < s->lens[b] ? end : s->lens[b];
}

static void tg_paged_no_split(tg_paged_shape* s) {
  free(s->first);
  s->first = NULL;
  s->split = 0;
  s->units = s->batch * s->ranges;
}

/* Picks the thread count and the split. One thread: a unit per sequence, all its kv heads.
   Several: sequences longer than the part length (the tokens of TG_PAGED_UNITS_PER_THREAD
   units per thread, at least TG_PAGED_MIN_PART) are cut into parts, which keeps a unit's
   reads a token's whole page of heads at a time; only if that still leaves too few units are
   the kv heads cut into ranges as well. Returns the thread count. */
static int tg_paged_plan(tg_paged_shape* s) {
  int64_t tokens = 0;
  for (int64_t b = 0; b < s->batch; b++) tokens += s->lens[b];
  const double bytes = 2.0 * (double) tokens * (double) s->hkv * (double) s->d * (double) s->elem;
  int threads = bytes < TG_PAGED_PARALLEL_MIN_BYTES ? 1 : tg_threads_max();
  const int64_t want = TG_PAGED_UNITS_PER_THREAD * (int64_t) threads;
  s->heads_per_unit = s->hkv;
  s->ranges = 1;
  tg_paged_no_split(s);
  if (threads > 1) {
    int64_t part = (tokens + want - 1) / want;
    part = tg_paged_round_up(part < TG_PAGED_MIN_PART ? TG_PAGED_MIN_PART : part, 64);
    int64_t seq_units = 0, need = 0;
    for (int64_t b = 0; b < s->batch; b++) {
      const int64_t parts = (s->lens[b] + part - 1) / part;
      seq_units += parts > 1 ? parts : 1;
      need |= parts > 1;
    }
    if (seq_units < want) {  /* kv-head ranges too */
      int64_t ranges = (want + seq_units - 1) / seq_units;
      ranges = ranges < s->hkv ? ranges : s->hkv;
      s->heads_per_unit = (s->hkv + ranges - 1) / ranges;
      s->ranges = (s->hkv + s->heads_per_unit - 1) / s->heads_per_unit;
      s->units = s->batch * s->ranges;
    }
    if (need && (s->first = malloc(sizeof(int64_t) * (size_t) (s->batch + 1))) != NULL) {
      s->split = 1;
      s->part = part;
      int64_t u = 0;
      for (int64_t b = 0; b < s->batch; b++) {
        s->first[b] = u;
        u += tg_paged_parts(s, b) * s->ranges;
      }
      s->first[s->batch] = u;
      s->units = u;
    }
  }
  if (s->units < threads) threads = (int) (s->units > 0 ? s->units : 1);
  return threads;
}

#define DT f32
#define T float
#define EXP expf
#define TG_PAGED_KERNELS 1
#include "paged_attention_impl.h"
#undef DT
#undef T
#undef EXP
#undef TG_PAGED_KERNELS

#define DT f64
#define T double
#define EXP exp
#define TG_PAGED_KERNELS 0
#include "paged_attention_impl.h"
#undef DT
#undef T
#undef EXP
#undef TG_PAGED_KERNELS

/* Fills s from the arguments of tilegen_paged_attention_*; returns 0 or -p. Every block-table
   entry a sequence's length reaches is checked, and no other. */
static int tg_paged_shape_from(tg_paged_shape* s, int64_t batch, int64_t hq, int64_t hkv,
                               int64_t d, const void* q, int64_t q_sb, int64_t q_sh,
                               const void* k, const int64_t* ks, const void* v,
                               const int64_t* vs, int64_t num_blocks, int64_t block_size,
                               const int32_t* bt, int64_t max_blocks, int64_t bt_stride,
                               const int32_t* lens, const void* out, int64_t elem) {
  memset(s, 0, sizeof(*s));
  if (batch < 0) return -1;
  if (hq < 0) return -2;
  if (hkv < 1 || hq % hkv != 0) return -3;
  if (d < 0) return -4;
  if (ks == NULL) return -9;
  if (vs == NULL) return -11;
  if (num_blocks < 0) return -12;
  if (block_size < 1) return -13;
  if (max_blocks < 0) return -15;
  if (batch > 1 && max_blocks > 0 && bt_stride < max_blocks) return -16;
  if (batch > 0 && lens == NULL) return -17;
  int64_t tokens = 0;
  for (int64_t b = 0; b < batch; b++) {
    if (lens[b] < 0 || (lens[b] + block_size - 1) / block_size > max_blocks) return -17;
    tokens += lens[b];
  }
  const int work = tokens > 0 && hq > 0 && d > 0;
  if (tokens > 0 && bt == NULL) return -14;
  for (int64_t b = 0; b < batch; b++) {
    const int64_t used = (lens[b] + block_size - 1) / block_size;
    for (int64_t x = 0; x < used; x++) {
      const int32_t blk = bt[b * bt_stride + x];
      if (blk < 0 || blk >= num_blocks) return -14;
    }
  }
  if (work && q == NULL) return -5;
  if (work && k == NULL) return -8;
  if (work && v == NULL) return -10;
  if (batch > 0 && hq > 0 && d > 0 && out == NULL) return -19;
  s->batch = batch;
  s->hq = hq;
  s->hkv = hkv;
  s->group = hq / hkv;
  s->d = d;
  s->block_size = block_size;
  s->bt_stride = bt_stride;
  s->q_sb = q_sb;
  s->q_sh = q_sh;
  for (int x = 0; x < 3; x++) {
    s->cs[0][x] = ks[x];
    s->cs[1][x] = vs[x];
  }
  s->bt = bt;
  s->lens = lens;
  s->elem = elem;
  return 0;
}

#define TG_DEFINE_PAGED_API(DT, T, NAME)                                                        \
  int NAME(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t d, const T* q,             \
           int64_t q_stride_b, int64_t q_stride_h, const T* k_cache, const int64_t* k_strides,  \
           const T* v_cache, const int64_t* v_strides, int64_t num_blocks, int64_t block_size,  \
           const int32_t* block_table, int64_t max_blocks, int64_t block_table_stride,          \
           const int32_t* seq_lens, T scale, T* out, int64_t out_stride_b,                      \
           int64_t out_stride_h) {                                                              \
    paged_problem_##DT p;                                                                       \
    const int rc = tg_paged_shape_from(&p.s, batch, heads_q, heads_kv, d, q, q_stride_b,        \
                                       q_stride_h, k_cache, k_strides, v_cache, v_strides,      \
                                       num_blocks, block_size, block_table, max_blocks,         \
                                       block_table_stride, seq_lens, out, sizeof(T));           \
    if (rc != 0) return rc;                                                                     \
    if (batch == 0 || heads_q == 0 || d == 0) return 0;                                         \
    tg_dispatch_init();                                                                         \
    p.s.out_sb = out_stride_b;                                                                  \
    p.s.out_sh = out_stride_h;                                                                  \
    p.q = q; p.k = k_cache; p.v = v_cache; p.out = out; p.scale = scale;                        \
    paged_run_##DT(&p);                                                                         \
    free(p.s.first);                                                                            \
    return 0;                                                                                   \
  }

TG_DEFINE_PAGED_API(f32, float, tilegen_paged_attention_f32)
TG_DEFINE_PAGED_API(f64, double, tilegen_paged_attention_f64)
