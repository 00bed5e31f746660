"""Spellings shared by the x86-64 vector ISAs (AVX2 and AVX-512 differ in width and masks)."""
from __future__ import annotations

from .base import DTYPES, HALF_SCALE, PAIR_HELPER, QUAD_HELPER, AsmOps, DotOps, IntOps, QuadOps, VecOps

# GCC and Clang on x86-64; TG_NO_ASM builds the intrinsics fallback (the tests build both).
X86_GNU_ASM = "defined(__GNUC__) && defined(__x86_64__) && !defined(TG_NO_ASM)"
PREFETCH = "_mm_prefetch((const char*) ({p}), {hint})"

_AVX2_HELPERS = {
    "f32": (
        "static inline float tg_hsum256_ps(__m256 v) {\n"
        "  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));\n"
        "  s = _mm_add_ps(s, _mm_movehl_ps(s, s));\n"
        "  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));\n"
        "}\n"
        "static inline float tg_hmax256_ps(__m256 v) {\n"
        "  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));\n"
        "  s = _mm_max_ps(s, _mm_movehl_ps(s, s));\n"
        "  return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));\n"
        "}\n"
        "static inline void tg_store_sum4_256_ps(float* p, __m256 a, __m256 b, __m256 c,\n"
        "                                        __m256 d) {\n"
        "  const __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));\n"
        "  _mm_storeu_ps(p, _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1)));\n"
        "}\n"
        "static inline __m256 tg_scale2_256_ps(__m256 x, __m256 n) {\n"
        "  const __m256i e = _mm256_slli_epi32(\n"
        "      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);\n"
        "  return _mm256_mul_ps(x, _mm256_castsi256_ps(e));\n"
        "}\n"),
    "f64": (
        "static inline double tg_hsum256_pd(__m256d v) {\n"
        "  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));\n"
        "  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));\n"
        "}\n"
        "static inline double tg_hmax256_pd(__m256d v) {\n"
        "  __m128d s = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));\n"
        "  return _mm_cvtsd_f64(_mm_max_sd(s, _mm_unpackhi_pd(s, s)));\n"
        "}\n"
        # AVX2 has no double -> int64 conversion: adding 1.5 * 2^52 puts the integer n in the
        # low mantissa bits, from where it is biased and shifted into the exponent field.
        "static inline __m256d tg_scale2_256_pd(__m256d x, __m256d n) {\n"
        "  const __m256i i = _mm256_castpd_si256(_mm256_add_pd(n, _mm256_set1_pd(6755399441055744.0)));\n"
        "  const __m256i e = _mm256_slli_epi64(_mm256_add_epi64(i, _mm256_set1_epi64x(1023)), 52);\n"
        "  return _mm256_mul_pd(x, _mm256_castsi256_pd(e));\n"
        "}\n"),
}


# Per 128-bit lane: unpack + add pairs a with b and c with d, two shuffles + add gather
# [a, b, c, d] partial sums, then the four lanes fold in two adds (extractf64x4: AVX512F only).
_AVX512_HELPERS_F32 = (
    "static inline void tg_store_sum4_512_ps(float* p, __m512 a, __m512 b, __m512 c,\n"
    "                                        __m512 d) {\n"
    "  const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));\n"
    "  const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));\n"
    "  const __m512 s = _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),\n"
    "                                 _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));\n"
    "  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(s),\n"
    "      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));\n"
    "  _mm_storeu_ps(p, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));\n"
    "}\n")


