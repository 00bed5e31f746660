/* 2-D convolution's channel-first band driver (the direct-nchw, depthwise-nchw and
   depthwise-nchw-rows paths of conv.c's plans).
   A band of output rows is computed as one flattened run of pixels q = row * wq + column over
   a padded copy of its input rows (wp = S*wq columns, S the horizontal stride): tap (kh, kw) of
   pixel q reads band[q + off(kh, kw)], so each tap is one pointer to consecutive values (the
   kernels are stride 1): a band row is split into its S column phases and the band's rows
   into their sh row phases, sh * S planes of rows of wq values, so that consecutive output
   pixels and rows stay one value and one plane row apart. The wq - ow columns past each
   output row are either computed and dropped (tiles through a small buffer) or, where pixels
   are cheap, never computed: each output row is then tiled on its own (band_job.tiling). With
   wq == ow (1x1 filters, no padding) the input and output planes are read and written in
   place. */
#include <stdatomic.h>
#include <string.h>

#include "conv_internal.h"
#include "tg_threads.h"
#include "tg_workspace.h"

#ifndef TG_CONV_COPY_MACS
#define TG_CONV_COPY_MACS 16  /* a copied-out output value costs about this many MACs (band_job.tiling;
                                 Zen 5: rows beat copies on the stem, 837 <= 16 * 112) */
#endif

enum { TILE_FLAT, TILE_COPY, TILE_ROWS };  /* band_job.tiling */

typedef struct {
  const tilegen_conv2d_f32_plan* p;
  int64_t n, h, w, oh, ow;
  const float* x;
  float* y;
  int64_t wq, wp, bh, nbands, ps, cs;  /* pitch, padded width, band rows, phase plane, channel */
  int64_t off[TG_CONV_MAX_KH * 16];       /* tap offsets in the band */
  int64_t groups, chans;                  /* items per image: groups, or depthwise blocks */
  int in_place;                           /* pointwise: the input planes are the band */
  int tiling;                             /* TILE_FLAT, TILE_COPY or TILE_ROWS (band_item) */
  int64_t lead;                           /* zeros before a band row's padding (TILE_ROWS) */
  size_t thread_floats;
  atomic_int failed;
} band_job;

/* A short copy (a tile's run): fixed-size moves the compiler inlines, not a memcpy call. */
static inline void copy_floats(float* d, const float* s, int64_t n) {
  for (; n >= 8; n -= 8, d += 8, s += 8) memcpy(d, s, 8 * sizeof(float));
  if (n >= 4) { memcpy(d, s, 4 * sizeof(float)); n -= 4; d += 4; s += 4; }
  for (; n > 0; n--) *d++ = *s++;
}

/* Input columns src[0, w) at padded columns pl.. into S column phase planes ps apart: padded
   column c goes to plane c % S, value c / S. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize")))  /* -O2 GCC leaves the 2-way split scalar */
#endif
static void split_columns(float* restrict dst, int64_t ps, int64_t S, int64_t pl,
                          const float* restrict src, int64_t w) {
  int64_t iw = 0;
  for (; iw < w && (pl + iw) % S; iw++) dst[(pl + iw) % S * ps + (pl + iw) / S] = src[iw];
  if (S == 2) {
    float* restrict even = dst + (pl + iw) / 2;
    float* restrict odd = even + ps;
    const int64_t pairs = (w - iw) / 2;
    for (int64_t i = 0; i < pairs; i++) {
      even[i] = src[iw + 2 * i];
      odd[i] = src[iw + 2 * i + 1];
    }
    iw += 2 * pairs;
  }
  for (; iw < w; iw++) dst[(pl + iw) % S * ps + (pl + iw) / S] = src[iw];
}

/* One item of a band job: output rows oh0 .. oh0 + bhr - 1 (band bi) of group gi of image ni
   (depthwise: block gi of jb->chans channels), and where its input, weights and output are. */
typedef struct {
  int64_t bi, gi, ni;
  int dw;             /* depthwise: a block of channels, not a group */
  int64_t cg, kg;     /* its input and output channels */
  int64_t oh0, bhr;   /* its first output row, its output rows */
  const float* base;  /* its input at pixel q = 0 of channel 0 (the band, or in place) */
  int64_t cs;         /* base's channel stride */
  const float* wg;    /* its packed weights */
  float* yg;          /* its first output channel's plane */
} band_item_desc;

