/*
 * Image filters (tilegen.h, "image filters"): the drivers behind filter2d, Gaussian, box and
 * unsharp mask, on interleaved H x W x C images of uint8 or float32, with OpenCV's answers.
 *
 * Every output row is computed from source rows alone (no state carried from row to row), so
 * threads take bands of rows and the result is the same for any thread count.
 *  - uint8 Gaussian: OpenCV's bit-exact fixed point. The 8-bit coefficients (error-diffused so
 *    that they sum to 256) are applied vertically first (vfilt: u8 -> 16 bits; the sums, at most
 *    255*256, are kept biased by -32768 so that they fit int16) and then horizontally (hfilt:
 *    32-bit sums of pairs of taps, rounded as (S + 2^15) >> 16). Every intermediate is exact, so
 *    the order of the passes does not change a bit.
 *  - uint8 box: vertical sums (vsum), horizontal sums (hsum) and OpenCV's division for areas up
 *    to 256 (filter.py, box_divisor); larger areas round sum * (float) (1/area)
 *    to even, as OpenCV does (vfilt with unit coefficients, then hfilt's float mode).
 *  - float32: every pass is filt2d: vertical then horizontal for the separable filters, the
 *    whole kernel for filter2d (reading the source rows in place; only the few border pixels of
 *    each row are gathered into padded copies).
 *  - uint8 filter2d: OpenCV computes it in float and rounds to even: source rows converted to
 *    padded float rows once per band (a small ring), filt2d, then rounding.
 * Borders follow OpenCV's borderInterpolate: reflect101 (gfedcb|abcdefgh|gfedcba), replicate,
 * constant zeros. Scratch memory is allocated once per call, before anything is written.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg_filter.h"
#include "tg_threads.h"
#include "tilegen.h"

#define TG_FILTER_MAX_KSIZE (1 << 16)
#define TG_FILTER_MAX_CHANNELS 512
#define TG_BOX_U8_MAX_KSIZE 257 /* column sums of 257 rows of 255 still fit 16 bits */

enum { OP_GAUSS_U8, OP_BOX_U8, OP_SEP_F32, OP_F2D_F32, OP_F2D_U8, OP_GEN };

/* OP_GEN (uint16 and float64 images, plain C): how an output value comes from its sum S. */
enum {
  GEN_FIXED16,  /* uint16 Gaussian: S = sum of 16.16 taps x 16.16 taps x pixels, (S + 2^31) >> 32 */
  GEN_SCALE,    /* box: S * scale (uint16: rounded to nearest even, saturated) */
  GEN_PLAIN,    /* float64 separable: S */
  GEN_F2D       /* filter2d: float sums for uint16 (OpenCV's), double for float64 */
};

/* The pixel index that index p of an n-pixel line reads, or -1 for a constant pixel (OpenCV's
   borderInterpolate). */
static int64_t border_at(int64_t p, int64_t n, int border) {
  if (p >= 0 && p < n) return p;
  switch (border) {
    case TILEGEN_BORDER_CONSTANT: return -1;
    case TILEGEN_BORDER_REPLICATE: return p < 0 ? 0 : n - 1;
    case TILEGEN_BORDER_WRAP: p %= n; return p < 0 ? p + n : p;
    case TILEGEN_BORDER_REFLECT:  /* the edge pixel repeated: fedcba|abcdef|fedcba */
      p %= 2 * n;
      if (p < 0) p += 2 * n;
      return p < n ? p : 2 * n - 1 - p;
    default:  /* reflect101 */
      if (n == 1) return 0;
      p %= 2 * (n - 1);
      if (p < 0) p += 2 * (n - 1);
      return p < n ? p : 2 * (n - 1) - p;
  }
}

typedef struct job {
  int op;
  const tg_filter_config* cfg;
  const uint8_t* src;       /* bytes; strides below in elements */
  uint8_t* dst;
  int64_t ss, ds, esize;    /* row strides (elements) and the element size */
  int64_t h, w, c;
  int border;
  int64_t kh, kw, ay, ax;   /* kernel extent and anchor */
  int64_t mr;               /* output rows per filt2d call (filter2d) */
  const int16_t* ky;        /* u8 passes: vertical and (padded to even) horizontal taps */
  const int16_t* kx;
  const float* fky;         /* f32 separable taps, or the whole kernel (fk2, kh*kw) */
  const float* fkx;
  const float* fk2;
  tg_u8_hfilt_params hp;
  tg_u8_hsum_params sp;
  tg_u8_sharpen_params shp;
  int box_mode;             /* OP_BOX_U8: BOX_SMALL, BOX_ROLLING or BOX_TALL */
  int unsharp;
  double amount, threshold;
  char* scratch;
  size_t per_task;
  int ntasks;               /* threads asked for (each has its own scratch) */
  int64_t nbands;           /* bands of rows (over all images), claimed in turn */
  int64_t bpi;              /* bands per image */
  int64_t nimg, sbs, dbs;   /* a batch: images and their strides (elements) */
  atomic_llong* next_band;
  const double* cval;       /* the constant border's value per channel, or NULL for zeros */
  int type;                 /* TILEGEN_IMAGE_* */
  int gen;                  /* OP_GEN: GEN_* */
  const double* dkx;        /* OP_GEN taps: separable (dkx, dky) or the whole kernel (dk2) */
  const double* dky;
  const double* dk2;
  double scale;
} job;

/* ---- per-task scratch: row pointers, a padded row, a zero row, a ring, a temp row ---- */

static size_t round64(size_t b) { return (b + 63) & ~(size_t) 63; }

typedef struct scratch {
  const void** rows;    /* window() pointers: the source rows of one call */
  const void** segrows; /* window() pointers: rows as a float pass reads them (edge segments,
                           shifted interiors, padded vertical sums) */
  char* pad;            /* padded intermediate rows: (ax + w + kw-1-ax) pixels each */
  char* zero;           /* a zero source row (constant border) */
  char* ring;           /* OP_F2D_U8: window() padded float rows; OP_F2D_F32: edge segments */
  int64_t* tag;         /* OP_F2D_U8: the source row in each ring slot */
  char* tmp;            /* filtered rows before rounding or sharpening */
  char* cpad;           /* the vertical pass over constant rows: a border pixel's padding */
} scratch;

static int64_t padded_px(const job* j) { return j->w + j->kw - 1; }

/* filter2d f32 reads the source rows in place for output pixels [lo, hi) and gathers padded
   copies for [0, lo) and [hi, w): the pixels whose taps reach past the border, widened to a
   whole kernel block each (a narrower call would take the kernel's slow short-row path). A row
   too narrow to have both is one padded segment. */
static void edge_split(const job* j, int64_t* lo, int64_t* hi) {
  const int64_t block = (j->cfg->nr[TG_FILTER_KIND_FILT2D] + j->c - 1) / j->c;
  *lo = j->ax > block ? j->ax : block;
  const int64_t right = j->kw - 1 - j->ax;
  *hi = j->w - (right > block ? right : block);
  if (*hi - *lo < block) *lo = *hi = j->w;  /* no whole block between the edges */
}

