"""`tilegen generate --sdk`: a self-contained C library for embedding (Android, iOS, any C build).

The SDK folder holds plain C and a CMakeLists.txt: the op-agnostic core (tilegen/core/'s C), the
chosen ops' folders (their C files, closed over what they require) with their kernels for the
chosen ISAs (the registry rendered for just those), and include/tilegen.h assembled from just
those ops' sections. What each op ships comes from its op.yaml: nothing here names an op. No
Python, C++ or OpenMP is needed to build or run it.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

from tilegen._version import __version__
from tilegen.dsl import render
from tilegen.dsl.isa import ISAS
from tilegen.dsl.registry import package_root
from tilegen.ops import Op, closure, load_ops

CORE = "core"        # the folder of the C core every SDK has (relative to tilegen/)
PORTABLE_ISA = "scalar"  # always shipped: the dispatcher's last resort on any CPU


def resolve(isas: Sequence[str], ops: Sequence[str], all_ops: Dict[str, Op]
            ) -> Tuple[List[str], List[str], List[str]]:
    """(ISAs, ops incl. the ones they call, notes) for a request; ValueError naming the bad
    value. The portable ISA is always added: dispatch falls back to it on any CPU."""
    bad = [i for i in isas if i not in ISAS]
    if bad or not isas:
        raise ValueError(f"--isa: {', '.join(bad) or 'none given'} is not an ISA; allowed: "
                         f"{', '.join(ISAS)}")
    bad = [o for o in ops if o not in all_ops]
    if bad or not ops:
        raise ValueError(f"--ops: {', '.join(bad) or 'none given'} is not an op; allowed: "
                         f"{', '.join(all_ops)}")
    notes = []
    isas = list(dict.fromkeys(isas))
    if PORTABLE_ISA not in isas:
        isas.append(PORTABLE_ISA)
        notes.append(f"added {PORTABLE_ISA}: the portable kernels every build falls back to")
    chosen = closure(all_ops, ops)
    for op in chosen[len(dict.fromkeys(ops)):]:
        callers = [o for o in chosen if op in all_ops[o].requires]
        notes.append(f"added {op}: {', '.join(callers)} calls it")
    return isas, chosen, notes


def _c_files(folder: str) -> List[str]:
    names = sorted(os.listdir(folder))
    cython = {n[:-4] + ".c" for n in names if n.endswith(".pyx")}
    return [n for n in names if n.endswith((".c", ".h")) and n not in cython]


def build(out_dir: str, isas: Sequence[str], ops: Sequence[str],
          root: Optional[str] = None, command: str = "") -> List[str]:
    """Writes the SDK into out_dir (created; existing files overwritten). Returns the notes."""
    root = root or package_root()
    all_ops = load_ops(root)
    isas, ops, notes = resolve(isas, ops, all_ops)
    chosen = [all_ops[o] for o in ops]
    files: Dict[str, str] = {}  # SDK path -> content

    def copy(path: str, dest: str) -> None:
        with open(path, encoding="utf-8") as f:
            files[dest] = f.read()

    core = os.path.join(root, "tilegen", CORE)
    for name in _c_files(core):
        copy(os.path.join(core, name), f"src/{CORE}/{name}")
    optional = {}
    for op in chosen:
        for name in op.c_files():
            copy(op.path(name), f"src/ops/{op.name}/{name}")
        for opt, o in op.sdk_options.items():
            optional[opt] = (f"src/ops/{op.name}/{o.source}", o.help, o.default)

    generated = render.render_all(root, isas=isas, ops=ops)
    manifest = json.loads(generated.pop(f"{render.GENERATED_RELPATH}/{render.MANIFEST_NAME}"))
    headers = []
    for path, content in generated.items():
        rel = os.path.relpath(path, "tilegen").replace(os.sep, "/")
        if rel.endswith(".py"):  # the Python API: not part of a C SDK
            continue
        if rel.startswith("include/"):
            headers.append(rel)
            files[rel] = content
        else:
            files[f"src/{rel}"] = content
    kernels = {isa: ["src/" + os.path.relpath(p, "tilegen").replace(os.sep, "/")
                     for p in manifest["isas"][isa]["sources"]] for isa in isas}

    env = render.environment(root)
    c_sources = [p for p in files if p.endswith(".c") and p.startswith("src/")
                 and not p.startswith("src/generated/")]
    context = dict(
        version=__version__, command=command, isas=[ISAS[i] for i in isas], kernels=kernels,
        ops=ops, sources=[p for p in c_sources if p not in {o[0] for o in optional.values()}],
        optional=optional,
        include_dirs=sorted({os.path.dirname(p) for p in files if p.endswith(".h")
                             and p.startswith("src/")}),
        headers=sorted(headers, key=lambda h: (h != "include/tilegen.h", h)))
    files["CMakeLists.txt"] = env.get_template("common/sdk/CMakeLists.txt.j2").render(**context)
    files["README.md"] = env.get_template("common/sdk/README.md.j2").render(**context)
    files["VERSION"] = f"{__version__}\n"
    for rel, content in files.items():
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(content)
    return notes
