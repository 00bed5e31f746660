"""`tilegen bench`: the harness runs, its JSON has the documented structure and plausible numbers,
--peak prints positive numbers, bad options are one-line errors. No speed is asserted here
(DESIGN: performance is measured in benchmarks, never asserted in timed unit tests)."""
import json
import math
import os
import re
import sys

import numpy as np
import pytest

import cprog
from conftest import REPO_ROOT
from tilegen.dsl.isa import ISAS
from tilegen.tools import bench, benchcases
from tilegen.ops.gemm import bench as gemm_bench
from tilegen.tools.cli import main

QUICK_IDS = [c.id for c in benchcases.cases("gemm", quick=True)]


def tilegen_cli(*argv, env=None, timeout=120):
    """`python -m tilegen ARGV` in a fresh interpreter (the workers need real processes)."""
    return cprog.run([sys.executable, "-m", "tilegen", *map(str, argv)], env=env, timeout=timeout)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One quick run (tilegen and numpy, 1 and 2 threads) shared by the structure tests."""
    out = tmp_path_factory.mktemp("bench")
    argv = ["bench", "--quick", "--libs", "tilegen,numpy", "--threads", "1,2", "--reps", "2",
            "--json", out / "r.json"]
    plot = None
    try:
        import matplotlib  # noqa: F401
        plot = out / "r.png"
        argv += ["--plot", plot]
    except ImportError:
        pass
    # The workers must drop it. OPENBLAS_L2_SIZE is cleared, whatever this shell sets, so the
    # report names exactly what was set here.
    env = cprog.clean_env(OPENBLAS_CORETYPE="Haswell")
    env.pop("OPENBLAS_L2_SIZE", None)
    r = tilegen_cli(*argv, env=env)
    return r, json.loads((out / "r.json").read_text()) if (out / "r.json").exists() else None, plot


def test_quick_run_succeeds_and_prints_a_table(quick_run):
    r, report, _ = quick_run
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    for threads in ("== 1 thread:", "== 2 threads:"):
        assert threads in r.stdout
    for case in benchcases.cases("gemm", quick=True):
        assert r.stdout.count(case.label) == 2, case.label  # one row per thread count
    assert "tg/np" in r.stdout and "OPENBLAS_CORETYPE" in r.stdout
    assert "architecture" in r.stdout or "threadpoolctl is not installed" in r.stdout


def test_quick_json_structure(quick_run):
    _, report, _ = quick_run
    assert report is not None
    for key in ("tilegen_bench", "command", "op", "threads", "libs", "machine", "peaks",
                "machine_peak", "libraries", "cases", "results", "errors", "elapsed_s"):
        assert key in report, key
    assert report["op"] == "gemm" and report["threads"] == [1, 2]
    assert report["libs"] == ["tilegen", "numpy"] and report["errors"] == []
    assert [c["id"] for c in report["cases"]] == QUICK_IDS
    m = report["machine"]
    assert m["cpus"] >= 1 and m["tilegen_version"] and m["isas_available"]
    assert m["env_removed_in_workers"] == ["OPENBLAS_CORETYPE"]
    for lib in ("tilegen", "numpy"):
        for t in ("1", "2"):
            info = report["libraries"][lib][t]
            assert info["threads"] == int(t) and info["version"]
    assert report["libraries"]["tilegen"]["1"]["runtime"]["threads"]["num_threads"] == 1
    assert report["libraries"]["tilegen"]["2"]["runtime"]["threads"]["num_threads"] == 2
    keys = {(r["case"], r["lib"], r["threads"]) for r in report["results"]}
    assert keys == {(c, lib, t) for c in QUICK_IDS for lib in ("tilegen", "numpy") for t in (1, 2)}


def test_quick_numbers_are_plausible(quick_run):
    _, report, _ = quick_run
    flops = {c["id"]: c["flops"] for c in report["cases"]}
    for t in ("1", "2"):
        for dtype in ("f32", "f64"):
            p = report["machine_peak"][t][dtype]
            assert p["gflops"] > 0 and p["isa"] in report["machine"]["isas_available"]
        # bfloat16 dot products are probed where an ISA has them (avx512bf16), and only there
        for dtype in ("bf16", "s8"):
            dots = [i for i in report["machine"]["isas_available"]
                    if dtype in {**ISAS[i].dot_ops, **ISAS[i].quad_ops}
                    and {**ISAS[i].dot_ops, **ISAS[i].quad_ops}[dtype].dot_]
            assert (dtype in report["machine_peak"][t]) == bool(dots), dtype
    for r in report["results"]:
        assert "error" not in r, r
        assert 0 < r["best_s"] <= r["median_s"] and r["first_s"] > 0
        assert len(r["times_s"]) == 2 and all(t > 0 for t in r["times_s"])
        assert math.isclose(r["rate_best"], flops[r["case"]] / r["best_s"] / 1e9)
        # bfloat16's peak is its dot products' (an ISA with vdpbf16ps); without one, no % of peak
        dtype, peaks = r["case"].split("-")[0], report["machine_peak"][str(r["threads"])]
        assert ("pct_peak" in r) == (dtype in peaks), r
        peak = peaks.get(dtype, peaks["f32"])["gflops"]
        # % of peak is a ratio of two measurements; only absurd values mean a units bug
        assert 0 < r.get("pct_peak", 1) < 1000 and r["rate_best"] < 10 * peak
        if r["lib"] == "tilegen":
            assert r["ratio"] > 0 and r["ratio_vs"] == "numpy"


def test_plot_is_written(quick_run):
    r, _, plot = quick_run
    if plot is None:
        pytest.skip("matplotlib is not installed (pip install 'tilegen[bench]')")
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_peak_prints_positive_numbers():
    r = tilegen_cli("bench", "--peak", "--quick", "--threads", "1")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()
            if line.split()[:1] and line.split()[0] in ISAS]
    dots = {d for i in rows for d, ops in {**ISAS[i[0]].dot_ops, **ISAS[i[0]].quad_ops}.items()
            if ops.dot_}
    assert rows and {row[1] for row in rows} == {"f32", "f64"} | dots
    for row in rows:
        assert float(row[2]) > 0, row
    assert re.search(r"machine peak, 1 thread\(s\): f32 [\d.]+ \(\w+\), f64 [\d.]+", r.stdout)


@pytest.mark.parametrize("argv, words", [
    (["--threads", "0"], "--threads"),
    (["--threads", "two"], "--threads"),
    (["--threads", "1,-2"], "--threads"),
    (["--op", "conv9"], "--op"),
    (["--libs", "mkl"], "mkl"),
    (["--libs", ""], "--libs"),
    (["--reps", "0"], "--reps"),
    (["--target", "-1"], "--target"),
    (["--json", "/nonexistent-folder/x.json"], "nonexistent-folder"),
    (["--plot", "/nonexistent-folder/x.png"], "nonexistent-folder"),
    (["--bogus"], "--bogus"),
])
def test_bad_options_are_one_line_errors(capsys, argv, words):
    code = main(["bench", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("tilegen: error:") and err.count("\n") == 1 and words in err, err


def test_missing_library_and_missing_matplotlib_are_errors(capsys, monkeypatch):
    real = bench.installed
    monkeypatch.setattr(bench, "installed", lambda lib: lib != "torch" and real(lib))
    assert main(["bench", "--libs", "numpy,torch"]) == 2
    assert "torch not installed" in capsys.readouterr().err
    real_spec = bench.importlib.util.find_spec
    monkeypatch.setattr(bench.importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real_spec(name, *a))
    assert main(["bench", "--quick", "--plot", "x.png"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "matplotlib" in err and "tilegen[bench]" in err


def test_worker_env_drops_openblas_overrides_without_touching_ours(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OPENBLAS_L2_SIZE", "262144")
    env, removed = bench.worker_env(3)
    assert removed == ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"]
    assert "OPENBLAS_CORETYPE" not in env and "OPENBLAS_L2_SIZE" not in env
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TILEGEN_NUM_THREADS"):
        assert env[name] == "3"
    assert os.environ["OPENBLAS_CORETYPE"] == "Haswell"  # the caller's environment is unchanged


def test_case_list_and_check():
    full = benchcases.cases("gemm")
    ids = [c.id for c in full]
    assert len(ids) == len(set(ids)) == 43
    every = {c.id for op in benchcases.OPS for q in (False, True) for c in benchcases.cases(op, q)}
    assert set(benchcases.by_id()) == every and set(ids) | set(QUICK_IDS) <= every
    assert {c.group for c in full} == set(gemm_bench.GROUPS)
    assert [c.m for c in full if c.group == "small"] == [8, 16, 32, 64]
    assert all(c.alloc for c in full if c.group == "small")
    assert [c.m for c in full if c.group == "square"] == [128, 256, 512, 1024, 2048, 4096]
    decode = [(1, 1024, 1024), (1, 4096, 4096), (4, 4096, 4096)]
    assert {(c.m, c.k, c.n) for c in full if c.group == "skinny"} == {
        (16, 4096, 4096), (4096, 4096, 16), (4096, 16, 4096), *decode}
    assert {c.form for c in full if c.group == "gemv"} == {"vm", "mv"}
    assert [(c.dtype, c.m) for c in full if c.group == "f64"] == [("f64", 1024), ("f64", 2048)]
    assert [(c.dtype, c.m, c.k, c.n) for c in full if c.group == "bf16"] == [
        ("bf16", 256, 256, 256), ("bf16", 1024, 1024, 1024), ("bf16", 2048, 2048, 2048),
        ("bf16", 4096, 4096, 4096), *(("bf16",) + d for d in decode), ("bf16", 16, 4096, 4096)]
    assert [(c.m, c.k, c.n) for c in full if c.group == "s8"] == [
        (256, 256, 256), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), *decode,
        (16, 4096, 4096)]
    assert [(c.m, c.k, c.n) for c in full if c.group == "f16"] == [
        (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048)]
    f16_big = next(c for c in full if c.id == "f16-1024x1024x1024")
    assert f16_big.runs_on("torch") and not f16_big.runs_on("numpy")  # NumPy's loop: too slow
    assert not next(c for c in full if c.id == "f16-2048x2048x2048").runs_on("torch")
    s8_big = next(c for c in full if c.id == "s8-2048x2048x2048")
    assert s8_big.runs_on("torch") and not s8_big.runs_on("numpy")  # NumPy's loop: too slow
    stacks = [c for c in full if c.group == "stacked"]
    assert [(c.batch, c.m, c.k, c.n) for c in stacks] == [(100, 8, 8, 8), (64, 64, 64, 64),
                                                          (96, 128, 64, 128)]
    assert stacks[0].flops == 100 * 2 * 8 ** 3 and stacks[0].size is None
    assert all(c.batch == 0 for c in full if c.group != "stacked")
    with pytest.raises(ValueError, match="op"):
        benchcases.cases("conv9")

    for case in benchcases.cases("gemm", quick=True):
        a, b, out = case.operands()
        for x in (a, b) if out is None else (a, b, out):  # placed like NumPy's big arrays
            assert x.ctypes.data % 64 == benchcases.LINE_OFFSET and x.flags.c_contiguous
        assert (out is None) == case.alloc and (out is None or not out.any())
        good = np.matmul(a, b, dtype=np.int32 if case.dtype == "s8" else None)
        assert case.check((a, b, out), good) is None
        assert "off" in case.check((a, b, out), good + 1)
        if case.dtype != "s8":  # integers have no NaN
            assert "non-finite" in case.check((a, b, out), good * np.nan)
        wrong_dtype = {"s8": np.int64, "f16": np.float32}.get(case.dtype, np.float16)
        assert "dtype" in case.check((a, b, out), good.astype(wrong_dtype))
        assert "shape" in case.check((a, b, out), good[..., :-1])
        if case.batch:
            wrong = good.copy()
            wrong[-1] += 1  # only the last matrix of the stack
            assert f"matrix {case.batch - 1} of the stack" in case.check((a, b, out), wrong)


def test_plot_shows_single_squares_only():
    cases = [c.as_dict() for c in benchcases.cases("gemm")]
    sizes = bench.plotted_sizes(cases)
    assert sorted(sizes.values()) == [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert all("of" not in case_id for case_id in sizes)  # 100 x 8x8x8 is not the 8^3 point


def test_peak_notes_flag_a_busy_core():
    ok = {"1": {"f32": {"gflops": 100.0, "isa": "x"}}, "2": {"f32": {"gflops": 195.0, "isa": "x"}}}
    busy = {"1": {"f32": {"gflops": 100.0, "isa": "x"}}, "2": {"f32": {"gflops": 110.0, "isa": "x"}}}
    assert bench.peak_notes(ok) == []
    (note,) = bench.peak_notes(busy)
    assert "2-thread f32 peak" in note and "55%" in note


def test_ukernel_throughput_script(capsys):
    """benchmarks/ukernel_throughput.py builds and times kernels alone (both k loops of an asm
    kernel), and reports GFLOP/s against the FMA-probe peak."""
    import importlib.util

    from tilegen.core import _core

    path = REPO_ROOT / "benchmarks" / "ukernel_throughput.py"
    spec = importlib.util.spec_from_file_location("ukernel_throughput", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    kernels = ["tg_f32_gemm_ukernel_2x4__scalar", "tg_f32_gemm_ukernel_8x12__neon"]
    if _core.isas()["avx2"]:
        kernels.append("tg_f64_gemm_ukernel_6x8__avx2")
    argv = [a for k in kernels for a in ("--kernel", k)] + ["--kc", "32", "--seconds", "0.002",
                                                             "--reps", "2"]
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    rows = {tuple(line.split()[:2]): line for line in out.splitlines() if line.startswith("tg_")}
    assert "skipped: this CPU cannot run neon" in rows[("tg_f32_gemm_ukernel_8x12__neon", "skipped:")]
    loops = [("tg_f32_gemm_ukernel_2x4__scalar", "c")]
    if _core.isas()["avx2"]:
        loops += [("tg_f64_gemm_ukernel_6x8__avx2", "asm"), ("tg_f64_gemm_ukernel_6x8__avx2", "c")]
    for key in loops:
        cells = re.findall(r"([0-9.]+) \(([0-9.]+)\)\s+([0-9]+)%", rows[key])
        assert len(cells) == 2 and all(float(b) >= float(m) > 0 for b, m, _ in cells), rows[key]
    assert re.search(r"peak scalar f32: [0-9.]+ GFLOP/s", out)
    with pytest.raises(SystemExit):
        mod.main(["--kernel", "tg_f32_gemm_ukernel_99x4__scalar"])


def test_alignment_script(capsys):
    """benchmarks/alignment.py times in-place reads with operands at each offset into a cache
    line, tilegen and NumPy, after checking tilegen's result."""
    import importlib.util

    path = REPO_ROOT / "benchmarks" / "alignment.py"
    spec = importlib.util.spec_from_file_location("alignment", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for x in (benchcases.placed(np.arange(10.0), off) for off in mod.OFFSETS):
        assert x.ctypes.data % 64 in mod.OFFSETS and list(x) == list(range(10))
    argv = ["--shape", "1x64x256", "--shape", "64x256x1", "--dtype", "f64", "--seconds", "0.001",
            "--reps", "1"]
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:]}
    assert set(rows) == {"1x64x256", "64x256x1"}
    assert all(len(v) == 2 * len(mod.OFFSETS) and min(map(float, v)) > 0 for v in rows.values())
    with pytest.raises(SystemExit):
        mod.main(["--shape", "1x0x4"])


