/* Linear layers: tilegen_linear_create / _run / _destroy. Quantized weights are repacked once
   into panels of the kernels' NR rows (qgemv.py's layout); each run quantizes x per 32 values
   (codes, scale, scale x code sum), then threads split the panels, each running the widest
   kernel over full row groups and the narrowest that covers the rest, then bias and the
   activation while the panel's outputs are in cache. Float32 layers are GEMMs on B packed once
   into the GEMM kernels' panels (the product skips its per-call packing). */
#define _POSIX_C_SOURCE 200809L /* posix_memalign: aligned_alloc is missing from older Androids */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg_activation.h"
#include "tg_gemm.h"
#include "tg_qgemv.h"
#include "tg_threads.h"
#include "tg_workspace.h"
#include "tilegen.h"

#define QBLOCK TG_QGEMV_BLOCK
#define TG_LINEAR_PARALLEL_MIN (1 << 18)  /* multiply-adds below which a run takes one thread */

typedef struct {
  int fmt;          /* kernel format (TG_QGEMV_KERNEL_FORMATS' first column); -1 float32 */
  int group;        /* values per stored group (a scale, maybe a second half, codes) */
  int group_bytes;
  int second, nibbles;  /* second half: 0 none, 1 minimum, 2 zero point */
} qformat;

static int format_of(tilegen_quant q, qformat* f) {
  if (q == TILEGEN_QUANT_NONE) {
    *f = (qformat) {-1, 0, 0, 0, 0};
    return 0;
  }
  int found = 0;
#define TG_STORED(QUANT, KFMT, GROUP, BYTES) \
  if ((int) q == (QUANT)) { *f = (qformat) {KFMT, GROUP, BYTES, 0, 0}; found = 1; }
  TG_QGEMV_FORMATS(TG_STORED)
#undef TG_STORED
#define TG_KERNEL(KFMT, NAME, NIBBLES, SECOND) \
  if (found && f->fmt == (KFMT)) { f->nibbles = NIBBLES; f->second = SECOND; }
  TG_QGEMV_KERNEL_FORMATS(TG_KERNEL)
#undef TG_KERNEL
  return found ? 0 : -1;
}

struct tilegen_linear {
  qformat q;
  int64_t n, k;
  int act;
  float* bias;                 /* NULL or n floats */
  tg_packed_b_f32* wp;         /* float32 weights packed for the GEMM kernels, or NULL */
  float* wf;                   /* float32 weights (n x k) as given, when they cannot be packed */
  uint8_t* wq;                 /* packed panels, or NULL */
  int64_t panel_bytes, panels;
  tg_qgemv_format kernels;     /* the table when packed: the layout depends on its NR and offset */
};

static int64_t panel_block_bytes(const qformat* q, int nr) {
  return (int64_t) nr * ((q->second ? 4 : 2) + (q->nibbles ? 16 : 32));
}

/* Panel p of the packed layout from stored rows (qgemv.py: per 32-block the NR scales, the NR
   second halves, then the codes in quads; rows past n zero). A group of more than 32 values
   lends its scale and zero point to each of its 32-blocks. */
static void pack_panel(const tilegen_linear* L, const uint8_t* src, int64_t p, uint8_t* dst) {
  const int nr = L->kernels.nr, nb = (int) (L->k / QBLOCK);
  const int64_t row_bytes = L->k / L->q.group * L->q.group_bytes;
  const int hdr = L->q.second ? 4 : 2, quads = L->q.nibbles ? 4 : 8;
  memset(dst, 0, (size_t) L->panel_bytes);
  for (int b = 0; b < nb; b++) {
    uint8_t* blk = dst + b * panel_block_bytes(&L->q, nr);
    uint8_t* codes = blk + hdr * nr;
    const int64_t at = (int64_t) b * QBLOCK, in_group = at % L->q.group;
    for (int j = 0; j < nr; j++) {
      const int64_t row = p * nr + j;
      if (row >= L->n) break;
      const uint8_t* s = src + row * row_bytes + at / L->q.group * L->q.group_bytes;
      memcpy(blk + 2 * j, s, 2);                                  /* d */
      if (L->q.second) memcpy(blk + 2 * nr + 2 * j, s + 2, 2);    /* m or z */
      const uint8_t* c = s + hdr + (L->q.nibbles ? in_group / 2 : in_group);
      for (int t = 0; t < quads; t++)
        for (int h = 0; h < 4; h++) {
          const uint8_t v = c[4 * t + h];
          codes[(t * nr + j) * 4 + h] = L->kernels.offset == 128 ? (uint8_t) (v ^ 0x80u) : v;
        }
    }
  }
}

