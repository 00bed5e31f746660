"""Loading the compiled core, with errors that say what to do.

`import tilegen` raises ImportError when the core cannot load: from a source tree that was never
built, or when TILEGEN_ISA names an ISA this CPU or build lacks. The `tilegen` command is the one
exception: its code-generation subcommands need no compiled core, so it gets the package without
one and reports the error, as one line, only for the subcommands that need it.
"""
from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Optional, Sequence

CORE_ERROR: Optional[str] = None  # why the core did not load, for the `tilegen` command


def _is_cli() -> bool:
    """True in the `tilegen` console script and in `python -m tilegen`."""
    main = sys.modules.get("__main__")
    script = os.path.basename(getattr(main, "__file__", "") or "")
    if script in ("tilegen", "tilegen.exe"):
        return True
    argv = list(getattr(sys, "orig_argv", []))
    return any(a == "-m" and argv[i + 1:i + 2] == ["tilegen"] for i, a in enumerate(argv))


def _not_built(package_dir: str) -> bool:
    """A source checkout (setup.py beside the package) with no compiled core in it."""
    from importlib.machinery import EXTENSION_SUFFIXES

    return os.path.isfile(os.path.join(os.path.dirname(package_dir), "setup.py")) and not any(
        os.path.isfile(os.path.join(package_dir, "core", "_core" + sfx))
        for sfx in EXTENSION_SUFFIXES)


def load_core() -> Optional[ModuleType]:
    global CORE_ERROR
    package_dir = os.path.dirname(os.path.abspath(__file__))
    try:
        from .core import _core
    except ImportError as e:
        if _not_built(package_dir):
            message = (
                f"tilegen is being imported from its source tree ({package_dir}), whose compiled "
                "core is not built. Run Python from another folder to use the installed "
                "tilegen, or build this tree in place: pip install -e .")
            error: ImportError = ImportError(message)
        else:
            message, error = str(e), e
        if not _is_cli():
            raise error from (None if error is e else e)
        CORE_ERROR = message
        return None
    return _core


def check_environment(max_threads: int, core_warnings: Sequence[str] = ()) -> None:
    """Warns about a TILEGEN_NUM_THREADS the library cannot use: the C core ignores a value that
    is not a positive integer (falling back to OMP_NUM_THREADS or the CPU count) and caps one
    over its limit, which a Python user should hear about. `core_warnings` are what the C core
    itself ignored or clamped at init (TILEGEN_L1D_SIZE / _L2_ / _L3_SIZE: _core.env_warnings()),
    each a RuntimeWarning too."""
    import warnings

    for text in core_warnings:
        warnings.warn(text, RuntimeWarning, stacklevel=3)

    value = os.environ.get("TILEGEN_NUM_THREADS")
    if value is None or value.strip() == "":
        return
    try:
        n = int(value.strip())
    except ValueError:
        n = 0
    if n < 1:
        warnings.warn(f"TILEGEN_NUM_THREADS={value!r} is not a positive integer and is ignored; "
                      "tilegen uses OMP_NUM_THREADS or the CPU count", RuntimeWarning, stacklevel=3)
    elif n > max_threads:
        warnings.warn(f"TILEGEN_NUM_THREADS={n} is over the limit of {max_threads} threads; "
                      f"tilegen uses {max_threads}", RuntimeWarning, stacklevel=3)

