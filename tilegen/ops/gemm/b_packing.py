"""The B packing routines a low-precision GEMM family generates for the ISAs that can interleave
B's rows in registers (templates/<family>/pack.c.j2): one routine per ISA and NR, named in each
kernel's registry row (NULL where the ISA has none: the driver's C loop packs B), linked into
the kernel's tester, which checks it against a plain loop."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence

from tilegen.dsl.family import ExtraFile
from tilegen.dsl.isa import ISAS


@dataclass(frozen=True)
class BPacking:
    family: str                       # the family's folder under templates/ and generated/
    dtype: str                        # its dtype token ("s8", "bf16")
    kr: int                           # k values per packed group
    ctype: str                        # B's C element type
    available: Callable[[str], bool]  # the ISA's table spells what the template needs

    def name(self, isa: str, nr: int) -> str:
        return f"tg_{self.dtype}_packb_{nr}c{self.kr}__{isa}"

    def path(self, isa: str) -> str:
        return os.path.join("tilegen", "generated", self.family, "pack",
                            f"tg_{self.dtype}_pack__{isa}.c")

    def row_field(self, spec) -> str:
        """The kernel's registry-row column: its ISA's routine for its NR, or NULL."""
        return self.name(spec.isa, spec.nr) if self.available(spec.isa) else "NULL"

    def files(self, entries: Sequence, env, registry_file: str) -> List[ExtraFile]:
        """Per ISA that has them, one file: a routine for every NR of its kernels."""
        nrs: Dict[str, set] = {}
        for e in entries:
            if self.available(e.spec.isa):
                nrs.setdefault(e.spec.isa, set()).add(e.spec.nr)
        template = f"{self.family}/pack.c.j2"
        out = []
        for isa, sizes in sorted(nrs.items()):
            body = env.get_template(template).render(isa=ISAS[isa], nrs=sorted(sizes))
            decls = tuple(f"void {self.name(isa, nr)}(int64_t, int64_t, const {self.ctype}*, "
                          f"int64_t, {self.ctype}*, int64_t);" for nr in sorted(sizes))
            out.append(ExtraFile(path=self.path(isa), content=body, template=template,
                                 note=f"{registry_file}: the NR of every {self.dtype} {isa} kernel",
                                 isa=isa, declarations=decls))
        return out

    def tester_defines(self, spec) -> Dict[str, object]:
        return {"TG_PACKB": self.name(spec.isa, spec.nr)} if self.available(spec.isa) else {}

    def tester_sources(self, spec) -> List[str]:
        return [self.path(spec.isa)] if self.available(spec.isa) else []
