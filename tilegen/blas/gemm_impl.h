/*
 * The blocked GEMM driver, written once for both dtypes: gemm.c includes this file with
 * DT (f32 | f64) and T (float | double) defined.
 *
 * GotoBLAS/BLIS loop nest around the micro-kernels: jc (NC columns) > pc (KC depth, B block
 * packed) > ic (MC rows, A block packed) > jr (NR panel) > ir (MR panel) > micro-kernel. The
 * K remainder and the edge tiles are handled by the kernels themselves; remainder rows use the
 * smallest registered tile that covers them (cfg->by_rows). Threads split C into a grid of
 * blocks, each running the whole nest with its own packing buffers (no barriers).
 */
#define TG_CAT_(a, b) a##b
#define TG_CAT(a, b) TG_CAT_(a, b)
#define F(name) TG_CAT(name, DT)

typedef TG_CAT(tg_gemm_config_, DT) F(cfg_t_);
typedef TG_CAT(TG_CAT(tg_, DT), _gemm_params) F(params_t_);

typedef struct {
  int64_t m, n, k;
  T alpha, beta;
  const T* a;
  int64_t rs_a, cs_a;
  const T* b;
  int64_t rs_b, cs_b;
  T* c;
  int64_t rs_c, cs_c;
  const T* bias;           /* bias of C(i, j) is bias[i*bias_rs + j*bias_cs] */
  int64_t bias_rs, bias_cs;
  int act;
  const F(cfg_t_)* cfg;
  int64_t mc, kc, nc;      /* snapshot of the blocking, so a concurrent re-tune cannot tear it */
} F(problem_);

static inline T F(activate_)(T x, int act) {
  switch (act) {
    case TILEGEN_ACT_RELU: return x > 0 ? x : (x == x ? (T) 0 : x);
    case TILEGEN_ACT_RELU6: return x > 0 ? (x < 6 ? x : (T) 6) : (x == x ? (T) 0 : x);
    case TILEGEN_ACT_GELU: return (T) (0.5 * (double) x * (1.0 + erf((double) x * 0.70710678118654752440)));
    case TILEGEN_ACT_SILU: return (T) ((double) x / (1.0 + exp(-(double) x)));
    default: return x;
  }
}

/* bias + activation over an m x n block of C, right after its last k block (still in cache). */
static void F(epilogue_)(T* c, int64_t m, int64_t n, int64_t rs_c, int64_t cs_c, const T* bias,
                         int64_t bias_rs, int64_t bias_cs, int act) {
  for (int64_t i = 0; i < m; i++) {
    T* row = c + i * rs_c;
    const T* brow = bias ? bias + i * bias_rs : NULL;
    if (brow) {
      for (int64_t j = 0; j < n; j++) row[j * cs_c] += brow[j * bias_cs];
    }
    if (act == TILEGEN_ACT_RELU && cs_c == 1) {
      for (int64_t j = 0; j < n; j++) row[j] = row[j] < 0 ? (T) 0 : row[j];
    } else if (act != TILEGEN_ACT_NONE) {
      for (int64_t j = 0; j < n; j++) row[j * cs_c] = F(activate_)(row[j * cs_c], act);
    }
  }
}

/* alpha == 0 or k == 0: C = beta*C (C not read when beta == 0), then the epilogue. */
static void F(scale_c_)(const F(problem_)* p) {
  for (int64_t i = 0; i < p->m; i++) {
    for (int64_t j = 0; j < p->n; j++) {
      T* cp = p->c + i * p->rs_c + j * p->cs_c;
      *cp = p->beta == 0 ? (T) 0 : p->beta * *cp;
    }
  }
  if (p->bias || p->act)
    F(epilogue_)(p->c, p->m, p->n, p->rs_c, p->cs_c, p->bias, p->bias_rs, p->bias_cs, p->act);
}

