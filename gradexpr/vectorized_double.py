"""``Vectorized<double>``'s expm1, exp2, log, log1p, atan2, sinh, cosh, tanh, pow and erf: SLEEF's u10 double
functions.

ATen's AVX2 build computes them with ``Sleef_expm1d4_u10``, ``Sleef_log1pd4_u10``, ``Sleef_atan2d4_u10``,
... (the SLEEF it builds: Estrin's scheme for the long polynomials) in double-double arithmetic (pairs
of float64) with fused multiply-adds: within an ulp, not correctly rounded, so NumPy's and the C
library's results differ from PyTorch's in the last bit now and then.
The same steps with correctly rounded fma (sleef.py's pair arithmetic, exact.fma64 for float64) give
PyTorch's bits. The kernels' loops (vector runs, scalar tails) are sleef.vectorized_map's.
"""
from __future__ import annotations

import numpy as np

from .sleef import (_L2LD, _L2UD, _R_LN2D, _add2_f2f, _add2_f2f2, _add2_ff, _add_f, _add_f2f2, _add_ff2, _div, _fma,
                    _mul_f2f, _mul_f2f2, _mulsign, _normalize, _rec, _scale, _squ, horner, hyperbolic)

_D = np.float64
_EXPK2_POLY = (+0.1602472219709932072e-9, +0.2092255183563157007e-8, +0.2505230023782644465e-7,
               +0.2755724800902135303e-6, +0.2755731892386044373e-5, +0.2480158735605815065e-4,
               +0.1984126984148071858e-3, +0.1388888888886763255e-2, +0.8333333333333347095e-2,
               +0.4166666666666669905e-1)


def _pow2(q):
    return np.ldexp(1.0, q)


def _ldexp2(x, q):
    """vldexp2: x·2^(q>>1)·2^(q-(q>>1)), two roundings as SLEEF multiplies."""
    half = q >> 1
    return x * _pow2(half) * _pow2(q - half)


def _estrin(x, powers, coefficients):
    """SLEEF's POLYn macros (Estrin's scheme, fused): ``powers`` = (x², x⁴, x⁸, ...) as far as needed,
    ``coefficients`` highest first; the lower half's polynomial plus the upper half's times a power."""
    n = len(coefficients)
    if n == 1:
        return np.full_like(x, coefficients[0])
    if n == 2:
        return _fma(x, coefficients[0], coefficients[1])
    level = (n - 1).bit_length() - 1                       # the largest power 2^level below n
    split = n - (1 << level)
    return _fma(powers[level - 1], _estrin(x, powers, coefficients[:split]),
                _estrin(x, powers, coefficients[split:]))


def _expk2(d):
    """SLEEF's expk2: exp of the pair d as a pair (the polynomial in Estrin's scheme)."""
    dq = np.rint(np.nan_to_num((d[0] + d[1]) * _R_LN2D, nan=0.0, posinf=0.0, neginf=0.0))
    q = np.clip(dq, -4000, 4000).astype(np.int64)
    s = _add2_f2f(d, dq * -_L2UD)
    s = _add2_f2f(s, dq * -_L2LD)
    s2 = _squ(s)
    s4 = _squ(s2)
    u = _estrin(s[0], (s2[0], s4[0], s4[0] * s4[0]), _EXPK2_POLY)
    t = _add_ff2(np.full_like(d[0], 0.5), _mul_f2f(s, 0.1666666666666666574))
    t = _add_ff2(np.ones_like(d[0]), _mul_f2f2(t, s))
    t = _add_ff2(np.ones_like(d[0]), _mul_f2f2(t, s))
    t = _add_f2f2(t, _mul_f2f(s4, u))
    gone = d[0] < -1000
    return (np.where(gone, 0.0, _ldexp2(t[0], q)), np.where(gone, 0.0, _ldexp2(t[1], q)))


def _exp_pair(y):
    return _expk2((y, np.zeros_like(y)))


def expm1d(a):
    """``Sleef_expm1d4_u10(a)``: expk2(a) - 1 in double-double arithmetic."""
    a = np.asarray(a, _D)
    with np.errstate(all="ignore"):
        d = _add2_f2f(_expk2((a, np.zeros_like(a))), -1.0)
        x = d[0] + d[1]
        x = np.where(a > 709.782712893383996732223, np.inf, x)
        x = np.where(a < -36.736800569677101399113302437, -1.0, x)
        return np.where((a == 0) & np.signbit(a), -0.0, x)


