/*
 * The image filters' dispatch table and drivers (filter.py has the passes).
 * The table is one ISA's set of passes, published immutable (see dispatch.h).
 */
#ifndef TG_FILTER_H
#define TG_FILTER_H

#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"

typedef struct tg_filter_config {
  int isa;                   /* TG_ISA_* */
  tg_u8_vfilt_fn vfilt;
  tg_u8_vsum_fn vsum;
  tg_u8_hfilt_fn hfilt;
  tg_u8_hsum_fn hsum;
  tg_f32_filt2d_fn filt2d;
  tg_u8_tof32_fn tof32;
  tg_u8_fround_fn fround;
  tg_u8_sharpen_fn sharpen;
  tg_u8_vupd_fn vupd;
  int mr[TG_FILTER_KIND_COUNT], nr[TG_FILTER_KIND_COUNT];
  const char* name[TG_FILTER_KIND_COUNT];
} tg_filter_config;

/* The current table (initialising the dispatch on first use). */
const tg_filter_config* tg_filter_cfg(void);

/* The family's select function (TG_FOREACH_FAMILY_SELECT). */
void tg_filter_select(void);

/* The kernel serving pass `kind` (TG_FILTER_KIND_*), for tests and `tilegen info`. */
TG_XAPI_FN(const char*, tilegen_x_filter_kernel, (int kind))
/* The ISA whose kernel set the filters run: `isa`, one of tilegen_x_filter_isa's (tilegen
   tune's choice), or the built-in (the best) for NULL or ""; 0, or -1 when it is not one. */
TG_XAPI_FN(int, tilegen_x_set_filter_isa, (const char* isa))
/* The i-th usable ISA, best first, with every pass; NULL past the last. */
TG_XAPI_FN(const char*, tilegen_x_filter_isa, (int i))

#endif
