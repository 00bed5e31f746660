"""The mutation gate: every deliberate defect in tests/mutations.yaml must make the tests fail.

Usage (from the repository root, with tilegen and its test extra installed):
    python .ci/mutation_gate.py [--only ID,ID...]

A scratch copy of the repository's tilegen/ and tests/ is made once. libtilegen is built there
from setup.py's own source lists and flags (objects cached, so a driver mutation recompiles only
the files it touches); the installed package then loads it through LD_LIBRARY_PATH, which the
dynamic loader searches before the installed RUNPATH. First the unmutated scratch copy must pass
every mutation's tests and be the library actually loaded; then each mutation is applied alone,
rebuilt and tested, and must fail (a test failure or a crash; not a collection error).
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def load_setup():
    """setup.py's lists (baseline sources, include dirs, flags); importing it builds nothing."""
    sys.path.insert(0, str(ROOT))
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

    def __init__(self, scratch: Path, setup):
        self.scratch = scratch
        self.objdir = scratch / "_objects"
        self.libdir = scratch / "_lib"
        self.objdir.mkdir()
        self.libdir.mkdir()
        manifest = json.loads((scratch / setup.MANIFEST).read_text())
        arch = setup._isa_tables().host_arch()
        self.units = [(src, []) for src in setup.BASELINE_SOURCES]
        for _, isa in sorted(manifest["isas"].items()):
            if isa["arch"] in (arch, "any"):
                self.units += [(src, list(isa["cflags"])) for src in isa["sources"]]
        self.flags = [*setup.C_FLAGS, "-fPIC", *(f"-I{scratch / d}" for d in setup.INCLUDE_DIRS)]

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
        cmd = ["gcc", "-shared", "-o", str(self.libdir / "libtilegen.so"), *objs,
               "-Wl,-soname,libtilegen.so", "-Wl,--no-undefined", "-lm", "-lpthread"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"link failed:\n{r.stderr}")


def pytest_run(scratch: Path, selection: str, env) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
            "--rootdir", str(scratch)]
    args += [str(scratch / a) if a.startswith("tests/") else a for a in _split(selection)]
    # From a folder outside the source tree: the installed tilegen is the one imported.
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=scratch / "tests")


def _split(selection: str):
    import shlex
    return shlex.split(selection)


def first_failure(r: subprocess.CompletedProcess) -> str:
    m = re.search(r"^(?:FAILED|ERROR) (\S+)", r.stdout, re.M)
    if m:
        return m.group(1).split("/tests/")[-1]
    if r.returncode < 0:  # the test process itself died (an access outside the buffers...)
        return f"the test run, killed by signal {-r.returncode}"
    return "(no FAILED line: " + (r.stdout + r.stderr).strip()[-200:] + ")"


def apply(scratch: Path, mutation: dict) -> str:
    path = scratch / mutation["file"]
    text = path.read_text()
    if mutation["old"] not in text:
        raise RuntimeError(f"{mutation['id']}: the text to mutate is not in {mutation['file']}")
    path.write_text(text.replace(mutation["old"], mutation["new"], 1))
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="", help="comma-separated mutation ids")
    opts = parser.parse_args()
    mutations = yaml.safe_load((ROOT / "tests" / "mutations.yaml").read_text())
    if opts.only:
        wanted = set(opts.only.split(","))
        mutations = [m for m in mutations if m["id"] in wanted]
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tilegen-mutants-") as tmp:
        scratch = Path(tmp)
        ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.o", "lib", ".hypothesis")
        for d in ("tilegen", "tests"):
            shutil.copytree(ROOT / d, scratch / d, ignore=ignore)
        lib = ScratchLibrary(scratch, load_setup())
        lib.build()
        env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(
            [str(lib.libdir), *filter(None, [os.environ.get("LD_LIBRARY_PATH")])]))
        probe = subprocess.run(
            [sys.executable, "-c", "import tilegen; print(open('/proc/self/maps').read())"],
            capture_output=True, text=True, env=env, cwd=scratch / "tests")
        if str(lib.libdir / "libtilegen.so") not in probe.stdout:
            print("mutation gate: the scratch libtilegen is not the one tilegen loads\n"
                  + probe.stderr)
            return 2
        # The unmutated copy passes every selection (so a failure below is the mutation's).
        for sel in dict.fromkeys(m["tests"] for m in mutations):
            r = pytest_run(scratch, sel, env)
            if r.returncode != 0:
                print(f"mutation gate: the unmutated copy fails `{sel}`:\n{r.stdout[-3000:]}")
                return 2
        print(f"mutation gate: baseline built and passing ({time.monotonic() - start:.0f} s)")
        survivors, rows = [], []
        for m in mutations:
            t0 = time.monotonic()
            original = apply(scratch, m)
            try:
                if m["kind"] == "driver":
                    lib.build(m["file"])
                r = pytest_run(scratch, m["tests"], env)
            finally:
                (scratch / m["file"]).write_text(original)
            if m["kind"] == "driver":
                lib.build(m["file"])
            caught = r.returncode == 1 or r.returncode < 0
            if r.returncode in (2, 3, 4, 5):
                caught = False
                print(f"  {m['id']}: pytest exit {r.returncode} (not a test failure)\n"
                      + r.stdout[-2000:] + r.stderr[-2000:])
            who = first_failure(r) if caught else "SURVIVED"
            rows.append((m["id"], who, time.monotonic() - t0))
            print(f"  {m['id']:<40} {'caught by ' + who if caught else 'SURVIVED'} "
                  f"({time.monotonic() - t0:.1f} s)", flush=True)
            if not caught:
                survivors.append(m["id"])
    print(f"mutation gate: {len(rows) - len(survivors)} of {len(rows)} mutations caught in "
          f"{time.monotonic() - start:.0f} s")
    if survivors:
        print("survivors (the tests miss these defects): " + ", ".join(survivors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
