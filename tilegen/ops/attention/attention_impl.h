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
  if (!masked) {  /* the causal edge alone: query i0 + i sees key j when i >= j - off - i0 */
    for (int64_t jj = 0; jj < n; jj++) {
      int64_t hidden = j0 + jj - s->off - i0;
      hidden = hidden < 0 ? 0 : (hidden > m ? m : hidden);
      T* row = tile + jj * mr;
      for (int64_t i = 0; i < hidden; i++) row[i] = (T) -INFINITY;
      for (int64_t i = hidden; i < mr; i++) row[i] = 0;
      live |= hidden < m;
      nonzero |= hidden > 0;
    }
    return !live ? TG_BIAS_ALL_MASKED : nonzero ? TG_BIAS_SOME : TG_BIAS_NONE;
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

/* Scratch of a unit of `tiles` query tiles: per tile Q^T, O, m and l; shared, the bias tile,
   the kernel's work and a realigned copy of a V block; each aligned to a cache line. */
static inline int64_t F(tile_floats_)(const tg_attention_config* c, int64_t d, int64_t rs_o) {
  return tg_attn_align(d * c->mr) + tg_attn_align(c->mr * rs_o) + 2 * tg_attn_align(c->mr);
}

static inline int64_t F(scratch_floats_)(const tg_attention_config* c, int64_t tiles, int64_t d,
                                         int64_t dv, int64_t rs_o) {
  return tiles * F(tile_floats_)(c, d, rs_o) + tg_attn_align((int64_t) c->kb * c->mr) +
         tg_attn_align(c->work) + c->kb * tg_attn_align(dv);
}

/* V rows that start inside a cache line make every vector load of the PV phase (which reads a
   block once per PV_ROWS queries of each tile) a split load, about 9% of a call on AVX-512; a
   unit copies each such block to aligned scratch once for all its tiles. */
static inline int F(v_misaligned_)(const T* v, int64_t rs_v) {
  return ((uintptr_t) v % 64) != 0 || (rs_v * (int64_t) sizeof(T)) % 64 != 0;
}

/* Query tiles [t0, t1) of (batch bi, head h): every key block is read (and realigned) once and
   serves all the tiles that see it. */
static void F(tiled_unit_)(const F(problem_)* p, const tg_attention_config* c, T* ws,
                           int64_t bi, int64_t h, int64_t t0, int64_t t1) {
  const tg_attn_shape* s = &p->s;
  const int mr = c->mr;
  const int64_t rs_o = tg_attn_round_up(s->dv, c->cw), nt = t1 - t0;
  const int64_t slot = F(tile_floats_)(c, s->d, rs_o);
  T* bias = ws + nt * slot;
  T* work = bias + tg_attn_align((int64_t) c->kb * mr);
  T* vblk = work + tg_attn_align(c->work);
  const int64_t rs_vb = tg_attn_align(s->dv);
  tg_attn_offsets o;
  tg_attn_locate(s, bi, h, &o);

  for (int64_t t = 0; t < nt; t++) {
    T* qt = ws + t * slot;
    T* obuf = qt + tg_attn_align(s->d * mr);
    T* mbuf = obuf + tg_attn_align(mr * rs_o);
    T* lbuf = mbuf + tg_attn_align(mr);
    const int64_t i0 = (t0 + t) * mr, m = s->sq - i0 < mr ? s->sq - i0 : mr;
    /* Q^T, scaled: rows of mr queries, written whole (the strided side is the reads). */
    const T scale = p->scale;
    const T* restrict qb = p->q + o.q + i0 * s->q_row;
    const int64_t q_row = s->q_row, d = s->d;
    for (int64_t x = 0; x < d; x++) {
      T* restrict dst = qt + x * mr;
      for (int64_t i = 0; i < m; i++) dst[i] = qb[i * q_row + x] * scale;
      for (int64_t i = m; i < mr; i++) dst[i] = 0;
    }
    for (int64_t i = 0; i < mr; i++) {
      mbuf[i] = (T) -INFINITY;
      lbuf[i] = 0;
    }
    memset(obuf, 0, sizeof(T) * (size_t) (mr * rs_o));
  }

  F(args_t_) a;
  a.d = s->d; a.dv = s->dv; a.rs_k = s->k_row; a.rs_o = rs_o; a.work = work;
  const int masked = p->keep != NULL || p->add != NULL;
  const int realign = s->dv >= 16 && F(v_misaligned_)(p->v + o.v, s->v_row);
  const int64_t last = t1 * mr < s->sq ? t1 * mr : s->sq;
  const int64_t jmax = tg_attn_keys_seen(s, last - 1);
  for (int64_t j0 = 0; j0 < jmax; j0 += c->kb) {
    const T* v = p->v + o.v + j0 * s->v_row;
    int64_t rs_v = s->v_row;
    int copied = 0;
    for (int64_t t = 0; t < nt; t++) {
      const int64_t i0 = (t0 + t) * mr, m = s->sq - i0 < mr ? s->sq - i0 : mr;
      const int64_t jend = tg_attn_keys_seen(s, i0 + m - 1);
      if (j0 >= jend) continue;
      const int64_t n = jend - j0 < c->kb ? jend - j0 : c->kb;
      a.bias = NULL;
      /* The block's last key is past the first query's causal limit: some are hidden. */
      if (masked || (s->causal && j0 + n - 1 > i0 + s->off)) {
        const int kind = F(bias_tile_)(p, &o, mr, i0, m, j0, n, bias);
        if (kind == TG_BIAS_ALL_MASKED) continue;
        if (kind == TG_BIAS_SOME) a.bias = bias;
      }
      if (realign && !copied) {
        const int64_t nb = jmax - j0 < c->kb ? jmax - j0 : c->kb;
        if (s->v_row == rs_vb) {  /* contiguous rows: one copy */
          memcpy(vblk, v, sizeof(T) * (size_t) (nb * rs_vb));
        } else {
          for (int64_t jj = 0; jj < nb; jj++)
            memcpy(vblk + jj * rs_vb, v + jj * s->v_row, sizeof(T) * (size_t) s->dv);
        }
        v = vblk;
        rs_v = rs_vb;
        copied = 1;
      }
      T* qt = ws + t * slot;
      a.qt = qt;
      a.o = qt + tg_attn_align(s->d * mr);
      a.m = a.o + tg_attn_align(mr * rs_o);
      a.l = a.m + tg_attn_align(mr);
      a.k = p->k + o.k + j0 * s->k_row;
      a.v = v;
      a.rs_v = rs_v;
      c->fn(n, &a);
    }
  }

  for (int64_t t = 0; t < nt; t++) {
    const T* obuf = ws + t * slot + tg_attn_align(s->d * mr);
    const T* lbuf = obuf + tg_attn_align(mr * rs_o) + tg_attn_align(mr);
    const int64_t i0 = (t0 + t) * mr, m = s->sq - i0 < mr ? s->sq - i0 : mr;
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
}
#endif

typedef struct {
  const F(problem_)* p;
  const tg_attention_config* cfg;  /* NULL: the plain path */
  int64_t rows;                    /* query rows per tile */
  int64_t tiles;                   /* tiles per (batch, head) */
  int64_t per_unit;                /* tiles per unit */
  int64_t groups;                  /* units per (batch, head) */
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
    ws = tg_workspace(TG_WS_ATTENTION_WORK, sizeof(T) * (size_t) F(scratch_floats_)(
                                           x->cfg, x->per_unit, s->d, s->dv, rs_o));
  }
#endif
  for (;;) {
    const int64_t u = atomic_fetch_add_explicit(&x->next, 1, memory_order_relaxed);
    if (u >= x->units) break;
    const int64_t bh = u / x->groups, r = u % x->groups;
    const int64_t g = s->causal ? x->groups - 1 - r : r;  /* causal: most keys first */
    const int64_t bi = bh / s->hq, h = bh % s->hq;
    const int64_t t0 = g * x->per_unit;
    const int64_t t1 = t0 + x->per_unit < x->tiles ? t0 + x->per_unit : x->tiles;
#if TG_ATTN_TILED
    if (ws != NULL) {
      F(tiled_unit_)(x->p, x->cfg, ws, bi, h, t0, t1);
      continue;
    }
#endif
    const int64_t i1 = t1 * x->rows < s->sq ? t1 * x->rows : s->sq;
    F(plain_rows_)(x->p, bi, h, t0 * x->rows, i1);
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
  x.per_unit = 1;
#if TG_ATTN_TILED
  if (!tg_attention_plain_forced()) {
    x.cfg = tg_attention_cfg();
    x.rows = x.cfg->mr;
    x.per_unit = TG_ATTN_TILES_PER_UNIT;
  }
#endif
  x.tiles = (s->sq + x.rows - 1) / x.rows;
  const int64_t nbh = s->nbatch * s->hq;
  const int want = tg_attn_threads(s, nbh * x.tiles);
  /* Fewer tiles per unit when the units would be too few to share among the threads. */
  while (x.per_unit > 1 && nbh * ((x.tiles + x.per_unit - 1) / x.per_unit) <
                               TG_ATTN_UNITS_PER_THREAD * want)
    x.per_unit /= 2;
  x.groups = (x.tiles + x.per_unit - 1) / x.per_unit;
  x.units = nbh * x.groups;
  atomic_init(&x.next, 0);
  if (x.units == 0) return;
  tg_parallel_run(want < x.units ? want : (int) x.units, F(task_), &x);
}

#undef F
#undef TG_CAT
#undef TG_CAT_
