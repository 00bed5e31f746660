"""tilegen.dask on a real distributed.LocalCluster (2 worker processes, tilegen on 1 thread in
each): the image filters bit for bit equal to tg.image on the whole image (uint8 and float32,
every border, chunkings smaller than the halo, ragged, single-pixel, channels chunked, 2-D,
stacks), the products within float32 summation error of tg.matmul / tg.conv2d / tg.attention on
the whole arrays, a worker killed mid-computation, and bad input.

Without dask, distributed and dask-image these tests skip (pip install "tilegen[dask]"); under
CI=1 (.ci/run) they fail instead (conftest.reference). Run: pytest tests/test_dask.py
"""
import os
import signal
import tempfile
import time

import numpy as np
import pytest
from conftest import reference

import tilegen as tg

da = reference("dask.array")
distributed = reference("distributed")
cv2 = reference("cv2")

import dask  # noqa: E402  (after the skip)

import tilegen.dask as tgd  # noqa: E402

RNG = np.random.default_rng(20261206)
EPS32 = np.finfo(np.float32).eps
BORDERS = ("reflect101", "replicate", "constant", "reflect")  # wrap: refused (see below)


@pytest.fixture(scope="module")
def client():
    """2 worker processes of 1 Dask thread each, tilegen's pool on 1 thread in each."""
    # The workers start in an empty folder: started from a source tree (CI tests the unpacked
    # sdist), they would import its uncompiled tilegen instead of the installed one.
    here = os.getcwd()
    os.chdir(tempfile.mkdtemp(prefix="tilegen-dask-"))
    try:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)
    finally:
        os.chdir(here)
    c = distributed.Client(cluster)
    tgd.set_worker_threads(c, 1)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def compute(client, *arrays):
    return client.gather(client.compute(list(arrays)))


def test_workers_are_processes_with_one_tilegen_thread(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2 and os.getpid() not in pids.values()
    assert set(client.run(tg.get_num_threads).values()) == {1}


# --- image filters: bit for bit tg.image on the whole image ---

def filters(border):
    """(name, tilegen.dask call, tg.image call): halos of 1 to 4 pixels, even and odd sizes."""
    k2 = (np.arange(18, dtype=np.float32).reshape(3, 6) - 8) / 40
    return [
        ("gaussian7", lambda x: tgd.image.gaussian_blur(x, 7, 1.6, border=border),
         lambda x: tg.image.gaussian_blur(x, 7, 1.6, border=border)),
        ("gaussian3-sigma0", lambda x: tgd.image.gaussian_blur(x, (3, 3), 0, border=border),
         lambda x: tg.image.gaussian_blur(x, (3, 3), 0, border=border)),
        ("box5", lambda x: tgd.image.box_blur(x, 5, border=border),
         lambda x: tg.image.box_blur(x, 5, border=border)),
        ("box4", lambda x: tgd.image.box_blur(x, 4, border=border),
         lambda x: tg.image.box_blur(x, 4, border=border)),
        ("filter2d3x6", lambda x: tgd.image.filter2d(x, k2, border=border),
         lambda x: tg.image.filter2d(x, k2, border=border)),
        ("unsharp9", lambda x: tgd.image.unsharp_mask(x, 9, 2.0, 1.5, 2, border=border),
         lambda x: tg.image.unsharp_mask(x, 9, 2.0, 1.5, 2, border=border)),
    ]


def image(shape, dtype):
    img = RNG.integers(0, 256, shape, dtype=np.uint8)
    return img if dtype == np.uint8 else (img / 255.0 - 0.3).astype(np.float32)


# (shape, chunks): smaller than every halo, ragged, single pixels, channels chunked.
CHUNKINGS = [
    ((37, 29, 3), (5, 6, 1)),
    ((61, 47, 3), (2, 47, 3)),
    ((13, 11, 3), (1, 1, 2)),
    ((61, 47, 3), ((30, 1, 30), (1, 45, 1), (2, 1))),
    ((61, 47, 3), (61, 47, 3)),
    ((37, 29), (9, 4)),
    ((40, 33, 1), (7, 33, 1)),
    ((5, 7, 4), (1, 2, 4)),  # smaller than twice the largest halo: one chunk on that axis
]
MANY_CHUNKS = 50  # above this, each filter runs with one border (all three among the filters)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=["u8", "f32"])
@pytest.mark.parametrize("shape, chunks", CHUNKINGS, ids=[str(c[1]) for c in CHUNKINGS])
def test_filters_are_bit_identical_to_the_whole_image(client, shape, chunks, dtype):
    img = image(shape, dtype)
    x = da.from_array(img, chunks=chunks)
    names, lazy, want = [], [], []
    for b, border in enumerate(BORDERS):
        for i, (name, tgd_call, tg_call) in enumerate(filters(border)):
            if x.npartitions > MANY_CHUNKS and i % len(BORDERS) != b:
                continue
            names.append(f"{name} {border}")
            lazy.append(tgd_call(x))
            want.append(tg_call(img))
    for name, out, got, ref in zip(names, lazy, compute(client, *lazy), want):
        assert out.shape == img.shape and out.dtype == img.dtype, name
        assert got.dtype == img.dtype and got.shape == img.shape, name
        np.testing.assert_array_equal(got, ref, err_msg=name)


def test_gaussian_matches_opencv_across_chunks(client):
    """The independent reference: OpenCV's GaussianBlur, bit for bit for uint8."""
    img = image((77, 90, 3), np.uint8)
    out = tgd.image.gaussian_blur(da.from_array(img, chunks=(10, 13, 1)), 5, 1.1)
    np.testing.assert_array_equal(compute(client, out)[0], cv2.GaussianBlur(img, (5, 5), 1.1))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=["u8", "f32"])
