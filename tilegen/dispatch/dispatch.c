/* Built for the platform baseline: selection code never executes an ISA it has not checked. */
#include "dispatch.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "tilegen.h"

typedef struct {
  const char* name;
  int arch;
  int priority;
  uint32_t requires;
  int64_t blocking[2][2];  /* [dtype][kc, nc] */
} isa_info;

#define TG_ISA_ROW(ID, NAME, ARCH, PRIO, REQ, K32, N32, K64, N64) \
  [ID] = {NAME, ARCH, PRIO, REQ, {{K32, N32}, {K64, N64}}},
static const isa_info isa_table[TG_ISA_COUNT] = {TG_FOREACH_ISA(TG_ISA_ROW)};
#undef TG_ISA_ROW

static const char* const feature_names[TG_FEATURE_COUNT] = TG_FEATURE_NAMES;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int initialized;
static int init_status;
static char init_error[512];
static tg_cpu_features features;
static int fake_features;
static uint32_t fake_usable;
static int cap_isa = -1;

/* A published configuration is immutable: a change (tilegen_x_set_gemm_*, tilegen_x_reinit)
   builds a new one and swaps the pointer, so a GEMM running on another thread keeps the table it
   started with (rewriting a table in place let such a GEMM call a by_rows[] entry that a new,
   smaller tile had cleared). Configurations are interned and never freed; there are only as many
   as there are distinct choices (kernel x blocking), a handful. */
