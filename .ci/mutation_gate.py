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
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from scratch_build import ROOT, ScratchLibrary, load_setup, scratch_copy


def pytest_run(scratch: Path, selection: str, env) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-rfEs", "-p", "no:cacheprovider",
            "--rootdir", str(scratch)]
    args += [str(scratch / a) if a.startswith("tests/") else a for a in _split(selection)]
    # From a folder outside the source tree: the installed tilegen is the one imported.
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=scratch / "tests")


def _split(selection: str):
    return shlex.split(selection)


def first_failure(r: subprocess.CompletedProcess) -> str:
    m = re.search(r"^(?:FAILED|ERROR) (\S+)", r.stdout, re.M)
    if m:
        return m.group(1).split("/tests/")[-1]
    if r.returncode < 0:  # the test process itself died (an access outside the buffers...)
        return f"the test run, killed by signal {-r.returncode}"
    return "(no FAILED line: " + (r.stdout + r.stderr).strip()[-200:] + ")"


def skipped_only(r: subprocess.CompletedProcess) -> str:
    """Why a run that passed ran nothing ("" if it ran a test): a kernel whose ISA this CPU
    lacks (no emulator runs it here) is skipped, and its mutation cannot be judged here."""
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if r.returncode != 0 or "skipped" not in summary or "passed" in summary:
        return ""
    m = re.search(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", r.stdout, re.M)
    return m.group(1) if m else "every selected test skipped"


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
        scratch = scratch_copy(Path(tmp))
        lib = ScratchLibrary(scratch, load_setup())
        lib.build()
        env = lib.env()
        if not lib.loaded_by_python(env):
            print("mutation gate: the scratch libtilegen is not the one tilegen loads")
            return 2
        # The unmutated copy passes every selection (so a failure below is the mutation's).
        for sel in dict.fromkeys(m["tests"] for m in mutations):
            r = pytest_run(scratch, sel, env)
            if r.returncode != 0:
                print(f"mutation gate: the unmutated copy fails `{sel}`:\n{r.stdout[-3000:]}")
                return 2
        print(f"mutation gate: baseline built and passing ({time.monotonic() - start:.0f} s)")
        survivors, rows, unjudged = [], [], []
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
            why_not_run = skipped_only(r)
            if why_not_run:
                unjudged.append(m["id"])
                print(f"  {m['id']:<40} not run on this CPU: {why_not_run}", flush=True)
                continue
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
          f"{time.monotonic() - start:.0f} s"
          + (f"; {len(unjudged)} not run here (their kernels need an ISA this CPU lacks): "
             + ", ".join(unjudged) if unjudged else ""))
    if not rows:
        print("mutation gate: no mutation could be judged on this CPU")
        return 1
    if survivors:
        print("survivors (the tests miss these defects): " + ", ".join(survivors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