/* Copies the band's input rows (cg channels from xg, for output rows oh0 .. oh0 + bhr - 1),
   padded, split into row and column phases. */
static inline void copy_band(const band_job* jb, float* band, const float* xg, int64_t cg,
                             int64_t oh0, int64_t bhr) {
  const geom* g = &jb->p->g;
  const int64_t S = g->sw, in_plane = jb->h * jb->w;
  const int64_t rows = (bhr - 1) * g->sh + (g->kh - 1) * g->dh + 1;
  const int64_t rp = jb->wq, ps = jb->ps;  /* a plane's row pitch, its size */
  for (int64_t ci = 0; ci < cg; ci++) {
    float* bc = band + ci * jb->cs;
    for (int64_t a = 0; a < g->sh; a++) {
      const int64_t filled = a < rows ? (rows - a + g->sh - 1) / g->sh : 0;
      for (int64_t b = 0; b < S; b++)
        memset(bc + (a * S + b) * ps + filled * rp, 0, (size_t) (ps - filled * rp) * sizeof(float));
    }
    for (int64_t r = 0, ph = 0, pr = 0; r < rows; r++) {  /* ph, pr: r's phase and its row */
      float* dst = bc + ph * S * ps + pr * rp;
      if (++ph == g->sh) { ph = 0; pr++; }
      const int64_t ih = oh0 * g->sh + r - g->pt;
      if (ih < 0 || ih >= jb->h) {
        for (int64_t b = 0; b < S; b++) memset(dst + b * ps, 0, (size_t) rp * sizeof(float));
        continue;
      }
      /* The row's pad columns are zero: band_task cleared the band, and nothing but zeros
         is written outside the rows' input columns. */
      const float* src = xg + ci * in_plane + ih * jb->w;
      if (S == 1) memcpy(dst + jb->lead + g->pl, src, (size_t) jb->w * sizeof(float));
      else split_columns(dst, ps, S, g->pl, src, jb->w);
    }
  }
}

/* Row tiles (depthwise-nchw-rows): MR output rows of a channel from its pointer to input row 0
   at the centre tap of the tile's first pixel (on a vector: run_bands' lead), the row pitch wq.
   tp: room for the kernel's input pointers. */
static inline void dw_row_tiles(const band_job* jb, const band_item_desc* it, const float** tp) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const int64_t taps = g->kh * g->kw, plane = jb->oh * jb->ow;
  const int64_t cg = it->cg, oh0 = it->oh0, bhr = it->bhr, cs = it->cs;
  const float *base = it->base, *wg = it->wg;
  float* yg = it->yg;
  const tg_f32_conv_params prm = {g->act};
  const tg_dwconv_shape* ds = p->dw;
  for (int64_t ci = 0; ci < cg; ci++)
    for (int64_t o = 0; o < bhr; o += ds->mr) {
      const int64_t rr = bhr - o < ds->mr ? bhr - o : ds->mr;
      for (int64_t x0 = 0; x0 < jb->ow; x0 += p->nr) {
        const int64_t nn = jb->ow - x0 < p->nr ? jb->ow - x0 : p->nr;
        tp[0] = base + ci * cs + o * jb->wq + x0 + g->kw / 2;
        ds->nchw_by_rows[rr](rr, nn, tp, jb->wq, wg + ci * (1 + taps),
                             yg + ci * plane + (oh0 + o) * jb->ow + x0, jb->ow, &prm);
      }
    }
}

/* TILE_COPY: a tile's r output channels from co0 (in obuf, nr apart) into the output planes.
   The tile: nn pixels from band pixel q0, which is at band row q0_row, column q0_col. */
static inline void copy_tile_out(const band_job* jb, const band_item_desc* it, const float* obuf,
                                 int64_t co0, int64_t r, int64_t q0, int64_t nn, int64_t q0_row,
                                 int64_t q0_col) {
  const int64_t nr = jb->p->nr, plane = jb->oh * jb->ow, oh0 = it->oh0;
  float* yg = it->yg;
  /* The tile's runs of real columns, row by row (b, c: the band row and column of q). */
  for (int64_t q = q0, b = q0_row, c = q0_col; q < q0 + nn; b++, c = 0) {
    const int64_t run = jb->wq - c < q0 + nn - q ? jb->wq - c : q0 + nn - q;
    const int64_t keep = c >= jb->ow ? 0 : (jb->ow - c < run ? jb->ow - c : run);
    for (int64_t i = 0; i < r && keep; i++)
      copy_floats(yg + (co0 + i) * plane + (oh0 + b) * jb->ow + c,
                  obuf + i * nr + (q - q0), keep);
    q += run;
  }
}

