"""A scratch copy of the repository and a libtilegen built in it object by object, from
setup.py's own source lists and flags (for .ci/mutation_gate.py and .ci/sanitize.py: rebuilding
only what a change touches, or with extra flags, without reinstalling the package). The
installed package loads such a build through LD_LIBRARY_PATH, which the dynamic loader searches
before the installed RUNPATH."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def scratch_copy(dest: Path) -> Path:
    """tilegen/, tests/ and the README (some tests check what it says) copied into dest (no
    build products)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.o", "lib", ".hypothesis")
    for d in ("tilegen", "tests"):
        shutil.copytree(ROOT / d, dest / d, ignore=ignore)
    shutil.copy2(ROOT / "README.md", dest / "README.md")
    return dest


def load_setup():
    """setup.py's lists (baseline sources, include dirs, flags); importing it builds nothing.
    sys.path is left alone: a source tree on it would be inherited by every process the caller
    spawns later (Dask workers in the same pytest run) and shadow the installed tilegen."""
    spec = importlib.util.spec_from_file_location("tilegen_setup", ROOT / "setup.py")
    mod = importlib.util.module_from_spec(spec)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        spec.loader.exec_module(mod)
    finally:
        os.chdir(cwd)
    return mod


class ScratchLibrary:
    """libtilegen built in a scratch copy, object by object."""

    def __init__(self, scratch: Path, setup, extra_flags=(), flagged_isas=None):
        """extra_flags go to every unit, or, with flagged_isas, to the baseline and those ISAs'
        kernels only (code this CPU never runs need not pay, e.g., for the sanitizers)."""
        self.scratch = scratch
        self.objdir = scratch / "_objects"
        self.libdir = scratch / "_lib"
        self.objdir.mkdir()
        self.libdir.mkdir()
        manifest = json.loads((scratch / setup.MANIFEST).read_text())
        arch = setup._isa_tables().host_arch()
        extra = list(extra_flags)
        self.units = [(src, extra) for src in setup.BASELINE_SOURCES]
        for name, isa in sorted(manifest["isas"].items()):
            if isa["arch"] in (arch, "any"):
                mine = extra if flagged_isas is None or name in flagged_isas else []
                self.units += [(src, [*mine, *isa["cflags"]]) for src in isa["sources"]]
        self.flags = [*setup.C_FLAGS, "-fPIC", *(f"-I{scratch / d}" for d in setup.INCLUDE_DIRS)]
        self.link_flags = list(extra_flags)
        self.soname = setup.SONAME  # what the extensions load (NEEDED), found on LD_LIBRARY_PATH

    def env(self, base=None) -> dict:
        """An environment in which tilegen loads this build."""
        env = dict(os.environ if base is None else base)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            [str(self.libdir), *filter(None, [env.get("LD_LIBRARY_PATH")])])
        return env

    def loaded_by_python(self, env) -> bool:
        """The installed tilegen, run in env, loads this build (checked in /proc/self/maps)."""
        probe = subprocess.run(
            [sys.executable, "-c", "import tilegen; print(open('/proc/self/maps').read())"],
            capture_output=True, text=True, env=env, cwd=self.scratch / "tests")
        return str(self.libdir / self.soname) in probe.stdout

    def _object(self, src: str) -> Path:
        return self.objdir / (src.replace("/", "__") + ".o")

    def _compile(self, unit):
        src, cflags = unit
        cmd = ["gcc", *self.flags, *cflags, "-c", str(self.scratch / src), "-o", str(self._object(src))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}\n{r.stderr}")

    def build(self, changed=None):
        """Compiles every unit (changed=None) or those that are or include `changed`; links."""
        if changed is None:
            todo = self.units
        else:
            name = Path(changed).name
            todo = [u for u in self.units if u[0] == changed or
                    re.search(rf'#include\s+"{re.escape(name)}"', (self.scratch / u[0]).read_text())]
            if not todo:
                raise RuntimeError(f"{changed}: no library source is or includes it")
        with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            list(pool.map(self._compile, todo))
        objs = [str(self._object(src)) for src, _ in self.units]
        cmd = ["gcc", "-shared", *self.link_flags, "-o", str(self.libdir / self.soname), *objs,
               f"-Wl,-soname,{self.soname}", "-Wl,--no-undefined", "-lm", "-lpthread"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"link failed:\n{r.stderr}")
        # -ltilegen for the C test programs, as in the package (setup.py writes the same).
        (self.libdir / "libtilegen.so").write_text(f"INPUT({self.soname})\n")