/* Last resort when packing memory cannot be had: slow, but correct and allocation-free. */
static void F(naive_block_)(const F(problem_)* p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  for (int64_t i = i0; i < i1; i++) {
    for (int64_t j = j0; j < j1; j++) {
      T acc = 0;
      for (int64_t kk = 0; kk < p->k; kk++)
        acc += p->a[i * p->rs_a + kk * p->cs_a] * p->b[kk * p->rs_b + j * p->cs_b];
      T* cp = p->c + i * p->rs_c + j * p->cs_c;
      *cp = p->beta == 0 ? p->alpha * acc : p->alpha * acc + p->beta * *cp;
    }
  }
  if (p->bias || p->act)
    F(epilogue_)(p->c + i0 * p->rs_c + j0 * p->cs_c, i1 - i0, j1 - j0, p->rs_c, p->cs_c,
                 p->bias ? p->bias + i0 * p->bias_rs + j0 * p->bias_cs : NULL, p->bias_rs,
                 p->bias_cs, p->act);
}

static inline int64_t F(round_up_)(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }

/* C[i0:i1, j0:j1] on this thread. */
static void F(gemm_block_)(const F(problem_)* p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const F(cfg_t_)* cfg = p->cfg;
  const int64_t MR = cfg->mr, NR = cfg->nr, MC = p->mc, KC = p->kc, NC = p->nc;
  const int64_t M = i1 - i0, N = j1 - j0, K = p->k;
  const int direct_c = p->cs_c == 1;
  const int has_epi = p->bias != NULL || p->act != TILEGEN_ACT_NONE;
  /* Few row panels share each B panel: reading B in place beats packing it. */
  const int direct_b = p->cs_b == 1 && M <= TG_DIRECT_B_MAX_PANELS * MR;
  const int64_t kc_max = K < KC ? K : KC;
  const int64_t mc_max = M < MC ? F(round_up_)(M, MR) : MC;
  const int64_t nc_max = N < NC ? F(round_up_)(N, NR) : NC;
  T* pa = tg_workspace(TG_WS_A, (size_t) (mc_max * kc_max) * sizeof(T));
  T* pb = tg_workspace(direct_b ? TG_WS_EDGE : TG_WS_B,
                       (size_t) ((direct_b ? NR : nc_max) * kc_max) * sizeof(T));
  if (pa == NULL || pb == NULL) {
    F(naive_block_)(p, i0, i1, j0, j1);
    return;
  }
  T tile[TG_MAX_MR * TG_MAX_NR] __attribute__((aligned(64)));
  F(params_t_) prm = {p->alpha, p->beta, NULL};
  F(params_t_) tile_prm = {p->alpha, 0, NULL};

  for (int64_t jc = 0; jc < N; jc += NC) {
    const int64_t nc = N - jc < NC ? N - jc : NC;
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = K - pc < KC ? K - pc : KC;
      const int last_k = pc + kc == K;
      prm.beta = pc == 0 ? p->beta : (T) 1;
      const T* bblk = p->b + pc * p->rs_b + (j0 + jc) * p->cs_b;
      if (!direct_b) {
        for (int64_t jr = 0; jr < nc; jr += NR)
          cfg->packb(nc - jr < NR ? nc - jr : NR, kc, bblk + jr * p->cs_b, p->rs_b, p->cs_b, pb + jr * kc);
      } else if (nc % NR) {
        const int64_t jr = nc - nc % NR;  /* only the edge panel needs zero padding */
        cfg->packb(nc % NR, kc, bblk + jr * p->cs_b, p->rs_b, p->cs_b, pb);
      }
      for (int64_t ic = 0; ic < M; ic += MC) {
        const int64_t mc = M - ic < MC ? M - ic : MC;
        const T* ablk = p->a + (i0 + ic) * p->rs_a + pc * p->cs_a;
        for (int64_t ir = 0; ir < mc; ir += MR) {
          const int64_t r = mc - ir < MR ? mc - ir : MR;
          cfg->packa_by_rows[r](r, kc, ablk + ir * p->rs_a, p->rs_a, p->cs_a, pa + ir * kc);
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t nr = nc - jr < NR ? nc - jr : NR;
          const T* bp;
          int64_t rs_bp;
          if (!direct_b) { bp = pb + jr * kc; rs_bp = NR; }
          else if (nr == NR) { bp = bblk + jr; rs_bp = p->rs_b; }
          else { bp = pb; rs_bp = NR; }
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t r = mc - ir < MR ? mc - ir : MR;
            const int64_t ci = i0 + ic + ir, cj = j0 + jc + jr;
            T* ct = p->c + ci * p->rs_c + cj * p->cs_c;
            const T* ak = pa + ir * kc;
            if (direct_c) {
              cfg->by_rows[r](r, nr, kc, ak, cfg->tile_mr[r], bp, rs_bp, ct, p->rs_c, &prm);
            } else {  /* C without a unit stride: compute into a tile, then merge */
              cfg->by_rows[r](r, nr, kc, ak, cfg->tile_mr[r], bp, rs_bp, tile, NR, &tile_prm);
              for (int64_t i = 0; i < r; i++)
                for (int64_t j = 0; j < nr; j++) {
                  T* cp = ct + i * p->rs_c + j * p->cs_c;
                  *cp = prm.beta == 0 ? tile[i * NR + j] : tile[i * NR + j] + prm.beta * *cp;
                }
            }
            if (last_k && has_epi)
              F(epilogue_)(ct, r, nr, p->rs_c, p->cs_c,
                           p->bias ? p->bias + ci * p->bias_rs + cj * p->bias_cs : NULL,
                           p->bias_rs, p->bias_cs, p->act);
          }
        }
      }
    }
  }
}