def test_a_stack_of_images_chunked_over_the_batch(client, dtype):
    stack = image((5, 31, 26, 3), dtype)
    x = da.from_array(stack, chunks=(2, 11, 9, 2))
    lazy = [f(x) for _, f, _ in filters("reflect101")]
    for (name, _, tg_call), got in zip(filters("reflect101"), compute(client, *lazy)):
        for i in range(stack.shape[0]):
            np.testing.assert_array_equal(got[i], tg_call(stack[i]), err_msg=f"{name} {i}")


def test_a_worker_killed_mid_computation_does_not_change_the_answer(client):
    """A graph of ~3 s (a slow step before each block's blur): one worker process is killed
    with SIGKILL while tasks run; the scheduler re-runs its tasks elsewhere and the nanny
    restarts it (with tilegen on 1 thread again: the worker plug-in)."""
    img = image((160, 120, 3), np.uint8)

    def slow(block):
        time.sleep(0.08)
        return block

    x = da.from_array(img, chunks=(20, 20, 3)).map_blocks(slow, dtype=np.uint8)
    fut = client.compute(tgd.image.gaussian_blur(x, 5, 1.1))
    deadline = time.monotonic() + 30
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    assert not fut.done(), "the graph finished before the kill: make it slower"
    pids = client.run(os.getpid)
    busy = [w for w, keys in client.processing().items() if keys and w in pids]
    victim = busy[0] if busy else sorted(pids)[0]  # a worker running tasks of the graph
    os.kill(pids[victim], signal.SIGKILL)
    got = fut.result(timeout=120)
    np.testing.assert_array_equal(got, tg.image.gaussian_blur(img, 5, 1.1))
    client.wait_for_workers(2, timeout=60)
    assert pids[victim] not in client.run(os.getpid).values()
    assert set(client.run(tg.get_num_threads).values()) == {1}


# --- products: within float32 summation error of tg on the whole arrays ---

def summation_bound(abs_product, k):
    """|computed - exact| <= gamma_k |A||B| elementwise (Higham), gamma_k ~ k eps, for each of
    the two results: their difference is within twice that."""
    return 2 * k * EPS32 * abs_product


def graph_dependencies(arr):
    dsk = dict(arr.__dask_graph__())
    return {key: dask.core.get_dependencies(dsk, key) for key in dsk}


