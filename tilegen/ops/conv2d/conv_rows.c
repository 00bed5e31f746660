/* 2-D convolution's row-cache driver (the direct, im2col and depthwise paths of conv.c's plans).
   Rows are seen in padded columns (column 0 is input column -pl), channels last. NHWC rows are
   read in place wherever a tile's columns lie inside the input; only the border segments that
   tiles reach past it (the first lw padded columns, the columns from rs on) are cached, zero
   filled. Other cases (NCHW input, transposed into the cache; im2col; images so narrow that a
   tile crosses both borders) cache whole padded rows: lw = lp, in every tile's reach. */
#include <stdatomic.h>
#include <string.h>

#include "conv_internal.h"
#include "tg_threads.h"
#include "tg_workspace.h"

#define TG_CONV_MAX_OUT_ROWS 2            /* output rows of a depthwise call (dw_rows) */

typedef struct {
  const tilegen_conv2d_f32_plan* p;
  int64_t n, h, w, oh, ow;
  const float* x;
  float* y;
  int64_t lp;         /* padded row length (columns) the tiles reach */
  int64_t lw, rs;     /* cached: padded columns [0, lw) and [rs, lp); the rest read in place */
  int64_t slot_floats;
  const float* zero;  /* lp * cin zeros: the rows above and below the input */
  int64_t nslot;      /* cached rows per thread */
  int64_t mr;         /* the main tile */
  int64_t t_first, t_last;  /* tiles: [0, t_first), MR at a time to t_last, [t_last, ow) */
  /* Depthwise with shifted blocks, stride 1: the tiles in [t_wrap, t_last) run a wrap block
     (the last dw_shift channels of each pixel's left neighbour and the first NR - dw_shift of
     the pixel, one aligned vector) in place of the head and tail blocks; [t_first, t_wrap)
     is one tile of the main kernel, before which a pixel's left neighbour is padding. */
  int64_t t_wrap;
  int dw_wrap;
  int64_t lda, kdim;  /* im2col: patch row stride and length */
  /* Depthwise: the channel blocks start dw_shift channels before multiples of NR (block 0 is
     the first NR - dw_shift channels), so that in-place loads start on vector boundaries;
     dw_panels holds their weights (the plan's own panels when the shift is 0). */
  int64_t dw_shift, dw_nb;  /* dw_shift is also x's floats past a vector boundary: the cached
                               rows and the zero row start that far in too, like x's */
  int64_t dw_rows;    /* depthwise: output rows per kernel call (1, or the shape's out_rows) */
  const float* dw_panels;
  size_t thread_floats;
  atomic_int failed;  /* a thread could not get its scratch */
} job;

typedef struct {
  float* rows;        /* nslot cached rows (or border segments) */
  int64_t* tags;      /* which (image, row) each slot holds, -1 none */
  float* orow;        /* NCHW output: one row, ow * cout, channels last */
  float* patch;       /* im2col: mr x lda */
} scratch;

/* One input row as the tiles read it: the cached left segment (padded columns from 0), the
   row in place (from column pl) and the cached right segment (from column rs). */
typedef struct { const float *left, *mid, *right; } row_view;

/* Where a tile whose padded columns are [a, b] reads its row (a pointer to column a). */
static inline const float* tile_row(const job* jb, const row_view* v, int64_t a, int64_t b) {
  const int64_t cin = jb->p->g.cin;
  if (b < jb->lw) return v->left + a * cin;
  if (a >= jb->rs) return v->right + (a - jb->rs) * cin;
  return v->mid + (a - jb->p->g.pl) * cin;
}

