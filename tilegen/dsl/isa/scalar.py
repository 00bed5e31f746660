from .base import (DTYPES, FLOAT_DTYPES, HALF_SCALE, INT_NARROW, PAIR_HELPER, QUAD_HELPER, DotOps, HalfOps, IntOps,
                   Isa, QuadOps, VecOps)

# Helpers for the spellings that are not one C operator. Saturation bounds by narrow type.
_SAT = {"i16": (0, 255, "uint8_t"), "i32": (-32768, 32767, "int16_t")}


def _vec_ops(dtype: str) -> VecOps:
    ctype = DTYPES[dtype]
    f = "f" if dtype == "f32" else ""
    return VecOps(
        ctype=ctype, vtype=ctype, lanes=1,
        zero_="0", load_="(*({p}))", store_="(*({p}) = ({x}))", bcast_="(*({p}))",
        set1_="({x})", fma_="(({acc}) + ({a}) * ({b}))", mul_="(({a}) * ({b}))",
        add_="(({a}) + ({b}))", sub_="(({a}) - ({b}))", div_="(({a}) / ({b}))",
        # `k > x` is false for NaN x, so x (the NaN) is returned.
        max_="(({a}) > ({b}) ? ({a}) : ({b}))",
        min_="(({a}) < ({b}) ? ({a}) : ({b}))",
        round_=f"__builtin_rint{f}({{x}})",
        scale2_=f"__builtin_ldexp{f}({{x}}, (int) ({{n}}))",
        keep_ge_=f"(({{x}}) < ({{t}}) ? ({ctype}) 0 : ({{y}}))",
        abs_=f"__builtin_fabs{f}({{x}})",
        select_neg_="(({x}) < 0 ? ({a}) : ({b}))",
        store_sum4_="((void) ((({p})[0] = ({a})), (({p})[1] = ({b})), (({p})[2] = ({c})), "
                    "(({p})[3] = ({d}))))",
        half_="tg_half_to_float((const void*) ({p}))" if dtype == "f32" else "",
        half_helpers=_HALF_HELPER if dtype == "f32" else "",
    )


_HALF_HELPER = (
    "static inline float tg_half_to_float(const void* p) {  /* p: any alignment */\n"
    "  uint16_t bits;\n"
    "  __builtin_memcpy(&bits, p, sizeof(bits));\n"
    "  const uint32_t h = bits, em = (h & 0x7fffu) << 13;\n"
    "  float v;\n"
    "  __builtin_memcpy(&v, &em, sizeof(v));\n"
    f"  v *= {HALF_SCALE};\n"
    "  return (h & 0x8000u) ? -v : v;\n"
    "}}\n").replace("}}", "}")


# One value per "vector": the split pair of mac2 is just lo (hi is never read).
_EXTRAS = {
    "i16": dict(mulhi_u16_="((int16_t) (((uint32_t) (uint16_t) ({a}) * (uint16_t) ({b})) >> 16))",
                srl_="((int16_t) ((uint16_t) ({x}) >> ({n})))"),
    "i32": dict(mac2_="(void) {hi}, {lo} += (int32_t) ({x}) * ({k})[0] + (int32_t) ({y}) * ({k})[1]",
                pack2_="((int16_t) ({lo} < -32768 ? -32768 : {lo} > 32767 ? 32767 : {lo}))",
                to_f32_="((float) ({x}))",
                round_f32_="((int32_t) __builtin_lrintf({x}))",
                load_u8_="((int32_t) *({p}))",
                store_u8_="(*({p}) = (uint8_t) ({x} < 0 ? 0 : {x} > 255 ? 255 : {x}))"),
}


def _int_ops(dtype: str) -> IntOps:
    ctype = DTYPES[dtype]
    lo, hi, narrow = _SAT[dtype]
    return IntOps(
        ctype=ctype, vtype=ctype, lanes=1, half_vtype=narrow,
        zero_="0", load_="(*({p}))", store_="(*({p}) = ({x}))", set1_=f"(({ctype}) ({{x}}))",
        add_=f"(({ctype}) (({{a}}) + ({{b}})))", sub_=f"(({ctype}) (({{a}}) - ({{b}})))",
        mullo_=f"(({ctype}) (({{a}}) * ({{b}})))",
        max_="(({a}) > ({b}) ? ({a}) : ({b}))", min_="(({a}) < ({b}) ? ({a}) : ({b}))",
        srai_=f"(({ctype}) (({{x}}) >> ({{n}})))",
        load_half_="(*({p}))", store_half_="(*({p}) = ({x}))", widen_=f"(({ctype}) ({{x}}))",
        narrow_sat_=f"(({narrow}) (({{x}}) < {lo} ? {lo} : ({{x}}) > {hi} ? {hi} : ({{x}})))",
        **_EXTRAS[dtype],
    )


