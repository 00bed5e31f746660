/*
 * Drives the convolution C API of tilegen.h (tilegen_conv2d_f32/f64, the packed plans), linked
 * to libtilegen, for tests/test_conv_capi.py. Results are checked here against a plain float64
 * loop; every invalid parameter must return -p and leave the output untouched.
 * Prints one "FAIL ..." line per problem and "DONE <checks> <failures>"; exits 1 on failure.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilegen.h"

static long checks = 0, failures = 0;

#define FAIL(...)                  \
  do {                             \
    failures++;                    \
    printf("FAIL " __VA_ARGS__);   \
    printf("\n");                  \
  } while (0)

typedef struct {
  int layout;
  int64_t n, h, w, cin, cout, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, groups;
  int act;
} conv_case;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t a, int64_t b, int64_t d) {
  return (in + a + b - d * (k - 1) - 1) / s + 1;
}

static double act(double x, int a) {
  switch (a) {
    case TILEGEN_ACT_RELU: return x > 0 ? x : 0;
    case TILEGEN_ACT_RELU6: return x > 0 ? (x < 6 ? x : 6) : 0;
    case TILEGEN_ACT_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case TILEGEN_ACT_SILU: return x / (1 + exp(-x));
    default: return x;
  }
}

/* The reference: y (in the case's layout) from x and the weights (OIHW or OHWI), float64. */
static void reference(const conv_case* c, const double* x, const double* k, const double* b,
                      double* y) {
  const int64_t oh = out_dim(c->h, c->kh, c->sh, c->pt, c->pb, c->dh);
  const int64_t ow = out_dim(c->w, c->kw, c->sw, c->pl, c->pr, c->dw);
  const int64_t cg = c->cin / c->groups, kg = c->cout / c->groups;
  const int nchw = c->layout == TILEGEN_NCHW;
  for (int64_t ni = 0; ni < c->n; ni++)
    for (int64_t co = 0; co < c->cout; co++)
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
          double acc = b ? b[co] : 0;
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t ky = 0; ky < c->kh; ky++)
              for (int64_t kx = 0; kx < c->kw; kx++) {
                const int64_t iy = oy * c->sh + ky * c->dh - c->pt, ix = ox * c->sw + kx * c->dw - c->pl;
                if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w) continue;
                const int64_t cc = co / kg * cg + ci;
                const double xv = nchw ? x[((ni * c->cin + cc) * c->h + iy) * c->w + ix]
                                       : x[((ni * c->h + iy) * c->w + ix) * c->cin + cc];
                const double kv = nchw ? k[((co * cg + ci) * c->kh + ky) * c->kw + kx]
                                       : k[((co * c->kh + ky) * c->kw + kx) * cg + ci];
                acc += xv * kv;
              }
          const size_t at = nchw ? (size_t) (((ni * c->cout + co) * oh + oy) * ow + ox)
                                 : (size_t) (((ni * oh + oy) * ow + ox) * c->cout + co);
          y[at] = act(acc, c->act);
        }
}

static uint64_t rng = 88172645463325252ull;
static double uniform(void) {
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (double) (rng >> 11) / 4503599627370496.0 - 1.0;
}

typedef struct {
  const tilegen_conv2d_f32_plan* plan;
  const conv_case* c;
  const float* x;
  float* y;
  int rc;
} run_arg;

static void* run_plan(void* p) {
  run_arg* a = p;
  a->rc = tilegen_conv2d_f32_run(a->plan, a->c->n, a->c->h, a->c->w, a->x, a->y);
  return NULL;
}

