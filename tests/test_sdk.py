"""`tilegen generate --sdk`: the self-contained C library, built with CMake for this machine and
cross-built for aarch64 (run under qemu-aarch64), linked into a plain C client, against NumPy."""
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cprog
from conftest import REPO_ROOT, reference

import tilegen as tg
from tilegen.tools import sdk
from tilegen.dsl.isa import host_arch

CLIENT = REPO_ROOT / "tests" / "sdk" / "gemm_client.c"
# (m, n, k) in the client's order; the last is big enough for the driver to use two threads.
CLIENT_SHAPES = [(1, 1, 1), (7, 13, 5), (64, 64, 64), (130, 70, 200), (256, 300, 320)]
TOOLCHAIN = "set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR aarch64)\n" \
            "set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)\n"


def need(*tools):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        why = f"{', '.join(missing)} not found (Debian: cmake gcc-aarch64-linux-gnu qemu-user)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def tilegen_cli(*argv):
    return cprog.run([*cprog.tilegen_command(), *map(str, argv)], timeout=300)


def cmake_build(src: Path, build: Path, *options) -> Path:
    for cmd in (["cmake", "-S", src, "-B", build, *options], ["cmake", "--build", build, "-j2"]):
        r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return build


SDK_ISAS = [i for i in ("avx512", "avx2", "neon") if i in tg.core._core.isas()]


def sdk_isa() -> str:
    """The ISA the SDK (SDK_ISAS, scalar added) reports and runs here: the highest-priority one
    it ships at or below the ISA this process runs (its cap included). Not this process's own
    ISA when that is one the SDK leaves out (avx512bf16: the SDK then runs avx512)."""
    from tilegen.dsl.isa import ISAS

    top = ISAS[tg.runtime_info()["isa"]]
    fits = [i for i in {*SDK_ISAS, "scalar"}
            if ISAS[i].priority <= top.priority and ISAS[i].arch in ("any", top.arch)]
    return max(fits, key=lambda i: ISAS[i].priority)


@pytest.fixture(scope="module")
def sdk_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdk") / "tilegen-sdk"
    isas = ",".join(SDK_ISAS)
    r = tilegen_cli("generate", "--sdk", "--isa", isas, "--ops", "gemm", "--out", out)
    assert r.returncode == 0, r.stderr
    assert "added scalar" in r.stderr
    return out


def lcg_operands(shapes):
    """The client's inputs, recomputed: a, b, bias per shape, in its order."""
    state = 12345

    def take(count):
        nonlocal state
        vals = np.empty(count, np.float32)
        for i in range(count):
            state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
            vals[i] = np.float32(((state >> 8) - (1 << 23)) / (1 << 23))
        return vals

    out = []
    for m, n, k in shapes:
        a, b, bias = take(m * k).reshape(m, k), take(k * n).reshape(k, n), take(n)
        out.append((a, b, bias))
    return out


@functools.lru_cache(maxsize=None)
def client_cases():
    """Per client shape (m, n, k): a, b, bias, and sum |a||b| + |bias|, the scale of float32
    rounding in a k-term sum."""
    return {shape: (a, b, bias, np.abs(a.astype(np.float64)) @ np.abs(b) + np.abs(bias))
            for shape, (a, b, bias) in zip(CLIENT_SHAPES, lcg_operands(CLIENT_SHAPES))}


def parse_client(stdout: str):
    lines = stdout.strip().splitlines()
    isa = re.match(r"isa (\w+) version (\S+)", lines[0])
    results = {}
    for line in lines[1:]:
        m = re.match(r"gemm (\d+) (\d+) (\d+) threads (\d+) rc (-?\d+):(.*)", line)
        if m:
            m_, n, k, t, rc = map(int, m.groups()[:5])
            results[(m_, n, k, t)] = (rc, np.array(m.group(6).split(), np.float32).reshape(m_, n))
    bad = re.search(r"bad rc (-?\d+) c (\S+)", stdout)
    return isa.group(1), isa.group(2), results, bad


def check_client(stdout: str, want_isa: str):
    isa, version, results, bad = parse_client(stdout)
    assert isa == want_isa and version == tg.__version__
    shapes = sorted({key[:3] for key in results}, key=lambda s: s[0] * s[1] * s[2])
    assert len(results) == 2 * len(shapes) == 2 * len(CLIENT_SHAPES)
    for (m, n, k, t), (rc, c) in results.items():
        a, b, bias, scale = client_cases()[(m, n, k)]
        ref = np.maximum(a.astype(np.float64) @ b + bias, 0)
        assert rc == 0
        assert np.all(np.abs(c - ref) <= 1e-5 * np.sqrt(k) * (scale + 1)), (m, n, k, t)
    # An invalid m is -4 (the 4th parameter), and C is untouched.
    assert bad and bad.group(1) == "-4" and float(bad.group(2)) == 42
    return results


