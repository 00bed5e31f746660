/*
 * The paged-attention (decode) driver, written once for both dtypes: paged_attention.c includes
 * this file with DT, T, EXP and TG_PAGED_KERNELS (1: the generated decode kernels serve this
 * dtype) defined.
 *
 * A unit is one part of one sequence for a range of kv heads (tg_paged_plan): each kv head's
 * group of query heads reads each cached key and value row of the part once (the kernel takes
 * slices of MR heads, each against its kv head; a larger group is several slices of one kv
 * head, the rows still in cache). The unit walks its tokens in chunks of TG_PAGED_CHUNK, one
 * kernel call per chunk for all its kv heads, which reads a token's heads -- one stretch of a
 * page of the cache -- in address order. Groups of half the
 * fused-attention kernel's MR heads or more (multi-query) use that kernel instead (see
 * paged_wide_). Threads claim units from
 * a shared counter. A sequence longer than the part length (set when there are few sequences for
 * the threads) is split; its parts leave unnormalised partial states (O, m, l) that a merge
 * combines after the parallel region. Only tokens below a sequence's length are ever read, and
 * only their block-table entries.
 */
#define TG_CAT_(a, b) a##b
#define TG_CAT(a, b) TG_CAT_(a, b)
#define F(name) TG_CAT(name, DT)

typedef struct {
  tg_paged_shape s;
  const T* q;
  const T* k;
  const T* v;
  T* out;
  T* merge;   /* (unit, head of group) -> O (d), m, l, when some sequence is split */
  T scale;
} F(paged_problem_);

/* Where local head i (query head g0*group + i) of a unit leaves its result: the output row
   (normalised) when the sequence is one part, else the unit's merge slot (O, then m and l,
   unnormalised). */
static inline T* F(paged_dest_)(const F(paged_problem_)* p, const tg_paged_unit* un, int64_t i,
                                int* split) {
  const tg_paged_shape* s = &p->s;
  *split = un->parts > 1;
  if (*split) return p->merge + (un->index * s->heads_per_unit * s->group + i) * (s->d + 2);
  return p->out + un->b * s->out_sb + (un->g0 * s->group + i) * s->out_sh;
}

/* Plain C: each query head of the unit alone, accumulating in its destination. */
static void F(paged_plain_unit_)(const F(paged_problem_)* p, const tg_paged_unit* un) {
  const tg_paged_shape* s = &p->s;
  const int64_t d = s->d;
  for (int64_t i = 0; i < (un->g1 - un->g0) * s->group; i++) {
    const int64_t h = un->g0 * s->group + i, g = h / s->group;
    const T* qr = p->q + un->b * s->q_sb + h * s->q_sh;
    int split;
    T* o = F(paged_dest_)(p, un, i, &split);
    for (int64_t x = 0; x < d; x++) o[x] = 0;
    T m = (T) -INFINITY, l = 0;
    for (int64_t t = un->t0; t < un->t1; t++) {
      const int64_t kr = tg_paged_row(s, un->b, g, t, 0), vr = tg_paged_row(s, un->b, g, t, 1);
      T x = 0;
      for (int64_t c = 0; c < d; c++) x += qr[c] * p->k[kr + c];
      x *= p->scale;
      if (x > m) {
        const T alpha = m == (T) -INFINITY ? (T) 0 : EXP(m - x);
        for (int64_t c = 0; c < d; c++) o[c] *= alpha;
        l *= alpha;
        m = x;
      }
      const T w = EXP(x - m);
      for (int64_t c = 0; c < d; c++) o[c] += w * p->v[vr + c];
      l += w;
    }
    if (split) {
      o[d] = m;
      o[d + 1] = l;
    } else if (l != 0) {
      const T inv = (T) 1 / l;
      for (int64_t c = 0; c < d; c++) o[c] *= inv;
    }
  }
}

#if TG_PAGED_KERNELS
typedef TG_CAT(TG_CAT(tg_, DT), _attndecode_args) F(dec_args_t_);

typedef struct {
  int64_t slices;           /* kernel calls per kv head: ceil(group / MR) */
  int64_t rows;             /* state rows per kv head: slices x MR */
  int64_t rs_q, rs_o, floats;
} F(dec_layout_);

static F(dec_layout_) F(dec_layout_of_)(const tg_paged_attention_config* c, const tg_paged_shape* s) {
  F(dec_layout_) y;
  y.slices = (s->group + c->mr - 1) / c->mr;
  y.rows = y.slices * c->mr;
  y.rs_q = tg_paged_round_up(s->d, 16);  /* a multiple of every ISA's vector width */
  y.rs_o = tg_paged_round_up(s->d, c->cw);
  y.floats = s->heads_per_unit * y.rows * (y.rs_q + y.rs_o + 2) + c->work +
             s->heads_per_unit * y.slices * c->slice_work + 64;
  return y;
}