/* Padded columns [c0, c1) of input row ih of image ni into dst, channels last, zero filled. */
static void fill_columns(const job* jb, int64_t ni, int64_t ih, int64_t c0, int64_t c1,
                         float* dst) {
  const geom* g = &jb->p->g;
  const int64_t cin = g->cin, w = jb->w;
  int64_t i0 = c0 - g->pl, i1 = c1 - g->pl;  /* input columns */
  const int64_t lo = i0 < 0 ? 0 : i0 > w ? w : i0, hi = i1 > w ? w : i1 < 0 ? 0 : i1;
  if (lo > i0) memset(dst, 0, (size_t) ((lo - i0) * cin) * sizeof(float));
  float* d = dst + (lo - i0) * cin;
  if (hi > lo && g->layout == TILEGEN_NHWC) {
    memcpy(d, jb->x + ((ni * jb->h + ih) * w + lo) * cin, (size_t) ((hi - lo) * cin) * sizeof(float));
  } else if (hi > lo) {  /* NCHW: transpose C x W into W x C, in blocks that stay in L1 */
    const float* src = jb->x + ni * cin * jb->h * w + ih * w + lo;
    const int64_t plane = jb->h * w;
    for (int64_t ch0 = 0; ch0 < cin; ch0 += 16)
      for (int64_t w0 = 0; w0 < hi - lo; w0 += 16) {
        const int64_t ch1 = ch0 + 16 < cin ? ch0 + 16 : cin, w1 = w0 + 16 < hi - lo ? w0 + 16 : hi - lo;
        for (int64_t c = ch0; c < ch1; c++)
          for (int64_t x = w0; x < w1; x++) d[x * cin + c] = src[c * plane + x];
      }
  }
  if (i1 > hi) memset(d + (hi - lo) * cin, 0, (size_t) ((i1 - hi) * cin) * sizeof(float));
}

static row_view get_row(const job* jb, scratch* s, int64_t ni, int64_t ih) {
  const geom* g = &jb->p->g;
  const int64_t cin = g->cin;
  const float* mid = jb->lw < jb->rs ? jb->x + (ni * jb->h + ih) * jb->w * cin : NULL;
  if (jb->lw == 0 && jb->rs >= jb->lp) return (row_view){NULL, mid, NULL};  /* all in place */
  const int64_t slot = ih % jb->nslot, tag = ni * jb->h + ih;
  float* dst = s->rows + slot * jb->slot_floats;
  float* right = dst + jb->lw * cin;
  if (s->tags[slot] != tag) {
    s->tags[slot] = tag;
    if (jb->lw > 0) fill_columns(jb, ni, ih, 0, jb->lw, dst);
    if (jb->rs < jb->lp) fill_columns(jb, ni, ih, jb->rs, jb->lp, right);
  }
  return (row_view){dst, mid, right};
}
/* The KH input rows of output row oy of image ni, and `extra` more below them (the rows of
   output rows oy + 1, ..., oy + extra: stride 1, no vertical dilation). */
static void row_views(const job* jb, scratch* s, int64_t ni, int64_t oy, int64_t extra,
                      row_view* rv) {
  const geom* g = &jb->p->g;
  const int64_t cin = g->cin;
  for (int64_t ky = 0; ky < g->kh + extra; ky++) {
    const int64_t iy = oy * g->sh + ky * g->dh - g->pt;
    rv[ky] = iy < 0 || iy >= jb->h ? (row_view){jb->zero, jb->zero + g->pl * cin, jb->zero + jb->rs * cin}
                                   : get_row(jb, s, ni, iy);
  }
}

/* The output pixels of the tile starting at o0. */
static inline int64_t tile_len(const job* jb, int64_t o0) {
  const int64_t end = o0 < jb->t_first ? jb->t_first : o0 < jb->t_wrap ? jb->t_wrap
                      : o0 < jb->t_last ? jb->t_last : jb->ow;
  return end - o0 < jb->mr ? end - o0 : jb->mr;
}

/* Depthwise pixels are cheap next to copying the border columns a tile reaches past the
   image: the pixels that reach the left padding get a tile of their own (one pixel: 4% faster
   than a main-kernel tile of 4 whose 6 columns are copied, AMD Zen 4), the middle tiles stop
   where their computed pixels would reach the right padding or past it, and the rest is one
   last tile. */
static int main_kernel_exact(const tg_dwconv_shape* sh, int64_t r) {
  return sh->tile_mr[r] == r && sh->by_rows[r] == sh->by_rows[sh->mr];
}

