/*
 * Stress for tilegen's thread pool (tilegen/blas/threads.c), built with -fsanitize=thread by
 * tests/test_threads.py: several application threads run parallel regions of varying widths at
 * once (a busy pool makes a caller run alone), some regions nest a region inside a task, and the
 * thread count changes meanwhile. Every region must run each of its task ids exactly once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "tg_threads.h"
#include "tilegen.h"

enum { APP_THREADS = 4, ITERATIONS = 1500, MAX_IDS = 16 };

typedef struct {
  atomic_int hits[MAX_IDS];
  atomic_int width;
  int nested;
} region;

static void inner_task(void* ctx, int tid, int nt) {
  region* r = ctx;
  atomic_fetch_add(&r->hits[tid], 1);
  atomic_store(&r->width, nt);
}

/* Each task id of the region's width ran exactly once, and no other. */
static void check(region* r, int want, const char* what) {
  const int nt = atomic_load(&r->width);
  if (nt < 1 || nt > want) {
    fprintf(stderr, "%s region of %d threads for want=%d\n", what, nt, want);
    exit(2);
  }
  for (int t = 0; t < MAX_IDS; t++) {
    if (atomic_load(&r->hits[t]) != (t < nt)) {
      fprintf(stderr, "%s region: task id %d ran %d times in a region of %d\n", what, t,
              atomic_load(&r->hits[t]), nt);
      exit(2);
    }
  }
}

static void task(void* ctx, int tid, int nt) {
  region* r = ctx;
  atomic_fetch_add(&r->hits[tid], 1);
  atomic_store(&r->width, nt);
  if (r->nested) { /* a region inside a task: alone when the pool runs the outer one */
    region inner = {0};
    tg_parallel_run(4, inner_task, &inner);
    check(&inner, nt > 1 ? 1 : 4, "nested");
  }
}

static void* app(void* arg) {
  const long id = (long) arg;
  for (int i = 0; i < ITERATIONS; i++) {
    region r = {0};
    r.nested = i % 7 == 0;
    const int want = 1 + (int) ((i + id) % 4);
    tg_parallel_run(want, task, &r);
    check(&r, want, "outer");
    if (i % 300 == 0) tilegen_set_num_threads(1 + (int) ((i / 300 + id) % 3));
  }
  return NULL;
}

int main(void) {
  pthread_t t[APP_THREADS];
  for (long i = 0; i < APP_THREADS; i++) pthread_create(&t[i], NULL, app, (void*) i);
  for (int i = 0; i < APP_THREADS; i++) pthread_join(t[i], NULL);
  puts("ok");
  return 0;
}
