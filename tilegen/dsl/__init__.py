"""tilegen.dsl: describe micro-kernels, check them against the hardware, render them to C.

Pure Python (jinja2 and pyyaml only); the generator never imports the compiled runtime. Each
kernel family (a plug-in in its op's folder, tilegen/ops/<op>/<family>.py) gets a builder here,
``tilegen.dsl.<family>(dtype)``, with the schedule verbs of builder.py (the README shows one).
``tilegen.dsl.compile(spec)`` compiles one kernel with the system C compiler and returns it as a
callable over NumPy arrays (jit.py, imported on first use: it needs NumPy, and the compiled core
to probe the CPU).
"""
import functools

from .builder import F32, F64, KernelBuilder, op
from .isa import DTYPES, FEATURES, FLOAT_DTYPES, ISAS, IntOps, Isa, VecOps, get_isa
from .lowering import lower, register_budget
from .family import FAMILIES, OpFamily, get_family
from .registry import Entry, load_registry, registry_path, select, serving_isa
from .spec import KernelSpec, format_name, parse_name, parse_tile, spec_from_name

_JIT = ("CompiledKernel", "CompilerNotFoundError", "JitError", "UnsupportedISAError", "compile")


def __getattr__(name: str):
    """tilegen.dsl.<family>(dtype): the builder of any family (``<family>(F32).tile(...)``);
    tilegen.dsl.compile and its exceptions (jit.py)."""
    if name in _JIT:
        from . import jit

        return getattr(jit, name)
    if not name.startswith("_") and name in FAMILIES:
        return functools.partial(op, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CompiledKernel", "CompilerNotFoundError", "JitError", "UnsupportedISAError", "compile",
    "DTYPES", "F32", "F64", "FAMILIES", "FEATURES", "FLOAT_DTYPES", "ISAS", "Entry",
    "IntOps", "Isa", "KernelBuilder", "KernelSpec", "OpFamily", "VecOps", "format_name",
    "get_family", "get_isa", "load_registry", "lower", "op", "parse_name", "parse_tile",
    "register_budget", "registry_path", "select", "serving_isa", "spec_from_name",
]
