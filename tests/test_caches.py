"""Cache sizes: what the C core reads (against this test's own reading of sysfs), the
TILEGEN_L1D_SIZE / TILEGEN_L2_SIZE overrides, the GEMM blocking derived from them, and correct
products whatever caches the library believes it has (in subprocesses: sizes are read at init).
"""
import json
import os
from pathlib import Path

import pytest

import cprog
from tilegen.core import _core
from tilegen.ops.gemm import _gemm
from tilegen.ops.gemm.gemm import BLOCKING

SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")


def sysfs_caches():
    """{level: bytes} of cpu0's data/unified caches, parsed here independently of the C core."""
    out = {}
    for index in sorted(SYSFS.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
        out[level] = int(size.rstrip("KM")) * mult
    return out


def test_caches_match_sysfs():
    got = _core.caches()
    if got["source"] == "TILEGEN_*_SIZE":
        pytest.skip("TILEGEN_L1D_SIZE / TILEGEN_L2_SIZE are set in this environment")
    want = sysfs_caches()
    if not want.get(1):
        pytest.skip(f"{SYSFS} lists no L1 data cache here; the core read {got['source']}")
    assert got["source"] == "sysfs"
    assert got["l1d"] == want[1]
    assert got["l2"] == want.get(2, want.get(3))
    assert got["l3"] == want.get(3, 0)


PROBE = """
import json, numpy as np, tilegen as tg
from tilegen.core import _core
from tilegen.ops.gemm import _gemm
print(json.dumps({"caches": _core.caches(), "f32": _gemm.gemm_config(np.float32),
                  "f64": _gemm.gemm_config(np.float64)}))
"""


def child(**env):
    r = cprog.python(PROBE, env=cprog.clean_env(**env))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def expected_blocking(cfg, itemsize, l1d, l2, l3):
    """The rule of blas/gemm_dispatch.c, restated: A's MR x KC panel in a quarter of L2 (KC a
    multiple of 8, between 64 and the table's), the KC x NC block of B in the smaller of 4 x L2
    and L3 / 8, half of L2 without an L3 (NC a multiple of NR, at most 4x the table's)."""
    kc_table, nc_table = BLOCKING[cfg["isa"]]["f32" if itemsize == 4 else "f64"]
    kc = l2 // 4 // (cfg["packed"]["mr"] * itemsize) // 8 * 8
    kc = min(kc_table, max(64, kc))
    b_max = min(4 * l2, l3 // 8) if l3 > 0 else l2 // 2
    nc = min(b_max // (kc * itemsize), 4 * nc_table)
    nr = cfg["nr"]
    return kc, max(nr, nc // nr * nr)


@pytest.mark.parametrize("l1d,l2,l3", [("48K", "1M", "32M"), ("32K", "256K", "8M"),
                                       ("64K", "2M", "96M"), ("16K", "96K", "512K")])
def test_blocking_follows_the_caches(l1d, l2, l3):
    out = child(TILEGEN_L1D_SIZE=l1d, TILEGEN_L2_SIZE=l2, TILEGEN_L3_SIZE=l3)
    size = lambda s: int(s[:-1]) << (10 if s[-1] == "K" else 20)  # noqa: E731
    assert out["caches"]["source"] == "TILEGEN_*_SIZE"
    assert (out["caches"]["l1d"], out["caches"]["l2"]) == (size(l1d), size(l2))
    assert out["caches"]["l3"] == size(l3)
    for dt, itemsize in (("f32", 4), ("f64", 8)):
        cfg = out[dt]
        assert (cfg["kc"], cfg["nc"]) == expected_blocking(cfg, itemsize, size(l1d), size(l2),
                                                           size(l3)), dt


def test_bad_override_is_ignored():
    plain, bad = child(), child(TILEGEN_L2_SIZE="lots", TILEGEN_L1D_SIZE="-4K")
    assert bad["caches"] == plain["caches"]
    assert (bad["f32"]["kc"], bad["f32"]["nc"]) == (plain["f32"]["kc"], plain["f32"]["nc"])


# Shapes that cross every cache-derived threshold (B in L1, B in L2, B beyond L2) on the real
# and on a tiny or a huge believed cache: the answers must not depend on what the library thinks.
PRODUCTS = """
import numpy as np, tilegen as tg
rng = np.random.default_rng(7)
for m, k, n in [(1, 300, 700), (1, 2048, 1030), (3, 1500, 900), (16, 700, 1500),
                (200, 333, 517), (1, 64, 40), (900, 1, 900), (700, 700, 1)]:
    for order in "CF":
        a = np.asarray(rng.standard_normal((m, k)), np.float32, order=order)
        b = rng.standard_normal((k, n)).astype(np.float32)
        want = a.astype(np.float64) @ b.astype(np.float64)
        got = tg.matmul(a, b)
        err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
        assert err < 1e-5, (m, k, n, order, err)
        got64 = tg.matmul(a.astype(np.float64), b.astype(np.float64))
        assert np.allclose(got64, want, rtol=1e-12, atol=1e-12), (m, k, n, order)
print("ok")
"""


@pytest.mark.parametrize("l1d,l2", [(None, None), ("8K", "64K"), ("256K", "64M")])
def test_products_are_right_whatever_the_caches(l1d, l2):
    env = {} if l1d is None else {"TILEGEN_L1D_SIZE": l1d, "TILEGEN_L2_SIZE": l2}
    for threads in ("1", "2"):
        r = cprog.python(PRODUCTS, env=cprog.clean_env(TILEGEN_NUM_THREADS=threads, **env))
        assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


WARNED = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tilegen
from tilegen.core import _core
print(json.dumps({"caches": _core.caches(),
                  "warnings": [str(w.message) for w in caught if w.category is RuntimeWarning]}))
"""


@pytest.mark.parametrize("value, want, words", [
    ("2MB", 2 << 20, None), ("1MiB", 1 << 20, None), ("48k", 48 << 10, None),
    (" 524288 ", 512 << 10, None), ("1g", 1 << 30, None),
    ("abc", None, "is not a size"), ("-5", None, "is not a size"),
    ("1T", None, "is not a size"), ("2MiX", None, "is not a size"), ("", None, None),
    ("1", 4096, "is below the smallest cache size, 4K; using 4K"),
    ("0", 4096, "is below the smallest cache size, 4K; using 4K"),
    ("5G", 1 << 30, "is over the largest cache size, 1G; using 1G"),
])
def test_l2_override_forms_bounds_and_warnings(value, want, words):
    """TILEGEN_L2_SIZE: bytes or K/M/G (binary; B and iB allowed, any case) are taken; a value
    that is not a size is ignored and one out of [4K, 1G] clamped, each with one RuntimeWarning
    at import naming the variable and the value (none for a good value)."""
    plain = child()
    r = cprog.python(WARNED, env=cprog.clean_env(TILEGEN_L2_SIZE=value))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "tilegen: warning" not in r.stderr, r.stderr  # Python warns; the core says nothing
    ours = [w for w in out["warnings"] if "TILEGEN_L2_SIZE" in w]
    if words is None:
        assert ours == []
    else:
        assert len(ours) == 1 and ours[0].startswith(f"TILEGEN_L2_SIZE={value} {words}"), ours
    got = out["caches"]["l2"]
    assert got == (plain["caches"]["l2"] if want is None else want)


def test_l3_zero_is_none_and_l1_is_clamped_too():
    r = cprog.python(WARNED, env=cprog.clean_env(TILEGEN_L3_SIZE="0", TILEGEN_L1D_SIZE="100"))
    out = json.loads(r.stdout)
    assert out["caches"]["l3"] == 0 and out["caches"]["l1d"] == 4096
    assert out["warnings"] == ["TILEGEN_L1D_SIZE=100 is below the smallest cache size, 4K; "
                               "using 4K"]


C_CLIENT = r"""
#include <stdio.h>
#include <tilegen.h>
int main(void) {
  float a = 1, b = 2, c = 0;
  int rc = tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, 1, 1, 1, 1.0f,
                            &a, 1, &b, 1, 0.0f, &c, 1, NULL, TILEGEN_ACT_NONE);
  rc |= tilegen_sgemm_ex(TILEGEN_ROW_MAJOR, TILEGEN_NO_TRANS, TILEGEN_NO_TRANS, 1, 1, 1, 1.0f,
                         &a, 1, &b, 1, 0.0f, &c, 1, NULL, TILEGEN_ACT_NONE);
  printf("%d %g\n", rc, c);
  return 0;
}
"""


def test_c_program_hears_once_on_stderr(tmp_path):
    """A C program (no Python to warn through) gets each ignored or clamped value once, on
    stderr, at the library's first call."""
    import subprocess

    src = tmp_path / "client.c"
    src.write_text(C_CLIENT)
    exe = tmp_path / "client"
    subprocess.run([cprog.cc(), "-std=c11", f"-I{cprog.tg.get_include()}", str(src), "-o",
                    str(exe), *cprog.tilegen_link_args(), "-lm"], check=True)
    r = cprog.run([exe], env=cprog.clean_env(TILEGEN_L2_SIZE="2MB", TILEGEN_L1D_SIZE="lots",
                                             TILEGEN_L3_SIZE="1T"))
    assert r.returncode == 0 and r.stdout == "0 2\n", r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert lines == [
        "tilegen: warning: TILEGEN_L1D_SIZE=lots is not a size (a byte count, or a number with "
        "K, M or G: 48K, 2MB, 1MiB) and is ignored",
        "tilegen: warning: TILEGEN_L3_SIZE=1T is not a size (a byte count, or a number with "
        "K, M or G: 48K, 2MB, 1MiB) and is ignored"], r.stderr
