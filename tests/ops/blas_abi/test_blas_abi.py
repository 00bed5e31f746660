"""libtilegen as a drop-in BLAS, proved against the reference BLAS from C programs.

tests/c/blas_abi_driver.c is built twice: against the netlib reference BLAS (linked by file,
cprog.reference_blas_args(), never through -lblas, which Debian's alternatives may point at
OpenBLAS; Debian's reference libblas carries the reference CBLAS too) and against libtilegen.
The reference build is run plainly (the reference answer) and with LD_PRELOAD=libtilegen (tilegen's sgemm_/dgemm_
then serve it, as they would serve any program); the libtilegen build serves CBLAS. Results
must agree over shapes, transposes, padded leading dimensions and alpha/beta (zero included),
NaN in C with beta = 0 must vanish and NaN in A with alpha = 0 must not be read. Invalid
arguments must be reported with the reference's parameter numbers, through the program's own
xerbla_ / cblas_xerbla, with C untouched. tests/c/gemm_ex_driver.c covers tilegen_?gemm_ex.
"""
import math
import re
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

import numpy as np
import pytest

import cprog
import tilegen as tg

F77, CBLAS = 0, 1
ROW, COL = 101, 102
NOTRANS, TRANS, CONJTRANS = 111, 112, 113
CBLAS_TRANS = {"N": NOTRANS, "T": TRANS, "C": CONJTRANS}
DTYPES = {"f32": np.float32, "f64": np.float64}
A_PAD = np.nan      # never part of op(A): reading it shows up as NaN in C
C_PAD = 777.25      # padding rows/columns of C: must survive bit for bit


# ------------------------------------------------------------------------------ builds

@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("blas_abi")


@pytest.fixture(scope="module")
def refblas(workdir):
    why = cprog.reference_blas(workdir)
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def progs(workdir, refblas):
    """ref_rec / ref_plain: against the reference BLAS; tg_rec / tg_plain: against libtilegen. *_rec define
    their own xerbla_ and cblas_xerbla (-rdynamic exports them to the libraries)."""
    rec = ["-DRECORD_ERRORS", "-rdynamic"]
    return {
        "ref_rec": cprog.build("blas_abi_driver.c", workdir / "ref_rec", rec, libs=cprog.reference_blas_args()),
        "ref_plain": cprog.build("blas_abi_driver.c", workdir / "ref_plain", libs=cprog.reference_blas_args()),
        "tg_rec": cprog.build("blas_abi_driver.c", workdir / "tg_rec", rec, link_tilegen=True),
        "tg_plain": cprog.build("blas_abi_driver.c", workdir / "tg_plain", link_tilegen=True),
    }


def preload_env():
    return cprog.clean_env(LD_PRELOAD=cprog.preload(cprog.library()))


def whoami(prog, env=None) -> dict:
    r = cprog.run([prog, "whoami"], env=env)
    assert r.returncode == 0, r.stderr
    return dict(line.split(" ", 1) for line in r.stdout.splitlines())


# ------------------------------------------------------------------------------ the library file

def _dynamic_section(path: Path) -> str:
    for cmd in (["readelf", "-d", str(path)], ["ldd", str(path)]):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            continue
        if r.returncode == 0:
            return r.stdout
    pytest.skip("neither readelf nor ldd is available (install binutils)")


def test_libtilegen_does_not_link_libpython():
    lib = cprog.library()
    assert lib.is_file(), f"tg.get_library() = {lib} does not exist"
    text = _dynamic_section(lib)
    needed = re.findall(r"\(NEEDED\).*\[(.+?)\]", text) or re.findall(r"^\s*(\S+\.so\S*)", text, re.M)
    assert needed, text
    assert not [n for n in needed if "python" in n.lower()], f"libtilegen.so needs {needed}"
    assert not [n for n in needed if re.search(r"gomp|omp\.so|stdc\+\+", n)], needed


def test_libtilegen_exports_the_abis():
    lib = cprog.library()
    try:
        r = subprocess.run(["readelf", "--dyn-syms", "-W", str(lib)], capture_output=True,
                           text=True, timeout=60)
    except FileNotFoundError:
        pytest.skip("readelf is not available (install binutils)")
    exported = set(re.findall(r"\s(?:FUNC)\s+(?:GLOBAL|WEAK)\s+DEFAULT\s+\d+\s+([^\s@]+)", r.stdout))
    for sym in ("sgemm_", "dgemm_", "cblas_sgemm", "cblas_dgemm", "xerbla_", "cblas_xerbla",
                "tilegen_init", "tilegen_isa_name", "tilegen_set_num_threads",
                "tilegen_get_num_threads", "tilegen_sgemm_ex", "tilegen_dgemm_ex"):
        assert sym in exported, f"{sym} is not exported by {lib}"
    # The error reporters are weak, so a program's own definitions win.
    assert re.search(r"WEAK\s+DEFAULT\s+\d+\s+xerbla_\b", r.stdout)
    assert re.search(r"WEAK\s+DEFAULT\s+\d+\s+cblas_xerbla\b", r.stdout)


