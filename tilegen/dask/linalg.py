"""Chunked products on dask arrays whose per-chunk work is tilegen's kernels.

    tilegen.dask.matmul(a, b)                 # (..., M, K) @ (..., K, N), blocked over K, tree sum
    tilegen.dask.conv2d(x, weight, ...)       # tg.conv2d per chunk of the batch and image
    tilegen.dask.attention(q, k, v, ...)      # tg.attention per chunk of (leading dims, queries)
"""
from __future__ import annotations

import functools

import numpy as np

import tilegen as tg

from ._common import dask_array, single_chunk

__all__ = ["attention", "conv2d", "matmul"]


def _block_product(a, b):
    """One (i, k, j) block's partial product (of each matrix of a stack), with a length-1
    axis for k."""
    return tg.matmul(a, b)[..., :, None, :]


def matmul(a, b, *, split_every: int = 2):
    """a @ b for dask arrays of 2 or more dimensions (a stack: the same leading dimensions,
    chunked alike), each product of an (i, k) block of a and a (k, j) block of b one tg.matmul
    task; the partial products of an (i, j) block are summed in a tree over k, `split_every`
    at a time (2: pairwise), so no task holds a row of blocks. The contraction is chunked as
    a's: b is rechunked along it (and along the leading dimensions) to a's chunks when they
    differ. The result's dtype is tg.matmul's for the two dtypes; float32 is accumulated in
    float32 (the blocks' sums differ from one tg.matmul's by float32 summation error)."""
    import dask.array as da

    a = dask_array("a", a)
    b = dask_array("b", b)
    for name, x in (("a", a), ("b", b)):
        if x.ndim < 2:
            raise ValueError(f"{name}: tilegen.dask.matmul takes matrices or stacks of them (2 "
                             f"or more dimensions), got shape {x.shape}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"a and b: the leading (stack) dimensions differ: a {a.shape}, "
                         f"b {b.shape} (tilegen.dask.matmul does not broadcast them: "
                         f"dask.array.broadcast_to first)")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"a and b: the contraction sizes differ: a {a.shape} has "
                         f"K={a.shape[-1]}, b {b.shape} has K={b.shape[-2]}")
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every: expected an int >= 2, got {split_every!r}")
    dtype = tg.matmul(np.zeros((1, 1), a.dtype), np.zeros((1, 1), b.dtype)).dtype
    want = a.chunks[:-2] + (a.chunks[-1], b.chunks[-1])
    if b.chunks != want:
        b = b.rechunk(want)
    lead = tuple(f"l{i}" for i in range(a.ndim - 2))
    parts = da.blockwise(_block_product, lead + ("i", "k", "j"), a, lead + ("i", "k"),
                         b, lead + ("k", "j"), dtype=dtype, adjust_chunks={"k": 1},
                         meta=np.empty((0,) * (a.ndim + 1), dtype))
    return parts.sum(axis=-2, split_every={a.ndim - 1: split_every}, dtype=dtype)


def _conv_block(x, weight, bias, stride, padding, dilation, groups, layout, activation):
    return tg.conv2d(x, weight, bias, stride, padding, dilation, groups, layout=layout,
                     activation=activation)


def _bounds(chunks, out: int, size: int):
    """Output boundaries along one spatial axis, as many chunks as the input has (fewer when
    the output is smaller), each at the input boundary's proportion of the axis."""
    cum = np.cumsum((0,) + tuple(chunks))
    return sorted({0, out} | {min(out, int(round(c * out / size))) for c in cum})


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, layout="NCHW",
           activation=None):
    """tg.conv2d on a 4-D dask array x (NCHW, or NHWC with layout="NHWC"), chunked over the
    batch and the image: a task per chunk of the batch and spatial chunk of the output, which
    reads its input rows and columns plus the filter's reach (the halo) from the zero-padded
    input and runs tg.conv2d on them without padding. The output's spatial chunks follow the
    input's (the same count, at the same proportions of the image); channels are put in one
    chunk. weight and bias are NumPy arrays (sent to every task). The arguments are checked by
    tg.conv2d (its messages) on one image of zeros of x's shape first."""
    import dask.array as da

    from tilegen.ops.conv2d.api import _Geometry

    x = dask_array("x", x)
    if x.ndim != 4:
        raise ValueError(f"x: tilegen.dask.conv2d takes a batch (4 dimensions, the batch first), "
                         f"got shape {x.shape}")
    weight = np.asarray(weight)
    bias = None if bias is None else np.asarray(bias)
    conv = functools.partial(_conv_block, weight=weight, bias=bias, stride=stride,
                             padding=padding, dilation=dilation, groups=groups, layout=layout,
                             activation=activation)
    # The checks and the output's shape and dtype, from tg.conv2d on one image of zeros (one
    # image's memory, once, here).
    one = conv(np.broadcast_to(np.zeros((), x.dtype), (1,) + x.shape[1:]))
    meta = np.empty((0,) * 4, one.dtype)
    hs, ws, cax = (2, 3, 1) if layout == "NCHW" else (1, 2, 3)
    x = single_chunk(x, [cax])
    if len(x.chunks[hs]) == 1 and len(x.chunks[ws]) == 1:
        chunks = (x.chunks[0],) + tuple((s,) for s in one.shape[1:])
        return x.map_blocks(conv, dtype=one.dtype, chunks=chunks, meta=meta)
    g = _Geometry(weight, bias, stride, padding, dilation, groups, layout, activation, x.dtype)
    pt, pl, pb, pr = g.pads
    (sh, sw), (dh, dw) = g.stride, g.dilation
    eh, ew = dh * (g.kh - 1) + 1, dw * (g.kw - 1) + 1
    pads = [(0, 0)] * 4
    pads[hs], pads[ws] = (pt, pb), (pl, pr)
    xp = da.pad(x, pads, mode="constant") if any(g.pads) else x
    unpadded = functools.partial(_conv_block, weight=weight, bias=bias, stride=stride,
                                 padding=0, dilation=dilation, groups=groups, layout=layout,
                                 activation=activation)
    rows = _bounds(x.chunks[hs], one.shape[hs], x.shape[hs])
    cols = _bounds(x.chunks[ws], one.shape[ws], x.shape[ws])
    bands = []
    for r0, r1 in zip(rows[:-1], rows[1:]):
        band = []
        for c0, c1 in zip(cols[:-1], cols[1:]):
            where = [slice(None)] * 4
            where[hs] = slice(r0 * sh, (r1 - 1) * sh + eh)
            where[ws] = slice(c0 * sw, (c1 - 1) * sw + ew)
            piece = single_chunk(xp[tuple(where)], [hs, ws])
            chunks = list(piece.chunks)
            chunks[hs], chunks[ws], chunks[cax] = (r1 - r0,), (c1 - c0,), (g.cout,)
            band.append(piece.map_blocks(unpadded, dtype=one.dtype, chunks=tuple(chunks),
                                         meta=meta))
        bands.append(da.concatenate(band, axis=ws))
    return da.concatenate(bands, axis=hs)


