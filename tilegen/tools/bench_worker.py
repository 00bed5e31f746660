"""One measuring process of `tilegen bench`: ``python -m tilegen.tools.bench_worker SPEC_JSON``.

`tilegen bench` starts one of these per (library, thread count), with the thread counts already
in the environment (OMP/OPENBLAS/MKL_NUM_THREADS, TILEGEN_NUM_THREADS) and OPENBLAS_CORETYPE /
OPENBLAS_L2_SIZE removed, so OpenBLAS, libgomp and tilegen pools never share a process with a
pool they would fight for the cores. In mode "serve" the worker sets its library up, then reads
one case id per line on stdin and measures it, until stdin closes: the parent keeps one worker
per library alive and has them take turns case by case, so every library meets the machine in
the same state (a shared machine's speed drifts over minutes). It prints JSON lines on stdout:

    {"event": "info", ...}          the library, its version, its BLAS pools (threadpoolctl)
    {"event": "start", "case": id}  before each case (for the progress bar)
    {"event": "result", ...}        first-call time, per-repetition times, or an error
    {"event": "peak", ...}          (mode "peak") one FMA-throughput measurement
    {"event": "done"}

Timing: the call is warmed up and calibrated (timeit-style autorange), then each repetition
loops it for about `target` seconds; the parent keeps the best and the median.
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

from .benchcases import by_id, op_module, op_of, reps_for

# Every library an op's bench plug-in may name (ops/<op>/bench.py LIBS), in report order, and the
# module that `installed` looks for and that gives the version.
# memread is no library: NumPy streaming through a case's bytes, the memory yardstick of the
# bandwidth-bound ops.
LIBS = ("tilegen", "numpy", "scipy", "torch", "blis", "cv2", "onnxruntime", "dask_image",
        "llama_cpp", "memread")
MODULES = {"tilegen": "tilegen", "numpy": "numpy", "scipy": "scipy", "torch": "torch",
           "blis": "blis", "cv2": "cv2", "onnxruntime": "onnxruntime",
           "dask_image": "dask_image", "llama_cpp": "llama_cpp", "memread": "numpy"}
SINGLE_THREADED = {"blis": "cython-blis is built without threading"}
PEAK_RETRIES = 4
PORTABLE_ISA = "scalar"  # the probe --quick leaves out when the CPU has a SIMD ISA

perf_counter = time.perf_counter


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


# -------------------------------------------------------------------------------- timing

def measure(call: Callable[[], object], target: float, reps: int,
            first: Optional[float] = None) -> Dict[str, object]:
    """Times `call` (seconds per call): an autorange warm-up that finds how many calls last
    ~target/4 s, then `reps` repetitions looping the call for ~target s each. `first` is the
    time of the caller's first call, if it made one; otherwise the first call is timed here."""
    if first is None:
        t0 = perf_counter()
        call()
        first = perf_counter() - t0
    loops = 1
    while True:  # warm-up and calibration
        t0 = perf_counter()
        for _ in range(loops):
            call()
        elapsed = perf_counter() - t0
        if elapsed >= target / 4 or elapsed >= 1.0:
            break
        loops *= max(2, min(10, int(target / 4 / max(elapsed, 1e-9)) + 1))
    per_call = elapsed / loops
    loops = max(1, int(round(target / max(per_call, 1e-9))))
    times = []
    for _ in range(reps):
        t0 = perf_counter()
        for _ in range(loops):
            call()
        times.append((perf_counter() - t0) / loops)
    return {"first_s": first, "times_s": times, "loops": loops,
            "best_s": min(times), "median_s": statistics.median(times)}


# -------------------------------------------------------------------------------- libraries

def _version(lib: str) -> str:
    if lib == "blis":
        try:
            from importlib.metadata import version
            return version("blis")
        except Exception:
            return "?"
    mod = sys.modules.get(MODULES[lib])
    return getattr(mod, "__version__", "?")


