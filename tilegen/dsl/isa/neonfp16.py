"""AArch64 with half-precision arithmetic (FEAT_FP16, `asimdhp`: Cortex-A55/A75 and later, Apple
M1 and later): the NEON table plus FMLA on eight float16 lanes. Its own tier (flags, translation
units, feature check) so that no other ISA's code carries the instructions; every other dtype's
kernels stay neon's (the dispatcher falls through to it)."""
from dataclasses import replace

from .base import HalfOps
from .neon import ISA as NEON

# FMLA (by element) on eight half lanes: fused, one rounding to half per multiply-add. Half
# denormals are kept (FPCR.FZ16 is clear on Linux, Android and Apple). Halves move as uint16
# vectors (the kernels' memory type); the zero is built from integers, not a float16 constant.
F16 = HalfOps(
    vtype="float16x8_t", lanes=8,
    zero_="vreinterpretq_f16_u16(vdupq_n_u16(0))",
    load_="vreinterpretq_f16_u16(vld1q_u16({p}))",
    store_="vst1q_u16({p}, vreinterpretq_u16_f16({x}))",
    fma_lane_="vfmaq_laneq_f16({acc}, {b}, {a}, {l})")

ISA = replace(
    NEON, name="neonfp16",
    cflags=("-march=armv8.2-a+fp16",),
    requires=NEON.requires + ("asimdhp",),
    priority=NEON.priority + 1,
    dot_ops={}, quad_ops={}, half_ops={"f16": F16},
    description="AArch64 NEON + FP16 arithmetic (FMLA .8h half-precision FMAs)",
)
