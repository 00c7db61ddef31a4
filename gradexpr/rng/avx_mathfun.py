"""avx_mathfun's ``log256_ps`` and ``sincos256_ps`` as compiled into libtorch (AVX2 with FMA
contraction), emulated operation by operation in float32 for the normal distribution."""
from __future__ import annotations

import math

import numpy as np

from ..exact import fma32 as _fma32

_F = np.float32
_ONE = _F(1.0)
_ONE_BITS = np.uint32(0x3F800000)
_HALF = _F(0.5)
_SQRTHF = _F(0.707106781186547524)
_LOG_P = [_F(v) for v in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                          3.3333331174e-1)]
_LOG_Q1 = _F(-2.12194440e-4)
_LOG_Q2 = _F(0.693359375)
_MINUS_DP1 = _F(-0.78515625)
_MINUS_DP2 = _F(-2.4187564849853515625e-4)
_MINUS_DP3 = _F(-3.77489497744594108e-8)
_SINCOF = [_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1)]
_COSCOF = [_F(2.443315711809948e-005), _F(-1.388731625493765e-003), _F(4.166664568298827e-002)]
_FOPI = _F(1.27323954473516)
_TWO_PI_F = _F(2.0 * math.pi)
_MINUS_TWO = _F(-2.0)


def _log256_ps(x: np.ndarray) -> np.ndarray:
    """log256_ps as compiled into libtorch (AVX2 + FMA contraction), for float32 x > 0.

    (The ``max(x, FLT_MIN)`` and NaN-for-x<=0 steps are left out: the callers' x = 1 - u
    is always in [2**-24, 1].)
    """
    bits = x.view(np.uint32)
    e = (bits >> np.uint32(23)).view(np.int32)
    e -= np.int32(0x7F)
    e = e.astype(np.float32)
    e += _ONE
    m = bits & np.uint32(0x807FFFFF)
    m |= np.uint32(0x3F000000)
    x = m.view(np.float32)
    mask = x < _SQRTHF
    mask = mask.view(np.uint8).astype(np.uint32)
    np.negative(mask, out=mask)                      # all-ones where x < SQRTHF
    tmp = (m & mask).view(np.float32)
    e -= (mask & _ONE_BITS).view(np.float32)
    x = x + _F(-1.0)
    x += tmp
    z = x * x
    x64 = x.astype(np.float64)
    y = _fma32(x64, _LOG_P[0], _LOG_P[1])
    for p in _LOG_P[2:]:
        y = _fma32(y, x64, p)
    t = e * _LOG_Q1
    y *= x
    y = _fma32(y, z, t)                              # y*z + e*q1
    z *= _HALF                                       # exact
    y = _fma32(z, _F(-1.0), y, check=False)          # y - z*0.5 (vfnmadd): a float32 sum
    x += y
    return _fma32(e, _LOG_Q2, x)                     # e*q2 + x


def _sincos256_ps(theta: np.ndarray):
    """sincos256_ps as compiled into libtorch (AVX2 + FMA contraction)."""
    tb = theta.view(np.uint32)
    sign_sin = tb & np.uint32(0x80000000)
    x = (tb & np.uint32(0x7FFFFFFF)).view(np.float32)
    j = (x * _FOPI).astype(np.int32)
    j += np.int32(1)
    j &= np.int32(~1)
    y = j.astype(np.float32)
    swap = (j & np.int32(4)).view(np.uint32)
    swap <<= np.uint32(29)
    sign_sin ^= swap
    poly_mask = (j & np.int32(2)) == 0
    poly_mask = poly_mask.view(np.uint8).astype(np.uint32)
    np.negative(poly_mask, out=poly_mask)            # all-ones where j & 2 == 0
    sign_cos = j - np.int32(2)
    np.invert(sign_cos, out=sign_cos)
    sign_cos &= np.int32(4)
    sign_cos = sign_cos.view(np.uint32)
    sign_cos <<= np.uint32(29)
    # y is an even integer <= 8 and the DP constants are short, so these three sums are
    # exact in float64 (span < 53 bits) and need no tie check
    x = _fma32(y, _MINUS_DP1, x, check=False)
    x = _fma32(y, _MINUS_DP2, x, check=False)
    x = _fma32(y, _MINUS_DP3, x, check=False)
    z = x * x
    z64 = z.astype(np.float64)
    tmp = z * _HALF
    yc = _fma32(z64, _COSCOF[0], _COSCOF[1])
    yc = _fma32(yc, z64, _COSCOF[2])
    yc *= z
    np.negative(tmp, out=tmp)
    yc = _fma32(z64, yc, tmp)                        # z*y - tmp (vfmsub)
    yc += _ONE
    ys = _fma32(z64, _SINCOF[0], _SINCOF[1])
    ys = _fma32(ys, z64, _SINCOF[2])
    ys *= z
    ys = _fma32(x, ys, x)                            # x*y2 + x
    ysin2 = (ys.view(np.uint32) & poly_mask).view(np.float32)
    np.invert(poly_mask, out=poly_mask)
    ysin1 = (yc.view(np.uint32) & poly_mask).view(np.float32)
    ys -= ysin2
    yc -= ysin1
    s = ysin2 + ysin1
    c = ys + yc
    sb = s.view(np.uint32)
    sb ^= sign_sin
    cb = c.view(np.uint32)
    cb ^= sign_cos
    return s, c