/* Pointers and offsets a unit's kernel calls take: the token rows (chunk + prefetch, keys then
   values) and the slices' kv-head offsets (keys then values). */
static inline size_t F(dec_extra_bytes_)(const tg_paged_attention_config* c, const tg_paged_shape* s,
                                         const F(dec_layout_)* y) {
  return sizeof(T*) * (size_t) (2 * (TG_PAGED_CHUNK + c->prefetch)) +
         sizeof(int64_t) * (size_t) (2 * s->heads_per_unit * y->slices);
}

/* One kernel call per chunk of tokens covers every kv head of the unit (a slice per MR query
   heads of a group), so the kernel reads each token's page of heads in address order. */
static void F(paged_kernel_unit_)(const F(paged_problem_)* p, const tg_paged_attention_config* c,
                                  const F(dec_layout_)* y, T* ws, const T** rows,
                                  const tg_paged_unit* un) {
  const tg_paged_shape* s = &p->s;
  const int64_t d = s->d, nkv = un->g1 - un->g0, nrows = nkv * y->rows, ns = nkv * y->slices;
  T* qb = ws;
  T* ob = qb + nrows * y->rs_q;
  T* mb = ob + nrows * y->rs_o;
  T* lb = mb + nrows;
  T* work = (T*) (((uintptr_t) (lb + nrows) + 63) & ~(uintptr_t) 63);
  for (int64_t r = 0; r < nrows; r++) {  /* row r: kv head g0 + r / rows, group member r % rows */
    const int64_t i = r % y->rows;
    T* qr = qb + r * y->rs_q;
    if (i < s->group) {
      const int64_t h = (un->g0 + r / y->rows) * s->group + i;
      const T* src = p->q + un->b * s->q_sb + h * s->q_sh;
      for (int64_t x = 0; x < d; x++) qr[x] = src[x] * p->scale;
      for (int64_t x = d; x < y->rs_q; x++) qr[x] = 0;
    } else {
      for (int64_t x = 0; x < y->rs_q; x++) qr[x] = 0;
    }
    mb[r] = (T) -INFINITY;
    lb[r] = 0;
  }
  memset(ob, 0, sizeof(T) * (size_t) (nrows * y->rs_o));
  const T** krows = rows;
  const T** vrows = rows + TG_PAGED_CHUNK + c->prefetch;
  int64_t* koff = (int64_t*) (vrows + TG_PAGED_CHUNK + c->prefetch);
  int64_t* voff = koff + ns;
  for (int64_t j = 0; j < ns; j++) {
    koff[j] = (j / y->slices) * s->cs[0][2];
    voff[j] = (j / y->slices) * s->cs[1][2];
  }
  F(dec_args_t_) a;
  a.d = d; a.ns = ns; a.koff = koff; a.voff = voff;
  a.q = qb; a.rs_q = y->rs_q; a.k_rows = krows; a.v_rows = vrows;
  a.o = ob; a.rs_o = y->rs_o; a.m = mb; a.l = lb; a.work = work;
  const int64_t chunk = TG_PAGED_CHUNK < c->nr ? TG_PAGED_CHUNK : c->nr;
  for (int64_t tc = un->t0; tc < un->t1; tc += chunk) {
    const int64_t n = un->t1 - tc < chunk ? un->t1 - tc : chunk;
    /* the rows past the chunk, prefetched: the next chunk's first (never past the length) */
    for (int64_t x = 0; x < n + c->prefetch; x++) {
      const int64_t t = tc + x < un->t1 ? tc + x : un->t1 - 1;
      krows[x] = p->k + tg_paged_row(s, un->b, un->g0, t, 0);
      vrows[x] = p->v + tg_paged_row(s, un->b, un->g0, t, 1);
    }
    c->fn(n, &a);
  }
  for (int64_t i = 0; i < nkv * s->group; i++) {
    const int64_t r = i / s->group * y->rows + i % s->group;
    int split;
    T* o = F(paged_dest_)(p, un, i, &split);
    const T* src = ob + r * y->rs_o;
    if (split) {
      memcpy(o, src, sizeof(T) * (size_t) d);
      o[d] = mb[r];
      o[d + 1] = lb[r];
    } else if (lb[r] == 0) {
      for (int64_t x = 0; x < d; x++) o[x] = 0;
    } else {
      const T inv = (T) 1 / lb[r];
      for (int64_t x = 0; x < d; x++) o[x] = src[x] * inv;
    }
  }
}
/* Groups of at least half the prefill kernel's MR query heads (multi-query attention, say)
   with blocks of at least NR tokens go to the fused-attention kernel instead: its queries run
   along the lanes, so a group's heads share every broadcast key element, where the decode
   kernel would reduce one dot product per head. The tokens of a call (KB of them, from as
   many blocks as it takes) are gathered into contiguous scratch first: blocks of 16 would
   leave the kernel's 12-key tiles and per-call softmax mostly idle. */
