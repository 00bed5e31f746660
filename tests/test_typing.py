"""tilegen ships type information (py.typed, stubs for its compiled modules): a user script that
uses the public API passes `mypy --strict`, and one that misuses it does not."""
import ast
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cprog
import tilegen as tg

SCRIPT = Path(__file__).resolve().parent / "typing" / "user_script.py"


def mypy(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """mypy --strict on `path`, run from `cwd` (an empty folder: tilegen comes from the
    environment, as for a user)."""
    pytest.importorskip("mypy", reason="mypy is not installed (pip install mypy; it is in the "
                                       "test extra)")
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           "--cache-dir", str(cwd / ".mypy_cache"), str(path)],
                          capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=cprog.clean_env())


def test_package_ships_type_information():
    pkg = Path(tg.__file__).parent
    assert (pkg / "py.typed").is_file() and (pkg / "core" / "_core.pyi").is_file()
    assert (pkg / "ops" / "gemm" / "_gemm.pyi").is_file()


def _defined(names_of: str, source: str) -> set:
    """Top-level public names a .pyx defines (def, class, cdef class, NAME = ...)."""
    if names_of == "pyx":
        found = re.findall(r"^(?:cp?def\s+class|class|def)\s+(\w+)|^(\w+)\s*=", source, re.M)
        return {a or b for a, b in found if not (a or b).startswith("_")}
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_every_compiled_module_has_a_complete_stub():
    """Each compiled module (every op folder's _<op>.pyx and core/_core.pyx) has a .pyi beside
    it declaring every public name it defines, and the package data ships the stubs (without
    them mypy sees tg.image.* and tg.attention as Any)."""
    from setuptools.config.pyprojecttoml import read_configuration

    # The sources come from the tree the tests belong to (CI runs them from the unpacked sdist
    # against an installed wheel); the shipped stubs from the installed package.
    root = Path(__file__).resolve().parents[1]
    pkg = root / "tilegen"
    installed = Path(tg.__file__).parent
    pyx = sorted(pkg.rglob("*.pyx"))
    assert {p.parent.name for p in pyx} >= {"core", "gemm", "image", "attention"}
    patterns = read_configuration(root / "pyproject.toml")["tool"]["setuptools"][
        "package-data"]
    for src in pyx:
        stub = src.with_suffix(".pyi")
        assert stub.is_file(), f"{src.relative_to(pkg)} has no stub"
        assert (installed / stub.relative_to(pkg)).is_file(), \
            f"{stub.relative_to(pkg)} is not installed"
        missing = _defined("pyx", src.read_text()) - _defined("pyi", stub.read_text())
        assert not missing, f"{stub.relative_to(pkg)} lacks {sorted(missing)}"
        package = ".".join(stub.parent.relative_to(pkg.parent).parts)
        rel = stub.relative_to(pkg).as_posix()
        assert any(fnmatch.fnmatch(stub.name, pat) for pat in patterns.get("", [])) or any(
            fnmatch.fnmatch(rel, pat) for pat in patterns.get("tilegen", [])) or any(
            fnmatch.fnmatch(stub.name, pat) for pat in patterns.get(package, [])), \
            f"{rel}: not package data"


REVEAL = """
import numpy as np
import tilegen as tg

img = np.zeros((8, 8, 3), np.uint8)
q = np.ones((2, 4, 8), np.float32)
reveal_type(tg.image.gaussian_blur)
reveal_type(tg.image.gaussian_blur(img, 5, 1.1))
reveal_type(tg.image.box_blur(img, (3, 3), border="replicate"))
reveal_type(tg.image.filter2d(img, np.ones((3, 3)) / 9))
reveal_type(tg.image.unsharp_mask(img))
reveal_type(tg.attention)
reveal_type(tg.attention(q, q, q, mask=np.ones(4, bool), causal="top_left"))
reveal_type(tg.paged_attention)
reveal_type(tg.rmsnorm(q))
reveal_type(tg.matmul)
reveal_type(tg.conv2d)
reveal_type(tg.image.ImageLayoutWarning)
"""


def test_compiled_apis_are_typed_not_any(tmp_path):
    """mypy sees the compiled functions' signatures: none of them, nor the image and attention
    results, is Any (an image filter returns the image's own array type)."""
    script = tmp_path / "reveal.py"
    script.write_text(REVEAL)
    r = mypy(script, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    revealed = re.findall(r'Revealed type is "(.*)"', r.stdout)
    assert len(revealed) == REVEAL.count("reveal_type("), r.stdout
    for line, text in zip([ln for ln in REVEAL.splitlines() if "reveal_type" in ln], revealed):
        assert text != "Any" and text.strip(), (line, text)
    assert "numpy.dtype[numpy.unsignedinteger[" in revealed[1]  # uint8 in, uint8 out
    assert "Literal['bottom_right'] | Literal['top_left']" in revealed[5]
    assert revealed[6].startswith("numpy.ndarray[") and "floating" in revealed[6]


def test_compiled_api_misuse_is_caught(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\nimport tilegen as tg\nq = np.ones((4, 8), np.float32)\n"
                   "tg.attention(q, q, q, causal='upper_left')\n"
                   "tg.image.gaussian_blur(q, 5, '1.0')\n"
                   "tg.image.box_blur(q, 3, border='mirror')\n")
    r = mypy(bad, tmp_path)
    assert r.returncode == 1 and r.stdout.count("error:") == 3, r.stdout


def test_user_script_passes_mypy_strict(tmp_path):
    r = mypy(SCRIPT, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_misuse_is_caught(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import tilegen as tg\ntg.set_num_threads('two')\nx: str = tg.get_num_threads()\n")
    r = mypy(bad, tmp_path)
    assert r.returncode == 1 and r.stdout.count("error:") == 2, r.stdout
