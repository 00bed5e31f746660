"""Every BLAS routine of libtilegen, Fortran ABI and CBLAS (both layouts), against a plain
NumPy float64 / complex128 computation on the logical vectors and matrices (blasref.py builds
the storage from the formats' definitions): increments positive, negative and zero where the
reference allows it, padded leading dimensions (the padding of inputs is NaN, so reading it
shows; that of outputs a sentinel that must survive), empty sizes, beta = 0 not reading the
output (NaN there must vanish) and the quick returns. Called through ctypes on the library this
process runs (cprog.library()).
"""
import ctypes
from ctypes import c_double, c_float, c_int, c_size_t, c_void_p

import numpy as np
import pytest

from blasref import (COL, ROW, CB_DIAG, CB_SIDE, CB_TRANS, CB_UPLO, REAL, SENTINEL, TYPES,
                     CDouble2, CFloat2, Vec, assert_close, band_offsets, call, cb_real, cb_scal,
                     ch, from_offsets, general, general_mask, ip, is_complex, op, packed_offsets,
                     ptr, rand, read_general, read_offsets, rng, rscal_ptr, scal_ptr,
                     sym_band_offsets, sym_full, tri_full, tri_only)

ALL = "sdcz"
INCS = [(1, 1), (2, -3), (-1, 2)]
F64 = {"s": np.float64, "d": np.float64, "c": np.complex128, "z": np.complex128}


def up(t):
    return np.asarray


def ref(x, t):
    return np.asarray(x, dtype=F64[t])


def alpha_of(t, k=0):
    vals = [0.7, -1.3, 0.0, 1.0]
    a = vals[k % len(vals)]
    return complex(a, 0.4) if is_complex(t) and a not in (0.0, 1.0) else a


# ================================================================================ level 1

@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("n", [0, 1, 7, 301])  # 301: the generated kernels' steps and tails
@pytest.mark.parametrize("incx,incy", INCS)
def test_level1_vector_vector(t, n, incx, incy):
    r = rng(t, n, incx, incy)
    xv, yv = rand(r, t, n), rand(r, t, n)
    a = alpha_of(t)
    for api in ("f77", "cblas"):
        # swap
        x, y = Vec(t, xv, incx), Vec(t, yv, incy)
        if api == "f77":
            call(f"{t}swap_", ip(n), x.p, ip(incx), y.p, ip(incy))
        else:
            call(f"cblas_{t}swap", c_int(n), x.p, c_int(incx), y.p, c_int(incy))
        assert np.array_equal(x.values(), yv) and np.array_equal(y.values(), xv)
        assert x.untouched_ok() and y.untouched_ok()
        # copy
        x, y = Vec(t, xv, incx), Vec(t, yv, incy)
        if api == "f77":
            call(f"{t}copy_", ip(n), x.p, ip(incx), y.p, ip(incy))
        else:
            call(f"cblas_{t}copy", c_int(n), x.p, c_int(incx), y.p, c_int(incy))
        assert np.array_equal(y.values(), xv) and y.untouched_ok()
        # axpy
        x, y = Vec(t, xv, incx), Vec(t, yv, incy)
        if api == "f77":
            call(f"{t}axpy_", ip(n), scal_ptr(t, a), x.p, ip(incx), y.p, ip(incy))
        else:
            call(f"cblas_{t}axpy", c_int(n), cb_scal(t, a), x.p, c_int(incx), y.p, c_int(incy))
        assert_close(y.values(), ref(yv, t) + a * ref(xv, t), t, what=f"{t}axpy {api}")
        assert y.untouched_ok()
        # axpby (OpenBLAS): y = alpha x + beta y; beta = 0 does not read y
        b = alpha_of(t, 1)
        for beta in (b, 0.0):
            x, y = Vec(t, xv, incx), Vec(t, yv if beta else np.full(n, np.nan), incy)
            if api == "f77":
                call(f"{t}axpby_", ip(n), scal_ptr(t, a), x.p, ip(incx), scal_ptr(t, beta), y.p,
                     ip(incy))
            else:
                call(f"cblas_{t}axpby", c_int(n), cb_scal(t, a), x.p, c_int(incx),
                     cb_scal(t, beta), y.p, c_int(incy))
            want = a * ref(xv, t) + (beta * ref(yv, t) if beta else 0)
            assert_close(y.values(), want, t, what=f"{t}axpby {api}")
        # dot / dotu / dotc
        x, y = Vec(t, xv, incx), Vec(t, yv, incy)
        if not is_complex(t):
            rt = TYPES[t][1]
            got = (call(f"{t}dot_", ip(n), x.p, ip(incx), y.p, ip(incy), restype=rt)
                   if api == "f77" else
                   call(f"cblas_{t}dot", c_int(n), x.p, c_int(incx), y.p, c_int(incy),
                        restype=rt))
            assert_close([got], [np.sum(ref(xv, t) * ref(yv, t))], t, scale=n, what="dot")
        else:
            for kind, want in (("u", np.sum(ref(xv, t) * ref(yv, t))),
                               ("c", np.sum(ref(xv, t).conj() * ref(yv, t)))):
                if api == "f77":
                    st = CFloat2 if t == "c" else CDouble2
                    s = call(f"{t}dot{kind}_", ip(n), x.p, ip(incx), y.p, ip(incy), restype=st)
                    got = complex(s.re, s.im)
                else:
                    out = np.zeros(1, dtype=TYPES[t][0])
                    call(f"cblas_{t}dot{kind}_sub", c_int(n), x.p, c_int(incx), y.p,
                         c_int(incy), ptr(out))
                    got = out[0]
                assert_close([got], [want], t, scale=n, what=f"{t}dot{kind} {api}")
        # rot with real c, s (srot, drot, csrot, zdrot)
        name = {"s": "srot", "d": "drot", "c": "csrot", "z": "zdrot"}[t]
        c, s = 0.6, -0.8
        x, y = Vec(t, xv, incx), Vec(t, yv, incy)
        rt = TYPES[t][1]
        if api == "f77":
            call(f"{name}_", ip(n), x.p, ip(incx), y.p, ip(incy), rscal_ptr(t, c),
                 rscal_ptr(t, s))
        else:
            call(f"cblas_{name}", c_int(n), x.p, c_int(incx), y.p, c_int(incy), rt(c), rt(s))
        assert_close(x.values(), c * ref(xv, t) + s * ref(yv, t), t, what=name)
        assert_close(y.values(), c * ref(yv, t) - s * ref(xv, t), t, what=name)
        assert x.untouched_ok() and y.untouched_ok()


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("n", [0, 1, 9, 301])
@pytest.mark.parametrize("inc", [1, 3, -2, 0])
def test_level1_one_vector(t, n, inc):
    """scal, nrm2, asum, iamax: the reference does nothing / returns 0 for inc <= 0 (nrm2 since
    3.10 accepts any increment)."""
    r = rng(t, n, inc)
    xv = rand(r, t, n) * 3
    a = alpha_of(t)
    rname = {"s": "s", "d": "d", "c": "sc", "z": "dz"}[t]
    rt = TYPES[REAL[t]][1]
    for api in ("f77", "cblas"):
        x = Vec(t, xv, inc)
        if api == "f77":
            call(f"{t}scal_", ip(n), scal_ptr(t, a), x.p, ip(inc))
        else:
            call(f"cblas_{t}scal", c_int(n), cb_scal(t, a), x.p, c_int(inc))
        before = ref(Vec(t, xv, inc).values(), t)  # with inc = 0, the element all of them share
        want = ref(xv, t) * a if inc > 0 else before
        assert_close(x.values(), want, t, what=f"{t}scal inc={inc}")
        assert x.untouched_ok()
        if is_complex(t):  # csscal / zdscal
            name = {"c": "csscal", "z": "zdscal"}[t]
            x = Vec(t, xv, inc)
            if api == "f77":
                call(f"{name}_", ip(n), rscal_ptr(t, -0.5), x.p, ip(inc))
            else:
                call(f"cblas_{name}", c_int(n), rt(-0.5), x.p, c_int(inc))
            assert_close(x.values(), before * (-0.5 if inc > 0 else 1), t, what=name)
        x = Vec(t, xv, inc)
        args = (ip(n), x.p, ip(inc)) if api == "f77" else (c_int(n), x.p, c_int(inc))
        pre = "" if api == "f77" else "cblas_"
        suf = "_" if api == "f77" else ""
        nrm = call(f"{pre}{rname}nrm2{suf}", *args, restype=rt)
        want = np.sqrt(np.sum(np.abs(before) ** 2))
        assert_close([nrm], [want], t, scale=n, what="nrm2")
        asum = call(f"{pre}{rname}asum{suf}", *args, restype=rt)
        xr = ref(xv, t)
        want = np.sum(np.abs(xr.real) + np.abs(xr.imag)) if inc > 0 else 0.0
        assert_close([asum], [want], t, scale=n, what="asum")
        if api == "f77":
            i = call(f"i{t}amax_", *args, restype=c_int)
            want = (int(np.argmax(np.abs(xr.real) + np.abs(xr.imag))) + 1) if inc > 0 and n else 0
        else:
            i = call(f"cblas_i{t}amax", *args, restype=c_size_t)
            want = int(np.argmax(np.abs(xr.real) + np.abs(xr.imag))) if inc > 0 and n else 0
        assert i == want, f"i{t}amax {api}: {i} != {want}"


