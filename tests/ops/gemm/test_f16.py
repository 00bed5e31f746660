"""float16 products: tg.matmul / tg.dot on float16 give NumPy's dtypes with float32 sums rounded
once (NumPy's float16 loop sums in float too), within a bound of a float64 reference; the
conversions are NumPy's bit for bit (every half, float32 edges, ties, overflow, subnormals,
NaN); the C API's contract (float32 or float16 C, beta, bias, activation, errors); the opt-in
half accumulation (tg.gemm(..., accumulate="float16"), tilegen_gemm_f16_ex): the default
path's answer where float32 accumulation serves it (x86), the model of half sums bit for bit
on neonfp16 (the SDK under qemu-aarch64)."""
from pathlib import Path

import numpy as np
import pytest

import cprog
import tilegen as tg
from tilegen.ops.gemm import _gemm

RNG = np.random.default_rng(20261206)
EPS32 = float(np.finfo(np.float32).eps)


def test_every_half_widens_exactly():
    h = np.arange(1 << 16, dtype=np.uint16)
    got = _gemm.f32_from_f16(h)
    want = h.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))  # NaN payloads too
    # a strided source
    np.testing.assert_array_equal(_gemm.f32_from_f16(h[::-3]).view(np.uint32),
                                  want[::-3].view(np.uint32))


def test_narrowing_is_numpys_round_to_nearest_even():
    tiny, top = 2.0 ** -24, 65504.0
    edges = np.array([0.0, -0.0, tiny, tiny / 2, tiny / 2 * (1 + 2 ** -23), 1.5 * tiny,
                      2.5 * tiny, 2.0 ** -14, 2.0 ** -14 - tiny / 2, 1 + 2 ** -11,
                      1 + 3 * 2 ** -11, top, top + 15.99, top + 16, 65535.0, 1e30, np.inf,
                      -np.inf, np.nan, -np.nan], np.float32)
    sweep = np.arange(0x33000000, 0x47900000, 211, dtype=np.uint32).view(np.float32)
    scaled = np.concatenate([RNG.standard_normal(1 << 16).astype(np.float32) * s
                             for s in (1e-7, 1e-4, 1.0, 3e4)])
    x = np.concatenate([edges, -edges, sweep, -sweep, scaled])
    got = _gemm.f16_from_f32(x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.isnan(got[nan].view(np.float16)).all()


def half_bound(a, b, want64):
    """|float16(float32 sum) - exact| <= half an ulp of the half result + the float32 sum's
    error bound (k eps sum |a||b|), widened by that half ulp's rounding."""
    k = a.shape[-1]
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    r = np.abs(want64)
    ulp = np.spacing(np.maximum(r, 2.0 ** -14).astype(np.float16)).astype(np.float64)
    return ulp + 1.01 * k * EPS32 * mag


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 33, 5), (64, 300, 48), (129, 257, 65),
                                   (1, 500, 300), (300, 500, 1)])
def test_matmul_within_bound_and_numpys_dtype(m, k, n):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    got = tg.matmul(a, b)
    assert got.dtype == np.matmul(a, b).dtype == np.float16
    want = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(got.astype(np.float64) - want)
    assert (err <= half_bound(a, b, want)).all(), err.max()


def test_integers_are_exact_and_overflow_is_inf():
    a = RNG.integers(-8, 9, (40, 60)).astype(np.float16)
    b = RNG.integers(-8, 9, (60, 30)).astype(np.float16)
    np.testing.assert_array_equal(tg.matmul(a, b), (a.astype(np.int64) @ b.astype(np.int64)))
    big = np.full((2, 4), 200.0, np.float16)  # 4 * 200 * 200 = 160000 > 65504
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(tg.matmul(big, big.T), np.matmul(big, big.T))
    assert np.isinf(tg.matmul(big, big.T)).all()


def test_dot_stacks_vectors_views_and_out():
    a = RNG.standard_normal((3, 20, 30)).astype(np.float16)
    b = RNG.standard_normal((30, 10)).astype(np.float16)
    for got, want in ((tg.matmul(a, b), np.matmul(a, b)), (tg.dot(a, b), np.dot(a, b)),
                      (tg.matmul(a[0, 0], b), np.matmul(a[0, 0], b)),
                      (tg.matmul(a[:, ::2, ::3], b[::3]), np.matmul(a[:, ::2, ::3], b[::3])),
                      (tg.matmul(np.asfortranarray(a[1]), b), np.matmul(a[1], b))):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3,
                                   atol=2e-3)
    out = np.empty((3, 20, 10), np.float16)
    assert tg.matmul(a, b, out=out) is out
    np.testing.assert_array_equal(out, tg.matmul(a, b))
    out32 = np.empty((3, 20, 10), np.float32)  # same-kind cast of the float16 result
    np.testing.assert_array_equal(tg.matmul(a, b, out=out32), np.matmul(a, b).astype(np.float32))
    # mixed float16 and float32: NumPy computes in float32
    b32 = b.astype(np.float32)
    assert tg.matmul(a, b32).dtype == np.float32


