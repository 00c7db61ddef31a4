"""softmax and log_softmax (and their backward kernels) in the order PyTorch's CPU kernels compute them.

``aten/src/ATen/native/cpu/SoftMaxKernel.cpp`` has two shapes of kernel, chosen by ``dim``:

* the last dim (``*_lastdim``): each row is reduced with ``vec::reduce_all`` /
  ``map_reduce_all``: one accumulator vector of ``VECTOR_BYTES`` (8 float32 / 4 float64 lanes)
  over the row in order, a short last chunk added into the first lanes, then the lanes folded
  (float32: halves, quarters, neighbours; float64 and rows shorter than a vector: one after
  another). softmax then multiplies by the reciprocal of the sum: ``e * (1 / s)``.
* any other dim: a vertical pass, each column summed down ``dim`` in order, and softmax
  divides: ``e / s``.

float16 is computed in float32 and rounded once at the end, as the kernels do for reduced
floating types; their last-dim sum adds full 8-lane vectors, folds the lanes, then adds the
remaining elements one by one.

The exponentials of float32 are SLEEF's, as the kernels' vector map computes every element of a row
(sleef.py: bit for bit), and so are the logarithms of log_softmax's row sums. Down another dim the
kernels run whole vectors of columns through SLEEF's exp and the columns left over through the scalar
``std::exp`` (the C library's): ``_exp_down`` says which columns are which. Every kernel reads its
operands as contiguous tensors (``input.contiguous()``): a transposed input is laid out afresh first.
"""
from __future__ import annotations

import numpy as np

from .exact import fma, fma32
from .sleef import _vector_positions, exp as sleef_exp, libm, vector_function
from .reduction_order import _in_order as in_order, _to_front, threads
from .tie_order import VECTOR_BYTES


def _exp(d):
    """PyTorch's exp in these kernels: SLEEF's (``Vectorized<T>::exp``) on every element."""
    if d.dtype == np.float32 or d.dtype == np.float64:
        return sleef_exp(d)
    return np.exp(d)


def _exp_down(shifted, dim, kernel, lanes=None, positions=False):
    """exp of a contiguous float32/float64 ``shifted`` as a kernel down ``dim`` (not the last) computes it:
    the columns (positions past ``dim``) that its vector loop takes through SLEEF's exp, the others
    through ``std::exp``. ``kernel`` names the loop: ``"softmax"`` walks the (outer, inner) positions
    split between the threads, a vector of columns wherever one fits before the end of a row or of a
    thread's chunk; ``"log_softmax"`` (and its backward) cuts each row into chunks of whole vectors,
    so only the row's last ``inner % lanes`` columns are scalar. ``lanes``: a vector's elements (a
    float16 kernel's vectors hold 16 halves, computed in float32); ``positions``: also return which
    elements the vector loop computed."""
    if shifted.dtype != np.float32 and shifted.dtype != np.float64:
        return _exp(shifted)
    axis = dim % shifted.ndim
    size = shifted.shape[axis]
    inner = int(np.prod(shifted.shape[axis + 1:], dtype=np.int64))
    outer = shifted.size // max(size * inner, 1)
    lanes = lanes or VECTOR_BYTES // shifted.itemsize
    if kernel == "softmax":
        # (measured: the positions are split between the threads however few they are)
        vector = _vector_positions(outer * inner, inner, lanes, threads(), 1)
        vector = vector.reshape(outer, 1, inner)
    else:
        vector = (np.arange(inner) < inner - inner % lanes).reshape(1, 1, inner)
    e = sleef_exp(shifted)
    tail = np.broadcast_to(~vector, (outer, size, inner)).reshape(shifted.shape)
    if not vector.all():
        e[tail] = libm("exp", shifted[tail])
    return (e, ~tail) if positions else e


def _log(d):
    """PyTorch's log of the row sums in these kernels: SLEEF's (a vector map over the sums)."""
    log = vector_function("log", d.dtype)
    return np.log(d) if log is None else log(d)


def _work_dtype(dtype):
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _fold_lanes(acc):
    """vec_reduce_all(+) over the last axis of ``acc`` (its lanes)."""
    lanes = acc.shape[-1]
    if lanes == 8:
        v = acc[..., :4] + acc[..., 4:]             # halves swapped and added
        v = v[..., :2] + v[..., 2:]                 # then quarters
        return v[..., 0] + v[..., 1]                # then neighbours
    total = acc[..., 0]
    for lane in range(1, lanes):
        total = total + acc[..., lane]
    return total