def test_bad_isa_or_op_is_one_line_and_exit_2(tmp_path):
    for argv, words in ((["--isa", "sse9", "--ops", "gemm"], "--isa: sse9"),
                        (["--isa", "neon", "--ops", "fft"], "--ops: fft"),
                        (["--isa", "neon"], "--ops")):
        r = tilegen_cli("generate", "--sdk", *argv, "--out", tmp_path / "x")
        assert r.returncode == 2 and r.stdout == "", r.stdout
        assert r.stderr.startswith("tilegen: error:") and r.stderr.count("\n") == 1, r.stderr
        assert words in r.stderr
    assert not (tmp_path / "x").exists()


def test_header_keeps_only_the_chosen_ops(tmp_path):
    """tilegen.h holds the core's declarations and the sections of the chosen ops (and of the
    ops they call), nothing of the others; tilegen_cblas.h comes with the blas_abi op only (an app
    may link another BLAS)."""
    sdk.build(str(tmp_path / "img"), ["scalar"], ["image"])
    header = (tmp_path / "img" / "include" / "tilegen.h").read_text()
    assert "tilegen_gaussian_blur_u8" in header and "tilegen_set_num_threads" in header
    assert "tilegen_sgemm" not in header and "tilegen_conv2d" not in header
    assert not (tmp_path / "img" / "include" / "tilegen_cblas.h").exists()
    notes = sdk.build(str(tmp_path / "conv"), ["scalar"], ["conv2d"])
    header = (tmp_path / "conv" / "include" / "tilegen.h").read_text()
    assert "tilegen_conv2d_f32" in header and "tilegen_sgemm_ex" in header
    assert "added gemm: conv2d calls it" in notes
    assert not (tmp_path / "conv" / "include" / "tilegen_cblas.h").exists()
    notes = sdk.build(str(tmp_path / "blas"), ["scalar"], ["blas_abi"])
    assert "added gemm: blas_abi calls it" in notes
    assert (tmp_path / "blas" / "include" / "tilegen_cblas.h").exists()
    assert (tmp_path / "blas" / "src" / "ops" / "blas_abi" / "blas_impl.h").exists()


def test_sdk_tree_is_self_contained(sdk_dir):
    names = {p.relative_to(sdk_dir).as_posix() for p in sdk_dir.rglob("*") if p.is_file()}
    assert {"CMakeLists.txt", "README.md", "VERSION", "include/tilegen.h",
            "src/core/dispatch.c", "src/core/threads.c", "src/ops/gemm/gemm.c"} <= names
    assert (sdk_dir / "VERSION").read_text().strip() == tg.__version__
    assert not [n for n in names if n.endswith((".py", ".pyx", ".cpp", ".cc", ".j2"))]
    cmake = (sdk_dir / "CMakeLists.txt").read_text()
    assert "LANGUAGES C)" in cmake and "VERSION 3.16" in cmake and "-ffunction-sections" in cmake
    readme = (sdk_dir / "README.md").read_text()
    assert "android.toolchain.cmake" in readme and "CMAKE_SYSTEM_NAME=iOS" in readme
    header = (sdk_dir / "include" / "tilegen.h").read_text()
    assert "tilegen_sgemm_ex" in header and "@op" not in header


@pytest.fixture(scope="module")
def host_build(sdk_dir, tmp_path_factory):
    need("cmake")
    tmp = tmp_path_factory.mktemp("host")
    build = cmake_build(sdk_dir, tmp / "host")
    exe = tmp / "client"
    # A plain C compiler and -lpthread -lm: no C++ runtime, no OpenMP.
    subprocess.run([cprog.cc(), "-std=c11", f"-I{sdk_dir / 'include'}", str(CLIENT),
                    str(build / "libtilegen.a"), "-o", str(exe), "-lpthread", "-lm"], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=cprog.clean_env())
    assert r.returncode == 0, r.stderr
    return build, r.stdout


