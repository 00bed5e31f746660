"""tg.attention against torch's scaled_dot_product_attention and an explicit-mask float64 NumPy
reference (for what torch spells differently: bottom-right causal with Sq != Sk, fully masked
rows, broadcast leading dimensions), on the generated kernels and on the plain C path."""
import ctypes
import textwrap

import numpy as np
import pytest
from conftest import reference

import tilegen as tg
from tilegen.ops.attention import _attention

torch = reference("torch")
SDPA = torch.nn.functional.scaled_dot_product_attention
RNG = np.random.default_rng(12)


def ref_attention(q, k, v, mask=None, causal=False, scale=None):
    """float64, explicit: scores, masks as -inf / additive, softmax, zeros for a row that sees
    no key; k and v heads repeated for grouped-query attention; leading dims broadcast."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    if q.ndim >= 3 and k.shape[-3] != q.shape[-3] and k.shape[-3] != 1:
        rep = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, rep, axis=-3), np.repeat(v, rep, axis=-3)
    sq, sk = q.shape[-2], k.shape[-2]
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    if causal:  # True and "bottom_right": j <= i + Sk - Sq; "top_left": j <= i
        j, i = np.arange(sk)[None, :], np.arange(sq)[:, None]
        s = np.where(j <= i + (0 if causal == "top_left" else sk - sq), s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m)
    l = p.sum(-1, keepdims=True)
    return np.matmul(p, v) / np.where(l == 0, 1, l)


def torch_ref(q, k, v, **kw):
    t = [torch.from_numpy(np.ascontiguousarray(x, np.float64)) for x in (q, k, v)]
    if isinstance(kw.get("attn_mask"), np.ndarray):
        kw["attn_mask"] = torch.from_numpy(kw["attn_mask"])
    return SDPA(*t, **kw).numpy()


def score_bound(q, k, scale):
    """The largest |score|, which sets float32's rounding error in the scores."""
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    if q.ndim >= 3 and k.ndim >= 3 and k.shape[-3] not in (q.shape[-3], 1):
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
    s = np.abs(np.matmul(q, np.swapaxes(k, -1, -2)))
    return float(s.max()) * abs(scale) if s.size else 0.0


def tol_for(q, k, v, scale=None):
    """Absolute tolerance of a float32 result: an error e in the scores is a relative error of
    about 2e in the weights; e ~ eps32 * sqrt(D) * |score|, plus the output's own rounding."""
    if q.dtype == np.float64:
        return 1e-11 * (1 + np.abs(v).max())
    d = q.shape[-1]
    scale = 1 / np.sqrt(d) if scale is None else scale
    e = 4 * 6e-8 * np.sqrt(d + 1) * (score_bound(q, k, scale) + 1)
    return (2 * e + 2e-6) * float(np.abs(v).max() if v.size else 1) + 1e-7


