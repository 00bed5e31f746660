/*
 * Fused-attention micro-kernel tester: runs one generated kernel over sequences of key blocks
 * (one to three calls on one online-softmax state) and checks the state it leaves -- the
 * running maximum m, the sum l = sum_j exp(s_j - m) and O = sum_j exp(s_j - m) v_j -- against a
 * float64 reference, then the family's exp over an array in ULPs.
 *
 * Built per kernel with -DTG_T=float -DTG_DT=f32 -DTG_UKERNEL=<fn> -DTG_EXP=<exp fn> -DTG_MR=..
 * -DTG_NR=.. -DTG_KB=.. -DTG_UNROLL=<d steps per S loop iteration> -DTG_CW=<PV chunk floats>
 * -DTG_LANES=.. -DTG_WORK=<work floats> -DTG_EXP_ULP=<bound> -DTG_ISA_ID=TG_ISA_<NAME>; prints
 * the COVER lines and "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77.
 *
 * Kernel cases: n (keys per call) in {1, NR-1, NR, NR+1, KB-1, KB}; d in {0, 1, 3, 17, 64, 130};
 * dv in {1, CW-1, CW, CW+1, 2CW+3} and 256; prime row strides for K and V; no bias, a random
 * additive bias with -inf entries, a first block wholly masked, a query masked in every block
 * (which must leave l = 0 and O = 0); scores up to about +-1e3. Then every remainder of each
 * dimension the kernel tiles: n = 1 .. 2NR (every key tail of the last S tile, alone and after
 * a full one), d = 0 .. 2*UNROLL+1 (the unrolled d loop's remainders), dv = 1 .. 2CW (every
 * column of the last PV chunk, alone and after a full one); each dimension reported as a COVER
 * line (ukernel_tester.h). Every buffer (Q^T, K, V, bias, O, m, l, work) ends at a PROT_NONE
 * page, O's rows carry sentinels past the chunk-padded dv.
 *
 * exp: every 13th float32 bit pattern in [-87, 0] on x86-64 hosts (86 million values, every
 * binade; every 1009th elsewhere, where the tester usually runs under qemu), each within
 * TG_EXP_ULP ULP of exp() in double; below -87, -inf included, exactly +0; -0 gives 1 and NaN
 * stays NaN; arrays of 1 .. 2*LANES values (every remainder of its vector loop).
 */
#define _GNU_SOURCE
#include <float.h>
#include <math.h>

#include "tg_ukernels.h"

typedef TG_T T;
#include "ukernel_tester.h"

typedef CAT(CAT(tg_, TG_DT), _attention_args) args_t;

#define MR TG_MR
#define MAX_BLOCKS 3
static const T SENTINEL = (T) -4242.125;
static long cases = 0, failed = 0;

