/*
 * Image filter pass tester (filter.py): one kernel against a plain reference for
 * n in {1, 2, NR-1, NR, NR+1, 2NR+3, 5NR-1} values, 1..9 taps (kh, kw up to 5 for filt2d),
 * steps 1, 3 and 4 (C = 1, 3, 4), both hfilt roundings, every hsum shift; then n = 1 .. 2NR
 * (every remainder of the NR block: the zero-padded short row and the block moved back to end
 * at n), taps and steps varied along. Every input row and the output end at a PROT_NONE page
 * (an over-read or over-write faults), and sentinels before the output catch writes below it.
 * Integer passes must be exact; filt2d within 1e-5 of the sum of |products| (scaled by
 * sqrt(taps)).
 *
 * The rounding edges at the scales the library uses:
 *  - hfilt's float mode (box blurs of more than 256 pixels: scale 1/area, exact for the 32x32,
 *    64x64 and 128x128 boxes): scales 2^-p (p = 1, 10, 12, 14) with every S + add an odd
 *    multiple of 2^(p-1), so that every result is a tie (round to even, as OpenCV); box column
 *    sums, plain and biased by -32768 as the tall boxes' are, at scales 1/1024, 1/4096,
 *    1/16384 and 1/289; and the boxes as the driver runs them (ksize unit taps, 17x17 up to
 *    257x257, tall ones biased), every result a tie for 32x32, 64x64, 128x128 and 256x256;
 *  - hfilt's saturation: results 2^15 .. 2^24 past the int16 range whose low 16 bits land in
 *    [0, 255] (a narrowing to int16 without saturation wraps there), and full-range inputs at
 *    scales 1/257 .. 1;
 *  - hsum with the box divisors the driver uses (every square box up to 16x16): every possible
 *    sum of the box, ties included, against the divisor's formula and OpenCV's own;
 *  - sharpen with amounts 0.5, 1.5, 2.5 and -0.5 (odd differences land on .5) and +-300
 *    (results far past the int16 range), thresholds 0 to 300;
 *  - fround: every fourth value an exact tie, and values far outside [0, 255].
 *
 * filt2d: every m <= MR output rows, with sentinels between them.
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_KIND=TG_FILTER_KIND_<KIND> -DTG_MR=.. -DTG_NR=..
 * -DTG_ISA_ID=TG_ISA_<NAME>; prints the COVER lines (ukernel_tester.h) and
 * "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77.
 */
#define _GNU_SOURCE
#include <math.h>

#include "tg_ukernels.h"

typedef uint8_t T;  /* guarded() allocates bytes here; each buffer is cast to its own type */
#include "ukernel_tester.h"

#define MAXTAPS 9
#define PRE 16  /* sentinel values before each output */

static long cases = 0, failed = 0;

static void fail(const char* what, int64_t n, int taps, int64_t step, int64_t x, double got,
                 double want) {
  failed++;
  if (failed <= 20)
    fprintf(stderr, "FAIL %s: n=%lld taps=%d step=%lld x=%lld: got %.9g want %.9g\n", what,
            (long long) n, taps, (long long) step, (long long) x, got, want);
}

static inline int64_t rand_int(int64_t lo, int64_t hi) {  /* uniform in [lo, hi] */
  const double u = (uniform() + 1.0) * 0.5;
  int64_t v = lo + (int64_t) (u * (double) (hi - lo + 1));
  return v > hi ? hi : v;
}

/* A guarded buffer of `count` elements of `size` bytes. */
static void* gbuf(size_t count, size_t size, region* r) { return guarded(count * size, r); }

