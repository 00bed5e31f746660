/*
 * Every routine of the reference BLAS (levels 1-3) and the OpenBLAS extensions, written once
 * for the four types: blas_{s,d,c,z}.c define the type macros below and include this file.
 *
 *   TG_T    the element type (float, double, float _Complex, double _Complex)
 *   TG_CPLX 1 for the complex types
 *   TG_RDOUBLE 1 when the real type (TG_R, defined here) is double
 *   TG_L    the routine prefix (s, d, c, z); TG_U the same in upper case, as a string
 *   TG_LR   the prefix of the routines with a real result or real scalar on complex data
 *           (nrm2/asum: s, d, sc, dz), TG_LS that of the real-scalar scal/rot (s, d, cs, zd)
 *
 * Each routine has one column-major core (the reference semantics: quick returns, beta = 0
 * never reads the output, alpha = 0 never reads the inputs, any increment), one check returning
 * the reference's INFO, and two thin entry points: the Fortran one (gfortran's conventions,
 * errors through xerbla_) and the CBLAS one (row-major calls run the core on the transposed
 * problem as the reference CBLAS does, so errors carry the same numbers).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tg_blas.h"
#include "tg_gemm.h"

/* The real type's constants and functions (TG_RDOUBLE: double, else float). */
#if TG_RDOUBLE
#define TG_R double
#define TG_RADIX ((double) __FLT_RADIX__)
#define TG_MINEXP __DBL_MIN_EXP__
#define TG_MAXEXP __DBL_MAX_EXP__
#define TG_DIGITS __DBL_MANT_DIG__
#define TG_RMIN __DBL_MIN__
#define TG_RMAX __DBL_MAX__
#define TG_GEMM_REAL tg_gemm_f64
#define TG_NRM2_FAST_MIN 0x1p-500
#define sqrt_r sqrt
#define pow_r pow
#define ceil_r ceil
#define floor_r floor
#else
#define TG_R float
#define TG_RADIX ((float) __FLT_RADIX__)
#define TG_MINEXP __FLT_MIN_EXP__
#define TG_MAXEXP __FLT_MAX_EXP__
#define TG_DIGITS __FLT_MANT_DIG__
#define TG_RMIN __FLT_MIN__
#define TG_RMAX __FLT_MAX__
#define TG_GEMM_REAL tg_gemm_f32
#define TG_NRM2_FAST_MIN 0x1p-60f
#define sqrt_r sqrtf
#define pow_r powf
#define ceil_r ceilf
#define floor_r floorf
#endif
#include "tg_blas_kernels.h"

#define TG_CAT_(a, b) a##b
#define TG_CAT(a, b) TG_CAT_(a, b)
#define F(name) TG_CAT(TG_L, name)            /* sgemv_, ... */
#define FR(name) TG_CAT(TG_LR, name)          /* snrm2_, scnrm2_, ... */
#define FS(name) TG_CAT(TG_LS, name)          /* csscal_, zdrot_, ... */
#define CB(name) TG_CAT(cblas_, F(name))      /* cblas_sgemv, ... */
#define CBR(name) TG_CAT(cblas_, FR(name))
#define CBS(name) TG_CAT(cblas_, FS(name))
#define S(name) TG_CAT(TG_CAT(tg_blas_, TG_L), name) /* internal cores */
#define XNAME(name) TG_U name                 /* "S" "GEMV " -> "SGEMV " */
#define CNAME(name) "cblas_" TG_LSTR name

#define T TG_T
#define R TG_R

/* CBLAS passes complex scalars and arrays as void pointers, real ones by value / typed. */
#if TG_CPLX
#define CSCAL const void*
#define CVAL(x) (*(const T*) (x))
#define CPTR const void*
#define VPTR void*
#else
#define CSCAL const T
#define CVAL(x) (x)
#define CPTR const T*
#define VPTR T*
#endif

/* ------------------------------------------------------------------ scalar helpers */

static inline R re(T x) { return __real__ x; }
static inline R im(T x) {
#if TG_CPLX
  return __imag__ x;
#else
  (void) x;
  return 0;
#endif
}
static inline T cj(T x) {
#if TG_CPLX
  T r;
  __real__ r = __real__ x;
  __imag__ r = -__imag__ x;
  return r;
#else
  return x;
#endif
}
static inline T mk(R a, R b) {
#if TG_CPLX
  T r;
  __real__ r = a;
  __imag__ r = b;
  return r;
#else
  (void) b;
  return a;
#endif
}
/* Products without the C99 Annex G NaN/Inf recovery (as Fortran computes them). */
static inline T mul(T a, T b) {
#if TG_CPLX
  return mk(re(a) * re(b) - im(a) * im(b), re(a) * im(b) + im(a) * re(b));
#else
  return a * b;
#endif
}
static inline T cjif(int c, T x) { return c ? cj(x) : x; }
static inline R abs1(T x) {
  R a = re(x) < 0 ? -re(x) : re(x), b = im(x) < 0 ? -im(x) : im(x);
  return a + b;
}
static inline int iszero(T x) { return re(x) == 0 && im(x) == 0; }
static inline int isone(T x) { return re(x) == 1 && im(x) == 0; }
/* Division as Fortran's (Smith's algorithm for complex). */
static inline T dv(T a, T b) {
#if TG_CPLX
  R br = re(b), bi = im(b);
  if ((br < 0 ? -br : br) >= (bi < 0 ? -bi : bi)) {
    R r = bi / br, d = br + r * bi;
    return mk((re(a) + im(a) * r) / d, (im(a) - re(a) * r) / d);
  }
  R r = br / bi, d = bi + r * br;
  return mk((re(a) * r + im(a)) / d, (im(a) * r - re(a)) / d);
#else
  return a / b;
#endif
}

/* The generated dot-product kernel of the real type (blas_dispatch.c picks it per ISA). */
static inline R rdot_kernel(int64_t n, const R* x, const R* y) {
#if TG_RDOUBLE
  return tg_blas_kernels_cfg()->dot_f64(n, x, y);
#else
  return tg_blas_kernels_cfg()->dot_f32(n, x, y);
#endif
}
/* y <- a x + y, contiguous, through the generated axpy kernel (complex data: real a only). */
static inline void raxpy_kernel(int64_t n, R a, const R* x, R* y) {
#if TG_RDOUBLE
  tg_blas_kernels_cfg()->axpy_f64(n, a, x, y);
#else
  tg_blas_kernels_cfg()->axpy_f32(n, a, x, y);
#endif
}

/* ================================================================== level 1 */

static void S(swap)(int n, T* x, int incx, T* y, int incy) {
  if (n <= 0) return;
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) {
    T t = x[ix];
    x[ix] = y[iy];
    y[iy] = t;
  }
}

static void S(scal)(int n, T a, T* x, int incx) {
  if (n <= 0 || incx <= 0 || isone(a)) return;
  for (int64_t i = 0, ix = 0; i < n; i++, ix += incx) x[ix] = mul(a, x[ix]);
}

#if TG_CPLX
static void S(rscal)(int n, R a, T* x, int incx) {
  if (n <= 0 || incx <= 0 || a == 1) return;
  for (int64_t i = 0, ix = 0; i < n; i++, ix += incx) x[ix] = mk(a * re(x[ix]), a * im(x[ix]));
}
#endif

static void S(copy)(int n, const T* x, int incx, T* y, int incy) {
  if (n <= 0) return;
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
  if (incx == 1 && incy == 1) {
    memmove(y, x, (size_t) n * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) y[iy] = x[ix];
}

static void S(axpy)(int n, T a, const T* x, int incx, T* y, int incy) {
  if (n <= 0 || iszero(a)) return;
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
#if !TG_CPLX
  if (incx == 1 && incy == 1 && (x + n <= y || y + n <= x)) {
    raxpy_kernel(n, a, x, y);
    return;
  }
#endif
  if (incx == 1 && incy == 1) {
    for (int64_t i = 0; i < n; i++) y[i] += mul(a, x[i]);
    return;
  }
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) y[iy] += mul(a, x[ix]);
}

/* sum of cjif(c, x_i) * y_i */
static T S(dot)(int c, int n, const T* x, int incx, const T* y, int incy) {
  T s = 0;
  if (n <= 0) return s;
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
#if !TG_CPLX
  if (incx == 1 && incy == 1) return rdot_kernel(n, x, y);
#endif
  if (incx == 1 && incy == 1) {
    for (int64_t i = 0; i < n; i++) s += mul(cjif(c, x[i]), y[i]);
    return s;
  }
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) s += mul(cjif(c, x[ix]), y[iy]);
  return s;
}

/* Euclidean norm with Blue's scaling (three accumulators), as the reference since 3.10:
   no overflow or underflow in the squares, Inf and NaN propagate. */
static R S(nrm2)(int n, const T* x, int incx) {
  if (n <= 0) return 0;
  if (incx == 1) {
    /* The generated kernel's plain sum of squares, when it cannot have overflowed (finite)
       nor lost accuracy to underflow (the squares that underflow add at most n * 2^-1074 or
       2^-149 to a sum this large): then it is Blue's result. Else the scaled algorithm. */
    const R ss = rdot_kernel((int64_t) n * (1 + TG_CPLX), (const R*) x, (const R*) x);
    if (ss <= TG_RMAX && ss >= TG_NRM2_FAST_MIN) return sqrt_r(ss);
  }
  /* Blue's thresholds and scalings (powers of the radix, as the reference derives them) */
  const R tsml = pow_r(TG_RADIX, ceil_r((TG_MINEXP - 1) * (R) 0.5));
  const R tbig = pow_r(TG_RADIX, floor_r((TG_MAXEXP - TG_DIGITS + 1) * (R) 0.5));
  const R ssml = pow_r(TG_RADIX, -floor_r((TG_MINEXP - TG_DIGITS) * (R) 0.5));
  const R sbig = pow_r(TG_RADIX, -ceil_r((TG_MAXEXP + TG_DIGITS - 1) * (R) 0.5));
  const R maxval = TG_RMAX;
  R asml = 0, amed = 0, abig = 0;
  int notbig = 1;
  int64_t ix = tg_vstart(n, incx);
  for (int64_t i = 0; i < n; i++, ix += incx) {
    for (int part = 0; part < 1 + TG_CPLX; part++) {
      R v = part ? im(x[ix]) : re(x[ix]);
      R ax = v < 0 ? -v : v;
      if (ax > tbig) {
        abig += (ax * sbig) * (ax * sbig);
        notbig = 0;
      } else if (ax < tsml) {
        if (notbig) asml += (ax * ssml) * (ax * ssml);
      } else {
        amed += ax * ax;
      }
    }
  }
  R scl = 1, sumsq;
  if (abig > 0) {
    if (amed > 0 || amed > maxval || amed != amed) abig += (amed * sbig) * sbig;
    scl = 1 / sbig;
    sumsq = abig;
  } else if (asml > 0) {
    if (amed > 0 || amed > maxval || amed != amed) {
      R ymed = sqrt_r(amed), ymin, ymax;
      R ysml = sqrt_r(asml) / ssml;
      if (ysml > ymed) {
        ymin = ymed;
        ymax = ysml;
      } else {
        ymin = ysml;
        ymax = ymed;
      }
      scl = 1;
      sumsq = ymax * ymax * (1 + (ymin / ymax) * (ymin / ymax));
    } else {
      scl = 1 / ssml;
      sumsq = asml;
    }
  } else {
    scl = 1;
    sumsq = amed;
  }
  return scl * sqrt_r(sumsq);
}

static R S(asum)(int n, const T* x, int incx) {
  R s = 0;
  if (n <= 0 || incx <= 0) return s;
  for (int64_t i = 0, ix = 0; i < n; i++, ix += incx) s += abs1(x[ix]);
  return s;
}

static int S(iamax)(int n, const T* x, int incx) {
  if (n < 1 || incx <= 0) return 0;
  int best = 1;
  R m = abs1(x[0]);
  for (int64_t i = 1, ix = incx; i < n; i++, ix += incx) {
    R v = abs1(x[ix]);
    if (v > m) {
      best = (int) i + 1;
      m = v;
    }
  }
  return best;
}

/* Plane rotation with real c, s: (x, y) <- (c x + s y, c y - s x). */
static void S(rot)(int n, T* x, int incx, T* y, int incy, R c, R s) {
  if (n <= 0) return;
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) {
    T xi = x[ix], yi = y[iy];
    x[ix] = mk(c * re(xi) + s * re(yi), c * im(xi) + s * im(yi));
    y[iy] = mk(c * re(yi) - s * re(xi), c * im(yi) - s * im(xi));
  }
}

#if !TG_CPLX
/* Givens rotation, the reference's 3.10 definition (scaled to avoid overflow):
   r = +-sqrt(a^2 + b^2) with the sign of the larger of a and b, c = a/r, s = b/r, and
   z (returned in b) = s if |a| > |b|, 1/c if c != 0, else 1. */
