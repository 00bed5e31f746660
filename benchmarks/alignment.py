"""Products that read an operand in place, timed with its rows starting 0, 16, 32 and 48 bytes
into a cache line, tilegen against NumPy, one thread: what the driver's realignment (the first
columns computed apart) buys when the arrays are NumPy's usual 16-byte-aligned ones.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/alignment.py
    python benchmarks/alignment.py --shape 1x256x256 --shape 256x512x1

Shapes are MxKxN: M = 1 is x @ B with a 1-D x (B read in place by rows), N = 1 is A @ x (A's
rows read in place), M <= 56 reads B in place. Every operand starts at the same offset.
Cells: GFLOP/s, best of the repetitions.
"""
from __future__ import annotations

import argparse
from typing import List, Optional, Sequence, Tuple

import numpy as np

from tilegen.tools.bench_worker import measure
from tilegen.ops.gemm.bench import Case

DEFAULT_SHAPES = ("1x256x256", "1x512x512", "256x256x1", "512x512x1", "16x4096x4096",
                  "1x4096x4096")
OFFSETS = (0, 16, 32, 48)


def parse_shape(text: str) -> Tuple[int, int, int]:
    try:
        m, k, n = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not MxKxN") from None
    if min(m, k, n) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: sizes must be positive")
    return m, k, n


def measure_all(shapes: Sequence[Tuple[int, int, int]], offsets: Sequence[int], dtype: str,
                seconds: float, reps: int) -> List[Tuple[str, int, float, float]]:
    """(shape, offset, tilegen GFLOP/s, NumPy GFLOP/s) rows; each result checked first."""
    import tilegen as tg

    rows = []
    for m, k, n in shapes:
        form = "vm" if m == 1 else "mv" if n == 1 else "mm"
        case = Case("gemv" if form != "mm" else "skinny", dtype, m, k, n, form=form)
        for off in offsets:
            a, b, out = case.operands(offset=off)
            problem = case.check((a, b, out), tg.matmul(a, b, out=out))
            if problem is not None:
                raise AssertionError(f"{case.label} at offset {off}: {problem}")
            best = [measure(lambda f=f: f(a, b, out=out), seconds, reps)["best_s"]
                    for f in (tg.matmul, np.matmul)]
            rows.append((f"{m}x{k}x{n}", off, case.flops / best[0] / 1e9,
                         case.flops / best[1] / 1e9))
    return rows


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", type=parse_shape, action="append", metavar="MxKxN",
                    help=f"repeatable (default {', '.join(DEFAULT_SHAPES)})")
    ap.add_argument("--dtype", choices=("f32", "f64"), default="f32")
    ap.add_argument("--seconds", type=float, default=0.02, help="one repetition (default 0.02)")
    ap.add_argument("--reps", type=int, default=7, help="repetitions (default 7)")
    args = ap.parse_args(argv)

    import tilegen as tg

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    shapes = args.shape or [parse_shape(s) for s in DEFAULT_SHAPES]
    saved = tg.get_num_threads()
    tg.set_num_threads(1)
    limits = threadpool_limits(1) if threadpool_limits is not None else None
    try:
        rows = measure_all(shapes, OFFSETS, args.dtype, args.seconds, args.reps)
    finally:
        tg.set_num_threads(saved)
        if limits is not None:
            limits.restore_original_limits()
    print(f"{args.dtype}, 1 thread; GFLOP/s with every operand starting N bytes into a cache line"
          + ("" if threadpool_limits else " (threadpoolctl missing: NumPy's threads not limited)"))
    print(f"{'shape':<14}" + "".join(f"{f'tilegen @{o}':>13}{f'numpy @{o}':>12}" for o in OFFSETS))
    for shape in dict.fromkeys(r[0] for r in rows):
        cells = [r for r in rows if r[0] == shape]
        print(f"{shape:<14}" + "".join(f"{t:>13.1f}{n:>12.1f}" for _, _, t, n in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