def test_ld_preload_serves_tilegen(progs):
    lib = cprog.library().resolve()
    plain = whoami(progs["ref_rec"])
    netlib = cprog.netlib_blas_dir()
    for sym in ("sgemm_", "cblas_sgemm"):   # the reference is the netlib file itself
        assert Path(plain[sym]).resolve().parent == netlib.resolve(), plain
    assert plain["tilegen_isa_name"] == "(none)", plain
    pre = whoami(progs["ref_rec"], preload_env())
    for sym in ("sgemm_", "dgemm_", "cblas_sgemm", "cblas_dgemm"):
        assert Path(pre[sym]).resolve() == lib, pre
    assert pre["tilegen_isa_name"] == tg.runtime_info()["isa"], pre
    linked = whoami(progs["tg_rec"])
    for sym in ("sgemm_", "cblas_sgemm"):
        assert Path(linked[sym]).resolve() == lib, linked


# ------------------------------------------------------------------------------ numerics

@dataclass
class Case:
    api: int
    dt: str
    layout: int          # COL for the Fortran ABI
    ta: str              # "N", "T", "C" (any case for Fortran)
    tb: str
    m: int
    n: int
    k: int
    alpha: float
    beta: float
    pad: tuple = (0, 0, 0)   # extra leading dimension of A, B, C
    nan_c: bool = False      # C filled with NaN (with beta == 0 it must vanish)
    nan_a: bool = False      # A filled with NaN (with alpha == 0 it must not be read)
    bufs: dict = field(default_factory=dict)

    def __str__(self):
        api = "f77" if self.api == F77 else ("cblas-row" if self.layout == ROW else "cblas-col")
        return (f"{api} {self.dt} {self.ta}{self.tb} m={self.m} n={self.n} k={self.k} "
                f"alpha={self.alpha} beta={self.beta} pad={self.pad}"
                + (" nanC" if self.nan_c else "") + (" nanA" if self.nan_a else ""))


def stored_shape(rows, cols, trans):
    """Shape of the array the caller stores for an operand used as op(X) of shape rows x cols."""
    return (rows, cols) if trans.upper() == "N" else (cols, rows)


def min_ld(shape, colmajor):
    return max(1, shape[0] if colmajor else shape[1])


def to_buffer(x: np.ndarray, ld: int, colmajor: bool, fill) -> np.ndarray:
    r, c = x.shape
    if colmajor:
        buf = np.full((ld, c), fill, dtype=x.dtype, order="F")
        buf[:r, :] = x
        return buf.ravel(order="F")
    buf = np.full((r, ld), fill, dtype=x.dtype)
    buf[:, :c] = x
    return buf.ravel()


def from_buffer(buf: np.ndarray, shape, ld: int, colmajor: bool) -> np.ndarray:
    r, c = shape
    if colmajor:
        return buf.reshape((c, ld))[:, :r].T
    return buf.reshape((r, ld))[:, :c]


def trimmed(buf: np.ndarray, shape, ld: int, colmajor: bool) -> np.ndarray:
    """An operand's buffer ending at its last element, not after the last column's (row's)
    padding: the C drivers put it against a guard page, so a read past it faults."""
    r, c = shape
    if r == 0 or c == 0:
        return buf[:0]
    return buf[: (c - 1) * ld + r] if colmajor else buf[: (r - 1) * ld + c]


def prepare(case: Case, rng) -> None:
    t = DTYPES[case.dt]
    colmajor = case.api == F77 or case.layout == COL
    sa, sb = stored_shape(case.m, case.k, case.ta), stored_shape(case.k, case.n, case.tb)
    lda = min_ld(sa, colmajor) + case.pad[0]
    ldb = min_ld(sb, colmajor) + case.pad[1]
    ldc = min_ld((case.m, case.n), colmajor) + case.pad[2]
    a = rng.uniform(-1, 1, sa).astype(t)
    b = rng.uniform(-1, 1, sb).astype(t)
    c = rng.uniform(-1, 1, (case.m, case.n)).astype(t)
    if case.nan_a:
        a[...] = np.nan
    if case.nan_c:
        c[...] = np.nan
    case.bufs = dict(
        a=a, b=b, c=c, lda=lda, ldb=ldb, ldc=ldc, colmajor=colmajor,
        A=trimmed(to_buffer(a, lda, colmajor, A_PAD), sa, lda, colmajor),
        B=trimmed(to_buffer(b, ldb, colmajor, A_PAD), sb, ldb, colmajor),
        C=to_buffer(c, ldc, colmajor, np.nan if case.nan_c else C_PAD))


