/* The read rate a paged KV cache allows one core, with no attention compute: two 128 MiB
   arrays (keys, values) of BLOCK-byte blocks visited in a scrambled order, each block's keys
   then its values, summed with AVX-512 loads, the pages madvised huge as NumPy's are. With
   AHEAD > 0 the lines AHEAD bytes ahead in that order are software-prefetched into L2, as the
   decode kernels do. The `tilegen bench --op paged_attention` case B8 H32/8 D128 block 16 has
   64 KiB blocks; its "numpy" column is a sequential read, which this rate may fall well short
   of (the hardware prefetchers restart at every block).

     gcc -O2 -mavx512f benchmarks/c/paged_block_read.c -o /tmp/paged_block_read
     /tmp/paged_block_read 65536 16384     # BLOCK bytes, AHEAD bytes (0: no prefetch)
   prints: GB/s, median of 7 sweeps */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

int main(int argc, char** argv) {
  const int64_t bytes = 128ll << 20;
  const int64_t blk = (argc > 1 ? atoll(argv[1]) : 65536) / 4;
  const int64_t ahead = (argc > 2 ? atoll(argv[2]) : 0) / 4;
  if (blk < 16 || blk % 16 || bytes / 4 % blk) {
    fprintf(stderr, "BLOCK: a multiple of 64 bytes dividing 128 MiB\n");
    return 2;
  }
  const int64_t nb = bytes / 4 / blk;
  float* kv[2];
  for (int w = 0; w < 2; w++) {
    kv[w] = aligned_alloc(2 << 20, (size_t) bytes);
    if (kv[w] == NULL) return 1;
    madvise(kv[w], (size_t) bytes, MADV_HUGEPAGE);
    for (int64_t i = 0; i < bytes / 4; i++) kv[w][i] = 1.0f;
  }
  int64_t* order = malloc(sizeof(int64_t) * (size_t) nb);
  for (int64_t i = 0; i < nb; i++) order[i] = i;
  uint64_t s = 88172645463325252ull;
  for (int64_t i = nb - 1; i > 0; i--) {  /* Fisher-Yates with xorshift */
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    const int64_t j = (int64_t) (s % (uint64_t) (i + 1)), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  double ts[7];
  __m512 acc = _mm512_setzero_ps();
  for (int rep = 0; rep < 7; rep++) {
    const double t0 = now();
    for (int64_t b = 0; b < nb; b++) {
      for (int w = 0; w < 2; w++) {
        const float* src = kv[w] + order[b] * blk;
        for (int64_t i = 0; i < blk; i += 16) {
          if (ahead) {  /* position + ahead in the visiting order: keys of b, values of b, ... */
            const int64_t pos = (b * 2 + w) * blk + i + ahead, half = pos / blk;
            if (half / 2 < nb)
              _mm_prefetch((const char*) (kv[half % 2] + order[half / 2] * blk + pos % blk),
                           _MM_HINT_T1);
          }
          acc = _mm512_add_ps(acc, _mm512_load_ps(src + i));
        }
      }
    }
    ts[rep] = now() - t0;
  }
  for (int i = 0; i < 7; i++)
    for (int j = i + 1; j < 7; j++)
      if (ts[j] < ts[i]) { const double t = ts[i]; ts[i] = ts[j]; ts[j] = t; }
  printf("block %lld B, prefetch %lld B ahead: %.1f GB/s (sum %g)\n", (long long) blk * 4,
         (long long) ahead * 4, 2.0 * (double) bytes / ts[3] / 1e9, _mm512_reduce_add_ps(acc));
  return 0;
}
