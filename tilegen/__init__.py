"""tilegen: generated SIMD micro-kernels behind NumPy drop-ins and a BLAS ABI.

    import tilegen as tg
    tg.matmul(a, b)        # numpy.matmul's answers, tilegen's kernels
    tg.show_config()       # CPU features, the ISA cap, the kernels chosen, threads

Importing tilegen initialises the kernel dispatch: an invalid TILEGEN_ISA raises ImportError.
It then applies what `tilegen tune` stored for this machine, if anything (tilegen/tools/tuning.py;
TILEGEN_TUNING=off skips it). Each op's Python API (tilegen/ops/<op>/, declared in its op.yaml)
is exported here, through the generated _ops_api.py.
"""
from ._version import __version__
from ._load import _is_cli as _load_is_cli, load_core as _load_core

__all__ = ["__version__"]

_core = _load_core()  # None only for the `tilegen` command, which reports the error itself
if _core is not None:
    from ._load import check_environment as _check_environment
    _check_environment(_core.MAX_THREADS, _core.env_warnings())
    from .core._core import set_num_threads, get_num_threads
    from .tools.info import (get_cmake_dir, get_include, get_library, get_pkgconfig_dir,
                             runtime_info, show_config)
    __all__ += ["get_cmake_dir", "get_include", "get_library", "get_num_threads",
                "get_pkgconfig_dir", "runtime_info", "set_num_threads", "show_config"]
    try:
        from ._ops_api import *  # noqa: F401,F403  each op's API (op.yaml: python)
        from . import _ops_api
        __all__ += _ops_api.__all__
    except ImportError as _e:
        # An op added but not built (or a tree not generated): the `tilegen` command still
        # generates code, and reports this for the subcommands that need the compiled core.
        if not _load_is_cli():
            raise
        from . import _load
        _load.CORE_ERROR = f"an op's compiled module is missing ({_e}); rebuild: pip install ."
    from .tools import tuning as _tuning
    _tuning.apply_cache()  # the `tilegen tune` cache, if this machine has one
    from . import _threadpoolctl

    _threadpoolctl.register()