def rand(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


@pytest.fixture(params=["kernels", "plain"])
def path(request):
    """Every float32 test runs on the generated kernels and on the plain C fallback."""
    _attention._force_plain(request.param == "plain")
    yield request.param
    _attention._force_plain(False)


# (Sq, Sk, D, Dv): 1, odd, the kernel's block edges (tiles of 32 queries, blocks of 48 keys on
# AVX-512; 16 / 48 elsewhere), Sq != Sk both ways, Dv != D, D and Dv up to 256.
SHAPES = [(1, 1, 16, 16), (1, 77, 64, 64), (77, 1, 32, 8), (31, 47, 64, 64), (32, 48, 64, 64),
          (33, 49, 64, 40), (100, 37, 128, 128), (37, 100, 80, 96), (130, 97, 3, 5),
          (64, 256, 256, 256)]


@pytest.mark.parametrize("sq,sk,d,dv", SHAPES)
def test_matches_torch(sq, sk, d, dv, path):
    q, k, v = rand(2, 3, sq, d), rand(2, 3, sk, d), rand(2, 3, sk, dv)
    got = tg.attention(q, k, v)
    assert got.shape == (2, 3, sq, dv) and got.dtype == np.float32
    np.testing.assert_allclose(got, torch_ref(q, k, v), rtol=0, atol=tol_for(q, k, v))


@pytest.mark.parametrize("sq,sk", [(1, 1), (33, 33), (97, 97), (130, 130)])
def test_causal_matches_torch(sq, sk, path):
    q, k, v = rand(1, 2, sq, 64), rand(1, 2, sk, 64), rand(1, 2, sk, 64)
    got = tg.attention(q, k, v, causal=True)
    np.testing.assert_allclose(got, torch_ref(q, k, v, is_causal=True), rtol=0,
                               atol=tol_for(q, k, v))


@pytest.mark.parametrize("sq,sk", [(1, 50), (20, 100), (100, 20), (49, 50), (70, 33)])
def test_causal_bottom_right(sq, sk, path):
    """Query i sees keys j <= i + Sk - Sq; with Sq > Sk the first rows see none (zeros)."""
    q, k, v = rand(2, sq, 32), rand(2, sk, 32), rand(2, sk, 24)
    got = tg.attention(q, k, v, causal=True)
    want = ref_attention(q, k, v, causal=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol_for(q, k, v))
    if sq > sk:
        assert not got[:, : sq - sk].any()


def lower_right(sq, sk):
    """The bottom-right causal mask as a boolean (True = attend): torch's
    causal_lower_right(sq, sk) spelled out (which warns, and is only defined, for Sq <= Sk)."""
    return np.tril(np.ones((sq, sk), bool), k=sk - sq)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sq,sk", [(5, 37), (1, 37), (37, 5), (37, 37), (70, 33), (33, 70),
                                   (130, 97), (2, 1), (6, 3)])
def test_causal_alignment_matches_torch(sq, sk, dtype, path):
    """causal="top_left" is torch's is_causal=True (query i sees keys j <= i); True and
    "bottom_right" are torch's causal_lower_right (j <= i + Sk - Sq). With Sq > Sk, top-left
    has no empty row (row i sees min(i + 1, Sk) keys) and bottom-right hides every key from
    the first Sq - Sk rows: those are zeros, as torch's math SDPA gives for a fully masked
    row."""
    from torch.nn.attention.bias import causal_lower_right

    q, k, v = rand(2, 3, sq, 40, dtype=dtype), rand(2, 3, sk, 40, dtype=dtype), \
        rand(2, 3, sk, 24, dtype=dtype)
    tol = tol_for(q, k, v)
    top = tg.attention(q, k, v, causal="top_left")
    assert top.dtype == dtype and top.shape == (2, 3, sq, 24)
    np.testing.assert_allclose(top, torch_ref(q, k, v, is_causal=True), rtol=0, atol=tol)
    np.testing.assert_allclose(top, ref_attention(q, k, v, causal="top_left"), rtol=0, atol=tol)
    bottom = tg.attention(q, k, v, causal="bottom_right")
    np.testing.assert_array_equal(bottom, tg.attention(q, k, v, causal=True))
    np.testing.assert_allclose(bottom, torch_math(q, k, v, attn_mask=lower_right(sq, sk)),
                               rtol=0, atol=tol)
    if sq <= sk:
        want = SDPA(*(torch.from_numpy(x.astype(np.float64)) for x in (q, k, v)),
                    attn_mask=causal_lower_right(sq, sk)).numpy()
        np.testing.assert_allclose(bottom, want, rtol=0, atol=tol)
    else:
        assert not bottom[..., : sq - sk, :].any()  # rows that see no key: zeros
        assert np.abs(bottom[..., sq - sk:, :]).max() > 0
    if sq == sk:
        np.testing.assert_array_equal(top, bottom)
    elif (sq, sk) == (5, 37):  # the case a torch user trips on: the two differ by ~1
        assert np.abs(top - bottom).max() > 0.5


