"""AArch64 with the bfloat16 extension (FEAT_BF16, `bf16`: Cortex-A510/A710/X2, Neoverse V1/N2
and later, Apple M2 and later): the NEON table plus BFDOT (float32 += bfloat16 pair dot
products) and BFMMLA. Its own tier so that no other ISA's code carries the instructions; every
other dtype's kernels stay neon's (the dispatcher falls through to it)."""
from dataclasses import replace

from .base import PAIR_HELPER, DotOps
from .neon import BF16 as NEON_BF16
from .neon import ISA as NEON

# BFDOT: per float32 lane, acc + the pair's two products. It ignores FPCR (without FEAT_EBF16's
# FPCR.EBF, which Linux leaves clear): the products and both sums round to odd, and subnormal
# inputs and results are flushed to zero (Arm ARM, BFDotAdd). The indexed form takes A's pairs
# four rows to a load (lane = row), as XNNPACK's ld128 kernels do. Operands come from memory
# only: GCC 12 mis-materializes a constant bfloat16x8_t as an fp16 `fmov`.
BF16 = DotOps(
    vtype="bfloat16x8_t", lanes=4,
    load_="vld1q_bf16((const bfloat16_t*) (const void*) ({p}))",
    bcast_="vreinterpretq_bf16_u32(vdupq_n_u32((uint32_t) tg_pair_bits({p})))",
    dot_="vbfdotq_f32({acc}, {a}, {b})",
    dot_lane_="vbfdotq_laneq_f32({acc}, {b}, {a}, {lane})",
    # Two rows read in place into pairs: ZIP1/ZIP2 on 16-bit elements pair rows k and k + 1 of
    # columns 0-3 and 4-7 in order, so unzip has nothing to undo. (On u16: GCC 12 has no bf16
    # zip.)
    zip_lo_=("vreinterpretq_bf16_u16(vzip1q_u16(vreinterpretq_u16_bf16({a}), "
             "vreinterpretq_u16_bf16({b})))"),
    zip_hi_=("vreinterpretq_bf16_u16(vzip2q_u16(vreinterpretq_u16_bf16({a}), "
             "vreinterpretq_u16_bf16({b})))"),
    unzip_lo_="({lo})", unzip_hi_="({hi})", order2_="",
    store_="vst1q_bf16((bfloat16_t*) (void*) ({p}), {x})",
    # single rows (columns around whole pair vectors), widened exactly as on neon
    widen_=NEON_BF16.widen_,
    helpers=PAIR_HELPER)

ISA = replace(
    NEON, name="neonbf16",
    cflags=("-march=armv8.2-a+bf16",),
    requires=NEON.requires + ("bf16",),
    priority=NEON.priority + 4,
    dot_ops={"bf16": BF16},
    quad_ops={},
    description="AArch64 NEON + BF16 (BFDOT bfloat16 pair dot products)",
)
