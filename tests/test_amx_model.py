"""The software model of AMX (tests/c/amx_model.h), on which the amxbf16/amxint8 kernels' testers
run where the CPU has no AMX, against NumPy references of the Intel SDM's semantics: partial
tiles (rows and bytes past the config zeroed on load, left alone on store), TDPBF16PS's order
(per k pair, the two products added to float32 one after the other, each rounded to nearest
even; subnormal inputs and results zero), and the four int8 products' signedness and wrapping
int32 sums. Also: shapes that do not chain abort (real AMX faults, #UD)."""
import subprocess

import numpy as np
import pytest
from conftest import REPO_ROOT

ROWS, K, N = 7, 6, 10   # C: 7 rows x 10 lanes; A: 7 rows x 6 groups; B: 6 rows x 10 lanes


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    exe = tmp_path_factory.mktemp("amx") / "amx_model_probe"
    cmd = ["gcc", "-std=c99", "-O2", "-Wall", "-Werror", "-include",
           str(REPO_ROOT / "tests" / "c" / "amx_model.h"),
           str(REPO_ROOT / "tests" / "c" / "amx_model_probe.c"), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def config():
    cfg = np.zeros(64, np.uint8)
    cfg[0] = 1
    for t, (rows, colsb) in enumerate([(ROWS, 4 * N), (ROWS, 4 * K), (K, 4 * N)]):
        cfg[16 + 2 * t] = colsb
        cfg[48 + t] = rows
    return cfg


def run(probe, op, c, a, b):
    """c, a, b: 16 x 64 byte arrays (the whole tile, junk past the config included)."""
    data = b"".join(np.ascontiguousarray(x, np.uint8).tobytes() for x in (config(), c, a, b))
    r = subprocess.run([str(probe), op], input=data, capture_output=True)
    return r, np.frombuffer(r.stdout, np.uint8).reshape(16, 64) if r.returncode == 0 else None


def check_untouched(out):
    """The store wrote C's rows x colsb bytes only (the rest keeps the 0xAB fill)."""
    assert (out[ROWS:] == 0xAB).all() and (out[:ROWS, 4 * N:] == 0xAB).all()


def bf16_tile(rng, rows, pairs):
    """Random bfloat16 values over a wide range of exponents (the sum order shows in the
    rounding), a few subnormals among them, as a 16 x 64 byte tile (junk past the shape)."""
    tile = rng.integers(0, 256, (16, 64), dtype=np.uint8)
    mant = rng.integers(0, 128, (rows, 2 * pairs))
    exp = rng.integers(127 - 24, 127 + 24, (rows, 2 * pairs))
    sign = rng.integers(0, 2, (rows, 2 * pairs))
    bits = (sign << 15 | exp << 7 | mant).astype(np.uint16)
    bits[0, 0] = 0x0001                        # subnormal: zero under DAZ
    bits[rows - 1, 1] = 0x8040                 # negative subnormal
    tile[:rows, :4 * pairs] = bits.view(np.uint8).reshape(rows, 4 * pairs)
    return tile, bits


def as_f32(bits16):
    return (bits16.astype(np.uint32) << 16).view(np.float32)


def flush(x):
    """FTZ/DAZ: float32 subnormals to zero of their sign."""
    x = np.array(x, np.float32)
    bits = x.view(np.uint32)
    sub = (bits & 0x7F800000) == 0
    bits[sub] &= 0x80000000
    return bits.view(np.float32)


def test_tdpbf16ps(probe):
    rng = np.random.default_rng(1)
    c = rng.integers(0, 256, (16, 64), dtype=np.uint8)
    c0 = rng.standard_normal((ROWS, N)).astype(np.float32) * 1e3
    c[:ROWS, :4 * N] = c0.view(np.uint8)
    a, abits = bf16_tile(rng, ROWS, K)
    b, bbits = bf16_tile(rng, K, N)
    r, out = run(probe, "bf16", c, a, b)
    assert r.returncode == 0, r.stderr
    check_untouched(out)
    got = out[:ROWS, :4 * N].copy().view(np.float32)
    af, bf = flush(as_f32(abits)), flush(as_f32(bbits))
    want = c0.copy()
    with np.errstate(over="ignore", under="ignore"):
        for k in range(K):
            for h in range(2):
                prod = flush(af[:, 2 * k + h][:, None] * bf[k, h::2][None, :])
                want = flush(want + prod)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    # The order is seen: the same sums taken in float64 and rounded once differ somewhere.
    exact = c0.astype(np.float64)
    for k in range(K):
        for h in range(2):
            exact += np.outer(af[:, 2 * k + h], bf[k, h::2]).astype(np.float64)
    assert not np.array_equal(exact.astype(np.float32), want)


@pytest.mark.parametrize("op,sa,sb", [("ss", 1, 1), ("su", 1, 0), ("us", 0, 1), ("uu", 0, 0)])
def test_int8_products(probe, op, sa, sb):
    rng = np.random.default_rng(2)
    c = rng.integers(0, 256, (16, 64), dtype=np.uint8)
    c0 = rng.integers(-2**31, 2**31, (ROWS, N), dtype=np.int64)
    c0[0, 0] = 2**31 - 1                        # + a positive sum: wraps
    c[:ROWS, :4 * N] = c0.astype(np.int32).view(np.uint8)
    a = rng.integers(0, 256, (16, 64), dtype=np.uint8)
    b = rng.integers(0, 256, (16, 64), dtype=np.uint8)
    a[0, :4 * K] = 0x7F if sa else 0xFF
    b[:K, 0:4] = 0x7F if sb else 0xFF
    r, out = run(probe, op, c, a, b)
    assert r.returncode == 0, r.stderr
    check_untouched(out)
    got = out[:ROWS, :4 * N].copy().view(np.int32)
    av = a[:ROWS, :4 * K].view(np.int8) if sa else a[:ROWS, :4 * K]
    bv = b[:K, :4 * N].view(np.int8) if sb else b[:K, :4 * N]
    av = av.astype(np.int64).reshape(ROWS, K, 4)
    bv = bv.astype(np.int64).reshape(K, N, 4)
    want = c0 + np.einsum("mkq,knq->mn", av, bv)
    assert np.array_equal(got, want.astype(np.uint64).astype(np.uint32).view(np.int32))


def test_shapes_that_do_not_chain_abort(probe):
    rng = np.random.default_rng(3)
    tiles = [rng.integers(0, 256, (16, 64), dtype=np.uint8) for _ in range(3)]
    r, _ = run(probe, "fault-shape", *tiles)
    assert r.returncode != 0 and b"#UD" in r.stderr, (r.returncode, r.stderr)
