"""SLEEF's float32 exp and ATen's vectorized loop, for the kernels PyTorch writes with ``Vectorized<float>``.

ATen's CPU kernels for sigmoid, silu, softmax, ... compute ``exp`` with ``Vectorized<float>::exp``,
which on AVX2 is SLEEF's ``Sleef_expf8_u10``: a Cody-Waite reduction by ln 2 and a degree-6
polynomial evaluated with fused multiply-adds. It is within one ulp, not correctly rounded, so
neither NumPy's exp nor float64's rounded once give its bits; the same steps with correctly rounded
fused multiply-adds (``exact.fma32``) do (measured: 0 differences in 200,000 sigmoids against
PyTorch). Those kernels run through ``cpu_kernel_vec``, whose vector loop takes runs of 16 elements
(two AVX2 vectors) and leaves each run's tail to the scalar lambda, where ``std::exp`` is the C
library's ``expf``: ``vectorized`` reproduces that split, including the one between PyTorch's threads.

``powf_u10`` is ``Sleef_powf8_u10``, what ``Vectorized<float>::pow`` computes for ``x ** k`` (an exponent
pow's kernel does not special-case); ``pow_scalar_f32`` is that kernel's loop (measured equal to
PyTorch's on 10^5-element inputs for 12 exponents, subnormal and special values included).
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


def _fma_exact(a, b, c):
    """``a * b + c`` rounded once to float32 where the float64 sum is exact by construction: the error of
    a product (``a * b - fl(a * b)``), a Newton residual (``1 - d * fl(1 / d)``), Cody-Waite's reduction.
    float64 then holds the exact value and one rounding to float32 is the fused one, so ``_fma``'s tie
    check (four more passes, and a slow repair of exact values that merely look like ties) is not needed."""
    s = np.multiply(a, b, dtype=np.float64)
    s += c
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
        s = _fma_exact(q, _L2U, d)          # (q has at most 8 bits for |d| <= 104: both steps are exact)
        s = _fma_exact(q, _L2L, s)
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


def libm(name, x):
    """The C library's ``namef`` / ``name`` of each element of a float32 / float64 array (the scalar
    lambda's ``std::name``)."""
    t = x.dtype.type
    fn = _LIBM_EXP.get((name, t))
    if fn is None:
        from .special_math import _c
        fn = _LIBM_EXP[name, t] = _c(name, t)
    return np.array([fn(v) for v in x.ravel().tolist()], x.dtype).reshape(x.shape)


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


def _log_tail(sx, sy, xx, xy):
    """The end of SLEEF's logf/log1pf: (sx, sy) = e·ln 2 and (xx, xy) = (m-1)/(m+1) as double-floats;
    s + 2x + x^3·p(x^2), added as SLEEF adds it, rounded to one float."""
    x2 = xx * xx
    p = np.full_like(xx, _LOG_POLY[0])
    for c in _LOG_POLY[1:]:
        p = _fma(p, x2, c)
    ax, ay = xx * _F(2), xy * _F(2)                                # s = dfadd(s, dfscale(x, 2))
    s = sx + ax
    sy = (((sx - s) + ax) + sy) + ay
    w = (x2 * xx) * p                                              # s = dfadd(s, x2 * x * p)
    r = s + w
    ry = ((s - r) + w) + sy
    return r + ry


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
        sy = _fma(_LN2_LO, e, _fma_exact(_LN2_HI, e, -sx))
        nx, ny = _two_sum(np.full_like(m, _F(-1)), m)             # x = dfdiv(m - 1, m + 1)
        dx, dy = _two_sum(np.full_like(m, _F(1)), m)
        t = _F(1) / dx
        xx = nx * t
        u = _fma_exact(t, nx, -xx)
        v = _fma(-dy, t, _fma_exact(-dx, t, _F(1)))
        xy = _fma(xx, v, _fma(ny, t, u))
        r = _log_tail(sx, sy, xx, xy)
        r = np.where(np.isposinf(d), _F(np.inf), r)
        r = np.where((d < 0) | np.isnan(d), _F(np.nan), r)
        return np.where(d == 0, _F(-np.inf), r).astype(_F)



