"""Kernel families as plug-ins.

A family (a module ``tilegen/ops/<op>/<family>.py`` holding one ``FAMILY`` object, listed in its
op's op.yaml) owns everything about its kernels that shared code must not know: its schedule
fields and name tokens, shape rules and register budget, the lowering to a template plan, its C
prototypes and dispatch-table rows, its registry rules, any extra generated files, how its C
tester is built and what that tester must cover. The spec, registry, renderer, header template
and C dispatcher only ever talk to a family through this interface.

Adding a family to an op: the module, templates/<family>/ and <family>.yaml in the op's folder,
its name in op.yaml's families, a driver that selects from the generated
TG_FOREACH_<FAMILY>_UKERNEL_<dtype> lists, and testers/<family>_ukernel_tester.c.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import (TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Sequence,
                    Tuple)

from .isa import FLOAT_DTYPES, get_isa

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Entry
    from .spec import KernelSpec


@dataclass(frozen=True)
class RegisterBudget:
    """Vector registers a tile needs, by role, against what the ISA has."""

    accumulators: int
    inputs: int                # vectors loaded per step (B rows, x, weights...)
    broadcasts: int            # broadcast / scratch registers
    available: int
    input_name: str = "B"
    broadcast_name: str = "A broadcast"

    @property
    def used(self) -> int:
        return self.accumulators + self.inputs + self.broadcasts


class OpFamily:
    """The interface every family implements (defaults suit a simple family)."""

    name: str = ""
    template: str = ""                          # "<family>/ukernel.c.j2" under templates/
    types_template: Optional[str] = None        # C typedefs, rendered once per dtype
    vector_dim: str = ""                        # the loop that runs along SIMD lanes
    epilogues: Tuple[str, ...] = ()             # fusable epilogue stages, in order
    dtypes: Tuple[str, ...] = FLOAT_DTYPES
    kloops: Tuple[str, ...] = ("c",)
    # Family schedule fields: name -> (default, allowed values or None for "positive int").
    fields: Mapping[str, Tuple[Any, Optional[Tuple[Any, ...]]]] = {}
    # The C function the dispatcher calls (under its lock) to fill this family's tables,
    # or None when another family of the op selects these kernels too.
    c_select: Optional[str] = None
    # X-macro row documentation: X(<this>) in the generated header.
    c_row_doc: str = ""
    # Set by discovery: the op whose folder holds this family.
    op: str = ""

    def template_for(self, spec: "KernelSpec") -> str:
        """The template of one kernel (a family with layout variants may have several)."""
        return self.template

    # --- names: tg_<dtype>_<op token>[_<epilogue>]_ukernel_<tile>__<isa>[_<variant tokens>] ---
    def op_token(self, spec: "KernelSpec") -> str:
        return self.name

    def parse_op_token(self, token: str) -> Optional[Dict[str, Any]]:
        """The family fields an op token encodes, or None when the token is not this family's."""
        return {} if token == self.name else None

    def variant_tokens(self, spec: "KernelSpec") -> List[str]:
        return []

    def parse_variant(self, variant: str) -> Tuple[Dict[str, Any], str]:
        """(fields, the rest of the variant) from a name's variant part."""
        return {}, variant

    # --- validation ---
    def check(self, spec: "KernelSpec") -> None:
        """Shape rules beyond the common ones; ValueError naming the field."""

    def register_budget(self, spec: "KernelSpec") -> RegisterBudget:
        raise NotImplementedError

    def budget_rule(self, spec: "KernelSpec") -> str:
        """The register budget as a formula, for the error message."""
        raise NotImplementedError

    def lower(self, spec: "KernelSpec") -> Any:
        """The plan the family's template renders."""
        raise NotImplementedError

    # --- C ---
    def c_declaration(self, spec: "KernelSpec") -> str:
        raise NotImplementedError

    def c_row(self, entry: "Entry") -> str:
        """The arguments of this kernel's X(...) row in its dispatch list."""
        raise NotImplementedError

    # --- registry ---
    def validate_registry(self, entries: Sequence["Entry"], where: str) -> None:
        """Rules across one family's entries (sets that must share an NR, say)."""

    def extra_files(self, entries: Sequence["Entry"], env) -> List["ExtraFile"]:
        """Generated files beyond one per kernel (packing routines, say)."""
        return []

    def c_constants(self) -> str:
        """C macros the family's driver reads besides its kernel lists (default block sizes)."""
        return ""

    # --- its C tester (testers/<family>_ukernel_tester.c in the op's folder) ---
    def tester_defines(self, spec: "KernelSpec") -> Dict[str, object]:
        """The tester's own -D flags for one kernel (besides the common TG_T, TG_UKERNEL...)."""
        return {"TG_MR": spec.mr, "TG_NR": spec.nr}

    def tester_sources(self, spec: "KernelSpec") -> List[str]:
        """Generated files the tester links besides the kernel (paths under the tree root)."""
        return []

    def tester_coverage(self, spec: "KernelSpec") -> Dict[str, int]:
        """Every dimension the kernel tiles, with its step (rows MR, columns NR, the unrolled k,
        keys per score tile, values per chunk...), read from the spec: the tester must call the
        kernel with every remainder 0..step-1 of each, alone and (where the kernel loops past
        the step) after full steps. It prints `COVER <dim> STEP <step> ALONE <list> AFTER
        <list>` for what it ran (tests/c/ukernel_tester.h), and tests/test_ukernels.py holds
        that against this. The default is an MR x NR tile's rows and columns."""
        return {"m": spec.mr, "n": spec.nr}

    def tester_clamps(self, spec: "KernelSpec") -> Dict[str, Tuple[float, ...]]:
        """The clamped activations the kernel may apply, each with its clamp points: the tester
        must feed every position of the tile exact results on both sides of each point
        (`CLAMP <act> <point> POSITIONS <p> BELOW <b> ABOVE <a>`, b = a = p)."""
        return {}

    @property
    def tester(self) -> str:
        """The tester's path, relative to the tree root."""
        return f"tilegen/ops/{self.op}/testers/{self.name}_ukernel_tester.c"

    @property
    def registry_file(self) -> str:
        return f"tilegen/ops/{self.op}/{self.name}.yaml"

    # --- tilegen.dsl.compile (jit.py): the kernel called from Python ---
    # The sizes a bench problem takes (`tilegen emit --compile --bench --shape`), with defaults.
    example_dims: Tuple[Tuple[str, int], ...] = ()

    def python_call(self, spec: "KernelSpec", kernel: Any) -> Any:
        """A callable over NumPy arrays that runs the compiled kernel (`kernel.function(...)`
        gives its C function); its docstring says what it computes. It checks its arguments
        (jit.check_array) before any call. A family without one cannot be compiled from
        Python (only rendered)."""
        raise NotImplementedError(f"{self.name}: no python_call")

    def python_driver(self, spec: "KernelSpec") -> str:
        """C source compiled with the kernel for python_call: a loop over the kernel's tiles,
        say, where calling it tile by tile from Python would time ctypes rather than the
        kernel. Its entry points are marked visibility("default") (the build hides the rest)
        and reached through kernel.symbol(...). Empty: none."""
        return ""

    @property
    def has_python_call(self) -> bool:
        return type(self).python_call is not OpFamily.python_call

    def python_example(self, spec: "KernelSpec", dims: Sequence[int], rng: Any) -> Any:
        """A bench problem of sizes `dims` (example_dims' order): a jit.Example whose args the
        python_call takes, with NumPy's answer."""
        raise NotImplementedError(f"{self.name}: no python_example")

    # --- helpers for subclasses ---
    @staticmethod
    def lanes(spec: "KernelSpec") -> int:
        return get_isa(spec.isa).lanes(spec.dtype)

    def check_multiple(self, field: str, value: int, spec: "KernelSpec", what: str) -> None:
        lanes = self.lanes(spec)
        if value % lanes:
            raise ValueError(
                f"{field}: {what}={value} is not a multiple of the {spec.isa} {spec.dtype} "
                f"vector width ({lanes} lanes); allowed values: multiples of {lanes}")


