from .base import (DTYPES, FLOAT_DTYPES, INT_NARROW, PAIR_HELPER, QUAD_HELPER, DotOps, IntOps,
                   Isa, QuadOps, VecOps)


def _vec_ops(dtype: str) -> VecOps:
    s = "f32" if dtype == "f32" else "f64"
    i = "s32" if dtype == "f32" else "s64"
    lanes = 4 if dtype == "f32" else 2
    bits, bias = (23, 127) if dtype == "f32" else (52, 1023)
    return VecOps(
        ctype=DTYPES[dtype], vtype=f"float{s[1:]}x{lanes}_t", lanes=lanes,
        zero_=f"vdupq_n_{s}(0)",
        load_=f"vld1q_{s}({{p}})",
        store_=f"vst1q_{s}({{p}}, {{x}})",
        bcast_=f"vld1q_dup_{s}({{p}})",
        set1_=f"vdupq_n_{s}({{x}})",
        fma_=f"vfmaq_{s}({{acc}}, {{a}}, {{b}})",
        fma_lane_=f"vfmaq_laneq_{s}({{acc}}, {{a}}, {{b}}, {{lane}})",
        mul_=f"vmulq_{s}({{a}}, {{b}})",
        add_=f"vaddq_{s}({{a}}, {{b}})",
        sub_=f"vsubq_{s}({{a}}, {{b}})",
        div_=f"vdivq_{s}({{a}}, {{b}})",
        # FMAX/FMIN return NaN when either input is NaN.
        max_=f"vmaxq_{s}({{a}}, {{b}})",
        min_=f"vminq_{s}({{a}}, {{b}})",
        round_=f"vrndnq_{s}({{x}})",
        scale2_=(f"vmulq_{s}({{x}}, vreinterpretq_{s}_{i}(vshlq_n_{i}(vaddq_{i}("
                 f"vcvtnq_{i}_{s}({{n}}), vdupq_n_{i}({bias})), {bits})))"),
        abs_=f"vabsq_{s}({{x}})",
        select_neg_=f"vbslq_{s}(vcltzq_{s}({{x}}), {{a}}, {{b}})",
        reduce_=f"vaddvq_{s}({{x}})",
        ext_=f"vextq_{s}({{lo}}, {{hi}}, {{k}})",
        half_=("vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t*) ({p}))))"
               if dtype == "f32" else ""),
        reduce_max_=f"vmaxvq_{s}({{x}})",
        store_sum4_=(f"vst1q_{s}({{p}}, vpaddq_{s}(vpaddq_{s}({{a}}, {{b}}), "
                     f"vpaddq_{s}({{c}}, {{d}})))" if dtype == "f32" else
                     f"(vst1q_{s}({{p}}, vpaddq_{s}({{a}}, {{b}})), "
                     f"vst1q_{s}({{p}} + 2, vpaddq_{s}({{c}}, {{d}})))"),
        # x < t is false for NaN x, so NaN lanes are kept.
        keep_ge_=(f"vreinterpretq_{s}_u{s[1:]}(vbicq_u{s[1:]}(vreinterpretq_u{s[1:]}_{s}({{y}}), "
                  f"vcltq_{s}({{x}}, {{t}})))"),
    )


def _int_ops(dtype: str) -> IntOps:
    if dtype == "i16":
        return IntOps(
            ctype=DTYPES[dtype], vtype="int16x8_t", lanes=8, half_vtype="uint8x8_t",
            zero_="vdupq_n_s16(0)", load_="vld1q_s16({p})", store_="vst1q_s16({p}, {x})",
            set1_="vdupq_n_s16({x})", add_="vaddq_s16({a}, {b})", sub_="vsubq_s16({a}, {b})",
            mullo_="vmulq_s16({a}, {b})", max_="vmaxq_s16({a}, {b})", min_="vminq_s16({a}, {b})",
            srai_="vshrq_n_s16({x}, {n})", load_half_="vld1_u8({p})",
            store_half_="vst1_u8({p}, {x})", widen_="vreinterpretq_s16_u16(vmovl_u8({x}))",
            narrow_sat_="vqmovun_s16({x})",
            mulhi_u16_="tg_mulhi_u16_neon({a}, {b})",
            srl_="vreinterpretq_s16_u16(vshlq_u16(vreinterpretq_u16_s16({x}), vdupq_n_s16((int16_t) -({n}))))",
            helpers=(
                "static inline int16x8_t tg_mulhi_u16_neon(int16x8_t a, int16x8_t b) {\n"
                "  const uint16x8_t ua = vreinterpretq_u16_s16(a), ub = vreinterpretq_u16_s16(b);\n"
                "  const uint32x4_t l = vmull_u16(vget_low_u16(ua), vget_low_u16(ub));\n"
                "  const uint32x4_t h = vmull_high_u16(ua, ub);\n"
                "  return vreinterpretq_s16_u16(vcombine_u16(vshrn_n_u32(l, 16), vshrn_n_u32(h, 16)));\n"
                "}\n"))
    return IntOps(
        ctype=DTYPES[dtype], vtype="int32x4_t", lanes=4, half_vtype="int16x4_t",
        zero_="vdupq_n_s32(0)", load_="vld1q_s32({p})", store_="vst1q_s32({p}, {x})",
        set1_="vdupq_n_s32({x})", add_="vaddq_s32({a}, {b})", sub_="vsubq_s32({a}, {b})",
        mullo_="vmulq_s32({a}, {b})", max_="vmaxq_s32({a}, {b})", min_="vminq_s32({a}, {b})",
        srai_="vshrq_n_s32({x}, {n})", load_half_="vld1_s16({p})",
        store_half_="vst1_s16({p}, {x})", widen_="vmovl_s16({x})", narrow_sat_="vqmovn_s32({x})",
        # The split pair: lo holds the low half of the i16 values, hi the high half.
        mac2_="tg_mac2_i16_neon(&{lo}, &{hi}, {x}, {y}, {k})",
        pack2_="vcombine_s16(vqmovn_s32({lo}), vqmovn_s32({hi}))",
        to_f32_="vcvtq_f32_s32({x})", round_f32_="vcvtnq_s32_f32({x})",
        load_u8_="tg_load_u8x4_neon({p})", store_u8_="tg_store_u8x4_neon({p}, {x})",
        helpers=(
            "static inline void tg_mac2_i16_neon(int32x4_t* lo, int32x4_t* hi, int16x8_t x,\n"
            "                                    int16x8_t y, const int16_t* k) {\n"
            "  const int16x4_t k0 = vld1_dup_s16(k), k1 = vld1_dup_s16(k + 1);\n"
            "  *lo = vmlal_s16(vmlal_s16(*lo, vget_low_s16(x), k0), vget_low_s16(y), k1);\n"
            "  *hi = vmlal_s16(vmlal_s16(*hi, vget_high_s16(x), k0), vget_high_s16(y), k1);\n"
            "}\n"
            "static inline int32x4_t tg_load_u8x4_neon(const uint8_t* p) {\n"
            "  uint32_t v;\n"
            "  memcpy(&v, p, 4);\n"
            "  const uint8x8_t b = vreinterpret_u8_u32(vdup_n_u32(v));\n"
            "  return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b))));\n"
            "}\n"
            "static inline void tg_store_u8x4_neon(uint8_t* p, int32x4_t x) {\n"
            "  const uint16x4_t w = vqmovun_s32(x);\n"
            "  const uint32_t v = vget_lane_u32(vreinterpret_u32_u8(vqmovn_u16(vcombine_u16(w, w))), 0);\n"
            "  memcpy(p, &v, 4);\n"
            "}\n"))


