"""AArch64 with the int8 matrix multiply (FEAT_I8MM, `i8mm`: Cortex-A510/A710/X2, Neoverse V1/N2
and later, Apple M2 and later): the dot-product table plus SMMLA, a 2x2 int32 tile += a 2x8 by
8x2 int8 product. Its own tier so that no other ISA's code carries the instructions."""
from dataclasses import replace

from .neondot import ISA as NEONDOT
from .neondot import S8_DOT

# SMMLA is signed x signed (a_offset False, as SDOT); its users take k eight at a time. SDOT
# stays spelled for those that take quads (the throughput probe).
S8_MMLA = replace(
    S8_DOT,
    mmla_="vmmlaq_s32({acc}, vreinterpretq_s8_s32({a}), vreinterpretq_s8_s32({b}))",
    cat_lo_=("vreinterpretq_s32_s64(vzip1q_s64(vreinterpretq_s64_s32({x}), "
             "vreinterpretq_s64_s32({y})))"),
    cat_hi_=("vreinterpretq_s32_s64(vzip2q_s64(vreinterpretq_s64_s32({x}), "
             "vreinterpretq_s64_s32({y})))"))

ISA = replace(
    NEONDOT, name="neoni8mm",
    cflags=("-march=armv8.2-a+dotprod+i8mm",),
    requires=NEONDOT.requires + ("i8mm",),
    priority=NEONDOT.priority + 1,
    quad_ops={"s8": S8_MMLA},
    description="AArch64 NEON + dot product + I8MM (SMMLA int8 matrix multiply-accumulate)",
)
