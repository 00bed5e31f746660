"""`import tilegen` from places it cannot load says why and what to do."""
import shutil
import subprocess
import sys
from pathlib import Path

import cprog
from conftest import REPO_ROOT


def test_import_from_an_unbuilt_source_tree_says_what_to_do(tmp_path):
    tree = tmp_path / "checkout"
    shutil.copytree(REPO_ROOT / "tilegen", tree / "tilegen",
                    ignore=shutil.ignore_patterns("*.so", "*.so.*", "lib", "__pycache__"))
    shutil.copy2(REPO_ROOT / "setup.py", tree / "setup.py")
    env = cprog.clean_env()
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", "import tilegen"], cwd=tree, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: tilegen is being imported from its source tree"), r.stderr
    assert str(Path(tree / "tilegen")) in last and "pip install -e ." in last