def test_matmul_blocked_over_k_with_a_tree_sum(client):
    m, k, n = 97, 203, 61
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    c = tgd.matmul(da.from_array(a, chunks=(25, 17)), da.from_array(b, chunks=(17, 20)))
    # The graph: one tg.matmul task per (i, k, j) block pair, then sums of at most two
    # partial results (12 k blocks: no task sees a row of blocks).
    deps = graph_dependencies(c)
    sums = [d for key, d in deps.items() if key[0].startswith("sum")]
    assert sums and max(len(d) for d in sums) <= 2
    got = compute(client, c)[0]
    assert got.dtype == np.float32 and got.shape == (m, n)
    bound = summation_bound(np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)), k)
    for ref in (tg.matmul(a, b), a.astype(np.float64) @ b.astype(np.float64)):
        err = np.abs(got - ref)
        assert (err <= bound).all(), f"max error {err.max():.3g} over the bound"


def test_matmul_rechunks_b_to_a_contraction_chunks_float64_and_integers(client):
    a = RNG.standard_normal((40, 77))
    b = RNG.standard_normal((77, 30))
    c = tgd.matmul(da.from_array(a, chunks=(7, 11)), da.from_array(b, chunks=(25, 30)))
    ai = RNG.integers(-100, 100, (33, 50)).astype(np.int32)
    bi = RNG.integers(-100, 100, (50, 21)).astype(np.int32)
    ci = tgd.matmul(da.from_array(ai, chunks=(9, 3)), da.from_array(bi, chunks=(1, 21)),
                    split_every=3)
    got, goti = compute(client, c, ci)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, tg.matmul(a, b), rtol=0, atol=1e-12 * 77 * np.abs(a).max()
                               * np.abs(b).max())
    assert goti.dtype == np.int32
    np.testing.assert_array_equal(goti, ai @ bi)  # exact: integer sums in any order


CONVS = [  # (x chunks as N, C, H, W; conv2d keywords; filter size)
    ((3, 2, 19, 23), dict(stride=(1, 2), padding=1, activation="relu"), 3),  # batch only
    ((3, 5, 7, 5), dict(stride=(1, 2), padding=1, activation="relu"), 3),
    ((7, 5, (1, 9, 9), 4), dict(padding="same", dilation=2), 3),
    ((2, 1, 6, 10), dict(stride=2, padding=(0, 1, 2, 1)), 4),
    ((4, 5, 3, 3), dict(stride=3, padding=0, groups=5), 5),  # chunks smaller than the halo
]