/* The widest padded segment's output pixels. */
static int64_t edge_px(const job* j) {
  int64_t lo, hi;
  edge_split(j, &lo, &hi);
  if (hi <= lo) return j->w;
  return lo > j->w - hi ? lo : j->w - hi;
}

/* Source rows one call of the pass reads: kh, plus MR - 1 for the float passes' MR rows. */
static int64_t window(const job* j) {
  if (j->op == OP_GEN) return j->kh;
  return j->kh + (j->op == OP_F2D_F32 || j->op == OP_F2D_U8 || j->op == OP_SEP_F32 ? j->mr - 1 : 0);
}

static size_t layout(const job* j, scratch* s, char* base) {
  const size_t ptrs = round64((size_t) window(j) * sizeof(void*));
  const size_t row_el = (size_t) (j->w * j->c);
  const size_t pad_el = (size_t) (padded_px(j) * j->c);
  size_t pad = 0, zero = 0, ring = 0, tag = 0, tmp = 0;
  switch (j->op) {
    case OP_GAUSS_U8:
      pad = pad_el * 2; zero = row_el; tmp = j->unsharp ? row_el : 0; break;
    case OP_BOX_U8:  /* two padded rows of column sums: this row's and the last one's */
      pad = 2 * round64(pad_el * 2); zero = row_el; break;
    case OP_SEP_F32:  /* MR padded rows, MR sharpened rows */
      pad = (size_t) j->mr * pad_el * 4; zero = row_el * 4;
      tmp = j->unsharp ? (size_t) j->mr * row_el * 4 : 0; break;
    case OP_F2D_F32:
      zero = row_el * 4;  /* edge_px needs j->cfg: run() sets it before the layout */
      ring = (size_t) window(j) * (size_t) ((edge_px(j) + j->kw - 1) * j->c) * 4; break;
    case OP_F2D_U8:
      zero = pad_el * 4; ring = (size_t) window(j) * pad_el * 4;
      tag = (size_t) window(j) * sizeof(int64_t); tmp = (size_t) j->mr * row_el * 4; break;
    case OP_GEN:  /* a ring of kh rows: padded source rows (filter2d) or horizontal sums */
      pad = pad_el * 8; ring = (size_t) window(j) * (j->dk2 ? pad_el : row_el) * 8;
      tag = (size_t) window(j) * sizeof(int64_t); tmp = row_el * 8; break;
  }
  size_t off = 0;
  char* p = base;
#define TG_TAKE(field, bytes, type)                                \
  do {                                                             \
    if (s) s->field = (type) (p ? p + off : NULL);                 \
    off += round64(bytes);                                         \
  } while (0)
  TG_TAKE(rows, ptrs, const void**);
  TG_TAKE(segrows, j->op == OP_F2D_F32 || j->op == OP_SEP_F32 ? ptrs : 0, const void**);
  TG_TAKE(pad, pad, char*);
  TG_TAKE(zero, zero, char*);
  TG_TAKE(ring, ring, char*);
  TG_TAKE(tag, tag, int64_t*);
  TG_TAKE(tmp, tmp, char*);
  TG_TAKE(cpad, (size_t) j->c * 8, char*);
#undef TG_TAKE
  return off;
}

/* Fills the border pixels of a padded row (its interior starts at pixel ax) from the interior:
   the ax pixels left of it and the kw-1-ax right of it. */
#define TG_DEFINE_PAD(NAME, T)                                                        \
  static void NAME##_px(T* buf, const job* j, const T* cpad, int64_t q) {              \
    const int64_t p = border_at(q, j->w, j->border);                                  \
    T* d = buf + (q + j->ax) * j->c;                                                  \
    if (p < 0) memcpy(d, cpad, (size_t) j->c * sizeof(T));                            \
    else memcpy(d, buf + (p + j->ax) * j->c, (size_t) j->c * sizeof(T));              \
  }                                                                                   \
  static void NAME(T* buf, const job* j, const T* zero) {                             \
    for (int64_t q = -j->ax; q < 0; q++) NAME##_px(buf, j, zero, q);                  \
    for (int64_t q = j->w; q < j->w + j->kw - 1 - j->ax; q++) NAME##_px(buf, j, zero, q); \
  }
TG_DEFINE_PAD(pad_i16, int16_t)
TG_DEFINE_PAD(pad_u16, uint16_t)
TG_DEFINE_PAD(pad_f32, float)

/* The source rows of output rows y.. (count of them: kh per row, plus one per further row),
   a zero row where the border is constant. */
static void source_rows(const job* j, const scratch* s, int64_t y, int64_t count) {
  for (int64_t i = 0; i < count; i++) {
    const int64_t r = border_at(y - j->ay + i, j->h, j->border);
    s->rows[i] = r < 0 ? (const void*) s->zero : (const void*) (j->src + r * j->ss * j->esize);
  }
}

/* dst = src + amount * (src - blur) where |src - blur| > threshold, else src (f32: here; u8:
   the sharpen kernel, in float32). */
static void sharpen_f32(const job* j, const float* src, const float* blur, float* dst) {
  const int64_t n = j->w * j->c;
  const float amount = (float) j->amount;
  for (int64_t x = 0; x < n; x++) {
    const float d = src[x] - blur[x];
    dst[x] = fabs((double) d) > j->threshold ? src[x] + amount * d : src[x];
  }
}

static void rows_gauss_u8(const job* j, const scratch* s, int64_t y0, int64_t y1) {
  const int64_t n = j->w * j->c;
  int16_t* buf = (int16_t*) s->pad;
  for (int64_t y = y0; y < y1; y++) {
    source_rows(j, s, y, j->kh);
    j->cfg->vfilt(n, j->kh, (const uint8_t* const*) s->rows, j->ky, INT16_MIN,
                  buf + j->ax * j->c);
    pad_i16(buf, j, (const int16_t*) s->cpad);  /* a constant pixel's biased vertical sum */
    uint8_t* out = j->dst + y * j->ds;
    const uint8_t* src = j->src + y * j->ss;
    j->cfg->hfilt(n, j->kw, j->c, buf, j->kx, j->unsharp ? (uint8_t*) s->tmp : out, &j->hp);
    if (j->unsharp) j->cfg->sharpen(n, src, (const uint8_t*) s->tmp, out, &j->shp);
  }
}

/* Box passes: column sums rolled from row to row (vsum once per band, then vupd: two source
   rows per row whatever the height; exact, so bands change nothing), then hsum's division
   (areas <= 256) or hfilt's float rounding (larger areas, heights <= 128 so that the sums fit
   int16); taller boxes take vfilt's biased sums. */
enum { BOX_SMALL, BOX_ROLLING, BOX_TALL };

