/*
 * The blocked GEMM driver, written once for both dtypes: gemm.c includes this file with
 * DT (f32 | f64) and T (float | double) defined.
 *
 * Loop nest: jc (NC columns) > pc (KC depth: the KC x NC block of B is packed and stays in L2)
 * > row panel (its A panel is read in place or packed on the fly, and stays in L1; the next
 * panel is prefetched toward L2 a few lines per kernel call) > NR column panel > micro-kernel.
 * Under a big B and few enough rows (b_inner) the two inner loops swap: each NR-wide panel of
 * B is copied once from memory and used by all the row panels from L1, A staying in L2.
 * Row-major A goes to the "rows" kernels (A panels are plain row copies or the user's rows
 * themselves), column-major A to the "packed" ones (A panels are contiguous column runs, or
 * the user's columns). K remainders and edge tiles are handled inside the kernels; the rows of
 * C are cut into panels matched to the registered tiles. Threads split C into a grid of
 * blocks, each packing its own A and B in its own core's caches (sharing packed B blocks
 * between threads, GotoBLAS-style, measured 2-18% slower on two cores: every core still pulls
 * the whole block into its L2, and waits at a barrier per block).
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
  const TG_CAT(tg_gemm_set_, DT)* set;  /* the kernels of A's layout */
  int64_t kc, nc;          /* snapshot of the blocking, so a concurrent re-tune cannot tear it */
  int b_inner;             /* row panels innermost, B's panels prefetched (choose_blocking_) */
  const T* pre;            /* B packed beforehand (gemm_packed_): b is unused, kc is its KC */
  int64_t pre_npad;        /* its columns rounded up to NR */
} F(problem_);

static inline T F(activate_)(T x, int act) { return (T) tg_activate((double) x, act); }

/* bias + activation over an m x n block of C, right after its last k block (still in cache):
   the ISA's vectorised row epilogue where C's rows (or a one-column C) are contiguous, else
   element by element. */
static void F(epilogue_)(const F(cfg_t_)* cfg, T* c, int64_t m, int64_t n, int64_t rs_c,
                         int64_t cs_c, const T* bias, int64_t bias_rs, int64_t bias_cs, int act) {
  if (cfg->epi != NULL) {
    if (n == 1 && rs_c == 1 && (bias == NULL || bias_rs == 1)) {  /* a contiguous column */
      cfg->epi(m, c, bias, (T) 0, act);
      return;
    }
    if (cs_c == 1 && (bias == NULL || bias_cs <= 1) && bias_cs >= 0) {
      for (int64_t i = 0; i < m; i++) {  /* bias along the row, or one value per row */
        const T* brow = bias && bias_cs == 1 ? bias + i * bias_rs : NULL;
        cfg->epi(n, c + i * rs_c, brow, bias && bias_cs == 0 ? bias[i * bias_rs] : (T) 0, act);
      }
      return;
    }
  }
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
    F(epilogue_)(p->cfg, p->c, p->m, p->n, p->rs_c, p->cs_c, p->bias, p->bias_rs, p->bias_cs, p->act);
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
    F(epilogue_)(p->cfg, p->c + i0 * p->rs_c + j0 * p->cs_c, i1 - i0, j1 - j0, p->rs_c, p->cs_c,
                 p->bias ? p->bias + i0 * p->bias_rs + j0 * p->bias_cs : NULL, p->bias_rs,
                 p->bias_cs, p->act);
}

static inline int64_t F(round_up_)(int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; }

/* Row panels of an M-row block: MR rows each and a remainder, or (when the tiles then do less
   padded work) equal panels, so that e.g. 16 rows become 8 + 8 rather than 14 + 2. */
typedef struct {
  int64_t count, base, extra;  /* balanced: `extra` panels of base+1 rows, then base rows */
  int balanced;
} F(panels_);

static F(panels_) F(plan_panels_)(const TG_CAT(tg_gemm_set_, DT)* set, int64_t M) {
  const int64_t MR = set->mr, count = (M + MR - 1) / MR;
  F(panels_) pl = {count, M / count, M % count, 0};
  const int64_t rem = M - (count - 1) * MR;
  const int64_t standard = (count - 1) * MR + set->tile_mr[rem];
  const int64_t balanced = pl.extra * set->tile_mr[pl.base + (pl.extra > 0)] +
                           (count - pl.extra) * set->tile_mr[pl.base];
  pl.balanced = balanced < standard;
  return pl;
}

static inline void F(panel_)(const F(panels_)* pl, int64_t MR, int64_t M, int64_t i,
                             int64_t* off, int64_t* rows) {
  if (pl->balanced) {
    *off = i * pl->base + (i < pl->extra ? i : pl->extra);
    *rows = pl->base + (i < pl->extra);
  } else {
    *off = i * MR;
    *rows = M - *off < MR ? M - *off : MR;
  }
}

/* Elements from x to the next 64-byte boundary (0 when x is on one, or not element-aligned). */
static inline int64_t F(to_line_)(const T* x) {
  const int64_t off = (int64_t) ((uintptr_t) x % 64);
  return off % (int64_t) sizeof(T) ? 0 : (64 - off) % 64 / (int64_t) sizeof(T);
}

/* The problem's kernels read A by rows ("rows" and "narrow" sets), not as packed panels. */
static inline int F(rows_layout_)(const F(problem_)* p) {
  return p->pre != NULL || p->set != &p->cfg->packed;  /* packed B holds a copy of a rows set */
}

/* Leading dimension of a copied A panel kc deep: rows padded so they do not share L1 sets;
   a packed-layout panel is kc steps of MR values. */
static inline int64_t F(a_panel_ld_)(const F(problem_)* p, int64_t kc) {
  if (!F(rows_layout_)(p)) return kc;
  const int64_t ld = F(round_up_)(kc, 16);
  return ((ld * (int64_t) sizeof(T)) & 2047) == 0 ? ld + 16 : ld;
}

/* A panel of A to pull toward L2 a few lines at a time (while the panel before it is being
   multiplied): `runs` contiguous runs of `run_lines` cache lines, `stride` bytes apart. */