def test_libraries_take_turns_in_a_rotating_order():
    quick = benchcases.cases("gemm", quick=True)
    plain, stack = quick[0], next(c for c in quick if c.batch)
    b = bench.Bench("gemm", [1, 2], ["tilegen", "numpy", "scipy", "blis"], quick, 1, 0.001, 3)
    assert b.turns(1, plain, 0) == ["tilegen", "numpy", "scipy", "blis"]
    assert b.turns(1, plain, 1) == ["numpy", "scipy", "blis", "tilegen"]
    assert b.turns(2, plain, 0) == ["tilegen", "numpy", "scipy"]  # cython-blis: 1 thread only
    assert b.turns(1, stack, 4) == ["tilegen", "numpy"]  # no stacked call in SciPy or BLIS


def test_a_worker_that_dies_becomes_error_rows_and_the_run_goes_on():
    """Live workers take turns; one that dies mid-run (here: a case id it does not know) is
    reported in the cases it could not measure, and the run still ends."""
    first, second = benchcases.cases("gemm", quick=True)[:2]
    unknown = gemm_bench.Case("small", "f32", 3, 5, 7)
    assert unknown.id not in benchcases.by_id()
    b = bench.Bench("gemm", [1], ["tilegen", "numpy"], [first, unknown, second], 1, 0.001, 1)
    report, raw = {"errors": [], "libraries": {}}, {}
    b.measure_cases(1, report, raw)
    for lib in ("tilegen", "numpy"):
        (good,) = raw[first.id, lib, 1]
        assert len(good["times_s"]) == 1 and good["first_s"] > 0 and good["repeat"] is False
        assert report["libraries"][lib]["1"]["lib"] == lib
        for case in (unknown, second):
            (bad,) = raw[case.id, lib, 1]
            assert "worker failed" in bad["error"] and "KeyError" in bad["error"], bad
    assert len(report["errors"]) == 2