static void rows_box_u8(const job* j, const scratch* s, int64_t y0, int64_t y1) {
  const int64_t n = j->w * j->c, off = j->ax * j->c;
  uint16_t* bufs[2] = {(uint16_t*) s->pad,
                       (uint16_t*) (s->pad + round64((size_t) (padded_px(j) * j->c) * 2))};
  for (int64_t y = y0; y < y1; y++) {
    uint8_t* out = j->dst + y * j->ds;
    if (j->box_mode == BOX_TALL) {
      int16_t* buf = (int16_t*) bufs[0];
      source_rows(j, s, y, j->kh);
      j->cfg->vfilt(n, j->kh, (const uint8_t* const*) s->rows, j->ky, INT16_MIN, buf + off);
      pad_i16(buf, j, (const int16_t*) s->cpad);
      j->cfg->hfilt(n, j->kw, j->c, buf, j->kx, out, &j->hp);
      continue;
    }
    uint16_t* cur = bufs[(y - y0) & 1];
    if (y == y0) {
      source_rows(j, s, y, j->kh);
      j->cfg->vsum(n, j->kh, (const uint8_t* const*) s->rows, cur + off);
    } else {
      const int64_t in = border_at(y - j->ay + j->kh - 1, j->h, j->border);
      const int64_t gone = border_at(y - 1 - j->ay, j->h, j->border);
      const uint8_t* add = in < 0 ? (const uint8_t*) s->zero : j->src + in * j->ss;
      const uint8_t* sub = gone < 0 ? (const uint8_t*) s->zero : j->src + gone * j->ss;
      j->cfg->vupd(n, bufs[(y - 1 - y0) & 1] + off, add, sub, cur + off);
    }
    pad_u16(cur, j, (const uint16_t*) s->cpad);
    if (j->box_mode == BOX_SMALL)
      j->cfg->hsum(n, j->kw, j->c, cur, out, &j->sp);
    else
      j->cfg->hfilt(n, j->kw, j->c, (const int16_t*) cur, j->kx, out, &j->hp);
  }
}

static void rows_sep_f32(const job* j, const scratch* s, int64_t y0, int64_t y1) {
  const int64_t n = j->w * j->c, pad_el = padded_px(j) * j->c;
  float* buf = (float*) s->pad;
  const float** hrows = (const float**) s->segrows;
  for (int64_t y = y0; y < y1; y += j->mr) {
    const int64_t m = y1 - y < j->mr ? y1 - y : j->mr;
    source_rows(j, s, y, m + j->kh - 1);
    /* m vertical sums from m + kh - 1 rows, into m padded rows */
    j->cfg->filt2d(m, n, j->kh, 1, j->c, (const float* const*) s->rows, j->fky,
                   buf + j->ax * j->c, pad_el);
    for (int64_t r = 0; r < m; r++) {
      pad_f32(buf + r * pad_el, j, (const float*) s->cpad);
      hrows[r] = buf + r * pad_el;
    }
    float* out = (float*) (j->dst + y * j->ds * 4);
    if (!j->unsharp) {
      j->cfg->filt2d(m, n, 1, j->kw, j->c, hrows, j->fkx, out, j->ds);
      continue;
    }
    float* tmp = (float*) s->tmp;
    j->cfg->filt2d(m, n, 1, j->kw, j->c, hrows, j->fkx, tmp, n);
    for (int64_t r = 0; r < m; r++)
      sharpen_f32(j, (const float*) (j->src + (y + r) * j->ss * 4), tmp + r * n,
                  out + r * j->ds);
  }
}

/* filter2d f32: output pixels [e0, e1) of m rows through padded copies of their input. */
static void edge_f32(const job* j, const scratch* s, int64_t m, int64_t e0, int64_t e1,
                     float* out) {
  const int64_t c = j->c, seg = (edge_px(j) + j->kw - 1) * c;
  for (int64_t i = 0; i < m + j->kh - 1; i++) {
    float* d = (float*) s->ring + i * seg;
    const float* row = (const float*) s->rows[i];
    const int64_t q0 = e0 - j->ax, q1 = e1 - j->ax + j->kw - 1;
    const int64_t in0 = q0 > 0 ? q0 : 0, in1 = q1 < j->w ? q1 : j->w;
    if (in1 > in0)  /* the pixels inside the row in one copy, the border ones one by one */
      memcpy(d + (in0 - q0) * c, row + in0 * c, (size_t) ((in1 - in0) * c) * sizeof(float));
    for (int64_t q = q0; q < q1; q++) {
      if (q == in0 && in1 > in0) q = in1;
      if (q >= q1) break;
      const int64_t p = border_at(q, j->w, j->border);
      float* dp = d + (q - q0) * c;
      if (p < 0) memcpy(dp, s->zero, (size_t) c * sizeof(float));  /* the constant pixel */
      else memcpy(dp, row + p * c, (size_t) c * sizeof(float));
    }
    s->segrows[i] = d;
  }
  j->cfg->filt2d(m, (e1 - e0) * c, j->kh, j->kw, c, (const float* const*) s->segrows, j->fk2,
                 out + e0 * c, j->ds);
}

static void rows_f2d_f32(const job* j, const scratch* s, int64_t y0, int64_t y1) {
  const int64_t c = j->c;
  int64_t lo, hi;
  edge_split(j, &lo, &hi);
  for (int64_t y = y0; y < y1; y += j->mr) {
    const int64_t m = y1 - y < j->mr ? y1 - y : j->mr;
    float* out = (float*) (j->dst + y * j->ds * 4);
    source_rows(j, s, y, m + j->kh - 1);
    if (hi <= lo) {  /* too narrow to split: one padded segment */
      edge_f32(j, s, m, 0, j->w, out);
      continue;
    }
    /* Output pixel lo reads input pixels from lo - ax on. */
    const float** rows = (const float**) s->segrows;
    for (int64_t i = 0; i < m + j->kh - 1; i++)
      rows[i] = (const float*) s->rows[i] + (lo - j->ax) * c;
    j->cfg->filt2d(m, (hi - lo) * c, j->kh, j->kw, c, rows, j->fk2, out + lo * c, j->ds);
    edge_f32(j, s, m, 0, lo, out);
    edge_f32(j, s, m, hi, j->w, out);
  }
}