def test_host_build_and_plain_c_client(sdk_dir, host_build, tmp_path):
    build, stdout = host_build
    check_client(stdout, sdk_isa())
    nm = subprocess.run(["nm", str(build / "libtilegen.a")], capture_output=True, text=True).stdout
    assert not re.search(r"\b(omp_|GOMP_|__kmpc|_Z\w+)", nm), "OpenMP or C++ symbols in the SDK"
    shared = cmake_build(sdk_dir, tmp_path / "shared", "-DBUILD_SHARED_LIBS=ON")
    assert (shared / f"libtilegen.so.{tg.__version__}").is_file()


def test_aarch64_cross_build_under_qemu(sdk_dir, host_build, tmp_path):
    """The whole library for aarch64 (dispatch through HWCAP, the thread pool, the drivers),
    run under qemu-aarch64: it reports neon and computes what the host build computes."""
    if host_arch() == "aarch64":
        pytest.skip("this host is aarch64: the host build covers it")
    need("cmake", "aarch64-linux-gnu-gcc", "qemu-aarch64")
    toolchain = tmp_path / "aarch64.cmake"
    toolchain.write_text(TOOLCHAIN)
    build = cmake_build(sdk_dir, tmp_path / "arm", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    exe = tmp_path / "client-arm"
    subprocess.run(["aarch64-linux-gnu-gcc", "-std=c11", "-static", f"-I{sdk_dir / 'include'}",
                    str(CLIENT), str(build / "libtilegen.a"), "-o", str(exe), "-lpthread", "-lm"],
                   check=True)
    host = parse_client(host_build[1])[2]
    for env, isa in (({}, "neon"), ({"TILEGEN_ISA": "scalar"}, "scalar")):
        r = subprocess.run(["qemu-aarch64", str(exe)], capture_output=True, text=True,
                           timeout=600, env=cprog.clean_env(**env))
        assert r.returncode == 0, r.stderr
        results = check_client(r.stdout, isa)
        for key, (_, c) in results.items():
            # The x86-64 build's answer, within float32 rounding of a k-term sum: the two
            # builds add in different orders, so the bound scales with sum |a||b|, not |c|.
            scale = client_cases()[key[:3]][3]
            err = np.abs(c.astype(np.float64) - host[key][1])
            assert np.all(err <= 2e-5 * np.sqrt(key[2]) * (scale + 1)), (key, err.max())


# ------------------------------------------------------------ the example client, and the size

DEMO = REPO_ROOT / "examples" / "sdk_demo"
COLOUR_MATRIX = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]],
                         np.float32)
COLOUR_OFFSET = np.array([-10.0, -5.0, 8.0], np.float32)
SHARPEN = np.array([[0, -0.25, 0], [-0.25, 2, -0.25], [0, -0.25, 0]], np.float32)


def demo_pipeline(img: np.ndarray) -> np.ndarray:
    """examples/sdk_demo's pipeline through the Python API."""
    x = img
    if x.ndim == 3:
        rgb = x.reshape(-1, 3).astype(np.float32)
        toned = tg.gemm(rgb, COLOUR_MATRIX.T.copy(), bias=COLOUR_OFFSET)
        x = np.clip(np.rint(toned), 0, 255).astype(np.uint8).reshape(img.shape)
    x = tg.image.gaussian_blur(x, 5, 1.1)
    x = tg.image.unsharp_mask(x, 5, 1.0, 1.5, 2)
    return tg.image.filter2d(x, SHARPEN)


def write_pnm(path: Path, img: np.ndarray) -> None:
    kind = b"P6" if img.ndim == 3 else b"P5"
    path.write_bytes(kind + b"\n# tilegen test\n%d %d\n255\n" % (img.shape[1], img.shape[0])
                     + np.ascontiguousarray(img).tobytes())


def read_pnm(path: Path) -> np.ndarray:
    data = path.read_bytes()
    kind, w, h, maxval, pixels = data.split(maxsplit=4)
    assert maxval == b"255"
    shape = (int(h), int(w), 3) if kind == b"P6" else (int(h), int(w))
    return np.frombuffer(pixels, np.uint8).reshape(shape)


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    skimage_data = reference("skimage.data")
    folder = tmp_path_factory.mktemp("photos")
    out = {}
    for name, img in (("astronaut.ppm", skimage_data.astronaut()[:301, :257]),
                      ("camera.pgm", skimage_data.camera()[:203, :311])):
        write_pnm(folder / name, img)
        out[folder / name] = img
    return out