def test_causal_top_left_with_mask_gqa_and_no_keys(path):
    """top_left with a key-padding mask (a row whose visible keys are all padded gives zeros,
    as torch's math SDPA does), with grouped-query heads, and with no keys at all."""
    q, k, v = rand(2, 8, 40, 64), rand(2, 2, 70, 64), rand(2, 2, 70, 48)
    keep = np.ones((2, 1, 1, 70), bool)
    keep[1, ..., :10] = False  # sequence 1: rows 0..9 see only padded keys
    got = tg.attention(q, k, v, mask=keep, causal="top_left")
    want = ref_attention(q, k, v, mask=keep, causal="top_left")
    np.testing.assert_allclose(got, want, rtol=0, atol=tol_for(q, k, v))
    assert not got[1, :, :10].any() and got[0, :, :10].any()
    tmask = keep & np.tril(np.ones((40, 70), bool))
    np.testing.assert_allclose(got, torch_math(q, k, v, attn_mask=tmask, enable_gqa=True),
                               rtol=0, atol=tol_for(q, k, v))
    empty = tg.attention(rand(3, 5, 8), rand(3, 0, 8), rand(3, 0, 4), causal="top_left")
    assert empty.shape == (3, 5, 4) and not empty.any()


@pytest.mark.parametrize("hq,hkv", [(8, 2), (6, 3), (4, 1)])
def test_grouped_query_heads(hq, hkv, path):
    q, k, v = rand(2, hq, 40, 64), rand(2, hkv, 70, 64), rand(2, hkv, 70, 48)
    got = tg.attention(q, k, v)
    want = torch_ref(q, k, v, enable_gqa=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol_for(q, k, v))
    got_c = tg.attention(q, k, v, causal=True)
    np.testing.assert_allclose(got_c, ref_attention(q, k, v, causal=True), rtol=0,
                               atol=tol_for(q, k, v))


def test_additive_mask_matches_torch(path):
    q, k, v = rand(2, 3, 50, 64), rand(2, 3, 61, 64), rand(2, 3, 61, 32)
    mask = rand(2, 3, 50, 61, scale=3.0)
    mask[..., ::7] = -np.inf  # partly masked, no row wholly
    got = tg.attention(q, k, v, mask=mask)
    want = torch_ref(q, k, v, attn_mask=mask.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol_for(q, k, v) + 1e-6)


def test_boolean_mask_and_fully_masked_rows(path):
    """True attends; rows with no True give zeros (torch gives NaN there: the NumPy reference
    says zeros, as the contract does)."""
    q, k, v = rand(2, 2, 45, 32), rand(2, 2, 100, 32), rand(2, 2, 100, 16)
    mask = RNG.random((2, 2, 45, 100)) > 0.3
    mask[0, 1, 3] = False
    mask[1, 0, 44] = False
    got = tg.attention(q, k, v, mask=mask)
    np.testing.assert_allclose(got, ref_attention(q, k, v, mask=mask), rtol=0,
                               atol=tol_for(q, k, v))
    assert not got[0, 1, 3].any() and not got[1, 0, 44].any()
    ok = mask.any(-1)
    np.testing.assert_allclose(got[ok], torch_ref(q, k, v, attn_mask=mask)[ok], rtol=0,
                               atol=tol_for(q, k, v))


