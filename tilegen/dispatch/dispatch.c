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
  int64_t blocking[2][3];  /* [dtype][mc, kc, nc] */
} isa_info;

#define TG_ISA_ROW(ID, NAME, ARCH, PRIO, REQ, M32, K32, N32, M64, K64, N64) \
  [ID] = {NAME, ARCH, PRIO, REQ, {{M32, K32, N32}, {M64, K64, N64}}},
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
   builds a new one and swaps the pointer, so a GEMM that is running on another thread keeps the
   table it started with (rewriting the table in place let such a GEMM read a by_rows[] entry
   the new, smaller tile had cleared: a NULL call). Configurations are interned and never freed;
   there are only as many as there are distinct choices (kernel x blocking), a handful. */
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

/* Best usable ISA within the cap that has production kernels for the dtype. */
#define TG_DEFINE_FILL(DT)                                                                      \
  static int fill_##DT(tg_gemm_config_##DT* cfg, int isa, const char* only) {                  \
    memset(cfg, 0, sizeof(*cfg));                                                              \
    cfg->isa = isa;                                                                            \
    struct { int mr, nr; tg_##DT##_gemm_ukernel_fn fn; tg_##DT##_packa_fn pa;                  \
             tg_##DT##_packb_fn pb; const char* name; } k[TG_MAX_MR + 1];                      \
    int count = 0, main_mr = 0;                                                                \
    TG_FOREACH_GEMM_UKERNEL_##DT(TG_COLLECT)                                                   \
    if (count == 0) return 0;                                                                  \
    for (int i = 0; i < count; i++) if (k[i].mr > main_mr) main_mr = k[i].mr;                 \
    if (only) { /* a chosen main tile: keep it and the smaller tiles */                        \
      main_mr = 0;                                                                             \
      for (int i = 0; i < count; i++) if (!strcmp(k[i].name, only)) main_mr = k[i].mr;        \
      if (main_mr == 0) return 0;                                                              \
    }                                                                                          \
    cfg->mr = main_mr;                                                                         \
    for (int r = 1; r <= main_mr; r++) {                                                       \
      int best = -1;                                                                           \
      for (int i = 0; i < count; i++)                                                          \
        if (k[i].mr >= r && k[i].mr <= main_mr && (best < 0 || k[i].mr < k[best].mr)) best = i; \
      cfg->by_rows[r] = k[best].fn;                                                            \
      cfg->packa_by_rows[r] = k[best].pa;                                                      \
      cfg->tile_mr[r] = k[best].mr;                                                            \
      cfg->name_by_rows[r] = k[best].name;                                                     \
      cfg->nr = k[best].nr;                                                                    \
      cfg->packb = k[best].pb;                                                                 \
    }                                                                                          \
    return 1;                                                                                  \
  }

#define TG_COLLECT(ISA, MR, NR, U, EPI, PROD, FN, PA, PB, NAME)                  \
  if ((ISA) == isa && (PROD) && (EPI) == 0u && count <= TG_MAX_MR && (MR) <= TG_MAX_MR) { \
    k[count].mr = (MR); k[count].nr = (NR); k[count].fn = FN; k[count].pa = PA;        \
    k[count].pb = PB; k[count].name = NAME; count++;                                   \
  }

TG_DEFINE_FILL(f32)
TG_DEFINE_FILL(f64)
#undef TG_COLLECT

static int64_t round_to(int64_t v, int64_t unit) {
  v = v / unit * unit;
  return v < unit ? unit : v;
}

#define TG_DEFINE_APPLY_BLOCKING(DT, IDX)                                                  \
  static void apply_blocking_##DT(tg_gemm_config_##DT* cfg, int64_t mc, int64_t kc,       \
                                  int64_t nc) {                                           \
    const int64_t* d = isa_table[cfg->isa].blocking[IDX];                                 \
    cfg->mc = round_to(mc > 0 ? mc : (cfg->mc > 0 ? cfg->mc : d[0]), cfg->mr);            \
    cfg->kc = kc > 0 ? kc : (cfg->kc > 0 ? cfg->kc : d[1]);                               \
    cfg->nc = round_to(nc > 0 ? nc : (cfg->nc > 0 ? cfg->nc : d[2]), cfg->nr);            \
  }
