/*
 * The fused-attention driver, written once for both dtypes: attention.c includes this file
 * with DT (f32 | f64), T (float | double), EXP (expf | exp) and TG_ATTN_TILED (1: the
 * generated kernels serve this dtype) defined.
 *
 * Work is cut into units of one query tile (MR rows) of one (batch, head); threads claim units
 * from a shared counter, most expensive first under causal masking (the later tiles of a head
 * see more keys). A unit packs its tile's Q^T (scaled), runs the kernel over the key blocks
 * (KB keys each) that any of its queries can see -- blocks wholly past the causal diagonal are
 * never visited, blocks a mask wholly hides are skipped, blocks with nothing masked pass no
 * bias -- and writes O / l. Scratch is one per-thread workspace of O(MR x (D + Dv) + KB x MR)
 * floats: the Sq x Sk scores never exist.
 *
 * The plain path (every float64 call, and float32 when a thread gets no workspace or the test
 * hook forces it) computes each query row alone with the same online softmax in the output
 * row itself, with libm's exp: allocation-free and simple, the reference the tiled path is
 * tested against besides torch.
 */
#define TG_CAT_(a, b) a##b
#define TG_CAT(a, b) TG_CAT_(a, b)
#define F(name) TG_CAT(name, DT)

typedef struct {
  tg_attn_shape s;
  const T* q;
  const T* k;
  const T* v;
  const uint8_t* keep;
  const T* add;
  T* out;
  T scale;
} F(problem_);

/* The score of query row qr against key row kr (d elements each), scaled. Four partial sums:
   one would wait on each add's latency. */
static inline T F(dot_)(const T* qr, const T* kr, int64_t d, T scale) {
  T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t x = 0;
  for (; x + 4 <= d; x += 4) {
    a0 += qr[x] * kr[x];
    a1 += qr[x + 1] * kr[x + 1];
    a2 += qr[x + 2] * kr[x + 2];
    a3 += qr[x + 3] * kr[x + 3];
  }
  for (; x < d; x++) a0 += qr[x] * kr[x];
  return ((a0 + a1) + (a2 + a3)) * scale;
}

/* Rows [i0, i1) of (batch bi, head h), one at a time, accumulating in the output row. */
static void F(plain_rows_)(const F(problem_)* p, int64_t bi, int64_t h, int64_t i0, int64_t i1) {
  const tg_attn_shape* s = &p->s;
  tg_attn_offsets o;
  tg_attn_locate(s, bi, h, &o);
  for (int64_t i = i0; i < i1; i++) {
    const T* qr = p->q + o.q + i * s->q_row;
    T* orow = p->out + o.out + i * s->out_row;
    for (int64_t c = 0; c < s->dv; c++) orow[c] = 0;
    T m = (T) -INFINITY, l = 0;
    const int64_t jend = tg_attn_keys_seen(s, i);
    for (int64_t j = 0; j < jend; j++) {
      const int64_t mi = o.mask + i * s->mask_row + j * s->mask_col;
      if (p->keep && !p->keep[mi]) continue;
      T x = F(dot_)(qr, p->k + o.k + j * s->k_row, s->d, p->scale);
      if (p->add) x += p->add[mi];
      if (x == (T) -INFINITY) continue;  /* contributes exp(-inf) = 0 */
      if (x > m) {
        const T alpha = m == (T) -INFINITY ? (T) 0 : EXP(m - x);
        for (int64_t c = 0; c < s->dv; c++) orow[c] *= alpha;
        l *= alpha;
        m = x;
      }
      const T pj = EXP(x - m);  /* NaN when x is: NaN in, NaN out */
      const T* vr = p->v + o.v + j * s->v_row;
      for (int64_t c = 0; c < s->dv; c++) orow[c] += pj * vr[c];
      l += pj;
    }
    if (l != 0) {
      const T inv = (T) 1 / l;
      for (int64_t c = 0; c < s->dv; c++) orow[c] *= inv;
    }
  }
}

#if TG_ATTN_TILED
typedef TG_CAT(TG_CAT(tg_, DT), _attention_args) F(args_t_);

/* Bias tile of key block [j0, j0 + n) for tile rows [i0, i0 + m): masks and the causal edge,
   (key, query) at tile[jj*MR + i], zeros for the absent queries. Returns TG_BIAS_NONE (nothing
   masked or added: pass no bias), TG_BIAS_ALL_MASKED (skip the block) or TG_BIAS_SOME. */