#define TG_DEFINE_PUBLISH(DT)                                                                   \
  typedef struct node_##DT {                                                                   \
    struct node_##DT* next;                                                                    \
    tg_gemm_config_##DT cfg;                                                                   \
  } node_##DT;                                                                                 \
  static node_##DT first_##DT;         /* the first one needs no allocation */                 \
  static node_##DT* interned_##DT;     /* guarded by init_lock */                              \
  static _Atomic(const tg_gemm_config_##DT*) cur_##DT;                                         \
  /* Makes *c current. Caller holds init_lock. Returns 0, or -1 (out of memory, unchanged). */ \
  static int publish_##DT(const tg_gemm_config_##DT* c) {                                      \
    node_##DT* n = interned_##DT;                                                              \
    while (n != NULL && memcmp(&n->cfg, c, sizeof(*c)) != 0) n = n->next;                      \
    if (n == NULL) {                                                                           \
      n = interned_##DT == NULL ? &first_##DT : malloc(sizeof(*n));                            \
      if (n == NULL) return -1;                                                                \
      memcpy(&n->cfg, c, sizeof(*c));                                                          \
      n->next = interned_##DT;                                                                 \
      interned_##DT = n;                                                                       \
    }                                                                                          \
    atomic_store_explicit(&cur_##DT, &n->cfg, memory_order_release);                           \
    return 0;                                                                                  \
  }                                                                                            \
  /* The current configuration; call only after initialisation. */                           \
  static const tg_gemm_config_##DT* current_##DT(void) {                                       \
    return atomic_load_explicit(&cur_##DT, memory_order_acquire);                              \
  }
TG_DEFINE_PUBLISH(f32)
TG_DEFINE_PUBLISH(f64)

static int isa_built(int isa) {
  return isa_table[isa].arch == TG_ARCH_ANY || isa_table[isa].arch == TG_BUILD_ARCH;
}

static int isa_usable(int isa) {
  return isa_built(isa) && (features.usable & isa_table[isa].requires) == isa_table[isa].requires;
}

static void list_isas(char* out, size_t len, int usable_only) {
  out[0] = '\0';
  for (int prio = 1000; prio >= 0; prio--) {
    for (int i = 0; i < TG_ISA_COUNT; i++) {
      if (isa_table[i].priority != prio) continue;
      if (usable_only && !isa_usable(i)) continue;
      if (out[0]) strncat(out, ", ", len - strlen(out) - 1);
      strncat(out, isa_table[i].name, len - strlen(out) - 1);
    }
  }
}

/* Parses TILEGEN_ISA into cap_isa. Returns 0, or -1 with init_error set. */
static int parse_cap(void) {
  cap_isa = -1;
  const char* env = getenv("TILEGEN_ISA");
  if (env == NULL || env[0] == '\0') return 0;
  char want[32];
  size_t n = 0;
  for (; env[n] && n < sizeof(want) - 1; n++) want[n] = (char) tolower((unsigned char) env[n]);
  want[n] = '\0';
  if (!strcmp(want, "avx512f")) strcpy(want, "avx512");
  char usable[128];
  list_isas(usable, sizeof(usable), 1);
  for (int i = 0; i < TG_ISA_COUNT; i++) {
    if (strcmp(want, isa_table[i].name)) continue;
    if (!isa_built(i)) {
      snprintf(init_error, sizeof(init_error),
               "TILEGEN_ISA=%s: %s is not an ISA of this CPU architecture; usable here: %s",
               env, isa_table[i].name, usable);
      return -1;
    }
    if (!isa_usable(i)) {
      char missing[160] = "";
      const uint32_t lack = isa_table[i].requires & ~features.usable;
      for (int b = 0; b < TG_FEATURE_COUNT; b++) {
        if (!(lack & (1u << b))) continue;
        if (missing[0]) strncat(missing, " ", sizeof(missing) - strlen(missing) - 1);
        strncat(missing, feature_names[b], sizeof(missing) - strlen(missing) - 1);
      }
      snprintf(init_error, sizeof(init_error),
               "TILEGEN_ISA=%s: this CPU (or its OS) lacks %s; usable here: %s", env, missing,
               usable);
      return -1;
    }
    cap_isa = i;
    return 0;
  }
  char all[128];
  list_isas(all, sizeof(all), 0);
  snprintf(init_error, sizeof(init_error),
           "TILEGEN_ISA=%s: unknown ISA; allowed values: %s (usable here: %s)", env, all, usable);
  return -1;
}

/* Fills cfg with the ISA's production kernels of one dtype: both A layouts, the packers, the
   GEMV kernel. `only` (a kernel name) or NULL: restrict that kernel's layout to tiles no taller.
   Returns 0 when the ISA has no usable GEMM kernels for the dtype. */
#define TG_DEFINE_FILL(DT)                                                                      \
  static void fill_set_##DT(tg_gemm_set_##DT* set, const tg_ukernel_##DT* k, int count,        \
                            int layout, int nr, int max_mr) {                                   \
    memset(set, 0, sizeof(*set));                                                              \
    for (int i = 0; i < count; i++)                                                            \
      if (k[i].layout == layout && k[i].nr == nr && k[i].mr <= max_mr && k[i].mr > set->mr)    \
        set->mr = k[i].mr;                                                                     \
    for (int r = 1; r <= set->mr; r++) {                                                       \
      int best = -1;                                                                           \
      for (int i = 0; i < count; i++)                                                          \
        if (k[i].layout == layout && k[i].nr == nr && k[i].mr >= r && k[i].mr <= set->mr &&    \
            (best < 0 || k[i].mr < k[best].mr)) best = i;                                      \
      set->by_rows[r] = k[best].fn;                                                            \
      set->packa_by_rows[r] = k[best].pa;                                                      \
      set->tile_mr[r] = k[best].mr;                                                            \
      set->name_by_rows[r] = k[best].name;                                                     \
      set->nr = nr;                                                                            \
      set->packb = k[best].pb;                                                                 \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  static int fill_##DT(tg_gemm_config_##DT* cfg, int isa, const char* only) {                  \
    tg_ukernel_##DT k[64];                                                                     \
    int count = 0, nr = 0;                                                                     \
    TG_FOREACH_GEMM_UKERNEL_##DT(TG_COLLECT)                                                   \
    for (int i = 0; i < count; i++) if (k[i].layout == 0 && k[i].nr > nr) nr = k[i].nr;        \
    int limit[3] = {TG_MAX_MR, TG_MAX_MR, TG_MAX_MR}, found = only == NULL;                    \
    for (int i = 0; i < count && only; i++)                                                    \
      if (!strcmp(k[i].name, only)) {                                                          \
        limit[k[i].layout == 1 && k[i].nr != nr ? 2 : k[i].layout] = k[i].mr;                  \
        found = 1;                                                                             \
      }                                                                                        \
    if (!found) return 0;                                                                      \
    tg_gemm_config_##DT next;                                                                  \
    memset(&next, 0, sizeof(next));                                                            \
    next.isa = isa;                                                                            \
    fill_set_##DT(&next.packed, k, count, 0, nr, limit[0]);                                    \
    fill_set_##DT(&next.rows, k, count, 1, nr, limit[1]);                                      \
    fill_set_##DT(&next.narrow, k, count, 1, nr / 2, limit[2]);                                \
    if (next.packed.mr == 0) return 0; /* the packed layout is the one every ISA must have */  \
    for (int i = 0; i < count; i++)                                                            \
      if (k[i].layout == 0 && k[i].mr == next.packed.mr && k[i].nr == nr) next.packr = k[i].pr; \
    TG_FOREACH_GEMV_UKERNEL_##DT(TG_COLLECT_GEMV)                                              \
    if (next.gemv == NULL) { /* no dot-form kernel for this ISA: the portable one */           \
      const int want = isa;                                                                    \
      isa = TG_ISA_SCALAR;                                                                     \
      TG_FOREACH_GEMV_UKERNEL_##DT(TG_COLLECT_GEMV)                                            \
      isa = want;                                                                              \
    }                                                                                          \
    next.kc = cfg->isa == isa ? cfg->kc : 0;  /* a re-fill keeps tuned blocking */             \
    next.nc = cfg->isa == isa ? cfg->nc : 0;                                                   \
    *cfg = next;                                                                               \
    return 1;                                                                                  \
  }

#define TG_DEFINE_UKERNEL_T(DT)                                                               \
  typedef struct {                                                                            \
    int mr, nr, layout;                                                                       \
    tg_##DT##_gemm_ukernel_fn fn;                                                             \
    tg_##DT##_packa_fn pa;                                                                    \
    tg_##DT##_packr_fn pr;                                                                    \
    tg_##DT##_packb_fn pb;                                                                    \
    const char* name;                                                                         \
  } tg_ukernel_##DT;
TG_DEFINE_UKERNEL_T(f32)
TG_DEFINE_UKERNEL_T(f64)

#define TG_COLLECT(ISA, MR, NR, U, EPI, PROD, LAYOUT, FN, PA, PR, PB, NAME)                  \
  if ((ISA) == isa && (PROD) && (EPI) == 0u && count < 64 && (MR) <= TG_MAX_MR) {            \
    k[count] = (__typeof__(k[0])){(MR), (NR), (LAYOUT), FN, PA, PR, PB, NAME};               \
    count++;                                                                                  \
  }

#define TG_COLLECT_GEMV(ISA, MR, KR, PROD, FN, NAME)                                          \
  if ((ISA) == isa && (PROD) && next.gemv == NULL) {                                         \
    next.gemv = FN; next.gemv_mr = (MR); next.gemv_name = NAME;                              \
  }

TG_DEFINE_FILL(f32)
TG_DEFINE_FILL(f64)
#undef TG_COLLECT
#undef TG_COLLECT_GEMV

/* Fills kc/nc from the ISA table where unset (0) and keeps them sane. */
#define TG_DEFINE_APPLY_BLOCKING(DT, IDX)                                                   \
  static void apply_blocking_##DT(tg_gemm_config_##DT* cfg, int64_t kc, int64_t nc) {      \
    const int64_t* d = isa_table[cfg->isa].blocking[IDX];                                  \
    cfg->kc = kc > 0 ? kc : (cfg->kc > 0 ? cfg->kc : d[0]);                                \
    nc = nc > 0 ? nc : (cfg->nc > 0 ? cfg->nc : d[1]);                                     \
    nc = nc / cfg->packed.nr * cfg->packed.nr;                                             \
    cfg->nc = nc < cfg->packed.nr ? cfg->packed.nr : nc;                                   \
  }
