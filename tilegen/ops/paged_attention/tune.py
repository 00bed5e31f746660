"""The paged_attention op's tune plug-in (interface: tilegen/ops/plugins.py): the float32 decode
kernel, among the registered kernels of the ISA in use (they differ in how far ahead, and into
which cache level, they prefetch the K/V rows: what a core's miss buffers and prefetchers want
differs by CPU), timed on caches read from memory with scattered blocks.

Cache key: f32_kernel.
"""
from __future__ import annotations

from typing import Any, List, Mapping

import numpy as np

from tilegen.ops.plugins import Knob, TuneCase

from . import _paged_attention as _paged


def apply(values: Mapping[str, Any]) -> None:
    unknown = set(values) - {"f32_kernel"}
    if unknown:
        raise ValueError(f"paged_attention: {sorted(unknown)} not a knob; allowed: f32_kernel")
    _paged.set_paged_kernel(values.get("f32_kernel"))


def _case(seqs: int, tokens: int, block: int = 16) -> TuneCase:
    """B sequences of `tokens` cached tokens, Hq 32 / Hkv 8, D 128, blocks scattered: the rate
    is K/V bytes read per second."""
    blocks = seqs * tokens // block
    nbytes = 2 * blocks * block * 8 * 128 * 4

    def make():
        rng = np.random.default_rng(7)
        k = rng.random((blocks, block, 8, 128), dtype=np.float32)
        v = rng.random((blocks, block, 8, 128), dtype=np.float32)
        q = rng.standard_normal((seqs, 32, 128), dtype=np.float32)
        table = rng.permutation(blocks).astype(np.int32).reshape(seqs, tokens // block)
        lens = np.full(seqs, tokens, np.int32)
        return lambda: _paged.paged_attention(q, k, v, table, lens)
    return TuneCase(f"B{seqs} x {tokens} tokens (H 32/8, D 128, blocks of {block})", nbytes, make,
                    unit="GB/s")


def knobs(quick: bool) -> List[Knob]:
    builtin = _paged.kernel_name()
    cases = [_case(4, 1024)] if quick else [_case(8, 2048), _case(1, 8192)]
    return [Knob("f32_kernel", "f32 decode kernel",
                 lambda chosen: [n for n in _paged.paged_kernels() if n != builtin],
                 _paged.set_paged_kernel, cases, builtin_label=f"{builtin} (built-in)")]


def check() -> None:
    """The kernel in force gives the plain C path's answer."""
    rng = np.random.default_rng(3)
    k = rng.standard_normal((40, 16, 2, 72), dtype=np.float32)
    v = rng.standard_normal((40, 16, 2, 72), dtype=np.float32)
    q = rng.standard_normal((3, 8, 72), dtype=np.float32)
    table = rng.permutation(40)[:39].astype(np.int32).reshape(3, 13)
    lens = np.array([200, 1, 37], np.int32)
    got = _paged.paged_attention(q, k, v, table, lens)
    _paged._force_plain(True)
    try:
        want = _paged.paged_attention(q, k, v, table, lens)
    finally:
        _paged._force_plain(False)
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        raise RuntimeError(f"the tuned decode kernel {_paged.kernel_name()} disagrees with the "
                           "plain path; not stored")