@pytest.mark.parametrize("t", "sd")
def test_nrm2_does_not_overflow_or_underflow(t):
    big = np.finfo(TYPES[t][0]).max / 4
    tiny = np.finfo(TYPES[t][0]).tiny * 4
    rt = TYPES[t][1]
    for v, want in ((big, big * np.sqrt(2.0)), (tiny, tiny * np.sqrt(2.0))):
        x = np.array([v, -v], dtype=TYPES[t][0])
        got = call(f"{t}nrm2_", ip(2), ptr(x), ip(1), restype=rt)
        assert abs(got - want) <= want * 1e-6, (v, got, want)
    for t2, name in (("c", "scnrm2_"), ("z", "dznrm2_")):
        big = np.finfo(TYPES[t2][0]).max / 4
        x = np.array([complex(big, big)], dtype=TYPES[t2][0])
        got = call(name, ip(1), ptr(x), ip(1), restype=TYPES[REAL[t2]][1])
        assert abs(got - big * np.sqrt(2.0)) <= big * 1e-5
    for v in (np.finfo(TYPES[t][0]).max / 64, np.finfo(TYPES[t][0]).tiny * 8, 1e-30, 3.0):
        x = np.full(301, v, dtype=TYPES[t][0])
        got = call(f"{t}nrm2_", ip(301), ptr(x), ip(1), restype=rt)
        want = float(v) * np.sqrt(301.0)
        assert abs(got - want) <= want * 1e-5, (v, got, want)
    x = np.array([1.0, np.nan, 2.0], dtype=TYPES[t][0])
    assert np.isnan(call(f"{t}nrm2_", ip(3), ptr(x), ip(1), restype=rt))
    x = np.array([1.0, np.inf, 2.0], dtype=TYPES[t][0])
    assert np.isinf(call(f"{t}nrm2_", ip(3), ptr(x), ip(1), restype=rt))


@pytest.mark.parametrize("t", "sd")
def test_sdsdot_dsdot(t):
    r = rng(3)
    x, y = rand(r, "s", 11), rand(r, "s", 11)
    want = float(np.dot(x.astype(np.float64), y.astype(np.float64)))
    got = call("dsdot_", ip(11), ptr(x), ip(1), ptr(y), ip(1), restype=c_double)
    assert abs(got - want) < 1e-12
    got = call("cblas_dsdot", c_int(11), ptr(x), c_int(1), ptr(y), c_int(1), restype=c_double)
    assert abs(got - want) < 1e-12
    sb = np.array([0.25], np.float32)
    got = call("sdsdot_", ip(11), ptr(sb), ptr(x), ip(1), ptr(y), ip(1), restype=c_float)
    assert abs(got - (want + 0.25)) < 1e-6
    xs, ys = Vec("s", x, -2), Vec("s", y, 3)
    got = call("cblas_sdsdot", c_int(11), c_float(0.25), xs.p, c_int(-2), ys.p, c_int(3),
               restype=c_float)
    assert abs(got - (want + 0.25)) < 1e-6