static void S(rotg)(T* a, T* b, T* c, T* s) {
  const R safmin = TG_RMIN, safmax = 1 / TG_RMIN;
  R an = *a < 0 ? -*a : *a, bn = *b < 0 ? -*b : *b;
  if (bn == 0) {
    *c = 1;
    *s = 0;
    *b = 0;
  } else if (an == 0) {
    *c = 0;
    *s = 1;
    *a = *b;
    *b = 1;
  } else {
    R scl = an > bn ? an : bn;
    if (scl < safmin) scl = safmin;
    if (scl > safmax) scl = safmax;
    R sigma = an > bn ? (*a < 0 ? -1 : 1) : (*b < 0 ? -1 : 1);
    R r = sigma * scl * sqrt_r((*a / scl) * (*a / scl) + (*b / scl) * (*b / scl));
    *c = *a / r;
    *s = *b / r;
    R z = an > bn ? *s : (*c != 0 ? 1 / *c : 1);
    *a = r;
    *b = z;
  }
}

/* rotmg's H with flag 0 or 1 written out in full (flag -1), before a rescaling step. */
static inline void rotmg_explicit(R* flag, R* h11, R* h12, R* h21, R* h22) {
  if (*flag == 0) {
    *h11 = 1;
    *h22 = 1;
  } else {
    *h21 = -1;
    *h12 = 1;
  }
  *flag = -1;
}

/* Modified Givens: the reference's algorithm (rescaling by gam = 4096 keeps d1, d2 in range). */
static void S(rotmg)(T* d1, T* d2, T* x1, T y1, T* param) {
  const R gam = 4096, gamsq = gam * gam, rgamsq = 1 / gamsq;
  R flag, h11 = 0, h12 = 0, h21 = 0, h22 = 0;
  if (*d1 < 0) {
    flag = -1;
    *d1 = *d2 = *x1 = 0;
  } else {
    R p2 = *d2 * y1;
    if (p2 == 0) {
      param[0] = -2;
      return;
    }
    R p1 = *d1 * *x1, q2 = p2 * y1, q1 = p1 * *x1;
    if ((q1 < 0 ? -q1 : q1) > (q2 < 0 ? -q2 : q2)) {
      h21 = -y1 / *x1;
      h12 = p2 / p1;
      R u = 1 - h12 * h21;
      if (u > 0) {
        flag = 0;
        *d1 /= u;
        *d2 /= u;
        *x1 *= u;
      } else {
        flag = -1;
        h11 = h12 = h21 = h22 = 0;
        *d1 = *d2 = *x1 = 0;
      }
    } else if (q2 < 0) {
      flag = -1;
      h11 = h12 = h21 = h22 = 0;
      *d1 = *d2 = *x1 = 0;
    } else {
      flag = 1;
      h11 = p1 / p2;
      h22 = *x1 / y1;
      R u = 1 + h11 * h22, t = *d2 / u;
      *d2 = *d1 / u;
      *d1 = t;
      *x1 = y1 * u;
    }
    if (*d1 != 0) {
      while (*d1 <= rgamsq || *d1 >= gamsq) {
        rotmg_explicit(&flag, &h11, &h12, &h21, &h22);
        if (*d1 <= rgamsq) {
          *d1 *= gam * gam;
          *x1 /= gam;
          h11 /= gam;
          h12 /= gam;
        } else {
          *d1 /= gam * gam;
          *x1 *= gam;
          h11 *= gam;
          h12 *= gam;
        }
      }
    }
    if (*d2 != 0) {
      while ((*d2 < 0 ? -*d2 : *d2) <= rgamsq || (*d2 < 0 ? -*d2 : *d2) >= gamsq) {
        rotmg_explicit(&flag, &h11, &h12, &h21, &h22);
        if ((*d2 < 0 ? -*d2 : *d2) <= rgamsq) {
          *d2 *= gam * gam;
          h21 /= gam;
          h22 /= gam;
        } else {
          *d2 /= gam * gam;
          h21 *= gam;
          h22 *= gam;
        }
      }
    }
  }
  if (flag < 0) {
    param[1] = h11;
    param[2] = h21;
    param[3] = h12;
    param[4] = h22;
  } else if (flag == 0) {
    param[2] = h21;
    param[3] = h12;
  } else {
    param[1] = h11;
    param[4] = h22;
  }
  param[0] = flag;
}

static void S(rotm)(int n, T* x, int incx, T* y, int incy, const T* p) {
  R flag = p[0];
  if (n <= 0 || flag == -2) return;
  R h11, h12, h21, h22;
  if (flag < 0) {
    h11 = p[1]; h21 = p[2]; h12 = p[3]; h22 = p[4];
  } else if (flag == 0) {
    h11 = 1; h21 = p[2]; h12 = p[3]; h22 = 1;
  } else {
    h11 = p[1]; h21 = -1; h12 = 1; h22 = p[4];
  }
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) {
    R w = x[ix], z = y[iy];
    x[ix] = w * h11 + z * h12;
    y[iy] = w * h21 + z * h22;
  }
}
#else
/* Complex Givens rotation (the reference's 3.10 definition): real c, complex s and r with
   [c s; -conj(s) c] [f; g] = [r; 0], r = f / |f| * sqrt(|f|^2 + |g|^2); computed scaled. */
static void S(rotg)(T* a, T b, R* c, T* s) {
  T f = *a, g = b;
  if (iszero(g)) {
    *c = 1;
    *s = 0;
    return;
  }
  R gs = abs1(g), fs = abs1(f);
  if (fs == 0) {
    R gr = re(g) / gs, gi = im(g) / gs, d = gs * sqrt_r(gr * gr + gi * gi);
    *c = 0;
    *s = mk(re(g) / d, -im(g) / d);
    *a = mk(d, 0);
    return;
  }
  R scl = fs > gs ? fs : gs;
  R fr = re(f) / scl, fi = im(f) / scl, gr = re(g) / scl, gi = im(g) / scl;
  R f2 = fr * fr + fi * fi, g2 = gr * gr + gi * gi, h2 = f2 + g2;
  R fa = sqrt_r(f2), h = sqrt_r(h2);
  *c = fa / h;
  /* s = (f / |f|) * conj(g) / h, r = (f / |f|) * h * scl */
  R ur = fr / fa, ui = fi / fa;
  *s = mk((ur * gr + ui * gi) / h, (ui * gr - ur * gi) / h);
  *a = mk(ur * h * scl, ui * h * scl);
}
#endif

/* ================================================================== level 2 helpers */

enum { FULL = 0, BAND = 1, PACKED = 2 };

#if !TG_CPLX
static void S(trx_rec)(int solve, int lower, char diag, int64_t n, int64_t m, const T* a,
                       int64_t rsa, int64_t csa, T* y, int64_t rsy, int64_t csy);
enum { TRX_LEAF = 16, SYRK_LEAF = 32, SYMV_LEAF = 64 };
#endif

/* Pointer p with A(i, j) = p[i] for column j of a (symmetric, triangular or general) matrix:
   full (lda), band (k super- or sub-diagonals, lda) or packed storage of the uplo triangle. */
static inline const T* colp(int storage, int upper, const T* a, int64_t lda, int64_t n,
                            int64_t k, int64_t j) {
  switch (storage) {
    case BAND: return a + j * lda + (upper ? k - j : -j);
    case PACKED: return a + (upper ? j * (j + 1) / 2 : j * (2 * n - j - 1) / 2);
    default: return a + j * lda;
  }
}
/* Rows of column j inside the stored triangle / band (k = n - 1 when not banded). */
static inline int64_t row_lo(int upper, int64_t k, int64_t j) {
  return upper ? tg_max64(0, j - k) : j;
}
static inline int64_t row_hi(int upper, int64_t n, int64_t k, int64_t j) {
  return upper ? j : tg_min64(n - 1, j + k);
}

/* y <- beta * y over n elements (beta = 0 does not read y). */
static void scale_vec(int64_t n, T beta, T* y, int incy) {
  if (isone(beta)) return;
  int64_t iy = tg_vstart(n, incy);
  for (int64_t i = 0; i < n; i++, iy += incy) y[iy] = iszero(beta) ? (T) 0 : mul(beta, y[iy]);
}

/* ------------------------------------------------------------------ gemv / gbmv */

/* op(A) x with op in N, T, C, R on a general (full or band: kl, ku) m x n matrix. */
static void S(gbmv)(char tr, int band, int m, int n, int kl, int ku, T alpha, const T* a,
                    int lda, const T* x, int incx, T beta, T* y, int incy) {
  if (m == 0 || n == 0 || (iszero(alpha) && isone(beta))) return;
  const int notr = tr == 'N' || tr == 'R', c = tr == 'C' || tr == 'R';
  const int64_t lenx = notr ? n : m, leny = notr ? m : n;
  if (!band) {
    kl = m - 1;
    ku = n - 1;
  }
#if !TG_CPLX
  if (!band && !iszero(alpha)) { /* tilegen's GEMM driver, n = 1: its GEMV path */
    const int t = !notr;
    TG_GEMM_REAL(leny, 1, lenx, alpha, a, t ? lda : 1, t ? 1 : lda, x + tg_vstart(lenx, incx),
                 incx, 1, beta, y + tg_vstart(leny, incy), incy, 1, NULL, 0, 0);
    return;
  }
#endif
  scale_vec(leny, beta, y, incy);
  if (iszero(alpha)) return;
  const int64_t kx = tg_vstart(lenx, incx), ky = tg_vstart(leny, incy);
  for (int64_t j = 0, jx = kx, jy = ky; j < n; j++) {
    const T* col = a + j * (int64_t) lda + (band ? ku - j : 0);
    const int64_t lo = tg_max64(0, j - ku), hi = tg_min64(m - 1, j + kl);
    if (notr) {
      T t = mul(alpha, x[jx]);
      if (incy == 1) {
        for (int64_t i = lo; i <= hi; i++) y[i] += mul(t, cjif(c, col[i]));
      } else {
        for (int64_t i = lo, iy = ky + lo * incy; i <= hi; i++, iy += incy)
          y[iy] += mul(t, cjif(c, col[i]));
      }
      jx += incx;
    } else {
      T t = 0;
      if (incx == 1) {
        for (int64_t i = lo; i <= hi; i++) t += mul(cjif(c, col[i]), x[i]);
      } else {
        for (int64_t i = lo, ix = kx + lo * incx; i <= hi; i++, ix += incx)
          t += mul(cjif(c, col[i]), x[ix]);
      }
      y[jy] += mul(alpha, t);
      jy += incy;
    }
  }
}

/* ------------------------------------------------------------------ symv / hemv family */

static void S(shmv)(int storage, char uplo, int herm, int cjA, int n, int k, T alpha,
                    const T* a, int lda, const T* x, int incx, T beta, T* y, int incy);

#if !TG_CPLX
/* y += alpha A x, A real symmetric in the uplo triangle of full storage; x and y given by their
   first logical element (any increment): halves, the off-diagonal block through GEMV (N, T). */
static void S(symv_rec)(int upper, int64_t n, T alpha, const T* a, int64_t lda, const T* x,
                        int64_t incx, T* y, int64_t incy) {
  if (n <= SYMV_LEAF) { /* the plain core wants the lowest addresses */
    S(shmv)(FULL, upper ? 'U' : 'L', 0, 0, (int) n, 0, alpha, a, (int) lda,
            incx < 0 ? x + (n - 1) * incx : x, (int) incx, 1, incy < 0 ? y + (n - 1) * incy : y,
            (int) incy);
    return;
  }
  const int64_t n1 = n / 2, n2 = n - n1;
  const T *x1 = x, *x2 = x + n1 * incx;
  T *y1 = y, *y2 = y + n1 * incy;
  S(symv_rec)(upper, n1, alpha, a, lda, x1, incx, y1, incy);
  S(symv_rec)(upper, n2, alpha, a + n1 * (1 + lda), lda, x2, incx, y2, incy);
  const T* off = upper ? a + n1 * lda : a + n1; /* A12 (n1 x n2) or A21 (n2 x n1) */
  const int64_t r = upper ? n1 : n2, c = upper ? n2 : n1;
  const T *xc = upper ? x2 : x1, *xr = upper ? x1 : x2;
  T *yr = upper ? y1 : y2, *yc = upper ? y2 : y1;
  TG_GEMM_REAL(r, 1, c, alpha, off, 1, lda, xc, incx, 1, 1, yr, incy, 1, NULL, 0, 0);
  TG_GEMM_REAL(c, 1, r, alpha, off, lda, 1, xr, incx, 1, 1, yc, incy, 1, NULL, 0, 0);
}
#endif

/* y <- alpha A x + beta y, A symmetric (herm = 0) or Hermitian (herm = 1) in full, band or
   packed storage of the uplo triangle; cjA: A is the conjugate of what is stored. */
static void S(shmv)(int storage, char uplo, int herm, int cjA, int n, int k, T alpha,
                    const T* a, int lda, const T* x, int incx, T beta, T* y, int incy) {
  if (n == 0 || (iszero(alpha) && isone(beta))) return;
  const int upper = uplo == 'U';
  if (storage != BAND) k = n - 1;
  scale_vec(n, beta, y, incy);
  if (iszero(alpha)) return;
  const int64_t kx = tg_vstart(n, incx), ky = tg_vstart(n, incy);
#if !TG_CPLX
  if (storage == FULL && n > SYMV_LEAF) {
    S(symv_rec)(upper, n, alpha, a, lda, x + kx, incx, y + ky, incy);
    return;
  }
#endif
  for (int64_t j = 0; j < n; j++) {
    const T* col = colp(storage, upper, a, lda, n, k, j);
    const T t1 = mul(alpha, x[kx + j * incx]);
    T t2 = 0;
    const int64_t lo = row_lo(upper, k, j), hi = row_hi(upper, n, k, j);
    for (int64_t i = lo; i <= hi; i++) {
      if (i == j) continue;
      const T aij = cjif(cjA, col[i]);
      y[ky + i * incy] += mul(t1, aij);
      t2 += mul(cjif(herm, aij), x[kx + i * incx]);
    }
    const T d = herm ? mk(re(col[j]), 0) : cjif(cjA, col[j]);
    y[ky + j * incy] += mul(t1, d) + mul(alpha, t2);
  }
}