def sinhd(x):
    """``Sleef_sinhd4_u10(x)``: (e - 1/e) / 2 of e = exp|x| as a pair, the sign of x."""
    return hyperbolic("sinh", np.asarray(x, _D), _exp_pair, 710.0, _add2_f2f2)


def coshd(x):
    """``Sleef_coshd4_u10(x)``: (e + 1/e) / 2 of e = exp|x| as a pair."""
    return hyperbolic("cosh", np.asarray(x, _D), _exp_pair, 710.0, _add2_f2f2)


def tanhd(x):
    """``Sleef_tanhd4_u10(x)``: (e - 1/e) / (e + 1/e) of e = exp|x| as a pair, the sign of x."""
    return hyperbolic("tanh", np.asarray(x, _D), _exp_pair, 18.714973875, _add2_f2f2)


# ---------------------------------------------------------------- exp2
_EXP2_POLY = (0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6,
              0.1321543872511327615e-5, 0.1525273353517584730e-4, 0.1540353045101147808e-3,
              0.1333355814670499073e-2, 0.9618129107597600536e-2, 0.5550410866482046596e-1,
              0.2402265069591012214e+0)


def exp2d(d):
    """``Sleef_exp2d4_u10(d)``: 2^q times a degree-12 polynomial of s = d - q (q = d rounded to even), its
    first ten terms in Estrin's scheme, fused. SLEEF's two scalings (2^(q>>1) exact) round once: ldexp's."""
    d = np.asarray(d, _D)
    with np.errstate(all="ignore"):
        q = np.rint(d)
        s = d - q
        s2 = s * s
        s4 = s2 * s2
        u = _fma(_estrin(s, (s2, s4, s4 * s4), _EXP2_POLY), s, 0.6931471805599452862)
        u = np.ldexp(_fma(u, s, 1.0), np.nan_to_num(np.clip(q, -4000, 4000)).astype(np.int64))
        u = np.where(d >= 1024, np.inf, u)
        return np.where(d < -2000, 0.0, u)


# ---------------------------------------------------------------- log1p
_LOG1P_POLY = (0.1532076988502701353e+0, 0.1525629051003428716e+0, 0.1818605932937785996e+0,
               0.2222214519839380009e+0, 0.2857142932794299317e+0, 0.3999999999635251990e+0,
               0.6666666666667333541e+0)
_LN2_PAIR = (0.693147180559945286226764, 2.319046813846299558417771e-17)


def _log_core(m, x, e):
    """The end of SLEEF's log and log1p: e·ln 2 + 2x + x³·p(x²) in double-double arithmetic, x = (m-1)/(m+1)
    as a pair (``x``), rounded to a double."""
    x2 = x[0] * x[0]
    x4 = x2 * x2
    p = _estrin(x2, (x4, x4 * x4), _LOG1P_POLY)
    s = _mul_f2f(_LN2_PAIR, e)
    s = _add_f2f2(s, _scale(x, 2.0))
    w = x2 * x[0] * p                                              # dfadd_vd2_vd2_vd
    rx = s[0] + w
    return rx + (((s[0] - rx) + w) + s[1])


def _exponent(d):
    """vilogb2k of d·(1/0.75) with tiny d scaled by 2^64 first: (e, the scaled d, which were tiny)."""
    tiny = d < np.finfo(_D).tiny
    d = np.where(tiny, d * 2.0 ** 64, d)
    return ((d * (1.0 / 0.75)).view(np.int64) >> 52 & 0x7FF) - 0x3FF, d, tiny


def logd(d):
    """``Sleef_logd4_u10(d)``: e·ln 2 + 2·atanh((m-1)/(m+1)) of the mantissa m in [0.75, 1.5)."""
    d = np.asarray(d, _D)
    with np.errstate(all="ignore"):
        e, scaled, tiny = _exponent(d)
        m = (scaled.view(np.int64) - (e << 52)).view(_D)
        one = np.ones_like(m)
        r = _log_core(m, _div(_add2_ff(-one, m), _add2_ff(one, m)), np.where(tiny, e - 64, e).astype(_D))
        r = np.where(np.isposinf(d), np.inf, r)
        r = np.where((d < 0) | np.isnan(d), np.nan, r)
        return np.where(d == 0, -np.inf, r)


