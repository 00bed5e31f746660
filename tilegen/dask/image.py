"""tg.image's filters on dask arrays: the same answers as tg.image on the whole image, bit for
bit (every dtype tg.image takes), for any chunking.

    tilegen.dask.image.gaussian_blur(img, ksize, sigma, *, border="reflect101")
    tilegen.dask.image.box_blur(img, ksize, *, border="reflect101")
    tilegen.dask.image.filter2d(img, kernel, *, border="reflect101")
    tilegen.dask.image.unsharp_mask(img, ksize=5, sigma=1.0, amount=1.0, threshold=0, *, border=...)

img is a dask array of shape HxW, HxWxC or NxHxWxC (a stack), of a dtype tg.image takes (uint8,
uint16, float32, float64); border "wrap" is refused (it reads the far side); the arguments
are tg.image's, checked by tg.image itself before any graph is built (ValueError / TypeError
naming the argument). Each block runs tg.image on the block plus a halo of exactly the
filter's reach (ksize // 2 for the blurs, kernel.shape // 2 for filter2d) taken from its
neighbours (dask's map_overlap, boundary "none"), then the halo is cut off. At the outer edge of
the image a block has no halo there, and tg.image applies the border rule to the block's own
edge, which is the image's edge: the same rule, on the same pixels, as on the whole image. That
holds when a block plus its inner halo reaches further into the image than the filter does
(reflect101 reads up to ksize // 2 pixels in): map_overlap makes every chunk at least as large
as the halo, and an axis no larger than twice the halo is put in one chunk. Channels are put
in one chunk (tg.image filters interleaved pixels); a stack's images are chunked as given.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

import tilegen as tg
from tilegen.ops.image._image import BORDERS, _border, _gaussian_args, _size

from ._common import dask_array, single_chunk

__all__ = ["box_blur", "filter2d", "gaussian_blur", "unsharp_mask"]


def _apply(name, args, kwargs, block):
    with warnings.catch_warnings():
        # A block may be shorter than the image has channels; the whole image was checked
        # (and warned about, if planar) at the caller.
        warnings.simplefilter("ignore", tg.image.ImageLayoutWarning)
        return getattr(tg.image, name)(block, *args, **kwargs)


def _filter(img, name, reach, args, kwargs):
    """tg.image.<name>(img, *args, **kwargs) over the blocks of dask array img; `reach` is
    (rows, columns): how far the filter reads from a pixel."""
    f = getattr(tg.image, name)
    # Every argument checked by tg.image itself (its messages, its exceptions), on a probe of
    # img's dtype and dimensions: one pixel of each image, as many channels, and (for the
    # planar-layout warning) rows up to channels + 1.
    spatial = (1, 2) if img.ndim == 4 else (0, 1)
    c = img.shape[-1] if img.ndim >= 3 else 1
    probe = [min(s, 1) for s in img.shape]
    if img.ndim >= 2:
        probe[spatial[0]] = min(img.shape[spatial[0]], c + 1)
    if img.ndim >= 3:
        probe[-1] = c
    f(np.zeros(probe, img.dtype), *args, **kwargs)
    if _border(kwargs["border"]) == BORDERS["wrap"]:
        # wrap reads the image's far side, which a block's halo does not hold
        raise ValueError("border: 'wrap' is not supported on dask arrays (a block's halo "
                         "holds its neighbours, not the image's far side)")
    if img.size == 0:
        return img.copy()
    x = single_chunk(img, [-1]) if img.ndim >= 3 else img
    depth = {ax: 0 for ax in range(img.ndim)}
    for ax, d in zip(spatial, reach):
        if d == 0:
            continue
        if img.shape[ax] <= 2 * d:
            x = single_chunk(x, [ax])
        else:
            depth[ax] = d
    run = functools.partial(_apply, name, args, kwargs)
    meta = np.empty((0,) * img.ndim, img.dtype)
    if not any(depth.values()):
        return x.map_blocks(run, dtype=img.dtype, meta=meta)
    return x.map_overlap(run, depth=depth, boundary="none", trim=True, dtype=img.dtype,
                         meta=meta)


def gaussian_blur(img, ksize, sigma, *, border="reflect101"):
    """tg.image.gaussian_blur on a dask array (see the module's docstring)."""
    img = dask_array("img", img)
    ks, _ = _gaussian_args(ksize, sigma)
    return _filter(img, "gaussian_blur", (ks // 2, ks // 2), (ksize, sigma), {"border": border})


def box_blur(img, ksize, *, border="reflect101"):
    """tg.image.box_blur on a dask array (see the module's docstring)."""
    img = dask_array("img", img)
    ks = max(_size("ksize", ksize), 1)
    return _filter(img, "box_blur", (ks // 2, ks // 2), (ksize,), {"border": border})


def filter2d(img, kernel, *, border="reflect101"):
    """tg.image.filter2d on a dask array (see the module's docstring); kernel is a small
    NumPy-like 2-D array, sent to every task."""
    img = dask_array("img", img)
    k = np.asarray(kernel)
    reach = (k.shape[0] // 2, k.shape[1] // 2) if k.ndim == 2 else (0, 0)
    return _filter(img, "filter2d", reach, (k,), {"border": border})


def unsharp_mask(img, ksize=5, sigma=1.0, amount=1.0, threshold=0, *, border="reflect101"):
    """tg.image.unsharp_mask on a dask array (see the module's docstring)."""
    img = dask_array("img", img)
    ks, _ = _gaussian_args(ksize, sigma)
    return _filter(img, "unsharp_mask", (ks // 2, ks // 2), (ksize, sigma, amount, threshold),
                   {"border": border})
