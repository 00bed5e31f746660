"""The same llama model in torch float32 (dequantized weights, torch.nn.functional ops, a KV
cache of concatenated tensors): the bench's "torch float32 implementation" peer. Its greedy
tokens are tilegen's up to the int8 activations' rounding."""
from __future__ import annotations

from typing import List

import numpy as np


class TorchLlama:
    def __init__(self, model) -> None:
        import torch

        from .model import values

        tensors = {t.name: t for t in model.reader.tensors}

        def weight(name):
            t = tensors[name]
            return torch.from_numpy(np.array(values(t.tensor_type, t.data)))  # a writable copy

        self.c = model.config
        self.torch = torch
        self.emb = weight("token_embd.weight")
        self.out = weight("output.weight") if "output.weight" in tensors else self.emb
        self.norm = weight("output_norm.weight")
        self.layers = []
        for i in range(self.c.layers):
            b = f"blk.{i}."
            self.layers.append({n: weight(b + n + ".weight") for n in (
                "attn_norm", "ffn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                "ffn_gate", "ffn_up", "ffn_down")})
        half = self.c.head_dim // 2
        self.inv_freq = torch.tensor(
            self.c.rope_base ** (-np.arange(half, dtype=np.float64) * 2 / self.c.head_dim),
            dtype=torch.float32)

    def _rope(self, x, pos):
        a, b = x[..., 0::2], x[..., 1::2]
        ang = pos[:, None].float() * self.inv_freq
        cos, sin = ang.cos()[:, None], ang.sin()[:, None]
        return self.torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)

    def generate(self, ids: List[int], n: int) -> List[int]:
        """Greedy: the prompt in one pass, then n - 1 more tokens one at a time."""
        torch, c = self.torch, self.c
        F = torch.nn.functional
        cache = [[None, None] for _ in self.layers]
        out, pos0, tokens = [], 0, torch.tensor(ids)
        with torch.no_grad():
            for step in range(n):
                t = len(tokens)
                pos = torch.arange(pos0, pos0 + t)
                h = self.emb[tokens]
                for layer, kv in zip(self.layers, cache):
                    x = F.rms_norm(h, (c.hidden,), layer["attn_norm"], c.eps)
                    q = self._rope(F.linear(x, layer["attn_q"]).view(t, c.heads, c.head_dim), pos)
                    k = self._rope(F.linear(x, layer["attn_k"]).view(t, c.kv_heads, c.head_dim),
                                   pos)
                    v = F.linear(x, layer["attn_v"]).view(t, c.kv_heads, c.head_dim)
                    kv[0] = k if kv[0] is None else torch.cat([kv[0], k])
                    kv[1] = v if kv[1] is None else torch.cat([kv[1], v])
                    a = F.scaled_dot_product_attention(
                        q.transpose(0, 1), kv[0].transpose(0, 1), kv[1].transpose(0, 1),
                        is_causal=t > 1, enable_gqa=True)
                    h = h + F.linear(a.transpose(0, 1).reshape(t, c.hidden), layer["attn_output"])
                    x = F.rms_norm(h, (c.hidden,), layer["ffn_norm"], c.eps)
                    h = h + F.linear(F.silu(F.linear(x, layer["ffn_gate"])) *
                                     F.linear(x, layer["ffn_up"]), layer["ffn_down"])
                logits = F.linear(F.rms_norm(h[-1:], (c.hidden,), self.norm, c.eps), self.out)
                nxt = int(logits[0].argmax())
                out.append(nxt)
                pos0 += t
                tokens = torch.tensor([nxt])
        return out
