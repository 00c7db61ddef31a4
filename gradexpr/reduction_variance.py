"""``var``/``std`` as PyTorch's CPU kernels compute them, so float32 and float64 results agree to the bit.

Two paths (``ReduceOps.cpp``'s ``std_var_out``):

* one output (a full reduction): the two-pass ``std_var_all_cpu`` -- the mean from ``self.mean()``
  (PyTorch's summation order, in the input's dtype), then the squared deviations summed in double,
  one running sum per 2-D block of TensorIterator's loop, the blocks' sums added in order (and the
  threads' partial sums, past ``GRAIN_SIZE`` elements, in thread order);
* several outputs: ``binary_kernel_reduce`` with ``WelfordOps`` accumulating in double, one pass
  per output over the reduced elements in TensorIterator's order (the fastest reduced dim
  innermost). Here the pass runs once over the reduced length with NumPy across all outputs.

Either way the variance is divided (and square-rooted for ``std``) in double and rounded once to
the dtype, so a float32 ``std`` of 3e38-sized values is finite, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from . import reduction_order as order


def _deviation_sum(x: np.ndarray, mean: float) -> float:
    """std_var_all_cpu's sum of (x - mean)² in double over TensorIterator's blocks."""
    dims = order._iteration_dims(x, set(range(x.ndim)))
    if not dims:
        d = float(x.reshape(())) - mean
        return d * d
    view = order._iteration_view(x, dims)
    count = x.size
    if count >= order._GRAIN and order.threads() > 1 and len(dims) == 1:
        # parallel_reduce: contiguous ranges, one per thread, their sums added in thread order
        tasks = min(order.threads(), -(-count // order._GRAIN))
        chunk = -(-count // tasks)
        total = 0.0
        for t in range(tasks):
            d = view[t * chunk:(t + 1) * chunk].astype(np.float64) - mean
            total += float(np.cumsum(d * d)[-1]) if d.size else 0.0
        return total
    if len(dims) == 1:
        view = view[None]
    block = view.reshape(-1, view.shape[-2] * view.shape[-1])      # one 2-D loop per row
    d = block.astype(np.float64) - mean
    local = np.cumsum(d * d, axis=1)[:, -1]                         # each block's running sum
    return float(np.cumsum(local)[-1])


def _welford_m2(x: np.ndarray, reduced: tuple) -> np.ndarray:
    """WelfordOps' m2 per output (kept dims in order, flattened), elements in TensorIterator's order."""
    dims = order._iteration_dims(x, set(reduced))
    fastest_first = [ax for d in dims if d[1] == 0 for ax in d[3]]
    kept = [ax for ax in range(x.ndim) if ax not in reduced]
    singles = [ax for ax in reduced if ax not in fastest_first]
    lines = np.transpose(x, kept + singles + fastest_first[::-1])
    lines = lines.reshape(int(np.prod([x.shape[ax] for ax in kept], dtype=np.int64)), -1)
    mean = np.zeros(lines.shape[0])
    m2 = np.zeros(lines.shape[0])
    for k in range(lines.shape[1]):
        value = lines[:, k].astype(np.float64)
        delta = value - mean
        mean = mean + delta / (k + 1)
        m2 = m2 + delta * (value - mean)
    return m2


def torch_var(x: np.ndarray, dims: tuple, correction, keepdim: bool, take_sqrt: bool = False):
    """``x.var(dims, correction=, keepdim=)`` (``std`` with ``take_sqrt``) for float32/float64 ``x``
    with at least one element; ``dims`` wrapped, ``()`` for none."""
    reduced = tuple(sorted(set(dims))) if dims else tuple(range(x.ndim))
    count = 1
    for ax in reduced:
        count *= x.shape[ax]
    divisor = max(0.0, count - correction)
    with np.errstate(all="ignore"):
        if x.size == count:                 # one output: the two-pass all-reduce
            mean = float(order.torch_mean(x))
            var = np.asarray(np.float64(_deviation_sum(x, mean)) / np.float64(divisor))
        else:
            var = _welford_m2(x, reduced) / np.float64(divisor)
        if keepdim:
            var = var.reshape(tuple(1 if ax in reduced else s for ax, s in enumerate(x.shape)))
        else:
            var = var.reshape(tuple(s for ax, s in enumerate(x.shape) if ax not in reduced))
        if take_sqrt:
            var = np.sqrt(var)
        return np.asarray(var).astype(x.dtype)
