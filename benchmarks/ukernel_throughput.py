"""Micro-kernels timed alone, against this machine's FMA peak: how much of the GEMM's gap to
the peak is the kernel's own, and how much the driver's (packing, C traffic, threads).

    python benchmarks/ukernel_throughput.py                    # the f32 and f64 main kernels
    python benchmarks/ukernel_throughput.py --kernel tg_f32_gemm_ukernel_1x32__avx512_rows

Each kernel runs its full tile over KC k steps with B in L1 (one panel) and streamed from L2
(panels adding up to ~1 MiB, as the blocked driver reads them); kernels with an inline-assembly
k loop are also built with their intrinsics loop (TG_NO_ASM). Cells: GFLOP/s best (median), %
of tilegen's FMA-probe peak for the dtype. Needs gcc and a built tilegen (for the peak).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from typing import List, Optional

from tilegen.dsl import DTYPES, ISAS, load_registry, registry_path
from tilegen.dsl.render import GENERATED_RELPATH, kernel_path
from tilegen.dsl.registry import package_root

HERE = os.path.dirname(os.path.abspath(__file__))
L2_STREAM_BYTES = 1 << 20


def build(entry, root: str, workdir: str, asm: bool) -> str:
    s = entry.spec
    exe = os.path.join(workdir, s.name + ("" if asm else "_noasm"))
    defines = {"T": DTYPES[s.dtype], "TG_DT": s.dtype, "TG_UKERNEL": s.name, "TG_MR": s.mr,
               "TG_NR": s.nr, "TG_ROWS": int(s.a_layout == "rows")}
    cmd = ["gcc", "-std=c11", "-O2", *ISAS[s.isa].cflags, "-I", os.path.join(root, GENERATED_RELPATH),
           *(f"-D{k}={v}" for k, v in defines.items()), *([] if asm else ["-DTG_NO_ASM"]),
           os.path.join(HERE, "c", "ukernel_throughput.c"), os.path.join(root, kernel_path(s)),
           "-o", exe]
    subprocess.run(cmd, check=True)
    return exe


def run(exe: str, kc: int, panels: int, seconds: float, reps: int) -> List[float]:
    out = subprocess.run([exe, str(kc), str(panels), "1", str(seconds), str(reps)], check=True,
                         capture_output=True, text=True).stdout.split()
    return [float(out[1]), float(out[2])]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", action="append", help="registry kernel name (repeatable)")
    ap.add_argument("--kc", type=int, default=256, help="k steps per call (default 256)")
    ap.add_argument("--seconds", type=float, default=0.02, help="one repetition (default 0.02)")
    ap.add_argument("--reps", type=int, default=15, help="repetitions (default 15)")
    args = ap.parse_args(argv)

    from tilegen.tools import bench_worker
    from tilegen.core import _core
    from tilegen.ops.gemm import _gemm

    # The checkout this script sits in, else the installed package (both carry generated/).
    checkout = os.path.dirname(HERE)
    root = checkout if os.path.isfile(registry_path(checkout)) else package_root()
    entries = {e.name: e for e in load_registry(registry_path(root))}
    names = args.kernel or [_gemm.gemm_config(dt)["kernel"] for dt in ("float32", "float64")]
    unknown = [n for n in names if n not in entries]
    if unknown:
        ap.error(f"--kernel: {', '.join(unknown)} not in the registry")
    usable = {isa for isa, ok in _core.isas().items() if ok}
    peaks = {}
    print(f"micro-kernels alone, 1 thread, KC {args.kc}; cells: GFLOP/s best (median), % of peak")
    print(f"{'kernel':<44} {'k loop':<7} {'B in L1':>22} {'B from L2 (1 MiB)':>22}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            s = entries[name].spec
            if s.isa not in usable:
                print(f"{name:<44} skipped: this CPU cannot run {s.isa}")
                continue
            key = (s.isa, s.dtype)
            if key not in peaks:
                peaks[key] = bench_worker.measure_peak(s.isa, s.dtype, 1, 0.05, 5)["best"]
            panel_bytes = args.kc * s.nr * (4 if s.dtype == "f32" else 8)
            l2_panels = max(2, L2_STREAM_BYTES // panel_bytes)
            for asm in ([True, False] if s.kloop == "asm" else [True]):
                exe = build(entries[name], root, tmp, asm)
                cells = []
                for panels in (1, l2_panels):
                    best, median = run(exe, args.kc, panels, args.seconds, args.reps)
                    cells.append(f"{best:.1f} ({median:.1f}) {100 * best / peaks[key]:3.0f}%")
                loop = ("asm" if asm else "c") if s.kloop == "asm" else s.kloop
                print(f"{name:<44} {loop:<7} {cells[0]:>22} {cells[1]:>22}")
    for (isa, dt), p in peaks.items():
        print(f"peak {isa} {dt}: {p:.1f} GFLOP/s (tilegen bench --peak)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