static void report(const char* what, int n, int d, int dv, int mode, int i, int c, double got,
                   double want, double tol) {
  failed++;
  if (failed <= 20)
    fprintf(stderr, "FAIL %s: n=%d d=%d dv=%d mode=%d query %d col %d: got %.9g want %.9g "
            "(tol %.3g)\n", what, n, d, dv, mode, i, c, got, want, tol);
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* mode 0: no bias; 1: random bias with some -inf; 2: block 0 wholly masked, then random;
   3: query 1 masked in every block, the others as 1. nblocks blocks of n keys each. */
static void run_case(int n, int d, int dv, int mode, int nblocks, double qscale) {
  region rq, rk[MAX_BLOCKS], rv[MAX_BLOCKS], rb[MAX_BLOCKS], ro, rm, rl, rw;
  const int64_t rs_k = next_prime(d + 1), rs_v = next_prime(dv + 2);
  const int64_t dv_pad = round_up(dv, TG_CW), rs_o = dv_pad + 3;
  T* qt = guarded((size_t) d * MR, &rq);
  for (int64_t x = 0; x < (int64_t) d * MR; x++) qt[x] = (T) (qscale * uniform());
  T *k[MAX_BLOCKS], *v[MAX_BLOCKS], *bias[MAX_BLOCKS];
  for (int b = 0; b < nblocks; b++) {
    const size_t kc = (size_t) ((n - 1) * rs_k + d), vc = (size_t) ((n - 1) * rs_v + dv);
    k[b] = guarded(kc, &rk[b]);
    for (size_t x = 0; x < kc; x++) k[b][x] = (T) uniform();
    v[b] = guarded(vc, &rv[b]);
    for (size_t x = 0; x < vc; x++) v[b][x] = (T) uniform();
    bias[b] = guarded((size_t) n * MR, &rb[b]);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < MR; i++) {
        T x = (T) (3.0 * uniform());
        if (uniform() > 0.8) x = (T) -INFINITY;
        if ((mode == 2 && b == 0) || (mode == 3 && i == 1)) x = (T) -INFINITY;
        bias[b][j * MR + i] = x;
      }
  }
  const size_t o_count = (size_t) ((MR - 1) * rs_o + dv_pad);
  T* o = guarded(o_count, &ro);
  for (size_t x = 0; x < o_count; x++) o[x] = (int64_t) (x % rs_o) < dv_pad ? (T) 0 : SENTINEL;
  T* m = guarded(MR, &rm);
  T* l = guarded(MR, &rl);
  for (int i = 0; i < MR; i++) { m[i] = (T) -INFINITY; l[i] = 0; }
  T* work = guarded(TG_WORK, &rw);

  cover("keys", TG_NR, n);
  cover("d", TG_UNROLL, d);
  cover("dv", TG_CW, dv);
  for (int b = 0; b < nblocks; b++) {
    args_t a;
    a.d = d; a.dv = dv; a.qt = qt; a.k = k[b]; a.rs_k = rs_k; a.v = v[b]; a.rs_v = rs_v;
    a.bias = mode == 0 ? NULL : bias[b]; a.o = o; a.rs_o = rs_o; a.m = m; a.l = l;
    a.work = work;
    for (int x = 0; x < TG_WORK; x++) work[x] = (T) NAN;  /* scratch: never trusted */
    TG_UKERNEL(n, &a);
  }
  cases++;

  /* Reference: every score in float64, then max, sum and weighted V. */
  double* s = malloc(sizeof(double) * (size_t) nblocks * n);
  double* wsum = malloc(sizeof(double) * (size_t) dv);
  double* wabs = malloc(sizeof(double) * (size_t) dv);
  for (int i = 0; i < MR; i++) {
    double mx = -INFINITY, smag = 0;
    for (int b = 0; b < nblocks; b++)
      for (int j = 0; j < n; j++) {
        double acc = 0, mag = 0;
        for (int dd = 0; dd < d; dd++) {
          const double pr = (double) qt[dd * MR + i] * (double) k[b][j * rs_k + dd];
          acc += pr;
          mag += fabs(pr);
        }
        if (mode != 0) acc += (double) bias[b][j * MR + i];
        s[b * n + j] = acc;
        if (acc > mx) mx = acc;
        if (mag > smag) smag = mag;
      }
    /* An error e in a score is a relative error of about e in its exp. */
    const double es = 1e-6 * sqrt((double) d + 1) * (smag + 1) * 4;
    double lsum = 0;
    for (int c = 0; c < dv; c++) wsum[c] = wabs[c] = 0;
    for (int b = 0; b < nblocks; b++)
      for (int j = 0; j < n; j++) {
        const double pj = mx == -INFINITY ? 0 : exp(s[b * n + j] - mx);
        lsum += pj;
        for (int c = 0; c < dv; c++) {
          wsum[c] += pj * (double) v[b][j * rs_v + c];
          wabs[c] += pj * fabs((double) v[b][j * rs_v + c]);
        }
      }
    if (mx == -INFINITY) {
      if (!(m[i] == -INFINITY)) report("m (masked)", n, d, dv, mode, i, -1, m[i], mx, 0);
    } else if (!(fabs((double) m[i] - mx) <= es)) {
      report("m", n, d, dv, mode, i, -1, m[i], mx, es);
    }
    const double tl = (2 * es + 1e-6) * lsum + 1e-30;
    if (!(fabs((double) l[i] - lsum) <= tl)) report("l", n, d, dv, mode, i, -1, l[i], lsum, tl);
    for (int c = 0; c < rs_o && (int64_t) i * rs_o + c < (int64_t) o_count; c++) {
      const T got = o[i * rs_o + c];
      if (c >= dv_pad) {
        if (memcmp(&got, &SENTINEL, sizeof(T)) != 0)
          report("sentinel overwritten", n, d, dv, mode, i, c, got, SENTINEL, 0);
        continue;
      }
      if (c >= dv) continue;  /* chunk padding: the kernel's scratch */
      const double tol = (2 * es + 1e-6) * wabs[c] + 1e-30;
      if (!(fabs((double) got - wsum[c]) <= tol)) report("O", n, d, dv, mode, i, c, got, wsum[c], tol);
    }
  }
  free(s); free(wsum); free(wabs);
  release(&rq); release(&ro); release(&rm); release(&rl); release(&rw);
  for (int b = 0; b < nblocks; b++) { release(&rk[b]); release(&rv[b]); release(&rb[b]); }
}

