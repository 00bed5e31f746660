"""ISA tables: everything tilegen knows about an instruction set, in one place.

Templates never test ``if isa == ...``; they ask the table for a spelling
(``v.fma(acc, a, b)``), a width (``v.lanes``) or a strategy (``isa.tail``).
The C dispatcher's ISA enum, feature bits and run-time predicates are generated
from these tables too (``generated/tg_isa.h``), so adding an ISA is one entry here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Tuple

DTYPES: Mapping[str, str] = {"f32": "float", "f64": "double"}
DTYPE_BYTES: Mapping[str, int] = {"f32": 4, "f64": 8}

# CPU features the C detector reports, in bit order. x86 bits are only set when
# the OS also enables the register state (XGETBV); asimd comes from HWCAP.
FEATURES: Tuple[str, ...] = (
    "sse2", "avx", "fma", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl", "asimd",
)

_ARCH_ALIASES: Mapping[str, str] = {
    "amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64",
}


def host_arch(machine: str = "") -> str:
    """The ARCH_GUARDS key of a `platform.machine()` string (this host's by default)."""
    import platform

    m = (machine or platform.machine()).lower()
    return _ARCH_ALIASES.get(m, m)


ARCH_GUARDS: Mapping[str, str] = {
    "x86_64": "defined(__x86_64__) || defined(_M_X64)",
    "aarch64": "defined(__aarch64__) || defined(_M_ARM64)",
    "any": "1",
}


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
class VecOps:
    """Spellings of the vector operations of one (ISA, dtype) pair.

    Each field is a format string; the methods fill in C expressions. ``fma``
    computes ``acc + a * b``; ``max(k, x)`` returns x when x is NaN (the
    constant goes first), which keeps relu(NaN) = NaN as in torch.
    """

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
    max_: str
    min_: str
    reduce_: str = "({x})"     # horizontal sum of a vector to a scalar
    helpers: str = ""          # C helpers (static inline) the spellings above rely on
    mask_type: str = ""
    mask_: str = ""
    load_mask_: str = ""
    store_mask_: str = ""
    asm: Optional[AsmOps] = None   # set when the ISA can run a GEMM k loop in inline assembly

    def zero(self) -> str:
        return self.zero_

    def load(self, p: str) -> str:
        return self.load_.format(p=p)

    def store(self, p: str, x: str) -> str:
        return self.store_.format(p=p, x=x)

    def bcast(self, p: str) -> str:
        return self.bcast_.format(p=p)

    def set1(self, x: str) -> str:
        return self.set1_.format(x=x)

    def fma(self, acc: str, a: str, b: str) -> str:
        return self.fma_.format(acc=acc, a=a, b=b)

    def mul(self, a: str, b: str) -> str:
        return self.mul_.format(a=a, b=b)

    def add(self, a: str, b: str) -> str:
        return self.add_.format(a=a, b=b)

    def max(self, k: str, x: str) -> str:
        return self.max_.format(a=k, b=x)

    def min(self, k: str, x: str) -> str:
        return self.min_.format(a=k, b=x)

    def reduce(self, x: str) -> str:
        return self.reduce_.format(x=x)

    def mask(self, count: str) -> str:
        return self.mask_.format(n=count)

    def load_mask(self, m: str, p: str) -> str:
        return self.load_mask_.format(m=m, p=p)

    def store_mask(self, p: str, m: str, x: str) -> str:
        return self.store_mask_.format(p=p, m=m, x=x)


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
    ops: Mapping[str, VecOps] = field(default_factory=dict)
    # Default cache blocking (KC, NC) per dtype: a KC x NC block of packed B stays in L2 while
    # every row panel of A streams through L1. `tilegen tune` refines it per machine.
    blocking: Mapping[str, Tuple[int, int]] = field(default_factory=dict)
    # Preprocessor condition under which the inline-assembly k loops compile (GNU syntax on
    # this arch); elsewhere, e.g. MSVC, the same kernel falls back to its intrinsics loop.
    asm_guard: str = ""
    description: str = ""

    def vec(self, dtype: str) -> VecOps:
        return self.ops[dtype]

    def lanes(self, dtype: str) -> int:
        return self.ops[dtype].lanes

    def prefetch(self, p: str) -> str:
        return self.prefetch_.format(p=p)


_AVX2_HSUM = {
    "f32": (
        "static inline float tg_hsum256_ps(__m256 v) {\n"
        "  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));\n"
        "  s = _mm_add_ps(s, _mm_movehl_ps(s, s));\n"
        "  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));\n"
        "}\n"),
    "f64": (
        "static inline double tg_hsum256_pd(__m256d v) {\n"
        "  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));\n"
        "  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));\n"
        "}\n"),
}


def _x86_ops(bits: int, dtype: str) -> VecOps:
    sfx = "ps" if dtype == "f32" else "pd"
    w = "_mm512" if bits == 512 else "_mm256"
    vtype = ("__m512" if bits == 512 else "__m256") + ("" if dtype == "f32" else "d")
    ctype = DTYPES[dtype]
    lanes = bits // (32 if dtype == "f32" else 64)
    if bits == 512:
        bcast = f"{w}_set1_{sfx}(*({{p}}))"
    else:
        bcast = f"{w}_broadcast_s{'s' if dtype == 'f32' else 'd'}({{p}})"
    common = dict(
        ctype=ctype, vtype=vtype, lanes=lanes,
        zero_=f"{w}_setzero_{sfx}()",
        load_=f"{w}_loadu_{sfx}({{p}})",
        store_=f"{w}_storeu_{sfx}({{p}}, {{x}})",
        bcast_=bcast,
        set1_=f"{w}_set1_{sfx}({{x}})",
        fma_=f"{w}_fmadd_{sfx}({{a}}, {{b}}, {{acc}})",
        mul_=f"{w}_mul_{sfx}({{a}}, {{b}})",
        add_=f"{w}_add_{sfx}({{a}}, {{b}})",
        max_=f"{w}_max_{sfx}({{a}}, {{b}})",
        min_=f"{w}_min_{sfx}({{a}}, {{b}})",
    )
    if bits == 512:
        common.update(reduce_=f"{w}_reduce_add_{sfx}({{x}})")
    else:
        common.update(reduce_=f"tg_hsum256_{sfx}({{x}})", helpers=_AVX2_HSUM[dtype])
    p = "s" if dtype == "f32" else "d"
    common.update(asm=AsmOps(
        reg="zmm" if bits == 512 else "ymm", load=f"vmovup{p}", store=f"vmovup{p}",
        bcast=f"vbroadcasts{p}", fma=f"vfmadd231p{p}",
        # vxorps cannot name zmm16-31 without AVX512DQ; vpxord is AVX512F.
        zero="vpxord" if bits == 512 else "vxorps"))
    if bits == 512:
        mtype = "__mmask16" if dtype == "f32" else "__mmask8"
        common.update(
            mask_type=mtype,
            mask_=f"(({mtype}) ((1u << ({{n}})) - 1u))",
            load_mask_=f"{w}_maskz_loadu_{sfx}({{m}}, {{p}})",
            store_mask_=f"{w}_mask_storeu_{sfx}({{p}}, {{m}}, {{x}})",
        )
    return VecOps(**common)


def _neon_ops(dtype: str) -> VecOps:
    s = "f32" if dtype == "f32" else "f64"
    lanes = 4 if dtype == "f32" else 2
    return VecOps(
        ctype=DTYPES[dtype], vtype=f"float{s[1:]}x{lanes}_t", lanes=lanes,
        zero_=f"vdupq_n_{s}(0)",
        load_=f"vld1q_{s}({{p}})",
        store_=f"vst1q_{s}({{p}}, {{x}})",
        bcast_=f"vld1q_dup_{s}({{p}})",
        set1_=f"vdupq_n_{s}({{x}})",
        fma_=f"vfmaq_{s}({{acc}}, {{a}}, {{b}})",
        mul_=f"vmulq_{s}({{a}}, {{b}})",
        add_=f"vaddq_{s}({{a}}, {{b}})",
        # FMAX/FMIN return NaN when either input is NaN.
        max_=f"vmaxq_{s}({{a}}, {{b}})",
        min_=f"vminq_{s}({{a}}, {{b}})",
        reduce_=f"vaddvq_{s}({{x}})",
    )


def _scalar_ops(dtype: str) -> VecOps:
    ctype = DTYPES[dtype]
    return VecOps(
        ctype=ctype, vtype=ctype, lanes=1,
        zero_="0", load_="(*({p}))", store_="(*({p}) = ({x}))", bcast_="(*({p}))",
        set1_="({x})", fma_="(({acc}) + ({a}) * ({b}))", mul_="(({a}) * ({b}))",
        add_="(({a}) + ({b}))",
        # `k > x` is false for NaN x, so x (the NaN) is returned.
        max_="(({a}) > ({b}) ? ({a}) : ({b}))",
        min_="(({a}) < ({b}) ? ({a}) : ({b}))",
    )


# GCC and Clang on x86-64; TG_NO_ASM builds the intrinsics fallback (the tests build both).
_X86_GNU_ASM = "defined(__GNUC__) && defined(__x86_64__) && !defined(TG_NO_ASM)"

ISAS: Dict[str, Isa] = {
    "scalar": Isa(
        name="scalar", arch="any", vector_bits=0, num_vregs=16, tail="temp",
        # Keep the fallback scalar: GCC 12's loop vectorizer turns the strided A broadcasts into
        # grouped loads that read one k step past the packed panel (caught by the guard pages).
        cflags=("-fno-tree-vectorize",), headers=(), requires=(), priority=0,
        prefetch_="__builtin_prefetch({p})",
        ops={d: _scalar_ops(d) for d in DTYPES},
        blocking={"f32": (256, 256), "f64": (256, 256)},
        description="portable C, one element per 'register' (16 FP registers assumed)",
    ),
    "avx2": Isa(
        name="avx2", arch="x86_64", vector_bits=256, num_vregs=16, tail="temp",
        cflags=("-mavx2", "-mfma"), headers=("immintrin.h",),
        requires=("avx", "avx2", "fma"), priority=20,
        prefetch_="_mm_prefetch((const char*) ({p}), _MM_HINT_T0)",
        ops={d: _x86_ops(256, d) for d in DTYPES},
        blocking={"f32": (256, 1024), "f64": (256, 512)},
        asm_guard=_X86_GNU_ASM,
        description="AVX2 + FMA3, 16 ymm registers",
    ),
    "avx512": Isa(
        name="avx512", arch="x86_64", vector_bits=512, num_vregs=32, tail="mask",
        cflags=("-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq"),
        headers=("immintrin.h",),
        requires=("avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"),
        priority=30,
        prefetch_="_mm_prefetch((const char*) ({p}), _MM_HINT_T0)",
        ops={d: _x86_ops(512, d) for d in DTYPES},
        blocking={"f32": (256, 1024), "f64": (256, 512)},
        asm_guard=_X86_GNU_ASM,
        description="AVX-512 F/VL/BW/DQ, 32 zmm registers, masked tails",
    ),
    "neon": Isa(
        name="neon", arch="aarch64", vector_bits=128, num_vregs=32, tail="temp",
        cflags=(), headers=("arm_neon.h",), requires=("asimd",), priority=20,
        prefetch_="__builtin_prefetch({p})",
        ops={d: _neon_ops(d) for d in DTYPES},
        blocking={"f32": (256, 512), "f64": (256, 256)},
        description="AArch64 Advanced SIMD (ASIMD), 32 q registers",
    ),
}


def get_isa(name: str) -> Isa:
    try:
        return ISAS[name]
    except KeyError:
        raise ValueError(
            f"isa: unknown ISA {name!r}; allowed values: {', '.join(sorted(ISAS))}"
        ) from None


def feature_bit(name: str) -> int:
    return 1 << FEATURES.index(name)


def isas_for_arch(arch: str):
    """ISAs a library built for `arch` contains, best first."""
    out = [i for i in ISAS.values() if i.arch in (arch, "any")]
    return sorted(out, key=lambda i: -i.priority)
