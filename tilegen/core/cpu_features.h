/* CPU feature detection: what the CPU reports and what the OS lets us use. */
#ifndef TG_CPU_FEATURES_H
#define TG_CPU_FEATURES_H

#include <stdint.h>

#include "tg_isa.h"

typedef struct tg_cpu_features {
  uint32_t reported;  /* TG_FEAT_* bits the CPU advertises (cpuid / HWCAP) */
  uint32_t usable;    /* ... of which the OS also enables the register state (XGETBV) */
} tg_cpu_features;

/* Reads the hardware; no caching, no allocation. Safe on any x86-64 or AArch64 CPU. */
void tg_cpu_detect(tg_cpu_features* out);

#endif
