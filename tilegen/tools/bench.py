"""Benchmark tilegen against its peers: rates, share of the machine's peak, ratios.

`tilegen bench --op OP` runs tilegen side by side with the installed libraries that run OP (each
op's plug-in, tilegen/ops/<op>/bench.py, names its peers, cases and calls) and reports the rate (GFLOP/s for most ops), % of the machine's measured
FMA peak and tilegen's ratio to the fastest reference peer.

Every (library, thread count) pair is measured in its own worker process (tools/bench_worker.py)
whose environment has the thread counts set before import and OPENBLAS_CORETYPE /
OPENBLAS_L2_SIZE removed (this process's own environment is never changed). The workers of one
thread count stay alive side by side and take turns case by case (and round by round), so the
ratios compare libraries measured within seconds of each other. The peak comes from
tilegen's FMA-throughput probe, run in a worker too, on 1 and on N concurrent threads. This
module itself imports neither NumPy nor the compiled core.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

from . import benchcases
from .bench_worker import LIBS, MODULES, PEAK_RETRIES, SINGLE_THREADED

REMOVED_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TILEGEN_NUM_THREADS")
JSON_SCHEMA = 1
SETTLE_S = 0.2  # between two libraries' turns on N threads: the last one's pool goes to sleep
QUICK_SETTLE_S = 0.05  # the same under --quick, which checks the harness rather than measures
RATIO_ABBREV = {"numpy": "np", "torch": "pt", "onnxruntime": "ort"}  # ratio column heads
# A cell is flagged unreliable when its repetitions disagree this much (median / best) or when it
# claims more than the FMA probe's peak: either means the machine was busy while it ran.
UNRELIABLE_SPREAD = 2.0
UNRELIABLE_PCT_PEAK = 100.0
UNRELIABLE_MARK = "!"


class BenchError(Exception):
    """A problem with the run itself (a worker that cannot start); exit code 1."""


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def installed(lib: str) -> bool:
    if lib in ("tilegen", "numpy", "memread"):
        return True
    try:
        return importlib.util.find_spec(MODULES.get(lib, lib)) is not None
    except (ImportError, ValueError):
        return False


# -------------------------------------------------------------------------------- options

def _thread_counts(text: str) -> List[int]:
    try:
        counts = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        counts = []
    if not counts or any(c < 1 or c > 4096 for c in counts):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a thread count or comma-separated list of them (e.g. 1 or 1,2)")
    return list(dict.fromkeys(counts))


def _lib_list(text: str) -> List[str]:
    libs = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [lib for lib in libs if lib not in LIBS]
    if not libs or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown library {', '.join(unknown) or repr(text)}; allowed: {', '.join(LIBS)}")
    return list(dict.fromkeys(libs))


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
        return value
    return parse


def add_arguments(p: argparse.ArgumentParser) -> None:
    first = next(iter(benchcases.OPS))
    p.add_argument("--op", choices=list(benchcases.OPS), default=first,
                   help=f"what to measure (default {first}): " + "; ".join(
                       f"{op}: {benchcases.summary(op)}" for op in benchcases.OPS))
    p.add_argument("--quick", action="store_true",
                   help="a few small cases with short repetitions and a shorter peak probe "
                        "(~15 s; checks the harness)")
    p.add_argument("--threads", type=_thread_counts, metavar="N[,N...]",
                   help=f"thread counts to measure (default: 1 and this machine's {cpu_count()})")
    p.add_argument("--libs", type=_lib_list, metavar="LIB[,LIB...]",
                   help="libraries to measure (default: every installed one that runs the op; "
                        + "; ".join(f"{op}: {', '.join(m.LIBS)}" for op, m in benchcases.OPS.items())
                        + ")")
    p.add_argument("--cases", type=lambda t: [x for x in t.split(",") if x], metavar="TEXT[,TEXT...]",
                   help="only the cases whose id contains one of these texts, e.g. "
                        "'bf16-,f32-1024x1024x1024' (ids are in the JSON and --list-cases)")
    p.add_argument("--list-cases", action="store_true", help="print the op's case ids and exit")
    p.add_argument("--json", metavar="FILE", help="write every raw result to FILE")
    p.add_argument("--plot", metavar="FILE",
                   help="draw the rate against size for the cases that have one, e.g. a product's "
                        "squares (needs matplotlib)")
    p.add_argument("--peak", action="store_true",
                   help="only measure and print the FMA peak per usable ISA and dtype")
    p.add_argument("--reps", type=_positive(int), help="repetitions per case (default 7, 3 with --quick; "
                   "fewer for products over 4 GFLOP)")
    p.add_argument("--target", type=_positive(float), metavar="SECONDS",
                   help="length of one repetition (default 0.05, 0.005 with --quick)")
    p.add_argument("--rounds", type=_positive(int), default=1,
                   help="measure every case this many times, the libraries taking turns, and pool "
                        "the repetitions (helps on a noisy machine; default 1)")


def run(args) -> int:
    threads = args.threads or list(dict.fromkeys([1, cpu_count()]))
    op = benchcases.op_module(args.op)
    if args.libs:
        foreign = [lib for lib in args.libs if lib not in op.LIBS]
        if foreign:
            raise ValueError(f"libs: {', '.join(foreign)} cannot run {args.op}; "
                             f"allowed: {', '.join(op.LIBS)}")
        missing = [lib for lib in args.libs if not installed(lib)]
        if missing:
            raise ValueError(f"libs: {', '.join(missing)} not installed")
        libs = sorted(args.libs, key=LIBS.index)
    else:
        libs = [lib for lib in op.LIBS if installed(lib)]
    for name in ("json", "plot"):
        path = getattr(args, name)
        if path is not None:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise ValueError(f"--{name}: folder {folder} does not exist")
    if args.plot is not None and importlib.util.find_spec("matplotlib") is None:
        raise ValueError("--plot needs matplotlib: pip install 'tilegen[bench]' (or matplotlib)")
    reps = args.reps or (3 if args.quick else 7)
    target = args.target or (0.005 if args.quick else 0.05)
    cases = benchcases.cases(args.op, quick=args.quick)
    if getattr(args, "cases", None):
        cases = [c for c in cases if any(t in c.id for t in args.cases)]
        if not cases:
            raise ValueError(f"cases: no {args.op} case id contains {', '.join(args.cases)} "
                             f"(tilegen bench --op {args.op} --list-cases)")
    if getattr(args, "list_cases", False):
        print("\n".join(c.id for c in cases))
        return 0

    bench = Bench(args.op, threads, libs, cases, reps, target, args.rounds, peak_only=args.peak,
                  peak_target=0.01 if args.quick else 0.05, peak_reps=3 if args.quick else 5,
                  quick=args.quick)
    try:
        report = bench.run()
    except KeyboardInterrupt:
        bench.progress.close()
        print("tilegen: interrupted", file=sys.stderr)
        return 130
    report["command"] = command_line(args, threads, libs)
    if args.peak:
        print(format_peaks(report))
    else:
        print(format_report(report))
    if args.json is not None:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        print(f"raw results: {args.json}")
    if args.plot is not None:
        plot(report, args.plot)
        print(f"plot: {args.plot}")
    failed = [r for r in report["results"] if r.get("error")]
    return 1 if failed or report.get("errors") else 0


def command_line(args, threads: Sequence[int], libs: Sequence[str]) -> str:
    """The options this run used, spelled as a command (recorded in the JSON)."""
    parts = ["tilegen", "bench", "--op", args.op]
    parts += ["--quick"] if args.quick else []
    parts += ["--peak"] if args.peak else []
    parts += ["--cases", ",".join(args.cases)] if getattr(args, "cases", None) else []
    parts += ["--threads", ",".join(map(str, threads)), "--libs", ",".join(libs)]
    for name in ("reps", "target", "json", "plot"):
        if getattr(args, name) is not None:
            parts += [f"--{name}", str(getattr(args, name))]
    if args.rounds != 1:
        parts += ["--rounds", str(args.rounds)]
    return " ".join(parts)


# -------------------------------------------------------------------------------- progress

class Progress:
    """A one-line progress bar on stderr when it is a terminal; otherwise a line per worker."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.stream = max(total, 1), 0, stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self.shown = False

    def section(self, text: str) -> None:
        if not self.tty:
            self.stream.write(f"bench: {text}\n")
            self.stream.flush()

    def update(self, label: str, step: int = 0) -> None:
        self.done = min(self.total, self.done + step)
        if not self.tty:
            return
        width = shutil.get_terminal_size((80, 20)).columns
        bar_w = 24
        fill = int(bar_w * self.done / self.total)
        head = (f"[{'#' * fill}{'-' * (bar_w - fill)}] {self.done}/{self.total} "
                f"{time.monotonic() - self.t0:5.0f}s ")
        line = (head + label)[: max(width - 1, 10)]
        self.stream.write("\r" + line.ljust(max(width - 1, 10)))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.tty and self.shown:
            width = shutil.get_terminal_size((80, 20)).columns
            self.stream.write("\r" + " " * max(width - 1, 10) + "\r")
            self.stream.flush()
            self.shown = False