def log1pf(d):
    """``Sleef_log1pf8_u10(d)`` of a float32 array: logf's steps on 1 + d, the mantissa taken from d itself
    (m = d·2^-e + (2^-e - 1), fused) so that small d keep their bits."""
    d = np.asarray(d, _F)
    with np.errstate(all="ignore"):
        dp1 = d + _F(1)
        tiny = dp1 < np.finfo(_F).tiny
        dp1 = np.where(tiny, dp1 * _F(2.0 ** 64), dp1).astype(_F)
        e = ((((dp1 * _F(1.0 / 0.75)).view(np.int32) >> 23) & 0xff) - 0x7f).astype(np.int32)
        t = (np.full(d.shape, _F(1)).view(np.int32) + ((-e) << 23)).view(_F)
        m = _fma(d, t, t - _F(1))
        e = np.where(tiny, e - 64, e).astype(_F)
        sx = e * _LN2_HI                                          # dfmul((ln2 hi, lo), e)
        sy = _fma(_LN2_LO, e, _fma_exact(_LN2_HI, e, -sx))
        dx = _F(2) + m                                            # x = dfdiv((m, 0), dfadd(2, m))
        dy = (_F(2) - dx) + m
        t = _F(1) / dx
        xx = m * t
        u = _fma_exact(t, m, -xx)
        v = _fma(-dy, t, _fma_exact(-dx, t, _F(1)))
        xy = _fma(xx, v, _fma_exact(np.zeros_like(m), t, u))     # (the division's numerator is (m, 0))
        r = _log_tail(sx, sy, xx, xy)
        r = np.where(d > _F(1e38), _F(np.inf), r)                # (PyTorch's build gives log(d) up there)
        r = np.where(_F(-1) > d, _F(np.nan), r)
        r = np.where(d == _F(-1), _F(-np.inf), r)
        return np.where((d == 0) & np.signbit(d), _F(-0.0), r).astype(_F)



# ---------------------------------------------------------------- expm1f (Sleef_expm1f8_u10)
_EXPK2_POLY = tuple(_F(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1))


def _expk2f(dx, dy):
    """SLEEF's expk2f: exp of the double-float (dx, dy) as a double-float."""
    q = np.rint((dx + dy) * _R_LN2)
    s = _add2_f2f((dx, dy), q * _F(-0.693145751953125))
    s = _add2_f2f(s, q * _F(-1.428606765330187045e-06))
    u = np.full_like(dx, _EXPK2_POLY[0])
    for c in _EXPK2_POLY[1:]:
        u = _fma(u, s[0], c)
    t = _add2_f2f(_mul_f2f(s, u), _F(0.166666659414234244790680580464))
    t = _add2_f2f(_mul_f2f2(s, t), _F(0.5))
    t = _add2_f2f2(s, _mul_f2f2(_squ(s), t))
    t = _add_ff2(_F(1), t)
    qi = np.clip(q, -1000, 1000).astype(np.int32)
    half = qi >> 1
    scale1, scale2 = np.ldexp(_F(1), half).astype(_F), np.ldexp(_F(1), qi - half).astype(_F)
    gone = dx < -104
    return (np.where(gone, _F(0), t[0] * scale1 * scale2).astype(_F),
            np.where(gone, _F(0), t[1] * scale1 * scale2).astype(_F))


def expm1f(a):
    """``Sleef_expm1f8_u10(a)`` of a float32 array: expk2f(a) - 1 in double-float arithmetic."""
    a = np.asarray(a, _F)
    with np.errstate(all="ignore"):
        d = _add2_f2f(_expk2f(a, np.zeros_like(a)), _F(-1.0))
        x = d[0] + d[1]
        x = np.where(a > _F(88.72283172607421875), _F(np.inf), x)
        x = np.where(a < _F(-16.635532333438687426013570), _F(-1), x)
        return np.where((a == 0) & np.signbit(a), _F(-0.0), x).astype(_F)


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