int tilegen_linear_create(tilegen_quant quant, int64_t out_features, int64_t in_features,
                          const void* weight, const float* bias, tilegen_activation act,
                          tilegen_linear** out) {
  qformat q;
  if (out != NULL) *out = NULL;
  if (format_of(quant, &q) != 0) return -1;
  if (out_features < 1) return -2;
  if (in_features < 1 || (q.fmt >= 0 && in_features % q.group != 0)) return -3;
  if (weight == NULL) return -4;
  if ((int) act < TILEGEN_ACT_NONE || (int) act > TILEGEN_ACT_SILU) return -6;
  if (out == NULL) return -7;
  tilegen_linear* L = calloc(1, sizeof(*L));
  if (L == NULL) return -100;
  L->q = q;
  L->n = out_features;
  L->k = in_features;
  L->act = (int) act;
  if (bias != NULL) {
    L->bias = malloc((size_t) out_features * sizeof(float));
    if (L->bias == NULL) goto oom;
    memcpy(L->bias, bias, (size_t) out_features * sizeof(float));
  }
  if (q.fmt < 0) {
    /* B = W^T: B(kk, j) = W[j][kk]. */
    L->wp = tg_gemm_pack_b_f32(in_features, out_features, weight, 1, in_features);
    if (L->wp == NULL) {  /* out of memory, or no row-major-A kernels: keep W as it is */
      const size_t bytes = (size_t) out_features * (size_t) in_features * sizeof(float);
      L->wf = malloc(bytes);
      if (L->wf == NULL) goto oom;
      memcpy(L->wf, weight, bytes);
    }
  } else {
    L->kernels = tg_qgemv_cfg()->f[q.fmt];
    if (L->kernels.count == 0) goto oom;  /* unreachable: every build has scalar kernels */
    const int nr = L->kernels.nr;
    L->panels = (out_features + nr - 1) / nr;
    L->panel_bytes = (in_features / QBLOCK) * panel_block_bytes(&q, nr);
    void* mem = NULL;
    if (posix_memalign(&mem, 64, (size_t) (L->panels * L->panel_bytes)) != 0) goto oom;
    L->wq = mem;
    for (int64_t p = 0; p < L->panels; p++)
      pack_panel(L, weight, p, L->wq + p * L->panel_bytes);
  }
  *out = L;
  return 0;
oom:
  tilegen_linear_destroy(L);
  return -100;
}

void tilegen_linear_destroy(tilegen_linear* L) {
  if (L == NULL) return;
  free(L->bias);
  tg_packed_b_free_f32(L->wp);
  free(L->wf);
  free(L->wq);
  free(L);
}

int64_t tilegen_linear_weight_bytes(const tilegen_linear* L) {
  if (L == NULL) return 0;
  if (L->wp != NULL) return tg_packed_b_bytes_f32(L->wp);
  return L->wq != NULL ? L->panels * L->panel_bytes : L->n * L->k * (int64_t) sizeof(float);
}

/* Row x (k floats) to codes per 32 values: d = max|x| / 127, c = x / d rounded to nearest
   (even), xs = (d, d * sum c). A block with NaN or infinity gets d = NaN, so its outputs are
   NaN rather than codes of undefined conversions. */
static void quantize_row(const float* x, int64_t k, int8_t* codes, float* xs) {
  for (int64_t b = 0; b < k / QBLOCK; b++) {
    const float* v = x + b * QBLOCK;
    float amax = 0;
    int finite = 1;
    for (int i = 0; i < QBLOCK; i++) {
      const float a = fabsf(v[i]);
      finite &= a <= 3.4028234663852886e38f;
      amax = a > amax ? a : amax;
    }
    int8_t* c = codes + b * QBLOCK;
    if (!finite) {
      memset(c, 0, QBLOCK);
      xs[2 * b] = xs[2 * b + 1] = NAN;
      continue;
    }
    const float d = amax / 127.0f, id = d > 0 ? 1.0f / d : 0.0f;
    int32_t sum = 0;
    for (int i = 0; i < QBLOCK; i++) {
      const int32_t q = (int32_t) nearbyintf(v[i] * id);
      c[i] = (int8_t) (q > 127 ? 127 : q < -127 ? -127 : q);
      sum += c[i];
    }
    xs[2 * b] = d;
    xs[2 * b + 1] = d * (float) sum;
  }
}