TG_DEFINE_APPLY_BLOCKING(f32, 0)
TG_DEFINE_APPLY_BLOCKING(f64, 1)

/* Best usable ISA within the cap that has production kernels for the dtype. */
#define TG_DEFINE_SELECT(DT)                                                                 \
  static void select_##DT(void) {                                                          \
    tg_gemm_config_##DT c;                                                                 \
    memset(&c, 0, sizeof(c));                                                              \
    for (int prio = 1000; prio >= 0; prio--)                                               \
      for (int i = 0; i < TG_ISA_COUNT; i++) {                                             \
        if (isa_table[i].priority != prio || !isa_usable(i)) continue;                     \
        if (cap_isa >= 0 && prio > isa_table[cap_isa].priority) continue;                  \
        if (fill_##DT(&c, i, NULL)) {                                                      \
          apply_blocking_##DT(&c, 0, 0);                                                   \
          publish_##DT(&c);                                                                \
          return;                                                                          \
        }                                                                                  \
      }                                                                                    \
  }
TG_DEFINE_SELECT(f32)
TG_DEFINE_SELECT(f64)

static void log_choice(void) {
  const char* v = getenv("TILEGEN_VERBOSE");
  if (v == NULL || v[0] == '\0' || v[0] == '0') return;
  char usable[128];
  list_isas(usable, sizeof(usable), 1);
  fprintf(stderr, "tilegen: usable ISAs: %s; cap: %s\n", usable,
          cap_isa >= 0 ? isa_table[cap_isa].name : "none");
  const tg_gemm_config_f32* c32 = current_f32();
  const tg_gemm_config_f64* c64 = current_f64();
  fprintf(stderr, "tilegen: f32 gemm: %s, %s / %s (KC=%lld NC=%lld); gemv %s\n",
          isa_table[c32->isa].name, c32->packed.name_by_rows[c32->packed.mr],
          c32->rows.mr ? c32->rows.name_by_rows[c32->rows.mr] : "-",
          (long long) c32->kc, (long long) c32->nc, c32->gemv_name);
  fprintf(stderr, "tilegen: f64 gemm: %s, %s / %s (KC=%lld NC=%lld); gemv %s\n",
          isa_table[c64->isa].name, c64->packed.name_by_rows[c64->packed.mr],
          c64->rows.mr ? c64->rows.name_by_rows[c64->rows.mr] : "-",
          (long long) c64->kc, (long long) c64->nc, c64->gemv_name);
  if (init_status != 0) fprintf(stderr, "tilegen: %s\n", init_error);
}