def torch_math(q, k, v, **kw):
    """torch's reference SDPA (the math backend: its default CPU kernel refuses a 1-D mask
    with 4-D inputs, which the math definition broadcasts)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return torch_ref(q, k, v, **kw)


@pytest.mark.parametrize("lead", [(), (3,), (2, 3)])
def test_one_dimensional_mask_broadcasts(lead, path):
    """A (Sk,) mask broadcasts to (..., Sq, Sk), as the docstring says and torch's
    scaled_dot_product_attention does: boolean (a key-padding mask shared by every row) and
    additive, against 2-, 3- and 4-D inputs; the same as the mask broadcast by hand."""
    sq, sk = 23, 57
    q, k, v = rand(*lead, sq, 32), rand(*lead, sk, 32), rand(*lead, sk, 24)
    keep = RNG.random(sk) > 0.4
    keep[0] = True
    add = rand(sk, scale=2.0)
    for mask in (keep, add):
        got = tg.attention(q, k, v, mask=mask)
        assert got.shape == (*lead, sq, 24)
        want = torch_math(q, k, v, attn_mask=mask.astype(np.float64) if mask.dtype.kind == "f"
                          else mask)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol_for(q, k, v) + 1e-6)
        full = np.broadcast_to(mask, (*lead, sq, sk))
        np.testing.assert_array_equal(got, tg.attention(q, k, v, mask=full))
    # With causal on top: the (Sk,) mask and the diagonal both apply.
    np.testing.assert_allclose(tg.attention(q, k, v, mask=keep, causal=True),
                               ref_attention(q, k, v, mask=keep, causal=True), rtol=0,
                               atol=tol_for(q, k, v))
    with pytest.raises(ValueError, match=r"^mask: a scalar is not a mask; .*causal="):
        tg.attention(q, k, v, mask=np.True_)
    with pytest.raises(ValueError, match=r"^mask: shape \(56,\) does not broadcast"):
        tg.attention(q, k, v, mask=keep[:-1])


def test_key_padding_mask_broadcast_and_causal(path):
    """A (B, 1, 1, Sk) padding mask broadcast over heads and queries, with causal on top;
    blocks the mask hides wholly are skipped, which must not change the answer."""
    q, k, v = rand(3, 4, 130, 64), rand(3, 4, 130, 64), rand(3, 4, 130, 64)
    lengths = np.array([130, 61, 5])
    mask = (np.arange(130)[None, :] < lengths[:, None])[:, None, None, :]
    for causal in (False, True):
        got = tg.attention(q, k, v, mask=mask, causal=causal)
        want = ref_attention(q, k, v, mask=mask, causal=causal)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol_for(q, k, v))


def test_additive_mask_of_finfo_min_is_a_value(path):
    """A row whose additive mask is all float32 min is not 'masked': torch averages V there."""
    q, k, v = rand(1, 1, 4, 16), rand(1, 1, 9, 16), rand(1, 1, 9, 8)
    mask = np.zeros((4, 9), np.float32)
    mask[2] = np.finfo(np.float32).min
    got = tg.attention(q, k, v, mask=mask)
    np.testing.assert_allclose(got, torch_ref(q, k, v, attn_mask=mask.astype(np.float64)),
                               rtol=0, atol=1e-5)


@pytest.mark.parametrize("big", [300.0, 1000.0])
def test_logits_near_1e3(big, path):
    q = rand(1, 2, 40, 64)
    k = rand(1, 2, 90, 64)
    q *= big / np.abs(np.matmul(q, np.swapaxes(k, -1, -2)) / 8).max()  # max |score| = big
    v = rand(1, 2, 90, 64)
    for causal in (False, True):
        got = tg.attention(q, k, v, causal=causal)
        want = ref_attention(q, k, v, causal=causal)
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=0, atol=tol_for(q, k, v))
        q_neg = -q
        np.testing.assert_allclose(tg.attention(q_neg, k, v), ref_attention(q_neg, k, v),
                                   rtol=0, atol=tol_for(q_neg, k, v))


def test_scale(path):
    q, k, v = rand(2, 30, 16), rand(2, 50, 16), rand(2, 50, 16)
    for scale in (0.0, 0.5, -1.25):
        np.testing.assert_allclose(tg.attention(q, k, v, scale=scale),
                                   ref_attention(q, k, v, scale=scale), rtol=0,
                                   atol=tol_for(q, k, v, scale))


def test_leading_dims_broadcast(path):
    q = rand(2, 1, 3, 20, 16)
    k = rand(1, 4, 3, 30, 16)
    v = rand(4, 1, 30, 8)
    mask = RNG.random((4, 1, 20, 30)) > 0.2
    got = tg.attention(q, k, v, mask=mask)
    assert got.shape == (2, 4, 3, 20, 8)
    np.testing.assert_allclose(got, ref_attention(q, k, v, mask=mask), rtol=0,
                               atol=tol_for(q, k, v))
    # 2-D inputs: no head dimension; q broadcast over k's heads.
    q2, k2, v2 = rand(7, 16), rand(9, 16), rand(9, 4)
    assert tg.attention(q2, k2, v2).shape == (7, 4)
    np.testing.assert_allclose(tg.attention(q2, k2, v2), ref_attention(q2, k2, v2), rtol=0,
                               atol=tol_for(q2, k2, v2))
    k3 = rand(5, 9, 16)
    np.testing.assert_allclose(tg.attention(q2, k3, rand(5, 9, 4)).shape, (5, 7, 4))


def test_strided_inputs(path):
    """(B, S, H, D) arrays seen as (B, H, S, D), reversed keys, a mask's transposed view."""
    q = rand(2, 40, 3, 32).transpose(0, 2, 1, 3)
    k = rand(2, 50, 3, 32).transpose(0, 2, 1, 3)[:, :, ::-1]
    v = rand(2, 3, 50, 64)[..., ::2]
    mask = (RNG.random((50, 40)) > 0.1).T
    got = tg.attention(q, k, v, mask=mask)
    np.testing.assert_allclose(got, ref_attention(q, k, v, mask=mask), rtol=0,
                               atol=tol_for(q, k, v))


