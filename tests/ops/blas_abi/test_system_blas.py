"""libtilegen as the system BLAS: a folder holding libblas.so.3 and libcblas.so.3 symlinked to
libtilegen.so.0, first in LD_LIBRARY_PATH, serves Debian's reference LAPACK (liblapack3) and
Debian's NumPy and SciPy (python3-numpy, python3-scipy, which link libblas.so.3 and
liblapack.so.3).

- c/lapack_driver.c, linked against liblapack.so.3, solves and factorizes (dgesv, zgetrf/zgetrs,
  dsyev, spotrf, cheevd) and checks every answer by its residual; LD_DEBUG=bindings shows
  LAPACK's BLAS calls binding to the symlink, that is to tilegen.
- /usr/bin/python3 with Debian's NumPy and SciPy: a few numpy.linalg / scipy.linalg calls
  checked against their defining identities, with libtilegen (and not the reference libblas)
  in /proc/self/maps; then NumPy's and SciPy's own linalg test suites (about 40 s).

Under CI=1 the Debian packages must be there (.ci/run installs them); elsewhere a missing one
skips its test with the reason.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cprog
from blasfixtures import tilegen_as_blas  # noqa: F401 (a fixture)

SYS_PYTHON = "/usr/bin/python3"


def need(ok: bool, why: str):
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)


def liblapack() -> Path:
    for d in (Path("/usr/lib") / cprog._multiarch(), *sorted(Path("/usr/lib").glob("*-linux-gnu"))):
        if (d / "liblapack.so.3").exists():
            return d / "liblapack.so.3"
    return None


def test_reference_lapack_runs_on_tilegen(tilegen_as_blas, tmp_path):
    lapack = liblapack()
    need(lapack is not None, "Debian's liblapack3 is not installed (apt-get install liblapack3)")
    exe = cprog.build("lapack_driver.c", tmp_path / "lapack_driver",
                      libs=[f"-L{lapack.parent}", "-l:liblapack.so.3"])
    env = cprog.clean_env(LD_LIBRARY_PATH=str(tilegen_as_blas))
    r = cprog.run([exe], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["ok", "dgesv", "ok", "zgetrf", "ok", "dsyev", "ok", "spotrf",
                                "ok", "cheevd"], r.stdout
    # LAPACK's BLAS calls bind to the symlinked libblas.so.3, that is to libtilegen
    env["LD_DEBUG"] = "bindings"
    r = cprog.run([exe], env=env)
    bound = set(re.findall(r"binding file \S*liblapack\.so\.3 \[0\] to (\S+) \[0\]: normal symbol "
                           r"`(\w+)'", r.stderr))
    to_tilegen = {sym for lib, sym in bound if lib == str(tilegen_as_blas / "libblas.so.3")}
    elsewhere = {sym for lib, sym in bound if re.search(r"/libblas\.so", lib)
                 and lib != str(tilegen_as_blas / "libblas.so.3")}
    assert {"dgemm_", "dtrsm_", "zgemm_", "ztrsm_", "dsyr2k_", "cher2k_", "ssyrk_"} <= to_tilegen, \
        sorted(to_tilegen)
    assert not elsewhere, sorted(elsewhere)


CHECKS = r"""
import numpy as np, scipy.linalg as sl
rng = np.random.default_rng(0)
n = 200
a = rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)
b = rng.standard_normal((n, 3))
lu, piv = sl.lu_factor(a)
assert np.abs(a @ sl.lu_solve((lu, piv), b) - b).max() < 1e-9
assert np.abs(a @ sl.solve(a, b) - b).max() < 1e-9
spd = a @ a.T + np.eye(n)
c = sl.cho_factor(spd)
assert np.abs(spd @ sl.cho_solve(c, b) - b).max() < 1e-8
w, v = sl.eigh(spd)
assert np.abs(spd @ v - v * w).max() < 1e-8 * w.max()
u, s, vt = np.linalg.svd(a)
assert np.abs((u * s) @ vt - a).max() < 1e-9
z = a + 1j * rng.standard_normal((n, n))
assert np.abs(z @ np.linalg.inv(z) - np.eye(n)).max() < 1e-9
x = rng.standard_normal((300, 200)); y = rng.standard_normal((200, 100))
ref = np.array([[sum(x[i, k] * y[k, j] for k in range(200)) for j in range(0, 100, 17)]
                for i in range(0, 300, 29)])
assert np.abs((x @ y)[::29, ::17] - ref).max() < 1e-10
assert abs(np.dot(x[0], x[1]) - sum(x[0] * x[1])) < 1e-10
maps = open("/proc/self/maps").read()
assert "libtilegen.so" in maps, "libtilegen is not loaded"
assert not re.search(r"/blas/libblas\.so\.3\.", maps), "the reference libblas is loaded too"
print("checks ok")
"""


def system_python_has(*mods) -> bool:
    if not os.path.exists(SYS_PYTHON):
        return False
    r = subprocess.run([SYS_PYTHON, "-c", "import " + ", ".join(mods)], capture_output=True)
    return r.returncode == 0


def sys_env(lib_dir: Path) -> dict:
    env = cprog.clean_env(LD_LIBRARY_PATH=str(lib_dir))
    env.pop("PYTHONPATH", None)  # Debian's Python with its own packages only
    env["OMP_NUM_THREADS"] = "1"
    return env


def test_debian_numpy_scipy_on_tilegen(tilegen_as_blas, tmp_path):
    need(system_python_has("numpy", "scipy.linalg"),
         "Debian's python3-numpy / python3-scipy are not installed")
    r = subprocess.run([SYS_PYTHON, "-c", "import re\n" + CHECKS], env=sys_env(tilegen_as_blas),
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0 and "checks ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("suite", ["numpy.linalg", "scipy.linalg"])
def test_debian_linalg_suites_on_tilegen(tilegen_as_blas, tmp_path, suite):
    """NumPy's and SciPy's own linalg test suites, in Debian's Python, on tilegen."""
    need(system_python_has("numpy", "scipy.linalg", "pytest", "hypothesis"),
         "Debian's python3-numpy, python3-scipy, python3-pytest, python3-hypothesis are needed")
    plugin = tmp_path / "tg_loaded.py"
    plugin.write_text(
        "def pytest_sessionfinish(session, exitstatus):\n"
        "    maps = open('/proc/self/maps').read()\n"
        "    assert 'libtilegen.so' in maps, 'libtilegen is not loaded'\n"
        "    print('\\nlibtilegen loaded')\n")
    env = sys_env(tilegen_as_blas)
    env["PYTHONPATH"] = str(tmp_path)
    r = subprocess.run([SYS_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                        "tg_loaded", "--pyargs", suite], env=env, capture_output=True, text=True,
                       timeout=1200, cwd=tmp_path)
    tail = r.stdout[-3000:] + r.stderr[-2000:]
    assert r.returncode == 0, tail
    assert "libtilegen loaded" in r.stdout and re.search(r"\d+ passed", r.stdout), tail
