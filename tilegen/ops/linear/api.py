"""Quantized weights and packed linear layers (exported as tilegen.quantize, tilegen.dequantize
and tilegen.Linear).

quantize / dequantize give exactly the bytes and values of the `gguf` package's reference
quantizers (gguf.quants, themselves bit-exact with llama.cpp's ggml-quants.c) for the GGUF
formats: the same float32 arithmetic in the same order, rounded the same way. The group-wise
int4 formats (formats.py) are tilegen's own layout of AWQ/GPTQ-style weights.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from tilegen.core._core import ACTIVATIONS

from . import _linear
from .formats import BLOCK, FORMATS, Format

_ALLOWED = ", ".join(repr(f) for f in FORMATS)


def _format(fmt: Any, name: str = "fmt") -> Format:
    if not isinstance(fmt, str):
        raise TypeError(f"{name}: expected a format name ({_ALLOWED}), got {type(fmt).__name__}")
    if fmt not in FORMATS:
        raise ValueError(f"{name}: {fmt!r} is not supported; allowed: {_ALLOWED}")
    return FORMATS[fmt]


def _round_half_away(v: np.ndarray) -> np.ndarray:
    """roundf: halves away from zero (floor(2 * fraction) is 1 from one half up)."""
    a = np.abs(v)
    whole = np.floor(a)
    return np.sign(v) * (whole + np.floor(2 * (a - whole)))


def _pack_nibbles(codes: np.ndarray) -> np.ndarray:
    """(blocks, 32) codes 0..15 -> (blocks, 16) bytes: value i low, value i + 16 high."""
    return codes[:, :16] | (codes[:, 16:] << np.uint8(4))


def _unpack_nibbles(b: np.ndarray) -> np.ndarray:
    return np.concatenate([b & np.uint8(0x0F), b >> np.uint8(4)], axis=1)


def _half_bytes(x: np.ndarray) -> np.ndarray:
    return x.astype("<f2").view(np.uint8)


def _halves(b: np.ndarray, at: int) -> np.ndarray:
    """The half at byte `at` of each row of b, as float32 (a column)."""
    return b[:, at:at + 2].copy().view("<f2").astype(np.float32)


def _int4_groups(groups: np.ndarray) -> np.ndarray:
    """(groups, G) float32 -> stored int4 groups: scale s = (max - min) / 15 rounded to half,
    zero point z = round(-min / s) in 0..15, codes round(w / s) + z in 0..15 (a constant group:
    s = |its value|, so it is exact)."""
    hi = groups.max(axis=1, keepdims=True)
    lo = groups.min(axis=1, keepdims=True)
    s = (hi - lo) / np.float32(15)
    flat = s == 0
    s = np.where(flat, np.where(lo != 0, np.abs(lo), np.float32(1)), s)
    s = s.astype(np.float16).astype(np.float32)  # quantize against the scale as stored
    inv = np.where(s > 0, np.float32(1) / np.where(s > 0, s, 1), np.float32(0))
    z = np.clip(np.rint(-lo * inv), 0, 15)
    codes = np.clip(np.rint(groups * inv) + z, 0, 15).astype(np.uint8)
    packed = _pack_nibbles(codes.reshape(-1, BLOCK)).reshape(len(groups), -1)
    return np.concatenate([_half_bytes(s), _half_bytes(z), packed], axis=1)


def quantize(w: npt.ArrayLike, fmt: str) -> np.ndarray:
    """Quantize along the last axis in groups: a uint8 array of shape
    (..., n // group * block_bytes). "q4_0", "q4_1", "q8_0": llama.cpp's blocks of 32, byte for
    byte what gguf.quants.quantize(w, <type>) and llama.cpp write (18, 20 and 34 bytes).
    "int4-g32", "int4-g64", "int4-g128": per group a half scale s, a half zero point z and
    4-bit codes c, value (c - z) s (s = range / 15, AWQ/GPTQ style; formats.py).

    w: real numbers (cast to float32, as gguf does), last axis a multiple of the group; NaN
    and infinities are refused (ValueError), as no block can represent them.
    """
    f = _format(fmt)
    a = np.asarray(w)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"w: expected real numbers, got dtype {a.dtype}")
    if a.ndim < 1 or a.shape[-1] % f.group != 0 or a.shape[-1] == 0:
        raise ValueError(f"w: the last axis must be a positive multiple of {f.group}, got shape "
                         f"{a.shape}")
    a = a.astype(np.float32)
    if not np.isfinite(a).all():
        raise ValueError("w: holds NaN or infinity, which no quantized block can represent")
    blocks = a.reshape(-1, f.group)
    with np.errstate(divide="ignore"):
        if not f.gguf:
            out = _int4_groups(blocks)
        elif f.name == "q8_0":
            d = np.abs(blocks).max(axis=1, keepdims=True) / np.float32(127)
            inv = np.where(d == 0, np.float32(0), np.float32(1) / d)
            codes = _round_half_away(blocks * inv).astype(np.int8).view(np.uint8)
            out = np.concatenate([_half_bytes(d), codes], axis=1)
        elif f.name == "q4_0":
            at = np.abs(blocks).argmax(axis=1)[:, None]       # the first of the largest
            d = np.take_along_axis(blocks, at, axis=1) / np.float32(-8)
            inv = np.where(d == 0, np.float32(0), np.float32(1) / d)
            codes = np.trunc(blocks * inv + np.float32(8.5)).astype(np.uint8).clip(0, 15)
            out = np.concatenate([_half_bytes(d), _pack_nibbles(codes)], axis=1)
        else:  # q4_1
            hi = blocks.max(axis=1, keepdims=True)
            lo = blocks.min(axis=1, keepdims=True)
            d = (hi - lo) / np.float32(15)
            inv = np.where(d == 0, np.float32(0), np.float32(1) / d)
            codes = np.trunc((blocks - lo) * inv + np.float32(0.5)).astype(np.uint8).clip(0, 15)
            out = np.concatenate([_half_bytes(d), _half_bytes(lo), _pack_nibbles(codes)], axis=1)
    return np.ascontiguousarray(out).reshape(*a.shape[:-1], -1)


def dequantize(q: npt.ArrayLike, fmt: str) -> np.ndarray:
    """The float32 values of quantized blocks (shape (..., bytes)): (..., bytes / block_bytes
    * group), what gguf.quants.dequantize gives for the GGUF formats."""
    f = _format(fmt)
    b = np.asarray(q)
    if b.dtype != np.uint8:
        raise TypeError(f"q: expected uint8 blocks (what quantize returns), got dtype {b.dtype}")
    if b.ndim < 1 or b.shape[-1] % f.block_bytes != 0:
        raise ValueError(f"q: the last axis must be a multiple of {f.name}'s {f.block_bytes}-byte "
                         f"block, got shape {b.shape}")
    blocks = np.ascontiguousarray(b).reshape(-1, f.block_bytes)
    d = _halves(blocks, 0)
    if not f.gguf:
        codes = _unpack_nibbles(blocks[:, 4:].reshape(-1, BLOCK // 2)).reshape(len(blocks), -1)
        values = (codes.astype(np.float32) - _halves(blocks, 2)) * d
    elif f.name == "q8_0":
        values = blocks[:, 2:].view(np.int8).astype(np.float32) * d
    elif f.name == "q4_0":
        codes = _unpack_nibbles(blocks[:, 2:]).astype(np.int8) - np.int8(8)
        values = d * codes.astype(np.float32)
    else:
        values = d * _unpack_nibbles(blocks[:, 4:]).astype(np.float32) + _halves(blocks, 2)
    return values.reshape(*b.shape[:-1], -1)


class Linear:
    """y = activation(x @ weight.T + bias), torch.nn.Linear's arithmetic with the weights packed
    once, float32 or weight-only quantized.

    weight: (out_features, in_features) real numbers; or, with quant set, the uint8 blocks
    quantize() (or a GGUF file) gives, shape (out_features, in_features // group * block_bytes).
    bias: None or (out_features,). quant: None (float32 weights), "q8_0", "q4_0", "q4_1",
    "int4-g32", "int4-g64" or "int4-g128": float weights are quantized with `quantize`. activation: None, "relu", "relu6", "gelu",
    "silu". A quantized layer also quantizes x per 32 values to int8 (as llama.cpp does for
    its integer dot products), so its results differ from x @ dequantize(W).T by about 2^-8 of
    each block's largest |x|, relative.

    Calling it on x of shape (..., in_features) (any real dtype, computed in float32) returns
    float32 of shape (..., out_features).
    """

    def __init__(self, weight: npt.ArrayLike, bias: Optional[npt.ArrayLike] = None,
                 quant: Optional[str] = None, activation: Optional[str] = None) -> None:
        if not (activation is None or isinstance(activation, str)):
            raise TypeError(f"activation: expected a str or None, got {type(activation).__name__}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation: {activation!r} is not supported; allowed: "
                             f"{', '.join(repr(a) for a in ACTIVATIONS)}")
        f = None if quant is None else _format(quant, "quant")
        w = np.asarray(weight)
        if w.ndim != 2:
            raise ValueError(f"weight: expected 2 dimensions (out_features, in_features), got "
                             f"shape {w.shape}")
        if f is not None and w.dtype == np.uint8:
            if w.shape[1] % f.block_bytes or w.shape[1] == 0:
                raise ValueError(f"weight: uint8 rows must hold whole {quant} blocks of "
                                 f"{f.block_bytes} bytes, got shape {w.shape}")
            blocks, k = np.ascontiguousarray(w), w.shape[1] // f.block_bytes * f.group
        else:
            if w.dtype.kind not in "fiu" or w.dtype == np.bool_:
                raise TypeError(f"weight: expected real numbers, got dtype {w.dtype}")
            k = w.shape[1]
            blocks = np.ascontiguousarray(w, np.float32) if f is None else quantize(w, f.name)
        n = w.shape[0]
        if n == 0 or k == 0:
            raise ValueError(f"weight: expected at least one row and column, got shape {w.shape}")
        b = None
        if bias is not None:
            b = np.ascontiguousarray(bias, np.float32)
            if b.shape != (n,):
                raise ValueError(f"bias: expected shape ({n},) (out_features), got {b.shape}")
        self.quant = quant
        self.activation = activation
        self._layer = _linear.PackedLayer(0 if f is None else f.quant, n, k, blocks, b,
                                          ACTIVATIONS[activation])
        self._n, self._k = int(n), int(k)  # read on every call: plain ints

    @property
    def out_features(self) -> int:
        return self._n

    @property
    def in_features(self) -> int:
        return self._k

    @property
    def weight_bytes(self) -> int:
        """The bytes of the packed weights, read once per call (per group of rows)."""
        return int(self._layer.weight_bytes)

    def __call__(self, x: npt.ArrayLike) -> np.ndarray:
        a = np.asarray(x)
        if a.dtype.kind not in "fiu" or a.dtype == np.bool_:
            raise TypeError(f"x: expected real numbers, got dtype {a.dtype}")
        if a.ndim < 1 or a.shape[-1] != self._k:
            raise ValueError(f"x: expected shape (..., {self._k}), got {a.shape}")
        rows = np.ascontiguousarray(a.reshape(-1, self._k), np.float32)
        y = np.empty((rows.shape[0], self._n), np.float32)
        self._layer.run(rows, y)
        return y if a.ndim == 2 else y.reshape(*a.shape[:-1], self._n)

    def __repr__(self) -> str:
        return (f"Linear(in_features={self.in_features}, out_features={self.out_features}, "
                f"quant={self.quant!r}, activation={self.activation!r})")
