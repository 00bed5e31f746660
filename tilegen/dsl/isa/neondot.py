"""AArch64 with the dot-product instructions (FEAT_DotProd, `asimddp`: Cortex-A55/A75 and later,
Apple M1 and later): the NEON table plus SDOT, an int32 += four s8 x s8 products. Its own tier
(flags, translation units, feature check) so that no other ISA's code carries the instruction;
every other dtype's kernels stay neon's (the dispatcher falls through to it)."""
from dataclasses import replace

from .neon import ISA as NEON
from .neon import S8

# SDOT multiplies signed by signed bytes, so no operand is offset (a_offset False): int8 A goes
# in as it is and uint8 A is flipped (A - 128), as for the widening kernels. The indexed form
# takes one quad of a 16-byte vector (four rows' quads) for every lane.
S8_DOT = replace(
    S8, byte_="", mla_="",
    dot_="vdotq_s32({acc}, vreinterpretq_s8_s32({a}), vreinterpretq_s8_s32({b}))",
    dot_lane_=("vdotq_laneq_s32({acc}, vreinterpretq_s8_s32({a}), vreinterpretq_s8_s32({b}), "
               "{t})"))

ISA = replace(
    NEON, name="neondot",
    cflags=("-march=armv8.2-a+dotprod",),
    requires=NEON.requires + ("asimddp",),
    priority=NEON.priority + 2,
    dot_ops={},
    quad_ops={"s8": S8_DOT},
    description="AArch64 NEON + dot product (SDOT int8 four-way dot products)",
)