/* Split C into tm x tn blocks (whole panels) minimising the slowest thread's compute plus
   packing; thread tid takes block (tid / tn, tid % tn). */
static void F(thread_block_)(const F(problem_)* p, int tid, int nt, int64_t* i0, int64_t* i1,
                            int64_t* j0, int64_t* j1) {
  const int64_t MR = p->cfg->mr, NR = p->cfg->nr;
  const int64_t mp = (p->m + MR - 1) / MR, np = (p->n + NR - 1) / NR;
  int best_tm = 1;
  double best = -1;
  for (int tm = 1; tm <= nt; tm++) {
    if (nt % tm) continue;
    const int tn = nt / tm;
    const double rows = (double) ((mp + tm - 1) / tm * MR), cols = (double) ((np + tn - 1) / tn * NR);
    const double cost = rows * cols + 4.0 * (rows + cols);  /* per unit of k */
    if (best < 0 || cost < best) { best = cost; best_tm = tm; }
  }
  const int tm = best_tm, tn = nt / tm, ti = tid / tn, tj = tid % tn;
  *i0 = mp * ti / tm * MR;
  *i1 = mp * (ti + 1) / tm * MR;
  *j0 = np * tj / tn * NR;
  *j1 = np * (tj + 1) / tn * NR;
  if (*i1 > p->m) *i1 = p->m;
  if (*j1 > p->n) *j1 = p->n;
}

static void F(gemm_task_)(void* ctx, int tid, int nt) {
  const F(problem_)* p = ctx;
  int64_t i0, i1, j0, j1;
  F(thread_block_)(p, tid, nt, &i0, &i1, &j0, &j1);
  if (i0 < i1 && j0 < j1) F(gemm_block_)(p, i0, i1, j0, j1);
}

/* Normalises the problem (C with a unit column stride when it has one at all) and fills p.
   Returns 0 when nothing is left to compute (after scaling C when alpha or k is 0), 1 when p is
   the problem as given, 2 when p is its transpose (A and B swapped). */