/* The exp in ULPs: the distance to exp(x) in double, in units of the float spacing there. */
static void check_exp(void) {
  enum { CHUNK = 4096 };
  static float x[CHUNK], y[CHUNK];
#if defined(__x86_64__)
  const uint32_t stride = 13;
#else
  const uint32_t stride = 1009;
#endif
  const float lo = -87.0f;
  uint32_t bits_lo;
  memcpy(&bits_lo, &lo, 4);
  double worst = 0;
  float worst_x = 0;
  long bad = 0, count = 0;
  for (uint64_t u = 0x80000000u; u <= bits_lo;) {
    int nx = 0;
    for (; nx < CHUNK && u <= bits_lo; nx++, u += stride) {
      const uint32_t b = (uint32_t) u;
      memcpy(&x[nx], &b, 4);
    }
    TG_EXP(nx, x, y);
    for (int t = 0; t < nx; t++) {
      const double want = exp((double) x[t]);
      int e;
      frexp(want, &e);
      const double ulp = ldexp(1.0, e - 24);  /* float spacing in [2^(e-1), 2^e) */
      const double err = fabs((double) y[t] - want) / ulp;
      if (err > worst) { worst = err; worst_x = x[t]; }
      if (!(err <= (TG_EXP_ULP))) bad++;
    }
    count += nx;
  }
  cases++;
  if (bad) {
    failed++;
    fprintf(stderr, "FAIL exp: %ld of %ld values over %g ULP (worst %.3f ULP at %.9g)\n", bad,
            count, (double) (TG_EXP_ULP), worst, worst_x);
  }
  printf("exp: %ld values in [-87, 0], max error %.3f ULP (at %.9g)\n", count, worst, worst_x);
  /* Every remainder of the array loop: n = 1 .. 2*LANES values. */
  for (int n = 1; n <= 2 * TG_LANES; n++) {
    region rx, ry;
    float* xs = (float*) guarded_bytes((size_t) n * sizeof(float), n & 1, &rx);
    float* ys = (float*) guarded_bytes((size_t) n * sizeof(float), n & 1, &ry);
    for (int t = 0; t < n; t++) xs[t] = (float) (40.0 * uniform() - 45.0);
    TG_EXP(n, xs, ys);
    cover("exp_n", TG_LANES, n);
    cases++;
    for (int t = 0; t < n; t++) {
      const double want = exp((double) xs[t]);
      int e;
      frexp(want, &e);
      const double err = fabs((double) ys[t] - want) / ldexp(1.0, e - 24);
      if (!(err <= (TG_EXP_ULP))) {
        failed++;
        fprintf(stderr, "FAIL exp array of %d: exp(%.9g) = %.9g (%.3f ULP)\n", n, xs[t], ys[t], err);
      }
    }
    release(&rx);
    release(&ry);
  }
  /* Special values and the underflow region. */
  const float special[] = {-INFINITY, -87.0001f, -88.0f, -100.0f, -1e30f, -FLT_MAX, -0.0f, 0.0f, NAN};
  const int ns = (int) (sizeof(special) / sizeof(special[0]));
  float out[sizeof(special) / sizeof(special[0])];
  TG_EXP(ns, special, out);
  cases++;
  for (int t = 0; t < ns; t++) {
    const float xv = special[t];
    const int ok = xv != xv ? out[t] != out[t] : (xv < -87.0f ? out[t] == 0.0f && !signbit(out[t]) : out[t] == 1.0f);
    if (!ok) {
      failed++;
      fprintf(stderr, "FAIL exp(%g) = %g\n", xv, out[t]);
    }
  }
}

