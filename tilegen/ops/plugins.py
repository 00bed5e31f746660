"""The interfaces of an op's plug-ins, and helpers they share.

Bench plug-ins: each op's bench.py (`tilegen bench --op NAME`; a model's, such as
tilegen/models/bert.py, works the same), found by tilegen/tools/benchcases.py. The harness
(tilegen/tools/bench.py, bench_worker.py) knows no op; each plug-in defines

    NAME                      the op name (``--op`` value)
    LIBS                      libraries that run it, tilegen first (bench_worker.LIBS names)
    RATIO_VS                  the peers tilegen is compared with: the ratio column is the best
                              time of those present divided by tilegen's (>1: tilegen faster)
    UNIT, UNIT_SCALE          the rate reported: work / seconds / UNIT_SCALE ("GFLOP/s", 1e9);
                              % of the machine's FMA peak is shown only when UNIT is GFLOP/s
    cases(quick)              the case list (quick: a few small ones, the CI harness check)
    make_call(lib, case, operands, threads)
                              (call, to_numpy): the timed zero-argument call of `lib` on
                              `operands`, and how to turn its return value into a NumPy array;
                              everything else (layout conversions, sessions) prepared here
    shape_note()              lines explaining the case labels
    SHOWS (optional)          ops whose dispatch choice the report shows (default: NAME)
    SUMMARY (optional)        what it measures, one line for `tilegen bench --help` (default:
                              the op's op.yaml summary; a model, which has no op.yaml, sets it)
    ratio_cases(case) (optional)
                              ids of the cases whose RATIO_VS peers tilegen's row of `case` is
                              compared with (default: `case` alone), e.g. one layer in every
                              layout, so tilegen meets each peer at its best
    PLOT_XLABEL (optional)    the --plot x axis, for the cases whose ``size`` is set
    notes(lib, case) (optional)
                              lines on what a case's repetitions used besides time (e.g. the
                              peak memory of a cluster's workers), asked once they are done;
                              shown under the table and kept in the JSON's rows

and its cases are frozen objects with ``id`` (unique across ops: an op prefixes it with its name,
except the first op's own), ``label``, ``group``, ``dtype`` (a key of the peak table: f32 | f64),
``work`` (flops, or bytes for a bandwidth op), ``size`` (an int for the plot's x axis, or None),
``runs_on(lib)``, ``operands(seed)`` (a tuple), ``check(operands, result)`` (None or what is
wrong, against an independent reference) and ``as_dict()`` (``case_dict`` below). Pure Python plus NumPy: nothing here
imports the compiled core, so the CLI lists cases without loading it.

Tune plug-ins: each op's tune.py (`tilegen tune --op NAME`), run by tilegen/tools/tune.py, which
knows no op. It defines

    apply(values)             make `values` (the op's cache entry: knob key -> value) this
                              process's configuration, every key left out at its built-in
                              value; ValueError for an unknown key or a value this build
                              cannot take (`import tilegen` then ignores the cache, warning)
    knobs(quick)              the Knobs to search, in order (below): each later knob is
                              searched with the earlier ones' choices in force
    check() (optional)        raise RuntimeError if the configuration in force computes wrong
                              answers (run before anything is stored)

The harness times each knob's candidates in interleaved rounds on the knob's cases, measures
its own noise (the spread of the built-in's rounds) and keeps a candidate only if it beats the
built-in by more than that noise (and 3%) without slowing any case by as much.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Sequence


@dataclass(frozen=True)
class TuneCase:
    """A representative call: `make()` builds its operands and returns the timed zero-argument
    call; the rate is work / seconds / 1e9 in `unit` (GFLOP/s, GB/s)."""

    label: str
    work: float
    make: Callable[[], Callable[[], object]]
    unit: str = "GFLOP/s"


@dataclass(frozen=True)
class Knob:
    """One choice an op leaves to the machine (a tile, a block size, a method, a prefetch
    distance...): stored under `key` in the op's cache entry. `candidates(chosen)` gives the
    values to try given the earlier knobs' choices (a dict key -> value, None for built-in);
    None, the built-in, is always tried too. `apply(value)` puts one value in force in this
    process (None: the built-in)."""

    key: str
    label: str
    candidates: Callable[[Dict[str, Any]], Sequence[Any]]
    apply: Callable[[Any], None]
    cases: Sequence[TuneCase]
    show: Callable[[Any], str] = field(default=str)
    builtin_label: Optional[str] = None  # how the built-in value is shown ("built-in")

LINE_OFFSET = 16  # bytes from a 64-byte boundary to the start of every operand


def placed(x, offset: int = LINE_OFFSET):
    """A C-ordered copy of NumPy array x whose data starts `offset` bytes past a 64-byte
    boundary: where an array starts changes in-place reads by up to 2x, so bench operands fix
    it (NumPy's large arrays usually start 16 bytes past a line) instead of leaving it to the
    allocator of each worker process."""
    import numpy as np

    buf = np.empty(x.nbytes + 128, np.uint8)
    start = -buf.ctypes.data % 64 + offset
    view = buf[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    view[...] = x
    return view


def case_dict(case) -> dict:
    """A case's record in the bench's JSON: its dataclass fields plus id, label, work, size,
    and flops where the op counts them."""
    from dataclasses import asdict

    d = asdict(case)
    d.update(id=case.id, label=case.label, work=case.work, size=case.size)
    if hasattr(case, "flops"):
        d["flops"] = case.flops
    return d
