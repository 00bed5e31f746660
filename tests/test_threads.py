"""tilegen's thread pool: the thread count API and environment, threadpoolctl, fork safety,
concurrent callers, reproducibility, the floating-point state of workers, and unloading.

The driver only threads a product above ~4 MFLOP, so the "threaded" shapes here are larger
than that. Anything that could hang runs in a subprocess with a timeout.
"""
import os
import sys
import textwrap
import threading

import numpy as np
import pytest

import cprog
import tilegen as tg
from conftest import on_a_worker

THREADED = [(512, 512, 512), (300, 257, 310), (1000, 37, 200), (37, 1000, 200)]


@pytest.fixture
def threads():
    """Sets the thread count for a test; restores the default afterwards."""
    try:
        yield tg.set_num_threads
    finally:
        tg.set_num_threads(None)


def operands(m, k, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


def reference(a, b):
    """float64 NumPy result and the error scale sum |a||b| (an independent reference)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a64 @ b64, np.abs(a64) @ np.abs(b64)


def assert_matches_reference(got, a, b):
    want, scale = reference(a, b)
    tol = (1e-5 if a.dtype == np.float32 else 1e-12) * np.sqrt(a.shape[-1])
    assert got.shape == want.shape and got.dtype == a.dtype
    bad = ~(np.abs(got - want) <= tol * scale + 1e-30)
    assert not bad.any(), f"{int(bad.sum())} of {bad.size} elements off the float64 reference"


def default_threads():
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(n or 1, 256))


# ------------------------------------------------------------------------------ the count

def test_set_and_get_num_threads(threads):
    default = tg.get_num_threads()
    assert default >= 1
    threads(3)
    assert tg.get_num_threads() == 3
    assert tg.runtime_info()["threads"]["num_threads"] == 3
    threads(1)
    assert tg.get_num_threads() == 1
    threads(256)
    assert tg.get_num_threads() == 256          # the pool's maximum
    threads(np.int64(2))
    assert tg.get_num_threads() == 2
    threads(None)
    assert tg.get_num_threads() == default      # None restores the default


@pytest.mark.parametrize("n, error", [(0, ValueError), (-1, ValueError), (257, ValueError),
                                      (100000, ValueError), (2.0, TypeError), ("2", TypeError),
                                      (True, TypeError)])
def test_set_num_threads_rejects_nonsense(threads, n, error):
    threads(2)
    with pytest.raises(error, match="set_num_threads: n"):
        tg.set_num_threads(n)
    assert tg.get_num_threads() == 2  # unchanged


@pytest.mark.parametrize("value, words", [("abc", "not a positive integer"),
                                          ("0", "not a positive integer"),
                                          ("-3", "not a positive integer"),
                                          ("1000", "over the limit of 256")])
def test_bad_environment_thread_count_warns(value, words):
    r = cprog.python("import warnings; warnings.simplefilter('error'); import tilegen",
                     env=cprog.clean_env(TILEGEN_NUM_THREADS=value))
    assert r.returncode != 0 and "RuntimeWarning" in r.stderr and words in r.stderr, r.stderr
    r = cprog.python("import tilegen", env=cprog.clean_env(TILEGEN_NUM_THREADS="3"))
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.parametrize("env, want", [
    ({"TILEGEN_NUM_THREADS": "3"}, 3),
    ({"TILEGEN_NUM_THREADS": "5", "OMP_NUM_THREADS": "2"}, 5),
    ({"OMP_NUM_THREADS": "2,1"}, 2),
    ({"TILEGEN_NUM_THREADS": "zero"}, None),
    ({"TILEGEN_NUM_THREADS": "0"}, None),
])
def test_num_threads_environment(env, want):
    r = cprog.python("import tilegen as tg; print(tg.get_num_threads(), "
                     "tg.runtime_info()['threads']['num_threads'])", env=cprog.clean_env(**env))
    assert r.returncode == 0, r.stderr
    want = default_threads() if want is None else want
    assert r.stdout.split() == [str(want), str(want)], (env, r.stdout)


def test_pool_really_starts_workers():
    """A product above the threading threshold starts a worker thread; a small one does not."""
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("no /proc/self/task to count threads on this OS")
    code = textwrap.dedent("""
        import os, numpy as np, tilegen as tg
        tg.set_num_threads(2)
        count = lambda: len(os.listdir("/proc/self/task"))
        a = np.ones((64, 64), np.float32)
        tg.matmul(a, a)                     # 0.5 MFLOP: one thread
        before = count()
        b = np.ones((256, 256), np.float32)
        tg.matmul(b, b)                     # 33 MFLOP: two
        print(before, count())
    """)
    r = cprog.python(code, env=cprog.clean_env(OPENBLAS_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    before, after = map(int, r.stdout.split())
    assert after == before + 1, r.stdout


# ------------------------------------------------------------------------------ threadpoolctl

@pytest.fixture
def threadpoolctl():
    tpc = pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")
    if not hasattr(tpc, "register"):
        pytest.skip(f"threadpoolctl {tpc.__version__} has no register(); custom controllers "
                    "need threadpoolctl >= 3.5")
    return tpc


def test_threadpoolctl_sees_tilegen(threadpoolctl, threads):
    threads(3)
    info = [x for x in threadpoolctl.threadpool_info() if x.get("internal_api") == "tilegen"]
    assert len(info) == 1, threadpoolctl.threadpool_info()
    (ours,) = info
    assert ours["user_api"] == "blas"
    assert ours["num_threads"] == 3
    assert os.path.realpath(ours["filepath"]) == os.path.realpath(cprog.library())
    assert ours["version"] == tg.__version__
    assert ours["architecture"] == tg.runtime_info()["isa"]


def test_threadpoolctl_limits_tilegen(threadpoolctl, threads):
    threads(2)
    with threadpoolctl.threadpool_limits(1):
        assert tg.get_num_threads() == 1
        a, b = operands(300, 257, 310, np.float32)
        assert np.allclose(tg.matmul(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    assert tg.get_num_threads() == 2
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        assert tg.get_num_threads() == 1
    assert tg.get_num_threads() == 2
    ctl = threadpoolctl.ThreadpoolController().select(internal_api="tilegen")
    with ctl.limit(limits=1):
        assert tg.get_num_threads() == 1
    assert tg.get_num_threads() == 2


# ------------------------------------------------------------------------------ fork

FORK = textwrap.dedent("""
    import os, sys, threading, time
    import numpy as np
    import tilegen as tg

    tg.set_num_threads(2)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    b = rng.standard_normal((512, 512)).astype(np.float32)
    ref = tg.matmul(a, b)                   # the pool's workers are running from here on
    d = rng.standard_normal((300, 300))
    ref_d = tg.matmul(d, d)
    # the answers children and parent must reproduce are right, not just tilegen's own
    a64 = a.astype(np.float64)
    assert (abs(ref - a64 @ b) <= 1e-5 * np.sqrt(512) * (abs(a64) @ abs(b))).all()
    assert (abs(ref_d - d @ d) <= 1e-12 * (abs(d) @ abs(d))).all()

    def wait(pid, deadline=30.0):
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.001)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return "hung"

    # Some forks happen while another thread is inside a threaded product.
    stop = threading.Event()
    def busy():
        while not stop.is_set():
            assert np.array_equal(tg.matmul(d, d), ref_d)
    background = threading.Thread(target=busy) if sys.argv[1] == "busy" else None
    if background:
        background.start()

    failures = []
    for i in range(8):
        pid = os.fork()
        if pid == 0:
            ok = all(np.array_equal(tg.matmul(a, b), ref) for _ in range(3))
            ok = ok and np.array_equal(tg.matmul(d, d), ref_d) and tg.get_num_threads() == 2
            os._exit(0 if ok else 3)
        if not np.array_equal(tg.matmul(a, b), ref):
            failures.append(f"parent, iteration {i}")
        status = wait(pid)
        if status != 0:
            failures.append(f"child {i}: {status}")
    stop.set()
    if background:
        background.join()
    print(failures or "ok")
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available on this platform")
@pytest.mark.parametrize("mode", ["idle", "busy"])
def test_fork_with_threads_in_use(mode):
    """After fork (workers started; in "busy" mode another thread is running threaded products
    while forking), parent and child both compute right, with threads, without hanging."""
    r = cprog.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", FORK, mode],
                  timeout=90)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok", r.stdout + r.stderr


