"""Calling libtilegen's BLAS through ctypes, and the storage formats the tests build by hand.

Everything here is independent of tilegen's C: vectors with any increment, matrices in either
layout with padded leading dimensions, and the band / packed formats of the BLAS and CBLAS
documentation, each written from its definition (element (i, j) -> offset), so a test compares
libtilegen with a plain NumPy float64 / complex128 computation on the logical matrices.
"""
import ctypes
import zlib
from ctypes import POINTER, byref, c_char_p, c_double, c_float, c_int, c_void_p

import numpy as np

import cprog

TYPES = {  # prefix -> (NumPy dtype, ctypes real type, relative tolerance)
    "s": (np.float32, c_float, 2e-5),
    "d": (np.float64, c_double, 1e-12),
    "c": (np.complex64, c_float, 2e-5),
    "z": (np.complex128, c_double, 1e-12),
}
REAL = {"s": "s", "d": "d", "c": "s", "z": "d"}
ROW, COL = 101, 102
NOTRANS, TRANS, CONJTRANS = 111, 112, 113
UPPER, LOWER = 121, 122
NONUNIT, UNIT = 131, 132
LEFT, RIGHT = 141, 142
CB_TRANS = {"N": NOTRANS, "T": TRANS, "C": CONJTRANS}
CB_UPLO = {"U": UPPER, "L": LOWER}
CB_DIAG = {"N": NONUNIT, "U": UNIT}
CB_SIDE = {"L": LEFT, "R": RIGHT}
PAD = np.nan       # padding of inputs: reading it shows up as NaN in the result
SENTINEL = 777.25  # padding of outputs: must survive bit for bit

_lib = None


def lib():
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(str(cprog.library()))
    return _lib


class CFloat2(ctypes.Structure):  # float _Complex as returned in registers
    _fields_ = [("re", c_float), ("im", c_float)]


class CDouble2(ctypes.Structure):
    _fields_ = [("re", c_double), ("im", c_double)]


def is_complex(t: str) -> bool:
    return t in "cz"