def vec_ops(bits: int, dtype: str) -> VecOps:
    sfx = "ps" if dtype == "f32" else "pd"
    w = "_mm512" if bits == 512 else "_mm256"
    vtype = ("__m512" if bits == 512 else "__m256") + ("" if dtype == "f32" else "d")
    lanes = bits // (32 if dtype == "f32" else 64)
    if bits == 512:
        bcast = f"{w}_set1_{sfx}(*({{p}}))"
    else:
        bcast = f"{w}_broadcast_s{'s' if dtype == 'f32' else 'd'}({{p}})"
    common = dict(
        ctype=DTYPES[dtype], vtype=vtype, lanes=lanes,
        zero_=f"{w}_setzero_{sfx}()",
        load_=f"{w}_loadu_{sfx}({{p}})",
        store_=f"{w}_storeu_{sfx}({{p}}, {{x}})",
        bcast_=bcast,
        set1_=f"{w}_set1_{sfx}({{x}})",
        fma_=f"{w}_fmadd_{sfx}({{a}}, {{b}}, {{acc}})",
        mul_=f"{w}_mul_{sfx}({{a}}, {{b}})",
        add_=f"{w}_add_{sfx}({{a}}, {{b}})",
        sub_=f"{w}_sub_{sfx}({{a}}, {{b}})",
        div_=f"{w}_div_{sfx}({{a}}, {{b}})",
        max_=f"{w}_max_{sfx}({{a}}, {{b}})",
        min_=f"{w}_min_{sfx}({{a}}, {{b}})",
    )
    if bits == 512:
        common.update(keep_ge_=(f"{w}_maskz_mov_{sfx}({w}_cmp_{sfx}_mask({{x}}, {{t}}, "
                                f"_CMP_NLT_UQ), {{y}})"))
    else:
        common.update(keep_ge_=f"{w}_and_{sfx}({{y}}, {w}_cmp_{sfx}({{x}}, {{t}}, _CMP_NLT_UQ))")
    if bits == 512:
        common.update(
            abs_=f"{w}_abs_{sfx}({{x}})",
            select_neg_=(f"{w}_mask_blend_{sfx}({w}_cmp_{sfx}_mask({{x}}, {w}_setzero_{sfx}(), "
                         f"_CMP_LT_OQ), {{b}}, {{a}})"),
            reduce_=f"{w}_reduce_add_{sfx}({{x}})",
            reduce_max_=f"{w}_reduce_max_{sfx}({{x}})",
            round_=f"{w}_roundscale_{sfx}({{x}}, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)",
            scale2_=f"{w}_scalef_{sfx}({{x}}, {{n}})",
            ext_=(f"{w}_castsi512_{sfx}({w}_alignr_epi{32 if dtype == 'f32' else 64}("
                  f"{w}_cast{sfx}_si512({{hi}}), {w}_cast{sfx}_si512({{lo}}), {{k}}))"),
        )
    else:
        neg0 = "-0.0f" if dtype == "f32" else "-0.0"
        common.update(
            abs_=f"{w}_andnot_{sfx}({w}_set1_{sfx}({neg0}), {{x}})",
            select_neg_=f"{w}_blendv_{sfx}({{b}}, {{a}}, {{x}})",  # by the sign bit of x
            reduce_=f"tg_hsum256_{sfx}({{x}})", reduce_max_=f"tg_hmax256_{sfx}({{x}})",
            round_=f"{w}_round_{sfx}({{x}}, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)",
            scale2_=f"tg_scale2_256_{sfx}({{x}}, {{n}})", helpers=_AVX2_HELPERS[dtype])
    p = "s" if dtype == "f32" else "d"
    common.update(asm=AsmOps(
        reg="zmm" if bits == 512 else "ymm", load=f"vmovup{p}", store=f"vmovup{p}",
        bcast=f"vbroadcasts{p}", fma=f"vfmadd231p{p}",
        # vxorps cannot name zmm16-31 without AVX512DQ; vpxord is AVX512F.
        zero="vpxord" if bits == 512 else "vxorps"))
    if bits == 512 and dtype == "f32":
        common.update(store_sum4_="tg_store_sum4_512_ps({p}, {a}, {b}, {c}, {d})",
                      helpers=_AVX512_HELPERS_F32,
                      half_="_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*) (const void*) ({p})))")
    elif dtype == "f32":
        # No F16C in the AVX2 tier's requirements: the halves' bits are moved into place.
        common.update(store_sum4_="tg_store_sum4_256_ps({p}, {a}, {b}, {c}, {d})",
                      half_="tg_half8_256((const void*) ({p}))", half_helpers=_AVX2_HALF)
    if bits == 512:
        mtype = "__mmask16" if dtype == "f32" else "__mmask8"
        common.update(
            mask_type=mtype,
            mask_=f"(({mtype}) ((1u << ({{n}})) - 1u))",
            load_mask_=f"{w}_maskz_loadu_{sfx}({{m}}, {{p}})",
            store_mask_=f"{w}_mask_storeu_{sfx}({{p}}, {{m}}, {{x}})",
        )
    return VecOps(**common)


