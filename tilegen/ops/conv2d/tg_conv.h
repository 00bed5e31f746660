/*
 * The convolution drivers' internal interface: the dispatch tables of the conv (direct,
 * channels last) and dwconv (depthwise) kernel families and the plan that tilegen_conv2d_*
 * builds (the packed-weight form keeps one). Workspace (op.yaml): TG_WS_CONV2D_PACK holds the
 * packed weights of a one-off call (caller's thread), _ROWS per-thread rows and tiles, _ZERO
 * the shared zero row.
 */
#ifndef TG_CONV_H
#define TG_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"
#include "tg_ukernels.h"
#include "tilegen.h"

#define TG_CONV_MAX_MR 32
#define TG_CONV_MAX_SHAPES 32

/* The kernels of one filter shape, layout (0 channels last, 1 channel first) and fixed
   input-channel count (0: any): by_rows[r] (nchw_by_rows[r]) serves r output pixels (output
   channels), the smallest registered tile that covers them. */
typedef struct {
  int kh, kw, stride, fixed_c, layout, mr;
  tg_f32_conv_ukernel_fn by_rows[TG_CONV_MAX_MR + 1];
  tg_f32_conv_nchw_ukernel_fn nchw_by_rows[TG_CONV_MAX_MR + 1];
  int tile_mr[TG_CONV_MAX_MR + 1];
  const char* name;  /* the main (tallest) tile */
} tg_conv_shape;

typedef struct {
  int kh, kw, stride, layout, d1, mr;  /* d1: unit dilation only (dps unused) */
  int out_rows;  /* output rows a call may compute (every kernel of the shape takes them) */
  tg_f32_dwconv_ukernel_fn by_rows[TG_CONV_MAX_MR + 1];
  tg_f32_dwconv_nchw_ukernel_fn nchw_by_rows[TG_CONV_MAX_MR + 1];
  int tile_mr[TG_CONV_MAX_MR + 1];
  const char* name;
} tg_dwconv_shape;

typedef struct tg_conv_config {
  int isa;
  int nr;        /* output channels per conv panel (one weight packing per ISA) */
  int nchw_nr;   /* output pixels per channel-first tile */
  int nchw_lanes;  /* pixels per vector: a shorter channel-first tile computes whole vectors */
  int nshapes;
  tg_conv_shape shapes[TG_CONV_MAX_SHAPES];
  int dw_isa, dw_nr, dw_nchw_nr, dw_nshapes;
  tg_dwconv_shape dw_shapes[TG_CONV_MAX_SHAPES];
} tg_conv_config;

/* The current tables (initialising the dispatch on first use); published immutable, so a plan
   may keep the pointer for its lifetime. */
const tg_conv_config* tg_conv_cfg(void);
/* The family's select function (TG_FOREACH_FAMILY_SELECT): fills the conv and dwconv tables. */
void tg_conv_select(void);
const tg_conv_shape* tg_conv_find(const tg_conv_config* cfg, int kh, int kw, int stride,
                                  int fixed_c, int layout);
const tg_dwconv_shape* tg_dwconv_find(const tg_conv_config* cfg, int kh, int kw, int stride,
                                      int layout, int d1);

/* ---- introspection hooks for tilegen's Python layer and tests ---- */
/* Which path a convolution takes (tg_conv_method names) and its kernel, for the given problem;
   returns NULL on invalid parameters. */
TG_XAPI_FN(const char*, tilegen_x_conv_method,
           (int layout, int64_t c_in, int64_t c_out, int64_t kh, int64_t kw, int64_t stride_h,
            int64_t stride_w, int64_t pad_top, int64_t pad_left, int64_t pad_bottom,
            int64_t pad_right, int64_t dilation_h, int64_t dilation_w, int64_t groups,
            const char** kernel))
/* The path and kernel a packed plan runs. */
TG_XAPI_FN(const char*, tilegen_x_conv2d_f32_plan_method,
           (const tilegen_conv2d_f32_plan* plan, const char** kernel))
/* Tests: force every convolution onto one path by name (NULL or "": the normal choice);
   returns -1 for an unknown name. */
TG_XAPI_FN(int, tilegen_x_conv_force_method, (const char* name))
/* The path preferred (where it applies) for a layer class: layout TILEGEN_NCHW/NHWC, kind
   "pointwise" (1x1, stride 1), "spatial" (larger filters, stride 1), "strided", "depthwise";
   name NULL or "" for the built-in order (tilegen tune's choice). 0, or -1/-2/-3 for a bad
   layout/kind/name. */
TG_XAPI_FN(int, tilegen_x_set_conv_preferred, (int layout, const char* kind, const char* name))
TG_XAPI_FN(const char*, tilegen_x_conv_preferred, (int layout, const char* kind))
/* The tallest conv kernel tile (MR) the channels-last (nchw 0) or channel-first (1) paths may
   use, 0 for no limit (tilegen tune's choice); 0, or -1 when no kernel set fits. */
TG_XAPI_FN(int, tilegen_x_set_conv_max_mr, (int nchw, int mr))
/* The i-th distinct MR of the ISA's conv kernels of that layout, tallest first; 0 past the last. */
TG_XAPI_FN(int, tilegen_x_conv_tile_height, (int nchw, int i))

#endif
