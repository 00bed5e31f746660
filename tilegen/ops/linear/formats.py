"""The quantized weight formats. The one table the quantizers (api.py), the kernel family
(qgemv.py) and, through the generated TG_QGEMV_FORMATS / TG_QGEMV_KERNEL_FORMATS lists, the C
driver (qlinear.c) read.

A format is how tg.quantize stores weights: llama.cpp's GGUF blocks of 32 values (q4_0, q4_1,
q8_0, byte for byte), or group-wise int4 with a scale and a zero point per group of 32, 64 or 128
values (AWQ/GPTQ style; tilegen's layout: per group a half scale s, a half zero point z (an
integer 0..15), then the 4-bit codes c in GGUF's nibble order per 32 values; value (c - z) s).
A kernel format is what a qgemv kernel reads per 32 values once the driver has packed them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

BLOCK = 32  # values per kernel block (and per GGUF block)


@dataclass(frozen=True)
class KernelFormat:
    name: str
    nibbles: bool          # 4-bit codes, two a byte (byte i: value i low, value i + 16 high)
    second: str            # the half after each scale: "" none, "min" (c d + m), "zero" ((c - z) d)

    @property
    def index(self) -> int:
        """The kernel's format number (the C tables' order)."""
        return list(KERNEL_FORMATS).index(self.name)


KERNEL_FORMATS: Dict[str, KernelFormat] = {f.name: f for f in (
    KernelFormat("q4_0", True, ""),        # (c - 8) d
    KernelFormat("q4_1", True, "min"),
    KernelFormat("q8_0", False, ""),       # c d, c signed
    KernelFormat("q4_z", True, "zero"),
)}


@dataclass(frozen=True)
class Format:
    name: str
    quant: int             # tilegen_quant's value: GGMLQuantizationType's for GGUF formats
    group: int             # values per scale
    block_bytes: int       # bytes per group as stored
    kernel: str            # the KERNEL_FORMATS entry it runs on
    gguf: bool             # a GGUF block type (gguf.quants is the reference)

    @property
    def kernel_format(self) -> KernelFormat:
        return KERNEL_FORMATS[self.kernel]


FORMATS: Dict[str, Format] = {f.name: f for f in (
    Format("q4_0", 2, 32, 18, "q4_0", True),
    Format("q4_1", 3, 32, 20, "q4_1", True),
    Format("q8_0", 8, 32, 34, "q8_0", True),
    Format("int4-g32", 1032, 32, 4 + 16, "q4_z", False),
    Format("int4-g64", 1064, 64, 4 + 32, "q4_z", False),
    Format("int4-g128", 1128, 128, 4 + 64, "q4_z", False),
)}