static int F(gemm_prepare_)(F(problem_)* p, int64_t m, int64_t n, int64_t k, T alpha,
                           const T* a, int64_t rs_a, int64_t cs_a, const T* b, int64_t rs_b,
                           int64_t cs_b, T beta, T* c, int64_t rs_c, int64_t cs_c,
                           const T* bias, int64_t bias_stride, int act) {
  *p = (F(problem_)){m, n, k, alpha, beta, a, rs_a, cs_a, b, rs_b, cs_b, c, rs_c, cs_c,
                     bias, 0, bias_stride, act, NULL, 0, 0, 0};
  if (m == 0 || n == 0) return 0;
  if (alpha == 0 || k == 0) {
    F(scale_c_)(p);
    return 0;
  }
  int transposed = 0;
  if (n == 1) {
    p->cs_c = 1;  /* a single column: its stride never matters */
  } else if (cs_c != 1 && rs_c == 1) {
    /* Column-major C: compute C^T = B^T A^T, whose rows are contiguous. */
    *p = (F(problem_)){n, m, k, alpha, beta, b, cs_b, rs_b, a, cs_a, rs_a, c, cs_c, rs_c,
                       bias, bias_stride, 0, act, NULL, 0, 0, 0};
    if (p->n == 1) p->cs_c = 1;
    transposed = 1;
  }
  p->cfg = F(tg_gemm_cfg_)();
  p->mc = p->cfg->mc;
  p->kc = p->cfg->kc;
  p->nc = p->cfg->nc;
  return transposed ? 2 : 1;
}

static int F(threads_for_)(const F(problem_)* p) {
  const double flops = 2.0 * (double) p->m * (double) p->n * (double) p->k;
  if (flops < TG_PARALLEL_MIN_FLOPS) return 1;
  int nt = tg_threads_max();
  const int64_t panels = ((p->m + p->cfg->mr - 1) / p->cfg->mr) * ((p->n + p->cfg->nr - 1) / p->cfg->nr);
  if (nt > panels) nt = (int) panels;
  const int by_work = (int) (flops / TG_PARALLEL_MIN_FLOPS);
  return nt < by_work ? nt : (by_work < 1 ? 1 : by_work);
}

/* ---- matrix-vector products ---- */

/* y = alpha * mat x + beta * y for a rows x k matrix whose rows are contiguous. */
typedef struct {
  const T* mat;
  int64_t rs_mat, rows, k;
  const T* x;              /* contiguous */
  T* y;
  int64_t inc_y;
  T alpha, beta;
  const F(cfg_t_)* cfg;
} F(gemv_);

static void F(gemv_task_)(void* ctx, int tid, int nt) {
  const F(gemv_)* g = ctx;
  const int64_t MR = g->cfg->gemv_mr, panels = (g->rows + MR - 1) / MR;
  const F(params_t_) prm = {g->alpha, g->beta, NULL};
  for (int64_t pi = panels * tid / nt; pi < panels * (tid + 1) / nt; pi++) {
    const int64_t i = pi * MR, r = g->rows - i < MR ? g->rows - i : MR;
    g->cfg->gemv(r, g->k, g->mat + i * g->rs_mat, g->rs_mat, g->x, g->y + i * g->inc_y, g->inc_y,
                 &prm);
  }
}

/* The dot form: output vector y (rows values, stride inc_y) from a matrix with contiguous rows
   and a vector x of stride inc_x; then the epilogue with the bias at stride bias_inc. */