def int_ops(bits: int, dtype: str) -> IntOps:
    """i16 (narrow u8) or i32 (narrow i16) on AVX2 (bits 256) or AVX-512BW (512)."""
    w = "_mm512" if bits == 512 else "_mm256"
    si = "si512" if bits == 512 else "si256"
    vtype = "__m512i" if bits == 512 else "__m256i"
    half = "__m256i" if bits == 512 else "__m128i"
    hw = "_mm256" if bits == 512 else "_mm"
    hsi = "si256" if bits == 512 else "si128"
    e = "epi16" if dtype == "i16" else "epi32"
    lanes = bits // (16 if dtype == "i16" else 32)
    if dtype == "i16":
        widen = f"{w}_cvtepu8_epi16({{x}})"
        if bits == 512:
            # vpmovuswb saturates unsigned: clamp negatives to 0 first.
            narrow = f"{w}_cvtusepi16_epi8({w}_max_epi16({{x}}, {w}_setzero_si512()))"
        else:
            narrow = ("_mm_packus_epi16(_mm256_castsi256_si128({x}), "
                      "_mm256_extracti128_si256({x}, 1))")
    else:
        widen = f"{w}_cvtepi16_epi32({{x}})"
        if bits == 512:
            narrow = f"{w}_cvtsepi32_epi16({{x}})"
        else:
            narrow = ("_mm_packs_epi32(_mm256_castsi256_si128({x}), "
                      "_mm256_extracti128_si256({x}, 1))")
    extras = {}
    if dtype == "i16":
        extras = dict(mulhi_u16_=f"{w}_mulhi_epu16({{a}}, {{b}})",
                      srl_=f"{w}_srl_epi16({{x}}, _mm_cvtsi32_si128((int) ({{n}})))")
    else:
        fn = f"tg_mac2_i16_{'avx512' if bits == 512 else 'avx2'}"
        extras = dict(
            # pmaddwd on the values of x and y interleaved (in 128-bit lanes): packs_epi32
            # interleaves back the same way, so pack2 restores the original order.
            mac2_=f"{fn}(&{{lo}}, &{{hi}}, {{x}}, {{y}}, {{k}})",
            pack2_=f"{w}_packs_epi32({{lo}}, {{hi}})",
            to_f32_=f"{w}_cvtepi32_ps({{x}})",
            load_u8_=(f"_mm512_cvtepu8_epi32(_mm_loadu_si128((const void*) ({{p}})))" if bits == 512
                      else "_mm256_cvtepu8_epi32(_mm_loadl_epi64((const void*) ({p})))"),
            store_u8_=(f"_mm_storeu_si128((void*) ({{p}}), _mm512_cvtusepi32_epi8("
                       f"_mm512_max_epi32({{x}}, _mm512_setzero_si512())))" if bits == 512
                       else "tg_store_u8_avx2({p}, {x})"),
            round_f32_=f"{w}_cvtps_epi32({{x}})",  # MXCSR's mode: to nearest, ties to even
            helpers=(
                f"static inline void {fn}({vtype}* lo, {vtype}* hi, {vtype} x, {vtype} y,\n"
                f"                                 const int16_t* k) {{\n"
                f"  int32_t k01;\n"
                f"  memcpy(&k01, k, sizeof(k01));\n"
                f"  const {vtype} kk = {w}_set1_epi32(k01);\n"
                f"  *lo = {w}_add_epi32(*lo, {w}_madd_epi16({w}_unpacklo_epi16(x, y), kk));\n"
                f"  *hi = {w}_add_epi32(*hi, {w}_madd_epi16({w}_unpackhi_epi16(x, y), kk));\n"
                f"}}\n" + ("" if bits == 512 else
                "static inline void tg_store_u8_avx2(uint8_t* p, __m256i x) {\n"
                "  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(x),\n"
                "                                    _mm256_extracti128_si256(x, 1));\n"
                "  _mm_storel_epi64((__m128i*) p, _mm_packus_epi16(w, w));\n"
                "}\n")))
    return IntOps(
        **extras,
        ctype=DTYPES[dtype], vtype=vtype, lanes=lanes, half_vtype=half,
        zero_=f"{w}_setzero_{si}()",
        load_=f"{w}_loadu_{si}((const void*) ({{p}}))",
        store_=f"{w}_storeu_{si}((void*) ({{p}}), {{x}})",
        set1_=f"{w}_set1_{e}({{x}})",
        add_=f"{w}_add_{e}({{a}}, {{b}})",
        sub_=f"{w}_sub_{e}({{a}}, {{b}})",
        mullo_=f"{w}_mullo_{e}({{a}}, {{b}})",
        max_=f"{w}_max_{e}({{a}}, {{b}})",
        min_=f"{w}_min_{e}({{a}}, {{b}})",
        srai_=f"{w}_srai_{e}({{x}}, {{n}})",
        load_half_=f"{hw}_loadu_{hsi}((const void*) ({{p}}))",
        store_half_=f"{hw}_storeu_{hsi}((void*) ({{p}}), {{x}})",
        widen_=widen,
        narrow_sat_=narrow,
    )


