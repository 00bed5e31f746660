"""tilegen.dsl.compile: try a kernel from Python, without regenerating or rebuilding the package.

    k = tilegen.dsl.compile(tilegen.dsl.op(<family>, "f32").tile(m=4, n=16).target("avx2"))
    c = k(a, b)        # the family's callable (its `python_call`): NumPy arrays in and out

The spec (a KernelSpec, a builder, a registry-style dict or a kernel name) is rendered as
`tilegen emit` renders it, compiled by the system C compiler with the flags the package's
build gives that ISA (isa.BASE_CFLAGS + the ISA table's cflags: the source setup.py reads), and
the shared object is cached under the user's cache folder by a hash of the sources, the flags
and the compiler's identity, so the second compile of the same kernel is a load. The object is
loaded with ctypes; what a call means (shapes, dtypes, the loop around the micro-kernel) is the
family's, in its module (OpFamily.python_call), so this file names none.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import ml_dtypes
import numpy as np

from .isa import BASE_CFLAGS, get_isa, host_arch
from .spec import KernelSpec, spec_from_name

# The C type of each element type, for ctypes.
CTYPES: Dict[str, Any] = {
    "f32": ctypes.c_float, "f64": ctypes.c_double, "u8": ctypes.c_uint8, "i16": ctypes.c_int16,
    "i32": ctypes.c_int32, "bf16": ctypes.c_uint16, "s8": ctypes.c_int8, "f16": ctypes.c_uint16,
}
# The NumPy dtype of each element type (bfloat16: ml_dtypes', installed with tilegen).
NP_DTYPES: Dict[str, Any] = {
    "f32": np.float32, "f64": np.float64, "u8": np.uint8, "i16": np.int16, "i32": np.int32,
    "bf16": ml_dtypes.bfloat16, "s8": np.int8, "f16": np.float16,
}

# Compiles and cache hits of this process (the tests check that a second compile is a hit).
STATS: Dict[str, int] = {"compiled": 0, "cached": 0}

ENTRY = "tg_dsl_entry"


class JitError(RuntimeError):
    """A kernel could not be compiled or loaded here."""


class CompilerNotFoundError(JitError):
    """No C compiler on PATH (CC, cc, gcc)."""


class UnsupportedISAError(JitError):
    """The kernel's ISA cannot run on this machine (another architecture, or CPU/OS features
    missing): refused before any of its instructions can run."""


def cache_dir() -> str:
    """TILEGEN_CACHE_DIR, else $XDG_CACHE_HOME/tilegen/kernels (~/.cache when unset)."""
    override = os.environ.get("TILEGEN_CACHE_DIR")
    if override:
        return os.path.abspath(os.path.expanduser(override))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tilegen", "kernels")


def find_compiler() -> str:
    """$CC, else cc, else gcc: the first found on PATH."""
    for name in (os.environ.get("CC", ""), "cc", "gcc"):
        if name and shutil.which(name.split()[0]):
            return name
    raise CompilerNotFoundError(
        "no C compiler found (tried $CC, cc, gcc); install one, e.g. `apt-get install gcc`, "
        "or set CC")


@functools.lru_cache(maxsize=None)
def _compiler_identity(cc: str) -> str:
    """The compiler's path and version banner: part of the cache key, so another compiler (or
    an upgrade) compiles afresh."""
    path = shutil.which(cc.split()[0]) or cc
    try:
        r = subprocess.run([*cc.split(), "--version"], capture_output=True, text=True, timeout=30)
        banner = r.stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise CompilerNotFoundError(f"C compiler {cc!r} does not run: {e}") from None
    return f"{os.path.realpath(path)}\n{banner}"


def compile_flags(isa: str) -> Tuple[str, ...]:
    """The flags of one ISA's kernels: the package build's (the ISA tables), position-
    independent for a shared object."""
    return (*BASE_CFLAGS, *get_isa(isa).cflags, "-fPIC")


def usable_isas() -> Dict[str, bool]:
    """tilegen's own CPU probe (CPU and OS support, as the dispatcher sees it)."""
    try:
        from tilegen.core import _core  # the runtime's probe; only needed to run a kernel
    except ImportError as e:
        raise JitError(f"the compiled tilegen core is not available to probe the CPU ({e})") \
            from None
    return _core.isas()


