"""Runtime reporting: what tilegen detected, chose and uses (NumPy's show_runtime, for tilegen)."""
from __future__ import annotations

import os
import platform

import numpy as np

from tilegen._paths import get_cmake_dir, get_include, get_library, get_pkgconfig_dir  # noqa: F401
from tilegen._version import __version__
from tilegen.core import _core

from . import tuning

def _cpu_brand() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("model name", "Model", "Hardware")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:  # slower (it probes in a subprocess), but portable
        import cpuinfo

        return cpuinfo.get_cpu_info().get("brand_raw", "unknown")
    except Exception:  # pragma: no cover - best effort only
        return platform.processor() or "unknown"


def _kernels() -> dict:
    """Every op's choice per dtype, as its dispatch reported it, or in full from the op's own
    hook where its op.yaml names one (python: info)."""
    import importlib

    from tilegen.ops import OPS

    reported = _core.choices()
    kernels = {}
    for op in OPS.values():
        if op.python_info:
            module = importlib.import_module(f"{op.package}.{op.python_module}")
            kernels[op.name] = getattr(module, op.python_info)()
        elif op.name in reported:
            kernels[op.name] = reported[op.name]
    return kernels


def runtime_info() -> dict:
    """CPU features, ISA cap, the kernels chosen per op and dtype, blocking, threads, versions,
    and whether the `tilegen tune` cache was applied (and from which file)."""
    reported, usable = _core.features()
    return {
        "version": __version__,
        "numpy_version": np.__version__,
        "arch": platform.machine(),
        "cpu_brand": _cpu_brand(),
        "features": {"detected": reported, "os_enabled": usable},
        "caches": _core.caches(),
        "isa_cap": _core.isa_cap(),
        "isas_available": [name for name, ok in _core.isas().items() if ok],
        "isa": _core.isa_in_use(),  # the best of them within the cap; each op's kernels are
        # of the best ISA at or below it that has kernels of the op and dtype (see "kernels")
        "kernels": _kernels(),
        "threads": {"num_threads": _core.get_num_threads(),
                    "backend": "pthreads (tilegen's own pool)"},
        "library": get_library(),
        "tuning": tuning.status(),
    }


def show_config() -> None:
    """Print runtime_info() as a readable report (the same text as `tilegen info`)."""
    from .report import format_runtime_info

    print(format_runtime_info(runtime_info()))
