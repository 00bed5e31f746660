/*
 * What the micro-kernel testers share: guarded allocations (an object ends exactly where a
 * PROT_NONE page starts, or starts right where one ends, so any access past either end faults;
 * buffers hold exactly the elements a kernel may touch), deterministic inputs, prime
 * strides, the relative tolerance, and the run-time ISA check (exit 77 when the CPU lacks it).
 * Each tester defines T (the element type) before including this file.
 */
#ifndef TG_UKERNEL_TESTER_H
#define TG_UKERNEL_TESTER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "guard_pages.h"
#include "tg_isa.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)

/* Relative tolerance per sqrt(k), against the sum of |products|. */
#define TOL (sizeof(T) == 8 ? 1e-12 : 1e-5)

/* Where guarded() puts the next object (guard_pages.h): against the page behind it (0) or the
   one in front of it (1). guard_alternate() flips it call by call, so that over a tester's case
   matrix every buffer is checked both ways. */
static int guard_front = 0;
static inline void guard_alternate(void) {
  static long calls = 0;
  guard_front = (int) (calls++ & 1);
}

static inline T* guarded(size_t count, region* r) {
  return (T*) guarded_bytes((count ? count : 1) * sizeof(T), guard_front, r);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static inline double uniform(void) {  /* U(-1, 1) */
  rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
  return (double) (rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static inline int64_t next_prime(int64_t x) {
  for (;; x++) {
    int prime = x > 1;
    for (int64_t d = 2; d * d <= x && prime; d++) prime = (x % d) != 0;
    if (prime) return x;
  }
}

/* The kernel's ISA (-DTG_ISA_ID=TG_ISA_<NAME>) must be usable here, OS state included: the
   library's own detector (cpu_features.c, built without ISA flags) and ISA table decide, so the
   tester knows exactly the features the dispatcher knows. */
static inline int cpu_supported(void) {
  static const char* const names[TG_FEATURE_COUNT] = TG_FEATURE_NAMES;
  uint32_t need = 0;
#define TG_NEED(ID, NAME, ARCH, PRIO, REQ) if ((ID) == (TG_ISA_ID)) need = (REQ);
  TG_FOREACH_ISA(TG_NEED)
#undef TG_NEED
  tg_cpu_features f;
  tg_cpu_detect(&f);
  const uint32_t lack = need & ~f.usable;
  if (!lack) return 1;
  printf("SKIP: this CPU (or OS) lacks");
  for (int b = 0; b < TG_FEATURE_COUNT; b++)
    if (lack & (1u << b)) printf(" %s", names[b]);
  printf("\n");
  return 0;
}

#endif
