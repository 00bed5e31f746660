/*
 * Decode-attention micro-kernel tester: runs one generated kernel over one to three chunks of
 * cached tokens (calls on one online-softmax state) and checks the state it leaves -- m, l and
 * O = sum_t exp(s_t - m) v_t per head of every slice -- against a float64 reference.
 *
 * Built per kernel with -DTG_T=float -DTG_DT=f32 -DTG_UKERNEL=<fn> -DTG_MR=.. -DTG_NR=..
 * -DTG_CW=<PV chunk floats> -DTG_WORK=<work floats per call> -DTG_SLICE_WORK=<per slice>
 * -DTG_PF=<prefetch distance> -DTG_LANES=.. -DTG_TK=<tokens per score step>
 * -DTG_TP=<tokens per PV step> -DTG_ISA_ID=TG_ISA_<NAME>; prints the COVER lines
 * (ukernel_tester.h) and "KERNEL <name> CASES <n> FAILED <f>"; exit 0 / 1 / 77.
 *
 * Cases: n in {1, 2, 3, L-1, L, L+1, NR-1, NR}; d in {1, 3, L-1, L+1, 17, 64, 128, 130, 256};
 * one slice, and three slices over two kv heads (slices 0 and 1 share head 0); a token's kv
 * heads lie in one buffer row (head stride a prime >= d), the rows of a chunk with a prime row
 * stride, handed to the kernel in a scrambled order (so the row that ends at the buffer's
 * PROT_NONE page is any token), with the PREFETCH extra pointers repeating the last token;
 * scores up to about +-1e3. q, O (with sentinels past the chunk-padded d), m, l and work end at
 * guard pages too. Then every remainder of each dimension the kernel tiles: n = 1 .. 2*max(L,
 * TK, TP) (the tokens of the score steps, the PV steps and the softmax's vectors), d = 1 .. 2CW
 * (every column of the key rows' last vector and of the last PV chunk, alone and after a full
 * one), each reported as a COVER line.
 */
#define _GNU_SOURCE
#include <float.h>
#include <math.h>

#include "tg_ukernels.h"

typedef TG_T T;
#include "ukernel_tester.h"

typedef CAT(CAT(tg_, TG_DT), _attndecode_args) args_t;

#define MR TG_MR
#define MAX_CHUNKS 3
#define MAX_SLICES 3
static const T SENTINEL = (T) -3131.5;
static long cases = 0, failed = 0;

