/*
 * Kernel selection, op-agnostic: CPU features, the TILEGEN_ISA cap, the usable ISAs in order,
 * and the lock and interning that families' selection code (each op's <op>_dispatch.c) builds
 * its tables with. The generated TG_FOREACH_FAMILY_SELECT list names each family's select
 * function; init and re-selection call them all, under the dispatch lock.
 * The tilegen_x_* functions are exported for tilegen's own Python layer and tests only.
 */
#ifndef TG_DISPATCH_H
#define TG_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_caches.h"
#include "tg_ukernels.h"

#include "tg_xapi.h"

/* 0 on success; -1 when the TILEGEN_ISA cap was invalid (the tables are still usable, uncapped). */
int tg_dispatch_init(void);

/* ---- for families' select functions (called with the dispatch lock held) ---- */

/* The ISAs a family may choose, best first: built here, supported by CPU and OS, within the
   cap. Returns their count (>= 1: the portable ISA is always usable). */
int tg_isa_candidates(int out[TG_ISA_COUNT]);
const char* tg_isa_name_of(int isa);
int tg_dispatch_verbose(void);     /* TILEGEN_VERBOSE is set: families log their choice */
/* This core's cache sizes, read at init before any select function runs: families derive block
   sizes and thresholds from them. */
const tg_cpu_caches* tg_caches(void);

/* Tables are published immutable: a change builds a new one and swaps a pointer, so a call
   running on another thread keeps the table it started with. tg_intern returns the one stored
   copy of cfg (size bytes) in *list, adding it if new; NULL when out of memory. Copies are
   never freed: there are as many as there are distinct choices, a handful. */
typedef struct tg_interned tg_interned;
const void* tg_intern(tg_interned** list, const void* cfg, size_t size);

void tg_dispatch_lock(void);       /* for changes after init (tuning) */
void tg_dispatch_unlock(void);

/* What an op chose, for `tilegen info` and runtime_info(): one row per (op, part, dtype),
   replaced when reported again (re-selection, tuning); `part` names a kernel besides the op's
   main one (NULL: the main one). Called with the dispatch lock held; the strings must live as
   long as the library (names from the generated tables do). Ops log their own choice under
   TILEGEN_VERBOSE (tg_dispatch_verbose). */
void tg_dispatch_report(const char* op, const char* part, const char* dtype, int isa,
                        const char* kernel);

/* ---- introspection and test hooks ---- */
TG_XAPI_FN(uint32_t, tilegen_x_features_reported, (void))
TG_XAPI_FN(uint32_t, tilegen_x_features_usable, (void))
TG_XAPI_FN(int, tilegen_x_feature_count, (void))
TG_XAPI_FN(const char*, tilegen_x_feature_name, (int bit))
TG_XAPI_FN(int, tilegen_x_isa_count, (void))
TG_XAPI_FN(const char*, tilegen_x_isa_name_of, (int isa))
TG_XAPI_FN(int, tilegen_x_isa_usable, (int isa))      /* built here and supported by CPU and OS */
TG_XAPI_FN(const char*, tilegen_x_isa_cap, (void))    /* the TILEGEN_ISA in force, or NULL */
/* Runs the ISA's FMA-throughput probe for `iters` iterations and stores the flops it executed
   in *flops (dtype 0 = f32, 1 = f64). Returns 0, or -1 when the ISA is not usable here. */
TG_XAPI_FN(int, tilegen_x_fma_probe, (int isa, int dtype, int64_t iters, double* flops))
/* The name of the probe's dtype index i ("f32", "f64", "bf16"), NULL past the last. */
TG_XAPI_FN(const char*, tilegen_x_probe_dtype, (int i))
/* The TILEGEN_*_SIZE values init ignored or clamped, one line each ("" when none, or before
   init). on_stderr 0 / 1: whether init also prints them on stderr (the default; the Python
   package turns it off before init and warns instead); -1 leaves that as it is. */
TG_XAPI_FN(const char*, tilegen_x_env_warnings, (int on_stderr))
/* The cache sizes in force (bytes) and where they came from (tg_cpu_caches.source). */
TG_XAPI_FN(const char*, tilegen_x_caches, (int64_t* l1d, int64_t* l2, int64_t* l3))
/* Row i (0 <= i < count) of the ops' reports (part "" for an op's main kernel); returns -1 past
   the end. */
TG_XAPI_FN(int, tilegen_x_choice_count, (void))
TG_XAPI_FN(int, tilegen_x_choice, (int i, const char** op, const char** part, const char** dtype, const char** isa, const char** kernel))
/* Re-run selection as if the CPU had exactly `usable` features (fake != 0), or as detected. */
TG_XAPI_FN(int, tilegen_x_reinit, (int fake, uint32_t usable))

#endif
