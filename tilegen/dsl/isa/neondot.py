"""AArch64 with the dot-product instructions (FEAT_DotProd, `asimddp`: Cortex-A55/A75 and later,
Apple M1 and later): the NEON table plus SDOT, an int32 += four s8 x s8 products. Its own tier
(flags, translation units, feature check) so that no other ISA's code carries the instruction;
every other dtype's kernels stay neon's (the dispatcher falls through to it)."""
from dataclasses import replace

from .neon import ISA as NEON

ISA = replace(
    NEON, name="neondot",
    cflags=("-march=armv8.2-a+dotprod",),
    requires=NEON.requires + ("asimddp",),
    priority=NEON.priority + 2,
    dot_ops={},
    description="AArch64 NEON + dot product (SDOT int8 four-way dot products)",
)