def test_conv2d_cases_and_onnx_model():
    """The conv2d plug-in: both layouts of every layer (4 convolutions, 4 transposed), ids
    unique and prefixed, ratio_cases pairing the layouts, the transposed cases' check passing
    tilegen's answer and failing a wrong one, and its hand-encoded ONNX Conv graph giving the
    reference's answer."""
    import tilegen
    from tilegen.ops.conv2d import bench as conv_bench

    full = benchcases.cases("conv2d")
    assert len({c.id for c in full}) == len(full) == 16
    assert sum(c.id.startswith("conv2d-") for c in full) == 8
    assert sum(c.id.startswith("convt2d-") for c in full) == 8
    assert not any(c.runs_on("onnxruntime") for c in full if c.kind == "transpose")
    for case in (c for c in benchcases.cases("conv2d", quick=True) if c.kind == "transpose"):
        ops = case.operands()
        call, to_numpy = conv_bench.make_call("tilegen", case, ops)
        got = to_numpy(call())
        assert case.check(ops, got) is None
        assert case.check(ops, got + 1e-2) is not None
    for c in full:
        pair = conv_bench.ratio_cases(c)
        assert c.id in pair and len(pair) == 2 and all(p in benchcases.by_id() for p in pair)
    ort = pytest.importorskip("onnxruntime")
    case = benchcases.cases("conv2d", quick=True)[0]
    x, w, b = case.operands()
    oh = case.out_hw
    model = conv_bench.onnx_conv_model(w, b, case.stride, case.pad, case.groups, x.shape,
                                       (1, case.cout, oh, oh))
    got = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert case.check((x, w, b), got) is None


