/*
 * The GEMM family's dispatch tables: per dtype, the kernel sets of the best usable ISA, built
 * from the generated TG_FOREACH_GEMM_UKERNEL_<dtype> / TG_FOREACH_GEMV_UKERNEL_<dtype> lists
 * and the ISA's default blocking (TG_GEMM_BLOCKING), published immutable (see dispatch.h).
 */
#ifndef TG_GEMM_DISPATCH_H
#define TG_GEMM_DISPATCH_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

#define TG_MAX_MR 32

/* The kernels of one A layout and one NR: by_rows[r] serves a panel of r rows (1 <= r <= mr),
   the smallest registered tile that covers them; mr == 0 when the ISA has no such kernels. */
#define TG_DEFINE_GEMM_CONFIG(DT, T)                                                      \
  typedef struct tg_gemm_set_##DT {                                                       \
    int mr, nr;                                                                           \
    tg_##DT##_packb_fn packb;  /* B panels of this NR */                                  \
    tg_##DT##_gemm_ukernel_fn by_rows[TG_MAX_MR + 1];                                     \
    tg_##DT##_packa_fn packa_by_rows[TG_MAX_MR + 1];  /* "packed" layout only */          \
    int tile_mr[TG_MAX_MR + 1];                                                           \
    const char* name_by_rows[TG_MAX_MR + 1];                                              \
  } tg_gemm_set_##DT;                                                                     \
                                                                                          \
  typedef struct tg_gemm_config_##DT {                                                    \
    int isa;                  /* TG_ISA_* */                                              \
    int64_t kc, nc;           /* cache blocking: kc rows of B x nc columns stay in L2 */  \
    int64_t l1d, l2;          /* this core's cache sizes (bytes), for the thresholds */   \
    int64_t stream_rows;      /* rows of an A streamed from beyond L2 that one kernel     \
                                 call reads at once, each a prefetch stream (tuned) */    \
    int64_t b_inner_rows;     /* a big B under at most this many rows of C is read a      \
                                 column panel at a time for all of them (tuned) */        \
    tg_gemm_set_##DT packed;  /* A(i, kk) at a[kk*cs_a + i]: column-major A, packed A */  \
    tg_gemm_set_##DT rows;    /* A(i, kk) at a[i*rs_a + kk]: row-major A, row panels */   \
    tg_gemm_set_##DT narrow;  /* "rows" kernels of half the NR, for products with few columns */ \
    tg_gemm_set_##DT rows_stream, narrow_stream;  /* the same, panels of <= stream_rows rows */ \
    tg_##DT##_packr_fn packr;                                                             \
    tg_##DT##_epi_fn epi;     /* bias + activation over a row of C, or NULL */            \
    /* y = A x with A's rows contiguous: the dot-form GEMV kernel of the same ISA. */      \
    tg_##DT##_gemv_ukernel_fn gemv;                                                       \
    int gemv_mr;                                                                          \
    const char* gemv_name;                                                                \
    /* y = x B with B's rows contiguous: the axpy-form GEMV kernel. */                     \
    tg_##DT##_gemv_ukernel_fn gemv_axpy;                                                  \
    const char* gemv_axpy_name;                                                           \
  } tg_gemm_config_##DT;

TG_DEFINE_GEMM_CONFIG(f32, float)
TG_DEFINE_GEMM_CONFIG(f64, double)

/* The current tables (initialising the dispatch on first use). */
const tg_gemm_config_f32* tg_gemm_cfg_f32(void);
const tg_gemm_config_f64* tg_gemm_cfg_f64(void);

/* The family's select function (TG_FOREACH_FAMILY_SELECT): fills both dtypes' tables. */
void tg_gemm_select(void);

/* ---- introspection and tuning hooks (dtype: 0 = f32, 1 = f64) ---- */
TG_XAPI_FN(int, tilegen_x_gemm_isa, (int dtype))
TG_XAPI_FN(void, tilegen_x_gemm_tile, (int dtype, int layout, int* mr, int* nr))
/* The kernel serving `rows` rows (0: the main tile) of kernel set 0 (packed), 1 (rows) or 2
   (narrow). */
TG_XAPI_FN(const char*, tilegen_x_gemm_kernel, (int dtype, int layout, int rows))
TG_XAPI_FN(void, tilegen_x_gemm_blocking, (int dtype, int64_t* kc, int64_t* nc))
/* Tuning: block sizes (nc rounded to NR; values < 1 keep the current one) and the main tile of
   a layout, chosen by name among this ISA's production kernels. Return 0, or -1 if rejected. */
TG_XAPI_FN(int, tilegen_x_set_gemm_blocking, (int dtype, int64_t kc, int64_t nc))
TG_XAPI_FN(int, tilegen_x_set_gemm_main_kernel, (int dtype, const char* name))
/* An A beyond L2 under few columns of C is read `rows` rows at a time, each a prefetch stream:
   how many a core follows well differs by CPU, so `tilegen tune` sets it (1..64; 0 restores
   the built-in height). Returns 0, or -1 if out of range. */
TG_XAPI_FN(int64_t, tilegen_x_gemm_stream_rows, (int dtype))
TG_XAPI_FN(int, tilegen_x_set_gemm_stream_rows, (int dtype, int64_t rows))
/* A B beyond L2 under at most `rows` rows of C (1..TG_B_INNER_ROWS_MAX; 1 in effect never, 0
   restores the built-in 48) is read a column panel at a time, each used by all the rows from
   L1: up to how many rows that beats blocking B differs by CPU, so `tilegen tune` sets it.
   Returns 0, or -1 if out of range. */
TG_XAPI_FN(int64_t, tilegen_x_gemm_b_inner_rows, (int dtype))
TG_XAPI_FN(int, tilegen_x_set_gemm_b_inner_rows, (int dtype, int64_t rows))
#define TG_B_INNER_ROWS_MAX 256   /* the driver's per-panel arrays (gemm_impl.h) hold this many */
TG_XAPI_FN(const char*, tilegen_x_gemv_kernel, (int dtype, int form))  /* 0 dot, 1 axpy */

#endif