static void check_case(const conv_case* c) {
  const int64_t oh = out_dim(c->h, c->kh, c->sh, c->pt, c->pb, c->dh);
  const int64_t ow = out_dim(c->w, c->kw, c->sw, c->pl, c->pr, c->dw);
  const size_t nx = (size_t) (c->n * c->cin * c->h * c->w), ny = (size_t) (c->n * c->cout * oh * ow);
  const size_t nk = (size_t) (c->cout * (c->cin / c->groups) * c->kh * c->kw);
  double *x = malloc(nx * 8), *k = malloc(nk * 8), *b = malloc((size_t) c->cout * 8),
         *want = malloc(ny * 8), *y64 = malloc(ny * 8);
  float *xf = malloc(nx * 4), *kf = malloc(nk * 4), *bf = malloc((size_t) c->cout * 4),
        *yf[3] = {malloc(ny * 4), malloc(ny * 4), malloc(ny * 4)};
  for (size_t i = 0; i < nx; i++) xf[i] = (float) (x[i] = uniform());
  for (size_t i = 0; i < nk; i++) kf[i] = (float) (k[i] = uniform());
  for (int64_t i = 0; i < c->cout; i++) bf[i] = (float) (b[i] = uniform());
  for (size_t i = 0; i < nx; i++) x[i] = xf[i];
  for (size_t i = 0; i < nk; i++) k[i] = kf[i];
  for (int64_t i = 0; i < c->cout; i++) b[i] = bf[i];
  reference(c, x, k, b, want);
  const double kdim = (double) (c->cin / c->groups * c->kh * c->kw);
  int rc = tilegen_conv2d_f32(c->layout, c->n, c->h, c->w, c->cin, xf, c->cout, c->kh, c->kw, kf,
                              bf, c->sh, c->sw, c->pt, c->pl, c->pb, c->pr, c->dh, c->dw,
                              c->groups, c->act, yf[0]);
  if (rc) FAIL("tilegen_conv2d_f32 returned %d", rc);
  rc = tilegen_conv2d_f64(c->layout, c->n, c->h, c->w, c->cin, x, c->cout, c->kh, c->kw, k, b,
                          c->sh, c->sw, c->pt, c->pl, c->pb, c->pr, c->dh, c->dw, c->groups,
                          c->act, y64);
  if (rc) FAIL("tilegen_conv2d_f64 returned %d", rc);
  tilegen_conv2d_f32_plan* plan = NULL;
  rc = tilegen_conv2d_f32_pack(c->layout, c->cin, c->cout, c->kh, c->kw, kf, bf, c->sh, c->sw,
                               c->pt, c->pl, c->pb, c->pr, c->dh, c->dw, c->groups, c->act, &plan);
  if (rc) FAIL("tilegen_conv2d_f32_pack returned %d", rc);
  memset(kf, 0, nk * 4);  /* the plan keeps its own copy */
  /* Two threads run the plan at once. */
  run_arg args[2] = {{plan, c, xf, yf[1], -1}, {plan, c, xf, yf[2], -1}};
  pthread_t t;
  pthread_create(&t, NULL, run_plan, &args[1]);
  run_plan(&args[0]);
  pthread_join(t, NULL);
  if (args[0].rc || args[1].rc) FAIL("tilegen_conv2d_f32_run returned %d/%d", args[0].rc, args[1].rc);
  tilegen_conv2d_f32_plan_free(plan);
  for (size_t i = 0; i < ny; i++) {
    const double tol = 1e-5 * sqrt(kdim) * (fabs(want[i]) + sqrt(kdim)) + 1e-6;
    for (int v = 0; v < 3; v++) {
      checks++;
      if (!(fabs(yf[v][i] - want[i]) <= tol)) {
        FAIL("layout %d %lldx%lld k%lldx%lld s%lld g%lld act %d: f32 form %d at %zu: %.9g vs %.9g",
             c->layout, (long long) c->h, (long long) c->w, (long long) c->kh, (long long) c->kw,
             (long long) c->sh, (long long) c->groups, c->act, v, i, yf[v][i], want[i]);
        break;
      }
    }
    checks++;
    if (!(fabs(y64[i] - want[i]) <= 1e-12 * kdim * (fabs(want[i]) + 1)))
      FAIL("f64 at %zu: %.17g vs %.17g", i, y64[i], want[i]);
  }
  free(x); free(k); free(b); free(want); free(y64);
  free(xf); free(kf); free(bf); free(yf[0]); free(yf[1]); free(yf[2]);
}

