/* GEMM: the native tilegen_* entry points and the blocked driver for both dtypes. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign (packed B) under a strict -std=c11 too */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tg_activation.h"
#include "tg_gemm_dispatch.h"
#include "tg_gemm.h"
#include "tg_threads.h"
#include "tg_workspace.h"
#include "tilegen.h"

#define TG_MAX_NR 128                 /* widest register tile the driver's temp tile holds */
#define TG_DIRECT_B_MAX_PANELS 4      /* read B unpacked when C has at most this many row panels */
#define TG_DIRECT_B_L1_BYTES(cfg) ((cfg)->l1d / 3)  /* ... or when all of B is this small
                                                       (L1-resident beside A's panel and C) */
#define TG_PEEL_MIN_PANELS 4          /* B read in place is realigned from this many column panels */
#define TG_PEEL_L2_BYTES(cfg) ((cfg)->l2)  /* ... and a vector's matrix up to L2's size (beyond,
                                              the reads are memory-bound and split loads cost nothing) */
#define TG_PARALLEL_MIN_FLOPS 4.0e6   /* below this a product runs on one thread */
#define TG_GEMV_PEEL_MIN_K 128        /* ... realigned (rows read from their first full line) */
#define TG_AXPY_Y_BYTES(cfg) ((cfg)->l1d / 2)  /* y = x B: the part of y one sweep of B's rows updates
                                                (Zen 3, 4096^2: L1/2 +10-25% over L1/3: longer row streams) */
#define TG_AXPY_HALF_MIN_ROWS 64      /* x B past the thread threshold: B's rows go in two
                                         halves of at least this many */
#define TG_STACK_PACK_BYTES 32768     /* packing buffers this small live on the stack */
#define TG_PANEL_BLOCK_MAX_PANELS 2   /* column panels a one-KC-block product runs through panel_block_ */
#define TG_STREAM_B_MIN_BYTES(cfg) ((cfg)->l2 / 2)  /* few rows times a B this big stream B */

#define DT f32
#define T float
#include "gemm_impl.h"
#undef DT
#undef T
#undef F

#define DT f64
#define T double
#include "gemm_impl.h"
#undef DT
#undef T
#undef F

int tg_strides_from_blas(int layout, int trans, int64_t ld, int64_t* rs, int64_t* cs) {
  if (layout != TILEGEN_ROW_MAJOR && layout != TILEGEN_COL_MAJOR) return -1;
  if (trans != TILEGEN_NO_TRANS && trans != TILEGEN_TRANS && trans != TILEGEN_CONJ_TRANS) return -1;
  const int rowwise = (layout == TILEGEN_ROW_MAJOR) == (trans == TILEGEN_NO_TRANS);
  *rs = rowwise ? ld : 1;
  *cs = rowwise ? 1 : ld;
  return 0;
}

static int valid_act(int act) { return act >= TILEGEN_ACT_NONE && act <= TILEGEN_ACT_SILU; }

/* The arrays a product touches may not be NULL; those it never touches may (as the reference
   BLAS allows): C is written when m, n > 0; A and B are read when also k > 0 and alpha != 0
   (NaN included). */
static int writes_c(int64_t m, int64_t n) { return m > 0 && n > 0; }
static int reads_ab(int64_t m, int64_t n, int64_t k, double alpha) {
  return writes_c(m, n) && k > 0 && alpha != 0;
}

/* Parameter numbers follow the tilegen_?gemm_ex signature. */
static int check_ex(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                    const void* a, int64_t lda, const void* b, int64_t ldb, const void* c,
                    int64_t ldc, int act) {
  if (layout != TILEGEN_ROW_MAJOR && layout != TILEGEN_COL_MAJOR) return -1;
  if (ta != TILEGEN_NO_TRANS && ta != TILEGEN_TRANS && ta != TILEGEN_CONJ_TRANS) return -2;
  if (tb != TILEGEN_NO_TRANS && tb != TILEGEN_TRANS && tb != TILEGEN_CONJ_TRANS) return -3;
  if (m < 0) return -4;
  if (n < 0) return -5;
  if (k < 0) return -6;
  const int row = layout == TILEGEN_ROW_MAJOR;
  const int read = reads_ab(m, n, k, alpha);
  /* Stored extent of a row (row-major) or a column (column-major) of each operand. */
  const int64_t a_min = row ? (ta == TILEGEN_NO_TRANS ? k : m) : (ta == TILEGEN_NO_TRANS ? m : k);
  const int64_t b_min = row ? (tb == TILEGEN_NO_TRANS ? n : k) : (tb == TILEGEN_NO_TRANS ? k : n);
  const int64_t c_min = row ? n : m;
  if (read && a == NULL) return -8;
  if (lda < (a_min > 1 ? a_min : 1)) return -9;
  if (read && b == NULL) return -10;
  if (ldb < (b_min > 1 ? b_min : 1)) return -11;
  if (writes_c(m, n) && c == NULL) return -13;
  if (ldc < (c_min > 1 ? c_min : 1)) return -14;
  if (!valid_act(act)) return -16;
  return 0;
}

