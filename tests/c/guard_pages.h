/*
 * Guarded allocations for the C test programs: an object sits against a PROT_NONE page,
 * ending where the page behind it starts (front = 0: an over-read or over-write faults) or
 * starting where the page in front of it ends (front = 1: an under-run faults). Programs
 * alternate the two, so over a run every kind of buffer is checked at both ends.
 */
#ifndef TG_GUARD_PAGES_H
#define TG_GUARD_PAGES_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct { void* base; size_t len; } region;

static inline void* guarded_bytes(size_t bytes, int front, region* r) {
  const size_t page = (size_t) sysconf(_SC_PAGESIZE);
  if (bytes == 0) bytes = 1;
  const size_t body = (bytes + page - 1) / page * page;
  r->len = page + body + page;
  r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r->base == MAP_FAILED) { perror("mmap"); exit(2); }
  char* lo = (char*) r->base + page;
  if (mprotect(r->base, page, PROT_NONE) != 0 || mprotect(lo + body, page, PROT_NONE) != 0) {
    perror("mprotect");
    exit(2);
  }
  return front ? lo : lo + body - bytes;
}

static inline void release(region* r) { munmap(r->base, r->len); }

#endif
