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

/* What the tester covered, printed at the end (tests/test_ukernels.py holds it against the
   family's OpFamily.tester_coverage and tester_clamps):

     COVER <dim> STEP <step> ALONE <list> AFTER <list>
       every dimension the kernel tiles, with the remainders value % step it was called with:
       ALONE those of values up to the step (the tail on its own, 0: one full step or none),
       AFTER those of values past it (the tail after full steps, which may be another code
       path: a block moved back over the last one, a full tile then an edge tile). Lists are
       ranges, comma-separated ("0-5", "0-3,5", "none"). A tester marks each call's sizes with
       cover(dim, step, value) right where it calls the kernel.
     CLAMP <act> <point> POSITIONS <p> BELOW <b> ABOVE <a>
       a clamped activation at one of its clamp points: of the <p> positions of the full tile,
       how many were seen with an exact (pre-activation) result strictly below the point and
       how many strictly above it, in some checked case. clamp_seen(act, point, position,
       exact) marks one. */
#define COVER_MAX_DIMS 12
#define COVER_MAX_STEP 1024
typedef struct {
  const char* dim;
  int64_t step;
  unsigned char alone[COVER_MAX_STEP], after[COVER_MAX_STEP];
} cover_dim;
static cover_dim cover_dims[COVER_MAX_DIMS];
static int cover_ndims = 0;

static inline void cover(const char* dim, int64_t step, int64_t value) {
  int d = 0;
  while (d < cover_ndims && strcmp(cover_dims[d].dim, dim) != 0) d++;
  if (d == cover_ndims) {
    if (cover_ndims == COVER_MAX_DIMS || step < 1 || step > COVER_MAX_STEP) {
      fprintf(stderr, "cover: dimension %s (step %lld) does not fit the table\n", dim,
              (long long) step);
      exit(2);
    }
    cover_dims[d].dim = dim;
    cover_dims[d].step = step;
    cover_ndims++;
  }
  if (cover_dims[d].step != step || value < 0) {
    fprintf(stderr, "cover: dimension %s marked with step %lld (first %lld), value %lld\n", dim,
            (long long) step, (long long) cover_dims[d].step, (long long) value);
    exit(2);
  }
  if (value <= step) cover_dims[d].alone[value % step] = 1;
  else cover_dims[d].after[value % step] = 1;
}

static inline void cover_list(const unsigned char* seen, int64_t step) {
  const char* sep = "";
  for (int64_t r = 0; r < step; r++) {
    if (!seen[r]) continue;
    int64_t e = r;
    while (e + 1 < step && seen[e + 1]) e++;
    if (e == r) printf("%s%lld", sep, (long long) r);
    else printf("%s%lld-%lld", sep, (long long) r, (long long) e);
    sep = ",";
    r = e;
  }
  printf("%s", *sep ? "" : "none");
}

#define CLAMP_MAX 8
#define CLAMP_MAX_POS 4096
typedef struct {
  const char* act;
  double point;
  int positions;
  unsigned char below[CLAMP_MAX_POS], above[CLAMP_MAX_POS];
} clamp_cover;
static clamp_cover clamp_covers[CLAMP_MAX];
static int clamp_n = 0;

/* Position `pos` of a tile of `positions` had the exact result `exact` before `act`, which
   clamps at `point`. */
static inline void clamp_seen(const char* act, double point, int positions, int pos,
                              double exact) {
  int c = 0;
  while (c < clamp_n && !(strcmp(clamp_covers[c].act, act) == 0 && clamp_covers[c].point == point))
    c++;
  if (c == clamp_n) {
    if (clamp_n == CLAMP_MAX || positions > CLAMP_MAX_POS) {
      fprintf(stderr, "clamp_seen: %s at %g (%d positions) does not fit the table\n", act, point,
              positions);
      exit(2);
    }
    clamp_covers[c].act = act;
    clamp_covers[c].point = point;
    clamp_covers[c].positions = positions;
    clamp_n++;
  }
  if (pos < 0 || pos >= clamp_covers[c].positions) {
    fprintf(stderr, "clamp_seen: %s position %d of %d\n", act, pos, clamp_covers[c].positions);
    exit(2);
  }
  if (exact < point) clamp_covers[c].below[pos] = 1;
  if (exact > point) clamp_covers[c].above[pos] = 1;
}

static inline void cover_report(void) {
  for (int d = 0; d < cover_ndims; d++) {
    printf("COVER %s STEP %lld ALONE ", cover_dims[d].dim, (long long) cover_dims[d].step);
    cover_list(cover_dims[d].alone, cover_dims[d].step);
    printf(" AFTER ");
    cover_list(cover_dims[d].after, cover_dims[d].step);
    printf("\n");
  }
  for (int c = 0; c < clamp_n; c++) {
    int b = 0, a = 0;
    for (int p = 0; p < clamp_covers[c].positions; p++) {
      b += clamp_covers[c].below[p];
      a += clamp_covers[c].above[p];
    }
    printf("CLAMP %s %g POSITIONS %d BELOW %d ABOVE %d\n", clamp_covers[c].act,
           clamp_covers[c].point, clamp_covers[c].positions, b, a);
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