#if TG_KIND == TG_FILTER_KIND_VFILT || TG_KIND == TG_FILTER_KIND_VSUM
static void run_case(int64_t n, int taps) {
  region rr[MAXTAPS], ro;
  const uint8_t* rows[MAXTAPS];
  for (int t = 0; t < taps; t++) {
    uint8_t* r = gbuf((size_t) n, 1, &rr[t]);
    for (int64_t x = 0; x < n; x++) r[x] = (uint8_t) rand_int(0, 255);
    rows[t] = r;
  }
  int16_t coef[MAXTAPS];
  for (int t = 0; t < taps; t++) coef[t] = (int16_t) rand_int(-256, 256);
  const int16_t bias = (int16_t) rand_int(-32768, 32767);
  int16_t* o = gbuf((size_t) (n + PRE), 2, &ro);
  for (int i = 0; i < PRE; i++) o[i] = (int16_t) 0x5A5A;
  int16_t* out = o + PRE;
#if TG_KIND == TG_FILTER_KIND_VFILT
  TG_UKERNEL(n, taps, rows, coef, bias, out);
#else
  (void) coef;
  (void) bias;
  TG_UKERNEL(n, taps, rows, (uint16_t*) out);
#endif
  cover("x", TG_NR, n);
  cases++;
  for (int i = 0; i < PRE; i++)
    if (o[i] != (int16_t) 0x5A5A) fail("sentinel overwritten", n, taps, 0, i - PRE, o[i], 0x5A5A);
  for (int64_t x = 0; x < n; x++) {
    int32_t s = 0;
#if TG_KIND == TG_FILTER_KIND_VFILT
    s = bias;
    for (int t = 0; t < taps; t++) s += (int32_t) coef[t] * rows[t][x];
#else
    for (int t = 0; t < taps; t++) s += rows[t][x];
#endif
    const uint16_t want = (uint16_t) (uint32_t) s;
    if ((uint16_t) out[x] != want) fail("value", n, taps, 0, x, (uint16_t) out[x], want);
  }
  for (int t = 0; t < taps; t++) release(&rr[t]);
  release(&ro);
}
#endif

#if TG_KIND == TG_FILTER_KIND_HFILT
/* The inputs of a case (hfilt_case's `kind`). */
enum {
  H_FIXED,     /* mode 0, random: S + add around [-2^23, 2^24] */
  H_FLOAT,     /* mode 1, random scales k*1e-7: results around [-64, 320] */
  H_TIES,      /* mode 1, scale 2^-p, inputs multiples of 2^p, add an odd multiple of 2^(p-1):
                  every result a tie, from -7.5 up past 255 */
  H_BOX,       /* mode 1, a box's column sums (128 rows, unit taps), scale 1/area, area 2^p */
  H_BOX_TALL,  /* the same biased by -32768 per column, add 32768*taps (the tall boxes) */
  H_BOX_289,   /* H_BOX at 17x17's inexact scale 1/289 */
  H_SAT,       /* mode 1, scale 1 or 1/2, small sums and an add 2^15 .. 2^24 away: results past
                  the int16 range whose low 16 bits land in [0, 255] */
  H_WIDE,      /* mode 1, full-range inputs and coefficients, scales 1/257 .. 1 */
};