static void report(const char* what, int n, int d, int h, int c, double got, double want,
                   double tol) {
  failed++;
  if (failed <= 20)
    fprintf(stderr, "FAIL %s: n=%d d=%d head %d col %d: got %.9g want %.9g (tol %.3g)\n", what,
            n, d, h, c, got, want, tol);
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static void run_case(int n, int d, int chunks, int ns, double qscale, unsigned perm_seed) {
  region rq, rk[MAX_CHUNKS], rv[MAX_CHUNKS], ro, rm, rl, rw;
  const int heads = ns > 1 ? 2 : 1;         /* kv heads: slice j reads head j / 2 */
  const int64_t rs_q = round_up(d, TG_LANES), hs = next_prime(d + 2);
  const int64_t rs_kv = next_prime((heads - 1) * hs + d + 1);
  const int64_t d_pad = round_up(d, TG_CW), rs_o = d_pad + 5;
  const int rows = ns * MR;
  int64_t koff[MAX_SLICES], voff[MAX_SLICES];
  for (int j = 0; j < ns; j++) koff[j] = voff[j] = (j / 2) * hs;
  T* q = guarded((size_t) (rows * rs_q), &rq);
  for (int h = 0; h < rows; h++)
    for (int x = 0; x < rs_q; x++) q[h * rs_q + x] = x < d ? (T) (qscale * uniform()) : (T) 0;
  T *kb[MAX_CHUNKS], *vb[MAX_CHUNKS];
  const T* krows[MAX_CHUNKS][TG_NR + TG_PF];
  const T* vrows[MAX_CHUNKS][TG_NR + TG_PF];
  for (int c = 0; c < chunks; c++) {
    const size_t count = (size_t) ((n - 1) * rs_kv + (heads - 1) * hs + d);
    kb[c] = guarded(count, &rk[c]);
    vb[c] = guarded(count, &rv[c]);
    for (size_t x = 0; x < count; x++) { kb[c][x] = (T) uniform(); vb[c][x] = (T) uniform(); }
    int perm[TG_NR];
    for (int t = 0; t < n; t++) perm[t] = t;
    for (int t = n - 1; t > 0; t--) {  /* token t reads buffer row perm[t] */
      const int s = (int) ((perm_seed * 2654435761u + (unsigned) t * 40503u) % (unsigned) (t + 1));
      const int tmp = perm[t]; perm[t] = perm[s]; perm[s] = tmp;
    }
    for (int t = 0; t < n + TG_PF; t++) {
      const int row = perm[t < n ? t : n - 1];
      krows[c][t] = kb[c] + row * rs_kv;
      vrows[c][t] = vb[c] + row * rs_kv;
    }
  }
  const size_t o_count = (size_t) ((rows - 1) * rs_o + d_pad);
  T* o = guarded(o_count, &ro);
  for (size_t x = 0; x < o_count; x++) o[x] = (int64_t) (x % rs_o) < d_pad ? (T) 0 : SENTINEL;
  T* m = guarded((size_t) rows, &rm);
  T* l = guarded((size_t) rows, &rl);
  for (int h = 0; h < rows; h++) { m[h] = (T) -INFINITY; l[h] = 0; }
  const int wsize = TG_WORK + ns * TG_SLICE_WORK;
  T* work = guarded((size_t) wsize, &rw);
  cover("tokens_score", TG_TK, n);
  cover("tokens_pv", TG_TP, n);
  cover("tokens_lanes", TG_LANES, n);
  cover("d_vector", TG_LANES, d);
  cover("d_chunk", TG_CW, d);
  for (int c = 0; c < chunks; c++) {
    args_t a;
    a.d = d; a.ns = ns; a.koff = koff; a.voff = voff;
    a.q = q; a.rs_q = rs_q; a.k_rows = krows[c]; a.v_rows = vrows[c];
    a.o = o; a.rs_o = rs_o; a.m = m; a.l = l; a.work = work;
    for (int x = 0; x < wsize; x++) work[x] = (T) NAN;
    TG_UKERNEL(n, &a);
  }
  cases++;

  double* s = malloc(sizeof(double) * (size_t) chunks * n);
  double* ws = malloc(sizeof(double) * (size_t) d);
  double* wa = malloc(sizeof(double) * (size_t) d);
  for (int h = 0; h < rows; h++) {
    const int64_t kh = koff[h / MR], vh = voff[h / MR];
    double mx = -INFINITY, smag = 0;
    for (int c = 0; c < chunks; c++)
      for (int t = 0; t < n; t++) {
        double acc = 0, mag = 0;
        for (int x = 0; x < d; x++) {
          const double pr = (double) q[h * rs_q + x] * (double) krows[c][t][kh + x];
          acc += pr;
          mag += fabs(pr);
        }
        s[c * n + t] = acc;
        if (acc > mx) mx = acc;
        if (mag > smag) smag = mag;
      }
    const double es = 1e-6 * sqrt((double) d + 1) * (smag + 1) * 4;
    double lsum = 0;
    for (int x = 0; x < d; x++) ws[x] = wa[x] = 0;
    for (int c = 0; c < chunks; c++)
      for (int t = 0; t < n; t++) {
        const double w = exp(s[c * n + t] - mx);
        lsum += w;
        for (int x = 0; x < d; x++) {
          ws[x] += w * (double) vrows[c][t][vh + x];
          wa[x] += w * fabs((double) vrows[c][t][vh + x]);
        }
      }
    if (!(fabs((double) m[h] - mx) <= es)) report("m", n, d, h, -1, m[h], mx, es);
    const double tl = (2 * es + 1e-6) * lsum;
    if (!(fabs((double) l[h] - lsum) <= tl)) report("l", n, d, h, -1, l[h], lsum, tl);
    for (int x = 0; x < rs_o && (int64_t) h * rs_o + x < (int64_t) o_count; x++) {
      const T got = o[h * rs_o + x];
      if (x >= d_pad) {
        if (memcmp(&got, &SENTINEL, sizeof(T)) != 0)
          report("sentinel overwritten", n, d, h, x, got, SENTINEL, 0);
        continue;
      }
      if (x >= d) continue;
      const double tol = (2 * es + 1e-6) * wa[x] + 1e-30;
      if (!(fabs((double) got - ws[x]) <= tol)) report("O", n, d, h, x, got, ws[x], tol);
    }
  }
  free(s); free(ws); free(wa);
  release(&rq); release(&ro); release(&rm); release(&rl); release(&rw);
  for (int c = 0; c < chunks; c++) { release(&rk[c]); release(&rv[c]); }
}

int main(void) {
  if (!cpu_supported()) return 77;
  const int L = TG_LANES;
  const int ncand[] = {1, 2, 3, L - 1, L, L + 1, TG_NR - 1, TG_NR};
  const int dcand[] = {1, 3, L - 1, L + 1, 17, 64, 128, 130, 256};
  int tn[8], nn = 0, ds[9], nd = 0;
  for (size_t c = 0; c < sizeof(ncand) / sizeof(ncand[0]); c++) {
    int dup = ncand[c] < 1 || ncand[c] > TG_NR;
    for (int x = 0; x < nn; x++) dup |= tn[x] == ncand[c];
    if (!dup) tn[nn++] = ncand[c];
  }
  for (size_t c = 0; c < sizeof(dcand) / sizeof(dcand[0]); c++) {
    int dup = dcand[c] < 1;
    for (int x = 0; x < nd; x++) dup |= ds[x] == dcand[c];
    if (!dup) ds[nd++] = dcand[c];
  }
  for (int a = 0; a < nn; a++)
    for (int b = 0; b < nd; b++) {
      run_case(tn[a], ds[b], 1, 1, 1.0, 1u + (unsigned) a);
      run_case(tn[a], ds[b], 3, 1, 1.0, 7u + (unsigned) b);
      run_case(tn[a], ds[b], 2, MAX_SLICES, 1.0, 5u + (unsigned) (a + b));
    }
  for (int a = 0; a < nn; a++) run_case(tn[a], 64, 2, 1, 100.0, 3u);  /* scores near +-1e3 */
  for (int a = 0; a < nn; a++) run_case(tn[a], 64, 1, MAX_SLICES, 100.0, 9u);
  /* Every remainder of every tiled dimension. Tokens: the score steps of TK, the PV steps of TP
     and the softmax's vectors of L tokens, each alone and after a full one. */
  int nmax = 2 * (L > TG_TK ? (L > TG_TP ? L : TG_TP) : (TG_TK > TG_TP ? TG_TK : TG_TP));
  if (nmax > TG_NR) nmax = TG_NR;
  for (int n = 1; n <= nmax; n++) {
    run_case(n, 2 * L + 1, 2, 1, 1.0, 11u + (unsigned) n);
    run_case(n, 2 * L + 1, 1, MAX_SLICES, 1.0, 13u + (unsigned) n);
  }
  /* d: every column of the key rows' last vector and of the last PV chunk (masked or
     zero-padded), alone and after a full chunk; token steps with a remainder. */
  const int nd_tok = TG_TK + TG_TP + 1 <= TG_NR ? TG_TK + TG_TP + 1 : TG_NR;
  for (int d = 1; d <= 2 * TG_CW; d++) {
    run_case(nd_tok, d, 2, 1, 1.0, 17u + (unsigned) d);
    run_case(nd_tok, d, 1, MAX_SLICES, 1.0, 19u + (unsigned) d);
  }
  cover_report();
  printf("KERNEL %s CASES %ld FAILED %ld\n", STR(TG_UKERNEL), cases, failed);
  return failed ? 1 : 0;
}
