"""`tilegen bench --op qgemv`: quantized-weight products (tg.Linear) as the rate their weights
stream, GB/s of GGUF bytes read, against torch's weight-only kernels and a streaming read.

Decode reads every weight once per token, so the bound is memory: work = the weights' bytes as
GGUF stores them (q4_0 18 bytes a block of 32, q4_1 20, q8_0 34; int4-g128 68 bytes a group
of 128). Peers:
- torch: the int4 weight-only GEMM (_weight_int4pack_mm_for_cpu, groups of 32 with a scale and
  a zero each, given exactly the q4 blocks' values, bfloat16 activations: its fast path) for
  q4_0/q4_1 and int4-g128 (groups of 128); for q8_0 torch's int8
  weight-only kernel (_weight_int8pack_mm, one scale per row: the closest it has).
- memread: NumPy summing the same bytes as uint64, the machine's streaming read of them (the
  yardstick the 0.8x target is against; one thread).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tilegen.ops.plugins import case_dict, placed

from .formats import BLOCK, FORMATS

NAME = "qgemv"
SUMMARY = "quantized-weight products (tg.Linear on q4_0/q4_1/q8_0) as GB/s of weights streamed"
SHOWS = ("linear",)
LIBS = ("tilegen", "torch", "memread")
RATIO_VS = ("torch",)
UNIT, UNIT_SCALE = "GB/s", 1e9


@dataclass(frozen=True)
class Case:
    group: str
    fmt: str
    m: int
    n: int
    k: int
    dtype: str = "f32"

    @property
    def id(self) -> str:
        return f"qgemv-{self.fmt.replace('-', '')}-{self.m}x{self.n}x{self.k}"

    @property
    def label(self) -> str:
        return f"{self.fmt} {self.m}x{self.n}x{self.k}"

    @property
    def work(self) -> int:
        f = FORMATS[self.fmt]
        return self.n * self.k // f.group * f.block_bytes

    size = None

    def runs_on(self, lib: str) -> bool:
        return True

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0):
        import numpy as np

        from .api import quantize

        rng = np.random.default_rng(seed)
        w = rng.standard_normal((self.n, self.k)).astype(np.float32)
        x = placed(rng.standard_normal((self.m, self.k)).astype(np.float32))
        return x, placed(quantize(w, self.fmt))

    def check(self, operands, result) -> Optional[str]:
        import numpy as np

        from .api import dequantize

        x, blocks = operands
        if result is None:  # the streaming read: nothing to check
            return None
        w = dequantize(blocks, self.fmt).astype(np.float64)
        want = x.astype(np.float64) @ w.T
        mag = np.abs(x.astype(np.float64)) @ np.abs(w).T
        # int8 activations (tilegen's): 2^-7 of each block's largest |x|; torch's int8 rows
        # requantize the weights per row: a few percent.
        err = np.abs(np.asarray(result, np.float64) - want) / (mag + 1e-30)
        return None if err.max() <= 0.05 else f"max relative error {err.max():.3g}"


def cases(quick: bool = False) -> List[Case]:
    if quick:
        return [Case("gemv", "q4_0", 1, 1024, 1024)]
    out = []
    for fmt in ("q4_0", "q4_1", "q8_0"):
        for n, k in ((4096, 4096), (1536, 576), (576, 1536)):
            out.append(Case("gemv", fmt, 1, n, k))
    out.append(Case("gemv", "int4-g128", 1, 4096, 4096))
    out += [Case("batched", "q4_0", 16, 4096, 4096), Case("batched", "q4_1", 16, 1536, 576)]
    return out


def _torch_int4(blocks, fmt, n, k):
    """torch's int4 weight-only operands holding exactly the blocks' values, w = (c - 8) s + z:
    q4_0 z = 0; q4_1 (c d + m) z = m + 8 d; int4-gG ((c - zp) d) z = (8 - zp) d."""
    import numpy as np
    import torch

    from .api import _halves, _unpack_nibbles

    f = FORMATS[fmt]
    second = f.kernel_format.second
    b = np.ascontiguousarray(blocks).reshape(-1, f.block_bytes)
    d = _halves(b, 0)
    codes = _unpack_nibbles(b[:, 4 if second else 2:].reshape(-1, BLOCK // 2)).astype(np.int32)
    zero = {"": 0 * d, "min": _halves(b, 2) + 8 * d,
            "zero": (8 - _halves(b, 2)) * d}[second]
    packed = torch._convert_weight_to_int4pack_for_cpu(
        torch.from_numpy(np.ascontiguousarray(codes.reshape(n, k))), 2)
    groups = k // f.group
    sz = np.stack([d.reshape(n, groups).T, zero.reshape(n, groups).T], axis=-1)
    return packed, torch.from_numpy(np.ascontiguousarray(sz, np.float32)).to(torch.bfloat16)


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    import numpy as np

    x, blocks = operands
    if lib == "tilegen":
        from .api import Linear

        layer = Linear(blocks, quant=case.fmt)
        return (lambda: layer(x)), (lambda r: r)
    if lib == "memread":
        words = blocks.reshape(-1).view(np.uint64)
        return (lambda: words.sum()), (lambda r: None)
    import torch

    tx = torch.from_numpy(x)
    f = FORMATS[case.fmt]
    if f.kernel_format.nibbles:
        # bfloat16 activations and scales: torch's fast path (float32 runs 20-30x slower).
        packed, sz = _torch_int4(blocks, case.fmt, case.n, case.k)
        xb = tx.to(torch.bfloat16)
        return (lambda: torch._weight_int4pack_mm_for_cpu(xb, packed, f.group, sz)), \
            (lambda r: r.float().numpy())
    from .api import dequantize

    w = dequantize(blocks, case.fmt).reshape(case.n, case.k)
    scale = np.abs(w).max(axis=1) / 127
    w8 = torch.from_numpy(np.rint(w / np.where(scale > 0, scale, 1)[:, None]).astype(np.int8))
    ts = torch.from_numpy(scale.astype(np.float32))
    return (lambda: torch._weight_int8pack_mm(tx, w8, ts)), (lambda r: r.numpy())


def shape_note():
    return ("fmt MxNxK: M activation rows (1: one token's decode) times N x K weights in the "
            "format (4096: a 7B model's; 1536 x 576 and 576 x 1536: SmolLM2-135M's FFN); work "
            "= the weights' GGUF bytes, read once per call",)
