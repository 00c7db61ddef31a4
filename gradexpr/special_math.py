"""The scalar kernels of PyTorch's special functions (ATen's Math.h), for ``ops/special.py``.

ATen computes digamma, trigamma and the polygammas with its own series, element by element, in the
input's precision (float32 in float32, with the C library's ``logf``/``tanf``...), so a float64
evaluation rounded once would differ in the last bits and at the poles (``polygamma(1, -1.)`` is a
large finite number in float32). These run the same steps in the same precision, calling the
same C library functions through ``ctypes``. (For lgamma and erfc ATen's float32 kernels are SLEEF's,
nearly correctly rounded: the double function rounded once is the closest we come.)
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

_PI = math.pi


def _libm():
    lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    funcs = {}
    for suffix, ctype, np_type in (("", ctypes.c_double, np.float64), ("f", ctypes.c_float, np.float32)):
        fn = getattr(lib, "pow" + suffix)
        fn.restype, fn.argtypes = ctype, [ctype, ctype]
        funcs["pow", np_type] = fn
    for name in ("lgamma", "log", "log1p", "tan", "sin", "exp", "asinh", "acosh", "atanh", "erfc"):
        for suffix, ctype, np_type in (("", ctypes.c_double, np.float64), ("f", ctypes.c_float, np.float32)):
            fn = getattr(lib, name + suffix)
            fn.restype, fn.argtypes = ctype, [ctype]
            funcs[name, np_type] = fn
    return funcs


_LIBM = {}


def _c(name, t):
    """The C library's ``name`` in precision ``t`` (np.float32 -> ``namef``), returning a ``t``."""
    if not _LIBM:
        _LIBM.update(_libm())
    fn = _LIBM[name, t if t in (np.float32, np.float64) else np.float32]
    return lambda x: t(fn(float(x)))


def libm(name):
    """A forward computing the C library's ``name`` element by element in the input's precision
    (``asinhf`` for float32): what ATen's kernels call for these ops on CPU."""
    return lambda a: elementwise(lambda x, t: _c(name, t)(x), a)


def vectorized_libm(name):
    """As ``libm``, but for a contiguous float32 input the way ATen's vectorized loop splits it: full
    runs of 16 elements (two AVX2 vectors) go through SLEEF, nearly correctly rounded (the double
    function rounded once stands for it), the tail through the C library's ``namef``."""
    scalar = libm(name)
    double = rounded_libm(name)

    def forward(a):
        if a.dtype != np.float32 or not a.flags.c_contiguous or a.size < 16:
            return scalar(a)
        flat = a.ravel()
        head = flat.size - flat.size % 16
        return np.concatenate([double(flat[:head]), scalar(flat[head:])]).reshape(a.shape)
    return forward


def elementwise(kernel, a, *args):
    """``kernel(x, t, *args)`` over every element of ``a`` (float16 computed as float32, as ATen's opmath)."""
    t = a.dtype.type if a.dtype in (np.float32, np.float64) else np.float32
    flat = a.astype(t, copy=False).ravel()
    out = np.fromiter((kernel(t(v), t, *args) for v in flat), t, flat.size)
    return out.reshape(a.shape).astype(a.dtype, copy=False)


def _pow(t):
    if not _LIBM:
        _LIBM.update(_libm())
    fn = _LIBM["pow", t]
    return lambda x, y: t(fn(float(x), float(y)))


def lgamma(x, t):
    """The C library's double ``lgamma`` rounded once: closer to ATen's float32 kernel (SLEEF's
    lgammaf, 1 ulp) than glibc's ``lgammaf`` is."""
    return t(_c("lgamma", np.float64)(x))


def rounded_libm(name):
    """A forward computing the C library's double ``name``, rounded once to the input's precision."""
    return lambda a: elementwise(lambda x, t: t(_c(name, np.float64)(x)), a)


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)


def _polevl(x, coefs, t):
    result = t(coefs[0])
    for c in coefs[1:]:
        result = result * x + t(c)
    return result