TG_DEFINE_APPLY_BLOCKING(f32, 0)
TG_DEFINE_APPLY_BLOCKING(f64, 1)

#define TG_DEFINE_SELECT(DT)                                                                 \
  static void select_##DT(void) {                                                          \
    tg_gemm_config_##DT c;                                                                 \
    for (int prio = 1000; prio >= 0; prio--)                                               \
      for (int i = 0; i < TG_ISA_COUNT; i++) {                                             \
        if (isa_table[i].priority != prio || !isa_usable(i)) continue;                     \
        if (cap_isa >= 0 && prio > isa_table[cap_isa].priority) continue;                  \
        if (fill_##DT(&c, i, NULL)) {                                                      \
          apply_blocking_##DT(&c, 0, 0, 0);                                                \
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
  fprintf(stderr, "tilegen: f32 gemm: %s, %s (MC=%lld KC=%lld NC=%lld)\n",
          isa_table[c32->isa].name, c32->name_by_rows[c32->mr], (long long) c32->mc,
          (long long) c32->kc, (long long) c32->nc);
  fprintf(stderr, "tilegen: f64 gemm: %s, %s (MC=%lld KC=%lld NC=%lld)\n",
          isa_table[c64->isa].name, c64->name_by_rows[c64->mr], (long long) c64->mc,
          (long long) c64->kc, (long long) c64->nc);
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

void tilegen_x_gemm_tile(int dtype, int* mr, int* nr) {
  if (dtype == 0) { const tg_gemm_config_f32* c = tg_gemm_cfg_f32(); *mr = c->mr; *nr = c->nr; }
  else { const tg_gemm_config_f64* c = tg_gemm_cfg_f64(); *mr = c->mr; *nr = c->nr; }
}

const char* tilegen_x_gemm_kernel(int dtype, int rows) {
  if (dtype == 0) {
    const tg_gemm_config_f32* c = tg_gemm_cfg_f32();
    return rows >= 0 && rows <= c->mr ? c->name_by_rows[rows ? rows : c->mr] : NULL;
  }
  const tg_gemm_config_f64* c = tg_gemm_cfg_f64();
  return rows >= 0 && rows <= c->mr ? c->name_by_rows[rows ? rows : c->mr] : NULL;
}

void tilegen_x_gemm_blocking(int dtype, int64_t* mc, int64_t* kc, int64_t* nc) {
  if (dtype == 0) { const tg_gemm_config_f32* c = tg_gemm_cfg_f32(); *mc = c->mc; *kc = c->kc; *nc = c->nc; }
  else { const tg_gemm_config_f64* c = tg_gemm_cfg_f64(); *mc = c->mc; *kc = c->kc; *nc = c->nc; }
}

int tilegen_x_set_gemm_blocking(int dtype, int64_t mc, int64_t kc, int64_t nc) {
  tg_dispatch_init();
  if (mc > (1 << 20) || kc > (1 << 16) || nc > (1 << 24)) return -1;
  int rc;
  pthread_mutex_lock(&init_lock);
  if (dtype == 0) {
    tg_gemm_config_f32 c;
    memcpy(&c, current_f32(), sizeof(c));
    apply_blocking_f32(&c, mc, kc, nc);
    rc = publish_f32(&c);
  } else {
    tg_gemm_config_f64 c;
    memcpy(&c, current_f64(), sizeof(c));
    apply_blocking_f64(&c, mc, kc, nc);
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
    const tg_gemm_config_f32* cur = current_f32();
    tg_gemm_config_f32 c;
    ok = fill_f32(&c, cur->isa, name);
    if (ok) {
      c.mc = cur->mc; c.kc = cur->kc; c.nc = cur->nc;
      apply_blocking_f32(&c, 0, 0, 0);
      ok = publish_f32(&c) == 0;
    }
  } else {
    const tg_gemm_config_f64* cur = current_f64();
    tg_gemm_config_f64 c;
    ok = fill_f64(&c, cur->isa, name);
    if (ok) {
      c.mc = cur->mc; c.kc = cur->kc; c.nc = cur->nc;
      apply_blocking_f64(&c, 0, 0, 0);
      ok = publish_f64(&c) == 0;
    }
  }
  pthread_mutex_unlock(&init_lock);
  return ok ? 0 : -1;
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
