/* Per-thread scratch buffers: allocated on first use (never at import), 64-byte aligned, kept and
   reused across calls, grown when a larger problem needs it, freed when the thread exits.
   Each op requests its slots by name (its op.yaml's workspace: TG_WS_<OP>_<NAME>, generated in
   tg_ops.h) so that an op calling another never hands out the same buffer twice. */
#ifndef TG_WORKSPACE_H
#define TG_WORKSPACE_H

#include <stdint.h>

#include "tg_ops.h"
#include "tg_xapi.h"

#include <stddef.h>

/* At least one slot, for a build whose ops request none. */
#define TG_WS_ARRAY (TG_WS_SLOTS > 0 ? TG_WS_SLOTS : 1)

/* A buffer of at least `bytes` for this thread and slot, or NULL if memory is exhausted. */
void* tg_workspace(int slot, size_t bytes);

/* Test hook (exported for tilegen's own tests): while on, every tg_workspace call returns NULL,
   so the callers' fallbacks for exhausted memory can be checked. */
TG_XAPI_FN(void, tilegen_x_workspace_fail, (int on))

#endif