def write_input(path: Path, cases: List[Case]) -> None:
    with open(path, "wb") as f:
        for cs in cases:
            b = cs.bufs
            if cs.api == F77:
                ta, tb = ord(cs.ta), ord(cs.tb)
            else:
                ta, tb = CBLAS_TRANS[cs.ta], CBLAS_TRANS[cs.tb]
            f.write(struct.pack("<12i2d3q", cs.api, 0 if cs.dt == "f32" else 1, cs.layout, ta, tb,
                                cs.m, cs.n, cs.k, b["lda"], b["ldb"], b["ldc"], 0,
                                cs.alpha, cs.beta, b["A"].size, b["B"].size, b["C"].size))
            for x in (b["A"], b["B"], b["C"]):
                f.write(x.tobytes())


def read_output(path: Path, cases: List[Case]) -> List[np.ndarray]:
    data = path.read_bytes()
    out, pos = [], 0
    for cs in cases:
        t = np.dtype(DTYPES[cs.dt])
        n = cs.bufs["C"].size
        out.append(np.frombuffer(data, t, n, pos))
        pos += n * t.itemsize
    assert pos == len(data), "driver output size does not match the cases"
    return out


def expected_scale(cs: Case) -> np.ndarray:
    """|alpha| |op(A)| |op(B)| + |beta| |C|: the size each result's rounding error scales with."""
    b = cs.bufs
    a = b["a"].astype(np.float64)
    bb = b["b"].astype(np.float64)
    op_a = a if cs.ta.upper() == "N" else a.T
    op_b = bb if cs.tb.upper() == "N" else bb.T
    scale = np.zeros((cs.m, cs.n))
    if cs.alpha != 0 and cs.k > 0:
        scale += abs(cs.alpha) * (np.abs(op_a) @ np.abs(op_b))
    if cs.beta != 0:
        scale += abs(cs.beta) * np.abs(b["c"].astype(np.float64))
    return scale


def check_against(ref: List[np.ndarray], got: List[np.ndarray], cases: List[Case], who: str):
    failures = []
    for cs, r, g in zip(cases, ref, got):
        b = cs.bufs
        colmajor = b["colmajor"]
        # Padding of C: untouched, bit for bit (also NaN padding), by both.
        mask = np.ones(b["C"].size, bool)
        from_buffer(mask, (cs.m, cs.n), b["ldc"], colmajor)[...] = False
        for name, out in (("reference", r), (who, g)):
            if not np.array_equal(out[mask].view(np.uint8), b["C"][mask].view(np.uint8)):
                failures.append(f"{cs}: {name} wrote outside the m x n block of C")
        rv = from_buffer(r, (cs.m, cs.n), b["ldc"], colmajor).astype(np.float64)
        gv = from_buffer(g, (cs.m, cs.n), b["ldc"], colmajor).astype(np.float64)
        if cs.m == 0 or cs.n == 0:
            continue
        if not np.isfinite(rv).all():
            failures.append(f"{cs}: the reference itself produced NaN/Inf")
            continue
        if not np.isfinite(gv).all():
            failures.append(f"{cs}: {who} produced NaN/Inf ({np.isnan(gv).sum()} NaN): "
                            + ("NaN in C leaked with beta=0" if cs.nan_c else
                               "A was read with alpha=0" if cs.nan_a else "bad value"))
            continue
        tol = 1e-5 * math.sqrt(max(cs.k, 1)) if cs.dt == "f32" else 1e-12
        err = np.abs(gv - rv)
        bound = tol * expected_scale(cs) + np.finfo(DTYPES[cs.dt]).tiny
        if (err > bound).any():
            i, j = np.unravel_index(np.argmax(err - bound), err.shape)
            failures.append(f"{cs}: {who} C[{i},{j}] = {gv[i, j]!r}, reference {rv[i, j]!r}, "
                            f"|diff| {err[i, j]:.3g} > {bound[i, j]:.3g}")
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures[:20])


SHAPES = [(1, 1, 1), (1, 9, 5), (8, 1, 3), (7, 5, 3), (16, 32, 8), (33, 17, 65), (50, 61, 47),
          (129, 97, 33), (3, 200, 17), (192, 160, 160)]   # the last one runs on 2 threads
ALPHA_BETA = [(1.0, 0.0), (0.75, -1.25), (-2.0, 1.0), (1.0, 1.0), (0.5, 0.5)]
PADS = [(0, 0, 0), (3, 1, 2), (1, 5, 0), (0, 2, 7)]