def check_runnable(isa: str) -> None:
    """UnsupportedISAError unless this machine can run `isa`'s instructions."""
    table = get_isa(isa)
    arch = host_arch()
    if table.arch not in ("any", arch):
        raise UnsupportedISAError(
            f"isa: {isa} kernels run on {table.arch}; this machine is {arch} (render it with "
            f"`tilegen emit` instead, or test it under the C testers' cross toolchain)")
    if not usable_isas().get(isa, False):
        raise UnsupportedISAError(
            f"isa: this CPU (or its OS) lacks {isa}, which needs {', '.join(table.requires)}; "
            f"usable here: {', '.join(k for k, v in usable_isas().items() if v)}")


def as_spec(spec: Any) -> KernelSpec:
    """A KernelSpec from a spec, a builder (anything with `.spec`), a registry-style dict
    ({"op": ..., "dtype": ..., "isa": ..., "tile": "4x16", ...}) or a kernel name."""
    if isinstance(spec, KernelSpec):
        return spec
    if isinstance(spec, str):
        return spec_from_name(spec)
    if isinstance(spec, dict):
        from .registry import parse_entry

        raw = dict(spec)
        if "tile" not in raw and "mr" in raw:  # KernelSpec's own keywords
            return KernelSpec(**raw)
        raw.pop("production", None)
        return parse_entry(raw, "spec").spec
    inner = getattr(spec, "spec", None)
    if isinstance(inner, KernelSpec):
        return inner
    raise TypeError(f"spec: expected a KernelSpec, a builder, a registry-style dict or a "
                    f"kernel name, got {type(spec).__name__}")


def _sources(spec: KernelSpec, with_extras: bool) -> Dict[str, str]:
    """File name -> C source: the kernel, (when it needs them) its family's extra files of the
    same dtype and ISA, the family's C driver for Python (if any), and the entry point that
    hands ctypes the kernel's address (the build hides every other symbol)."""
    from .registry import Entry
    from .render import environment, render_kernel

    out = {f"{spec.name}.c": render_kernel(
        spec, note=f"compiled by tilegen.dsl.compile from the spec of {spec.name}",
        emitted=True)}
    if with_extras:
        for i, x in enumerate(spec.family.extra_files([Entry(spec, False)], environment())):
            out[f"extra{i}_{os.path.basename(x.path)}"] = x.content
    driver = spec.family.python_driver(spec)
    if driver:
        out["driver.c"] = driver
    out["entry.c"] = (f"extern void {spec.name}(void);\n"
                      f"__attribute__((visibility(\"default\"))) void* {ENTRY}(void) {{\n"
                      f"  return (void*) &{spec.name};\n}}\n")
    return out


def _include_dirs() -> Tuple[str, ...]:
    """The installed package's generated headers (tg_ukernels.h, tg_isa.h) and public ones."""
    from .registry import package_root

    pkg = os.path.join(package_root(), "tilegen")
    return (os.path.join(pkg, "generated"), os.path.join(pkg, "include"))


