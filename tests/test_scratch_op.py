"""Adding an op is adding one folder.

A scratch copy of the source tree is made without the rmsnorm op (tilegen/ops/rmsnorm/: its
op.yaml, kernel family, registry file, template, C driver and dispatch, header section,
binding, bench and tune plug-ins, kernel tester) and regenerated; then the folder is copied in
and nothing else is edited. The tree regenerates, builds, and the op is dispatched on every ISA
this machine runs (its kernel tester also runs the NEON kernels under qemu), callable from Python
and C, benched, tuned, and shipped by the C SDK.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

import cprog
from tilegen.dsl import load_registry, serving_isa

OP = "rmsnorm"
# What `tilegen generate` writes (everything else in the tree must be left as it was).
GENERATED = ("tilegen/generated/", "tilegen/include/", "tilegen/_ops_api.py")
IGNORE = shutil.ignore_patterns("__pycache__", "*.so", "*.o", "lib", "build", ".pytest_cache",
                                ".hypothesis", "*.egg-info")


def snapshot(tree: Path) -> dict:
    """Hashes of every file but the generated ones and what a build adds."""
    out = {}
    for p in sorted(tree.rglob("*")):
        rel = p.relative_to(tree).as_posix()
        if p.is_file() and not rel.startswith(GENERATED) and "/build/" not in f"/{rel}" \
                and not rel.endswith((".so", ".sha1")) and "__pycache__" not in rel:
            out[rel] = hashlib.sha1(p.read_bytes()).hexdigest()
    return out


def run(tree: Path, *argv, cwd=None, timeout=600, **env):
    r = subprocess.run([sys.executable, *map(str, argv)], cwd=cwd or tree, capture_output=True,
                       text=True, timeout=timeout,
                       env=cprog.clean_env(PYTHONPATH=str(tree), **env))
    assert r.returncode == 0, f"{argv}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """The scratch tree with the op added, generated and built in place."""
    cprog.cc()
    tree = tmp_path_factory.mktemp("scratch") / "tree"
    tree.mkdir()
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy(REPO_ROOT / name, tree / name)
    shutil.copytree(REPO_ROOT / "tilegen", tree / "tilegen", ignore=IGNORE)
    shutil.copytree(REPO_ROOT / "tests", tree / "tests", ignore=IGNORE)
    # Without the op: a consistent tree of its own (generate removes the op's kernels and
    # drops it from the headers and the Python API).
    shutil.rmtree(tree / "tilegen" / "ops" / OP)
    run(tree, "-m", "tilegen", "generate", "--root", tree)
    assert not (tree / "tilegen" / "generated" / OP).exists()
    assert OP not in (tree / "tilegen" / "_ops_api.py").read_text()
    before = snapshot(tree)

    shutil.copytree(REPO_ROOT / "tilegen" / "ops" / OP, tree / "tilegen" / "ops" / OP,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "_*.c", "*.sha1"))
    run(tree, "-m", "tilegen", "generate", "--root", tree)
    after = snapshot(tree)
    changed = sorted(k for k in set(before) | set(after)
                     if before.get(k) != after.get(k) and not k.startswith(f"tilegen/ops/{OP}/"))
    assert not changed, f"adding the op changed files outside its folder: {changed}"
    run(tree, "setup.py", "-q", "build_ext", "--inplace", "-j", str(os.cpu_count() or 2),
        timeout=1200)
    return tree


CALL = """
import json, numpy as np, tilegen as tg
rng = np.random.default_rng(0)
x = rng.standard_normal((5, 777)).astype(np.float32)
w = rng.standard_normal(777).astype(np.float32)
x64 = x.astype(np.float64)
want = x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + 1e-6) * w
err = float(np.abs(tg.rmsnorm(x, w, eps=1e-6) - want).max())
print(json.dumps({"file": tg.__file__, "err": err,
                  "kernels": tg.runtime_info()["kernels"]["rmsnorm"]}))
