"""The layout of the tree is the architecture: one folder per op, and a shared core (the
generator, the C core, the tools) that names no op or kernel family, so that adding an op is
adding a folder (tests/test_scratch_op.py adds one)."""
import re

import pytest
from conftest import REPO_ROOT

from tilegen.dsl import FAMILIES
from tilegen.ops import OPS

# What is shared: every op and family is reached through OPS / FAMILIES, never by name.
SHARED = ["setup.py", "tilegen/__init__.py", "tilegen/_load.py", "tilegen/_paths.py",
          "tilegen/_memory.py", "tilegen/_threadpoolctl.py", "tilegen/ops/__init__.py",
          "tilegen/ops/plugins.py", "tilegen/dsl", "tilegen/core", "tilegen/tools"]
# (.ci/ picks a few suites by name on purpose: the representative ones the slow sanitizer and
# fresh-environment passes run; every per-op loop there reads the ops' declarations.)
SUFFIXES = (".py", ".pyx", ".pyi", ".c", ".h", ".j2", ".yaml")


def shared_files():
    for rel in SHARED:
        path = REPO_ROOT / rel
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            if f.suffix in SUFFIXES or f.name == "run":
                # What Cython generates from a .pyx is not source.
                if f.suffix == ".c" and f.with_suffix(".pyx").exists():
                    continue
                yield f


def test_the_shared_core_names_no_op_or_family():
    names = sorted(set(OPS) | set(FAMILIES))
    word = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names))
                      + r")(?![A-Za-z0-9_])", re.I)
    hits = []
    for f in shared_files():
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            for m in word.finditer(line):
                hits.append(f"{f.relative_to(REPO_ROOT)}:{i}: {m.group(1)!r} in {line.strip()}")
    assert not hits, "shared code names an op or family:\n" + "\n".join(hits)


@pytest.mark.parametrize("op", sorted(OPS))
def test_each_op_is_one_folder(op):
    """Everything of an op is in its folder: its families' module, registry file and templates,
    its C, its testers, and (if it has one) its Python API module."""
    o = OPS[op]
    folder = REPO_ROOT / "tilegen" / "ops" / op
    assert (folder / "op.yaml").is_file() and (folder / "__init__.py").is_file()
    for fam in o.families:
        assert (folder / f"{fam}.py").is_file(), fam
        assert (folder / f"{fam}.yaml").is_file(), fam
        assert (folder / "templates" / fam).is_dir(), fam
        assert (folder / "testers" / f"{fam}_ukernel_tester.c").is_file(), fam
        assert FAMILIES[fam].op == op
    assert list(folder.glob("*.c")), "no C driver"
    assert (folder / "api.h").is_file(), "no section of tilegen.h"
    if o.python_module:
        assert list(folder.glob(o.python_module + ".*")), o.python_module
    for t in o.tests:
        assert (REPO_ROOT / t).is_file() and t.startswith(f"tests/ops/{op}/"), t


def test_no_import_circles_among_the_layers():
    """The package's floors, top to bottom: tools, ops, then core and dsl (the generator),
    which import nothing above them (dsl finds the families through the op declarations, the
    one module of ops/ it reads: ops/__init__.py)."""
    layers = {"dsl": 0, "core": 0, "ops": 1, "tools": 2}
    bad = []
    for pkg, level in layers.items():
        for f in sorted((REPO_ROOT / "tilegen" / pkg).rglob("*.py*")):
            if f.suffix not in (".py", ".pyx"):
                continue
            text = f.read_text(encoding="utf-8")
            for m in re.finditer(r"^\s*(?:from|import)\s+(tilegen\.(\w+)[\w.]*)", text, re.M):
                target = m.group(2)
                if target in layers and layers[target] > level and m.group(1) != "tilegen.ops":
                    bad.append(f"{f.relative_to(REPO_ROOT)} imports {m.group(1)}")
    assert not bad, "\n".join(bad)
