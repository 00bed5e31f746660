/*
 * 2-D convolution: the weights and bias packed for the kernel paths, once per plan or per call
 * (conv.c): panels of NR output channels (direct, im2col), of NR channels (depthwise), tiles of
 * MR output channels (channel first), a channel at a time (depthwise row tiles). conv_rows.c
 * re-cuts the depthwise panels per call when x is off a vector boundary (shift_dw_panels).
 */
#include <string.h>

#include "conv_internal.h"

/* Panels of nr output channels per group: nr bias values, then nr weights per (kh, kw, ci). */
static void pack_panels(const geom* g, const float* k, const float* bias, int64_t nr,
                        float* dst) {
  const int64_t cg = g->cin / g->groups, kg = g->cout / g->groups;
  const int64_t nb = (kg + nr - 1) / nr, taps = g->kh * g->kw, panel = nr * (1 + taps * cg);
  const int nchw = g->layout == TILEGEN_NCHW;
  for (int64_t gi = 0; gi < g->groups; gi++)
    for (int64_t b = 0; b < nb; b++) {
      float* pp = dst + (gi * nb + b) * panel;
      for (int64_t j = 0; j < nr; j++) {
        const int64_t co = b * nr + j;
        pp[j] = co < kg && bias ? bias[gi * kg + co] : 0.0f;
      }
      for (int64_t t = 0; t < taps; t++)
        for (int64_t ci = 0; ci < cg; ci++) {
          float* row = pp + nr * (1 + t * cg + ci);
          for (int64_t j = 0; j < nr; j++) {
            const int64_t co = b * nr + j, o = gi * kg + co;
            /* OIHW: ((o*cg + ci)*KH + kh)*KW + kw; OHWI: ((o*KH + kh)*KW + kw)*cg + ci. */
            row[j] = co >= kg ? 0.0f : nchw ? k[(o * cg + ci) * taps + t] : k[(o * taps + t) * cg + ci];
          }
        }
    }
}

/* Depthwise panels of nr channels: nr bias values, then nr weights per tap. */
static void pack_dw_panels(const geom* g, const float* k, const float* bias, int64_t nr,
                           float* dst) {
  const int64_t nb = (g->cin + nr - 1) / nr, taps = g->kh * g->kw, panel = nr * (1 + taps);
  for (int64_t b = 0; b < nb; b++) {
    float* pp = dst + b * panel;
    for (int64_t j = 0; j < nr; j++) {
      const int64_t c = b * nr + j;
      pp[j] = c < g->cin && bias ? bias[c] : 0.0f;
      for (int64_t t = 0; t < taps; t++) pp[nr * (1 + t) + j] = c < g->cin ? k[c * taps + t] : 0.0f;
    }
  }
}

/* Channel-first panels per group (depthwise: one group of one input channel each): for each
   tile of MR output channels (the last one as tall as the kernel that serves the remainder),
   MR bias values, then MR weights per (tap, ci). */
static void pack_nchw_panels(const tilegen_conv2d_f32_plan* p, const float* k, const float* bias,
                             float* dst) {
  const geom* g = &p->g;
  const int dw = p->method == M_DW_NCHW;
  const int64_t mr = dw ? p->dw->mr : p->shape->mr, taps = g->kh * g->kw;
  const int64_t groups = dw ? 1 : g->groups, cg = dw ? 1 : p->cg, kg = dw ? g->cout : p->kg;
  const int* tile_mr = dw ? p->dw->tile_mr : p->shape->tile_mr;
  for (int64_t gi = 0; gi < groups; gi++)
    for (int64_t co0 = 0; co0 < kg; co0 += mr) {
      const int64_t r = kg - co0 < mr ? kg - co0 : mr, t_mr = tile_mr[r];
      float* pp = dst + gi * p->gstride + co0 * (1 + taps * cg);
      for (int64_t i = 0; i < t_mr; i++) {
        const int64_t o = gi * kg + co0 + i;
        pp[i] = i < r && bias ? bias[o] : 0.0f;
        for (int64_t ci = 0; ci < cg; ci++)
          for (int64_t t = 0; t < taps; t++)
            pp[t_mr * (1 + t * cg + ci) + i] = i < r ? k[(o * cg + ci) * taps + t] : 0.0f;
      }
    }
}

/* Sizes the packing needs (floats), 0 when the path packs nothing. */
int64_t tg_conv_pack_floats(tilegen_conv2d_f32_plan* p) {
  const geom* g = &p->g;
  if (p->method == M_NCHW || p->method == M_DW_NCHW) {
    const int dw = p->method == M_DW_NCHW;
    const int64_t mr = dw ? p->dw->mr : p->shape->mr, kg = dw ? g->cout : p->kg;
    const int64_t rem = kg % mr, per = 1 + g->kh * g->kw * (dw ? 1 : p->cg);
    const int* tile_mr = dw ? p->dw->tile_mr : p->shape->tile_mr;
    p->nr = dw ? p->cfg->dw_nchw_nr : p->cfg->nchw_nr;
    p->gstride = (kg - rem) * per + (rem ? tile_mr[rem] * per : 0);
    return (dw ? 1 : g->groups) * p->gstride;
  }
  if (p->method == M_DIRECT || p->method == M_IM2COL) {
    p->nr = p->cfg->nr;
    p->nb = (p->kg + p->nr - 1) / p->nr;
    p->panel = p->nr * (1 + g->kh * g->kw * p->cg);
    return g->groups * p->nb * p->panel;
  }
  if (p->method == M_DEPTHWISE) {
    p->nr = p->cfg->dw_nr;
    p->nb = (g->cin + p->nr - 1) / p->nr;
    p->panel = p->nr * (1 + g->kh * g->kw);
    return p->nb * p->panel;
  }
  if (p->method == M_DW_ROWS) {  /* per channel: its bias, then its weight per tap */
    p->nr = p->cfg->dw_nchw_nr;
    return g->cin * (1 + g->kh * g->kw);
  }
  return 0;
}

void tg_conv_pack(tilegen_conv2d_f32_plan* p, const float* k, const float* bias) {
  if (p->method == M_NCHW || p->method == M_DW_NCHW)
    pack_nchw_panels(p, k, bias, p->wpack);
  else if (p->method == M_DIRECT || p->method == M_IM2COL)
    pack_panels(&p->g, k, bias, p->nr, p->wpack);
  else if (p->method == M_DEPTHWISE)
    pack_dw_panels(&p->g, k, bias, p->nr, p->wpack);
  else if (p->method == M_DW_ROWS)
    for (int64_t c = 0, taps = p->g.kh * p->g.kw; c < p->g.cin; c++) {
      p->wpack[c * (1 + taps)] = bias ? bias[c] : 0.0f;
      memcpy(p->wpack + c * (1 + taps) + 1, k + c * taps, (size_t) taps * sizeof(float));
    }
}