@pytest.mark.parametrize("t", ALL)
def test_rotg(t):
    rt = TYPES[REAL[t]][1]
    cases = [(3.0, 4.0), (-4.0, 3.0), (0.0, 2.0), (5.0, 0.0), (1e-30, 2e-30)]
    if is_complex(t):
        cases = [(complex(1, 2), complex(-3, 1)), (0, complex(0, 2)), (complex(2, -1), 0),
                 (complex(1e-20, 1e-20), complex(3e-20, 0))]
    for fa, gb in cases:
        for api in ("f77", "cblas"):
            a = np.array([fa], dtype=TYPES[t][0])
            b = np.array([gb], dtype=TYPES[t][0])
            s = np.zeros(1, dtype=TYPES[t][0])
            c = np.zeros(1, dtype=TYPES[REAL[t]][0])
            if api == "f77":
                call(f"{t}rotg_", ptr(a), ptr(b), ptr(c), ptr(s))
            else:
                call(f"cblas_{t}rotg", ptr(a), ptr(b), ptr(c), ptr(s))
            cc, ss, rr = float(c[0]), complex(s[0]), complex(a[0])
            f, g = complex(fa), complex(gb)
            # [c s; -conj(s) c] [f; g] = [r; 0], c real, |c|^2 + |s|^2 = 1
            assert abs(cc * f + ss * g - rr) <= 1e-5 * max(abs(f), abs(g))
            assert abs(-np.conj(ss) * f + cc * g) <= 1e-5 * max(abs(f), abs(g))
            assert abs(cc * cc + abs(ss) ** 2 - 1) < 1e-5
            assert abs(abs(rr) - np.hypot(abs(f), abs(g))) <= 1e-5 * np.hypot(abs(f), abs(g))
            if not is_complex(t):
                # the sign of r is that of the larger of a and b; b returns z
                big = fa if abs(fa) > abs(gb) else gb
                assert np.sign(rr.real) == np.sign(big)
                z = float(b[0])
                want_z = ss.real if abs(fa) > abs(gb) else (1 / cc if cc != 0 else 1.0)
                assert abs(z - want_z) <= 1e-5 * max(1, abs(want_z))


@pytest.mark.parametrize("t", "sd")
def test_rotm_and_rotmg(t):
    r = rng(5)
    dt = TYPES[t][0]
    rt = TYPES[t][1]
    for d1, d2, x1, y1 in ((2.0, 3.0, 0.5, 0.7), (1.0, 1.0, 0.1, 4.0), (1e-9, 4.0, 3.0, 1e-3),
                           (-1.0, 2.0, 1.0, 1.0), (2.0, 0.0, 1.0, 1.0)):
        for api in ("f77", "cblas"):
            d = np.array([d1, d2], dt)
            xx = np.array([x1], dt)
            p = np.zeros(5, dt)
            if api == "f77":
                yy = np.array([y1], dt)
                call(f"{t}rotmg_", ptr(d[0:]), ptr(d[1:]), ptr(xx), ptr(yy), ptr(p))
            else:
                call(f"cblas_{t}rotmg", ptr(d[0:]), c_void_p(d.ctypes.data + d.itemsize),
                     ptr(xx), rt(y1), ptr(p))
            flag = p[0]
            if flag == -2:
                continue
            h = {-1.0: [[p[1], p[3]], [p[2], p[4]]], 0.0: [[1, p[3]], [p[2], 1]],
                 1.0: [[p[1], 1], [-1, p[4]]]}[float(flag)]
            h = np.array(h, np.float64)
            if d1 < 0:
                assert np.all(d == 0) and xx[0] == 0
                continue
            # H zeroes the second component of (sqrt(d1) x1, sqrt(d2) y1)'s transform
            v = h @ np.array([x1, y1])
            assert abs(v[1]) <= 1e-5 * max(1, abs(v[0])), (d1, d2, x1, y1, v)
            assert abs(v[0] - xx[0]) <= 1e-4 * max(1, abs(v[0]))
            # and the weighted norm is kept: d1' x1'^2 = d1 x1^2 + d2 y1^2
            assert abs(d[0] * xx[0] ** 2 - (d1 * x1 ** 2 + d2 * y1 ** 2)) <= \
                1e-4 * (d1 * x1 ** 2 + d2 * y1 ** 2)
    n = 6
    for flag in (-1.0, 0.0, 1.0, -2.0):
        p = np.array([flag, 0.3, -0.2, 0.5, 1.1], dt)
        h = {-1.0: [[p[1], p[3]], [p[2], p[4]]], 0.0: [[1, p[3]], [p[2], 1]],
             1.0: [[p[1], 1], [-1, p[4]]], -2.0: [[1, 0], [0, 1]]}[flag]
        for incx, incy in INCS:
            xv, yv = rand(r, t, n), rand(r, t, n)
            for api in ("f77", "cblas"):
                x, y = Vec(t, xv, incx), Vec(t, yv, incy)
                if api == "f77":
                    call(f"{t}rotm_", ip(n), x.p, ip(incx), y.p, ip(incy), ptr(p))
                else:
                    call(f"cblas_{t}rotm", c_int(n), x.p, c_int(incx), y.p, c_int(incy), ptr(p))
                hx = h[0][0] * xv.astype(np.float64) + h[0][1] * yv
                hy = h[1][0] * xv.astype(np.float64) + h[1][1] * yv
                assert_close(x.values(), hx, t, what="rotm x")
                assert_close(y.values(), hy, t, what="rotm y")
                assert x.untouched_ok() and y.untouched_ok()


@pytest.mark.parametrize("t", "cz")
def test_cabs1(t):
    z = np.array([complex(-3, 4)], TYPES[t][0])
    name = {"c": "scabs1", "z": "dcabs1"}[t]
    rt = TYPES[REAL[t]][1]
    assert call(f"{name}_", ptr(z), restype=rt) == 7
    assert call(f"cblas_{name}", ptr(z), restype=rt) == 7


# ================================================================================ level 2

def layouts():
    return [("f77", COL), ("cblas", COL), ("cblas", ROW)]


def cb_layout(api, layout):
    return [c_int(layout)] if api == "cblas" else []


def iv(api, v):
    return c_int(v) if api == "cblas" else ip(v)


def sc(api, t, v):
    return cb_scal(t, v) if api == "cblas" else scal_ptr(t, v)


