"""The size (text + data) the C SDK adds to a stripped, statically linked client, per op set.

    python benchmarks/sdk_size.py [--isa neon,scalar] [--ops gemm,image] [--arch aarch64]

For each op set (each op alone, then all of them together) it generates the SDK, builds it with
CMake (cross-built for aarch64 by default, with aarch64-linux-gnu-gcc), and links two static,
stripped clients with --gc-sections: one that takes the address of every function the SDK's
tilegen.h declares (so all of it is kept), and the same program without tilegen. The table is
the difference. Needs cmake (and the cross compiler).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Sequence

# Per target: C compiler, binutils `size`, CMake toolchain file (None: native).
TOOLCHAINS = {
    "aarch64": ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-size",
                "set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR aarch64)\n"
                "set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)\n"),
    "host": ("gcc", "size", None),
}


def _run(cmd: Sequence[str], cwd: Optional[str] = None) -> str:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def client_source(header: str, with_tilegen: bool) -> str:
    """A client keeping every declared function (or none): their addresses in a table."""
    names = re.findall(r"^TILEGEN_API\s+[^;(]*?\b(\w+)\s*\(", header, re.M) if with_tilegen else []
    keep = ", ".join(f"(void (*)(void)) {n}" for n in names) or "0"
    return ('#include <stdio.h>\n#include "tilegen.h"\n'
            f"void (*const keep[])(void) = {{{keep}}};\n"
            'int main(int argc, char** argv) { (void) argv;\n'
            '  printf("%p\\n", (void*) keep[argc % (sizeof(keep) / sizeof(keep[0]))]);\n'
            '  return 0; }\n')


def measure(isas: str, ops: str, arch: str, work: str, build_type: str = "Release") -> int:
    """Bytes the SDK of `ops` adds to a stripped static client for `arch`."""
    cc, size_tool, toolchain = TOOLCHAINS[arch]
    sdk_dir = os.path.join(work, f"sdk-{ops.replace(',', '-')}")
    _run([sys.executable, "-m", "tilegen", "generate", "--sdk", "--isa", isas, "--ops", ops,
          "--out", sdk_dir], cwd=work)
    build = os.path.join(sdk_dir, "build")
    options = []
    if toolchain:
        path = os.path.join(work, f"{arch}.cmake")
        with open(path, "w") as f:
            f.write(toolchain)
        options.append(f"-DCMAKE_TOOLCHAIN_FILE={path}")
    _run(["cmake", "-S", sdk_dir, "-B", build, f"-DCMAKE_BUILD_TYPE={build_type}", *options])
    _run(["cmake", "--build", build, "-j2"])
    with open(os.path.join(sdk_dir, "include", "tilegen.h"), encoding="utf-8") as f:
        header = f.read()
    sizes = []
    for with_tilegen in (False, True):
        src = os.path.join(work, f"client-{with_tilegen}.c")
        with open(src, "w") as f:
            f.write(client_source(header, with_tilegen))
        exe = src[:-2]
        libs = [os.path.join(build, "libtilegen.a")] if with_tilegen else []
        _run([cc, "-std=c11", "-Os", "-static", "-s", "-Wl,--gc-sections",
              f"-I{os.path.join(sdk_dir, 'include')}", src, *libs, "-o", exe, "-lpthread", "-lm"])
        # text + data, not the file size: a static aarch64 file grows in 64 KiB pages.
        text, data = _run([size_tool, exe]).splitlines()[1].split()[:2]
        sizes.append(int(text) + int(data))
    return sizes[1] - sizes[0]


def table(isas: str, ops: List[str], arch: str, build_type: str = "Release") -> Dict[str, int]:
    sets = ops + ([",".join(ops)] if len(ops) > 1 else [])
    with tempfile.TemporaryDirectory() as work:
        return {s: measure(isas, s, arch, work, build_type) for s in sets}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isa", default="neon,scalar")
    ap.add_argument("--ops", default="gemm,image")
    ap.add_argument("--arch", choices=list(TOOLCHAINS), default="aarch64")
    ap.add_argument("--build-type", default="Release", help="CMAKE_BUILD_TYPE of the SDK")
    args = ap.parse_args(argv)
    sizes = table(args.isa, [o for o in args.ops.split(",") if o], args.arch, args.build_type)
    print(f"stripped size added to a static {args.arch} client, SDK --isa {args.isa}, "
          f"{args.build_type} build")
    print(f"{'ops':<16} {'bytes':>10} {'KiB':>8}")
    for ops, size in sizes.items():
        print(f"{ops:<16} {size:>10} {size / 1024:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
