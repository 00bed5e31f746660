# cython: language_level=3, wraparound=True, boundscheck=True
"""The attention op's bindings: argument checks, NumPy broadcasting turned into strides, the
GIL released around the C call. `attention` is exported as `tilegen.attention` (op.yaml).
"""
cimport numpy as cnp
from libc.stdint cimport int64_t, int32_t, uint8_t

import math
import numbers

import numpy as np

from tilegen import _out

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    int TILEGEN_ATTENTION_MAX_BATCH_NDIM
    int TILEGEN_CAUSAL_NONE
    int TILEGEN_CAUSAL_BOTTOM_RIGHT
    int TILEGEN_CAUSAL_TOP_LEFT
    int tilegen_attention_f32(int64_t batch_ndim, const int64_t* batch_shape, int64_t heads_q,
                              int64_t heads_kv, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                              const float* q, const int64_t* q_strides, const float* k,
                              const int64_t* k_strides, const float* v,
                              const int64_t* v_strides, const uint8_t* mask_keep,
                              const float* mask_add, const int64_t* mask_strides, int causal,
                              float scale, float* out, const int64_t* out_strides)
    int tilegen_attention_f64(int64_t batch_ndim, const int64_t* batch_shape, int64_t heads_q,
                              int64_t heads_kv, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                              const double* q, const int64_t* q_strides, const double* k,
                              const int64_t* k_strides, const double* v,
                              const int64_t* v_strides, const uint8_t* mask_keep,
                              const double* mask_add, const int64_t* mask_strides, int causal,
                              double scale, double* out, const int64_t* out_strides)
cdef extern from "tg_attention.h" nogil:
    const char* tilegen_x_attention_kernel()
    void tilegen_x_attention_force_plain(int on)
    int tilegen_x_set_attention_kernel(const char* name)
    const char* tilegen_x_attention_kernel_name(int i)

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# causal= values: True is "bottom_right".
CAUSAL = {"bottom_right": TILEGEN_CAUSAL_BOTTOM_RIGHT, "top_left": TILEGEN_CAUSAL_TOP_LEFT}
# What torch calls them (torch.nn.attention.bias.CausalVariant), for the error's hint.
_TORCH_CAUSAL = {"upper_left": "top_left", "lower_right": "bottom_right"}


def _causal(causal):
    """The C API's causal argument for causal=False | True | "bottom_right" | "top_left"."""
    if isinstance(causal, (bool, np.bool_)):
        return TILEGEN_CAUSAL_BOTTOM_RIGHT if causal else TILEGEN_CAUSAL_NONE
    if not isinstance(causal, str):
        raise TypeError(f"causal: expected a bool, 'bottom_right' or 'top_left', got "
                        f"{type(causal).__name__}")
    try:
        return CAUSAL[causal]
    except KeyError:
        hint = _TORCH_CAUSAL.get(causal.lower().replace("-", "_"))
        hint = f" (torch's {causal.upper()} is {hint!r})" if hint else ""
        raise ValueError(f"causal: {causal!r} is not supported; allowed: False, True (the same "
                         f"as 'bottom_right'), 'bottom_right', 'top_left'{hint}") from None


def kernel_name():
    """The float32 fused-attention kernel in use."""
    cdef const char* p = tilegen_x_attention_kernel()
    return None if p == NULL else p.decode()


def kernels():
    """The registered float32 kernels of the ISA attention runs on (the built-in one and the
    others `tilegen tune` may choose)."""
    out = []
    cdef const char* p = tilegen_x_attention_kernel_name(0)
    while p != NULL:
        out.append(p.decode())
        p = tilegen_x_attention_kernel_name(len(out))
    return out