# bfloat16 pairs without the BF16 extension: each pair's values widened to float32.
BF16 = DotOps(
    vtype="uint32x4_t", lanes=4,
    load_="vld1q_u32((const uint32_t*) (const void*) ({p}))",
    bcast_="vdupq_n_u32((uint32_t) tg_pair_bits({p}))",
    first_="vreinterpretq_f32_u32(vshlq_n_u32({x}, 16))",
    second_="vreinterpretq_f32_u32(vandq_u32({x}, vdupq_n_u32(0xFFFF0000u)))",
    widen_="vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t*) ({p})), 16))",
    helpers=PAIR_HELPER)


# int8 quads without the dot-product extension: bytes sign-extended to int32 and multiplied.
S8 = QuadOps(
    vtype="int32x4_t", lanes=4,
    load_="vreinterpretq_s32_s8(vld1q_s8((const int8_t*) ({p})))",
    bcast_="vdupq_n_s32(tg_quad_bits({p}))",
    zero_="vdupq_n_s32(0)", add_="vaddq_s32({a}, {b})", sub_="vsubq_s32({a}, {b})",
    store_="vst1q_s32((int32_t*) ({p}), {x})",
    byte_="vshrq_n_s32(vshlq_n_s32({x}, 24 - 8 * ({t})), 24)",
    mla_="vmlaq_s32({acc}, {a}, {b})",
    lo4_="vreinterpretq_s32_u8(vandq_u8(vreinterpretq_u8_s32({x}), vdupq_n_u8(0x0F)))",
    hi4_="vreinterpretq_s32_u8(vshrq_n_u8(vreinterpretq_u8_s32({x}), 4))",
    tofloat_="vcvtq_f32_s32({x})", set1_="vdupq_n_s32({x})",
    # Four bytes (one 32-bit load: no read past them) widened twice.
    load8_=("vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_s32("
            "vdup_n_s32(tg_quad_bits((const int8_t*) ({p})))))))"),
    # Two rows widened to int16, each multiplied by its lane of the x pair (SMLAL by lane).
    pair_vtype="int16x4_t",
    pair_="vcreate_s16((uint64_t) (uint16_t) ({x0}) | (uint64_t) (uint16_t) ({x1}) << 16)",
    madd2_=("{{ const int16x8_t tg_a = vmovl_s8(vld1_s8((const int8_t*) ({p0}))), "
            "tg_b = vmovl_s8(vld1_s8((const int8_t*) ({p1}))); "
            "{acc0} = vmlal_lane_s16(vmlal_lane_s16({acc0}, vget_low_s16(tg_a), {xx}, 0), "
            "vget_low_s16(tg_b), {xx}, 1); "
            "{acc1} = vmlal_lane_s16(vmlal_lane_s16({acc1}, vget_high_s16(tg_a), {xx}, 0), "
            "vget_high_s16(tg_b), {xx}, 1); }}"),
    helpers=QUAD_HELPER)


ISA = Isa(
    name="neon", arch="aarch64", vector_bits=128, num_vregs=32, tail="temp",
    cflags=(), headers=("arm_neon.h",), requires=("asimd",), priority=20,
    prefetch_="__builtin_prefetch({p}, 0, {locality})",
    ops={d: _vec_ops(d) for d in FLOAT_DTYPES},
    int_ops={d: _int_ops(d) for d in INT_NARROW},
    dot_ops={"bf16": BF16},
    quad_ops={"s8": S8},
    description="AArch64 Advanced SIMD (ASIMD), 32 q registers",
)
