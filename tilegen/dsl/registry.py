"""The YAML kernel registry: loading, validation and the views derived from it."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .spec import KernelSpec, parse_tile

REGISTRY_RELPATH = os.path.join("tilegen", "kernels.yaml")
_ENTRY_KEYS = {"op", "dtype", "isa", "tile", "unroll", "prefetch", "epilogue", "variant",
               "production", "tail", "a_layout", "kloop"}


@dataclass(frozen=True)
class Entry:
    spec: KernelSpec
    production: bool

    @property
    def name(self) -> str:
        return self.spec.name

    def describe(self) -> str:
        s = self.spec
        parts = [f"unroll {s.unroll}", f"prefetch {s.prefetch}", f"tail {s.tail}"]
        if s.kloop != "c":
            parts.append(f"k loop {s.kloop}")
        if not self.production:
            parts.append("not dispatched")
        return ", ".join(parts)


def package_root() -> str:
    """The directory that holds the `tilegen` package (a source checkout or site-packages)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def registry_path(root: Optional[str] = None) -> str:
    return os.path.join(root or package_root(), REGISTRY_RELPATH)


def parse_entry(raw: dict, where: str = "registry") -> Entry:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: each kernel entry must be a mapping, got {raw!r}")
    unknown = set(raw) - _ENTRY_KEYS
    if unknown:
        raise ValueError(
            f"{where}: unknown field(s) {sorted(unknown)}; allowed: {sorted(_ENTRY_KEYS)}"
        )
    for key in ("op", "dtype", "isa", "tile"):
        if key not in raw:
            raise ValueError(f"{where}: missing field {key!r}")
    mr, nr, kr = parse_tile(raw["tile"])
    spec = KernelSpec(
        op=raw["op"], dtype=raw["dtype"], isa=raw["isa"], mr=mr, nr=nr, kr=kr,
        unroll=raw.get("unroll", 1), prefetch=raw.get("prefetch", 0),
        epilogue=tuple(raw.get("epilogue", ()) or ()), variant=raw.get("variant", ""),
        tail=raw.get("tail"), a_layout=raw.get("a_layout", "packed"),
        kloop=raw.get("kloop", "c"),
    )
    production = raw.get("production", True)
    if not isinstance(production, bool):
        raise ValueError(f"{where}: production must be true or false, got {production!r}")
    return Entry(spec=spec, production=production)


def load_registry(path: Optional[str] = None) -> List[Entry]:
    import yaml

    path = path or registry_path()
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f) or {}
    raw_entries = doc.get("kernels")
    if not isinstance(raw_entries, list):
        raise ValueError(f"{path}: expected a top-level 'kernels:' list")
    entries = [parse_entry(raw, f"{path}: kernels[{i}]") for i, raw in enumerate(raw_entries)]
    validate(entries, path)
    return entries


def validate(entries: Sequence[Entry], where: str = "registry") -> None:
    seen: Dict[str, int] = {}
    for i, e in enumerate(entries):
        if e.name in seen:
            raise ValueError(
                f"{where}: kernels[{i}] and kernels[{seen[e.name]}] are both {e.name}; "
                "give one a variant"
            )
        seen[e.name] = i
    for key, group in production_groups(entries).items():
        nr = max(e.spec.nr for e in group if e.spec.a_layout == "packed") if any(
            e.spec.a_layout == "packed" for e in group) else 0
        odd = sorted({e.spec.nr for e in group
                      if e.spec.nr != nr and not (e.spec.a_layout == "rows" and 2 * e.spec.nr == nr)})
        if odd:
            raise ValueError(
                f"{where}: production {key[0]} {key[1]} kernels for {key[2]} have NR values "
                f"{odd}; allowed: the packed kernels' NR={nr}, and NR={nr // 2} for "
                "'rows' kernels (the narrow set)"
            )
        plain = [e for e in group if not e.spec.epilogue and e.spec.a_layout == "packed"]
        if not plain:
            raise ValueError(
                f"{where}: {key} has no production kernel with packed A and no epilogue")


def production_groups(entries: Iterable[Entry]) -> Dict[Tuple[str, str, str], List[Entry]]:
    """Dispatchable kernels by (op, dtype, isa): each group shares one NR."""
    groups: Dict[Tuple[str, str, str], List[Entry]] = {}
    for e in entries:
        if e.production:
            groups.setdefault((e.spec.op, e.spec.dtype, e.spec.isa), []).append(e)
    return groups


def select(entries: Iterable[Entry], isa: Optional[str] = None, op: Optional[str] = None,
           dtype: Optional[str] = None) -> List[Entry]:
    return [
        e for e in entries
        if (isa is None or e.spec.isa == isa)
        and (op is None or e.spec.op == op)
        and (dtype is None or e.spec.dtype == dtype)
    ]
