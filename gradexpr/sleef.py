"""SLEEF's single-precision ``powf`` (``Sleef_powf8_u10``), as PyTorch's AVX2 kernels compute it.

ATen's ``Vectorized<float>::pow`` is SLEEF's ``xpowf`` of the AVX2 build (FMA enabled): ``exp(y·log|x|)``
in double-float arithmetic (pairs of float32 carrying about 48 bits), within one ulp of the exact
power but not correctly rounded, so neither NumPy's nor the C library's ``powf`` reproduces it.  The
same steps are written here over NumPy float32 arrays (``logkf``, ``expkf`` and ``df.h``'s pair
arithmetic of sleefsimdsp.c), every ``vfma*`` a correctly rounded fma (``exact.fma32``), every other
operation a float32 one, so the result is SLEEF's bit for bit.

``pow_scalar_f32`` is what ATen's ``pow(Tensor, Scalar)`` kernel does with a contiguous float32 tensor
and an exponent it does not special-case: runs of 16 elements (two AVX2 vectors) through SLEEF, the
tail through ``std::pow(float, double)`` (the double function, rounded to float32).
"""
from __future__ import annotations

import numpy as np

from .exact import fma32

_F = np.float32
_L2U = _F(0.693145751953125)
_L2L = _F(1.428606765330187045e-06)
_R_LN2 = _F(1.442695040888963407359924681001892137426645954152985934135449406931)
_FLT_MIN = _F(np.finfo(np.float32).tiny)


def _fma(a, b, c):
    return fma32(a, b, c)


def _fmapn(a, b, c):            # a*b - c
    return fma32(a, b, -c)


def _fmanp(a, b, c):            # -a*b + c
    return fma32(-a, b, c)


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
    qy = _fmanp(d[1], t, _fmanp(d[0], t, _F(1)))
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
    s = _add2_f2f(d, qf * -_L2U)
    s = _add2_f2f(s, qf * -_L2L)
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


def pow_scalar_f32(a, exponent):
    """ATen's ``pow(Tensor, Scalar)`` loop on a float32 array: SLEEF on runs of 16 elements of a
    contiguous input, ``std::pow(float, double)`` elsewhere. A tensor of GRAIN_SIZE elements or more
    is split between PyTorch's threads (``at::parallel_for``), each chunk with its own tail."""
    from .reduction_order import _GRAIN, threads
    exp64 = float(exponent)
    with np.errstate(all="ignore"):
        if not a.flags.c_contiguous or a.size < 16:
            return np.power(a.astype(np.float64), exp64).astype(np.float32)
        flat = a.reshape(-1)
        n = flat.size
        tasks = min(threads(), -(-n // _GRAIN)) if n >= _GRAIN else 1
        chunk = -(-n // tasks)
        out = np.empty(n, np.float32)
        for begin in range(0, n, chunk):
            end = min(n, begin + chunk)
            head = begin + (end - begin) - (end - begin) % 16
            out[begin:head] = powf_u10(flat[begin:head], np.float32(exp64))
            out[head:end] = np.power(flat[head:end].astype(np.float64), exp64).astype(np.float32)
    return out.reshape(a.shape)
