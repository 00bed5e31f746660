/*
 * tilegen_?gemm_strided and tilegen_?gemm_batched from C, checked against a plain double loop:
 *   - strided: every operand row- or column-major, with rows or columns reversed (negative
 *     strides, the pointer at element (0, 0)), C with gaps between its elements, bias with a
 *     negative or wider stride, relu/relu6; shapes through every driver path (edge tiles, the
 *     matrix-vector forms, K past a KC block, threaded blocks);
 *   - batched: one- and two-dimensional batches, B broadcast (zero stride), C with a negative
 *     batch stride or column-major (the driver's transposed path), alpha/beta other than 1/0,
 *     alpha = 0 (A full of NaN, unread), beta = 0 (C full of NaN, unread), k = 0, batches
 *     split across threads and items threaded themselves;
 *   - the error codes of both (-p for parameter p, the first one in signature order), with C
 *     untouched.
 * Every operand sits in a guarded buffer (guard_pages.h), against the page behind it or in
 * front of it (alternating), holding exactly the elements the matrix spans; the gaps inside hold
 * NaN (A, B: a wrong element read shows) or a sentinel (C: checked bit for bit).
 *
 * Prints "CASES <n> FAILED <f> WORKER_TASKS <w>" (w: tasks pool workers ran, tilegen's test
 * counter); exits 0 when nothing failed.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard_pages.h"
#include "tilegen.h"

/* The pool's test counter, a private hook of libtilegen (dispatch/tg_xapi.h). */
static uint64_t tilegen_x_worker_tasks(void) {
  uint64_t (*hook)(void) = (uint64_t (*)(void)) tilegen_private_symbol("tilegen_x_worker_tasks");
  return hook ? hook() : 0;
}

