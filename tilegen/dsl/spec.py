"""KernelSpec: one micro-kernel's schedule, and the name schema that encodes it.

A name is ``tg_<dtype>_<op token>[_<epilogue>...]_ukernel_<MR>x<NR>[c<KR>]__<isa>[_<variant>]``;
`format_name` and `parse_name` are the only code that knows that spelling. The op token is the
family's (its name, or a token carrying fields such as a kernel size and stride), and so are the leading
variant tokens (``rows``): each family encodes and decodes its own fields.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Tuple

from .isa import DTYPES, ISAS, get_isa
from .family import FAMILIES, OpFamily, family_of_token, get_family

MAX_UNROLL = 16

# The fields every family has, with their defaults (tail None: the ISA's default strategy).
COMMON_FIELDS: Mapping[str, Any] = {
    "kr": 1, "unroll": 1, "epilogue": (), "tail": None, "prefetch": 0, "kloop": "c",
    "variant": "",
}

_NAME_RE = re.compile(
    r"^tg_(?P<dtype>[a-z0-9]+)_(?P<op>[a-z0-9]+)(?P<epilogue>(?:_[a-z0-9]+)*?)"
    r"_ukernel_(?P<mr>[0-9]+)x(?P<nr>[0-9]+)(?:c(?P<kr>[0-9]+))?"
    r"__(?P<isa>[a-z0-9]+)(?:_(?P<variant>[a-z0-9_]+))?$"
)
NAME_SCHEMA = "tg_<dtype>_<op>[_<epilogue>]_ukernel_<MR>x<NR>[c<KR>]__<isa>[_<variant>]"


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


class KernelSpec:
    """What to generate: an op family on a dtype, its register tile and its schedule.

    ``KernelSpec(op, dtype, isa, mr, nr, **fields)`` takes the common fields (COMMON_FIELDS)
    and the family's own (its `fields`: an operand layout, a kernel size...), read back as
    attributes. Constructing a spec validates it completely, register budget included, so an
    invalid kernel can never reach a template. Specs are immutable and compare by value.
    """

    __slots__ = ("op", "dtype", "isa", "mr", "nr", "kr", "unroll", "epilogue", "tail",
                 "prefetch", "kloop", "variant", "options")

    def __init__(self, op: str, dtype: str, isa: str, mr: int, nr: int, **fields: Any) -> None:
        family = get_family(op)
        unknown = sorted(set(fields) - set(COMMON_FIELDS) - set(family.fields))
        if unknown:
            raise ValueError(
                f"{unknown[0]}: not a field of {op} kernels; allowed: "
                f"{', '.join(list(COMMON_FIELDS) + list(family.fields))}")
        common = {k: fields.get(k, v) for k, v in COMMON_FIELDS.items()}
        options = {k: fields.get(k, d) for k, (d, _) in family.fields.items()}
        set_ = object.__setattr__
        for k, v in dict(op=op, dtype=dtype, isa=isa, mr=mr, nr=nr, **common).items():
            set_(self, k, v)
        set_(self, "options", tuple(options.items()))
        self._validate(family)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"KernelSpec is immutable; use .replace({name}=...)")

    def __getattr__(self, name: str) -> Any:
        for k, v in object.__getattribute__(self, "options"):
            if k == name:
                return v
        raise AttributeError(f"{name}: not a field of {self.op} kernels")

    def as_dict(self) -> Dict[str, Any]:
        d = {k: getattr(self, k) for k in ("op", "dtype", "isa", "mr", "nr", *COMMON_FIELDS)}
        d.update(self.options)
        return d

    def _key(self) -> Tuple:
        return tuple(sorted((k, v) for k, v in self.as_dict().items() if k != "variant")) + (
            ("variant", self.variant),)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KernelSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items())
        return f"KernelSpec({args})"

    @property
    def family(self) -> OpFamily:
        return FAMILIES[self.op]

    def _validate(self, family: OpFamily) -> None:
        _allowed("dtype", self.dtype, family.dtypes if self.dtype in DTYPES else tuple(DTYPES))
        _allowed("isa", self.isa, tuple(ISAS))
        for f in ("mr", "nr", "kr", "unroll"):
            _positive_int(f, getattr(self, f))
        if self.unroll > MAX_UNROLL:
            raise ValueError(f"unroll: {self.unroll} is over the limit of {MAX_UNROLL}")
        if isinstance(self.prefetch, bool) or not isinstance(self.prefetch, int) or self.prefetch < 0:
            raise ValueError(f"prefetch: expected a non-negative integer, got {self.prefetch!r}")
        for k, (_, allowed) in family.fields.items():
            v = getattr(self, k)
            if allowed is None:
                _positive_int(k, v)
            else:
                _allowed(k, v, allowed)
        epi = (self.epilogue,) if isinstance(self.epilogue, str) else tuple(self.epilogue)
        object.__setattr__(self, "epilogue", epi)
        for e in epi:
            _allowed("epilogue", e, family.epilogues)
        order = list(family.epilogues)
        if len(set(epi)) != len(epi) or list(epi) != sorted(epi, key=order.index):
            raise ValueError(
                f"epilogue: {list(epi)} must list distinct stages in the order {order}")
        if "relu" in epi and "relu6" in epi:
            raise ValueError("epilogue: relu and relu6 are exclusive")
        isa = get_isa(self.isa)
        vec = isa.ops.get(self.dtype)
        allowed_tails = ("mask", "temp") if vec is not None and vec.mask_type else ("temp",)
        # The ISA's default strategy where the dtype has it (integer types have no masks).
        tail = self.tail if self.tail is not None else (
            isa.tail if isa.tail in allowed_tails else "temp")
        _allowed("tail", tail, allowed_tails)
        object.__setattr__(self, "tail", tail)
        _allowed("kloop", self.kloop, family.kloops)
        if self.kloop == "asm":
            if vec is None or vec.asm is None or not isa.asm_guard:
                raise ValueError(f"kloop: {self.isa} has no inline-assembly k loop; allowed: c")
        if self.variant and not re.fullmatch(r"[a-z0-9_]+", self.variant):
            raise ValueError(f"variant: {self.variant!r} must match [a-z0-9_]+")
        family.check(self)
        budget = family.register_budget(self)
        if budget.used > budget.available:
            raise ValueError(
                f"tile: {self.tile} needs {budget.accumulators} accumulators + {budget.inputs} "
                f"{budget.input_name} vectors + {budget.broadcasts} {budget.broadcast_name} = "
                f"{budget.used} vector registers, over the {self.isa} budget of "
                f"{budget.available}; allowed: {family.budget_rule(self)} <= {budget.available}"
                + self._largest_fitting(family))

    def _largest_fitting(self, family: OpFamily) -> str:
        """'; the largest ... that fits is 6x16' (same NR and KR, fewer rows), or ''."""
        from types import SimpleNamespace

        for mr in range(self.mr - 1, 0, -1):
            smaller = SimpleNamespace(**{**self.as_dict(), "mr": mr})
            try:
                family.check(smaller)  # e.g. MR a multiple of the lanes
            except ValueError:
                continue
            fits = family.register_budget(smaller)
            if fits.used <= fits.available:
                try:  # the family's own rules too (neondot's int8 MR is a multiple of 4)
                    self.replace(mr=mr)
                except ValueError:
                    continue
                tile = f"{mr}x{self.nr}" + (f"c{self.kr}" if self.kr > 1 else "")
                return f"; the largest {self.isa} tile with NR={self.nr} that fits is {tile}"
        return ""

    @property
    def name(self) -> str:
        return format_name(self)

    @property
    def tile(self) -> str:
        return f"{self.mr}x{self.nr}" + (f"c{self.kr}" if self.kr > 1 else "")

    @property
    def template(self) -> str:
        return self.family.template_for(self)

    def replace(self, **changes: Any) -> "KernelSpec":
        return KernelSpec(**{**self.as_dict(), **changes})


def format_name(spec: KernelSpec) -> str:
    family = spec.family
    epi = "".join(f"_{e}" for e in spec.epilogue)
    kr = f"c{spec.kr}" if spec.kr > 1 else ""
    tokens = family.variant_tokens(spec) + ([spec.variant] if spec.variant else [])
    variant = "".join(f"_{t}" for t in tokens)
    return (f"tg_{spec.dtype}_{family.op_token(spec)}{epi}_ukernel_{spec.mr}x{spec.nr}{kr}"
            f"__{spec.isa}{variant}")


def parse_name(name: str) -> Dict[str, Any]:
    """Split a kernel name into its fields (the inverse of `format_name`)."""
    m = _NAME_RE.match(name)
    if not m:
        raise ValueError(f"name: {name!r} does not follow {NAME_SCHEMA}")
    g = m.groupdict()
    family, op_fields = family_of_token(g["op"], g["dtype"])
    variant_fields, variant = family.parse_variant(g["variant"] or "")
    return {
        "dtype": g["dtype"],
        "op": family.name,
        "epilogue": tuple(e for e in g["epilogue"].split("_") if e),
        "mr": int(g["mr"]),
        "nr": int(g["nr"]),
        "kr": int(g["kr"]) if g["kr"] else 1,
        "isa": g["isa"],
        **op_fields,
        **variant_fields,
        "variant": variant,
    }


def spec_from_name(name: str, **schedule: Any) -> KernelSpec:
    """A KernelSpec from its name; schedule fields the name lacks (unroll...) as keywords."""
    return KernelSpec(**{**parse_name(name), **schedule})


def parse_tile(tile: str) -> Tuple[int, int, int]:
    m = re.fullmatch(r"([0-9]+)x([0-9]+)(?:c([0-9]+))?", str(tile).strip())
    if not m:
        raise ValueError(f"tile: {tile!r} is not of the form MRxNR or MRxNRcKR (e.g. 14x32)")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)

