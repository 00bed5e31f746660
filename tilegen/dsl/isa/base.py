"""What every ISA table is made of: element types, CPU feature names, and the spelling tables.

Templates never test ``if isa == ...``; they ask the table for a spelling (``v.fma(acc, a, b)``),
a width (``v.lanes``) or a strategy (``isa.tail``). The C dispatcher's ISA enum, feature bits and
run-time predicates, and the C testers' feature checks, are generated from these tables too
(``generated/tg_isa.h``).

This module imports nothing from the package: setup.py loads it on its own (host_arch).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Tuple

# Element types: name -> C type. Float types have VecOps; integer types (8-bit kernels: uint8
# pixels with 16/32-bit intermediates) have IntOps; bfloat16 (stored as its 16 bits) has DotOps,
# computing in float32; int8 (products taken k four at a time) has QuadOps, computing in int32;
# float16 (stored as its 16 bits) has HalfOps, computing in half precision.
DTYPES: Mapping[str, str] = {
    "f32": "float", "f64": "double", "u8": "uint8_t", "i16": "int16_t", "i32": "int32_t",
    "bf16": "uint16_t", "s8": "int8_t", "f16": "uint16_t",
}
DTYPE_BYTES: Mapping[str, int] = {"f32": 4, "f64": 8, "u8": 1, "i16": 2, "i32": 4, "bf16": 2,
                                  "s8": 1, "f16": 2}
FLOAT_DTYPES: Tuple[str, ...] = ("f32", "f64")
INT_DTYPES: Tuple[str, ...] = ("u8", "i16", "i32")
# What the throughput probe measures, in the order of the C side's dtype index: each float type's
# FMAs, bfloat16 pair dot products and int8 four-way dot products where an ISA has them.
PROBE_DTYPES: Tuple[str, ...] = FLOAT_DTYPES + ("bf16", "s8")
# The wide integer types that compute, each with the narrow type it widens from and saturates to.
INT_NARROW: Mapping[str, str] = {"i16": "u8", "i32": "i16"}

# The flags of every C translation unit of the library (setup.py) and of a kernel compiled from
# Python (tilegen.dsl.compile); an ISA's `cflags` are added to them for its kernels.
BASE_CFLAGS: Tuple[str, ...] = ("-std=gnu11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra",
                                "-Wno-unused-parameter")

# Software-prefetch targets: the level -> the spellings' fields (x86's hint; GCC's locality).
# "l2" brings lines to L2 only, which leaves the L1 miss buffers to the demand loads.
PREFETCH_LEVELS: Mapping[str, Mapping[str, object]] = {
    "l1": {"hint": "_MM_HINT_T0", "locality": 3},
    "l2": {"hint": "_MM_HINT_T1", "locality": 2},
}

# CPU features the C detector reports, in bit order: the one list that the detector
# (cpu_features.c), the C testers and the ISA tables' `requires` use. x86 bits are only set when
# the OS also enables the register state (XGETBV); the AArch64 ones come from HWCAP/HWCAP2 (Linux,
# Android) or sysctl (Apple), named as /proc/cpuinfo names them.
FEATURES: Tuple[str, ...] = (
    "sse2", "avx", "fma", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl", "asimd",
    "avx512_bf16", "avx512_vnni", "asimdhp", "asimddp", "i8mm", "bf16", "avx_vnni",
    "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8",
)

_ARCH_ALIASES: Mapping[str, str] = {
    "amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64",
}

ARCH_GUARDS: Mapping[str, str] = {
    "x86_64": "defined(__x86_64__) || defined(_M_X64)",
    "aarch64": "defined(__aarch64__) || defined(_M_ARM64)",
    "any": "1",
}


def host_arch(machine: str = "") -> str:
    """The ARCH_GUARDS key of a `platform.machine()` string (this host's by default)."""
    import platform

    m = (machine or platform.machine()).lower()
    return _ARCH_ALIASES.get(m, m)


class _Spellings:
    """Format-string fields ending in '_' become methods: ``v.add("a", "b")`` fills
    ``add_ = "_mm512_add_ps({a}, {b})"``. Positional arguments fill the placeholders in the
    order the field's docstring line in the subclass gives (ARGS)."""

    ARGS: Mapping[str, Tuple[str, ...]] = {}

    def _fill(self, op: str, *args: str) -> str:
        fmt = getattr(self, op + "_")
        if not fmt:
            raise ValueError(f"{op}: not available for {getattr(self, 'vtype', '?')}")
        return fmt.format(**dict(zip(self.ARGS[op], args)))

    def __getattr__(self, name: str):
        if name.startswith("_") or name + "_" not in self.ARGS_FIELDS():
            raise AttributeError(name)
        return lambda *args: self._fill(name, *args)

    @classmethod
    def ARGS_FIELDS(cls):
        return {f + "_" for f in cls.ARGS}


@dataclass(frozen=True)
class AsmOps:
    """AT&T mnemonics of one (ISA, dtype) pair for a k loop in GNU inline assembly."""

    reg: str        # vector register prefix: "zmm", "ymm"
    load: str       # unaligned vector load
    store: str      # unaligned vector store
    bcast: str      # scalar broadcast from memory
    fma: str        # acc += a * b, the 231 form
    zero: str       # xor idiom that reaches every register of the prefix


@dataclass(frozen=True)
class VecOps(_Spellings):
    """Spellings of the vector operations of one (ISA, float dtype) pair.

    Each field is a format string; the methods of the same name (without the '_') fill in C
    expressions. ``fma`` computes ``acc + a * b``; ``max(k, x)`` returns x when x is NaN (the
    constant goes first), which keeps relu(NaN) = NaN as in torch. ``round`` rounds to the
    nearest integer (ties to even) and ``scale2(x, n)`` is x * 2**n for an integral-valued n
    in the normal exponent range: with ``fma`` they build a polynomial exp. ``keep_ge(y, x, t)``
    is y in the lanes where x >= t or x is NaN, and +0 elsewhere (an exp's underflow to zero).
    ``abs`` is |x|, ``select_neg(x, a, b)`` is, per lane, a where x < 0 and b elsewhere (either for x = -0).
    ``store_sum4(p, a, b, c, d)`` is a statement storing the horizontal sums of four vectors to
    p[0..3], in a few shuffles where four ``reduce`` calls would take a full tree each.
    ``ext(lo, hi, k)`` is lanes k .. k + lanes - 1 of lo followed by hi (0 < k < lanes, a
    constant): a vector one to lanes - 1 values on from an aligned one, without a load.
    ``half(p)`` (float32 only) loads `lanes` IEEE half-precision values (uint16_t at p) as
    float32, exactly (the scales of quantized weight blocks). ``fma_lane(acc, a, b, lane)`` is
    ``acc + a * b[lane]``, b's lane `lane` (a constant) taken by every lane: one load of b then
    serves `lanes` values where ``bcast`` takes a load each (empty where the ISA has no
    by-element FMA: NEON's FMLA by element, ``vfmaq_laneq``).
    """

    ARGS = {
        "zero": (), "load": ("p",), "store": ("p", "x"), "bcast": ("p",), "set1": ("x",),
        "fma": ("acc", "a", "b"), "mul": ("a", "b"), "add": ("a", "b"), "sub": ("a", "b"),
        "div": ("a", "b"), "max": ("a", "b"), "min": ("a", "b"), "reduce": ("x",),
        "reduce_max": ("x",), "round": ("x",), "scale2": ("x", "n"), "keep_ge": ("y", "x", "t"),
        "mask": ("n",), "load_mask": ("m", "p"), "store_mask": ("p", "m", "x"), "abs": ("x",),
        "select_neg": ("x", "a", "b"),
        "store_sum4": ("p", "a", "b", "c", "d"), "ext": ("lo", "hi", "k"), "half": ("p",),
        "fma_lane": ("acc", "a", "b", "lane"),
    }

    ctype: str
    vtype: str
    lanes: int
    zero_: str
    load_: str
    store_: str
    bcast_: str
    set1_: str
    fma_: str
    mul_: str
    add_: str
    sub_: str
    div_: str
    max_: str
    min_: str
    round_: str
    scale2_: str
    abs_: str = ""
    select_neg_: str = ""
    reduce_: str = "({x})"     # horizontal sum of a vector to a scalar
    reduce_max_: str = "({x})"  # horizontal maximum of a vector to a scalar
    store_sum4_: str = ""
    ext_: str = ""             # lanes k.. of lo then hi (empty: the ISA has no such op)
    keep_ge_: str = ""         # y where x >= t (or x NaN), else 0
    half_: str = ""            # float32 from `lanes` halves at p (empty: not this dtype)
    fma_lane_: str = ""        # acc + a * b[lane] (empty: the ISA has no by-element FMA)
    half_helpers: str = ""     # what `half` relies on (emitted only by the kernels that use it)
    helpers: str = ""          # C helpers (static inline) the spellings above rely on
    mask_type: str = ""
    mask_: str = ""
    load_mask_: str = ""
    store_mask_: str = ""
    asm: Optional[AsmOps] = None   # set when the ISA can run a k loop in inline assembly

    # Explicit methods where the argument names differ from the positional order.
    def zero(self) -> str:
        return self.zero_

    def max(self, k: str, x: str) -> str:
        return self.max_.format(a=k, b=x)

    def min(self, k: str, x: str) -> str:
        return self.min_.format(a=k, b=x)


@dataclass(frozen=True)
class IntOps(_Spellings):
    """Spellings of one (ISA, wide integer dtype) pair: i16 (whose narrow type is u8) or i32
    (narrow type i16). Full vectors hold `lanes` wide values; a "half" vector holds as many
    narrow values (`half_vtype`), the unit that ``widen`` and ``narrow_sat`` convert:

      widen(h)       half -> full: u8 -> i16 zero-extended, i16 -> i32 sign-extended
      narrow_sat(x)  full -> half: i16 -> u8 with unsigned saturation, i32 -> i16 signed
      srai(x, n)     arithmetic shift right by the constant n
    Lane order is preserved by every conversion.

    The 8-bit kernels' extras (empty where a table has no spelling):
      i16: mulhi_u16(a, b)  the high 16 bits of the unsigned 16 x 16-bit products
           srl(x, n)        logical shift right by a run-time count n
      i32: mac2(lo, hi, x, y, k)  a statement: the products of two i16 vectors x and y (one full
           i16 vector of values each) with the int16 pair k[0], k[1] (a pointer), summed per
           value and added into 32-bit accumulators held as a split pair (lo, hi) of i32
           vectors; the split's lane order is the ISA's own, and only pack2 reads it back:
           pack2(lo, hi)    the split pair back to one i16 vector (signed saturation), values in
                            their original order
           load_u8(p)       lanes u8 values at p, zero-extended to one i32 vector
           store_u8(p, x)   the i32 vector saturated to u8, lanes values stored at p
           to_f32(x)        i32 -> f32 vector (the f32 VecOps type)
           round_f32(x)     f32 -> i32, to nearest, ties to even
    """

    ARGS = {
        "zero": (), "load": ("p",), "store": ("p", "x"), "set1": ("x",), "add": ("a", "b"),
        "sub": ("a", "b"), "mullo": ("a", "b"), "max": ("a", "b"), "min": ("a", "b"),
        "srai": ("x", "n"), "load_half": ("p",), "store_half": ("p", "x"), "widen": ("x",),
        "narrow_sat": ("x",), "mulhi_u16": ("a", "b"), "srl": ("x", "n"),
        "mac2": ("lo", "hi", "x", "y", "k"), "pack2": ("lo", "hi"), "to_f32": ("x",),
        "load_u8": ("p",), "store_u8": ("p", "x"),
        "round_f32": ("x",),
    }

    ctype: str
    vtype: str
    lanes: int
    half_vtype: str
    zero_: str
    load_: str
    store_: str
    set1_: str
    add_: str
    sub_: str
    mullo_: str
    max_: str
    min_: str
    srai_: str
    load_half_: str
    store_half_: str
    widen_: str
    narrow_sat_: str
    mulhi_u16_: str = ""
    srl_: str = ""
    mac2_: str = ""
    pack2_: str = ""
    to_f32_: str = ""
    round_f32_: str = ""
    load_u8_: str = ""
    store_u8_: str = ""
    helpers: str = ""

    def zero(self) -> str:
        return self.zero_


@dataclass(frozen=True)
class DotOps(_Spellings):
    """Spellings of a pair dot product on one ISA: 16-bit inputs (bfloat16) taken two at a time,
    float32 accumulation in the ISA's f32 vectors (``vec("f32")``). A "pair vector" holds
    `lanes` pairs, one per float32 lane, the first of each pair in the low 16 bits:

      load(p)          the pair vector at p (2 * lanes values)
      bcast(p)         the pair at p (two values) in every lane
      dot(acc, a, b)   acc + a.first * b.first + a.second * b.second per lane, in one
                       instruction (empty where the ISA has none)
      dot_lane(acc, b, a, lane)   acc + b.first * a[lane].first + b.second * a[lane].second
                       per lane, in one instruction, a[lane] being the pair in lane `lane` (a
                       constant, 0 .. lanes-1) of the pair vector a: one `load` of `lanes`
                       rows' pairs (contiguous in A's panel) then feeds `lanes` rows, where
                       `bcast` + `dot` take one broadcast per row (empty where the ISA has no
                       indexed form: BFDOT's, `vbfdotq_laneq_f32`, on neonbf16)
      first(x), second(x)   the pairs' first / second values as float32 vectors (exact:
                       a bfloat16 is the high half of a float32), for ISAs without `dot`
      widen(p)         `lanes` consecutive values at p (one row's, not pairs) as a float32
                       vector, exactly
      zip_lo(r0, r1), zip_hi(r0, r1)   two vectors of 2 * lanes values each (rows k and
                       k + 1 of the same columns, as `load` reads them) interleaved 16 bits at
                       a time into two pair vectors; the ISA may leave their columns permuted
                       (x86's unpacks work per 128-bit lane) as long as `unzip` undoes it
      unzip_lo(lo, hi), unzip_hi(lo, hi)   from the float32 vectors of per-column results of
                       the zip_lo / zip_hi pair vectors, columns 0 .. lanes - 1 and
                       lanes .. 2 * lanes - 1 in order (empty where zip is not offered)
      order2(lo, hi)   a block statement: the zip_lo / zip_hi pair vectors permuted in place
                       into columns 0 .. lanes - 1 and lanes .. 2 * lanes - 1 in order (what
                       unzip does to their results; empty where zip keeps the natural order)
      store(p, x)      the pair vector x stored at p (2 * lanes values)
    `pair_load` names a helper type pun for the broadcast (a pair read as 32 bits).
    """

    ARGS = {"load": ("p",), "bcast": ("p",), "dot": ("acc", "a", "b"),
            "dot_lane": ("acc", "b", "a", "lane"), "first": ("x",), "second": ("x",),
            "widen": ("p",), "zip_lo": ("a", "b"), "zip_hi": ("a", "b"),
            "unzip_lo": ("lo", "hi"), "unzip_hi": ("lo", "hi"), "order2": ("lo", "hi"),
            "store": ("p", "x")}

    vtype: str
    lanes: int
    load_: str
    bcast_: str
    dot_: str = ""
    dot_lane_: str = ""
    first_: str = ""
    second_: str = ""
    widen_: str = ""           # `lanes` consecutive bfloat16 values at p as float32
    zip_lo_: str = ""          # two rows into pair vectors (empty: not offered)
    zip_hi_: str = ""
    unzip_lo_: str = ""        # the zipped columns back in order
    unzip_hi_: str = ""
    order2_: str = ""          # the zipped pair vectors into natural column order
    store_: str = ""
    helpers: str = ""

    def __post_init__(self) -> None:
        if self.dot_lane_ and not self.dot_:
            raise ValueError("dot_lane: an indexed pair dot product needs `dot` too")

    @property
    def native(self) -> bool:
        return bool(self.dot_)

    @property
    def lane_indexed(self) -> bool:
        """A's pairs are loaded `lanes` rows at a time and picked by lane (`dot_lane`)."""
        return bool(self.dot_lane_)


# Reads the pair at p as one 32-bit value (the broadcast's operand) without breaking the
# aliasing rules: every ISA's DotOps helpers start with it.
PAIR_HELPER = (
    "static inline int32_t tg_pair_bits(const uint16_t* p) {\n"
    "  int32_t v;\n"
    "  __builtin_memcpy(&v, p, sizeof(v));\n"
    "  return v;\n"
    "}\n")


@dataclass(frozen=True)
class QuadOps(_Spellings):
    """Spellings of int8 products on one ISA, k taken four at a time: a "quad vector" holds
    `lanes` quads (k, k+1, k+2, k+3 of one column or row), one per int32 lane, the first in the
    low byte; sums are int32 (wrapping, as NumPy's integer matmul wraps):

      load(p)          the quad vector at p (4 * lanes values); also an int32 vector load
      bcast(p)         the quad at p (four values) in every lane
      dot(acc, a, b)   acc + the sum over the quad of a's bytes times b's, in one instruction
                       (empty where the ISA has none); b's bytes are signed, a's unsigned when
                       `a_offset` (VPDPBUSD: signed data goes in as a + 128, its products'
                       excess, 128 x the sums of b, taken away after) and signed otherwise (SDOT)
      dot_lane(acc, a, b, t)   acc + the quad sums of a's bytes times quad t of b (t a literal
                       0 .. lanes-1) in every lane, signed x signed, in one instruction (SDOT's
                       indexed form: one vector of b holds `lanes` rows' quads, so one load
                       feeds `lanes` rows; empty where the ISA has none)
      mmla(acc, a, b)  acc + a 2x8 by 8x2 product of signed bytes in one instruction (SMMLA;
                       empty where the ISA has none): a holds two rows of 8 k values (row 0 in
                       bytes 0-7), b two columns of 8 (column 0 in bytes 0-7), acc the 2 x 2
                       int32 tile row by row (r0c0, r0c1, r1c0, r1c1): its users pack k eight
                       at a time, rows and columns in pairs
      cat_lo(x, y), cat_hi(x, y)   the low (high) 64-bit halves of x and y, x's first: two
                       mmla tiles' first (second) rows as one int32 vector
      byte(x, t)       byte t of each lane sign-extended to int32 (t a literal 0..3), for ISAs
                       without `dot`
      mla(acc, a, b)   acc + a * b on int32 lanes
      zero(), add(a, b), sub(a, b), store(p, x)   int32 vectors
      lo4(x), hi4(x)   the low / high nibble of every byte, as bytes 0..15 in place (4-bit
                       weights: two codes a byte)
      dot7(acc, a, b)  acc + the quad sums of a's bytes, unsigned and each below 128, times b's,
                       signed (empty where the ISA has no such pair multiply-add: PMADDUBSW
                       then PMADDWD, which cannot saturate under that bound)
      sdot(acc, a, b)  acc + the quad sums of a's bytes times b's, both signed, b never -128
                       (|a| times b's sign moved onto it, then as dot7)
      tofloat(x)       the int32 lanes as the ISA's float32 vector (``vec("f32")``)

    Rows read in place (a matrix's rows along the lanes, the vector's values broadcast):
      set1(x)          the int32 value x in every lane
      load8(p)         `lanes` int8 values at p, sign-extended to the int32 lanes (in order)
      flip(x)          every byte of x with its top bit flipped (x + 128 as unsigned bytes)
      rows4(q0, q1, q2, q3, r0, r1, r2, r3)   a block statement (with `dot`): byte vectors r0..r3
                       (4 * lanes columns of four consecutive rows) interleaved into the four
                       quad vectors q0..q3 of their columns, in the ISA's own column order
      order4(v0, v1, v2, v3)   a block statement (with `dot`): int32 vectors permuted in place
                       between rows4's column order and the natural one (its own inverse;
                       empty where rows4 keeps the natural order)
      pair(x0, x1)     (without `dot`; optional) the int16 pair x0, x1 (values -128..255) as a
                       `pair_vtype` value for madd2
      madd2(acc0, acc1, p0, p1, xx)   a block statement: acc0 and acc1 (the int32 vectors of
                       columns 0..lanes-1 and lanes..2*lanes-1) += p0[j] * x0 + p1[j] * x1 for
                       the 2 * lanes int8 values at p0 and p1 (two rows of B), xx = pair(x0, x1)
                       (PMADDWD on interleaved rows; SMLAL by lane)
    """

    ARGS = {"load": ("p",), "bcast": ("p",), "dot": ("acc", "a", "b"),
            "dot_lane": ("acc", "a", "b", "t"), "mmla": ("acc", "a", "b"),
            "cat_lo": ("x", "y"), "cat_hi": ("x", "y"), "byte": ("x", "t"),
            "mla": ("acc", "a", "b"), "zero": (), "add": ("a", "b"), "sub": ("a", "b"),
            "store": ("p", "x"), "lo4": ("x",), "hi4": ("x",), "tofloat": ("x",),
            "dot7": ("acc", "a", "b"), "sdot": ("acc", "a", "b"), "set1": ("x",),
            "load8": ("p",), "flip": ("x",),
            "rows4": ("q0", "q1", "q2", "q3", "r0", "r1", "r2", "r3"),
            "order4": ("v0", "v1", "v2", "v3"), "pair": ("x0", "x1"),
            "madd2": ("acc0", "acc1", "p0", "p1", "xx")}

    vtype: str
    lanes: int
    load_: str
    bcast_: str
    zero_: str
    add_: str
    sub_: str
    store_: str
    mla_: str = ""
    byte_: str = ""
    dot_: str = ""
    dot_lane_: str = ""
    mmla_: str = ""
    cat_lo_: str = ""
    cat_hi_: str = ""
    lo4_: str = ""
    hi4_: str = ""
    tofloat_: str = ""
    dot7_: str = ""
    sdot_: str = ""
    set1_: str = ""
    load8_: str = ""
    flip_: str = ""
    rows4_: str = ""
    order4_: str = ""
    pair_: str = ""
    madd2_: str = ""
    pair_vtype: str = ""
    helpers: str = ""
    # `dot` reads its first operand's bytes unsigned (VPDPBUSD): the one fact behind every
    # "offset by 128" -- signed data packed for that operand goes in + 128 (and uint8 data
    # as it is). False for a signed x signed dot (SDOT) and for ISAs without a dot (there
    # uint8 data is the operand flipped, - 128).
    a_offset: bool = False

    def __post_init__(self) -> None:
        if self.a_offset and not self.dot_:
            raise ValueError("a_offset: only a dot product reads unsigned bytes")
        if self.dot_lane_ and not self.dot_:
            raise ValueError("dot_lane: a table with the indexed dot spells the plain one too")

    @property
    def native(self) -> bool:
        """`dot` is one instruction (a table with `dot_lane` has it too)."""
        return bool(self.dot_)


@dataclass(frozen=True)
class HalfOps(_Spellings):
    """Spellings of IEEE half-precision arithmetic on one ISA (float16 values stored as their 16
    bits, uint16_t in memory), every multiply-add rounded once to half (a fused half FMA):

      zero()                  a vector of +0
      load(p), store(p, x)    `lanes` halves at p (uint16_t*) as a vector, and back
      fma_lane(acc, b, a, l)  acc + b * (lane l of a) per lane, rounded once to half (l a
                              constant below `lanes`: one load of A serves `lanes` rows)
      bcast(p), fma(acc, b, a)   for ISAs without a by-element FMA (fma_lane empty: x86): the
                              half at p in every lane, and acc + b * a per lane, rounded once
                              to half; A's rows then take a broadcast each
    `native` is False for a table that only emulates half arithmetic (the scalar reference): the
    dispatcher never serves a product with it, as float32 accumulation is faster there and more
    accurate.
    """

    ARGS = {"zero": (), "load": ("p",), "store": ("p", "x"), "fma_lane": ("acc", "b", "a", "l"),
            "bcast": ("p",), "fma": ("acc", "b", "a")}

    vtype: str
    lanes: int
    zero_: str
    load_: str
    store_: str
    fma_lane_: str = ""
    bcast_: str = ""
    fma_: str = ""
    native: bool = True
    helpers: str = ""

    def __post_init__(self) -> None:
        if not self.fma_lane_ and not (self.bcast_ and self.fma_):
            raise ValueError("HalfOps: spell fma_lane, or bcast and fma")

    def zero(self) -> str:
        return self.zero_

    @property
    def lane_indexed(self) -> bool:
        """A's halves are loaded `lanes` rows at a time and picked by lane (`fma_lane`)."""
        return bool(self.fma_lane_)


# IEEE half -> float32 bits without F16C: the half's exponent and mantissa shifted into a
# float32's place are the value times 2^-112 for every finite half, subnormals included; one
# multiply by 2^112 restores it (exact), then the sign is put back. Infinities and NaNs become
# large finite values: quantized-weight scales are finite (the quantizers refuse the others).
HALF_SCALE = "0x1p112f"


# Reads the quad at p as one 32-bit value without breaking the aliasing rules.
QUAD_HELPER = (
    "static inline int32_t tg_quad_bits(const int8_t* p) {\n"
    "  int32_t v;\n"
    "  __builtin_memcpy(&v, p, sizeof(v));\n"
    "  return v;\n"
    "}\n")


@dataclass(frozen=True)
class TileOps(_Spellings):
    """Spellings of a tile matrix unit (Intel AMX) for one input dtype: `count` tile registers
    of up to `rows` rows of `colsb` bytes, shaped by a 64-byte configuration; products
    accumulate in 32-bit lanes (float32 for bfloat16, int32 for int8), `group` input values
    (4 bytes) per 32-bit lane of a row of B, as VDPBF16PS's pairs and VNNI's quads are packed:

      config(p)        load the tile configuration at p (64 bytes)
      release()        return the tiles to their init state (the thread's last tile use)
      zero(t)          tile t (a literal) := 0
      load(t, p, stride)   tile t := its rows x colsb bytes, row r at p + r * stride bytes
      store(t, p, stride)  tile t's rows to p + r * stride bytes
      dot(c, a, b)     C[m][n] += sum over the row's groups g of A[m][g] . B[g][n] (tiles c,
                       a, b: literals): TDPBF16PS; TDPBUSD (unsigned A x signed B bytes,
                       as QuadOps.a_offset)
      publish(p)       a statement after C stores to a buffer at p that a tile load then
                       reads (GCC's tile loads are asm statements with no memory operand:
                       without it, the stores may be dropped as dead)
    """

    ARGS = {"config": ("p",), "release": (), "zero": ("t",), "load": ("t", "p", "stride"),
            "store": ("t", "p", "stride"), "dot": ("c", "a", "b"), "publish": ("p",)}

    count: int
    rows: int
    colsb: int
    group: int
    acc_ctype: str
    config_: str = "_tile_loadconfig({p})"
    release_: str = "_tile_release()"
    zero_: str = "_tile_zero({t})"
    load_: str = "_tile_loadd({t}, {p}, {stride})"
    store_: str = "_tile_stored({t}, {p}, {stride})"
    dot_: str = ""
    publish_: str = '__asm__ volatile("" : : "r"({p}) : "memory")'


@dataclass(frozen=True)
class Isa:
    name: str
    arch: str                       # key of ARCH_GUARDS
    vector_bits: int
    num_vregs: int                  # architectural vector (or FP) registers
    tail: str                       # "mask": masked loads/stores; "temp": a temporary tile
    cflags: Tuple[str, ...]         # GCC/Clang flags for this ISA's translation units
    headers: Tuple[str, ...]
    requires: Tuple[str, ...]       # FEATURES that must all be present (and OS-enabled)
    priority: int                   # dispatch order within an arch: higher is tried first
    prefetch_: str
    ops: Mapping[str, VecOps] = field(default_factory=dict)       # per float dtype
    int_ops: Mapping[str, IntOps] = field(default_factory=dict)   # per wide integer dtype
    dot_ops: Mapping[str, DotOps] = field(default_factory=dict)   # per 16-bit input dtype
    quad_ops: Mapping[str, QuadOps] = field(default_factory=dict)  # per 8-bit product input dtype
    half_ops: Mapping[str, HalfOps] = field(default_factory=dict)  # half-precision arithmetic
    tile_ops: Mapping[str, TileOps] = field(default_factory=dict)  # tile matrix unit, per input dtype
    # Preprocessor condition under which the inline-assembly k loops compile (GNU syntax on
    # this arch); elsewhere, e.g. MSVC, the same kernel falls back to its intrinsics loop.
    asm_guard: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        unknown = [f for f in self.requires if f not in FEATURES]
        if unknown:
            raise ValueError(f"requires: {self.name} names unknown features {unknown}; "
                             f"known: {', '.join(FEATURES)}")

    def vec(self, dtype: str) -> VecOps:
        return self.ops[dtype]

    def ints(self, dtype: str) -> IntOps:
        return self.int_ops[dtype]

    def dot(self, dtype: str) -> DotOps:
        return self.dot_ops[dtype]

    def quad(self, dtype: str) -> QuadOps:
        return self.quad_ops[dtype]

    def half(self, dtype: str) -> HalfOps:
        return self.half_ops[dtype]

    def tile(self, dtype: str) -> TileOps:
        return self.tile_ops[dtype]

    def lanes(self, dtype: str) -> int:
        if dtype in self.int_ops:
            return self.int_ops[dtype].lanes
        if dtype in self.dot_ops:
            return self.dot_ops[dtype].lanes  # pairs per vector: float32 lanes
        if dtype in self.quad_ops:
            return self.quad_ops[dtype].lanes  # quads per vector: int32 lanes
        if dtype in self.half_ops:
            return self.half_ops[dtype].lanes
        return self.ops[dtype].lanes

    def prefetch(self, p: str, level: str = "l1") -> str:
        """A prefetch of address p into cache `level` (PREFETCH_LEVELS)."""
        return self.prefetch_.format(p=p, **PREFETCH_LEVELS[level])
