/*
 * Image filter pass tester (filter.py): one kernel against a plain reference for
 * n in {1, 2, NR-1, NR, NR+1, 2NR+3, 5NR-1} values, 1..9 taps (kh, kw up to 5 for filt2d),
 * steps 1, 3 and 4 (C = 1, 3, 4), both hfilt roundings, every hsum shift. Every input row and
 * the output end at a PROT_NONE page (an over-read or over-write faults), and sentinels before
 * the output catch writes below it. Integer passes must be exact; filt2d within 1e-5 of the
 * sum of |products| (scaled by sqrt(taps)).
 *
 * filt2d: every m <= MR output rows, with sentinels between them.
 * Built per kernel with -DTG_UKERNEL=<fn> -DTG_KIND=TG_FILTER_KIND_<KIND> -DTG_MR=.. -DTG_NR=..
 * -DTG_ISA_ID=TG_ISA_<NAME>; prints "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77.
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

#if TG_KIND == TG_FILTER_KIND_HFILT || TG_KIND == TG_FILTER_KIND_HSUM
static void run_case(int64_t n, int taps, int64_t step, int mode) {
  region ri, ro;
  const int64_t len = n + (taps - 1) * step;
  uint8_t* o = gbuf((size_t) (n + PRE), 1, &ro);
  for (int i = 0; i < PRE; i++) o[i] = 0xA5;
  uint8_t* out = o + PRE;
#if TG_KIND == TG_FILTER_KIND_HFILT
  int16_t* in = gbuf((size_t) len, 2, &ri);
  for (int64_t x = 0; x < len; x++) in[x] = (int16_t) rand_int(-32768, 32767);
  int16_t coef[MAXTAPS + 1];
  for (int t = 0; t < taps; t++) coef[t] = (int16_t) rand_int(-256, 256);
  coef[taps] = 0;
  tg_u8_hfilt_params p;
  p.mode = mode;
  /* mode 0 lands S + add around [-2^23, 2^24]; mode 1 scales around [-64, 320]. */
  p.add = (int32_t) rand_int(-(1 << 22), 1 << 23);
  p.scale = (float) (rand_int(1, 1000) * 1e-7);
  TG_UKERNEL(n, taps, step, in, coef, out, &p);
#else
  uint16_t* in = gbuf((size_t) len, 2, &ri);
  for (int64_t x = 0; x < len; x++) in[x] = (uint16_t) rand_int(0, 65000 / taps);
  tg_u8_hsum_params p;
  p.add = (uint16_t) rand_int(0, 500);
  p.mul = (uint16_t) rand_int(1, 32767);  /* quotients below 2^15 (the kernel's contract) */
  p.shift = mode;
  TG_UKERNEL(n, taps, step, in, out, &p);
#endif
  cases++;
  for (int i = 0; i < PRE; i++)
    if (o[i] != 0xA5) fail("sentinel overwritten", n, taps, step, i - PRE, o[i], 0xA5);
  for (int64_t x = 0; x < n; x++) {
    double want;
#if TG_KIND == TG_FILTER_KIND_HFILT
    int32_t s = 0;
    for (int t = 0; t < taps; t++) s += (int32_t) coef[t] * in[x + t * step];
    if (mode == 0) {
      want = (double) ((s + p.add) >> 16);
    } else {
      const float v = (float) (s + p.add) * p.scale;
      want = (double) rintf(v);
    }
#else
    uint32_t s = 0;
    for (int t = 0; t < taps; t++) s += in[x + t * step];
    want = (double) (((uint32_t) (s + p.add) * p.mul >> 16) >> p.shift);
#endif
    want = want < 0 ? 0 : want > 255 ? 255 : want;
    if ((double) out[x] != want) fail("value", n, taps, step, x, out[x], want);
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
/* The element-wise steps; `mode` picks sharpen's threshold (0, 3, 300) and amount. */
static void run_case(int64_t n, int mode) {
  region ri, ro;
#if TG_KIND == TG_FILTER_KIND_FROUND
  float* in = gbuf((size_t) n, 4, &ri);
  for (int64_t x = 0; x < n; x++) {
    /* around [-40, 300], every fourth value an exact tie */
    in[x] = x % 4 ? (float) (uniform() * 170 + 130) : (float) rand_int(-40, 300) + 0.5f;
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
  p.threshold = mode == 0 ? 0 : mode == 1 ? 3 : 300;
  p.amount = mode == 0 ? 1.0f : mode == 1 ? 0.7f : -1.5f;
#endif
  for (int i = 0; i < PRE; i++) o[i] = SENT;
  __typeof__(o) out = o + PRE;
#if TG_KIND == TG_FILTER_KIND_SHARPEN
  TG_UKERNEL(n, in, blur, out, &p);
#else
  TG_UKERNEL(n, in, out);
#endif
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
      for (size_t s = 0; s < 3; s++) { run_case(n, taps, steps[s], 0); run_case(n, taps, steps[s], 1); }
#elif TG_KIND == TG_FILTER_KIND_HSUM
    for (int taps = 1; taps <= MAXTAPS; taps++)
      for (size_t s = 0; s < 3; s++)
        for (int shift = 0; shift <= 8; shift += 4) run_case(n, taps, steps[s], shift);
#elif TG_KIND == TG_FILTER_KIND_TOF32 || TG_KIND == TG_FILTER_KIND_FROUND || \
    TG_KIND == TG_FILTER_KIND_SHARPEN
    for (int mode = 0; mode < 3; mode++) run_case(n, mode);
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
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
