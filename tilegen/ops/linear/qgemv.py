"""Quantized-weight products (weight-only quantization, llama.cpp's blocks): Y[MR x NR] (float32)
= X W^T for MR activation rows and a panel of NR weight rows, k in blocks of 32.

Each activation row comes quantized per 32-block to int8 codes q with a float scale dx and
sx = dx * sum(q) (the driver quantizes, as llama.cpp quantizes to Q8_0). A weight panel holds,
per block, NR half-precision scales d (and NR minimums m for q4_1, NR zero points z for q4_z),
then the codes c in quads:
lane j of quad vector t holds weight row j's codes 4t .. 4t+3. 4-bit codes share a byte: the low
nibbles are quad t, the high ones quad t + 4 (GGUF's own order: byte i holds values i and
i + 16), so four vectors hold a block. Per block and lane the integer sum s = sum(c q) becomes

    q4_0:  d (dx s - 8 sx)          (values (c - 8) d)
    q4_1:  d dx s + m sx            (values c d + m)
    q4_z:  d (dx s - z sx)          (values (c - z) d: group-wise int4's zero points z)
    q8_0:  d (dx s - 128 sx)        (VPDPBUSD, QuadOps.a_offset: the driver stores c + 128)
           d dx s                   (elsewhere: signed codes, bytes sign-extended or SDOT)

accumulated in float32. The dot product takes the codes as its first operand (unsigned for
VPDPBUSD) and the activations as the signed one (QuadOps.dot); without it, both widen
(QuadOps.byte, mla).

4-bit codes: where the registers allow (`split`), the high nibbles' products go into sums of
their own, added once per block: one chain of 8 dependent dot products per vector becomes two
of 4. At one activation row the chain's latency, not the loads, bounded the kernel (VPDPBUSD
about 5 cycles: 40 per 576-byte block, ~53 GB/s at 3.7 GHz).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from tilegen.dsl.family import OpFamily, RegisterBudget
from tilegen.dsl.isa import QuadOps, VecOps, get_isa
from tilegen.dsl.lowering import Plan

from .formats import BLOCK, FORMATS, KERNEL_FORMATS


@dataclass(frozen=True)
class QgemvPlan(Plan):
    fmt: str
    nv: int                    # vectors per panel (NR / lanes)
    nibbles: bool
    second: str                # "", "min" or "zero": what the half after each scale is
    offset: int                # the code offset taken away through sx (8, 128 or 0)
    split: bool                # the high nibbles' sums apart from the low ones' (docstring)
    q: QuadOps
    v: VecOps                  # float32 spellings (scales, accumulators)


def code_offset(fmt: str, a_offset: bool) -> int:
    """What the kernel takes away from each code (times sx): the driver's layout agrees.
    `a_offset`: the dot product reads the codes unsigned (QuadOps.a_offset)."""
    return {"q4_0": 8, "q4_1": 0, "q8_0": 128 if a_offset else 0, "q4_z": 0}[fmt]


class Qgemv(OpFamily):
    name = "qgemv"
    template = "qgemv/ukernel.c.j2"
    types_template = "qgemv/types.h.j2"
    vector_dim = "n"
    dtypes = ("s8",)
    fields = {"fmt": ("q4_0", tuple(KERNEL_FORMATS))}
    c_select = "tg_qgemv_select"
    c_row_doc = ("X(isa id, format (0 q4_0, 1 q4_1, 2 q8_0), MR, NR, production, code offset, "
                 "kernel, \"name\")")
    example_dims = (("m", 4), ("n", 1024), ("k", 1024))

    def python_call(self, spec, kernel):
        return _python_call(spec, kernel)

    def python_driver(self, spec) -> str:
        return _python_driver(spec)

    def python_example(self, spec, dims, rng):
        return _python_example(spec, dims, rng)

    def op_token(self, spec) -> str:
        return spec.fmt.replace("_", "") + "gemv"

    def parse_op_token(self, token: str):
        for fmt in KERNEL_FORMATS:
            if token == fmt.replace("_", "") + "gemv":
                return {"fmt": fmt}
        return None

    def check(self, spec) -> None:
        self.check_multiple("nr", spec.nr, spec, "NR")
        if spec.kr != 1:
            raise ValueError(f"kr: qgemv kernels take k in blocks of {BLOCK}, not KR={spec.kr}")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        q = isa.quad(spec.dtype)
        nv = spec.nr // q.lanes
        f = KERNEL_FORMATS[spec.fmt]
        nibbles, has_min = f.nibbles, bool(f.second)
        # Per (row, vector): an int32 block sum and a float32 accumulator; per vector the codes
        # (both nibbles), the scale (and minimum); the activation quad (widened: and a byte).
        inputs = nv * (2 if nibbles else 1) + nv * (2 if has_min else 1)
        return RegisterBudget(2 * spec.mr * nv, inputs, 1 if q.native else 3, isa.num_vregs,
                              input_name="code + scale", broadcast_name="activation quad")

    def budget_rule(self, spec) -> str:
        return "2*MR*NR/lanes + (codes + scales)*NR/lanes + 1 (3 without a dot product)"

    def lower(self, spec) -> QgemvPlan:
        isa = get_isa(spec.isa)
        q = isa.quad(spec.dtype)
        f = KERNEL_FORMATS[spec.fmt]
        budget = self.register_budget(spec)
        nv = spec.nr // q.lanes
        split = f.nibbles and budget.used + spec.mr * nv <= budget.available
        return QgemvPlan(name=spec.name, dtype=spec.dtype, mr=spec.mr, nr=spec.nr,
                         lanes=q.lanes, isa=isa, budget=budget, fmt=spec.fmt, nv=nv,
                         nibbles=f.nibbles, second=f.second,
                         offset=code_offset(spec.fmt, q.a_offset), split=split, q=q,
                         v=isa.vec("f32"))

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const int8_t*, int64_t, "
                f"const float*, int64_t, const uint8_t*, float*, int64_t);")

    def c_row(self, entry) -> str:
        s = entry.spec
        q = get_isa(s.isa).quad(s.dtype)
        return (f"TG_ISA_{s.isa.upper()}, {KERNEL_FORMATS[s.fmt].index}, {s.mr}, {s.nr}, "
                f"{int(entry.production)}, {code_offset(s.fmt, q.a_offset)}, {s.name}, "
                f"\"{s.name}\"")

    def validate_registry(self, entries, where: str) -> None:
        """The production kernels of one ISA and format share NR: it is the packed layout's."""
        widths: Dict[tuple, set] = {}
        for e in entries:
            if e.production:
                widths.setdefault((e.spec.isa, e.spec.fmt), set()).add(e.spec.nr)
        for (isa, fmt), nrs in widths.items():
            if len(nrs) > 1:
                raise ValueError(f"{where}: production {fmt} kernels on {isa} have NR "
                                 f"{sorted(nrs)}; they must share one (the packed panel width)")

    def c_constants(self) -> str:
        seconds = {"": 0, "min": 1, "zero": 2}
        kernels = " ".join(f"X({f.index}, \"{f.name}\", {int(f.nibbles)}, {seconds[f.second]})"
                           for f in KERNEL_FORMATS.values())
        stored = " ".join(f"X({f.quant}, {f.kernel_format.index}, {f.group}, {f.block_bytes})"
                          for f in FORMATS.values())
        return ("/* X(kernel format, name, 4-bit codes, second half: 0 none, 1 minimum, 2 zero "
                "point) "
                "(formats.py) */\n"
                f"#define TG_QGEMV_KERNEL_FORMATS(X) {kernels}\n"
                f"#define TG_QGEMV_KERNEL_FORMAT_COUNT {len(KERNEL_FORMATS)}\n"
                "/* X(tilegen_quant, kernel format, values per group, bytes per group) per stored "
                "weight format */\n"
                f"#define TG_QGEMV_FORMATS(X) {stored}\n#define TG_QGEMV_BLOCK {BLOCK}\n")

    def tester_defines(self, s) -> Dict[str, object]:
        return {"TG_MR": s.mr, "TG_NR": s.nr, "TG_LANES": self.lanes(s),
                "TG_FORMAT": KERNEL_FORMATS[s.fmt].index,
                "TG_OFFSET": code_offset(s.fmt, get_isa(s.isa).quad(s.dtype).a_offset)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Activation rows and panel rows; k runs in whole blocks (no remainder)."""
        return {"m": s.mr, "n": s.nr}


FAMILY = Qgemv()


# --- tilegen.dsl.compile: Y = X W^T from Python, W as GGUF blocks ---

DRIVE = "tg_dsl_qgemv_drive"


def _block_bytes(spec) -> int:
    f = KERNEL_FORMATS[spec.fmt]
    return spec.nr * ((4 if f.second else 2) + (16 if f.nibbles else 32))


def _python_driver(spec) -> str:
    """C's loop over the MR x NR tiles of Y: activation rows quantized and padded to MR rows,
    weight panels of NR rows (panel j at w + j * nb * block bytes)."""
    return f"""#include <stdint.h>

{Qgemv().c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t m, int64_t n, int64_t nb, const int8_t* x, int64_t ldx, const float* xs,
    int64_t ldxs, const uint8_t* w, float* y, int64_t ldy) {{
  for (int64_t i0 = 0; i0 < m; i0 += {spec.mr})
    for (int64_t j0 = 0; j0 < n; j0 += {spec.nr})
      {spec.name}(m - i0 < {spec.mr} ? m - i0 : {spec.mr}, n - j0 < {spec.nr} ? n - j0 : {spec.nr},
                  nb, x + i0 * ldx, ldx, xs + i0 * ldxs, ldxs,
                  w + (j0 / {spec.nr}) * nb * {_block_bytes(spec)}, y + i0 * ldy + j0, ldy);
}}
"""


def quantize_rows(x, rows: int):
    """x (M, K) float32 quantized per 32 values as tilegen.Linear quantizes activations (Q8_0's
    scale, dx = max|x| / 127, q = x / dx rounded to nearest even, within +-127), padded with
    zero rows to a multiple of `rows`: codes (M', K) int8 and (M', 2 K/32) float32
    (dx, dx * sum(q)) per block."""
    import numpy as np

    m, k = x.shape
    mp = -(-m // rows) * rows
    blocks = x.reshape(m, k // BLOCK, BLOCK)
    dx = (np.abs(blocks).max(axis=2) / 127).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(np.where(dx[..., None] > 0, np.round(blocks / dx[..., None]), 0),
                    -127, 127).astype(np.int8)
    codes = np.zeros((mp, k), dtype=np.int8)
    codes[:m] = q.reshape(m, k)
    xs = np.zeros((mp, 2 * (k // BLOCK)), dtype=np.float32)
    xs[:m, 0::2] = dx
    xs[:m, 1::2] = dx * q.astype(np.int32).sum(axis=2)
    return codes, xs


def pack_panels(w, spec, a_offset: bool):
    """GGUF blocks (N, K/32 * bytes per block) into the kernel's panels of NR rows: per block
    the NR half scales, (q4_1) the NR half minimums, then the codes in quads."""
    import numpy as np

    f = KERNEL_FORMATS[spec.fmt]
    n = w.shape[0]
    gb = (4 if f.second else 2) + (16 if f.nibbles else 32)  # bytes per 32-value block
    nb = w.shape[1] // gb
    npad = -(-n // spec.nr) * spec.nr
    blk = np.zeros((npad, nb, gb), dtype=np.uint8)
    blk[:n] = w.reshape(n, nb, gb)
    head = 4 if f.second else 2
    panels = blk.reshape(npad // spec.nr, spec.nr, nb, gb).transpose(0, 2, 1, 3)  # (P, nb, NR, gb)
    scales = panels[..., :2].reshape(*panels.shape[:2], 2 * spec.nr)
    parts = [scales]
    if f.second:
        parts.append(panels[..., 2:4].reshape(*panels.shape[:2], 2 * spec.nr))
    codes = panels[..., head:]
    quads = codes.shape[-1] // 4  # nibbles: byte 4t + h holds values 4t + h and 16 + 4t + h
    if not f.nibbles and a_offset:
        codes = codes ^ 0x80  # VPDPBUSD reads them unsigned: c + 128
    parts.append(codes.reshape(*panels.shape[:3], quads, 4).transpose(0, 1, 3, 2, 4)
                 .reshape(*panels.shape[:2], -1))
    return np.ascontiguousarray(np.concatenate(parts, axis=2))


def split_groups(w, f):
    """Rows of int4 groups of G values (half scale, half zero point, G/2 code bytes in GGUF's
    nibble order per 32 values) as the kernel's 32-value blocks: each block repeats its group's
    scale and zero point before its 16 code bytes."""
    import numpy as np

    n = w.shape[0]
    groups = w.reshape(n, -1, f.block_bytes)
    per = f.group // BLOCK
    head = np.repeat(groups[:, :, None, :4], per, axis=2)
    codes = groups[:, :, 4:].reshape(n, groups.shape[1], per, BLOCK // 2)
    return np.concatenate([head, codes], axis=3).reshape(n, -1)


def _python_call(spec, kernel):
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, vp, i64, vp, i64, vp, vp, i64)
    a_offset = get_isa(spec.isa).quad(spec.dtype).a_offset
    grouped = spec.fmt not in FORMATS  # q4_z: the int4-g32/64/128 formats run on it
    stored = sorted(f.name for f in FORMATS.values() if f.kernel == spec.fmt)

    def prepare(x, w, *, fmt=None):
        """Checks, quantizes x and packs w; the returned function runs the kernel loop."""
        if grouped:
            fmt = stored[0] if fmt is None else fmt
            if fmt not in stored:
                raise ValueError(f"fmt: {spec.name} reads {', '.join(stored)}, got {fmt!r}")
        elif fmt not in (None, spec.fmt):
            raise ValueError(f"fmt: {spec.name} reads {spec.fmt}, got {fmt!r}")
        f = FORMATS[fmt or spec.fmt]
        x = jit.check_array("x", x, "f32", 2)
        m, k = x.shape
        if k % f.group:
            raise ValueError(f"x: K = {k} is not a multiple of the block ({f.group})")
        w = jit.check_array("w", w, "u8", 2, shape=(None, k // f.group * f.block_bytes))
        n = w.shape[0]
        out = np.empty((m, n), dtype=np.float32)
        if m == 0 or n == 0:
            return lambda: out
        codes, xs = quantize_rows(np.ascontiguousarray(x), spec.mr)
        panels = pack_panels(split_groups(w, f) if grouped else w, spec, a_offset)

        def run():
            drive(m, n, k // BLOCK, codes.ctypes.data, k, xs.ctypes.data, xs.shape[1],
                  panels.ctypes.data, out.ctypes.data, n)
            return out
        return run

    if grouped:
        what = (f"w (N, K/G * (4 + G/2)) uint8, W's rows as groups of G values (a half scale, "
                f"a half zero point, the 4-bit codes) of fmt= {' / '.join(stored)} (G = "
                f"{' / '.join(str(FORMATS[n].group) for n in stored)}; tilegen.quantize(w, fmt)); "
                f"K a multiple of G")
    else:
        what = (f"w (N, K/{BLOCK} * {FORMATS[spec.fmt].block_bytes}) uint8, W's rows as "
                f"{spec.fmt} GGUF blocks (tilegen.quantize(w, {spec.fmt!r}))")
    doc = (
        f"{spec.name}: Y = X W^T in float32 for x (M, K) float32 (K a multiple of {BLOCK}) and "
        f"{what}. X is quantized per {BLOCK} values to int8 as tilegen.Linear does "
        f"(scale max|x|/127, nearest even), W repacked into the kernel's {spec.nr}-row panels, then "
        f"a C loop calls the micro-kernel on each {spec.mr}x{spec.nr} tile of Y.")
    return jit.prepared_call(prepare, doc)


def _python_example(spec, dims, rng):
    import numpy as np

    import tilegen
    from tilegen.dsl import jit

    m, n, k = dims
    fmt = spec.fmt if spec.fmt in FORMATS else "int4-g128"  # q4_z: the widest groups
    k = -(-k // FORMATS[fmt].group) * FORMATS[fmt].group
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = tilegen.quantize(rng.standard_normal((n, k)).astype(np.float32), fmt)
    wv = tilegen.dequantize(w, fmt).astype(np.float64)  # checked against gguf's
    # X as the kernel sees it: int8 codes times their block's scale.
    blocks = x.reshape(m, k // BLOCK, BLOCK).astype(np.float64)
    dx = np.abs(blocks).max(axis=2, keepdims=True).astype(np.float32) / np.float32(127)
    xv = (np.round(blocks / np.where(dx > 0, dx, 1)) * dx).reshape(m, k)
    want = xv @ wv.T
    kwargs = {} if fmt == spec.fmt else {"fmt": fmt}
    return jit.Example(args=(x, w), kwargs=kwargs, expected=want.astype(np.float32),
                       work=float(w.nbytes), unit="byte", shape=f"{m}x{n}x{k}", rtol=0.0,
                       atol=1e-5 * np.sqrt(k) * float((np.abs(xv) @ np.abs(wv).T).max(initial=1)))
