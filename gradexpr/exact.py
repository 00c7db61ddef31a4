"""Correctly rounded fused multiply-add and error-free sums, elementwise over NumPy arrays.

PyTorch's CPU kernels are compiled with FMA contraction (``add`` with ``alpha``, ``lerp``,
``addcmul``, the optimisers' updates, the random distributions' ``x * std + mean``), so a
result agrees with PyTorch to the last bit only if ``a * b + c`` is rounded once.  NumPy
has no fma, so it is built here from error-free transformations, once for the whole
engine:

* ``two_sum(a, b)`` -> ``(s, e)`` with ``s = fl(a + b)`` and ``a + b == s + e`` exactly (Knuth).
* ``fma32`` -- float32: ``a * b`` is exact in float64, the sum is rounded to float64 and
  then to float32.  That double rounding is wrong only when the float64 sum lands exactly
  halfway between two float32 values; those rare elements are nudged toward the exact
  value first.  (Computing ``a * b + c`` in float64 without that check is 1 ulp off in
  rare cases: ``torch.add(1 + 2**-23, 2**-12 * (1 - 2**-18), alpha=2**-12 * (1 + 2**-18))``
  is ``1.0000001192092896`` in PyTorch, not ``1.000000238418579``.)
* ``fma64`` -- float64: Dekker's exact product, Knuth's exact sum and a sum rounded to odd
  (Boldo-Melquiond), which makes the final rounding a single correct one.
* ``fma(a, b, c)`` picks by the operands' result dtype; float16 is computed as PyTorch's
  CPU kernels compute it, in float32 and rounded once more to float16.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .special_math import c_function

__all__ = ["two_sum", "fma", "fma32", "fma64"]

_SPLIT = 134217729.0                    # 2**27 + 1: Veltkamp's splitting constant for float64
_LOW29 = np.uint64(0x1FFFFFFF)          # float64 mantissa bits below a float32 mantissa
_HALF29 = np.uint64(0x10000000)         # ... when the float64 is exactly halfway


def two_sum(a, b):
    """``(s, e)``: ``s`` the rounded sum, ``e`` its exact rounding error (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(x):
    """Veltkamp's split of float64 ``x`` into two 26-bit halves, ``x == hi + lo`` exactly."""
    t = _SPLIT * x
    hi = t - (t - x)
    return hi, x - hi


def _as_f64(v):
    """A float64 view of float32 operands (exact); scalars become Python floats."""
    if isinstance(v, np.ndarray):
        return v if v.dtype == np.float64 else v.astype(np.float64)
    if isinstance(v, np.generic):
        return float(v)
    return v if isinstance(v, float) else float(v)


def fma32(a, b, c, check: bool = True, out=None) -> np.ndarray:
    """``a * b + c`` rounded once to float32 (vfmadd*ps), elementwise.

    Operands are float32 values (float32 arrays, float64 arrays holding float32 values, or
    scalars).  ``check`` may be turned off by callers that know the float64 sum is exact.
    ``out``: a float32 array of the result's shape to write to (an optimiser's buffer).
    The float64 passes cast their float32 operands as they read them (no converted copies).
    """
    s = np.multiply(a, b, dtype=np.float64)            # exact: float32 operands
    if type(s) is not np.ndarray:
        s = np.asarray(s)
    c_shape = c.shape if type(c) is np.ndarray else np.shape(c)
    if c_shape == s.shape or not c_shape or s.shape == np.broadcast_shapes(s.shape, c_shape):
        np.add(s, c, out=s)             # in place: the random distributions call this on big arrays
    else:
        s = np.add(s, c, dtype=np.float64)
    if check and s.size:
        mid = np.bitwise_and(s.view(np.uint64), _LOW29)
        if np.count_nonzero(mid == _HALF29):       # (cheaper than .any()'s Python layer on small arrays)
            if s.size <= _WHOLE_REPAIR:
                return _repaired_whole(a, b, c, s, mid == _HALF29, out)
            if not s.flags.c_contiguous:
                s = s.copy()                # (so that the flat view below writes into s)
            flat = s.reshape(-1)
            idx = np.flatnonzero(mid.reshape(-1) == _HALF29)

            def pick(v):
                v = _as_f64(v)
                if not isinstance(v, np.ndarray):
                    return v
                return np.broadcast_to(v, s.shape).reshape(-1)[idx]

            with np.errstate(invalid="ignore", over="ignore"):
                sm, err = two_sum(pick(a) * pick(b), pick(c))
            # an inexact tie is nudged toward the exact value, so float32 rounding sees its side
            flat[idx] = np.where(err > 0, np.nextafter(sm, np.inf),
                                 np.where(err < 0, np.nextafter(sm, -np.inf), sm))
    if out is None:
        return s.astype(np.float32)
    np.copyto(out, s, casting="same_kind")
    return out


_WHOLE_REPAIR = 4096     # up to this many elements fma32 repairs ties with passes over the whole arrays


def _repaired_whole(a, b, c, s, tie, out):
    """fma32's float64 sum ``s`` with its ``tie`` elements (halfway between two float32 values) nudged
    toward the exact value, computed over whole arrays: on small arrays a few passes cost less than
    gathering the ties (and the ties are often exact ones, the sum of few-bit values: nothing to nudge)."""
    with np.errstate(invalid="ignore", over="ignore"):
        product = np.multiply(a, b, dtype=np.float64)
        bb = s - product
        err = (product - (s - bb)) + (c - bb)          # two_sum's error: a * b + c == s + err exactly
        nudge = tie & (err != 0)
        if np.count_nonzero(nudge):
            s = np.where(nudge, np.nextafter(s, np.copysign(np.inf, err)), s)
    if out is None:
        return s.astype(np.float32)
    np.copyto(out, s, casting="same_kind")
    return out


def _round_odd_sum(x, y):
    """``x + y`` rounded to odd (Boldo-Melquiond), elementwise float64."""
    r, err = two_sum(x, y)
    even = (r.view(np.uint64) & np.uint64(1)) == np.uint64(0)
    fix = (err != 0) & even
    if fix.any():
        r = np.where(fix, np.nextafter(r, np.where(err > 0, np.inf, -np.inf)), r)
    return r


_SPLIT_MAX = 2.0 ** 995                  # above it Veltkamp's split (x * (2**27 + 1)) overflows
_SHIFT = 2.0 ** 64


def _unsplittable_scaled(a, b):
    """(a, b) with the same exact product but no operand too large to split: a factor above 2**995 is
    scaled down by 2**64 and the other up (exact: with a finite product, the other is below 2**29)."""
    # (one pass each and a reduction, the common case; fmax passes over a nan, as the masks below do)
    if np.fmax.reduce(np.abs(a), axis=None, initial=0) <= _SPLIT_MAX and \
            np.fmax.reduce(np.abs(b), axis=None, initial=0) <= _SPLIT_MAX:
        return a, b
    big_a, big_b = np.abs(a) > _SPLIT_MAX, np.abs(b) > _SPLIT_MAX
    scale = np.where(big_a, 1 / _SHIFT, np.where(big_b, _SHIFT, 1.0))
    return a * scale, b / scale


_FEW = 24                       # up to this many elements the C library's fma, one by one, is faster
_TINY = 2.0 ** -900             # below it a product's low half or the sum's error can be subnormal


_C_FMA = []                     # [the C library's fma] once looked up


def _c_fma(a, b, c, shape):
    """The C library's ``fma`` (correctly rounded, subnormals included) of each element of float64 arrays
    broadcast to ``shape`` (only where their shapes differ; a scalar is repeated): ~1 µs an element
    against ~35 µs for the passes of Dekker's product on any size."""
    if not _C_FMA:
        _C_FMA.append(c_function("fma", np.float64))
    n = math.prod(shape)
    columns = [itertools.repeat(v.item(), n) if v.size == 1 else
               (v if v.shape == shape else np.broadcast_to(v, shape)).ravel().tolist() for v in (a, b, c)]
    return np.array(list(map(_C_FMA[0], *columns)), np.float64).reshape(shape)


def _broadcast_shape(a, b, c):
    """``np.broadcast_shapes`` of three arrays' shapes, without its cost where they agree or are scalars
    (the pair arithmetic's usual operands: arrays of one shape and constants)."""
    sa, sb, sc = a.shape, b.shape, c.shape
    if sa == sb == sc:
        return sa
    shape = sa or sb or sc
    if (not sa or sa == shape) and (not sb or sb == shape) and (not sc or sc == shape):
        return shape
    return np.broadcast_shapes(sa, sb, sc)


def fma64(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once in float64 (std::fma / vfmadd*sd), elementwise."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    shape = _broadcast_shape(a, b, c)
    if math.prod(shape) <= _FEW:
        if not shape:
            if not _C_FMA:
                _C_FMA.append(c_function("fma", np.float64))
            return np.asarray(_C_FMA[0](a.item(), b.item(), c.item()), np.float64)
        return _c_fma(a, b, c, shape)
    a, b, c = np.broadcast_arrays(a, b, c)
    with np.errstate(invalid="ignore", over="ignore"):
        sa, sb = _unsplittable_scaled(a, b)
        ph = sa * sb
        ah, al = _split(sa)
        bh, bl = _split(sb)
        pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl          # a * b == ph + pl exactly
        th, tl = two_sum(c, ph)
        z = np.asarray(th + _round_odd_sum(np.asarray(tl), np.asarray(pl)))
        if _ordinary(ph, c, z):
            return z
        # an exact zero product, or non-finite values: the plain formula is exact or right; a zero
        # addend: the product rounded once (with its sign where it underflows to zero)
        zero_product = (a == 0) | (b == 0)
        plain = zero_product | ~np.isfinite(ph) | ~np.isfinite(c) | ~np.isfinite(z)
        if plain.any():
            z = np.where(plain, ph + c, z)
        z = np.where((c == 0) & ~zero_product, ph, z)
        # where Dekker's halves or the sum's error fall below the normal range they lose bits (a product
        # that underflowed to zero included), and a product that overflows may be brought back by the
        # addend: those elements (rare) go to the C library's fma, with the operands as given
        hard = ((np.abs(ph) < _TINY) & ~zero_product) | ((np.abs(z) < _TINY) & (z != 0)) | \
            (np.isinf(ph) & np.isfinite(a) & np.isfinite(b))
        if hard.any():
            z = np.array(z, copy=True)
            z[hard] = _c_fma(a[hard], b[hard], c[hard], (int(np.count_nonzero(hard)),))
    return z


def _ordinary(ph, c, z) -> bool:
    """Whether no element of fma64's rounded product ``ph``, addend ``c`` and result ``z`` needs a corner's
    treatment (zero, non-finite, or below 2**-900 where Dekker's halves lose bits): a few reductions
    instead of the corners' masks (a nan fails every comparison, so it takes the masks' way)."""
    product, result, addend = np.abs(ph), np.abs(z), np.abs(c)
    return bool(np.minimum(product, result).min(initial=np.inf) >= _TINY
                and np.maximum(product, result).max(initial=0.0) < np.inf
                and addend.min(initial=np.inf) > 0 and addend.max(initial=0.0) < np.inf)


def fma(a, b, c):
    """``a * b + c`` rounded once in the operands' result dtype, as PyTorch's CPU kernels do."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    dt = np.result_type(a, b, c)
    if dt.kind != "f":
        return a * b + c
    if dt == np.float64:
        return fma64(a, b, c)
    with np.errstate(invalid="ignore", over="ignore"):
        r = fma32(a, b, c)              # (float16 operands are exact in its float64 passes too)
    return r if dt == np.float32 else r.astype(dt)