def test_float64_matches_torch():
    q, k, v = rand(2, 4, 50, 40, dtype=np.float64), rand(2, 2, 70, 40, dtype=np.float64), \
        rand(2, 2, 70, 24, dtype=np.float64)
    got = tg.attention(q, k, v)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, torch_ref(q, k, v, enable_gqa=True), rtol=0, atol=1e-12)
    mask = RNG.random((50, 70)) > 0.5
    mask[3] = False
    np.testing.assert_allclose(tg.attention(q, k, v, mask=mask, causal=True),
                               ref_attention(q, k, v, mask=mask, causal=True), rtol=0, atol=1e-12)
    # Mixed precision computes in float64.
    assert tg.attention(q.astype(np.float32), k, v).dtype == np.float64


def test_empty_and_degenerate(path):
    q, v = rand(2, 5, 8), rand(2, 0, 4)
    assert not tg.attention(q, rand(2, 0, 8), v).any()          # no keys: zeros
    assert tg.attention(rand(2, 0, 8), rand(2, 3, 8), rand(2, 3, 4)).shape == (2, 0, 4)
    assert tg.attention(rand(2, 5, 8), rand(2, 3, 8), rand(2, 3, 0)).shape == (2, 5, 0)
    # D = 0: every score is 0, the output the mean of V.
    v3 = rand(2, 3, 4)
    np.testing.assert_allclose(tg.attention(rand(2, 5, 0), rand(2, 3, 0), v3),
                               np.broadcast_to(v3.mean(1, keepdims=True), (2, 5, 4)), atol=1e-6)


def test_threads_give_the_same_answer():
    q, k, v = rand(2, 4, 200, 64), rand(2, 4, 300, 64), rand(2, 4, 300, 64)
    before = tg.get_num_threads()
    try:
        tg.set_num_threads(1)
        one = tg.attention(q, k, v, causal=True)
        tg.set_num_threads(2)
        two = tg.attention(q, k, v, causal=True)
    finally:
        tg.set_num_threads(before)
    np.testing.assert_array_equal(one, two)  # a unit is computed by one thread, whichever


