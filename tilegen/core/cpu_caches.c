/* Built for the platform baseline, like cpu_features.c. */
#include "cpu_caches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_isa.h"

#if TG_BUILD_ARCH == TG_ARCH_X86_64
#include <cpuid.h>
#endif

/* A size: a whole number of bytes, or with a binary multiple K, M or G (any case, optionally
   followed by B or iB: "48K", "48KB", "48KiB", "2MB", "1048576"), spaces around. Stores the
   bytes and returns 1, or returns 0 when the text is not a size (empty, negative, another
   suffix, past 2^62). sysfs writes sizes this way too ("48K"). */
static int parse_size(const char* s, int64_t* bytes) {
  while (*s == ' ' || *s == '\t') s++;
  if (*s < '0' || *s > '9') return 0;
  int64_t v = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > ((int64_t) 1 << 40)) return 0;
    v = v * 10 + (*s - '0');
  }
  int shift = 0;
  const char unit = (char) (*s | 0x20);  /* lower case */
  if (unit == 'k' || unit == 'm' || unit == 'g') {
    shift = unit == 'k' ? 10 : unit == 'm' ? 20 : 30;
    s++;
    if (*s == 'i' || *s == 'I') {
      s++;
      if (*s != 'B' && *s != 'b') return 0;
    }
    if (*s == 'B' || *s == 'b') s++;
  } else if (*s == 'B' || *s == 'b') {
    s++;
  }
  while (*s == ' ' || *s == '\t' || *s == '\n') s++;
  if (*s != '\0') return 0;
  *bytes = v << shift;
  return 1;
}

static int read_line(const char* path, char* buf, size_t n) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  const int ok = fgets(buf, (int) n, f) != NULL;
  fclose(f);
  return ok;
}

/* Sets the data-cache size of a level (1-3) from one reader's record. */
static void set_level(tg_cpu_caches* c, int level, int64_t bytes) {
  if (level == 1) c->l1d = bytes;
  else if (level == 2) c->l2 = bytes;
  else if (level == 3) c->l3 = bytes;
}

/* Linux (and Android): /sys/devices/system/cpu/cpu0/cache/index<i>/{level,type,size}. Each
   reader fills *out only when it found an L1 data cache. */
static int from_sysfs(tg_cpu_caches* out) {
  tg_cpu_caches c = {.source = "sysfs"};
  for (int i = 0; i < 8; i++) {
    char path[96], level[16], type[32], size[32];
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    if (!read_line(path, level, sizeof(level))) break;
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if (!read_line(path, type, sizeof(type))) continue;
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!read_line(path, size, sizeof(size))) continue;
    int64_t bytes = 0;
    if (!parse_size(size, &bytes) || bytes == 0 || strncmp(type, "Instruction", 11) == 0)
      continue;
    set_level(&c, atoi(level), bytes);
  }
  if (c.l1d <= 0) return 0;
  *out = c;
  return 1;
}

#if TG_BUILD_ARCH == TG_ARCH_X86_64
/* Deterministic cache parameters: leaf 4 (Intel) or 0x8000001D (AMD, with topology extensions). */
static int from_cpuid(tg_cpu_caches* out) {
  tg_cpu_caches c = {.source = "cpuid"};
  uint32_t eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return 0;
  uint32_t leaf = 0;
  if (eax >= 4) leaf = 4;
  const uint32_t ext_max = __get_cpuid_max(0x80000000u, NULL);
  if (ebx == 0x68747541u /* "Auth"enticAMD */ && ext_max >= 0x8000001Du) {
    __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx);
    if ((ecx >> 22) & 1) leaf = 0x8000001Du;
  }
  if (leaf == 0) return 0;
  for (uint32_t i = 0; i < 16; i++) {
    __cpuid_count(leaf, i, eax, ebx, ecx, edx);
    const uint32_t type = eax & 0x1f, level = (eax >> 5) & 7;
    if (type == 0) break;
    if (type == 2) continue;  /* instruction cache */
    const int64_t bytes = (int64_t) ((ebx >> 22) + 1) * (((ebx >> 12) & 0x3ff) + 1) *
                          ((ebx & 0xfff) + 1) * ((int64_t) ecx + 1);
    set_level(&c, (int) level, bytes);
  }
  if (c.l1d <= 0) return 0;
  *out = c;
  return 1;
}
#endif

/* Appends one line to the warnings of *c. */
static void warn(tg_cpu_caches* c, const char* name, const char* value, const char* what) {
  const size_t used = strlen(c->warnings);
  snprintf(c->warnings + used, sizeof(c->warnings) - used, "%s=%s %s\n", name, value, what);
}

/* TILEGEN_<LEVEL>_SIZE, if set, replaces *dst: clamped to [4K, 1G] with a warning (0 is taken
   as "none" where `none_ok`: an L3), or ignored with a warning when it is not a size. Returns
   whether it replaced *dst. */
static int override(tg_cpu_caches* c, const char* name, int64_t* dst, int none_ok) {
  const char* v = getenv(name);
  if (v == NULL || v[0] == '\0') return 0;
  int64_t bytes = 0;
  if (!parse_size(v, &bytes)) {
    warn(c, name, v, "is not a size (a byte count, or a number with K, M or G: 48K, 2MB, "
                     "1MiB) and is ignored");
    return 0;
  }
  if (bytes == 0 && none_ok) {
    *dst = 0;
    return 1;
  }
  if (bytes < TG_CACHE_MIN_BYTES) {
    warn(c, name, v, "is below the smallest cache size, 4K; using 4K");
    bytes = TG_CACHE_MIN_BYTES;
  } else if (bytes > TG_CACHE_MAX_BYTES) {
    warn(c, name, v, "is over the largest cache size, 1G; using 1G");
    bytes = TG_CACHE_MAX_BYTES;
  }
  *dst = bytes;
  return 1;
}

void tg_cache_detect(tg_cpu_caches* out) {
  *out = (tg_cpu_caches){.source = "default"};
#if TG_BUILD_ARCH == TG_ARCH_X86_64
  if (!from_sysfs(out)) from_cpuid(out);
#else
  from_sysfs(out);
#endif
  if (out->l1d <= 0) out->l1d = TG_DEFAULT_L1D_BYTES;
  if (out->l2 <= 0) out->l2 = out->l3 > 0 ? out->l3 : TG_DEFAULT_L2_BYTES;  /* no L2: the last level */
  out->warnings[0] = '\0';
  const int a = override(out, "TILEGEN_L1D_SIZE", &out->l1d, 0),
            b = override(out, "TILEGEN_L2_SIZE", &out->l2, 0),
            c = override(out, "TILEGEN_L3_SIZE", &out->l3, 1);
  if (a || b || c) out->source = "TILEGEN_*_SIZE";
}
