"""`tilegen bench --op gemm`: products C (M x N) = A (M x K) @ B (K x N) against NumPy's BLAS,
SciPy's BLAS, torch and cython-blis.

A case is one product: its dtype, its M x K x N shape, its form (2-D @ 2-D, or a GEMV with a 1-D
operand) and whether the timed call allocates its output (the whole Python call, like
``np.matmul(a, b)``) or writes into a preallocated ``out=``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import LINE_OFFSET, case_dict, placed

NAME = "gemm"
LIBS = ("tilegen", "numpy", "scipy", "torch", "blis")
RATIO_VS = ("numpy",)
UNIT, UNIT_SCALE = "GFLOP/s", 1e9
PLOT_XLABEL = "M = K = N (float32; <=64: whole call, allocating)"
DTYPES = {"f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16", "s8": "int8"}
GROUPS = ("small", "square", "skinny", "gemv", "stacked", "f64", "bf16", "f16", "s8")
# Libraries whose bench call takes a stack of matrices in one call (the others skip those cases).
STACKING_LIBS = ("tilegen", "numpy", "torch")
# Libraries with a bfloat16 product: NumPy's (ml_dtypes' element loop; a bf16 @ bf16 matmul is
# float32, as tilegen's) and torch's (oneDNN; bf16 out, rounded once).
BF16_LIBS = ("tilegen", "numpy", "torch")
# int8 @ int8 -> int32 (exact): NumPy's matmul(..., dtype=int32) (an element loop: seconds per
# call past 1024^3, so only up to there) and torch._int_mm.
S8_LIBS = ("tilegen", "numpy", "torch")
S8_NUMPY_MAX_WORK = 2 * 1024 ** 3
# float16 @ float16 -> float16: NumPy's element loop (~0.4 GFLOP/s: only up to 512^3) and torch's
# CPU half product (~4 GFLOP/s on AMD Zen 4 without AVX512-FP16: only up to 1024^3).
F16_LIBS = ("tilegen", "numpy", "torch")
F16_MAX_WORK = {"numpy": 2 * 512 ** 3, "torch": 2 * 1024 ** 3}


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

    work = flops

    def runs_on(self, lib: str) -> bool:
        return (not self.batch or lib in STACKING_LIBS) and (
            self.dtype != "bf16" or lib in BF16_LIBS) and (
            self.dtype != "s8" or lib in S8_LIBS and (
                lib != "numpy" or self.flops <= S8_NUMPY_MAX_WORK)) and (
            self.dtype != "f16" or lib in F16_LIBS and self.flops <= F16_MAX_WORK.get(lib, self.flops))

    @property
    def size(self) -> Optional[int]:
        """The side of a square 2-D case (for plots), else None."""
        square = self.form == "mm" and not self.batch and self.m == self.k == self.n
        return self.m if square else None

    def as_dict(self) -> dict:
        return case_dict(self)

    # ---------------------------------------------------------------- operands and checks

    def operands(self, seed: int = 0, offset: int = LINE_OFFSET):
        """(a, b, out): C-ordered inputs in U(-1, 1) and, unless the case allocates, a touched
        (page-faulted) output array; 1-D x for the GEMV forms. Each starts `offset` bytes past
        a cache line, by default as NumPy's large arrays usually do (malloc's 16-byte
        alignment): where an array starts changes in-place reads by up to 2x, so it is fixed,
        not left to the allocator of each worker process."""
        import numpy as np

        rng = np.random.default_rng(seed)
        dt = _dtype(self.dtype)
        a_shape = (self.k,) if self.form == "vm" else (self.m, self.k)
        b_shape = (self.k,) if self.form == "mv" else (self.k, self.n)
        c_shape = {"mm": (self.m, self.n), "vm": (self.n,), "mv": (self.m,)}[self.form]
        if self.batch:
            stack = (self.batch,)
            a_shape, b_shape, c_shape = stack + a_shape, stack + b_shape, stack + c_shape
        if self.dtype == "s8":  # the whole int8 range
            a = placed(rng.integers(-128, 128, a_shape).astype(dt), offset)
            b = placed(rng.integers(-128, 128, b_shape).astype(dt), offset)
        else:
            a = placed(rng.uniform(-1, 1, a_shape).astype(dt), offset)
            b = placed(rng.uniform(-1, 1, b_shape).astype(dt), offset)
        out = None
        if not self.alloc:
            # NumPy's bf16 @ bf16 is float32; int8 products are asked for in int32
            out_dt = {"bf16": np.dtype(np.float32), "s8": np.dtype(np.int32)}.get(self.dtype, dt)
            out = placed(np.zeros(c_shape, out_dt), offset)  # touched: no first-call page faults
        return a, b, out

    def check(self, operands, result) -> Optional[str]:
        """None when `result` is a @ b to the dtype's accuracy, else what is wrong.

        The reference is float64 NumPy over a subset of rows (at most 32), so it stays cheap at
        4096; the bound is DESIGN's: relative ~1e-5 * sqrt(K) for f32, ~1e-12 for f64. bf16
        inputs are exact in float64, so their products are held to float32's bound, plus one
        bfloat16 rounding (2^-8 relative) for a library that returns bfloat16 (torch)."""
        import numpy as np

        a, b = operands[:2]
        want_shape = {"mm": (self.m, self.n), "vm": (self.n,), "mv": (self.m,)}[self.form]
        result = np.asarray(result)
        if self.batch:
            if result.shape != (self.batch,) + want_shape:
                return f"shape {result.shape}, expected {(self.batch,) + want_shape}"
            for i in sorted({0, self.batch // 2, self.batch - 1}):  # a few matrices of the stack
                problem = Case(self.group, self.dtype, self.m, self.k, self.n).check(
                    (a[i], b[i]), result[i])
                if problem is not None:
                    return f"matrix {i} of the stack: {problem}"
            return None
        if result.shape != want_shape:
            return f"shape {result.shape}, expected {want_shape}"
        want_dtypes = {"bf16": ("float32", "bfloat16"), "f16": ("float16",), "s8": ("int32",)}.get(
            self.dtype, (DTYPES[self.dtype],))
        if result.dtype.name not in want_dtypes:
            return f"dtype {result.dtype}, expected {' or '.join(want_dtypes)}"
        if self.dtype == "s8":  # exact
            rows = np.unique(np.linspace(0, self.m - 1, min(self.m, 32)).astype(np.intp))
            want = a[rows].astype(np.int64) @ b.astype(np.int64)
            bad = result[rows] != want
            return None if not bad.any() else f"{int(bad.sum())} of {bad.size} checked values off"
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        if self.form == "vm":
            got, want, scale = result, a64 @ b64, np.abs(a64) @ np.abs(b64)
        else:
            rows = np.unique(np.linspace(0, self.m - 1, min(self.m, 32)).astype(np.intp))
            got, want = result[rows], a64[rows] @ b64
            scale = np.abs(a64[rows]) @ np.abs(b64)
        if not np.all(np.isfinite(got)):
            return "non-finite values in the result"
        tol = (1e-12 if self.dtype == "f64" else 1e-5) * math.sqrt(self.k)
        err = np.abs(got.astype(np.float64) - want)
        rounding = {"bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}.get(result.dtype.name, 0.0)
        bound = tol * (scale + 1.0) + rounding * np.abs(want)
        bad = err > bound
        if bad.any():
            i = np.unravel_index(np.argmax(err - bound), err.shape)
            return (f"{int(bad.sum())} of {bad.size} checked values off (worst at {tuple(map(int, i))}: "
                    f"{float(got[i]):.6g} vs {float(want[i]):.6g})")
        return None


# (M, K = N) of the few-row products each low-precision type is held to float32's speed on.
DECODE_SHAPES = ((1, 1024), (1, 4096), (4, 4096))


def cases(quick: bool = False) -> List[Case]:
    """The full list, or the small quick subset (seconds; CI's harness check)."""
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
            Case("bf16", "bf16", 256, 256, 256),
            Case("f16", "f16", 128, 128, 128),
            Case("s8", "s8", 256, 256, 256),
        ]
    cases = [Case("small", "f32", s, s, s, alloc=True) for s in (8, 16, 32, 64)]
    cases += [Case("square", "f32", s, s, s) for s in (128, 256, 512, 1024, 2048, 4096)]
    cases += [Case("skinny", "f32", 16, 4096, 4096), Case("skinny", "f32", 4096, 4096, 16),
              Case("skinny", "f32", 4096, 16, 4096)]
    # The decode shapes (M = 1-16) in float32 as (M, K) @ (K, N): the yardstick the bfloat16 and
    # int8 products of the same shapes must not fall behind.
    cases += [Case("skinny", "f32", m, k, k) for m, k in DECODE_SHAPES]
    cases += [Case("gemv", "f32", 1, 4096, 4096, form="vm"),
              Case("gemv", "f32", 4096, 4096, 1, form="mv")]
    # Stacks: many tiny products, and attention-sized ones (12 heads x 8 sequences, head dim 64).
    cases += [Case("stacked", "f32", 8, 8, 8, alloc=True, batch=100),
              Case("stacked", "f32", 64, 64, 64, alloc=True, batch=64),
              Case("stacked", "f32", 128, 64, 128, batch=96)]
    cases += [Case("f64", "f64", s, s, s) for s in (1024, 2048)]
    # bfloat16 squares (the f32 squares above are the same shapes in float32) and a decode-like
    # product; NumPy's element loop takes seconds from 1024 on.
    cases += [Case("bf16", "bf16", s, s, s) for s in (256, 1024, 2048, 4096)]
    cases += [Case("bf16", "bf16", m, k, k) for m, k in DECODE_SHAPES + ((16, 4096),)]
    # float16 squares (NumPy's loop only to 512).
    cases += [Case("f16", "f16", s, s, s) for s in (256, 512, 1024, 2048)]
    # int8 -> int32 squares and the decode-like product.
    cases += [Case("s8", "s8", s, s, s) for s in (256, 1024, 2048, 4096)]
    cases += [Case("s8", "s8", m, k, k) for m, k in DECODE_SHAPES + ((16, 4096),)]
    return cases