static int F(bias_tile_)(const F(problem_)* p, const tg_attn_offsets* o, int mr, int64_t i0,
                         int64_t m, int64_t j0, int64_t n, T* tile) {
  const tg_attn_shape* s = &p->s;
  int live = 0, nonzero = 0;
  const int masked = p->keep != NULL || p->add != NULL;
  if (masked && s->mask_row == 0 && !s->causal) {
    /* One value per key (a key-padding mask): decide from the n values, fill rows only if
       the block needs a bias. */
    T vals[TG_ATTN_MAX_KB];
    for (int64_t jj = 0; jj < n; jj++) {
      const int64_t mi = o->mask + (j0 + jj) * s->mask_col;
      T x = p->keep && !p->keep[mi] ? (T) -INFINITY : (T) 0;
      if (p->add) x += p->add[mi];
      vals[jj] = x;
      live |= x != (T) -INFINITY;
      nonzero |= x != 0;
    }
    if (!live) return TG_BIAS_ALL_MASKED;
    if (!nonzero) return TG_BIAS_NONE;
    for (int64_t jj = 0; jj < n; jj++) {
      const T x = vals[jj];
      T* row = tile + jj * mr;
      for (int64_t i = 0; i < m; i++) row[i] = x;
      for (int64_t i = m; i < mr; i++) row[i] = 0;
    }
    return TG_BIAS_SOME;
  }
  for (int64_t jj = 0; jj < n; jj++) {
    const int64_t j = j0 + jj;
    T* row = tile + jj * mr;
    const int64_t mbase = o->mask + i0 * s->mask_row + j * s->mask_col;
    for (int64_t i = 0; i < mr; i++) row[i] = 0;
    if (p->keep) {
      const uint8_t* kp = p->keep + mbase;
      for (int64_t i = 0; i < m; i++) row[i] = kp[i * s->mask_row] ? (T) 0 : (T) -INFINITY;
    }
    if (p->add) {
      const T* ap = p->add + mbase;
      for (int64_t i = 0; i < m; i++) row[i] += ap[i * s->mask_row];
    }
    if (s->causal) {  /* query i0 + i sees key j when j <= i0 + i + off */
      int64_t hidden = j - s->off - i0;
      hidden = hidden < 0 ? 0 : (hidden > m ? m : hidden);
      for (int64_t i = 0; i < hidden; i++) row[i] = (T) -INFINITY;
    }
    for (int64_t i = 0; i < m; i++) {
      live |= row[i] != (T) -INFINITY;
      nonzero |= row[i] != 0;
    }
  }
  return !live ? TG_BIAS_ALL_MASKED : nonzero ? TG_BIAS_SOME : TG_BIAS_NONE;
}

/* Scratch floats of a unit: Q^T, O, m, l, the bias tile, the kernel's work and a realigned
   copy of a V block, each aligned to a cache line. */
static inline int64_t F(scratch_floats_)(const tg_attention_config* c, int64_t d, int64_t dv,
                                         int64_t rs_o) {
  return tg_attn_align(d * c->mr) + tg_attn_align(c->mr * rs_o) + 2 * tg_attn_align(c->mr) +
         tg_attn_align((int64_t) c->kb * c->mr) + tg_attn_align(c->work) +
         c->kb * tg_attn_align(dv);
}

/* V rows that start inside a cache line would make every vector load of the PV phase, which
   reads each block once per PV_ROWS queries, a split load (about 10% of the whole call on
   AVX-512); a block of such rows is copied to aligned scratch first (a few % of the call). */
static inline int F(v_misaligned_)(const T* v, int64_t rs_v) {
  return ((uintptr_t) v % 64) != 0 || (rs_v * (int64_t) sizeof(T)) % 64 != 0;
}

