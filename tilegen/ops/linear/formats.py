"""The quantized weight formats: llama.cpp's GGUF blocks of 32 values. The one table the
quantizers (api.py), the kernel family (qgemv.py) and, through the generated
TG_QGEMV_FORMATS list, the C driver (qlinear.c) read."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

BLOCK = 32  # values per block, every format


@dataclass(frozen=True)
class Format:
    name: str
    ggml_type: int         # GGMLQuantizationType's value (and tilegen_quant's)
    block_bytes: int       # a block: its half scale, half minimum (has_min), codes
    nibbles: bool          # 4-bit codes, two a byte (byte i: value i low, value i + 16 high)
    has_min: bool          # value = code * d + m, else (code - offset) * d

    @property
    def index(self) -> int:
        """The kernel's format number (the C tables' order)."""
        return list(FORMATS).index(self.name)


FORMATS: Dict[str, Format] = {f.name: f for f in (
    Format("q4_0", 2, 18, True, False),
    Format("q4_1", 3, 20, True, True),
    Format("q8_0", 8, 34, False, False),
)}