static void run_case(int64_t n, int taps, int64_t step, int kind, int p2) {
  static unsigned sat_turn = 0;
  region ri, ro;
  const int64_t len = n + (taps - 1) * step;
  uint8_t* o = gbuf((size_t) (n + PRE), 1, &ro);
  for (int i = 0; i < PRE; i++) o[i] = 0xA5;
  uint8_t* out = o + PRE;
  int16_t* in = gbuf((size_t) len, 2, &ri);
  int16_t coef[MAXTAPS + 1];
  tg_u8_hfilt_params p;
  p.mode = kind == H_FIXED ? 0 : 1;
  switch (kind) {
    case H_FIXED:
    case H_FLOAT:
      for (int64_t x = 0; x < len; x++) in[x] = (int16_t) rand_int(-32768, 32767);
      for (int t = 0; t < taps; t++) coef[t] = (int16_t) rand_int(-256, 256);
      /* mode 0 lands S + add around [-2^23, 2^24]; mode 1 scales around [-64, 320]. */
      p.add = (int32_t) rand_int(-(1 << 22), 1 << 23);
      p.scale = (float) (rand_int(1, 1000) * 1e-7);
      break;
    case H_TIES: {
      const int32_t unit = 1 << p2;
      const int64_t mmax = (32767 >> p2) < 64 ? (32767 >> p2) : 64;
      int64_t cmax = 280 / (taps * mmax);
      cmax = cmax < 1 ? 1 : cmax > 256 ? 256 : cmax;
      for (int64_t x = 0; x < len; x++) in[x] = (int16_t) (rand_int(0, mmax) * unit);
      for (int t = 0; t < taps; t++) coef[t] = (int16_t) rand_int(0, cmax);
      p.add = -8 * unit + unit / 2;
      p.scale = ldexpf(1.0f, -p2);
      break;
    }
    case H_BOX:
    case H_BOX_TALL:
    case H_BOX_289: {
      const int tall = kind == H_BOX_TALL;
      for (int64_t x = 0; x < len; x++)
        in[x] = (int16_t) (rand_int(0, 255 * 128) - (tall ? 32768 : 0));
      for (int t = 0; t < taps; t++) coef[t] = 1;
      p.add = tall ? 32768 * taps : 0;
      p.scale = (float) (1.0 / (kind == H_BOX_289 ? 289.0 : (double) (1 << p2)));
      break;
    }
    case H_SAT: {
      static const int32_t adds[] = {32768, -32769, 65536, -65536, 3 * 65536 + 100,
                                     -5 * 65536 + 200, 1 << 24, -(1 << 24)};
      for (int64_t x = 0; x < len; x++) in[x] = (int16_t) rand_int(-60, 60);
      for (int t = 0; t < taps; t++) coef[t] = (int16_t) rand_int(-2, 2);
      p.add = adds[sat_turn % 8];
      p.scale = sat_turn / 8 % 2 ? 0.5f : 1.0f;
      sat_turn++;
      break;
    }
    default:  /* H_WIDE */
      for (int64_t x = 0; x < len; x++) in[x] = (int16_t) rand_int(-32768, 32767);
      for (int t = 0; t < taps; t++) coef[t] = (int16_t) rand_int(-256, 256);
      p.add = (int32_t) rand_int(-(1 << 24), 1 << 24);
      p.scale = (float) (1.0 / (double) rand_int(1, 257));
      break;
  }
  coef[taps] = 0;
  TG_UKERNEL(n, taps, step, in, coef, out, &p);
  cover("x", TG_NR, n);
  cover("taps", 2, taps);
  cases++;
  for (int i = 0; i < PRE; i++)
    if (o[i] != 0xA5) fail("sentinel overwritten", n, taps, step, i - PRE, o[i], 0xA5);
  for (int64_t x = 0; x < n; x++) {
    int32_t s = 0;
    for (int t = 0; t < taps; t++) s += (int32_t) coef[t] * in[x + t * step];
    double want;
    if (p.mode == 0) {
      want = (double) ((s + p.add) >> 16);
    } else {
      const float v = (float) (s + p.add) * p.scale;
      want = (double) rintf(v);  /* to nearest, ties to even */
    }
    want = want < 0 ? 0 : want > 255 ? 255 : want;
    if ((double) out[x] != want) fail(kind == H_TIES ? "tie" : "value", n, taps, step, x, out[x], want);
  }
  release(&ri);
  release(&ro);
}
#endif

#if TG_KIND == TG_FILTER_KIND_HFILT
/* A uint8 box blur of more than 256 pixels exactly as the driver runs it (filters.c, box):
   ksize unit taps over the column sums of ksize rows ([0, 255*ksize]; biased by -32768 for the
   tall boxes, ksize > 128, with add 32768*ksize), scale (float) (1/area). Where the scale is
   exact (area 2^p: the 32x32, 64x64, 128x128 and 256x256 boxes) every window of the row sums
   to area/2 modulo the area, so that every result is a tie (to even, as OpenCV): each channel's
   first ksize column sums are drawn to make the first window one, and every later sum differs
   from the one ksize columns before it by a multiple of the area. */