def rs(api, t, v):
    return cb_real(REAL[t], v) if api == "cblas" else rscal_ptr(t, v)


def fname(api, t, base):
    return f"cblas_{t}{base}" if api == "cblas" else f"{t}{base}_"


def en(api, table, v):
    return c_int(table[v]) if api == "cblas" else ch(v)


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("tr", "NTC")
@pytest.mark.parametrize("band", [False, True])
def test_gemv_gbmv(t, api, layout, tr, band):
    r = rng(t, api, layout, tr, band)
    for (m, n, kl, ku, incx, incy, beta) in ((5, 4, 1, 2, 1, 1, 0.5), (3, 6, 2, 0, -2, 3, 0.0),
                                              (0, 3, 0, 1, 1, 1, 1.0), (4, 0, 1, 1, 2, -1, 2.0),
                                              (6, 6, 0, 0, 2, 1, 0.0)):
        a = rand(r, t, (m, n))
        if band:
            a = np.array([[a[i, j] if -kl <= j - i <= ku else 0 for j in range(n)]
                          for i in range(m)], dtype=a.dtype)
        lenx, leny = (n, m) if tr == "N" else (m, n)
        xv, yv = rand(r, t, lenx), rand(r, t, leny)
        alpha = alpha_of(t, 1)
        x = Vec(t, xv, incx)
        y = Vec(t, yv if beta != 0 else np.full(leny, np.nan), incy)
        if band:
            ld = kl + ku + 2 if layout == COL else kl + ku + 2
            offs = band_offsets(m, n, kl, ku, ld, layout)
            size = ld * (n if layout == COL else m)
            buf = from_offsets(t, a, offs, size)
            call(fname(api, t, "gbmv"), *cb_layout(api, layout), en(api, CB_TRANS, tr),
                 iv(api, m), iv(api, n), iv(api, kl), iv(api, ku), sc(api, t, alpha), ptr(buf),
                 iv(api, ld), x.p, iv(api, incx), sc(api, t, beta), y.p, iv(api, incy))
        else:
            ld = (m if layout == COL else n) + 2
            buf = general(t, a, ld, layout)
            call(fname(api, t, "gemv"), *cb_layout(api, layout), en(api, CB_TRANS, tr),
                 iv(api, m), iv(api, n), sc(api, t, alpha), ptr(buf), iv(api, ld), x.p,
                 iv(api, incx), sc(api, t, beta), y.p, iv(api, incy))
        if m == 0 or n == 0:
            want = ref(yv, t) * beta if not (m == 0 or n == 0) else \
                (ref(yv, t) if True else None)
            # quick return: y untouched (the reference returns before scaling)
            assert np.array_equal(y.values(), yv if beta != 0 else np.full(leny, np.nan),
                                  equal_nan=True)
            continue
        want = alpha * (op(ref(a, t), tr) @ ref(xv, t)) + (beta * ref(yv, t) if beta else 0)
        assert_close(y.values(), want, t, scale=max(m, n), what=f"{t}{'gb' if band else 'ge'}mv")
        assert y.untouched_ok() and x.untouched_ok()


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("uplo", "UL")
@pytest.mark.parametrize("storage", ["full", "band", "packed"])
def test_symv_hemv_family(t, api, layout, uplo, storage):
    """symv/sbmv/spmv (real), hemv/hbmv/hpmv (complex)."""
    herm = is_complex(t)
    base = {"full": "hemv" if herm else "symv", "band": "hbmv" if herm else "sbmv",
            "packed": "hpmv" if herm else "spmv"}[storage]
    r = rng(t, api, layout, uplo, storage)
    # 150: past the recursive halving's 64-row leaves (full storage)
    for n, k, incx, incy, beta in ((5, 2, 1, 1, 0.5), (4, 0, -2, 3, 0.0), (0, 1, 1, 1, 1.0),
                                    (6, 7, 2, -1, 1.0), (150, 5, -1, 2, 0.5),
                                    (130, 3, 1, 1, 0.0)):
        a = rand(r, t, (n, n))
        full = sym_full(ref(a, t), uplo, herm)
        if storage == "band":
            kk = min(k, max(n - 1, 0))
            full = np.array([[full[i, j] if abs(i - j) <= kk else 0 for j in range(n)]
                             for i in range(n)])
        xv, yv = rand(r, t, n), rand(r, t, n)
        alpha = alpha_of(t, 0)
        x, y = Vec(t, xv, incx), Vec(t, yv if beta else np.full(n, np.nan), incy)
        if storage == "full":
            ld = n + 1
            # only the uplo triangle is stored; the other one is NaN and must not be read
            buf = general(t, tri_only(a, uplo), ld, layout)
            args = [ptr(buf), iv(api, ld)]
            kargs = []
        elif storage == "band":
            ld = k + 2
            offs = sym_band_offsets(n, k, uplo, ld, layout)
            buf = from_offsets(t, a, offs, ld * n)
            args = [ptr(buf), iv(api, ld)]
            kargs = [iv(api, k)]
        else:
            offs = packed_offsets(n, uplo, layout)
            buf = from_offsets(t, a, offs, n * (n + 1) // 2)
            args = [ptr(buf)]
            kargs = []
        call(fname(api, t, base), *cb_layout(api, layout), en(api, CB_UPLO, uplo), iv(api, n),
             *kargs, sc(api, t, alpha), *args, x.p, iv(api, incx), sc(api, t, beta), y.p,
             iv(api, incy))
        if n == 0:
            continue
        want = alpha * (full @ ref(xv, t)) + (beta * ref(yv, t) if beta else 0)
        assert_close(y.values(), want, t, scale=n, what=f"{t}{base} {api} {layout} {uplo}")
        assert y.untouched_ok()


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("uplo", "UL")
@pytest.mark.parametrize("tr", "NTC")
@pytest.mark.parametrize("storage", ["full", "band", "packed"])
def test_triangular_mv_sv(t, api, layout, uplo, tr, storage):
    """trmv/tbmv/tpmv and trsv/tbsv/tpsv, unit and non-unit diagonals."""
    pre = {"full": "tr", "band": "tb", "packed": "tp"}[storage]
    r = rng(t, api, layout, uplo, tr, storage)
    # 40 and 37: past the recursive halving's 16-row leaves (full storage)
    for n, k, inc, diag in ((5, 2, 1, "N"), (4, 1, -2, "U"), (0, 0, 1, "N"), (6, 9, 3, "N"),
                            (40, 3, 1, "N"), (37, 2, -2, "U")):
        a = rand(r, t, (n, n)) * 0.3
        a = a + np.eye(n, dtype=a.dtype) * 2  # well conditioned
        kk = min(k, max(n - 1, 0)) if storage == "band" else None
        full = tri_full(ref(a, t), uplo, diag, kk)
        xv = rand(r, t, n)
        if storage == "full":
            ld = n + 2
            buf = general(t, tri_only(a, uplo, diag == "U"), ld, layout)  # unit: not read
            margs, kargs = [ptr(buf), iv(api, ld)], []
        elif storage == "band":
            ld = k + 1
            offs = sym_band_offsets(n, k, uplo, ld, layout)
            buf = from_offsets(t, a, offs, ld * n)
            margs, kargs = [ptr(buf), iv(api, ld)], [iv(api, k)]
        else:
            offs = packed_offsets(n, uplo, layout)
            buf = from_offsets(t, a, offs, n * (n + 1) // 2)
            margs, kargs = [ptr(buf)], []
        for solve in (False, True):
            x = Vec(t, xv, inc)
            call(fname(api, t, pre + ("sv" if solve else "mv")), *cb_layout(api, layout),
                 en(api, CB_UPLO, uplo), en(api, CB_TRANS, tr), en(api, CB_DIAG, diag),
                 iv(api, n), *kargs, *margs, x.p, iv(api, inc))
            if n == 0:
                continue
            opa = op(full, tr)
            want = np.linalg.solve(opa, ref(xv, t)) if solve else opa @ ref(xv, t)
            assert_close(x.values(), want, t, scale=n,
                         what=f"{t}{pre}{'sv' if solve else 'mv'} {api} {layout} {uplo}{tr}{diag}")
            assert x.untouched_ok()


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
def test_ger(t, api, layout):
    r = rng(11)
    kinds = [("geru", False), ("gerc", True)] if is_complex(t) else [("ger", False)]
    for base, conj in kinds:
        for m, n, incx, incy in ((4, 3, 1, 1), (3, 5, -2, 3), (0, 2, 1, 1), (2, 0, 1, 1)):
            a = rand(r, t, (m, n))
            ld = (m if layout == COL else n) + 1
            buf = general(t, a, ld, layout, pad=SENTINEL)
            xv, yv = rand(r, t, m), rand(r, t, n)
            x, y = Vec(t, xv, incx), Vec(t, yv, incy)
            alpha = alpha_of(t, 1)
            call(fname(api, t, base), *cb_layout(api, layout), iv(api, m), iv(api, n),
                 sc(api, t, alpha), x.p, iv(api, incx), y.p, iv(api, incy), ptr(buf), iv(api, ld))
            yy = ref(yv, t).conj() if conj else ref(yv, t)
            want = ref(a, t) + alpha * np.outer(ref(xv, t), yy)
            if m and n:
                assert_close(read_general(buf, m, n, ld, layout), want, t, what=base)
            mask = general_mask(m, n, ld, layout, len(buf))
            assert np.all(buf[~mask] == SENTINEL)


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("uplo", "UL")
@pytest.mark.parametrize("rank2", [False, True])
@pytest.mark.parametrize("packed", [False, True])
def test_symmetric_rank_updates(t, api, layout, uplo, rank2, packed):
    """syr/spr/syr2/spr2 (real), her/hpr/her2/hpr2 (complex): only the triangle changes."""
    herm = is_complex(t)
    base = {(False, False): "syr", (True, False): "spr"}[(packed, False)] if not herm else \
        {False: "her", True: "hpr"}[packed]
    base = "_" + base + ("2" if rank2 else "")
    r = rng(t, api, layout, uplo, rank2, packed)
    for n, incx, incy in ((5, 1, 1), (4, -2, 3), (0, 1, 1)):
        a = rand(r, t, (n, n))
        xv, yv = rand(r, t, n), rand(r, t, n)
        alpha = alpha_of(t, 1) if rank2 or not herm else -0.7
        if packed:
            offs = packed_offsets(n, uplo, layout)
            buf = from_offsets(t, a, offs, n * (n + 1) // 2, pad=SENTINEL)
            margs = [ptr(buf)]
        else:
            ld = n + 1
            offs = {(i, j): (i + j * ld if layout == COL else i * ld + j)
                    for i in range(n) for j in range(n) if (i <= j if uplo == "U" else i >= j)}
            buf = from_offsets(t, a, offs, ld * n, pad=SENTINEL)
            margs = [ptr(buf), iv(api, ld)]
        x, y = Vec(t, xv, incx), Vec(t, yv, incy)
        al = (sc(api, t, alpha) if rank2 or not herm else rs(api, t, alpha))
        vargs = [x.p, iv(api, incx)] + ([y.p, iv(api, incy)] if rank2 else [])
        call(fname(api, t, base[1:]), *cb_layout(api, layout), en(api, CB_UPLO, uplo),
             iv(api, n), al, *vargs, *margs)
        xr, yr = ref(xv, t), ref(yv, t)
        full = sym_full(ref(a, t), uplo, herm)
        cj = np.conj if herm else (lambda v: v)
        if rank2:
            upd = alpha * np.outer(xr, cj(yr)) + np.conj(alpha) * np.outer(yr, cj(xr)) if herm \
                else alpha * (np.outer(xr, yr) + np.outer(yr, xr))
        else:
            upd = alpha * np.outer(xr, cj(xr))
        want = full + upd
        got = read_offsets(buf, n, n, offs)
        tri = np.triu(np.ones((n, n), bool)) if uplo == "U" else np.tril(np.ones((n, n), bool))
        assert_close(got[tri], want[tri], t, what=f"{t}{base[1:]}")
        if herm:
            assert np.all(np.diag(got).imag == 0)
        used = np.zeros(len(buf), bool)
        used[list(offs.values())] = True
        assert np.all(buf[~used] == SENTINEL)


# ================================================================================ level 3

def mat_out(t, c, ld, layout, nan=False):
    cc = np.full(c.shape, np.nan, dtype=c.dtype) if nan else c
    return general(t, cc, ld, layout, pad=SENTINEL)


def check_out(buf, m, n, ld, layout, want, t, scale, what):
    if m and n:
        assert_close(read_general(buf, m, n, ld, layout), want, t, scale=scale, what=what)
    mask = general_mask(m, n, ld, layout, len(buf))
    assert np.all(buf[~mask] == SENTINEL), f"{what}: wrote outside the matrix"


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("ta,tb", [("N", "N"), ("T", "C"), ("C", "N"), ("N", "T")])
def test_gemm(t, api, layout, ta, tb):
    r = rng(t, api, layout, ta, tb)
    for m, n, k, beta in ((5, 4, 3, 0.5), (7, 3, 9, 0.0), (0, 3, 2, 1.0), (3, 2, 0, 2.0),
                          (17, 19, 21, 1.0)):
        a = rand(r, t, (m, k) if ta == "N" else (k, m))
        b = rand(r, t, (k, n) if tb == "N" else (n, k))
        c = rand(r, t, (m, n))
        alpha = alpha_of(t, 0)
        lda = (a.shape[0] if layout == COL else a.shape[1]) + 2
        ldb = (b.shape[0] if layout == COL else b.shape[1]) + 1
        ldc = (m if layout == COL else n) + 3
        ab, bb = general(t, a, max(lda, 1), layout), general(t, b, max(ldb, 1), layout)
        cb = mat_out(t, c, ldc, layout, nan=beta == 0)
        call(fname(api, t, "gemm"), *cb_layout(api, layout), en(api, CB_TRANS, ta),
             en(api, CB_TRANS, tb), iv(api, m), iv(api, n), iv(api, k), sc(api, t, alpha), ptr(ab),
             iv(api, lda), ptr(bb), iv(api, ldb), sc(api, t, beta), ptr(cb), iv(api, ldc))
        want = alpha * (op(ref(a, t), ta) @ op(ref(b, t), tb)) + (beta * ref(c, t) if beta else 0)
        check_out(cb, m, n, ldc, layout, want, t, k, f"{t}gemm {api} {layout} {ta}{tb}")


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("uplo", "UL")
@pytest.mark.parametrize("ta,tb", [("N", "N"), ("T", "N"), ("N", "C")])
def test_gemmt(t, api, layout, uplo, ta, tb):
    r = rng(t, api, layout, uplo, ta, tb)
    for n, k, beta in ((5, 3, 0.5), (4, 6, 0.0), (0, 2, 1.0)):
        a = rand(r, t, (n, k) if ta == "N" else (k, n))
        b = rand(r, t, (k, n) if tb == "N" else (n, k))
        c = rand(r, t, (n, n))
        alpha = alpha_of(t, 1)
        lda = (a.shape[0] if layout == COL else a.shape[1]) + 1
        ldb = (b.shape[0] if layout == COL else b.shape[1]) + 1
        ldc = n + 1
        ab, bb = general(t, a, lda, layout), general(t, b, ldb, layout)
        cb = general(t, c, ldc, layout, pad=SENTINEL)
        call(fname(api, t, "gemmt"), *cb_layout(api, layout), en(api, CB_UPLO, uplo),
             en(api, CB_TRANS, ta), en(api, CB_TRANS, tb), iv(api, n), iv(api, k),
             sc(api, t, alpha), ptr(ab), iv(api, lda), ptr(bb), iv(api, ldb), sc(api, t, beta),
             ptr(cb), iv(api, ldc))
        full = alpha * (op(ref(a, t), ta) @ op(ref(b, t), tb)) + beta * ref(c, t)
        keep = np.triu(np.ones((n, n), bool)) if uplo == "U" else np.tril(np.ones((n, n), bool))
        want = np.where(keep, full, ref(c, t))
        check_out(cb, n, n, ldc, layout, want, t, k, f"{t}gemmt {uplo}")


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("side", "LR")
@pytest.mark.parametrize("uplo", "UL")
def test_symm_hemm(t, api, layout, side, uplo):
    r = rng(t, api, layout, side, uplo)
    for base in (["symm", "hemm"] if is_complex(t) else ["symm"]):
        herm = base == "hemm"
        for m, n, beta in ((4, 5, 0.5), (3, 2, 0.0), (0, 2, 1.0)):
            na = m if side == "L" else n
            a = rand(r, t, (na, na))
            tri = tri_only(a, uplo)
            b, c = rand(r, t, (m, n)), rand(r, t, (m, n))
            alpha = alpha_of(t, 0)
            lda, ldb, ldc = na + 1, (m if layout == COL else n) + 2, (m if layout == COL else n) + 1
            ab, bb = general(t, tri, lda, layout), general(t, b, ldb, layout)
            cb = mat_out(t, c, ldc, layout, nan=beta == 0)
            call(fname(api, t, base), *cb_layout(api, layout), en(api, CB_SIDE, side),
                 en(api, CB_UPLO, uplo), iv(api, m), iv(api, n), sc(api, t, alpha), ptr(ab),
                 iv(api, lda), ptr(bb), iv(api, ldb), sc(api, t, beta), ptr(cb), iv(api, ldc))
            s = sym_full(ref(a, t), uplo, herm)
            prod = s @ ref(b, t) if side == "L" else ref(b, t) @ s
            want = alpha * prod + (beta * ref(c, t) if beta else 0)
            check_out(cb, m, n, ldc, layout, want, t, na, f"{t}{base} {side}{uplo}")


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("uplo", "UL")
@pytest.mark.parametrize("tr", "NT")
@pytest.mark.parametrize("rank2", [False, True])
def test_syrk_herk_syr2k_her2k(t, api, layout, uplo, tr, rank2):
    r = rng(t, api, layout, uplo, tr, rank2)
    kinds = [("syr2k" if rank2 else "syrk", False)]
    if is_complex(t):
        kinds.append(("her2k" if rank2 else "herk", True))
    for base, herm in kinds:
        trr = "C" if herm and tr == "T" else tr
        for n, k, beta in ((5, 3, 0.5), (4, 6, 0.0), (0, 2, 1.0), (3, 0, 2.0), (70, 45, 0.5),
                           (67, 9, 0.0)):
            a = rand(r, t, (n, k) if trr == "N" else (k, n))
            b = rand(r, t, a.shape)
            c = rand(r, t, (n, n))
            alpha = alpha_of(t, 1)
            if herm and not rank2:
                alpha = -0.6
            if herm:
                np.fill_diagonal(c, np.diag(c).real + 0.25j)  # an imaginary diagonal is dropped
            lda = (a.shape[0] if layout == COL else a.shape[1]) + 1
            ldc = n + 2
            ab, bb = general(t, a, max(lda, 1), layout), general(t, b, max(lda, 1), layout)
            offs = {(i, j): (i + j * ldc if layout == COL else i * ldc + j)
                    for i in range(n) for j in range(n) if (i <= j if uplo == "U" else i >= j)}
            cb = from_offsets(t, c if beta else np.full_like(c, np.nan), offs, ldc * n,
                              pad=SENTINEL)
            al = rs(api, t, alpha) if herm and not rank2 else sc(api, t, alpha)
            be = rs(api, t, beta) if herm else sc(api, t, beta)
            bargs = [ptr(bb), iv(api, lda)] if rank2 else []
            call(fname(api, t, base), *cb_layout(api, layout), en(api, CB_UPLO, uplo),
                 en(api, CB_TRANS, trr), iv(api, n), iv(api, k), al, ptr(ab), iv(api, lda),
                 *bargs, be, ptr(cb), iv(api, ldc))
            A, B = op(ref(a, t), trr), op(ref(b, t), trr)  # n x k
            cj = (lambda z: z.conj().T) if herm else (lambda z: z.T)
            if rank2:
                prod = alpha * (A @ cj(B)) + (np.conj(alpha) if herm else alpha) * (B @ cj(A))
            else:
                prod = alpha * (A @ cj(A))
            cc = ref(c, t).copy()
            if herm:
                np.fill_diagonal(cc, np.diag(cc).real)
            if n == 0 or ((alpha == 0 or k == 0) and beta == 1):
                continue
            want = prod + (beta * cc if beta else 0)
            got = read_offsets(cb, n, n, offs)
            tri = np.triu(np.ones((n, n), bool)) if uplo == "U" else np.tril(np.ones((n, n), bool))
            assert_close(got[tri], want[tri], t, scale=k, what=f"{t}{base}")
            if herm:
                assert np.all(np.diag(got).imag == 0)
            used = np.zeros(len(cb), bool)
            used[list(offs.values())] = True
            assert np.all(cb[~used] == SENTINEL)


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("api,layout", layouts())
@pytest.mark.parametrize("side", "LR")
@pytest.mark.parametrize("uplo", "UL")
@pytest.mark.parametrize("tr", "NTC")
def test_trmm_trsm(t, api, layout, side, uplo, tr):
    r = rng(t, api, layout, side, uplo, tr)
    # 70 and 37: past the recursive halving's leaves (the off-diagonal blocks through GEMM)
    for m, n, diag, alpha in ((4, 5, "N", 0.7), (3, 2, "U", -1.0), (0, 3, "N", 1.0),
                              (5, 3, "N", 0.0), (70, 37, "N", 0.6), (37, 70, "U", -1.0),
                              (20, 66, "N", 0.5)):  # >= 64 columns: trmm's dense-tile leaves
        na = m if side == "L" else n
        a = rand(r, t, (na, na)) * 0.3 + np.eye(na) * 2
        tri = tri_only(a, uplo, diag == "U")
        b = rand(r, t, (m, n))
        if alpha == 0:
            b = np.full_like(b, np.nan)  # alpha = 0: B is set to zero without being read
        lda, ldb = na + 1, (m if layout == COL else n) + 2
        opa = op(tri_full(ref(a, t), uplo, diag), tr)
        for base in ("trmm", "trsm"):
            ab = general(t, tri, lda, layout)
            bb = general(t, b, ldb, layout, pad=SENTINEL)
            call(fname(api, t, base), *cb_layout(api, layout), en(api, CB_SIDE, side),
                 en(api, CB_UPLO, uplo), en(api, CB_TRANS, tr), en(api, CB_DIAG, diag),
                 iv(api, m), iv(api, n), sc(api, t, alpha), ptr(ab), iv(api, lda), ptr(bb),
                 iv(api, ldb))
            if alpha == 0:
                want = np.zeros((m, n))
            elif base == "trmm":
                want = alpha * (opa @ ref(b, t) if side == "L" else ref(b, t) @ opa)
            else:
                want = alpha * (np.linalg.solve(opa, ref(b, t)) if side == "L"
                                else np.linalg.solve(opa.T, ref(b, t).T).T)
            check_out(bb, m, n, ldb, layout, want, t, na, f"{t}{base} {side}{uplo}{tr}{diag}")


# ================================================================================ extensions

@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("order", ["C", "R"])
@pytest.mark.parametrize("tr", "NTCR")
def test_omatcopy_imatcopy(t, order, tr):
    r = rng(t, order, tr)
    layout = COL if order == "C" else ROW
    for rows, cols in ((3, 5), (4, 4), (0, 3)):
        a = rand(r, t, (rows, cols))
        alpha = alpha_of(t, 0)
        want = alpha * (ref(a, t).conj() if tr in "CR" else ref(a, t))
        if tr in "TC":
            want = want.T
        lda = (rows if order == "C" else cols) + 1
        ldb = (want.shape[0] if order == "C" else want.shape[1]) + 2
        ab = general(t, a, lda, layout)
        for api in ("f77", "cblas"):
            bb = general(t, np.zeros(want.shape, a.dtype), ldb, layout, pad=SENTINEL)
            if api == "f77":
                call(f"{t}omatcopy_", ch(order), ch(tr), ip(rows), ip(cols), scal_ptr(t, alpha),
                     ptr(ab), ip(lda), ptr(bb), ip(ldb))
            else:
                trc = {"N": 111, "T": 112, "C": 113, "R": 114}[tr]
                call(f"cblas_{t}omatcopy", c_int(layout), c_int(trc), c_int(rows), c_int(cols),
                     cb_scal(t, alpha), ptr(ab), c_int(lda), ptr(bb), c_int(ldb))
            check_out(bb, want.shape[0], want.shape[1], ldb, layout, want, t, 1,
                      f"{t}omatcopy {api} {order}{tr}")
        # in place: the input with lda, the output with ldb, in one buffer
        ld_in = lda
        ld_out = ldb
        size = max(ld_in * (cols if order == "C" else rows),
                   ld_out * (want.shape[1] if order == "C" else want.shape[0]))
        buf = np.zeros(max(size, 1), dtype=a.dtype)
        g = general(t, a, ld_in, layout, pad=0)
        buf[:len(g)] = g
        call(f"{t}imatcopy_", ch(order), ch(tr), ip(rows), ip(cols), scal_ptr(t, alpha), ptr(buf),
             ip(ld_in), ip(ld_out))
        if rows and cols:
            assert_close(read_general(buf, want.shape[0], want.shape[1], ld_out, layout), want, t,
                         what=f"{t}imatcopy {order}{tr}")


@pytest.mark.parametrize("t", ALL)
@pytest.mark.parametrize("layout", [COL, ROW])
def test_gemm_batch(t, layout):
    """cblas_?gemm_batch: two groups (different shapes and transposes) of 2 and 3 products."""
    r = rng(7)
    groups = [("N", "T", 3, 4, 5, 1.5, 0.0, 2), ("C", "N", 2, 3, 4, -0.5, 1.0, 3)]
    arrays, wants, cbs = [], [], []
    ta_l, tb_l, m_l, n_l, k_l, al_l, be_l, lda_l, ldb_l, ldc_l, sz_l = ([] for _ in range(11))
    a_ptrs, b_ptrs, c_ptrs = [], [], []
    for ta, tb, m, n, k, alpha, beta, size in groups:
        sa = (m, k) if ta == "N" else (k, m)
        sb = (k, n) if tb == "N" else (n, k)
        lda = sa[0] if layout == COL else sa[1]
        ldb = sb[0] if layout == COL else sb[1]
        ldc = m if layout == COL else n
        for _ in range(size):
            a, b, c = rand(r, t, sa), rand(r, t, sb), rand(r, t, (m, n))
            ab, bb = general(t, a, lda, layout), general(t, b, ldb, layout)
            cb = general(t, c, ldc, layout, pad=SENTINEL)
            arrays += [ab, bb]
            cbs.append((cb, m, n, ldc))
            a_ptrs.append(ab.ctypes.data)
            b_ptrs.append(bb.ctypes.data)
            c_ptrs.append(cb.ctypes.data)
            wants.append(alpha * (op(ref(a, t), ta) @ op(ref(b, t), tb)) + beta * ref(c, t))
        ta_l.append(CB_TRANS[ta]); tb_l.append(CB_TRANS[tb])
        m_l.append(m); n_l.append(n); k_l.append(k); al_l.append(alpha); be_l.append(beta)
        lda_l.append(lda); ldb_l.append(ldb); ldc_l.append(ldc); sz_l.append(size)
    ints = lambda v: ptr(np.array(v, dtype=np.int32))
    ptrs = lambda v: ptr(np.array(v, dtype=np.uintp))
    keep = [np.array(al_l, TYPES[t][0]), np.array(be_l, TYPES[t][0])]
    call(f"cblas_{t}gemm_batch", c_int(layout), ints(ta_l), ints(tb_l), ints(m_l), ints(n_l),
         ints(k_l), ptr(keep[0]), ptrs(a_ptrs), ints(lda_l), ptrs(b_ptrs), ints(ldb_l),
         ptr(keep[1]), ptrs(c_ptrs), ints(ldc_l), c_int(len(groups)), ints(sz_l))
    for (cb, m, n, ldc), want in zip(cbs, wants):
        check_out(cb, m, n, ldc, layout, want, t, 5, f"{t}gemm_batch")


# ================================================================================ errors

@pytest.mark.parametrize("t", ALL)
def test_bad_arguments_are_reported_and_nothing_is_written(t, capfd):
    """A few invalid calls of routines the netlib programs do not check (the extensions):
    xerbla_ / cblas_xerbla report the parameter, the output is untouched."""
    c = np.full(16, SENTINEL, dtype=TYPES[t][0])
    a = np.ones(16, dtype=TYPES[t][0])
    one = scal_ptr(t, 1.0)
    call(f"{t}gemmt_", ch("X"), ch("N"), ch("N"), ip(2), ip(2), one, ptr(a), ip(2), ptr(a), ip(2),
         one, ptr(c), ip(2))
    call(f"{t}gemmt_", ch("U"), ch("N"), ch("N"), ip(3), ip(2), one, ptr(a), ip(2), ptr(a), ip(2),
         one, ptr(c), ip(3))
    call(f"{t}omatcopy_", ch("C"), ch("N"), ip(3), ip(2), one, ptr(a), ip(2), ptr(c), ip(3))
    call(f"cblas_{t}gemmt", c_int(COL), c_int(121), c_int(111), c_int(111), c_int(-1), c_int(2),
         cb_scal(t, 1.0), ptr(a), c_int(2), ptr(a), c_int(2), cb_scal(t, 1.0), ptr(c), c_int(2))
    call(f"{t}gemv_", ch("N"), ip(2), ip(2), one, ptr(a), ip(1), ptr(a), ip(1), one, ptr(c), ip(1))
    err = capfd.readouterr().err
    up = t.upper()
    assert f"On entry to {up}GEMMT parameter number  1 had an illegal value" in err
    assert f"On entry to {up}GEMMT parameter number  8 had an illegal value" in err
    assert f"On entry to {up}OMATCOPY parameter number  7 had an illegal value" in err
    assert f"Parameter 5 to routine cblas_{t}gemmt was incorrect" in err
    assert f"On entry to {up}GEMV parameter number  6 had an illegal value" in err
    assert np.all(c == SENTINEL)


def test_lsame_and_xerbla_array(capfd):
    assert call("lsame_", ch("a"), ch("A"), restype=c_int) == 1
    assert call("lsame_", ch("N"), ch("n"), restype=c_int) == 1
    assert call("lsame_", ch("N"), ch("T"), restype=c_int) == 0
    name = np.frombuffer(b"DGEQRF", dtype=np.uint8).copy()
    call("xerbla_array_", ptr(name), ip(6), ip(4))
    assert "On entry to DGEQRF parameter number  4 had an illegal value" in capfd.readouterr().err