def _pools():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def cv2_build(text: str, optimized: bool) -> Dict[str, object]:
    """What the cv2 row reports about OpenCV, from cv2.getBuildInformation(): its parallel
    framework and SIMD (baseline and dispatched), which decide how fast its filters run. (A
    BLAS pool threadpoolctl finds is not OpenCV's filters', and may be NumPy's.)"""
    found: Dict[str, object] = {"optimized": bool(optimized)}
    keys = {"Parallel framework:": "parallel", "Baseline:": "baseline",
            "Dispatched code generation:": "dispatched"}
    for line in text.splitlines():
        head, sep, value = line.strip().partition(":")
        key = keys.get(head.strip() + ":")
        if sep and key and key not in found:
            found[key] = " ".join(value.split())
    return found


def setup_library(lib: str, threads: int) -> dict:
    """Imports numpy, then `lib`; gives `lib`'s pools `threads` threads (threadpoolctl and the
    library's own API) and every other pool in the process one (the reference checks use
    NumPy's BLAS in every worker). Returns what to report about it."""
    import numpy  # noqa: F401  (first, so the pools that `lib` adds can be told apart)

    before = _pools()
    before_paths = {lc.filepath for lc in before.lib_controllers} if before else set()
    if lib != "numpy":
        __import__("scipy.linalg.blas" if lib == "scipy" else
                   "blis.py" if lib == "blis" else MODULES[lib])
    info: Dict[str, object] = {"lib": lib, "version": _version(lib), "threads": threads}
    pools = _pools()
    if pools is None:
        info["pools_note"] = "threadpoolctl is not installed: pools set through the environment only"
        own = []
    else:
        # tilegen is always loaded (this module is part of it); numpy's pools are the ones
        # there before `lib` was imported; any other library's are the ones it added.
        own = [lc for lc in pools.lib_controllers
               if (lc.internal_api == "tilegen") == (lib == "tilegen")
               and (lib in ("tilegen", "numpy")) == (lc.filepath in before_paths)]
        for lc in pools.lib_controllers:
            if lc not in own:
                lc.set_num_threads(1)
        for lc in own:
            lc.set_num_threads(threads)
    if lib == "tilegen":
        import tilegen
        tilegen.set_num_threads(threads)
        info["runtime"] = tilegen.runtime_info()
    elif lib == "torch":
        import torch
        torch.set_num_threads(threads)
        info["torch_threads"] = torch.get_num_threads()
        info["torch_config"] = torch.__config__.parallel_info().splitlines()[:6]
    elif lib == "cv2":
        import cv2
        cv2.setNumThreads(threads)
        info["cv2_threads"] = cv2.getNumThreads()
        info["cv2_build"] = cv2_build(cv2.getBuildInformation(), cv2.useOptimized())
    if pools is not None:
        info["pools"] = [lc.info() for lc in own]
        info["all_pools"] = _pools().info()
    return info


# -------------------------------------------------------------------------------- peak

