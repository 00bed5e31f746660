"""The fluent schedule builder: the same verbs as a registry entry, written as code.

    op(<family>, F32).tile(m=14, n=32).vectorize("n").unroll("k", 4).epilogue("bias", "relu")
                      .target("avx512")

Each verb returns a new builder; `.spec` validates and builds the KernelSpec. Every family has a
builder: ``op(<family>, dtype)``, or ``<family>(dtype)`` from this module or tilegen.dsl. Verbs
check what they can against the family at once (the loop it vectorizes, its epilogue stages and
fields); `.spec` checks the rest (tile, register budget, ISA).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Dict

from .family import FAMILIES, get_family
from .render import render_kernel
from .spec import KernelSpec

F32 = "f32"
F64 = "f64"


@dataclass(frozen=True)
class KernelBuilder:
    op: str
    dtype: str
    fields: Dict[str, object] = field(default_factory=dict)

    def _with(self, **kw) -> "KernelBuilder":
        return replace(self, fields={**self.fields, **kw})

    def tile(self, m: int, n: int, k: int = 1) -> "KernelBuilder":
        return self._with(mr=m, nr=n, kr=k)

    def vectorize(self, loop: str) -> "KernelBuilder":
        want = FAMILIES[self.op].vector_dim if self.op in FAMILIES else None
        if loop != want:
            raise ValueError(f"vectorize: {self.op} kernels vectorize loop {want!r}, not {loop!r}")
        return self

    def unroll(self, loop: str, factor: int) -> "KernelBuilder":
        if loop != "k":
            raise ValueError(f"unroll: only the reduction loop 'k' is unrolled, not {loop!r}")
        return self._with(unroll=factor)

    def prefetch(self, distance: int) -> "KernelBuilder":
        return self._with(prefetch=distance)

    def kloop(self, how: str) -> "KernelBuilder":
        return self._with(kloop=how)

    def tail(self, strategy: str) -> "KernelBuilder":
        return self._with(tail=strategy)

    def epilogue(self, *stages: str) -> "KernelBuilder":
        allowed = FAMILIES[self.op].epilogues
        for stage in stages:
            if stage not in allowed:
                raise ValueError(f"epilogue: {self.op} kernels fuse {', '.join(allowed) or 'no stage'}"
                                 f", not {stage!r}")
        return self._with(epilogue=tuple(stages))

    def variant(self, name: str) -> "KernelBuilder":
        return self._with(variant=name)

    def set(self, **fields) -> "KernelBuilder":
        """Family fields (a_layout="rows", kh=3, ...)."""
        own = FAMILIES[self.op].fields
        for name in fields:
            if name not in own:
                raise ValueError(f"{name}: not a field of {self.op} kernels; allowed: "
                                 f"{', '.join(own) or 'none'}")
        return self._with(**fields)

    def target(self, isa: str) -> "KernelBuilder":
        return self._with(isa=isa)

    @property
    def spec(self) -> KernelSpec:
        missing = [f for f in ("mr", "nr", "isa") if f not in self.fields]
        if missing:
            verbs = {"mr": ".tile()", "nr": ".tile()", "isa": ".target()"}
            raise ValueError(
                f"{missing[0]}: not set; call {verbs[missing[0]]} before building the kernel")
        return KernelSpec(op=self.op, dtype=self.dtype, **self.fields)

    @property
    def name(self) -> str:
        return self.spec.name

    def render(self) -> str:
        spec = self.spec
        return render_kernel(spec, note=f"not in the registry; built from the spec of {spec.name}")


def op(name: str, dtype: str) -> KernelBuilder:
    """A builder for any family: op(<family>, F32).tile(...)...; tilegen.dsl.<family>(F32) is
    the same (tilegen/dsl/__init__.py). ValueError for an unknown family or a dtype it lacks."""
    family = get_family(name)
    if dtype not in family.dtypes:
        raise ValueError(f"dtype: {name} kernels take {', '.join(family.dtypes)}, not {dtype!r}")
    return KernelBuilder(op=name, dtype=dtype)


def __getattr__(name: str):
    """<family>(dtype): the builder of every family (`from tilegen.dsl.builder import ...`)."""
    if not name.startswith("_") and name in FAMILIES:
        return functools.partial(op, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
