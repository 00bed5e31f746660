/* The fused activations of tilegen_activation (tilegen.h) on one value, computed in double:
   the drivers' scalar epilogues share it (a float result is the double one rounded once). */
#ifndef TG_ACTIVATION_H
#define TG_ACTIVATION_H

#include <math.h>

#include "tilegen.h"

static inline double tg_activate(double x, int act) {
  switch (act) {
    case TILEGEN_ACT_RELU: return x > 0 ? x : (x == x ? 0.0 : x);          /* NaN stays NaN */
    case TILEGEN_ACT_RELU6: return x > 0 ? (x < 6 ? x : 6.0) : (x == x ? 0.0 : x);
    case TILEGEN_ACT_GELU: return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
    case TILEGEN_ACT_SILU: return x / (1.0 + exp(-x));
    default: return x;
  }
}

#endif