def test_cv2_row_shows_opencv_not_a_blas_pool():
    """The image bench's cv2 row reports OpenCV itself (version, parallel framework and its
    threads, SIMD baseline and dispatch, from cv2.getBuildInformation()), not the BLAS pool
    threadpoolctl finds beside it, which was NumPy's OpenBLAS on a user's machine."""
    from tilegen.tools import bench_worker

    cv2 = pytest.importorskip("cv2")
    build = bench_worker.cv2_build(cv2.getBuildInformation(), cv2.useOptimized())
    assert build["parallel"] and build["baseline"] and build["optimized"] == cv2.useOptimized()
    numpy_blas = {"internal_api": "openblas", "version": "0.3.99", "architecture": "Haswell",
                  "threading_layer": "pthreads", "num_threads": 2,
                  "filepath": "/site-packages/numpy.libs/libscipy_openblas64_.so"}
    info = {"lib": "cv2", "version": cv2.__version__, "threads": 2, "cv2_threads": 2,
            "cv2_build": build, "pools": [numpy_blas]}
    report = {"libs": ["cv2"], "libraries": {"cv2": {"2": info}}, "op": "image",
              "threads": [2]}
    (line,) = bench.format_library_lines(report)
    assert "OpenBLAS" not in line and "0.3.99" not in line, line
    assert f"OpenCV {cv2.__version__} (parallel framework {build['parallel']}, " \
           f"cv2.getNumThreads() = 2; SIMD baseline {build['baseline']}, dispatched " in line
    text = ("General configuration for OpenCV 5.1.0 ===\n  CPU/HW features:\n"
            "    Baseline:                    SSE SSE2\n      requested:   SSE3\n"
            "    Dispatched code generation:  AVX2   AVX512_SKX\n"
            "  Parallel framework:            TBB (ver 2021.1 interface 12010)\n")
    assert bench_worker.cv2_build(text, False) == {
        "optimized": False, "baseline": "SSE SSE2", "dispatched": "AVX2 AVX512_SKX",
        "parallel": "TBB (ver 2021.1 interface 12010)"}