/* ------------------------------------------------------------------ triangular mv / sv */

/* x <- op(A) x (solve = 0) or x <- op(A)^-1 x (solve = 1); op in N, T, C, R (R: conjugate of
   A, not transposed); A triangular in full, band (k) or packed storage. */
static void S(trxv)(int solve, int storage, char uplo, char tr, char diag, int n, int k,
                    const T* a, int lda, T* x, int incx) {
  if (n == 0) return;
  const int upper = uplo == 'U', nounit = diag == 'N';
  const int notr = tr == 'N' || tr == 'R', c = tr == 'C' || tr == 'R';
#if !TG_CPLX
  if (storage == FULL && n > TRX_LEAF) { /* halves, the off-diagonal block through GEMV */
    const int64_t rsa = notr ? 1 : lda, csa = notr ? lda : 1;
    S(trx_rec)(solve, upper == !notr, diag, n, 1, a, rsa, csa, x + tg_vstart(n, incx), incx, 1);
    return;
  }
#endif
  if (storage != BAND) k = n - 1;
  const int64_t kx = tg_vstart(n, incx);
#define X(i) x[kx + (int64_t) (i) * incx]
  /* Forward (j ascending) when the dependency runs that way. */
  const int forward = solve ? (notr ? !upper : upper) : (notr ? upper : !upper);
  for (int64_t s = 0; s < n; s++) {
    const int64_t j = forward ? s : n - 1 - s;
    const T* col = colp(storage, upper, a, lda, n, k, j);
    const int64_t lo = row_lo(upper, k, j), hi = row_hi(upper, n, k, j);
    if (notr) {
      if (!solve) {
        if (!iszero(X(j))) {
          const T t = X(j);
          for (int64_t i = lo; i <= hi; i++)
            if (i != j) X(i) += mul(t, cjif(c, col[i]));
          if (nounit) X(j) = mul(X(j), cjif(c, col[j]));
        }
      } else if (!iszero(X(j))) {
        if (nounit) X(j) = dv(X(j), cjif(c, col[j]));
        const T t = X(j);
        for (int64_t i = lo; i <= hi; i++)
          if (i != j) X(i) -= mul(t, cjif(c, col[i]));
      }
    } else {
      T t = X(j);
      if (!solve) {
        if (nounit) t = mul(t, cjif(c, col[j]));
        for (int64_t i = lo; i <= hi; i++)
          if (i != j) t += mul(cjif(c, col[i]), X(i));
      } else {
        for (int64_t i = lo; i <= hi; i++)
          if (i != j) t -= mul(cjif(c, col[i]), X(i));
        if (nounit) t = dv(t, cjif(c, col[j]));
      }
      X(j) = t;
    }
  }
#undef X
}

/* ------------------------------------------------------------------ rank updates */

/* A <- alpha cjx(x) cjy(y)^T + A, A m x n. */
static void S(ger)(int cjx, int cjy, int m, int n, T alpha, const T* x, int incx, const T* y,
                   int incy, T* a, int lda) {
  if (m == 0 || n == 0 || iszero(alpha)) return;
  const int64_t kx = tg_vstart(m, incx), ky = tg_vstart(n, incy);
  for (int64_t j = 0; j < n; j++) {
    const T yj = cjif(cjy, y[ky + j * incy]);
    if (iszero(yj)) continue;
    const T t = mul(alpha, yj);
    T* col = a + j * (int64_t) lda;
#if !TG_CPLX
    if (incx == 1) { /* the generated axpy kernel, column by column */
      raxpy_kernel(m, t, x, col);
      continue;
    }
#endif
    for (int64_t i = 0; i < m; i++) col[i] += mul(cjif(cjx, x[kx + i * incx]), t);
  }
}

/* Symmetric / Hermitian rank-1 and rank-2 updates of the uplo triangle (full or packed):
   rank 1: A <- alpha x x' + A; rank 2: A <- alpha x y' + alpha' y x' + A, where ' is the
   transpose (herm = 0) or the conjugate transpose (herm = 1, alpha' = conj(alpha)); cjv: x and
   y are read conjugated. */
static void S(shr)(int rank2, int packed, char uplo, int herm, int cjv, int n, T alpha,
                   const T* x, int incx, const T* y, int incy, T* a, int lda) {
  if (n == 0 || iszero(alpha)) return;
  const int upper = uplo == 'U';
  const int64_t kx = tg_vstart(n, incx), ky = rank2 ? tg_vstart(n, incy) : 0;
  const T alpha2 = cjif(herm, alpha);
  for (int64_t j = 0; j < n; j++) {
    T* col = (T*) colp(packed ? PACKED : FULL, upper, a, lda, n, n - 1, j);
    const T xj = cjif(cjv, x[kx + j * incx]);
    const T yj = rank2 ? cjif(cjv, y[ky + j * incy]) : xj;
    const T t1 = mul(alpha, cjif(herm, yj));
    const T t2 = rank2 ? mul(alpha2, cjif(herm, xj)) : (T) 0;
    if (iszero(t1) && iszero(t2)) {
      if (herm) col[j] = mk(re(col[j]), 0);
      continue;
    }
    const int64_t lo = upper ? 0 : j, hi = upper ? j : n - 1;
    for (int64_t i = lo; i <= hi; i++) {
      const T xi = cjif(cjv, x[kx + i * incx]);
      T v = mul(xi, t1);
      if (rank2) v += mul(cjif(cjv, y[ky + i * incy]), t2);
      if (herm && i == j)
        col[j] = mk(re(col[j]) + re(v), 0);
      else
        col[i] += v;
    }
  }
}

/* ================================================================== level 3 */

/* Element (i, j) of op(A) for op in N, T, C, R. */
static inline T opel(const T* a, int64_t lda, char tr, int64_t i, int64_t j) {
  switch (tr) {
    case 'T': return a[j + i * lda];
    case 'C': return cj(a[j + i * lda]);
    case 'R': return cj(a[i + j * lda]);
    default: return a[i + j * lda];
  }
}

/* C (m x n) <- beta C over the rows lo(j)..hi(j) of each column (all rows when tri = 0; the
   upper or lower triangle when tri = 'U' / 'L'); herm: the diagonal is made real. */
static void scale_mat(int64_t m, int64_t n, T beta, T* c, int64_t ldc, char tri, int herm) {
  for (int64_t j = 0; j < n; j++) {
    const int64_t lo = tri == 'L' ? j : 0, hi = tri == 'U' ? tg_min64(j, m - 1) : m - 1;
    for (int64_t i = lo; i <= hi; i++) {
      T* p = c + i + j * ldc;
      if (iszero(beta))
        *p = 0;
      else if (!isone(beta))
        *p = mul(beta, *p);
      if (herm && i == j) *p = mk(re(*p), 0);
    }
  }
}

/* C <- alpha op(A) op(B) + beta C on the tri part of C (0: all of it; 'U'/'L': the triangle,
   for gemmt), plain loops: the axpy form when A is not transposed, else dot products. */
static void S(gemm_plain)(char tri, char ta, char tb, int64_t m, int64_t n, int64_t k,
                          T alpha, const T* a, int64_t lda, const T* b, int64_t ldb, T beta,
                          T* c, int64_t ldc) {
  scale_mat(m, n, beta, c, ldc, tri, 0);
  if (iszero(alpha) || k == 0) return;
  const int ca = ta == 'C' || ta == 'R';
  for (int64_t j = 0; j < n; j++) {
    const int64_t lo = tri == 'L' ? j : 0, hi = tri == 'U' ? tg_min64(j, m - 1) : m - 1;
    T* cc = c + j * ldc;
    if (ta == 'N' || ta == 'R') {
      for (int64_t l = 0; l < k; l++) {
        const T t = mul(alpha, opel(b, ldb, tb, l, j));
        const T* ac = a + l * lda;
        for (int64_t i = lo; i <= hi; i++) cc[i] += mul(t, cjif(ca, ac[i]));
      }
    } else {
      for (int64_t i = lo; i <= hi; i++) {
        const T* ar = a + i * lda;
        T s = 0;
        for (int64_t l = 0; l < k; l++) s += mul(cjif(ca, ar[l]), opel(b, ldb, tb, l, j));
        cc[i] += mul(alpha, s);
      }
    }
  }
}

