"""ISA tables: everything tilegen knows about an instruction set, one module per ISA.

Adding an ISA is one module here defining ``ISA`` (and its name in _MODULES): the C
dispatcher's enum, feature bits and predicates are generated from the tables.
"""
from __future__ import annotations

import importlib
from typing import Dict, List

from .base import (
    ARCH_GUARDS, BASE_CFLAGS, DTYPE_BYTES, DTYPES, FEATURES, FLOAT_DTYPES, INT_DTYPES, INT_NARROW,
    PROBE_DTYPES,
    PREFETCH_LEVELS, AsmOps, DotOps, HalfOps, IntOps, Isa, QuadOps, TileOps, VecOps, host_arch,
)

# Table order is the C enum's order (TG_ISA_*).
_MODULES = ("scalar", "avx2", "avx512", "neon", "avx512bf16", "avx512vnni", "neonfp16", "neondot",
            "neoni8mm", "neonbf16", "avxvnni", "avx512fp16", "amxbf16", "amxint8")
ISAS: Dict[str, Isa] = {}
for _m in _MODULES:
    _isa = importlib.import_module(f"{__name__}.{_m}").ISA
    ISAS[_isa.name] = _isa


def get_isa(name: str) -> Isa:
    try:
        return ISAS[name]
    except KeyError:
        raise ValueError(
            f"isa: unknown ISA {name!r}; allowed values: {', '.join(sorted(ISAS))}"
        ) from None


def feature_bit(name: str) -> int:
    return 1 << FEATURES.index(name)


def isas_for_arch(arch: str) -> List[Isa]:
    """ISAs a library built for `arch` contains, best first."""
    out = [i for i in ISAS.values() if i.arch in (arch, "any")]
    return sorted(out, key=lambda i: -i.priority)


__all__ = [
    "ARCH_GUARDS", "BASE_CFLAGS", "DTYPE_BYTES", "DTYPES", "FEATURES", "FLOAT_DTYPES", "INT_DTYPES",
    "PROBE_DTYPES",
    "INT_NARROW", "ISAS", "PREFETCH_LEVELS", "AsmOps", "DotOps", "HalfOps", "IntOps", "Isa", "QuadOps", "TileOps", "VecOps", "feature_bit", "get_isa",
    "host_arch", "isas_for_arch",
]
