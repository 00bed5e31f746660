"""The YAML kernel registry: loading, validation and derived views.

Each family's entries are one file in its op's folder, tilegen/ops/<op>/<family>.yaml (the
families an op has are listed in its op.yaml)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .family import FAMILIES
from .spec import COMMON_FIELDS, KernelSpec, parse_tile

REGISTRY_RELPATH = os.path.join("tilegen", "ops")
# Entry keys every family accepts; a family adds its own fields (its module).
_COMMON_KEYS = {"op", "dtype", "isa", "tile", "production"} | (set(COMMON_FIELDS) - {"kr"})


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
    """The folder of the ops, whose family files make up the registry, under a checkout or
    install."""
    return os.path.join(root or package_root(), REGISTRY_RELPATH)


def registry_files(ops_dir: str) -> List[str]:
    """The family files of every op folder under ops_dir (those its op.yaml lists), in family
    order."""
    from tilegen.ops import DECLARATION, load_op

    found = []
    for d in sorted(os.listdir(ops_dir)):
        folder = os.path.join(ops_dir, d)
        if os.path.isfile(os.path.join(folder, DECLARATION)):
            for family in load_op(folder).families:
                path = os.path.join(folder, f"{family}.yaml")
                if os.path.isfile(path):
                    found.append((family, path))
    return [path for _, path in sorted(found)]


def parse_entry(raw: dict, where: str = "registry", family: Optional[str] = None) -> Entry:
    """One entry; `family` is the op of the file it came from (None: the entry names it)."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: each kernel entry must be a mapping, got {raw!r}")
    op = raw.get("op", family)
    if op is None:
        raise ValueError(f"{where}: missing field 'op'")
    if family is not None and op != family:
        raise ValueError(f"{where}: op {op!r} in the {family} registry file; "
                         f"move it to {op}.yaml in its op's folder")
    if op not in FAMILIES:
        raise ValueError(f"{where}: op: {op!r} is not supported; allowed values: "
                         f"{', '.join(FAMILIES)}")
    allowed = _COMMON_KEYS | set(FAMILIES[op].fields)
    unknown = set(raw) - allowed
    if unknown:
        raise ValueError(
            f"{where}: unknown field(s) {sorted(unknown)}; allowed: {sorted(allowed)}"
        )
    for key in ("dtype", "isa", "tile"):
        if key not in raw:
            raise ValueError(f"{where}: missing field {key!r}")
    mr, nr, kr = parse_tile(raw["tile"])
    fields = {k: v for k, v in raw.items() if k not in ("op", "tile", "production")}
    fields["epilogue"] = tuple(fields.get("epilogue", ()) or ())
    spec = KernelSpec(op=op, mr=mr, nr=nr, kr=kr, **fields)
    production = raw.get("production", True)
    if not isinstance(production, bool):
        raise ValueError(f"{where}: production must be true or false, got {production!r}")
    return Entry(spec=spec, production=production)


def _load_file(path: str) -> List[Entry]:
    import yaml

    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f) or {}
    raw_entries = doc.get("kernels")
    if not isinstance(raw_entries, list):
        raise ValueError(f"{path}: expected a top-level 'kernels:' list")
    stem = os.path.splitext(os.path.basename(path))[0]
    family = stem if stem in FAMILIES else None
    return [parse_entry(raw, f"{path}: kernels[{i}]", family) for i, raw in enumerate(raw_entries)]


def load_registry(path: Optional[str] = None) -> List[Entry]:
    """Every entry of the ops under a folder (registry_path(): each family's file, in family
    order), or of one family file."""
    path = path or registry_path()
    if os.path.isdir(path):
        entries: List[Entry] = []
        for name in registry_files(path):
            entries += _load_file(name)
    else:
        entries = _load_file(path)
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
    for op, family in FAMILIES.items():
        family.validate_registry([e for e in entries if e.spec.op == op], where)


def production_groups(entries: Iterable[Entry]) -> Dict[Tuple[str, str, str], List[Entry]]:
    """Dispatchable kernels by (op, dtype, isa)."""
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


def serving_isa(entries: Iterable[Entry], op: str, dtype: str, best: str) -> Optional[str]:
    """The ISA whose kernels serve (op, dtype) -- op as kernel names spell it, the family -- when `best` is the best ISA allowed: the
    highest-priority one at or below it, of its architecture, with production kernels of that
    op and dtype (the dispatcher's rule; e.g. avx512bf16 adds bfloat16 kernels only, so its
    float32 kernels are avx512's). None when no such ISA has them."""
    from .isa import ISAS

    top = ISAS[best]
    have = {e.spec.isa for e in entries
            if e.production and e.spec.op == op and e.spec.dtype == dtype}
    fits = [i for i in have if ISAS[i].priority <= top.priority and ISAS[i].arch in ("any", top.arch)]
    return max(fits, key=lambda i: ISAS[i].priority, default=None)
