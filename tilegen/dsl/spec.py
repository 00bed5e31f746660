"""KernelSpec: one micro-kernel's schedule, and the name schema that encodes it.

A name is ``tg_<dtype>_<op>[_<epilogue>...]_ukernel_<MR>x<NR>[c<KR>]__<isa>[_<variant>]``;
`format_name` and `parse_name` are the only code that knows that spelling.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Mapping, Optional, Tuple

from .isa import DTYPES, ISAS, get_isa


@dataclass(frozen=True)
class OpFamily:
    template: str                   # Jinja2 template under tilegen/templates/
    vector_dim: str                 # the loop that runs along SIMD lanes
    epilogues: Tuple[str, ...]      # fusable epilogue stages


OPS: Mapping[str, OpFamily] = {
    # C[MR x NR] += A[MR x k] B[k x NR]: n along the lanes, A broadcast, KR = 1.
    "gemm": OpFamily(template="gemm_ukernel.c.j2", vector_dim="n",
                     epilogues=("bias", "relu", "relu6")),
    # y[MR] = A[MR x k] x[k] with rows contiguous along k: k along the lanes, KR k values
    # (a multiple of the vector width) per step, NR = 1.
    "gemv": OpFamily(template="gemv_ukernel.c.j2", vector_dim="k", epilogues=()),
}

# Compile-time epilogue stages a kernel may fuse, applied in this order.
EPILOGUES: Tuple[str, ...] = ("bias", "relu", "relu6")
# How a GEMM kernel reads A: "packed" MR-interleaved panels (element (i, kk) at a[kk*cs_a + i]),
# or "rows" (element at a[i*rs_a + kk]: row-major A in place, or panels packed by plain row copies).
# The name marks "rows" kernels with the variant token "rows".
A_LAYOUTS: Tuple[str, ...] = ("packed", "rows")
# How the k loop is written: "c" (the ISA's intrinsics) or "asm" (GNU inline assembly with a
# fixed register allocation, where the ISA table has the mnemonics; the intrinsics loop stays
# as the fallback for other compilers). A schedule detail: it does not enter the name.
KLOOPS: Tuple[str, ...] = ("c", "asm")
MAX_UNROLL = 16

_NAME_RE = re.compile(
    r"^tg_(?P<dtype>[a-z0-9]+)_(?P<op>[a-z0-9]+)(?P<epilogue>(?:_[a-z0-9]+)*?)"
    r"_ukernel_(?P<mr>[0-9]+)x(?P<nr>[0-9]+)(?:c(?P<kr>[0-9]+))?"
    r"__(?P<isa>[a-z0-9]+)(?:_(?P<variant>[a-z0-9_]+))?$"
)


def _allowed(field_name: str, value: Any, allowed) -> None:
    if value not in allowed:
        raise ValueError(
            f"{field_name}: {value!r} is not supported; allowed values: "
            f"{', '.join(str(a) for a in allowed)}"
        )


def _positive_int(field_name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{field_name}: expected a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{field_name}: expected a positive integer, got {value}")
    return value


@dataclass(frozen=True)
class KernelSpec:
    """What to generate: an op on a dtype, its register tile and its schedule.

    Constructing a spec validates it completely, register budget included, so
    an invalid kernel can never reach a template.
    """

    op: str
    dtype: str
    mr: int
    nr: int
    isa: str
    kr: int = 1
    unroll: int = 1
    epilogue: Tuple[str, ...] = ()
    tail: Optional[str] = None       # None: the ISA's default tail strategy
    prefetch: int = 0                # distance (k steps) to prefetch A and B ahead (asm: B); 0 = none
    a_layout: str = "packed"         # gemm: "packed" (MR values per k step) or "rows" (A by rows)
    kloop: str = "c"                 # "c": intrinsics; "asm": inline assembly (see KLOOPS)
    variant: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        _allowed("op", self.op, tuple(OPS))
        _allowed("dtype", self.dtype, tuple(DTYPES))
        _allowed("isa", self.isa, tuple(ISAS))
        _positive_int("mr", self.mr)
        _positive_int("nr", self.nr)
        _positive_int("kr", self.kr)
        _positive_int("unroll", self.unroll)
        if self.unroll > MAX_UNROLL:
            raise ValueError(f"unroll: {self.unroll} is over the limit of {MAX_UNROLL}")
        if isinstance(self.prefetch, bool) or not isinstance(self.prefetch, int) or self.prefetch < 0:
            raise ValueError(f"prefetch: expected a non-negative integer, got {self.prefetch!r}")
        epi = (self.epilogue,) if isinstance(self.epilogue, str) else tuple(self.epilogue)
        object.__setattr__(self, "epilogue", epi)
        for e in epi:
            _allowed("epilogue", e, OPS[self.op].epilogues)
        if len(set(epi)) != len(epi) or list(epi) != sorted(epi, key=EPILOGUES.index):
            raise ValueError(
                f"epilogue: {list(epi)} must list distinct stages in the order {list(EPILOGUES)}"
            )
        if "relu" in epi and "relu6" in epi:
            raise ValueError("epilogue: relu and relu6 are exclusive")
        isa = get_isa(self.isa)
        tail = self.tail if self.tail is not None else isa.tail
        allowed_tails = ("mask", "temp") if isa.vec(self.dtype).mask_type else ("temp",)
        _allowed("tail", tail, allowed_tails)
        object.__setattr__(self, "tail", tail)
        _allowed("a_layout", self.a_layout, A_LAYOUTS if self.op == "gemm" else ("packed",))
        _allowed("kloop", self.kloop, KLOOPS if self.op == "gemm" else ("c",))
        if self.kloop == "asm":
            if isa.vec(self.dtype).asm is None or not isa.asm_guard:
                raise ValueError(f"kloop: {self.isa} has no inline-assembly k loop; allowed: c")
        if self.variant and not re.fullmatch(r"[a-z0-9_]+", self.variant):
            raise ValueError(f"variant: {self.variant!r} must match [a-z0-9_]+")
        from .lowering import check_spec  # lowering owns the per-op shape and register rules

        check_spec(self)

    @property
    def name(self) -> str:
        return format_name(self)

    @property
    def tile(self) -> str:
        return f"{self.mr}x{self.nr}" + (f"c{self.kr}" if self.kr > 1 else "")

    @property
    def template(self) -> str:
        return OPS[self.op].template

    def replace(self, **changes) -> "KernelSpec":
        return replace(self, **changes)

    def render(self) -> str:
        from .render import render_kernel

        return render_kernel(self, note=f"not in the registry; built from the spec of {self.name}")


def format_name(spec: KernelSpec) -> str:
    epi = "".join(f"_{e}" for e in spec.epilogue)
    kr = f"c{spec.kr}" if spec.kr > 1 else ""
    tokens = (["rows"] if spec.a_layout == "rows" else []) + ([spec.variant] if spec.variant else [])
    variant = "".join(f"_{t}" for t in tokens)
    return f"tg_{spec.dtype}_{spec.op}{epi}_ukernel_{spec.mr}x{spec.nr}{kr}__{spec.isa}{variant}"


def parse_name(name: str) -> Dict[str, Any]:
    """Split a kernel name into its fields (the inverse of `format_name`)."""
    m = _NAME_RE.match(name)
    if not m:
        raise ValueError(
            f"name: {name!r} does not follow "
            "tg_<dtype>_<op>[_<epilogue>]_ukernel_<MR>x<NR>[c<KR>]__<isa>[_<variant>]"
        )
    g = m.groupdict()
    variant = g["variant"] or ""
    a_layout = "packed"
    if variant == "rows" or variant.startswith("rows_"):
        a_layout, variant = "rows", variant[5:]
    return {
        "dtype": g["dtype"],
        "op": g["op"],
        "epilogue": tuple(e for e in g["epilogue"].split("_") if e),
        "mr": int(g["mr"]),
        "nr": int(g["nr"]),
        "kr": int(g["kr"]) if g["kr"] else 1,
        "isa": g["isa"],
        "a_layout": a_layout,
        "variant": variant,
    }


def spec_from_name(name: str, **schedule) -> KernelSpec:
    """A KernelSpec from its name; schedule fields the name lacks (unroll...) as keywords."""
    return KernelSpec(**{**parse_name(name), **schedule})


def parse_tile(tile: str) -> Tuple[int, int, int]:
    m = re.fullmatch(r"([0-9]+)x([0-9]+)(?:c([0-9]+))?", str(tile).strip())
    if not m:
        raise ValueError(f"tile: {tile!r} is not of the form MRxNR or MRxNRcKR (e.g. 14x32)")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