# ---------------------------------------------------------------- powf (Sleef_powf8_u10)
# ATen's Vectorized<float>::pow: SLEEF's xpowf of the AVX2 build (FMA enabled), exp(y·log|x|) in
# double-float arithmetic (pairs of float32, about 48 bits), within an ulp but not correctly rounded:
# logkf, expkf and df.h's pair arithmetic of sleefsimdsp.c, each vfma* a correctly rounded fma.
_POW_L2U = _F(0.693145751953125)
_POW_L2L = _F(1.428606765330187045e-06)
_FLT_MIN = _F(np.finfo(np.float32).tiny)


def _fmapn(a, b, c):            # a*b - c, here always the error of the product c = fl(a*b): exact
    return _fma_exact(a, b, -c)


# ------------------------------------------------------------------ df.h (ENABLE_FMA_SP)
def _add2_ff(x, y):
    rx = x + y
    v = rx - x
    return rx, (x - (rx - v)) + (y - v)


def _add_f2f2(x, y):            # |x| >= |y|
    rx = x[0] + y[0]
    return rx, (((x[0] - rx) + y[0]) + x[1]) + y[1]


def _add2_f2f2(x, y):
    rx = x[0] + y[0]
    v = rx - x[0]
    ry = (x[0] - (rx - v)) + (y[0] - v)
    return rx, ry + (x[1] + y[1])


def _add2_f2f(x, y):
    rx = x[0] + y
    v = rx - x[0]
    ry = (x[0] - (rx - v)) + (y - v)
    return rx, ry + x[1]


def _add_ff2(x, y):
    rx = x + y[0]
    return rx, ((x - rx) + y[0]) + y[1]


def _normalize(t):
    sx = t[0] + t[1]
    return sx, (t[0] - sx) + t[1]


def _scale(d, s):
    return d[0] * s, d[1] * s


def _mul_f2f(x, y):
    rx = x[0] * y
    return rx, _fma(x[1], y, _fmapn(x[0], y, rx))


def _mul_f2f2(x, y):
    rx = x[0] * y[0]
    return rx, _fma(x[0], y[1], _fma(x[1], y[0], _fmapn(x[0], y[0], rx)))


def _squ(x):
    rx = x[0] * x[0]
    return rx, _fma(x[0] + x[0], x[1], _fmapn(x[0], x[0], rx))


def _div(n, d):
    with np.errstate(divide="ignore", invalid="ignore"):
        t = _F(1) / d[0]
    qx = n[0] * t
    u = _fmapn(t, n[0], qx)
    qy = _fma(-d[1], t, _fma_exact(-d[0], t, _F(1)))
    return qx, _fma(qx, qy, _fma(n[1], t, u))


# ------------------------------------------------------------------ sleefsimdsp.c
def _logkf(d):
    """log(d) as a float32 pair (the AVX2 path: exponent by bit arithmetic)."""
    tiny = d < _FLT_MIN
    d = np.where(tiny, d * _F(18446744073709551616.0), d)
    e = ((np.multiply(d, _F(1.0) / _F(0.75)).view(np.int32) >> 23) & 0xFF) - 0x7F
    m = (d.view(np.int32) + (-e << 23)).view(np.float32)
    e = np.where(tiny, e - 64, e)
    x = _div(_add2_ff(_F(-1), m), _add2_ff(_F(1), m))
    x2 = _squ(x)
    t = _fma(_F(0.240320354700088500976562), x2[0], _F(0.285112679004669189453125))
    t = _fma(t, x2[0], _F(0.400007992982864379882812))
    c = (_F(0.66666662693023681640625), _F(3.69183861259614332084311e-09))
    s = _mul_f2f((_F(0.69314718246459960938), _F(-1.904654323148236017e-09)), e.astype(np.float32))
    s = _add_f2f2(s, _scale(x, _F(2)))
    return _add_f2f2(s, _mul_f2f2(_mul_f2f2(x2, x), _add2_f2f2(_mul_f2f(x2, t), c)))