/* General product, column-major, on the best path the type has. */
static void S(gemm_run)(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha,
                        const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
                        int64_t ldc) {
#if !TG_CPLX
  /* tilegen's GEMM driver (strides of op(A), op(B); C column-major). */
  const int64_t rs_a = ta == 'N' ? 1 : lda, cs_a = ta == 'N' ? lda : 1;
  const int64_t rs_b = tb == 'N' ? 1 : ldb, cs_b = tb == 'N' ? ldb : 1;
  TG_GEMM_REAL(m, n, k, alpha, a, rs_a, cs_a, b, rs_b, cs_b, beta, c, 1, ldc, NULL, 0, 0);
#else
  /* Four real products on tilegen's GEMM (the real and imaginary parts are stride-2 views),
     into two real m x n tiles T = op(A) op(B), then C = alpha T + beta C in one pass. */
  R* t = m * n * k >= 4096 ? malloc((size_t) (2 * m * n) * sizeof(R)) : NULL;
  if (!t) {
    S(gemm_plain)(0, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  R *tr = t, *ti = t + m * n;
  const R sa = ta == 'C' ? -1 : 1, sb = tb == 'C' ? -1 : 1;
  const int64_t rs_a = 2 * (ta == 'N' ? 1 : lda), cs_a = 2 * (ta == 'N' ? lda : 1);
  const int64_t rs_b = 2 * (tb == 'N' ? 1 : ldb), cs_b = 2 * (tb == 'N' ? ldb : 1);
  const R *ar = (const R*) a, *ai = ar + 1, *br = (const R*) b, *bi = br + 1;
  TG_GEMM_REAL(m, n, k, 1, ar, rs_a, cs_a, br, rs_b, cs_b, 0, tr, 1, m, NULL, 0, 0);
  TG_GEMM_REAL(m, n, k, -sa * sb, ai, rs_a, cs_a, bi, rs_b, cs_b, 1, tr, 1, m, NULL, 0, 0);
  TG_GEMM_REAL(m, n, k, sb, ar, rs_a, cs_a, bi, rs_b, cs_b, 0, ti, 1, m, NULL, 0, 0);
  TG_GEMM_REAL(m, n, k, sa, ai, rs_a, cs_a, br, rs_b, cs_b, 1, ti, 1, m, NULL, 0, 0);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      T* p = c + i + j * ldc;
      const T v = mul(alpha, mk(tr[i + j * m], ti[i + j * m]));
      *p = iszero(beta) ? v : v + mul(beta, *p);
    }
  free(t);
#endif
}

static void S(gemm)(char ta, char tb, int m, int n, int k, T alpha, const T* a, int lda,
                    const T* b, int ldb, T beta, T* c, int ldc) {
  if (m == 0 || n == 0 || ((iszero(alpha) || k == 0) && isone(beta))) return;
  if (iszero(alpha)) {
    scale_mat(m, n, beta, c, ldc, 0, 0);
    return;
  }
  S(gemm_run)(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* gemmt: the uplo triangle of C (n x n) <- alpha op(A) op(B) + beta C. */
static int gemmt_check(char uplo, char ta, char tb, int n, int k, int lda, int ldb, int ldc) {
  if (uplo != 'U' && uplo != 'L') return 1;
  if (ta != 'N' && ta != 'T' && ta != 'C') return 2;
  if (tb != 'N' && tb != 'T' && tb != 'C') return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < tg_max1(ta == 'N' ? n : k)) return 8;
  if (ldb < tg_max1(tb == 'N' ? k : n)) return 10;
  if (ldc < tg_max1(n)) return 13;
  return 0;
}

static void S(gemmt)(char uplo, char ta, char tb, int n, int k, T alpha, const T* a, int lda,
                     const T* b, int ldb, T beta, T* c, int ldc) {
  if (n == 0 || ((iszero(alpha) || k == 0) && isone(beta))) return;
  S(gemm_plain)(uplo, ta, tb, n, n, iszero(alpha) ? 0 : k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* Element (i, j) of the symmetric / Hermitian matrix whose uplo triangle is stored in a. */
static inline T symel(const T* a, int64_t lda, int upper, int herm, int64_t i, int64_t j) {
  if (i == j) return herm ? mk(re(a[i + i * lda]), 0) : a[i + i * lda];
  if (upper == (i < j)) return a[i + j * lda];
  return cjif(herm, a[j + i * lda]);
}

/* symm / hemm: C <- alpha A B + beta C (side L) or alpha B A + beta C (side R). */
static int symm_check(char side, char uplo, int m, int n, int lda, int ldb, int ldc) {
  if (side != 'L' && side != 'R') return 1;
  if (uplo != 'U' && uplo != 'L') return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (lda < tg_max1(side == 'L' ? m : n)) return 7;
  if (ldb < tg_max1(m)) return 9;
  if (ldc < tg_max1(m)) return 12;
  return 0;
}

static void S(symm)(int herm, char side, char uplo, int m, int n, T alpha, const T* a, int lda,
                    const T* b, int ldb, T beta, T* c, int ldc) {
  if (m == 0 || n == 0 || (iszero(alpha) && isone(beta))) return;
  if (iszero(alpha)) {
    scale_mat(m, n, beta, c, ldc, 0, 0);
    return;
  }
  const int upper = uplo == 'U';
  const int64_t na = side == 'L' ? m : n;
  /* The full matrix, then one general product. */
  T* full = malloc((size_t) (na > 0 ? na * na : 1) * sizeof(T));
  if (!full) return;
  for (int64_t j = 0; j < na; j++)
    for (int64_t i = 0; i < na; i++) full[i + j * na] = symel(a, lda, upper, herm, i, j);
  if (side == 'L')
    S(gemm_run)('N', 'N', m, n, m, alpha, full, na, b, ldb, beta, c, ldc);
  else
    S(gemm_run)('N', 'N', m, n, n, alpha, b, ldb, full, na, beta, c, ldc);
  free(full);
}

/* syrk / herk: C <- alpha op(A) op(A)' + beta C on the uplo triangle (' as in shr). */
static int syrk_check(int herm, char uplo, char tr, int n, int k, int lda, int ldc) {
  if (uplo != 'U' && uplo != 'L') return 1;
  if (!(tr == 'N' || (herm ? tr == 'C' : (tr == 'T' || (!TG_CPLX && tr == 'C'))))) return 2;
  if (n < 0) return 3;
  if (k < 0) return 4;
  if (lda < tg_max1(tr == 'N' ? n : k)) return 7;
  if (ldc < tg_max1(n)) return 10;
  return 0;
}

static int syr2k_check(int herm, char uplo, char tr, int n, int k, int lda, int ldb, int ldc) {
  if (uplo != 'U' && uplo != 'L') return 1;
  if (!(tr == 'N' || (herm ? tr == 'C' : (tr == 'T' || (!TG_CPLX && tr == 'C'))))) return 2;
  if (n < 0) return 3;
  if (k < 0) return 4;
  if (lda < tg_max1(tr == 'N' ? n : k)) return 7;
  if (ldb < tg_max1(tr == 'N' ? n : k)) return 9;
  if (ldc < tg_max1(n)) return 12;
  return 0;
}

#if !TG_CPLX
/* ---- real level 3 on tilegen's GEMM: recursive halving, so all but O(n^2 * leaf) of the work
   runs in the (threaded, packed, generated-kernel) product; the leaves are small. */

/* C <- alpha A B + beta C, every operand strided (element (i, j) of A at a[i*rsa + j*csa]). */
static void S(gemm_s)(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t rsa,
                      int64_t csa, const T* b, int64_t rsb, int64_t csb, T beta, T* c,
                      int64_t rsc, int64_t csc) {
  if (m <= 0 || n <= 0) return;
  TG_GEMM_REAL(m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc, NULL, 0, 0);
}

/* Y (n x m, strides rsy, csy) <- M^-1 Y (solve) or M Y, M the n x n lower / upper triangular
   matrix at a with strides (rsa, csa) (one of them 1), unit diagonal or not. */
static void S(trx_rec)(int solve, int lower, char diag, int64_t n, int64_t m, const T* a,
                       int64_t rsa, int64_t csa, T* y, int64_t rsy, int64_t csy) {
  if (n <= TRX_LEAF && !solve && m >= 64) {
    /* many columns: the triangle as a dense tile, one product into a scratch panel */
    T tri[TRX_LEAF * TRX_LEAF];
    T* tmp = malloc((size_t) (n * m) * sizeof(T));
    if (tmp) {
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
          tri[i + j * n] = i == j ? (diag == 'U' ? 1 : a[i * (rsa + csa)])
                                  : ((i > j) == lower ? a[i * rsa + j * csa] : 0);
      S(gemm_s)(n, m, n, 1, tri, 1, n, y, rsy, csy, 0, tmp, 1, n);
      for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < n; i++) y[i * rsy + j * csy] = tmp[i + j * n];
      free(tmp);
      return;
    }
  }
  if (n <= TRX_LEAF) {
    /* M column-major (rsa = 1) is 'N' on lda = csa; else M^T is column-major on lda = rsa */
    const int colmajor = rsa == 1;
    const char ul = (lower == colmajor) ? 'L' : 'U';
    for (int64_t j = 0; j < m; j++) /* (the core wants a vector's lowest address) */
      S(trxv)(solve, FULL, ul, colmajor ? 'N' : 'T', diag, (int) n, 0, a,
              (int) (colmajor ? csa : rsa), y + j * csy + (rsy < 0 ? (n - 1) * rsy : 0),
              (int) rsy);
    return;
  }
  const int64_t n1 = n / 2, n2 = n - n1;
  const T *a11 = a, *a22 = a + n1 * (rsa + csa), *a21 = a + n1 * rsa, *a12 = a + n1 * csa;
  T *y1 = y, *y2 = y + n1 * rsy;
  if (solve && lower) {
    S(trx_rec)(1, 1, diag, n1, m, a11, rsa, csa, y1, rsy, csy);
    S(gemm_s)(n2, m, n1, -1, a21, rsa, csa, y1, rsy, csy, 1, y2, rsy, csy);
    S(trx_rec)(1, 1, diag, n2, m, a22, rsa, csa, y2, rsy, csy);
  } else if (solve) {
    S(trx_rec)(1, 0, diag, n2, m, a22, rsa, csa, y2, rsy, csy);
    S(gemm_s)(n1, m, n2, -1, a12, rsa, csa, y2, rsy, csy, 1, y1, rsy, csy);
    S(trx_rec)(1, 0, diag, n1, m, a11, rsa, csa, y1, rsy, csy);
  } else if (lower) { /* y2 first: it needs the original y1 */
    S(trx_rec)(0, 1, diag, n2, m, a22, rsa, csa, y2, rsy, csy);
    S(gemm_s)(n2, m, n1, 1, a21, rsa, csa, y1, rsy, csy, 1, y2, rsy, csy);
    S(trx_rec)(0, 1, diag, n1, m, a11, rsa, csa, y1, rsy, csy);
  } else {
    S(trx_rec)(0, 0, diag, n1, m, a11, rsa, csa, y1, rsy, csy);
    S(gemm_s)(n1, m, n2, 1, a12, rsa, csa, y2, rsy, csy, 1, y1, rsy, csy);
    S(trx_rec)(0, 0, diag, n2, m, a22, rsa, csa, y2, rsy, csy);
  }
}

/* The uplo triangle of C (n x n, column-major) <- alpha P Q^T (+ alpha Q P^T when rank2) +
   beta C, P and Q n x k with strides (rs, cs); beta = 0 does not read C. */
static void S(syrk_rec)(int upper, int rank2, int64_t n, int64_t k, T alpha, const T* p,
                        const T* q, int64_t rs, int64_t cs, T beta, T* c, int64_t ldc) {
  if (n <= SYRK_LEAF) {
    T tmp[SYRK_LEAF * SYRK_LEAF];
    S(gemm_s)(n, n, k, alpha, p, rs, cs, q, cs, rs, 0, tmp, 1, n);
    if (rank2) S(gemm_s)(n, n, k, alpha, q, rs, cs, p, cs, rs, 1, tmp, 1, n);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = upper ? 0 : j; i <= (upper ? j : n - 1); i++) {
        T* e = c + i + j * ldc;
        *e = iszero(beta) ? tmp[i + j * n] : tmp[i + j * n] + beta * *e;
      }
    return;
  }
  const int64_t n1 = n / 2, n2 = n - n1;
  S(syrk_rec)(upper, rank2, n1, k, alpha, p, q, rs, cs, beta, c, ldc);
  S(syrk_rec)(upper, rank2, n2, k, alpha, p + n1 * rs, q + n1 * rs, rs, cs, beta,
              c + n1 * (1 + ldc), ldc);
  /* the off-diagonal block: C12 = P1 Q2^T (upper) or C21 = P2 Q1^T (lower) */
  const int64_t mo = upper ? n1 : n2, no = upper ? n2 : n1;
  const T *pr = upper ? p : p + n1 * rs, *qc = upper ? q + n1 * rs : q;
  const T *qr = upper ? q : q + n1 * rs, *pc = upper ? p + n1 * rs : p;
  T* co = upper ? c + n1 * ldc : c + n1;
  S(gemm_s)(mo, no, k, alpha, pr, rs, cs, qc, cs, rs, beta, co, 1, ldc);
  if (rank2) S(gemm_s)(mo, no, k, alpha, qr, rs, cs, pc, cs, rs, 1, co, 1, ldc);
}
#endif

/* rank 2k when b != NULL: C <- alpha op(A) op(B)' + alpha' op(B) op(A)' + beta C. */
static void S(syrk)(int herm, char uplo, char tr, int n, int k, T alpha, const T* a, int lda,
                    const T* b, int ldb, T beta, T* c, int ldc) {
  if (n == 0 || ((iszero(alpha) || k == 0) && isone(beta))) return;
  const int upper = uplo == 'U', notr = tr == 'N';
#if !TG_CPLX
  if (!iszero(alpha) && k > 0) { /* op(A), op(B): n x k, strided */
    const int64_t rs = notr ? 1 : lda, cs = notr ? lda : 1;
    if (b && (notr ? 1 : ldb) == rs && (notr ? ldb : 1) == cs) {
      S(syrk_rec)(upper, 1, n, k, alpha, a, b, rs, cs, beta, c, ldc);
      return;
    }
    if (!b) {
      S(syrk_rec)(upper, 0, n, k, alpha, a, a, rs, cs, beta, c, ldc);
      return;
    }
  }
#endif
  scale_mat(n, n, beta, c, ldc, uplo, herm);
  if (iszero(alpha)) return;
  const T alpha2 = cjif(herm, alpha);
  /* element l of row i of op(A): A(i, l) when not transposed, else A(l, i) (conjugated for
     herk's 'C' on the left factor, as op(A)^H = conj(A)^T) */
  for (int64_t j = 0; j < n; j++) {
    const int64_t lo = upper ? 0 : j, hi = upper ? j : n - 1;
    for (int64_t i = lo; i <= hi; i++) {
      T s1 = 0, s2 = 0;
      for (int64_t l = 0; l < k; l++) {
        T ai, aj, bi = 0, bj = 0;
        if (notr) {
          ai = a[i + l * lda];
          aj = a[j + l * lda];
          if (b) {
            bi = b[i + l * ldb];
            bj = b[j + l * ldb];
          }
          s1 += mul(ai, cjif(herm, b ? bj : aj));
          if (b) s2 += mul(bi, cjif(herm, aj));
        } else {
          ai = a[l + i * lda];
          aj = a[l + j * lda];
          if (b) {
            bi = b[l + i * ldb];
            bj = b[l + j * ldb];
          }
          s1 += mul(cjif(herm, ai), b ? bj : aj);
          if (b) s2 += mul(cjif(herm, bi), aj);
        }
      }
      T v = mul(alpha, s1);
      if (b) v += mul(alpha2, s2);
      T* p = c + i + j * (int64_t) ldc;
      if (herm && i == j)
        *p = mk(re(*p) + re(v), 0);
      else
        *p += v;
    }
  }
}

/* trmm / trsm: B <- alpha op(A) B or alpha B op(A) (trmm), or the solutions of
   op(A) X = alpha B or X op(A) = alpha B (trsm), in place. Column by column (side L) or row by
   row (side R, where x op(A) = (op(A)^T x^T)^T) through the triangular mv/sv core. */
static int trmm_check(char side, char uplo, char tr, char diag, int m, int n, int lda, int ldb) {
  if (side != 'L' && side != 'R') return 1;
  if (uplo != 'U' && uplo != 'L') return 2;
  if (tr != 'N' && tr != 'T' && tr != 'C') return 3;
  if (diag != 'U' && diag != 'N') return 4;
  if (m < 0) return 5;
  if (n < 0) return 6;
  if (lda < tg_max1(side == 'L' ? m : n)) return 9;
  if (ldb < tg_max1(m)) return 11;
  return 0;
}

static void S(trxm)(int solve, char side, char uplo, char tr, char diag, int m, int n, T alpha,
                    const T* a, int lda, T* b, int ldb) {
  if (m == 0 || n == 0) return;
  scale_mat(m, n, alpha, b, ldb, 0, 0);
  if (iszero(alpha)) return;
#if !TG_CPLX
  { /* op(A) as a strided matrix (real: C is T); side R: X op(A) = B is op(A)^T X^T = B^T */
    const int t = tr != 'N';
    const int64_t rsa = t ? lda : 1, csa = t ? 1 : lda;
    const int lower = (uplo == 'L') != t;
    if (side == 'L')
      S(trx_rec)(solve, lower, diag, m, n, a, rsa, csa, b, 1, ldb);
    else
      S(trx_rec)(solve, !lower, diag, n, m, a, csa, rsa, b, ldb, 1);
    return;
  }
#endif
  if (side == 'L') {
    for (int64_t j = 0; j < n; j++) S(trxv)(solve, FULL, uplo, tr, diag, m, 0, a, lda,
                                            b + j * (int64_t) ldb, 1);
  } else {
    /* row i of B: b[i + j*ldb]; op(A)^T: N -> T, T -> N, C -> R (conjugate, not transposed) */
    const char trt = tr == 'N' ? 'T' : tr == 'T' ? 'N' : 'R';
    for (int64_t i = 0; i < m; i++) S(trxv)(solve, FULL, uplo, trt, diag, n, 0, a, lda, b + i, ldb);
  }
}

/* ================================================================== Fortran ABI */

#define F77I(x) (*(x))

TG_BLAS_API void F(swap_)(const int* n, T* x, const int* incx, T* y, const int* incy) {
  S(swap)(*n, x, *incx, y, *incy);
}
TG_BLAS_API void F(scal_)(const int* n, const T* a, T* x, const int* incx) {
  S(scal)(*n, *a, x, *incx);
}
#if TG_CPLX
TG_BLAS_API void FS(scal_)(const int* n, const R* a, T* x, const int* incx) {
  S(rscal)(*n, *a, x, *incx);
}
#endif
TG_BLAS_API void F(copy_)(const int* n, const T* x, const int* incx, T* y, const int* incy) {
  S(copy)(*n, x, *incx, y, *incy);
}
TG_BLAS_API void F(axpy_)(const int* n, const T* a, const T* x, const int* incx, T* y,
                          const int* incy) {
  S(axpy)(*n, *a, x, *incx, y, *incy);
}
#if TG_CPLX
TG_BLAS_API T F(dotu_)(const int* n, const T* x, const int* incx, const T* y, const int* incy) {
  return S(dot)(0, *n, x, *incx, y, *incy);
}
TG_BLAS_API T F(dotc_)(const int* n, const T* x, const int* incx, const T* y, const int* incy) {
  return S(dot)(1, *n, x, *incx, y, *incy);
}
#else
TG_BLAS_API T F(dot_)(const int* n, const T* x, const int* incx, const T* y, const int* incy) {
  return S(dot)(0, *n, x, *incx, y, *incy);
}
#endif
TG_BLAS_API R FR(nrm2_)(const int* n, const T* x, const int* incx) {
  return S(nrm2)(*n, x, *incx);
}
TG_BLAS_API R FR(asum_)(const int* n, const T* x, const int* incx) {
  return S(asum)(*n, x, *incx);
}
TG_BLAS_API int TG_CAT(i, F(amax_))(const int* n, const T* x, const int* incx) {
  return S(iamax)(*n, x, *incx);
}
TG_BLAS_API void FS(rot_)(const int* n, T* x, const int* incx, T* y, const int* incy,
                          const R* c, const R* s) {
  S(rot)(*n, x, *incx, y, *incy, *c, *s);
}
#if !TG_CPLX
TG_BLAS_API void F(rotg_)(T* a, T* b, T* c, T* s) { S(rotg)(a, b, c, s); }
TG_BLAS_API void F(rotmg_)(T* d1, T* d2, T* x1, const T* y1, T* param) {
  S(rotmg)(d1, d2, x1, *y1, param);
}
TG_BLAS_API void F(rotm_)(const int* n, T* x, const int* incx, T* y, const int* incy,
                          const T* param) {
  S(rotm)(*n, x, *incx, y, *incy, param);
}
#else
TG_BLAS_API void F(rotg_)(T* a, const T* b, R* c, T* s) { S(rotg)(a, *b, c, s); }
TG_BLAS_API R TG_CAT(TG_RL, cabs1_)(const T* z) { return abs1(*z); }
#endif

#ifdef TG_MIXED_DOT
/* float vectors, double accumulation: sdsdot (plus sb, float result) and dsdot. */
static double mixed_dot(int n, const float* x, int incx, const float* y, int incy) {
  double s = 0;
  if (n <= 0) return s;
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) s += (double) x[ix] * (double) y[iy];
  return s;
}
TG_BLAS_API float sdsdot_(const int* n, const float* sb, const float* x, const int* incx,
                          const float* y, const int* incy) {
  return (float) (*sb + mixed_dot(*n, x, *incx, y, *incy));
}
TG_BLAS_API double dsdot_(const int* n, const float* x, const int* incx, const float* y,
                          const int* incy) {
  return mixed_dot(*n, x, *incx, y, *incy);
}
TG_BLAS_API float cblas_sdsdot(const int n, const float alpha, const float* x, const int incx,
                               const float* y, const int incy) {
  return (float) (alpha + mixed_dot(n, x, incx, y, incy));
}
TG_BLAS_API double cblas_dsdot(const int n, const float* x, const int incx, const float* y,
                               const int incy) {
  return mixed_dot(n, x, incx, y, incy);
}
#endif

/* ---- level 2 */

static int gemv_check(char tr, int m, int n, int lda, int incx, int incy) {
  if (tr != 'N' && tr != 'T' && tr != 'C') return 1;
  if (m < 0) return 2;
  if (n < 0) return 3;
  if (lda < tg_max1(m)) return 6;
  if (incx == 0) return 8;
  if (incy == 0) return 11;
  return 0;
}
TG_BLAS_API void F(gemv_)(const char* trans, const int* m, const int* n, const T* alpha,
                          const T* a, const int* lda, const T* x, const int* incx, const T* beta,
                          T* y, const int* incy) {
  const char tr = tg_up(trans);
  const int info = gemv_check(tr, *m, *n, *lda, *incx, *incy);
  if (info) return tg_blas_error(XNAME("GEMV "), info);
  S(gbmv)(tr, 0, *m, *n, 0, 0, *alpha, a, *lda, x, *incx, *beta, y, *incy);
}

static int gbmv_check(char tr, int m, int n, int kl, int ku, int lda, int incx, int incy) {
  if (tr != 'N' && tr != 'T' && tr != 'C') return 1;
  if (m < 0) return 2;
  if (n < 0) return 3;
  if (kl < 0) return 4;
  if (ku < 0) return 5;
  if (lda < kl + ku + 1) return 8;
  if (incx == 0) return 10;
  if (incy == 0) return 13;
  return 0;
}
TG_BLAS_API void F(gbmv_)(const char* trans, const int* m, const int* n, const int* kl,
                          const int* ku, const T* alpha, const T* a, const int* lda, const T* x,
                          const int* incx, const T* beta, T* y, const int* incy) {
  const char tr = tg_up(trans);
  const int info = gbmv_check(tr, *m, *n, *kl, *ku, *lda, *incx, *incy);
  if (info) return tg_blas_error(XNAME("GBMV "), info);
  S(gbmv)(tr, 1, *m, *n, *kl, *ku, *alpha, a, *lda, x, *incx, *beta, y, *incy);
}

/* symv/hemv (full), sbmv/hbmv (band), spmv/hpmv (packed) */
static int shmv_check(int storage, char uplo, int n, int k, int lda, int incx, int incy) {
  if (uplo != 'U' && uplo != 'L') return 1;
  if (n < 0) return 2;
  if (storage == BAND) {
    if (k < 0) return 3;
    if (lda < k + 1) return 6;
    if (incx == 0) return 8;
    if (incy == 0) return 11;
  } else if (storage == PACKED) {
    if (incx == 0) return 6;
    if (incy == 0) return 9;
  } else {
    if (lda < tg_max1(n)) return 5;
    if (incx == 0) return 7;
    if (incy == 0) return 10;
  }
  return 0;
}

#define TG_SHMV(NAME, XN, STORAGE, HERM)                                                        \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const int* n, const T* alpha, const T* a,       \
                              const int* lda, const T* x, const int* incx, const T* beta, T* y, \
                              const int* incy) {                                                \
    const char ul = tg_up(uplo);                                                                \
    const int info = shmv_check(STORAGE, ul, *n, 0, *lda, *incx, *incy);                        \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(shmv)(STORAGE, ul, HERM, 0, *n, 0, *alpha, a, *lda, x, *incx, *beta, y, *incy);           \
  }