# A dot-product instruction that adds into its destination, as an inline function: with GNU
# inline assembly the accumulator is tied to the destination register ("+v"). GCC 12 copies the
# intrinsics' accumulators instead and, past ~20 of them, spills: a 28-accumulator tile ran at
# half the instruction's rate. Elsewhere (or with TG_NO_ASM) the intrinsic.
TIED_DOT = (
    "static inline {acc} {name}({acc} acc, {op} a, {op} b) {{\n"
    "#if " + X86_GNU_ASM + "\n"
    "  __asm__(\"{insn} %2, %1, %0\" : \"+v\"(acc) : \"v\"(a), \"v\"(b));\n"
    "  return acc;\n"
    "#else\n"
    "  return {intrinsic};\n"
    "#endif\n"
    "}}\n")


def bf16_ops(bits: int, native: bool = False) -> DotOps:
    """bfloat16 pairs on 256/512-bit vectors: the AVX512-BF16 dot product, or (without it) each
    pair's values widened to float32 (a shift or a mask: bfloat16 is a float32's high half)."""
    w, si = ("_mm512", "si512") if bits == 512 else ("_mm256", "si256")
    vtype = "__m512i" if bits == 512 else "__m256i"
    # zip: unpacklo/hi pair the first / last 4 columns of each 128-bit lane, so pair vector
    # lo holds columns 0-3, 8-11, ... and hi 4-7, 12-15, ...; unzip interleaves the lanes back.
    if bits == 512:
        widen = ("_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32("
                 "_mm256_loadu_si256((const __m256i*) (const void*) ({p}))), 16))")
        unzip_lo = ("_mm512_permutex2var_ps({lo}, _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, "
                    "4, 5, 6, 7, 20, 21, 22, 23), {hi})")
        unzip_hi = ("_mm512_permutex2var_ps({lo}, _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, "
                    "27, 12, 13, 14, 15, 28, 29, 30, 31), {hi})")
        order2 = ("{{ const __m512i tg_l = {lo}; "
                  "{lo} = _mm512_permutex2var_epi32(tg_l, _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, "
                  "19, 4, 5, 6, 7, 20, 21, 22, 23), {hi}); "
                  "{hi} = _mm512_permutex2var_epi32(tg_l, _mm512_setr_epi32(8, 9, 10, 11, 24, 25, "
                  "26, 27, 12, 13, 14, 15, 28, 29, 30, 31), {hi}); }}")
    else:
        widen = ("_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32("
                 "_mm_loadu_si128((const __m128i*) (const void*) ({p}))), 16))")
        unzip_lo = "_mm256_permute2f128_ps({lo}, {hi}, 0x20)"
        unzip_hi = "_mm256_permute2f128_ps({lo}, {hi}, 0x31)"
        order2 = ("{{ const __m256i tg_l = {lo}; {lo} = _mm256_permute2x128_si256(tg_l, {hi}, 0x20); "
                  "{hi} = _mm256_permute2x128_si256(tg_l, {hi}, 0x31); }}")
    common = dict(vtype=vtype, lanes=bits // 32,
                  load_=f"{w}_loadu_{si}((const void*) ({{p}}))",
                  bcast_=f"{w}_set1_epi32(tg_pair_bits({{p}}))", widen_=widen,
                  zip_lo_=f"{w}_unpacklo_epi16({{a}}, {{b}})",
                  zip_hi_=f"{w}_unpackhi_epi16({{a}}, {{b}})", unzip_lo_=unzip_lo,
                  unzip_hi_=unzip_hi, order2_=order2,
                  store_=f"{w}_storeu_{si}((void*) ({{p}}), {{x}})")
    if native:
        return DotOps(dot_="tg_dpbf16({acc}, {a}, {b})", helpers=PAIR_HELPER + TIED_DOT.format(
            name="tg_dpbf16", acc="__m512", op="__m512i", insn="vdpbf16ps",
            intrinsic="_mm512_dpbf16_ps(acc, (__m512bh) a, (__m512bh) b)"), **common)
    return DotOps(
        first_=f"{w}_castsi{bits}_ps({w}_slli_epi32({{x}}, 16))",
        second_=f"{w}_castsi{bits}_ps({w}_and_{si}({{x}}, {w}_set1_epi32((int) 0xFFFF0000u)))",
        helpers=PAIR_HELPER, **common)