def test_runtime_info_reports_the_kernel():
    info = tg.runtime_info()["kernels"]["attention"]
    assert info["f32"]["kernel"] == _attention.kernel_name()
    assert info["f32"]["kernel"].startswith("tg_f32_attention_ukernel_")


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("args,kw,exc,words", [
    ((rand(2, 5, 8), rand(2, 6, 7), rand(2, 6, 4)), {}, ValueError, ["(2, 5, 8)", "(2, 6, 7)"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 7, 4)), {}, ValueError, ["(2, 6, 8)", "(2, 7, 4)"]),
    ((rand(6, 5, 8), rand(4, 6, 8), rand(4, 6, 4)), {}, ValueError, ["6 query heads", "4"]),
    ((rand(2, 3, 5, 8), rand(3, 3, 6, 8), rand(3, 3, 6, 4)), {}, ValueError, ["(2, 3, 5, 8)"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"mask": np.ones((5, 5), bool)}, ValueError,
     ["(5, 5)"]),
    ((rand(2, 5, 8).astype(np.int32), rand(2, 6, 8), rand(2, 6, 4)), {}, TypeError, ["q", "int32"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4).astype(np.float16)), {}, TypeError, ["v"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"mask": np.ones((5, 6), np.int8)},
     TypeError, ["mask", "int8"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"scale": "x"}, TypeError, ["scale"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"causal": 1}, TypeError, ["causal"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"causal": None}, TypeError, ["causal"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"causal": "top-left"}, ValueError,
     ["causal: 'top-left' is not supported", "'bottom_right', 'top_left'"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"causal": "upper_left"}, ValueError,
     ["causal:", "torch's UPPER_LEFT is 'top_left'"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"causal": "lower_right"}, ValueError,
     ["causal:", "torch's LOWER_RIGHT is 'bottom_right'"]),
    ((rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)), {"causal": ""}, ValueError, ["causal:"]),
    ((rand(5), rand(2, 6, 5), rand(2, 6, 4)), {}, ValueError, ["q", "(5,)"]),
])
def test_bad_input(args, kw, exc, words):
    with pytest.raises(exc) as e:
        tg.attention(*args, **kw)
    for w in words:
        assert w in str(e.value)
    if "causal" in kw:
        assert str(e.value).startswith("causal:")


