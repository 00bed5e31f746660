# cython: language_level=3, wraparound=True, boundscheck=True
"""The paged_attention op's bindings: argument checks, the GIL released around the C call.
`paged_attention` is exported as `tilegen.paged_attention` (op.yaml).
"""
cimport numpy as cnp
from libc.stdint cimport int64_t, int32_t

import math
import numbers

import numpy as np

from tilegen import _out

cnp.import_array()

cdef extern from "tilegen.h" nogil:
    int tilegen_paged_attention_f32(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t d,
                                    const float* q, int64_t q_stride_b, int64_t q_stride_h,
                                    const float* k_cache, const int64_t* k_strides,
                                    const float* v_cache, const int64_t* v_strides,
                                    int64_t num_blocks, int64_t block_size,
                                    const int32_t* block_table, int64_t max_blocks,
                                    int64_t block_table_stride, const int32_t* seq_lens,
                                    float scale, float* out, int64_t out_stride_b,
                                    int64_t out_stride_h)
    int tilegen_paged_attention_f64(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t d,
                                    const double* q, int64_t q_stride_b, int64_t q_stride_h,
                                    const double* k_cache, const int64_t* k_strides,
                                    const double* v_cache, const int64_t* v_strides,
                                    int64_t num_blocks, int64_t block_size,
                                    const int32_t* block_table, int64_t max_blocks,
                                    int64_t block_table_stride, const int32_t* seq_lens,
                                    double scale, double* out, int64_t out_stride_b,
                                    int64_t out_stride_h)


cdef extern from "tg_paged_attention.h" nogil:
    const char* tilegen_x_paged_attention_kernel()
    void tilegen_x_paged_attention_force_plain(int on)
    int tilegen_x_set_paged_kernel(const char* name)
    const char* tilegen_x_paged_kernel_name(int i)

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def kernel_name():
    """The float32 decode kernel in use."""
    cdef const char* p = tilegen_x_paged_attention_kernel()
    return None if p == NULL else p.decode()


def paged_kernels():
    """The registered float32 decode kernels of the ISA paged attention runs on (the built-in
    one and the others `tilegen tune` may choose)."""
    out = []
    cdef const char* p = tilegen_x_paged_kernel_name(0)
    while p != NULL:
        out.append(p.decode())
        p = tilegen_x_paged_kernel_name(len(out))
    return out