static void run_box_hfilt(int64_t n, int ksize, int64_t step) {
  const int64_t area = (int64_t) ksize * ksize, top = 255 * (int64_t) ksize;
  const int exact = (area & (area - 1)) == 0, tall = ksize > 128;
  region ri, ro;
  const int64_t len = n + (ksize - 1) * step;
  uint8_t* o = gbuf((size_t) (n + PRE), 1, &ro);
  for (int i = 0; i < PRE; i++) o[i] = 0xA5;
  uint8_t* out = o + PRE;
  int64_t* sums = malloc((size_t) len * sizeof(int64_t));
  for (int64_t x = 0; x < len; x++) {
    const int64_t back = x - ksize * step;  /* the sum this one replaces in the window */
    if (!exact) {
      sums[x] = rand_int(0, top);
    } else if (back >= 0) {
      const int64_t up = (top - sums[back]) / area, down = sums[back] / area;
      sums[x] = sums[back] + area * rand_int(-down, up);
    } else if (x + step < ksize * step) {
      sums[x] = rand_int(0, top);
    } else {  /* the last of the channel's first window: its sum area/2 modulo the area */
      int64_t before = 0;
      for (int64_t y = x - step; y >= 0; y -= step) before += sums[y];
      int64_t r = (((area / 2 - before) % area) + area) % area;
      if (r > top) {  /* (the 256x256 box only: top < area) move the previous sum instead */
        if (sums[x - step] + (r - top) <= top) {
          sums[x - step] += r - top;
          r = top;
        } else {
          sums[x - step] -= area - r;
          r = 0;
        }
      }
      sums[x] = r + area * rand_int(0, (top - r) / area);
    }
  }
  int16_t* in = gbuf((size_t) len, 2, &ri);
  for (int64_t x = 0; x < len; x++) in[x] = (int16_t) (sums[x] - (tall ? 32768 : 0));
  int16_t* coef = malloc((size_t) (ksize + 1) * sizeof(int16_t));
  for (int t = 0; t < ksize; t++) coef[t] = 1;
  coef[ksize] = 0;
  tg_u8_hfilt_params p;
  p.mode = 1;
  p.add = tall ? (int32_t) (32768 * ksize) : 0;
  p.scale = (float) (1.0 / (double) area);
  TG_UKERNEL(n, ksize, step, in, coef, out, &p);
  cover("x", TG_NR, n);
  cover("taps", 2, ksize);
  cases++;
  for (int i = 0; i < PRE; i++)
    if (o[i] != 0xA5) fail("sentinel overwritten", n, ksize, step, i - PRE, o[i], 0xA5);
  for (int64_t x = 0; x < n; x++) {
    int64_t s = 0;
    for (int t = 0; t < ksize; t++) s += sums[x + t * step];
    if (exact && s % area != area / 2) fail("box tie construction", n, ksize, step, x, (double) s, 0);
    /* OpenCV: round-to-even of (float) sum * (float) (1/area) */
    double want = (double) rintf((float) s * p.scale);
    want = want < 0 ? 0 : want > 255 ? 255 : want;
    if ((double) out[x] != want) fail(exact ? "box tie" : "box", n, ksize, step, x, out[x], want);
  }
  free(coef);
  free(sums);
  release(&ri);
  release(&ro);
}
#endif

#if TG_KIND == TG_FILTER_KIND_HSUM
static void run_case(int64_t n, int taps, int64_t step, int shift) {
  region ri, ro;
  const int64_t len = n + (taps - 1) * step;
  uint8_t* o = gbuf((size_t) (n + PRE), 1, &ro);
  for (int i = 0; i < PRE; i++) o[i] = 0xA5;
  uint8_t* out = o + PRE;
  uint16_t* in = gbuf((size_t) len, 2, &ri);
  for (int64_t x = 0; x < len; x++) in[x] = (uint16_t) rand_int(0, 65000 / taps);
  tg_u8_hsum_params p;
  p.add = (uint16_t) rand_int(0, 500);
  p.mul = (uint16_t) rand_int(1, 32767);  /* quotients below 2^15 (the kernel's contract) */
  p.shift = shift;
  TG_UKERNEL(n, taps, step, in, out, &p);
  cover("x", TG_NR, n);
  cases++;
  for (int i = 0; i < PRE; i++)
    if (o[i] != 0xA5) fail("sentinel overwritten", n, taps, step, i - PRE, o[i], 0xA5);
  for (int64_t x = 0; x < n; x++) {
    uint32_t s = 0;
    for (int t = 0; t < taps; t++) s += in[x + t * step];
    double want = (double) (((uint32_t) (s + p.add) * p.mul >> 16) >> p.shift);
    want = want > 255 ? 255 : want;
    if ((double) out[x] != want) fail("value", n, taps, step, x, out[x], want);
  }
  release(&ri);
  release(&ro);
}