_AVX2_HALF = (
    "static inline __m256 tg_half8_256(const void* p) {\n"
    "  const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*) p));\n"
    "  const __m256i em = _mm256_slli_epi32(_mm256_and_si256(h, _mm256_set1_epi32(0x7fff)), 13);\n"
    "  const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(h, _mm256_set1_epi32(0x8000)), 16);\n"
    f"  const __m256 v = _mm256_mul_ps(_mm256_castsi256_ps(em), _mm256_set1_ps({HALF_SCALE}));\n"
    "  return _mm256_or_ps(v, _mm256_castsi256_ps(sign));\n"
    "}\n")


# Four rows of 64 bytes to quads: byte then 16-bit unpacks interleave within 128-bit lanes, so
# q_i's lane l holds columns 16l + 4i .. 16l + 4i + 3; the natural order is the 4 x 4
# transpose of those 128-bit lanes (an involution), two rounds of VSHUFI32X4. Statements (a
# block each), so that only the kernels that use them carry them.
_S8_ROWS4_512 = (
    "{{ const __m512i tg_t0 = _mm512_unpacklo_epi8({r0}, {r1}), "
    "tg_t1 = _mm512_unpackhi_epi8({r0}, {r1}), tg_t2 = _mm512_unpacklo_epi8({r2}, {r3}), "
    "tg_t3 = _mm512_unpackhi_epi8({r2}, {r3}); "
    "{q0} = _mm512_unpacklo_epi16(tg_t0, tg_t2); {q1} = _mm512_unpackhi_epi16(tg_t0, tg_t2); "
    "{q2} = _mm512_unpacklo_epi16(tg_t1, tg_t3); {q3} = _mm512_unpackhi_epi16(tg_t1, tg_t3); }}")
