/* Built for the platform baseline, like cpu_features.c. */
#include "cpu_caches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_isa.h"

#if TG_BUILD_ARCH == TG_ARCH_X86_64
#include <cpuid.h>
#endif

/* "48K", "1M", "1048576" -> bytes; 0 when it is not a size. */
static int64_t parse_size(const char* s) {
  char* end;
  const long long v = strtoll(s, &end, 10);
  if (end == s || v <= 0) return 0;
  int64_t bytes = v;
  if (*end == 'K' || *end == 'k') { bytes <<= 10; end++; }
  else if (*end == 'M' || *end == 'm') { bytes <<= 20; end++; }
  while (*end == ' ' || *end == '\n') end++;
  return *end == '\0' && bytes < ((int64_t) 1 << 40) ? bytes : 0;
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
    const int64_t bytes = parse_size(size);
    if (bytes == 0 || strncmp(type, "Instruction", 11) == 0) continue;
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

static int override(const char* name, int64_t* dst) {
  const char* v = getenv(name);
  const int64_t bytes = v ? parse_size(v) : 0;
  if (bytes == 0) return 0;
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
  const int a = override("TILEGEN_L1D_SIZE", &out->l1d), b = override("TILEGEN_L2_SIZE", &out->l2),
            c = override("TILEGEN_L3_SIZE", &out->l3);
  if (a || b || c) out->source = "TILEGEN_*_SIZE";
}