@dataclass(frozen=True)
class ExtraFile:
    """A generated file a family adds: its path, content (without the generated-file header),
    the template and registry note for that header, the ISA whose flags compile it, and the C
    declarations it contributes to tg_ukernels.h."""

    path: str
    content: str
    template: str
    note: str
    isa: str
    declarations: Tuple[str, ...] = ()


class _Families(Mapping[str, OpFamily]):
    """Every family of every op (tilegen/ops/*/op.yaml), by name, loaded on first use: the
    family modules import this one."""

    def __init__(self) -> None:
        self._found: Optional[Dict[str, OpFamily]] = None

    def _load(self) -> Dict[str, OpFamily]:
        if self._found is None:
            from tilegen.ops import OPS

            found: Dict[str, OpFamily] = {}
            for op in OPS.values():
                for name in op.families:
                    module = importlib.import_module(f"{op.package}.{name}")
                    family = getattr(module, "FAMILY", None)
                    if family is None or family.name != name:
                        raise ValueError(f"{op.package}.{name} must define FAMILY named {name!r}")
                    family.op = op.name
                    found[name] = family
            self._found = dict(sorted(found.items()))
        return self._found

    def __getitem__(self, name: str) -> OpFamily:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


FAMILIES: Mapping[str, OpFamily] = _Families()


def get_family(name: str) -> OpFamily:
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(
            f"op: {name!r} is not supported; allowed values: {', '.join(FAMILIES)}") from None


def family_of_token(token: str, dtype: Optional[str] = None) -> Tuple[OpFamily, Dict[str, Any]]:
    """The family an op token names (for `dtype`, when families of different dtypes share a
    token), and the fields it encodes (a token may carry some, such as a kernel size and
    stride)."""
    for family in FAMILIES.values():
        fields = family.parse_op_token(token)
        if fields is not None and (dtype is None or dtype in family.dtypes):
            return family, fields
    raise ValueError(f"op: {token!r} is not the op token of any family ({', '.join(FAMILIES)})")
