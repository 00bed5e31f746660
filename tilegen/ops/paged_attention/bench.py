"""`tilegen bench --op paged_attention`: decode attention over a paged KV cache, as a K/V read
rate, against this machine's streaming read rate measured in the same run.

A case is B sequences of one new token (q (B, Hq, D)) attending to their cached tokens in a
(num_blocks, block_size, Hkv, D) cache with a scrambled block table. Its work is the K/V bytes
the call must read (2 * sum(seq_lens) * Hkv * D * itemsize), reported in GB/s. The "numpy"
column is not paged attention: it is the streaming read the target compares with -- np.dot of
two float32 vectors holding as many bytes as the case's K/V, timed case by case beside
tilegen -- so tg/np is the fraction of the machine's streaming rate tilegen's kernel reaches.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import case_dict

NAME = "paged_attention"
LIBS = ("tilegen", "numpy")
RATIO_VS = ("numpy",)
UNIT, UNIT_SCALE = "GB/s", 1e9


@dataclass(frozen=True)
class Case:
    group: str
    b: int
    hq: int
    hkv: int
    d: int
    seq_len: int
    block_size: int
    ragged: bool = False  # seq_lens from seq_len/4 to seq_len instead of all seq_len
    dtype: str = "f32"

    @property
    def id(self) -> str:
        tail = "-ragged" if self.ragged else ""
        return (f"paged-b{self.b}h{self.hq}kv{self.hkv}d{self.d}s{self.seq_len}"
                f"blk{self.block_size}{tail}")

    @property
    def label(self) -> str:
        tail = " ragged" if self.ragged else ""
        return (f"B{self.b} H{self.hq}/{self.hkv} D{self.d} len {self.seq_len} "
                f"block {self.block_size}{tail}")

    def lens(self):
        import numpy as np

        if not self.ragged:
            return np.full(self.b, self.seq_len, np.int32)
        return np.linspace(self.seq_len // 4, self.seq_len, self.b).astype(np.int32)

    @property
    def work(self) -> int:
        return int(2 * int(self.lens().sum()) * self.hkv * self.d * 4)

    size = None

    def runs_on(self, lib: str) -> bool:
        return True

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0):
        """(q, k_cache, v_cache, block_table, seq_lens): every block a sequence uses, handed out
        in a scrambled order."""
        import numpy as np

        rng = np.random.default_rng(seed)
        lens = self.lens()
        per = -(-self.seq_len // self.block_size)
        nblocks = self.b * per
        shape = (nblocks, self.block_size, self.hkv, self.d)
        k = rng.standard_normal(shape, dtype=np.float32)
        v = rng.standard_normal(shape, dtype=np.float32)
        table = rng.permutation(nblocks).astype(np.int32).reshape(self.b, per)
        q = rng.standard_normal((self.b, self.hq, self.d), dtype=np.float32)
        return q, k, v, table, lens

    def check(self, operands, result) -> Optional[str]:
        import numpy as np

        if isinstance(result, tuple) and result and result[0] == "stream":
            want = result[1]
            return None if abs(float(result[2]) - want) <= 1e-2 * want else \
                f"streaming dot gave {result[2]}, expected about {want}"
        q, k, v, table, lens = operands
        result = np.asarray(result)
        if result.shape != q.shape:
            return f"shape {result.shape}, expected {q.shape}"
        bs, g = self.block_size, self.hq // self.hkv
        for b in sorted({0, self.b - 1}):
            t = np.arange(lens[b])
            K = k[table[b, t // bs], t % bs].astype(np.float64)
            V = v[table[b, t // bs], t % bs].astype(np.float64)
            for h in sorted({0, self.hq - 1}):
                s = K[:, h // g] @ q[b, h] / np.sqrt(self.d)
                p = np.exp(s - s.max())
                want = p @ V[:, h // g] / p.sum()
                err = np.abs(result[b, h] - want).max()
                if not err <= 1e-4:
                    return f"sequence {b} head {h}: max error {err:.3g}"
        return None


def cases(quick: bool = False) -> List[Case]:
    if quick:
        return [Case("decode", 2, 4, 1, 64, 256, 16)]
    return [
        Case("decode", 8, 32, 8, 128, 4096, 16),
        Case("decode", 8, 32, 8, 128, 4096, 1),
        Case("decode", 8, 32, 8, 128, 4096, 32, ragged=True),
        Case("decode", 4, 32, 1, 128, 8192, 16),  # multi-query
        Case("long", 1, 32, 8, 128, 32768, 16),   # one sequence: its blocks split over threads
    ]


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    q, k, v, table, lens = operands
    if lib == "tilegen":
        import tilegen
        return (lambda: tilegen.paged_attention(q, k, v, table, lens)), (lambda r: r)
    if lib == "numpy":
        import numpy as np

        n = case.work // 8  # two float32 vectors, as many bytes as the K/V
        a = np.full(n, 0.5, np.float32)
        b = np.full(n, 0.25, np.float32)
        want = 0.125 * n
        return (lambda: np.dot(a, b)), (lambda r: ("stream", want, r))
    raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")


def shape_note() -> Tuple[str, ...]:
    return ("H/Hkv query/kv heads, D head dim, len cached tokens per sequence (ragged: "
            "len/4 .. len), block tokens per cache block; work = K/V bytes read",
            "numpy = the machine's streaming read: np.dot of two float32 vectors of the case's "
            "K/V bytes (tg/np: tilegen's K/V read rate over it)")