/* The box blur's division (the driver's table, filter.py's box_divisor) for a ksize x ksize
   box: with one tap, every sum 0 .. 255*area once (ties included); with ksize taps (ksize <= 9),
   random column sums of ksize rows, step `step`. Each result against the divisor's formula and
   against OpenCV's ((s + dd) * ds) >> 23. */
static const uint16_t box_div[257][3] = {
#define TG_DIV_ROW(D, ADD, MUL, SHIFT) [D] = {ADD, MUL, SHIFT},
    TG_FILTER_BOX_DIVISORS(TG_DIV_ROW)
#undef TG_DIV_ROW
};

static void run_box_case(int ksize, int taps, int64_t step, int64_t n) {
  const int area = ksize * ksize;
  region ri, ro;
  if (taps == 1) n = 255 * (int64_t) area + 1;
  const int64_t len = n + (taps - 1) * step;
  uint8_t* o = gbuf((size_t) (n + PRE), 1, &ro);
  for (int i = 0; i < PRE; i++) o[i] = 0xA5;
  uint8_t* out = o + PRE;
  uint16_t* in = gbuf((size_t) len, 2, &ri);
  for (int64_t x = 0; x < len; x++)
    in[x] = (uint16_t) (taps == 1 ? x : rand_int(0, 255 * ksize));
  tg_u8_hsum_params p;
  p.add = box_div[area][0];
  p.mul = box_div[area][1];
  p.shift = box_div[area][2];
  TG_UKERNEL(n, taps, step, in, out, &p);
  cover("x", TG_NR, n);
  cases++;
  /* OpenCV's division of 16-bit sums by the area (box_divisor in filter.py) */
  const double scale = (double) (1 << 23) / area;
  int64_t ds = (int64_t) scale, dd = area / 2;
  if (scale - (double) ds < 0.5) dd += 1; else ds += 1;
  for (int i = 0; i < PRE; i++)
    if (o[i] != 0xA5) fail("sentinel overwritten", n, taps, step, i - PRE, o[i], 0xA5);
  for (int64_t x = 0; x < n; x++) {
    uint32_t s = 0;
    for (int t = 0; t < taps; t++) s += in[x + t * step];
    uint32_t want = ((s + p.add) * (uint32_t) p.mul >> 16) >> p.shift;
    want = want > 255 ? 255 : want;
    int64_t cv = ((int64_t) s + dd) * ds >> 23;
    cv = cv > 255 ? 255 : cv;
    if ((int64_t) want != cv) fail("box divisor", n, area, step, x, (double) want, (double) cv);
    if (out[x] != want) fail("box", n, area, step, x, out[x], want);
  }
  release(&ri);
  release(&ro);
}
#endif

#if TG_KIND == TG_FILTER_KIND_FILT2D
/* m output rows (m <= MR) from m + kh - 1 input rows, the output rows out_stride apart with
   sentinels between them. */
static void run_case(int64_t m, int64_t n, int kh, int kw, int64_t step) {
  region rr[TG_MR + 4], ro;
  const float* rows[TG_MR + 4];
  const int64_t len = n + (kw - 1) * step, nrows = m + kh - 1;
  for (int64_t i = 0; i < nrows; i++) {
    float* r = gbuf((size_t) len, 4, &rr[i]);
    for (int64_t x = 0; x < len; x++) r[x] = (float) uniform();
    rows[i] = r;
  }
  float coef[25];
  for (int i = 0; i < kh * kw; i++) coef[i] = (float) uniform();
  const int64_t ostride = n + 5;
  const int64_t total = PRE + (m - 1) * ostride + n;
  float* o = gbuf((size_t) total, 4, &ro);
  for (int64_t i = 0; i < total; i++) o[i] = -777.25f;
  float* out = o + PRE;
  TG_UKERNEL(m, n, kh, kw, step, rows, coef, out, ostride);
  cover("x", TG_NR, n);
  cover("m", TG_MR, m);
  cases++;
  for (int64_t i = 0; i < total; i++) {
    const int64_t rel = i - PRE, r = rel >= 0 ? rel / ostride : -1, x = rel >= 0 ? rel % ostride : -1;
    if (r < 0 || x >= n) {
      if (o[i] != -777.25f) fail("sentinel overwritten", n, kh * kw, step, rel, o[i], -777.25);
      continue;
    }
    double want = 0, mag = 0;
    for (int a = 0; a < kh; a++)
      for (int b = 0; b < kw; b++) {
        const double pr = (double) coef[a * kw + b] * rows[r + a][x + b * step];
        want += pr;
        mag += fabs(pr);
      }
    const double tol = 1e-5 * sqrt((double) (kh * kw)) * mag + 1e-30;
    if (!(fabs((double) o[i] - want) <= tol)) fail("value", n, kh * kw, step, x, o[i], want);
  }
  for (int64_t i = 0; i < nrows; i++) release(&rr[i]);
  release(&ro);
}
#endif