def _dtype(name: str):
    import numpy as np

    if name == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(DTYPES[name])


def _bound(f, *args, **kwargs) -> Callable[[], object]:
    """A zero-argument call with the least overhead Python allows for f(*args, **kwargs)."""
    if kwargs:
        return lambda: f(*args, **kwargs)
    return lambda: f(*args)


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    """(call, to_numpy): the timed call of `lib` for `case` on operands made by
    case.operands(), and how to turn its return value into the NumPy array to check.
    Everything (transposed views, tensors) is prepared here, outside the timing."""
    a, b, out = operands
    same = lambda r: r  # noqa: E731
    if lib in ("tilegen", "numpy"):
        if lib == "tilegen":
            import tilegen
            f = tilegen.matmul
        else:
            import numpy
            f = numpy.matmul
        if case.dtype == "s8":  # exact int32 products
            import numpy
            return _bound(f, a, b, out=out, dtype=numpy.int32), same
        return (_bound(f, a, b) if out is None else _bound(f, a, b, out=out)), same
    if lib == "scipy":
        from scipy.linalg import blas
        p = "s" if case.dtype == "f32" else "d"
        if case.form == "mm":  # row-major C = A @ B is column-major C^T = B^T A^T: no copies
            gemm = getattr(blas, p + "gemm")
            if out is None:
                return _bound(gemm, 1.0, b.T, a.T), lambda r: r.T
            return _bound(gemm, 1.0, b.T, a.T, beta=0.0, c=out.T, overwrite_c=1), lambda r: r.T
        gemv = getattr(blas, p + "gemv")
        if case.form == "vm":  # y = x @ A = (A^T) x, A^T is A.T in column-major
            return _bound(gemv, 1.0, b.T, a, beta=0.0, y=out, overwrite_y=1), same
        return _bound(gemv, 1.0, a.T, b, beta=0.0, y=out, overwrite_y=1, trans=1), same
    if lib == "torch" and case.dtype == "s8":  # torch._int_mm: int8 @ int8 -> int32
        import torch
        ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
        return _bound(torch._int_mm, ta, tb, out=tc), lambda r: r.numpy()
    if lib == "torch" and case.dtype == "f16":  # torch's CPU half product is float16
        import torch
        ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
        return _bound(torch.matmul, ta, tb, out=tc), lambda r: r.numpy()
    if lib == "torch" and case.dtype == "bf16":  # torch's bf16 product is bf16 (oneDNN)
        import numpy as np
        import torch
        ta, tb = (torch.from_numpy(x.view(np.uint16)).view(torch.bfloat16) for x in (a, b))
        tc = torch.empty(out.shape, dtype=torch.bfloat16)
        to_np = lambda r: r.float().numpy().astype(_dtype("bf16"))  # noqa: E731
        return _bound(torch.matmul, ta, tb, out=tc), to_np
    if lib == "torch":
        import torch
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        if out is None:
            return _bound(torch.matmul, ta, tb), lambda r: r.numpy()
        tc = torch.from_numpy(out)
        if case.form == "vm":  # torch.matmul(x, A, out=y) wants a (1, N) out; mv is its GEMV
            return _bound(torch.mv, tb.T, ta, out=tc), lambda r: r.numpy()
        if case.form == "mv":
            return _bound(torch.mv, ta, tb, out=tc), lambda r: r.numpy()
        return _bound(torch.matmul, ta, tb, out=tc), lambda r: r.numpy()
    if lib == "blis":
        import blis.py as bp  # cython-blis: C = alpha A B + beta C, beta defaults to 1
        if case.form == "mm":
            if out is None:
                return _bound(bp.gemm, a, b, beta=0.0), same
            return _bound(bp.gemm, a, b, out=out, beta=0.0), same
        if case.form == "vm":
            return _bound(bp.gemv, b, a, trans1=True, beta=0.0, out=out), same
        return _bound(bp.gemv, a, b, beta=0.0, out=out), same
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("shapes are MxKxN",
            "'call': the whole call allocates its output, like np.matmul(a, b); "
            "otherwise out= is preallocated",
            "x@A: 1-D x times a matrix (M=1); A@x: a matrix times 1-D x (N=1)",
            "B x MxKxN: a stack of B products in one call (libraries without stacked calls: -)")
