#define _GNU_SOURCE
#include "tg_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tilegen.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define TG_FP_STATE_T unsigned int
#define TG_FP_STATE_GET() _mm_getcsr()
#define TG_FP_STATE_SET(s) _mm_setcsr(s)
#define TG_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define TG_FP_STATE_T uint64_t
static inline uint64_t tg_get_fpcr(void) { uint64_t v; __asm__ volatile("mrs %0, fpcr" : "=r"(v)); return v; }
static inline void tg_set_fpcr(uint64_t v) { __asm__ volatile("msr fpcr, %0" : : "r"(v)); }
#define TG_FP_STATE_GET() tg_get_fpcr()
#define TG_FP_STATE_SET(s) tg_set_fpcr(s)
#define TG_CPU_RELAX() __asm__ volatile("yield")
#else
#define TG_FP_STATE_T int
#define TG_FP_STATE_GET() 0
#define TG_FP_STATE_SET(s) ((void) (s))
#define TG_CPU_RELAX() ((void) 0)
#endif

#define TG_MAX_THREADS 256
#define TG_SPIN_NS 50000 /* idle workers spin this long after a region, then sleep */

static struct {
  pthread_mutex_t region;   /* held by the caller for the whole parallel region */
  pthread_mutex_t mu;       /* guards sleeping/waking */
  pthread_cond_t wake;      /* workers wait for a new generation */
  pthread_cond_t done;      /* the caller waits for the last task */
  atomic_uint_fast64_t generation;
  /* The next unclaimed task of the current region: generation (high 32 bits), task count (16)
     and task index (low 16). Whoever wins a compare-and-swap from index i to i+1 runs task i. */
  atomic_uint_fast64_t ticket;
  atomic_int pending;       /* tasks of the current region not finished yet */
  tg_task_fn fn;            /* the region; stable while any of its tasks is unfinished */
  void* ctx;
  TG_FP_STATE_T fp_state;
  int nworkers;             /* workers started (thread ids 1..nworkers) */
  atomic_int stop;          /* set by pool_shutdown: workers return (a late one may be reading) */
  uint64_t start_generation[TG_MAX_THREADS];
  pthread_t threads[TG_MAX_THREADS];
} pool = {
  .region = PTHREAD_MUTEX_INITIALIZER,
  .mu = PTHREAD_MUTEX_INITIALIZER,
  .wake = PTHREAD_COND_INITIALIZER,
  .done = PTHREAD_COND_INITIALIZER,
};

static atomic_int requested_threads; /* 0: default */
static atomic_uint_fast64_t worker_tasks; /* tasks run by workers, not callers (a test hook) */
static int default_threads;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int env_int(const char* name) {
  const char* v = getenv(name);
  if (v == NULL) return 0;
  char* end;
  long x = strtol(v, &end, 10);  /* OMP_NUM_THREADS may be a list: take the first level */
  return end != v && x > 0 ? (int) (x > TG_MAX_THREADS ? TG_MAX_THREADS : x) : 0;
}

static void init_default(void) {
  int n = env_int("TILEGEN_NUM_THREADS");
  if (n == 0) n = env_int("OMP_NUM_THREADS");
#if defined(__linux__)
  if (n == 0) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
  }
#endif
  if (n == 0) n = (int) sysconf(_SC_NPROCESSORS_ONLN);
  default_threads = n < 1 ? 1 : (n > TG_MAX_THREADS ? TG_MAX_THREADS : n);
}

int tg_threads_max(void) {
  const int r = atomic_load_explicit(&requested_threads, memory_order_relaxed);
  if (r > 0) return r;
  pthread_once(&default_once, init_default);
  return default_threads;
}

void tilegen_set_num_threads(int n) {
  atomic_store(&requested_threads, n < 1 ? 0 : (n > TG_MAX_THREADS ? TG_MAX_THREADS : n));
}

int tilegen_get_num_threads(void) { return tg_threads_max(); }

uint64_t tilegen_x_worker_tasks(void) {
  return atomic_load_explicit(&worker_tasks, memory_order_relaxed);
}

static inline uint64_t ticket_of(uint64_t generation, int ntasks) {
  return (generation << 32) | ((uint64_t) ntasks << 16);
}

/* Claims and runs tasks of the region of `generation` until none is left.
   A thread reads the region's fields only after winning a task, and the caller keeps them in
   place until every task has finished, so a worker that wakes late (after the caller ran its
   tasks, or after the region ended) reads nothing stale -- and nobody waits for it. */