# -------------------------------------------------------------------------------- running

def worker_env(threads: int) -> Tuple[Dict[str, str], List[str]]:
    """The environment of a worker: thread counts set before import, OpenBLAS kernel overrides
    removed. Returns it and the names removed (this process's environment is left alone)."""
    env = dict(os.environ)
    removed = [name for name in REMOVED_ENV if name in env]
    for name in removed:
        del env[name]
    for name in THREAD_ENV:
        env[name] = str(threads)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env, removed


class Worker:
    """A bench_worker process: JSON events on its stdout, case ids on its stdin; its stderr
    goes to a temporary file (read when it fails)."""

    def __init__(self, spec: dict, env: Dict[str, str], label: str, progress: "Progress"):
        self.label, self.progress = label, progress
        # (three levels up from tools/bench.py: not the package's own folder, where its
        # subpackages, tilegen/dask say, would shadow the top-level modules of their names)
        pkg_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        cmd = [sys.executable, "-m", "tilegen.tools.bench_worker", json.dumps(spec)]
        self.err = tempfile.TemporaryFile(mode="w+")
        # The worker runs from the folder holding this tilegen, so `-m` imports this same one.
        self.proc = subprocess.Popen(cmd, cwd=pkg_parent, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True)

    def _error(self, code: int) -> BenchError:
        self.err.seek(0)
        tail = " ".join(self.err.read().strip().splitlines()[-1:]) or f"exit code {code}"
        return BenchError(f"{self.label}: worker failed ({tail})")

    def _failure(self) -> BenchError:
        self.kill()
        return self._error(self.proc.returncode)

    def events(self):
        """The worker's JSON events, until its stdout closes."""
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "start":
                self.progress.update(f"{self.label} {event['case']}")
            yield event

    def next_event(self, kind: str) -> dict:
        for event in self.events():
            if event.get("event") == kind:
                return event
        raise self._failure()

    def measure(self, case_id: str) -> dict:
        """The result event of one case."""
        try:
            self.proc.stdin.write(case_id + "\n")
            self.proc.stdin.flush()
        except OSError:
            raise self._failure() from None
        return self.next_event("result")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def close(self, check: bool = True) -> None:
        """Ends the worker (stdin closed: it finishes); BenchError if it failed."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        for _ in self.events():
            pass
        code = self.proc.wait()
        try:
            if check and code != 0:
                raise self._error(code)
        finally:
            self.err.close()


class Bench:
    def __init__(self, op: str, threads: Sequence[int], libs: Sequence[str], cases, reps: int,
                 target: float, rounds: int, *, peak_only: bool = False,
                 peak_target: float = 0.05, peak_reps: int = 5, quick: bool = False):
        self.op, self.threads, self.libs = op, list(threads), list(libs)
        self.cases = list(cases)
        self.reps, self.target, self.rounds = reps, target, rounds
        self.peak_only, self.peak_target, self.peak_reps = peak_only, peak_target, peak_reps
        # --quick (without --peak): the peak once, before the cases, with one retry at most
        # and without the portable ISA's probe (never the machine's peak where SIMD exists);
        # shorter pauses between libraries. About a third of the time of a full pass.
        self.quick = quick and not peak_only
        self.settle = QUICK_SETTLE_S if self.quick else SETTLE_S
        peak_steps = len(self.threads) * 6 * (1 if peak_only or self.quick else 2)  # ~3 ISAs x 2 dtypes
        timed = 0 if peak_only else rounds * sum(
            len(self.turns(t, c, 0)) for t in self.threads for c in self.cases)
        self.progress = Progress(peak_steps + timed)
        self.removed: List[str] = []

    def turns(self, threads: int, case, rnd: int) -> List[str]:
        """The libraries that measure `case` on `threads` threads, in round `rnd`'s order (the
        order rotates, so no library is always the first after a pause or a neighbour)."""
        libs = [lib for lib in self.libs
                if (threads == 1 or lib not in SINGLE_THREADED) and case.runs_on(lib)]
        k = rnd % len(libs) if libs else 0
        return libs[k:] + libs[:k]

    def _worker(self, spec: dict, threads: int, label: str) -> "Worker":
        env, self.removed = worker_env(threads)
        return Worker(spec, env, label, self.progress)

    def _events(self, spec: dict, threads: int, label: str):
        """Runs a worker to its end with nothing on stdin; yields its JSON events."""
        worker = self._worker(spec, threads, label)
        try:
            yield from worker.events()
        except BaseException:
            worker.kill()
            raise
        worker.close()

    def measure_peaks(self, peaks: dict, when: str) -> dict:
        """Runs the probe worker and pools its runs into `peaks` (thread count -> ISA ->
        dtype); returns the worker's info event. Measured before and after the libraries, so
        a neighbour that held a core during one pass does not set the peak."""
        spec = {"mode": "peak", "threads": self.threads, "target": self.peak_target,
                "reps": self.peak_reps}
        if self.quick:
            spec.update(retries=1, skip_portable=True)
        self.progress.section(f"FMA peak on {', '.join(map(str, self.threads))} thread(s), {when}")
        info = {}
        for event in self._events(spec, 1, f"peak ({when})"):
            if event["event"] == "info":
                info = event
            elif event["event"] == "peak":
                self.progress.update(f"peak {event['isa']} {event['dtype']} {event['threads']}T", 1)
                if "error" not in event:
                    slot = peaks.setdefault(str(event["threads"]), {}).setdefault(event["isa"], {})
                    r = slot.setdefault(event["dtype"], {"all": [], "iters": event["iters"],
                                                         "retries": 0})
                    r["all"] += event["all"]
                    r["retries"] += event.get("retries", 0)
                    r["best"], r["median"] = max(r["all"]), statistics.median(r["all"])
        return info

    def measure_cases(self, threads: int, report: dict, raw: dict) -> None:
        """Every case on `threads` threads: one live worker per library, taking turns."""
        self.progress.section(f"{threads} thread(s): {', '.join(self.libs)} taking turns, "
                              f"{len(self.cases)} cases x {self.rounds} round(s)")
        workers: Dict[str, Worker] = {}
        failed: Dict[str, str] = {}  # library -> why its worker is gone
        try:
            # All start at once (their imports overlap), then each reports its library.
            for lib in self.libs:
                if threads > 1 and lib in SINGLE_THREADED:
                    continue
                spec = {"mode": "serve", "lib": lib, "threads": threads, "reps": self.reps,
                        "target": self.target}
                workers[lib] = self._worker(spec, threads, f"{lib} {threads}T")
            for lib in list(workers):
                try:
                    info = workers[lib].next_event("info")
                except BenchError as e:
                    report["errors"].append(str(e))
                    failed[lib] = str(e)
                    workers.pop(lib, None)
                    continue
                info.pop("event")
                report["libraries"].setdefault(lib, {})[str(threads)] = info
            last = None
            for case in self.cases:
                for rnd in range(self.rounds):
                    for lib in self.turns(threads, case, rnd):
                        label = f"{lib} {threads}T {case.id}"
                        if lib not in workers:
                            result = {"case": case.id, "lib": lib, "threads": threads,
                                      "error": failed.get(lib, "no worker")}
                        else:
                            if threads > 1 and last not in (None, lib):
                                time.sleep(self.settle)
                            last = lib
                            try:
                                result = workers[lib].measure(case.id)
                            except BenchError as e:
                                report["errors"].append(str(e))
                                failed[lib] = str(e)
                                workers.pop(lib).close(check=False)
                                result = {"case": case.id, "lib": lib, "threads": threads,
                                          "error": str(e)}
                        self.progress.update(label, 1)
                        raw.setdefault((case.id, lib, threads), []).append(result)
        except BaseException:
            for w in workers.values():
                w.kill()
            raise
        for w in workers.values():
            try:
                w.close()
            except BenchError as e:
                report["errors"].append(str(e))

    def run(self) -> dict:
        started = datetime.datetime.now(datetime.timezone.utc)
        t0 = time.monotonic()
        peaks: dict = {}
        info = self.measure_peaks(peaks, "before")
        op = benchcases.op_module(self.op)
        report = {
            "tilegen_bench": JSON_SCHEMA,
            "op": self.op, "unit": op.UNIT, "ratio_vs": list(op.RATIO_VS),
            "started": started.isoformat(timespec="seconds"),
            "threads": self.threads, "libs": self.libs, "reps": self.reps,
            "target_s": self.target, "rounds": self.rounds,
            "machine": machine_info(info),
            "peaks": peaks, "machine_peak": machine_peak(peaks),
            "libraries": {}, "cases": [c.as_dict() for c in self.cases], "results": [],
            "errors": [],
        }
        report["machine"]["env_removed_in_workers"] = list(self.removed)
        raw: Dict[Tuple[str, str, int], List[dict]] = {}
        for threads in ([] if self.peak_only else self.threads):
            self.measure_cases(threads, report, raw)
        if not self.peak_only and not self.quick:
            try:
                self.measure_peaks(peaks, "after")
            except BenchError as e:
                report["errors"].append(str(e))
        self.progress.close()
        report["machine_peak"] = machine_peak(peaks)
        report["peak_notes"] = peak_notes(report["machine_peak"])
        report["results"] = merge_results(raw, self.cases, report["machine_peak"], op)
        report["elapsed_s"] = round(time.monotonic() - t0, 1)
        return report


def machine_info(info: dict) -> dict:
    rt = info.get("runtime", {})
    return {
        "cpu_brand": rt.get("cpu_brand"), "arch": rt.get("arch") or platform.machine(),
        "cpus": cpu_count(), "python": info.get("python") or platform.python_version(),
        "platform": info.get("platform") or platform.platform(),
        "features_usable": rt.get("features", {}).get("os_enabled"),
        "isas_available": rt.get("isas_available"), "isa_cap": rt.get("isa_cap"),
        "tilegen_version": info.get("version"), "numpy_version": rt.get("numpy_version"),
        "tilegen_kernels": rt.get("kernels"), "tilegen_tuning": rt.get("tuning"),
    }


def machine_peak(peaks: dict) -> dict:
    """Per thread count and dtype: the best ISA's probe rate (the machine's peak)."""
    out: Dict[str, dict] = {}
    for threads, by_isa in peaks.items():
        for isa, by_dtype in by_isa.items():
            for dtype, r in by_dtype.items():
                cur = out.setdefault(threads, {}).get(dtype)
                if cur is None or r["best"] > cur["gflops"]:
                    out[threads][dtype] = {"gflops": r["best"], "isa": isa}
    return out


def peak_notes(mpeak: dict) -> List[str]:
    """Warnings for N-thread peaks well under N x the 1-thread peak: a core was busy elsewhere
    while the probe ran, so % of peak at that thread count is not to be trusted."""
    notes = []
    one = mpeak.get("1", {})
    for threads, by_dtype in mpeak.items():
        n = int(threads)
        for dtype, v in by_dtype.items():
            if n > 1 and dtype in one and v["gflops"] < 0.85 * n * one[dtype]["gflops"]:
                notes.append(f"the {n}-thread {dtype} peak ({_num(v['gflops'])} GFLOP/s) is "
                             f"{100 * v['gflops'] / (n * one[dtype]['gflops']):.0f}% of {n} x the "
                             f"1-thread peak: the cores were not all free while it was measured, "
                             f"so % of peak at {n} threads reads high")
    return notes


def merge_results(raw, cases, peak, op) -> List[dict]:
    """One row per (case, lib, threads): the repetitions of every round pooled, then the rate
    (op.UNIT: work / s / op.UNIT_SCALE), % of the machine's peak for that dtype and thread count
    (flop rates only), and tilegen's ratio to the fastest of the op's RATIO_VS peers."""
    rows = []
    work = {c.id: c.work for c in cases}
    dtype = {c.id: c.dtype for c in cases}
    for (case, lib, threads), runs in raw.items():
        ok = [r for r in runs if "times_s" in r]
        row = {"case": case, "lib": lib, "threads": threads}
        if not ok:
            row["error"] = next((r["error"] for r in runs if r.get("error")), "no result")
            rows.append(row)
            continue
        times = [t for r in ok for t in r["times_s"]]
        firsts = [r for r in ok if not r.get("repeat")] or ok  # a worker's first meeting
        best, median = min(times), statistics.median(times)
        row.update(best_s=best, median_s=median, first_s=min(r["first_s"] for r in firsts),
                   times_s=times, loops=[r["loops"] for r in ok],
                   rate_best=work[case] / best / op.UNIT_SCALE,
                   rate_median=work[case] / median / op.UNIT_SCALE)
        p = peak.get(str(threads), {}).get(dtype[case])
        if p and op.UNIT == "GFLOP/s":
            row["pct_peak"] = 100.0 * row["rate_best"] / p["gflops"]
        if len(ok) < len(runs):
            row["note"] = f"{len(runs) - len(ok)} of {len(runs)} rounds failed"
        notes = [n for r in ok for n in r.get("notes", [])]
        if notes:
            row["notes"] = list(dict.fromkeys(notes))
        row["unreliable"] = unreliable_reasons(row)
        rows.append(row)
    by_key = {(r["case"], r["lib"], r["threads"]): r for r in rows}
    ratio_cases = getattr(op, "ratio_cases", None)
    by_id = {c.id: c for c in cases}
    for r in rows:
        near = ratio_cases(by_id[r["case"]]) if ratio_cases and r["case"] in by_id else [r["case"]]
        peers = [by_key.get((c, lib, r["threads"])) for c in near for lib in op.RATIO_VS]
        peers = [p for p in peers if p and "best_s" in p]
        if r["lib"] == "tilegen" and peers and "best_s" in r:
            fastest = min(peers, key=lambda p: p["best_s"])
            r["ratio"] = fastest["best_s"] / r["best_s"]
            r["ratio_vs"] = fastest["lib"]
            r["ratio_case"] = fastest["case"]
            # A ratio is no better than the two cells it divides.
            r["ratio_unreliable"] = bool(r["unreliable"] or fastest["unreliable"])
    order = {c.id: i for i, c in enumerate(cases)}
    rows.sort(key=lambda r: (r["threads"], order.get(r["case"], 0), LIBS.index(r["lib"])))
    return rows


def unreliable_reasons(row: dict) -> List[str]:
    """Why a measured cell cannot be trusted (empty: nothing wrong seen): its best and median
    differ by more than UNRELIABLE_SPREAD, or it exceeds the FMA probe's peak."""
    why = []
    spread = row["median_s"] / row["best_s"]
    if spread > UNRELIABLE_SPREAD:
        why.append(f"the median is {_num(spread)}x the best (over {UNRELIABLE_SPREAD:g}x: the "
                   f"repetitions disagree)")
    if row.get("pct_peak", 0.0) > UNRELIABLE_PCT_PEAK:
        why.append(f"{row['pct_peak']:.0f}% of the FMA probe's peak (over "
                   f"{UNRELIABLE_PCT_PEAK:g}%)")
    return why