_S8_ORDER4_512 = (
    "{{ const __m512i tg_a = _mm512_shuffle_i32x4({v0}, {v1}, 0x44), "
    "tg_b = _mm512_shuffle_i32x4({v2}, {v3}, 0x44), tg_c = _mm512_shuffle_i32x4({v0}, {v1}, 0xEE), "
    "tg_d = _mm512_shuffle_i32x4({v2}, {v3}, 0xEE); "
    "{v0} = _mm512_shuffle_i32x4(tg_a, tg_b, 0x88); {v1} = _mm512_shuffle_i32x4(tg_a, tg_b, 0xDD); "
    "{v2} = _mm512_shuffle_i32x4(tg_c, tg_d, 0x88); {v3} = _mm512_shuffle_i32x4(tg_c, tg_d, 0xDD); }}")

# The same on 256 bits (two 128-bit lanes): the unpacks' vectors hold the 4-column blocks
# (0, 4), (1, 5), (2, 6), (3, 7); named q0 = (0, 4), q1 = (2, 6), q2 = (1, 5), q3 = (3, 7) the
# natural order is two swaps of 128-bit lanes, (v0, v2) and (v1, v3): again an involution.
_S8_ROWS4_256 = (
    "{{ const __m256i tg_t0 = _mm256_unpacklo_epi8({r0}, {r1}), "
    "tg_t1 = _mm256_unpackhi_epi8({r0}, {r1}), tg_t2 = _mm256_unpacklo_epi8({r2}, {r3}), "
    "tg_t3 = _mm256_unpackhi_epi8({r2}, {r3}); "
    "{q0} = _mm256_unpacklo_epi16(tg_t0, tg_t2); {q2} = _mm256_unpackhi_epi16(tg_t0, tg_t2); "
    "{q1} = _mm256_unpacklo_epi16(tg_t1, tg_t3); {q3} = _mm256_unpackhi_epi16(tg_t1, tg_t3); }}")
_S8_ORDER4_256 = (
    "{{ const __m256i tg_a = _mm256_permute2x128_si256({v0}, {v2}, 0x20), "
    "tg_b = _mm256_permute2x128_si256({v1}, {v3}, 0x20); "
    "{v2} = _mm256_permute2x128_si256({v0}, {v2}, 0x31); "
    "{v3} = _mm256_permute2x128_si256({v1}, {v3}, 0x31); {v0} = tg_a; {v1} = tg_b; }}")

# AVX-VNNI's VPDPBUSD is AVX512-VNNI's on 256 bits in a VEX encoding: the same source built with
# -mavx512vnni -mavx512vl instead of -mavxvnni (its "EVEX twin") runs the kernel on AVX-512
# CPUs without AVX-VNNI, which is how its tests run there. The asm mnemonic and the intrinsic
# (GCC 12's _avx_ one needs -mavxvnni) follow the flags; the VEX form is the default. The
# tier's flags leave no ymm16-31 to the "v" constraint, which {vex} could not encode.
_AVXVNNI_SPELLING = (
    "#if !defined(__AVXVNNI__) && defined(__AVX512VNNI__) && defined(__AVX512VL__)\n"
    "#define TG_VPDPBUSD_YMM \"vpdpbusd\"\n"
    "#define TG_DPBUSD_YMM(acc, a, b) _mm256_dpbusd_epi32(acc, a, b)\n"
    "#else\n"
    "#define TG_VPDPBUSD_YMM \"%{vex%} vpdpbusd\"\n"  # %{ %}: literal braces in asm
    "#define TG_DPBUSD_YMM(acc, a, b) _mm256_dpbusd_avx_epi32(acc, a, b)\n"
    "#endif\n")