def test_threads_give_the_bits_of_one_thread():
    a = RNG.standard_normal((200, 700)).astype(np.float16)
    b = RNG.standard_normal((700, 300)).astype(np.float16)
    tg.set_num_threads(1)
    try:
        one = tg.matmul(a, b)
    finally:
        tg.set_num_threads(None)
    tg.set_num_threads(2)
    try:
        np.testing.assert_array_equal(tg.matmul(a, b), one)
    finally:
        tg.set_num_threads(None)


C_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include "tilegen.h"

enum { M = 5, N = 7, K = 9 };

int main(void) {
  uint16_t a[M * K], b[K * N], ch[M * N];
  float af[M * K], bfl[K * N], c[M * N], want[M * N], bias[N];
  for (int i = 0; i < M * K; i++) af[i] = (float) ((i * 7) % 11 - 5);
  for (int i = 0; i < K * N; i++) bfl[i] = (float) ((i * 5) % 9 - 4) * 0.5f;
  for (int j = 0; j < N; j++) bias[j] = (float) j - 3;
  tilegen_f16_from_f32(M * K, af, 1, a, 1);
  tilegen_f16_from_f32(K * N, bfl, 1, b, 1);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int p = 0; p < K; p++) s += (double) af[i * K + p] * bfl[p * N + j];
      want[i * N + j] = (float) s;
    }
  /* float32 C: 2 A B + 0.5 C + bias, then relu (small integers and halves: exact) */
  for (int i = 0; i < M * N; i++) c[i] = 4;
  if (tilegen_gemm_f16(M, N, K, 2, a, K, 1, b, N, 1, 0.5f, c, TILEGEN_F32, N, 1, bias, 1,
                       TILEGEN_ACT_RELU) != 0) return 1;
  for (int i = 0; i < M * N; i++) {
    const float w = fmaxf(2 * want[i] + 2 + bias[i % N], 0);
    if (c[i] != w) { printf("f32 C %d: %g vs %g\n", i, c[i], w); return 2; }
  }
  /* float16 C, column-major through the strides (C^T = B^T A^T) */
  if (tilegen_gemm_f16(N, M, K, 1, b, 1, N, a, 1, K, 0, ch, TILEGEN_F16, 1, N, NULL, 0,
                       TILEGEN_ACT_NONE) != 0) return 3;
  float back[M * N];
  tilegen_f32_from_f16(M * N, ch, 1, back, 1);
  for (int i = 0; i < M * N; i++) if (back[i] != want[i]) { printf("f16 C %d\n", i); return 4; }
  /* alpha 0: beta * C, A and B never read (NULL) */
  if (tilegen_gemm_f16(M, N, K, 0, NULL, K, 1, NULL, N, 1, 2, c, TILEGEN_F32, N, 1, NULL, 0,
                       TILEGEN_ACT_NONE) != 0) return 5;
  /* bad parameters: -p, nothing written */
  c[0] = 42;
  if (tilegen_gemm_f16(-1, N, K, 1, a, K, 1, b, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                       TILEGEN_ACT_NONE) != -1) return 6;
  if (tilegen_gemm_f16(M, N, K, 1, NULL, K, 1, b, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                       TILEGEN_ACT_NONE) != -5) return 7;
  if (tilegen_gemm_f16(M, N, K, 1, a, K, 1, NULL, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                       TILEGEN_ACT_NONE) != -8) return 8;
  if (tilegen_gemm_f16(M, N, K, 1, a, K, 1, b, N, 1, 0, NULL, TILEGEN_F32, N, 1, NULL, 0,
                       TILEGEN_ACT_NONE) != -12) return 9;
  if (tilegen_gemm_f16(M, N, K, 1, a, K, 1, b, N, 1, 0, c, TILEGEN_BF16, N, 1, NULL, 0,
                       TILEGEN_ACT_NONE) != -13) return 10;
  if (tilegen_gemm_f16(M, N, K, 1, a, K, 1, b, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                       (tilegen_activation) 99) != -18) return 11;
  if (c[0] != 42) return 12;
  /* tilegen_gemm_f16_ex: an accumulate other than F32/F16 is -19 (after the other checks),
     nothing written; small integers are exact in either accumulation (the half path where
     this CPU has one, float32 elsewhere). */
  if (tilegen_gemm_f16_ex(M, N, K, 1, a, K, 1, b, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                          TILEGEN_ACT_NONE, 2) != -19) return 13;
  if (tilegen_gemm_f16_ex(-1, N, K, 1, a, K, 1, b, N, 1, 0, c, TILEGEN_F32, N, 1, NULL, 0,
                          TILEGEN_ACT_NONE, 2) != -1) return 14;
  if (tilegen_gemm_f16_ex(M, N, K, 1, a, K, 1, b, N, 1, 0, c, TILEGEN_F16 + 5, N, 1, NULL, 0,
                          TILEGEN_ACT_NONE, TILEGEN_ACCUMULATE_F16) != -13) return 15;
  if (c[0] != 42) return 16;
  float c16[M * N], c32[M * N];
  for (int acc = TILEGEN_ACCUMULATE_F32; acc <= TILEGEN_ACCUMULATE_F16; acc++)
    if (tilegen_gemm_f16_ex(M, N, K, 2, a, K, 1, b, N, 1, 0, acc ? c16 : c32, TILEGEN_F32, N, 1,
                            bias, 1, TILEGEN_ACT_RELU, acc) != 0) return 17;
  for (int i = 0; i < M * N; i++) {
    const float w = fmaxf(2 * want[i] + bias[i % N], 0);
    if (c16[i] != w || c32[i] != w) { printf("ex C %d: %g %g vs %g\n", i, c16[i], c32[i], w); return 18; }
  }
  puts("OK");
  return 0;
}
"""


def test_c_api(tmp_path):
    src = tmp_path / "f16_client.c"
    src.write_text(C_PROGRAM)
    exe = tmp_path / "f16_client"
    r = cprog.run([cprog.cc(), "-std=gnu11", f"-I{tg.get_include()}", str(src), "-o", str(exe),
                   *cprog.tilegen_link_args(), "-lm"])
    assert r.returncode == 0, r.stderr
    r = cprog.run([str(exe)])
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), (r.returncode, r.stdout, r.stderr)


def test_gemm_default_is_the_float32_product_of_the_widened_halves():
    """tg.gemm on two float16 operands (float32 sums, widened in C) gives, bit for bit, what
    tg.gemm gives on NumPy's exact float32 copies of them, with every epilogue, c's dtype,
    transposes, strided views and output dtype; a float64 c still makes the product float64."""
    a = RNG.standard_normal((37, 300)).astype(np.float16)
    b = RNG.standard_normal((300, 29)).astype(np.float16)
    c16 = RNG.standard_normal((37, 29)).astype(np.float16)
    bias = RNG.standard_normal(29).astype(np.float32)
    f = lambda x: x.astype(np.float32)  # noqa: E731
    for kw in ({}, {"c": c16, "alpha": 0.5, "beta": 2.0}, {"c": f(c16), "beta": -1.0},
               {"bias": bias, "activation": "gelu"}, {"alpha": 0.0, "c": c16, "beta": 1.0}):
        want = tg.gemm(f(a), f(b), **kw)
        have = tg.gemm(a, b, **kw)
        assert have.dtype == np.float32, kw
        np.testing.assert_array_equal(have, want, err_msg=str(kw))
    at, bt = a.T.copy(), b.T.copy()
    np.testing.assert_array_equal(tg.gemm(at, bt, trans_a=True, trans_b=True),
                                  tg.gemm(f(at), f(bt), trans_a=True, trans_b=True))
    np.testing.assert_array_equal(tg.gemm(a[::2, ::3], b[::3, 1::2]),
                                  tg.gemm(f(a[::2, ::3]), f(b[::3, 1::2])))
    want = tg.gemm(f(a), f(b))
    np.testing.assert_array_equal(tg.gemm(a, b, out_dtype=np.float16), want.astype(np.float16))
    for dt in (np.float16, np.float32, np.float64):
        out = np.full((37, 29), np.nan, dt)
        assert tg.gemm(a, b, out=out) is out
        np.testing.assert_array_equal(out, want.astype(dt), err_msg=str(dt))
    wide = tg.gemm(a, b, c=c16.astype(np.float64), beta=1.0)
    assert wide.dtype == np.float64
    np.testing.assert_allclose(wide, a.astype(np.float64) @ b.astype(np.float64) + c16,
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="out"):
        tg.gemm(a, b, out=np.empty((37, 29), np.int32))


# ------------------------------------------------ accumulate="float16" (half accumulation)

HALF_U = 2.0 ** -11


def test_accumulate_float16_here_is_the_default_path_or_the_half_bound():
    """accumulate="float16": where a half-accumulating kernel serves (AArch64 with FP16),
    within gamma_k sum |a||b| of the exact product of the half inputs; elsewhere (x86) float32
    accumulation serves it, so the result is the default path's, bit for bit, with every
    epilogue and output dtype."""
    kernel = _gemm.f16acc_kernel()
    a = RNG.standard_normal((37, 300)).astype(np.float16)
    b = RNG.standard_normal((300, 29)).astype(np.float16)
    c = RNG.standard_normal((37, 29)).astype(np.float32)
    bias = RNG.standard_normal(29).astype(np.float32)
    got = tg.gemm(a, b, accumulate="float16")
    assert got.dtype == tg.gemm(a, b).dtype == np.float32
    exact = a.astype(np.float64) @ b.astype(np.float64)
    k = a.shape[1]
    gamma = k * HALF_U / (1 - k * HALF_U)
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    assert np.all(np.abs(got - exact) <= gamma * mag)
    if kernel is not None:
        pytest.skip(f"{kernel} serves accumulate='float16' here (the SDK test checks it bit "
                    "for bit)")
    for kw in ({}, {"out_dtype": np.float16}, {"c": c, "alpha": 0.5, "beta": 2.0},
               {"bias": bias, "activation": "relu"}, {"trans_a": True, "trans_b": True}):
        x, y = (a.T.copy(), b.T.copy()) if kw.get("trans_a") else (a, b)
        want = tg.gemm(x, y, **kw)
        have = tg.gemm(x, y, accumulate="float16", **kw)
        assert have.dtype == want.dtype, kw
        np.testing.assert_array_equal(have, want, err_msg=str(kw))
    out = np.empty((37, 29), np.float16)
    assert tg.gemm(a, b, accumulate="float16", out=out) is out
    np.testing.assert_array_equal(out, tg.gemm(a, b, out_dtype=np.float16))


def half_fma_model(a, b):
    """The k-order half sums: from 0, each product added and rounded once to half (the product
    of two halves and its sum with a half are exact or rounded once in float64, and float64 ->
    float16 rounds to nearest even: one fused half FMA, as the kernels' contract states)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float16)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for p in range(a.shape[1]):
        acc = (acc.astype(np.float64) + np.outer(a64[:, p], b64[p])).astype(np.float16)
    return acc


def test_accumulate_float16_native_kernel_is_the_half_fma_model():
    """Where a half-accumulating kernel serves (neonfp16, avx512fp16) the product is the k-order
    half FMA model bit for bit, over edge tiles, several k blocks and threads (the result is
    float32: the half sums widened, exactly)."""
    kernel = _gemm.f16acc_kernel()
    if kernel is None:
        pytest.skip("no half-accumulating kernel on this CPU (float32 accumulation serves it)")
    for m, k, n in [(1, 1, 1), (15, 33, 65), (37, 700, 129)]:
        a = RNG.standard_normal((m, k)).astype(np.float16)
        b = RNG.standard_normal((k, n)).astype(np.float16)
        want = half_fma_model(a, b)
        got = tg.gemm(a, b, accumulate="float16", out_dtype=np.float16)
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16),
                                      err_msg=f"{kernel} {m}x{k}x{n}")