typedef struct {
  const char* base;
  int64_t stride, runs, run_lines, run, line;
} F(prefetch_);

/* The A panel of `rows` rows from row i and depth k0, kc deep: its rows (row-major A) or its
   columns (column-major A); nothing when neither is contiguous. */
static inline F(prefetch_) F(prefetch_a_)(const F(problem_)* p, int64_t i, int64_t rows,
                                          int64_t k0, int64_t kc) {
  const int64_t sz = (int64_t) sizeof(T);
  const char* base = (const char*) (p->a + i * p->rs_a + k0 * p->cs_a);
  /* A run not starting on a line spans one more: the prefetch may touch a line past A, which
     prefetch instructions are allowed to do. */
  if (p->cs_a == 1) return (F(prefetch_)){base, p->rs_a * sz, rows, (kc * sz + 63) / 64 + 1, 0, 0};
  if (p->rs_a == 1) return (F(prefetch_)){base, p->cs_a * sz, kc, (rows * sz + 63) / 64 + 1, 0, 0};
  return (F(prefetch_)){NULL, 0, 0, 0, 0, 0};
}

static inline void F(prefetch_some_)(F(prefetch_)* q, int64_t lines) {
  for (; lines > 0 && q->run < q->runs; lines--) {
    __builtin_prefetch(q->base + q->run * q->stride + q->line * 64, 0, 2);
    if (++q->line == q->run_lines) {
      q->line = 0;
      q->run++;
    }
  }
}

/* Row panels innermost (p->b_inner): B's column panels are copied this many at a time, as many
   as fill L1 (each is a quarter of it: choose_blocking_), so that each of B's rows is read in
   runs of several lines (AMD Zen 4, f32, 16 x 4096 x 4096, 1 thread: 1 panel 67 GFLOP/s, 2 72,
   4 75, 8 69). */
static inline int64_t F(b_group_)(const F(problem_)* p) {
  const int64_t g = p->cfg->l1d / (p->set->nr * p->kc * (int64_t) sizeof(T));
  return g < 1 ? 1 : g;
}

/* Packing-buffer sizes (elements) for a block of M x N: one A panel of MR rows with leading
   dimension *lda_p, and the B block (or, with B read in place, its zero-padded edge panel). */
static void F(buffers_)(const F(problem_)* p, int64_t M, int64_t N, int direct_b,
                        int64_t* a_elems, int64_t* b_elems, int64_t* lda_p) {
  const int64_t NR = p->set->nr, kc_max = p->k < p->kc ? p->k : p->kc;
  const int64_t nc_max = N < p->nc ? F(round_up_)(N, NR) : p->nc;
  *lda_p = F(a_panel_ld_)(p, kc_max);
  /* Row panels innermost keep every A panel of the block at once (at most a few). */
  *a_elems = p->set->mr * *lda_p * (p->b_inner ? (M + p->set->mr - 1) / p->set->mr : 1);
  *b_elems = p->pre ? 0 : (p->b_inner ? F(b_group_)(p) * NR : direct_b ? NR : nc_max) * kc_max;
}

/* The size of B in bytes (the residency tests below compare it with cache sizes). */
static inline double F(b_bytes_)(const F(problem_)* p) {
  return (double) p->k * (double) p->n * sizeof(T);
}

/* Few row panels share each B panel, or all of B sits in L1: reading B in place beats
   packing it. */
static inline int F(direct_b_)(const F(problem_)* p, int64_t M) {
  return p->cs_b == 1 && (M <= TG_DIRECT_B_MAX_PANELS * p->set->mr ||
                          F(b_bytes_)(p) <= TG_DIRECT_B_L1_BYTES(p->cfg));
}

/* The A panel (r rows from asrc, kc deep) as the kernel of tmr rows reads it: the user's
   rows or columns themselves (`direct`, full panels only), or a copy in pa. */
static inline const T* F(a_panel_)(const F(problem_)* p, int direct, int64_t r, int64_t tmr,
                                   int64_t kc, const T* asrc, T* pa, int64_t lda_p,
                                   int64_t* a_stride) {
  const int rows_layout = F(rows_layout_)(p);
  if (direct && r == tmr) {
    *a_stride = rows_layout ? p->rs_a : p->cs_a;
    return asrc;
  }
  if (rows_layout) {
    p->cfg->packr(r, tmr, kc, asrc, p->rs_a, p->cs_a, pa, lda_p);
    *a_stride = lda_p;
  } else {
    p->set->packa_by_rows[r](r, kc, asrc, p->rs_a, p->cs_a, pa);
    *a_stride = tmr;
  }
  return pa;
}

/* A block of C at most TG_PANEL_BLOCK_MAX_PANELS column panels wide and one KC block deep
   (K <= KC; C with a unit column stride, no epilogue): B packed at most once, then one kernel
   call per tile, with none of the general block's setup -- what a stack of small products
   spends most of its time on. `plan`: its row panels (plan_panels_ of M), or NULL to plan them
   here. Returns 0 when the block is not of this kind. Not inlined: its stack buffer stays out
   of the general block's frame. */
