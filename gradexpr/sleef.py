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
pow's kernel does not special-case); ``pow_scalar`` is that kernel's loop (measured equal to
PyTorch's on 10^5-element inputs for 12 exponents, subnormal and special values included).
"""
from __future__ import annotations

import contextvars

import numpy as np

from .exact import fma, fma32, fma64

_F = np.float32
_R_LN2 = _F(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = _F(-0.693145751953125)
_L2L = _F(-1.428606765330187045e-06)
_POLY = tuple(_F(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                              0.00833336077630519866943359, 0.0416664853692054748535156,
                              0.166666671633720397949219, 0.5))
_RUN_BYTES = 64           # 2 AVX2 vectors: runs of 16 floats, 8 doubles
# set while a float16 kernel computes in float32 (ops.common.in_float32): ATen's loop over halves runs two
# Vectorized<Half> of 16 at a time, so the vector runs are 32 elements, as the halves' own bytes give
HALF_RUNS = contextvars.ContextVar("half_runs", default=False)
_GRAIN = 32768             # at::internal::GRAIN_SIZE: TensorIterator's for_each splits above it


_BLOCK = 8192             # elements per pass: the float64 temporaries of a block stay in cache
_LOW29, _HALF29 = np.uint64(0x1FFFFFFF), np.uint64(0x10000000)


_DOUBLE = np.dtype(np.float64)


def _double(a, b, c) -> bool:
    """Whether an operand is float64 (SLEEF's double functions share the pair arithmetic): a Python
    number does not make a float32 fma a double one, as in NumPy's promotion."""
    return getattr(a, "dtype", None) is _DOUBLE or getattr(b, "dtype", None) is _DOUBLE \
        or getattr(c, "dtype", None) is _DOUBLE


def _fma(a, b, c, sums=None):
    """``a * b + c`` rounded once to float32 (vfmadd*ps): exact.fma32's float64 sum, with its tie repair
    only when a sum lands halfway between two float32 values (rare; the common case stays four passes);
    float64 operands (SLEEF's double functions, the same pair arithmetic) through exact.fma64.
    ``sums``, a list (see ``_tie_checked``): the float64 sum goes there and its tie check is left to
    the caller, which checks the sums of a whole function at once."""
    if _double(a, b, c):
        return fma(a, b, c)
    s = np.multiply(a, b, dtype=np.float64)
    s += c
    if sums is not None:
        sums.append(s)
    elif np.count_nonzero((s.view(np.uint64) & _LOW29) == _HALF29):
        return fma32(a, b, c)
    return s.astype(_F)


def _tie_checked(kernel, *arrays):
    """``kernel(*arrays, sums=[...])``, a float32 function whose fused multiply-adds leave their tie
    checks to one pass here over all their float64 sums: a sum halfway between two float32 values is
    rare, and where there is one the kernel runs again with each fma checking (and repairing) its own."""
    sums = []
    result = kernel(*arrays, sums=sums)
    if sums:
        bits = np.concatenate(sums, axis=None).view(np.uint64)
        if np.count_nonzero((bits & _LOW29) == _HALF29):
            return kernel(*arrays)
    return result


def _fma_exact(a, b, c):
    """``a * b + c`` rounded once to float32 where the float64 sum is exact by construction: the error of
    a product (``a * b - fl(a * b)``), a Newton residual (``1 - d * fl(1 / d)``), Cody-Waite's reduction.
    float64 then holds the exact value and one rounding to float32 is the fused one, so ``_fma``'s tie
    check (four more passes, and a slow repair of exact values that merely look like ties) is not needed.
    float64 operands (the double functions' pair arithmetic) go through exact.fma64: no wider sum holds them."""
    if _double(a, b, c):
        return fma(a, b, c)
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
            out[begin:begin + _BLOCK] = _tie_checked(_expf, flat[begin:begin + _BLOCK])
        return out.reshape(d.shape)
    return _tie_checked(_expf, d)


def _expf(d, sums=None):
    with np.errstate(all="ignore"):
        q = np.rint(d * _R_LN2)
        # Cody-Waite's two fmas have exact float64 sums (q has at most 8 bits for |d| <= 104, the lanes
        # not replaced at the end); the first is float32's own: q·L2U is exact there too (8 + 15 bits)
        s = q * _L2U + d
        s = _fma_exact(q, _L2L, s)
        u = horner(s, _POLY, sums)
        u = _F(1) + _fma(s * s, u, s, sums)
        # (|d| <= 100 everywhere, nearly always: no nan, no clipping, no saturation)
        special = not np.maximum.reduce(np.abs(d), axis=None, initial=0) <= 100
        qi = (np.clip(q, -1000, 1000) if special else q).astype(np.int32)   # (beyond ±1000 it saturates)
        # SLEEF scales by 2^(q>>1), exactly (its result is normal), then by 2^(q - (q>>1)), rounding
        # once where the result is subnormal or overflows: what one ldexp by 2^q does
        u = np.ldexp(u, qi)
        if special:
            u = np.where(d < -104, _F(0), u)
            u = np.where(d > 100, _F(np.inf), u)
            u = np.where(np.isnan(d), d, u)
        return np.asarray(u, _F)


def vectorized(a, vector, scalar, threads, grain=_GRAIN):
    """``cpu_kernel_vec`` over one float32 or float64 array (see ``vectorized_map``)."""
    return vectorized_map((a,), vector, scalar, threads, grain)


def vectorized_map(arrays, vector, scalar, threads, grain=_GRAIN):
    """``cpu_kernel_vec`` over float32 or float64 ``arrays`` (broadcast together): TensorIterator orders
    the dims as it lays the result out and coalesces them; where the inner loop is contiguous (or one
    input a broadcast scalar), its runs of two AVX2 vectors go through ``vector`` and each run's tail
    through ``scalar`` (both elementwise functions of as many arrays), a strided inner loop all through
    ``scalar``. Above ``grain`` elements the range is split between ``threads`` (``at::parallel_for``),
    and each thread's piece of a row has runs of its own."""
    from .result_layout import _permutation
    views = np.broadcast_arrays(*arrays)
    shape = views[0].shape
    if not shape:
        return scalar(*(np.reshape(v, (1,)) for v in views)).reshape(())
    perm = _permutation(arrays, shape)[::-1]                  # slowest dim first
    flats = [v.transpose(perm).reshape(-1) for v in views]
    sizes = [shape[d] for d in perm]
    n = flats[0].size
    inner = _coalesced_inner(sizes, [[v.strides[d] // v.itemsize for d in perm] for v in views])
    run = _RUN_BYTES // (2 if HALF_RUNS.get() else flats[0].itemsize)
    vector_at = None
    if inner is not None and n:
        row, strides = inner
        contiguous = [s == 1 for s in strides]
        if all(contiguous) or (len(strides) > 1 and contiguous.count(False) == 1 and 0 in strides):
            vector_at = _vector_positions(n, row, run, threads, grain)
    out = np.empty(n, flats[0].dtype)
    if vector_at is None:
        out[:] = scalar(*flats)
    else:
        if vector_at.all():
            out[:] = _blocked(vector, flats)
        elif not vector_at.any():                # (fewer elements than a run: the emulated vector
            out[:] = scalar(*flats)              # function would do all its work on empty arrays)
        else:
            out[vector_at] = _blocked(vector, [f[vector_at] for f in flats])
            tail = ~vector_at
            out[tail] = scalar(*(f[tail] for f in flats))
    return out.reshape(sizes).transpose(np.argsort(perm))


def _blocked(function, flats):
    """An elementwise ``function`` of 1-D arrays, block by block (its many temporaries stay in cache)."""
    n = flats[0].size
    if n <= _BLOCK:
        return function(*flats)
    out = np.empty(n, flats[0].dtype)
    for begin in range(0, n, _BLOCK):
        out[begin:begin + _BLOCK] = function(*(f[begin:begin + _BLOCK] for f in flats))
    return out


def _coalesced_inner(sizes, strides):
    """TensorIterator's coalesce_dimensions on dims ordered slowest first: the inner loop's length and
    each operand's element stride in it (None for an empty shape)."""
    dims = [(size, [st[d] for st in strides]) for d, size in enumerate(sizes) if size != 1]
    if not dims:
        return (1, [1] * len(strides))
    size, inner = dims[-1]
    for outer_size, outer in reversed(dims[:-1]):
        if all(o == i * size for o, i in zip(outer, inner)):
            size *= outer_size
        else:
            break
    return size, inner


def _vector_positions(n, row, run, threads, grain):
    """Which of ``n`` elements (rows of ``row``) the vector loop computes: each row's piece within a
    thread's chunk, in runs of ``run`` from the piece's start, its tail left to the scalar loop."""
    index = np.arange(n)
    begin = (index // row) * row
    end = begin + row
    if n >= grain and threads > 1:
        parts = min(threads, -(-n // grain))
        size = -(-n // parts)
        chunk = (index // size) * size
        begin = np.maximum(begin, chunk)
        end = np.minimum(end, chunk + size)
    end = np.minimum(end, n)
    return index < begin + (end - begin) // run * run


def libm(name, *arrays):
    """The C library's ``namef`` / ``name`` of each element of float32 / float64 arrays of one shape (the
    scalar lambda's ``std::name``)."""
    from .special_math import c_function
    x = arrays[0]
    fn = c_function(name, x.dtype.type)
    values = map(fn, *(a.ravel().tolist() for a in arrays))
    return np.fromiter(values, x.dtype, x.size).reshape(x.shape)


def libm_exp(x):
    """The C library's ``expf`` / ``exp`` of each element of a float32 / float64 array (the scalar
    lambda's ``std::exp``)."""
    return libm("exp", x)


_VECTOR_FUNCTIONS: dict = {}     # (name, scalar type) -> emulation, filled on first use


def vector_function(name, dtype):
    """The emulation of ``Vectorized<dtype>::name`` for float32 / float64, None where there is none."""
    if not _VECTOR_FUNCTIONS:
        from . import vectorized_double, vectorized_float
        _VECTOR_FUNCTIONS.update({
            ("expm1", np.float32): expm1f, ("log1p", np.float32): log1pf, ("exp", np.float32): expf,
            ("exp", np.float64): expd, ("tanh", np.float32): vectorized_float.tanhf,
            ("expm1", np.float64): vectorized_double.expm1d, ("log1p", np.float64): vectorized_double.log1pd,
            ("tanh", np.float64): vectorized_double.tanhd, ("log", np.float32): logf,
            ("log", np.float64): vectorized_double.logd})
    return _VECTOR_FUNCTIONS.get((name, np.dtype(dtype).type))


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


def _log_tail(sx, sy, xx, xy, sums=None):
    """The end of SLEEF's logf/log1pf: (sx, sy) = e·ln 2 and (xx, xy) = (m-1)/(m+1) as double-floats;
    s + 2x + x^3·p(x^2), added as SLEEF adds it, rounded to one float (``sums``: see ``_fma``)."""
    x2 = xx * xx
    p = horner(x2, _LOG_POLY, sums)
    ax, ay = xx * _F(2), xy * _F(2)                                # s = dfadd(s, dfscale(x, 2))
    s = sx + ax
    sy = (((sx - s) + ax) + sy) + ay
    w = (x2 * xx) * p                                              # s = dfadd(s, x2 * x * p)
    r = s + w
    ry = ((s - r) + w) + sy
    return r + ry


_FLT_TINY, _FLT_MAX = np.finfo(_F).tiny, np.finfo(_F).max


def logf(d):
    """``Sleef_logf8_u10(d)`` of a float32 array: log 2 times the exponent plus 2·atanh((m-1)/(m+1)) of
    the mantissa m in [0.75, 1.5), in double-float arithmetic with fused multiply-adds."""
    return _tie_checked(_logf, np.asarray(d, _F))


def _logf(d, sums=None):
    # Four of SLEEF's fused multiply-adds have float64 sums that are exact (so no tie check) for every
    # positive finite d (the other lanes' results are replaced at the end): e·ln2_lo plus the error of
    # e·ln2_hi (a multiple of 2^-52 below 2^-15); -dy·t plus the Newton residual 1 - dx·t (a multiple
    # of 2^-49 below 2^-22, dy being a multiple of 2^-24 and t of 2^-25); and ny·t + u, where ny, the
    # error of m - 1, is 0 (Sterbenz: m is within a factor 2 of 1), which leaves u itself.
    with np.errstate(all="ignore"):
        special = np.count_nonzero((d >= _FLT_TINY) & (d <= _FLT_MAX)) != d.size     # (nan included)
        if special:
            tiny = d < _FLT_TINY
            d2 = np.where(tiny, d * _F(2.0 ** 64), d).astype(_F)
        else:
            d2 = d
        e = (((d2 * _F(1.0 / 0.75)).view(np.int32) >> 23) & 0xff) - 0x7f
        m = (d2.view(np.int32) + ((-e) << 23)).view(_F)
        e = (np.where(tiny, e - 64, e) if special else e).astype(_F)
        sx = e * _LN2_HI                                          # dfmul((ln2 hi, lo), e)
        sy = _fma_exact(_LN2_LO, e, _fma_exact(_LN2_HI, e, -sx))
        nx = m - _F(1)                                            # x = dfdiv(m - 1, m + 1): m - 1 is exact
        dx, dy = _two_sum(_F(1), m)
        t = _F(1) / dx
        xx = nx * t
        u = _fma_exact(t, nx, -xx)
        v = _fma_exact(-dy, t, _fma_exact(-dx, t, _F(1)))
        xy = _fma(xx, v, u, sums)
        r = _log_tail(sx, sy, xx, xy, sums)
        if special:
            r = np.where(np.isposinf(d), _F(np.inf), r)
            r = np.where((d < 0) | np.isnan(d), _F(np.nan), r)
            r = np.where(d == 0, _F(-np.inf), r)
        return np.asarray(r, _F)


def log1pf(d):
    """``Sleef_log1pf8_u10(d)`` of a float32 array: logf's steps on 1 + d, the mantissa taken from d itself
    (m = d·2^-e + (2^-e - 1), fused) so that small d keep their bits; above 1e38, where 1 + d no longer
    fits that core, SLEEF's own logf(d) (the SLEEF PyTorch 2.13 builds: 974 of 974 such inputs agree,
    where the older SLEEF's infinity there differed in all but one)."""
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
        r = np.where(d > _F(1e38), logf(d), r)                   # (beyond its core's range: SLEEF's logf)
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


def _sub_f2f2(x, y):
    rx = x[0] - y[0]
    return rx, (((x[0] - rx) - y[0]) + x[1]) - y[1]


def _add_f(x, y):
    """dfadd of two numbers (|x| >= |y|)."""
    rx = x + y
    return rx, (x - rx) + y


def _rec(d):
    """dfrec of a pair: 1 / (d.x + d.y) as a pair."""
    qx = 1 / d[0]
    return qx, qx * _fma(-d[1], qx, _fma_exact(-d[0], qx, d[0].dtype.type(1)))   # (a Newton residual: exact)


def _mulsign(x, y):
    """x with its sign flipped where y's sign bit is set (SLEEF's vmulsign)."""
    return np.where(np.signbit(y), -x, x).astype(x.dtype)


def horner(x, coefficients, sums=None):
    """Horner's scheme with fused multiply-adds in x's precision, the highest coefficient first
    (``sums``: see ``_fma``). For float32 the float64 copy of x is made once, and each step's product
    (exact in float64) and sum are two passes before the rounding."""
    x = np.asarray(x)
    if x.dtype != _F:
        u = np.full_like(x, coefficients[0])
        for c in coefficients[1:]:
            u = _fma(u, x, c, sums)
        return u
    x64 = x.astype(np.float64)
    u = np.asarray(coefficients[0], _F)
    for c in coefficients[1:]:
        s = u * x64
        s += c
        if sums is not None:
            sums.append(s)
        elif np.count_nonzero((s.view(np.uint64) & _LOW29) == _HALF29):
            s = fma32(u, x, c)
        u = s.astype(_F)
    return u if u.shape == x.shape else np.full_like(x, u)


def hyperbolic(kind, x, exp_pair, limit, tanh_sum):
    """SLEEF's sinh / cosh / tanh (``kind``) of float array x from e = exp|x| as a pair (``exp_pair``):
    (e ∓ 1/e)/2, or (e - 1/e)/(e + 1/e) with ``tanh_sum`` the pair sum that precision's tanh adds with;
    beyond ``limit`` (or where the pair overflowed) infinity, or 1 for tanh; x's sign but for cosh."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        d = exp_pair(np.abs(x))
        e = _rec(d)
        if kind == "tanh":
            d = _div(tanh_sum(d, (-e[0], -e[1])), tanh_sum(d, e))
            y, big = d[0] + d[1], t(1)
        else:
            d = _sub_f2f2(d, e) if kind == "sinh" else _add_f2f2(d, e)
            y, big = (d[0] + d[1]) * t(0.5), t(np.inf)
        y = np.where((np.abs(x) > limit) | np.isnan(y), big, y).astype(x.dtype)
        if kind != "cosh":
            y = _mulsign(y, x)
        return np.where(np.isnan(x), t(np.nan), y).astype(x.dtype)


def _sqrt_pair(d):
    """SLEEF's dfsqrt / ddsqrt (fused): sqrt of the pair d as a pair, by one Newton step from the
    square root of its sum: (d + t²) / t / 2 in pair arithmetic."""
    t = np.sqrt(d[0] + d[1])
    one = t.dtype.type(1)
    rec = one / t
    tt = t * t
    square = (tt, _fmapn(t, t, tt))
    return _scale(_mul_f2f2(_add2_f2f2(d, square), (rec, rec * _fma(-t, rec, one))), t.dtype.type(0.5))


def hypot_u05(x, y):
    """``Sleef_hypotf8_u05`` / ``Sleef_hypotd4_u05`` of float32 / float64 arrays (broadcast): the larger
    magnitude times sqrt(1 + (smaller / larger)²), the ratio and the root in pair arithmetic (both
    scaled up first where the larger is subnormal); 0 < ratio, nan and infinity as C's hypot."""
    x, y = np.broadcast_arrays(x, y)
    t = x.dtype.type
    with np.errstate(all="ignore"):
        x, y = np.abs(x), np.abs(y)
        low, high = np.minimum(x, y), np.maximum(x, y)
        tiny = high < np.finfo(x.dtype).tiny
        scale = t(2.0 ** (54 if t is np.float64 else 24))
        zero = np.zeros_like(low)
        ratio = _div((np.where(tiny, low * scale, low), zero), (np.where(tiny, high * scale, high), zero))
        r = _mul_f2f(_sqrt_pair(_add2_f2f(_squ(ratio), t(1))), high)
        r = r[0] + r[1]
        r = np.where(np.isnan(r), t(np.inf), r)
        r = np.where(low == 0, high, r)
        r = np.where(np.isnan(x) | np.isnan(y), t(np.nan), r)
        return np.where(np.isposinf(x) | np.isposinf(y), t(np.inf), r).astype(x.dtype)


def _toward0(x):
    """SLEEF's vtoward0: the next float toward zero of a positive x (its bits minus one), 0 kept."""
    bits = _BITS_OF[x.dtype.type]
    return np.where(x == 0, x.dtype.type(0), (x.view(bits) - bits(1)).view(x.dtype))


_BITS_OF = {np.float32: np.int32, np.float64: np.int64}


def fmod(x, y):
    """``Sleef_fmodf8`` / ``Sleef_fmodd4`` of float32 / float64 arrays (broadcast): |x| reduced by
    multiples of |y| in pair arithmetic, a quotient estimate toward zero per round (8 rounds for float,
    21 for double; measured against PyTorch's, float64 at DBL_MAX included), both scaled up where |y| is
    subnormal. Exact where the quotient fits; where
    |x| / |y| overflows (fmodf(3e38, 0.2), or fmodf(123456.789, 1e-45) after the scaling) the estimate
    is infinite and the result nan, unlike C's fmod."""
    x, y = np.broadcast_arrays(x, y)
    t = x.dtype.type
    double = t is np.float64
    with np.errstate(all="ignore"):
        n, d = np.abs(x), np.abs(y)
        tiny = d < np.finfo(x.dtype).tiny
        scale = t(2.0 ** (54 if double else 25))
        n, d = np.where(tiny, n * scale, n), np.where(tiny, d * scale, d)
        rd = _toward0(t(1) / d)
        r = (n, np.zeros_like(n))
        for _ in range(21 if double else 8):
            q = np.trunc(_toward0(r[0]) * rd)
            if double:                                   # (the double one clears the estimate's last bit)
                q = (q.view(np.int64) & np.int64(-2)).view(t)
            within = r[0] >= d
            q = np.where((t(3) * d > r[0]) & within, t(2), q)
            q = np.where((d + d > r[0]) & within, t(1), q)
            step = q * -d
            r = _normalize(_add2_f2f2(r, (step, _fmapn(q, -d, step))))
            if not np.count_nonzero(~(r[0] < d)):
                break
        whole = r[0] + r[1]
        ret = (r[0] if double else whole) * np.where(tiny, t(1) / scale, t(1))
        ret = np.where(whole == d, t(0), ret)
        ret = _mulsign(ret, x)
        ret = np.where(n < d, x, ret)
        return np.where(d == 0, t(np.nan), ret).astype(x.dtype)


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


def pow_scalar(a, exponent, threads):
    """ATen's ``pow(Tensor, Scalar)`` loop on a float32 or float64 array for an exponent it does not
    special-case: SLEEF's powf / powd on the vector loop's runs, ``std::pow(x, double)`` (the double
    function, rounded to float32 for a float32 x) on their tails and on a strided inner loop."""
    exp64 = float(exponent)
    if a.dtype == np.float64:
        from .vectorized_double import powd
        vector = lambda x: powd(x, exp64)                  # noqa: E731
    else:
        exp32 = _F(exp64)
        vector = lambda x: powf_u10(x, exp32)              # noqa: E731

    def scalar(x):
        with np.errstate(all="ignore"):
            return np.power(x.astype(np.float64), exp64).astype(a.dtype)
    return vectorized(a, vector, scalar, threads)
