"""tg.rmsnorm against torch.nn.functional.rms_norm and a float64 NumPy reference: shapes,
dtypes, strides, every row remainder, threads, eps, bad input; and the C API."""
import numpy as np
import pytest
from conftest import on_a_worker, reference

import cprog
import tilegen as tg
from tilegen.ops.rmsnorm import _rmsnorm


def ref(x, w=None, eps=None):
    x64 = np.asarray(x, np.float64)
    dt = np.result_type(x, w) if w is not None else np.asarray(x).dtype
    eps = np.finfo(dt).eps if eps is None else eps
    y = x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + eps)
    return y if w is None else y * np.asarray(w, np.float64)


def close(got, want, dtype):
    tol = 2e-6 if np.dtype(dtype) == np.float32 else 1e-13
    assert np.abs(got - want).max() <= tol * max(1.0, np.abs(want).max()), np.abs(got - want).max()


@pytest.fixture(params=["built-in", "every kernel"])
def kernel(request):
    """The built-in kernel, then each registered float32 kernel of the ISA in turn."""
    names = [None] if request.param == "built-in" else _rmsnorm.kernels("f32")
    yield names
    _rmsnorm.set_kernel("f32", None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_row_length(dtype, kernel):
    rng = np.random.default_rng(1)
    for name in kernel:
        if dtype == np.float32:
            _rmsnorm.set_kernel("f32", name)
        for n in [*range(1, 140), 576, 1000, 4097]:
            x = rng.standard_normal((3, n)).astype(dtype)
            w = rng.standard_normal(n).astype(dtype)
            close(tg.rmsnorm(x, w, eps=1e-5), ref(x, w, 1e-5), dtype)
            close(tg.rmsnorm(x), ref(x), dtype)


def test_matches_torch():
    torch = reference("torch")
    rng = np.random.default_rng(2)
    for shape in ((7,), (4, 576), (2, 3, 5, 129)):
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal(shape[-1]).astype(np.float32)
        for weight, eps in ((w, 1e-6), (None, None), (w, None)):
            want = torch.nn.functional.rms_norm(
                torch.from_numpy(x), (shape[-1],),
                None if weight is None else torch.from_numpy(weight), eps).numpy()
            got = tg.rmsnorm(x, weight, eps=eps)
            assert got.shape == x.shape and got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def test_strides_views_and_mixed_dtypes():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((20, 300))
    for x in (base[::3, 5:250], base.T[:, :7], np.asfortranarray(base[:6]),
              base.astype(">f8")[:4]):
        close(tg.rmsnorm(x), ref(x), np.float64)
    x32 = base.astype(np.float32)
    w64 = rng.standard_normal(300)
    got = tg.rmsnorm(x32, w64, eps=1e-6)
    assert got.dtype == np.float64
    close(got, ref(x32.astype(np.float64), w64, 1e-6), np.float64)
    before = base.copy()
    tg.rmsnorm(base)
    assert np.array_equal(base, before)  # x is never modified


def test_zeros_and_large_values():
    assert np.array_equal(tg.rmsnorm(np.zeros((2, 33), np.float32), eps=1e-6),
                          np.zeros((2, 33), np.float32))
    x = np.full((1, 40), 1e18, np.float32)  # x^2 = 1e36 and their sum stay finite
    assert np.allclose(tg.rmsnorm(x, eps=0.0), 1.0)


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_give_the_bits_of_one_thread(threads):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((300, 1024)).astype(np.float32)
    w = rng.standard_normal(1024).astype(np.float32)
    tg.set_num_threads(1)
    one = tg.rmsnorm(x, w)
    tg.set_num_threads(threads)
    got = on_a_worker(lambda: tg.rmsnorm(x, w)) if threads > 1 else tg.rmsnorm(x, w)
    assert np.array_equal(got, one)


@pytest.mark.parametrize("args, kw, exc, words", [
    ((np.ones((2, 3), np.int32),), {}, TypeError, "x: dtype int32"),
    ((np.ones((2, 0), np.float32),), {}, ValueError, "x: expected shape"),
    ((np.float32(3),), {}, ValueError, "x: expected shape"),
    ((np.ones((2, 3), np.float32), np.ones(4, np.float32)), {}, ValueError, "weight: expected"),
    ((np.ones((2, 3), np.float32), np.ones(3, np.int64)), {}, TypeError, "weight: dtype"),
    ((np.ones((2, 3), np.float32),), {"eps": -1.0}, ValueError, "eps"),
    ((np.ones((2, 3), np.float32),), {"eps": float("nan")}, ValueError, "eps"),
    ((np.ones((2, 3), np.float32),), {"eps": "small"}, TypeError, "eps"),
])
def test_bad_input(args, kw, exc, words):
    with pytest.raises(exc, match=words):
        tg.rmsnorm(*args, **kw)


def test_kernel_choice_is_reported_and_settable():
    info = tg.runtime_info()["kernels"]["rmsnorm"]
    assert info["f32"]["kernel"] == _rmsnorm.kernel_name("f32")
    assert info["f64"]["kernel"] == _rmsnorm.kernel_name("f64")
    with pytest.raises(ValueError, match="not an rmsnorm kernel"):
        _rmsnorm.set_kernel("f32", "tg_f32_rmsnorm_ukernel_1x8__nope")
    assert _rmsnorm.kernel_name("f32") == info["f32"]["kernel"]


C_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include "tilegen.h"
int main(void) {
  float x[2 * 37], y[2 * 37], w[37];
  for (int i = 0; i < 2 * 37; i++) x[i] = (float) (i % 11) - 5.0f;
  for (int i = 0; i < 37; i++) w[i] = 0.5f + 0.01f * i;
  if (tilegen_rmsnorm_f32(2, 37, x, 37, w, 1e-6f, y, 37) != 0) return 1;
  for (int r = 0; r < 2; r++) {
    double ss = 0;
    for (int i = 0; i < 37; i++) ss += (double) x[r * 37 + i] * x[r * 37 + i];
    const double s = 1 / sqrt(ss / 37 + 1e-6);
    for (int i = 0; i < 37; i++)
      if (fabs(y[r * 37 + i] - x[r * 37 + i] * s * w[i]) > 1e-5) return 2;
  }
  /* Bad parameters: -p, nothing written. */
  y[0] = 42;
  if (tilegen_rmsnorm_f32(-1, 37, x, 37, w, 1e-6f, y, 37) != -1) return 3;
  if (tilegen_rmsnorm_f32(2, 0, x, 37, w, 1e-6f, y, 37) != -2) return 4;
  if (tilegen_rmsnorm_f32(2, 37, NULL, 37, w, 1e-6f, y, 37) != -3) return 5;
  if (tilegen_rmsnorm_f32(2, 37, x, 36, w, 1e-6f, y, 37) != -4) return 6;
  if (tilegen_rmsnorm_f32(2, 37, x, 37, w, -1.0f, y, 37) != -6) return 7;
  if (tilegen_rmsnorm_f32(2, 37, x, 37, w, 1e-6f, NULL, 37) != -7) return 8;
  if (tilegen_rmsnorm_f32(2, 37, x, 37, w, 1e-6f, y, 3) != -8) return 9;
  if (y[0] != 42) return 10;
  /* In place. */
  if (tilegen_rmsnorm_f32(2, 37, x, 37, NULL, 0.0f, x, 37) != 0) return 11;
  puts("OK");
  return 0;
}
"""


def test_c_api(tmp_path):
    src = tmp_path / "rmsnorm_client.c"
    src.write_text(C_PROGRAM)
    exe = tmp_path / "rmsnorm_client"
    r = cprog.run([cprog.cc(), "-std=c11", f"-I{tg.get_include()}", str(src), "-o", str(exe),
                   *cprog.tilegen_link_args(), "-lm"])
    assert r.returncode == 0, r.stderr
    r = cprog.run([str(exe)])
    assert r.returncode == 0 and r.stdout.strip() == "OK", (r.returncode, r.stdout, r.stderr)
