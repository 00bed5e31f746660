"""The 24 netlib BLAS test programs (Debian's libblas-test) against libtilegen alone: Fortran
xblat{1,2,3}{s,d,c,z} and CBLAS x{s,d,c,z}cblat{1,2,3}, every routine of every level and type,
computational tests (CBLAS: row- and column-major) and error exits (xerbla_ / cblas_xerbla
called with the reference's parameter numbers, the programs' own handlers checking them).

The programs are linked against libblas.so.3; LD_LIBRARY_PATH points at a folder where
libblas.so.3 and libcblas.so.3 are symlinks to libtilegen, so every routine (and the CBLAS
tests' RowMajorStrg) comes from tilegen: nothing falls back to the reference.

Level 2 and 3 programs read their input file on stdin (sblat2.in, sin2, ... shipped beside the
programs in /usr/lib/<multiarch>/blas/); the Fortran ones write their summary to the file the
input names, the others to stdout. The programs exit 0 even when a test fails, so the
summaries are read: no failure line, one PASSED line per routine and pass (Fortran: error exits
and computational tests; CBLAS: error exits, column- and row-major), "END OF TESTS". A second
pass runs GEMM alone with larger sizes (up to the programs' NMAX of 65, past every register tile
and a KC remainder) and alpha/beta values other than 0/1.
"""
import os
import re
import subprocess
from pathlib import Path

import pytest

import cprog
from blasfixtures import tilegen_as_blas  # noqa: F401 (a fixture)

TYPES = "sdcz"
PROGRAMS = {}  # program -> input file (None: level 1, no input)
for _t in TYPES:
    PROGRAMS[f"xblat1{_t}"] = None
    PROGRAMS[f"x{_t}cblat1"] = None
    for _l in (2, 3):
        PROGRAMS[f"xblat{_l}{_t}"] = f"{_t}blat{_l}.in"
        PROGRAMS[f"x{_t}cblat{_l}"] = f"{_t}in{_l}"
GEMM = {"xblat3s": "SGEMM ", "xblat3d": "DGEMM ", "xblat3c": "CGEMM ", "xblat3z": "ZGEMM ",
        "xscblat3": "cblas_sgemm ", "xdcblat3": "cblas_dgemm ", "xccblat3": "cblas_cgemm ",
        "xzcblat3": "cblas_zgemm "}


@pytest.fixture(scope="module")
def blas_dir() -> Path:
    d = cprog.netlib_blas_dir()
    missing = d is None or not all((d / p).exists() and (i is None or (d / i).exists())
                                   for p, i in PROGRAMS.items())
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
            line = ("(0.0,0.0) (1.0,0.0) (-0.7,0.4)  VALUES OF ALPHA" if line.startswith("(")
                    else "0.0 1.0 -0.7      VALUES OF ALPHA")
        elif "VALUES OF BETA" in line and "NUMBER" not in line:
            line = ("(0.0,0.0) (1.0,0.0) (-1.3,0.6)  VALUES OF BETA" if line.startswith("(")
                    else "0.0 1.0 -1.3      VALUES OF BETA")
        else:
            m = re.match(r"^((?:cblas_)?[SDCZ][A-Z0-9]+\s+)([TF])(\s+PUT F FOR NO TEST)", line, re.I)
            if m:  # a fixed-column record (A6,L2 or A12,L2): change the flag in place
                flag = "T" if m.group(1).strip() == gemm.strip() else "F"
                line = m.group(1) + flag + line[m.end(2):]
        out.append(line)
    return "\n".join(out) + "\n"


def run_program(blas_dir: Path, lib_dir: Path, prog: str, stdin, workdir: Path) -> str:
    env = cprog.clean_env(LD_LIBRARY_PATH=str(lib_dir))
    ldd = subprocess.run(["ldd", str(blas_dir / prog)], env=env, capture_output=True, text=True)
    line = [x for x in ldd.stdout.splitlines() if "libblas.so.3" in x]
    assert line and str(lib_dir) in line[0], f"{prog}: libblas.so.3 is not tilegen's\n{ldd.stdout}"
    r = cprog.run([blas_dir / prog], env=env, input=stdin or "", cwd=workdir)
    assert r.returncode == 0, f"{prog}: exit {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    summary = r.stdout
    for f in workdir.glob("*.out"):  # the Fortran programs' summary files
        summary += f.read_text(errors="replace")
        f.unlink()
    return summary


BAD = r"FAIL|NOT DETECTED|INSTEAD OF|SUSPECT|FATAL|ERROR-EXITS \*"


def imported_routines(path: Path) -> list:
    r = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True,
                       text=True, check=True)
    names = [x.split()[-1].split("@")[0] for x in r.stdout.splitlines() if x.strip()]
    return [n for n in names if n.startswith("cblas_") or (n.endswith("_") and
                                                            not n.startswith("_"))]


def check_summary(prog: str, summary: str, routines: int, only: str = ""):
    bad = [line for line in summary.splitlines() if re.search(BAD, line)]
    assert not bad, f"{prog}:\n" + "\n".join(bad[:30])
    if "blat1" in prog:  # level 1: every subprogram tested passes
        tested = summary.count("Test of subprogram number")
        assert tested >= 10 and summary.count("----- PASS -----") == tested, summary[-3000:]
        return
    assert "END OF TESTS" in summary, summary[-2000:]
    if only:  # one routine enabled: the caller counts its computational passes
        return
    passes = 3 if "cblat" in prog else 2  # error exits + computational (CBLAS: both layouts)
    lines = [x for x in summary.splitlines() if "PASSED THE" in x]
    assert len(lines) == routines * passes, f"{prog}: {len(lines)} PASSED lines\n{summary[-3000:]}"


@pytest.mark.parametrize("prog", list(PROGRAMS))
def test_netlib_program(blas_dir, tilegen_as_blas, prog, tmp_path):
    inp = PROGRAMS[prog]
    text = (blas_dir / inp).read_text() if inp else None
    routines = len(imported_routines(blas_dir / prog))
    check_summary(prog, run_program(blas_dir, tilegen_as_blas, prog, text, tmp_path), routines)
    if prog in GEMM:
        gemm = GEMM[prog]
        summary = run_program(blas_dir, tilegen_as_blas, prog, gemm_only_input(text, gemm),
                              tmp_path)
        check_summary(prog, summary, 1, only=gemm)
        comp = [x for x in summary.splitlines()
                if x.strip().startswith(gemm.strip()) and "COMPUTATIONAL" in x]
        assert len(comp) == (2 if "cblat" in prog else 1), summary[-3000:]