#define TG_SBMV(NAME, XN, HERM)                                                                 \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const int* n, const int* k, const T* alpha,     \
                              const T* a, const int* lda, const T* x, const int* incx,          \
                              const T* beta, T* y, const int* incy) {                           \
    const char ul = tg_up(uplo);                                                                \
    const int info = shmv_check(BAND, ul, *n, *k, *lda, *incx, *incy);                          \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(shmv)(BAND, ul, HERM, 0, *n, *k, *alpha, a, *lda, x, *incx, *beta, y, *incy);             \
  }
#define TG_SPMV(NAME, XN, HERM)                                                                 \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const int* n, const T* alpha, const T* ap,      \
                              const T* x, const int* incx, const T* beta, T* y,                 \
                              const int* incy) {                                                \
    const char ul = tg_up(uplo);                                                                \
    const int info = shmv_check(PACKED, ul, *n, 0, 1, *incx, *incy);                            \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(shmv)(PACKED, ul, HERM, 0, *n, 0, *alpha, ap, 1, x, *incx, *beta, y, *incy);              \
  }
#if TG_CPLX
TG_SHMV(hemv, "HEMV ", FULL, 1)
TG_SBMV(hbmv, "HBMV ", 1)
TG_SPMV(hpmv, "HPMV ", 1)
#else
TG_SHMV(symv, "SYMV ", FULL, 0)
TG_SBMV(sbmv, "SBMV ", 0)
TG_SPMV(spmv, "SPMV ", 0)
#endif

/* trmv/trsv, tbmv/tbsv, tpmv/tpsv */
static int trxv_check(int storage, char uplo, char tr, char diag, int n, int k, int lda,
                      int incx) {
  if (uplo != 'U' && uplo != 'L') return 1;
  if (tr != 'N' && tr != 'T' && tr != 'C') return 2;
  if (diag != 'U' && diag != 'N') return 3;
  if (n < 0) return 4;
  if (storage == BAND) {
    if (k < 0) return 5;
    if (lda < k + 1) return 7;
    if (incx == 0) return 9;
  } else if (storage == PACKED) {
    if (incx == 0) return 7;
  } else {
    if (lda < tg_max1(n)) return 6;
    if (incx == 0) return 8;
  }
  return 0;
}
#define TG_TRXV(NAME, XN, SOLVE)                                                               \
  TG_BLAS_API void F(tr##NAME##_)(const char* uplo, const char* trans, const char* diag,       \
                                  const int* n, const T* a, const int* lda, T* x,              \
                                  const int* incx) {                                           \
    const char ul = tg_up(uplo), tr = tg_up(trans), dg = tg_up(diag);                          \
    const int info = trxv_check(FULL, ul, tr, dg, *n, 0, *lda, *incx);                         \
    if (info) return tg_blas_error(XNAME("TR" XN), info);                                      \
    S(trxv)(SOLVE, FULL, ul, tr, dg, *n, 0, a, *lda, x, *incx);                                \
  }                                                                                            \
  TG_BLAS_API void F(tb##NAME##_)(const char* uplo, const char* trans, const char* diag,       \
                                  const int* n, const int* k, const T* a, const int* lda, T* x, \
                                  const int* incx) {                                           \
    const char ul = tg_up(uplo), tr = tg_up(trans), dg = tg_up(diag);                          \
    const int info = trxv_check(BAND, ul, tr, dg, *n, *k, *lda, *incx);                        \
    if (info) return tg_blas_error(XNAME("TB" XN), info);                                      \
    S(trxv)(SOLVE, BAND, ul, tr, dg, *n, *k, a, *lda, x, *incx);                               \
  }                                                                                            \
  TG_BLAS_API void F(tp##NAME##_)(const char* uplo, const char* trans, const char* diag,       \
                                  const int* n, const T* ap, T* x, const int* incx) {          \
    const char ul = tg_up(uplo), tr = tg_up(trans), dg = tg_up(diag);                          \
    const int info = trxv_check(PACKED, ul, tr, dg, *n, 0, 1, *incx);                          \
    if (info) return tg_blas_error(XNAME("TP" XN), info);                                      \
    S(trxv)(SOLVE, PACKED, ul, tr, dg, *n, 0, ap, 1, x, *incx);                                \
  }
TG_TRXV(mv, "MV ", 0)
TG_TRXV(sv, "SV ", 1)

/* ger / geru / gerc */
static int ger_check(int m, int n, int incx, int incy, int lda) {
  if (m < 0) return 1;
  if (n < 0) return 2;
  if (incx == 0) return 5;
  if (incy == 0) return 7;
  if (lda < tg_max1(m)) return 9;
  return 0;
}
#define TG_GER(NAME, XN, CJY)                                                                   \
  TG_BLAS_API void F(NAME##_)(const int* m, const int* n, const T* alpha, const T* x,           \
                              const int* incx, const T* y, const int* incy, T* a,               \
                              const int* lda) {                                                 \
    const int info = ger_check(*m, *n, *incx, *incy, *lda);                                     \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(ger)(0, CJY, *m, *n, *alpha, x, *incx, y, *incy, a, *lda);                                \
  }