def log1pd(a):
    """``Sleef_log1pd4_u10(a)``: log's steps on 1 + a, the mantissa taken from a itself (m = a·2^-e +
    (2^-e - 1), fused) so that small a keep their bits; above 1e307 SLEEF's logd(a)."""
    a = np.asarray(a, _D)
    with np.errstate(all="ignore"):
        e, _, tiny = _exponent(a + 1.0)
        t = (np.ones_like(a).view(np.int64) + ((-e) << 52)).view(_D)
        m = _fma(a, t, t - 1.0)
        x = _div((m, np.zeros_like(m)), _add_f(np.full_like(m, 2.0), m))
        r = _log_core(m, x, np.where(tiny, e - 64, e).astype(_D))
        r = np.where(a > 1e307, logd(a), r)
        r = np.where((a < -1) | np.isnan(a), np.nan, r)
        r = np.where(a == -1, -np.inf, r)
        return np.where((a == 0) & np.signbit(a), -0.0, r)


# ---------------------------------------------------------------- atan2
_ATAN_POLY = (1.06298484191448746607415e-05, -0.000125620649967286867384336, 0.00070557664296393412389774,
              -0.00251865614498713360352999, 0.00646262899036991172313504, -0.0128281333663399031014274,
              0.0208024799924145797902497, -0.0289002344784740315686289, 0.0359785005035104590853656,
              -0.041848579703592507506027, 0.0470843011653283988193763, -0.0524914210588448421068719,
              0.0587946590969581003860434, -0.0666620884778795497194182, 0.0769225330296203768654095,
              -0.0909090442773387574781907)
_ATAN_TAIL = (0.111111108376896236538123, -0.142857142756268568062339, 0.199999999997977351284817,
              -0.333333333333317605173818)
_HALF_PI_PAIR = (1.570796326794896557998982, 6.12323399573676603586882e-17)


def _atan2k(y, x):
    """SLEEF's atan2k_u1 for y >= 0: the angle as a pair (q quarter turns plus the arctangent of the smaller
    coordinate over the larger, its polynomial in Estrin's scheme and then Horner's)."""
    q = np.where(np.signbit(x), -2, 0)
    x = np.where(x < 0, -x, x)
    p = x < y
    q = q + p
    zero = np.zeros_like(y)
    s = _div((np.where(p, -x, y), zero), (np.where(p, y, x), zero))
    t = _normalize(_squ(s))
    t2 = t[0] * t[0]
    t4 = t2 * t2
    u = _estrin(t[0], (t2, t4, t4 * t4), _ATAN_POLY)
    for c in _ATAN_TAIL:
        u = _fma(u, t[0], c)
    t = _add_f2f2(s, _mul_f2f(_mul_f2f2(s, t), u))
    return _add_f2f2(_mul_f2f(_HALF_PI_PAIR, q.astype(_D)), t)


def atan2d(y, x):
    """``Sleef_atan2d4_u10(y, x)`` elementwise over float64 arrays (broadcast)."""
    y, x = np.broadcast_arrays(np.asarray(y, _D), np.asarray(x, _D))
    with np.errstate(all="ignore"):
        tiny = np.abs(x) < 5.5626846462680083984e-309
        x = np.where(tiny, x * float(1 << 53), x)
        y = np.where(tiny, y * float(1 << 53), y)
        d = _atan2k(np.abs(y), x)
        r = _mulsign(d[0] + d[1], x)
        x_inf = np.isinf(x)

        def inf_part(m):                         # visinf2(x, mulsign(m, x)): ±m where x is ±inf, else 0
            return np.where(x_inf, np.copysign(m, x), 0.0)
        r = np.where(x_inf | (x == 0), np.pi / 2 - inf_part(np.pi / 2), r)
        r = np.where(np.isinf(y), np.pi / 2 - inf_part(np.pi / 4), r)
        r = np.where(y == 0, np.where(np.signbit(x), np.pi, 0.0), r)
        return np.where(np.isnan(x) | np.isnan(y), np.nan, _mulsign(r, y))


