"""Continuous batching: requests join between steps, each step decodes one token for every live
sequence in one batched pass (a GEMM of M = live sequences per layer), and finished sequences
give their KV blocks back. A request is admitted only when the cache can hold its prompt and
all the tokens it may generate, so no sequence is ever cut off: the others wait, none is lost.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence

import numpy as np

from .kvcache import PagedCache
from .model import Model


@dataclass
class Request:
    """A prompt (token ids) to continue by up to max_new_tokens tokens; greedy when temperature
    is 0, else sampled from softmax(logits / temperature) with its own seed. Generation stops
    at a stop token (not kept)."""

    prompt: Sequence[int]
    max_new_tokens: int
    temperature: float = 0.0
    seed: Optional[int] = None
    stop: Iterable[int] = ()
    tokens: List[int] = field(default_factory=list)
    done: bool = False
    id: int = -1

    def __post_init__(self) -> None:
        if len(self.prompt) < 1:
            raise ValueError("prompt: expected at least one token")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens: expected >= 1, got {self.max_new_tokens}")
        if not self.temperature >= 0:
            raise ValueError(f"temperature: expected >= 0, got {self.temperature}")
        self.stop = frozenset(int(s) for s in self.stop)
        self._rng = np.random.default_rng(self.seed)

    def sample(self, logits: np.ndarray) -> int:
        if self.temperature == 0:
            return int(np.argmax(logits))
        z = logits.astype(np.float64) / self.temperature
        p = np.exp(z - z.max())
        return int(self._rng.choice(len(p), p=p / p.sum()))


class Generator:
    """Decodes many requests together over one paged cache of `cache_tokens` tokens."""

    def __init__(self, model: Model, cache_tokens: int = 8192, block_size: int = 16) -> None:
        c = model.config
        self.model = model
        self.cache = PagedCache(c.layers, c.kv_heads, c.head_dim,
                                -(-cache_tokens // block_size), block_size)
        self.waiting: List[Request] = []
        self.live: List[Request] = []
        self._ids = itertools.count()
        self.prefill_tokens = self.decode_tokens = 0
        self.prefill_seconds = self.decode_seconds = 0.0

    def submit(self, request: Request) -> Request:
        need = len(request.prompt) + request.max_new_tokens
        if self.cache.blocks_for(need) > len(self.cache.k[0]):  # more than the whole cache
            raise ValueError(f"request: {need} tokens can never fit the cache of "
                             f"{len(self.cache.k[0]) * self.cache.block_size} tokens")
        request.id = next(self._ids)
        self.waiting.append(request)
        return request

    def _finish(self, r: Request, token: int) -> None:
        if token in r.stop:
            r.done = True
        else:
            r.tokens.append(token)
            r.done = len(r.tokens) >= r.max_new_tokens
        if r.done:
            self.cache.release(r.id)

    def step(self) -> List[Request]:
        """Admits what fits (prefilling each), then decodes one token for the sequences that
        were live before; returns the requests that got a token."""
        advanced = []
        decoding = [r for r in self.live if not r.done]
        while self.waiting and self.cache.can_hold(
                self.waiting[0].id, len(self.waiting[0].prompt) + self.waiting[0].max_new_tokens):
            r = self.waiting.pop(0)
            self.cache.reserve(r.id, len(r.prompt) + r.max_new_tokens)
            t0 = time.perf_counter()
            logits = self.model.prefill(r.prompt, self.cache, r.id)
            self.prefill_seconds += time.perf_counter() - t0
            self.prefill_tokens += len(r.prompt)
            self._finish(r, r.sample(logits))
            advanced.append(r)
            if not r.done:
                self.live.append(r)
        if decoding:
            t0 = time.perf_counter()
            logits = self.model.decode([r.tokens[-1] for r in decoding],
                                       [r.id for r in decoding], self.cache)
            self.decode_seconds += time.perf_counter() - t0
            self.decode_tokens += len(decoding)
            for r, row in zip(decoding, logits):
                self._finish(r, r.sample(row))
                advanced.append(r)
        self.live = [r for r in self.live if not r.done]
        return advanced

    def run(self) -> None:
        """Steps until every submitted request is done."""
        while self.waiting or self.live:
            if not self.step() and self.waiting:  # unreachable: submit refuses what never fits
                raise RuntimeError("the cache cannot admit the next request")
