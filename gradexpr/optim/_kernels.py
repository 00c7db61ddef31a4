"""PyTorch's CPU kernels of the in-place ops the optimisers use, rounded as they round: ``add`` with
``alpha`` and ``addcmul`` are fused multiply-adds, ``lerp`` is PyTorch's two-sided formula, ``addcdiv``
is ``self + value * t1 / t2`` in that order. Arrays in, arrays out, in the parameter's dtype."""
from __future__ import annotations

import numpy as np

from ..ops.common import _lerp, fma


def add(a, b, alpha=1):
    """``a.add(b, alpha=alpha)``."""
    return fma(b, a.dtype.type(alpha), a).astype(a.dtype, copy=False)


def addcmul(a, t1, t2, value=1):
    """``a.addcmul(t1, t2, value=value)``."""
    return fma(a.dtype.type(value) * t1, t2, a).astype(a.dtype, copy=False)


def addcdiv(a, t1, t2, value=1):
    """``a.addcdiv(t1, t2, value=value)``."""
    return a + (a.dtype.type(value) * t1) / t2


def lerp(a, b, weight):
    return _lerp(a, b, weight)


def state_tensor(array, like):
    """A state buffer (``exp_avg`` …): a tensor of the parameter's dtype over ``array``."""
    from ..tensor import Tensor
    return Tensor._make(np.ascontiguousarray(array, like._data.dtype), like._dtype)