# -------------------------------------------------------------------------------- formatting

def _num(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _pool_text(info: dict) -> str:
    pools = info.get("pools")
    if pools is None:
        return info.get("pools_note", "")
    parts = []
    for p in pools:
        if p.get("internal_api") == "openblas":
            parts.append(f"OpenBLAS {p.get('version')} (architecture {p.get('architecture')}, "
                         f"internal_api {p.get('internal_api')}, {p.get('threading_layer')}, "
                         f"{p.get('num_threads')} threads)")
        elif p.get("internal_api") == "tilegen":
            parts.append(f"tilegen pool ({p.get('architecture')}, {p.get('num_threads')} threads)")
        else:
            parts.append(f"{p.get('internal_api')} {p.get('version') or ''} "
                         f"({p.get('num_threads')} threads)".replace("  ", " "))
    return "; ".join(parts) or "no BLAS/OpenMP pool (single-threaded)"


def cv2_text(info: dict) -> str:
    """OpenCV's side of the cv2 row: its version, parallel framework and threads, and SIMD."""
    b = info.get("cv2_build", {})
    return (f"OpenCV {info.get('version', '?')} (parallel framework "
            f"{b.get('parallel') or '?'}, cv2.getNumThreads() = {info.get('cv2_threads')}; "
            f"SIMD baseline {b.get('baseline') or 'none'}, dispatched "
            f"{b.get('dispatched') or 'none'}; cv2.useOptimized() = {b.get('optimized')})")


def format_library_lines(report: dict) -> List[str]:
    lines = []
    for lib in report["libs"]:
        by_threads = report["libraries"].get(lib, {})
        if not by_threads:
            lines.append(f"  {lib:<8} (no worker completed)")
            continue
        for threads, info in sorted(by_threads.items(), key=lambda kv: int(kv[0])):
            text = f"  {lib:<8} {info.get('version', '?'):<12} {threads}T: {_pool_text(info)}"
            if lib == "tilegen":
                kernels = info.get("runtime", {}).get("kernels", {})
                shown = getattr(benchcases.op_module(report["op"]), "SHOWS", (report["op"],))
                for op in shown:
                    for dtype, k in kernels.get(op, {}).items():
                        blocks = "".join(f" {b.upper()} {k[b]}" for b in ("kc", "nc") if b in k)
                        text += f"; {dtype} {k.get('kernel')}{blocks}"
                tuning = info.get("runtime", {}).get("tuning")
                if isinstance(tuning, dict):
                    text += f"; tuning: {tuning.get('status')}"
            elif lib == "torch":
                text += f"; torch.get_num_threads() = {info.get('torch_threads')}"
            elif lib == "cv2" and "cv2_build" in info:  # OpenCV's build, not a BLAS pool
                text = (f"  {lib:<8} {info.get('version', '?'):<12} {threads}T: "
                        f"{cv2_text(info)}")
            lines.append(text)
    for lib in SINGLE_THREADED:
        if lib in report["libs"] and any(t > 1 for t in report["threads"]):
            lines.append(f"  {lib}: measured on 1 thread only ({SINGLE_THREADED[lib]})")
    return lines


def format_peaks(report: dict) -> str:
    peaks = report["peaks"]
    threads = sorted(peaks, key=int)
    runs = sorted(len(r["all"]) for t in peaks.values() for d in t.values() for r in d.values())
    count = f"{runs[0]}" if runs and runs[0] == runs[-1] else f"{runs[0]}-{runs[-1]}" if runs else "0"
    lines = [f"FMA-throughput peak, GFLOP/s: tilegen's probe (independent FMA chains in registers,"
             f" one Python thread per core), best of {count} runs (median); an N-thread rate under"
             f" 90% of N x the 1-thread one is measured again, up to {PEAK_RETRIES} times"]
    head = f"{'isa':<8} {'dtype':<5}" + "".join(f"{t + ' thread' + ('s' if t != '1' else ''):>22}"
                                                for t in threads)
    lines.append(head)
    isas = list(dict.fromkeys(isa for t in threads for isa in peaks[t]))
    order = {d: i for i, d in enumerate(("f32", "f64"))}  # then the dot products, by name
    dtypes = sorted({d for t in threads for by in peaks[t].values() for d in by},
                    key=lambda d: (order.get(d, len(order)), d))
    width = max([8] + [len(i) for i in isas])
    lines[-1] = f"{'isa':<{width}} {'dtype':<5}" + head[len(f"{'isa':<8} {'dtype':<5}"):]
    for isa in isas:
        for dtype in dtypes:
            if not any(dtype in peaks[t].get(isa, {}) for t in threads):
                continue
            cells = []
            for t in threads:
                r = peaks[t].get(isa, {}).get(dtype)
                cells.append(f"{_num(r['best'])} ({_num(r['median'])})" if r else "-")
            lines.append(f"{isa:<{width}} {dtype:<5}" + "".join(f"{c:>22}" for c in cells))
    mp = report["machine_peak"]
    for t in threads:
        parts = [f"{d} {_num(mp[t][d]['gflops'])} ({mp[t][d]['isa']})"
                 for d in dtypes if d in mp.get(t, {})]
        lines.append(f"machine peak, {t} thread(s): " + ", ".join(parts))
    lines += [f"note: {n}" for n in report.get("peak_notes", [])]
    return "\n".join(lines)


def format_report(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"tilegen bench --op {report['op']}: {m.get('cpu_brand')}, {m.get('arch')}, "
        f"{m.get('cpus')} CPUs; Python {m.get('python')}; "
        f"{report['rounds']} round(s), {report['reps']} reps of ~{report['target_s']} s "
        f"(fewer for big products)",
        "workers: one process per library and thread count; removed from their environment: "
        + (", ".join(m.get("env_removed_in_workers") or []) or "nothing (OPENBLAS_CORETYPE, "
           "OPENBLAS_L2_SIZE not set)"),
        "libraries:",
    ]
    lines += format_library_lines(report)
    by_key = {(r["case"], r["lib"], r["threads"]): r for r in report["results"]}
    cases = report["cases"]
    libs = report["libs"]
    for threads in report["threads"]:
        peak = report["machine_peak"].get(str(threads), {})
        ptext = ", ".join(f"{d} {_num(v['gflops'])} GFLOP/s ({v['isa']})" for d, v in sorted(peak.items()))
        lines += ["", f"== {threads} thread{'s' if threads != 1 else ''}: peak {ptext} =="]
        cols = [lib for lib in libs if threads == 1 or lib not in SINGLE_THREADED]
        has_tg = "tilegen" in libs
        ratio_head = "tg/" + "|".join(RATIO_ABBREV.get(p, p) for p in report["ratio_vs"])
        label_w = max(len(c["label"]) for c in cases)
        cell_w = 21
        head = f"{'case':<{label_w}}" + (f"  {'tilegen time':>12}" if has_tg else "")
        head += "".join(f"  {lib:>{cell_w}}" for lib in cols)
        head += f"  {ratio_head:>6}  {'tg 1st/best':>11}" if has_tg else ""
        lines += [head, "-" * len(head)]
        for c in cases:
            row = f"{c['label']:<{label_w}}"
            tg = by_key.get((c["id"], "tilegen", threads), {})
            if has_tg:
                row += f"  {(_time(tg['best_s']) if 'best_s' in tg else '-'):>12}"
            for lib in cols:
                r = by_key.get((c["id"], lib, threads), {})
                if "best_s" in r:
                    cell = f"{_num(r['rate_best'])} ({_num(r['rate_median'])})"
                    if "pct_peak" in r:
                        cell += f" {r['pct_peak']:3.0f}%"
                    if r.get("unreliable"):
                        cell += UNRELIABLE_MARK
                elif r.get("error"):
                    cell = "WRONG" if r["error"].startswith("wrong result") else "error"
                else:
                    cell = "-"
                row += f"  {cell:>{cell_w}}"
            if has_tg:
                ratio = tg.get("ratio")
                mark = UNRELIABLE_MARK if tg.get("ratio_unreliable") else ""
                row += f"  {(f'{ratio:.2f}x{mark}' if ratio else '-'):>6}"
                first = (f"{tg['first_s'] / tg['best_s']:.1f}x" if "best_s" in tg else "-")
                row += f"  {first:>11}"
            lines.append(row)
    vs = report["ratio_vs"]
    peers = f"{vs[0]}'s best time" if len(vs) == 1 else f"the best time of {' or '.join(vs)}"
    lines += ["", f"cells: {report['unit']} best (median)"
              + (" and % of the machine's peak for the dtype and thread count"
                 if report["unit"] == "GFLOP/s" else "")
              + f"; {ratio_head}: {peers} / tilegen's (>1: tilegen faster); tg 1st/best: "
              "tilegen's first call of the case / its best"]
    lines += ["; ".join(benchcases.op_module(report["op"]).shape_note())]
    for r in report["results"]:
        for note in r.get("notes", []):
            lines.append(f"{r['lib']} {r['threads']}T {r['case']}: {note}")
    flagged = [r for r in report["results"] if r.get("unreliable")]
    if flagged:
        lines.append(f"{UNRELIABLE_MARK}: unreliable, {len(flagged)} cell(s) (and the ratios "
                     f"they enter): the machine was busy while they ran; run again, or pass "
                     f"--rounds 3")
        for r in flagged:
            lines.append(f"unreliable: {r['lib']} {r['threads']}T {r['case']}: "
                         + "; ".join(r["unreliable"]))
    errors = [r for r in report["results"] if r.get("error")]
    for r in errors:
        lines.append(f"error: {r['lib']} {r['threads']}T {r['case']}: {r['error']}")
    for e in report.get("errors", []):
        if not any(e == r.get("error") for r in errors):
            lines.append(f"error: {e}")
    lines += [f"note: {n}" for n in report.get("peak_notes", [])]
    lines.append(f"elapsed {report.get('elapsed_s', 0):.0f} s")
    return "\n".join(lines)


# -------------------------------------------------------------------------------- plot

def plotted_sizes(cases: Sequence[dict]) -> Dict[str, int]:
    """Case id -> x, for the plot's cases: the float32 ones with a size (one size per case)."""
    return {c["id"]: c["size"] for c in cases if c.get("size") and c["dtype"] == "f32"}


def plot(report: dict, path: str) -> None:
    """The rate against size for the f32 cases that have one: one panel per thread count, one
    line per library, the machine's f32 peak dashed (flop rates)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401  (matplotlib.ticker.ScalarFormatter below)

    op = benchcases.op_module(report["op"])
    sizes = plotted_sizes(report["cases"])
    threads = report["threads"]
    fig, axes = plt.subplots(1, len(threads), figsize=(6 * len(threads), 4.5), squeeze=False)
    for ax, t in zip(axes[0], threads):
        for lib in report["libs"]:
            pts = sorted((sizes[r["case"]], r["rate_best"]) for r in report["results"]
                         if r["lib"] == lib and r["threads"] == t and r["case"] in sizes
                         and "rate_best" in r)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=lib)
        peak = report["machine_peak"].get(str(t), {}).get("f32")
        if peak and report["unit"] == "GFLOP/s":
            ax.axhline(peak["gflops"], linestyle="--", color="gray",
                       label=f"f32 peak ({peak['isa']} probe)")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel(getattr(op, "PLOT_XLABEL", "size (float32)"))
        ax.set_ylabel(f"{report['unit']} (best)")
        ax.set_title(f"{t} thread{'s' if t != 1 else ''}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"tilegen bench --op {report['op']}: {report['machine'].get('cpu_brand')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
