"""The benchmark case lists of every op, shared by `tilegen bench` and the pytest-benchmark suite
(benchmarks/). Each op's cases, peers and calls are its plug-in, tilegen/ops/<op>/bench.py (a
model's: tilegen/models/<model>.py; a consumer package's, one of tilegen's packages beside the
layers, such as the Dask wrappers: tilegen/<package>/bench.py); this module only finds and looks
them up. Pure Python plus NumPy; it never imports the compiled core.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from types import ModuleType
from typing import Dict, List

from tilegen.ops import OPS as _OPS
from tilegen.ops.plugins import LINE_OFFSET, placed


# The package's layers (tests/test_layout.py): their bench.py, if any, is not a plug-in.
LAYERS = ("core", "dsl", "ops", "tools")


def _discover() -> Dict[str, ModuleType]:
    """Every bench plug-in: the ops' bench.py in op order, then the models', then the
    consumer packages' (tilegen/<package>/bench.py), by package name."""
    found = {}
    for op in _OPS.values():
        if os.path.isfile(op.path("bench.py")):
            mod = importlib.import_module(f"{op.package}.bench")
            found[mod.NAME] = mod
    import tilegen.models

    for info in sorted(pkgutil.iter_modules(tilegen.models.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"tilegen.models.{info.name}")
        if hasattr(mod, "NAME"):
            found[mod.NAME] = mod
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for pkg in sorted(os.listdir(root)):
        if pkg not in LAYERS and os.path.isfile(os.path.join(root, pkg, "__init__.py")) \
                and os.path.isfile(os.path.join(root, pkg, "bench.py")):
            mod = importlib.import_module(f"tilegen.{pkg}.bench")
            found[mod.NAME] = mod
    return found


OPS: Dict[str, ModuleType] = _discover()

__all__ = ["LINE_OFFSET", "OPS", "by_id", "cases", "op_module", "op_of", "placed", "reps_for",
           "summary"]


def summary(op: str) -> str:
    """One line on what `--op op` measures: the plug-in's SUMMARY, else its op's summary."""
    mod = op_module(op)
    if hasattr(mod, "SUMMARY"):
        return mod.SUMMARY
    return _OPS[op].summary if op in _OPS else ""


def op_module(op: str) -> ModuleType:
    try:
        return OPS[op]
    except KeyError:
        raise ValueError(f"op: {op!r} has no benchmark cases; allowed: {', '.join(OPS)}") from None


def cases(op: str, quick: bool = False) -> List:
    """The cases of `op`: the full list, or the small quick subset (seconds; CI's harness check)."""
    return op_module(op).cases(quick)


def _table() -> Dict[str, tuple]:
    table: Dict[str, tuple] = {}
    for op in OPS:
        for quick in (False, True):
            for c in cases(op, quick):
                table[c.id] = (op, c)
    return table


def by_id() -> Dict[str, object]:
    """Every case of every op and list, by id (workers receive ids)."""
    return {k: c for k, (_, c) in _table().items()}


def op_of(case_id: str) -> str:
    return _table()[case_id][0]


def reps_for(case, reps: int) -> int:
    """Fewer repetitions for the big cases (>4 G work units: 5, >40 G: 3), as in RESULTS.md."""
    if case.work > 40e9:
        return min(reps, 3)
    if case.work > 4e9:
        return min(reps, 5)
    return reps