__attribute__((noinline)) static int F(panel_block_)(const F(problem_)* p, int64_t i0, int64_t M,
                                                    int64_t j0, int64_t N, const F(panels_)* plan) {
  const TG_CAT(tg_gemm_set_, DT)* set = p->set;
  const int64_t MR = set->mr, NR = set->nr, K = p->k;
  const int rows_layout = F(rows_layout_)(p);
  const int64_t lda_p = F(a_panel_ld_)(p, K);
  const int64_t a_elems = F(round_up_)(MR * lda_p, 16);
  T buf[TG_STACK_PACK_BYTES / sizeof(T) / 2] __attribute__((aligned(64)));
  if (p->pre != NULL || M < 1 || N > TG_PANEL_BLOCK_MAX_PANELS * NR || K > p->kc || p->cs_c != 1 || p->bias != NULL ||
      p->act != TILEGEN_ACT_NONE || (size_t) (a_elems + K * NR) * sizeof(T) > sizeof(buf))
    return 0;
  /* Column panels: B's own rows when whole and contiguous, else one packed copy each (only
     the edge panel, or every panel when B is not row-contiguous, which then must fit too). */
  const int64_t panels = (N + NR - 1) / NR;
  const int packed_all = p->cs_b != 1;
  if ((size_t) (a_elems + (packed_all ? panels : 1) * K * NR) * sizeof(T) > sizeof(buf)) return 0;
  const T* bps[TG_PANEL_BLOCK_MAX_PANELS];
  int64_t rs_bps[TG_PANEL_BLOCK_MAX_PANELS];
  T* pb = buf + a_elems;
  for (int64_t q = 0; q < panels; q++) {
    const int64_t nr = N - q * NR < NR ? N - q * NR : NR;
    const T* src = p->b + (j0 + q * NR) * p->cs_b;
    if (nr == NR && !packed_all) {
      bps[q] = src;
      rs_bps[q] = p->rs_b;
    } else {
      set->packb(nr, K, src, p->rs_b, p->cs_b, pb);
      bps[q] = pb;
      rs_bps[q] = NR;
      pb += K * NR;
    }
  }
  const F(params_t_) prm = {p->alpha, p->beta, NULL};
  const F(panels_) pl = plan ? *plan : F(plan_panels_)(set, M);
  for (int64_t pi = 0; pi < pl.count; pi++) {
    int64_t off, r, a_stride;
    F(panel_)(&pl, MR, M, pi, &off, &r);
    const int64_t ci = i0 + off;
    /* The rows layout serves only A with unit column stride; the packed one reads unit rows. */
    const T* ap = F(a_panel_)(p, rows_layout || p->rs_a == 1, r, set->tile_mr[r], K,
                              p->a + ci * p->rs_a, buf, lda_p, &a_stride);
    for (int64_t q = 0; q < panels; q++) {
      const int64_t nr = N - q * NR < NR ? N - q * NR : NR;
      set->by_rows[r](r, nr, K, ap, a_stride, bps[q], rs_bps[q], p->c + ci * p->rs_c + j0 + q * NR,
                      p->rs_c, &prm);
    }
  }
  return 1;
}

/* One register tile of C (r rows at ci, nr columns at cj) over one KC block: the kernel into
   C, or into a temporary tile merged into a C without unit column stride; then the epilogue
   after the last KC block. */
static inline void F(tile_)(const F(problem_)* p, int64_t r, int64_t nr, int64_t kc, const T* ap,
                            int64_t a_stride, const T* bp, int64_t rs_bp, int64_t ci, int64_t cj,
                            const F(params_t_)* prm, int epi) {
  const TG_CAT(tg_gemm_set_, DT)* set = p->set;
  T* ct = p->c + ci * p->rs_c + cj * p->cs_c;
  if (p->cs_c == 1) {
    set->by_rows[r](r, nr, kc, ap, a_stride, bp, rs_bp, ct, p->rs_c, prm);
  } else {
    T tile[TG_MAX_MR * TG_MAX_NR] __attribute__((aligned(64)));
    const int64_t NR = set->nr;
    const F(params_t_) tile_prm = {p->alpha, 0, NULL};
    set->by_rows[r](r, nr, kc, ap, a_stride, bp, rs_bp, tile, NR, &tile_prm);
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < nr; j++) {
        T* cp = ct + i * p->rs_c + j * p->cs_c;
        *cp = prm->beta == 0 ? tile[i * NR + j] : tile[i * NR + j] + prm->beta * *cp;
      }
  }
  if (epi)
    F(epilogue_)(p->cfg, ct, r, nr, p->rs_c, p->cs_c,
                 p->bias ? p->bias + ci * p->bias_rs + cj * p->bias_cs : NULL, p->bias_rs,
                 p->bias_cs, p->act);
}

/* Every line of [q, q + bytes) toward L2 (a run not starting on a line spans one more). */
static inline void F(prefetch_run_l2_)(const char* q, int64_t bytes) {
  const char* end = q + bytes;
  for (q = (const char*) ((uintptr_t) q & ~(uintptr_t) 63); q < end; q += 64)
    __builtin_prefetch(q, 0, 2);
}

/* One KC block of all the row panels against B read in place (p->b_inner): every A panel is
   made ready first, then B's column panels are copied once, a group at a time (kc rows of a
   few lines, at B's row stride, which is often a multiple of 4 KiB: read in place by each row
   panel, its lines would fight over a few L1 sets), and each is multiplied by all the A panels
   in turn. The rows are kc streams, too many for the hardware prefetchers: the next group's
   are prefetched, every line of them (prefetching a 128-byte run's first and last bytes
   missed the middle line of a run that starts inside one, as NumPy's rows do: 16 x 4096 x
   4096, AMD Zen 4, 1 thread, 55 -> 67 GFLOP/s). */
static void F(b_inner_kblock_)(const F(problem_)* p, const F(panels_)* pl, int64_t i0, int64_t M,
                               int64_t j0, int64_t nc, int64_t pc, int64_t kc, int direct_a,
                               T* pa, T* pb, int64_t lda_p, const F(params_t_)* prm, int epi) {
  const TG_CAT(tg_gemm_set_, DT)* set = p->set;
  const int64_t MR = set->mr, NR = set->nr, sz = (int64_t) sizeof(T);
  const T* aps[TG_B_INNER_ROWS_MAX];
  int64_t a_strides[TG_B_INNER_ROWS_MAX], offs[TG_B_INNER_ROWS_MAX], rows[TG_B_INNER_ROWS_MAX];
  for (int64_t pi = 0; pi < pl->count; pi++) {
    F(panel_)(pl, MR, M, pi, &offs[pi], &rows[pi]);
    aps[pi] = F(a_panel_)(p, direct_a, rows[pi], set->tile_mr[rows[pi]], kc,
                          p->a + (i0 + offs[pi]) * p->rs_a + pc * p->cs_a,
                          pa + pi * MR * lda_p, lda_p, &a_strides[pi]);
  }
  const T* bblk = p->b + pc * p->rs_b + j0;
  const int64_t rs_b_bytes = p->rs_b * sz, gw_max = F(b_group_)(p) * NR;
  for (int64_t jg = 0; jg < nc; jg += gw_max) {
    const int64_t gw = nc - jg < gw_max ? nc - jg : gw_max;
    set->packb(gw, kc, bblk + jg, p->rs_b, p->cs_b, pb);
    /* The next group's rows go toward L2, spread over this group's kernel calls. */
    const int64_t next_bytes = (nc - jg - gw < gw_max ? nc - jg - gw : gw_max) * sz;
    const char* next = (const char*) (bblk + jg + gw);
    const int64_t calls = (gw + NR - 1) / NR * pl->count;
    int64_t call = 0;
    for (int64_t jr = jg; jr < jg + gw; jr += NR) {
      const int64_t nr = nc - jr < NR ? nc - jr : NR;
      for (int64_t pi = 0; pi < pl->count; pi++, call++) {
        for (int64_t kk = kc * call / calls; next_bytes > 0 && kk < kc * (call + 1) / calls; kk++)
          F(prefetch_run_l2_)(next + kk * rs_b_bytes, next_bytes);
        F(tile_)(p, rows[pi], nr, kc, aps[pi], a_strides[pi], pb + (jr - jg) * kc, NR,
                 i0 + offs[pi], j0 + jr, prm, epi);
      }
    }
  }
}