# ---------------------------------------------------------------- pow (Sleef_powd4_u10)
_LOGK_POLY = (0.116255524079935043668677, 0.103239680901072952701192, 0.117754809412463995466069,
              0.13332981086846273921509, 0.153846227114512262845736, 0.181818180850050775676507,
              0.222222222230083560345903, 0.285714285714249172087875, 0.400000000000000077715612)
_LOGK_C = (0.666666666666666629659233, 3.80554962542412056336616e-17)
_EXPK_POLY = (2.51069683420950419527139e-08, 2.76286166770270649116855e-07, 2.75572496725023574143864e-06,
              2.48014973989819794114153e-05, 0.000198412698809069797676111, 0.0013888888939977128960529,
              0.00833333333332371417601081, 0.0416666666665409524128449, 0.166666666666666740681535,
              0.500000000000000999200722)


def _logk(d):
    """SLEEF's logk: log of d > 0 as a pair (2·atanh((m-1)/(m+1)) of the mantissa m in [0.75, 1.5))."""
    tiny = d < np.finfo(_D).tiny
    d = np.where(tiny, d * 2.0 ** 64, d)
    e = ((d * (1.0 / 0.75)).view(np.int64) >> 52 & 0x7FF) - 0x3FF
    m = (d.view(np.int64) - (e << 52)).view(_D)
    e = np.where(tiny, e - 64, e).astype(_D)
    one = np.ones_like(d)
    x = _div(_add2_ff(-one, m), _add2_ff(one, m))
    x2 = _squ(x)
    x4 = x2[0] * x2[0]
    x8 = x4 * x4
    t = _estrin(x2[0], (x4, x8, x8 * x8), _LOGK_POLY)
    s = _mul_f2f(_LN2_PAIR, e)
    s = _add_f2f2(s, _scale(x, 2.0))
    x = _mul_f2f2(x2, x)
    s = _add_f2f2(s, _mul_f2f2(x, _LOGK_C))
    x = _mul_f2f2(x2, x)
    return _add_f2f2(s, _mul_f2f(x, t))


def _expk(d):
    """SLEEF's expk: exp of the pair d, rounded to a double."""
    dq = np.rint(np.nan_to_num((d[0] + d[1]) * _R_LN2D, nan=0.0, posinf=0.0, neginf=0.0))
    q = np.clip(dq, -4000, 4000).astype(np.int64)
    s = _add2_f2f(d, dq * -_L2UD)
    s = _normalize(_add2_f2f(s, dq * -_L2LD))
    s2 = s[0] * s[0]
    s4 = s2 * s2
    u = _estrin(s[0], (s2, s4, s4 * s4), _EXPK_POLY)
    t = _add_ff2(np.ones_like(s[0]), s)
    t = _add_f2f2(t, _mul_f2f(_squ(s), u))
    return np.where(d[0] < -1000, 0.0, _ldexp2(t[0] + t[1], q))


def powd(x, y):
    """``Sleef_powd4_u10(x, y)`` elementwise over float64 arrays (broadcast): exp(y·log|x|) in double-double
    arithmetic, the sign and the special values as SLEEF's xpow sets them."""
    x, y = np.broadcast_arrays(np.asarray(x, _D), np.asarray(y, _D))
    with np.errstate(all="ignore"):
        yisint = np.trunc(y) == y
        yisodd = yisint & (np.abs(y) < 2.0 ** 53) & (np.fmod(y, 2.0) != 0)
        d = _mul_f2f(_logk(np.abs(x)), y)
        result = _expk(d)
        result = np.where(d[0] > 709.78271114955742909217217426, np.inf, result)
        result = result * np.where(x > 0, 1.0, np.where(yisint, np.where(yisodd, -1.0, 1.0), np.nan))
        efx = _mulsign(np.abs(x) - 1, y)
        result = np.where(np.isinf(y), np.where(efx < 0, 0.0, np.where(efx == 0, 1.0, np.inf)), result)
        edge = np.where(np.signbit(y) ^ (x == 0), 0.0, np.inf)
        result = np.where(np.isinf(x) | (x == 0), _mulsign(edge, np.where(yisodd, x, 1.0)), result)
        result = np.where(np.isnan(x) | np.isnan(y), np.nan, result)
        return np.where((y == 0) | (x == 1), 1.0, result)


