/* Built for the platform baseline: selection code never executes an ISA it has not checked.
   Op-agnostic: what each family selects is its driver's business (TG_FOREACH_FAMILY_SELECT). */
#define _POSIX_C_SOURCE 200809L /* posix_memalign under a strict -std=c11 too */
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
} isa_info;

#define TG_ISA_ROW(ID, NAME, ARCH, PRIO, REQ) [ID] = {NAME, ARCH, PRIO, REQ},
static const isa_info isa_table[TG_ISA_COUNT] = {TG_FOREACH_ISA(TG_ISA_ROW)};
#undef TG_ISA_ROW

static const char* const feature_names[TG_FEATURE_COUNT] = TG_FEATURE_NAMES;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int initialized;
static int init_status;
static char init_error[512];
static tg_cpu_features features;
static tg_cpu_caches caches;
static int fake_features;
static uint32_t fake_usable;
static int cap_isa = -1;
static atomic_int env_on_stderr = 1;  /* malformed TILEGEN_* values: said on stderr at init */

/* An ISA of the build's architecture (or a portable one). */
static int isa_of_arch(int isa) {
  return isa_table[isa].arch == TG_ARCH_ANY || isa_table[isa].arch == TG_BUILD_ARCH;
}

/* Its kernels are in this build: an SDK generated for `--isa neon,scalar` and built for x86-64
   holds only the scalar ones, whatever the CPU supports. */
static int isa_shipped(int isa) { return (TG_ISAS_SHIPPED >> isa) & 1u; }

static int isa_built(int isa) { return isa_of_arch(isa) && isa_shipped(isa); }

static int isa_supported(int isa) {
  return (features.usable & isa_table[isa].requires) == isa_table[isa].requires;
}

static int isa_usable(int isa) { return isa_built(isa) && isa_supported(isa); }

enum { LIST_ALL, LIST_USABLE, LIST_BUILT, LIST_MISSING };

/* ISA names, best first: all of them, the usable ones, the ones built here, or the ones this
   CPU supports that the build has no kernels for. */
