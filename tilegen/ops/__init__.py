"""The ops: one folder each (tilegen/ops/<op>/), declared by its op.yaml.

An op is what a user calls (one per folder here); its one name is
the folder, `tilegen bench --op`, `tilegen tune --op`, the SDK op, the runtime_info() key and
the C prefix. The folder owns every level of the op:

    op.yaml               this declaration (read here, by setup.py and by the generator)
    <family>.py           the DSL plug-in of each kernel family (tilegen.dsl.family.OpFamily)
    <family>.yaml         its registry entries
    templates/<family>/   its Jinja2 templates
    *.c, *.h              its C driver and dispatch selection (compiled by glob, no list)
    api.h                 its section of tilegen.h
    _<op>.pyx, _<op>.pyi  its binding and the binding's type stub
    api.py                its NumPy-style API, when the binding is not all of it
    bench.py, tune.py     its `tilegen bench` and `tilegen tune` plug-ins (optional)
    testers/              the C tester of each family (tested by tests/test_ukernels.py)

Shared code (the generator, the C core, the tools) iterates over OPS and names none of them.
This module is plain Python plus PyYAML: setup.py loads it on its own, before anything is built.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

OPS_DIR = os.path.dirname(os.path.abspath(__file__))
DECLARATION = "op.yaml"
HEADER_FRAGMENT = "api.h"


@dataclass(frozen=True)
class SdkOption:
    """An optional C source of the SDK: a CMake option that leaves it out."""

    source: str
    help: str
    default: bool = True


@dataclass(frozen=True)
class Op:
    """What one op contributes; every field but `name` and `summary` may be left out."""

    name: str
    summary: str
    folder: str
    families: Tuple[str, ...] = ()
    # Ops whose C functions this op's driver calls (the SDK ships them too).
    requires: Tuple[str, ...] = ()
    # Per-thread scratch slots it requests by name: TG_WS_<OP>_<SLOT> (generated/tg_ops.h).
    workspace: Tuple[str, ...] = ()
    # Public headers besides its section of tilegen.h (copied into include/ by `generate`).
    public_headers: Tuple[str, ...] = ()
    # Exported symbols beyond tilegen_* (the BLAS ABIs): the library's version script.
    c_exports: Tuple[str, ...] = ()
    sdk_options: Mapping[str, SdkOption] = field(default_factory=dict)
    # The Python API: tilegen.ops.<op>.<module>; `exports` become tilegen.<name>, or the module
    # itself becomes tilegen.<namespace>; `info` names its runtime_info() hook, if any.
    python_module: Optional[str] = None
    python_exports: Tuple[str, ...] = ()
    python_namespace: Optional[str] = None
    python_info: Optional[str] = None
    # Its pytest suites, which CI runs again on every lower ISA the machine has.
    tests: Tuple[str, ...] = ()
    order: int = 100  # listing order (tilegen list, bench --op's default)

    @property
    def header_fragment(self) -> Optional[str]:
        path = os.path.join(self.folder, HEADER_FRAGMENT)
        return path if os.path.isfile(path) else None

    def path(self, *parts: str) -> str:
        return os.path.join(self.folder, *parts)

    @property
    def package(self) -> str:
        return f"tilegen.ops.{self.name}"

    def c_files(self) -> List[str]:
        """Its C sources and headers (top level of the folder), Cython's output excluded."""
        names = sorted(os.listdir(self.folder))
        cython = {n[:-4] + ".c" for n in names if n.endswith(".pyx")}
        return [n for n in names if n.endswith((".c", ".h")) and n not in cython]


_KEYS = {"op", "summary", "families", "requires", "workspace", "public_headers", "c_exports",
         "sdk_options", "python", "tests", "order"}


def _names(doc: dict, key: str, where: str) -> Tuple[str, ...]:
    value = doc.get(key, []) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: {key} must be a list of names, got {value!r}")
    return tuple(value)


def load_op(folder: str) -> Op:
    import yaml

    where = os.path.join(folder, DECLARATION)
    with open(where, encoding="utf-8") as f:
        doc = yaml.safe_load(f) or {}
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a mapping")
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {unknown}; allowed: {sorted(_KEYS)}")
    name = doc.get("op")
    if name != os.path.basename(folder):
        raise ValueError(f"{where}: op is {name!r}; it must be the folder's name "
                         f"{os.path.basename(folder)!r} (one name per op)")
    python = doc.get("python") or {}
    if not isinstance(python, dict) or set(python) - {"module", "exports", "namespace", "info"}:
        raise ValueError(f"{where}: python takes module, exports, namespace and info")
    options = {}
    for opt, spec in (doc.get("sdk_options") or {}).items():
        if not isinstance(spec, dict) or "source" not in spec:
            raise ValueError(f"{where}: sdk_options.{opt} needs a source")
        options[opt] = SdkOption(spec["source"], spec.get("help", ""), bool(spec.get("default", True)))
    return Op(
        name=name, summary=str(doc.get("summary", "")), folder=folder,
        families=_names(doc, "families", where), requires=_names(doc, "requires", where),
        workspace=_names(doc, "workspace", where),
        public_headers=_names(doc, "public_headers", where),
        c_exports=_names(doc, "c_exports", where), sdk_options=options,
        python_module=python.get("module"), python_exports=tuple(python.get("exports", ())),
        python_namespace=python.get("namespace"), python_info=python.get("info"),
        tests=_names(doc, "tests", where), order=int(doc.get("order", 100)))


def op_folders(root: Optional[str] = None) -> List[str]:
    """The op folders of a tree: tilegen/ops/<op>/ holding an op.yaml."""
    base = os.path.join(root, "tilegen", "ops") if root else OPS_DIR
    return [os.path.join(base, d) for d in sorted(os.listdir(base))
            if os.path.isfile(os.path.join(base, d, DECLARATION))]


def load_ops(root: Optional[str] = None) -> Dict[str, Op]:
    """Every op of a tree (this package's by default), in listing order."""
    ops = [load_op(f) for f in op_folders(root)]
    by_name = {op.name: op for op in sorted(ops, key=lambda o: (o.order, o.name))}
    for op in by_name.values():
        missing = [r for r in op.requires if r not in by_name]
        if missing:
            raise ValueError(f"{op.name}/op.yaml: requires {missing}, which is not an op here")
    return by_name


def closure(ops: Mapping[str, Op], chosen) -> List[str]:
    """`chosen` and every op they require, in order of first need."""
    out = list(dict.fromkeys(chosen))
    i = 0
    while i < len(out):
        out += [r for r in ops[out[i]].requires if r not in out]
        i += 1
    return out


_ops: Optional[Dict[str, Op]] = None


def __getattr__(name: str):
    """OPS, this package's ops by name, read on first use (so `import tilegen`, which imports
    every op's API, reads no YAML)."""
    global _ops
    if name == "OPS":
        if _ops is None:
            _ops = load_ops()
        return _ops
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_op(name: str) -> Op:
    OPS = __getattr__("OPS")
    try:
        return OPS[name]
    except KeyError:
        raise ValueError(f"op: {name!r} is not an op; allowed: {', '.join(OPS)}") from None