def set_paged_kernel(name=None):
    """Makes `name` (one of paged_kernels()) paged attention's float32 kernel; None restores
    the built-in one."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a kernel name or None, not {type(name).__name__}")
    cdef bytes b = (name or "").encode()
    if tilegen_x_set_paged_kernel(b) != 0:
        raise ValueError(f"name: {name!r} is not a decode kernel of this ISA "
                         f"(one of {', '.join(paged_kernels())})")


def _force_plain(bint on):
    """Test hook: run every call through the plain C path (the allocation-free fallback)."""
    tilegen_x_paged_attention_force_plain(on)


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


cdef object _int32_array(object x, str name):
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: dtype {a.dtype} is not supported; expected integers (int32)")
    if a.dtype != np.int32 and a.size and (a.min() < np.iinfo(np.int32).min
                                           or a.max() > np.iinfo(np.int32).max):
        raise ValueError(f"{name}: values outside the int32 range")
    return np.ascontiguousarray(a, dtype=np.int32)


def _check_causal(causal):
    """Decode has one alignment: the new token is its sequence's last, so it sees every cached
    token (bottom-right, which for one query is also no mask at all). top_left would show it
    the first token only: refused rather than computed."""
    if isinstance(causal, (bool, np.bool_)) or causal == "bottom_right":
        return
    if isinstance(causal, str):
        if causal == "top_left":
            raise ValueError("causal: 'top_left' does not apply to decode: the query is the "
                             "newest token of its sequence and sees all seq_lens[b] cached "
                             "tokens, which is the bottom-right alignment (True, "
                             "'bottom_right'); top-left would let it see the first token only. "
                             "For prefill with torch's is_causal, use tg.attention(..., "
                             "causal='top_left')")
        raise ValueError(f"causal: {causal!r} is not supported; allowed: False, True, "
                         f"'bottom_right' (all the same for one query per sequence)")
    raise TypeError(f"causal: expected a bool or 'bottom_right', got {type(causal).__name__}")


def paged_attention(q, k_cache, v_cache, block_table, seq_lens, *, causal=True, scale=None,
                    out=None):
    """Decode attention over a paged KV cache (FlashAttention's `block_table`, vLLM's layout).

    q (B, Hq, D): one new token per sequence; k_cache, v_cache (num_blocks, block_size, Hkv, D);
    block_table (B, max_blocks) and seq_lens (B,) integers (int32). Sequence b attends to its
    first seq_lens[b] cached tokens, token t at k_cache[block_table[b, t // block_size],
    t % block_size]; query head h reads kv head h // (Hq // Hkv). Returns (B, Hq, D) in q's dtype
    (float32 or float64; mixed inputs compute in float64). seq_lens[b] = 0 gives zeros; entries
    of block_table past a sequence's length are never read. `scale` defaults to 1/sqrt(D).
    `causal` is accepted for code written against tg.attention: the query is its sequence's
    newest token, so it sees every cached token whatever False, True or "bottom_right" says
    (bottom-right alignment with Sq = 1); "top_left" is refused (ValueError). `out`: a (B, Hq, D)
    array of the result's dtype (any strides with the last axis contiguous) to write into and
    return; it may overlap the inputs (then the result goes through a temporary).
    """
    _check_causal(causal)
    q = _float_array(q, "q")
    k = _float_array(k_cache, "k_cache")
    v = _float_array(v_cache, "v_cache")
    if q.ndim != 3:
        raise ValueError(f"q: expected shape (B, Hq, D), got {q.shape}")
    if k.ndim != 4:
        raise ValueError(f"k_cache: expected shape (num_blocks, block_size, Hkv, D), got {k.shape}")
    if v.shape != k.shape:
        raise ValueError(f"v_cache: shape {v.shape} differs from k_cache's {k.shape}")
    B, hq, d = q.shape
    num_blocks, block_size, hkv, dk = k.shape
    if dk != d:
        raise ValueError(f"q and k_cache: head dims differ: q {q.shape} has D={d}, k_cache "
                         f"{k.shape} has D={dk}")
    if hkv == 0 or hq % hkv:
        raise ValueError(f"q and k_cache: {hq} query heads are not a multiple of {hkv} kv heads "
                         f"(shapes q {q.shape}, k_cache {k.shape})")
    if block_size == 0:
        raise ValueError(f"k_cache: block_size is 0 (shape {k.shape})")
    bt = _int32_array(block_table, "block_table")
    lens = _int32_array(seq_lens, "seq_lens")
    if bt.ndim != 2 or bt.shape[0] != B:
        raise ValueError(f"block_table: expected shape ({B}, max_blocks) for q {q.shape}, got "
                         f"{bt.shape}")
    if lens.shape != (B,):
        raise ValueError(f"seq_lens: expected shape ({B},) for q {q.shape}, got {lens.shape}")
    max_blocks = bt.shape[1]
    if scale is None:
        scale = 1.0 / math.sqrt(d) if d > 0 else 1.0
    elif isinstance(scale, numbers.Real) and not isinstance(scale, bool):
        scale = float(scale)
    else:
        raise TypeError(f"scale: expected a real number or None, got {type(scale).__name__}")

    dtype = np.result_type(q, k, v)
    q = _rows_contiguous(q.astype(dtype, copy=False))
    k = _rows_contiguous(k.astype(dtype, copy=False))
    v = _rows_contiguous(v.astype(dtype, copy=False))
    given = out
    if given is None:
        out = np.empty((B, hq, d), dtype)
    else:
        out = _out.target(_out.check(given, (B, hq, d), np.dtype(dtype), rows=True), (q, k, v))
    qs = _element_strides(q, "q")
    os_ = _element_strides(out, "out")
    meta = np.array([_element_strides(k, "k_cache"), _element_strides(v, "v_cache")], np.int64)
    cdef int64_t[:, ::1] mv = meta
    cdef cnp.ndarray Q = q, K = k, V = v, O = out, BT = bt, L = lens
    cdef int64_t b_c = B, hq_c = hq, hkv_c = hkv, d_c = d, nb_c = num_blocks
    cdef int64_t bs_c = block_size, mb_c = max_blocks, bts = max_blocks
    cdef int64_t qsb = qs[0], qsh = qs[1], osb = os_[0], osh = os_[1]
    cdef double sc = scale
    cdef int rc
    if dtype == np.float32:
        with nogil:
            rc = tilegen_paged_attention_f32(
                b_c, hq_c, hkv_c, d_c, <const float*> cnp.PyArray_DATA(Q), qsb, qsh,
                <const float*> cnp.PyArray_DATA(K), &mv[0, 0],
                <const float*> cnp.PyArray_DATA(V), &mv[1, 0], nb_c, bs_c,
                <const int32_t*> cnp.PyArray_DATA(BT), mb_c, bts,
                <const int32_t*> cnp.PyArray_DATA(L), <float> sc,
                <float*> cnp.PyArray_DATA(O), osb, osh)
    else:
        with nogil:
            rc = tilegen_paged_attention_f64(
                b_c, hq_c, hkv_c, d_c, <const double*> cnp.PyArray_DATA(Q), qsb, qsh,
                <const double*> cnp.PyArray_DATA(K), &mv[0, 0],
                <const double*> cnp.PyArray_DATA(V), &mv[1, 0], nb_c, bs_c,
                <const int32_t*> cnp.PyArray_DATA(BT), mb_c, bts,
                <const int32_t*> cnp.PyArray_DATA(L), sc,
                <double*> cnp.PyArray_DATA(O), osb, osh)
    if rc in (-14, -17):  # the C core checks the indices before reading anything
        _raise_index_error(bt, lens, block_size, num_blocks, k.shape)
    if rc != 0:  # the checks above should make this unreachable
        raise ValueError(f"tilegen_paged_attention: invalid argument {-rc}")
    return out if given is None else _out.finish(given, out)


cdef _raise_index_error(bt, lens, int64_t block_size, int64_t num_blocks, k_shape):
    """The ValueError naming the first seq_len past the block table's capacity (or negative),
    else the first block_table entry a sequence reads that is not a block of the cache."""
    max_blocks = bt.shape[1]
    bad = np.flatnonzero((lens < 0) | (lens > max_blocks * block_size))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"seq_lens: seq_lens[{i}] = {lens[i]} is outside [0, {max_blocks} "
                         f"x {block_size}] (block_table {bt.shape}, block_size {block_size})")
    used = np.arange(max_blocks)[None, :] < ((lens.astype(np.int64) + block_size - 1)
                                             // block_size)[:, None]
    b, x = map(int, np.argwhere(used & ((bt < 0) | (bt >= num_blocks)))[0])
    raise ValueError(f"block_table: block_table[{b}, {x}] = {bt[b, x]} is outside "
                     f"[0, {num_blocks}) (k_cache {k_shape}), and sequence {b} reads it")