/* C[i0:i1, j0:j1] on this thread. */
static void F(gemm_block_)(const F(problem_)* p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  if (F(panel_block_)(p, i0, i1 - i0, j0, j1 - j0, NULL)) return;
  const int direct_b = p->pre == NULL && (F(direct_b_)(p, i1 - i0) || p->b_inner);
  const double b_bytes = F(b_bytes_)(p);
  if (direct_b && j1 - j0 >= TG_PEEL_MIN_PANELS * p->set->nr &&
      p->rs_b * (int64_t) sizeof(T) % 64 == 0 &&
      (p->m == 1 ? b_bytes > TG_DIRECT_B_L1_BYTES(p->cfg) && b_bytes <= TG_PEEL_L2_BYTES(p->cfg)
                 : b_bytes > TG_STREAM_B_MIN_BYTES(p->cfg))) {
    /* B read in place with every row at the same offset into a cache line (NumPy's arrays
       are 16-byte aligned): the first few columns go alone (a packed edge panel), so that the
       other panels' rows start on a line and each k step reads two lines rather than parts of
       three. Measured worth it for one row of C with B in L2, and for a few rows streaming a
       B beyond L2; elsewhere the two extra edge panels cost more than the split loads. */
    const int64_t peel = F(to_line_)(p->b + j0);
    if (peel) {
      F(gemm_block_)(p, i0, i1, j0, j0 + peel);
      j0 += peel;
    }
  }
  const TG_CAT(tg_gemm_set_, DT)* set = p->set;
  const int rows_layout = F(rows_layout_)(p);
  const int64_t MR = set->mr, NR = set->nr, KC = p->kc, NC = p->nc;
  const int64_t M = i1 - i0, N = j1 - j0, K = p->k;
  const int has_epi = p->bias != NULL || p->act != TILEGEN_ACT_NONE;
  /* Full panels of A are read in place when the layout allows, except when a panel is re-read
     by many column panels and its k steps are far apart: row-major A whose rows fall on the
     same L1 sets (a row stride of a multiple of 2 KiB) gets padded row copies, and column-major
     A (a k step per column, each on its own page) packed copies. */
  const int64_t row_bytes = p->rs_a * (int64_t) sizeof(T);
  const int direct_a = rows_layout ? ((row_bytes & 2047) != 0 || N <= 2 * NR)
                                   : p->rs_a == 1 && (N <= 2 * NR || p->cs_a <= MR);
  int64_t a_elems, b_elems, lda_p;
  F(buffers_)(p, M, N, direct_b, &a_elems, &b_elems, &lda_p);
  T *pa, *pb;
  /* Small products pack into the stack: no allocation, and no first-call page faults. */
  T small[TG_STACK_PACK_BYTES / sizeof(T)] __attribute__((aligned(64)));
  if ((size_t) (F(round_up_)(a_elems, 16) + b_elems) * sizeof(T) <= sizeof(small)) {
    pa = small;
    pb = small + F(round_up_)(a_elems, 16);
  } else {
    pa = tg_workspace(TG_WS_GEMM_A, (size_t) a_elems * sizeof(T));
    pb = p->pre ? NULL
                : tg_workspace(direct_b ? TG_WS_GEMM_EDGE : TG_WS_GEMM_B, (size_t) b_elems * sizeof(T));
    if (pa == NULL || (pb == NULL && p->pre == NULL)) {
      F(naive_block_)(p, i0, i1, j0, j1);
      return;
    }
  }
  const F(panels_) pl = F(plan_panels_)(set, M);
  F(params_t_) prm = {p->alpha, p->beta, NULL};

  for (int64_t jc = 0; jc < N; jc += NC) {
    const int64_t nc = N - jc < NC ? N - jc : NC;
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = K - pc < KC ? K - pc : KC;
      const int last_k = pc + kc == K;
      prm.beta = pc == 0 ? p->beta : (T) 1;
      const T* bblk = p->b + pc * p->rs_b + (j0 + jc) * p->cs_b;
      if (p->pre) {
        /* The block's panels, packed beforehand: KC block pc starts at pc * npad, a panel of
           column j at j * kc within it. */
        pb = (T*) p->pre + pc * p->pre_npad + (j0 + jc) * kc;
      } else if (!direct_b) {
        set->packb(nc, kc, bblk, p->rs_b, p->cs_b, pb);
      } else if (nc % NR) {
        const int64_t jr = nc - nc % NR;  /* only the edge panel needs zero padding */
        set->packb(nc % NR, kc, bblk + jr * p->cs_b, p->rs_b, p->cs_b, pb);
      }
      if (p->b_inner) {
        F(b_inner_kblock_)(p, &pl, i0, M, j0 + jc, nc, pc, kc, direct_a, pa, pb, lda_p, &prm,
                           last_k && has_epi);
        continue;
      }
      for (int64_t pi = 0; pi < pl.count; pi++) {
        int64_t off, r;
        F(panel_)(&pl, MR, M, pi, &off, &r);
        const int64_t ci = i0 + off, tmr = set->tile_mr[r];
        int64_t a_stride;  /* cs_a of a packed-layout panel, rs_a of a rows-layout panel */
        const T* ap = F(a_panel_)(p, direct_a, r, tmr, kc, p->a + ci * p->rs_a + pc * p->cs_a,
                                  pa, lda_p, &a_stride);
        /* The A panel this loop takes next (the one below, else the first of the next KC
           block, else of the next NC block; none after the last) goes toward L2 during this
           panel's kernel calls, so that copying it (or reading it in place) does not wait. */
        const int wrap = pi + 1 == pl.count;
        const int64_t npc = !wrap ? pc : pc + kc < K ? pc + kc : 0;
        F(prefetch_) next = {NULL, 0, 0, 0, 0, 0};
        if (!wrap || pc + kc < K || jc + nc < N) {
          int64_t noff, nrows;
          F(panel_)(&pl, MR, M, wrap ? 0 : pi + 1, &noff, &nrows);
          next = F(prefetch_a_)(p, i0 + noff, nrows, npc, K - npc < KC ? K - npc : KC);
        }
        const int64_t calls = (nc + NR - 1) / NR;
        const int64_t per_call = (next.runs * next.run_lines + calls - 1) / calls;
        for (int64_t jr = 0; jr < nc; jr += NR) {
          F(prefetch_some_)(&next, per_call);
          const int64_t nr = nc - jr < NR ? nc - jr : NR;
          const T* bp;
          int64_t rs_bp;
          if (!direct_b) { bp = pb + jr * kc; rs_bp = NR; }
          else if (nr == NR) { bp = bblk + jr; rs_bp = p->rs_b; }
          else { bp = pb; rs_bp = NR; }
          F(tile_)(p, r, nr, kc, ap, a_stride, bp, rs_bp, ci, j0 + jc + jr, &prm, last_k && has_epi);
        }
      }
    }
  }
}