static void rows_f2d_u8(const job* j, const scratch* s, int64_t y0, int64_t y1) {
  const int64_t c = j->c, n = j->w * c, pad_el = padded_px(j) * c, slots = window(j);
  float* ring = (float*) s->ring;
  float* tmp = (float*) s->tmp;
  for (int64_t i = 0; i < slots; i++) s->tag[i] = INT64_MIN;
  for (int64_t y = y0; y < y1; y += j->mr) {
    const int64_t m = y1 - y < j->mr ? y1 - y : j->mr;
    for (int64_t i = 0; i < m + j->kh - 1; i++) {
      const int64_t v = y - j->ay + i, r = border_at(v, j->h, j->border);
      if (r < 0) { s->rows[i] = s->zero; continue; }
      /* Slots are keyed by the unmapped row: a window's are consecutive, so distinct modulo
         its size whatever the border maps them to (wrap sends them to both ends). */
      const int64_t k = ((v % slots) + slots) % slots;
      float* slot = ring + k * pad_el;
      if (s->tag[k] != v) {
        const uint8_t* row = j->src + r * j->ss;
        j->cfg->tof32(n, row, slot + j->ax * c);
        for (int64_t q = -j->ax; q < j->w + j->kw - 1 - j->ax; q++) {  /* border pixels */
          if (q == 0) q = j->w;
          if (q >= j->w + j->kw - 1 - j->ax) break;
          const int64_t p = border_at(q, j->w, j->border);
          float* d = slot + (q + j->ax) * c;
          for (int64_t k = 0; k < c; k++)
            d[k] = p < 0 ? ((const float*) s->zero)[k] : (float) row[p * c + k];
        }
        s->tag[k] = v;
      }
      s->rows[i] = slot;
    }
    j->cfg->filt2d(m, n, j->kh, j->kw, c, (const float* const*) s->rows, j->fk2, tmp, n);
    for (int64_t r = 0; r < m; r++) j->cfg->fround(n, tmp + r * n, j->dst + (y + r) * j->ds);
  }
}

static uint16_t sat_u16(double x) {  /* OpenCV's saturate_cast<ushort>: nearest even */
  x = rint(x);
  return x <= 0 ? 0 : x >= 65535 ? 65535 : (uint16_t) x;
}

/* OP_GEN: one source row (virtual index v, border applied) as a padded row of doubles; the
   constant border's value cast to the image's type first (uint16: rounded, saturated). */
static void gen_padded_row(const job* j, int64_t v, double* d) {
  const int64_t c = j->c, r = border_at(v, j->h, j->border);
  const uint8_t* row = r < 0 ? NULL : j->src + r * j->ss * j->esize;
  for (int64_t q = -j->ax; q < j->w + j->kw - 1 - j->ax; q++) {
    const int64_t p = row ? border_at(q, j->w, j->border) : -1;
    double* o = d + (q + j->ax) * c;
    for (int64_t k = 0; k < c; k++)
      o[k] = p < 0 ? (!j->cval ? 0.0 : j->type == TILEGEN_IMAGE_U16 ? sat_u16(j->cval[k]) : j->cval[k])
                   : j->type == TILEGEN_IMAGE_U16 ? (double) ((const uint16_t*) row)[p * c + k]
                                                  : ((const double*) row)[p * c + k];
  }
}

/* OP_GEN rows: a ring of kh rows keyed by their unmapped index (each source row is read once
   per band): padded source rows for filter2d, else horizontal sums (exact integers for
   uint16). OpenCV's order: horizontal pass, then vertical; taps summed first to last. */
static void rows_gen(const job* j, const scratch* s, int64_t y0, int64_t y1) {
  const int64_t c = j->c, n = j->w * c, kh = j->kh, kw = j->kw;
  const int64_t pad_el = padded_px(j) * c, len = j->dk2 ? pad_el : n;
  double* ring = (double*) s->ring;
  double* pad = (double*) s->pad;
  double* blur = (double*) s->tmp;
  const double** rows = (const double**) s->rows;
  const int u16 = j->type == TILEGEN_IMAGE_U16;
  for (int64_t i = 0; i < kh; i++) s->tag[i] = INT64_MIN;
  for (int64_t y = y0; y < y1; y++) {
    for (int64_t i = 0; i < kh; i++) {
      const int64_t v = y - j->ay + i, slot = ((v % kh) + kh) % kh;
      double* d = ring + slot * len;
      if (s->tag[slot] != v) {
        if (j->dk2) {
          gen_padded_row(j, v, d);
        } else {
          gen_padded_row(j, v, pad);
          for (int64_t x = 0; x < n; x++) {
            double acc = j->dkx[0] * pad[x];
            for (int64_t t = 1; t < kw; t++) acc += j->dkx[t] * pad[x + t * c];
            d[x] = acc;
          }
        }
        s->tag[slot] = v;
      }
      rows[i] = d;
    }
    uint8_t* out = j->dst + y * j->ds * j->esize;
    for (int64_t x = 0; x < n; x++) {
      double r;
      if (j->gen == GEN_F2D) {
        if (u16) {  /* OpenCV: float taps, float sums */
          float acc = 0.0f;
          for (int64_t i = 0; i < kh; i++)
            for (int64_t t = 0; t < kw; t++) {
              const float k = (float) j->dk2[i * kw + t];
              if (k != 0.0f) acc += k * (float) rows[i][x + t * c];
            }
          r = acc;
        } else {
          double acc = 0.0;
          for (int64_t i = 0; i < kh; i++)
            for (int64_t t = 0; t < kw; t++) {
              const double k = j->dk2[i * kw + t];
              if (k != 0.0) acc += k * rows[i][x + t * c];
            }
          r = acc;
        }
      } else {
        double acc = j->dky[0] * rows[0][x];
        for (int64_t i = 1; i < kh; i++) acc += j->dky[i] * rows[i][x];
        if (j->gen == GEN_FIXED16) {  /* exact: sums below 2^49 */
          const uint64_t q = ((uint64_t) acc + (UINT64_C(1) << 31)) >> 32;
          r = (double) (q > 65535 ? 65535 : q);
        } else {
          r = j->gen == GEN_SCALE ? acc * j->scale : acc;
        }
      }
      blur[x] = r;
    }
    const uint8_t* src = j->src + y * j->ss * j->esize;
    for (int64_t x = 0; x < n; x++) {
      if (u16) {
        uint16_t b = sat_u16(blur[x]);
        if (j->unsharp) {  /* as uint8: the sum in float32 from the rounded blur */
          const float p = (float) ((const uint16_t*) src)[x], d = p - (float) b;
          b = fabs((double) d) > j->threshold ? sat_u16((double) (p + (float) j->amount * d))
                                              : ((const uint16_t*) src)[x];
        }
        ((uint16_t*) out)[x] = b;
      } else {
        double b = blur[x];
        if (j->unsharp) {
          const double p = ((const double*) src)[x], d = p - b;
          b = fabs(d) > j->threshold ? p + j->amount * d : p;
        }
        ((double*) out)[x] = b;
      }
    }
  }
}

/* Fills a row of `px` pixels with the constant border's value (zeros by default) in the
   element type a pass reads: uint8 (saturated, rounded as OpenCV casts a Scalar) or float. */
static void fill_const(const job* j, void* row, int64_t px, int f32) {
  for (int64_t k = 0; k < j->c; k++) {
    const double v = j->cval ? j->cval[k] : 0.0;
    for (int64_t x = 0; x < px; x++) {
      if (f32) ((float*) row)[x * j->c + k] = (float) v;
      else ((uint8_t*) row)[x * j->c + k] = (uint8_t) (v <= 0 ? 0 : v >= 255 ? 255 : rint(v));
    }
  }
}