# bfloat16 pairs as one 32-bit value; each value widened to float32 through its bits.
BF16 = DotOps(
    vtype="uint32_t", lanes=1,
    load_="((uint32_t) tg_pair_bits({p}))", bcast_="((uint32_t) tg_pair_bits({p}))",
    first_="tg_bits_f32((uint32_t) ({x}) << 16)",
    second_="tg_bits_f32((uint32_t) ({x}) & 0xFFFF0000u)",
    widen_="tg_bits_f32((uint32_t) *(const uint16_t*) ({p}) << 16)",
    helpers=PAIR_HELPER + (
        "static inline float tg_bits_f32(uint32_t b) {\n"
        "  float f;\n"
        "  __builtin_memcpy(&f, &b, sizeof(f));\n"
        "  return f;\n"
        "}\n"))


# int8 quads as one 32-bit value; sums in uint32 so that they wrap as the SIMD lanes do
# (signed overflow is undefined in C).
S8 = QuadOps(
    vtype="int32_t", lanes=1,
    load_="tg_quad_bits({p})", bcast_="tg_quad_bits({p})",
    zero_="0", add_="((int32_t) ((uint32_t) ({a}) + (uint32_t) ({b})))",
    sub_="((int32_t) ((uint32_t) ({a}) - (uint32_t) ({b})))",
    store_="(*({p}) = ({x}))",
    byte_="((int32_t) (int8_t) (uint8_t) ((uint32_t) ({x}) >> (8 * ({t}))))",
    mla_="((int32_t) ((uint32_t) ({acc}) + (uint32_t) (({a}) * ({b}))))",
    lo4_="((int32_t) ((uint32_t) ({x}) & 0x0F0F0F0Fu))",
    hi4_="((int32_t) (((uint32_t) ({x}) >> 4) & 0x0F0F0F0Fu))",
    tofloat_="((float) ({x}))", set1_="((int32_t) ({x}))",
    load8_="((int32_t) *(const int8_t*) ({p}))", helpers=QUAD_HELPER)


# The reference of half-precision accumulation: a half value held in a double (exact), and each
# multiply-add computed in double, then rounded to half (to nearest, ties to even). The product
# of two halves is exact in double (22 bits); the sum is rounded once to double, and rounding
# that to half gives the same half as rounding the exact sum (a double rounding that lands on a
# half tie would need the sum within 2^-53 relative of it, and a half plus a 22-bit product is
# either exactly a tie or at least 2^-33 relative away from one): so every step equals one
# fused half FMA, FMLA .8h's result, bit for bit. Not native: the dispatcher never serves
# products with it (float32 accumulation is faster here, and more accurate).
F16 = HalfOps(
    vtype="double", lanes=1, native=False,
    zero_="0.0", load_="tg_h2d(*({p}))", store_="(*({p}) = tg_d2h({x}))",
    fma_lane_="tg_h2d(tg_d2h(({acc}) + ({b}) * ({a})))",
    helpers=(
        "static inline double tg_h2d(uint16_t h) {  /* exact */\n"
        "  const int e = (h >> 10) & 0x1f, f = h & 0x3ff;\n"
        "  double v = e == 0 ? __builtin_ldexp((double) f, -24)\n"
        "           : e == 31 ? (f ? __builtin_nan(\"\") : __builtin_inf())\n"
        "           : __builtin_ldexp((double) (f | 0x400), e - 25);\n"
        "  return (h & 0x8000u) ? -v : v;\n"
        "}\n"
        "static inline uint16_t tg_d2h(double x) {  /* nearest, ties to even; Inf past 65520 */\n"
        "  uint64_t u;\n"
        "  __builtin_memcpy(&u, &x, sizeof(u));\n"
        "  const uint16_t sign = (uint16_t) ((u >> 48) & 0x8000u);\n"
        "  const uint64_t ax = u & 0x7fffffffffffffffull;\n"
        "  if (ax > 0x7ff0000000000000ull) return (uint16_t) (sign | 0x7e00u);\n"
        "  if (ax >= 0x40effe0000000000ull) return (uint16_t) (sign | 0x7c00u);\n"
        "  if (ax >= 0x3f10000000000000ull) {  /* a normal half: drop 42 bits, rounding */\n"
        "    const uint64_t r = ax - (1008ull << 52);\n"
        "    return (uint16_t) (sign | ((r + 0x1ffffffffffull + ((r >> 42) & 1u)) >> 42));\n"
        "  }\n"
        "  double a;\n"
        "  __builtin_memcpy(&a, &ax, sizeof(a));\n"
        "  return (uint16_t) (sign | (uint16_t) __builtin_nearbyint(a * 0x1p24));\n"
        "}\n"))


ISA = Isa(
    name="scalar", arch="any", vector_bits=0, num_vregs=16, tail="temp",
    # Keep the fallback scalar: GCC 12's loop vectorizer turns the strided A broadcasts into
    # grouped loads that read one k step past the packed panel (caught by the guard pages).
    cflags=("-fno-tree-vectorize",), headers=(), requires=(), priority=0,
    prefetch_="__builtin_prefetch({p}, 0, {locality})",
    ops={d: _vec_ops(d) for d in FLOAT_DTYPES},
    int_ops={d: _int_ops(d) for d in INT_NARROW},
    dot_ops={"bf16": BF16},
    quad_ops={"s8": S8},
    half_ops={"f16": F16},
    description="portable C, one element per 'register' (16 FP registers assumed)",
)
