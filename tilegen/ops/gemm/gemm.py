"""GEMM: C[MR x NR] = alpha * A[MR x k] B[k x NR] + beta * C, then a fused epilogue.

n runs along the SIMD lanes, A is broadcast one element at a time, KR = 1. A is read either
from MR-interleaved packed panels ("packed") or by rows ("rows": row-major A in place, or padded
row copies); the name marks the second with the variant token "rows". The family also generates
the packing routines its driver uses (one file per dtype and ISA).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tilegen.dsl.isa import DTYPE_BYTES, DTYPES, FLOAT_DTYPES, ISAS, Isa, VecOps, get_isa
from tilegen.dsl.family import ExtraFile, OpFamily, RegisterBudget
from tilegen.dsl.lowering import FMA_CHAINS, RowsPlan, row_addressing

# How a GEMM kernel reads A: "packed" MR-interleaved panels (element (i, kk) at a[kk*cs_a + i]),
# or "rows" (element at a[i*rs_a + kk]: row-major A in place, or panels packed by plain row copies).
A_LAYOUTS: Tuple[str, ...] = ("packed", "rows")
# How the k loop is written: "c" (the ISA's intrinsics) or "asm" (GNU inline assembly with a
# fixed register allocation, where the ISA table has the mnemonics; the intrinsics loop stays
# as the fallback for other compilers). A schedule detail: it does not enter the name.
KLOOPS: Tuple[str, ...] = ("c", "asm")
EPILOGUES: Tuple[str, ...] = ("bias", "relu", "relu6")

# Upper bounds of the cache blocking (KC, NC) per ISA and dtype; the driver derives the
# built-in values from the core's caches below these (gemm_dispatch.c: cache_blocking_), and
# `tilegen tune` refines them per machine. x86's KC is deep because C's tile is loaded and
# stored once per KC block (AMD Zen 4, 1 thread, KC 256 -> 1024: float32 4096^3 101 -> 109
# GFLOP/s, float64 2048^3 49 -> 54, AVX2 float32 2048^3 103 -> 108).
BLOCKING: Dict[str, Dict[str, Tuple[int, int]]] = {
    "scalar": {"f32": (256, 256), "f64": (256, 256)},
    "avx2": {"f32": (1024, 1024), "f64": (1024, 512)},
    "avx512": {"f32": (1024, 1024), "f64": (1024, 512)},
    "neon": {"f32": (256, 512), "f64": (256, 256)},
}

GENERATED = os.path.join("tilegen", "generated")
# k values per block of the packing routines' interleaving loops (row-major A, column-major B).
PACK_KB = 8


@dataclass(frozen=True)
class GemmPlan(RowsPlan):
    """Everything the GEMM template needs, already decided."""

    nv: int                    # vectors per row of the tile
    unroll: int
    epilogue: Tuple[str, ...]
    prefetch: int              # k steps ahead, 0 = off
    a_layout: str              # "packed": a[kk*cs_a + i]; "rows": a[i*rs_a + kk]
    params_type: str
    kloop: str = "c"           # "c" or "asm" (inline assembly, registers fixed below)
    ksplit: int = 1            # accumulator sets the unrolled k steps rotate through (see below)
    a_by_lane: bool = False    # A's values of `lanes` rows in one load, each row by lane

    def acc(self, i: int, j: int, u: int) -> str:
        """The accumulator of tile element (i, j) that unrolled k step u adds into."""
        s = u % self.ksplit
        return f"vacc{i}x{j}" if s == 0 else f"vacc{i}x{j}_{s}"

    @property
    def elem_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    # The asm k loop's register allocation: B vectors first, then the broadcast, the
    # accumulators in the top registers (the budget check guarantees they do not meet).
    def asm_b(self, j: int) -> str:
        return f"%%{self.v.asm.reg}{j}"

    @property
    def asm_bcast(self) -> str:
        return f"%%{self.v.asm.reg}{self.nv}"

    def asm_acc(self, i: int, j: int) -> str:
        return f"%%{self.v.asm.reg}{self.isa.num_vregs - self.mr * self.nv + i * self.nv + j}"

    @property
    def asm_clobbers(self) -> str:
        """Every vector register the asm loop writes, as the constraint list spells them."""
        used = list(range(self.nv + 1)) + list(range(self.isa.num_vregs - self.mr * self.nv,
                                                      self.isa.num_vregs))
        return ", ".join(f'"xmm{r}"' for r in used)

    def asm_a_elem(self, i: int, u: int) -> str:
        """AT&T operand of A(i, kk + u) in the current k step's frame."""
        eb = self.elem_bytes
        if self.a_layout == "packed":
            return f"{i * eb}(%[a])"
        base, scale = self.row_addr[i]
        index = f",%[rsb],{scale}" if scale else ""
        return f"{u * eb}(%[ab{base}]{index})"

    def a_elem(self, i: int, u: int) -> str:
        """Address of A(i, kk + u) in the current k step's frame."""
        if self.a_layout == "packed":
            return f"a + {i}"
        base, scale = self.row_addr[i]
        row = f"ab{base}" if scale == 0 else f"ab{base} + {scale} * rsb"
        return f"(const {self.ctype}*) ({row}) + {u}"


