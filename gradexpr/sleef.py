"""SLEEF's float32 exp and ATen's vectorized loop, for the kernels PyTorch writes with ``Vectorized<float>``.

ATen's CPU kernels for sigmoid, silu, softmax, ... compute ``exp`` with ``Vectorized<float>::exp``,
which on AVX2 is SLEEF's ``Sleef_expf8_u10``: a Cody-Waite reduction by ln 2 and a degree-6
polynomial evaluated with fused multiply-adds. It is within one ulp, not correctly rounded, so
neither NumPy's exp nor float64's rounded once give its bits; the same steps with correctly rounded
fused multiply-adds (``exact.fma32``) do (measured: 0 differences in 200,000 sigmoids against
PyTorch). Those kernels run through ``cpu_kernel_vec``, whose vector loop takes runs of 16 elements
(two AVX2 vectors) and leaves each run's tail to the scalar lambda, where ``std::exp`` is the C
library's ``expf``: ``vectorized`` reproduces that split, including the one between PyTorch's threads.
"""
from __future__ import annotations

import numpy as np

from .exact import fma32, fma64

_F = np.float32
_R_LN2 = _F(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = _F(-0.693145751953125)
_L2L = _F(-1.428606765330187045e-06)
_POLY = tuple(_F(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                              0.00833336077630519866943359, 0.0416664853692054748535156,
                              0.166666671633720397949219, 0.5))
_RUN_BYTES = 64           # 2 AVX2 vectors: runs of 16 floats, 8 doubles
_GRAIN = 32768             # at::internal::GRAIN_SIZE: TensorIterator's for_each splits above it


_BLOCK = 8192             # elements per pass: the float64 temporaries of a block stay in cache
_LOW29, _HALF29 = np.uint64(0x1FFFFFFF), np.uint64(0x10000000)


def _fma(a, b, c):
    """``a * b + c`` rounded once to float32 (vfmadd*ps): exact.fma32's float64 sum, with its tie repair
    only when a sum lands halfway between two float32 values (rare; the common case stays four passes)."""
    s = np.multiply(a, b, dtype=np.float64)
    s += c
    if np.count_nonzero((s.view(np.uint64) & _LOW29) == _HALF29):
        return fma32(a, b, c)
    return s.astype(_F)


def expf(d):
    """``Sleef_expf8_u10(d)`` of a float32 array, elementwise."""
    d = np.asarray(d, _F)
    if d.size > _BLOCK:
        flat = d.ravel()
        out = np.empty(flat.size, _F)
        for begin in range(0, flat.size, _BLOCK):
            out[begin:begin + _BLOCK] = _expf(flat[begin:begin + _BLOCK])
        return out.reshape(d.shape)
    return _expf(d)


def _expf(d):
    with np.errstate(all="ignore"):
        q = np.rint(d * _R_LN2)
        s = _fma(q, _L2U, d)
        s = _fma(q, _L2L, s)
        u = np.full(d.shape, _POLY[0], _F)
        for c in _POLY[1:]:
            u = _fma(u, s, c)
        u = _F(1) + _fma(s * s, u, s)
        qi = np.clip(q, -1000, 1000).astype(np.int32)            # (beyond ±1000 the result saturates)
        half = qi >> 1
        u = (u * np.ldexp(_F(1), half).astype(_F)) * np.ldexp(_F(1), qi - half).astype(_F)
        u = np.where(d < -104, _F(0), u)
        u = np.where(d > 100, _F(np.inf), u)
        return np.where(np.isnan(d), d, u).astype(_F)


def vectorized(a, vector, scalar, threads):
    """``cpu_kernel_vec`` over a float32 or float64 array: where TensorIterator's inner loop is contiguous
    (the whole array in memory order, or each row), runs of two AVX2 vectors through ``vector`` and each
    run's tail through ``scalar`` (both elementwise functions of arrays); a strided inner loop is all
    scalar."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        flat = a.ravel(order="K")
        out = _split_by_threads(flat, vector, scalar, threads)
        return out.reshape(a.T.shape).T if not a.flags.c_contiguous else out.reshape(a.shape)
    if a.ndim and a.strides[-1] == a.itemsize:
        rows = a.reshape(-1, a.shape[-1])
        run = _RUN_BYTES // a.itemsize
        head = rows.shape[1] // run * run
        out = np.empty(rows.shape, a.dtype)
        out[:, :head] = vector(rows[:, :head])
        out[:, head:] = scalar(rows[:, head:])
        return out.reshape(a.shape)
    return scalar(a)


def _split_by_threads(flat, vector, scalar, threads):
    """The contiguous loop as at::parallel_for hands it out: above the grain size one chunk per thread."""
    n = flat.size
    run = _RUN_BYTES // flat.itemsize
    chunks = [(0, n)]
    if n >= _GRAIN and threads > 1:
        parts = min(threads, -(-n // _GRAIN))
        size = -(-n // parts)
        chunks = [(b, min(n, b + size)) for b in range(0, n, size)]
    out = np.empty(n, flat.dtype)
    for begin, end in chunks:
        head = begin + (end - begin) // run * run
        if head > begin:
            out[begin:head] = vector(flat[begin:head])
        if end > head:
            out[head:end] = scalar(flat[head:end])
    return out


_LIBM_EXP = {}


def libm_exp(x):
    """The C library's ``expf`` / ``exp`` of each element of a float32 / float64 array (the scalar
    lambda's ``std::exp``)."""
    t = x.dtype.type
    exp = _LIBM_EXP.get(t)
    if exp is None:
        from .special_math import _c
        exp = _LIBM_EXP[t] = _c("exp", t)
    return np.array([exp(v) for v in x.ravel().tolist()], x.dtype).reshape(x.shape)


def exp(d):
    """SLEEF's vector exp in the array's precision: ``expf`` for float32, ``expd`` for float64."""
    return expf(d) if d.dtype == _F else expd(d)


# ---------------------------------------------------------------- logf (Sleef_logf8_u10)
_LN2_HI, _LN2_LO = _F(0.69314718246459960938), _F(-1.904654323148236017e-09)
_LOG_POLY = (_F(0.3027294874e+0), _F(0.3996108174e+0), _F(0.6666694880e+0))


def _two_sum(x, y):
    """SLEEF's dfadd2: the float32 sum and its exact error."""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


def logf(d):
    """``Sleef_logf8_u10(d)`` of a float32 array: log 2 times the exponent plus 2·atanh((m-1)/(m+1)) of
    the mantissa m in [0.75, 1.5), in double-float arithmetic with fused multiply-adds."""
    d = np.asarray(d, _F)
    with np.errstate(all="ignore"):
        tiny = d < np.finfo(_F).tiny
        d2 = np.where(tiny, d * _F(2.0 ** 64), d).astype(_F)
        e = ((((d2 * _F(1.0 / 0.75)).view(np.int32) >> 23) & 0xff) - 0x7f).astype(np.int32)
        m = (d2.view(np.int32) + ((-e) << 23)).view(_F)
        e = np.where(tiny, e - 64, e).astype(_F)
        sx = e * _LN2_HI                                          # dfmul((ln2 hi, lo), e)
        sy = _fma(_LN2_LO, e, _fma(_LN2_HI, e, -sx))
        nx, ny = _two_sum(np.full_like(m, _F(-1)), m)             # x = dfdiv(m - 1, m + 1)
        dx, dy = _two_sum(np.full_like(m, _F(1)), m)
        t = _F(1) / dx
        xx = nx * t
        u = _fma(t, nx, -xx)
        v = _fma(-dy, t, _fma(-dx, t, np.full_like(m, _F(1))))
        xy = _fma(xx, v, _fma(ny, t, u))
        x2 = xx * xx
        p = np.full_like(m, _LOG_POLY[0])
        for c in _LOG_POLY[1:]:
            p = _fma(p, x2, c)
        ax, ay = xx * _F(2), xy * _F(2)                            # s = dfadd(s, dfscale(x, 2))
        s = sx + ax
        sy = (((sx - s) + ax) + sy) + ay
        w = (x2 * xx) * p                                          # s = dfadd(s, x2 * x * p)
        r = s + w
        ry = ((s - r) + w) + sy
        r = r + ry
        r = np.where(np.isposinf(d), _F(np.inf), r)
        r = np.where((d < 0) | np.isnan(d), _F(np.nan), r)
        return np.where(d == 0, _F(-np.inf), r).astype(_F)


# ---------------------------------------------------------------- exp of float64 (Sleef_expd4_u10)
_D = np.float64
_R_LN2D = 1.442695040888963407359924681001892137426645954152985934135449406931
_L2UD, _L2LD = .69314718055966295651160180568695068359375, .28235290563031577122588448175013436025525412068e-12
_POLY_D = (+0.2081276378237164457e-8, +0.2511210703042288022e-7, +0.2755762628169491192e-6,
           +0.2755723402025388239e-5, +0.2480158687479686264e-4, +0.1984126989855865850e-3,
           +0.1388888888914497797e-2, +0.8333333333314938210e-2, +0.4166666666666602598e-1,
           +0.1666666666666669072e+0)


def _mla(x, y, z):
    return fma64(np.asarray(x, _D), np.asarray(y, _D), np.asarray(z, _D))


def _poly4(x, x2, c3, c2, c1, c0):
    return _mla(x2, _mla(x, c3, c2), _mla(x, c1, c0))


def expd(d):
    """``Sleef_expd4_u10(d)`` of a float64 array: the reduction by ln 2 and a degree-11 polynomial whose
    first ten terms are evaluated in SLEEF's Estrin tree, all with fused multiply-adds."""
    d = np.asarray(d, _D)
    with np.errstate(all="ignore"):
        u = np.rint(d * _R_LN2D)
        s = _mla(u, -_L2UD, d)
        s = _mla(u, -_L2LD, s)
        s2 = s * s
        s4 = s2 * s2
        c = _POLY_D
        u = _mla(s4 * s4, _mla(s, c[0], c[1]),
                 _mla(s4, _poly4(s, s2, c[2], c[3], c[4], c[5]), _poly4(s, s2, c[6], c[7], c[8], c[9])))
        u = _mla(u, s, 0.5)
        u = _mla(u, s, 1.0)
        u = _mla(u, s, 1.0)
        q = np.clip(np.nan_to_num(np.rint(d * _R_LN2D)), -4000, 4000).astype(np.int64)
        half = q >> 1
        u = u * np.ldexp(1.0, half) * np.ldexp(1.0, q - half)
        u = np.where(d < -1000, 0.0, u)
        u = np.where(d > 709.78271114955742909217217426, np.inf, u)
        return np.where(np.isnan(d), d, u)