static void plan_tiles(job* jb) {
  const geom* g = &jb->p->g;
  jb->t_first = jb->t_wrap = 0;
  jb->t_last = jb->ow;
  jb->dw_wrap = 0;
  if (jb->p->method != M_DEPTHWISE) return;
  const tg_dwconv_shape* sh = jb->p->dw;
  const int64_t span = (g->kw - 1) * g->dw, inside = g->pl + jb->w - span;  /* a + span < pl + w */
  int64_t first = (g->pl + g->sw - 1) / g->sw, right = inside <= 0 ? 0 : (inside + g->sw - 1) / g->sw;
  if (first > jb->ow) first = jb->ow;
  if (right > jb->ow) right = jb->ow;
  if (right < first) right = first;
  jb->t_first = jb->t_wrap = first;
  if (jb->dw_shift && g->sw == 1 && jb->p->ps_mult == 1) {
    /* A wrap tile's first pixel needs its left neighbour in place (o0 - 1 >= pl): the first
       tile is then the fewest pixels past that which the main kernel computes exactly, its
       columns cached (6 at pad 1, not the one-pixel tile's 3, but no one-pixel kernel calls
       and no tile between: 2% faster at 144 x 56x56, AMD Zen 4). */
    int64_t r = g->pl + 1 > first ? g->pl + 1 : first;
    while (r < jb->mr && !main_kernel_exact(sh, r)) r++;
    if (r < right) {
      jb->dw_wrap = 1;
      jb->t_first = jb->t_wrap = r;
    }
  }
  /* The middle's last tile: exact (computes no pixel past it) and the main kernel's (a pixel
     or two more in the last tile beats a one-pixel kernel call per channel block). */
  int64_t rem = (right - jb->t_wrap) % jb->mr;
  while (rem > 0 && !main_kernel_exact(sh, rem)) rem--;
  jb->t_last = jb->t_wrap + (right - jb->t_wrap) / jb->mr * jb->mr + rem;
}

/* Depthwise: nrows output rows (y: the first, channels last), up to DW_TILES tiles at a time,
   every channel block across them (the tiles' row pointers found once for all the blocks). */
enum { DW_TILES = 16 };
static void dw_rows(const job* jb, const row_view* rv, int64_t nrows, float* y) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const tg_dwconv_shape* sh = p->dw;
  const int64_t cin = g->cin, ps = cin * p->ps_mult, dps = g->dw * cin, in_rows = g->kh + nrows - 1;
  const tg_f32_conv_params prm = {g->act};
  const float* base[DW_TILES][TG_CONV_MAX_KH + TG_CONV_MAX_OUT_ROWS];
  const float* krows[TG_CONV_MAX_KH + TG_CONV_MAX_OUT_ROWS];
  int64_t at[DW_TILES], len[DW_TILES];
  int wrap[DW_TILES];
  const int64_t shift = jb->dw_shift, last = jb->dw_nb - 1;
  for (int64_t o0 = 0; o0 < jb->ow;) {
    int nt = 0;
    for (; nt < DW_TILES && o0 < jb->ow; nt++) {
      const int64_t r = tile_len(jb, o0);
      const int64_t a = o0 * g->sw, e = a + (sh->tile_mr[r] - 1) * g->sw + (g->kw - 1) * g->dw;
      for (int64_t ky = 0; ky < in_rows; ky++) base[nt][ky] = tile_row(jb, &rv[ky], a, e);
      at[nt] = o0;
      len[nt] = r;
      wrap[nt] = jb->dw_wrap && o0 >= jb->t_wrap && o0 + r <= jb->t_last;
      o0 += r;
    }
    for (int64_t b = 0; b < jb->dw_nb; b++) {
      const int64_t c0 = b == 0 ? 0 : b * p->nr - shift;
      const int64_t c1 = (b + 1) * p->nr - shift, nn = (c1 < cin ? c1 : cin) - c0;
      const float* wp = jb->dw_panels + b * p->panel;
      for (int t = 0; t < nt; t++) {
        int64_t r = len[t], off = c0, nw = nn;  /* off: from the tile's input pointers */
        const float* ww = wp;
        float* yo = y + at[t] * cin + c0;
        if (wrap[t] && b == 0) {  /* the wrap block: from `shift` channels before each pixel */
          off = -shift;
          nw = p->nr;
          ww = jb->dw_panels + jb->dw_nb * p->panel;
          yo = y + at[t] * cin - shift;
        } else if (wrap[t] && b == last) {  /* tails: the next tile's wrap block, but the last */
          if (at[t] + r != jb->t_last) continue;
          off = c0 + (r - 1) * ps;
          yo = y + (at[t] + r - 1) * cin + c0;
          r = 1;
        }
        for (int64_t ky = 0; ky < in_rows; ky++) krows[ky] = base[t][ky] + off;
        sh->by_rows[r](r, nw, krows, ps, dps, ww, yo, cin, nrows, jb->ow * cin, &prm);
      }
    }
  }
}