@pytest.fixture(scope="module")
def image_sdk(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdk-image") / "tilegen-sdk"
    isas = ",".join(i for i in ("avx512", "avx2", "neon") if i in tg.core._core.isas())
    r = tilegen_cli("generate", "--sdk", "--isa", isas, "--ops", "gemm,image", "--out", out)
    assert r.returncode == 0, r.stderr
    return out


def test_sdk_demo_matches_the_python_api(image_sdk, photos, tmp_path):
    """examples/sdk_demo built with CMake against the SDK, for this machine and for aarch64
    (under qemu, 1 and 2 threads): the same pixels as the Python API, bit for bit."""
    need("cmake")
    host = cmake_build(DEMO, tmp_path / "host", f"-DTILEGEN_SDK={image_sdk}") / "sdk_demo"
    runs = [([str(host)], "host")]
    if host_arch() != "aarch64" and not [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64")
                                         if not shutil.which(t)]:
        toolchain = tmp_path / "aarch64.cmake"
        toolchain.write_text(TOOLCHAIN)
        arm = cmake_build(DEMO, tmp_path / "arm", f"-DTILEGEN_SDK={image_sdk}",
                          f"-DCMAKE_TOOLCHAIN_FILE={toolchain}", "-DCMAKE_EXE_LINKER_FLAGS=-static")
        runs.append((["qemu-aarch64", str(arm / "sdk_demo")], "neon"))
    elif os.environ.get("CI") and host_arch() != "aarch64":
        pytest.fail("the aarch64 cross tools are missing")
    for path, img in photos.items():
        want = demo_pipeline(img)
        for cmd, label in runs:
            for threads in ("1", "2"):
                out = tmp_path / f"{label}-{threads}-{path.name}"
                r = subprocess.run([*cmd, str(path), str(out), threads], capture_output=True,
                                   text=True, timeout=600, env=cprog.clean_env())
                assert r.returncode == 0, r.stderr
                assert label == "host" or " on neon," in r.stdout, r.stdout
                got = read_pnm(out)
                assert got.shape == want.shape
                diff = np.argwhere(got != want)
                assert diff.size == 0, f"{label} {threads}T {path.name}: {len(diff)} pixels differ"


def test_sdk_size_budget():
    """gemm and image, neon and scalar, add at most 300 KiB to a static aarch64 client
    (benchmarks/sdk_size.py prints the per-op table)."""
    need("cmake", "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-size")
    import importlib.util
    import tempfile

    spec = importlib.util.spec_from_file_location("sdk_size", REPO_ROOT / "benchmarks" / "sdk_size.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with tempfile.TemporaryDirectory() as work:  # its `python -m tilegen` runs there
        size = mod.measure("neon,scalar", "gemm,image", "aarch64", work)
    assert 20_000 < size <= 300 * 1024, size


def test_sdk_speed_script(capsys):
    """benchmarks/sdk_speed.py builds the SDK and the package client and compares them (its
    figures are for the closing notes; here only that it runs and prints every case)."""
    need("cmake")
    import importlib.util

    spec = importlib.util.spec_from_file_location("sdk_speed", REPO_ROOT / "benchmarks" / "sdk_speed.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--rounds", "1"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [r[0] for r in rows] == ["gaussian5x5_u8x3", "box5x5_u8x3", "filter2d3x3_f32"]
    assert all(float(r[1]) > 0 and float(r[2]) > 0 for r in rows)


# ------------------------------------------------------------ convolution and attention

NN_CLIENT = REPO_ROOT / "tests" / "sdk" / "nn_client.c"


def nn_inputs(seed=3):
    """tests/sdk/nn_client.c's inputs, in its order."""
    rng = np.random.default_rng(seed)
    f = lambda *shape: rng.uniform(-1, 1, shape).astype(np.float32)  # noqa: E731
    x, w, bias = f(1, 9, 11, 5), f(4, 3, 3, 5), f(4)
    xc, wc = f(1, 5, 9, 11), f(4, 5, 3, 3)
    q, k, v = f(2, 5, 8), f(1, 7, 8), f(1, 7, 6)
    pq, kc, vc = f(2, 4, 8), f(6, 4, 2, 8), f(6, 4, 2, 8)
    return [x, w, bias, xc, wc, q, k, v, pq, kc, vc]


def nn_expected(ins):
    """The same four results from the Python API."""
    x, w, bias, xc, wc, q, k, v, pq, kc, vc = ins
    table = np.array([[5, 1, 3], [0, 2, 4]], np.int32)
    lens = np.array([5, 9], np.int32)
    return [tg.conv2d(x, w, bias, padding=1, layout="NHWC", activation="relu"),
            tg.conv2d(xc, wc, stride=2, padding=1),
            tg.attention(q, k, v, causal=True),
            tg.paged_attention(pq, kc, vc, table, lens)]


def test_conv_and_attention_through_the_sdk(tmp_path):
    """The conv2d and paged_attention ops of the SDK (gemm comes with conv2d, attention with
    paged_attention), built for this machine
    and for aarch64 under qemu: the Python API's results, float within 1e-5."""
    need("cmake")
    sdk = tmp_path / "sdk"
    isas = ",".join(SDK_ISAS)
    r = tilegen_cli("generate", "--sdk", "--isa", isas, "--ops", "conv2d,paged_attention", "--out", sdk)
    assert r.returncode == 0 and "added gemm" in r.stderr and "added attention" in r.stderr, r.stderr
    ins = nn_inputs()
    (tmp_path / "in.bin").write_bytes(b"".join(a.tobytes() for a in ins))
    want = nn_expected(ins)
    runs = []
    host = cmake_build(sdk, tmp_path / "host")
    exe = tmp_path / "nn-host"
    subprocess.run([cprog.cc(), "-std=c11", f"-I{sdk / 'include'}", str(NN_CLIENT),
                    str(host / "libtilegen.a"), "-o", str(exe), "-lpthread", "-lm"], check=True)
    runs.append(([str(exe)], sdk_isa()))
    if host_arch() != "aarch64":
        need("aarch64-linux-gnu-gcc", "qemu-aarch64")
        toolchain = tmp_path / "aarch64.cmake"
        toolchain.write_text(TOOLCHAIN)
        arm = cmake_build(sdk, tmp_path / "arm", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
        exe_arm = tmp_path / "nn-arm"
        subprocess.run(["aarch64-linux-gnu-gcc", "-std=c11", "-static", f"-I{sdk / 'include'}",
                        str(NN_CLIENT), str(arm / "libtilegen.a"), "-o", str(exe_arm),
                        "-lpthread", "-lm"], check=True)
        runs.append((["qemu-aarch64", str(exe_arm)], "neon"))
    for cmd, isa in runs:
        out = tmp_path / f"out-{isa}.bin"
        r = subprocess.run([*cmd, str(tmp_path / "in.bin"), str(out)], capture_output=True,
                           text=True, timeout=600, env=cprog.clean_env())
        assert r.returncode == 0 and r.stdout.strip() == f"isa {isa} rc 0", r.stdout + r.stderr
        got = np.frombuffer(out.read_bytes(), np.float32)
        at = 0
        for name, w in zip(("conv NHWC", "conv NCHW", "attention", "paged"), want):
            part = got[at:at + w.size].reshape(w.shape)
            at += w.size
            np.testing.assert_allclose(part, w, rtol=1e-5, atol=1e-5, err_msg=f"{isa} {name}")
        assert at == got.size


# ------------------------------------------------------------ bfloat16 tiers on aarch64

BF16_CLIENT = REPO_ROOT / "tests" / "sdk" / "bf16_client.c"


@pytest.fixture(scope="module")
def bf16_client(tmp_path_factory) -> Path:
    """The client, built once against the aarch64 SDK."""
    need("cmake", "aarch64-linux-gnu-gcc", "qemu-aarch64")
    tmp = tmp_path_factory.mktemp("bf16-arm")
    out = tmp / "sdk"
    r = tilegen_cli("generate", "--sdk", "--isa", "neon,neonbf16", "--ops", "gemm", "--out", out)
    assert r.returncode == 0, r.stderr
    toolchain = tmp / "aarch64.cmake"
    toolchain.write_text(TOOLCHAIN)
    build = cmake_build(out, tmp / "build", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    exe = tmp / "bf16_client"
    subprocess.run(["aarch64-linux-gnu-gcc", "-std=c11", "-O2", "-static", f"-I{out / 'include'}",
                    str(BF16_CLIENT), str(build / "libtilegen.a"), "-o", str(exe), "-lpthread",
                    "-lm"], check=True)
    return exe


@pytest.mark.parametrize("cpu, env, isa", [
    ("max", {}, "neonbf16"), ("neoverse-n1", {}, "neon"), ("max", {"TILEGEN_ISA": "neon"}, "neon"),
])
def test_bf16_gemm_tiers_on_aarch64_under_qemu(bf16_client, cpu, env, isa):
    """An aarch64 SDK of gemm on neon and neonbf16, under qemu-aarch64: with FEAT_BF16 (qemu's
    "max") tilegen_gemm_bf16 runs neonbf16's BFDOT kernels, without it (Neoverse N1) or capped
    to neon the widened ones; the client checks every product against a double loop (few rows
    take the 4x16 and 8x12 candidates, many the 12x8 main kernel; one row the tier's GEMV
    kernels, BFDOT on zipped row pairs for row-major B and on pair vectors for x @ W.T)."""
    r = subprocess.run(["qemu-aarch64", "-cpu", cpu, str(bf16_client)], capture_output=True,
                       text=True, timeout=600, env=cprog.clean_env(TILEGEN_VERBOSE="1", **env))
    assert r.returncode == 0 and r.stdout.startswith(f"OK {isa} "), (r.returncode, r.stdout,
                                                                     r.stderr)
    assert re.search(rf"^tilegen: bf16 gemm: {isa}, tg_bf16_gemm_ukernel_\S+__{isa} ",
                     r.stderr, re.M), r.stderr
    assert re.search(rf"m == 1: tg_bf16_gemv_ukernel_1x\d+c\d+__{isa}, "
                     rf"tg_bf16_gemv_ukernel_\d+x1c\d+__{isa}$", r.stderr, re.M), r.stderr


# ------------------------------------------------------------ int8 GEMM on the dot-product tier

S8_CLIENT = REPO_ROOT / "tests" / "sdk" / "s8_client.c"
S8_LINE = re.compile(r"^(s8|u8s8) (\d+) (\d+) (\d+) threads (\d) col_major (\d) accumulate (\d) "
                     r"bad (-?\d+)$", re.M)


def test_int8_gemm_on_the_aarch64_dot_product_tiers(tmp_path):
    """tilegen_gemm_s8 and tilegen_gemm_u8s8 from an SDK of the gemm op for neoni8mm, neondot
    and neon, cross-built and run under qemu-aarch64 (tests/sdk/s8_client.c checks every
    element against a plain int64 loop). Both dot-product tiers multiply signed by signed, so
    uint8 A takes the flip (A - 128, 128 x B's column sums added back): on qemu's default CPU
    through the SMMLA kernels (k packed in groups of 8), as a Cortex-A76 (asimddp, no i8mm)
    through the SDOT ones, as a Cortex-A72 (neither) and under TILEGEN_ISA=neon through the
    widening ones. Up to 4 rows take the GEMV kernel once per row (B read in place): SDOT on
    quads of four zipped rows wherever asimddp is (neondot's: i8mm adds no GEMV), SMLAL by
    lane on neon."""
    if host_arch() == "aarch64":
        pytest.skip("this host is aarch64: tests/ops/gemm/test_s8.py runs its tier natively")
    need("cmake", "aarch64-linux-gnu-gcc", "qemu-aarch64")
    sdk = tmp_path / "sdk"
    r = tilegen_cli("generate", "--sdk", "--isa", "neoni8mm,neondot,neon", "--ops", "gemm",
                    "--out", sdk)
    assert r.returncode == 0, r.stderr
    toolchain = tmp_path / "aarch64.cmake"
    toolchain.write_text(TOOLCHAIN)
    build = cmake_build(sdk, tmp_path / "arm", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    exe = tmp_path / "s8-arm"
    subprocess.run(["aarch64-linux-gnu-gcc", "-std=c11", "-static", f"-I{sdk / 'include'}",
                    str(S8_CLIENT), str(build / "libtilegen.a"), "-o", str(exe), "-lpthread",
                    "-lm"], check=True)
    for cpu, env, isa, gemv in ((None, {}, "neoni8mm", "neondot"),
                                ("cortex-a76", {}, "neondot", "neondot"),
                                ("cortex-a72", {}, "neon", "neon"),
                                (None, {"TILEGEN_ISA": "neon"}, "neon", "neon")):
        cmd = ["qemu-aarch64", *(["-cpu", cpu] if cpu else []), str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                           env=cprog.clean_env(TILEGEN_VERBOSE="1", **env))
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"isa {isa}\n"), r.stdout[:200]
        assert re.search(rf"s8 gemm: {isa}, tg_s8_gemm_ukernel_\w+__{isa}\b", r.stderr), r.stderr
        assert re.search(rf"m <= [24]: tg_s8_gemvs8_ukernel_\w+__{gemv}$", r.stderr, re.M), r.stderr
        cases = S8_LINE.findall(r.stdout)
        assert len(cases) == 2 * 8 * 2 * 2 * 2, r.stdout
        bad = [c for c in cases if c[-1] != "0"]
        assert not bad, f"{cpu or 'max'} {env}: {bad}"


# ------------------------------------------------------------ quantized Linear on the dot-product tier

LINEAR_CLIENT = REPO_ROOT / "tests" / "sdk" / "linear_client.c"
LINEAR_LINE = re.compile(r"^(q4_0|q4_1|q8_0|int4-g32) (\d+) (\d+) (\d+) bad (-?\d+)$", re.M)


def test_quantized_linear_on_the_aarch64_dot_product_tier(tmp_path):
    """tilegen_linear_create / _run (q4_0, q4_1, q8_0, int4-g32) from an SDK of the linear op
    for neoni8mm, neondot and neon, under qemu-aarch64 (tests/sdk/linear_client.c checks every
    output against a double loop): with asimddp (qemu's default CPU, whose i8mm adds no qgemv
    kernels, and a Cortex-A76) the qgemv kernels are neondot's SDOT ones, q8_0's codes packed
    signed as stored; on a Cortex-A72 and under TILEGEN_ISA=neon the widening ones."""
    if host_arch() == "aarch64":
        pytest.skip("this host is aarch64: the linear op's tests run its tier natively")
    need("cmake", "aarch64-linux-gnu-gcc", "qemu-aarch64")
    sdk = tmp_path / "sdk"
    r = tilegen_cli("generate", "--sdk", "--isa", "neoni8mm,neondot,neon", "--ops", "linear",
                    "--out", sdk)
    assert r.returncode == 0, r.stderr
    toolchain = tmp_path / "aarch64.cmake"
    toolchain.write_text(TOOLCHAIN)
    build = cmake_build(sdk, tmp_path / "arm", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    exe = tmp_path / "linear-arm"
    subprocess.run(["aarch64-linux-gnu-gcc", "-std=c11", "-static", f"-I{sdk / 'include'}",
                    str(LINEAR_CLIENT), str(build / "libtilegen.a"), "-o", str(exe),
                    "-lpthread", "-lm"], check=True)
    for cpu, env, isa in ((None, {}, "neondot"), ("cortex-a76", {}, "neondot"),
                          ("cortex-a72", {}, "neon"), (None, {"TILEGEN_ISA": "neon"}, "neon")):
        cmd = ["qemu-aarch64", *(["-cpu", cpu] if cpu else []), str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                           env=cprog.clean_env(TILEGEN_VERBOSE="1", **env))
        assert r.returncode == 0, r.stderr
        for fmt in ("q4_0", "q4_1", "q8_0", "q4_z"):
            assert re.search(rf"^tilegen: linear: {fmt} tg_s8_{fmt.replace('_', '')}gemv_"
                             rf"ukernel_\w+__{isa} ", r.stderr, re.M), r.stderr
        cases = LINEAR_LINE.findall(r.stdout)
        assert len(cases) == 4 * 6, r.stdout
        bad = [c for c in cases if c[-1] != "0"]
        assert not bad, f"{cpu or 'max'} {env}: {bad}\n{r.stderr[-2000:]}"


# ------------------------------------------------------------ an SDK without the host's ISAs

ISA_CLIENT = r"""
#include <stdio.h>
#include <tilegen.h>
int main(void) {
  const int rc = tilegen_init();
  float x[4] = {1, 2, 3, 4}, y[4];
  const int call = tilegen_rmsnorm_f32(1, 4, x, 4, NULL, 0.0f, y, 4);
  printf("isa %s init %d call %d\n", tilegen_isa_name(), rc, call);
  if (rc) printf("%s\n", tilegen_init_error());
  return 0;
}
"""


def test_sdk_without_the_hosts_isas_names_the_one_it_runs(tmp_path):
    """An SDK generated for `--isa neon` (scalar added) and built for x86-64 holds only the scalar
    kernels: tilegen_isa_name() answers "scalar", not the CPU's best; TILEGEN_VERBOSE lists only
    the ISAs built and says once which of the CPU's ISAs the build lacks; a TILEGEN_ISA cap
    naming one of those is refused with the reason."""
    need("cmake")
    if host_arch() == "aarch64":
        pytest.skip("needs a host whose SIMD ISAs the neon SDK lacks (x86-64)")
    simd = [i for i, ok in tg.core._core.isas().items() if ok and i != "scalar"]
    if not simd:
        pytest.skip("this CPU has no SIMD ISA tilegen builds kernels for")
    sdk = tmp_path / "sdk"
    r = tilegen_cli("generate", "--sdk", "--isa", "neon", "--ops", "rmsnorm", "--out", sdk)
    assert r.returncode == 0, r.stderr
    build = cmake_build(sdk, tmp_path / "build")
    src, exe = tmp_path / "isa_client.c", tmp_path / "isa_client"
    src.write_text(ISA_CLIENT)
    subprocess.run([cprog.cc(), "-std=c11", f"-I{sdk / 'include'}", str(src),
                    str(build / "libtilegen.a"), "-o", str(exe), "-lpthread", "-lm"], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True,
                       env=cprog.clean_env(TILEGEN_VERBOSE="1"))
    assert r.returncode == 0 and r.stdout == "isa scalar init 0 call 0\n", r.stdout + r.stderr
    assert "tilegen: usable ISAs: scalar; cap: none\n" in r.stderr, r.stderr
    lacking = [line for line in r.stderr.splitlines() if "no kernels for" in line]
    assert len(lacking) == 1, r.stderr
    assert all(i in lacking[0] for i in simd) and "(it has: scalar)" in lacking[0], lacking
    assert "rmsnorm: f32 tg_f32_rmsnorm" in r.stderr and "__scalar" in r.stderr, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True,
                       env=cprog.clean_env(TILEGEN_ISA=simd[-1]))
    assert r.stdout.startswith("isa scalar init -1 call 0\n"), r.stdout
    assert f"this build has no {simd[-1]} kernels; usable here: scalar" in r.stdout, r.stdout


# ------------------------------------------------------------ writing into an existing folder

def test_out_folder_of_the_users_is_refused_unless_forced(tmp_path):
    """--out naming a non-empty folder that holds no SDK is one error line, exit 2, and nothing
    in it changes; --force writes the SDK into it and leaves the user's other files alone."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "CMakeLists.txt").write_text("project(mine)\n")
    (out / "README.md").write_text("my notes\n")
    (out / "app.c").write_text("int main(void) { return 0; }\n")
    before = {p.name: p.read_text() for p in out.iterdir()}
    r = tilegen_cli("generate", "--sdk", "--isa", "scalar", "--ops", "rmsnorm", "--out", out)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith("tilegen: error: --out:") and r.stderr.count("\n") == 1, r.stderr
    assert "--force" in r.stderr and "not empty" in r.stderr
    assert {p.name: p.read_text() for p in out.iterdir()} == before
    r = tilegen_cli("generate", "--force")
    assert r.returncode == 2 and "--force needs --sdk" in r.stderr, r.stderr
    r = tilegen_cli("generate", "--sdk", "--force", "--isa", "scalar", "--ops", "rmsnorm",
                    "--out", out)
    assert r.returncode == 0, r.stderr
    assert (out / "app.c").read_text() == before["app.c"]
    assert "tilegen" in (out / "CMakeLists.txt").read_text()
    assert (out / "src" / "ops" / "rmsnorm" / "rmsnorm.c").is_file()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        sdk.build(str(tmp_path / "afile"), ["scalar"], ["rmsnorm"])
    sdk.build(str(tmp_path / "empty"), ["scalar"], ["rmsnorm"])  # new: created
    (tmp_path / "empty2").mkdir()
    sdk.build(str(tmp_path / "empty2"), ["scalar"], ["rmsnorm"])  # empty: fine


def test_regenerating_an_sdk_removes_what_the_new_ops_do_not_need(tmp_path):
    """Over a previous SDK (its manifest marks it) the new one replaces it: the sources of ops
    and ISAs no longer chosen are gone, the user's own files (a build folder) stay."""
    out = tmp_path / "sdk"
    sdk.build(str(out), ["avx2", "neon"], ["conv2d", "rmsnorm"])
    assert (out / "src" / "ops" / "conv2d" / "conv.c").is_file()
    assert list((out / "src" / "generated").glob("conv/*__avx2*.c"))
    (out / "build").mkdir()
    (out / "build" / "CMakeCache.txt").write_text("user's build\n")
    notes = sdk.build(str(out), ["neon"], ["rmsnorm"])
    assert any(n.startswith("removed ") for n in notes), notes
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    fresh = tmp_path / "fresh"
    sdk.build(str(fresh), ["neon"], ["rmsnorm"])
    want = {p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()}
    assert names == want | {"build/CMakeCache.txt"}
    assert not (out / "src" / "ops" / "conv2d").exists() and not (out / "src" / "ops" / "gemm").exists()
    assert not any("avx2" in n for n in names)
    for rel in want:
        assert (out / rel).read_bytes() == (fresh / rel).read_bytes(), rel