/* Every invalid parameter of each entry point: -p, and y untouched. */
static void check_errors(void) {
  static float x[4 * 6 * 6], k[8 * 4 * 3 * 3], b[8], y[8 * 6 * 6];
  const float sentinel = -777.0f;
  struct { int p; int64_t v[22]; } bad[] = {
    /* layout n h w cin x cout kh kw k b sh sw pt pl pb pr dh dw g act y */
    {1, {7, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {2, {0, -1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {3, {0, 1, 0, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {4, {0, 1, 6, -2, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {5, {0, 1, 6, 6, 0, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {6, {0, 1, 6, 6, 4, 0, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {7, {0, 1, 6, 6, 4, 1, 0, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {8, {0, 1, 6, 6, 4, 1, 8, 0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {8, {0, 1, 6, 6, 4, 1, 8, 9, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},  /* > padded input */
    {9, {0, 1, 6, 6, 4, 1, 8, 3, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {10, {0, 1, 6, 6, 4, 1, 8, 3, 3, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {12, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {13, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, -1, 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {14, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, -1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {15, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, -1, 1, 1, 1, 1, 1, 0, 1}},
    {16, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, -1, 1, 1, 1, 1, 0, 1}},
    {17, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, -1, 1, 1, 1, 0, 1}},
    {18, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1}},
    {19, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, -3, 1, 0, 1}},
    {20, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, 1}},
    {21, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9, 1}},
    {22, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}},
    /* paddings and dilations past 2^28 (whose sums would overflow int64 near its limit) */
    {14, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, (1LL << 28) + 1, 1, 1, 1, 1, 1, 1, 0, 1}},
    {17, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, INT64_MAX, 1, 1, 1, 0, 1}},
    {18, {0, 1, 6, 6, 4, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, INT64_MAX / 2, 1, 1, 0, 1}},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    const int64_t* v = bad[i].v;
    for (size_t e = 0; e < sizeof(y) / sizeof(y[0]); e++) y[e] = sentinel;
    const int rc = tilegen_conv2d_f32((tilegen_conv_layout) v[0], v[1], v[2], v[3], v[4],
                                      v[5] ? x : NULL, v[6], v[7], v[8], v[9] ? k : NULL,
                                      v[10] ? b : NULL, v[11], v[12], v[13], v[14], v[15],
                                      v[16], v[17], v[18], v[19], (tilegen_activation) v[20],
                                      v[21] ? y : NULL);
    checks++;
    if (rc != -bad[i].p) FAIL("tilegen_conv2d_f32: bad parameter %d returned %d", bad[i].p, rc);
    for (size_t e = 0; e < sizeof(y) / sizeof(y[0]); e++)
      if (y[e] != sentinel) { FAIL("tilegen_conv2d_f32: bad parameter %d wrote y", bad[i].p); break; }
  }
  /* The packed form: pack's own numbering, then run's. */
  tilegen_conv2d_f32_plan* plan = NULL;
  struct { int p, rc; } pk[] = {
    {1, tilegen_conv2d_f32_pack((tilegen_conv_layout) 5, 4, 8, 3, 3, k, b, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, &plan)},
    {2, tilegen_conv2d_f32_pack(TILEGEN_NCHW, 0, 8, 3, 3, k, b, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, &plan)},
    {6, tilegen_conv2d_f32_pack(TILEGEN_NCHW, 4, 8, 3, 3, NULL, b, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, &plan)},
    {9, tilegen_conv2d_f32_pack(TILEGEN_NCHW, 4, 8, 3, 3, k, b, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, &plan)},
    {16, tilegen_conv2d_f32_pack(TILEGEN_NCHW, 4, 8, 3, 3, k, b, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, &plan)},
    {17, tilegen_conv2d_f32_pack(TILEGEN_NCHW, 4, 8, 3, 3, k, b, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, &plan)},
    {18, tilegen_conv2d_f32_pack(TILEGEN_NCHW, 4, 8, 3, 3, k, b, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, NULL)},
  };
  for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++) {
    checks++;
    if (pk[i].rc != -pk[i].p) FAIL("tilegen_conv2d_f32_pack: bad parameter %d returned %d", pk[i].p, pk[i].rc);
  }
  if (plan != NULL) FAIL("a rejected pack wrote *plan");
  if (tilegen_conv2d_f32_pack(TILEGEN_NCHW, 4, 8, 3, 3, k, b, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, &plan))
    FAIL("a valid pack was rejected");
  for (size_t e = 0; e < sizeof(y) / sizeof(y[0]); e++) y[e] = sentinel;
  struct { int p, rc; } rn[] = {
    {1, tilegen_conv2d_f32_run(NULL, 1, 6, 6, x, y)},
    {2, tilegen_conv2d_f32_run(plan, -1, 6, 6, x, y)},
    {3, tilegen_conv2d_f32_run(plan, 1, 2, 6, x, y)},  /* 3x3 filter, no padding, height 2 */
    {4, tilegen_conv2d_f32_run(plan, 1, 6, 0, x, y)},
    {5, tilegen_conv2d_f32_run(plan, 1, 6, 6, NULL, y)},
    {6, tilegen_conv2d_f32_run(plan, 1, 6, 6, x, NULL)},
  };
  for (size_t i = 0; i < sizeof(rn) / sizeof(rn[0]); i++) {
    checks++;
    if (rn[i].rc != -rn[i].p) FAIL("tilegen_conv2d_f32_run: bad parameter %d returned %d", rn[i].p, rn[i].rc);
  }
  for (size_t e = 0; e < sizeof(y) / sizeof(y[0]); e++)
    if (y[e] != sentinel) { FAIL("a rejected run wrote y"); break; }
  tilegen_conv2d_f32_plan_free(plan);
  tilegen_conv2d_f32_plan_free(NULL);
}

int main(void) {
  const conv_case cases[] = {
    {TILEGEN_NCHW, 2, 9, 11, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, TILEGEN_ACT_RELU},
    {TILEGEN_NHWC, 2, 9, 11, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, TILEGEN_ACT_SILU},
    {TILEGEN_NCHW, 1, 17, 15, 3, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, TILEGEN_ACT_NONE},
    {TILEGEN_NHWC, 1, 17, 15, 3, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, TILEGEN_ACT_RELU6},
    {TILEGEN_NCHW, 1, 10, 10, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 20, TILEGEN_ACT_GELU},
    {TILEGEN_NHWC, 1, 10, 10, 20, 20, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 20, TILEGEN_ACT_NONE},
    {TILEGEN_NCHW, 1, 8, 8, 16, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, TILEGEN_ACT_RELU},
    {TILEGEN_NHWC, 1, 8, 8, 16, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, TILEGEN_ACT_NONE},
    {TILEGEN_NHWC, 1, 12, 13, 6, 7, 4, 2, 1, 2, 1, 0, 2, 1, 2, 1, 1, TILEGEN_ACT_SILU},
    {TILEGEN_NCHW, 1, 12, 13, 6, 7, 4, 2, 1, 2, 1, 0, 2, 1, 2, 1, 1, TILEGEN_ACT_SILU},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) check_case(&cases[i]);
  check_errors();
  printf("DONE %ld %ld\n", checks, failures);
  return failures ? 1 : 0;
}