/* Output rows oy .. oy + nrows - 1 of image ni (nrows > 1: depthwise, channels last): every
   group, tile and block of output channels. */
static void conv_row(const job* jb, scratch* s, int64_t ni, int64_t oy, int64_t nrows) {
  const tilegen_conv2d_f32_plan* p = jb->p;
  const geom* g = &p->g;
  const int64_t cin = g->cin, cout = g->cout, ow = jb->ow;
  row_view rv[TG_CONV_MAX_KH + TG_CONV_MAX_OUT_ROWS];
  row_views(jb, s, ni, oy, nrows - 1, rv);
  const int nchw_out = g->layout == TILEGEN_NCHW;
  float* ybase = nchw_out ? s->orow : jb->y + (ni * jb->oh + oy) * ow * cout;
  const tg_f32_conv_params prm = {g->act};
  const int64_t ps = cin * p->ps_mult, dps = g->dw * cin, step = g->sw * cin;
  const float* krows[TG_CONV_MAX_KH];
  if (p->method == M_DEPTHWISE) {
    dw_rows(jb, rv, nrows, ybase);
  } else {
    const tg_conv_shape* sh = p->shape;
    const int64_t cg = p->cg, kg = p->kg, taps = g->kh * g->kw;
    for (int64_t gi = 0; gi < g->groups; gi++) {
      for (int64_t o0 = 0; o0 < ow; o0 += sh->mr) {
        const int64_t r = ow - o0 < sh->mr ? ow - o0 : sh->mr;
        const float* const* kr = krows;
        int64_t c = p->fold ? g->kw * cg : cg, kps = ps;
        if (p->method == M_IM2COL) {  /* gather the tile's patch: r rows of KH*KW*cg */
          for (int64_t i = 0; i < r; i++)
            for (int64_t ky = 0; ky < g->kh; ky++)
              for (int64_t kx = 0; kx < g->kw; kx++)
                memcpy(s->patch + i * jb->lda + (ky * g->kw + kx) * cg,  /* whole rows cached */
                       rv[ky].left + (o0 + i) * step + kx * dps + gi * cg, (size_t) cg * sizeof(float));
          krows[0] = s->patch;
          c = taps * cg;
          kps = jb->lda;
        } else {
          /* Pixel i, tap kx reads column a + i*sw + kx*dw (folded taps too: dw is 1). */
          const int64_t a = o0 * g->sw, b = a + (sh->tile_mr[r] - 1) * g->sw + (g->kw - 1) * g->dw;
          for (int64_t ky = 0; ky < g->kh; ky++) krows[ky] = tile_row(jb, &rv[ky], a, b) + gi * cg;
        }
        for (int64_t b = 0; b < p->nb; b++) {
          const int64_t co0 = b * p->nr, nn = kg - co0 < p->nr ? kg - co0 : p->nr;
          sh->by_rows[r](r, nn, c, kr, kps, dps, p->wpack + (gi * p->nb + b) * p->panel,
                         ybase + o0 * cout + gi * kg + co0, cout, &prm);
        }
      }
    }
  }
  if (nchw_out) {  /* the row, channels last, into its place in each output plane */
    float* y = jb->y + ni * cout * jb->oh * ow + oy * ow;
    const int64_t plane = jb->oh * ow;
    for (int64_t c0 = 0; c0 < cout; c0 += 16)
      for (int64_t w0 = 0; w0 < ow; w0 += 16) {
        const int64_t c1 = c0 + 16 < cout ? c0 + 16 : cout, w1 = w0 + 16 < ow ? w0 + 16 : ow;
        for (int64_t co = c0; co < c1; co++)
          for (int64_t x = w0; x < w1; x++) y[co * plane + x] = s->orow[x * cout + co];
      }
  }
}

