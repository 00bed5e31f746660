/* Cache sizes of one core, for the block sizes and thresholds that follow from them. */
#ifndef TG_CPU_CACHES_H
#define TG_CPU_CACHES_H

#include <stdint.h>

typedef struct tg_cpu_caches {
  int64_t l1d, l2, l3;  /* bytes; l2 and l3 as one core sees them (a shared cache counted whole) */
  const char* source;   /* where they came from: "sysfs", "cpuid", "TILEGEN_*_SIZE" or "default" */
  char warnings[1024];  /* one line per TILEGEN_*_SIZE ignored or clamped; "" when none */
} tg_cpu_caches;

/* Sizes used when the OS and CPU tell nothing: a small core's, so nothing overfills. */
#define TG_DEFAULT_L1D_BYTES 32768
#define TG_DEFAULT_L2_BYTES 262144
/* The bounds of an override: no data cache is smaller than a page or (per core) over 1 GiB. */
#define TG_CACHE_MIN_BYTES ((int64_t) 4096)
#define TG_CACHE_MAX_BYTES ((int64_t) 1 << 30)

/* Reads the OS (Linux sysfs), then the CPU (x86 cpuid), then the defaults; TILEGEN_L1D_SIZE,
   TILEGEN_L2_SIZE and TILEGEN_L3_SIZE override what was read, for machines whose
   virtualisation reports wrong sizes and for tests: bytes, or with K, M or G (binary, any case,
   optionally followed by B or iB: 48K, 2MB, 1MiB), clamped to [4K, 1G] (L3 0: none); a value
   that is not a size is ignored. Each one ignored or clamped adds a line to `warnings`. No
   allocation. */
void tg_cache_detect(tg_cpu_caches* out);

#endif
