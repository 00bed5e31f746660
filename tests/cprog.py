"""Building and running the small C programs of the library-contract tests.

Programs find libtilegen and tilegen.h through the installed package (`tilegen.get_library()`,
`tilegen.get_include()`), never through build/ paths, so the tests run against what
`pip install .` produced.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence

import pytest

import tilegen as tg
from conftest import RUN_ISA_CAP

C_DIR = Path(__file__).resolve().parent / "c"


def c_source(name: str) -> Path:
    """A C test program: tests/c/<name> (shared) or an op's tests/ops/<op>/c/<name>."""
    found = [C_DIR / name] if (C_DIR / name).is_file() else sorted(
        C_DIR.parent.glob(f"ops/*/c/{name}"))
    assert len(found) == 1, f"{name}: expected one C test program, found {found}"
    return found[0]
TIMEOUT = 120

# The sanitizer job (.ci/sanitize.py) sets TILEGEN_TEST_SANITIZE=address,undefined: the C test
# programs and kernel testers are built with those sanitizers, errors abort them, and the
# sanitizer runtime this process was started with stays first in its children's LD_PRELOAD.
SANITIZE = os.environ.get("TILEGEN_TEST_SANITIZE", "")
SANITIZE_FLAGS = ([f"-fsanitize={SANITIZE}", "-fno-omit-frame-pointer",
                   "-fno-sanitize-recover=all"] if SANITIZE else [])


def cc() -> str:
    """The C compiler, or skip the test with the reason."""
    for name in (os.environ.get("CC", ""), "gcc", "cc"):
        if name and shutil.which(name):
            return name
    pytest.skip("no C compiler (gcc/cc) on PATH; install gcc")


def library() -> Path:
    """The libtilegen this process runs: normally tg.get_library(), but the loader may have
    found another first (LD_LIBRARY_PATH: the mutation gate's and the sanitizer job's builds),
    and C programs and LD_PRELOAD must then use that one too."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if re.search(r"/libtilegen\.so(\.\d+)*$", line.rstrip()):
                    return Path(line.split()[-1])
    except OSError:
        pass
    return Path(tg.get_library())


def sanitizer_runtimes() -> list:
    """The sanitizer runtimes preloaded into this process (they must come first in a child's
    LD_PRELOAD too)."""
    return [x for x in os.environ.get("LD_PRELOAD", "").replace(":", " ").split()
            if re.search(r"lib(asan|ubsan|tsan)", x)]


def preload(lib: Path) -> str:
    """LD_PRELOAD for a child that should run `lib`."""
    return " ".join([*sanitizer_runtimes(), str(lib)])


def tilegen_link_args() -> list:
    lib_dir = str(library().parent)
    return [f"-L{lib_dir}", "-ltilegen", f"-Wl,-rpath,{lib_dir}"]


def build(src: str, out: Path, args: Sequence[str] = (), *, link_tilegen: bool = False,
          libs: Sequence[str] = ()) -> Path:
    """Compiles the C test program `src` (c_source) into `out`; fails the test with the
    compiler's output."""
    cmd = [cc(), "-std=gnu11", "-O1", "-g", "-Wall", "-Wno-unused-parameter", *SANITIZE_FLAGS,
           f"-I{tg.get_include()}", "-I", str(C_DIR), *args, str(c_source(src)), "-o", str(out)]
    if link_tilegen:
        cmd += tilegen_link_args()
    cmd += [*libs, "-lm", "-lpthread", "-ldl"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
    return out


def _multiarch() -> str:
    r = subprocess.run([cc(), "-print-multiarch"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def netlib_blas_dir() -> Optional[Path]:
    """The folder of the netlib reference BLAS + CBLAS (Debian's libblas3:
    /usr/lib/<multiarch>/blas/libblas.so.3), or None. Never `-lblas`: Debian's alternatives may
    point that at OpenBLAS or BLIS, and a "reference" that is another optimised BLAS proves
    nothing."""
    candidates = [Path("/usr/lib") / _multiarch() / "blas"] if _multiarch() else []
    candidates += sorted(Path("/usr/lib").glob("*/blas"))
    for d in candidates:
        lib = d / "libblas.so.3"
        if lib.exists() and "openblas" not in str(lib.resolve()).lower():
            return d
    return None


def reference_blas_args() -> list:
    """Link arguments for the netlib reference BLAS, by file name and with a run path, so the
    program loads that file whatever the alternatives' libblas.so.3 is."""
    d = netlib_blas_dir()
    return [f"-L{d}", "-l:libblas.so.3", f"-Wl,-rpath,{d}"]


def reference_blas(workdir: Path) -> Optional[str]:
    """None when a program can link the netlib reference BLAS with CBLAS, else why it cannot
    (a failure under CI=1, where the reference must be there)."""
    why = None
    if netlib_blas_dir() is None:
        why = "the netlib reference BLAS (/usr/lib/<multiarch>/blas/libblas.so.3) is missing"
    else:
        probe = workdir / "probe_blas.c"
        probe.write_text("void sgemm_(void); void cblas_sgemm(void);\n"
                         "int main(void) { sgemm_(); cblas_sgemm(); return 0; }\n")
        r = subprocess.run([cc(), str(probe), "-o", str(workdir / "probe_blas"),
                            *reference_blas_args()], capture_output=True, text=True)
        if r.returncode != 0:
            why = ("the reference BLAS with CBLAS cannot be linked ("
                   + (r.stderr.strip().splitlines() or ["link failed"])[-1] + ")")
    if why and os.environ.get("CI"):
        pytest.fail(why + "; CI installs libblas3", pytrace=False)
    return why and why + "; install libblas3 (Debian)"


def clean_env(**extra: str) -> Dict[str, str]:
    """The environment for a child: no TILEGEN_* / LD_PRELOAD leaking in from ours, the
    tuning cache off (as in this process; pass TILEGEN_TUNING="on" to use one), the run's
    TILEGEN_ISA cap if it has one (conftest.RUN_ISA_CAP: the child runs the library this process
    runs), and the imported tilegen importable (whether installed or built in place)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TILEGEN_") and k not in ("LD_PRELOAD", "OMP_NUM_THREADS")}
    if sanitizer_runtimes():
        env["LD_PRELOAD"] = " ".join(sanitizer_runtimes())
    env["TILEGEN_TUNING"] = "off"
    if RUN_ISA_CAP:
        env["TILEGEN_ISA"] = RUN_ISA_CAP
    pkg_parent = str(Path(tg.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent, *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def run(cmd: Sequence[str], *, env: Optional[Dict[str, str]] = None, input: Optional[str] = None,
        timeout: float = TIMEOUT, cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    """Runs in the folder that holds the imported tilegen: `python -c` puts its working folder
    first on sys.path, and from a source checkout that would be the unbuilt sources (pass cwd
    for a program that writes files where it runs)."""
    try:
        return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, input=input,
                              env=env if env is not None else clean_env(), timeout=timeout,
                              cwd=str(cwd or Path(tg.__file__).resolve().parent.parent))
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(map(str, cmd))} timed out after {timeout} s "
                    f"(a hang, not a slow machine)\n{e.stdout or ''}{e.stderr or ''}")


def python(code: str, *, env: Optional[Dict[str, str]] = None,
           timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (for environment variables read at import)."""
    return run([sys.executable, "-c", code], env=env, timeout=timeout)


def tilegen_command() -> list:
    """The `tilegen` command of the tilegen this process imports (`python -m tilegen`)."""
    return [sys.executable, "-m", "tilegen"]
