"""tilegen on Dask: tilegen's kernels as the chunk kernels of dask arrays.

    import dask.array as da, tilegen.dask as tgd
    img = da.from_zarr("scan.zarr")                       # H x W x C uint8, chunked in any way
    out = tgd.image.gaussian_blur(img, 5, 1.1)            # == tg.image.gaussian_blur(whole image)
    c = tgd.matmul(a, b)                                  # blocked over the contraction, tree sum

`tilegen.dask.image` holds the filters (gaussian_blur, box_blur, filter2d, unsharp_mask);
`matmul`, `conv2d` and `attention` are chunked products (linalg.py). Everything takes dask
arrays and returns lazy dask arrays; nothing is computed until the caller computes. On a
`distributed` cluster, `set_worker_threads(client, n)` gives every worker's tilegen pool n
threads (one per Dask worker thread is usually right: Dask already runs a task per thread).

A consumer of the public API (`import tilegen as tg`), like tilegen.models: the ops know
nothing of it. Needs the optional dependencies (pip install "tilegen[dask]"); they are imported
on first use of a function, so `tilegen bench` lists this package's bench plug-in (bench.py)
without them.
"""
from __future__ import annotations

import importlib

__all__ = ["attention", "conv2d", "image", "matmul", "set_worker_threads"]
_WHERE = {"image": ".image", "matmul": ".linalg", "conv2d": ".linalg", "attention": ".linalg",
          "set_worker_threads": "._common"}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    mod = importlib.import_module(_WHERE[name], __name__)
    value = mod if name == "image" else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