def s8_ops(bits: int, native: bool = False) -> QuadOps:
    """int8 quads on 256/512-bit vectors: VPDPBUSD (AVX512-VNNI's; on 256 bits AVX-VNNI's), or
    (without it) each quad's bytes sign-extended to int32 (shift left, arithmetic shift right)
    and multiplied."""
    w, si = ("_mm512", "si512") if bits == 512 else ("_mm256", "si256")
    common = dict(
        vtype="__m512i" if bits == 512 else "__m256i", lanes=bits // 32,
        load_=f"{w}_loadu_{si}((const void*) ({{p}}))",
        bcast_=f"{w}_set1_epi32(tg_quad_bits({{p}}))",
        zero_=f"{w}_setzero_{si}()", add_=f"{w}_add_epi32({{a}}, {{b}})",
        sub_=f"{w}_sub_epi32({{a}}, {{b}})", store_=f"{w}_storeu_{si}((void*) ({{p}}), {{x}})",
        lo4_=f"{w}_and_{si}({{x}}, {w}_set1_epi8(0x0F))",
        hi4_=f"{w}_and_{si}({w}_srli_epi32({{x}}, 4), {w}_set1_epi8(0x0F))",
        tofloat_=f"{w}_cvtepi32_ps({{x}})",
        dot7_=(f"{w}_add_epi32({{acc}}, {w}_madd_epi16({w}_maddubs_epi16({{a}}, {{b}}), "
               f"{w}_set1_epi16(1)))"),
        # AVX-512 has no VPSIGNB: b is negated (a masked subtract) where a's byte is negative.
        sdot_=(f"{w}_add_epi32({{acc}}, {w}_madd_epi16({w}_maddubs_epi16({w}_abs_epi8({{a}}), "
               + (f"{w}_mask_sub_epi8({{b}}, {w}_movepi8_mask({{a}}), {w}_setzero_si512(), {{b}})"
                  if bits == 512 else f"{w}_sign_epi8({{b}}, {{a}})")
               + f"), {w}_set1_epi16(1)))"),
        set1_=f"{w}_set1_epi32({{x}})",
        load8_=(f"_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*) ({{p}})))" if bits == 512
                else f"_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*) ({{p}})))"),
        helpers=QUAD_HELPER)
    if native and bits == 512:
        common["helpers"] += TIED_DOT.format(
            name="tg_dpbusd", acc="__m512i", op="__m512i", insn="vpdpbusd",
            intrinsic="_mm512_dpbusd_epi32(acc, a, b)")
        return QuadOps(dot_="tg_dpbusd({acc}, {a}, {b})", a_offset=True,
                       flip_="_mm512_xor_si512({x}, _mm512_set1_epi8((char) 0x80))",
                       rows4_=_S8_ROWS4_512, order4_=_S8_ORDER4_512, **common)
    if native:  # AVX-VNNI: VEX VPDPBUSD on ymm (its EVEX twin where the macros say so)
        common["helpers"] += _AVXVNNI_SPELLING + TIED_DOT.format(
            # The mnemonic is a macro: the asm string closes around it ("" M " %2...").
            name="tg_dpbusd", acc="__m256i", op="__m256i", insn='" TG_VPDPBUSD_YMM "',
            intrinsic="TG_DPBUSD_YMM(acc, a, b)")
        return QuadOps(dot_="tg_dpbusd({acc}, {a}, {b})", a_offset=True,
                       flip_="_mm256_xor_si256({x}, _mm256_set1_epi8((char) 0x80))",
                       rows4_=_S8_ROWS4_256, order4_=_S8_ORDER4_256, **common)
    if bits == 256:  # two rows' bytes interleaved, widened to int16 pairs, one VPMADDWD
        common.update(
            pair_vtype="__m256i",
            pair_="_mm256_set1_epi32((int32_t) ((uint32_t) (uint16_t) ({x0}) | "
                  "(uint32_t) (uint16_t) ({x1}) << 16))",
            madd2_=("{{ const __m128i tg_a = _mm_loadu_si128((const __m128i*) ({p0})), "
                    "tg_b = _mm_loadu_si128((const __m128i*) ({p1})); "
                    "{acc0} = _mm256_add_epi32({acc0}, _mm256_madd_epi16("
                    "_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(tg_a, tg_b)), {xx})); "
                    "{acc1} = _mm256_add_epi32({acc1}, _mm256_madd_epi16("
                    "_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(tg_a, tg_b)), {xx})); }}"))
    return QuadOps(
        byte_=f"{w}_srai_epi32({w}_slli_epi32({{x}}, 24 - 8 * ({{t}})), 24)",
        mla_=f"{w}_add_epi32({{acc}}, {w}_mullo_epi32({{a}}, {{b}}))", **common)