typedef struct {
  const tilegen_linear* L;
  int64_t m;
  const int8_t* xq;
  const float* xs;
  float* y;
  int64_t ldy;
} job;

static void panels_task(void* ctx, int task, int ntasks) {
  const job* j = ctx;
  const tilegen_linear* L = j->L;
  const tg_qgemv_format* f = &L->kernels;
  const int nr = f->nr, wide = f->k[f->count - 1].mr;
  const int64_t nb = L->k / QBLOCK, p0 = L->panels * task / ntasks,
                p1 = L->panels * (task + 1) / ntasks;
  for (int64_t p = p0; p < p1; p++) {
    const int64_t col = p * nr, cols = L->n - col < nr ? L->n - col : nr;
    const uint8_t* w = L->wq + p * L->panel_bytes;
    for (int64_t i = 0; i < j->m;) {
      const int64_t rows = j->m - i < wide ? j->m - i : wide;
      int kk = 0;
      while (f->k[kk].mr < rows) kk++;
      f->k[kk].fn(rows, cols, nb, j->xq + i * L->k, L->k, j->xs + i * 2 * nb, 2 * nb, w,
                  j->y + i * j->ldy + col, j->ldy);
      i += rows;
    }
    if (L->bias != NULL || L->act != TILEGEN_ACT_NONE)
      for (int64_t i = 0; i < j->m; i++) {
        float* yi = j->y + i * j->ldy + col;
        for (int64_t o = 0; o < cols; o++)
          yi[o] = (float) tg_activate((double) yi[o] + (L->bias ? (double) L->bias[col + o] : 0.0),
                                      L->act);
      }
  }
}

int tilegen_linear_run(const tilegen_linear* L, int64_t m, const float* x, int64_t ldx,
                       float* y, int64_t ldy) {
  if (L == NULL) return -1;
  if (m < 0) return -2;
  if (x == NULL && m > 0) return -3;
  if (ldx < L->k && m > 1) return -4;
  if (y == NULL && m > 0) return -5;
  if (ldy < L->n && m > 1) return -6;
  if (m == 0) return 0;
  if (L->wp != NULL) {
    tg_gemm_packed_f32(m, x, ldx, L->wp, y, ldy, L->bias, L->act);
    return 0;
  }
  if (L->wf != NULL)
    return tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_TRANS, m, L->n, L->k,
                            1.0f, x, ldx, L->wf, L->k, 0.0f, y, ldy, L->bias,
                            (tilegen_activation) L->act) == 0 ? 0 : -100;
  const int wide = L->kernels.k[L->kernels.count - 1].mr;
  const int64_t nb = L->k / QBLOCK, mpad = (m + wide - 1) / wide * wide;
  const size_t code_bytes = (size_t) (mpad * L->k), scale_off = (code_bytes + 63) / 64 * 64;
  uint8_t* buf = tg_workspace(TG_WS_LINEAR_X, scale_off + (size_t) (mpad * 2 * nb) * sizeof(float));
  if (buf == NULL) return -100;
  int8_t* xq = (int8_t*) buf;
  float* xs = (float*) (buf + scale_off);
  for (int64_t i = 0; i < m; i++) quantize_row(x + i * ldx, L->k, xq + i * L->k, xs + i * 2 * nb);
  memset(xq + m * L->k, 0, (size_t) ((mpad - m) * L->k));
  memset(xs + m * 2 * nb, 0, (size_t) ((mpad - m) * 2 * nb) * sizeof(float));
  job j = {L, m, xq, xs, y, ldy};
  const double work = (double) m * (double) L->n * (double) L->k;
  int threads = work < TG_LINEAR_PARALLEL_MIN ? 1 : tg_threads_max();
  if (threads > L->panels) threads = (int) L->panels;
  tg_parallel_run(threads, panels_task, &j);
  return 0;
}
