"""AArch64 with the bfloat16 extension (FEAT_BF16, `bf16`: Cortex-A510/A710/X2, Neoverse V1/N2
and later, Apple M2 and later): the NEON table plus BFDOT (float32 += bfloat16 pair dot
products) and BFMMLA. Its own tier so that no other ISA's code carries the instructions; every
other dtype's kernels stay neon's (the dispatcher falls through to it)."""
from dataclasses import replace

from .neon import ISA as NEON

ISA = replace(
    NEON, name="neonbf16",
    cflags=("-march=armv8.2-a+bf16",),
    requires=NEON.requires + ("bf16",),
    priority=NEON.priority + 4,
    quad_ops={},
    description="AArch64 NEON + BF16 (BFDOT bfloat16 pair dot products)",
)
