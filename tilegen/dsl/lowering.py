"""Lowering: from a KernelSpec to the concrete plan a template renders.

The plan fixes the vector layout of the register tile (which loop runs along
the lanes, how many vectors per row), the k-loop unroll, the tail strategy and
the register allocation, and refuses what the register file cannot hold.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Tuple

from .isa import DTYPE_BYTES, Isa, VecOps, get_isa

if TYPE_CHECKING:  # pragma: no cover
    from .spec import KernelSpec


@dataclass(frozen=True)
class RegisterBudget:
    accumulators: int
    b_vectors: int
    a_broadcasts: int
    available: int

    @property
    def used(self) -> int:
        return self.accumulators + self.b_vectors + self.a_broadcasts


def register_budget(spec: "KernelSpec") -> RegisterBudget:
    isa = get_isa(spec.isa)
    lanes = isa.lanes(spec.dtype)
    if spec.op == "gemv":
        # MR x KR/lanes partial sums, one x vector per lane group, one A load.
        kv = spec.kr // lanes
        return RegisterBudget(spec.mr * kv, kv, 1, isa.num_vregs)
    nv = spec.nr // lanes
    # MR x NV accumulators, one row of B vectors per k step, one A broadcast.
    return RegisterBudget(spec.mr * nv, nv, 1, isa.num_vregs)


def _check_multiple(field: str, value: int, spec: "KernelSpec", what: str) -> None:
    lanes = isa_lanes(spec)
    if value % lanes:
        raise ValueError(
            f"{field}: {what}={value} is not a multiple of the {spec.isa} {spec.dtype} vector "
            f"width ({lanes} lanes); allowed values: multiples of {lanes}"
        )


def check_spec(spec: "KernelSpec") -> None:
    """The per-op shape rules and the register budget; ValueError naming the field."""
    if spec.op == "gemv":
        if spec.nr != 1:
            raise ValueError(f"nr: gemv kernels compute one column (NR=1), got NR={spec.nr}")
        _check_multiple("kr", spec.kr, spec, "KR")
    else:
        if spec.kr != 1:
            raise ValueError(f"kr: {spec.op} kernels take KR=1, got KR={spec.kr}")
        _check_multiple("nr", spec.nr, spec, "NR")
    b = register_budget(spec)
    if b.used > b.available:
        lanes = isa_lanes(spec)
        rule = (f"MR*KR/{lanes} + KR/{lanes} + 1" if spec.op == "gemv"
                else f"MR*NR/{lanes} + NR/{lanes} + 1")
        raise ValueError(
            f"tile: {spec.tile} needs {b.accumulators} accumulators + {b.b_vectors} "
            f"{'x' if spec.op == 'gemv' else 'B'} vectors + {b.a_broadcasts} "
            f"{'A load' if spec.op == 'gemv' else 'A broadcast'} = {b.used} vector registers, "
            f"over the {spec.isa} budget of {b.available}; allowed: {rule} <= {b.available}"
        )


def isa_lanes(spec: "KernelSpec") -> int:
    return get_isa(spec.isa).lanes(spec.dtype)


def row_addressing(mr: int) -> Tuple[Tuple[int, ...], Tuple[Tuple[int, int], ...]]:
    """How a kernel reaching A by rows addresses its MR rows with few registers.

    Row i is read as base_b + s * rs (bytes), with s in {0, 1, 2, 4, 8}: the scales x86
    addressing applies for free (other targets compute the address once per row). Returns the
    base rows and, per row, (base row, scale).
    """
    bases, rows = [], []
    for i in range(mr):
        hit = next(((b, i - b) for b in bases if i - b in (0, 1, 2, 4, 8)), None)
        if hit is None:
            bases.append(i)
            hit = (i, 0)
        rows.append(hit)
    return tuple(bases), tuple(rows)


@dataclass(frozen=True)
class GemmPlan:
    """Everything the GEMM template needs, already decided."""

    name: str
    dtype: str
    ctype: str
    mr: int
    nr: int
    lanes: int
    nv: int                    # vectors per row of the tile
    unroll: int
    tail: str
    epilogue: Tuple[str, ...]
    prefetch: int              # k steps ahead, 0 = off
    a_layout: str              # "packed": a[kk*cs_a + i]; "rows": a[i*rs_a + kk]
    row_bases: Tuple[int, ...]
    row_addr: Tuple[Tuple[int, int], ...]
    isa: Isa
    v: VecOps
    budget: RegisterBudget
    params_type: str
    kloop: str = "c"           # "c" or "asm" (inline assembly, registers fixed below)
    ksplit: int = 1            # accumulator sets the unrolled k steps rotate through (see below)

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


# Independent FMA chains a core needs in flight to keep its FMA units busy (latency x ports, with
# margin): a tile with fewer accumulators is latency-bound.
FMA_CHAINS = 8


def k_split(spec: "KernelSpec") -> int:
    """Accumulator sets for the intrinsics k loop: small tiles (one row, say) would wait on
    each accumulator's previous FMA, so their unrolled k steps add into separate sets, summed
    after the loop -- as many as the unroll, FMA_CHAINS and the register file allow."""
    isa = get_isa(spec.isa)
    accs = spec.mr * (spec.nr // isa.lanes(spec.dtype))
    if spec.op != "gemm" or spec.kloop != "c" or accs >= FMA_CHAINS:
        return 1
    spare = isa.num_vregs - register_budget(spec).used
    return max(1, min(spec.unroll, -(-FMA_CHAINS // accs), 1 + spare // accs))


def lower_gemm(spec: "KernelSpec") -> GemmPlan:
    isa = get_isa(spec.isa)
    v = isa.vec(spec.dtype)
    return GemmPlan(
        name=spec.name,
        dtype=spec.dtype,
        ctype=v.ctype,
        mr=spec.mr,
        nr=spec.nr,
        lanes=v.lanes,
        nv=spec.nr // v.lanes,
        unroll=spec.unroll,
        tail=spec.tail,
        epilogue=spec.epilogue,
        prefetch=spec.prefetch,
        a_layout=spec.a_layout,
        row_bases=row_addressing(spec.mr)[0],
        row_addr=row_addressing(spec.mr)[1],
        isa=isa,
        v=v,
        budget=register_budget(spec),
        params_type=f"tg_{spec.dtype}_gemm_params",
        kloop=spec.kloop,
        ksplit=k_split(spec),
    )


@dataclass(frozen=True)
class GemvPlan:
    name: str
    dtype: str
    ctype: str
    mr: int
    kr: int                    # k values per step
    lanes: int
    kv: int                    # vectors per row per step
    tail: str
    isa: Isa
    v: VecOps
    budget: RegisterBudget
    params_type: str


def lower_gemv(spec: "KernelSpec") -> GemvPlan:
    isa = get_isa(spec.isa)
    v = isa.vec(spec.dtype)
    return GemvPlan(
        name=spec.name, dtype=spec.dtype, ctype=v.ctype, mr=spec.mr, kr=spec.kr,
        lanes=v.lanes, kv=spec.kr // v.lanes, tail=spec.tail, isa=isa, v=v,
        budget=register_budget(spec), params_type=f"tg_{spec.dtype}_gemm_params",
    )


LOWERINGS = {"gemm": lower_gemm, "gemv": lower_gemv}


def lower(spec: "KernelSpec"):
    return LOWERINGS[spec.op](spec)