def test_impossible_cells_are_flagged_unreliable():
    """A cell whose median is more than 2x its best, or that claims more than 100% of the FMA
    probe's peak, is flagged: its reasons in the JSON row, a mark in the table and a line naming
    it under the table; a ratio dividing such a cell is marked too. A steady cell is not."""
    op = benchcases.op_module("gemm")
    steady, spread, over = benchcases.cases("gemm", quick=True)[:3]
    assert steady.dtype == spread.dtype == over.dtype == "f32"
    peak_gflops = 100.0

    def at(case, pct):  # seconds per call that give `pct` % of the peak
        return case.work / (pct / 100 * peak_gflops * 1e9) / op.UNIT_SCALE * 1e9

    def runs(best, median):
        return [{"times_s": [best, median, median], "first_s": 2 * median, "loops": 10,
                 "repeat": False}]

    raw = {(steady.id, "tilegen", 1): runs(at(steady, 50), at(steady, 45)),
           (steady.id, "numpy", 1): runs(at(steady, 40), at(steady, 38)),
           (spread.id, "tilegen", 1): runs(at(spread, 60), at(spread, 60) * 3),
           (spread.id, "numpy", 1): runs(at(spread, 40), at(spread, 39)),
           (over.id, "tilegen", 1): runs(at(over, 50), at(over, 49)),
           (over.id, "numpy", 1): runs(at(over, 133), at(over, 120))}
    mpeak = {"1": {"f32": {"gflops": peak_gflops, "isa": "avx2"}}}
    rows = {(r["case"], r["lib"]): r for r in bench.merge_results(raw, [steady, spread, over],
                                                                  mpeak, op)}
    assert rows[steady.id, "tilegen"]["unreliable"] == [] and not rows[steady.id, "numpy"]["unreliable"]
    assert rows[steady.id, "tilegen"]["ratio_unreliable"] is False
    (why,) = rows[spread.id, "tilegen"]["unreliable"]
    assert "median is 3.00x the best" in why
    assert rows[spread.id, "tilegen"]["ratio_unreliable"] is True
    (why,) = rows[over.id, "numpy"]["unreliable"]
    assert "133% of the FMA probe's peak" in why
    assert not rows[over.id, "tilegen"]["unreliable"] and rows[over.id, "tilegen"]["ratio_unreliable"]
    json.dumps(list(rows.values()))  # the JSON carries them as they are

    report = {"op": "gemm", "unit": op.UNIT, "ratio_vs": list(op.RATIO_VS), "rounds": 1,
              "reps": 3, "target_s": 0.005, "threads": [1], "libs": ["tilegen", "numpy"],
              "machine": {"cpu_brand": "test"}, "libraries": {}, "machine_peak": mpeak,
              "cases": [c.as_dict() for c in (steady, spread, over)],
              "results": list(rows.values()), "errors": []}
    text = bench.format_report(report)
    table = {line.split("  ")[0].strip(): line for line in text.splitlines()}
    assert "!" not in table[steady.label]
    assert table[spread.label].count("!") == 2   # tilegen's cell and the ratio
    assert table[over.label].count("!") == 2     # numpy's cell and the ratio
    assert "!: unreliable, 2 cell(s)" in text
    assert f"unreliable: tilegen 1T {spread.id}: the median is 3.00x the best" in text
    assert f"unreliable: numpy 1T {over.id}: 133% of the FMA probe's peak" in text


