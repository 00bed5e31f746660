"""pytest-benchmark suite of tilegen against NumPy over tilegen.tools.benchcases (the `tilegen bench`
case list).

    pytest benchmarks/ --benchmark-only                 # time every case, tilegen and numpy
    pytest benchmarks/ --benchmark-disable -q           # seconds: run each call once, check it

Each test calls the library once more after timing and checks the result against float64 NumPy,
so with --benchmark-disable the suite is a quick correctness check of the harness; that mode
uses the quick case list unless --bench-cases=full is given. Both libraries run in this one
process, so every pool is limited to --bench-threads (default 1): OpenBLAS threads left
spinning would steal cores from tilegen. `tilegen bench` (one process per library, both thread
counts, % of peak) is the reference measurement; this suite is for pytest-benchmark's history
and comparisons (--benchmark-autosave, --benchmark-compare).
"""
import os

import pytest

from tilegen.tools import benchcases

LIBS = ("tilegen", "numpy")


def pytest_addoption(parser):
    group = parser.getgroup("tilegen benchmarks")
    group.addoption("--bench-cases", choices=("quick", "full"), default=None,
                    help="case list (default: full, or quick with --benchmark-disable)")
    group.addoption("--bench-threads", type=int, default=1,
                    help="threads for tilegen and NumPy's BLAS (default 1)")


def _case_list(config) -> str:
    chosen = config.getoption("--bench-cases")
    if chosen:
        return chosen
    return "quick" if config.getoption("benchmark_disable", default=False) else "full"


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        cases = benchcases.cases("gemm", quick=_case_list(metafunc.config) == "quick")
        metafunc.parametrize("case", cases, ids=[c.id for c in cases])
    if "lib" in metafunc.fixturenames:
        metafunc.parametrize("lib", LIBS)


@pytest.fixture(scope="session")
def threads(request):
    """Every pool of the process at --bench-threads (threadpoolctl, as `tilegen bench` does)."""
    import tilegen

    n = request.config.getoption("--bench-threads")
    if n < 1:
        raise pytest.UsageError("--bench-threads must be >= 1")
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    old = tilegen.get_num_threads()
    limits = threadpool_limits(limits=n) if threadpool_limits else None
    tilegen.set_num_threads(n)
    yield n
    if limits is not None:
        limits.restore_original_limits()
    tilegen.set_num_threads(old)


@pytest.fixture
def bench_call(benchmark, threads):
    """bench_call(case, lib): times lib's call for case, then checks a fresh result."""
    from tilegen.ops.gemm import bench as gemm

    def run(case, lib):
        operands = case.operands()
        call, to_numpy = gemm.make_call(lib, case, operands, threads)
        benchmark.group = case.label
        benchmark.extra_info.update(lib=lib, threads=threads, flops=case.flops)
        benchmark(call)
        stats = getattr(benchmark, "stats", None)
        if stats is not None and getattr(stats, "stats", None) is not None:
            benchmark.extra_info["gflops_best"] = case.flops / stats.stats.min / 1e9
        problem = case.check(operands, to_numpy(call()))
        assert problem is None, f"{lib} {case.label}: {problem}"

    return run


def pytest_report_header(config):
    lines = [f"tilegen benchmarks: {_case_list(config)} cases, "
             f"{config.getoption('--bench-threads')} thread(s), libs {', '.join(LIBS)}"]
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            lines.append(f"note: {name}={os.environ[name]} is set and steers NumPy's OpenBLAS; "
                         f"`tilegen bench` removes it from its workers")
    try:
        from threadpoolctl import threadpool_info
        import numpy  # noqa: F401

        for p in threadpool_info():
            if p.get("internal_api") == "openblas":
                lines.append(f"numpy BLAS: OpenBLAS {p.get('version')}, architecture "
                             f"{p.get('architecture')}, {p.get('threading_layer')}")
    except ImportError:
        pass
    return lines


def pytest_benchmark_update_machine_info(config, machine_info):
    import tilegen

    info = tilegen.runtime_info()
    machine_info["tilegen"] = {k: info[k] for k in ("version", "isa_cap", "isas_available",
                                                      "kernels", "tuning") if k in info}
    try:
        from threadpoolctl import threadpool_info

        machine_info["threadpools"] = threadpool_info()
    except ImportError:
        pass