def test_accumulate_float16_integers_are_exact():
    """Small integers: every half sum is exact (|sums| <= 2048), in either accumulation."""
    a = RNG.integers(-4, 5, (19, 40)).astype(np.float16)
    b = RNG.integers(-4, 5, (40, 23)).astype(np.float16)
    want = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(tg.gemm(a, b, accumulate="float16"), want)
    np.testing.assert_array_equal(tg.gemm(a, b, accumulate="float16", out_dtype=np.float16),
                                  want.astype(np.float16))


@pytest.mark.parametrize("kw, error, match", [
    ({"accumulate": "float64"}, ValueError, r"^gemm: accumulate='float64' is not supported"),
    ({"accumulate": "half"}, ValueError, r"^gemm: accumulate='half'"),
    ({"accumulate": 16}, TypeError, r"^gemm: accumulate must be a str"),
    ({"accumulate": None}, TypeError, r"^gemm: accumulate must be a str"),
    ({"accumulate": "float16", "out_dtype": np.float64}, TypeError,
     r"^gemm: out_dtype=float64 is not supported for float16 inputs with accumulate"),
])
def test_accumulate_bad_values_name_the_argument(kw, error, match):
    a = np.ones((2, 3), np.float16)
    with pytest.raises(error, match=match):
        tg.gemm(a, a.T, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, "bfloat16"])