static inline int F(paged_wide_)(const tg_attention_config* c, const tg_paged_shape* s) {
  return c->fn != NULL && 2 * s->group >= c->mr;
}

static inline int64_t F(wide_floats_)(const tg_attention_config* c, const tg_paged_shape* s) {
  const int64_t slices = (s->group + c->mr - 1) / c->mr, rs_o = tg_paged_round_up(s->d, c->cw);
  const int64_t slot = tg_paged_round_up(s->d * c->mr, 16) + tg_paged_round_up(c->mr * rs_o, 16) +
                       2 * tg_paged_round_up(c->mr, 16);
  return s->heads_per_unit * slices * slot + tg_paged_round_up(c->work, 16) +
         2 * c->kb * tg_paged_round_up(s->d, 16);
}

static void F(paged_wide_unit_)(const F(paged_problem_)* p, const tg_attention_config* c, T* ws,
                                const tg_paged_unit* un) {
  const tg_paged_shape* s = &p->s;
  const int64_t d = s->d, mr = c->mr, nkv = un->g1 - un->g0;
  const int64_t slices = (s->group + mr - 1) / mr, rs_o = tg_paged_round_up(d, c->cw);
  const int64_t qsz = tg_paged_round_up(d * mr, 16), osz = tg_paged_round_up(mr * rs_o, 16);
  const int64_t msz = tg_paged_round_up(mr, 16), slot = qsz + osz + 2 * msz;
  T* work = ws + nkv * slices * slot;
  const int64_t rsb = tg_paged_round_up(d, 16);
  T* kbuf = work + tg_paged_round_up(c->work, 16);
  T* vbuf = kbuf + c->kb * rsb;
  for (int64_t g = 0; g < nkv; g++)
    for (int64_t sl = 0; sl < slices; sl++) {
      T* qt = ws + (g * slices + sl) * slot;
      T* m = qt + qsz + osz;
      for (int64_t i = 0; i < mr; i++) {
        const int64_t member = sl * mr + i;
        if (member < s->group) {
          const T* src = p->q + un->b * s->q_sb + ((un->g0 + g) * s->group + member) * s->q_sh;
          for (int64_t x = 0; x < d; x++) qt[x * mr + i] = src[x] * p->scale;
        } else {
          for (int64_t x = 0; x < d; x++) qt[x * mr + i] = 0;
        }
        m[i] = (T) -INFINITY;
        m[msz + i] = 0;
      }
      memset(qt + qsz, 0, sizeof(T) * (size_t) osz);
    }
  TG_CAT(TG_CAT(tg_, DT), _attention_args) a;
  a.d = d; a.dv = d; a.rs_k = rsb; a.rs_v = rsb; a.bias = NULL; a.k = kbuf; a.v = vbuf;
  a.rs_o = rs_o; a.work = work;
  for (int64_t t = un->t0; t < un->t1; t += c->kb) {
    const int64_t n = un->t1 - t < c->kb ? un->t1 - t : c->kb;
    for (int64_t g = 0; g < nkv; g++) {
      for (int64_t x = 0; x < n; x++) {
        memcpy(kbuf + x * rsb, p->k + tg_paged_row(s, un->b, un->g0 + g, t + x, 0),
               sizeof(T) * (size_t) d);
        memcpy(vbuf + x * rsb, p->v + tg_paged_row(s, un->b, un->g0 + g, t + x, 1),
               sizeof(T) * (size_t) d);
      }
      for (int64_t sl = 0; sl < slices; sl++) {
        T* qt = ws + (g * slices + sl) * slot;
        a.qt = qt;
        a.o = qt + qsz;
        a.m = qt + qsz + osz;
        a.l = a.m + msz;
        c->fn(n, &a);
      }
    }
  }
  for (int64_t i = 0; i < nkv * s->group; i++) {
    const int64_t g = i / s->group, member = i % s->group;
    const T* qt = ws + (g * slices + member / mr) * slot;
    const T* src = qt + qsz + (member % mr) * rs_o;
    const T mv = qt[qsz + osz + member % mr], lv = qt[qsz + osz + msz + member % mr];
    int split;
    T* o = F(paged_dest_)(p, un, i, &split);
    if (split) {
      memcpy(o, src, sizeof(T) * (size_t) d);
      o[d] = mv;
      o[d + 1] = lv;
    } else if (lv == 0) {
      for (int64_t x = 0; x < d; x++) o[x] = 0;
    } else {
      const T inv = (T) 1 / lv;
      for (int64_t x = 0; x < d; x++) o[x] = src[x] * inv;
    }
  }
}
#endif

