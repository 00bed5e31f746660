"""The benchmark case list, shared by `tilegen bench` and the pytest-benchmark suite (benchmarks/).

A case is one product: its dtype, its M x K x N shape, its form (2-D @ 2-D, or a GEMV with a 1-D
operand) and whether the timed call allocates its output (the whole Python call, like
``np.matmul(a, b)``) or writes into a preallocated ``out=``. Pure Python plus NumPy; it never
imports the compiled core, so the CLI can list cases without loading it.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional, Tuple

OPS = ("gemm",)
DTYPES = {"f32": "float32", "f64": "float64"}
GROUPS = ("small", "square", "skinny", "gemv", "stacked", "f64")
# Libraries whose bench call takes a stack of matrices in one call (the others skip those cases).
STACKING_LIBS = ("tilegen", "numpy", "torch")
LINE_OFFSET = 16  # bytes from a 64-byte boundary to the start of every operand


def placed(x, offset: int = LINE_OFFSET):
    """A C-ordered copy of NumPy array x whose data starts `offset` bytes past a 64-byte
    boundary."""
    import numpy as np

    buf = np.empty(x.nbytes + 128, np.uint8)
    start = -buf.ctypes.data % 64 + offset
    view = buf[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    view[...] = x
    return view


@dataclass(frozen=True)
class Case:
    """One benchmarked product C (M x N) = A (M x K) @ B (K x N)."""

    group: str           # one of GROUPS
    dtype: str           # f32 | f64
    m: int
    k: int
    n: int
    form: str = "mm"     # mm: 2-D @ 2-D; vm: x @ A with 1-D x (M = 1); mv: A @ x with 1-D x (N = 1)
    alloc: bool = False  # True: the timed call allocates its result; False: out= preallocated
    batch: int = 0       # > 0: a stack of `batch` products, (batch, M, K) @ (batch, K, N)

    @property
    def id(self) -> str:
        tail = {"mm": "", "vm": "-xA", "mv": "-Ax"}[self.form] + ("-call" if self.alloc else "")
        stack = f"{self.batch}of" if self.batch else ""
        return f"{self.dtype}-{stack}{self.m}x{self.k}x{self.n}{tail}"

    @property
    def label(self) -> str:
        tail = {"mm": "", "vm": " x@A", "mv": " A@x"}[self.form] + (" call" if self.alloc else "")
        stack = f"{self.batch} x " if self.batch else ""
        return f"{self.dtype} {stack}{self.m}x{self.k}x{self.n}{tail}"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n * max(self.batch, 1)

    @property
    def size(self) -> Optional[int]:
        """The side of a square 2-D case (for plots), else None."""
        square = self.form == "mm" and not self.batch and self.m == self.k == self.n
        return self.m if square else None

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(id=self.id, label=self.label, flops=self.flops)
        return d

    # ---------------------------------------------------------------- operands and checks

    def operands(self, seed: int = 0, offset: int = LINE_OFFSET):
        """(a, b, out): C-ordered inputs in U(-1, 1) and, unless the case allocates, a touched
        (page-faulted) output array; 1-D x for the GEMV forms. Each starts `offset` bytes past
        a cache line, by default as NumPy's large arrays usually do (malloc's 16-byte
        alignment): where an array starts changes in-place reads by up to 2x, so it is fixed,
        not left to the allocator of each worker process."""
        import numpy as np

        rng = np.random.default_rng(seed)
        dt = np.dtype(DTYPES[self.dtype])
        a_shape = (self.k,) if self.form == "vm" else (self.m, self.k)
        b_shape = (self.k,) if self.form == "mv" else (self.k, self.n)
        c_shape = {"mm": (self.m, self.n), "vm": (self.n,), "mv": (self.m,)}[self.form]
        if self.batch:
            stack = (self.batch,)
            a_shape, b_shape, c_shape = stack + a_shape, stack + b_shape, stack + c_shape
        a = placed(rng.uniform(-1, 1, a_shape).astype(dt), offset)
        b = placed(rng.uniform(-1, 1, b_shape).astype(dt), offset)
        out = None
        if not self.alloc:
            out = placed(np.zeros(c_shape, dt), offset)  # touched: no first-call page faults
        return a, b, out

    def check(self, a, b, result) -> Optional[str]:
        """None when `result` is a @ b to the dtype's accuracy, else what is wrong.

        The reference is float64 NumPy over a subset of rows (at most 32), so it stays cheap at
        4096; the bound is DESIGN's: relative ~1e-5 * sqrt(K) for f32, ~1e-12 for f64."""
        import numpy as np

        want_shape = {"mm": (self.m, self.n), "vm": (self.n,), "mv": (self.m,)}[self.form]
        result = np.asarray(result)
        if self.batch:
            if result.shape != (self.batch,) + want_shape:
                return f"shape {result.shape}, expected {(self.batch,) + want_shape}"
            for i in sorted({0, self.batch // 2, self.batch - 1}):  # a few matrices of the stack
                problem = Case(self.group, self.dtype, self.m, self.k, self.n).check(a[i], b[i], result[i])
                if problem is not None:
                    return f"matrix {i} of the stack: {problem}"
            return None
        if result.shape != want_shape:
            return f"shape {result.shape}, expected {want_shape}"
        if result.dtype != np.dtype(DTYPES[self.dtype]):
            return f"dtype {result.dtype}, expected {DTYPES[self.dtype]}"
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        if self.form == "vm":
            got, want, scale = result, a64 @ b64, np.abs(a64) @ np.abs(b64)
        else:
            rows = np.unique(np.linspace(0, self.m - 1, min(self.m, 32)).astype(np.intp))
            got, want = result[rows], a64[rows] @ b64
            scale = np.abs(a64[rows]) @ np.abs(b64)
        if not np.all(np.isfinite(got)):
            return "non-finite values in the result"
        tol = (1e-5 if self.dtype == "f32" else 1e-12) * math.sqrt(self.k)
        err = np.abs(got.astype(np.float64) - want)
        bad = err > tol * (scale + 1.0)
        if bad.any():
            i = np.unravel_index(np.argmax(err - tol * (scale + 1.0)), err.shape)
            return (f"{int(bad.sum())} of {bad.size} checked values off (worst at {tuple(map(int, i))}: "
                    f"{float(got[i]):.6g} vs {float(want[i]):.6g})")
        return None


def _gemm_cases(quick: bool) -> List[Case]:
    if quick:
        return [
            Case("small", "f32", 16, 16, 16, alloc=True),
            Case("small", "f32", 64, 64, 64, alloc=True),
            Case("square", "f32", 128, 128, 128),
            Case("square", "f32", 256, 256, 256),
            Case("skinny", "f32", 16, 256, 256),
            Case("gemv", "f32", 1, 256, 256, form="vm"),
            Case("gemv", "f32", 256, 256, 1, form="mv"),
            Case("stacked", "f32", 16, 16, 16, alloc=True, batch=8),
            Case("f64", "f64", 128, 128, 128),
        ]
    cases = [Case("small", "f32", s, s, s, alloc=True) for s in (8, 16, 32, 64)]
    cases += [Case("square", "f32", s, s, s) for s in (128, 256, 512, 1024, 2048, 4096)]
    cases += [Case("skinny", "f32", 16, 4096, 4096), Case("skinny", "f32", 4096, 4096, 16),
              Case("skinny", "f32", 4096, 16, 4096)]
    cases += [Case("gemv", "f32", 1, 4096, 4096, form="vm"),
              Case("gemv", "f32", 4096, 4096, 1, form="mv")]
    # Stacks: many tiny products, and attention-sized ones (12 heads x 8 sequences, head dim 64).
    cases += [Case("stacked", "f32", 8, 8, 8, alloc=True, batch=100),
              Case("stacked", "f32", 64, 64, 64, alloc=True, batch=64),
              Case("stacked", "f32", 128, 64, 128, batch=96)]
    cases += [Case("f64", "f64", s, s, s) for s in (1024, 2048)]
    return cases


def cases(op: str = "gemm", quick: bool = False) -> List[Case]:
    """The cases of `op`: the full list, or the small quick subset (seconds; CI's harness check)."""
    if op not in OPS:
        raise ValueError(f"op: {op!r} has no benchmark cases; allowed: {', '.join(OPS)}")
    return _gemm_cases(quick)


def by_id() -> Dict[str, Case]:
    """Every case of every op and list, by id (workers receive ids)."""
    table: Dict[str, Case] = {}
    for op in OPS:
        for quick in (False, True):
            for c in cases(op, quick):
                table[c.id] = c
    return table


def reps_for(case: Case, reps: int) -> int:
    """Fewer repetitions for the big products (>4 GFLOP: 5, >40 GFLOP: 3), as in RESULTS.md."""
    if case.flops > 40e9:
        return min(reps, 3)
    if case.flops > 4e9:
        return min(reps, 5)
    return reps


def shape_note() -> Tuple[str, ...]:
    return ("shapes are MxKxN",
            "'call': the whole call allocates its output, like np.matmul(a, b); "
            "otherwise out= is preallocated",
            "x@A: 1-D x times a matrix (M=1); A@x: a matrix times 1-D x (N=1)",
            "B x MxKxN: a stack of B products in one call (libraries without stacked calls: -)")