def rng(*key):
    """A generator seeded from the test's parameters (stable across runs and processes)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def rand(r, t, shape):
    dt = TYPES[t][0]
    x = r.uniform(-1, 1, shape)
    if is_complex(t):
        x = x + 1j * r.uniform(-1, 1, shape)
    return np.asarray(x, dtype=dt)


def tol(t, scale=1.0):
    return TYPES[t][2] * max(1.0, scale)


def assert_close(got, want, t, scale=1.0, what=""):
    got = np.asarray(got, dtype=np.complex128 if is_complex(t) else np.float64)
    want = np.asarray(want, dtype=got.dtype)
    err = np.max(np.abs(got - want)) if got.size else 0.0
    ref = max(1.0, np.max(np.abs(want)) if want.size else 1.0)
    assert np.all(np.isfinite(got) == np.isfinite(want)), f"{what}: NaN/Inf where none expected\n{got}\n{want}"
    assert err <= tol(t, scale) * ref * 10, f"{what}: max error {err} (tolerance {tol(t, scale) * ref * 10})"


# ---------------------------------------------------------------------------- argument helpers

def ptr(a: np.ndarray):
    return a.ctypes.data_as(c_void_p)


def ch(s: str):
    return c_char_p(s.encode())


def ip(v: int):
    return byref(c_int(v))


def scal_ptr(t, v):
    """A pointer to one scalar of type t (Fortran ABI, and CBLAS's complex scalars)."""
    return ptr(np.array([v], dtype=TYPES[t][0]))


def rscal_ptr(t, v):
    return ptr(np.array([v], dtype=TYPES[REAL[t]][0]))


def cb_scal(t, v):
    """A CBLAS scalar: real by value, complex by pointer."""
    return scal_ptr(t, v) if is_complex(t) else TYPES[t][1](v)


def cb_real(t, v):
    return TYPES[t][1](v)


def call(name, *args, restype=None):
    f = getattr(lib(), name)
    f.restype = restype
    return f(*args)


# ---------------------------------------------------------------------------- vectors

class Vec:
    """A BLAS vector of n elements with increment inc in a buffer with padding between and
    around its elements (logical element i at buf[off(i)])."""

    def __init__(self, t, values, inc, pad=PAD):
        self.t, self.n, self.inc = t, len(values), inc
        size = 1 + (self.n - 1) * abs(inc) if self.n else 1
        self.buf = np.full(size + 2, pad, dtype=TYPES[t][0])  # one guard element each side
        self.idx = np.array([1 + (i * inc if inc > 0 else (self.n - 1 - i) * -inc)
                             for i in range(self.n)], dtype=np.int64) if inc else \
            np.ones(self.n, dtype=np.int64)
        if self.n:
            self.buf[self.idx] = values
        self.orig = self.buf.copy()

    @property
    def p(self):
        return c_void_p(self.buf.ctypes.data + self.buf.itemsize)

    def values(self):
        return self.buf[self.idx]

    def untouched_ok(self):
        """Every element that is not part of the vector is as it was."""
        mask = np.ones(len(self.buf), bool)
        mask[self.idx] = False
        a, b = self.buf[mask], self.orig[mask]
        return np.array_equal(a, b, equal_nan=True)


# ---------------------------------------------------------------------------- matrices

def storage(t, rows, cols, entries, size, pad):
    """A flat buffer of `size` elements (pad elsewhere) holding value v at offset o for each
    (o, v) of entries."""
    buf = np.full(max(size, 1), pad, dtype=TYPES[t][0])
    for o, v in entries:
        buf[o] = v
    return buf


def _offsets(m, n, ld, layout):
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return (i + j * ld) if layout == COL else (i * ld + j)


def general(t, a, ld, layout=COL, pad=PAD):
    """A (m x n) in full storage: offset i + j*ld (column-major) or i*ld + j (row-major)."""
    m, n = a.shape
    buf = np.full(max(ld * (n if layout == COL else m), 1), pad, dtype=TYPES[t][0])
    buf[_offsets(m, n, ld, layout)] = a
    return buf


def read_general(buf, m, n, ld, layout=COL):
    return buf[_offsets(m, n, ld, layout)]


def general_mask(m, n, ld, layout, size):
    mask = np.zeros(size, bool)
    mask[_offsets(m, n, ld, layout)] = True
    return mask


def band_offsets(m, n, kl, ku, ld, layout):
    """(i, j) -> offset of the general band format: column-major AB(ku + i - j, j); row-major
    (CBLAS) AB(i, kl + j - i)."""
    out = {}
    for i in range(m):
        for j in range(max(0, i - kl), min(n, i + ku + 1)):
            out[(i, j)] = (ku + i - j) + j * ld if layout == COL else i * ld + (kl + j - i)
    return out


def tri_in(uplo, i, j, k=None):
    inside = i <= j if uplo == "U" else i >= j
    return inside and (k is None or abs(i - j) <= k)


def sym_band_offsets(n, k, uplo, ld, layout):
    """(i, j) in the uplo triangle within k of the diagonal -> offset of the symmetric /
    triangular band format: column-major upper AB(k + i - j, j), lower AB(i - j, j);
    row-major upper AB(i, j - i), lower AB(i, k + j - i)."""
    out = {}
    for i in range(n):
        for j in range(n):
            if not tri_in(uplo, i, j, k):
                continue
            if layout == COL:
                out[(i, j)] = ((k + i - j) if uplo == "U" else (i - j)) + j * ld
            else:
                out[(i, j)] = i * ld + ((j - i) if uplo == "U" else (k + j - i))
    return out


def packed_offsets(n, uplo, layout):
    """(i, j) in the uplo triangle -> offset in packed storage: the triangle's columns
    (column-major) or rows (row-major) one after another."""
    out, o = {}, 0
    if layout == COL:
        for j in range(n):
            for i in (range(j + 1) if uplo == "U" else range(j, n)):
                out[(i, j)] = o
                o += 1
    else:
        for i in range(n):
            for j in (range(i, n) if uplo == "U" else range(i + 1)):
                out[(i, j)] = o
                o += 1
    return out


def from_offsets(t, a, offsets, size, pad=PAD):
    buf = np.full(max(size, 1), pad, dtype=TYPES[t][0])
    if offsets:
        ij = np.array(list(offsets.keys()))
        buf[np.array(list(offsets.values()))] = a[ij[:, 0], ij[:, 1]]
    return buf


def read_offsets(buf, n_rows, n_cols, offsets):
    out = np.zeros((n_rows, n_cols), dtype=buf.dtype)
    if offsets:
        ij = np.array(list(offsets.keys()))
        out[ij[:, 0], ij[:, 1]] = buf[np.array(list(offsets.values()))]
    return out


def op(a, tr):
    return a if tr == "N" else a.T if tr == "T" else a.conj().T


def sym_full(a, uplo, herm):
    """The symmetric / Hermitian matrix whose uplo triangle is a's (the diagonal's imaginary
    part ignored when Hermitian)."""
    n = a.shape[0]
    t = np.triu(a) if uplo == "U" else np.tril(a)
    strict = t - np.diag(np.diag(t))
    other = strict.conj().T if herm else strict.T
    d = np.diag(a).real if herm else np.diag(a)
    return strict + other + np.diag(d).astype(a.dtype if not herm else np.complex128)


def tri_full(a, uplo, diag, k=None):
    n = a.shape[0]
    out = np.zeros_like(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    for i in range(n):
        for j in range(n):
            if tri_in(uplo, i, j, k):
                out[i, j] = a[i, j]
    if diag == "U":
        np.fill_diagonal(out, 1)
    return out


def tri_only(a, uplo, unit=False):
    """a with NaN outside its uplo triangle (and on the diagonal when unit): what a routine
    given the triangle may read is the triangle only."""
    n = a.shape[0]
    keep = np.triu(np.ones((n, n), bool)) if uplo == "U" else np.tril(np.ones((n, n), bool))
    if unit:
        keep &= ~np.eye(n, dtype=bool)
    return np.where(keep, a, np.nan).astype(a.dtype)