static void run_tasks(uint64_t generation, int set_fp_state) {
  for (;;) {
    uint64_t t = atomic_load_explicit(&pool.ticket, memory_order_acquire);
    const int ntasks = (int) ((t >> 16) & 0xffff), index = (int) (t & 0xffff);
    if ((t >> 32) != (generation & 0xffffffffu) || index >= ntasks) return;
    if (!atomic_compare_exchange_weak_explicit(&pool.ticket, &t, t + 1, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    if (set_fp_state) TG_FP_STATE_SET(pool.fp_state);
    pool.fn(pool.ctx, index, ntasks);
    if (set_fp_state) atomic_fetch_add_explicit(&worker_tasks, 1, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&pool.mu);  /* the last task: the caller may be asleep */
      pthread_cond_signal(&pool.done);
      pthread_mutex_unlock(&pool.mu);
    }
  }
}

/* Workers wake for every new region and take whatever tasks are left; the caller takes the
   rest itself, so a worker that is slow to wake (descheduled, or asleep) delays nothing. */
static void* worker_main(void* arg) {
  const int tid = (int) (intptr_t) arg;
  uint64_t seen = pool.start_generation[tid];
  for (;;) {
    uint64_t g = atomic_load_explicit(&pool.generation, memory_order_acquire);
    if (g == seen) {
      const uint64_t until = now_ns() + TG_SPIN_NS;
      for (int i = 0; g == seen; i++) {
        TG_CPU_RELAX();
        g = atomic_load_explicit(&pool.generation, memory_order_acquire);
        if ((i & 255) == 255 && now_ns() > until) break;
      }
      if (g == seen) {
        pthread_mutex_lock(&pool.mu);
        while ((g = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen)
          pthread_cond_wait(&pool.wake, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
      }
    }
    seen = g;
    if (atomic_load_explicit(&pool.stop, memory_order_acquire)) return NULL;
    run_tasks(g, 1);
  }
  return NULL;
}

/* The child of a fork has only the forking thread: forget the workers, rebuild the locks. */
static void atfork_prepare(void) { pthread_mutex_lock(&pool.region); }
static void atfork_parent(void) { pthread_mutex_unlock(&pool.region); }
static void atfork_child(void) {
  pthread_mutex_init(&pool.region, NULL);
  pthread_mutex_init(&pool.mu, NULL);
  pthread_cond_init(&pool.wake, NULL);
  pthread_cond_init(&pool.done, NULL);
  pool.nworkers = 0;
  atomic_store(&pool.pending, 0);
}
static void register_atfork(void) { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

/* Runs at dlclose (and at exit): the workers execute this library's code, so they must be gone
   before it is unmapped -- a worker still spinning after a region would jump into unmapped
   memory. A region running on another thread (exit() racing a product) is left alone: then the
   process is ending anyway and nothing is unmapped under it. Priority 200: before the
   workspace key goes (workspace.c, 101), so the workers' exits still free their buffers. */
__attribute__((destructor(200))) static void pool_shutdown(void) {
  if (pthread_mutex_trylock(&pool.region) != 0) return;
  if (pool.nworkers > 0) {
    atomic_store_explicit(&pool.stop, 1, memory_order_release);
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add_explicit(&pool.generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int tid = 1; tid <= pool.nworkers; tid++) pthread_join(pool.threads[tid], NULL);
    pool.nworkers = 0;
    atomic_store_explicit(&pool.stop, 0, memory_order_release);
  }
  pthread_mutex_unlock(&pool.region);
}

/* Starts workers up to `want - 1`; returns how many threads (caller included) are available. */
static int ensure_workers(int want) {
  while (pool.nworkers < want - 1) {
    const int tid = pool.nworkers + 1;
    pool.start_generation[tid] = atomic_load(&pool.generation);
    if (pthread_create(&pool.threads[tid], NULL, worker_main, (void*) (intptr_t) tid) != 0) break;
    pool.nworkers++;
  }
  return pool.nworkers + 1 < want ? pool.nworkers + 1 : want;
}

void tg_parallel_run(int want, tg_task_fn fn, void* ctx) {
  if (want > TG_MAX_THREADS) want = TG_MAX_THREADS;
  if (want <= 1) {
    fn(ctx, 0, 1);
    return;
  }
  /* Before the region lock is first taken: a fork racing the first region must find the
     handlers in place, or the child inherits a locked region and never uses threads. */
  pthread_once(&atfork_once, register_atfork);
  if (pthread_mutex_trylock(&pool.region) != 0) {
    fn(ctx, 0, 1);
    return;
  }
  const int n = ensure_workers(want);
  if (n <= 1) {
    pthread_mutex_unlock(&pool.region);
    fn(ctx, 0, 1);
    return;
  }
  pool.fn = fn;
  pool.ctx = ctx;
  pool.fp_state = TG_FP_STATE_GET();
  atomic_store_explicit(&pool.pending, n, memory_order_relaxed);
  const uint64_t g = atomic_load_explicit(&pool.generation, memory_order_relaxed) + 1;
  atomic_store_explicit(&pool.ticket, ticket_of(g, n), memory_order_release);
  pthread_mutex_lock(&pool.mu);
  atomic_store_explicit(&pool.generation, g, memory_order_release);
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.mu);

  run_tasks(g, 0);  /* the caller's state is the region's: nothing to copy */

  /* Tasks the workers won may still run: wait for them (their fields, ctx included, must stay). */
  if (atomic_load_explicit(&pool.pending, memory_order_acquire) != 0) {
    const uint64_t until = now_ns() + TG_SPIN_NS;
    for (int i = 0; atomic_load_explicit(&pool.pending, memory_order_acquire) != 0; i++) {
      TG_CPU_RELAX();
      if ((i & 255) == 255 && now_ns() > until) {
        pthread_mutex_lock(&pool.mu);
        while (atomic_load_explicit(&pool.pending, memory_order_acquire) != 0)
          pthread_cond_wait(&pool.done, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
        break;
      }
    }
  }
  pthread_mutex_unlock(&pool.region);
}