/* Split C into tm x tn blocks (whole panels) minimising the slowest thread's compute plus
   packing; thread tid takes block (tid / tn, tid % tn). */
static void F(thread_block_)(const F(problem_)* p, int tid, int nt, int64_t* i0, int64_t* i1,
                            int64_t* j0, int64_t* j1) {
  const int64_t MR = p->set->mr, NR = p->set->nr;
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

/* Runs p on up to `want` threads. */
static void F(gemm_parallel_)(const F(problem_)* p, int want) {
  tg_parallel_run(want, F(gemm_task_), (void*) p);
}

/* KC and NC for this product: the configured ones, adjusted for its shape. */
static void F(choose_blocking_)(F(problem_)* p) {
  p->kc = p->cfg->kc;
  p->nc = p->cfg->nc;
  /* A big B (beyond what L2 holds beside its packed copy) under few rows (cfg->b_inner_rows;
     their A panels one KC block deep within half of L2): B is read once from memory, a column
     panel at a time for all the rows (b_inner_kblock_), with no column blocking, since nothing
     of B is reused beyond that. KC: the B panel in a quarter of L1, the rest for the A panel
     and C's tile (measured on AMD Zen 3, f32, 16 x 4096 x 4096: KC 128 51 GFLOP/s, 256 43,
     512 29; 96 x 4096 x 4096: 128 76, 256 79; the B block packed instead: 66). */
  const int64_t sz = (int64_t) sizeof(T), MR = p->set->mr, NR = p->set->nr;
  const int64_t b_kc = p->cfg->l1d / 4 / (NR * sz) / 8 * 8;
  const int64_t kc = b_kc < 16 ? 16 : b_kc < p->kc ? b_kc : p->kc;
  const int64_t panels = (p->m + MR - 1) / MR;
  if (p->cs_b == 1 && F(b_bytes_)(p) > TG_STREAM_B_MIN_BYTES(p->cfg) &&
      p->m <= p->cfg->b_inner_rows && panels * MR * kc * sz <= p->cfg->l2 / 2) {
    p->kc = kc;
    p->nc = F(round_up_)(p->n, NR);
    p->b_inner = 1;
  }
  if (!p->b_inner && p->n <= 2 * p->set->nr && p->k > p->kc) {
    /* Few column panels: A is streamed rather than reused, so deepen KC while the B block
       keeps the configured size; C is then swept fewer times. */
    const int64_t budget = p->cfg->kc * p->cfg->nc, cols = F(round_up_)(p->n, p->set->nr);
    p->kc = budget / cols < p->k ? budget / cols : p->k;
  }
}

/* Row-major A (rows contiguous) goes to the "rows" kernels when the ISA has them, to the
   narrow ones (half the NR) when C has no more columns than they cover. When A is streamed
   (beyond L2, and few column panels to reuse its rows: each kernel call then reads its rows
   deep, in place), the row panels are at most stream_rows tall: one prefetch stream per row. */
static inline void F(choose_layout_)(F(problem_)* p) {
  const F(cfg_t_)* cfg = p->cfg;
  const int narrow = cfg->narrow.mr > 0 && p->n <= cfg->narrow.nr;
  if (p->cs_a == 1 && (narrow || cfg->rows.mr > 0)) {
    const int64_t nr = narrow ? cfg->narrow.nr : cfg->rows.nr;
    const int streamed = p->n <= 2 * nr && p->k > cfg->kc &&
                         (double) p->m * (double) p->k * sizeof(T) > (double) cfg->l2;
    p->set = narrow ? (streamed ? &cfg->narrow_stream : &cfg->narrow)
                    : (streamed ? &cfg->rows_stream : &cfg->rows);
  } else {
    p->set = &cfg->packed;
  }
}

/* Normalises the problem (C with a unit column stride when it has one at all) and fills p.
   Returns 0 when nothing is left to compute (after scaling C when alpha or k is 0), 1 when p is
   the problem as given, 2 when p is its transpose (A and B swapped). */
static int F(gemm_prepare_)(F(problem_)* p, int64_t m, int64_t n, int64_t k, T alpha,
                           const T* a, int64_t rs_a, int64_t cs_a, const T* b, int64_t rs_b,
                           int64_t cs_b, T beta, T* c, int64_t rs_c, int64_t cs_c,
                           const T* bias, int64_t bias_stride, int act) {
  *p = (F(problem_)){.m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, .a = a,
                     .rs_a = rs_a, .cs_a = cs_a, .b = b, .rs_b = rs_b, .cs_b = cs_b, .c = c,
                     .rs_c = rs_c, .cs_c = cs_c, .bias = bias, .bias_rs = 0,
                     .bias_cs = bias_stride, .act = act};
  if (m == 0 || n == 0) return 0;
  if (alpha == 0 || k == 0) {
    p->cfg = F(tg_gemm_cfg_)();  /* its row epilogue */
    F(scale_c_)(p);
    return 0;
  }
  int transposed = 0;
  if (n == 1) {
    p->cs_c = 1;  /* a single column: its stride never matters */
  } else if (cs_c != 1 && rs_c == 1) {
    /* Column-major C: compute C^T = B^T A^T, whose rows are contiguous. */
    *p = (F(problem_)){.m = n, .n = m, .k = k, .alpha = alpha, .beta = beta, .a = b,
                       .rs_a = cs_b, .cs_a = rs_b, .b = a, .rs_b = cs_a, .cs_b = rs_a, .c = c,
                       .rs_c = cs_c, .cs_c = rs_c, .bias = bias, .bias_rs = bias_stride,
                       .bias_cs = 0, .act = act};
    if (p->n == 1) p->cs_c = 1;
    transposed = 1;
  }
  p->cfg = F(tg_gemm_cfg_)();
  F(choose_layout_)(p);
  F(choose_blocking_)(p);
  return transposed ? 2 : 1;
}

static int F(threads_for_)(const F(problem_)* p) {
  const double flops = 2.0 * (double) p->m * (double) p->n * (double) p->k;
  if (p->m == 1) {  /* a row vector times B: memory-bound, like the dot-form GEMV */
    if (F(b_bytes_)(p) < TG_GEMV_PARALLEL_MIN_BYTES) return 1;
    const int64_t panels = (p->n + p->set->nr - 1) / p->set->nr;
    const int nt = tg_threads_max();
    return nt < panels ? nt : (int) panels;
  }
  if (flops < TG_PARALLEL_MIN_FLOPS) return 1;
  int nt = tg_threads_max();
  const int64_t panels = ((p->m + p->set->mr - 1) / p->set->mr) * ((p->n + p->set->nr - 1) / p->set->nr);
  if (nt > panels) nt = (int) panels;
  const int by_work = (int) (2.0 * flops / TG_PARALLEL_MIN_FLOPS);  /* >= MIN/2 per thread */
  return nt < by_work ? nt : by_work;
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
  const F(params_t_) prm = {g->alpha, g->beta, NULL}, rest = {g->alpha, 1, NULL};
  /* Rows at the same offset into a cache line (NumPy's arrays are 16-byte aligned), read
     from L2: the first few columns go first, so that the long part loads whole lines. (From
     memory the split loads cost nothing measurable and the extra calls do.) */
  const double bytes = (double) g->rows * (double) g->k * sizeof(T);
  const int64_t peel = g->rs_mat * (int64_t) sizeof(T) % 64 == 0 && g->k >= TG_GEMV_PEEL_MIN_K &&
                       bytes > TG_DIRECT_B_L1_BYTES(g->cfg) && bytes <= TG_PEEL_L2_BYTES(g->cfg)
                           ? F(to_line_)(g->mat) : 0;
  for (int64_t pi = panels * tid / nt; pi < panels * (tid + 1) / nt; pi++) {
    const int64_t i = pi * MR, r = g->rows - i < MR ? g->rows - i : MR;
    const T* row = g->mat + i * g->rs_mat;
    T* y = g->y + i * g->inc_y;
    if (peel) g->cfg->gemv(r, peel, row, g->rs_mat, g->x, y, g->inc_y, &prm);
    g->cfg->gemv(r, g->k - peel, row + peel, g->rs_mat, g->x + peel, y, g->inc_y,
                 peel ? &rest : &prm);
  }
}

/* The GEMV kernels stream x with full vectors: a strided x is copied contiguous first. Without
   room for the copy the product runs the naive path and NULL says it is done. */
static const T* F(gemv_x_)(const F(problem_)* p, const T* x, int64_t inc_x) {
  if (inc_x == 1) return x;
  T* xc = tg_workspace(TG_WS_GEMM_EDGE, (size_t) p->k * sizeof(T));
  if (xc == NULL) {
    F(naive_block_)(p, 0, p->m, 0, p->n);
    return NULL;
  }
  for (int64_t kk = 0; kk < p->k; kk++) xc[kk] = x[kk * inc_x];
  return xc;
}

/* The dot form: output vector y (rows values, stride inc_y) from a matrix with contiguous rows
   and a vector x of stride inc_x; then the epilogue with the bias at stride bias_inc. */
static void F(gemv_dot_)(const F(problem_)* p, const T* mat, int64_t rs_mat, int64_t rows,
                         const T* x, int64_t inc_x, T* y, int64_t inc_y, int64_t bias_inc) {
  F(gemv_) g = {mat, rs_mat, rows, p->k, x, y, inc_y, p->alpha, p->beta, p->cfg};
  if ((g.x = F(gemv_x_)(p, x, inc_x)) == NULL) return;
  /* Memory-bound: threads pay off by the bytes streamed, well before the flops threshold. */
  const double bytes = (double) rows * (double) p->k * sizeof(T);
  int nt = bytes < TG_GEMV_PARALLEL_MIN_BYTES ? 1 : tg_threads_max();
  const int64_t panels = (rows + g.cfg->gemv_mr - 1) / g.cfg->gemv_mr;
  if (nt > panels) nt = (int) panels;
  tg_parallel_run(nt, F(gemv_task_), &g);
  if (p->bias || p->act) F(epilogue_)(p->cfg, y, rows, 1, inc_y, 1, p->bias, bias_inc, 0, p->act);
}

/* The axpy form: y = alpha * x B + beta * y for one row of C (y contiguous) and B's rows
   contiguous. A B past the thread threshold is cut into two halves of its rows whatever the
   thread count: the first half sums into y, the second into a scratch row added to y at the
   end, so two threads each stream whole rows of B (on an AMD Zen 4 measured ~10% faster than
   each streaming half of every row) and the result is the same on any number of threads.
   A unit is one half (or all the rows) for one range of columns; ranges past the first start on
   B's line boundaries (the kernel takes the columns before its first boundary itself, pass by
   pass), and each is swept in blocks whose part of y stays in L1 while the kernel streams the
   rows of B past it. */
typedef struct {
  const T* b;
  int64_t rs_b, n, k, peel;  /* peel: the columns before B's first line boundary */
  const T* x;                /* contiguous */
  T* y;
  T* y2;                     /* the second half's sums (halves == 2) */
  T alpha, beta;
  int64_t halves, k_half, ranges;  /* k_half: the first half's rows (all k when halves == 1) */
  const F(cfg_t_)* cfg;
} F(gemv_axpy_t_);

static void F(gemv_axpy_unit_)(const F(gemv_axpy_t_)* g, int64_t half, int64_t range) {
  const int64_t r0 = half ? g->k_half : 0, rows = half ? g->k - g->k_half : g->k_half;
  T* y = half ? g->y2 : g->y;
  const F(params_t_) prm = {g->alpha, half ? (T) 0 : g->beta, NULL};
  const int64_t line = 64 / (int64_t) sizeof(T), lines = (g->n - g->peel + line - 1) / line;
  const int64_t block = F(round_up_)(TG_AXPY_Y_BYTES(g->cfg) / (int64_t) sizeof(T), line);
  int64_t j = range == 0 ? 0 : g->peel + lines * range / g->ranges * line;
  int64_t j1 = g->peel + lines * (range + 1) / g->ranges * line;
  if (j1 > g->n) j1 = g->n;
  while (j < j1) {  /* blocks end on the grid of lines from the first boundary */
    int64_t e = g->peel + ((j - g->peel) / block + 1) * block;
    if (e > j1) e = j1;
    g->cfg->gemv_axpy(e - j, rows, g->b + r0 * g->rs_b + j, g->rs_b, g->x + r0, y + j, 1, &prm);
    j = e;
  }
}

static void F(gemv_axpy_task_)(void* ctx, int tid, int nt) {
  const F(gemv_axpy_t_)* g = ctx;
  for (int64_t u = tid; u < g->halves * g->ranges; u += nt)
    F(gemv_axpy_unit_)(g, u / g->ranges, u % g->ranges);
}

static void F(gemv_axpy_)(const F(problem_)* p) {
  F(gemv_axpy_t_) g = {p->b, p->rs_b, p->n, p->k, 0, p->a, p->c, NULL, p->alpha, p->beta,
                       1, p->k, 1, p->cfg};
  if (p->rs_b * (int64_t) sizeof(T) % 64 == 0) {
    g.peel = F(to_line_)(p->b);
    if (g.peel > p->n) g.peel = p->n;
  }
  if ((g.x = F(gemv_x_)(p, p->a, p->cs_a)) == NULL) return;
  /* Memory-bound: threads pay off by the bytes streamed, well before the flops threshold. */
  const int big = F(b_bytes_)(p) >= TG_GEMV_PARALLEL_MIN_BYTES;
  int nt = big ? tg_threads_max() : 1;
  if (big && p->k >= 2 * TG_AXPY_HALF_MIN_ROWS &&
      (g.y2 = tg_workspace(TG_WS_GEMM_A, (size_t) p->n * sizeof(T))) != NULL) {
    g.halves = 2;
    g.k_half = F(round_up_)(p->k / 2, 8);
  }
  const int64_t lines = (p->n - g.peel) / (64 / (int64_t) sizeof(T));
  g.ranges = (nt + g.halves - 1) / g.halves;
  if (g.ranges > lines) g.ranges = lines > 1 ? lines : 1;
  if (nt > g.halves * g.ranges) nt = (int) (g.halves * g.ranges);
  tg_parallel_run(nt, F(gemv_axpy_task_), &g);
  if (g.halves == 2)
    for (int64_t j = 0; j < p->n; j++) p->c[j] += g.y2[j];
  if (p->bias || p->act)
    F(epilogue_)(p->cfg, p->c, 1, p->n, p->rs_c, 1, p->bias, p->bias_rs, p->bias_cs, p->act);
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
    p = (F(problem_)){.m = 1, .n = p.m, .k = p.k, .alpha = p.alpha, .beta = p.beta, .a = p.b,
                      .rs_a = 1, .cs_a = p.rs_b, .b = p.a, .rs_b = p.cs_a, .cs_b = p.rs_a,
                      .c = p.c, .rs_c = 1, .cs_c = p.rs_c, .bias = p.bias, .bias_rs = 0,
                      .bias_cs = p.bias_rs, .act = p.act, .cfg = p.cfg};
    F(choose_layout_)(&p);
    F(choose_blocking_)(&p);
  }
  if (p.m == 1 && p.cs_b == 1 && p.n > 1 && p.cs_c == 1) {  /* y = x B, B rows contiguous */
    F(gemv_axpy_)(&p);
    return;
  }
  const int nt = F(threads_for_)(&p);
  F(gemm_parallel_)(&p, nt);
}