def _ldexp(x, q):
    """``vldexp_vf_vf_vi2``: x·2^q as four multiplications by a power of two and a fifth (so a
    subnormal result is rounded as SLEEF rounds it, not once as ``ldexp``)."""
    m = q >> 31
    m = (((m + q) >> 6) - m) << 4
    q = q - (m << 2)
    m = np.clip(m + 0x7F, 0, 0xFF)
    u = (m.astype(np.int32) << 23).view(np.float32)
    x = x * u * u * u * u
    return x * ((q + 0x7F).astype(np.int32) << 23).view(np.float32)


def _expkf(d):
    """exp of a float32 pair, rounded to float32."""
    u = (d[0] + d[1]) * _R_LN2
    q = np.rint(np.nan_to_num(u, nan=0.0, posinf=0.0, neginf=0.0)).astype(np.int32)
    qf = q.astype(np.float32)
    s = _add2_f2f(d, qf * -_POW_L2U)
    s = _add2_f2f(s, qf * -_POW_L2L)
    s = _normalize(s)
    u = _fma(_F(0.00136324646882712841033936), s[0], _F(0.00836596917361021041870117))
    u = _fma(u, s[0], _F(0.0416710823774337768554688))
    u = _fma(u, s[0], _F(0.166665524244308471679688))
    u = _fma(u, s[0], _F(0.499999850988388061523438))
    t = _add_f2f2(s, _mul_f2f(_squ(s), u))
    t = _add_ff2(_F(1), t)
    u = _ldexp(t[0] + t[1], q)
    return np.where(d[0] < _F(-104), _F(0), u)


def powf_u10(x, y):
    """SLEEF's ``xpowf`` elementwise over float32 ``x`` and ``y`` (broadcast)."""
    x, y = np.broadcast_arrays(np.asarray(x, np.float32), np.asarray(y, np.float32))
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        yisint = (np.trunc(y) == y) | (ay > _F(1 << 24))
        yint = np.where(ay < _F(1 << 24), np.nan_to_num(np.trunc(y)), 0).astype(np.int64)
        yisodd = ((yint & 1) == 1) & yisint & (ay < _F(1 << 24))
        result = _expkf(_mul_f2f(_logkf(np.abs(x)), y))
        result = np.where(np.isnan(result), _F(np.inf), result)
        sign = np.where(x > 0, _F(1), np.where(yisint, np.where(yisodd, _F(-1), _F(1)), _F(np.nan)))
        result = result * sign
        efx = np.copysign(np.abs(x) - _F(1), y)
        result = np.where(np.isinf(y), np.where(efx < 0, _F(0), np.where(efx == 0, _F(1), _F(np.inf))),
                          result)
        at_edge = np.isinf(x) | (x == 0)
        big = np.where(np.signbit(y) ^ (x == 0), _F(0), _F(np.inf))
        result = np.where(at_edge, np.copysign(big, np.where(yisodd, x, _F(1))), result)
        result = np.where(np.isnan(x) | np.isnan(y), _F(np.nan), result)
        result = np.where((y == 0) | (x == 1), _F(1), result)
    return result.astype(np.float32)


def pow_scalar_f32(a, exponent, threads):
    """ATen's ``pow(Tensor, Scalar)`` loop on a float32 array for an exponent it does not special-case:
    SLEEF's powf on the vector loop's runs of 16, ``std::pow(float, double)`` (the double function,
    rounded to float32) on their tails and on a strided inner loop (``vectorized``)."""
    exp64 = float(exponent)
    exp32 = _F(exp64)

    def scalar(x):
        with np.errstate(all="ignore"):
            return np.power(x.astype(np.float64), exp64).astype(_F)
    return vectorized(a, lambda x: powf_u10(x, exp32), scalar, threads)