def test_accumulate_float16_needs_float16_inputs(dtype):
    import ml_dtypes

    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    x = np.ones((2, 3), dt)
    with pytest.raises(TypeError, match=r"^gemm: accumulate='float16' needs float16 a and b"):
        tg.gemm(x, x.T, accumulate="float16")
    with pytest.raises(TypeError, match=r"^gemm: accumulate='float16' needs float16 a and b"):
        tg.gemm(np.ones((2, 3), np.float16), x.T, accumulate="float16")
    # float32 accumulation (the default, also by name) takes any real input
    np.testing.assert_array_equal(tg.gemm(x, x.T, accumulate="float32"), tg.gemm(x, x.T))


def test_matmul_and_dot_keep_numpys_semantics():
    """No switch on tg.matmul / tg.dot: NumPy's keywords only."""
    a = np.ones((2, 3), np.float16)
    with pytest.raises(TypeError):
        tg.matmul(a, a.T, accumulate="float16")
    with pytest.raises(TypeError):
        tg.dot(a, a.T, accumulate="float16")


F16ACC_CLIENT = Path(__file__).resolve().parents[2] / "sdk" / "f16acc_client.c"
AARCH64_TOOLCHAIN = ("set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR aarch64)\n"
                     "set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)\n")


def test_half_accumulation_through_the_sdk_under_qemu(tmp_path):
    """The driver on AArch64 (the SDK with neonfp16, cross-built, run under qemu-aarch64):
    tilegen_gemm_f16_ex's float16 C equals the model of half accumulation (sums in k order,
    each multiply-add rounded once to half) bit for bit, over tile edges and, with L2 shrunk
    to 16 KiB, several k and column blocks, on 1 and 2 threads; the float32 epilogue applies to
    it. Without FP16 (-cpu cortex-a72) or under TILEGEN_ISA=neon, float32 accumulation serves:
    the TILEGEN_ACCUMULATE_F32 answer. An invalid accumulate is -19."""
    import shutil
    import subprocess

    from tilegen.dsl.isa import host_arch

    if host_arch() == "aarch64":
        pytest.skip("this host is aarch64: qemu-aarch64's -cpu is not available to pick CPUs")
    missing = [t for t in ("cmake", "aarch64-linux-gnu-gcc", "qemu-aarch64") if not shutil.which(t)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not found (Debian: cmake gcc-aarch64-linux-gnu "
                    "qemu-user)")
    sdk = tmp_path / "sdk"
    r = cprog.run([*cprog.tilegen_command(), "generate", "--sdk", "--isa", "neonfp16,neon",
                   "--ops", "gemm", "--out", str(sdk)], timeout=300)
    assert r.returncode == 0, r.stderr
    (tmp_path / "aarch64.cmake").write_text(AARCH64_TOOLCHAIN)
    build = tmp_path / "arm"
    for cmd in (["cmake", "-S", sdk, "-B", build,
                 f"-DCMAKE_TOOLCHAIN_FILE={tmp_path / 'aarch64.cmake'}"],
                ["cmake", "--build", build, "-j2"]):
        r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    exe = tmp_path / "client"
    subprocess.run(["aarch64-linux-gnu-gcc", "-std=c11", "-static", f"-I{sdk / 'include'}",
                    str(F16ACC_CLIENT), str(build / "libtilegen.a"), "-o", str(exe),
                    "-lpthread", "-lm"], check=True)

    def run(*cpu, **env):
        child = cprog.clean_env(**env)
        if "TILEGEN_ISA" not in env:  # this run's cap is the host's (scalar caps aarch64 too)
            child.pop("TILEGEN_ISA", None)
        r = subprocess.run(["qemu-aarch64", *cpu, str(exe)], capture_output=True, text=True,
                           timeout=600, env=child)
        assert r.returncode == 0, r.stderr
        rows = [dict(zip(line.split()[::2], line.split()[1::2]))
                for line in r.stdout.splitlines() if line.startswith("isa ")]
        assert len(rows) == 12 and all(row["rc"] == "0" for row in rows), r.stdout
        assert "bad rc -19 c 42" in r.stdout
        return rows

    for rows in (run(), run(TILEGEN_L2_SIZE="16K")):
        for row in rows:
            assert row["isa"] == "neonfp16" and row["kernel-model-equal"] == "1", row
            assert row["epilogue-ok"] == "1", row
        # Half sums are not float32's (k >= 3, random data): the half path ran.
        assert all(row["f32-equal"] == "0" for row in rows if int(row["k"]) >= 3)
    for rows in (run("-cpu", "cortex-a72"), run(TILEGEN_ISA="neon")):
        assert all(row["isa"] == "neon" and row["f32-equal"] == "1" for row in rows), rows
