/* Built for the platform baseline: no ISA flags, so it runs on any CPU of the architecture. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* syscall() under -std=c99 (the C testers build this file too) */
#endif
#include "cpu_features.h"

#include <string.h>

#if TG_BUILD_ARCH == TG_ARCH_X86_64
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* XGETBV without -mxsave, so this file needs no ISA flag. Only called when OSXSAVE is set. */
static uint64_t read_xcr0(void) {
  uint32_t eax, edx;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t) edx << 32) | eax;
}

/* Linux (5.16+) gives a process the AMX tile data state only once it asks: until then a tile
   instruction faults. The request is idempotent and process-wide, so repeating it (the
   dispatcher's detection, a tester's) is harmless. Nonzero: refused (or an older kernel). */
static int amx_permitted(void) {
#if defined(__linux__)
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                 18 /* XFEATURE_XTILEDATA */) == 0;
#else
  return 0;  /* no known way to ask the OS here: no AMX */
#endif
}

void tg_cpu_detect(tg_cpu_features* out) {
  uint32_t eax, ebx, ecx, edx;
  uint32_t rep = 0;
  memset(out, 0, sizeof(*out));
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return;
  const uint32_t max_leaf = eax;
  __get_cpuid(1, &eax, &ebx, &ecx, &edx);
  const int osxsave = (ecx >> 27) & 1;
  if ((edx >> 26) & 1) rep |= TG_FEAT_SSE2;
  if ((ecx >> 28) & 1) rep |= TG_FEAT_AVX;
  if ((ecx >> 12) & 1) rep |= TG_FEAT_FMA;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const uint32_t max_subleaf = eax;
    if ((ebx >> 5) & 1) rep |= TG_FEAT_AVX2;
    if ((ebx >> 16) & 1) rep |= TG_FEAT_AVX512F;
    if ((ebx >> 17) & 1) rep |= TG_FEAT_AVX512DQ;
    if ((ebx >> 30) & 1) rep |= TG_FEAT_AVX512BW;
    if ((ebx >> 31) & 1) rep |= TG_FEAT_AVX512VL;
    if ((ecx >> 11) & 1) rep |= TG_FEAT_AVX512_VNNI;
    if ((edx >> 23) & 1) rep |= TG_FEAT_AVX512_FP16;
    if ((edx >> 24) & 1) rep |= TG_FEAT_AMX_TILE;
    if ((edx >> 22) & 1) rep |= TG_FEAT_AMX_BF16;
    if ((edx >> 25) & 1) rep |= TG_FEAT_AMX_INT8;
    if (max_subleaf >= 1) {
      __cpuid_count(7, 1, eax, ebx, ecx, edx);
      if ((eax >> 4) & 1) rep |= TG_FEAT_AVX_VNNI;   /* VEX VPDPBUSD & co. on xmm/ymm */
      if ((eax >> 5) & 1) rep |= TG_FEAT_AVX512_BF16;
    }
  }
  out->reported = rep;

  /* The OS must save the register state: XMM|YMM (XCR0 bits 1-2) for AVX, plus
     opmask|ZMM_Hi256|Hi16_ZMM (bits 5-7) for AVX-512. Without it these instructions fault. */
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const int ymm_ok = (xcr0 & 0x6) == 0x6;
  const int zmm_ok = ymm_ok && (xcr0 & 0xE0) == 0xE0;
  const uint32_t avx_bits = TG_FEAT_AVX | TG_FEAT_FMA | TG_FEAT_AVX2 | TG_FEAT_AVX_VNNI;
  const uint32_t avx512_bits = TG_FEAT_AVX512F | TG_FEAT_AVX512DQ | TG_FEAT_AVX512BW |
                               TG_FEAT_AVX512VL | TG_FEAT_AVX512_BF16 | TG_FEAT_AVX512_VNNI |
                               TG_FEAT_AVX512_FP16;
  /* AMX: XTILECFG|XTILEDATA (XCR0 bits 17-18) enabled by the OS, and on Linux this process's
     permission to use the tile data. */
  const uint32_t amx_bits = TG_FEAT_AMX_TILE | TG_FEAT_AMX_BF16 | TG_FEAT_AMX_INT8;
  const int amx_ok = (rep & TG_FEAT_AMX_TILE) && (xcr0 & 0x60000) == 0x60000 && amx_permitted();
  uint32_t usable = rep & TG_FEAT_SSE2;
  if (ymm_ok) usable |= rep & avx_bits;
  if (zmm_ok) usable |= rep & avx512_bits;
  if (amx_ok) usable |= rep & amx_bits;
  out->usable = usable;
}

#elif TG_BUILD_ARCH == TG_ARCH_AARCH64

#if defined(__linux__)
#include <sys/auxv.h>
/* The kernel's bits (arch/arm64/include/uapi/asm/hwcap.h), for C libraries that predate them. */
#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1 << 10)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14)
#endif
#elif defined(__APPLE__)
#include <sys/sysctl.h>

static int apple_has(const char* name) {
  int v = 0;
  size_t size = sizeof(v);
  return sysctlbyname(name, &v, &size, NULL, 0) == 0 && v != 0;
}
#endif

void tg_cpu_detect(tg_cpu_features* out) {
  memset(out, 0, sizeof(*out));
#if defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  if (hwcap & HWCAP_ASIMD) out->reported |= TG_FEAT_ASIMD;
  if (hwcap & HWCAP_ASIMDHP) out->reported |= TG_FEAT_ASIMDHP;
  if (hwcap & HWCAP_ASIMDDP) out->reported |= TG_FEAT_ASIMDDP;
  if (hwcap2 & HWCAP2_I8MM) out->reported |= TG_FEAT_I8MM;
  if (hwcap2 & HWCAP2_BF16) out->reported |= TG_FEAT_BF16;
#else
  /* ASIMD is architecturally mandatory on AArch64 (Apple, Windows on Arm, ...). */
  out->reported |= TG_FEAT_ASIMD;
#if defined(__APPLE__)
  if (apple_has("hw.optional.arm.FEAT_FP16")) out->reported |= TG_FEAT_ASIMDHP;
  if (apple_has("hw.optional.arm.FEAT_DotProd")) out->reported |= TG_FEAT_ASIMDDP;
  if (apple_has("hw.optional.arm.FEAT_I8MM")) out->reported |= TG_FEAT_I8MM;
  if (apple_has("hw.optional.arm.FEAT_BF16")) out->reported |= TG_FEAT_BF16;
#endif
#endif
  out->usable = out->reported;
}

#else

void tg_cpu_detect(tg_cpu_features* out) { memset(out, 0, sizeof(*out)); }

#endif
