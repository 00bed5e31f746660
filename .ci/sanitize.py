"""The sanitizer job: the C core built with -fsanitize=address,undefined, then run clean.

Usage (from the repository root, with tilegen and its test extra installed):
    python .ci/sanitize.py

libtilegen is built in a scratch copy with the sanitizers (.ci/scratch_build.py) and loaded by
the installed package through LD_LIBRARY_PATH; the sanitizer runtimes are preloaded into the
test process, and cprog builds every C test program and kernel tester with the same flags
(TILEGEN_TEST_SANITIZE). Any report aborts the program that made it, so its test fails. Runs:
the native kernel testers, the C driver and ABI tests (the BLAS drivers, the netlib test
programs with the sanitized library preloaded, the strided/batched C API, the pool's C tests),
then a short run of the matmul/gemm suites through Python.
"""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scratch_build import ScratchLibrary, load_setup, scratch_copy

SANITIZERS = "address,undefined"
FLAGS = [f"-fsanitize={SANITIZERS}", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all", "-g"]

RUNS = [
    # Representative kernels, not all (CI's time budget): every family's scalar kernels and its
    # AVX2 ones run each tester's whole case list and the guard pages under the sanitizers.
    ("C kernel testers", ["tests/test_ukernels.py", "-k",
                          "native and (scalar or avx2) and not intrinsics"]),
    ("C drivers, BLAS ABIs, netlib programs, pool", [
        "tests/ops/blas_abi/test_blas_abi.py", "tests/ops/blas_abi/test_netlib.py",
        "tests/ops/gemm/test_gemm_paths.py::test_strided_and_batched_from_c",
        "tests/test_threads.py", "-k", "not thread] and not fork"]),
    ("matmul/gemm suites through Python", [
        "tests/ops/gemm/test_matmul_numpy.py", "tests/ops/gemm/test_gemm_api.py",
        "tests/ops/gemm/test_gemm_paths.py", "tests/ops/gemm/test_bf16.py",
        "tests/ops/gemm/test_s8.py", "tests/ops/linear/test_linear.py",
        "tests/ops/blas_abi/test_blas_routines.py"]),
]


def runtime(name: str) -> str:
    r = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True)
    path = r.stdout.strip()
    if not os.path.isabs(path):
        sys.exit(f"sanitize: gcc has no {name} (install libasan/libubsan, e.g. with gcc)")
    return os.path.realpath(path)


def main() -> int:
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tilegen-sanitize-") as tmp:
        scratch = scratch_copy(Path(tmp))
        # Kernels of ISAs this CPU lacks never run here: they are built without the sanitizers.
        runnable = set(subprocess.run(
            [sys.executable, "-I", "-c", "import tilegen; print(*(i for i, ok in "
             "tilegen.core._core.isas().items() if ok))"],
            capture_output=True, text=True, check=True).stdout.split())
        lib = ScratchLibrary(scratch, load_setup(), FLAGS, flagged_isas=runnable)
        lib.build()
        env = lib.env()
        env.update(
            LD_PRELOAD=" ".join([runtime("libasan.so"), runtime("libubsan.so")]),
            TILEGEN_TEST_SANITIZE=SANITIZERS,
            # Python's and NumPy's own allocations live until exit: leaks are not ours to judge.
            ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1",
            UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
            TILEGEN_TEST_EXAMPLES_SCALE="0.25",  # a short Hypothesis run
        )
        if not lib.loaded_by_python(env):
            print("sanitize: the sanitized libtilegen is not the one tilegen loads")
            return 2
        print(f"sanitize: libtilegen built with {' '.join(FLAGS)} (kernels of "
              f"{', '.join(sorted(runnable))}; {time.monotonic() - start:.0f} s)")
        failed = []
        for what, args in RUNS:
            t0 = time.monotonic()
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "--rootdir", str(scratch)] + [str(scratch / a) if a.startswith("tests/") else a
                                                 for a in args]
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=scratch / "tests")
            tail = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
            print(f"  {what}: {tail} ({time.monotonic() - t0:.0f} s)", flush=True)
            if r.returncode != 0:
                failed.append(what)
                print(r.stdout[-6000:] + r.stderr[-6000:])
    print(f"sanitize: {'clean' if not failed else 'FAILED: ' + ', '.join(failed)} "
          f"in {time.monotonic() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
