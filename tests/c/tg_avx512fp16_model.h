/* A software model of the AVX512-FP16 intrinsics that the avx512fp16 kernels use, for testing
 * their C on CPUs without AVX512-FP16 (no emulator here runs it). Force-included (-include)
 * with GCC's own AVX512-FP16 headers skipped through their include guards
 * (-D__AVX512FP16INTRIN_H_INCLUDED -D__AVX512FP16VLINTRIN_H_INCLUDED, tests/test_ukernels.py).
 * Each lane of _mm512_fmadd_ph is one multiply-add rounded once to half, as VFMADD231PH: the
 * product of two halves is exact in double, the sum is rounded to double and then to half,
 * which equals one rounding of the exact sum (the scalar reference's argument,
 * tilegen/dsl/isa/scalar.py); GCC's double -> _Float16 conversion rounds to nearest, ties to
 * even. */
#ifndef TG_AVX512FP16_MODEL_H
#define TG_AVX512FP16_MODEL_H

#if !defined(__AVX512FP16INTRIN_H_INCLUDED) || !defined(__AVX512FP16VLINTRIN_H_INCLUDED)
#error "define GCC's AVX512-FP16 header guards so that these models replace them"
#endif
#ifdef __AVX512FP16__
#error "the model is for builds without -mavx512fp16"
#endif

typedef _Float16 __m512h __attribute__((__vector_size__(64), __may_alias__));

static inline __m512h _mm512_setzero_ph(void) {
  const __m512h z = {0};
  return z;
}

static inline __m512h _mm512_loadu_ph(void const* p) {
  __m512h v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

static inline void _mm512_storeu_ph(void* p, __m512h x) { __builtin_memcpy(p, &x, sizeof(x)); }

static inline __m512h _mm512_set1_ph(_Float16 x) {
  __m512h v;
  for (int i = 0; i < 32; i++) v[i] = x;
  return v;
}

/* a * b + c per lane, rounded once to half. */
static inline __m512h _mm512_fmadd_ph(__m512h a, __m512h b, __m512h c) {
  __m512h r;
  for (int i = 0; i < 32; i++) r[i] = (_Float16) ((double) a[i] * (double) b[i] + (double) c[i]);
  return r;
}

#endif