/* ---- B packed once, for many products (packed linear layers) ---- */

/* B (k x n at strides rs_b, cs_b) as the row-major-A kernels read it: for each KC block, every
   NR-wide column panel (kc x NR, the edge one zero-padded), one after another. The kernel set is
   copied, so the panels stay valid whatever a later re-tune selects. NULL for an empty B, when
   out of memory, or when the ISA has no row-major-A kernels (the caller keeps B as it is). */
struct F(tg_packed_b_) {
  TG_CAT(tg_gemm_set_, DT) set;
  int64_t k, n, kc, npad;
  T* data;
};

F(tg_packed_b_)* F(tg_gemm_pack_b_)(int64_t k, int64_t n, const T* b, int64_t rs_b, int64_t cs_b) {
  if (k < 1 || n < 1 || b == NULL) return NULL;
  const F(cfg_t_)* cfg = F(tg_gemm_cfg_)();
  const int narrow = cfg->narrow.mr > 0 && n <= cfg->narrow.nr;
  if (!narrow && cfg->rows.mr == 0) return NULL;
  F(tg_packed_b_)* pk = calloc(1, sizeof(*pk));
  if (pk == NULL) return NULL;
  pk->set = narrow ? cfg->narrow : cfg->rows;
  const int64_t NR = pk->set.nr;
  pk->k = k;
  pk->n = n;
  pk->kc = k < cfg->kc ? k : cfg->kc;
  pk->npad = F(round_up_)(n, NR);
  void* mem = NULL;
  if (posix_memalign(&mem, 64, (size_t) (k * pk->npad) * sizeof(T)) != 0) {
    free(pk);
    return NULL;
  }
  pk->data = mem;
  for (int64_t pc = 0; pc < k; pc += pk->kc) {
    const int64_t kc = k - pc < pk->kc ? k - pc : pk->kc;
    pk->set.packb(n, kc, b + pc * rs_b, rs_b, cs_b, pk->data + pc * pk->npad);
  }
  return pk;
}