#if TG_KIND == TG_FILTER_KIND_TOF32 || TG_KIND == TG_FILTER_KIND_FROUND || \
    TG_KIND == TG_FILTER_KIND_SHARPEN
#if TG_KIND == TG_FILTER_KIND_SHARPEN
/* sharpen's (threshold, amount) per mode: the first three random-looking, then amounts whose
   odd differences land on .5 (ties: to even), then results far past the int16 range. */
static const struct { int32_t threshold; float amount; } SHARPEN[] = {
    {0, 1.0f}, {3, 0.7f}, {300, -1.5f}, {0, 0.5f}, {0, 1.5f}, {2, 2.5f}, {0, -0.5f},
    {0, 300.0f}, {1, -300.0f}};
#define MODES ((int) (sizeof(SHARPEN) / sizeof(SHARPEN[0])))
#else
#define MODES 3
#endif

/* The element-wise steps; `mode` picks sharpen's threshold and amount (SHARPEN), fround's
   inputs. */
static void run_case(int64_t n, int mode) {
  region ri, ro;
#if TG_KIND == TG_FILTER_KIND_FROUND
  float* in = gbuf((size_t) n, 4, &ri);
  for (int64_t x = 0; x < n; x++) {
    /* around [-40, 300], every fourth value an exact tie; mode 2: some far outside */
    in[x] = x % 4 ? (float) (uniform() * 170 + 130) : (float) rand_int(-40, 300) + 0.5f;
    if (mode == 2 && x % 4 == 1) in[x] = (float) (uniform() * 3e9);
  }
  uint8_t* o = gbuf((size_t) (n + PRE), 1, &ro);
  const uint8_t SENT = 0xA5;
#elif TG_KIND == TG_FILTER_KIND_TOF32
  uint8_t* in = gbuf((size_t) n, 1, &ri);
  for (int64_t x = 0; x < n; x++) in[x] = (uint8_t) rand_int(0, 255);
  float* o = gbuf((size_t) (n + PRE), 4, &ro);
  const float SENT = -777.25f;
#else
  region rb;
  uint8_t* in = gbuf((size_t) n, 1, &ri);
  uint8_t* blur = gbuf((size_t) n, 1, &rb);
  for (int64_t x = 0; x < n; x++) {
    in[x] = (uint8_t) rand_int(0, 255);
    blur[x] = (uint8_t) (x % 3 ? rand_int(0, 255) : in[x] + rand_int(-4, 4));
  }
  uint8_t* o = gbuf((size_t) (n + PRE), 1, &ro);
  const uint8_t SENT = 0xA5;
  tg_u8_sharpen_params p;
  p.threshold = SHARPEN[mode].threshold;
  p.amount = SHARPEN[mode].amount;
#endif
  for (int i = 0; i < PRE; i++) o[i] = SENT;
  __typeof__(o) out = o + PRE;
#if TG_KIND == TG_FILTER_KIND_SHARPEN
  TG_UKERNEL(n, in, blur, out, &p);
#else
  TG_UKERNEL(n, in, out);
#endif
  cover("x", TG_NR, n);
  cases++;
  for (int i = 0; i < PRE; i++)
    if (memcmp(&o[i], &SENT, sizeof(SENT)) != 0) fail("sentinel overwritten", n, 0, 0, i - PRE, o[i], SENT);
  for (int64_t x = 0; x < n; x++) {
#if TG_KIND == TG_FILTER_KIND_TOF32
    const double want = in[x], alt = want;
#elif TG_KIND == TG_FILTER_KIND_FROUND
    const float c = in[x] < 0 ? 0.0f : in[x] > 255 ? 255.0f : in[x];
    const double want = rintf(c), alt = want;
#else
    const int d = (int) in[x] - (int) blur[x];
    double want = in[x], alt = in[x];
    if ((d < 0 ? -d : d) > p.threshold) {
      const float fused = fmaf((float) d, p.amount, (float) in[x]);
      const float split = (float) in[x] + (float) ((float) d * p.amount);
      want = rintf(fused);
      alt = rintf(split);
      want = want < 0 ? 0 : want > 255 ? 255 : want;
      alt = alt < 0 ? 0 : alt > 255 ? 255 : alt;
    }
#endif
    if ((double) out[x] != want && (double) out[x] != alt) fail("value", n, mode, 0, x, out[x], want);
  }
  release(&ri);
#if TG_KIND == TG_FILTER_KIND_SHARPEN
  release(&rb);
#endif
  release(&ro);
}
#endif

