/* Per-thread packing buffers: allocated on first use (never at import), 64-byte aligned, kept and
   reused across calls, grown when a larger problem needs it, freed when the thread exits. */
#ifndef TG_WORKSPACE_H
#define TG_WORKSPACE_H

#include <stddef.h>

enum { TG_WS_A = 0, TG_WS_B = 1, TG_WS_EDGE = 2, TG_WS_SLOTS = 3 };

/* A buffer of at least `bytes` for this thread and slot, or NULL if memory is exhausted. */
void* tg_workspace(int slot, size_t bytes);

#endif
