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
# Every SDK folder holds this list of the files it was written with: it marks the folder as an
# SDK output (regenerating over it is allowed, and removes what the new ISAs and ops no longer
# need); a folder without it is the user's, and is written into only with force=True.
MANIFEST = ".tilegen-sdk.json"


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


def previous_files(out_dir: str, force: bool = False) -> List[str]:
    """The files a previous SDK wrote into out_dir (from its manifest); [] for a folder that does
    not exist or is empty. ValueError for a file, or for a folder holding anything else unless
    `force` (then nothing is removed from it, and files of the SDK's names are replaced)."""
    if not os.path.exists(out_dir):
        return []
    if not os.path.isdir(out_dir):
        raise ValueError(f"--out: {out_dir} is a file, not a folder")
    manifest = os.path.join(out_dir, MANIFEST)
    try:
        with open(manifest, encoding="utf-8") as f:
            doc = json.load(f)
        files = doc["files"]
        if not (isinstance(files, list) and all(isinstance(p, str) for p in files)):
            raise ValueError("files is not a list of paths")
        return files
    except FileNotFoundError:
        if not os.listdir(out_dir) or force:
            return []
        raise ValueError(f"--out: {out_dir} is not empty and holds no tilegen SDK (no {MANIFEST}); "
                         f"choose a new or empty folder, or pass --force to write the SDK into "
                         f"it (files of the same names are replaced)") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        if force:
            return []
        raise ValueError(f"--out: {manifest} is unreadable ({e}); pass --force to write the SDK "
                         f"into {out_dir} anyway") from None


def _remove_stale(out_dir: str, old: Sequence[str], new: Sequence[str]) -> List[str]:
    """Deletes the files of the previous SDK that this one does not write (and the folders that
    leaves empty); only paths inside out_dir. Returns them."""
    top = os.path.realpath(out_dir)
    removed = []
    for rel in sorted(set(old) - set(new)):
        path = os.path.realpath(os.path.join(top, rel))
        if os.path.commonpath([top, path]) != top or path == top or not os.path.isfile(path):
            continue
        os.remove(path)
        removed.append(rel)
        folder = os.path.dirname(path)
        while folder != top and not os.listdir(folder):
            os.rmdir(folder)
            folder = os.path.dirname(folder)
    return removed


def build(out_dir: str, isas: Sequence[str], ops: Sequence[str],
          root: Optional[str] = None, command: str = "", force: bool = False) -> List[str]:
    """Writes the SDK into out_dir (created) and returns the notes. Over a previous SDK it
    replaces that SDK's files and removes those the new one does not have; a folder that is
    not empty and holds no SDK is refused (ValueError) unless `force`."""
    root = root or package_root()
    all_ops = load_ops(root)
    isas, ops, notes = resolve(isas, ops, all_ops)
    old = previous_files(out_dir, force)
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
    files[MANIFEST] = json.dumps({
        "tilegen_sdk": __version__, "command": command, "isas": isas, "ops": ops,
        "files": sorted(files) + [MANIFEST]}, indent=1) + "\n"
    for rel, content in files.items():
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(content)
    removed = _remove_stale(out_dir, old, list(files))
    if removed:
        notes.append(f"removed {len(removed)} file(s) of the previous SDK that this one does not "
                     f"need")
    return notes
