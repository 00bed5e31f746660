"""tilegen: generated SIMD micro-kernels behind NumPy drop-ins and a BLAS ABI.

    import tilegen as tg
    tg.matmul(a, b)        # numpy.matmul's answers, tilegen's kernels
    tg.show_config()       # CPU features, the ISA cap, the kernels chosen, threads

Importing tilegen initialises the kernel dispatch: an invalid TILEGEN_ISA raises ImportError.
It then applies the block sizes and tiles `tilegen tune` stored for this machine, if any
(tilegen/tuning.py; TILEGEN_TUNING=off skips them).
"""
from ._version import __version__
from ._load import load_core as _load_core

_core = _load_core()  # None only for the `tilegen` command, which reports the error itself
if _core is not None:
    from ._load import check_environment as _check_environment
    _check_environment(_core.MAX_THREADS)
    from . import tuning as _tuning
    _tuning.apply_cache()  # the `tilegen tune` cache, if this machine has one
    from .blas._core import matmul, set_num_threads, get_num_threads
    from .numpy_api import dot, gemm
    from .nn._attention import attention, paged_attention
    from .nn.conv import Conv2d, conv2d
    from .runtime import (get_cmake_dir, get_include, get_library, get_pkgconfig_dir,
                          runtime_info, show_config)
    from . import _threadpoolctl
    from . import image  # tg.image.filter2d, gaussian_blur, box_blur, unsharp_mask

    _threadpoolctl.register()

__all__ = [
    "__version__", "Conv2d", "attention", "conv2d", "dot", "gemm", "get_cmake_dir", "get_include",
    "get_library", "get_num_threads", "get_pkgconfig_dir", "matmul", "paged_attention",
    "runtime_info", "set_num_threads", "show_config",
]
