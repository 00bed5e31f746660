"""`tilegen tune`: measure each op's candidates on this machine and store the winners for the
next `import tilegen`.

The harness knows no op. Each op's tune plug-in (tilegen/ops/<op>/tune.py; the interface is in
tilegen/ops/plugins.py) names its knobs in order -- tiles, block sizes, methods, prefetch
distances, thresholds -- each with its candidates and a few representative cases. For each knob
the candidates (the built-in choice among them) take turns case by case over several rounds, on
one thread (the configuration is process-wide), with the earlier knobs' choices in force. The
spread of the built-in's own rounds is the noise; a candidate replaces the built-in only if its
geometric-mean rate beats the built-in's by more than that noise (and by at least MARGIN) and no
case is slower by as much. At the end of each op, the built-in and the chosen configuration are
measured once more on every case, interleaved, and printed side by side; the op's check() runs
under the chosen one before anything is stored. The cache (tilegen/tools/tuning.py) is keyed by
CPU, ISA and tilegen version.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

MARGIN = 0.03  # a candidate must beat the built-in by at least 3% (and by the noise measured)


@dataclass(frozen=True)
class Effort:
    """How hard to measure: seconds per repetition, repetitions per measurement, rounds."""

    target: float
    reps: int
    rounds: int


FULL = Effort(target=0.03, reps=5, rounds=2)
QUICK = Effort(target=0.008, reps=3, rounds=2)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from tilegen.ops import OPS

    p.add_argument("--op", default="all",
                   help="the op to tune, or all (default); ops with a tune plug-in: "
                        + ", ".join(n for n in OPS if os.path.isfile(OPS[n].path("tune.py"))))
    p.add_argument("--quick", action="store_true",
                   help="a short search on smaller cases (seconds per op)")
    p.add_argument("--dry-run", action="store_true", help="search and print, but write no cache")
    p.add_argument("--reset", action="store_true",
                   help="delete this machine's tuning cache and exit (tilegen's built-in choices return)")


def _gmean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


class Search:
    """One op's search, in this process."""

    def __init__(self, op: str, hook, effort: Effort, out=None):
        self.op, self.hook, self.effort = op, hook, effort
        self.out = out or sys.stdout
        self.calls: Dict[Any, Any] = {}  # TuneCase -> its timed call (operands built once)

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def rate(self, case) -> float:
        from .bench_worker import measure

        if case not in self.calls:
            self.calls[case] = case.make()
        r = measure(self.calls[case], self.effort.target, self.effort.reps)
        return case.work / r["best_s"] / 1e9

    def rates(self, knob, values: Sequence[Any]) -> Tuple[List[Dict[Any, float]], float]:
        """Best rate of every case under each value (values[0] is the built-in, None), the
        values taking turns case by case, round after round in a rotating order; and the
        noise: the built-in's spread from round to round (relative)."""
        best: List[Dict[Any, float]] = [{} for _ in values]
        builtin_rounds = []
        for rnd in range(self.effort.rounds):
            order = list(range(len(values)))
            order = order[rnd % len(order):] + order[:rnd % len(order)]
            this_round = {}
            for case in knob.cases:
                for i in order:
                    knob.apply(values[i])
                    r = self.rate(case)
                    best[i][case] = max(best[i].get(case, 0.0), r)
                    if i == 0:
                        this_round[case] = r
            builtin_rounds.append(_gmean(list(this_round.values())))
        knob.apply(None)
        noise = (max(builtin_rounds) / min(builtin_rounds) - 1) if builtin_rounds else 0.0
        return best, noise

    def search(self, knob, chosen: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
        """The knob's value (None: the built-in one) and what was measured."""
        values = [None] + [v for v in dict.fromkeys(knob.candidates(chosen)) if v is not None]
        show = lambda v: knob.builtin_label or "built-in" if v is None else knob.show(v)  # noqa: E731
        if len(values) < 2 or not knob.cases:
            return None, {}
        best, noise = self.rates(knob, values)
        threshold = max(MARGIN, noise)
        scores = [_gmean(list(b.values())) for b in best]
        base = scores[0]
        pick = None
        for i in sorted(range(1, len(values)), key=lambda i: -scores[i]):
            faster = scores[i] > base * (1 + threshold)
            no_loss = all(best[i][c] >= best[0][c] * (1 - threshold) for c in knob.cases)
            if faster and no_loss:
                pick = values[i]
                break
        unit = knob.cases[0].unit
        self.say(f"  {knob.label}, {unit} (geometric mean of {len(knob.cases)} case"
                 f"{'s' if len(knob.cases) > 1 else ''}, best of {self.effort.rounds} "
                 f"interleaved rounds; noise {100 * noise:.1f}%):")
        self.say("    " + ", ".join(f"{show(v)} {s:.1f}" for v, s in zip(values, scores)))
        gain = f" (+{100 * (scores[values.index(pick)] / base - 1):.1f}%)" if pick is not None else ""
        self.say(f"    -> {show(pick)}{gain}")
        measured = {show(v): round(s, 2) for v, s in zip(values, scores)}
        return pick, {"rates": measured, "noise": round(noise, 4), "chosen": show(pick)}

    def before_after(self, knobs, chosen: Dict[str, Any]) -> Dict[str, Dict[str, float]]:
        """Every case of the op under the built-in and the chosen configuration, interleaved
        (when nothing beat the built-in, its rates alone: the same configuration measured
        twice would show only noise)."""
        cases = list(dict.fromkeys(c for k in knobs for c in k.cases))
        entry = {k: v for k, v in chosen.items() if v is not None}
        configs = (("before", {}), ("after", entry)) if entry else (("before", {}),)
        out: Dict[str, Dict[str, float]] = {"before": {}, "after": {}}
        for _ in range(self.effort.rounds):
            for case in cases:
                for name, values in configs:
                    self.hook.apply(values)
                    r = self.rate(case)
                    out[name][case.label] = round(max(out[name].get(case.label, 0.0), r), 2)
        self.hook.apply(entry)
        width = max((len(c.label) for c in cases), default=10)
        if not entry:
            out["after"] = dict(out["before"])
            self.say(f"  {self.op}: the built-in configuration, best of {self.effort.rounds} "
                     f"rounds:")
            for case in cases:
                self.say(f"    {case.label:<{width}}  {out['before'][case.label]:8.1f} {case.unit}")
            return out
        self.say(f"  {self.op}: built-in -> tuned, best of {self.effort.rounds} interleaved rounds:")
        for case in cases:
            b, a = out["before"][case.label], out["after"][case.label]
            self.say(f"    {case.label:<{width}}  {b:8.1f} -> {a:8.1f} {case.unit}  "
                     f"({100 * (a / b - 1):+.1f}%)")
        return out

    def run(self, quick: bool) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """(the op's cache entry: the knobs that beat the built-in, what was measured)."""
        self.hook.apply({})
        knobs = self.hook.knobs(quick)
        chosen: Dict[str, Any] = {}
        measured: Dict[str, Any] = {"knobs": {}}
        for knob in knobs:
            value, m = self.search(knob, chosen)
            chosen[knob.key] = value
            knob.apply(value)
            if m:
                measured["knobs"][knob.key] = m
        entry = {k: v for k, v in chosen.items() if v is not None}
        self.hook.apply(entry)
        check = getattr(self.hook, "check", None)
        if check is not None:
            check()  # RuntimeError: the chosen configuration computes wrong answers
        if knobs:
            measured.update(self.before_after(knobs, chosen))
        self.say(f"  {self.op}: chosen " + (", ".join(f"{k} = {v}" for k, v in entry.items())
                                             or "the built-in configuration"))
        return entry, measured


def run(args) -> int:
    from . import tuning

    if args.reset:
        path = tuning.cache_path()
        if os.path.isfile(path):
            os.remove(path)
            print(f"removed {path}")
        else:
            print(f"no tuning cache at {path}")
        return 0
    import tilegen
    from tilegen.core import _core

    hooks = tuning.plugins()
    if args.op != "all" and args.op not in hooks:
        raise ValueError(f"--op: {args.op!r} has no tune plug-in; allowed: all, "
                         f"{', '.join(hooks)}")
    chosen_ops = list(hooks) if args.op == "all" else [args.op]
    effort = QUICK if args.quick else FULL
    key = tuning.cpu_key()
    isa = tuning.isa_in_use()
    print(f"tilegen tune{' --quick' if args.quick else ''} --op {args.op}: {key['brand']} "
          f"({key['arch']}), ISA {isa}, tilegen {tilegen.__version__}, 1 thread; cache "
          f"{tuning.cache_path()}", flush=True)
    st = tuning.status()
    if st["status"] in ("applied", "ignored"):
        print(f"  (the cache in force at import was {st['status']}; starting from the built-in "
              f"configuration)")
    tuning.restore_builtins()
    threads = _core.get_num_threads()
    _core.set_num_threads(1)
    t0 = time.monotonic()
    entry: Dict[str, Any] = {"ops": {}, "measured": {}}
    try:
        for op in chosen_ops:
            t_op = time.monotonic()
            print(f"{op}:", flush=True)
            values, measured = Search(op, hooks[op], effort).run(args.quick)
            entry["ops"][op] = values
            entry["measured"][op] = measured
            print(f"  ({time.monotonic() - t_op:.0f} s)", flush=True)
    except RuntimeError as e:  # the chosen configuration failed its correctness check
        print(f"tilegen: error: {e}", file=sys.stderr)
        return 1
    finally:
        _core.set_num_threads(threads)
    print(f"tuned in {time.monotonic() - t0:.0f} s")
    if args.dry_run:
        print("--dry-run: no cache written; this process keeps the tuned configuration")
        return 0
    path = tuning.write({isa: entry})
    print(f"wrote {path}: the next `import tilegen` applies it (TILEGEN_TUNING=off ignores it)")
    return 0


def tuned(op: str) -> Optional[Dict[str, Any]]:
    """The values the cache in force gave `op` (for reports), or None."""
    from . import tuning

    st = tuning.status()
    if st.get("status") != "applied":
        return None
    try:
        doc = tuning.load(st["file"])
    except (tuning.CacheError, OSError):
        return None
    return doc["isa"].get(st.get("isa", ""), {}).get("ops", {}).get(op)
