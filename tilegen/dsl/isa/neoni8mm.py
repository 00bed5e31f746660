"""AArch64 with the int8 matrix multiply (FEAT_I8MM, `i8mm`: Cortex-A510/A710/X2, Neoverse V1/N2
and later, Apple M2 and later): the dot-product table plus SMMLA, a 2x2 int32 tile += a 2x8 by
8x2 int8 product. Its own tier so that no other ISA's code carries the instructions."""
from dataclasses import replace

from .neondot import ISA as NEONDOT

ISA = replace(
    NEONDOT, name="neoni8mm",
    cflags=("-march=armv8.2-a+dotprod+i8mm",),
    requires=NEONDOT.requires + ("i8mm",),
    priority=NEONDOT.priority + 1,
    description="AArch64 NEON + dot product + I8MM (SMMLA int8 matrix multiply-accumulate)",
)
