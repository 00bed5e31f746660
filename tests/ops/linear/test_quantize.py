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
