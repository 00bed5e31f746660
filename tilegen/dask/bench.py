"""`tilegen bench --op dask`: tilegen.dask's Gaussian 5x5 against dask-image's
(`dask_image.ndfilters.gaussian_filter`) on a distributed.LocalCluster of 1 and of 2 worker
processes, on a 16k x 16k uint8 x 3 image (--quick: 2k x 2k) that is generated chunk by chunk
on the workers (it never exists whole in one process).

Each (library, case) gets a fresh LocalCluster of the case's worker count, each worker with as
many Dask threads as the bench's thread count and tilegen's pool on 1 thread (Dask runs a task
per thread); both libraries get the same cluster shape and the same chunks. A timed call
builds nothing: it computes the blurred image's sum (a reduction: nothing image-sized comes
back) and a 16 x 16 window across a chunk corner, which the check compares with OpenCV's
GaussianBlur of the same pixels (regenerated here); the sum's mean must be the generator's.
dask-image runs scipy.ndimage's Gaussian with sigma 1.1 truncated at radius 2 (a 5-tap kernel,
tilegen's size) and mode "mirror" (OpenCV's reflect101). After the repetitions, `notes` reads
each worker's peak resident memory (ru_maxrss of the worker process, which lives for the one
case only) and its resident memory before the first task.

Pure Python at import (the CLI lists cases without dask installed); dask, distributed and
dask-image are imported by the calls.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from tilegen.ops.plugins import case_dict

NAME = "dask"
SUMMARY = ("tilegen.dask's Gaussian 5x5 against dask-image's on a LocalCluster of 1 and 2 worker "
           "processes (16k x 16k uint8 x 3, generated chunk by chunk on the workers), with each "
           "worker's peak memory")
LIBS = ("tilegen", "dask_image")
RATIO_VS = ("dask_image",)
UNIT, UNIT_SCALE = "Mpixel/s", 1e6
WINDOW = 8  # the checked window: 2 * WINDOW pixels square, centred on a chunk corner
# (largest difference from OpenCV in the window, of the image's mean from 127.5) per library:
# tilegen's uint8 Gaussian is OpenCV's bit for bit; scipy.ndimage (dask-image) keeps uint8
# between its two separable passes, truncating after each: up to 2 below, 1 below on average.
TOLERANCE = {"tilegen": (0, 0.25), "dask_image": (2, 1.25)}


@dataclass(frozen=True)
class Case:
    """A Gaussian blur of an h x w x c uint8 image in chunk x chunk x c chunks, on a cluster of
    `workers` worker processes."""

    group: str
    h: int
    w: int
    c: int
    chunk: int
    workers: int
    ksize: int = 5
    sigma: float = 1.1
    dtype: str = "u8"

    @property
    def id(self) -> str:
        return (f"dask-gaussian{self.ksize}-{self.dtype}x{self.c}-{self.w}x{self.h}-"
                f"chunk{self.chunk}-{self.workers}w")

    @property
    def label(self) -> str:
        return (f"Gaussian {self.ksize}x{self.ksize} {self.dtype} x{self.c} {self.w}x{self.h}, "
                f"chunks {self.chunk}, {self.workers} worker{'s' if self.workers > 1 else ''}")

    @property
    def work(self) -> int:
        return self.h * self.w

    size = None

    def runs_on(self, lib: str) -> bool:
        return lib in LIBS

    def as_dict(self) -> dict:
        return case_dict(self)

    def operands(self, seed: int = 0):
        """(seed,): the image is made on the workers, block by block, inside the timed call,
        from the seed and the block's position (_block)."""
        return (seed,)

    def window(self) -> Tuple[int, int, int, int]:
        """(r0, r1, c0, c1): the checked window, across the first interior chunk corner."""
        r = min(self.chunk, self.h // 2)
        c = min(self.chunk, self.w // 2)
        return r - WINDOW, r + WINDOW, c - WINDOW, c + WINDOW

    def region(self, seed: int, r0: int, r1: int, c0: int, c1: int):
        """Rows r0:r1, columns c0:c1 of the generated image, made here as the workers make it."""
        import numpy as np

        out = np.empty((r1 - r0, c1 - c0, self.c), np.uint8)
        for bi in range(r0 // self.chunk, (r1 - 1) // self.chunk + 1):
            for bj in range(c0 // self.chunk, (c1 - 1) // self.chunk + 1):
                y0, x0 = bi * self.chunk, bj * self.chunk
                shape = (min(self.chunk, self.h - y0), min(self.chunk, self.w - x0), self.c)
                block = _block(seed, (bi, bj, 0), shape, self.chunk)
                ys, ye = max(r0, y0), min(r1, y0 + shape[0])
                xs, xe = max(c0, x0), min(c1, x0 + shape[1])
                out[ys - r0:ye - r0, xs - c0:xe - c0] = block[ys - y0:ye - y0, xs - x0:xe - x0]
        return out

    def check(self, operands, result) -> Optional[str]:
        """None when the window is OpenCV's GaussianBlur of the same pixels and the mean of the
        blurred image is the generator's (uniform 0..255: 127.5), within the library's
        TOLERANCE, else what is wrong. (A block lost or blurred into zeros moves the mean by
        127.5 / the number of blocks: 2 at 16k, 8 under --quick.)"""
        import numpy as np

        try:
            import cv2
        except ImportError:
            cv2 = None
        total, window, lib = result
        most, off = TOLERANCE[lib]
        r0, r1, c0, c1 = self.window()
        window = np.asarray(window)
        if window.shape != (r1 - r0, c1 - c0, self.c) or window.dtype != np.uint8:
            return f"window shape/dtype {window.shape} {window.dtype}"
        mean = float(total) / (self.h * self.w * self.c)
        if abs(mean - 127.5) > off:
            return f"the blurred image's mean is {mean:.3f}, the generator's 127.5"
        if cv2 is None:
            return None
        k = self.ksize // 2
        src = self.region(operands[0], r0 - k, r1 + k, c0 - k, c1 + k)
        want = cv2.GaussianBlur(src, (self.ksize, self.ksize), self.sigma)[k:-k, k:-k]
        diff = np.abs(window.astype(np.int16) - want).max()
        return None if diff <= most else f"the window differs from OpenCV's by up to {diff}"


def _block(seed: int, location, shape, chunk: int):
    """One block of the image: a random tile of uniform bytes (made once per process and
    seed) plus a byte that depends on the block's position, modulo 256 (uniform again). One
    pass over the block: generating the image costs little next to the filters."""
    import numpy as np

    bi, bj = location[0], location[1]
    base = _tile(seed, chunk, shape[2])[:shape[0], :shape[1]]
    return np.add(base, np.uint8((bi * 37 + bj * 101) % 256), dtype=np.uint8)


@functools.lru_cache(maxsize=2)
def _tile(seed: int, chunk: int, c: int):
    import numpy as np

    return np.random.default_rng(seed).integers(0, 256, (chunk, chunk, c), dtype=np.uint8)


def _generate(block_info=None, seed=0, chunk=0):
    info = block_info[None]
    return _block(seed, tuple(info["chunk-location"]), tuple(info["chunk-shape"]), chunk)


def cases(quick: bool = False) -> List[Case]:
    """16k x 16k x 3 in 2048 chunks (64 of them) on 1 and 2 workers; quick: 2k x 2k in 512."""
    h, chunk = (2048, 512) if quick else (16384, 2048)
    return [Case("gaussian", h, h, 3, chunk, workers) for workers in (1, 2)]


# The cluster of the case being measured in this process: one at a time, made by make_call
# and closed when the next case (or the process) ends.
_cluster: Dict[str, object] = {}


def _close() -> None:
    client, cluster = _cluster.pop("client", None), _cluster.pop("cluster", None)
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()
    _cluster.clear()


def _rss_mib():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mib():
    import psutil

    return psutil.Process().memory_info().rss / 2 ** 20


def _start(case: Case, threads: int):
    import atexit

    import distributed

    import tilegen.dask as tgd

    _close()
    cluster = distributed.LocalCluster(n_workers=case.workers, threads_per_worker=threads,
                                       processes=True, dashboard_address=None, silence_logs=50)
    client = distributed.Client(cluster)
    tgd.set_worker_threads(client, 1)
    client.run(lambda: __import__("tilegen"))  # imported before the first timed call
    _cluster.update(cluster=cluster, client=client, start=client.run(_current_rss_mib))
    if not _cluster.get("atexit"):
        atexit.register(_close)
    return client


def make_call(lib: str, case: Case, operands, threads: int = 1
              ) -> Tuple[Callable[[], object], Callable[[object], object]]:
    if lib not in LIBS:
        raise ValueError(f"lib: {lib!r} does not run {NAME}; allowed: {', '.join(LIBS)}")
    import dask.array as da
    import numpy as np

    client = _start(case, threads)
    chunks = da.core.normalize_chunks((case.chunk, case.chunk, case.c), (case.h, case.w, case.c))
    img = da.map_blocks(_generate, dtype=np.uint8, chunks=chunks, seed=operands[0],
                        chunk=case.chunk, meta=np.empty((0, 0, 0), np.uint8))
    if lib == "tilegen":
        import tilegen.dask as tgd

        out = tgd.image.gaussian_blur(img, case.ksize, case.sigma)
    else:
        from dask_image import ndfilters

        radius = case.ksize // 2  # scipy's radius is int(truncate * sigma + 0.5)
        out = ndfilters.gaussian_filter(img, sigma=(case.sigma, case.sigma, 0), mode="mirror",
                                        truncate=radius / case.sigma)
    r0, r1, c0, c1 = case.window()
    wanted = [out.sum(dtype=np.uint64), out[r0:r1, c0:c1]]

    def call():
        return client.gather(client.compute(wanted))

    return call, lambda r: (r[0], r[1], lib)


def notes(lib: str, case: Case) -> List[str]:
    """Each worker's peak resident memory over the case (and at its start), in MiB."""
    client = _cluster.get("client")
    if client is None:
        return []
    peak = client.run(_rss_mib)
    start = _cluster.get("start", {})
    cells = [f"{peak[w]:.0f}" + (f" (start {start[w]:.0f})" if w in start else "")
             for w in sorted(peak)]
    return [f"peak RSS per worker, MiB: {', '.join(cells)}"]


def shape_note() -> Tuple[str, ...]:
    return ("Mpixel/s = H*W / time of computing the blurred image's sum and a 16x16 window "
            "(the image generated on the workers inside the timed call, for both libraries)",
            "each library on its own LocalCluster of the case's worker processes, the same "
            "chunks; tilegen pool 1 thread per worker; dask-image: scipy Gaussian, radius 2, "
            "mode mirror")