def _attention_block(q, k, v, *, mask, causal, scale, q0, sq_total):
    if causal:  # bottom-right (True) or top-left, as a mask for this chunk of queries
        offset = k.shape[-2] - sq_total if causal != "top_left" else 0
        rows = np.arange(q0, q0 + q.shape[-2])[:, None]
        keep = np.arange(k.shape[-2])[None, :] <= rows + offset
        if mask is None:
            mask = keep
        elif mask.dtype == np.bool_:
            mask = mask & keep
        else:
            mask = np.where(keep, mask, -np.inf).astype(mask.dtype)
    return tg.attention(q, k, v, mask=mask, scale=scale)


def attention(q, k, v, *, mask=None, causal=False, scale=None):
    """tg.attention on dask arrays q (..., Sq, D), k (..., Sk, D), v (..., Sk, Dv): a task per
    chunk of q's leading dimensions (batch, heads) and of its queries; k and v are chunked
    like q's leading dimensions, their keys and head dims in one chunk. k and v have q's
    leading dimensions (broadcast them first, e.g. with da.broadcast_to). mask: None or a
    NumPy array of shape (Sk,) or (Sq, Sk) (boolean, True = attend, or additive float).
    causal and scale as tg.attention; a causal chunk of queries gets its rows of the mask."""
    import dask.array as da

    q, k, v = dask_array("q", q), dask_array("k", k), dask_array("v", v)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.ndim not in (1, 2) or mask.shape[-1] != k.shape[-2] or (
                mask.ndim == 2 and mask.shape[0] != q.shape[-2]):
            raise ValueError(f"mask: tilegen.dask.attention takes a mask of shape (Sk,) = "
                             f"({k.shape[-2]},) or (Sq, Sk) = ({q.shape[-2]}, {k.shape[-2]}), "
                             f"got {mask.shape}")
    # tg.attention checks the arguments (its messages) and gives the dtype, on one query and
    # one key of each operand (and of the mask).
    probe = [np.zeros([min(n, 1) for n in x.shape[:-1]] + list(x.shape[-1:]), x.dtype)
             for x in (q, k, v)]
    pmask = None if mask is None else mask[(slice(0, 1),) * mask.ndim]
    dtype = tg.attention(*probe, mask=pmask, causal=causal, scale=scale).dtype
    for name, x in (("k", k), ("v", v)):
        if x.shape[:-2] != q.shape[:-2]:
            raise ValueError(f"{name}: tilegen.dask.attention needs q's leading dimensions "
                             f"{q.shape[:-2]}, got {x.shape[:-2]} (broadcast it first: "
                             f"dask.array.broadcast_to)")
    lead = q.ndim - 2
    k = single_chunk(k, [-2, -1]).rechunk(q.chunks[:-2] + (-1, -1))
    v = single_chunk(v, [-2, -1]).rechunk(q.chunks[:-2] + (-1, -1))
    q = single_chunk(q, [-1])
    idx = tuple(f"l{i}" for i in range(lead))
    pieces, q0 = [], 0
    for sq in q.chunks[-2]:
        part = q[..., q0:q0 + sq, :]
        m = mask if mask is None or mask.ndim == 1 else mask[q0:q0 + sq]
        run = functools.partial(_attention_block, mask=m, causal=causal, scale=scale, q0=q0,
                                sq_total=q.shape[-2])
        pieces.append(da.blockwise(run, idx + ("q", "e"), part, idx + ("q", "d"),
                                   k, idx + ("k", "d"), v, idx + ("k", "e"), dtype=dtype,
                                   concatenate=True, meta=np.empty((0,) * q.ndim, dtype)))
        q0 += sq
    return pieces[0] if len(pieces) == 1 else da.concatenate(pieces, axis=-2)