def set_kernel(name=None):
    """Makes `name` (one of kernels()) attention's float32 kernel; None restores the built-in."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a kernel name or None, not {type(name).__name__}")
    cdef bytes b = (name or "").encode()
    if tilegen_x_set_attention_kernel(b) != 0:
        raise ValueError(f"name: {name!r} is not an attention kernel of this ISA "
                         f"(one of {', '.join(kernels())})")


def _force_plain(bint on):
    """Test hook: run every call through the plain C path (the allocation-free fallback)."""
    tilegen_x_attention_force_plain(on)


cdef object _float_array(object x, str name):
    a = np.asarray(x)
    if a.dtype not in _FLOATS:
        raise TypeError(f"{name}: dtype {a.dtype} is not supported; expected float32 or float64")
    return a


cdef object _element_strides(object a, str name):
    """Strides of `a` in elements; `a` has its last axis contiguous (or of length <= 1)."""
    isz = a.itemsize
    out = []
    for s in a.strides[:-1]:
        if s % isz:
            raise ValueError(f"{name}: strides {a.strides} are not multiples of the item size")
        out.append(s // isz)
    return out


cdef object _rows_contiguous(object a):
    """`a`, or a copy whose last axis is contiguous (what the kernels read as rows)."""
    if a.shape[-1] > 1 and a.strides[-1] != a.itemsize:
        return np.ascontiguousarray(a)
    if any(s % a.itemsize for s in a.strides):
        return np.ascontiguousarray(a)
    return a


def attention(q, k, v, *, mask=None, causal=False, scale=None, out=None):
    """Scaled dot-product attention, fused: softmax(scale * q @ k^T + mask) @ v.

    q (..., Sq, D), k (..., Sk, D), v (..., Sk, Dv) -> (..., Sq, Dv). Leading dimensions
    broadcast; k and v may have fewer heads (the dimension before Sq) than q when their count
    divides q's (grouped-query attention). `mask` broadcasts to (..., Sq, Sk) as NumPy
    broadcasts (a (Sk,) key-padding mask, (Sq, Sk), (B, 1, 1, Sk), ...): boolean (True =
    attend) or floating (added to the scores). `causal`: False; True or "bottom_right" lets
    query i see keys j <= i + Sk - Sq (the diagonal aligned bottom-right: the last query sees
    every key, as a query appended to a KV cache does; torch.nn.attention.bias.
    causal_lower_right); "top_left" lets it see keys j <= i (torch's `is_causal=True`). They
    agree when Sq == Sk. A mask and causal may both be given. A query that sees no key gets
    zeros, as torch's math SDPA returns (bottom-right with Sq > Sk: the first Sq - Sk rows; a
    mask that hides a whole row; Sk = 0). `scale` defaults to 1/sqrt(D). float32 and
    float64 (mixed inputs compute in float64); the Sq x Sk scores are never stored. `out`: an
    array of the result's shape and dtype (any strides with the last axis contiguous) to write
    into and return; it may overlap the inputs (then the result goes through a temporary).
    """
    q = _float_array(q, "q")
    k = _float_array(k, "k")
    v = _float_array(v, "v")
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim < 2:
            raise ValueError(f"{name}: expected at least 2 dimensions (..., S, D), got shape "
                             f"{a.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k: head dims differ: q {q.shape} has D={q.shape[-1]}, "
                         f"k {k.shape} has D={k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v: key counts differ: k {k.shape} has Sk={k.shape[-2]}, "
                         f"v {v.shape} has Sk={v.shape[-2]}")
    dtype = np.result_type(q, k, v)
    keep = add = None
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype == np.bool_:
            keep = mask
        elif mask.dtype.kind == "f":
            add = mask.astype(dtype, copy=False)
        else:
            raise TypeError(f"mask: dtype {mask.dtype} is not supported; expected bool "
                            "(True = attend) or a floating additive mask")
        if mask.ndim == 0:  # mask=True is more likely a causal flag than a mask
            raise ValueError("mask: a scalar is not a mask; it broadcasts to (..., Sq, Sk) from "
                             "(Sk,) or more dimensions (for causal masking pass causal=)")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] > 0 else 1.0
    elif isinstance(scale, numbers.Real) and not isinstance(scale, bool):
        scale = float(scale)
    else:
        raise TypeError(f"scale: expected a real number or None, got {type(scale).__name__}")
    cdef int causal_c = _causal(causal)

    sq, d = q.shape[-2], q.shape[-1]
    sk, dv = k.shape[-2], v.shape[-1]
    nd_in = max(q.ndim, k.ndim, v.ndim, mask.ndim if mask is not None else 0)
    nd = max(nd_in, 3)  # batch dims + heads + rows
    pad = lambda shape: (1,) * (nd - len(shape)) + tuple(shape)
    qs, ks, vs = pad(q.shape), pad(k.shape), pad(v.shape)
    # Heads: k and v broadcast between themselves; q's count is a multiple of theirs (GQA), or
    # q has one head and broadcasts over theirs.
    hk, hv = ks[-3], vs[-3]
    if hk != hv and 1 not in (hk, hv):
        raise ValueError(f"k and v: head counts {hk} and {hv} differ (shapes {k.shape} and "
                         f"{v.shape})")
    hkv = max(hk, hv)
    hq = qs[-3]
    if hq % hkv == 0:
        heads = hq
    elif hq == 1:
        heads = hkv
    else:
        raise ValueError(f"q and k/v: {hq} query heads are not a multiple of {hkv} key/value "
                         f"heads (shapes q {q.shape}, k {k.shape}, v {v.shape})")
    try:
        batch = np.broadcast_shapes(qs[:-3], ks[:-3], vs[:-3],
                                    pad(mask.shape)[:-3] if mask is not None else ())
    except ValueError:
        shapes = f"q {q.shape}, k {k.shape}, v {v.shape}" + (
            f", mask {mask.shape}" if mask is not None else "")
        raise ValueError(f"q, k, v and mask: leading dimensions do not broadcast ({shapes})") from None
    if len(batch) > TILEGEN_ATTENTION_MAX_BATCH_NDIM:
        raise ValueError(f"q: at most {TILEGEN_ATTENTION_MAX_BATCH_NDIM + 3} dimensions are "
                         f"supported, got {nd}")

    def view(a, heads_here, rows, cols):
        a = _rows_contiguous(a.astype(dtype, copy=False))
        return np.broadcast_to(a.reshape(pad(a.shape)), batch + (heads_here, rows, cols))

    qb = view(q, heads if hq == 1 else hq, sq, d)
    kb = view(k, hkv, sk, d)
    vb = view(v, hkv, sk, dv)
    mb = None
    if mask is not None:
        m = keep.view(np.uint8) if keep is not None else add
        try:
            mb = np.broadcast_to(m.reshape(pad(m.shape)), batch + (heads, sq, sk))
        except ValueError:
            raise ValueError(f"mask: shape {mask.shape} does not broadcast to the scores' "
                             f"{batch + (heads, sq, sk)} (q {q.shape}, k {k.shape})") from None
    out_shape = batch + (heads, sq, dv)
    given = out
    if given is None:
        out = np.empty(out_shape, dtype)
    else:
        _out.check(given, out_shape[nd - nd_in:], np.dtype(dtype), rows=True)
        full = given[(None,) * (nd - nd_in)]  # 2-D inputs: a view with the head dimension
        out = _out.target(full, (q, k, v, mask))

    cdef int nb = len(batch)
    meta = np.zeros((6, nb + 3), dtype=np.int64)
    meta[0, :nb] = batch
    meta[1, :nb + 2] = _element_strides(qb, "q")
    meta[2, :nb + 2] = _element_strides(kb, "k")
    meta[3, :nb + 2] = _element_strides(vb, "v")
    meta[5, :nb + 2] = _element_strides(out, "out")
    if mb is not None:
        mstr = list(mb.strides)
        isz = mb.itemsize
        if any(s % isz for s in mstr):
            mb = np.ascontiguousarray(mb)
            mstr = list(mb.strides)
        meta[4, :nb + 3] = [s // isz for s in mstr]
    cdef int64_t[:, ::1] mv = meta
    cdef int64_t hq_c = heads, hkv_c = hkv, sq_c = sq, sk_c = sk, d_c = d, dv_c = dv
    cdef int rc
    cdef cnp.ndarray Q = qb, K = kb, V = vb, O = out
    cdef const uint8_t* pkeep = NULL
    cdef void* padd = NULL
    cdef cnp.ndarray MB
    if mb is not None:
        MB = mb
        if keep is not None:
            pkeep = <const uint8_t*> cnp.PyArray_DATA(MB)
        else:
            padd = cnp.PyArray_DATA(MB)
    cdef double sc = scale
    if dtype == np.float32:
        with nogil:
            rc = tilegen_attention_f32(nb, &mv[0, 0], hq_c, hkv_c, sq_c, sk_c, d_c, dv_c,
                                       <const float*> cnp.PyArray_DATA(Q), &mv[1, 0],
                                       <const float*> cnp.PyArray_DATA(K), &mv[2, 0],
                                       <const float*> cnp.PyArray_DATA(V), &mv[3, 0],
                                       pkeep, <const float*> padd, &mv[4, 0], causal_c,
                                       <float> sc, <float*> cnp.PyArray_DATA(O), &mv[5, 0])
    else:
        with nogil:
            rc = tilegen_attention_f64(nb, &mv[0, 0], hq_c, hkv_c, sq_c, sk_c, d_c, dv_c,
                                       <const double*> cnp.PyArray_DATA(Q), &mv[1, 0],
                                       <const double*> cnp.PyArray_DATA(K), &mv[2, 0],
                                       <const double*> cnp.PyArray_DATA(V), &mv[3, 0],
                                       pkeep, <const double*> padd, &mv[4, 0], causal_c,
                                       sc, <double*> cnp.PyArray_DATA(O), &mv[5, 0])
    if rc != 0:  # the checks above should make this unreachable
        raise ValueError(f"tilegen_attention: invalid argument {-rc}")
    if given is not None:
        _out.finish(full, out)
        return given
    return out.reshape(out_shape[nd - nd_in:])  # 2-D inputs: no head dimension
