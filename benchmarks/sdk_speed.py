"""The C SDK's filters against the Python package's library: the same kernels and drivers, so
the same speed (issue: "the SDK build of a filter is as fast as the Python package's").

    python benchmarks/sdk_speed.py [--rounds 3] [--threads 1]

Builds the SDK for this machine (CMake, Release), links benchmarks/c/filter_speed.c against
it and against tilegen.get_library(), runs the two in turn and prints ms per call and the ratio.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent


def _run(cmd, **kw) -> str:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def build(work: Path) -> Dict[str, Path]:
    import tilegen as tg

    isas = ",".join(i for i, ok in tg.core._core.isas().items() if ok)
    sdk = work / "sdk"
    _run([sys.executable, "-m", "tilegen", "generate", "--sdk", "--isa", isas, "--ops", "image",
          "--out", sdk], cwd=work)
    _run(["cmake", "-S", sdk, "-B", sdk / "build", "-DCMAKE_BUILD_TYPE=Release"])
    _run(["cmake", "--build", sdk / "build", "-j2"])
    src = HERE / "c" / "filter_speed.c"
    exes = {"sdk": work / "speed-sdk", "package": work / "speed-package"}
    _run(["gcc", "-O2", f"-I{sdk / 'include'}", src, sdk / "build" / "libtilegen.a", "-o",
          exes["sdk"], "-lpthread", "-lm"])
    lib = Path(tg.get_library()).parent
    _run(["gcc", "-O2", f"-I{tg.get_include()}", src, "-o", exes["package"], f"-L{lib}",
          "-ltilegen", f"-Wl,-rpath,{lib}"])
    return exes


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TILEGEN_", "OPENBLAS_"))}
    best: Dict[str, Dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as work:
        exes = build(Path(work))
        for _ in range(args.rounds):  # the two take turns
            for name, exe in exes.items():
                for line in _run([exe, args.threads], env=env).splitlines():
                    case, ms = line.split()
                    slot = best.setdefault(case, {})
                    slot[name] = min(slot.get(name, 1e30), float(ms))
    print(f"1080p, {args.threads} thread(s), best of {args.rounds} rounds, ms per call")
    print(f"{'case':<18} {'SDK':>8} {'package':>8} {'package/SDK':>12}")
    for case, t in best.items():
        print(f"{case:<18} {t['sdk']:>8.3f} {t['package']:>8.3f} {t['package'] / t['sdk']:>11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