# ------------------------------------------------------------------------------ determinism

def test_multi_threaded_equals_single_threaded(threads):
    for dtype in (np.float32, np.float64):
        for m, k, n in THREADED:
            a, b = operands(m, k, n, dtype)
            threads(1)
            one = tg.matmul(a, b)
            threads(2)
            two = on_a_worker(lambda: tg.matmul(a, b))
            assert_matches_reference(two, a, b)
            # Today the split never changes the summation order, so they are identical.
            assert np.array_equal(one, two), (dtype, m, k, n)


def test_bitwise_reproducible_for_a_fixed_thread_count(threads):
    threads(2)
    for dtype in (np.float32, np.float64):
        a, b = operands(300, 257, 310, dtype, seed=5)
        first = tg.matmul(a, b)
        for _ in range(4):
            assert np.array_equal(tg.matmul(a, b), first)
        # Column-major C runs the transposed product, whose blocking (KC) may differ: the same
        # result to rounding, and bit-identical from call to call.
        c = np.empty((300, 310), dtype, order="F")
        tg.matmul(a, b, out=c)
        assert_matches_reference(c, a, b)
        again = c.copy(order="F")
        for _ in range(2):
            tg.matmul(a, b, out=c)
            assert np.array_equal(c, again)


def test_concurrent_callers_match_single_threaded(threads):
    """Python threads (the GIL is released) running mixed products at once: every result is
    bit-identical to the same product computed alone on one thread."""
    jobs = []
    for i, (m, k, n) in enumerate(THREADED + [(64, 64, 64), (7, 300, 5), (129, 65, 257)]):
        for dtype in (np.float32, np.float64):
            a, b = operands(m, k, n, dtype, seed=i)
            jobs.append((a, b))
    jobs.append(tuple(np.ascontiguousarray(x.T).T for x in operands(200, 100, 300, np.float32)))
    threads(1)
    want = [tg.matmul(a, b) for a, b in jobs]
    for (a, b), w in zip(jobs, want):
        assert_matches_reference(w, a, b)
    threads(2)
    errors = []
    barrier = threading.Barrier(4)

    def caller(tid):
        try:
            barrier.wait()
            for rep in range(3):
                for j in range(len(jobs)):
                    idx = (j * 5 + tid * 3 + rep) % len(jobs)
                    a, b = jobs[idx]
                    if not np.array_equal(tg.matmul(a, b), want[idx]):
                        errors.append(f"thread {tid}, job {idx}: differs")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(f"thread {tid}: {e!r}")

    ts = [threading.Thread(target=caller, args=(t,)) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in ts), "a caller hung"
    assert not errors, "\n".join(errors[:10])


