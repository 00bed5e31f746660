"""`tilegen emit --compile [--bench]`: compile a spec from the command line, check it against
NumPy and time it beside the registry's kernel of the same family, ISA and dtype.

Both kernels are compiled by tilegen.dsl.compile (the package build's flags, the same Python
driver loop around each), so the ratio compares the micro-kernels alone. The problem, its
NumPy answer and its work (flops or bytes) are the family's (OpFamily.python_example).
"""
from __future__ import annotations

import functools
import time
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from tilegen.dsl import jit
from tilegen.dsl.registry import load_registry
from tilegen.dsl.spec import KernelSpec


def registered_kernel(spec: KernelSpec) -> KernelSpec:
    """The registry's production kernel of spec's family, dtype and ISA to compare it with: of
    those of its template (its form: the same call), family fields and epilogue where there
    are such, the largest tile (the one the library runs on large problems)."""
    key = (spec.op, spec.dtype, spec.isa)
    same = [e.spec for e in load_registry()
            if e.production and (e.spec.op, e.spec.dtype, e.spec.isa) == key]
    if not same:
        raise ValueError(f"--bench: the registry has no production {spec.op} {spec.dtype} kernel "
                         f"for {spec.isa} to compare with")
    return max(same, key=lambda s: (s.template == spec.template, s.options == spec.options,
                                    s.epilogue == spec.epilogue, s.mr * s.nr * s.kr))


def _fresh(args: Sequence[object]) -> Tuple[object, ...]:
    """Copies of the array arguments: a kernel that updates one in place sees the original."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def check(kernel: jit.CompiledKernel, example: jit.Example) -> float:
    """The largest absolute error against NumPy's answer; ValueError past the family's
    tolerance."""
    got = np.asarray(kernel(*_fresh(example.args), **example.kwargs), dtype=np.float64)
    want = example.expected.astype(np.float64)
    err = float(np.max(np.abs(got - want), initial=0.0))
    bound = example.atol + example.rtol * np.abs(want)
    if got.shape != want.shape or not np.all(np.abs(got - want) <= bound):
        raise ValueError(f"{kernel.name}: differs from NumPy on {example.shape} "
                         f"(largest error {err:.3g}, allowed atol {example.atol:.3g} + "
                         f"rtol {example.rtol:.3g} * |expected|)")
    return err


def best_times(fns: Sequence[Callable[[], object]], repeat: int,
               min_seconds: float = 0.02) -> List[float]:
    """Seconds per call of each function: the best of `repeat` runs, a run being enough calls
    to last min_seconds, the functions' runs interleaved so that a busy spell of a shared
    machine slows them alike."""
    calls = []
    for fn in fns:
        fn()  # warm up: caches, lazy ctypes set-up
        start = time.perf_counter()
        fn()
        calls.append(max(1, int(min_seconds / max(time.perf_counter() - start, 1e-9))))
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            for _ in range(calls[i]):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / calls[i])
    return best


def runner(kernel: jit.CompiledKernel, example: jit.Example) -> Callable[[], object]:
    """One call of the kernel on the example; a callable that packs its operands first offers
    `prepare` (packing once, then the kernel loop alone), and that loop is what is timed."""
    prepare = getattr(kernel.call, "prepare", None)
    if prepare is None:
        return functools.partial(kernel, *example.args, **example.kwargs)
    return prepare(*example.args, **example.kwargs)


def run(spec: KernelSpec, bench: bool, shape: Optional[str], repeat: int,
        print_: Callable[[str], None] = print) -> int:
    family = spec.family
    kernel = jit.compile(spec)
    print_(f"{kernel.name}: {'cached' if kernel.cached else 'compiled'} {kernel.path}")
    if not bench:
        print_(kernel.__doc__ or "")
        return 0
    dims = jit.bench_shape(shape) or tuple(d for _, d in family.example_dims)
    names = [n for n, _ in family.example_dims]
    if len(dims) != len(names):
        raise ValueError(f"--shape: {spec.op} takes {len(names)} sizes ({','.join(names)}), "
                         f"got {len(dims)}")
    example = family.python_example(spec, dims, np.random.default_rng(0))
    reference = registered_kernel(spec)
    kernels = [kernel, kernel if reference == spec else jit.compile(reference)]
    errors = [check(kernel, example)]
    try:
        errors.append(check(kernels[1], example))
    except (TypeError, ValueError) as e:
        # The closest registered kernel takes other arguments (other family fields, say): the
        # spec is timed alone.
        print_(f"(the registry's closest kernel, {reference.name}, does not take this problem: "
               f"{e}; timing the spec alone)")
        kernels = kernels[:1]
    seconds = best_times([runner(k, example) for k in kernels], repeat)
    rows = [(f"{k.name} ({role})", f"{err:.2g}", t, example.work / t / 1e9)
            for k, role, err, t in zip(kernels, ("spec", "registered"), errors, seconds)]
    unit = "GFLOP/s" if example.unit == "flop" else "GB/s"
    packed = " (operands packed once, outside the timing)" if getattr(
        kernel.call, "prepare", None) else ""
    from tilegen import runtime_info  # the CPU a figure was measured on

    print_(f"{spec.op} {spec.dtype} {spec.isa}, {','.join(names)} = {example.shape}, 1 thread, "
           f"{runtime_info().get('cpu_brand') or 'unknown CPU'}; "
           f"{'both' if len(kernels) == 2 else 'the spec'} checked against NumPy; "
           f"time per call{packed}, best of {repeat}")
    width = max(len(r[0]) for r in rows)
    print_(f"{'kernel':<{width}}  {'max err':>8}  {'time (ms)':>10}  {unit:>8}  {'ratio':>6}")
    base = rows[-1][3]
    for name, err, seconds, rate in rows:
        print_(f"{name:<{width}}  {err:>8}  {seconds * 1e3:>10.3f}  {rate:>8.2f}  "
               f"{rate / base:>6.2f}")
    return 0