def _build(cc: str, flags: Sequence[str], sources: Dict[str, str], out: str) -> None:
    with tempfile.TemporaryDirectory(prefix="tilegen-jit-") as tmp:
        paths = []
        for name, text in sources.items():
            paths.append(os.path.join(tmp, name))
            with open(paths[-1], "w", encoding="utf-8") as f:
                f.write(text)
        # An unresolved symbol fails here (GNU ld), not as a load error later.
        strict = ["-Wl,--no-undefined"] if sys.platform.startswith("linux") else []
        cmd = [*cc.split(), *flags, *(f"-I{d}" for d in _include_dirs()), "-shared", *paths,
               "-o", out, *strict, "-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise JitError(f"compiling failed ({' '.join(cmd)}):\n{r.stderr[-4000:]}")


class CompiledKernel:
    """A compiled micro-kernel: call it as its family documents (`kernel.__doc__`), or take the
    raw C function (`function(restype, *argtypes)`, of C prototype `prototype`)."""

    def __init__(self, spec: KernelSpec, path: str, cached: bool, flags: Tuple[str, ...],
                 raw: bool = False):
        self.spec = spec
        self.name = spec.name
        self.path = path
        self.cached = cached        # loaded from the cache: no compiler ran
        self.flags = flags
        self._lib = ctypes.CDLL(path)
        entry = getattr(self._lib, ENTRY)
        entry.restype = ctypes.c_void_p
        self.address: int = entry()
        self.prototype: str = spec.family.c_declaration(spec)
        # The family's NumPy-level callable; its docstring says what it computes.
        self.call: Optional[Callable[..., Any]] = None
        if raw:
            self.__doc__ = (f"{self.name}: the raw kernel, {self.prototype} (call it through "
                            f".function(restype, *argtypes))")
        else:
            self.call = spec.family.python_call(spec, self)
            self.__doc__ = self.call.__doc__

    def function(self, restype: Any, *argtypes: Any) -> Any:
        """The kernel as a ctypes function of the given C prototype."""
        return ctypes.CFUNCTYPE(restype, *argtypes)(self.address)

    def symbol(self, name: str, restype: Any, *argtypes: Any) -> Any:
        """A function of the family's driver (OpFamily.python_driver), as ctypes calls it."""
        fn = getattr(self._lib, name)
        fn.restype, fn.argtypes = restype, list(argtypes)
        return fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        check_runnable(self.spec.isa)  # never SIGILL, even if the cache dir moved machines
        if self.call is None:
            raise NotImplementedError(f"{self.name} was compiled raw: call it through "
                                      f".function(restype, *argtypes); {self.prototype}")
        return self.call(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.name} from {self.path}>"


def compile(spec: Any, *, cache: Optional[str] = None, force: bool = False,
            raw: bool = False) -> CompiledKernel:
    """Render, compile (or find in the cache) and load one kernel; see the module docstring.

    UnsupportedISAError when this machine cannot run the spec's ISA, CompilerNotFoundError
    without a C compiler, JitError when compiling fails; `force` recompiles. `raw`: no NumPy
    callable, only the C function (`.function(...)`, `.prototype`): for any family, those
    without a python_call too."""
    spec = as_spec(spec)
    check_runnable(spec.isa)
    if not raw and not spec.family.has_python_call:  # refused before the compiler runs
        raise NotImplementedError(
            f"op: {spec.op} kernels have no Python callable yet (OpFamily.python_call in "
            f"tilegen/ops/{spec.family.op}/{spec.op}.py); compile(..., raw=True) gives the C "
            f"function, `tilegen emit` the source")
    cc = find_compiler()
    flags = compile_flags(spec.isa)
    sources = _sources(spec, with_extras=bool(_needs_extras(spec)))
    key = hashlib.sha256("\0".join(
        [_compiler_identity(cc), " ".join(flags), *_include_dirs(),
         *(f"{n}\0{t}" for n, t in sorted(sources.items()))]).encode()).hexdigest()[:20]
    folder = cache or cache_dir()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{spec.name}-{key}.so")
    cached = os.path.isfile(path) and not force
    if cached:
        STATS["cached"] += 1
    else:
        # Built beside its final name and renamed: another process never loads half a file.
        fd, tmp = tempfile.mkstemp(prefix=f".{spec.name}-", suffix=".so", dir=folder)
        os.close(fd)
        try:
            _build(cc, flags, sources, tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        STATS["compiled"] += 1
    return CompiledKernel(spec, path, cached, flags, raw)


def _needs_extras(spec: KernelSpec) -> bool:
    """Whether the kernel calls code of its family's extra files (an exp routine, say): the
    rendered kernel names one of their declared functions."""
    from .registry import Entry
    from .render import environment, render_kernel

    extras = spec.family.extra_files([Entry(spec, False)], environment())
    if not extras:
        return False
    body = render_kernel(spec)
    for x in extras:
        for decl in x.declarations:
            fn = decl.split("(")[0].split()[-1].lstrip("*")
            if fn in body:
                return True
    return False


# --- argument checks the families' callables share: errors name the argument ---

def check_array(name: str, x: Any, dtype: str, ndim: int, *, writable: bool = False,
                shape: Optional[Sequence[Optional[int]]] = None) -> np.ndarray:
    """x as it is (no copy): TypeError unless a NumPy array of the element type's dtype;
    ValueError for the wrong number of axes, a shape mismatch, a last axis that is not
    contiguous, a row stride that is negative or not a whole number of elements, or a
    read-only output."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name}: expected a numpy.ndarray, got {type(x).__name__}")
    want = np.dtype(NP_DTYPES[dtype])
    if x.dtype != want:
        raise TypeError(f"{name}: expected dtype {want} ({dtype} kernel), got {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} axes, got shape {x.shape}")
    if shape is not None:
        for axis, (have, need) in enumerate(zip(x.shape, shape)):
            if need is not None and have != need:
                raise ValueError(f"{name}: axis {axis} has {have} elements, expected {need} "
                                 f"(shape {x.shape})")
    if writable and not x.flags.writeable:
        raise ValueError(f"{name}: the output array is read-only")
    item = x.itemsize
    if x.size == 0:  # nothing is read: NumPy gives empty arrays any strides
        return x
    if ndim and x.shape[-1] > 1 and x.strides[-1] != item:
        raise ValueError(f"{name}: the last axis must be contiguous (stride {item} bytes), "
                         f"got stride {x.strides[-1]}; pass numpy.ascontiguousarray({name})")
    for axis in range(ndim - 1):
        s = x.strides[axis]
        if x.shape[axis] > 1 and (s < 0 or s % item):
            raise ValueError(f"{name}: axis {axis}'s stride {s} bytes is not a non-negative "
                             f"multiple of the element size {item}")
    return x


def row_stride(x: np.ndarray) -> int:
    """The row stride of a 2-D array (checked by check_array) in elements."""
    return x.strides[0] // x.itemsize if x.shape[0] > 1 else x.shape[1]


def ptr(x: np.ndarray, ctype: Any, offset: int = 0) -> Any:
    """A typed pointer to element `offset` (in elements) of x."""
    return ctypes.cast(x.ctypes.data + offset * x.itemsize, ctypes.POINTER(ctype))


def prepared_call(prepare: Callable[..., Callable[[], Any]], doc: str) -> Callable[..., Any]:
    """A family's callable from `prepare(*args, **kwargs)`, which checks and packs the operands
    and returns the runner of the kernel loop: calling it packs and runs; `.prepare` packs once,
    so a bench times the loop alone."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return prepare(*args, **kwargs)()

    call.prepare = prepare  # type: ignore[attr-defined]
    call.__doc__ = doc
    return call


@dataclass
class Example:
    """A family's bench problem: the callable's arguments, NumPy's answer, and the work done
    (amount and unit: "flop" or "byte") to turn a time into GFLOP/s or GB/s."""

    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]
    expected: np.ndarray
    work: float
    unit: str
    shape: str
    rtol: float
    atol: float = 0.0


def bench_shape(text: Optional[str]) -> Optional[Tuple[int, ...]]:
    """A --shape value ("256,256,256" or "256x256x256") as integers."""
    if text is None:
        return None
    try:
        dims = tuple(int(t) for t in text.replace("x", ",").split(",") if t.strip())
    except ValueError:
        raise ValueError(f"--shape: expected comma-separated positive integers, got {text!r}") \
            from None
    if not dims or min(dims) < 1:
        raise ValueError(f"--shape: expected comma-separated positive integers, got {text!r}")
    return dims


__all__ = ["CTYPES", "CompiledKernel", "CompilerNotFoundError", "Example", "JitError",
           "NP_DTYPES", "STATS", "UnsupportedISAError", "as_spec", "bench_shape", "cache_dir",
           "check_array", "check_runnable", "compile", "compile_flags", "find_compiler", "ptr",
           "row_stride", "usable_isas"]