/* A border pixel's padding in the vertical sums: the vertical pass over kh constant rows. */
static void const_padding(const job* j, const scratch* s) {
  for (int64_t i = 0; i < window(j); i++) s->rows[i] = s->zero;
  switch (j->op) {
    case OP_GAUSS_U8:
      j->cfg->vfilt(j->c, j->kh, (const uint8_t* const*) s->rows, j->ky, INT16_MIN,
                    (int16_t*) s->cpad);
      break;
    case OP_BOX_U8:
      if (j->box_mode == BOX_TALL)
        j->cfg->vfilt(j->c, j->kh, (const uint8_t* const*) s->rows, j->ky, INT16_MIN,
                      (int16_t*) s->cpad);
      else
        j->cfg->vsum(j->c, j->kh, (const uint8_t* const*) s->rows, (uint16_t*) s->cpad);
      break;
    case OP_SEP_F32:
      j->cfg->filt2d(1, j->c, j->kh, 1, j->c, (const float* const*) s->rows, j->fky,
                     (float*) s->cpad, j->c);
      break;
    default: break;
  }
}

static void run_task(void* ctx, int task, int ntasks) {
  const job* j = ctx;
  scratch s;
  layout(j, &s, j->scratch + (size_t) task * j->per_task);
  if (j->op != OP_GEN)
    fill_const(j, s.zero, j->op == OP_F2D_U8 ? padded_px(j) : j->w,
               !(j->op == OP_GAUSS_U8 || j->op == OP_BOX_U8));
  const_padding(j, &s);
  (void) ntasks;
  for (;;) {
    const int64_t b = atomic_fetch_add(j->next_band, 1);
    if (b >= j->nbands) break;
    /* band b: image b / bpi, its rows in turn */
    job one = *j;
    const int64_t img = b / j->bpi, part = b % j->bpi;
    one.src += img * j->sbs * j->esize;
    one.dst += img * j->dbs * j->esize;
    const int64_t y0 = j->h * part / j->bpi, y1 = j->h * (part + 1) / j->bpi;
    switch (j->op) {
      case OP_GAUSS_U8: rows_gauss_u8(&one, &s, y0, y1); break;
      case OP_BOX_U8: rows_box_u8(&one, &s, y0, y1); break;
      case OP_SEP_F32: rows_sep_f32(&one, &s, y0, y1); break;
      case OP_F2D_F32: rows_f2d_f32(&one, &s, y0, y1); break;
      case OP_F2D_U8: rows_f2d_u8(&one, &s, y0, y1); break;
      case OP_GEN: rows_gen(&one, &s, y0, y1); break;
    }
  }
}

/* The byte range [lo, hi) a batch of images covers. */
static void extent(const job* j, const uint8_t* base, int64_t rs, int64_t bs, uintptr_t* lo,
                   uintptr_t* hi) {
  const int64_t e = j->esize, a = (j->h - 1) * rs * e, b = (j->nimg - 1) * bs * e;
  *lo = (uintptr_t) base + (uintptr_t) ((a < 0 ? a : 0) + (b < 0 ? b : 0));
  *hi = (uintptr_t) base + (uintptr_t) ((a > 0 ? a : 0) + (b > 0 ? b : 0) + j->w * j->c * e);
}

/* Copies the source when it overlaps the destination (in-place calls). Returns 0, or 1 when
   memory runs out; *copy is freed by the caller. */
static int detach_source(job* j, void** copy) {
  *copy = NULL;
  uintptr_t a0, a1, b0, b1;
  extent(j, j->src, j->ss, j->sbs, &a0, &a1);
  extent(j, j->dst, j->ds, j->dbs, &b0, &b1);
  if (a1 <= b0 || b1 <= a0) return 0;
  const int64_t row = j->w * j->c * j->esize;
  uint8_t* c = malloc((size_t) (row * j->h * j->nimg));
  if (c == NULL) return 1;
  for (int64_t i = 0; i < j->nimg; i++)
    for (int64_t y = 0; y < j->h; y++)
      memcpy(c + (i * j->h + y) * row, j->src + (i * j->sbs + y * j->ss) * j->esize,
             (size_t) row);
  j->src = c;
  j->ss = j->w * j->c;
  j->sbs = j->h * j->ss;
  *copy = c;
  return 0;
}

/* Runs the job over bands of rows of every image. Returns 0, or 1 when memory runs out
   (nothing written). */
static int run(job* j) {
  j->cfg = tg_filter_cfg();
  j->mr = j->cfg->mr[TG_FILTER_KIND_FILT2D];
  if (j->nimg < 1) j->nimg = 1;
  const int64_t work = j->nimg * j->h * j->w * j->c * (j->kh + j->kw);
  int64_t threads = work < (1 << 18) ? 1 : tg_threads_max();
  if (threads > j->h * j->nimg) threads = j->h * j->nimg;
  if (threads < 1) threads = 1;
  j->ntasks = (int) threads;
  /* A few bands per thread, claimed in turn: a thread slowed by another process leaves its
     bands to the others. A batch of many images needs no split: threads take whole images. */
  int64_t bpi = threads == 1 ? 1 : (4 * threads + j->nimg - 1) / j->nimg;
  if (bpi > j->h) bpi = j->h;
  j->bpi = bpi;
  j->nbands = bpi * j->nimg;
  atomic_llong next;
  atomic_init(&next, 0);
  j->next_band = &next;
  void* copy;
  if (detach_source(j, &copy)) return 1;
  j->per_task = layout(j, NULL, NULL);
  /* malloc, aligned here: aligned_alloc is missing from older Android C libraries */
  char* block = malloc(j->per_task * (size_t) j->ntasks + 64);
  if (block == NULL) { free(copy); return 1; }
  j->scratch = block + (-(uintptr_t) block & 63);
  tg_parallel_run(j->ntasks, run_task, j);
  free(block);
  free(copy);
  return 0;
}

/* ---- kernels ---- */

/* OpenCV's Gaussian taps (getGaussianKernel): its fixed tables for sigma <= 0 and n <= 9,
   else exp(-x^2 / (2 sigma^2)) normalised, sigma defaulting to 0.3*((n-1)/2 - 1) + 0.8. */
static void gaussian_f64(int64_t n, double sigma, double* k) {
  static const double t1[] = {1.0}, t3[] = {0.25, 0.5, 0.25},
                      t5[] = {0.0625, 0.25, 0.375, 0.25, 0.0625},
                      t7[] = {0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125},
                      t9[] = {4 / 256., 13 / 256., 30 / 256., 51 / 256., 60 / 256.,
                              51 / 256., 30 / 256., 13 / 256., 4 / 256.};
  const double* fixed[] = {t1, NULL, t3, NULL, t5, NULL, t7, NULL, t9};
  if (sigma <= 0 && n <= 9 && fixed[n - 1]) {
    memcpy(k, fixed[n - 1], (size_t) n * sizeof(double));
    return;
  }
  const double s = sigma > 0 ? sigma : fma((double) n, 0.15, 0.35);
  const double scale2 = -0.125 / (s * s);
  const int64_t h = (n - 1) / 2;
  double sum = 0;
  for (int64_t i = 0; i < h; i++) {
    const double x = (double) (1 - n + 2 * i);
    k[i] = exp(x * x * scale2);
    sum += k[i];
  }
  sum = sum * 2 + 1.0;
  const double mul = 1.0 / sum;
  for (int64_t i = 0; i < h; i++) k[n - 1 - i] = k[i] = k[i] * mul;
  k[h] = mul;
}


