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
    q8_0:  d (dx s - 128 sx)        (VPDPBUSD: the driver stores c + 128, unsigned)
           d dx s                   (elsewhere: signed codes, bytes sign-extended)

accumulated in float32. The dot product takes the codes as the unsigned operand and the
activations as the signed one (QuadOps.dot); without it, both widen (QuadOps.byte, mla).

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


def code_offset(fmt: str, native: bool) -> int:
    """What the kernel takes away from each code (times sx): the driver's layout agrees."""
    return {"q4_0": 8, "q4_1": 0, "q8_0": 128 if native else 0, "q4_z": 0}[fmt]


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
                         offset=code_offset(spec.fmt, q.native), split=split, q=q,
                         v=isa.vec("f32"))

    def c_declaration(self, spec) -> str:
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const int8_t*, int64_t, "
                f"const float*, int64_t, const uint8_t*, float*, int64_t);")

    def c_row(self, entry) -> str:
        s = entry.spec
        q = get_isa(s.isa).quad(s.dtype)
        return (f"TG_ISA_{s.isa.upper()}, {KERNEL_FORMATS[s.fmt].index}, {s.mr}, {s.nr}, "
                f"{int(entry.production)}, {code_offset(s.fmt, q.native)}, {s.name}, "
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
                "TG_OFFSET": code_offset(s.fmt, get_isa(s.isa).quad(s.dtype).native)}

    def tester_coverage(self, s) -> Dict[str, int]:
        """Activation rows and panel rows; k runs in whole blocks (no remainder)."""
        return {"m": s.mr, "n": s.nr}


FAMILY = Qgemv()
