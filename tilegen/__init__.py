"""tilegen: generated SIMD micro-kernels behind NumPy drop-ins and a BLAS ABI.

    import tilegen as tg
    tg.matmul(a, b)        # numpy.matmul's answers, tilegen's kernels
    tg.show_config()       # CPU features, the ISA cap, the kernels chosen, threads

Importing tilegen initialises the kernel dispatch: an invalid TILEGEN_ISA raises ImportError.
It then applies the block sizes and tiles `tilegen tune` stored for this machine, if any
(tilegen/tuning.py; TILEGEN_TUNING=off skips them).
"""
from ._version import __version__
from .blas import _core
from . import tuning as _tuning
_tuning.apply_cache()  # the `tilegen tune` cache, if this machine has one
from .blas._core import matmul, set_num_threads, get_num_threads
from .numpy_api import dot, gemm
from .nn.conv import Conv2d, conv2d
from .runtime import get_include, get_library, runtime_info, show_config
from . import _threadpoolctl

_threadpoolctl.register()

__all__ = [
    "__version__", "Conv2d", "conv2d", "dot", "gemm", "get_include", "get_library", "get_num_threads", "matmul",
    "runtime_info", "set_num_threads", "show_config",
]