static void init_locked(void) {
  init_error[0] = '\0';
  if (fake_features) {
    features.reported = features.usable = fake_usable;
  } else {
    tg_cpu_detect(&features);
  }
  init_status = parse_cap();
  if (init_status != 0) cap_isa = -1;  /* an invalid cap is reported, never obeyed */
  select_f32();
  select_f64();
  log_choice();
}

/* fork: a child must not inherit init_lock held by a thread it does not have (one that was
   initialising, possibly blocked logging to a full stderr pipe, or re-tuning), or its first
   call would wait forever. The handlers are registered before init_lock is first taken. */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void fork_prepare(void) { pthread_mutex_lock(&init_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&init_lock); }
static void fork_child(void) { pthread_mutex_init(&init_lock, NULL); }
static void register_atfork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* `report`: print an invalid cap to stderr. Implicit initialisation (a BLAS call from C) reports;
   tilegen_init() leaves it to its caller, which gets -1 and tilegen_init_error(). */
static int dispatch_init(int report) {
  if (atomic_load_explicit(&initialized, memory_order_acquire)) return init_status;
  pthread_once(&atfork_once, register_atfork);
  pthread_mutex_lock(&init_lock);
  if (!atomic_load_explicit(&initialized, memory_order_relaxed)) {
    init_locked();
    if (init_status != 0 && report) fprintf(stderr, "tilegen: %s; running uncapped\n", init_error);
    atomic_store_explicit(&initialized, 1, memory_order_release);
  }
  pthread_mutex_unlock(&init_lock);
  return init_status;
}

int tg_dispatch_init(void) { return dispatch_init(1); }

const tg_gemm_config_f32* tg_gemm_cfg_f32(void) {
  tg_dispatch_init();
  return current_f32();
}

const tg_gemm_config_f64* tg_gemm_cfg_f64(void) {
  tg_dispatch_init();
  return current_f64();
}

/* ---- public ---- */

int tilegen_init(void) { return dispatch_init(0); }

const char* tilegen_init_error(void) {
  tg_dispatch_init();
  return init_error;
}

const char* tilegen_isa_name(void) { return isa_table[tg_gemm_cfg_f32()->isa].name; }

/* ---- introspection and test hooks ---- */

uint32_t tilegen_x_features_reported(void) { tg_dispatch_init(); return features.reported; }
uint32_t tilegen_x_features_usable(void) { tg_dispatch_init(); return features.usable; }
int tilegen_x_feature_count(void) { return TG_FEATURE_COUNT; }

const char* tilegen_x_feature_name(int bit) {
  return bit >= 0 && bit < TG_FEATURE_COUNT ? feature_names[bit] : NULL;
}

int tilegen_x_isa_count(void) { return TG_ISA_COUNT; }

const char* tilegen_x_isa_name_of(int isa) {
  return isa >= 0 && isa < TG_ISA_COUNT ? isa_table[isa].name : NULL;
}

int tilegen_x_isa_usable(int isa) {
  tg_dispatch_init();
  return isa >= 0 && isa < TG_ISA_COUNT && isa_usable(isa);
}

const char* tilegen_x_isa_cap(void) {
  tg_dispatch_init();
  return cap_isa >= 0 ? isa_table[cap_isa].name : NULL;
}

int tilegen_x_gemm_isa(int dtype) {
  return dtype == 0 ? tg_gemm_cfg_f32()->isa : tg_gemm_cfg_f64()->isa;
}