/* Pixel tiles (direct-nchw, depthwise-nchw), each through every block of output channels; tp:
   room for a tile's input pointers, one per tap. Output (jb->tiling): TILE_FLAT, the band one
   run of tiles written in place (wq == ow); TILE_COPY, the same run with the wq - ow dropped
   columns, each tile through a small buffer (still in L1) into its rows of the output planes;
   TILE_ROWS, each output row its own run, written in place, its last tile short (the kernels
   store only a tile's n pixels). */
static inline void pixel_tiles(const band_job* jb, float* band, float* obuf,
                               const band_item_desc* it, const float** tp) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const tg_conv_shape* sh = p->shape;
  const int dw = it->dw;
  const int64_t taps = g->kh * g->kw, plane = jb->oh * jb->ow;
  const int64_t bi = it->bi, gi = it->gi, ni = it->ni, cg = it->cg, kg = it->kg;
  const int64_t oh0 = it->oh0, bhr = it->bhr, cs = it->cs;
  const float *base = it->base, *wg = it->wg;
  float* yg = it->yg;
  const int64_t q_count = (bhr - 1) * jb->wq + jb->ow, nr = p->nr;
  const tg_f32_conv_params prm = {g->act};
  const int64_t per = 1 + taps * cg, mr = dw ? cg : sh->mr;
  /* In place, the kernel reads all nr pixels of a tile: a partial tile at the very end of the
     input would read past it, so it runs on a copy. */
  const int last = ni == jb->n - 1 && gi == jb->groups - 1 && bi == jb->nbands - 1;
  /* In place, a short first tile puts the others' input runs on cache-line boundaries
     (NumPy's arrays start 16 bytes into a line: every load would span two). */
  const int64_t peel = jb->in_place ? ((64 - (int64_t) ((uintptr_t) base % 64)) % 64) / 4 % nr : 0;
  const int by_row = jb->tiling == TILE_ROWS, copy = jb->tiling == TILE_COPY;
  const int64_t runs = by_row ? bhr : 1, run_len = by_row ? jb->ow : q_count;
  for (int64_t o = 0; o < runs; o++) {
    int64_t q0_row = 0, q0_col = 0;  /* TILE_COPY: band row and column of q0 (no division) */
    for (int64_t x0 = 0; x0 < run_len;) {
      const int64_t want = x0 == 0 && peel ? peel : nr;
      const int64_t nn = run_len - x0 < want ? run_len - x0 : want, q0 = o * jb->wq + x0;
      int64_t tcs = cs;
      if (jb->in_place && last && q0 + nr > q_count) {
        for (int64_t ci = 0; ci < cg; ci++) {
          memcpy(band + ci * nr, base + ci * cs + q0, (size_t) nn * sizeof(float));
          memset(band + ci * nr + nn, 0, (size_t) (nr - nn) * sizeof(float));
        }
        tp[0] = band;
        tcs = nr;
      } else {
        for (int64_t t = 0; t < taps; t++) tp[t] = base + jb->off[t] + q0;
      }
      for (int64_t co0 = 0; co0 < kg; co0 += mr) {
        const int64_t r = kg - co0 < mr ? kg - co0 : mr;
        float* out = copy ? obuf : yg + co0 * plane + (oh0 + o) * jb->ow + x0;
        const int64_t ys = copy ? nr : plane;
        if (dw) p->dw->nchw_by_rows[r](r, nn, tp, tcs, wg, out, ys, &prm);
        else sh->nchw_by_rows[r](r, nn, cg, tp, tcs, wg + co0 * per, out, ys, &prm);
        if (copy) copy_tile_out(jb, it, obuf, co0, r, q0, nn, q0_row, q0_col);
      }
      x0 += nn;
      for (q0_col += nn; q0_col >= jb->wq; q0_col -= jb->wq) q0_row++;
    }
  }
}