def numeric_cases(api: int, dt: str, layouts) -> List[Case]:
    cases = []
    trans = [(x, y) for x in "NTC" for y in "NTC"]
    i = 0
    for layout in layouts:
        for m, n, k in SHAPES:
            for ta, tb in trans:
                alpha, beta = ALPHA_BETA[i % len(ALPHA_BETA)]
                if api == F77 and i % 4 == 1:   # LSAME: lower case is accepted
                    ta, tb = ta.lower(), tb.lower()
                cases.append(Case(api, dt, layout, ta, tb, m, n, k, alpha, beta, PADS[i % len(PADS)]))
                i += 1
        # BLAS rules: beta = 0 does not read C; alpha = 0 (or k = 0) does not read A or B.
        for (m, n, k), (ta, tb) in zip([(7, 5, 3), (33, 17, 65), (192, 160, 160), (1, 9, 5)],
                                       [("N", "N"), ("T", "N"), ("N", "T"), ("T", "T")]):
            cases.append(Case(api, dt, layout, ta, tb, m, n, k, 1.5, 0.0, (1, 0, 2), nan_c=True))
            cases.append(Case(api, dt, layout, ta, tb, m, n, k, 0.0, 0.5, (0, 1, 1), nan_a=True))
            cases.append(Case(api, dt, layout, ta, tb, m, n, k, 0.0, 0.0, (0, 0, 0), nan_a=True))
            cases.append(Case(api, dt, layout, ta, tb, m, n, k, 0.0, 1.0, (2, 0, 0), nan_a=True))
            cases.append(Case(api, dt, layout, ta, tb, m, n, k, 0.0, 0.0, (0, 0, 3), nan_a=True,
                              nan_c=True))
        for m, n, k, alpha, beta, nan_c in [(5, 4, 0, 1.0, 0.0, True), (5, 4, 0, 1.0, 2.0, False),
                                            (0, 4, 3, 1.0, 0.0, True), (5, 0, 3, 1.0, 0.0, True),
                                            (0, 0, 0, 1.0, 0.5, False)]:
            cases.append(Case(api, dt, layout, "N", "N", m, n, k, alpha, beta, (0, 0, 1),
                              nan_c=nan_c))
    return cases


@pytest.fixture(scope="module")
def numeric_runs(progs, workdir):
    """All numeric cases, run once by each implementation: {who: (cases, outputs)}."""
    rng = np.random.default_rng(20240611)
    cases = []
    for dt in DTYPES:
        cases += numeric_cases(F77, dt, [COL])
        cases += numeric_cases(CBLAS, dt, [ROW, COL])
    for cs in cases:
        prepare(cs, rng)
    inp = workdir / "cases.bin"
    write_input(inp, cases)
    runs = {}
    for who, prog, env in [("reference", progs["ref_rec"], None),
                           ("tilegen (LD_PRELOAD)", progs["ref_rec"], preload_env()),
                           ("tilegen (linked)", progs["tg_rec"], None)]:
        out = workdir / f"out_{len(runs)}.bin"
        r = cprog.run([prog, "run", inp, out], env=env)
        assert r.returncode == 0, f"{who}: exit {r.returncode}\n{r.stderr}"
        assert "illegal" not in r.stderr and "incorrect" not in r.stderr, r.stderr
        runs[who] = read_output(out, cases)
    return cases, runs


@pytest.mark.parametrize("who", ["tilegen (LD_PRELOAD)", "tilegen (linked)"])
@pytest.mark.parametrize("api", ["f77", "cblas"])
def test_gemm_matches_reference(numeric_runs, who, api):
    cases, runs = numeric_runs
    sel = [i for i, cs in enumerate(cases) if cs.api == (F77 if api == "f77" else CBLAS)]
    assert len(sel) > 100
    check_against([runs["reference"][i] for i in sel], [runs[who][i] for i in sel],
                  [cases[i] for i in sel], who)


def test_beta_zero_and_alpha_zero_rules(numeric_runs):
    """Spelled out: NaN in C vanishes with beta = 0; alpha = 0 leaves C = beta*C (A unread);
    beta = 1 with alpha = 0 leaves C exactly as it was."""
    cases, runs = numeric_runs
    got = runs["tilegen (LD_PRELOAD)"]
    seen = 0
    for cs, out in zip(cases, got):
        if not (cs.nan_a or cs.nan_c) or cs.m == 0 or cs.n == 0:
            continue
        b = cs.bufs
        c = from_buffer(out, (cs.m, cs.n), b["ldc"], b["colmajor"])
        if cs.alpha == 0 or cs.k == 0:
            c0 = b["c"]
            want = np.zeros_like(c0) if cs.beta == 0 else (c0 if cs.beta == 1 else
                                                          (cs.beta * c0.astype(np.float64)).astype(c0.dtype))
            assert np.array_equal(c, want), str(cs)
        else:
            assert np.isfinite(c).all(), str(cs)
        seen += 1
    assert seen >= 40


# ------------------------------------------------------------------------------ argument errors