#if TG_KIND == TG_FILTER_KIND_VUPD
static void run_case(int64_t n) {
  region rp, ra, rs, ro;
  uint16_t* prev = gbuf((size_t) n, 2, &rp);
  uint8_t* add = gbuf((size_t) n, 1, &ra);
  uint8_t* sub = gbuf((size_t) n, 1, &rs);
  for (int64_t x = 0; x < n; x++) {
    prev[x] = (uint16_t) rand_int(0, 65535);
    add[x] = (uint8_t) rand_int(0, 255);
    sub[x] = (uint8_t) rand_int(0, 255);
  }
  uint16_t* o = gbuf((size_t) (n + PRE), 2, &ro);
  for (int i = 0; i < PRE; i++) o[i] = 0x5A5A;
  uint16_t* out = o + PRE;
  TG_UKERNEL(n, prev, add, sub, out);
  cover("x", TG_NR, n);
  cases++;
  for (int i = 0; i < PRE; i++)
    if (o[i] != 0x5A5A) fail("sentinel overwritten", n, 0, 0, i - PRE, o[i], 0x5A5A);
  for (int64_t x = 0; x < n; x++) {
    const uint16_t want = (uint16_t) (prev[x] + add[x] - sub[x]);
    if (out[x] != want) fail("value", n, 0, 0, x, out[x], want);
  }
  release(&rp); release(&ra); release(&rs); release(&ro);
}
#endif

