"""What tilegen.dask's functions share: argument checks and the worker thread setting."""
from __future__ import annotations

try:
    import dask.array as da
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(f"tilegen.dask needs dask[array] ({e}): pip install \"tilegen[dask]\"") \
        from None


def dask_array(name: str, x) -> da.Array:
    """x itself; TypeError naming the argument when it is not a dask array, ValueError when
    its chunk sizes are unknown (after boolean indexing, say: no halo or block product can be
    planned on them)."""
    if not isinstance(x, da.Array):
        hint = (f"; wrap a NumPy array with dask.array.from_array({name}, chunks=...)"
                if hasattr(x, "__array__") else "")
        raise TypeError(f"{name}: expected a dask array, got {type(x).__name__}{hint}")
    if any(c != c for axis in x.chunks for c in axis):  # NaN: unknown
        raise ValueError(f"{name}: its chunk sizes are unknown (shape {x.shape}); call "
                         f"{name}.compute_chunk_sizes() first")
    return x


def single_chunk(x: da.Array, axes) -> da.Array:
    """x with each of `axes` in one chunk (a no-op where it already is)."""
    axes = [a % x.ndim for a in axes]
    if all(len(x.chunks[a]) == 1 for a in axes):
        return x
    return x.rechunk({a: -1 for a in axes})


def set_worker_threads(client, n: int) -> None:
    """Give the tilegen pool of every worker of `client`'s cluster (now and later: a restarted
    or added worker runs the plug-ins registered before it) n threads."""
    from ._plugin import TilegenThreads

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected a positive int, got {n!r}")
    client.register_plugin(TilegenThreads(n), name=TilegenThreads.name)
