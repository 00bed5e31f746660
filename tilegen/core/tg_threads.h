/*
 * tilegen's own thread pool (no OpenMP: embedders need no runtime, and libgomp hangs in forked
 * children). A region's tasks go to whichever threads claim them first, the caller included, so
 * a worker that is slow to start (asleep, or its core busy with another process) costs nothing:
 * the caller runs what is left. Workers are created on first use, spin briefly after a region
 * and then sleep on a condition variable. One region runs at a time: a second caller
 * (another application thread, or a nested call from inside a region) runs its work alone.
 * Fork-safe: the child starts with no workers and creates new ones when it needs them.
 * Unload-safe: a destructor joins the workers before dlclose unmaps their code.
 */
#ifndef TG_THREADS_H
#define TG_THREADS_H

#include <stdint.h>

#include "tg_xapi.h"

/* Runs fn(ctx, task, ntasks) once for every task in [0, ntasks), where ntasks <= want is what
   the pool could provide (1 when busy), each on whichever thread claims it. Workers inherit the
   caller's floating-point control state. */
typedef void (*tg_task_fn)(void* ctx, int task, int ntasks);
void tg_parallel_run(int want, tg_task_fn fn, void* ctx);

int tg_threads_max(void);  /* the thread count in force: tilegen_set_num_threads or the default */

/* Test hook (a private hook, for tilegen's own tests): how many tasks worker threads, not the threads
   that called tg_parallel_run, have run since the library was loaded. A test that means to
   exercise threads proves with it that a worker computed part of the result. */
TG_XAPI_FN(uint64_t, tilegen_x_worker_tasks, (void))

#endif
