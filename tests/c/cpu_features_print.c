/* Prints the CPU features the library's detector finds usable, one name per line: the dispatch
   tests run it natively and, cross-built, under qemu-aarch64 CPU models with known features. */
#include <stdio.h>

#include "cpu_features.h"

int main(void) {
  static const char* const names[] = TG_FEATURE_NAMES;
  tg_cpu_features f;
  tg_cpu_detect(&f);
  for (int i = 0; i < TG_FEATURE_COUNT; i++)
    if (f.usable & (1u << i)) printf("%s\n", names[i]);
  return 0;
}