static void F(tiled_unit_)(const F(problem_)* p, const tg_attention_config* c, T* ws,
                           int64_t bi, int64_t h, int64_t tile) {
  const tg_attn_shape* s = &p->s;
  const int mr = c->mr;
  const int64_t rs_o = tg_attn_round_up(s->dv, c->cw);
  T* qt = ws;
  T* obuf = qt + tg_attn_align(s->d * mr);
  T* mbuf = obuf + tg_attn_align(mr * rs_o);
  T* lbuf = mbuf + tg_attn_align(mr);
  T* bias = lbuf + tg_attn_align(mr);
  T* work = bias + tg_attn_align((int64_t) c->kb * mr);
  T* vblk = work + tg_attn_align(c->work);
  const int64_t rs_vb = tg_attn_align(s->dv);
  tg_attn_offsets o;
  tg_attn_locate(s, bi, h, &o);
  const int64_t i0 = tile * mr, m = s->sq - i0 < mr ? s->sq - i0 : mr;

  {
    /* Q^T, scaled: rows of mr queries, written whole (the strided side is the reads). */
    const T scale = p->scale;
    const T* restrict qb = p->q + o.q + i0 * s->q_row;
    const int64_t q_row = s->q_row, d = s->d;
    for (int64_t x = 0; x < d; x++) {
      T* restrict dst = qt + x * mr;
      for (int64_t i = 0; i < m; i++) dst[i] = qb[i * q_row + x] * scale;
      for (int64_t i = m; i < mr; i++) dst[i] = 0;
    }
  }
  for (int64_t i = 0; i < mr; i++) {
    mbuf[i] = (T) -INFINITY;
    lbuf[i] = 0;
  }
  memset(obuf, 0, sizeof(T) * (size_t) (mr * rs_o));

  F(args_t_) a;
  a.d = s->d; a.dv = s->dv; a.qt = qt; a.rs_k = s->k_row; a.rs_v = s->v_row;
  a.o = obuf; a.rs_o = rs_o; a.m = mbuf; a.l = lbuf; a.work = work;
  const int64_t jend = tg_attn_keys_seen(s, i0 + m - 1);
  const int masked = p->keep != NULL || p->add != NULL;
  const int realign = s->dv >= 16 && F(v_misaligned_)(p->v + o.v, s->v_row);
  for (int64_t j0 = 0; j0 < jend; j0 += c->kb) {
    const int64_t n = jend - j0 < c->kb ? jend - j0 : c->kb;
    a.bias = NULL;
    /* The block's last key is past the first query's causal limit: some are hidden. */
    if (masked || (s->causal && j0 + n - 1 > i0 + s->off)) {
      const int kind = F(bias_tile_)(p, &o, mr, i0, m, j0, n, bias);
      if (kind == TG_BIAS_ALL_MASKED) continue;
      if (kind == TG_BIAS_SOME) a.bias = bias;
    }
    a.k = p->k + o.k + j0 * s->k_row;
    a.v = p->v + o.v + j0 * s->v_row;
    if (realign) {
      for (int64_t jj = 0; jj < n; jj++)
        memcpy(vblk + jj * rs_vb, a.v + jj * s->v_row, sizeof(T) * (size_t) s->dv);
      a.v = vblk;
      a.rs_v = rs_vb;
    }
    c->fn(n, &a);
  }

  for (int64_t i = 0; i < m; i++) {
    T* restrict orow = p->out + o.out + (i0 + i) * s->out_row;
    const T* restrict src = obuf + i * rs_o;
    const int64_t dv = s->dv;
    if (lbuf[i] == 0) {  /* every key masked */
      for (int64_t x = 0; x < dv; x++) orow[x] = 0;
    } else {
      const T inv = (T) 1 / lbuf[i];
      for (int64_t x = 0; x < dv; x++) orow[x] = src[x] * inv;
    }
  }
}
#endif

typedef struct {
  const F(problem_)* p;
  const tg_attention_config* cfg;  /* NULL: the plain path */
  int64_t rows;                    /* query rows per unit */
  int64_t tiles;                   /* units per (batch, head) */
  int64_t units;
  atomic_llong next;
} F(ctx_);

static void F(task_)(void* vctx, int task, int ntasks) {
  F(ctx_)* x = vctx;
  const tg_attn_shape* s = &x->p->s;
#if TG_ATTN_TILED
  T* ws = NULL;
  if (x->cfg != NULL) {
    const int64_t rs_o = tg_attn_round_up(s->dv, x->cfg->cw);
    ws = tg_workspace(TG_ATTN_WS_SLOT,
                      sizeof(T) * (size_t) F(scratch_floats_)(x->cfg, s->d, s->dv, rs_o));
  }
#endif
  for (;;) {
    const int64_t u = atomic_fetch_add_explicit(&x->next, 1, memory_order_relaxed);
    if (u >= x->units) break;
    const int64_t bh = u / x->tiles, r = u % x->tiles;
    const int64_t tile = s->causal ? x->tiles - 1 - r : r;  /* causal: most keys first */
    const int64_t bi = bh / s->hq, h = bh % s->hq;
#if TG_ATTN_TILED
    if (ws != NULL) {
      F(tiled_unit_)(x->p, x->cfg, ws, bi, h, tile);
      continue;
    }
#endif
    const int64_t i0 = tile * x->rows, i1 = i0 + x->rows < s->sq ? i0 + x->rows : s->sq;
    F(plain_rows_)(x->p, bi, h, i0, i1);
  }
  (void) task;
  (void) ntasks;
}

static void F(run_)(const F(problem_)* p) {
  const tg_attn_shape* s = &p->s;
  F(ctx_) x;
  x.p = p;
  x.cfg = NULL;
  x.rows = TG_ATTN_PLAIN_ROWS;
#if TG_ATTN_TILED
  if (!tg_attention_plain_forced()) {
    x.cfg = tg_attention_cfg();
    x.rows = x.cfg->mr;
  }
#endif
  x.tiles = (s->sq + x.rows - 1) / x.rows;
  x.units = s->nbatch * s->hq * x.tiles;
  atomic_init(&x.next, 0);
  if (x.units == 0) return;
  int want = tg_attn_threads(s, x.units);
  tg_parallel_run(want, F(task_), &x);
}

#undef F
#undef TG_CAT
#undef TG_CAT_