typedef struct {
  const F(paged_problem_)* p;
  const tg_paged_attention_config* cfg;  /* NULL: the plain path */
  const tg_attention_config* attn;       /* the attention op's kernel, for wide groups */
  atomic_llong next;
} F(paged_ctx_);

static void F(paged_task_)(void* vctx, int task, int ntasks) {
  F(paged_ctx_)* x = vctx;
  const tg_paged_shape* s = &x->p->s;
#if TG_PAGED_KERNELS
  T* ws = NULL;
  F(dec_layout_) y;
  const T** rows = NULL;
  const int wide = x->cfg != NULL && F(paged_wide_)(x->attn, s);
  if (wide) {
    ws = tg_workspace(TG_WS_PAGED_ATTENTION_WORK, sizeof(T) * (size_t) F(wide_floats_)(x->attn, s));
  } else if (x->cfg != NULL) {
    y = F(dec_layout_of_)(x->cfg, s);
    ws = tg_workspace(TG_WS_PAGED_ATTENTION_WORK,
                      sizeof(T) * (size_t) y.floats + F(dec_extra_bytes_)(x->cfg, s, &y));
    rows = ws ? (const T**) (ws + y.floats) : NULL;
  }
#endif
  for (;;) {
    const int64_t u = atomic_fetch_add_explicit(&x->next, 1, memory_order_relaxed);
    if (u >= s->units) break;
    tg_paged_unit un;
    tg_paged_unit_of(s, u, &un);
#if TG_PAGED_KERNELS
    if (ws != NULL) {
      if (wide)
        F(paged_wide_unit_)(x->p, x->attn, ws, &un);
      else
        F(paged_kernel_unit_)(x->p, x->cfg, &y, ws, rows, &un);
      continue;
    }
#endif
    F(paged_plain_unit_)(x->p, &un);
  }
  (void) task;
  (void) ntasks;
}

/* Combines the parts of every split sequence: m = max m_p, l = sum e^(m_p - m) l_p,
   O = sum e^(m_p - m) O_p / l. */
static void F(paged_merge_)(const F(paged_problem_)* p) {
  const tg_paged_shape* s = &p->s;
  const int64_t d = s->d;
  const int64_t hpu = s->heads_per_unit * s->group;  /* merge slots per unit */
  for (int64_t b = 0; b < s->batch; b++) {
    const int64_t parts = tg_paged_parts(s, b);
    if (parts < 2) continue;
    for (int64_t r = 0; r < s->ranges; r++) {
      const int64_t first = tg_paged_first_unit(s, b) + r * parts;
      const int64_t g0 = r * s->heads_per_unit;
      const int64_t g1 = g0 + s->heads_per_unit < s->hkv ? g0 + s->heads_per_unit : s->hkv;
      for (int64_t i = 0; i < (g1 - g0) * s->group; i++) {
        T* o = p->out + b * s->out_sb + (g0 * s->group + i) * s->out_sh;
        T m = (T) -INFINITY;
        for (int64_t q = 0; q < parts; q++) {
          const T mp = p->merge[((first + q) * hpu + i) * (d + 2) + d];
          m = mp > m ? mp : m;
        }
        for (int64_t x = 0; x < d; x++) o[x] = 0;
        if (m == (T) -INFINITY) continue;
        T l = 0;
        for (int64_t q = 0; q < parts; q++) {
          const T* slot = p->merge + ((first + q) * hpu + i) * (d + 2);
          const T w = EXP(slot[d] - m);
          l += w * slot[d + 1];
          for (int64_t x = 0; x < d; x++) o[x] += w * slot[x];
        }
        const T inv = (T) 1 / l;
        for (int64_t x = 0; x < d; x++) o[x] *= inv;
      }
    }
  }
}

static int F(paged_run_)(F(paged_problem_)* p) {
  tg_paged_shape* s = &p->s;
  F(paged_ctx_) x;
  x.p = p;
  x.cfg = NULL;
  x.attn = NULL;
#if TG_PAGED_KERNELS
  if (!tg_paged_attention_plain_forced()) {
    x.cfg = tg_paged_attention_cfg();
    x.attn = tg_attention_cfg();
  }
#endif
  const int threads = tg_paged_plan(s);
  p->merge = NULL;
  if (s->split) {
    p->merge = malloc(sizeof(T) * (size_t) (s->units * s->heads_per_unit * s->group * (s->d + 2)));
    if (p->merge == NULL) {  /* no room for partial states: one unit per sequence */
      tg_paged_no_split(s);
    }
  }
  atomic_init(&x.next, 0);
  if (s->units > 0) tg_parallel_run(threads, F(paged_task_), &x);
  if (p->merge) {
    F(paged_merge_)(p);
    free(p->merge);
  }
  return 0;
}

#undef F
#undef TG_CAT
#undef TG_CAT_
