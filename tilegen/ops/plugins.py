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
    ratio_cases(case) (optional)
                              ids of the cases whose RATIO_VS peers tilegen's row of `case` is
                              compared with (default: `case` alone), e.g. one layer in every
                              layout, so tilegen meets each peer at its best
    PLOT_XLABEL (optional)    the --plot x axis, for the cases whose ``size`` is set

and its cases are frozen objects with ``id`` (unique across ops: ops other than gemm prefix it
with their name), ``label``, ``group``, ``dtype`` (a key of the peak table: f32 | f64),
``work`` (flops, or bytes for a bandwidth op), ``size`` (an int for the plot's x axis, or None),
``runs_on(lib)``, ``operands(seed)`` (a tuple), ``check(operands, result)`` (None or what is
wrong, against an independent reference) and ``as_dict()`` (``case_dict`` below). Pure Python plus NumPy: nothing here
imports the compiled core, so the CLI lists cases without loading it.
"""
from __future__ import annotations

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