static long cases = 0, failed = 0;
static int front = 0;

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double uniform(void) {  /* U(-1, 1) */
  rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
  return (double) (rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static void fail(const char* fmt, const char* what, long a, long b, double got, double want) {
  failed++;
  if (failed <= 25) {
    fprintf(stderr, "FAIL %s: ", what);
    fprintf(stderr, fmt, a, b, got, want);
    fprintf(stderr, "\n");
  }
}

/* The span of a rows x cols matrix with strides rs, cs, in elements relative to element (0,0). */
static void span(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t* lo, int64_t* hi) {
  *lo = *hi = 0;
  if (rows == 0 || cols == 0) return;
  const int64_t r = (rows - 1) * rs, c = (cols - 1) * cs;
  *lo = (r < 0 ? r : 0) + (c < 0 ? c : 0);
  *hi = (r > 0 ? r : 0) + (c > 0 ? c : 0);
}

/* Strides of a rows x cols operand in layout `lay`: 0 row-major, 1 column-major, 2 row-major with
   rows reversed, 3 column-major with columns reversed, 4 row-major both reversed, 5 column-major
   with rows reversed; `pad` extra elements per leading dimension. */
static void strides(int lay, int64_t rows, int64_t cols, int64_t pad, int64_t* rs, int64_t* cs) {
  const int col = lay == 1 || lay == 3 || lay == 5;
  *rs = col ? 1 : cols + pad;
  *cs = col ? rows + pad : 1;
  if (lay == 2 || lay == 4 || lay == 5) *rs = -*rs;
  if (lay == 3 || lay == 4) *cs = -*cs;
}

static const double SENTINEL = -12345.625;

#define TG_DEFINE(T, PFX, TOL)                                                                  \
  typedef struct { region r; T* origin; T* base; size_t count; } PFX##mat;                     \
                                                                                                \
  /* A guarded buffer spanning the matrix exactly; every element `gap`, then the matrix's      \
     elements random (or `fill` when it is not 0). */                                          \
  static PFX##mat PFX##alloc(int64_t rows, int64_t cols, int64_t rs, int64_t cs, T gap,        \
                             double fill) {                                                     \
    PFX##mat x;                                                                                 \
    int64_t lo, hi;                                                                             \
    span(rows, cols, rs, cs, &lo, &hi);                                                         \
    x.count = (size_t) (hi - lo + 1);                                                           \
    x.base = guarded_bytes(x.count * sizeof(T), front, &x.r);                                   \
    x.origin = x.base - lo;                                                                     \
    for (size_t i = 0; i < x.count; i++) x.base[i] = gap;                                       \
    for (int64_t i = 0; i < rows; i++)                                                          \
      for (int64_t j = 0; j < cols; j++)                                                        \
        x.origin[i * rs + j * cs] = (T) (fill != 0 ? fill : uniform());                        \
    return x;                                                                                   \
  }                                                                                             \
                                                                                                \
  static double PFX##act(double x, int act) {                                                   \
    if (act == TILEGEN_ACT_RELU) return x > 0 ? x : 0;                                          \
    if (act == TILEGEN_ACT_RELU6) return x > 0 ? (x < 6 ? x : 6) : 0;                           \
    return x;                                                                                   \
  }                                                                                             \
                                                                                                \
  /* C (m x n, strides rs_c, cs_c, in buffer c) against the double-loop result of the call,     \
     computed from A, B, the C before the call (c0, same layout) and bias; gaps bit for bit. */ \
  static void PFX##check(const char* what, int64_t m, int64_t n, int64_t k, double alpha,      \
                         const T* a, int64_t rs_a, int64_t cs_a, const T* b, int64_t rs_b,     \
                         int64_t cs_b, double beta, const PFX##mat* c, const T* c0,            \
                         int64_t rs_c, int64_t cs_c, const T* bias, int64_t bias_stride,       \
                         int act) {                                                             \
    cases++;                                                                                    \
    char* inside = calloc(c->count, 1);                                                         \
    for (int64_t i = 0; i < m; i++)                                                             \
      for (int64_t j = 0; j < n; j++) {                                                         \
        const int64_t off = i * rs_c + j * cs_c;                                                \
        inside[c->origin + off - c->base] = 1;                                                  \
        double acc = 0, mag = 0;                                                                \
        if (alpha != 0)                                                                         \
          for (int64_t p = 0; p < k; p++) {                                                     \
            const double t = (double) a[i * rs_a + p * cs_a] * (double) b[p * rs_b + j * cs_b]; \
            acc += t;                                                                           \
            mag += fabs(t);                                                                     \
          }                                                                                     \
        double want = alpha * acc;                                                              \
        mag *= fabs(alpha);                                                                     \
        if (beta != 0) {                                                                        \
          want += beta * (double) c0[c->origin + off - c->base];                                \
          mag += fabs(beta * (double) c0[c->origin + off - c->base]);                           \
        }                                                                                       \
        if (bias) {                                                                             \
          want += (double) bias[j * bias_stride];                                               \
          mag += fabs((double) bias[j * bias_stride]);                                          \
        }                                                                                       \
        want = PFX##act(want, act);                                                             \
        const double got = (double) c->origin[off];                                             \
        const double tol = TOL * sqrt((double) (k > 1 ? k : 1)) * mag + 1e-300;                 \
        if (!(fabs(got - want) <= tol)) {                                                       \
          fail("m=%ld n=%ld: got %.17g want %.17g", what, (long) m, (long) n, got, want);       \
          free(inside);                                                                         \
          return;                                                                               \
        }                                                                                       \
      }                                                                                         \
    for (size_t q = 0; q < c->count; q++)                                                       \
      if (!inside[q] && memcmp(&c->base[q], &c0[q], sizeof(T)) != 0) {                          \
        fail("gap %ld of %ld written: %g (was %g)", what, (long) q, (long) c->count,           \
             (double) c->base[q], (double) c0[q]);                                              \
        break;                                                                                  \
      }                                                                                         \
    free(inside);                                                                               \
  }                                                                                             \
                                                                                                \
  static void PFX##strided_case(int64_t m, int64_t n, int64_t k, int la, int lb, int lc,       \
                                double alpha, double beta, int bias_mode, int act) {            \
    int64_t rs_a, cs_a, rs_b, cs_b, rs_c, cs_c;                                                 \
    strides(la, m, k, 3, &rs_a, &cs_a);                                                         \
    strides(lb, k, n, 1, &rs_b, &cs_b);                                                         \
    strides(lc, m, n, 2, &rs_c, &cs_c);                                                         \
    if (lc == 0 || lc == 2 || lc == 4) { /* row-major C with a gap after every element */     \
      cs_c = cs_c < 0 ? -2 : 2;                                                                 \
      rs_c = rs_c < 0 ? -(2 * n + 1) : 2 * n + 1;                                               \
    }                                                                                           \
    front ^= 1;                                                                                 \
    PFX##mat a = PFX##alloc(m, k, rs_a, cs_a, (T) NAN, 0);                                      \
    PFX##mat b = PFX##alloc(k, n, rs_b, cs_b, (T) NAN, 0);                                      \
    PFX##mat c = PFX##alloc(m, n, rs_c, cs_c, (T) SENTINEL, beta == 0 ? NAN : 0);               \
    const int64_t bias_stride = bias_mode == 1 ? -1 : 2;                                        \
    PFX##mat bias = PFX##alloc(1, n, 0, bias_stride, (T) NAN, 0);                               \
    T* c0 = malloc(c.count * sizeof(T));                                                        \
    memcpy(c0, c.base, c.count * sizeof(T));                                                    \
    const T* bp = bias_mode ? bias.origin : NULL;                                               \
    const int rc = tilegen_##PFX##gemm_strided(m, n, k, (T) alpha, a.origin, rs_a, cs_a,        \
                                               b.origin, rs_b, cs_b, (T) beta, c.origin, rs_c,  \
                                               cs_c, bp, bias_stride, act);                     \
    if (rc != 0) fail("strided returned %ld (m=%ld) %g %g", #PFX "gemm_strided", rc, m, 0, 0); \
    char what[160];                                                                             \
    snprintf(what, sizeof(what),                                                                \
             #PFX "gemm_strided k=%ld A(%ld,%ld) B(%ld,%ld) C(%ld,%ld) alpha=%g beta=%g bias=%d " \
             "act=%d", (long) k, (long) rs_a, (long) cs_a, (long) rs_b, (long) cs_b, (long) rs_c, \
             (long) cs_c, alpha, beta, bias_mode, act);                                         \
    PFX##check(what, m, n, k, alpha, a.origin, rs_a, cs_a, b.origin, rs_b,                      \
               cs_b, beta, &c, c0, rs_c, cs_c, bp, bias_stride, act);                           \
    free(c0);                                                                                   \
    release(&a.r); release(&b.r); release(&c.r); release(&bias.r);                              \
  }                                                                                             \
                                                                                                \
  static void PFX##strided_errors(void) {                                                       \
    /* (m, n, k, act) -> the return code */                                                    \
    const int64_t bad[][5] = {{-1, 2, 2, 0, -1}, {2, -1, 2, 0, -2}, {2, 2, -1, 0, -3},          \
                              {2, 2, 2, 5, -17}, {2, 2, 2, -1, -17}, {-1, -1, -1, 9, -1},       \
                              {2, -1, -1, 9, -2}};                                              \
    for (size_t q = 0; q < sizeof(bad) / sizeof(bad[0]); q++) {                                 \
      T a[4] = {1, 1, 1, 1}, b[4] = {1, 1, 1, 1}, c[4] = {7, 7, 7, 7};                          \
      const int rc = tilegen_##PFX##gemm_strided(bad[q][0], bad[q][1], bad[q][2], 1, a, 2, 1, b, \
                                                 2, 1, 0, c, 2, 1, NULL, 1, (int) bad[q][3]);   \
      cases++;                                                                                  \
      if (rc != bad[q][4] || c[0] != 7 || c[3] != 7)                                            \
        fail("case %ld returned %ld %g %g", #PFX "gemm_strided error", (long) q, rc, c[0], 7); \
    }                                                                                           \
  }                                                                                             \
                                                                                                \
  static void PFX##batched_case(int64_t ndim, const int64_t* shape, int broadcast_b,          \
                                int c_mode, int64_t m, int64_t n, int64_t k, double alpha,      \
                                double beta) {                                                  \
    int64_t count = 1;                                                                          \
    for (int64_t d = 0; d < ndim; d++) count *= shape[d];                                       \
    const int64_t lda = k + 1, ldb = k + 2;                                                     \
    const int64_t rs_a = lda, cs_a = 1, rs_b = 1, cs_b = ldb; /* B column-major */             \
    const int64_t rs_c = c_mode == 2 ? 1 : n + 1, cs_c = c_mode == 2 ? m + 1 : 1;              \
    const int64_t a_item = m * lda, b_item = broadcast_b ? 0 : n * ldb;                         \
    const int64_t c_item = (c_mode == 2 ? n * (m + 1) : m * (n + 1)) + 3;                       \
    int64_t sa[2], sb[2], sc[2], inner = 1;                                                     \
    for (int64_t d = ndim - 1; d >= 0; d--) {                                                   \
      sa[d] = a_item * inner;                                                                   \
      sb[d] = b_item * inner;                                                                   \
      sc[d] = (c_mode == 1 ? -c_item : c_item) * inner;   /* 1: items stored in reverse */     \
      inner *= shape[d];                                                                        \
    }                                                                                           \
    front ^= 1;                                                                                 \
    /* whole stacks as one operand each: A items one after another, B one (broadcast) or     \
       count, C items c_item apart (3-element gaps between them) */                            \
    PFX##mat a = PFX##alloc(count * m, k, lda, 1, (T) NAN, alpha == 0 ? NAN : 0);               \
    PFX##mat b = PFX##alloc(broadcast_b ? 1 : count, n * ldb, n * ldb, 1, (T) NAN, 0);          \
    PFX##mat c = PFX##alloc(count, c_item, c_item, 1, (T) SENTINEL, beta == 0 ? NAN : 0);       \
    T* c0 = malloc(c.count * sizeof(T));                                                        \
    memcpy(c0, c.base, c.count * sizeof(T));                                                    \
    T* c_first = c_mode == 1 ? c.origin + (count - 1) * c_item : c.origin;                     \
    const int rc = tilegen_##PFX##gemm_batched(ndim, shape, sa, sb, sc, m, n, k, (T) alpha,     \
                                               a.origin, rs_a, cs_a, b.origin, rs_b, cs_b,     \
                                               (T) beta, c_first, rs_c, cs_c);                  \
    if (rc != 0) fail("returned %ld (count %ld) %g %g", #PFX "gemm_batched", rc, count, 0, 0); \
    /* Each item: a view of C's buffer, checked against its own A and B. The gaps between      \
       items belong to no item; the last check sees them all. */                               \
    for (int64_t idx = 0; idx < count; idx++) {                                                 \
      int64_t rem = idx, off_a = 0, off_b = 0, off_c = 0;                                       \
      for (int64_t d = ndim - 1; d >= 0; d--) {                                                 \
        const int64_t i = rem % shape[d];                                                       \
        rem /= shape[d];                                                                        \
        off_a += i * sa[d]; off_b += i * sb[d]; off_c += i * sc[d];                             \
      }                                                                                         \
      PFX##mat item = c;                                                                        \
      item.origin = c_first + off_c;                                                            \
      char name[64];                                                                            \
      snprintf(name, sizeof(name), #PFX "gemm_batched item %ld", (long) idx);                   \
      cases++;                                                                                  \
      for (int64_t i = 0; i < m; i++)                                                           \
        for (int64_t j = 0; j < n; j++) {                                                       \
          double acc = 0, mag = 0;                                                              \
          if (alpha != 0)                                                                       \
            for (int64_t p = 0; p < k; p++) {                                                   \
              const double t = (double) a.origin[off_a + i * rs_a + p * cs_a] *                 \
                               (double) b.origin[off_b + p * rs_b + j * cs_b];                  \
              acc += t;                                                                         \
              mag += fabs(t);                                                                   \
            }                                                                                   \
          const T* cp0 = c0 + (item.origin - c.base) + i * rs_c + j * cs_c;                     \
          double want = alpha * acc;                                                            \
          mag *= fabs(alpha);                                                                   \
          if (beta != 0) { want += beta * (double) *cp0; mag += fabs(beta * (double) *cp0); }  \
          const double got = (double) item.origin[i * rs_c + j * cs_c];                         \
          if (!(fabs(got - want) <= TOL * sqrt((double) (k > 1 ? k : 1)) * mag + 1e-300)) {    \
            fail("(%ld,%ld): got %.17g want %.17g", name, (long) i, (long) j, got, want);       \
            goto next;                                                                          \
          }                                                                                     \
        }                                                                                       \
    next:;                                                                                      \
    }                                                                                           \
    /* every element of the buffer not in some item's m x n block: bit for bit as before */    \
    {                                                                                           \
      char* inside = calloc(c.count, 1);                                                        \
      for (int64_t idx = 0; idx < count; idx++)                                                 \
        for (int64_t i = 0; i < m; i++)                                                         \
          for (int64_t j = 0; j < n; j++) {                                                     \
            int64_t rem = idx, off_c = 0;                                                       \
            for (int64_t d = ndim - 1; d >= 0; d--) {                                           \
              off_c += rem % shape[d] * sc[d];                                                  \
              rem /= shape[d];                                                                  \
            }                                                                                   \
            inside[c_first + off_c + i * rs_c + j * cs_c - c.base] = 1;                         \
          }                                                                                     \
      for (size_t q = 0; q < c.count; q++)                                                      \
        if (!inside[q] && memcmp(&c.base[q], &c0[q], sizeof(T)) != 0) {                         \
          fail("gap %ld of %ld written: %g (was %g)", #PFX "gemm_batched", (long) q,            \
               (long) c.count, (double) c.base[q], (double) c0[q]);                             \
          break;                                                                                \
        }                                                                                       \
      free(inside);                                                                             \
    }                                                                                           \
    free(c0);                                                                                   \
    release(&a.r); release(&b.r); release(&c.r);                                                \
  }                                                                                             \
                                                                                                \
  static void PFX##batched_errors(void) {                                                       \
    /* (ndim, shape[1], m, n, k) -> the return code */                                         \
    const int64_t bad[][6] = {{-1, 2, 2, 2, 2, -1}, {2, -1, 2, 2, 2, -2}, {2, 2, -1, 2, 2, -6},  \
                              {2, 2, 2, -1, 2, -7}, {2, 2, 2, 2, -1, -8},                       \
                              {2, -1, -1, -1, -1, -2}, {1, 2, -1, -1, 2, -6}};                  \
    for (size_t q = 0; q < sizeof(bad) / sizeof(bad[0]); q++) {                                 \
      T a[16], b[16], c[16];                                                                    \
      for (int i = 0; i < 16; i++) { a[i] = b[i] = 1; c[i] = 7; }                               \
      const int64_t shape[2] = {2, bad[q][1]}, st[2] = {4, 4};                                  \
      const int rc = tilegen_##PFX##gemm_batched(bad[q][0], shape, st, st, st, bad[q][2],       \
                                                 bad[q][3], bad[q][4], 1, a, 2, 1, b, 2, 1, 0,  \
                                                 c, 2, 1);                                      \
      int untouched = 1;                                                                        \
      for (int i = 0; i < 16; i++) untouched &= c[i] == 7;                                      \
      cases++;                                                                                  \
      if (rc != bad[q][5] || !untouched)                                                        \
        fail("case %ld returned %ld %g %g", #PFX "gemm_batched error", (long) q, rc, 0, 0);     \
    }                                                                                           \
  }                                                                                             \
                                                                                                \
  static void PFX##run_all(void) {                                                              \
    const int64_t shapes[][3] = {{1, 1, 1},    {5, 7, 3},    {37, 29, 41}, {130, 70, 90},      \
                                 {1, 300, 200}, {200, 1, 300}, {64, 64, 600}, {300, 257, 310}}; \
    const double ab[][2] = {{1, 0}, {-0.5, 2}, {2, 1}, {0, -1.5}, {1.5, -0.0}};                 \
    int q = 0;                                                                                  \
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)                             \
      for (int p = 0; p < 6; p++, q++)                                                          \
        PFX##strided_case(shapes[s][0], shapes[s][1], shapes[s][2], p, (p + 1) % 6, (p + 2) % 6, \
                          ab[q % 5][0], ab[q % 5][1], q % 3, (q % 4) == 3 ? TILEGEN_ACT_RELU   \
                                                              : (q % 4) == 1 ? TILEGEN_ACT_RELU6 \
                                                                             : 0);              \
    PFX##strided_errors();                                                                      \
    const int64_t one[1] = {3}, two[2] = {2, 3}, big[1] = {2};                                  \
    const int64_t items[][3] = {{4, 5, 6}, {33, 17, 20}, {100, 90, 80}, {300, 200, 100}};       \
    q = 0;                                                                                      \
    for (size_t s = 0; s < sizeof(items) / sizeof(items[0]); s++)                               \
      for (int v = 0; v < 5; v++, q++) {                                                        \
        const int64_t m = items[s][0], n = items[s][1], k = v == 4 ? 0 : items[s][2];          \
        const int64_t nd = s == 3 ? 1 : (q % 3 == 0 ? 0 : (q % 3 == 1 ? 1 : 2));                \
        const int64_t* shape = s == 3 ? big : (nd == 1 ? one : two);                            \
        PFX##batched_case(nd, shape, q % 2, q % 3, m, n, k, ab[v % 4][0], ab[v % 4][1]);      \
      }                                                                                         \
    PFX##batched_errors();                                                                      \
  }

TG_DEFINE(float, s, 1e-5)
TG_DEFINE(double, d, 1e-12)

int main(void) {
  if (tilegen_init() != 0) {
    fprintf(stderr, "tilegen_init: %s\n", tilegen_init_error());
    return 4;
  }
  tilegen_set_num_threads(2);
  srun_all();
  drun_all();
  printf("CASES %ld FAILED %ld WORKER_TASKS %llu\n", cases, failed,
         (unsigned long long) tilegen_x_worker_tasks());
  return failed ? 1 : 0;
}
