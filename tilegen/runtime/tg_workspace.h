/* Per-thread scratch buffers: allocated on first use (never at import), 64-byte aligned, kept and
   reused across calls, grown when a larger problem needs it, freed when the thread exits.
   Each op family owns a few slots (named in its driver header) so that an op calling another
   (a convolution calling GEMM) never hands out the same buffer twice. */
#ifndef TG_WORKSPACE_H
#define TG_WORKSPACE_H

#include <stdint.h>

#include "tg_xapi.h"

#include <stddef.h>

#define TG_WS_SLOTS 8

/* A buffer of at least `bytes` for this thread and slot, or NULL if memory is exhausted. */
void* tg_workspace(int slot, size_t bytes);

/* Test hook (exported for tilegen's own tests): while on, every tg_workspace call returns NULL,
   so the callers' fallbacks for exhausted memory can be checked. */
TG_XAPI_FN(void, tilegen_x_workspace_fail, (int on))

#endif