def _probe_once(isa: str, dtype, iters: int, threads: int) -> Tuple[float, float]:
    """(flops, seconds) of `threads` concurrent probes (Python threads; the probe releases
    the GIL), from the first start to the last end."""
    from tilegen.core import _core

    if threads == 1:
        t0 = perf_counter()
        flops = _core.fma_probe(isa, dtype, iters)
        return flops, perf_counter() - t0
    barrier = threading.Barrier(threads)
    spans: List[Tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * threads

    def run(i: int) -> None:
        barrier.wait()
        t0 = perf_counter()
        f = _core.fma_probe(isa, dtype, iters)
        spans[i] = (t0, perf_counter(), f)

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(s[2] for s in spans), max(s[1] for s in spans) - min(s[0] for s in spans)


def measure_peak(isa: str, dtype: str, threads: int, target: float, reps: int) -> dict:
    """GFLOP/s of tilegen's FMA-throughput probe for one ISA and dtype on `threads` threads:
    iterations calibrated so one run lasts ~target s; best and median of `reps` runs."""
    import numpy as np

    dt = {"f32": np.float32, "f64": np.float64}.get(dtype, dtype)  # "bf16": dot products
    iters = 1 << 12
    while True:  # calibrate on one thread (also the warm-up)
        flops, secs = _probe_once(isa, dt, iters, 1)
        if secs >= target / 4 or iters >= 1 << 40:
            break
        iters *= 4
    iters = max(1, int(iters * target / max(secs, 1e-9)))
    rates = []
    for _ in range(reps):
        flops, secs = _probe_once(isa, dt, iters, threads)
        rates.append(flops / secs / 1e9)
    return {"isa": isa, "dtype": dtype, "threads": threads, "iters": iters,
            "best": max(rates), "median": statistics.median(rates), "all": rates}


def run_peak(spec: dict) -> None:
    import numpy as np  # noqa: F401
    import tilegen
    from tilegen.core import _core

    isas = [name for name, ok in _core.isas().items() if ok]
    if spec.get("skip_portable"):  # where a SIMD ISA exists, it is the machine's peak
        isas = [i for i in isas if i != PORTABLE_ISA] or isas
    retries = spec.get("retries", PEAK_RETRIES)
    emit({"event": "info", "lib": "tilegen", "version": tilegen.__version__,
          "runtime": tilegen.runtime_info(), "cpus": os.cpu_count(),
          "python": platform.python_version(), "platform": platform.platform(), "isas": isas})
    single: Dict[Tuple[str, str], float] = {}
    for threads in sorted(spec["threads"]):
        for isa in isas:
            for dtype in _core.probe_dtypes():
                emit({"event": "start", "case": f"{isa} {dtype} {threads}T"})
                try:
                    r = measure_peak(isa, dtype, threads, spec["target"], spec["reps"])
                except ValueError as e:  # an ISA without this dtype's probe
                    if dtype not in ("f32", "f64"):  # most ISAs have no dot product: no news
                        continue
                    emit({"isa": isa, "dtype": dtype, "threads": threads, "error": str(e),
                          "event": "peak"})
                    continue
                if threads == 1:
                    single[isa, dtype] = r["best"]
                # On a shared machine a neighbour may hold a core for a while: an N-thread
                # rate well under N x the 1-thread one is measured again (a few times, spaced)
                # and the runs pooled, so the best is taken from a moment the cores were free.
                r["retries"] = 0
                while (threads > 1 and (isa, dtype) in single and r["retries"] < retries
                       and r["best"] < 0.9 * threads * single[isa, dtype]):
                    time.sleep(0.3)
                    again = measure_peak(isa, dtype, threads, spec["target"], spec["reps"])
                    r["all"] += again["all"]
                    r["best"], r["median"] = max(r["all"]), statistics.median(r["all"])
                    r["retries"] += 1
                emit(dict(r, event="peak"))
    emit({"event": "done"})


# -------------------------------------------------------------------------------- bench

def run_case(lib: str, case, spec: dict) -> dict:
    """The result event of one case: its first call (timed, then checked against the op's
    independent reference) and its repetitions."""
    row = {"event": "result", "case": case.id, "lib": lib, "threads": spec["threads"]}
    try:
        op = op_module(op_of(case.id))
        operands = case.operands(seed=spec.get("seed", 0))
        call, to_numpy = op.make_call(lib, case, operands, spec["threads"])
        t0 = perf_counter()
        result = call()
        first = perf_counter() - t0
        problem = case.check(operands, to_numpy(result))
        if problem is not None:
            row["error"] = "wrong result: " + problem
        else:
            row.update(measure(call, spec["target"], reps_for(case, spec["reps"]), first))
            notes = getattr(op, "notes", None)
            if notes is not None:
                row["notes"] = list(notes(lib, case))
    except Exception as e:  # reported in the table; the other cases go on
        row["error"] = f"{type(e).__name__}: {' '.join(str(e).split())}"[:300]
    return row


def serve(spec: dict) -> None:
    """Sets `spec["lib"]` up, then measures each case id read from stdin, one per line. A case
    met again (a later round) says so: its first call is no longer the first."""
    lib = spec["lib"]
    emit(dict(setup_library(lib, spec["threads"]), event="info"))
    table = by_id()
    seen = set()
    for line in iter(sys.stdin.readline, ""):
        case = table[line.strip()]
        emit({"event": "start", "case": case.id})
        emit(dict(run_case(lib, case, spec), repeat=case.id in seen))
        seen.add(case.id)
    emit({"event": "done"})


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m tilegen.tools.bench_worker SPEC_JSON (started by `tilegen bench`)",
              file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    if spec["mode"] == "peak":
        run_peak(spec)
    else:
        serve(spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
