"""AArch64 with half-precision arithmetic (FEAT_FP16, `asimdhp`: Cortex-A55/A75 and later, Apple
M1 and later): the NEON table plus FMLA on eight float16 lanes. Its own tier (flags, translation
units, feature check) so that no other ISA's code carries the instructions; every other dtype's
kernels stay neon's (the dispatcher falls through to it)."""
from dataclasses import replace

from .neon import ISA as NEON

ISA = replace(
    NEON, name="neonfp16",
    cflags=("-march=armv8.2-a+fp16",),
    requires=NEON.requires + ("asimdhp",),
    priority=NEON.priority + 1,
    dot_ops={}, quad_ops={},
    description="AArch64 NEON + FP16 arithmetic (FMLA .8h half-precision FMAs)",
)