# Products the driver threads, each by another path: blocks of C, a row vector times a matrix
# and a matrix times a vector past the 1 MB GEMV threshold, a stack split by items.
THREADED_PATHS = {
    "blocks": ((300, 257), (257, 310)),
    "x @ A, 2.8 MB": ((1, 700), (700, 1024)),
    "A @ x, 2.8 MB": ((1024, 700), (700, 1)),
    "A.T @ x, 2.8 MB": ((1024, 700), (700, 1)),
    "stack": ((8, 128, 96), (8, 96, 128)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("path", list(THREADED_PATHS))
def test_threaded_paths_match_an_independent_reference(threads, dtype, path):
    """With a worker proven to have computed part of it, each threaded path gives the float64
    reference's answer (and, bit for bit, the one-thread answer)."""
    sa, sb = THREADED_PATHS[path]
    rng = np.random.default_rng(len(path))
    a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    if path.startswith("A.T"):
        a = np.asfortranarray(a)   # columns contiguous: streamed as x^T A^T
    threads(1)
    one = tg.matmul(a, b)
    threads(2)
    two = on_a_worker(lambda: tg.matmul(a, b))
    assert_matches_reference(two, a, b)
    assert np.array_equal(one, two)


def test_callers_while_the_thread_count_changes(threads):
    """Python threads calling tg.matmul and tg.gemm at once while another thread keeps changing
    set_num_threads: every result is bitwise the one the same call gives alone, which is right
    against the float64 reference; workers did take part."""
    rng = np.random.default_rng(11)
    calls = []  # (a, b, c or None): tg.gemm(a, b, c, alpha=-0.5, beta=2) when c is given
    for i, (m, k, n) in enumerate([(512, 300, 400), (300, 257, 310), (1, 900, 1000),
                                   (1000, 600, 1), (64, 64, 64), (129, 65, 257)]):
        for dtype in (np.float32, np.float64):
            a = rng.standard_normal((m, k)).astype(dtype)
            b = rng.standard_normal((k, n)).astype(dtype)
            calls.append((a, b, None))
            if i % 2 == 0:
                calls.append((a, b, rng.standard_normal((m, n)).astype(dtype)))

    def run(a, b, c):
        return tg.matmul(a, b) if c is None else tg.gemm(a, b, c, alpha=-0.5, beta=2.0)

    threads(1)
    serial = [run(*call) for call in calls]
    for (a, b, c), want in zip(calls, serial):
        ref, scale = reference(a, b)
        if c is not None:
            ref, scale = -0.5 * ref + 2.0 * c, 0.5 * scale + 2.0 * np.abs(c)
        tol = (1e-5 if a.dtype == np.float32 else 1e-12) * np.sqrt(a.shape[1])
        assert (np.abs(want - ref) <= tol * scale + 1e-30).all(), (a.shape, b.shape, c is None)
    errors, stop = [], threading.Event()
    workers_before = tg.core._core._worker_tasks()

    def changer():
        n = 0
        while not stop.is_set():
            tg.set_num_threads((1, 2, 3, None)[n % 4])
            n += 1

    def caller(tid):
        try:
            for rep in range(4):
                for j in range(len(calls)):
                    idx = (j * 7 + tid * 3 + rep) % len(calls)
                    if not np.array_equal(run(*calls[idx]), serial[idx]):
                        errors.append(f"caller {tid}, call {idx}: differs from the serial result")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(f"caller {tid}: {e!r}")

    threads(2)
    ch = threading.Thread(target=changer)
    ts = [threading.Thread(target=caller, args=(t,)) for t in range(4)]
    ch.start()
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=180)
    stop.set()
    ch.join(timeout=10)
    assert not any(t.is_alive() for t in ts), "a caller hung"
    assert not errors, "\n".join(errors[:10])
    assert tg.core._core._worker_tasks() > workers_before, "no worker thread ran a task"


INTERRUPT = textwrap.dedent("""
    import os, signal, threading, time
    import numpy as np
    import tilegen as tg
    # A shell starting the suite in the background hands its children SIGINT ignored, and
    # Python then installs no KeyboardInterrupt handler: put it back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2500, 2500))
    t0 = time.monotonic()
    want = tg.matmul(a, a)                      # how long one product takes here
    took = time.monotonic() - t0
    threading.Timer(took / 4, os.kill, (os.getpid(), signal.SIGINT)).start()
    t0 = time.monotonic()
    try:
        got = tg.matmul(a, a)
        time.sleep(5)                           # a late signal would land here
        print("no KeyboardInterrupt")
    except KeyboardInterrupt:
        raised = time.monotonic() - t0
        # raised as the call returned: its result was never bound, and not before it ended
        print("interrupted", "got" in dir(), raised >= took / 4, raised < took * 3 + 1)
    small = rng.standard_normal((300, 200)), rng.standard_normal((200, 100))
    ok = np.allclose(tg.matmul(*small), small[0] @ small[1], rtol=1e-12, atol=1e-12)
    print("usable", ok and np.array_equal(tg.matmul(a, a), want))
""")


def test_ctrl_c_during_a_long_product():
    """SIGINT while a product runs (GIL released): KeyboardInterrupt is raised once the call
    returns, and the library then computes right, threaded products included."""
    r = cprog.run([sys.executable, "-c", INTERRUPT], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines == ["interrupted False True True", "usable True"], r.stdout + r.stderr


# ------------------------------------------------------------------------------ C-level

def test_workers_inherit_flush_to_zero(tmp_path):
    """With FTZ set by the caller, subnormal results are flushed in the workers' tiles too."""
    exe = cprog.build("ftz_threads.c", tmp_path / "ftz_threads", link_tilegen=True)
    r = cprog.run([exe])
    if r.returncode == 77:
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.stderr
    fields = dict(x.split("=") for x in r.stdout.split() if "=" in x)
    if fields["tasks"] != "-1":
        assert int(fields["tasks"]) >= 2, f"the product did not use a worker thread: {r.stdout}"
    assert fields["ftz_off_zeros"] == "0", f"without FTZ the results are subnormal: {r.stdout}"
    assert fields["ftz_on_nonzeros"] == "0", f"some tiles ignored the caller's FTZ: {r.stdout}"


def test_dlclose_after_threaded_gemm(tmp_path):
    """dlopen / threaded sgemm_ / dlclose cycles, and a thread exiting after dlclose: no crash,
    no workers left behind."""
    exe = cprog.build("dlclose_cycle.c", tmp_path / "dlclose_cycle")
    r = cprog.run([exe, str(cprog.library())], timeout=60)
    assert r.returncode == 0, f"exit {r.returncode} (negative: a signal)\n{r.stdout}{r.stderr}"
    assert "ok" in r.stdout
    left = int(r.stdout.split("threads=")[1].split()[0])
    assert left in (1, -1), f"{left - 1} worker threads outlived dlclose"


@pytest.mark.parametrize("sanitizer", ["none", "thread"])
def test_pool_stress(tmp_path, sanitizer):
    """tests/c/threads_stress.c against the pool's source (shipped in the package): concurrent
    regions from several threads, nested regions, thread-count changes; under ThreadSanitizer
    too when the toolchain has it."""
    core_dir = os.path.join(os.path.dirname(tg.__file__), "core")
    source = os.path.join(core_dir, "threads.c")
    # The package ships its C sources (pyproject package-data): missing is a packaging bug.
    assert os.path.isfile(source), f"{source} is not installed with the package"
    args = [f"-I{core_dir}", source]
    if sanitizer == "thread":
        probe = tmp_path / "probe.c"
        probe.write_text("int main(void) { return 0; }\n")
        r = cprog.run([cprog.cc(), "-fsanitize=thread", str(probe), "-o", str(tmp_path / "probe")])
        if r.returncode != 0:
            pytest.skip("the C compiler cannot build with -fsanitize=thread (no libtsan)")
        args = ["-fsanitize=thread", *args]
    exe = cprog.build("threads_stress.c", tmp_path / f"threads_stress_{sanitizer}", args)
    r = cprog.run([exe], env=cprog.clean_env(TSAN_OPTIONS="halt_on_error=1"), timeout=60)
    if "FATAL: ThreadSanitizer" in r.stderr:
        pytest.skip("ThreadSanitizer cannot run here: " + r.stderr.strip().splitlines()[0])
    assert r.returncode == 0 and "WARNING: ThreadSanitizer" not in r.stderr, r.stderr
    assert r.stdout.strip() == "ok"