# (ta, tb, m, n, k, lda, ldb, ldc) -> the reference xGEMM's INFO
F77_ERRORS = [
    (("X", "N", 2, 2, 2, 2, 2, 2), 1),
    (("N", "x", 2, 2, 2, 2, 2, 2), 2),
    (("N", "N", -1, 2, 2, 2, 2, 2), 3),
    (("N", "N", 2, -1, 2, 2, 2, 2), 4),
    (("N", "N", 2, 2, -1, 2, 2, 2), 5),
    (("N", "N", 3, 2, 2, 2, 2, 3), 8),       # lda < m
    (("T", "N", 2, 2, 3, 2, 3, 2), 8),       # lda < k when A is transposed
    (("N", "N", 0, 2, 2, 0, 2, 1), 8),       # lda < 1 even for m = 0
    (("N", "N", 2, 2, 3, 2, 2, 2), 10),      # ldb < k
    (("N", "c", 2, 3, 2, 2, 2, 2), 10),      # ldb < n when B is transposed
    (("N", "N", 3, 2, 2, 3, 2, 2), 13),      # ldc < m
    (("N", "N", 0, 2, 2, 1, 2, 0), 13),      # ldc < 1
    (("X", "Y", -1, -1, -1, 0, 0, 0), 1),    # the first error is the one reported
    (("N", "N", -1, -1, 2, 0, 0, 0), 3),
    (("t", "N", 2, 2, -1, 0, 0, 0), 5),
]


@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_fortran_argument_errors(progs, dt):
    lines = "".join(f"{0 if dt == 'f32' else 1} {' '.join(map(str, args))}\n"
                    for args, _ in F77_ERRORS)
    want_name = "SGEMM " if dt == "f32" else "DGEMM "
    results = {}
    for who, env in [("reference", None), ("tilegen", preload_env())]:
        r = cprog.run([progs["ref_rec"], "f77err"], env=env, input=lines)
        assert r.returncode == 0, r.stderr
        results[who] = r.stdout.splitlines()
        assert len(results[who]) == len(F77_ERRORS), r.stdout + r.stderr
        for (args, info), line in zip(F77_ERRORS, results[who]):
            name, got, calls, untouched = line.split("|")
            assert (name, int(got), int(calls), int(untouched)) == (want_name, info, 1, 1), (
                f"{who} {dt}gemm_{args}: xerbla_({name!r}, {got}) called {calls}x, "
                f"C untouched={untouched}; want xerbla_({want_name!r}, {info}) once, C untouched")
    assert results["tilegen"] == results["reference"]


