/* Cache sizes of one core, for the block sizes and thresholds that follow from them. */
#ifndef TG_CPU_CACHES_H
#define TG_CPU_CACHES_H

#include <stdint.h>

typedef struct tg_cpu_caches {
  int64_t l1d, l2, l3;  /* bytes; l2 and l3 as one core sees them (a shared cache counted whole) */
  const char* source;   /* where they came from: "sysfs", "cpuid", "TILEGEN_*_SIZE" or "default" */
} tg_cpu_caches;

/* Sizes used when the OS and CPU tell nothing: a small core's, so nothing overfills. */
#define TG_DEFAULT_L1D_BYTES 32768
#define TG_DEFAULT_L2_BYTES 262144

/* Reads the OS (Linux sysfs), then the CPU (x86 cpuid), then the defaults; TILEGEN_L1D_SIZE and
   TILEGEN_L2_SIZE (bytes, or with a K or M suffix) override what was read, for machines whose
   virtualisation reports wrong sizes and for tests. No allocation. */
void tg_cache_detect(tg_cpu_caches* out);

#endif