int main(void) {
  if (!cpu_supported()) return 77;
  const int ncand[] = {1, TG_NR - 1, TG_NR, TG_NR + 1, TG_KB - 1, TG_KB};
  const int dcand[] = {0, 1, 3, 17, 64, 130};
  const int dvcand[] = {1, TG_CW - 1, TG_CW, TG_CW + 1, 2 * TG_CW + 3, 256};
  int ns[8], nn = 0;
  for (size_t c = 0; c < sizeof(ncand) / sizeof(ncand[0]); c++) {
    int dup = ncand[c] < 1 || ncand[c] > TG_KB;
    for (int x = 0; x < nn; x++) dup |= ns[x] == ncand[c];
    if (!dup) ns[nn++] = ncand[c];
  }
  int dvs[8], ndv = 0;
  for (size_t c = 0; c < sizeof(dvcand) / sizeof(dvcand[0]); c++) {
    int dup = dvcand[c] < 1;
    for (int x = 0; x < ndv; x++) dup |= dvs[x] == dvcand[c];
    if (!dup) dvs[ndv++] = dvcand[c];
  }
  for (int a = 0; a < nn; a++)
    for (size_t b = 0; b < sizeof(dcand) / sizeof(dcand[0]); b++)
      for (int c = 0; c < ndv; c++) {
        const int n = ns[a], d = dcand[b], dv = dvs[c];
        if (dv == 256 && d != 64) continue;
        run_case(n, d, dv, 0, 1, 1.0);
        run_case(n, d, dv, 1, 2, 1.0);
        if (d == 17 || d == 64) {
          run_case(n, d, dv, 2, 2, 1.0);
          run_case(n, d, dv, 3, 3, 1.0);
        }
      }
  /* Scores near +-1e3: one key dominates each row. */
  for (int a = 0; a < nn; a++) run_case(ns[a], 64, TG_CW + 1, 1, 2, 100.0);
  /* Every remainder of every tiled dimension. Keys: every tail of the last S tile, alone and
     after a full tile, with every mask mode. */
  for (int n = 1; n <= 2 * TG_NR && n <= TG_KB; n++) {
    run_case(n, 17, TG_CW + 1, 0, 1, 1.0);
    run_case(n, 17, TG_CW + 1, 1, 2, 1.0);
    run_case(n, 17, TG_CW + 1, 2, 2, 1.0);
    run_case(n, 17, TG_CW + 1, 3, 3, 1.0);
  }
  /* d: every remainder of the unrolled d loop. */
  for (int d = 0; d <= 2 * TG_UNROLL + 1; d++) run_case(TG_NR + 1, d, TG_CW + 1, 1, 2, 1.0);
  /* dv: every column count of the last PV chunk (masked or zero-padded), alone and after a
     full chunk. */
  for (int dv = 1; dv <= 2 * TG_CW; dv++) run_case(TG_NR + 4 <= TG_KB ? TG_NR + 4 : TG_KB, 17, dv, 1, 2, 1.0);
  check_exp();
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