#if TG_CPLX
TG_GER(geru, "GERU ", 0)
TG_GER(gerc, "GERC ", 1)
#else
TG_GER(ger, "GER  ", 0)
#endif

/* syr/her, spr/hpr, syr2/her2, spr2/hpr2 */
static int shr_check(int rank2, int packed, char uplo, int n, int incx, int incy, int lda) {
  if (uplo != 'U' && uplo != 'L') return 1;
  if (n < 0) return 2;
  if (incx == 0) return 5;
  if (rank2 && incy == 0) return 7;
  if (!packed && lda < tg_max1(n)) return rank2 ? 9 : 7;
  return 0;
}
#define TG_SHR1(NAME, XN, PACKED, HERM, AT)                                                     \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const int* n, const AT* alpha, const T* x,      \
                              const int* incx, T* a, const int* lda) {                          \
    const char ul = tg_up(uplo);                                                                \
    const int info = shr_check(0, PACKED, ul, *n, *incx, 1, *lda);                              \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(shr)(0, PACKED, ul, HERM, 0, *n, *alpha, x, *incx, NULL, 0, a, *lda);                     \
  }
#define TG_SPR1(NAME, XN, HERM, AT)                                                             \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const int* n, const AT* alpha, const T* x,      \
                              const int* incx, T* ap) {                                         \
    const char ul = tg_up(uplo);                                                                \
    const int info = shr_check(0, 1, ul, *n, *incx, 1, 1);                                      \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(shr)(0, 1, ul, HERM, 0, *n, *alpha, x, *incx, NULL, 0, ap, 1);                            \
  }
#define TG_SHR2(NAME, XN, HERM)                                                                 \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const int* n, const T* alpha, const T* x,       \
                              const int* incx, const T* y, const int* incy, T* a,               \
                              const int* lda) {                                                 \
    const char ul = tg_up(uplo);                                                                \
    const int info = shr_check(1, 0, ul, *n, *incx, *incy, *lda);                               \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(shr)(1, 0, ul, HERM, 0, *n, *alpha, x, *incx, y, *incy, a, *lda);                         \
  }
#define TG_SPR2(NAME, XN, HERM)                                                                 \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const int* n, const T* alpha, const T* x,       \
                              const int* incx, const T* y, const int* incy, T* ap) {            \
    const char ul = tg_up(uplo);                                                                \
    const int info = shr_check(1, 1, ul, *n, *incx, *incy, 1);                                  \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(shr)(1, 1, ul, HERM, 0, *n, *alpha, x, *incx, y, *incy, ap, 1);                           \
  }
#if TG_CPLX
TG_SHR1(her, "HER  ", 0, 1, R)
TG_SPR1(hpr, "HPR  ", 1, R)
TG_SHR2(her2, "HER2 ", 1)
TG_SPR2(hpr2, "HPR2 ", 1)
#else
TG_SHR1(syr, "SYR  ", 0, 0, T)
TG_SPR1(spr, "SPR  ", 0, T)
TG_SHR2(syr2, "SYR2 ", 0)
TG_SPR2(spr2, "SPR2 ", 0)
#endif

/* ---- level 3 */

TG_BLAS_API void F(gemm_)(const char* transa, const char* transb, const int* m, const int* n,
                          const int* k, const T* alpha, const T* a, const int* lda, const T* b,
                          const int* ldb, const T* beta, T* c, const int* ldc) {
  const char ta = tg_up(transa), tb = tg_up(transb);
  const int info = gemm_check(ta, tb, *m, *n, *k, *lda, *ldb, *ldc);
  if (info) return tg_blas_error(XNAME("GEMM "), info);
  S(gemm)(ta, tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
}

static void S(gemmt_f77)(const char* name, const char* uplo, const char* transa,
                         const char* transb, const int* n, const int* k, const T* alpha,
                         const T* a, const int* lda, const T* b, const int* ldb, const T* beta,
                         T* c, const int* ldc) {
  const char ul = tg_up(uplo), ta = tg_up(transa), tb = tg_up(transb);
  const int info = gemmt_check(ul, ta, tb, *n, *k, *lda, *ldb, *ldc);
  if (info) return tg_blas_error(name, info);
  S(gemmt)(ul, ta, tb, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
}
TG_BLAS_API void F(gemmt_)(const char* uplo, const char* transa, const char* transb,
                           const int* n, const int* k, const T* alpha, const T* a,
                           const int* lda, const T* b, const int* ldb, const T* beta, T* c,
                           const int* ldc) {
  S(gemmt_f77)(XNAME("GEMMT"), uplo, transa, transb, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
TG_BLAS_API void F(gemmtr_)(const char* uplo, const char* transa, const char* transb,
                            const int* n, const int* k, const T* alpha, const T* a,
                            const int* lda, const T* b, const int* ldb, const T* beta, T* c,
                            const int* ldc) {
  S(gemmt_f77)(XNAME("GEMMTR"), uplo, transa, transb, n, k, alpha, a, lda, b, ldb, beta, c,
               ldc);
}

#define TG_SYMM(NAME, XN, HERM)                                                                 \
  TG_BLAS_API void F(NAME##_)(const char* side, const char* uplo, const int* m, const int* n,   \
                              const T* alpha, const T* a, const int* lda, const T* b,           \
                              const int* ldb, const T* beta, T* c, const int* ldc) {            \
    const char sd = tg_up(side), ul = tg_up(uplo);                                              \
    const int info = symm_check(sd, ul, *m, *n, *lda, *ldb, *ldc);                              \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(symm)(HERM, sd, ul, *m, *n, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);                    \
  }
TG_SYMM(symm, "SYMM ", 0)
#if TG_CPLX
TG_SYMM(hemm, "HEMM ", 1)
#endif

#define TG_SYRK(NAME, XN, HERM, ST)                                                             \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const char* trans, const int* n, const int* k,  \
                              const ST* alpha, const T* a, const int* lda, const ST* beta,      \
                              T* c, const int* ldc) {                                           \
    const char ul = tg_up(uplo), tr = tg_up(trans);                                             \
    const int info = syrk_check(HERM, ul, tr, *n, *k, *lda, *ldc);                              \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(syrk)(HERM, ul, tr, *n, *k, *alpha, a, *lda, NULL, 0, *beta, c, *ldc);                    \
  }
#define TG_SYR2K(NAME, XN, HERM, BT)                                                            \
  TG_BLAS_API void F(NAME##_)(const char* uplo, const char* trans, const int* n, const int* k,  \
                              const T* alpha, const T* a, const int* lda, const T* b,           \
                              const int* ldb, const BT* beta, T* c, const int* ldc) {           \
    const char ul = tg_up(uplo), tr = tg_up(trans);                                             \
    const int info = syr2k_check(HERM, ul, tr, *n, *k, *lda, *ldb, *ldc);                       \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(syrk)(HERM, ul, tr, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);                    \
  }
TG_SYRK(syrk, "SYRK ", 0, T)
TG_SYR2K(syr2k, "SYR2K", 0, T)
#if TG_CPLX
TG_SYRK(herk, "HERK ", 1, R)
TG_SYR2K(her2k, "HER2K", 1, R)
#endif

#define TG_TRXM(NAME, XN, SOLVE)                                                                \
  TG_BLAS_API void F(NAME##_)(const char* side, const char* uplo, const char* transa,           \
                              const char* diag, const int* m, const int* n, const T* alpha,     \
                              const T* a, const int* lda, T* b, const int* ldb) {               \
    const char sd = tg_up(side), ul = tg_up(uplo), tr = tg_up(transa), dg = tg_up(diag);        \
    const int info = trmm_check(sd, ul, tr, dg, *m, *n, *lda, *ldb);                            \
    if (info) return tg_blas_error(XNAME(XN), info);                                            \
    S(trxm)(SOLVE, sd, ul, tr, dg, *m, *n, *alpha, a, *lda, b, *ldb);                           \
  }
TG_TRXM(trmm, "TRMM ", 0)
TG_TRXM(trsm, "TRSM ", 1)

/* ================================================================== CBLAS */

/* Level 1 */
TG_BLAS_API void CB(swap)(const int n, VPTR x, const int incx, VPTR y, const int incy) {
  S(swap)(n, (T*) x, incx, (T*) y, incy);
}
TG_BLAS_API void CB(scal)(const int n, CSCAL a, VPTR x, const int incx) {
  S(scal)(n, CVAL(a), (T*) x, incx);
}
#if TG_CPLX
TG_BLAS_API void CBS(scal)(const int n, const R a, void* x, const int incx) {
  S(rscal)(n, a, (T*) x, incx);
}
#endif
TG_BLAS_API void CB(copy)(const int n, CPTR x, const int incx, VPTR y, const int incy) {
  S(copy)(n, (const T*) x, incx, (T*) y, incy);
}
TG_BLAS_API void CB(axpy)(const int n, CSCAL a, CPTR x, const int incx, VPTR y,
                          const int incy) {
  S(axpy)(n, CVAL(a), (const T*) x, incx, (T*) y, incy);
}
#if TG_CPLX
TG_BLAS_API void CB(dotu_sub)(const int n, const void* x, const int incx, const void* y,
                              const int incy, void* dotu) {
  *(T*) dotu = S(dot)(0, n, (const T*) x, incx, (const T*) y, incy);
}
TG_BLAS_API void CB(dotc_sub)(const int n, const void* x, const int incx, const void* y,
                              const int incy, void* dotc) {
  *(T*) dotc = S(dot)(1, n, (const T*) x, incx, (const T*) y, incy);
}
TG_BLAS_API R TG_CAT(TG_CAT(cblas_, TG_RL), cabs1)(const void* z) { return abs1(*(const T*) z); }
#else
TG_BLAS_API T CB(dot)(const int n, const T* x, const int incx, const T* y, const int incy) {
  return S(dot)(0, n, x, incx, y, incy);
}
#endif
TG_BLAS_API R CBR(nrm2)(const int n, CPTR x, const int incx) {
  return S(nrm2)(n, (const T*) x, incx);
}
TG_BLAS_API R CBR(asum)(const int n, CPTR x, const int incx) {
  return S(asum)(n, (const T*) x, incx);
}
TG_BLAS_API size_t TG_CAT(cblas_i, F(amax))(const int n, CPTR x, const int incx) {
  const int i = S(iamax)(n, (const T*) x, incx);
  return i ? (size_t) (i - 1) : 0;
}
TG_BLAS_API void CBS(rot)(const int n, VPTR x, const int incx, VPTR y, const int incy,
                          const R c, const R s) {
  S(rot)(n, (T*) x, incx, (T*) y, incy, c, s);
}
#if !TG_CPLX
TG_BLAS_API void CB(rotg)(T* a, T* b, T* c, T* s) { S(rotg)(a, b, c, s); }
TG_BLAS_API void CB(rotmg)(T* d1, T* d2, T* b1, const T b2, T* p) {
  S(rotmg)(d1, d2, b1, b2, p);
}
TG_BLAS_API void CB(rotm)(const int n, T* x, const int incx, T* y, const int incy,
                          const T* p) {
  S(rotm)(n, x, incx, y, incy, p);
}
#else
TG_BLAS_API void CB(rotg)(void* a, void* b, R* c, void* s) {
  S(rotg)((T*) a, *(const T*) b, c, (T*) s);
}
#endif

/* Level 2. The row-major calls run the column-major core on the transposed problem; the
   checks see that call's arguments, as the reference's Fortran routine does. */
#define ROW (layout == TG_ROW)
#define BAD_LAYOUT(name) (layout != TG_ROW && layout != TG_COL ? \
                          (tg_cblas_error(0, 1, CNAME(name)), 1) : 0)

TG_BLAS_API void CB(gemv)(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m, const int n,
                          CSCAL alpha, CPTR a, const int lda, CPTR x, const int incx,
                          CSCAL beta, VPTR y, const int incy) {
  if (BAD_LAYOUT("gemv")) return;
  char tr = tg_cb_trans(trans);
  if (!tr) return tg_cblas_error(ROW, 2, CNAME("gemv"));
  if (ROW) tr = tr == 'N' ? 'T' : tr == 'T' ? 'N' : 'R';
  const int mm = ROW ? n : m, nn = ROW ? m : n;
  const int info = gemv_check(tr == 'R' ? 'N' : tr, mm, nn, lda, incx, incy);
  if (info) return tg_cblas_error(ROW, info + 1, CNAME("gemv"));
  S(gbmv)(tr, 0, mm, nn, 0, 0, CVAL(alpha), (const T*) a, lda, (const T*) x, incx, CVAL(beta),
          (T*) y, incy);
}

TG_BLAS_API void CB(gbmv)(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE trans, const int m, const int n,
                          const int kl, const int ku, CSCAL alpha, CPTR a, const int lda,
                          CPTR x, const int incx, CSCAL beta, VPTR y, const int incy) {
  if (BAD_LAYOUT("gbmv")) return;
  char tr = tg_cb_trans(trans);
  if (!tr) return tg_cblas_error(ROW, 2, CNAME("gbmv"));
  if (ROW) tr = tr == 'N' ? 'T' : tr == 'T' ? 'N' : 'R';
  const int mm = ROW ? n : m, nn = ROW ? m : n, l = ROW ? ku : kl, u = ROW ? kl : ku;
  const int info = gbmv_check(tr == 'R' ? 'N' : tr, mm, nn, l, u, lda, incx, incy);
  if (info) return tg_cblas_error(ROW, info + 1, CNAME("gbmv"));
  S(gbmv)(tr, 1, mm, nn, l, u, CVAL(alpha), (const T*) a, lda, (const T*) x, incx, CVAL(beta),
          (T*) y, incy);
}

/* Row-major symmetric / Hermitian storage is the column-major storage of the other triangle
   of the transpose, which for a Hermitian matrix is its conjugate. */
#define TG_CB_SHMV(NAME, STORAGE, HERM)                                                        \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n, CSCAL alpha,        \
                            CPTR a, const int lda, CPTR x, const int incx, CSCAL beta,         \
                            VPTR y, const int incy) {                                          \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    char ul = tg_cb_uplo(uplo);                                                                \
    if (!ul) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                      \
    if (ROW) ul = tg_flip_uplo(ul);                                                            \
    const int info = shmv_check(STORAGE, ul, n, 0, lda, incx, incy);                           \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    S(shmv)(STORAGE, ul, HERM, HERM && ROW, n, 0, CVAL(alpha), (const T*) a, lda,              \
            (const T*) x, incx, CVAL(beta), (T*) y, incy);                                     \
  }
#define TG_CB_SBMV(NAME, HERM)                                                                 \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n, const int k,        \
                            CSCAL alpha, CPTR a, const int lda, CPTR x, const int incx,        \
                            CSCAL beta, VPTR y, const int incy) {                              \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    char ul = tg_cb_uplo(uplo);                                                                \
    if (!ul) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                      \
    if (ROW) ul = tg_flip_uplo(ul);                                                            \
    const int info = shmv_check(BAND, ul, n, k, lda, incx, incy);                              \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    S(shmv)(BAND, ul, HERM, HERM && ROW, n, k, CVAL(alpha), (const T*) a, lda, (const T*) x,   \
            incx, CVAL(beta), (T*) y, incy);                                                   \
  }