static void F(gemv_dot_)(const F(problem_)* p, const T* mat, int64_t rs_mat, int64_t rows,
                         const T* x, int64_t inc_x, T* y, int64_t inc_y, int64_t bias_inc) {
  F(gemv_) g = {mat, rs_mat, rows, p->k, x, y, inc_y, p->alpha, p->beta, p->cfg};
  if (inc_x != 1) {  /* the kernel streams x with full vectors: make it contiguous */
    T* xc = tg_workspace(TG_WS_EDGE, (size_t) p->k * sizeof(T));
    if (xc == NULL) {
      F(naive_block_)(p, 0, p->m, 0, p->n);
      return;
    }
    for (int64_t kk = 0; kk < p->k; kk++) xc[kk] = x[kk * inc_x];
    g.x = xc;
  }
  const double flops = 2.0 * (double) rows * (double) p->k;
  int nt = flops < TG_PARALLEL_MIN_FLOPS ? 1 : tg_threads_max();
  const int64_t panels = (rows + g.cfg->gemv_mr - 1) / g.cfg->gemv_mr;
  if (nt > panels) nt = (int) panels;
  tg_parallel_run(nt, F(gemv_task_), &g);
  if (p->bias || p->act) F(epilogue_)(y, rows, 1, inc_y, 1, p->bias, bias_inc, 0, p->act);
}

void F(tg_gemm_)(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t rs_a,
                 int64_t cs_a, const T* b, int64_t rs_b, int64_t cs_b, T beta, T* c,
                 int64_t rs_c, int64_t cs_c, const T* bias, int64_t bias_stride, int act) {
  F(problem_) p;
  if (!F(gemm_prepare_)(&p, m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, rs_c, cs_c,
                        bias, bias_stride, act))
    return;
  if (p.n == 1 && p.cs_a == 1 && p.m > 1) {         /* y = A x, A rows contiguous */
    F(gemv_dot_)(&p, p.a, p.rs_a, p.m, p.b, p.rs_b, p.c, p.rs_c, p.bias_rs);
    return;
  }
  if (p.m == 1 && p.rs_b == 1 && p.n > 1) {         /* y = x B, B columns contiguous */
    F(gemv_dot_)(&p, p.b, p.cs_b, p.n, p.a, p.cs_a, p.c, p.cs_c, p.bias_cs);
    return;
  }
  if (p.n == 1 && p.rs_a == 1 && p.m > 1) {
    /* y = A x with A's columns contiguous: as the row vector y^T = x^T A^T, streamed below. */
    p = (F(problem_)){1, p.m, p.k, p.alpha, p.beta, p.b, 1, p.rs_b, p.a, p.cs_a, p.rs_a, p.c,
                      1, p.rs_c, p.bias, 0, p.bias_rs, p.act, p.cfg, p.mc, p.kc, p.nc};
  }
  if (p.m == 1 && p.cs_b == 1) {
    /* x B streams B once: a few rows at a time (a handful of prefetch streams) across all of
       its columns, with no column blocking since nothing is reused. */
    p.kc = TG_GEMV_KC;
    p.nc = F(round_up_)(p.n, p.cfg->nr);
  }
  tg_parallel_run(F(threads_for_)(&p), F(gemm_task_), &p);
}

/* ---- stacks of products ---- */
typedef struct {
  F(problem_) proto;        /* the first matrix's problem; pointers offset per batch item */
  int64_t count, ndim;
  const int64_t *shape, *sa, *sb, *sc;
  int inner_threads;        /* threads per product when the batch is not split */
} F(batch_);

static void F(batch_item_)(const F(batch_)* bt, int64_t idx, F(problem_)* p) {
  *p = bt->proto;
  int64_t off_a = 0, off_b = 0, off_c = 0;
  for (int64_t d = bt->ndim - 1; d >= 0; d--) {
    const int64_t i = idx % bt->shape[d];
    idx /= bt->shape[d];
    off_a += i * bt->sa[d];
    off_b += i * bt->sb[d];
    off_c += i * bt->sc[d];
  }
  p->a += off_a;
  p->b += off_b;
  p->c += off_c;
}

static void F(batch_task_)(void* ctx, int tid, int nt) {
  const F(batch_)* bt = ctx;
  const int64_t lo = bt->count * tid / nt, hi = bt->count * (tid + 1) / nt;
  for (int64_t idx = lo; idx < hi; idx++) {
    F(problem_) p;
    F(batch_item_)(bt, idx, &p);
    F(gemm_block_)(&p, 0, p.m, 0, p.n);
  }
}
