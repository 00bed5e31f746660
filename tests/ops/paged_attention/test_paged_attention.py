"""tg.paged_attention against a float64 gather reference: block sizes 1/16/32, ragged seq_lens
(0 included), scrambled block tables, GQA and MQA, the cache's unreferenced blocks (and the
unused tail of each sequence's last block) filled with NaN, block-table entries past a length
out of range -- none of which may be read."""
import ctypes

import numpy as np
import pytest

import tilegen as tg
from tilegen.ops.paged_attention import _paged_attention as _attention

RNG = np.random.default_rng(7)


def ref_paged(q, k, v, bt, lens, scale=None):
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    B, hq, d = q.shape
    bs, hkv = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(d) if scale is None else scale
    out = np.zeros((B, hq, d))
    for b in range(B):
        t = np.arange(lens[b])
        if not t.size:
            continue
        K, V = k[bt[b, t // bs], t % bs], v[bt[b, t // bs], t % bs]  # (L, hkv, d)
        for h in range(hq):
            g = h // (hq // hkv)
            s = K[:, g] @ q[b, h] * scale
            p = np.exp(s - s.max())
            out[b, h] = p @ V[:, g] / p.sum()
    return out


def make_cache(lens, block_size, hkv, d, dtype=np.float32, spare=5):
    """A cache whose blocks are handed out in a scrambled order; every element no sequence
    reads is NaN, and table entries past a sequence's blocks are garbage."""
    lens = np.asarray(lens, np.int32)
    need = (lens + block_size - 1) // block_size
    max_blocks = int(need.max(initial=0)) + 2
    num_blocks = int(need.sum()) + spare
    order = RNG.permutation(num_blocks)
    k = np.full((num_blocks, block_size, hkv, d), np.nan, dtype)
    v = np.full_like(k, np.nan)
    bt = np.full((len(lens), max_blocks), -7, np.int32)
    bt[:, -1] = num_blocks + 1000  # past the cache: must never be read
    nxt = 0
    for b, n in enumerate(lens):
        for x in range(need[b]):
            blk = order[nxt]
            nxt += 1
            bt[b, x] = blk
            valid = min(block_size, n - x * block_size)
            k[blk, :valid] = RNG.standard_normal((valid, hkv, d))
            v[blk, :valid] = RNG.standard_normal((valid, hkv, d))
    return k, v, bt, lens


@pytest.fixture(params=["plain", *_attention.paged_kernels()])
def path(request):
    """The plain C path, then each decode kernel of this ISA: the built-in one and those
    `tilegen tune` may choose instead."""
    _attention._force_plain(request.param == "plain")
    if request.param != "plain":
        _attention.set_paged_kernel(request.param)
    yield request.param
    _attention._force_plain(False)
    _attention.set_paged_kernel(None)


def test_choosing_a_decode_kernel():
    builtin = _attention.kernel_name()
    for name in _attention.paged_kernels():
        _attention.set_paged_kernel(name)
        assert _attention.kernel_name() == name
    _attention.set_paged_kernel(None)
    assert _attention.kernel_name() == builtin
    with pytest.raises(ValueError, match="name: 'tg_f32_attndecode_ukernel_9x9__nope'"):
        _attention.set_paged_kernel("tg_f32_attndecode_ukernel_9x9__nope")
    with pytest.raises(TypeError, match="name must be"):
        _attention.set_paged_kernel(3)
    assert _attention.kernel_name() == builtin


def tol(dtype, d):
    return 1e-12 if dtype == np.float64 else 4e-6 * np.sqrt(d / 16)


@pytest.mark.parametrize("block_size", [1, 16, 32])
@pytest.mark.parametrize("hq,hkv", [(8, 2), (8, 1), (4, 4), (12, 3)])
def test_matches_gather_reference(block_size, hq, hkv, path):
    d = 64
    lens = [37, 0, 1, 130, 16, 64]
    k, v, bt, lens = make_cache(lens, block_size, hkv, d)
    q = RNG.standard_normal((len(lens), hq, d)).astype(np.float32)
    got = tg.paged_attention(q, k, v, bt, lens)
    assert got.shape == q.shape and got.dtype == np.float32
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, ref_paged(q, k, v, bt, lens), rtol=0, atol=tol(np.float32, d))
    assert not got[1].any()  # seq_len 0: zeros


@pytest.mark.parametrize("hq,hkv,block_size", [(32, 1, 16), (40, 1, 32), (48, 2, 13), (24, 1, 1)])
@pytest.mark.parametrize("d", [24, 128])
def test_large_groups(hq, hkv, block_size, d, path):
    """Groups of 16 query heads and more (multi-query) run on the fused-attention kernel, the
    group's heads along its lanes, a block's tokens per call."""
    k, v, bt, lens = make_cache([300, 0, 61, 17], block_size, hkv, d)
    q = RNG.standard_normal((4, hq, d)).astype(np.float32)
    got = tg.paged_attention(q, k, v, bt, lens)
    np.testing.assert_allclose(got, ref_paged(q, k, v, bt, lens), rtol=0, atol=tol(np.float32, d))


@pytest.mark.parametrize("d", [1, 40, 128, 130, 256])
def test_head_dims(d, path):
    k, v, bt, lens = make_cache([70, 3, 200], 16, 2, d)
    q = RNG.standard_normal((3, 8, d)).astype(np.float32)
    np.testing.assert_allclose(tg.paged_attention(q, k, v, bt, lens),
                               ref_paged(q, k, v, bt, lens), rtol=0, atol=tol(np.float32, d))


def test_long_sequences_split_across_threads(path):
    """Fewer sequences than threads: a sequence's blocks are cut into parts whose partial
    softmax states are merged; the answer is the one thread's."""
    k, v, bt, lens = make_cache([9000, 1500], 16, 1, 64)
    q = RNG.standard_normal((2, 4, 64)).astype(np.float32) * 3
    q_mqa = RNG.standard_normal((2, 32, 64)).astype(np.float32)
    before = tg.get_num_threads()
    try:
        tg.set_num_threads(1)
        one = tg.paged_attention(q, k, v, bt, lens)
        one_mqa = tg.paged_attention(q_mqa, k, v, bt, lens)
        tg.set_num_threads(2)
        two = tg.paged_attention(q, k, v, bt, lens)
        two_mqa = tg.paged_attention(q_mqa, k, v, bt, lens)
    finally:
        tg.set_num_threads(before)
    # float32 rounding of a 9000-term weighted sum of values of order 1 (random walk, 4 sigma)
    atol = 4 * np.sqrt(9000) * np.finfo(np.float32).eps * 2
    want = ref_paged(q, k, v, bt, lens)
    np.testing.assert_allclose(one, want, rtol=0, atol=atol)
    np.testing.assert_allclose(two, want, rtol=0, atol=atol)
    want = ref_paged(q_mqa, k, v, bt, lens)
    np.testing.assert_allclose(one_mqa, want, rtol=0, atol=atol)
    np.testing.assert_allclose(two_mqa, want, rtol=0, atol=atol)


def test_large_scores_and_scale(path):
    k, v, bt, lens = make_cache([50, 80], 16, 2, 32)
    q = RNG.standard_normal((2, 4, 32)).astype(np.float32) * 60  # scores to ~+-1e3
    for scale in (None, 0.0, 0.03):
        np.testing.assert_allclose(tg.paged_attention(q, k, v, bt, lens, scale=scale),
                                   ref_paged(q, k, v, bt, lens, scale), rtol=0, atol=5e-4)


def test_float64_and_strided_cache():
    k, v, bt, lens = make_cache([33, 0, 90], 16, 2, 48, dtype=np.float64)
    q = RNG.standard_normal((3, 6, 48))
    got = tg.paged_attention(q, k, v, bt, lens)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref_paged(q, k, v, bt, lens), rtol=0, atol=1e-12)
    # A cache stored (num_blocks, Hkv, block_size, D) and viewed in the contract's layout.
    kt = np.ascontiguousarray(k.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    vt = np.ascontiguousarray(v.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(tg.paged_attention(q, kt, vt, bt, lens), got, rtol=0, atol=1e-12)
    qs = RNG.standard_normal((3, 12, 48))[:, ::2]
    np.testing.assert_allclose(tg.paged_attention(qs, k, v, bt, lens),
                               ref_paged(qs, k, v, bt, lens), rtol=0, atol=1e-12)


def test_int64_tables_and_empty_batch():
    k, v, bt, lens = make_cache([5, 9], 4, 1, 8)
    q = RNG.standard_normal((2, 2, 8)).astype(np.float32)
    np.testing.assert_allclose(tg.paged_attention(q, k, v, bt.astype(np.int64), lens.astype(np.int64)),
                               ref_paged(q, k, v, bt, lens), atol=1e-5)
    assert tg.paged_attention(q[:0], k, v, bt[:0], lens[:0]).shape == (0, 2, 8)


def test_causal_is_decodes_bottom_right_alignment():
    """The query is its sequence's newest token: False, True and "bottom_right" all let it see
    every cached token (tg.attention's bottom-right causal with Sq = 1 on the gathered rows);
    "top_left" (which would show it the first token only) is refused naming causal."""
    k, v, bt, lens = make_cache([37, 1, 130], 16, 2, 32)
    q = RNG.standard_normal((3, 4, 32)).astype(np.float32)
    want = ref_paged(q, k, v, bt, lens)
    for causal in (False, True, "bottom_right", np.True_):
        np.testing.assert_allclose(tg.paged_attention(q, k, v, bt, lens, causal=causal), want,
                                   rtol=0, atol=tol(np.float32, 32))
    t = np.arange(lens[0])
    kk = np.moveaxis(k[bt[0, t // 16], t % 16], 1, 0)  # (Hkv, L, D)
    vv = np.moveaxis(v[bt[0, t // 16], t % 16], 1, 0)
    qq = q[0][:, None, :]  # (Hq, 1, D)
    np.testing.assert_allclose(tg.attention(qq, kk, vv, causal="bottom_right")[:, 0], want[0],
                               rtol=0, atol=tol(np.float32, 32))
    assert np.abs(tg.attention(qq, kk, vv, causal="top_left")[:, 0] - want[0]).max() > 0.1
    with pytest.raises(ValueError, match=r"^causal: 'top_left' does not apply to decode: .*"
                                         r"bottom-right .*causal='top_left'\)"):
        tg.paged_attention(q, k, v, bt, lens, causal="top_left")
    with pytest.raises(ValueError, match=r"^causal: 'lower_right' is not supported"):
        tg.paged_attention(q, k, v, bt, lens, causal="lower_right")
    with pytest.raises(TypeError, match=r"^causal: expected a bool"):
        tg.paged_attention(q, k, v, bt, lens, causal=1)


# ---------------------------------------------------------------- bad input

def _case():
    k, v, bt, lens = make_cache([20, 5], 8, 2, 16)
    return RNG.standard_normal((2, 4, 16)).astype(np.float32), k, v, bt, lens


@pytest.mark.parametrize("change,exc,words", [
    (lambda a: a.__setitem__(0, a[0][..., :8]), ValueError, ["(2, 4, 8)", "D=16"]),
    (lambda a: a.__setitem__(0, np.zeros((2, 3, 16), np.float32)), ValueError, ["3 query heads"]),
    (lambda a: a.__setitem__(2, a[2][:, :, :1]), ValueError, ["v_cache"]),
    (lambda a: a.__setitem__(0, a[0].astype(np.int32)), TypeError, ["q", "int32"]),
    (lambda a: a.__setitem__(3, a[3].astype(np.float32)), TypeError, ["block_table", "float32"]),
    (lambda a: a.__setitem__(4, np.array([20.0, 5.0])), TypeError, ["seq_lens"]),
    (lambda a: a.__setitem__(4, np.array([20, -1], np.int32)), ValueError, ["seq_lens[1] = -1"]),
    (lambda a: a.__setitem__(4, np.array([20, 10 ** 4], np.int32)), ValueError, ["seq_lens[1]"]),
    (lambda a: a.__setitem__(4, np.array([20], np.int32)), ValueError, ["(2,)", "(1,)"]),
    (lambda a: a[3].__setitem__((0, 1), 10 ** 6), ValueError, ["block_table[0, 1]"]),
    (lambda a: a[3].__setitem__((1, 0), -1), ValueError, ["block_table[1, 0]"]),
    (lambda a: a.__setitem__(3, a[3][:1]), ValueError, ["block_table"]),
])
def test_bad_input(change, exc, words):
    args = list(_case())
    change(args)
    with pytest.raises(exc) as e:
        tg.paged_attention(*args)
    for w in words:
        assert w in str(e.value)


def test_unreferenced_table_entries_are_not_checked():
    q, k, v, bt, lens = _case()
    bt[0, 3:] = -5  # sequence 0 needs 3 blocks of 8
    np.testing.assert_allclose(tg.paged_attention(q, k, v, bt, lens), ref_paged(q, k, v, bt, lens),
                               atol=1e-5)


def test_c_api_reports_the_bad_parameter_and_writes_nothing():
    lib = ctypes.CDLL(tg.get_library())
    f = lib.tilegen_paged_attention_f32
    i64, i64p = ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)
    fp, ip = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int32)
    f.restype = ctypes.c_int
    f.argtypes = [i64, i64, i64, i64, fp, i64, i64, fp, i64p, fp, i64p, i64, i64, ip, i64, i64,
                  ip, ctypes.c_float, fp, i64, i64]
    q, k, v, bt, lens = _case()
    out = np.full(q.shape, 3.0, np.float32)
    ks = (ctypes.c_int64 * 3)(*[s // 4 for s in k.strides[:3]])

    def call(lens=lens, bt=bt, hkv=2, bs=8, **null):
        p = dict(q=q.ctypes.data_as(fp), k=k.ctypes.data_as(fp), ks=ks, v=v.ctypes.data_as(fp),
                 vs=ks, table=bt.ctypes.data_as(ip), seq=lens.ctypes.data_as(ip),
                 out=out.ctypes.data_as(fp))
        p.update(null)
        return f(2, 4, hkv, 16, p["q"], 64, 16, p["k"], p["ks"], p["v"], p["vs"], k.shape[0], bs,
                 p["table"], bt.shape[1], bt.shape[1], p["seq"], 0.25, p["out"], 64, 16)

    # Every array the call reads or writes, NULL in turn: -p, never a crash.
    for name, p in (("q", 5), ("k", 8), ("ks", 9), ("v", 10), ("vs", 11), ("table", 14),
                    ("seq", 17), ("out", 19)):
        assert call(**{name: None}) == -p, name
    assert call(hkv=3) == -3
    assert call(bs=0) == -13
    assert call(lens=np.array([20, -2], np.int32)) == -17
    bad = bt.copy()
    bad[1, 0] = k.shape[0]
    assert call(bt=bad) == -14
    assert (out == 3).all()
    assert call() == 0
    np.testing.assert_allclose(out, ref_paged(q, k, v, bt, lens, 0.25), atol=1e-5)


def test_runtime_info_reports_the_kernel():
    info = tg.runtime_info()["kernels"]["paged_attention"]
    assert info["f32"]["kernel"] == _attention.kernel_name()
    assert info["f32"]["kernel"].startswith("tg_f32_attndecode_ukernel_")


def test_out():
    """out=: written in place and returned (strided with contiguous rows too); an out that
    overlaps q goes through a copy; bad outs raise as NumPy's ufuncs do, naming out."""
    rng = np.random.default_rng(31)
    B, hq, hkv, d, bs = 3, 4, 2, 16, 4
    q = rng.standard_normal((B, hq, d)).astype(np.float32)
    k = rng.standard_normal((6, bs, hkv, d)).astype(np.float32)
    v = rng.standard_normal((6, bs, hkv, d)).astype(np.float32)
    bt = np.array([[0, 1], [2, 3], [4, 5]], np.int32)
    lens = np.array([5, 8, 0], np.int32)
    want = ref_paged(q, k, v, bt, lens)
    out = np.full((B, hq, d), np.nan, np.float32)
    assert tg.paged_attention(q, k, v, bt, lens, out=out) is out
    assert np.allclose(out, want, atol=1e-5)
    big = np.full((B, hq, 2 * d), np.nan, np.float32)
    view = big[:, :, :d]
    assert tg.paged_attention(q, k, v, bt, lens, out=view) is view
    assert np.allclose(view, want, atol=1e-5) and np.isnan(big[:, :, d:]).all()
    q2 = q.copy()
    assert tg.paged_attention(q2, k, v, bt, lens, out=q2) is q2
    assert np.allclose(q2, want, atol=1e-5)
    with pytest.raises(TypeError, match="out: dtype"):
        tg.paged_attention(q, k, v, bt, lens, out=np.empty((B, hq, d)))
    with pytest.raises(ValueError, match="out: shape"):
        tg.paged_attention(q, k, v, bt, lens, out=np.empty((B, hq + 1, d), np.float32))
    ro = np.empty((B, hq, d), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out: is read-only"):
        tg.paged_attention(q, k, v, bt, lens, out=ro)
