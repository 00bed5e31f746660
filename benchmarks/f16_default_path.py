"""float16 products with float32 sums against tilegen's own float32 product of the same shape,
interleaved in one process (each repetition times all three, best of the repetitions):
tg.gemm(a16, b16) (a float32 result), tg.matmul(a16, b16) (a float16 result, rounded once) and
tg.gemm(a32, b32). The ratio to float32 is what the widening and the rounding cost.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE TILEGEN_NUM_THREADS=1 \
        python benchmarks/f16_default_path.py --size 1024 --size 2048
"""
from __future__ import annotations

import argparse
import time
from typing import Optional, Sequence

import numpy as np

import tilegen as tg


def run(n: int, repeats: int) -> dict:
    rng = np.random.default_rng(n)
    a = rng.random((n, n)).astype(np.float16)
    b = rng.random((n, n)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    out32, out16, ref = (np.empty((n, n), dt) for dt in (np.float32, np.float16, np.float32))
    calls = {"f16 -> f32 (tg.gemm)": lambda: tg.gemm(a, b, out=out32),
             "f16 -> f16 (tg.matmul)": lambda: tg.matmul(a, b, out=out16),
             "f32 (tg.gemm)": lambda: tg.gemm(a32, b32, out=ref)}
    best = {name: float("inf") for name in calls}
    for f in calls.values():
        f()
    # the float16 sums are the float32 product of the widened halves, bit for bit
    assert np.array_equal(out32, ref)
    for _ in range(repeats):
        for name, f in calls.items():
            t0 = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, action="append", help="square size (repeatable)")
    p.add_argument("--repeats", type=int, default=9)
    args = p.parse_args(argv)
    for n in args.size or [1024, 2048]:
        best = run(n, args.repeats)
        f32 = best["f32 (tg.gemm)"]
        cells = "  ".join(f"{name}: {2 * n ** 3 / t / 1e9:6.1f} GFLOP/s ({f32 / t:.3f}x)"
                          for name, t in best.items())
        print(f"{n}^3  {cells}")


if __name__ == "__main__":
    main()