"""


def test_the_op_is_generated_and_declared(tree):
    generated = tree / "tilegen" / "generated"
    assert sorted(p.name for p in (generated / OP).glob("*.c"))
    assert "tg_rmsnorm_select" in (generated / "tg_ukernels.h").read_text()
    assert "tilegen_rmsnorm_f32" in (tree / "tilegen" / "include" / "tilegen.h").read_text()
    run(tree, "-m", "tilegen", "generate", "--check", "--root", tree)


def test_python_on_every_isa(tree, tmp_path):
    isas = json.loads(run(tree, "-c", "import json, tilegen; print(json.dumps("
                                      "tilegen.core._core.isas()))", cwd=tmp_path))
    usable = [i for i, ok in isas.items() if ok]
    assert len(usable) >= 1
    for isa in usable:
        got = json.loads(run(tree, "-c", CALL, cwd=tmp_path, TILEGEN_ISA=isa))
        assert Path(got["file"]).is_relative_to(tree), got["file"]
        assert got["err"] < 1e-5, (isa, got)
        for dt in ("f32", "f64"):  # the best ISA at or below the cap with rmsnorm kernels
            assert got["kernels"][dt]["isa"] == serving_isa(load_registry(), OP, dt, isa), got


def test_kernel_testers_every_isa(tree):
    """The op's kernel tester on every registered kernel (NEON under qemu-aarch64)."""
    out = run(tree, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_ukernels.py",
              "-k", OP, "tests/test_layout.py")
    assert " passed" in out and "failed" not in out, out


def test_c_api(tree, tmp_path):
    src = tmp_path / "client.c"
    src.write_text('#include <stdio.h>\n#include "tilegen.h"\nint main(void) {\n'
                   '  float x[3] = {3, 4, 0}, y[3];\n'
                   '  if (tilegen_rmsnorm_f32(1, 3, x, 3, NULL, 0.0f, y, 3)) return 1;\n'
                   '  printf("%.6f %.6f %.6f\\n", y[0], y[1], y[2]);\n  return 0;\n}\n')
    lib = tree / "tilegen" / "lib"
    r = cprog.run([cprog.cc(), "-std=c11", f"-I{tree / 'tilegen' / 'include'}", str(src),
                   "-o", str(tmp_path / "client"), f"-L{lib}", "-ltilegen",
                   f"-Wl,-rpath,{lib}"])
    assert r.returncode == 0, r.stderr
    r = cprog.run([str(tmp_path / "client")])
    # rms = sqrt(25 / 3): y = x / rms
    assert r.returncode == 0, r.stderr
    got = [float(v) for v in r.stdout.split()]
    want = [v / (25 / 3) ** 0.5 for v in (3, 4, 0)]
    assert all(abs(g - w) < 1e-5 for g, w in zip(got, want)) and len(got) == 3, r.stdout


def test_bench_tune_and_sdk(tree, tmp_path):
    out = run(tree, "-m", "tilegen", "bench", "--op", OP, "--quick", "--threads", "1",
              "--libs", "tilegen,numpy", cwd=tmp_path)
    assert "tg/np" in out
    out = run(tree, "-m", "tilegen", "tune", "--op", OP, "--quick", "--dry-run", cwd=tmp_path,
              TILEGEN_CACHE_DIR=str(tmp_path / "cache"))
    assert "f32 kernel" in out and f"{OP}: chosen" in out
    sdk = tmp_path / "sdk"
    run(tree, "-m", "tilegen", "generate", "--sdk", "--isa", "neon,scalar", "--ops", OP,
        "--out", sdk, cwd=tmp_path)
    assert (sdk / "src" / "ops" / OP / "rmsnorm.c").is_file()
    assert "tilegen_rmsnorm_f32" in (sdk / "include" / "tilegen.h").read_text()
    assert "tilegen_sgemm" not in (sdk / "include" / "tilegen.h").read_text()