static int setup_scratch(const job* jb, scratch* s) {
  float* base = tg_workspace(TG_WS_CONV2D_ROWS, (size_t) round_up((int64_t) jb->thread_floats, 16) *
                                                  sizeof(float) +
                                              (size_t) jb->nslot * sizeof(int64_t));
  if (base == NULL) return -1;
  const tilegen_conv2d_f32_plan* p = jb->p;
  s->rows = base + jb->dw_shift;
  float* next = base + round_up(jb->nslot * jb->slot_floats + jb->dw_shift, 16);
  s->orow = next;
  next += p->g.layout == TILEGEN_NCHW ? round_up(jb->ow * p->g.cout, 16) : 0;
  s->patch = next;
  if (p->method == M_IM2COL) {
    memset(s->patch, 0, (size_t) (jb->mr * jb->lda) * sizeof(float));
    next += jb->mr * jb->lda;
  }
  s->tags = (int64_t*) (void*) (base + round_up((int64_t) jb->thread_floats, 16));
  for (int64_t i = 0; i < jb->nslot; i++) s->tags[i] = -1;
  return 0;
}

static void rows_task(void* ctx, int tid, int nt) {
  job* jb = ctx;
  scratch s;
  if (setup_scratch(jb, &s) != 0) {
    atomic_store(&jb->failed, 1);
    return;
  }
  const int64_t rows = jb->n * jb->oh, r1 = rows * (tid + 1) / nt;
  for (int64_t r = rows * tid / nt; r < r1;) {
    const int64_t oy = r % jb->oh;
    const int64_t nrows = jb->dw_rows > 1 && r + 1 < r1 && oy + 1 < jb->oh ? 2 : 1;
    conv_row(jb, &s, r / jb->oh, oy, nrows);
    r += nrows;
  }
}

/* The shift that puts depthwise channel blocks on vector boundaries of x (NR floats): where
   every pixel of an NHWC image starts at the same place in a vector, loads that straddle two
   cache lines cost about a third of the kernel's time (AMD Zen 4). */
static int64_t dw_block_shift(const tilegen_conv2d_f32_plan* p, const float* x) {
  const int64_t vbytes = p->nr * (int64_t) sizeof(float);
  const int64_t at = (int64_t) ((uintptr_t) x % (uintptr_t) vbytes);
  if (p->method != M_DEPTHWISE || p->g.layout != TILEGEN_NHWC || p->g.cin % p->nr != 0 ||
      at % (int64_t) sizeof(float) != 0 || at == 0)
    return 0;
  return at / (int64_t) sizeof(float);  /* block 0: channels [0, NR - shift) */
}

/* The plan's depthwise panels re-cut into blocks that start `shift` channels earlier, then
   the wrap block's (lanes j < shift: channel cin - shift + j; then channel j - shift). */
static void shift_dw_panels(const tilegen_conv2d_f32_plan* p, int64_t shift, int64_t nb, float* dst) {
  const int64_t nr = p->nr, per = p->panel / nr, cin = p->g.cin;
  for (int64_t b = 0; b <= nb; b++)
    for (int64_t j = 0; j < nr; j++) {
      const int64_t c = b == nb ? (j < shift ? cin - shift + j : j - shift)  /* lane j's channel */
                                : (b == 0 ? 0 : b * nr - shift) + j;
      const int ok = b == nb || (c < (b + 1) * nr - shift && c < cin);
      const float* src = p->wpack + (ok ? c / nr * p->panel + c % nr : 0);
      for (int64_t t = 0; t < per; t++) dst[b * p->panel + t * nr + j] = ok ? src[t * nr] : 0.0f;
    }
}

