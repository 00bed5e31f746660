"""Kernel dispatch: what runtime_info() reports, the CPU detector against py-cpuinfo, the
fake-features hook, and the TILEGEN_ISA / TILEGEN_VERBOSE environment (in subprocesses, since
both are read once, at import).

Nothing here executes an ISA the machine lacks: ISA-specific checks are skipped with the reason.
"""
import json
import shutil
import subprocess
import sys
import platform
import re
import textwrap

import numpy as np
import pytest

import cprog
import tilegen as tg
from conftest import REPO_ROOT, RUN_ISA_CAP
from tilegen.core import _core
from tilegen.ops.gemm import _gemm
from tilegen.dsl import FEATURES, ISAS, load_registry, parse_name, serving_isa

ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}.get(
    platform.machine().lower(), platform.machine().lower())
AARCH64_FEATURES = ("asimd", "asimdhp", "asimddp", "i8mm", "bf16")
X86_CHECKED = ("avx", "fma", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
               "avx512_bf16", "avx_vnni", "avx512_fp16")


def usable_isas():
    return set(tg.runtime_info()["isas_available"])


def best_isa() -> str:
    """What an uncapped library picks: the best ISA built here and supported (this run may be
    capped: conftest.RUN_ISA_CAP)."""
    return max(usable_isas(), key=lambda i: ISAS[i].priority)


def gemm_isa(best: str, dtype: str = "f32") -> str:
    """The ISA of the (gemm, dtype) kernels when `best` is the best ISA allowed (bfloat16 and
    int8 products are the gemmbf16 and gemms8 families')."""
    family = {"bf16": "gemmbf16", "s8": "gemms8"}.get(dtype, "gemm")
    return serving_isa(load_registry(), family, dtype, best)


def need_isa(isa: str):
    if ISAS[isa].arch not in ("any", ARCH):
        pytest.skip(f"{isa} is an {ISAS[isa].arch} ISA; this host is {ARCH}")
    if isa not in usable_isas():
        feats = tg.runtime_info()["features"]["os_enabled"]
        pytest.skip(f"this CPU (or its OS) lacks {isa}: needs {' '.join(ISAS[isa].requires)}, "
                    f"has {' '.join(feats)}")


def check_matmul(rtol_f32=2e-5):
    """tg.matmul against float64 NumPy, both dtypes, shapes that use edge tiles and 2 threads."""
    rng = np.random.default_rng(3)
    for m, k, n in [(1, 1, 1), (5, 3, 7), (37, 65, 29), (200, 150, 170)]:
        for t, tol in ((np.float32, rtol_f32 * np.sqrt(k)), (np.float64, 1e-12)):
            a = rng.uniform(-1, 1, (m, k)).astype(t)
            b = rng.uniform(-1, 1, (k, n)).astype(t)
            want = a.astype(np.float64) @ b.astype(np.float64)
            scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
            got = tg.matmul(a, b)
            assert got.dtype == t and got.shape == (m, n)
            assert (np.abs(got - want) <= tol * scale + 1e-30).all(), (m, k, n, t)


# ------------------------------------------------------------------------------ runtime_info