def test_quick_measures_the_peak_once_without_the_portable_probe(quick_run):
    """--quick checks the harness in seconds: the peak is probed once (before the cases), with
    at most one retry, and not on the portable ISA when a SIMD one exists; every row says
    whether it is reliable."""
    _, report, _ = quick_run
    simd = [i for i in report["machine"]["isas_available"] if i != "scalar"]
    for by_isa in report["peaks"].values():
        assert set(by_isa) == set(simd or ["scalar"])
        for r in by_isa.values():
            assert r["f32"]["retries"] <= 1 and len(r["f32"]["all"]) <= 2 * 3
    assert all(isinstance(r["unreliable"], list) for r in report["results"])


def test_plugin_notes_are_pooled_into_the_row_and_shown_under_the_table():
    """A plug-in's notes(lib, case) (the Dask bench's worker memory) reach the JSON row, pooled
    over rounds without repeats, and a line under the table naming the library and case."""
    op = benchcases.op_module("gemm")
    case = benchcases.cases("gemm", quick=True)[0]
    run = {"times_s": [1e-3], "first_s": 2e-3, "loops": 1, "repeat": False}
    raw = {(case.id, "tilegen", 1): [dict(run, notes=["peak RSS 100"]),
                                     dict(run, notes=["peak RSS 100", "peak RSS 120"])],
           (case.id, "numpy", 1): [run]}
    rows = {r["lib"]: r for r in bench.merge_results(raw, [case], {}, op)}
    assert rows["tilegen"]["notes"] == ["peak RSS 100", "peak RSS 120"]
    assert "notes" not in rows["numpy"]
    report = {"op": "gemm", "unit": op.UNIT, "ratio_vs": list(op.RATIO_VS), "rounds": 2,
              "reps": 1, "target_s": 0.005, "threads": [1], "libs": ["tilegen", "numpy"],
              "machine": {"cpu_brand": "test"}, "libraries": {}, "machine_peak": {},
              "cases": [case.as_dict()], "results": list(rows.values()), "errors": []}
    text = bench.format_report(report)
    assert f"tilegen 1T {case.id}: peak RSS 120" in text.splitlines()


def test_consumer_packages_bench_plugins_are_found():
    """tilegen/<package>/bench.py beside the layers is a plug-in (tilegen/dask's), found
    without importing dask."""
    assert "dask" in benchcases.OPS
    mod = benchcases.op_module("dask")
    assert mod.__name__ == "tilegen.dask.bench" and mod.LIBS[0] == "tilegen"
    assert all(c.id.startswith("dask-") for q in (False, True) for c in benchcases.cases("dask", q))
    assert not any(m.__name__.startswith("tilegen.tools") for m in benchcases.OPS.values())
