"""Shared test options, fixtures and the end-of-run micro-kernel summary.

Tests import the installed `tilegen`; REPO_ROOT (the parent of tests/, `from conftest import
REPO_ROOT`) supplies the committed registry, templates and generated C that they check.
The tuning cache is off for the whole run (TILEGEN_TUNING=off, below).
"""
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Tests check tilegen's built-in choices: a `tilegen tune` cache of the developer's machine must
# not change them (tests/test_tune.py turns tuning on explicitly, with a cache in tmp_path).
# Set before any test module imports tilegen; cprog.clean_env passes it on to children.
os.environ["TILEGEN_TUNING"] = "off"

# A run under TILEGEN_ISA=<isa> (README: `TILEGEN_ISA=avx2 pytest tests/test_matmul_numpy.py`)
# tests the library capped to it: this process keeps the variable (tilegen reads it at import and
# at every re-selection), and cprog.clean_env hands RUN_ISA_CAP on to the tilegen processes the
# tests start, so that they run the same library as this one. TILEGEN_NUM_THREADS is cleared:
# tests set their thread counts themselves.
RUN_ISA_CAP = os.environ.get("TILEGEN_ISA") or None
os.environ.pop("TILEGEN_NUM_THREADS", None)

# Hypothesis: under CI (CI set, as .ci/run and the CI runner do) a fixed, derandomized sequence
# of examples, no deadline and no example database, so a run is reproducible and a failure is
# the code's, not the draw's. Locally the default profile keeps exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None, database=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO_ROOT = Path(__file__).resolve().parent.parent
# Each op's tests live in tests/ops/<op>/ and import the helpers here (cprog, npcompat, conftest).
sys.path.insert(0, str(Path(__file__).resolve().parent))

# (isa, run mode) -> {"cases": n, "kernels": n, "skipped": n}, filled by test_ukernels.py.
UKERNEL_RUNS = pytest.StashKey[dict]()


def reference(module: str):
    """Import a reference library the tests compare against (torch, cv2): skipped with the
    install hint when it is missing, except under CI (CI=1, set by .ci/run), where a missing
    reference is a failure, never a silent skip."""
    if os.environ.get("CI"):
        import importlib

        return importlib.import_module(module)
    hint = {"cv2": "pip install opencv-python-headless", "torch": "pip install torch (CPU)",
            "skimage.data": "pip install scikit-image",
            "dask.array": 'pip install "tilegen[dask]"', "distributed": 'pip install "tilegen[dask]"',
            "dask_image": 'pip install "tilegen[dask]"'}
    return pytest.importorskip(module, reason=f"{module} is not installed ({hint.get(module, '')})")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/*.c from the current templates instead of comparing")


@pytest.fixture(scope="session")
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


@pytest.fixture(scope="session")
def ukernel_runs(request) -> dict:
    return request.config.stash.setdefault(UKERNEL_RUNS, {})


def pytest_terminal_summary(terminalreporter, config):
    runs = config.stash.get(UKERNEL_RUNS, {})
    if not runs:
        return
    parts = []
    for (isa, mode), r in runs.items():
        text = f"{isa} {mode} {r['cases']}"
        if r["skipped"]:
            text += f" ({r['skipped']} of {r['kernels']} kernels skipped)"
        parts.append(text)
    terminalreporter.write_line("micro-kernel cases: " + ", ".join(parts))


@pytest.fixture
def numpy_products_forbidden(monkeypatch):
    """NumPy's product functions raise, and calls into the tilegen C core are counted (proof
    that a case ran on tilegen rather than deferring to NumPy)."""
    import numpy as np
    from tilegen.ops.gemm import _gemm

    def forbidden(*args, **kwargs):
        raise AssertionError("a NumPy product function was called: tilegen deferred")

    for name in ("matmul", "dot", "einsum", "tensordot", "inner", "vdot"):
        monkeypatch.setattr(np, name, forbidden)
    calls = []
    for name in ("gemm_into", "gemm_batched_into"):
        real = getattr(_gemm, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(_gemm, name, spy)
    return calls


def on_a_worker(call, seconds: float = 20.0):
    """call() repeated until a worker thread of tilegen's pool (not the calling thread) has run
    part of it, as the pool's test counter shows; returns that call's result. A region's tasks
    go to whoever claims them first, and the caller may claim them all before a worker wakes (on
    a loaded machine a worker may wait long for a core), so a test of threaded results must prove
    a worker took part. Fails after `seconds` of trying (at least 200 calls)."""
    import time

    from tilegen.core import _core

    deadline, tries = time.monotonic() + seconds, 0
    while tries < 200 or time.monotonic() < deadline:
        tries += 1
        before = _core._worker_tasks()
        result = call()
        if _core._worker_tasks() > before:
            return result
    pytest.fail(f"no worker thread ran a task in {tries} calls ({seconds} s): the product ran "
                "on one thread")


@pytest.fixture(autouse=True)
def _default_thread_count():
    """Every test starts from the default thread count: a test that pins one (even to the value
    it found) must not change what the next test sees as the default."""
    yield
    import tilegen

    tilegen.set_num_threads(None)