/* ---- argument checks (0 or -p) ---- */

static int check_image(const void* src, int64_t ss, const void* dst, int64_t ds, int64_t h,
                       int64_t w, int64_t c) {
  if (h < 1) return -5;
  if (w < 1) return -6;
  if (c < 1 || c > TG_FILTER_MAX_CHANNELS) return -7;
  if (src == NULL) return -1;
  if (h > 1 && (ss > -w * c && ss < w * c)) return -2;
  if (dst == NULL) return -3;
  if (h > 1 && (ds > -w * c && ds < w * c)) return -4;
  return 0;
}

static int valid_border(int border) { return border >= 0 && border <= TILEGEN_BORDER_WRAP; }

static int64_t type_size(int type) {
  switch (type) {
    case TILEGEN_IMAGE_U8: return 1;
    case TILEGEN_IMAGE_U16: return 2;
    case TILEGEN_IMAGE_F32: return 4;
    case TILEGEN_IMAGE_F64: return 8;
    default: return 0;
  }
}

/* The _ex functions' common parameters (1-11): 0 or -p. */
static int check_ex(int type, const void* src, int64_t ss, const void* dst, int64_t ds,
                    int64_t h, int64_t w, int64_t c, int64_t n) {
  if (type_size(type) == 0) return -1;
  if (n < 0) return -9;
  const int rc = check_image(src, ss, dst, ds, h, w, c);
  return rc ? rc - 1 : 0;
}

static void init_job(job* j, int op, const void* src, int64_t ss, void* dst, int64_t ds,
                     int64_t h, int64_t w, int64_t c, int64_t esize, int border, int64_t kh,
                     int64_t kw) {
  memset(j, 0, sizeof(*j));
  j->op = op;
  j->src = src; j->ss = ss; j->dst = dst; j->ds = ds; j->esize = esize;
  j->h = h; j->w = w; j->c = c; j->border = border;
  j->kh = kh; j->kw = kw; j->ay = kh / 2; j->ax = kw / 2;
  j->nimg = 1;
}

/* A batch's images and the constant border's value (TILEGEN_BORDER_CONSTANT only). */
static void set_batch(job* j, int type, int64_t n, int64_t sbs, int64_t dbs,
                      const double* cval) {
  j->type = type;
  j->nimg = n; j->sbs = sbs; j->dbs = dbs;
  j->cval = j->border == TILEGEN_BORDER_CONSTANT ? cval : NULL;
}

/* Copies each image (a 1 x 1 kernel). */
static int copy_images(const job* j) {
  const size_t row = (size_t) (j->w * j->c * j->esize);
  for (int64_t i = 0; i < j->nimg; i++)
    for (int64_t y = 0; y < j->h; y++)
      memmove(j->dst + (i * j->dbs + y * j->ds) * j->esize,
              j->src + (i * j->sbs + y * j->ss) * j->esize, row);
  return 0;
}

/* ---- filter2d ---- */

/* kernel: float taps for the uint8 and float32 kernels, dkernel: double (OP_GEN). */
static int filter2d_run(job* j, const float* kernel, const double* dkernel) {
  if (j->type == TILEGEN_IMAGE_U16 || j->type == TILEGEN_IMAGE_F64) {
    j->op = OP_GEN;
    j->gen = GEN_F2D;
    j->dk2 = dkernel;
    return run(j);
  }
  j->op = j->type == TILEGEN_IMAGE_U8 ? OP_F2D_U8 : OP_F2D_F32;
  float* f = NULL;
  if (kernel == NULL) {
    f = malloc((size_t) (j->kh * j->kw) * sizeof(float));
    if (f == NULL) return 1;
    for (int64_t i = 0; i < j->kh * j->kw; i++) f[i] = (float) dkernel[i];
    kernel = f;
  }
  j->fk2 = kernel;
  const int rc = run(j);
  free(f);
  return rc;
}

static int filter2d(int type, const void* src, int64_t ss, void* dst, int64_t ds, int64_t h,
                    int64_t w, int64_t c, const float* kernel, int64_t kh, int64_t kw,
                    int border) {
  int rc = check_image(src, ss, dst, ds, h, w, c);
  if (rc) return rc;
  if (kernel == NULL) return -8;
  if (kh < 1 || kh > TG_FILTER_MAX_KSIZE) return -9;
  if (kw < 1 || kw > TG_FILTER_MAX_KSIZE) return -10;
  if (!valid_border(border)) return -11;
  job j;
  init_job(&j, 0, src, ss, dst, ds, h, w, c, type_size(type), border, kh, kw);
  set_batch(&j, type, 1, 0, 0, NULL);
  return filter2d_run(&j, kernel, NULL);
}

int tilegen_filter2d_f32(const float* src, int64_t src_stride, float* dst, int64_t dst_stride,
                         int64_t height, int64_t width, int64_t channels, const float* kernel,
                         int64_t kh, int64_t kw, int border) {
  return filter2d(TILEGEN_IMAGE_F32, src, src_stride, dst, dst_stride, height, width, channels,
                  kernel, kh, kw, border);
}

int tilegen_filter2d_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride,
                        int64_t height, int64_t width, int64_t channels, const float* kernel,
                        int64_t kh, int64_t kw, int border) {
  return filter2d(TILEGEN_IMAGE_U8, src, src_stride, dst, dst_stride, height, width, channels,
                  kernel, kh, kw, border);
}

int tilegen_filter2d_ex(int type, const void* src, int64_t src_stride, void* dst,
                        int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                        int64_t batch, int64_t src_bstride, int64_t dst_bstride,
                        const double* kernel, int64_t kh, int64_t kw, int border,
                        const double* border_value) {
  int rc = check_ex(type, src, src_stride, dst, dst_stride, height, width, channels, batch);
  if (rc) return rc;
  if (kernel == NULL) return -12;
  if (kh < 1 || kh > TG_FILTER_MAX_KSIZE) return -13;
  if (kw < 1 || kw > TG_FILTER_MAX_KSIZE) return -14;
  if (!valid_border(border)) return -15;
  if (batch == 0) return 0;
  job j;
  init_job(&j, 0, src, src_stride, dst, dst_stride, height, width, channels, type_size(type),
           border, kh, kw);
  set_batch(&j, type, batch, src_bstride, dst_bstride, border_value);
  return filter2d_run(&j, NULL, kernel);
}

/* ---- Gaussian and unsharp mask ---- */

/* OpenCV's fixed-point taps (8 fraction bits for uint8, 16 for uint16): rounded with the error
   carried from tap to tap, the centre taking what makes the sum exactly 1. */