#define TG_CB_SPMV(NAME, HERM)                                                                 \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n, CSCAL alpha,        \
                            CPTR ap, CPTR x, const int incx, CSCAL beta, VPTR y,               \
                            const int incy) {                                                  \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    char ul = tg_cb_uplo(uplo);                                                                \
    if (!ul) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                      \
    if (ROW) ul = tg_flip_uplo(ul);                                                            \
    const int info = shmv_check(PACKED, ul, n, 0, 1, incx, incy);                              \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    S(shmv)(PACKED, ul, HERM, HERM && ROW, n, 0, CVAL(alpha), (const T*) ap, 1, (const T*) x,  \
            incx, CVAL(beta), (T*) y, incy);                                                   \
  }
#if TG_CPLX
TG_CB_SHMV(hemv, FULL, 1)
TG_CB_SBMV(hbmv, 1)
TG_CB_SPMV(hpmv, 1)
#else
TG_CB_SHMV(symv, FULL, 0)
TG_CB_SBMV(sbmv, 0)
TG_CB_SPMV(spmv, 0)
#endif

/* Triangular: the row-major matrix is the column-major storage of the transpose, in the
   other triangle: N <-> T, and ConjTrans becomes the conjugate, not transposed ('R'). */
static inline char cb_tr_row(char tr) { return tr == 'N' ? 'T' : tr == 'T' ? 'N' : 'R'; }