def packa_name(dtype: str, isa: str, mr: int) -> str:
    return f"tg_{dtype}_packa_{mr}__{isa}"


def packb_name(dtype: str, isa: str, nr: int) -> str:
    return f"tg_{dtype}_packb_{nr}__{isa}"


def packr_name(dtype: str, isa: str) -> str:
    return f"tg_{dtype}_packr__{isa}"


def epilogue_name(dtype: str, isa: str) -> Optional[str]:
    """The vectorised row epilogue of (dtype, ISA), or None (float64 keeps the driver's)."""
    return f"tg_{dtype}_gemm_epi__{isa}" if dtype == "f32" else None


def pack_path(dtype: str, isa: str) -> str:
    return os.path.join(GENERATED, "gemm", "pack", f"tg_{dtype}_pack__{isa}.c")


def epilogue_flags(spec) -> str:
    """The C spelling of a kernel's fused epilogue (TG_EPI_* flags of the gemm types)."""
    return " | ".join(f"TG_EPI_{x.upper()}" for x in spec.epilogue) or "0u"


class Gemm(OpFamily):
    name = "gemm"
    template = "gemm/ukernel.c.j2"
    types_template = "gemm/types.h.j2"
    vector_dim = "n"
    epilogues = EPILOGUES
    kloops = KLOOPS
    fields = {"a_layout": ("packed", A_LAYOUTS)}
    c_select = "tg_gemm_select"
    c_row_doc = ("X(isa id, MR, NR, unroll, epilogue flags, production, A layout (0 packed, "
                 "1 rows), kernel, packa, packr, packb, row epilogue or NULL, \"name\")")
    example_dims = (("m", 256), ("n", 256), ("k", 256))

    def python_call(self, spec, kernel):
        return _python_call(spec, kernel)

    def python_driver(self, spec) -> str:
        return _python_driver(spec)

    def python_example(self, spec, dims, rng):
        return _python_example(spec, dims, rng)

    def variant_tokens(self, spec) -> List[str]:
        return ["rows"] if spec.a_layout == "rows" else []

    def parse_variant(self, variant: str) -> Tuple[Dict[str, Any], str]:
        if variant == "rows" or variant.startswith("rows_"):
            return {"a_layout": "rows"}, variant[5:]
        return {"a_layout": "packed"}, variant

    def check(self, spec) -> None:
        if spec.kr != 1:
            raise ValueError(f"kr: {spec.op} kernels take KR=1, got KR={spec.kr}")
        self.check_multiple("nr", spec.nr, spec, "NR")

    def register_budget(self, spec) -> RegisterBudget:
        isa = get_isa(spec.isa)
        nv = spec.nr // isa.lanes(spec.dtype)
        # MR x NV accumulators, one row of B vectors per k step, one A broadcast.
        return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs)

    def budget_rule(self, spec) -> str:
        lanes = self.lanes(spec)
        return f"MR*NR/{lanes} + NR/{lanes} + 1"

    def a_by_lane(self, spec) -> bool:
        """Packed A holds a k step's MR values contiguous: where the ISA has an FMA by lane
        (v.fma_lane) and MR is a multiple of the lanes, one load takes `lanes` rows' values
        and each row's FMAs pick its lane, instead of a broadcast load per row. One such vector
        is live at a time, as the broadcast was: the register budget is the same."""
        v = get_isa(spec.isa).vec(spec.dtype)
        return (bool(v.fma_lane_) and spec.kloop == "c" and spec.a_layout == "packed"
                and spec.mr % v.lanes == 0)

    def k_split(self, spec) -> int:
        """Accumulator sets for the intrinsics k loop: small tiles (one row, say) would wait on
        each accumulator's previous FMA, so their unrolled k steps add into separate sets,
        summed after the loop -- as many as the unroll, FMA_CHAINS and the register file allow."""
        isa = get_isa(spec.isa)
        accs = spec.mr * (spec.nr // isa.lanes(spec.dtype))
        if spec.kloop != "c" or accs >= FMA_CHAINS:
            return 1
        spare = isa.num_vregs - self.register_budget(spec).used
        return max(1, min(spec.unroll, -(-FMA_CHAINS // accs), 1 + spare // accs))

    def lower(self, spec) -> GemmPlan:
        isa = get_isa(spec.isa)
        v = isa.vec(spec.dtype)
        bases, rows = row_addressing(spec.mr)
        return GemmPlan(
            name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, nr=spec.nr,
            lanes=v.lanes, nv=spec.nr // v.lanes, unroll=spec.unroll, tail=spec.tail,
            epilogue=spec.epilogue, prefetch=spec.prefetch, a_layout=spec.a_layout,
            row_bases=bases, row_addr=rows, isa=isa, v=v, budget=self.register_budget(spec),
            params_type=f"tg_{spec.dtype}_gemm_params", kloop=spec.kloop,
            ksplit=self.k_split(spec), a_by_lane=self.a_by_lane(spec),
        )

    def c_declaration(self, spec) -> str:
        t = DTYPES[spec.dtype]
        return (f"void {spec.name}(int64_t, int64_t, int64_t, const {t}*, int64_t, const {t}*, "
                f"int64_t, {t}*, int64_t, const tg_{spec.dtype}_gemm_params*);")

    def c_row(self, entry) -> str:
        s = entry.spec
        return (f"TG_ISA_{s.isa.upper()}, {s.mr}, {s.nr}, {s.unroll}, {epilogue_flags(s)}, "
                f"{int(entry.production)}, {int(s.a_layout == 'rows')}, {s.name}, "
                f"{packa_name(s.dtype, s.isa, s.mr)}, {packr_name(s.dtype, s.isa)}, "
                f"{packb_name(s.dtype, s.isa, s.nr)}, "
                f"{epilogue_name(s.dtype, s.isa) or 'NULL'}, \"{s.name}\"")

    def validate_registry(self, entries, where: str) -> None:
        """Per dtype and ISA, production kernels share one NR (one packed-B format), except
        'rows' kernels of NR/2 (the narrow set); a plain packed kernel must exist."""
        groups: Dict[Tuple[str, str], list] = {}
        for e in entries:
            if e.production:
                groups.setdefault((e.spec.dtype, e.spec.isa), []).append(e)
        for (dtype, isa), group in groups.items():
            packed = [e for e in group if e.spec.a_layout == "packed"]
            nr = max(e.spec.nr for e in packed) if packed else 0
            odd = sorted({e.spec.nr for e in group if e.spec.nr != nr
                          and not (e.spec.a_layout == "rows" and 2 * e.spec.nr == nr)})
            if odd:
                raise ValueError(
                    f"{where}: production gemm {dtype} kernels for {isa} have NR values {odd}; "
                    f"allowed: the packed kernels' NR={nr}, and NR={nr // 2} for 'rows' "
                    "kernels (the narrow set)")
            if not [e for e in packed if not e.spec.epilogue]:
                raise ValueError(f"{where}: ('gemm', {dtype!r}, {isa!r}) has no production "
                                 "kernel with packed A and no epilogue")

    def extra_files(self, entries, env) -> List[ExtraFile]:
        """The packing routines: per dtype and ISA, packa for every MR, packb for every NR,
        one packr."""
        sets: Dict[Tuple[str, str], Tuple[set, set]] = {}
        for e in entries:
            mrs, nrs = sets.setdefault((e.spec.dtype, e.spec.isa), (set(), set()))
            mrs.add(e.spec.mr)
            nrs.add(e.spec.nr)
        out = []
        for (dtype, isa), (mrs, nrs) in sorted(sets.items()):
            epi = epilogue_name(dtype, isa)
            body = env.get_template("gemm/pack.c.j2").render(
                dtype=dtype, ctype=DTYPES[dtype], isa=ISAS[isa], v=ISAS[isa].vec(dtype),
                mrs=sorted(mrs), nrs=sorted(nrs), epilogue=epi, pack_kb=PACK_KB)
            t = DTYPES[dtype]
            decls = [f"void {packa_name(dtype, isa, m)}(int64_t, int64_t, const {t}*, int64_t, "
                     f"int64_t, {t}*);" for m in sorted(mrs)]
            decls += [f"void {packb_name(dtype, isa, n)}(int64_t, int64_t, const {t}*, int64_t, "
                      f"int64_t, {t}*);" for n in sorted(nrs)]
            decls.append(f"void {packr_name(dtype, isa)}(int64_t, int64_t, int64_t, const {t}*, "
                         f"int64_t, int64_t, {t}*, int64_t);")
            if epi:
                decls.append(f"void {epi}(int64_t, {t}*, const {t}*, {t}, int);")
            out.append(ExtraFile(
                path=pack_path(dtype, isa), content=body, template="gemm/pack.c.j2",
                note=f"{self.registry_file}: the MR/NR of every {dtype} {isa} kernel", isa=isa,
                declarations=tuple(decls)))
        return out

    def c_constants(self) -> str:
        """Defaults the gemm driver reads: TG_GEMM_BLOCKING(X) X(isa id, dtype, KC, NC)."""
        rows = [f"  X(TG_ISA_{isa.upper()}, {d}, {kc}, {nc}) \\"
                for isa, per in BLOCKING.items() if isa in ISAS
                for d, (kc, nc) in per.items() if d in FLOAT_DTYPES]
        return "#define TG_GEMM_BLOCKING(X) \\\n" + "\n".join(rows) + "\n"


    def tester_defines(self, s) -> Dict[str, object]:
        return {
            "TG_PACKA": packa_name(s.dtype, s.isa, s.mr), "TG_PACKR": packr_name(s.dtype, s.isa),
            "TG_PACKB": packb_name(s.dtype, s.isa, s.nr), "TG_MR": s.mr, "TG_NR": s.nr,
            "TG_UNROLL": s.unroll, "TG_EPI": f"({epilogue_flags(s)})",
            "TG_ROWS": int(s.a_layout == "rows"), "TG_PACK_KB": PACK_KB,
        }

    def tester_coverage(self, s) -> Dict[str, int]:
        """Rows and columns of the tile, the unrolled k loop, and the k blocks of the packing
        routines the tester runs with the kernel."""
        return {"m": s.mr, "n": s.nr, "k": s.unroll, "k_pack": PACK_KB}

    def tester_clamps(self, s) -> Dict[str, Tuple[float, ...]]:
        return {act: points for act, points in (("relu", (0.0,)), ("relu6", (0.0, 6.0)))
                if act in s.epilogue}

    def tester_sources(self, s) -> List[str]:
        return [pack_path(s.dtype, s.isa)]


FAMILY = Gemm()


# --- tilegen.dsl.compile: the micro-kernel driven over a whole product from Python ---

# The clamps of the activation stages, for NumPy's reference.
_CLAMPS = {"relu": (0, None), "relu6": (0, 6)}


DRIVE = "tg_dsl_gemm_drive"


def _python_driver(spec) -> str:
    """C's loop over C's MR x NR tiles, A packed per MR rows (panel i at a + i * a_panel), B
    per NR columns (panel j at b + j * b_panel, rows rs_b apart) by the caller; C row-major;
    bias may be NULL."""
    t = DTYPES[spec.dtype]
    return f"""#include <stdint.h>
#include "tg_ukernels.h"

{Gemm().c_declaration(spec)}

__attribute__((visibility("default"))) void {DRIVE}(
    int64_t m, int64_t n, int64_t k, const {t}* a, int64_t a_panel, int64_t a_stride,
    const {t}* b, int64_t b_panel, int64_t rs_b, {t}* c, int64_t rs_c, {t} alpha, {t} beta,
    const {t}* bias) {{
  for (int64_t i0 = 0; i0 < m; i0 += {spec.mr}) {{
    const int64_t mi = m - i0 < {spec.mr} ? m - i0 : {spec.mr};
    for (int64_t j0 = 0; j0 < n; j0 += {spec.nr}) {{
      const int64_t nj = n - j0 < {spec.nr} ? n - j0 : {spec.nr};
      const tg_{spec.dtype}_gemm_params p = {{alpha, beta, bias ? bias + j0 : 0}};
      {spec.name}(mi, nj, k, a + (i0 / {spec.mr}) * a_panel, a_stride,
                  b + (j0 / {spec.nr}) * b_panel, rs_b, c + i0 * rs_c + j0, rs_c, &p);
    }}
  }}
}}
"""


def _python_call(spec, kernel):
    """C = act(alpha * A @ B + beta * C + bias) of any (M, K) x (K, N): A packed per MR rows and
    B per NR columns in NumPy (the library's panel layouts), then a C loop (_python_driver)
    calls the micro-kernel on every tile, edges too."""
    import ctypes

    import numpy as np

    from tilegen.dsl import jit

    t = spec.dtype
    ct, nt = jit.CTYPES[t], jit.NP_DTYPES[t]
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    drive = kernel.symbol(DRIVE, None, i64, i64, i64, vp, i64, i64, vp, i64, i64, vp, i64, ct,
                          ct, vp)
    mr, nr, rows = spec.mr, spec.nr, spec.a_layout == "rows"
    has_bias = "bias" in spec.epilogue

    def prepare(a, b, c=None, *, alpha=1.0, beta=0.0, bias=None):
        """Checks and packs; the returned function runs the kernel loop and returns C."""
        a = jit.check_array("a", a, t, 2)
        m, k = a.shape
        b = jit.check_array("b", b, t, 2, shape=(k, None))
        n = b.shape[1]
        if has_bias:
            if bias is None:
                raise ValueError(f"bias: {spec.name} adds a bias; pass bias (length N = {n})")
            bias = jit.check_array("bias", bias, t, 1, shape=(n,))
        elif bias is not None:
            raise ValueError(f"bias: {spec.name} has no bias stage (epilogue {spec.epilogue})")
        if c is None:
            if beta != 0:
                raise ValueError("c: beta != 0 reads C; pass c")
            out = np.empty((m, n), dtype=nt)
        else:
            out = np.array(jit.check_array("c", c, t, 2, shape=(m, n)), order="C")
        if m == 0 or n == 0:
            return lambda: out
        blocks, kk = -(-m // mr), max(k, 1)
        padded = np.zeros((blocks * mr, kk), dtype=nt)
        padded[:m, :k] = a
        if rows:  # MR whole rows per panel (the kernel reads them all): the padded copy itself
            panels, stride = padded, kk
        else:  # MR-interleaved: element (i, kk) of a panel at kk * MR + i
            panels, stride = np.ascontiguousarray(
                padded.reshape(blocks, mr, kk).transpose(0, 2, 1)), mr
        # B's panels: NR columns each, k rows of NR (zero columns past n).
        nb = -(-n // nr)
        bpad = np.zeros((kk, nb * nr), dtype=nt)
        bpad[:k, :n] = b
        bpanels = np.ascontiguousarray(bpad.reshape(kk, nb, nr).transpose(1, 0, 2))

        def run():
            drive(m, n, k, panels.ctypes.data, mr * kk, stride, bpanels.ctypes.data, kk * nr,
                  nr, out.ctypes.data, n, alpha, beta, bias.ctypes.data if has_bias else None)
            return out
        return run

    doc = (
        f"{spec.name}: C = act(alpha * A @ B + beta * C + bias) for a (M, K) and b (K, N) "
        f"{np.dtype(nt)} arrays (rows contiguous, any row stride), c (M, N) read only when "
        f"beta != 0 (a new array is returned), bias (N,) when the kernel has the bias stage; "
        f"act: {', '.join(x for x in spec.epilogue if x != 'bias') or 'none'}. A is packed per "
        f"{mr} rows and B per {nr} columns, then a C loop calls the micro-kernel on each "
        f"{mr}x{nr} tile of C.")
    return jit.prepared_call(prepare, doc)


def _python_example(spec, dims, rng):
    import numpy as np

    from tilegen.dsl import jit

    m, n, k = dims
    nt = jit.NP_DTYPES[spec.dtype]
    a = rng.standard_normal((m, k)).astype(nt)
    b = rng.standard_normal((k, n)).astype(nt)
    kwargs = {}
    want = a.astype(np.float64) @ b.astype(np.float64)
    if "bias" in spec.epilogue:
        kwargs["bias"] = rng.standard_normal(n).astype(nt)
        want = want + kwargs["bias"]
    for stage in spec.epilogue:
        if stage in _CLAMPS:
            want = np.clip(want, *_CLAMPS[stage])
    eps = float(np.finfo(nt).eps)
    return jit.Example(args=(a, b), kwargs=kwargs, expected=want.astype(nt), work=2.0 * m * n * k,
                       unit="flop", shape=f"{m}x{n}x{k}", rtol=0.0,
                       atol=8 * eps * max(k, 1) * float(np.abs(a).max(initial=1)
                                                         * np.abs(b).max(initial=1)))