/* Item `item` of the job: band bi of output rows, of group gi (depthwise: block gi of
   channels), of image ni. */
static void band_item(const band_job* jb, float* band, float* obuf, int64_t item) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const int dw = p->method == M_DW_NCHW || p->method == M_DW_ROWS;
  const int64_t taps = g->kh * g->kw;
  const int64_t bi = item % jb->nbands, gi = item / jb->nbands % jb->groups;
  const int64_t ni = item / jb->nbands / jb->groups;
  /* The item's input channels (cg) and output channels (kg): a group, or a depthwise block. */
  const int64_t cg = dw ? (g->cin - gi * jb->chans < jb->chans ? g->cin - gi * jb->chans : jb->chans)
                        : p->cg;
  const int64_t kg = dw ? cg : p->kg;
  const int64_t oh0 = bi * jb->bh, bhr = jb->oh - oh0 < jb->bh ? jb->oh - oh0 : jb->bh;
  const int64_t in_plane = jb->h * jb->w;
  const float* xg = jb->x + (ni * g->cin + gi * jb->chans) * in_plane;
  const float* base;
  int64_t cs;
  if (jb->in_place) {
    base = xg + oh0 * jb->w;
    cs = in_plane;
  } else {
    copy_band(jb, band, xg, cg, oh0, bhr);
    base = band + jb->lead;
    cs = jb->cs;
  }
  const int64_t plane = jb->oh * jb->ow;
  float* yg = jb->y + (ni * g->cout + gi * (dw ? jb->chans : kg)) * plane;
  const float* tp[TG_CONV_MAX_KH * 16];  /* the kernels' input pointers */
  const float* wg = p->wpack + (dw ? gi * jb->chans * (1 + taps) : gi * p->gstride);
  const band_item_desc it = {bi, gi, ni, dw, cg, kg, oh0, bhr, base, cs, wg, yg};
  if (p->method == M_DW_ROWS)
    dw_row_tiles(jb, &it, tp);
  else
    pixel_tiles(jb, band, obuf, &it, tp);
}

static void band_task(void* ctx, int tid, int nt) {
  band_job* jb = ctx;
  float* band = tg_workspace(TG_WS_CONV2D_ROWS, jb->thread_floats * sizeof(float));
  if (band == NULL) {
    atomic_store(&jb->failed, 1);
    return;
  }
  float* obuf = band + round_up(jb->chans * jb->cs, 16);  /* TILE_COPY's tile buffer */
  if (!jb->in_place) memset(band, 0, (size_t) (jb->chans * jb->cs) * sizeof(float));
  const int64_t items = jb->n * jb->groups * jb->nbands;
  for (int64_t it = items * tid / nt; it < items * (tid + 1) / nt; it++)
    band_item(jb, band, obuf, it);
}