int main(void) {
  if (!cpu_supported()) return 77;
  const int64_t ns[] = {1, 2, TG_NR - 1, TG_NR, TG_NR + 1, 2 * TG_NR + 3, 5 * TG_NR - 1};
  const int64_t steps[] = {1, 3, 4};
  (void) steps;
  for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
    const int64_t n = ns[a];
    if (n < 1 || (a > 0 && n == ns[a - 1])) continue;
#if TG_KIND == TG_FILTER_KIND_VFILT || TG_KIND == TG_FILTER_KIND_VSUM
    for (int taps = 1; taps <= MAXTAPS; taps++) run_case(n, taps);
#elif TG_KIND == TG_FILTER_KIND_HFILT
    for (int taps = 1; taps <= MAXTAPS; taps++)
      for (size_t s = 0; s < 3; s++) {
        run_case(n, taps, steps[s], H_FIXED, 0);
        run_case(n, taps, steps[s], H_FLOAT, 0);
        /* ties at scales 2^-1 and 1/1024, 1/4096, 1/16384 (the exact box scales) */
        const int pow2[] = {1, 10, 12, 14};
        run_case(n, taps, steps[s], H_TIES, pow2[(taps + s) % 4]);
        run_case(n, taps, steps[s], H_SAT, 0);
      }
    for (int taps = 1; taps <= MAXTAPS; taps++)
      for (int p2 = 10; p2 <= 14; p2 += 2) {
        run_case(n, taps, taps % 3 + 1, H_TIES, p2);
        run_case(n, taps, taps % 3 + 1, H_BOX, p2);
        run_case(n, taps, taps % 3 + 1, H_BOX_TALL, p2);
      }
    for (int taps = 1; taps <= MAXTAPS; taps += 2) {
      run_case(n, taps, 3, H_BOX_289, 0);
      run_case(n, taps, 1, H_WIDE, 0);
      run_case(n, taps, 4, H_SAT, 0);
    }
#elif TG_KIND == TG_FILTER_KIND_HSUM
    for (int taps = 1; taps <= MAXTAPS; taps++)
      for (size_t s = 0; s < 3; s++)
        for (int shift = 0; shift <= 8; shift += 4) run_case(n, taps, steps[s], shift);
    for (int ksize = 2; ksize <= MAXTAPS; ksize++) run_box_case(ksize, ksize, ksize % 4 + 1, n);
#elif TG_KIND == TG_FILTER_KIND_TOF32 || TG_KIND == TG_FILTER_KIND_FROUND || \
    TG_KIND == TG_FILTER_KIND_SHARPEN
    for (int mode = 0; mode < MODES; mode++) run_case(n, mode);
#elif TG_KIND == TG_FILTER_KIND_VUPD
    run_case(n);
#else
    const int sizes[] = {1, 2, 3, 5};
    for (int64_t m = 1; m <= TG_MR; m++)
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
          for (size_t s = 0; s < 3; s++) run_case(m, n, sizes[i], sizes[j], steps[s]);
#endif
  }
  /* Every remainder of the NR block, alone (the zero-padded short row) and after a full block
     (the block moved back to end at n); taps and steps varied along. */
  for (int64_t n = 1; n <= 2 * TG_NR; n++) {
    const int taps = 1 + (int) (n % MAXTAPS);
    const int64_t step = steps[n % 3];
    (void) taps;
    (void) step;
#if TG_KIND == TG_FILTER_KIND_VFILT || TG_KIND == TG_FILTER_KIND_VSUM
    run_case(n, taps);
#elif TG_KIND == TG_FILTER_KIND_HFILT
    run_case(n, taps, step, H_FIXED, 0);
    run_case(n, taps, step, H_FLOAT, 0);
    run_case(n, taps, step, H_TIES, 10 + 2 * (int) (n % 3));
    run_case(n, taps, step, H_SAT, 0);
#elif TG_KIND == TG_FILTER_KIND_HSUM
    run_case(n, taps, step, (int) (n % 3) * 4);
#elif TG_KIND == TG_FILTER_KIND_TOF32 || TG_KIND == TG_FILTER_KIND_FROUND || \
    TG_KIND == TG_FILTER_KIND_SHARPEN
    for (int mode = 0; mode < MODES; mode++) run_case(n, mode);
#elif TG_KIND == TG_FILTER_KIND_VUPD
    run_case(n);
#else
    run_case(1 + n % TG_MR, n, 1 + (int) (n % 3), 1 + (int) (n % 5), step);
#endif
  }
#if TG_KIND == TG_FILTER_KIND_HFILT
  /* The boxes of more than 256 pixels as the driver runs them: every result a tie at the
     exact scales (32x32, 64x64, 128x128 and the tall 256x256), and the inexact 17x17, 100x100
     and the tall 129x129 and 257x257; C = 1, 3, 4; a short row and rows with a tail. */
  const int boxes[] = {32, 64, 128, 256, 17, 100, 129, 257};
  const int64_t box_ns[] = {TG_NR > 3 ? TG_NR - 3 : 1, 2 * TG_NR + 5, 3 * TG_NR};
  for (int b = 0; b < 8; b++)
    for (int s = 0; s < 3; s++)
      for (int i = 0; i < 3; i++) run_box_hfilt(box_ns[i], boxes[b], steps[s]);
#endif
#if TG_KIND == TG_FILTER_KIND_HSUM
  /* Every sum of every square box the driver divides with hsum (2x2 .. 16x16). */
  for (int ksize = 2; ksize <= 16; ksize++) run_box_case(ksize, 1, 1, 0);
#endif
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
