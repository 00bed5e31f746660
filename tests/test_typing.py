"""tilegen ships type information (py.typed, stubs for its compiled modules): a user script that
uses the public API passes `mypy --strict`, and one that misuses it does not."""
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


def test_user_script_passes_mypy_strict(tmp_path):
    r = mypy(SCRIPT, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_misuse_is_caught(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import tilegen as tg\ntg.set_num_threads('two')\nx: str = tg.get_num_threads()\n")
    r = mypy(bad, tmp_path)
    assert r.returncode == 1 and r.stdout.count("error:") == 2, r.stdout