void F(tg_packed_b_free_)(F(tg_packed_b_)* pk) {
  if (pk == NULL) return;
  free(pk->data);
  free(pk);
}

int64_t F(tg_packed_b_bytes_)(const F(tg_packed_b_)* pk) {
  return pk == NULL ? 0 : pk->k * pk->npad * (int64_t) sizeof(T);
}

/* C (m x n, row stride rs_c) = act(A B + bias), A m x k row-major (row stride rs_a). */
void F(tg_gemm_packed_)(int64_t m, const T* a, int64_t rs_a, const F(tg_packed_b_)* pk, T* c,
                        int64_t rs_c, const T* bias, int act) {
  if (m < 1) return;
  F(problem_) p = {.m = m, .n = pk->n, .k = pk->k, .alpha = 1, .beta = 0, .a = a, .rs_a = rs_a,
                   .cs_a = 1, .c = c, .rs_c = rs_c, .cs_c = 1, .bias = bias, .bias_cs = 1,
                   .act = act, .cfg = F(tg_gemm_cfg_)(), .set = &pk->set, .kc = pk->kc,
                   .pre = pk->data, .pre_npad = pk->npad};
  /* Column blocks of whole panels; NC as configured (any multiple of NR reads the panels). */
  p.nc = F(round_up_)(p.cfg->nc, pk->set.nr);
  F(gemm_parallel_)(&p, F(threads_for_)(&p));
}