def test_default_xerbla_prints_the_reference_message(progs, workdir):
    """Without a program-defined xerbla_, tilegen prints the reference message and returns."""
    src = workdir / "xerbla_default.c"
    src.write_text(
        "#include <stdio.h>\n"
        "void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,\n"
        "  const float*, const int*, const float*, const int*, const float*, float*, const int*);\n"
        "int main(void) { int m = -1, n = 2, k = 2, ld = 2; float x[8] = {0}, c[8] = {5}, al = 1;\n"
        "  sgemm_(\"N\", \"N\", &m, &n, &k, &al, x, &ld, x, &ld, &al, c, &ld);\n"
        "  printf(\"returned %g\\n\", c[0]); return 0; }\n")
    exe = workdir / "xerbla_default"
    r = subprocess.run([cprog.cc(), str(src), "-o", str(exe), *cprog.tilegen_link_args()],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = cprog.run([exe])
    assert r.returncode == 0 and "returned 5" in r.stdout, r.stdout + r.stderr
    assert re.search(r"\*\* On entry to SGEMM parameter number\s+3 had an illegal value", r.stderr), r.stderr


def cblas_error_cases():
    """(layout, ta, tb, m, n, k, lda, ldb, ldc) -> the reference cblas_?gemm parameter number.
    Row-major: the reference calls the Fortran routine on the transposed problem (N, M swapped,
    B before A) and its cblas_xerbla swaps the numbers back (4<->5, 9<->11), so the order of the
    checks differs from column-major: N before M, ldb before lda."""
    ok = (2, 2, 2, 2, 2, 2)
    cases = [((103, NOTRANS, NOTRANS) + ok, 1),
             ((103, 999, NOTRANS, -1, 2, 2, 2, 2, 2), 1)]
    for layout in (COL, ROW):
        L = (layout,)
        cases += [
            (L + (999, NOTRANS) + ok, 2),
            (L + (NOTRANS, 110) + ok, 3),
            (L + (999, 999, -1, -1, 2, 2, 2, 2), 2),
            (L + (NOTRANS, NOTRANS, -1, 2, 2, 2, 2, 2), 4),
            (L + (NOTRANS, NOTRANS, 2, -1, 2, 2, 2, 2), 5),
            (L + (NOTRANS, NOTRANS, 2, 2, -1, 2, 2, 2), 6),
            (L + (NOTRANS, NOTRANS, -1, -1, 2, 2, 2, 2), 4 if layout == COL else 5),
            (L + (NOTRANS, NOTRANS, -1, 2, -1, 2, 2, 2), 4),
            (L + (NOTRANS, NOTRANS, 2, 2, 2, 1, 2, 2), 9),
            # op(A) transposed: column-major stores k x m (lda >= k), row-major m columns
            (L + ((TRANS, NOTRANS, 2, 2, 3, 2, 3, 2) if layout == COL else
                  (TRANS, NOTRANS, 3, 2, 2, 2, 2, 2)), 9),
            (L + (NOTRANS, NOTRANS, 2, 2, 2, 2, 1, 2), 11),
            # op(B) transposed: column-major stores n x k (ldb >= n), row-major k columns
            (L + ((NOTRANS, CONJTRANS, 2, 3, 2, 2, 2, 2) if layout == COL else
                  (NOTRANS, CONJTRANS, 2, 2, 3, 3, 2, 2)), 11),
            (L + (NOTRANS, NOTRANS, 2, 2, 2, 1, 1, 2), 9 if layout == COL else 11),
            (L + (NOTRANS, NOTRANS, 2, 2, 2, 2, 2, 1), 14),
            (L + (NOTRANS, NOTRANS, 3, 2, 2, 3, 2, 2) if layout == COL else
             L + (NOTRANS, NOTRANS, 2, 3, 2, 2, 3, 2), 14),
            (L + (NOTRANS, NOTRANS, 2, 2, 2, 1, 1, 1), 9 if layout == COL else 11),
            (L + (NOTRANS, NOTRANS, 2, 2, 2, 2, 1, 1), 11),
        ]
    return cases


CBLAS_ERRORS = cblas_error_cases()


def _cblas_line(dt, args):
    return f"{0 if dt == 'f32' else 1} {' '.join(map(str, args))}"


def recorded_number(layout: int, p: int) -> int:
    """What a program's own cblas_xerbla receives for parameter p. Row-major: the number in the
    transposed Fortran call the reference makes (M and N swapped, B before A), plus one; the
    reference test suite's cblas_xerbla swaps 4<->5 and 9<->11 back (libblas-test, c_xerbla.c)."""
    return {4: 5, 5: 4, 9: 11, 11: 9}.get(p, p) if layout == ROW else p


@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_cblas_argument_errors_recorded(progs, dt):
    """tilegen's cblas_?gemm reports through the program's cblas_xerbla, numbered as the
    reference CBLAS numbers it, and leaves C alone."""
    lines = "".join(_cblas_line(dt, args) + "\n" for args, _ in CBLAS_ERRORS)
    r = cprog.run([progs["tg_rec"], "cblaserr"], input=lines)
    assert r.returncode == 0, r.stderr
    got = r.stdout.splitlines()
    assert len(got) == len(CBLAS_ERRORS)
    rout = "cblas_sgemm" if dt == "f32" else "cblas_dgemm"
    bad = []
    for (args, p), line in zip(CBLAS_ERRORS, got):
        name, info, calls, untouched = line.split("|")
        want = recorded_number(args[0], p)
        if (name, int(info), int(calls), int(untouched)) != (rout, want, 1, 1):
            bad.append(f"{args}: cblas_xerbla({info}, {name!r}) x{calls}, C untouched="
                       f"{untouched}; want ({want}, {rout!r}) once, C untouched")
    assert not bad, "\n".join(bad)


PARAM = re.compile(r"Parameter\s+(\d+)\s+to routine\s+(\S+)\s+was incorrect")


def known_reference_slip(args, ref_p: int, p: int) -> bool:
    """Older reference CBLAS (LAPACK 3.11, as in Debian 12) reports an illegal TransB in
    row-major as parameter 2; current Reference-LAPACK reports 3, TransB's position, as the
    column-major branch and tilegen do."""
    layout, ta, tb = args[:3]
    valid = (NOTRANS, TRANS, CONJTRANS)
    return layout == ROW and ta in valid and tb not in valid and (ref_p, p) == (2, 3)


@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_cblas_argument_errors_match_reference(progs, dt):
    """The real reference CBLAS (its own cblas_xerbla prints and exits) numbers each case as
    tilegen does; tilegen's default cblas_xerbla prints the same message and returns."""
    bad = []
    for args, p in CBLAS_ERRORS:
        cmd_args = _cblas_line(dt, args).split()
        ref = cprog.run([progs["ref_plain"], "cblaserr1", *cmd_args])
        tg = cprog.run([progs["tg_plain"], "cblaserr1", *cmd_args])
        rm, tm = PARAM.search(ref.stderr), PARAM.search(tg.stderr)
        if rm is None:
            bad.append(f"{args}: the reference printed no error: {ref.stderr!r}")
            continue
        if tm is None or "returned 1" not in tg.stdout:
            bad.append(f"{args}: tilegen: {tg.stdout!r} {tg.stderr!r}")
            continue
        ref_p = int(rm.group(1))
        if known_reference_slip(args, ref_p, p):
            ref_p = p
        if not (ref_p == int(tm.group(1)) == p and rm.group(2) == tm.group(2)):
            bad.append(f"{args}: reference {rm.group(1)} {rm.group(2)}, tilegen {tm.group(1)} "
                       f"{tm.group(2)}, table {p}")
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------------ tilegen_?gemm_ex

ACTS = {"none": 0, "relu": 1, "relu6": 2, "gelu": 3, "silu": 4}
_erf = np.vectorize(math.erf, otypes=[np.float64])


def activate(x, act):
    if act == "relu":
        return np.where(x > 0, x, 0.0)
    if act == "relu6":
        return np.clip(x, 0.0, 6.0)
    if act == "gelu":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    if act == "silu":
        return x / (1.0 + np.exp(-x))
    return x


@pytest.fixture(scope="module")
def ex_prog(workdir):
    cprog.cc()
    return cprog.build("gemm_ex_driver.c", workdir / "gemm_ex_driver", link_tilegen=True)


def test_gemm_ex_bias_activation(ex_prog, workdir):
    rng = np.random.default_rng(7)
    cases = []
    i = 0
    for dt in DTYPES:
        for layout in (ROW, COL):
            for (m, n, k) in [(1, 1, 1), (7, 5, 3), (33, 17, 65), (70, 45, 90), (160, 150, 130)]:
                for ta, tb in [("N", "N"), ("T", "N"), ("N", "T"), ("C", "T")]:
                    act = list(ACTS)[i % len(ACTS)]
                    alpha, beta = ALPHA_BETA[i % len(ALPHA_BETA)]
                    cases.append((Case(CBLAS, dt, layout, ta, tb, m, n, k, alpha, beta,
                                       PADS[i % len(PADS)]), act, i % 3 != 2))
                    i += 1
            for act in ACTS:   # alpha = 0: A unread, C = act(beta*C + bias)
                cases.append((Case(CBLAS, dt, layout, "N", "N", 9, 11, 4, 0.0, 0.5, (1, 1, 1),
                                   nan_a=True), act, True))
                cases.append((Case(CBLAS, dt, layout, "T", "N", 9, 11, 4, 2.0, 0.0, (0, 0, 2),
                                   nan_c=True), act, True))
    with open(workdir / "ex.bin", "wb") as f:
        for cs, act, has_bias in cases:
            prepare(cs, rng)
            b = cs.bufs
            bias = rng.uniform(-1, 1, max(cs.n, 1)).astype(DTYPES[cs.dt])
            b["bias"] = bias if has_bias else None
            f.write(struct.pack("<12i2d4q", 0 if cs.dt == "f32" else 1, cs.layout,
                                CBLAS_TRANS[cs.ta], CBLAS_TRANS[cs.tb], cs.m, cs.n, cs.k,
                                b["lda"], b["ldb"], b["ldc"], ACTS[act], int(has_bias),
                                cs.alpha, cs.beta, b["A"].size, b["B"].size, b["C"].size,
                                bias.size))
            for x in (b["A"], b["B"], b["C"], bias):
                f.write(x.tobytes())
    r = cprog.run([ex_prog, "run", workdir / "ex.bin", workdir / "ex.out"])
    assert r.returncode == 0, r.stderr
    data = (workdir / "ex.out").read_bytes()
    pos, bad = 0, []
    for cs, act, has_bias in cases:
        b = cs.bufs
        t = np.dtype(DTYPES[cs.dt])
        rc = struct.unpack_from("<i", data, pos)[0]
        out = np.frombuffer(data, t, b["C"].size, pos + 4)
        pos += 4 + b["C"].size * t.itemsize
        if rc != 0:
            bad.append(f"{cs} {act}: returned {rc}")
            continue
        got = from_buffer(out, (cs.m, cs.n), b["ldc"], b["colmajor"]).astype(np.float64)
        a64, b64, c64 = (b[x].astype(np.float64) for x in "abc")
        op_a = a64 if cs.ta == "N" else a64.T
        op_b = b64 if cs.tb == "N" else b64.T
        pre = np.zeros((cs.m, cs.n))
        if cs.alpha != 0:
            pre += cs.alpha * (op_a @ op_b)
        if cs.beta != 0:
            pre += cs.beta * c64
        scale = expected_scale(cs)
        if has_bias:
            pre = pre + b["bias"].astype(np.float64)[: cs.n]
            scale = scale + np.abs(b["bias"].astype(np.float64)[: cs.n])
        want = activate(pre, act)
        tol = 1e-5 * math.sqrt(max(cs.k, 1)) if cs.dt == "f32" else 1e-12
        err = np.abs(got - want)
        bound = tol * (scale + np.abs(want)) + np.finfo(t).tiny
        mask = np.ones(b["C"].size, bool)
        from_buffer(mask, (cs.m, cs.n), b["ldc"], b["colmajor"])[...] = False
        if not np.array_equal(out[mask].view(np.uint8), b["C"][mask].view(np.uint8)):
            bad.append(f"{cs} {act}: wrote outside C's m x n block")
        if not np.isfinite(got).all() or (err > bound).any():
            bad.append(f"{cs} act={act} bias={has_bias}: max |diff| {np.nanmax(err):.3g}, "
                       f"NaN {int(np.isnan(got).sum())}")
    assert pos == len(data)
    assert not bad, f"{len(bad)} of {len(cases)} cases:\n" + "\n".join(bad[:20])


# (layout, ta, tb, m, n, k, lda, ldb, ldc, act) -> return code (-p, p in the _ex signature)
EX_ERRORS = [
    ((100, NOTRANS, NOTRANS, 2, 2, 2, 2, 2, 2, 0), -1),
    ((ROW, 110, NOTRANS, 2, 2, 2, 2, 2, 2, 0), -2),
    ((ROW, NOTRANS, 114, 2, 2, 2, 2, 2, 2, 0), -3),
    ((ROW, NOTRANS, NOTRANS, -1, 2, 2, 2, 2, 2, 0), -4),
    ((COL, NOTRANS, NOTRANS, 2, -1, 2, 2, 2, 2, 0), -5),
    ((ROW, NOTRANS, NOTRANS, 2, 2, -1, 2, 2, 2, 0), -6),
    ((ROW, NOTRANS, NOTRANS, 2, 3, 3, 2, 3, 3, 0), -9),      # row-major: lda < k
    ((COL, NOTRANS, NOTRANS, 3, 2, 2, 2, 2, 3, 0), -9),      # column-major: lda < m
    ((ROW, TRANS, NOTRANS, 3, 2, 2, 2, 2, 2, 0), -9),        # row-major A^T: lda < m
    ((ROW, NOTRANS, NOTRANS, 2, 3, 2, 2, 2, 3, 0), -11),     # row-major: ldb < n
    ((COL, NOTRANS, TRANS, 2, 3, 2, 2, 2, 2, 0), -11),       # column-major B^T: ldb < n
    ((ROW, NOTRANS, NOTRANS, 2, 3, 2, 2, 3, 2, 0), -14),     # row-major: ldc < n
    ((COL, NOTRANS, NOTRANS, 3, 2, 2, 3, 2, 2, 0), -14),     # column-major: ldc < m
    ((ROW, NOTRANS, NOTRANS, 2, 2, 2, 2, 2, 2, 5), -16),
    ((ROW, NOTRANS, NOTRANS, 2, 2, 2, 2, 2, 2, -1), -16),
    ((ROW, NOTRANS, NOTRANS, 2, 2, 0, 0, 2, 2, 0), -9),      # ld >= 1 even when k = 0
    ((ROW, NOTRANS, NOTRANS, -1, -1, 2, 0, 0, 0, 9), -4),    # the first error is reported
]


@pytest.mark.parametrize("dt", ["f32", "f64"])
def test_gemm_ex_argument_errors(ex_prog, dt):
    lines = "".join(f"{0 if dt == 'f32' else 1} {' '.join(map(str, args))}\n"
                    for args, _ in EX_ERRORS)
    r = cprog.run([ex_prog, "errors"], input=lines)
    assert r.returncode == 0, r.stderr
    got = r.stdout.splitlines()
    assert len(got) == len(EX_ERRORS)
    bad = [f"{args}: returned {line}, want {rc}|1 (C untouched)"
           for (args, rc), line in zip(EX_ERRORS, got) if line != f"{rc}|1"]
    assert not bad, "\n".join(bad)


def test_ld_preload_does_not_reach_numpys_bundled_openblas():
    """What the README says where it describes the ABI: LD_PRELOAD serves the standard names
    only, and NumPy's wheels call their bundled OpenBLAS under its own (scipy_cblas_sgemm64_),
    which libtilegen does not export. Checked on the NumPy installed here: the GEMM symbols its
    core imports are looked up in libtilegen."""
    import shutil

    from conftest import REPO_ROOT
    from numpy._core import _multiarray_umath

    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    r = subprocess.run(["nm", "-D", "--undefined-only", _multiarray_umath.__file__],
                       capture_output=True, text=True, check=True)
    wanted = sorted({line.split()[-1].split("@")[0] for line in r.stdout.splitlines()
                     if "gemm" in line})
    if not wanted:
        pytest.skip("this NumPy imports no GEMM symbol (no BLAS, or linked statically)")
    # Read the library's exports from the file (loading a second copy into this process would
    # show up to threadpoolctl and the pool tests, e.g. under the sanitizer job's own build).
    exported = subprocess.run(["nm", "-D", "--defined-only", tg.get_library()],
                              capture_output=True, text=True, check=True).stdout.split()
    served = [name for name in wanted if name in exported]
    if served:
        pytest.skip(f"this NumPy calls the standard names ({', '.join(served)}): LD_PRELOAD "
                    f"reaches it")
    assert "scipy_cblas_sgemm64_" in wanted  # the name the README quotes
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert ("LD_PRELOAD replaces only the standard names" in readme
            and "It does not reach NumPy's (or SciPy's) pip wheels" in readme
            and "`scipy_cblas_sgemm64_`" in readme)