def test_c_api_reports_the_bad_parameter_and_writes_nothing():
    lib = ctypes.CDLL(tg.get_library())
    f = lib.tilegen_attention_f32
    i64p = ctypes.POINTER(ctypes.c_int64)
    fp = ctypes.POINTER(ctypes.c_float)
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_int64, i64p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                  ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, fp, i64p, fp, i64p, fp, i64p,
                  ctypes.c_void_p, fp, i64p, ctypes.c_int, ctypes.c_float, fp, i64p]
    q, k, v = rand(2, 5, 8), rand(2, 6, 8), rand(2, 6, 4)
    out = np.full((2, 5, 4), 7.0, np.float32)
    strides = lambda a: (ctypes.c_int64 * 2)(*[s // 4 for s in a.strides[:2]])
    ptr = lambda a: a.ctypes.data_as(fp)

    def call(**over):
        a = dict(ndim=0, shape=None, hq=2, hkv=2, sq=5, sk=6, d=8, dv=4, causal=0, q=ptr(q),
                 qs=strides(q), k=ptr(k), ks=strides(k), v=ptr(v), vs=strides(v),
                 keep=None, ms=None, out=ptr(out), os=strides(out))
        a.update(over)
        return f(a["ndim"], a["shape"], a["hq"], a["hkv"], a["sq"], a["sk"], a["d"], a["dv"],
                 a["q"], a["qs"], a["k"], a["ks"], a["v"], a["vs"], a["keep"], None, a["ms"],
                 a["causal"], 0.35, a["out"], a["os"])

    assert call(ndim=-1) == -1
    assert call(ndim=1) == -2  # batch_shape NULL
    assert call(hkv=3) == -4
    assert call(sq=-1) == -5
    assert call(causal=3) == -18 and call(causal=-1) == -18
    # Every array the call reads or writes, NULL in turn: -p, never a crash.
    for name, p in (("q", 9), ("qs", 10), ("k", 11), ("ks", 12), ("v", 13), ("vs", 14),
                    ("out", 20), ("os", 21)):
        assert call(**{name: None}) == -p, name
    keep = np.ones((5, 6), np.uint8)
    assert call(keep=keep.ctypes.data_as(ctypes.c_void_p)) == -17  # a mask without strides
    assert (out == 7).all()
    assert call() == 0
    np.testing.assert_allclose(out, ref_attention(q, k, v, scale=0.35), atol=1e-5)
    for causal, how in ((1, True), (2, "top_left")):  # TILEGEN_CAUSAL_BOTTOM_RIGHT, _TOP_LEFT
        assert call(causal=causal) == 0
        np.testing.assert_allclose(out, ref_attention(q, k, v, causal=how, scale=0.35),
                                   atol=1e-5)


def test_memory_stays_o_block():
    """Sq = Sk = 16500: the scores would take 1.01 GiB in float32; the call's peak RSS grows by
    a few MiB (its output, K/V in place, per-thread scratch)."""
    from cprog import python

    code = textwrap.dedent("""
        import resource, numpy as np, tilegen as tg
        s, d = 16500, 8
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((s, d)).astype(np.float32) for _ in range(3))
        out = tg.attention(q[:64], k[:64], v[:64])  # warm up: code, pools, scratch
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = tg.attention(q, k, v)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert np.isfinite(out).all()
        print((after - before) / 1024.0)
    """)
    r = python(code, timeout=300)
    assert r.returncode == 0, r.stderr
    growth_mib = float(r.stdout.strip().splitlines()[-1])
    assert s_bytes() > 2 ** 30
    assert growth_mib < 32, f"peak RSS grew by {growth_mib:.1f} MiB"


def s_bytes():
    return 16500 * 16500 * 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out(dtype):
    """out=: written in place and returned, strided views with contiguous rows included; an out
    overlapping q is computed through a copy; bad outs raise as NumPy's ufuncs do, naming out."""
    rng = np.random.default_rng(21)
    q = rng.standard_normal((2, 4, 5, 8)).astype(dtype)
    k = rng.standard_normal((2, 2, 7, 8)).astype(dtype)
    v = rng.standard_normal((2, 2, 7, 8)).astype(dtype)
    want = ref_attention(q, k, v, causal=True)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    out = np.full(want.shape, np.nan, dtype)
    assert tg.attention(q, k, v, causal=True, out=out) is out
    assert np.allclose(out, want, atol=tol)
    big = np.full((2, 8, 5, 8), np.nan, dtype)
    view = big[:, ::2]
    assert tg.attention(q, k, v, causal=True, out=view) is view
    assert np.allclose(view, want, atol=tol) and np.isnan(big[:, 1::2]).all()
    q2 = q.copy()
    assert tg.attention(q2, k, v, causal=True, out=q2) is q2
    assert np.allclose(q2, want, atol=tol)
    # 2-D inputs take a 2-D out.
    out2 = np.empty((5, 8), dtype)
    tg.attention(q[0, 0], k[0, 0], v[0, 0], out=out2)
    assert np.allclose(out2, ref_attention(q[0, 0], k[0, 0], v[0, 0]), atol=tol)
    other = np.float64 if dtype == np.float32 else np.float32
    with pytest.raises(TypeError, match="out: dtype"):
        tg.attention(q, k, v, out=np.empty(want.shape, other))
    with pytest.raises(ValueError, match="out: shape"):
        tg.attention(q, k, v, out=np.empty((2, 4, 5, 7), dtype))
    ro = np.empty(want.shape, dtype)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out: is read-only"):
        tg.attention(q, k, v, out=ro)
    with pytest.raises(ValueError, match="out: its last axis"):
        tg.attention(q, k, v, out=np.empty((2, 4, 5, 16), dtype)[..., ::2])
    with pytest.raises(TypeError, match="out"):
        tg.attention(q, k, v, out=want.tolist())