/* ---- stacks of products ---- */
typedef struct {
  F(problem_) proto;        /* the first matrix's problem; pointers offset per batch item */
  int64_t count, ndim;
  const int64_t *shape, *sa, *sb, *sc;
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

/* Walks items lo, lo+1, ... of a stack: their offsets advance by the last dimension's strides,
   carrying into the dimensions before (no division per item). */
#define TG_BATCH_CURSOR_DIMS 32
typedef struct {
  int64_t pos[TG_BATCH_CURSOR_DIMS];
  int64_t off_a, off_b, off_c;
} F(batch_cursor_);

static void F(batch_cursor_at_)(const F(batch_)* bt, int64_t idx, F(batch_cursor_)* cur) {
  cur->off_a = cur->off_b = cur->off_c = 0;
  for (int64_t d = bt->ndim - 1; d >= 0; d--) {
    cur->pos[d] = idx % bt->shape[d];
    idx /= bt->shape[d];
    cur->off_a += cur->pos[d] * bt->sa[d];
    cur->off_b += cur->pos[d] * bt->sb[d];
    cur->off_c += cur->pos[d] * bt->sc[d];
  }
}

static inline void F(batch_cursor_next_)(const F(batch_)* bt, F(batch_cursor_)* cur) {
  for (int64_t d = bt->ndim - 1; d >= 0; d--) {
    cur->off_a += bt->sa[d];
    cur->off_b += bt->sb[d];
    cur->off_c += bt->sc[d];
    if (++cur->pos[d] < bt->shape[d]) return;
    cur->off_a -= bt->shape[d] * bt->sa[d];
    cur->off_b -= bt->shape[d] * bt->sb[d];
    cur->off_c -= bt->shape[d] * bt->sc[d];
    cur->pos[d] = 0;
  }
}

static void F(batch_task_)(void* ctx, int tid, int nt) {
  const F(batch_)* bt = ctx;
  const int64_t lo = bt->count * tid / nt, hi = bt->count * (tid + 1) / nt;
  if (lo >= hi) return;
  if (bt->ndim > TG_BATCH_CURSOR_DIMS) {
    for (int64_t idx = lo; idx < hi; idx++) {
      F(problem_) p;
      F(batch_item_)(bt, idx, &p);
      F(gemm_block_)(&p, 0, p.m, 0, p.n);
    }
    return;
  }
  /* Every item has the first one's shape: its row panels are planned once, and whether it is
     a one-panel block (panel_block_) is learned from the first item. */
  const F(panels_) plan = F(plan_panels_)(bt->proto.set, bt->proto.m);
  int one_panel = 1;
  F(batch_cursor_) cur;
  F(batch_cursor_at_)(bt, lo, &cur);
  F(problem_) p = bt->proto;
  for (int64_t idx = lo; idx < hi; idx++, F(batch_cursor_next_)(bt, &cur)) {
    p.a = bt->proto.a + cur.off_a;
    p.b = bt->proto.b + cur.off_b;
    p.c = bt->proto.c + cur.off_c;
    if (one_panel && F(panel_block_)(&p, 0, p.m, 0, p.n, &plan)) continue;
    one_panel = 0;
    F(gemm_block_)(&p, 0, p.m, 0, p.n);
  }
}
