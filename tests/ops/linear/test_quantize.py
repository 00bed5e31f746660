"""tg.quantize / tg.dequantize against the gguf package's reference quantizers (gguf.quants,
bit-exact with llama.cpp): the bytes of every block and the values back, on random and
adversarial blocks; bad input."""
import numpy as np
import pytest
from conftest import reference

import tilegen as tg

gguf = reference("gguf")
from gguf import quants as gq  # noqa: E402

TYPES = {"q4_0": gguf.GGMLQuantizationType.Q4_0, "q4_1": gguf.GGMLQuantizationType.Q4_1,
         "q8_0": gguf.GGMLQuantizationType.Q8_0}


def adversarial_blocks(rng):
    """Blocks that meet every branch: zeros, constants, one huge value among tiny ones, the
    largest magnitude negative or positive and tied, exact halves after scaling, extremes of
    float16 (scales that round to subnormal halves or overflow to infinity)."""
    b = [np.zeros(32), np.full(32, 3.0), np.full(32, -2.5),
         np.r_[1e30, rng.standard_normal(31) * 1e-3], np.r_[rng.standard_normal(31), -40.0],
         np.r_[-7.0, 7.0, rng.uniform(-7, 7, 30)], np.r_[7.0, -7.0, rng.uniform(-7, 7, 30)],
         np.arange(32) - 15.5, (np.arange(32) - 16) * 127 / 16 + 0.5, np.linspace(-1, 1, 32),
         rng.standard_normal(32) * 1e-6, rng.standard_normal(32) * 1e-9,
         rng.standard_normal(32) * 6e4, np.r_[65504.0 * 8, np.zeros(31)],
         np.r_[np.full(16, 1e-3), np.full(16, -1e-3)], rng.integers(-8, 8, 32) * 1.0]
    return np.array(b)


@pytest.mark.parametrize("fmt", sorted(TYPES))
def test_bytes_match_gguf(fmt):
    rng = np.random.default_rng(7)
    cases = [rng.standard_normal((4, 64)), rng.standard_normal((2, 3, 128)) * 5,
             rng.standard_normal(96), adversarial_blocks(rng).reshape(4, -1),
             rng.standard_normal((17, 32)).astype(np.float16)]
    for w in cases:
        with np.errstate(over="ignore"):
            got, want = tg.quantize(w, fmt), gq.quantize(np.asarray(w, np.float32), TYPES[fmt])
        assert got.dtype == np.uint8 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        with np.errstate(over="ignore", invalid="ignore"):
            np.testing.assert_array_equal(tg.dequantize(got, fmt), gq.dequantize(want, TYPES[fmt]))


@pytest.mark.parametrize("fmt", sorted(TYPES))
def test_roundtrip_error_bound(fmt):
    """Dequantized values sit within half a step of the originals (q8_0: max/254; 4-bit: the
    block's range / 30 for q4_1; q4_0's codes reach -8 d but only 7 d, so a value opposite the
    largest is off by up to a whole step, max / 8), plus the half-precision rounding of the
    scale (and minimum): 2^-11 relative, times codes up to the block's largest value."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((64, 256)).astype(np.float32)
    back = tg.dequantize(tg.quantize(w, fmt), fmt).reshape(-1, 32)
    blocks = w.reshape(-1, 32)
    amax = np.abs(blocks).max(1, keepdims=True)
    step = {"q8_0": amax / 127, "q4_0": amax / 8,
            "q4_1": (blocks.max(1, keepdims=True) - blocks.min(1, keepdims=True)) / 15}[fmt]
    steps = 1.0 if fmt == "q4_0" else 0.5
    assert (np.abs(back - blocks) <= step * steps + 2 ** -10 * (2 * amax + step)).all()


@pytest.mark.parametrize("fmt", ["int4-g32", "int4-g64", "int4-g128"])
def test_int4_groups(fmt):
    """Group-wise int4: values (c - z) s within half a step s = range / 15 (plus the scale's
    half rounding) of the originals; constant groups and groups of integers spanning 15 are
    exact; the layout is a half scale, a half zero point and the codes in GGUF nibble order."""
    g = int(fmt.split("g")[1])
    rng = np.random.default_rng(9)
    w = rng.standard_normal((6, 4 * g)).astype(np.float32) * 3
    q = tg.quantize(w, fmt)
    assert q.shape == (6, 4 * (4 + g // 2)) and q.dtype == np.uint8
    back = tg.dequantize(q, fmt).reshape(-1, g)
    groups = w.reshape(-1, g)
    step = (groups.max(1, keepdims=True) - groups.min(1, keepdims=True)) / 15
    assert (np.abs(back - groups) <= step * (0.5 + 2 ** -10 * 16) + 1e-6).all()
    blocks = q.reshape(-1, 4 + g // 2)
    z = blocks[:, 2:4].copy().view("<f2").astype(np.float32)
    assert ((z >= 0) & (z <= 15) & (z == np.round(z))).all()
    special = np.stack([np.full(g, 2.5), np.full(g, -1.75), np.zeros(g),
                        np.arange(g) % 16 - 5.0]).astype(np.float32)
    np.testing.assert_array_equal(tg.dequantize(tg.quantize(special, fmt), fmt), special)
    codes = np.arange(g) % 16
    s_z_codes = tg.quantize((codes - 5.0)[None].astype(np.float32), fmt)[0]
    assert s_z_codes[:4].view("<f2").tolist() == [1.0, 5.0]
    packed = s_z_codes[4:4 + 16]
    np.testing.assert_array_equal(packed & 15, codes[:16])
    np.testing.assert_array_equal(packed >> 4, codes[16:32])
    with pytest.raises(ValueError, match=f"multiple of {g}"):
        tg.quantize(np.ones((2, g + 16), np.float32), fmt)


def test_gguf_file_roundtrip(tmp_path):
    """A tensor written to a GGUF file by gguf.GGUFWriter, read back by gguf.GGUFReader, is the
    bytes tg.quantize gave, and tg.dequantize of them is gguf's."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((8, 64)).astype(np.float32)
    q = tg.quantize(w, "q4_1")
    path = tmp_path / "t.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tensor("w", q, raw_shape=q.shape, raw_dtype=TYPES["q4_1"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    t = gguf.GGUFReader(str(path)).tensors[0]
    np.testing.assert_array_equal(np.asarray(t.data).reshape(q.shape), q)


def test_bad_input():
    w = np.ones((2, 64), np.float32)
    with pytest.raises(ValueError, match="fmt"):
        tg.quantize(w, "q5_0")
    with pytest.raises(TypeError, match="fmt"):
        tg.quantize(w, 4)
    with pytest.raises(ValueError, match="multiple of 32"):
        tg.quantize(np.ones((2, 48)), "q8_0")
    for bad in (np.nan, np.inf, -np.inf):
        v = w.copy()
        v[1, 40] = bad
        with pytest.raises(ValueError, match="NaN or infinity"):
            tg.quantize(v, "q4_0")
    with pytest.raises(TypeError, match="w"):
        tg.quantize(np.ones((2, 32), complex), "q8_0")
    with pytest.raises(TypeError, match="uint8"):
        tg.dequantize(np.ones((2, 18), np.int8), "q4_0")
    with pytest.raises(ValueError, match="18-byte"):
        tg.dequantize(np.ones((2, 20), np.uint8), "q4_0")