/* Runs a direct, im2col or depthwise plan; -1 when scratch memory cannot be had. */
int tg_conv_run_rows(const tilegen_conv2d_f32_plan* p, int64_t n, int64_t h, int64_t w,
                     const float* x, float* y) {
  const geom* g = &p->g;
  job jb;
  memset(&jb, 0, sizeof(jb));
  jb.p = p;
  jb.n = n; jb.h = h; jb.w = w;
  jb.oh = out_size(h, g->kh, g->sh, g->pt, g->pb, g->dh);
  jb.ow = out_size(w, g->kw, g->sw, g->pl, g->pr, g->dw);
  jb.x = x; jb.y = y;
  jb.dw_shift = dw_block_shift(p, x);
  jb.mr = p->method == M_DEPTHWISE ? p->dw->mr : p->shape->mr;
  const int* tile_mr = p->method == M_DEPTHWISE ? p->dw->tile_mr : p->shape->tile_mr;
  /* The padded columns each tile reads ([a, b]: its kernel reads all its tile's pixels; im2col
     gathers only real ones), the border segments they reach, and the row length. */
  const int64_t span = (g->kw - 1) * g->dw, pl = g->pl;
  int64_t lw = 0, rs = INT64_MAX, lp = pl + w;
  plan_tiles(&jb);
  for (int64_t o0 = 0, r; o0 < jb.ow; o0 += r) {
    r = tile_len(&jb, o0);
    const int64_t t = p->method == M_IM2COL ? r : tile_mr[r];
    const int64_t a = o0 * g->sw, b = a + (t - 1) * g->sw + span;
    if (b + 1 > lp) lp = b + 1;
    if (a < pl && b + 1 > lw) lw = b + 1;
    if (b >= pl + w && a < rs) rs = a;
  }
  if (rs > lp) rs = lp;
  if (g->layout == TILEGEN_NCHW || p->method == M_IM2COL || lw >= rs) {
    lw = lp;  /* whole rows */
    rs = lp;
  }
  jb.lp = lp; jb.lw = lw; jb.rs = rs;
  jb.slot_floats = round_up((lw + lp - rs) * g->cin, 16);
  /* Two output rows a call where the shape's kernels take them (they share KH - 1 input
     rows): depthwise, channels last, stride 1 and no dilation down the image. */
  jb.dw_rows = p->method == M_DEPTHWISE && g->layout == TILEGEN_NHWC && g->sh == 1 &&
                       g->dh == 1 && p->dw->out_rows > 1 ? 2 : 1;
  jb.nslot = (g->kh - 1) * g->dh + jb.dw_rows;
  if (jb.nslot > n * h) jb.nslot = n * h;
  if (p->method == M_IM2COL) {
    jb.kdim = g->kh * g->kw * p->cg;
    jb.lda = round_up(jb.kdim, 16);
    if ((jb.lda * 4) % 4096 == 0) jb.lda += 16;
  }
  jb.thread_floats = (size_t) round_up(jb.nslot * jb.slot_floats + jb.dw_shift, 16) +
                     (size_t) (g->layout == TILEGEN_NCHW ? round_up(jb.ow * g->cout, 16) : 0) +
                     (size_t) (jb.mr * jb.lda);
  const size_t zero_floats = (size_t) round_up(jb.lp * g->cin + jb.dw_shift, 16);
  jb.dw_nb = jb.dw_shift ? g->cin / p->nr + 1 : p->nb;  /* a shift needs cin % NR == 0 */
  const size_t shifted = jb.dw_shift ? (size_t) ((jb.dw_nb + 1) * p->panel) : 0;
  float* zero = tg_workspace(TG_WS_CONV2D_ZERO, (zero_floats + shifted) * sizeof(float));
  if (zero == NULL) return -1;
  memset(zero, 0, zero_floats * sizeof(float));
  jb.zero = zero + jb.dw_shift;
  jb.dw_panels = p->wpack;
  if (jb.dw_shift) {
    shift_dw_panels(p, jb.dw_shift, jb.dw_nb, zero + zero_floats);
    jb.dw_panels = zero + zero_floats;
  }
  const int64_t taps = g->kh * g->kw;
  const double flops = 2.0 * (double) n * (double) jb.oh * (double) jb.ow * (double) g->cout *
                       (double) (p->method == M_DEPTHWISE ? 1 : p->cg) * (double) taps;
  int nt = flops < TG_CONV_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();
  if (nt > n * jb.oh) nt = (int) (n * jb.oh);
  atomic_store(&jb.failed, 0);
  tg_parallel_run(nt, rows_task, &jb);
  return atomic_load(&jb.failed) ? -1 : 0;
}