def test_runtime_info_structure():
    info = tg.runtime_info()
    for key in ("version", "numpy_version", "arch", "cpu_brand", "features", "isa_cap",
                "isas_available", "kernels", "threads", "library"):
        assert key in info, key
    assert info["version"] == tg.__version__
    assert info["numpy_version"] == np.__version__
    assert info["library"] == tg.get_library()
    json.dumps(info)  # plain data only

    detected, enabled = info["features"]["detected"], info["features"]["os_enabled"]
    assert set(enabled) <= set(detected) <= set(FEATURES)
    assert info["isa_cap"] is None or info["isa_cap"] in ISAS
    assert "scalar" in info["isas_available"]
    for isa in info["isas_available"]:
        assert ISAS[isa].arch in ("any", ARCH)
        assert set(ISAS[isa].requires) <= set(enabled), isa

    assert info["isa"] == best_isa()
    assert set(info["kernels"]["gemm"]) == {"f32", "f64", "bf16", "s8"}
    for dt, cfg in info["kernels"]["gemm"].items():
        assert cfg["isa"] in info["isas_available"]
        main = parse_name(cfg["kernel"])
        # bf16 and int8 products have their own families (pair/quad-packed B), same op.
        family = {"bf16": "gemmbf16", "s8": "gemms8"}.get(dt, "gemm")
        assert (main["dtype"], main["op"], main["isa"]) == (dt, family, cfg["isa"])
        if dt in ("bf16", "s8"):
            continue  # one packed-A kernel; no rows variant to report
        # A C-ordered product runs the "rows" kernels where the ISA has them.
        assert main["a_layout"] == ("rows" if cfg["rows"]["mr"] else "packed")
        for layout in ("packed", "rows"):
            sub = cfg[layout]
            if not sub["mr"]:
                assert layout == "rows" and sub["kernel"] is None
                continue
            k = parse_name(sub["kernel"])
            assert (k["mr"], k["nr"], k["a_layout"]) == (sub["mr"], cfg["nr"], layout)
            assert len(sub["kernels_by_rows"]) == sub["mr"]
            for rows, name in enumerate(sub["kernels_by_rows"], 1):
                k = parse_name(name)
                assert k["isa"] == cfg["isa"] and k["nr"] == cfg["nr"] and k["a_layout"] == layout
                assert rows <= k["mr"] <= sub["mr"]
            assert sub["kernels_by_rows"][-1] == sub["kernel"]
        assert cfg["nc"] % cfg["nr"] == 0 and cfg["kc"] > 0
        for form, nr_one in (("gemv_kernel", True), ("gemv_axpy_kernel", False)):
            g = parse_name(cfg[form])
            assert g["op"] == "gemv" and (g["nr"] == 1) == nr_one, (form, cfg[form])

    # The best usable ISA with f32 kernels serves f32 when nothing caps it.
    if info["isa_cap"] is None:
        best = max(info["isas_available"], key=lambda i: ISAS[i].priority)
        assert info["kernels"]["gemm"]["f32"]["isa"] == gemm_isa(best)
    assert info["threads"]["num_threads"] == tg.get_num_threads() >= 1
    assert info["threads"]["backend"]


def test_show_config_prints_the_kernels(capsys):
    tg.show_config()
    out = capsys.readouterr().out
    assert tg.runtime_info()["kernels"]["gemm"]["f32"]["kernel"] in out


@pytest.fixture(scope="module")
def pycpuinfo_flags():
    cpuinfo = pytest.importorskip("cpuinfo", reason="py-cpuinfo is not installed")
    flags = set(cpuinfo.get_cpu_info().get("flags", []))
    if not flags:
        pytest.skip("py-cpuinfo reports no CPU flags on this platform")
    return flags


def test_detector_agrees_with_py_cpuinfo(pycpuinfo_flags):
    """The C detector (cpuid + XGETBV / HWCAP) claims only what py-cpuinfo (the kernel's view,
    /proc/cpuinfo) also reports, and misses nothing of it that tilegen dispatches on."""
    info = tg.runtime_info()["features"]
    detected, enabled = set(info["detected"]), set(info["os_enabled"])
    checked = X86_CHECKED if ARCH == "x86_64" else AARCH64_FEATURES if ARCH == "aarch64" else ()
    if not checked:
        pytest.skip(f"no feature detection on {ARCH}")
    claimed = {f for f in checked if f in enabled}
    assert claimed <= pycpuinfo_flags, f"tilegen claims {claimed - pycpuinfo_flags} " \
                                       f"which py-cpuinfo does not report"
    reported = {f for f in checked if f in pycpuinfo_flags}
    assert reported <= detected, f"py-cpuinfo reports {reported - detected}, tilegen missed it"


# What qemu-aarch64's CPU models implement of the features tilegen dispatches on (QEMU 7.2's
# target/arm/cpu64.c): the detector must report exactly these under each.
QEMU_AARCH64_MODELS = {
    "cortex-a72": {"asimd"},                                   # Armv8.0
    "neoverse-n1": {"asimd", "asimdhp", "asimddp"},            # Armv8.2 with fp16 and dotprod
    "max": set(AARCH64_FEATURES),                              # everything QEMU emulates
}