#define TG_CB_TRXV_HEAD(NAME)                                                                  \
  if (BAD_LAYOUT(#NAME)) return;                                                               \
  char ul = tg_cb_uplo(uplo), tr = tg_cb_trans(trans), dg = tg_cb_diag(diag);                  \
  if (!ul) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                        \
  if (!tr) return tg_cblas_error(ROW, 3, CNAME(#NAME));                                        \
  if (!dg) return tg_cblas_error(ROW, 4, CNAME(#NAME));                                        \
  if (ROW) {                                                                                   \
    ul = tg_flip_uplo(ul);                                                                     \
    tr = cb_tr_row(tr);                                                                        \
  }
#define TG_CB_TRXV(NAME, SOLVE)                                                                \
  TG_BLAS_API void CB(tr##NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans,             \
                                const CBLAS_DIAG diag, const int n, CPTR a, const int lda, VPTR x,    \
                                const int incx) {                                              \
    TG_CB_TRXV_HEAD(tr##NAME)                                                                  \
    const int info = trxv_check(FULL, ul, tr == 'R' ? 'N' : tr, dg, n, 0, lda, incx);          \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME("tr" #NAME));                         \
    S(trxv)(SOLVE, FULL, ul, tr, dg, n, 0, (const T*) a, lda, (T*) x, incx);                   \
  }                                                                                            \
  TG_BLAS_API void CB(tb##NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans,             \
                                const CBLAS_DIAG diag, const int n, const int k, CPTR a,              \
                                const int lda, VPTR x, const int incx) {                       \
    TG_CB_TRXV_HEAD(tb##NAME)                                                                  \
    const int info = trxv_check(BAND, ul, tr == 'R' ? 'N' : tr, dg, n, k, lda, incx);          \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME("tb" #NAME));                         \
    S(trxv)(SOLVE, BAND, ul, tr, dg, n, k, (const T*) a, lda, (T*) x, incx);                   \
  }                                                                                            \
  TG_BLAS_API void CB(tp##NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans,             \
                                const CBLAS_DIAG diag, const int n, CPTR ap, VPTR x,                  \
                                const int incx) {                                              \
    TG_CB_TRXV_HEAD(tp##NAME)                                                                  \
    const int info = trxv_check(PACKED, ul, tr == 'R' ? 'N' : tr, dg, n, 0, 1, incx);          \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME("tp" #NAME));                         \
    S(trxv)(SOLVE, PACKED, ul, tr, dg, n, 0, (const T*) ap, 1, (T*) x, incx);                  \
  }
TG_CB_TRXV(mv, 0)
TG_CB_TRXV(sv, 1)

/* ger: row-major A^T <- alpha y x^T + A^T (gerc: alpha conj(y) x^T). */
#define TG_CB_GER(NAME, CJ)                                                                    \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const int m, const int n, CSCAL alpha, CPTR x,   \
                            const int incx, CPTR y, const int incy, VPTR a, const int lda) {   \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    const int info = ROW ? ger_check(n, m, incy, incx, lda) : ger_check(m, n, incx, incy, lda); \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    if (ROW)                                                                                   \
      S(ger)(CJ, 0, n, m, CVAL(alpha), (const T*) y, incy, (const T*) x, incx, (T*) a, lda);   \
    else                                                                                       \
      S(ger)(0, CJ, m, n, CVAL(alpha), (const T*) x, incx, (const T*) y, incy, (T*) a, lda);   \
  }
#if TG_CPLX
TG_CB_GER(geru, 0)
TG_CB_GER(gerc, 1)
#else
TG_CB_GER(ger, 0)
#endif

/* syr/her and friends: row-major is the other triangle; Hermitian: of the conjugate, that is
   x conjugated (and for her2/hpr2 x and y swapped, as the reference CBLAS calls it). */
#define TG_CB_SHR1(NAME, PACKED, HERM, AT, APARAM)                                             \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n, const AT alpha,     \
                            CPTR x, const int incx, VPTR a APARAM) {                           \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    char ul = tg_cb_uplo(uplo);                                                                \
    if (!ul) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                      \
    if (ROW) ul = tg_flip_uplo(ul);                                                            \
    const int ld = PACKED ? 1 : TG_LDA_ARG;                                                    \
    const int info = shr_check(0, PACKED, ul, n, incx, 1, ld);                                 \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    S(shr)(0, PACKED, ul, HERM, HERM && ROW, n, alpha, (const T*) x, incx, NULL, 0, (T*) a, ld); \
  }
#define TG_CB_SHR2(NAME, PACKED, HERM, APARAM)                                                 \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const int n, CSCAL alpha,        \
                            CPTR x, const int incx, CPTR y, const int incy, VPTR a APARAM) {   \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    char ul = tg_cb_uplo(uplo);                                                                \
    if (!ul) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                      \
    if (ROW) ul = tg_flip_uplo(ul);                                                            \
    const int ld = PACKED ? 1 : TG_LDA_ARG;                                                    \
    const int sw = HERM && ROW; /* x and y trade places */                                     \
    const int info = shr_check(1, PACKED, ul, n, sw ? incy : incx, sw ? incx : incy, ld);      \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    if (sw)                                                                                    \
      S(shr)(1, PACKED, ul, HERM, 1, n, CVAL(alpha), (const T*) y, incy, (const T*) x, incx,   \
             (T*) a, ld);                                                                      \
    else                                                                                       \
      S(shr)(1, PACKED, ul, HERM, 0, n, CVAL(alpha), (const T*) x, incx, (const T*) y, incy,   \
             (T*) a, ld);                                                                      \
  }
#define TG_LDA_ARG lda
#define TG_COMMA_LDA , const int lda
#if TG_CPLX
TG_CB_SHR1(her, 0, 1, R, TG_COMMA_LDA)
TG_CB_SHR2(her2, 0, 1, TG_COMMA_LDA)
#else
TG_CB_SHR1(syr, 0, 0, T, TG_COMMA_LDA)
TG_CB_SHR2(syr2, 0, 0, TG_COMMA_LDA)
#endif
#undef TG_LDA_ARG
#define TG_LDA_ARG 1
#if TG_CPLX
TG_CB_SHR1(hpr, 1, 1, R, )
TG_CB_SHR2(hpr2, 1, 1, )
#else
TG_CB_SHR1(spr, 1, 0, T, )
TG_CB_SHR2(spr2, 1, 0, )
#endif
#undef TG_LDA_ARG

/* Level 3. Row-major C = column-major C^T: gemm swaps A and B; symm/hemm, trmm/trsm swap the
   side and the triangle; syrk/herk, syr2k/her2k swap the triangle and transpose (N <-> T, or
   N <-> C for the Hermitian ones). */
/* cblas_?gemm (tri = 0) and cblas_?gemmt (tri: the CBLAS uplo; m = n): the parameters after
   layout move one place for gemmt. */
static void S(cb_gemm)(const char* name, int layout, int tri, int transa, int transb, int m, int n,
                       int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
                       int ldc) {
  const int o = tri != 0;
  if (layout != TG_ROW && layout != TG_COL) return tg_cblas_error(0, 1, name);
  char ul = tri ? tg_cb_uplo(tri) : 0;
  const char ta = tg_cb_trans(transa), tb = tg_cb_trans(transb);
  if (tri && !ul) return tg_cblas_error(ROW, 2, name);
  if (!ta) return tg_cblas_error(ROW, 2 + o, name);
  if (!tb) return tg_cblas_error(ROW, 3 + o, name);
  if (ROW && ul) ul = tg_flip_uplo(ul);
  /* row-major: the column-major product of the transposes, B first, as the reference */
  const char t1 = ROW ? tb : ta, t2 = ROW ? ta : tb;
  const T *p1 = ROW ? b : a, *p2 = ROW ? a : b;
  const int ld1 = ROW ? ldb : lda, ld2 = ROW ? lda : ldb, mm = ROW ? n : m, nn = ROW ? m : n;
  const int info = ul ? gemmt_check(ul, t1, t2, nn, k, ld1, ld2, ldc)
                      : gemm_check(t1, t2, mm, nn, k, ld1, ld2, ldc);
  if (info) return tg_cblas_error(ROW, info + 1, name);
  if (ul)
    S(gemmt)(ul, t1, t2, nn, k, alpha, p1, ld1, p2, ld2, beta, c, ldc);
  else
    S(gemm)(t1, t2, mm, nn, k, alpha, p1, ld1, p2, ld2, beta, c, ldc);
}
TG_BLAS_API void CB(gemm)(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                          const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                          CSCAL alpha, CPTR a, const int lda, CPTR b, const int ldb, CSCAL beta,
                          VPTR c, const int ldc) {
  S(cb_gemm)(CNAME("gemm"), layout, 0, transa, transb, m, n, k, CVAL(alpha), (const T*) a, lda,
             (const T*) b, ldb, CVAL(beta), (T*) c, ldc);
}
TG_BLAS_API void CB(gemmt)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo,
                           const CBLAS_TRANSPOSE transa, const CBLAS_TRANSPOSE transb, const int n,
                           const int k, CSCAL alpha, CPTR a, const int lda, CPTR b, const int ldb,
                           CSCAL beta, VPTR c, const int ldc) {
  S(cb_gemm)(CNAME("gemmt"), layout, uplo ? (int) uplo : -1, transa, transb, n, n, k, CVAL(alpha),
             (const T*) a, lda, (const T*) b, ldb, CVAL(beta), (T*) c, ldc);
}

#define TG_CB_SYMM(NAME, HERM)                                                                 \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_SIDE side, const CBLAS_UPLO uplo, const int m,     \
                            const int n, CSCAL alpha, CPTR a, const int lda, CPTR b,           \
                            const int ldb, CSCAL beta, VPTR c, const int ldc) {                \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    char sd = tg_cb_side(side), ul = tg_cb_uplo(uplo);                                         \
    if (!sd) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                      \
    if (!ul) return tg_cblas_error(ROW, 3, CNAME(#NAME));                                      \
    const int mm = ROW ? n : m, nn = ROW ? m : n;                                              \
    if (ROW) {                                                                                 \
      sd = tg_flip_side(sd);                                                                   \
      ul = tg_flip_uplo(ul);                                                                   \
    }                                                                                          \
    const int info = symm_check(sd, ul, mm, nn, lda, ldb, ldc);                                \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    S(symm)(HERM, sd, ul, mm, nn, CVAL(alpha), (const T*) a, lda, (const T*) b, ldb,           \
            CVAL(beta), (T*) c, ldc);                                                          \
  }
TG_CB_SYMM(symm, 0)
#if TG_CPLX
TG_CB_SYMM(hemm, 1)
#endif

#define TG_CB_SYRK_HEAD(NAME, HERM)                                                            \
  if (BAD_LAYOUT(#NAME)) return;                                                               \
  char ul = tg_cb_uplo(uplo), tr = tg_cb_trans(trans);                                         \
  if (!ul) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                        \
  /* the reference CBLAS accepts these transposes (ConjTrans as Trans for real syrk) */         \
  if (!tr || (HERM && tr == 'T') || (TG_CPLX && !HERM && tr == 'C'))                           \
    return tg_cblas_error(ROW, 3, CNAME(#NAME));                                               \
  if (!TG_CPLX && tr == 'C') tr = 'T';                                                         \
  if (ROW) {                                                                                   \
    ul = tg_flip_uplo(ul);                                                                     \
    tr = tr == 'N' ? (HERM ? 'C' : 'T') : 'N';                                                 \
  }
#define TG_CB_SYRK(NAME, HERM, ST, SV)                                                         \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans, const int n,    \
                            const int k, ST alpha, CPTR a, const int lda, ST beta, VPTR c,     \
                            const int ldc) {                                                   \
    TG_CB_SYRK_HEAD(NAME, HERM)                                                                \
    const int info = syrk_check(HERM, ul, tr, n, k, lda, ldc);                                 \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    S(syrk)(HERM, ul, tr, n, k, SV(alpha), (const T*) a, lda, NULL, 0, SV(beta), (T*) c, ldc); \
  }
/* her2k row-major: conj(C) = conj(alpha) A'^H B' + alpha B'^H A': alpha conjugated. */
#define TG_CB_SYR2K(NAME, HERM, BT, BV)                                                        \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE trans, const int n,    \
                            const int k, CSCAL alpha, CPTR a, const int lda, CPTR b,           \
                            const int ldb, BT beta, VPTR c, const int ldc) {                   \
    TG_CB_SYRK_HEAD(NAME, HERM)                                                                \
    const int info = syr2k_check(HERM, ul, tr, n, k, lda, ldb, ldc);                           \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    const T al = HERM && ROW ? cj(CVAL(alpha)) : CVAL(alpha);                                  \
    S(syrk)(HERM, ul, tr, n, k, al, (const T*) a, lda, (const T*) b, ldb, BV(beta), (T*) c,    \
            ldc);                                                                              \
  }
#define TG_RVAL(x) (x)
TG_CB_SYRK(syrk, 0, CSCAL, CVAL)
TG_CB_SYR2K(syr2k, 0, CSCAL, CVAL)
#if TG_CPLX
TG_CB_SYRK(herk, 1, const R, TG_RVAL)
TG_CB_SYR2K(her2k, 1, const R, TG_RVAL)
#endif

#define TG_CB_TRXM(NAME, SOLVE)                                                                \
  TG_BLAS_API void CB(NAME)(const CBLAS_LAYOUT layout, const CBLAS_SIDE side, const CBLAS_UPLO uplo, const CBLAS_TRANSPOSE transa, \
                            const CBLAS_DIAG diag, const int m, const int n, CSCAL alpha, CPTR a,     \
                            const int lda, VPTR b, const int ldb) {                            \
    if (BAD_LAYOUT(#NAME)) return;                                                             \
    char sd = tg_cb_side(side), ul = tg_cb_uplo(uplo), tr = tg_cb_trans(transa),               \
         dg = tg_cb_diag(diag);                                                                \
    if (!sd) return tg_cblas_error(ROW, 2, CNAME(#NAME));                                      \
    if (!ul) return tg_cblas_error(ROW, 3, CNAME(#NAME));                                      \
    if (!tr) return tg_cblas_error(ROW, 4, CNAME(#NAME));                                      \
    if (!dg) return tg_cblas_error(ROW, 5, CNAME(#NAME));                                      \
    const int mm = ROW ? n : m, nn = ROW ? m : n;                                              \
    if (ROW) {                                                                                 \
      sd = tg_flip_side(sd);                                                                   \
      ul = tg_flip_uplo(ul);                                                                   \
    }                                                                                          \
    const int info = trmm_check(sd, ul, tr, dg, mm, nn, lda, ldb);                             \
    if (info) return tg_cblas_error(ROW, info + 1, CNAME(#NAME));                              \
    S(trxm)(SOLVE, sd, ul, tr, dg, mm, nn, CVAL(alpha), (const T*) a, lda, (T*) b, ldb);       \
  }
TG_CB_TRXM(trmm, 0)
TG_CB_TRXM(trsm, 1)

/* ================================================================== extensions (OpenBLAS) */

/* y <- alpha x + beta y (beta = 0: y is not read). */
static void S(axpby)(int n, T alpha, const T* x, int incx, T beta, T* y, int incy) {
  if (n <= 0) return;
  int64_t ix = tg_vstart(n, incx), iy = tg_vstart(n, incy);
  for (int64_t i = 0; i < n; i++, ix += incx, iy += incy) {
    const T ax = iszero(alpha) ? (T) 0 : mul(alpha, x[ix]);
    y[iy] = iszero(beta) ? ax : ax + mul(beta, y[iy]);
  }
}
TG_BLAS_API void F(axpby_)(const int* n, const T* alpha, const T* x, const int* incx,
                           const T* beta, T* y, const int* incy) {
  S(axpby)(*n, *alpha, x, *incx, *beta, y, *incy);
}
TG_BLAS_API void CB(axpby)(const int n, CSCAL alpha, CPTR x, const int incx, CSCAL beta,
                           VPTR y, const int incy) {
  S(axpby)(n, CVAL(alpha), (const T*) x, incx, CVAL(beta), (T*) y, incy);
}

/* omatcopy: B <- alpha op(A), A rows x cols in the given order ('C' / 'R'); op in N, T, C
   (conjugate transpose), R (conjugate). Errors as OpenBLAS numbers them (its Fortran
   signature: order, trans, rows, cols, alpha, a, lda, b, ldb). */
static int matcopy_check(char order, char tr, int rows, int cols, int lda, int ldb) {
  const int transposed = tr == 'T' || tr == 'C';
  const int lda_min = order == 'C' ? rows : cols;
  const int ldb_min = order == 'C' ? (transposed ? cols : rows) : (transposed ? rows : cols);
  if (order != 'C' && order != 'R') return 1;
  if (tr != 'N' && tr != 'T' && tr != 'C' && tr != 'R') return 2;
  if (rows < 0) return 3;
  if (cols < 0) return 4;
  if (lda < tg_max1(lda_min)) return 7;
  if (ldb < tg_max1(ldb_min)) return 9;
  return 0;
}
static void S(omatcopy)(char order, char tr, int rows, int cols, T alpha, const T* a, int lda,
                        T* b, int ldb) {
  if (rows == 0 || cols == 0) return;
  /* Column-major view: A is r x c with r = rows (order C) or cols (order R). */
  const int64_t r = order == 'C' ? rows : cols, c = order == 'C' ? cols : rows;
  const int transposed = tr == 'T' || tr == 'C', conj = tr == 'C' || tr == 'R';
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < r; i++) {
      const T v = iszero(alpha) ? (T) 0 : mul(alpha, cjif(conj, a[i + j * (int64_t) lda]));
      if (transposed)
        b[j + i * (int64_t) ldb] = v;
      else
        b[i + j * (int64_t) ldb] = v;
    }
}
static void S(imatcopy)(char order, char tr, int rows, int cols, T alpha, T* a, int lda,
                        int ldb) {
  if (rows == 0 || cols == 0) return;
  const int64_t r = order == 'C' ? rows : cols, c = order == 'C' ? cols : rows;
  T* tmp = malloc((size_t) (r * c) * sizeof(T));
  if (!tmp) return;
  for (int64_t j = 0; j < c; j++)
    for (int64_t i = 0; i < r; i++) tmp[i + j * r] = a[i + j * (int64_t) lda];
  S(omatcopy)(order, tr, rows, cols, alpha, tmp, (int) r, a, ldb);
  free(tmp);
}
TG_BLAS_API void F(omatcopy_)(const char* order, const char* trans, const int* rows,
                              const int* cols, const T* alpha, const T* a, const int* lda, T* b,
                              const int* ldb) {
  const char o = tg_up(order), tr = tg_up(trans);
  const int info = matcopy_check(o, tr, *rows, *cols, *lda, *ldb);
  if (info) return tg_blas_error(XNAME("OMATCOPY"), info);
  S(omatcopy)(o, tr, *rows, *cols, *alpha, a, *lda, b, *ldb);
}
TG_BLAS_API void F(imatcopy_)(const char* order, const char* trans, const int* rows,
                              const int* cols, const T* alpha, T* a, const int* lda,
                              const int* ldb) {
  const char o = tg_up(order), tr = tg_up(trans);
  /* in place: the input layout must also fit ldb */
  const int info = matcopy_check(o, tr, *rows, *cols, *lda, *ldb);
  if (info) return tg_blas_error(XNAME("IMATCOPY"), info);
  S(imatcopy)(o, tr, *rows, *cols, *alpha, a, *lda, *ldb);
}
/* OpenBLAS's CBLAS spellings: real alpha by value; complex alpha and arrays as float* /
   double* (pointers to interleaved pairs). */
#if TG_CPLX
#define MC_SCAL const R*
#define MC_CPTR const R*
#define MC_VPTR R*
#define MC_VAL(x) (*(const T*) (x))
#else
#define MC_SCAL const T
#define MC_CPTR const T*
#define MC_VPTR T*
#define MC_VAL(x) (x)
#endif
static char cb_order(int layout) { return layout == TG_COL ? 'C' : layout == TG_ROW ? 'R' : 0; }
static char cb_mc_trans(int t) {
  return t == TG_NOTRANS ? 'N' : t == TG_TRANS ? 'T' : t == TG_CONJTRANS ? 'C' : t == 114 ? 'R' : 0;
}
TG_BLAS_API void CB(omatcopy)(const int order, const CBLAS_TRANSPOSE trans, const int rows, const int cols,
                              MC_SCAL alpha, MC_CPTR a, const int lda, MC_VPTR b,
                              const int ldb) {
  const char o = cb_order(order), tr = cb_mc_trans(trans);
  const int info = matcopy_check(o, tr, rows, cols, lda, ldb);
  if (info) return tg_cblas_error(0, info, CNAME("omatcopy"));
  S(omatcopy)(o, tr, rows, cols, MC_VAL(alpha), (const T*) a, lda, (T*) b, ldb);
}
TG_BLAS_API void CB(imatcopy)(const int order, const CBLAS_TRANSPOSE trans, const int rows, const int cols,
                              MC_SCAL alpha, MC_VPTR a, const int lda, const int ldb) {
  const char o = cb_order(order), tr = cb_mc_trans(trans);
  const int info = matcopy_check(o, tr, rows, cols, lda, ldb);
  if (info) return tg_cblas_error(0, info, CNAME("imatcopy"));
  S(imatcopy)(o, tr, rows, cols, MC_VAL(alpha), (T*) a, lda, ldb);
}

/* cblas_?gemm_batch (MKL's and OpenBLAS's declaration): group g has group_size[g] products
   sharing transa[g], ..., ldc[g]; the pointer arrays run over all products in order. */
#if TG_CPLX
#define TG_GB_SCAL(x) ((const void*) &(x))
#define GB_SCALS const void*
#define GB_AT(p, i) (((const T*) (p))[i])
#define GB_CPTRS const void**
#define GB_VPTRS void**
#else
#define TG_GB_SCAL(x) (x)
#define GB_SCALS const T*
#define GB_AT(p, i) ((p)[i])
#define GB_CPTRS const T**
#define GB_VPTRS T**
#endif
TG_BLAS_API void CB(gemm_batch)(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE* transa, const CBLAS_TRANSPOSE* transb,
                                const int* m, const int* n, const int* k, GB_SCALS alpha,
                                GB_CPTRS a, const int* lda, GB_CPTRS b, const int* ldb,
                                GB_SCALS beta, GB_VPTRS c, const int* ldc,
                                const int group_count, const int* group_size) {
  int64_t p = 0;
  for (int g = 0; g < group_count; g++)
    for (int i = 0; i < group_size[g]; i++, p++) {
      const T al = GB_AT(alpha, g), be = GB_AT(beta, g);
      CB(gemm)(layout, transa[g], transb[g], m[g], n[g], k[g], TG_GB_SCAL(al), a[p], lda[g],
               b[p], ldb[g], TG_GB_SCAL(be), c[p], ldc[g]);
    }
}
