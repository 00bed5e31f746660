"""A paged KV cache (vLLM's layout, what tg.paged_attention reads): per layer, keys and values
in blocks of `block_size` tokens, (num_blocks, block_size, kv_heads, head_dim); sequences own
lists of blocks, taken from a free list as they grow and returned when they finish. The block
budget bounds memory: `reserve` says whether a sequence can grow, so a request that cannot fit
waits instead of failing."""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np


class PagedCache:
    def __init__(self, layers: int, kv_heads: int, head_dim: int, num_blocks: int,
                 block_size: int = 16) -> None:
        if num_blocks < 1 or block_size < 1:
            raise ValueError(f"num_blocks, block_size: expected >= 1, got {num_blocks}, "
                             f"{block_size}")
        shape = (num_blocks, block_size, kv_heads, head_dim)
        self.k = [np.zeros(shape, np.float32) for _ in range(layers)]
        self.v = [np.zeros(shape, np.float32) for _ in range(layers)]
        self.block_size = block_size
        self.free: List[int] = list(range(num_blocks - 1, -1, -1))
        self.blocks: Dict[int, List[int]] = {}
        self.lengths: Dict[int, int] = {}

    def blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def can_hold(self, seq: int, tokens: int) -> bool:
        """Whether `seq` (new, or existing) can grow to `tokens` tokens with the free blocks."""
        have = len(self.blocks.get(seq, ()))
        return self.blocks_for(tokens) - have <= len(self.free)

    def reserve(self, seq: int, tokens: int) -> None:
        """Takes blocks so that `seq` holds `tokens` tokens (MemoryError if the budget cannot)."""
        own = self.blocks.setdefault(seq, [])
        self.lengths.setdefault(seq, 0)
        need = self.blocks_for(tokens) - len(own)
        if need > len(self.free):
            raise MemoryError(f"the KV cache has {len(self.free)} free blocks; sequence {seq} "
                              f"needs {need} more")
        for _ in range(need):
            own.append(self.free.pop())

    def release(self, seq: int) -> None:
        self.free.extend(reversed(self.blocks.pop(seq, [])))
        self.lengths.pop(seq, None)

    def length(self, seq: int) -> int:
        return self.lengths[seq]

    def grow(self, seq: int, tokens: int) -> None:
        self.lengths[seq] += tokens

    def _slots(self, seq: int, start: int, count: int) -> Tuple[np.ndarray, np.ndarray]:
        t = np.arange(start, start + count)
        own = np.asarray(self.blocks[seq])
        return own[t // self.block_size], t % self.block_size

    def write(self, layer: int, seq: int, start: int, k: np.ndarray, v: np.ndarray) -> None:
        """Stores tokens start.. of `seq` (k, v: (tokens, kv_heads, head_dim)); the first layer's
        write of a prompt also sets the sequence's length."""
        self.reserve(seq, start + len(k))
        blk, off = self._slots(seq, start, len(k))
        self.k[layer][blk, off] = k
        self.v[layer][blk, off] = v
        if layer == 0:
            self.lengths[seq] = max(self.lengths[seq], start + len(k))

    def token_slots(self, seqs: Sequence[int], pos: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(blocks, offsets) of one token per sequence at its position, reserving what is
        missing: every layer's append of a decode step writes the same slots."""
        blk = np.empty(len(seqs), np.intp)
        for i, s in enumerate(seqs):
            p = int(pos[i])
            self.reserve(s, p + 1)
            blk[i] = self.blocks[s][p // self.block_size]
        return blk, np.asarray(pos, np.intp) % self.block_size

    def append(self, layer: int, slots: Tuple[np.ndarray, np.ndarray], k: np.ndarray,
               v: np.ndarray) -> None:
        """One token per sequence into its slot (token_slots; k, v: (B, kv_heads, head_dim))."""
        self.k[layer][slots] = k
        self.v[layer][slots] = v

    def table(self, seqs: Sequence[int], extra: int = 0) -> Tuple[np.ndarray, np.ndarray]:
        """(block_table (B, max blocks) int32, lengths (B,) int32) for tg.paged_attention, with
        room for `extra` more tokens per sequence (reserved here)."""
        for s in seqs:
            self.reserve(s, self.lengths[s] + extra)
        width = max(len(self.blocks[s]) for s in seqs)
        t = np.zeros((len(seqs), width), np.int32)
        for i, s in enumerate(seqs):
            t[i, :len(self.blocks[s])] = self.blocks[s]
        return t, np.array([self.lengths[s] for s in seqs], np.int32)