def test_matmul_of_stacks_chunked_over_the_stack_too(client):
    s, m, k, n = 5, 30, 70, 20
    a = RNG.standard_normal((s, m, k)).astype(np.float32)
    b = RNG.standard_normal((s, k, n)).astype(np.float32)
    c = tgd.matmul(da.from_array(a, chunks=(2, 11, 9)), da.from_array(b, chunks=(3, 20, 7)))
    got = compute(client, c)[0]
    assert got.shape == (s, m, n) and got.dtype == np.float32
    bound = summation_bound(np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)), k)
    assert (np.abs(got - tg.matmul(a, b)) <= bound).all()


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("chunks, kw, ksize", CONVS, ids=[str(c[0]) for c in CONVS])
def test_conv2d_chunked_over_batch_and_image(client, layout, chunks, kw, ksize):
    n, c, h, w, o = 7, 5, 19, 23, 10
    groups = kw.get("groups", 1)
    x = RNG.standard_normal((n, c, h, w)).astype(np.float32)
    wt = RNG.standard_normal((o, c // groups, ksize, ksize)).astype(np.float32)
    bias = RNG.standard_normal(o).astype(np.float32)
    if layout == "NHWC":
        x, wt = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), wt.transpose(0, 2, 3, 1)
        chunks = (chunks[0], chunks[2], chunks[3], chunks[1])
    y = tgd.conv2d(da.from_array(x, chunks=chunks), wt, bias, layout=layout, **kw)
    want = tg.conv2d(x, wt, bias, layout=layout, **kw)
    assert y.shape == want.shape and y.dtype == np.float32
    got = compute(client, y)[0]
    taps = wt[0].size  # the products summed per output value, then the bias
    bound = 2 * (taps + 1) * EPS32 * (np.abs(x).max() * np.abs(wt).reshape(o, -1).sum(1).max()
                                      + np.abs(bias).max())
    assert np.abs(got - want).max() <= bound


@pytest.mark.parametrize("causal", [False, True, "top_left"])
@pytest.mark.parametrize("mask", [None, "keys", "additive"])
def test_attention_chunked_over_batch_heads_and_queries(client, causal, mask):
    b, hd, sq, sk, d, dv = 3, 4, 29, 37, 16, 8
    q = RNG.standard_normal((b, hd, sq, d)).astype(np.float32)
    k = RNG.standard_normal((b, hd, sk, d)).astype(np.float32)
    v = RNG.standard_normal((b, hd, sk, dv)).astype(np.float32)
    m = {None: None, "keys": RNG.random(sk) > 0.2,
         "additive": RNG.standard_normal((sq, sk)).astype(np.float32)}[mask]
    out = tgd.attention(da.from_array(q, chunks=(2, 3, 7, 5)),
                        da.from_array(k, chunks=(1, 4, 10, 16)),
                        da.from_array(v, chunks=(3, 1, 37, 3)), mask=m, causal=causal)
    want = tg.attention(q, k, v, mask=m, causal=causal)
    got = compute(client, out)[0]
    assert got.shape == want.shape and got.dtype == np.float32
    # Convex combinations of v's rows: float32 error of the softmax sums, scaled by |v|.
    assert np.abs(got - want).max() <= 4 * sk * EPS32 * np.abs(v).max()


# --- bad input: the argument named, before any graph is built ---

def unknown_rows():
    """A 4 x 4 uint8 dask array whose row chunks are unknown (boolean indexing)."""
    x = da.ones((4, 4), dtype=np.uint8, chunks=2)
    return x[x[:, 0] > 0]


@pytest.mark.parametrize("call, exc, match", [
    (lambda: tgd.image.gaussian_blur(np.zeros((8, 8), np.uint8), 3, 0), TypeError,
     r"^img: expected a dask array, got ndarray; wrap"),
    (lambda: tgd.image.box_blur([[1]], 3), TypeError, r"^img: expected a dask array"),
    (lambda: tgd.image.filter2d(da.zeros((2, 2, 8, 8, 3), dtype=np.uint8), np.ones((3, 3))),
     ValueError, r"^img: expected an HxW or HxWxC image or an NxHxWxC stack"),
    (lambda: tgd.image.unsharp_mask(da.zeros((8, 8), dtype=np.float16)), TypeError, r"^img: dtype"),
    (lambda: tgd.image.gaussian_blur(da.zeros((8, 8), dtype=np.uint8), 4, 1.0), ValueError,
     r"^ksize"),
    (lambda: tgd.image.box_blur(da.zeros((8, 8), dtype=np.uint8), 3, border="wrap"), ValueError,
     r"^border"),
    (lambda: tgd.image.filter2d(da.zeros((8, 8), dtype=np.uint8), np.ones(3)), ValueError,
     r"^kernel"),
    (lambda: tgd.image.box_blur(unknown_rows(), 3), ValueError,
     r"^img: its chunk sizes are unknown .*compute_chunk_sizes"),
    (lambda: tgd.matmul(da.ones((4, 4)), unknown_rows().astype(float)), ValueError,
     r"^b: its chunk sizes are unknown"),
    (lambda: tgd.matmul(np.ones((2, 2)), da.ones((2, 2))), TypeError, r"^a: expected a dask"),
    (lambda: tgd.matmul(da.ones((2, 2)), np.ones((2, 2))), TypeError, r"^b: expected a dask"),
    (lambda: tgd.matmul(da.ones((2, 3)), da.ones((2, 2))), ValueError,
     r"^a and b: the contraction sizes differ"),
    (lambda: tgd.matmul(da.ones(2), da.ones((2, 2))), ValueError, r"^a: .*2 or more dim"),
    (lambda: tgd.matmul(da.ones((3, 2, 2)), da.ones((2, 2))), ValueError,
     r"^a and b: the leading \(stack\) dimensions differ"),
    (lambda: tgd.matmul(da.ones((2, 2)), da.ones((2, 2)), split_every=1), ValueError,
     r"^split_every"),
    (lambda: tgd.conv2d(np.ones((1, 1, 4, 4), np.float32), np.ones((1, 1, 3, 3), np.float32)),
     TypeError, r"^x: expected a dask array"),
    (lambda: tgd.conv2d(da.ones((1, 4, 4), dtype=np.float32), np.ones((1, 1, 3, 3), np.float32)),
     ValueError, r"^x: .*4 dimensions"),
    (lambda: tgd.conv2d(da.ones((1, 2, 4, 4), dtype=np.float32), np.ones((1, 1, 3, 3), np.float32)),
     ValueError, r"^x: has 2 channels"),
    (lambda: tgd.attention(da.ones((2, 4, 8)), np.ones((2, 4, 8)), da.ones((2, 4, 8))),
     TypeError, r"^k: expected a dask array"),
    (lambda: tgd.attention(da.ones((2, 4, 8)), da.ones((1, 4, 8)), da.ones((1, 4, 8))),
     ValueError, r"^k: .*leading dimensions"),
    (lambda: tgd.attention(da.ones((4, 8)), da.ones((4, 6)), da.ones((4, 8))), ValueError,
     r"^q and k: head dims differ"),
    (lambda: tgd.attention(da.ones((4, 8)), da.ones((5, 8)), da.ones((5, 8)),
                           mask=np.ones(4, bool)), ValueError, r"^mask"),
    (lambda: tgd.attention(da.ones((4, 8)), da.ones((5, 8)), da.ones((5, 8)), causal="up"),
     ValueError, r"causal"),
])
def test_bad_input_names_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --- the bench plug-in's check (tilegen bench --op dask) is a real check ---

def test_bench_check_accepts_opencv_and_refuses_a_wrong_window_or_mean():
    from tilegen.dask import bench as dask_bench

    case = dask_bench.cases(quick=True)[0]
    r0, r1, c0, c1 = case.window()
    src = case.region(0, r0 - 2, r1 + 2, c0 - 2, c1 + 2)
    window = cv2.GaussianBlur(src, (5, 5), case.sigma)[2:-2, 2:-2]
    total = 127.5 * case.h * case.w * case.c
    assert case.check((0,), (total, window, "tilegen")) is None
    off = window.copy()
    off[3, 4, 0] = window[3, 4, 0] - 1 if window[3, 4, 0] else 1
    assert "differs from OpenCV" in case.check((0,), (total, off, "tilegen"))
    assert case.check((0,), (total, off, "dask_image")) is None  # scipy truncates: within 2
    lost = total * (1 - 1 / 16)  # one of the 16 blocks blurred into zeros
    assert "mean" in case.check((0,), (lost, window, "dask_image"))
    # The generator is the workers': a block made by the dask graph equals region()'s pixels.
    chunks = da.core.normalize_chunks((case.chunk, case.chunk, case.c), (case.h, case.w, case.c))
    img = da.map_blocks(dask_bench._generate, dtype=np.uint8, chunks=chunks, seed=0,
                        chunk=case.chunk)
    np.testing.assert_array_equal(img[r0 - 2:r1 + 2, c0 - 2:c1 + 2].compute(scheduler="sync"),
                                  src)


def test_dask_is_optional(tmp_path):
    """`import tilegen` imports no dask; without dask, `import tilegen.dask` works (the bench
    lists its cases) and its first function says what to install. (dask hidden by a package of
    that name that fails to import, first on the path of a child process.)"""
    import subprocess
    import sys

    import cprog

    (tmp_path / "dask").mkdir()
    (tmp_path / "dask" / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    code = ("import sys, tilegen\n"
            "assert not any(m == 'dask' or m.startswith('dask.') for m in sys.modules), 'dask'\n"
            "import tilegen.dask as tgd\n"
            "from tilegen.tools import benchcases\n"
            "assert benchcases.cases('dask', True)\n"
            "try:\n"
            "    tgd.image\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    env = cprog.clean_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path)] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ('tilegen.dask needs dask[array] (hidden by the test): '
                                'pip install "tilegen[dask]"')