@pytest.mark.parametrize("model", sorted(QEMU_AARCH64_MODELS))
def test_aarch64_detector_under_qemu_cpu_models(model, tmp_path):
    """The HWCAP/HWCAP2 detector, cross-built, reports each emulated CPU's features and no more:
    a tier is only chosen where its instructions exist."""
    if ARCH == "aarch64":
        pytest.skip("checked against /proc/cpuinfo natively (test_detector_agrees_with_py_cpuinfo)")
    for tool, pkg in (("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
                      ("qemu-aarch64", "qemu-user")):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not found; install {pkg}")
    root = REPO_ROOT / "tilegen"
    exe = tmp_path / "cpu_features_print"
    build = subprocess.run(
        ["aarch64-linux-gnu-gcc", "-static", "-std=c99", "-O2", "-Wall", "-Werror",
         "-I", str(root / "generated"), "-I", str(root / "core"),
         str(cprog.c_source("cpu_features_print.c")), str(root / "core" / "cpu_features.c"),
         "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run(["qemu-aarch64", "-cpu", model, str(exe)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    dispatched = set(AARCH64_FEATURES)
    assert set(run.stdout.split()) & dispatched == QEMU_AARCH64_MODELS[model]


# ------------------------------------------------------------------------------ fake features

@pytest.fixture
def fake_features():
    """Calls _core._reinit(...) for the test, and always restores the real detection."""
    try:
        yield _core._reinit
    finally:
        assert _core._reinit(None) == 0
        assert tg.runtime_info()["kernels"]["gemm"]["f32"]["isa"] == ORIGINAL_F32_ISA


ORIGINAL_F32_ISA = tg.runtime_info()["kernels"]["gemm"]["f32"]["isa"]


def test_fake_features_avx2(fake_features):
    need_isa("avx2")
    if RUN_ISA_CAP and ISAS[RUN_ISA_CAP].priority < ISAS["avx2"].priority:
        pytest.skip(f"this run is capped below avx2 (TILEGEN_ISA={RUN_ISA_CAP})")
    fake_features(["sse2", "avx", "fma", "avx2"])
    info = tg.runtime_info()
    assert info["features"]["os_enabled"] == ["sse2", "avx", "fma", "avx2"]
    for dt in ("f32", "f64"):
        cfg = info["kernels"]["gemm"][dt]
        assert cfg["isa"] == "avx2" and parse_name(cfg["kernel"])["isa"] == "avx2", cfg
    assert "avx512" not in info["isas_available"]
    check_matmul()


def test_fake_features_none_gives_scalar(fake_features):
    fake_features([])
    info = tg.runtime_info()
    assert info["features"]["os_enabled"] == []
    assert info["isas_available"] == ["scalar"]
    for dt in ("f32", "f64"):
        cfg = info["kernels"]["gemm"][dt]
        assert cfg["isa"] == "scalar" and parse_name(cfg["kernel"])["isa"] == "scalar", cfg
    check_matmul()


def test_fake_amx_features_select_the_tile_tiers(fake_features):
    """The dispatcher's side of the AMX tiers (no tile instruction runs: selection only): with
    amx_tile + amx_bf16 + amx_int8 on top of avx512bf16's and avx512vnni's features, bfloat16
    takes amxbf16 and int8 amxint8 (float32 stays avx512's); amx_bf16 without amx_tile, or
    without avx512_bf16, is not enough; amx_int8 alone of the two gives int8 its tier only."""
    if RUN_ISA_CAP:
        pytest.skip(f"this run is capped (TILEGEN_ISA={RUN_ISA_CAP})")
    if ARCH != "x86_64":
        pytest.skip("x86-64 tiers")
    base = list(ISAS["avx512bf16"].requires) + ["avx512_vnni"]
    amx = ["amx_tile", "amx_bf16", "amx_int8"]

    def chosen(features):
        fake_features(features)
        k = tg.runtime_info()["kernels"]["gemm"]
        return k["f32"]["isa"], k["bf16"]["isa"], k["s8"]["isa"]

    assert chosen(base + amx) == ("avx512", "amxbf16", "amxint8")
    assert chosen(base + ["amx_bf16", "amx_int8"]) == ("avx512", "avx512bf16", "avx512vnni")
    assert chosen([f for f in base if f != "avx512_bf16"] + amx) == ("avx512", "avx512", "amxint8")
    assert chosen(base + ["amx_tile", "amx_int8"]) == ("avx512", "avx512bf16", "amxint8")


def test_amx_reported_is_usable_on_a_recent_linux():
    """Where the CPU reports AMX, Linux 5.16+ grants the tile data permission the detector asks
    for (arch_prctl ARCH_REQ_XCOMP_PERM), unless a thread's signal stack is too small for the
    larger frames: then the tiers would silently be absent, here inside pytest (faulthandler
    installs one), which this test makes visible instead."""
    reported, usable = _core.features()
    if "amx_tile" not in reported:
        pytest.skip("this CPU reports no AMX")
    release = re.match(r"(\d+)\.(\d+)", platform.release())
    if platform.system() != "Linux" or not release or tuple(map(int, release.groups())) < (5, 16):
        pytest.skip("the AMX permission needs Linux 5.16+")
    assert "amx_tile" in usable, (
        "AMX reported but not usable: XCR0 lacks XTILECFG|XTILEDATA or the kernel refused "
        "ARCH_REQ_XCOMP_PERM (a sigaltstack too small for AMX frames?)")


def test_fake_features_rejects_unknown_names(fake_features):
    with pytest.raises(ValueError, match="allowed"):
        fake_features(["sse2", "avx9000"])


def test_restored_detection_is_correct():
    _core._reinit(None)
    assert tg.runtime_info()["kernels"]["gemm"]["f32"]["isa"] == ORIGINAL_F32_ISA
    check_matmul()


# x86 tiers this CPU may lack, chosen (never run) under faked features. Alder Lake: AVX2 and
# AVX-VNNI, no AVX-512; Sapphire Rapids: AVX-512 with VNNI, BF16 and FP16, and AVX-VNNI.
ALDER_LAKE = ["sse2", "avx", "fma", "avx2", "avx_vnni"]
SAPPHIRE_RAPIDS = ALDER_LAKE + ["avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_bf16",
                                "avx512_vnni", "avx512_fp16"]


@pytest.mark.skipif(ARCH != "x86_64", reason="x86-64 tiers")
@pytest.mark.parametrize("cpu, cap, want", [
    (ALDER_LAKE, None, {"f32": "avx2", "bf16": "avx2", "s8": "avxvnni", "f16acc": None}),
    (ALDER_LAKE[:-1], None, {"f32": "avx2", "bf16": "avx2", "s8": "avx2", "f16acc": None}),
    (SAPPHIRE_RAPIDS, None,
     {"f32": "avx512", "bf16": "avx512bf16", "s8": "avx512vnni", "f16acc": "avx512fp16"}),
    (SAPPHIRE_RAPIDS, "avx512fp16",
     {"f32": "avx512", "bf16": "avx512bf16", "s8": "avx512vnni", "f16acc": "avx512fp16"}),
    (SAPPHIRE_RAPIDS, "avx512", {"f32": "avx512", "bf16": "avx512", "s8": "avx512", "f16acc": None}),
    (SAPPHIRE_RAPIDS, "avxvnni", {"f32": "avx2", "bf16": "avx2", "s8": "avxvnni", "f16acc": None}),
], ids=["alder-lake", "avx2-only", "sapphire-rapids", "cap-avx512fp16", "cap-avx512",
        "cap-avxvnni"])
def test_tiers_chosen_on_cpus_with_them(fake_features, monkeypatch, cpu, cap, want):
    """Each product takes the best tier the (faked) CPU has and TILEGEN_ISA allows: int8 on an
    AVX-VNNI CPU without AVX-512 takes avxvnni (quantized layers too), half accumulation takes
    avx512fp16 where AVX512-FP16 is. Only the selection: nothing runs a kernel here."""
    if cap is None:
        monkeypatch.delenv("TILEGEN_ISA", raising=False)
    else:
        monkeypatch.setenv("TILEGEN_ISA", cap)   # read again by the re-selection
    assert fake_features(cpu) == 0
    info = tg.runtime_info()
    assert info["isa_cap"] == cap
    gemm = info["kernels"]["gemm"]
    for dt in ("f32", "bf16", "s8"):
        assert gemm[dt]["isa"] == want[dt], (dt, gemm[dt])
        assert parse_name(gemm[dt]["kernel"])["isa"] == want[dt], (dt, gemm[dt])
        assert want[dt] == gemm_isa(cap or max(info["isas_available"],
                                               key=lambda i: ISAS[i].priority), dt)
    linear = info["kernels"]["linear"]
    assert all(v["isa"] == want["s8"] for v in linear.values()), linear
    f16acc = _gemm.f16acc_kernel()
    assert (f16acc and parse_name(f16acc)["isa"]) == want["f16acc"], f16acc


# ------------------------------------------------------------------------------ TILEGEN_ISA

PROBE = textwrap.dedent("""
    import json, sys
    import ml_dtypes, numpy as np
    import tilegen as tg
    info = tg.runtime_info()
    rng = np.random.default_rng(1)
    ok = True
    for m, k, n in [(3, 5, 7), (37, 65, 29), (200, 150, 170)]:
        for t in (np.float32, np.float64):
            a = rng.uniform(-1, 1, (m, k)).astype(t)
            b = rng.uniform(-1, 1, (k, n)).astype(t)
            want = a.astype(np.float64) @ b.astype(np.float64)
            tol = 2e-5 * k ** 0.5 if t == np.float32 else 1e-12
            ok &= bool((abs(tg.matmul(a, b) - want) <= tol * (abs(a) @ abs(b)) + 1e-30).all())
        a = rng.integers(-9, 9, (m, k)).astype("bfloat16")  # exact in float32 sums
        b = rng.integers(-9, 9, (k, n)).astype("bfloat16")
        ok &= bool((tg.matmul(a, b) == a.astype(np.float32) @ b.astype(np.float32)).all())
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
        ok &= bool((tg.matmul(a, b, dtype=np.int32) == a.astype(np.int64) @ b).all())
    kernels = info["kernels"]["gemm"]
    print(json.dumps({"cap": info["isa_cap"], "ok": ok, "isa": info["isa"],
                      **{dt: kernels[dt] for dt in ("f32", "f64", "bf16", "s8")}}))
""")


def run_probe(**env):
    r = cprog.python(PROBE, env=cprog.clean_env(**env))
    return r, (json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else None)


@pytest.mark.parametrize("isa", ["scalar", "avx2", "neon", "avx512", "avx512vnni", "avx512bf16",
                                 "avxvnni", "avx512fp16", "amxint8", "amxbf16"])
def test_tilegen_isa_cap(isa):
    """Under the cap, each dtype's kernels are of the best ISA at or below it that has them
    (avx512bf16 has bfloat16 kernels only: its float32 ones are avx512's; avx512vnni int8)."""
    need_isa(isa)
    r, out = run_probe(TILEGEN_ISA=isa)
    assert r.returncode == 0, r.stderr
    assert out["cap"] == isa and out["isa"] == isa
    for dt in ("f32", "f64", "bf16", "s8"):
        want = gemm_isa(isa, dt)
        assert out[dt]["isa"] == want and parse_name(out[dt]["kernel"])["isa"] == want, out[dt]
    assert out["ok"], "matmul is wrong under TILEGEN_ISA=" + isa


def test_tilegen_isa_is_case_insensitive():
    r, out = run_probe(TILEGEN_ISA="SCALAR")
    assert r.returncode == 0, r.stderr
    assert out["f32"]["isa"] == "scalar" and out["ok"]


def test_tilegen_isa_only_lowers():
    """A cap at or above the best usable ISA changes nothing."""
    best = best_isa()
    r, out = run_probe(TILEGEN_ISA=best)
    assert r.returncode == 0, r.stderr
    assert out["f32"]["isa"] == gemm_isa(best)
    assert RUN_ISA_CAP or gemm_isa(best) == ORIGINAL_F32_ISA


def import_error(value):
    r = cprog.python("import tilegen", env=cprog.clean_env(TILEGEN_ISA=value))
    assert r.returncode == 1, (f"TILEGEN_ISA={value}: exit {r.returncode} (a negative code is a "
                               f"signal, e.g. SIGILL)\n{r.stderr}")
    assert "ImportError" in r.stderr, r.stderr
    return r.stderr.strip().splitlines()[-1]


def test_tilegen_isa_unknown_value():
    msg = import_error("foo")
    assert "TILEGEN_ISA=foo" in msg and "allowed values" in msg, msg
    for isa in ISAS:
        assert isa in msg, f"{isa} missing from {msg!r}"


def test_tilegen_isa_of_another_architecture():
    foreign = [i for i, x in ISAS.items() if x.arch not in ("any", ARCH)]
    if not foreign:
        pytest.skip(f"every ISA of the table runs on {ARCH}")
    for isa in foreign:   # e.g. neon on x86-64: a clear error, never SIGILL
        msg = import_error(isa)
        assert f"TILEGEN_ISA={isa}" in msg and "architecture" in msg, msg


def test_tilegen_isa_the_cpu_lacks():
    missing = [i for i, x in ISAS.items() if x.arch == ARCH and i not in usable_isas()]
    if not missing:
        pytest.skip(f"this CPU has every {ARCH} ISA of the table "
                    f"({', '.join(sorted(usable_isas()))}), so none can be refused")
    for isa in missing:   # e.g. avx512 on an AVX2-only machine
        msg = import_error(isa)
        assert f"TILEGEN_ISA={isa}" in msg and "lacks" in msg, msg


def test_tilegen_verbose_logs_the_choice():
    r = cprog.python("import tilegen as tg, json; "
                     "print(json.dumps(tg.runtime_info()['kernels']['gemm']))",
                     env=cprog.clean_env(TILEGEN_VERBOSE="1"))
    assert r.returncode == 0, r.stderr
    kernels = json.loads(r.stdout)
    for dt in ("f32", "f64"):
        k = kernels[dt]
        assert re.search(rf"tilegen: {dt} gemm: {k['isa']}, {k['packed']['kernel']} / "
                         rf"{k['rows']['kernel'] or '-'} \(KC={k['kc']} NC={k['nc']}\); "
                         rf"gemv {k['gemv_kernel']} / {k['gemv_axpy_kernel']}", r.stderr), r.stderr
    assert "usable ISAs" in r.stderr
    quiet = cprog.python("import tilegen", env=cprog.clean_env(TILEGEN_VERBOSE="0"))
    assert quiet.returncode == 0 and "tilegen:" not in quiet.stderr, quiet.stderr


def test_bad_cap_from_c_runs_uncapped(tmp_path):
    """A C program has no ImportError to raise: it gets the message on stderr and an uncapped
    library; tilegen_init() returns -1 with the reason."""
    src = tmp_path / "cap.c"
    src.write_text(textwrap.dedent("""
        #include <stdio.h>
        #include "tilegen.h"
        int main(void) {
          float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
          int rc = tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, 2, 2,
                                    2, 1, a, 2, b, 2, 0, c, 2, NULL, TILEGEN_ACT_NONE);
          printf("%d %g %g %g %g|%d|%s|%s\\n", rc, c[0], c[1], c[2], c[3], tilegen_init(),
                 tilegen_isa_name(), tilegen_init_error());
          return 0;
        }
    """))
    exe = tmp_path / "cap"
    r = cprog.run([cprog.cc(), f"-I{tg.get_include()}", str(src), "-o", str(exe),
                   *cprog.tilegen_link_args()])
    assert r.returncode == 0, r.stderr
    r = cprog.run([exe], env=cprog.clean_env(TILEGEN_ISA="foo"))
    assert r.returncode == 0, r.stderr
    out, init, isa, err = r.stdout.strip().split("|")
    assert out == "0 1 2 3 4" and init == "-1" and isa == best_isa()
    assert "unknown ISA" in err and "running uncapped" in r.stderr, r.stderr


# ------------------------------------------------------------------------------ re-tuning races

RETUNE = textwrap.dedent("""
    import sys, threading, time
    import numpy as np
    import tilegen as tg
    from tilegen.core import _core
    from tilegen.ops.gemm import _gemm
    names = sys.argv[1:]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 300)).astype(np.float32)
    b = rng.standard_normal((300, 150)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 * (abs(a).astype(np.float64) @ abs(b))
    done, bad, calls = threading.Event(), [], [0]
    def gemms():
        while not done.is_set():
            if not (abs(tg.matmul(a, b) - want) <= tol).all():
                bad.append(1)
            calls[0] += 1
    t = threading.Thread(target=gemms)
    t.start()
    end = time.monotonic() + 1.0
    while time.monotonic() < end or calls[0] < 50:
        for name in names:
            _gemm.set_gemm_kernel(np.float32, name)
        _gemm.set_gemm_blocking(np.float32, nc=64 + 64 * (calls[0] % 3), kc=128 + 64 * (calls[0] % 2))
    done.set()
    t.join()
    print(len(bad), calls[0])
""")


def test_retuning_while_gemms_run():
    """Switching the main tile or the blocking (what `tilegen tune` does) under a running GEMM
    must neither crash it nor change its answer (it used to call a NULL kernel: SIGSEGV)."""
    cfg = tg.runtime_info()["kernels"]["gemm"]["f32"]
    layout = parse_name(cfg["kernel"])["a_layout"]
    names = list(dict.fromkeys(cfg[layout]["kernels_by_rows"]))
    if len(names) < 2:
        pytest.skip(f"the {ORIGINAL_F32_ISA} f32 GEMM has a single tile; nothing to switch")
    r = cprog.run([sys.executable, "-c", RETUNE, names[-1], names[0]], timeout=60)
    assert r.returncode == 0, f"exit {r.returncode} (negative: killed by a signal)\n{r.stderr}"
    bad, calls = map(int, r.stdout.split())
    assert calls >= 50 and bad == 0, r.stdout


def test_fork_during_first_initialisation(tmp_path):
    """A child forked while another thread holds the dispatch's initialisation lock (here:
    blocked logging to a full stderr pipe) can still call BLAS (it used to hang forever)."""
    exe = cprog.build("fork_during_init.c", tmp_path / "fork_during_init", link_tilegen=True)
    r = cprog.run([exe], env=cprog.clean_env(TILEGEN_VERBOSE="1"), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------- emulated CPUs without a tier

EMULATED_CLIENT = r"""
#include <stdio.h>
#include <stdint.h>
#include <tilegen.h>

int main(void) {  /* 3x5 @ 5x4 in int8 and bfloat16, small integers: both exact */
  int8_t a8[15], b8[20];
  uint16_t a16[15], b16[20];
  float af[15], bf[20], c16[12];
  int32_t c8[12];
  for (int i = 0; i < 15; i++) { a8[i] = (int8_t) (i * 7 % 11 - 5); af[i] = a8[i]; }
  for (int i = 0; i < 20; i++) { b8[i] = (int8_t) (i * 5 % 13 - 6); bf[i] = b8[i]; }
  tilegen_bf16_from_f32(15, af, 1, a16, 1);
  tilegen_bf16_from_f32(20, bf, 1, b16, 1);
  if (tilegen_gemm_s8(3, 4, 5, a8, 5, 1, b8, 4, 1, 0, c8, 4, 1) != 0) return 2;
  if (tilegen_gemm_bf16(3, 4, 5, 1.0f, a16, 5, 1, b16, 4, 1, 0.0f, c16, TILEGEN_F32, 4, 1,
                        NULL, 0, TILEGEN_ACT_NONE) != 0) return 3;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) {
      int s = 0;
      for (int p = 0; p < 5; p++) s += a8[i * 5 + p] * b8[p * 4 + j];
      if (c8[i * 4 + j] != s || c16[i * 4 + j] != (float) s) { printf("bad %d %d\n", i, j); return 4; }
    }
  printf("OK %s\n", tilegen_isa_name());
  return 0;
}
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="emulates x86-64 CPUs")
@pytest.mark.parametrize("cpu, isa", [("Haswell", "avx2"), ("Nehalem", "scalar")])
def test_cpus_without_a_tier_never_run_it(tmp_path, cpu, isa):
    """Under qemu-x86_64 as a CPU without AVX-512 (qemu's TCG has none: its tiers cannot be
    emulated here) or without AVX, the bfloat16 and int8 products take the tier the CPU has and
    are right; an instruction the CPU lacks would end the program (SIGILL)."""
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.skip("qemu-x86_64 (Debian's qemu-user) is not installed")
    src, exe = tmp_path / "client.c", tmp_path / "client"
    src.write_text(EMULATED_CLIENT)
    r = cprog.run([cprog.cc(), "-std=gnu11", f"-I{tg.get_include()}", str(src), "-o", str(exe),
                   *cprog.tilegen_link_args()])
    assert r.returncode == 0, r.stderr
    r = cprog.run([qemu, "-cpu", cpu, str(exe)], env=cprog.clean_env(TILEGEN_VERBOSE="1"),
                  timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == f"OK {isa}", (r.returncode, r.stdout, r.stderr)
    for dtype in ("bf16", "s8"):
        assert re.search(rf"tilegen: {dtype} gemm: {isa}, tg_{dtype}_gemm_ukernel_", r.stderr), r.stderr