int tg_conv_run_bands(const tilegen_conv2d_f32_plan* p, int64_t n, int64_t h, int64_t w,
                      const float* x, float* y) {
  const geom* g = &p->g;
  band_job jb;
  memset(&jb, 0, sizeof(jb));
  jb.p = p;
  jb.n = n; jb.h = h; jb.w = w; jb.x = x; jb.y = y;
  jb.oh = out_size(h, g->kh, g->sh, g->pt, g->pb, g->dh);
  jb.ow = out_size(w, g->kw, g->sw, g->pl, g->pr, g->dw);
  const int64_t S = g->sw, taps = g->kh * g->kw, nr = p->nr;
  const int rows = p->method == M_DW_ROWS, dw = p->method == M_DW_NCHW || rows;
  /* input channels per item (at most): row tiles take a channel's whole plane at a time */
  jb.chans = rows ? 1 : dw ? p->dw->mr : p->cg;
  jb.groups = dw ? (g->cin + jb.chans - 1) / jb.chans : g->groups;
  jb.wq = (g->pl + w + g->pr + S - 1) / S;
  if (jb.wq < jb.ow) jb.wq = jb.ow;
  jb.wp = S * jb.wq;
  jb.in_place = is_pointwise(g);
  /* With dropped columns, rows of tiles compute round_up(ow, step) pixels a row where the
     flat run computes wq and copies each out (step: nr, or the vector for conv kernels, whose
     short tiles compute only the vectors they need): rows win where the extra pixels cost
     less than the copies, i.e. where a pixel is cheap (depthwise: taps FMAs; else cg * taps). */
  const int64_t pixel_macs = (dw ? 1 : p->cg) * taps, step = dw ? nr : p->cfg->nchw_lanes;
  jb.tiling = rows ? TILE_ROWS
              : jb.wq == jb.ow ? TILE_FLAT
              : (round_up(jb.ow, step) - jb.wq) * pixel_macs <= TG_CONV_COPY_MACS * jb.ow
                  ? TILE_ROWS : TILE_COPY;
  if (jb.tiling == TILE_ROWS) {
    /* Rows tiles never read the pitch's slack, so the pitch can put every row's first input
       column on a 64-byte line (lead zeros before the padding): the tap that reads it loads
       whole lines. */
    jb.lead = S > 1 ? 0 : (16 - g->pl % 16) % 16;  /* column phases: planes on lines */
    if (rows) jb.lead = (16 - g->kw / 2 % 16) % 16;  /* the centre tap on a line instead */
    jb.wq = round_up((jb.lead + g->pl + w + g->pr + S - 1) / S, 16);
    jb.wp = S * jb.wq;
  }

  /* Band height: the input band near 256 KiB (an L2 share), and at least a band per thread. */
  const int nt_max = tg_threads_max();
  int64_t bh = (65536 / (jb.chans * jb.wp) - (g->kh - 1) * g->dh) / g->sh;
  if (jb.in_place) bh = (jb.oh + nt_max - 1) / nt_max;  /* no copy: bands only share the work */
  if (bh < 1) bh = 1;
  if (bh > jb.oh) bh = jb.oh;
  int64_t nbands = (jb.oh + bh - 1) / bh;
  if (n * jb.groups < 4 * nt_max && nbands % nt_max) nbands += nt_max - nbands % nt_max;
  if (nbands > jb.oh) nbands = jb.oh;
  jb.bh = (jb.oh + nbands - 1) / nbands;
  jb.nbands = (jb.oh + jb.bh - 1) / jb.bh;
  /* Phase plane: its rows, then slack for the last tile's reads (all nr pixels, S apart). */
  const int64_t prows = ((jb.bh - 1) * g->sh + (g->kh - 1) * g->dh) / g->sh + 1;
  const int64_t q_end = jb.tiling == TILE_ROWS ? (jb.bh - 1) * jb.wq + round_up(jb.ow, nr)
                                               : round_up((jb.bh - 1) * jb.wq + jb.ow, nr);
  const int64_t reach = jb.lead + q_end + ((g->kh - 1) * g->dh / g->sh) * jb.wq +
                        (g->kw - 1) * g->dw / S + (rows ? 16 : 0);  /* row tiles: + a vector */
  jb.ps = round_up(reach > prows * jb.wq ? reach : prows * jb.wq, 16);
  for (int64_t t = 0; t < taps; t++) {  /* row and column phase, row within it, column */
    const int64_t dy = t / g->kw * g->dh, dx = t % g->kw * g->dw;
    jb.off[t] = (dy % g->sh * S + dx % S) * jb.ps + dy / g->sh * jb.wq + dx / S;
  }
  jb.cs = g->sh * S * jb.ps;
  if ((jb.cs * 4) % 4096 == 0) jb.cs += 16;  /* channels a page apart alias in L1 */
  const int64_t tile_rows = dw ? p->dw->mr : p->shape->mr;
  jb.thread_floats = jb.in_place ? (size_t) round_up(p->cg * nr, 16)  /* a last partial tile */
                                 : (size_t) (round_up(jb.chans * jb.cs, 16) + tile_rows * nr);
  const double flops = 2.0 * (double) n * (double) jb.oh * (double) jb.ow * (double) g->cout *
                       (double) (dw ? 1 : p->cg) * (double) taps;
  int nt = flops < TG_CONV_PARALLEL_MIN_FLOPS ? 1 : nt_max;
  const int64_t items = n * jb.groups * jb.nbands;
  if (nt > items) nt = (int) items;
  atomic_store(&jb.failed, 0);
  tg_parallel_run(nt, band_task, &jb);
  return atomic_load(&jb.failed) ? -1 : 0;
}
