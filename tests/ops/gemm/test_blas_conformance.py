"""The netlib Level 3 BLAS test programs (Debian's libblas-test) with libtilegen preloaded:
Fortran xblat3s/xblat3d and CBLAS xscblat3/xdcblat3 must pass their SGEMM/DGEMM computational
tests and error-exit tests (row-major and column-major for CBLAS).

Each program reads its input file on stdin (sblat3.in, dblat3.in, sin3, din3, shipped beside
the programs in /usr/lib/<multiarch>/blas/). The Fortran ones write their summary to the file
the input names (sblat3.out, in the working folder), the CBLAS ones to stdout. The programs
exit 0 even when a test fails, so the summaries are read. LD_LIBRARY_PATH points at the netlib
library, so the routines tilegen does not provide come from the reference whatever Debian's
alternatives select. A second pass runs GEMM alone with larger sizes (up to the programs'
NMAX of 65, past every register tile and a KC remainder) and alpha/beta values other than 0/1.
"""
import os
import re
from pathlib import Path

import pytest

import cprog

PROGRAMS = {  # program -> (input file, the GEMM routine's name in its summary)
    "xblat3s": ("sblat3.in", "SGEMM "),
    "xblat3d": ("dblat3.in", "DGEMM "),
    "xscblat3": ("sin3", "cblas_sgemm "),
    "xdcblat3": ("din3", "cblas_dgemm "),
}


@pytest.fixture(scope="module")
def blas_dir() -> Path:
    d = cprog.netlib_blas_dir()
    missing = d is None or not all((d / p).exists() and (d / i).exists()
                                   for p, (i, _) in PROGRAMS.items())
    if missing:
        why = "the netlib BLAS test programs are missing; install libblas-test (Debian)"
        if os.environ.get("CI"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return d


def gemm_only_input(text: str, gemm: str) -> str:
    """The input file with larger N and other alpha/beta values, and only GEMM enabled."""
    out = []
    for line in text.splitlines():
        if "VALUES OF N" in line and "NUMBER" not in line:
            line = "0 1 7 16 33 65     VALUES OF N"
        elif "NUMBER OF VALUES OF N" in line:
            line = "6                 NUMBER OF VALUES OF N"
        elif "VALUES OF ALPHA" in line and "NUMBER" not in line:
            line = "0.0 1.0 -0.7      VALUES OF ALPHA"
        elif "VALUES OF BETA" in line and "NUMBER" not in line:
            line = "0.0 1.0 -1.3      VALUES OF BETA"
        else:
            m = re.match(r"^((?:cblas_)?[SD][A-Z0-9]+\s+)([TF])(\s+PUT F FOR NO TEST)", line, re.I)
            if m:  # a fixed-column record (A6,L2 or A12,L2): change the flag in place
                flag = "T" if m.group(1).strip() == gemm.strip() else "F"
                line = m.group(1) + flag + line[m.end(2):]
        out.append(line)
    return "\n".join(out) + "\n"


def run_program(blas_dir: Path, prog: str, stdin: str, workdir: Path) -> str:
    env = cprog.clean_env(LD_PRELOAD=cprog.preload(cprog.library()),
                          LD_LIBRARY_PATH=str(blas_dir), TILEGEN_VERBOSE="1")
    r = cprog.run([blas_dir / prog], env=env, input=stdin, cwd=workdir)
    assert r.returncode == 0, f"{prog}: exit {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    assert "tilegen:" in r.stderr, f"{prog}: libtilegen was not loaded\n{r.stderr[-2000:]}"
    summary = r.stdout
    for name in ("sblat3.out", "dblat3.out"):  # the Fortran programs' summary files
        f = workdir / name
        if f.exists():
            summary += f.read_text(errors="replace")
            f.unlink()
    return summary


def check_summary(prog: str, gemm: str, summary: str, passes: int):
    bad = [line for line in summary.splitlines()
           if re.search(r"FAIL|NOT DETECTED|INSTEAD OF|SUSPECT|FATAL|ERROR-EXITS \*", line)]
    assert not bad, f"{prog}:\n" + "\n".join(bad[:30])
    gemm_lines = [line for line in summary.splitlines() if line.strip().startswith(gemm.strip())]
    assert sum("PASSED THE TESTS OF ERROR-EXITS" in x for x in gemm_lines) >= 1, summary[-3000:]
    computational = [x for x in gemm_lines if re.search(r"PASSED THE .*COMPUTATIONAL TESTS", x)]
    assert len(computational) == passes, f"{prog}: {gemm_lines}"
    assert "END OF TESTS" in summary, summary[-2000:]


@pytest.mark.parametrize("prog", list(PROGRAMS))
def test_netlib_level3_program(blas_dir, prog, tmp_path):
    inp, gemm = PROGRAMS[prog]
    passes = 2 if "cblat" in prog else 1  # CBLAS: column- and row-major
    text = (blas_dir / inp).read_text()
    check_summary(prog, gemm, run_program(blas_dir, prog, text, tmp_path), passes)
    check_summary(prog, gemm, run_program(blas_dir, prog, gemm_only_input(text, gemm), tmp_path),
                  passes)