#define TG_PICK_SET(c, layout) \
  ((layout) == 2 ? &(c)->narrow : (layout) == 1 ? &(c)->rows : &(c)->packed)

void tilegen_x_gemm_tile(int dtype, int layout, int* mr, int* nr) {
  if (dtype == 0) {
    const tg_gemm_set_f32* st = TG_PICK_SET(tg_gemm_cfg_f32(), layout);
    *mr = st->mr;
    *nr = st->nr;
  } else {
    const tg_gemm_set_f64* st = TG_PICK_SET(tg_gemm_cfg_f64(), layout);
    *mr = st->mr;
    *nr = st->nr;
  }
}

const char* tilegen_x_gemm_kernel(int dtype, int layout, int rows) {
  if (dtype == 0) {
    const tg_gemm_set_f32* st = TG_PICK_SET(tg_gemm_cfg_f32(), layout);
    return st->mr && rows >= 0 && rows <= st->mr ? st->name_by_rows[rows ? rows : st->mr] : NULL;
  }
  const tg_gemm_set_f64* st = TG_PICK_SET(tg_gemm_cfg_f64(), layout);
  return st->mr && rows >= 0 && rows <= st->mr ? st->name_by_rows[rows ? rows : st->mr] : NULL;
}

void tilegen_x_gemm_blocking(int dtype, int64_t* kc, int64_t* nc) {
  if (dtype == 0) { const tg_gemm_config_f32* c = tg_gemm_cfg_f32(); *kc = c->kc; *nc = c->nc; }
  else { const tg_gemm_config_f64* c = tg_gemm_cfg_f64(); *kc = c->kc; *nc = c->nc; }
}

int tilegen_x_set_gemm_blocking(int dtype, int64_t kc, int64_t nc) {
  tg_dispatch_init();
  if (kc > (1 << 16) || nc > (1 << 24)) return -1;
  int rc;
  pthread_mutex_lock(&init_lock);
  if (dtype == 0) {
    tg_gemm_config_f32 c = *current_f32();
    apply_blocking_f32(&c, kc, nc);
    rc = publish_f32(&c);
  } else {
    tg_gemm_config_f64 c = *current_f64();
    apply_blocking_f64(&c, kc, nc);
    rc = publish_f64(&c);
  }
  pthread_mutex_unlock(&init_lock);
  return rc;
}

int tilegen_x_set_gemm_main_kernel(int dtype, const char* name) {
  tg_dispatch_init();
  int ok;
  pthread_mutex_lock(&init_lock);
  if (dtype == 0) {
    tg_gemm_config_f32 c = *current_f32();
    ok = fill_f32(&c, c.isa, name);
    if (ok) { apply_blocking_f32(&c, 0, 0); ok = publish_f32(&c) == 0; }
  } else {
    tg_gemm_config_f64 c = *current_f64();
    ok = fill_f64(&c, c.isa, name);
    if (ok) { apply_blocking_f64(&c, 0, 0); ok = publish_f64(&c) == 0; }
  }
  pthread_mutex_unlock(&init_lock);
  return ok ? 0 : -1;
}

int tilegen_x_fma_probe(int isa, int dtype, int64_t iters, double* flops) {
  tg_dispatch_init();
  *flops = 0;
  if (isa < 0 || isa >= TG_ISA_COUNT || !isa_usable(isa)) return -1;
  volatile double sink = 0;
#define TG_RUN_PROBE(ISA, DTYPE, FN, FLOPS_PER_ITER)        \
  if ((ISA) == isa && (DTYPE) == dtype) {                   \
    sink = FN(iters);                                       \
    *flops = (double) iters * (double) (FLOPS_PER_ITER);    \
  }
  TG_FOREACH_FMA_PROBE(TG_RUN_PROBE)
#undef TG_RUN_PROBE
  (void) sink;
  return *flops > 0 || iters == 0 ? 0 : -1;
}

const char* tilegen_x_gemv_kernel(int dtype) {
  return dtype == 0 ? tg_gemm_cfg_f32()->gemv_name : tg_gemm_cfg_f64()->gemv_name;
}

int tilegen_x_reinit(int fake, uint32_t usable) {
  pthread_once(&atfork_once, register_atfork);
  pthread_mutex_lock(&init_lock);
  fake_features = fake;
  fake_usable = usable;
  init_locked();
  atomic_store_explicit(&initialized, 1, memory_order_release);
  pthread_mutex_unlock(&init_lock);
  return init_status;
}
