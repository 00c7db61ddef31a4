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
import math

import numpy as np

_PI = math.pi


def _libm():
    import ctypes.util      # (only here: it imports subprocess and signal, which start-up does without)
    lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    funcs = {}
    for suffix, ctype, np_type in (("", ctypes.c_double, np.float64), ("f", ctypes.c_float, np.float32)):
        for name in ("pow", "atan2", "hypot", "fmod"):
            fn = getattr(lib, name + suffix)
            fn.restype, fn.argtypes = ctype, [ctype, ctype]
            funcs[name, np_type] = fn
        fn = getattr(lib, "fma" + suffix)
        fn.restype, fn.argtypes = ctype, [ctype, ctype, ctype]
        funcs["fma", np_type] = fn
    for name in ("lgamma", "log", "log1p", "tan", "sin", "exp", "asinh", "acosh", "atanh", "erfc", "erf", "sinh", "cosh",
                 "tanh", "expm1", "exp2"):
        for suffix, ctype, np_type in (("", ctypes.c_double, np.float64), ("f", ctypes.c_float, np.float32)):
            fn = getattr(lib, name + suffix)
            fn.restype, fn.argtypes = ctype, [ctype]
            funcs[name, np_type] = fn
    return funcs


_LIBM = {}


def c_function(name, t):
    """The C library's ``name`` in precision ``t`` (np.float32 -> ``namef``), a ctypes function of floats."""
    if not _LIBM:
        _LIBM.update(_libm())
    return _LIBM[name, t if t in (np.float32, np.float64) else np.float32]


def _c(name, t):
    """The C library's ``name`` in precision ``t`` (np.float32 -> ``namef``), returning a ``t``."""
    fn = c_function(name, t)
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


# ---------------------------------------------------------------- modified Bessel functions (i0, i1)
# Cephes' Chebyshev series of exp(-x) I0(x) and exp(-x) I1(x) on [0, 8] (A, in y = x/2 - 2) and of
# exp(-x) sqrt(x) I(x) beyond 8 (B, in y = 32/x - 2), as ATen's Math.h holds them: i0's tables in the
# input's precision; i1's float32 tables are the shorter tails of the double ones.
_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)
_BESSEL_TABLES = {("i0", np.float64): (_I0E_A, _I0E_B), ("i0", np.float32): (_I0E_A, _I0E_B),
                  ("i1", np.float64): (_I1E_A, _I1E_B), ("i1", np.float32): (_I1E_A[-17:], _I1E_B[-7:])}


def _chbevl(y, coefficients, t):
    """Cephes' chbevl (Clenshaw's recurrence) elementwise in precision ``t``; ATen's compiled loop
    fuses ``y * b1 - b2`` into one rounding (FMA contraction)."""
    from .exact import fma
    b0 = np.full(y.shape, t(coefficients[0]), t)
    b1 = np.zeros(y.shape, t)
    b2 = b1
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = (fma(y, b1, -b2) + t(c)).astype(t, copy=False)
    return t(0.5) * (b0 - b2)


def _exp_in(x, t):
    """The C library's exp in precision ``t`` (expf for float32), element by element."""
    return elementwise(lambda v, tt: _c("exp", tt)(v), x.astype(t, copy=False))


def bessel_i(a, order):
    """ATen's calc_i0 / calc_i1 (the modified Bessel functions of the first kind of order 0 and 1) in
    the input's precision (float16 through float32)."""
    t = a.dtype.type if a.dtype in (np.float32, np.float64) else np.float32
    x = np.abs(a.astype(t, copy=False))
    small_table, large_table = _BESSEL_TABLES[("i0" if order == 0 else "i1"), t]
    small = x <= t(8)
    e = _exp_in(x, t)
    near = _chbevl(x / t(2) - t(2), small_table, t)
    far_x = np.where(small, t(32), x)              # (the far branch only where x > 8: no division by 0)
    far = _chbevl(t(32) / far_x - t(2), large_table, t)
    if order == 0:
        out = np.where(small, e * near, e * far / np.sqrt(far_x))
    else:
        out = np.where(small, e * x * near, (e * far) / np.sqrt(far_x))
        out = np.where(a < 0, -out, out)
    return out.astype(a.dtype, copy=False)