static void gaussian_fixed(int64_t n, const double* k, int bits, int64_t* q) {
  const double one = (double) (INT64_C(1) << bits);
  double err = 0;
  int64_t sum = 0;
  for (int64_t i = 0; i < n / 2; i++) {
    const double adj = k[i] * one + err;
    const double v = rint(adj);
    err = adj - v;
    q[i] = q[n - 1 - i] = (int64_t) v;
    sum += (int64_t) v;
  }
  q[n / 2] = (INT64_C(1) << bits) - 2 * sum;
}

/* A kernel size from its sigma, as OpenCV's createGaussianKernels: 3 sigmas each side for
   uint8, 4 for the other types, rounded to nearest (even) and made odd. */
static int64_t gaussian_size(int type, double sigma) {
  return (int64_t) llrint(sigma * (type == TILEGEN_IMAGE_U8 ? 3 : 4) * 2 + 1) | 1;
}

/* Checked sizes and sigmas in; ksize <= 0 derived from sigma. */
static int gaussian_run(job* j, int64_t kw, int64_t kh, double sx, double sy) {
  if (sy <= 0) sy = sx;
  if (kw <= 0) kw = gaussian_size(j->type, sx);
  if (kh <= 0) kh = gaussian_size(j->type, sy);
  /* OpenCV: a line of one pixel under a non-constant border is its own blur */
  if (j->border != TILEGEN_BORDER_CONSTANT) {
    if (j->h == 1) kh = 1;
    if (j->w == 1) kw = 1;
  }
  sx = sx > 0 ? sx : 0;
  sy = sy > 0 ? sy : 0;
  j->kh = kh; j->kw = kw; j->ay = kh / 2; j->ax = kw / 2;
  if (kw == 1 && kh == 1) return copy_images(j);  /* as OpenCV: a copy (unsharp: d = 0) */
  double* k = malloc((size_t) (kw + kh) * sizeof(double));
  int64_t* q = malloc((size_t) (kw + kh) * sizeof(int64_t));
  /* taps as each path reads them: int16 (kx padded to an even count), float or double */
  void* taps = malloc((size_t) (kw + kh + 2) * sizeof(double));
  if (k == NULL || q == NULL || taps == NULL) { free(k); free(q); free(taps); return 1; }
  gaussian_f64(kw, sx, k);
  gaussian_f64(kh, sy, k + kw);
  int rc;
  switch (j->type) {
    case TILEGEN_IMAGE_U8: {
      int16_t* t = taps;
      gaussian_fixed(kw, k, 8, q);
      gaussian_fixed(kh, k + kw, 8, q + kw);
      for (int64_t i = 0; i < kw + kh; i++) t[i + (i >= kw)] = (int16_t) q[i];
      t[kw] = t[kw + kh + 1] = 0;  /* both padded to an even count */
      j->kx = t;
      j->ky = t + kw + 1;
      j->op = OP_GAUSS_U8;
      j->hp.mode = 0;
      j->hp.add = (1 << 23) + (1 << 15);  /* undo the -32768 bias of 256-weighted sums, round */
      break;
    }
    case TILEGEN_IMAGE_F32: {
      float* t = taps;
      for (int64_t i = 0; i < kw + kh; i++) t[i] = (float) k[i];
      j->fkx = t;
      j->fky = t + kw;
      j->op = OP_SEP_F32;
      break;
    }
    case TILEGEN_IMAGE_U16: {
      double* t = taps;
      gaussian_fixed(kw, k, 16, q);
      gaussian_fixed(kh, k + kw, 16, q + kw);
      for (int64_t i = 0; i < kw + kh; i++) t[i] = (double) q[i];
      j->dkx = t;
      j->dky = t + kw;
      j->op = OP_GEN;
      j->gen = GEN_FIXED16;
      break;
    }
    default: {
      double* t = taps;
      memcpy(t, k, (size_t) (kw + kh) * sizeof(double));
      j->dkx = t;
      j->dky = t + kw;
      j->op = OP_GEN;
      j->gen = GEN_PLAIN;
      break;
    }
  }
  rc = run(j);
  free(k);
  free(q);
  free(taps);
  return rc;
}

static void set_unsharp(job* j, double amount, double threshold) {
  j->unsharp = 1;
  j->amount = amount;
  j->threshold = threshold;
  j->shp.amount = (float) amount;  /* |d| > threshold for integer d: |d| > floor(threshold) */
  j->shp.threshold = threshold >= 256 ? 256 : (int32_t) floor(threshold);
}

static int gaussian(int type, const void* src, int64_t ss, void* dst, int64_t ds, int64_t h,
                    int64_t w, int64_t c, int64_t ksize, double sigma, int border, int unsharp,
                    double amount, double threshold) {
  int rc = check_image(src, ss, dst, ds, h, w, c);
  if (rc) return rc;
  if (ksize < 1 || ksize % 2 == 0 || ksize > TG_FILTER_MAX_KSIZE) return -8;
  if (isnan(sigma) || isinf(sigma)) return -9;
  const int bp = unsharp ? 12 : 10;  /* the border's position */
  if (unsharp && !isfinite(amount)) return -10;
  if (unsharp && !(threshold >= 0)) return -11;
  if (!valid_border(border)) return -bp;
  job j;
  init_job(&j, 0, src, ss, dst, ds, h, w, c, type_size(type), border, ksize, ksize);
  set_batch(&j, type, 1, 0, 0, NULL);
  if (unsharp) set_unsharp(&j, amount, threshold);
  return gaussian_run(&j, ksize, ksize, sigma, sigma);
}

int tilegen_gaussian_blur_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst,
                             int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                             int64_t ksize, double sigma, int border) {
  return gaussian(TILEGEN_IMAGE_U8, src, src_stride, dst, dst_stride, height, width, channels,
                  ksize, sigma, border, 0, 0, 0);
}

int tilegen_gaussian_blur_f32(const float* src, int64_t src_stride, float* dst,
                              int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                              int64_t ksize, double sigma, int border) {
  return gaussian(TILEGEN_IMAGE_F32, src, src_stride, dst, dst_stride, height, width, channels,
                  ksize, sigma, border, 0, 0, 0);
}

int tilegen_unsharp_mask_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst,
                            int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                            int64_t ksize, double sigma, double amount, double threshold,
                            int border) {
  return gaussian(TILEGEN_IMAGE_U8, src, src_stride, dst, dst_stride, height, width, channels,
                  ksize, sigma, border, 1, amount, threshold);
}

int tilegen_unsharp_mask_f32(const float* src, int64_t src_stride, float* dst,
                             int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                             int64_t ksize, double sigma, double amount, double threshold,
                             int border) {
  return gaussian(TILEGEN_IMAGE_F32, src, src_stride, dst, dst_stride, height, width, channels,
                  ksize, sigma, border, 1, amount, threshold);
}