def digamma(x, t):
    """ATen's ``calc_digamma``: reflection below 0, recurrence up to 10, then the asymptotic series."""
    if x == 0:
        return t(math.copysign(math.inf, -float(x)))
    if x < 0:
        if x == np.trunc(x):
            return t(math.nan)
        r = math.modf(float(x))[0]
        # the reflection term in double whatever the precision, rounded once
        return digamma(t(1) - x, t) - t(_PI / math.tan(_PI * r))
    result = t(0)
    while x < 10:
        result -= t(1) / x
        x += t(1)
    if x == 10:
        return result + t(_PSI_10)
    y = t(0)
    if x < 1.0e17:
        z = t(1) / (x * x)
        y = z * _polevl(z, _DIGAMMA_A, t)
    return result + _c("log", t)(x) - (t(0.5) / x) - y


def trigamma(x, t):
    """ATen's ``calc_trigamma``: reflection below 1/2, six steps of recurrence, then the series."""
    sign = t(1)
    result = t(0)
    if x < 0.5:
        sign = t(-1)
        sin_pi_x = _c("sin", t)(t(_PI) * x)
        result -= t(_PI) * t(_PI) / (sin_pi_x * sin_pi_x)
        x = t(1) - x
    for _ in range(6):
        result += t(1) / (x * x)
        x += t(1)
    ixx = t(1) / (x * x)
    result += (t(1) + t(1) / (t(2) * x) + ixx * (t(1. / 6) - ixx * (t(1. / 30) - ixx * t(1. / 42)))) / x
    return sign * result


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16


def zeta(x, q, t=np.float64):
    """ATen's Hurwitz zeta (Cephes' Euler–Maclaurin summation): in double, but its first term
    ``pow(q, -x)`` in the arguments' precision ``t``."""
    if x == 1:
        return math.inf
    if x < 1:
        return math.nan
    if q <= 0:
        if q == np.floor(q):
            return math.inf
        if x != np.floor(x):
            return math.nan
    s = float(_pow(t)(q, -x))
    x, q = float(x), float(q)
    a, i, b = q, 0, 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a, k = 1.0, 0.0
    for coef in _ZETA_A:
        a *= x + k
        b /= w
        term = a * b / coef
        s = s + term
        if abs(term / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


def polygamma(x, t, n):
    """ATen's ``polygamma`` kernel: digamma, trigamma, else ``±exp(lgamma(n+1)) * zeta(n+1, x)``."""
    if n == 0:
        return digamma(x, t)
    if n == 1:
        return trigamma(x, t)
    sign = t(1) if n % 2 else t(-1)
    return sign * _c("exp", t)(t(_c("lgamma", t)(t(n) + t(1)))) * t(zeta(t(n + 1), x, t))


def erfinv(a):
    """The inverse error function in double (Halley's method from Winitzki's approximation, on erfc
    in the tails), rounded once to the input's precision; ±1 give ±inf, outside [-1, 1] nan."""
    x = a.astype(np.float64).ravel()
    out = np.empty_like(x)
    for i, v in enumerate(x):
        out[i] = _erfinv_scalar(v)
    return out.reshape(a.shape).astype(a.dtype, copy=False)


def _erfinv_scalar(v):
    if math.isnan(v) or abs(v) > 1:
        return math.nan
    if abs(v) == 1:
        return math.copysign(math.inf, v)
    if v == 0:
        return v
    w = abs(v)
    log_term = math.log1p(-w * w) if w < 0.5 else math.log((1 - w) * (1 + w))
    k = 2 / (_PI * 0.147) + log_term / 2
    y = math.sqrt(math.sqrt(k * k - log_term / 0.147) - k)
    for _ in range(4):
        # f(y) = erf(y) - w, or erfc(y) - (1 - w) in the tail (1 - w is exact there)
        f = math.erf(y) - w if w < 0.5 else (1 - w) - math.erfc(y)
        slope = 2 / math.sqrt(_PI) * math.exp(-y * y)
        if slope == 0 or f == 0:
            break
        step = f / slope
        y -= step / (1 + step * y)          # Halley: f'' = -2y f'
    return math.copysign(y, v)