# ---------------------------------------------------------------- erf (Sleef_erfd4_u10)
_ERF_NEAR = (-0.2083271002525222097e-14, +0.7151909970790897009e-13, -0.1162238220110999364e-11,
             +0.1186474230821585259e-10, -0.8499973178354613440e-10, +0.4507647462598841629e-9,
             -0.1808044474288848915e-8, +0.5435081826716212389e-8, -0.1143939895758628484e-7,
             +0.1215442362680889243e-7, +0.1669878756181250355e-7, -0.9808074602255194288e-7,
             +0.1389000557865837204e-6, +0.2945514529987331866e-6, -0.1842918273003998283e-5,
             +0.3417987836115362136e-5, +0.3860236356493129101e-5, -0.3309403072749947546e-4,
             +0.1060862922597579532e-3, +0.2323253155213076174e-3, +0.1490149719145544729e-3)
_ERF_FAR = (-0.4024015130752621932e-18, +0.3847193332817048172e-16, -0.1749316241455644088e-14,
            +0.5029618322872872715e-13, -0.1025221466851463164e-11, +0.1573695559331945583e-10,
            -0.1884658558040203709e-9, +0.1798167853032159309e-8, -0.1380745342355033142e-7,
            +0.8525705726469103499e-7, -0.4160448058101303405e-6, +0.1517272660008588485e-5,
            -0.3341634127317201697e-5, -0.2515023395879724513e-5, +0.6539731269664907554e-4,
            -0.3551065097428388658e-3, +0.1210736097958368864e-2, -0.2605566912579998680e-2,
            +0.1252823202436093193e-2, +0.1820191395263313222e-1, -0.1021557155453465954e+0)
_ERF_NEAR_PAIRS = ((0.0092877958392275604405, 7.9287559463961107493e-19),
                   (0.042275531758784692937, 1.3785226620501016138e-19),
                   (0.07052369794346953491, 9.5846628070792092842e-19))
_ERF_FAR_PAIRS = ((-0.63691044383641748361, -2.4249477526539431839e-17),
                  (-1.1282926061803961737, -6.2970338860410996505e-17),
                  (-1.2261313785184804967e-05, -5.5329707514490107044e-22))


def erfd(a):
    """``Sleef_erfd4_u10(a)``: up to |a| = 2.5, 1 - (1 + x·p(x))^-16 (Abramowitz-Stegun 7.1.28's form with
    SLEEF's polynomial), beyond it 1 - exp(q(x)), both polynomials a degree-20 Estrin tree finished in
    double-double arithmetic; the sign of a."""
    a = np.asarray(a, _D)
    with np.errstate(all="ignore"):
        x = np.abs(a)
        near = x <= 2.5
        x2 = x * x
        x4 = x2 * x2
        x8 = x4 * x4
        t = _estrin(x, (x2, x4, x8, x8 * x8), [np.where(near, n, f) for n, f in zip(_ERF_NEAR, _ERF_FAR)])
        c2, c1, c0 = ((np.where(near, n[0], f[0]), np.where(near, n[1], f[1]))
                      for n, f in zip(_ERF_NEAR_PAIRS, _ERF_FAR_PAIRS))
        upper = _add_f2f2(c2, _mul_f2f((t, np.zeros_like(t)), x))     # poly4dd(x, t, c2, c1, c0)
        lower = _add_f2f2(c0, _mul_f2f(c1, x))
        t2 = _add_f2f2(lower, _mul_f2f(upper, x2))
        s2 = _add_ff2(np.ones_like(x), _mul_f2f(t2, x))
        for _ in range(4):
            s2 = _squ(s2)
        s2 = _rec(s2)
        far = _expk(t2)
        t2 = (np.where(near, s2[0], far), np.where(near, s2[1], 0.0))
        t2 = _add2_f2f(t2, -1.0)
        z = -(t2[0] + t2[1])
        z = np.where(x < 1e-8, x * 1.12837916709551262756245475959, z)
        z = np.where((x >= 6) | np.isinf(a), 1.0, z)
        z = np.where(a == 0, 0.0, z)
        return _mulsign(z, a)