/* A size that is odd and positive, or <= 0 with a positive sigma to derive it from. */
static int gaussian_size_ok(int64_t k, double sigma) {
  return k > 0 ? k % 2 == 1 && k <= TG_FILTER_MAX_KSIZE : sigma > 0 && sigma <= 8000;  /* 8 sigma + 1 <= the largest size */
}

int tilegen_gaussian_blur_ex(int type, const void* src, int64_t src_stride, void* dst,
                             int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                             int64_t batch, int64_t src_bstride, int64_t dst_bstride, int64_t kw,
                             int64_t kh, double sigma_x, double sigma_y, int border,
                             const double* border_value) {
  int rc = check_ex(type, src, src_stride, dst, dst_stride, height, width, channels, batch);
  if (rc) return rc;
  if (!isfinite(sigma_x)) return -14;
  if (!isfinite(sigma_y)) return -15;
  const double sy = sigma_y > 0 ? sigma_y : sigma_x;
  if (!gaussian_size_ok(kw, sigma_x)) return -12;
  if (!gaussian_size_ok(kh, sy)) return -13;
  if (!valid_border(border)) return -16;
  if (batch == 0) return 0;
  job j;
  init_job(&j, 0, src, src_stride, dst, dst_stride, height, width, channels, type_size(type),
           border, 1, 1);
  set_batch(&j, type, batch, src_bstride, dst_bstride, border_value);
  return gaussian_run(&j, kw, kh, sigma_x, sigma_y);
}

int tilegen_unsharp_mask_ex(int type, const void* src, int64_t src_stride, void* dst,
                            int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                            int64_t batch, int64_t src_bstride, int64_t dst_bstride,
                            int64_t ksize, double sigma, double amount, double threshold,
                            int border, const double* border_value) {
  int rc = check_ex(type, src, src_stride, dst, dst_stride, height, width, channels, batch);
  if (rc) return rc;
  if (!isfinite(sigma)) return -13;
  if (!gaussian_size_ok(ksize, sigma)) return -12;
  if (!isfinite(amount)) return -14;
  if (!(threshold >= 0)) return -15;
  if (!valid_border(border)) return -16;
  if (batch == 0) return 0;
  job j;
  init_job(&j, 0, src, src_stride, dst, dst_stride, height, width, channels, type_size(type),
           border, 1, 1);
  set_batch(&j, type, batch, src_bstride, dst_bstride, border_value);
  set_unsharp(&j, amount, threshold);
  return gaussian_run(&j, ksize, ksize, sigma, sigma);
}

/* ---- box ---- */

static int box_run(job* j, int64_t ksize) {
  const int u8 = j->type == TILEGEN_IMAGE_U8;
  const int64_t area = ksize * ksize;
  if (ksize == 1) return copy_images(j);  /* a 1x1 box is a copy */
  void* taps = malloc((size_t) (ksize + 1) * 2 * sizeof(double));
  if (taps == NULL) return 1;
  if (u8) {
    j->op = OP_BOX_U8;
    int16_t* ones = taps;
    for (int64_t i = 0; i < ksize; i++) ones[i] = 1;
    ones[ksize] = 0;
    j->ky = j->kx = ones;
    if (area <= 256) {
      static const uint16_t div[257][3] = {
#define TG_DIV_ROW(D, ADD, MUL, SHIFT) [D] = {ADD, MUL, SHIFT},
        TG_FILTER_BOX_DIVISORS(TG_DIV_ROW)
#undef TG_DIV_ROW
      };
      j->box_mode = BOX_SMALL;
      j->sp.add = div[area][0];
      j->sp.mul = div[area][1];
      j->sp.shift = div[area][2];
    } else {
      /* OpenCV: round_even((float) sum * (float) (1.0 / area)); tall boxes' column sums are
         biased by -32768. */
      j->box_mode = ksize <= 128 ? BOX_ROLLING : BOX_TALL;
      j->hp.mode = 1;
      j->hp.add = j->box_mode == BOX_TALL ? (int32_t) (32768 * ksize) : 0;
      j->hp.scale = (float) (1.0 / (double) area);
    }
  } else if (j->type == TILEGEN_IMAGE_F32) {
    j->op = OP_SEP_F32;
    float* f = taps;
    for (int64_t i = 0; i < ksize; i++) { f[i] = 1.0f; f[ksize + 1 + i] = (float) (1.0 / (double) area); }
    j->fky = f;
    j->fkx = f + ksize + 1;
  } else {  /* OpenCV: integer (uint16) or double sums, times 1 / area */
    j->op = OP_GEN;
    j->gen = GEN_SCALE;
    double* d = taps;
    for (int64_t i = 0; i < ksize; i++) d[i] = 1.0;
    j->dkx = j->dky = d;
    j->scale = 1.0 / (double) area;
  }
  const int rc = run(j);
  free(taps);
  return rc;
}

static int box(int type, const void* src, int64_t ss, void* dst, int64_t ds, int64_t h,
               int64_t w, int64_t c, int64_t ksize, int border) {
  int rc = check_image(src, ss, dst, ds, h, w, c);
  if (rc) return rc;
  if (ksize < 1 || ksize > (type == TILEGEN_IMAGE_U8 ? TG_BOX_U8_MAX_KSIZE : TG_FILTER_MAX_KSIZE))
    return -8;
  if (!valid_border(border)) return -9;
  job j;
  init_job(&j, 0, src, ss, dst, ds, h, w, c, type_size(type), border, ksize, ksize);
  set_batch(&j, type, 1, 0, 0, NULL);
  return box_run(&j, ksize);
}

int tilegen_box_blur_u8(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride,
                        int64_t height, int64_t width, int64_t channels, int64_t ksize,
                        int border) {
  return box(TILEGEN_IMAGE_U8, src, src_stride, dst, dst_stride, height, width, channels, ksize,
             border);
}

int tilegen_box_blur_f32(const float* src, int64_t src_stride, float* dst, int64_t dst_stride,
                         int64_t height, int64_t width, int64_t channels, int64_t ksize,
                         int border) {
  return box(TILEGEN_IMAGE_F32, src, src_stride, dst, dst_stride, height, width, channels, ksize,
             border);
}

int tilegen_box_blur_ex(int type, const void* src, int64_t src_stride, void* dst,
                        int64_t dst_stride, int64_t height, int64_t width, int64_t channels,
                        int64_t batch, int64_t src_bstride, int64_t dst_bstride, int64_t ksize,
                        int border, const double* border_value) {
  int rc = check_ex(type, src, src_stride, dst, dst_stride, height, width, channels, batch);
  if (rc) return rc;
  if (ksize < 1 ||
      ksize > (type == TILEGEN_IMAGE_U8 ? TG_BOX_U8_MAX_KSIZE : TG_FILTER_MAX_KSIZE))
    return -12;
  if (!valid_border(border)) return -13;
  if (batch == 0) return 0;
  job j;
  init_job(&j, 0, src, src_stride, dst, dst_stride, height, width, channels, type_size(type),
           border, ksize, ksize);
  set_batch(&j, type, batch, src_bstride, dst_bstride, border_value);
  return box_run(&j, ksize);
}
