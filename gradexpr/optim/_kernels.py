"""PyTorch's CPU kernels of the in-place ops the optimisers use, rounded as they round: ``add`` with
``alpha`` and ``addcmul`` are fused multiply-adds, ``lerp`` is PyTorch's two-sided formula, ``addcdiv``
is ``self + value * t1 / t2`` in that order. Arrays in, arrays out (or
written to ``out=``, a buffer updated in place), in the parameter's dtype."""
from __future__ import annotations

import numpy as np

from ..exact import fma32, fma64
from ..ops.common import _lerp, fma


def _fused(x, y, z, dtype, out=None):
    """``x * y + z`` rounded once, straight to the float32/float64 kernel when the parameter is one
    (the optimisers' arrays already share a shape and dtype: no broadcasting or casting pass)."""
    if dtype == np.float32:
        return fma32(x, y, z, out=out)
    return _into(fma64(x, y, z) if dtype == np.float64 else fma(x, y, z).astype(dtype, copy=False), out)


def _into(result, out):
    """``result``, written to ``out`` when given: a buffer updated in place, as PyTorch's ``op_`` does."""
    if out is None:
        return result
    np.copyto(out, result, casting="same_kind")
    return out


def add(a, b, alpha=1, out=None):
    """``a.add(b, alpha=alpha)``."""
    return _fused(b, a.dtype.type(alpha), a, a.dtype, out)


def addcmul(a, t1, t2, value=1, out=None):
    """``a.addcmul(t1, t2, value=value)``."""
    return _fused(a.dtype.type(value) * t1, t2, a, a.dtype, out)


def addcdiv(a, t1, t2, value=1, out=None):
    """``a.addcdiv(t1, t2, value=value)``."""
    return np.add(a, (a.dtype.type(value) * t1) / t2, out=out)


def lerp(a, b, weight, out=None):
    """``a.lerp(b, weight)`` for a number ``weight``: the branch of PyTorch's formula chosen once."""
    if not isinstance(weight, (int, float)) or a.dtype not in (np.float32, np.float64):
        return _into(_lerp(a, b, weight), out)
    w = a.dtype.type(weight)
    if abs(w) < 0.5:
        return _fused(w, b - a, a, a.dtype, out)
    return _fused(w - a.dtype.type(1), b - a, b, a.dtype, out)


def state_tensor(array, like):
    """A state buffer (``exp_avg`` …): a tensor of the parameter's dtype over ``array``."""
    from ..tensor import Tensor
    return Tensor._make(np.asarray(array, like._data.dtype, order="C"), like._dtype)