def row_sum(rows, reduced_type: bool = False):
    """The sum of each row (last axis) as ``vec::reduce_all`` adds it; with ``reduced_type``, as
    the float16 kernels do (full vectors, folded, then the rest one by one)."""
    n = rows.shape[-1]
    lanes = VECTOR_BYTES // rows.dtype.itemsize
    if n < lanes and not reduced_type:
        return in_order(rows, -1)
    full = n - n % lanes
    if full == lanes and not reduced_type:
        acc = rows[..., :lanes].copy()                       # one vector: it is the accumulator
    else:
        chunks = _to_front(rows[..., :full].reshape(rows.shape[:-1] + (full // lanes, lanes)), -2)
        if reduced_type:
            total = _fold_lanes(in_order(chunks)) if full else np.zeros(rows.shape[:-1], rows.dtype)
            for k in range(full, n):
                total = total + rows[..., k]
            return total
        acc = in_order(chunks)
    if n > full:
        acc[..., :n - full] = acc[..., :n - full] + rows[..., full:]
    return _fold_lanes(acc)


def half_row_sum(rows):
    """The float sum of each row of float16 values (held in float32) as ``reduce_all`` over a
    reduced type adds it: each 16-element vector splits into two 8-lane accumulators, a short
    last chunk fills the first lanes, the two are added and the lanes folded."""
    n = rows.shape[-1]
    if n <= 8:
        return in_order(rows, -1)
    if n < 16:
        acc = rows[..., :8].copy()
        acc[..., :n - 8] = acc[..., :n - 8] + rows[..., 8:]
        return in_order(acc, -1)
    full = n - n % 16
    chunks = _to_front(rows[..., :full].reshape(rows.shape[:-1] + (full // 16, 2, 8)), -3)
    acc = in_order(chunks)
    low, high = acc[..., 0, :], acc[..., 1, :]
    tail = n - full
    if tail > 8:
        low = low + rows[..., full:full + 8]
        high[..., :tail - 8] = high[..., :tail - 8] + rows[..., full + 8:]
    elif tail:
        low[..., :tail] = low[..., :tail] + rows[..., full:]
    return _fold_lanes(low + high)


def dim_sum(a, dim, reduced_type: bool = False):
    """The sum over ``dim`` (kept as 1) as the softmax kernels add it: a row sum along the last
    dim, else each column down ``dim`` in order."""
    if dim % a.ndim == a.ndim - 1:
        return row_sum(a, reduced_type)[..., None]
    return np.expand_dims(in_order(a, dim % a.ndim), dim % a.ndim)


def softmax(a, dim):
    if a.ndim == 0:
        return softmax(a.reshape(1), 0).reshape(())
    work = _work_dtype(a.dtype)
    x = np.ascontiguousarray(a.astype(work, copy=False))
    last = dim % a.ndim == a.ndim - 1
    with np.errstate(all="ignore"):
        m = np.maximum.reduce(x, axis=dim, keepdims=True) if x.size else 0    # (ndarray.max's own call)
        if last:
            e = _exp(x - m)
            out = e * (work.type(1) / dim_sum(e, dim, a.dtype == np.float16))
        elif a.dtype == np.float16:
            # vectors of 16 halves, split between the threads as float32's of 8; the scalar loop (std::exp)
            # stores each exponential as float16 before dividing, the vector loop divides its float32 one
            e, vector = _exp_down(x - m, dim, "softmax", lanes=VECTOR_BYTES // 2, positions=True)
            total = dim_sum(e, dim)
            out = np.where(vector, e / total, e.astype(np.float16).astype(np.float32) / total)
        else:
            e = _exp_down(x - m, dim, "softmax")
            out = e / dim_sum(e, dim)
    return out.astype(a.dtype, copy=False)


def log_softmax(a, dim):
    if a.ndim == 0:
        return log_softmax(a.reshape(1), 0).reshape(())
    x = np.ascontiguousarray(a.astype(_work_dtype(a.dtype), copy=False))
    last = dim % a.ndim == a.ndim - 1
    with np.errstate(all="ignore"):
        m = np.maximum.reduce(x, axis=dim, keepdims=True) if x.size else 0    # (ndarray.max's own call)
        shifted = x - m
        if not last and a.dtype != np.float16:
            log_sum = _log(dim_sum(_exp_down(shifted, dim, "log_softmax"), dim))
        elif a.dtype == np.float16 and last:
            # the row's sum and its log are held in float16 arrays between the passes
            s = half_row_sum(_exp(shifted)).astype(np.float16).astype(np.float32)
            log_sum = _log(s).astype(np.float16).astype(np.float32)[..., None]
        else:
            log_sum = _log(dim_sum(_exp(shifted), dim))
        out = shifted - log_sum
    return out.astype(a.dtype, copy=False)


def softmax_backward(g, y, dim):
    """``_softmax_backward_data``: ``(g - sum(g·y)) · y``. Along the last dim the products are
    rounded, then summed as a row (``map2_reduce_all``); down another dim the compiler fuses
    ``sum += g * y`` into a multiply-add (the recorded results agree only so)."""
    if g.ndim == 0:
        return softmax_backward(g.reshape(1), y.reshape(1), 0).reshape(())
    with np.errstate(all="ignore"):
        if dim % g.ndim == g.ndim - 1:
            total = row_sum(g * y)[..., None]
        else:
            axis = dim % g.ndim
            total = np.zeros_like(np.take(g, 0, axis))
            for k in range(g.shape[axis]):
                total = fma(np.take(g, k, axis), np.take(y, k, axis), total)
            total = np.expand_dims(total, axis)
        return (g - total) * y


def log_softmax_backward(g, y, dim):
    """``_log_softmax_backward_data``: ``g - exp(y) · sum(g)``, fused: ``fma(-exp(y), sum, g)``."""
    if g.ndim == 0:
        return log_softmax_backward(g.reshape(1), y.reshape(1), 0).reshape(())
    with np.errstate(all="ignore"):
        if dim % g.ndim == g.ndim - 1:
            e = _exp(y)
        else:                           # the vertical kernel: its scalar columns fused alike, std::exp's
            g, y = np.ascontiguousarray(g), np.ascontiguousarray(y)
            e = _exp_down(y, dim, "log_softmax") if g.dtype == y.dtype else _exp(y)
        if g.dtype == np.float32 and y.dtype == np.float32:
            return fma32(-e, dim_sum(g, dim), g)          # (what fma picks for them, without its checks)
        return fma(-e, dim_sum(g, dim), g)
