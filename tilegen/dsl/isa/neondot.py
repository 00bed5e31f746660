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
               "{t})"),
    # Four rows read in place into quads: ZIP1/ZIP2 of bytes then of 16-bit pairs put the rows'
    # columns 0-3, 4-7, 8-11, 12-15 into q0..q3 in order, so there is no order4 to undo.
    rows4_=("{{ const int8x16_t tg_r0 = vreinterpretq_s8_s32({r0}), "
            "tg_r1 = vreinterpretq_s8_s32({r1}), tg_r2 = vreinterpretq_s8_s32({r2}), "
            "tg_r3 = vreinterpretq_s8_s32({r3}); "
            "const int16x8_t tg_lo01 = vreinterpretq_s16_s8(vzip1q_s8(tg_r0, tg_r1)), "
            "tg_hi01 = vreinterpretq_s16_s8(vzip2q_s8(tg_r0, tg_r1)), "
            "tg_lo23 = vreinterpretq_s16_s8(vzip1q_s8(tg_r2, tg_r3)), "
            "tg_hi23 = vreinterpretq_s16_s8(vzip2q_s8(tg_r2, tg_r3)); "
            "{q0} = vreinterpretq_s32_s16(vzip1q_s16(tg_lo01, tg_lo23)); "
            "{q1} = vreinterpretq_s32_s16(vzip2q_s16(tg_lo01, tg_lo23)); "
            "{q2} = vreinterpretq_s32_s16(vzip1q_s16(tg_hi01, tg_hi23)); "
            "{q3} = vreinterpretq_s32_s16(vzip2q_s16(tg_hi01, tg_hi23)); }}"),
    flip_="veorq_s32({x}, vdupq_n_s32((int32_t) 0x80808080u))")

ISA = replace(
    NEON, name="neondot",
    cflags=("-march=armv8.2-a+dotprod",),
    requires=NEON.requires + ("asimddp",),
    priority=NEON.priority + 2,
    dot_ops={},
    quad_ops={"s8": S8_DOT},
    description="AArch64 NEON + dot product (SDOT int8 four-way dot products)",
)
