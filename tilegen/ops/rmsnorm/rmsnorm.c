/* RMS normalisation of rows: tilegen_rmsnorm_f32 / _f64, their checks and the threads over
   rows. Each row is one kernel call (rmsnorm_dispatch.c picks the kernel). */
#include <math.h>
#include <stdint.h>

#include "tg_rmsnorm.h"
#include "tg_threads.h"
#include "tilegen.h"

#define TG_RMSNORM_PARALLEL_MIN 65536  /* elements below which a call runs on one thread */

typedef struct {
  const void* x;
  const void* w;
  void* y;
  int64_t rows, n, xs, ys;
  double eps;
  int dtype;
  const tg_rmsnorm_config* cfg;
} job;

static void rows_task(void* ctx, int task, int ntasks) {
  const job* j = ctx;
  const int64_t r0 = j->rows * task / ntasks, r1 = j->rows * (task + 1) / ntasks;
  for (int64_t r = r0; r < r1; r++) {
    if (j->dtype == 0)
      j->cfg->f32(j->n, (const float*) j->x + r * j->xs, j->w, (float) j->eps,
                  (float*) j->y + r * j->ys);
    else
      j->cfg->f64(j->n, (const double*) j->x + r * j->xs, j->w, j->eps,
                  (double*) j->y + r * j->ys);
  }
}

static int run(int dtype, int64_t rows, int64_t n, const void* x, int64_t xs, const void* w,
               double eps, void* y, int64_t ys) {
  if (rows < 0) return -1;
  if (n < 1) return -2;
  if (x == NULL && rows > 0) return -3;
  if (xs < n && rows > 1) return -4;
  if (!(eps >= 0) || isinf(eps)) return -6;
  if (y == NULL && rows > 0) return -7;
  if (ys < n && rows > 1) return -8;
  if (rows == 0) return 0;
  job j = {x, w, y, rows, n, xs, ys, eps, dtype, tg_rmsnorm_cfg()};
  const int64_t work = rows * n;
  int threads = work < TG_RMSNORM_PARALLEL_MIN ? 1 : tg_threads_max();
  if (threads > rows) threads = (int) rows;
  tg_parallel_run(threads, rows_task, &j);
  return 0;
}

int tilegen_rmsnorm_f32(int64_t rows, int64_t n, const float* x, int64_t x_stride,
                        const float* weight, float eps, float* y, int64_t y_stride) {
  return run(0, rows, n, x, x_stride, weight, eps, y, y_stride);
}

int tilegen_rmsnorm_f64(int64_t rows, int64_t n, const double* x, int64_t x_stride,
                        const double* weight, double eps, double* y, int64_t y_stride) {
  return run(1, rows, n, x, x_stride, weight, eps, y, y_stride);
}
