"""`tilegen bench --op blas_abi`: BLAS routines through libtilegen's CBLAS (ctypes) against
SciPy's BLAS wrappers (scipy.linalg.blas: the OpenBLAS SciPy bundles), column-major operands.

The routines and sizes of issue 34's targets: level 2 at n = 4096, level 3 at n = 2048, complex
GEMM at 1024-2048, level 1 at 10^6 elements. Routines that overwrite an input (ger, trsv, trsm,
trmm, axpy) first copy it back from a pristine operand in every call, for both libraries (the
copy is in the timing of both: it lowers their ratio's spread, not its direction).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import case_dict

NAME = "blas_abi"
LIBS = ("tilegen", "scipy")
RATIO_VS = ("scipy",)
UNIT, UNIT_SCALE = "GFLOP/s", 1e9
COL, NOTRANS, TRANS, UPPER, LOWER, LEFT, NONUNIT = 102, 111, 112, 121, 122, 141, 131

# routine -> (level, flops as a function of n)
ROUTINES = {
    "gemv": (2, lambda n: 2 * n * n), "symv": (2, lambda n: 2 * n * n),
    "ger": (2, lambda n: 2 * n * n), "trsv": (2, lambda n: n * n),
    "trsm": (3, lambda n: n ** 3), "trmm": (3, lambda n: n ** 3),
    "syrk": (3, lambda n: n ** 3), "symm": (3, lambda n: 2 * n ** 3),
    "gemm": (3, lambda n: 2 * n ** 3),
    "dot": (1, lambda n: 2 * n), "axpy": (1, lambda n: 2 * n), "nrm2": (1, lambda n: 2 * n),
}
COMPLEX_FACTOR = 4  # a complex multiply-add is 4 real ones


@dataclass(frozen=True)
class Case:
    group: str
    routine: str
    n: int
    dtype: str = "d"  # the BLAS prefix: s, d, c, z

    @property
    def id(self) -> str:
        return f"blas-{self.dtype}{self.routine}-{self.n}"

    @property
    def label(self) -> str:
        return f"{self.dtype}{self.routine} n={self.n}"

    @property
    def work(self) -> int:
        return ROUTINES[self.routine][1](self.n) * (COMPLEX_FACTOR if self.dtype in "cz" else 1)

    size = None

    def runs_on(self, lib: str) -> bool:
        return lib in LIBS

    def as_dict(self) -> dict:
        return case_dict(self)

    def _np_dtype(self):
        import numpy as np
        return {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}[self.dtype]

    def operands(self, seed: int = 0):
        import numpy as np

        rng = np.random.default_rng(seed)
        n, t = self.n, self._np_dtype()

        def rand(*shape):
            x = rng.standard_normal(shape)
            if self.dtype in "cz":
                x = x + 1j * rng.standard_normal(shape)
            return np.asfortranarray(x.astype(t))

        level = ROUTINES[self.routine][0]
        if level == 1:
            return rand(n), rand(n)
        a = rand(n, n)
        if self.routine in ("symv", "symm"):
            a = np.asfortranarray((a + a.T) / 2)
        if self.routine in ("trsv", "trsm", "trmm"):
            a = np.asfortranarray(np.triu(a) * (1.0 / n) + np.eye(n, dtype=t) * 2)
        if level == 2:
            return a, rand(n), rand(n)
        return a, rand(n, n)

    def check(self, operands, result) -> Optional[str]:
        import numpy as np

        r = self.routine
        ops = [np.asarray(o, np.complex128 if self.dtype in "cz" else np.float64) for o in operands]
        got = np.asarray(result, ops[0].dtype)
        if r == "dot":
            want = np.dot(ops[0], ops[1])
        elif r == "axpy":
            want = 0.5 * ops[0] + ops[1]
        elif r == "nrm2":
            want = np.linalg.norm(ops[0])
        elif r in ("gemv", "symv"):
            want = ops[0] @ ops[1]
        elif r == "ger":
            want = ops[0] + np.outer(ops[1], ops[2])
        elif r == "trsv":
            want = np.linalg.solve(ops[0], ops[1])
        elif r == "trsm":
            want = np.linalg.solve(ops[0], ops[1])
        elif r == "trmm":
            want = ops[0] @ ops[1]
        elif r == "syrk":
            got, want = np.triu(got), np.triu(ops[1] @ ops[1].T)
        else:  # symm, gemm
            want = ops[0] @ ops[1]
        err = float(np.abs(got - want).max())
        scale = max(1.0, float(np.abs(want).max()))
        tol = (1e-3 if self.dtype in "sc" else 1e-9) * scale
        return None if err <= tol else f"max error {err:.3g} over {tol:.3g}"


def cases(quick: bool = False) -> List[Case]:
    if quick:
        return [Case("level2", "gemv", 256), Case("level3", "trsm", 192),
                Case("level3", "gemm", 128, "z"), Case("level1", "dot", 10000)]
    return ([Case("level2", r, 4096) for r in ("gemv", "symv", "ger", "trsv")]
            + [Case("level3", r, 2048) for r in ("trsm", "syrk", "symm", "trmm")]
            + [Case("complex", "gemm", 1024, "z"), Case("complex", "gemm", 2048, "c")]
            + [Case("level1", r, 1000000) for r in ("dot", "axpy", "nrm2")])


def _tilegen_call(case: Case, operands):
    import ctypes

    import numpy as np
    import tilegen

    lib = ctypes.CDLL(tilegen.get_library())
    p, n, r = case.dtype, case.n, case.routine
    cplx = p in "cz"
    real = ctypes.c_float if p in "sc" else ctypes.c_double
    P = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    one = np.ones(1, operands[0].dtype)
    zero = np.zeros(1, operands[0].dtype)
    s1 = P(one) if cplx else real(1.0)
    s0 = P(zero) if cplx else real(0.0)
    f = getattr(lib, f"cblas_{p}{r}", None)
    if r == "dot":
        f.restype = real
        x, y = operands
        return lambda: f(n, P(x), 1, P(y), 1)
    if r == "nrm2":
        f.restype = real
        x = operands[0]
        return lambda: f(n, P(x), 1)
    if r == "axpy":
        x, y0 = operands
        y = y0.copy()
        return lambda: (np.copyto(y, y0), f(n, real(0.5), P(x), 1, P(y), 1), y)[2]
    if ROUTINES[r][0] == 2:
        a0, x, y0 = operands
        if r == "gemv":
            y = np.empty_like(y0)
            return lambda: (f(COL, NOTRANS, n, n, s1, P(a0), n, P(x), 1, s0, P(y), 1), y)[1]
        if r == "symv":
            y = np.empty_like(y0)
            return lambda: (f(COL, UPPER, n, s1, P(a0), n, P(x), 1, s0, P(y), 1), y)[1]
        if r == "ger":
            a = a0.copy(order="F")
            return lambda: (np.copyto(a, a0), f(COL, n, n, s1, P(x), 1, P(y0), 1, P(a), n), a)[2]
        xx = x.copy()  # trsv
        return lambda: (np.copyto(xx, x), f(COL, UPPER, NOTRANS, NONUNIT, n, P(a0), n, P(xx), 1),
                        xx)[2]
    a, b0 = operands
    if r in ("trsm", "trmm"):
        b = b0.copy(order="F")
        return lambda: (np.copyto(b, b0), f(COL, LEFT, UPPER, NOTRANS, NONUNIT, n, n, s1, P(a),
                                            n, P(b), n), b)[2]
    c = np.zeros((n, n), operands[0].dtype, order="F")
    if r == "syrk":
        return lambda: (f(COL, UPPER, NOTRANS, n, n, s1, P(b0), n, s0, P(c), n), c)[1]
    if r == "symm":
        return lambda: (f(COL, LEFT, UPPER, n, n, s1, P(a), n, P(b0), n, s0, P(c), n), c)[1]
    return lambda: (f(COL, NOTRANS, NOTRANS, n, n, n, s1, P(a), n, P(b0), n, s0, P(c), n), c)[1]


def _scipy_call(case: Case, operands):
    import numpy as np
    from scipy.linalg import blas

    p, r = case.dtype, case.routine
    f = getattr(blas, p + r)
    if r == "dot":
        return lambda: f(*operands)
    if r == "nrm2":
        return lambda: f(operands[0])
    if r == "axpy":
        x, y0 = operands
        y = y0.copy()
        return lambda: (np.copyto(y, y0), f(x, y, a=0.5))[1]
    if ROUTINES[r][0] == 2:
        a0, x, y0 = operands
        if r == "gemv":
            return lambda: f(1.0, a0, x)
        if r == "symv":
            return lambda: f(1.0, a0, x)
        if r == "ger":
            a = a0.copy(order="F")
            return lambda: (np.copyto(a, a0), f(1.0, x, y0, a=a, overwrite_a=1))[1]
        xx = x.copy()
        return lambda: (np.copyto(xx, x), f(a0, xx, overwrite_x=1))[1]
    a, b0 = operands
    if r in ("trsm", "trmm"):
        b = b0.copy(order="F")
        return lambda: (np.copyto(b, b0), f(1.0, a, b, overwrite_b=1))[1]
    if r == "syrk":
        return lambda: f(1.0, b0)
    return lambda: f(1.0, a, b0)


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    if lib == "tilegen":
        return _tilegen_call(case, operands), (lambda r: r)
    if lib == "scipy":
        return _scipy_call(case, operands), (lambda r: r)
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("blas-<routine>-n: one BLAS call, column-major, through libtilegen's CBLAS and "
            "scipy.linalg.blas (OpenBLAS); ger/trsv/trsm/trmm/axpy time a copy of their input "
            "too, on both sides",)