static void list_isas(char* out, size_t len, int which) {
  out[0] = '\0';
  for (int prio = 1000; prio >= 0; prio--) {
    for (int i = 0; i < TG_ISA_COUNT; i++) {
      if (isa_table[i].priority != prio) continue;
      if (which == LIST_USABLE && !isa_usable(i)) continue;
      if (which == LIST_BUILT && !isa_built(i)) continue;
      if (which == LIST_MISSING && (isa_shipped(i) || !isa_of_arch(i) || !isa_supported(i)))
        continue;
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
  list_isas(usable, sizeof(usable), LIST_USABLE);
  for (int i = 0; i < TG_ISA_COUNT; i++) {
    if (strcmp(want, isa_table[i].name)) continue;
    if (!isa_of_arch(i)) {
      snprintf(init_error, sizeof(init_error),
               "TILEGEN_ISA=%s: %s is not an ISA of this CPU architecture; usable here: %s",
               env, isa_table[i].name, usable);
      return -1;
    }
    if (!isa_shipped(i)) {
      snprintf(init_error, sizeof(init_error),
               "TILEGEN_ISA=%s: this build has no %s kernels; usable here: %s", env,
               isa_table[i].name, usable);
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
  list_isas(all, sizeof(all), LIST_ALL);
  snprintf(init_error, sizeof(init_error),
           "TILEGEN_ISA=%s: unknown ISA; allowed values: %s (usable here: %s)", env, all, usable);
  return -1;
}


int tg_isa_candidates(int out[TG_ISA_COUNT]) {
  int n = 0;
  for (int prio = 1000; prio >= 0; prio--)
    for (int i = 0; i < TG_ISA_COUNT; i++) {
      if (isa_table[i].priority != prio || !isa_usable(i)) continue;
      if (cap_isa >= 0 && prio > isa_table[cap_isa].priority) continue;
      out[n++] = i;
    }
  return n;
}

const char* tg_isa_name_of(int isa) {
  return isa >= 0 && isa < TG_ISA_COUNT ? isa_table[isa].name : NULL;
}

int tg_dispatch_verbose(void) {
  const char* v = getenv("TILEGEN_VERBOSE");
  return v != NULL && v[0] != '\0' && v[0] != '0';
}

struct tg_interned {
  struct tg_interned* next;
  size_t size;
  _Alignas(64) unsigned char data[];
};

const void* tg_intern(tg_interned** list, const void* cfg, size_t size) {
  tg_interned* n = *list;
  while (n != NULL && !(n->size == size && memcmp(n->data, cfg, size) == 0)) n = n->next;
  if (n == NULL) {
    /* The struct's 64-byte alignment (its data member's) is more than malloc promises. */
    void* mem = NULL;
    if (posix_memalign(&mem, _Alignof(tg_interned), sizeof(*n) + size) != 0) return NULL;
    n = mem;
    n->size = size;
    memcpy(n->data, cfg, size);
    n->next = *list;
    *list = n;
  }
  return n->data;
}

void tg_dispatch_lock(void) {
  tg_dispatch_init();
  pthread_mutex_lock(&init_lock);
}

void tg_dispatch_unlock(void) { pthread_mutex_unlock(&init_lock); }

#define TG_MAX_CHOICES 64
typedef struct {
  const char* op;
  const char* part;  /* "" for the op's main kernel */
  const char* dtype;
  const char* kernel;
  int isa;
} choice_row;
static choice_row choices[TG_MAX_CHOICES];
static int choice_count;

void tg_dispatch_report(const char* op, const char* part, const char* dtype, int isa,
                        const char* kernel) {
  if (part == NULL) part = "";
  int i = 0;
  while (i < choice_count && (strcmp(choices[i].op, op) || strcmp(choices[i].part, part) ||
                              strcmp(choices[i].dtype, dtype)))
    i++;
  if (i == TG_MAX_CHOICES) return;
  if (i == choice_count) choice_count++;
  choices[i] = (choice_row){op, part, dtype, kernel, isa};
}

#define TG_DECLARE_SELECT(FN) void FN(void);
TG_FOREACH_FAMILY_SELECT(TG_DECLARE_SELECT)
#undef TG_DECLARE_SELECT

static void log_isas(void) {
  if (!tg_dispatch_verbose()) return;
  char usable[128], missing[128], built[128];
  list_isas(usable, sizeof(usable), LIST_USABLE);
  list_isas(missing, sizeof(missing), LIST_MISSING);
  list_isas(built, sizeof(built), LIST_BUILT);
  fprintf(stderr, "tilegen: usable ISAs: %s; cap: %s\n", usable,
          cap_isa >= 0 ? isa_table[cap_isa].name : "none");
  /* Said once, here: the families' own lines then only name kernels of the ISAs built. */
  if (missing[0])
    fprintf(stderr,
            "tilegen: this CPU supports %s, but this build has no kernels for %s (it has: %s); "
            "regenerate the SDK with --isa including %s to use them\n",
            missing, strchr(missing, ',') ? "them" : "it", built, missing);
  if (init_status != 0) fprintf(stderr, "tilegen: %s\n", init_error);
}

static void init_locked(void) {
  init_error[0] = '\0';
  if (fake_features) {
    features.reported = features.usable = fake_usable;
  } else {
    tg_cpu_detect(&features);
  }
  tg_cache_detect(&caches);
  init_status = parse_cap();
  if (init_status != 0) cap_isa = -1;  /* an invalid cap is reported, never obeyed */
  log_isas();
  choice_count = 0;
#define TG_CALL_SELECT(FN) FN();
  TG_FOREACH_FAMILY_SELECT(TG_CALL_SELECT)
#undef TG_CALL_SELECT
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
    /* Once per process: a value ignored or clamped is never silent. (The Python package turns
       these into warnings instead: tilegen_x_env_warnings.) */
    if (atomic_load(&env_on_stderr))
      for (const char* line = caches.warnings; *line;) {
        const char* end = strchr(line, '\n');
        const int len = (int) (end ? end - line : (ptrdiff_t) strlen(line));
        fprintf(stderr, "tilegen: warning: %.*s\n", len, line);
        line += len + (end != NULL);
      }
    atomic_store_explicit(&initialized, 1, memory_order_release);
  }
  pthread_mutex_unlock(&init_lock);
  return init_status;
}

int tg_dispatch_init(void) { return dispatch_init(1); }

/* ---- public ---- */

int tilegen_init(void) { return dispatch_init(0); }

const char* tilegen_init_error(void) {
  tg_dispatch_init();
  return init_error;
}

/* The best ISA in force: what every family starts its choice from. */
const char* tilegen_isa_name(void) {
  tg_dispatch_init();
  int order[TG_ISA_COUNT];
  return isa_table[tg_isa_candidates(order) ? order[0] : 0].name;
}

const char* tilegen_version(void) { return TILEGEN_VERSION; }

#if defined(__ELF__) && !defined(TG_NO_PRIVATE_HOOKS)
/* The linker's bounds of the "tg_xapi" section, where every TG_XAPI_FN hook registered itself. */
extern const tg_xapi_entry __start_tg_xapi[] __attribute__((visibility("hidden")));
extern const tg_xapi_entry __stop_tg_xapi[] __attribute__((visibility("hidden")));
#endif

void* tilegen_private_symbol(const char* name) {
#if defined(__ELF__) && !defined(TG_NO_PRIVATE_HOOKS)
  for (const tg_xapi_entry* e = __start_tg_xapi; name != NULL && e < __stop_tg_xapi; e++)
    if (strcmp(e->name, name) == 0) return (void*) e->fn;
#endif
  (void) name;
  return NULL;
}

/* ---- introspection and test hooks ---- */

const tg_cpu_caches* tg_caches(void) { return &caches; }

const char* tilegen_x_caches(int64_t* l1d, int64_t* l2, int64_t* l3) {
  tg_dispatch_init();
  const tg_cpu_caches* c = &caches;
  *l1d = c->l1d;
  *l2 = c->l2;
  *l3 = c->l3;
  return c->source;
}

const char* tilegen_x_env_warnings(int on_stderr) {
  if (on_stderr >= 0) atomic_store(&env_on_stderr, on_stderr);
  if (!atomic_load_explicit(&initialized, memory_order_acquire)) return "";
  return caches.warnings;
}

uint32_t tilegen_x_features_reported(void) { tg_dispatch_init(); return features.reported; }
uint32_t tilegen_x_features_usable(void) { tg_dispatch_init(); return features.usable; }
int tilegen_x_feature_count(void) { return TG_FEATURE_COUNT; }

const char* tilegen_x_feature_name(int bit) {
  return bit >= 0 && bit < TG_FEATURE_COUNT ? feature_names[bit] : NULL;
}

int tilegen_x_isa_count(void) { return TG_ISA_COUNT; }

const char* tilegen_x_isa_name_of(int isa) { return tg_isa_name_of(isa); }

int tilegen_x_isa_usable(int isa) {
  tg_dispatch_init();
  return isa >= 0 && isa < TG_ISA_COUNT && isa_usable(isa);
}

const char* tilegen_x_isa_cap(void) {
  tg_dispatch_init();
  return cap_isa >= 0 ? isa_table[cap_isa].name : NULL;
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

const char* tilegen_x_probe_dtype(int i) {
  static const char* const names[] = TG_PROBE_DTYPE_NAMES;
  return i >= 0 && i < (int) (sizeof(names) / sizeof(names[0])) ? names[i] : NULL;
}

int tilegen_x_choice_count(void) {
  tg_dispatch_lock();
  const int n = choice_count;
  tg_dispatch_unlock();
  return n;
}

int tilegen_x_choice(int i, const char** op, const char** part, const char** dtype,
                     const char** isa, const char** kernel) {
  tg_dispatch_lock();
  const int ok = i >= 0 && i < choice_count;
  if (ok) {
    *op = choices[i].op;
    *part = choices[i].part;
    *dtype = choices[i].dtype;
    *isa = tg_isa_name_of(choices[i].isa);
    *kernel = choices[i].kernel;
  }
  tg_dispatch_unlock();
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
