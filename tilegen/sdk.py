"""`tilegen generate --sdk`: a self-contained C library for embedding (Android, iOS, any C build).

The SDK folder holds plain C and a CMakeLists.txt: the op-agnostic core (dispatch/, runtime/),
the chosen ops' drivers and generated kernels for the chosen ISAs (the registry rendered for just
those), and include/tilegen.h cut down to the chosen ops (its `/* @op X */ ... /* @end X */`
sections). What each op needs comes from its families' plug-ins (OpFamily.sdk_*): nothing here
names an op. No Python, C++ or OpenMP is needed to build or run it.
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from ._version import __version__
from .dsl import render
from .dsl.isa import ISAS
from .dsl.ops import FAMILIES
from .dsl.registry import package_root

# The core every SDK has (paths relative to tilegen/): the dispatcher, the runtime, the header.
CORE_DIRS = ("dispatch", "runtime")
PORTABLE_ISA = "scalar"  # always shipped: the dispatcher's last resort on any CPU
_SECTION = re.compile(r"/\* @op (\w+)\b.*?\*/\n(.*?)/\* @end \1 \*/\n", re.S)


def sdk_ops() -> Dict[str, List[str]]:
    """SDK op -> the families that make it up (registry order)."""
    ops: Dict[str, List[str]] = {}
    for name, fam in FAMILIES.items():
        ops.setdefault(fam.sdk_name, []).append(name)
    return ops


def resolve(isas: Sequence[str], ops: Sequence[str]) -> Tuple[List[str], List[str], List[str]]:
    """(ISAs, ops incl. the ones they call, notes) for a request; ValueError naming the bad
    value. The portable ISA is always added: dispatch falls back to it on any CPU."""
    known_ops = sdk_ops()
    bad = [i for i in isas if i not in ISAS]
    if bad or not isas:
        raise ValueError(f"--isa: {', '.join(bad) or 'none given'} is not an ISA; allowed: "
                         f"{', '.join(ISAS)}")
    bad = [o for o in ops if o not in known_ops]
    if bad or not ops:
        raise ValueError(f"--ops: {', '.join(bad) or 'none given'} is not an op; allowed: "
                         f"{', '.join(known_ops)}")
    notes = []
    isas = list(dict.fromkeys(isas))
    if PORTABLE_ISA not in isas:
        isas.append(PORTABLE_ISA)
        notes.append(f"added {PORTABLE_ISA}: the portable kernels every build falls back to")
    chosen = list(dict.fromkeys(ops))
    i = 0
    while i < len(chosen):  # close over what the drivers call
        for fam in known_ops[chosen[i]]:
            for dep in FAMILIES[fam].sdk_requires:
                if dep not in chosen:
                    chosen.append(dep)
                    notes.append(f"added {dep}: {chosen[i]} calls it")
        i += 1
    return isas, chosen, notes


def cut_header(text: str, ops: Sequence[str]) -> str:
    """tilegen.h with the sections of the ops not chosen removed (the markers go too)."""
    return _SECTION.sub(lambda m: m.group(2) if m.group(1) in ops else "", text)


def _core_files(root: str) -> List[str]:
    out = []
    for d in CORE_DIRS:
        for f in sorted(os.listdir(os.path.join(root, "tilegen", d))):
            if f.endswith((".c", ".h")):
                out.append(f"{d}/{f}")
    return out


def build(out_dir: str, isas: Sequence[str], ops: Sequence[str],
          root: Optional[str] = None, command: str = "") -> List[str]:
    """Writes the SDK into out_dir (created; existing files overwritten). Returns the notes."""
    root = root or package_root()
    isas, ops, notes = resolve(isas, ops)
    families = [f for op in ops for f in sdk_ops()[op]]
    files: Dict[str, str] = {}  # SDK path -> content

    def copy(rel: str, dest: str) -> None:
        with open(os.path.join(root, "tilegen", rel), encoding="utf-8") as f:
            files[dest] = f.read()

    for rel in _core_files(root):
        copy(rel, f"src/{rel}")
    drivers, options, headers = [], {}, []
    for fam in families:
        fp = FAMILIES[fam]
        for rel in fp.sdk_sources:
            if f"src/{rel}" not in files:
                copy(rel, f"src/{rel}")
                drivers.append(f"src/{rel}")
        options.update(fp.sdk_options)
        headers += [h for h in fp.sdk_headers if h not in headers]
    with open(os.path.join(root, "tilegen", "include", "tilegen.h"), encoding="utf-8") as f:
        files["include/tilegen.h"] = cut_header(f.read(), ops)
    for h in headers:
        copy(h, h)

    kernels: Dict[str, List[str]] = {isa: [] for isa in isas}
    generated = render.render_all(root, isas=isas, families=families)
    manifest = __import__("json").loads(generated.pop(f"{render.GENERATED_RELPATH}/"
                                                      f"{render.MANIFEST_NAME}"))
    for path, content in generated.items():
        dest = "src/" + os.path.relpath(path, "tilegen").replace(os.sep, "/")
        files[dest] = content
    for isa in isas:
        kernels[isa] = ["src/" + os.path.relpath(p, "tilegen").replace(os.sep, "/")
                        for p in manifest["isas"][isa]["sources"]]

    env = render.environment(root)
    c_sources = [p for p in files if p.endswith(".c") and p.startswith("src/")
                 and not p.startswith("src/generated/")]
    optional = {opt: (f"src/{rel}", text, default) for opt, (rel, text, default) in options.items()}
    context = dict(
        version=__version__, command=command, isas=[ISAS[i] for i in isas], kernels=kernels,
        ops=ops, sources=[p for p in c_sources if p not in {o[0] for o in optional.values()}],
        optional=optional,
        include_dirs=sorted({os.path.dirname(p) for p in files if p.endswith(".h")
                             and p.startswith("src/")}),
        headers=["include/tilegen.h"] + headers)
    files["CMakeLists.txt"] = env.get_template("common/sdk/CMakeLists.txt.j2").render(**context)
    files["README.md"] = env.get_template("common/sdk/README.md.j2").render(**context)
    files["VERSION"] = f"{__version__}\n"
    for rel, content in files.items():
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(content)
    return notes