#define TG_DEFINE_EX(PFX, DT, T)                                                                \
  int tilegen_##PFX##gemm_ex(tilegen_layout layout, tilegen_transpose ta, tilegen_transpose tb, \
                             int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, \
                             const T* b, int64_t ldb, T beta, T* c, int64_t ldc, const T* bias,  \
                             tilegen_activation act) {                                          \
    const int err = check_ex(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, c, ldc, act);      \
    if (err) return err;                                                                        \
    int64_t rs_a = 0, cs_a = 0, rs_b = 0, cs_b = 0, rs_c = 0, cs_c = 0;                         \
    tg_strides_from_blas(layout, ta, lda, &rs_a, &cs_a);                                        \
    tg_strides_from_blas(layout, tb, ldb, &rs_b, &cs_b);                                        \
    tg_strides_from_blas(layout, TILEGEN_NO_TRANS, ldc, &rs_c, &cs_c);                          \
    tg_gemm_##DT(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, rs_c, cs_c, bias, 1,    \
                 act);                                                                          \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  int tilegen_##PFX##gemm_strided(int64_t m, int64_t n, int64_t k, T alpha, const T* a,        \
                                  int64_t rs_a, int64_t cs_a, const T* b, int64_t rs_b,        \
                                  int64_t cs_b, T beta, T* c, int64_t rs_c, int64_t cs_c,      \
                                  const T* bias, int64_t bias_stride, tilegen_activation act) { \
    if (m < 0) return -1;                                                                       \
    if (n < 0) return -2;                                                                       \
    if (k < 0) return -3;                                                                       \
    if (reads_ab(m, n, k, alpha) && a == NULL) return -5;                                       \
    if (reads_ab(m, n, k, alpha) && b == NULL) return -8;                                       \
    if (writes_c(m, n) && c == NULL) return -12;                                                \
    if (!valid_act(act)) return -17;                                                            \
    tg_gemm_##DT(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, rs_c, cs_c, bias,       \
                 bias_stride, act);                                                             \
    return 0;                                                                                   \
  }                                                                                             \
                                                                                                \
  int tilegen_##PFX##gemm_batched(                                                              \
      int64_t ndim, const int64_t* shape, const int64_t* sa, const int64_t* sb,                 \
      const int64_t* sc, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t rs_a,    \
      int64_t cs_a, const T* b, int64_t rs_b, int64_t cs_b, T beta, T* c, int64_t rs_c,         \
      int64_t cs_c) {                                                                           \
    if (ndim < 0) return -1;                                                                    \
    if (ndim > 0 && shape == NULL) return -2;                                                   \
    int64_t count = 1;                                                                          \
    for (int64_t d = 0; d < ndim; d++) {                                                        \
      if (shape[d] < 0) return -2;                                                              \
      count *= shape[d];                                                                        \
    }                                                                                           \
    if (m < 0) return -6;                                                                       \
    if (n < 0) return -7;                                                                       \
    if (k < 0) return -8;                                                                       \
    {                                                                                           \
      const int read = count > 0 && reads_ab(m, n, k, alpha);                                   \
      const int write = count > 0 && writes_c(m, n);                                            \
      /* (every item's place is computed from all three batch strides) */                      \
      if (ndim > 0 && write && sa == NULL) return -3;                                           \
      if (ndim > 0 && write && sb == NULL) return -4;                                           \
      if (ndim > 0 && write && sc == NULL) return -5;                                           \
      if (read && a == NULL) return -10;                                                        \
      if (read && b == NULL) return -13;                                                        \
      if (write && c == NULL) return -17;                                                       \
    }                                                                                           \
    if (count == 0 || m == 0 || n == 0) return 0;                                               \
    batch_##DT bt;                                                                              \
    bt.count = count; bt.ndim = ndim; bt.shape = shape; bt.sa = sa; bt.sb = sb; bt.sc = sc;     \
    if (alpha == 0 || k == 0) { /* C = beta*C, A and B unread */                                \
      bt.proto = (problem_##DT){.m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, .a = a,    \
                                .rs_a = rs_a, .cs_a = cs_a, .b = b, .rs_b = rs_b, .cs_b = cs_b,  \
                                .c = c, .rs_c = rs_c, .cs_c = cs_c};                             \
      for (int64_t idx = 0; idx < count; idx++) {                                               \
        problem_##DT p;                                                                         \
        batch_item_##DT(&bt, idx, &p);                                                          \
        scale_c_##DT(&p);                                                                       \
      }                                                                                         \
      return 0;                                                                                 \
    }                                                                                           \
    if (gemm_prepare_##DT(&bt.proto, m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c,     \
                          rs_c, cs_c, NULL, 0, TILEGEN_ACT_NONE) == 2) {                       \
      bt.sa = sb; /* the transposed problem swapped A and B: swap their batch strides */       \
      bt.sb = sa;                                                                               \
    }                                                                                           \
    const int per = threads_for_##DT(&bt.proto);                                             \
    if (per == 1 && count > 1) {                                                                \
      const double flops = 2.0 * (double) m * (double) n * (double) k * (double) count;        \
      int nt = flops < TG_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();                           \
      if (nt > count) nt = (int) count;                                                         \
      tg_parallel_run(nt, batch_task_##DT, &bt);                                             \
    } else {                                                                                    \
      for (int64_t idx = 0; idx < count; idx++) {                                               \
        problem_##DT p;                                                                      \
        batch_item_##DT(&bt, idx, &p);                                                       \
        gemm_parallel_##DT(&p, per);                                                          \
      }                                                                                         \
    }                                                                                           \
    return 0;                                                                                   \
  }

TG_DEFINE_EX(s, f32, float)
TG_DEFINE_EX(d, f64, double)
