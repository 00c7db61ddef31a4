"""``Vectorized<float>``'s atan2, sinh, cosh, tanh, exp2 and erf as ATen's AVX2 build computes them.

atan2, sinh, cosh, tanh and exp2 are SLEEF's u10 functions (``Sleef_atan2f8_u10``, ``Sleef_sinhf8_u10``, ...),
in SLEEF's double-float arithmetic (pairs of float32) with fused multiply-adds; erf is ATen's own
Abramowitz-Stegun polynomial around SLEEF's expf (``vec256_float.h``), not the C library's or MKL's.
Each is within an ulp or so of the true value and differs from NumPy's in the last bit of many
results; the same steps with correctly rounded fma (sleef.py's pair arithmetic) give PyTorch's bits.
The kernels' loops (vector runs, scalar tails) are sleef.vectorized_map's.
"""
from __future__ import annotations

import numpy as np

from .sleef import (_F, _add_f, _add_f2f2, _add_ff2, _div, _expk2f, _fma, _mul_f2f, _mul_f2f2, _mulsign,
                    _normalize, _squ, expf, horner, hyperbolic)

# ---------------------------------------------------------------- atan2f (Sleef_atan2f8_u10)
_ATAN_POLY = tuple(_F(c) for c in (-0.00176397908944636583328247, 0.0107900900766253471374512,
                                   -0.0309564601629972457885742, 0.0577365085482597351074219,
                                   -0.0838950723409652709960938, 0.109463557600975036621094,
                                   -0.142626821994781494140625, 0.199983194470405578613281))
_HALF_PI_PAIR = (_F(1.5707963705062866211), _F(-4.3711388286737928865e-08))


def _atan2k(y, x):
    """SLEEF's atan2kf_u1 for y >= 0 (floats): the angle as a pair, from the quadrant count q and the
    arctangent of the smaller over the larger coordinate."""
    negative = x < 0
    q = np.where(negative, -2, 0).astype(np.int32)
    x = np.where(negative, -x, x)
    p = x < y
    q = q + p
    s = (np.where(p, -x, y), np.zeros_like(y))
    t = (np.where(p, y, x), np.zeros_like(y))
    s = _div(s, t)
    t = _normalize(_squ(s))
    u = horner(t[0], _ATAN_POLY)
    t = _mul_f2f2(t, _add_f(_F(-0.333332866430282592773438), u * t[0]))
    t = _mul_f2f2(s, _add_ff2(_F(1), t))
    return _add_f2f2(_mul_f2f(_HALF_PI_PAIR, q.astype(_F)), t)


def atan2f(y, x):
    """``Sleef_atan2f8_u10(y, x)`` elementwise over float32 arrays (broadcast)."""
    y, x = np.broadcast_arrays(np.asarray(y, _F), np.asarray(x, _F))
    with np.errstate(all="ignore"):
        tiny = np.abs(x) < _F(2.9387372783541830947e-39)
        x = np.where(tiny, x * _F(1 << 24), x).astype(_F)
        y = np.where(tiny, y * _F(1 << 24), y).astype(_F)
        d = _atan2k(np.abs(y), x)
        r = _mulsign(d[0] + d[1], x)
        half_pi, quarter_pi = _F(np.pi / 2), _F(np.pi / 4)
        x_inf = np.isinf(x)

        def inf_part(m):                         # visinf2(x, mulsign(m, x)): ±m where x is ±inf, else 0
            return np.where(x_inf, np.copysign(m, x), _F(0)).astype(_F)
        r = np.where(x_inf | (x == 0), half_pi - inf_part(half_pi), r)
        r = np.where(np.isinf(y), half_pi - inf_part(quarter_pi), r)
        r = np.where(y == 0, np.where(np.signbit(x), _F(np.pi), _F(0)), r).astype(_F)
        r = _mulsign(r, y)
        return np.where(np.isnan(x) | np.isnan(y), _F(np.nan), r).astype(_F)


# ---------------------------------------------------------------- sinhf, coshf, tanhf (u10)
def _exp_pair(y):
    return _expk2f(y, np.zeros_like(y))


def sinhf(x):
    """``Sleef_sinhf8_u10(x)``: (e - 1/e) / 2 of e = exp|x| as a pair, the sign of x."""
    return hyperbolic("sinh", np.asarray(x, _F), _exp_pair, _F(89), _add_f2f2)


def coshf(x):
    """``Sleef_coshf8_u10(x)``: (e + 1/e) / 2 of e = exp|x| as a pair."""
    return hyperbolic("cosh", np.asarray(x, _F), _exp_pair, _F(89), _add_f2f2)


def tanhf(x):
    """``Sleef_tanhf8_u10(x)``: (e - 1/e) / (e + 1/e) of e = exp|x| as a pair, the sign of x."""
    return hyperbolic("tanh", np.asarray(x, _F), _exp_pair, _F(8.664339742), _add_f2f2)


# ---------------------------------------------------------------- ATen's Vectorized<float>::erf
_ERF_P = _F(0.3275911)
_ERF_POLY = tuple(_F(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def erf(x):
    """``Vectorized<float>::erf``: 1 - r(t)·t·exp(-x²) with t = 1 / (1 + p|x|) (Abramowitz-Stegun 7.1.26)
    in fused multiply-adds, SLEEF's expf, the sign of x."""
    x = np.asarray(x, _F)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        t = _F(1) / _fma(_ERF_P, ax, _F(1))
        r = horner(t, _ERF_POLY)
        e = expf(-(x * x))
        return _mulsign(_fma(-e * t, r, _F(1)), x)


# ---------------------------------------------------------------- exp2f (Sleef_exp2f8_u10)
_EXP2_POLY = tuple(_F(c) for c in (0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1,
                                   0.2402264476e+0, 0.6931471825e+0))


def exp2f(d):
    """``Sleef_exp2f8_u10(d)``: 2^q times a degree-7 polynomial of s = d - q (q = d rounded to even), in
    fused multiply-adds. SLEEF scales by 2^(q>>1) exactly, then by the rest with one rounding: ldexp's."""
    d = np.asarray(d, _F)
    with np.errstate(all="ignore"):
        q = np.rint(d)
        s = d - q
        u = _fma(horner(s, _EXP2_POLY), s, _F(1))
        u = np.ldexp(u, np.nan_to_num(np.clip(q, -1000, 1000)).astype(np.int32))
        u = np.where(d >= 128, _F(np.inf), u)
        return np.where(d < -150, _F(0), u).astype(_F)
