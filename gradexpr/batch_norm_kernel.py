"""PyTorch's CPU batch-norm kernels (aten/src/ATen/native/cpu/batch_norm_kernel.cpp and
Normalization.cpp), step by step in NumPy, so that outputs, running statistics and gradients
agree with PyTorch's to the last bit in float32 and float64.

What decides the bits (checked against PyTorch 2.13, AVX2, at::get_num_threads() threads):

* Layout: a contiguous input whose channel stride is 1 (2-D input, or one element per
  channel and sample) takes the *channels-last* kernels, any other the *contiguous* ones.
* Statistics, contiguous: per channel a sequential sum in double (the accumulation type of
  float), ``mean = float(sum / N)``, then a sequential double sum of the float squares
  ``(x - mean) * (x - mean)`` (fused into the sum for float64, where the types agree).
* Statistics, channels-last with more rows than threads: each thread sums its chunk of rows
  into a buffer of the input's dtype (the squares fused: ``fma(d, d, acc)``), and the
  threads' buffers are summed in double.
* ``invstd = 1 / sqrt(double(var_sum / N) + eps)`` in double, stored in the input's dtype;
  the running mean in the parameter dtype (``m * mean + (1 - m) * running``), the running
  variance with ``m * unbiased`` in double.
* Output: ``x * alpha + beta`` fused, ``alpha = invstd * w``, ``beta = fma(-mean, alpha, b)``.
* Backward: the sums of ``dy`` and ``(x - mean) * dy`` by the same two layouts (the
  contiguous one through ``vec::reduce_all``'s eight (four) lanes and its shuffle tree),
  then ``dx = (dy - sum / N - (x - mean) * k) * invstd * w`` with
  ``k = dotp * invstd * invstd / N``.
"""
from __future__ import annotations

import numpy as np

from .exact import fma
from .reduction_order import threads

_LANES = {4: 8, 8: 4}                    # AVX2 vector width by itemsize (float32, float64)


def channels_last(shape) -> bool:
    """Whether PyTorch's kernels treat a contiguous input of ``shape`` as channels-last."""
    return len(shape) == 2 or int(np.prod(shape[2:])) == 1


def _chunks(n: int):
    """The row ranges at::parallel_for(0, n, 1) gives each thread."""
    t = max(1, min(threads(), n))
    size = -(-n // t)
    return [(b, min(n, b + size)) for b in range(0, n, size)]


def _sequential(rows: np.ndarray, dtype=np.float64, fused_squares=False) -> np.ndarray:
    """The in-order sum of ``rows`` (M, C) down axis 0 in ``dtype`` (a C loop's ``acc += v``);
    ``fused_squares``: rows are differences whose squares are fused into the sum."""
    acc = np.zeros(rows.shape[1:], dtype)
    if fused_squares:
        for r in rows:
            acc = fma(r, r, acc)
        return acc
    if len(rows) == 0:
        return acc
    return np.add.accumulate(rows.astype(dtype, copy=False), axis=0)[-1]


def _thread_buffers(rows, fn):
    """Channels-last two-pass reduction: each thread's chunk summed in the rows' dtype by
    ``fn(chunk)``, the per-thread buffers summed in double (threads with no rows add zero)."""
    parts = [fn(rows[b:e]) for b, e in _chunks(len(rows))]
    return _sequential(np.array(parts))


def _rows(x: np.ndarray) -> np.ndarray:
    """A channels-last input as (N, C) rows."""
    return x.reshape(x.shape[0], x.shape[1])


def _planes(x: np.ndarray) -> np.ndarray:
    """A contiguous input as (C, N * L): each channel's elements in memory order."""
    n, c = x.shape[:2]
    return np.ascontiguousarray(np.moveaxis(x.reshape(n, c, -1), 1, 0)).reshape(c, -1)


def collect_stats(x: np.ndarray):
    """(mean, var_sum) per channel, in the input's dtype, as batch_norm_cpu_collect_stats."""
    dt = x.dtype
    n = x.size // x.shape[1]
    if channels_last(x.shape):
        rows = _rows(x)
        if n > threads():
            total = _thread_buffers(rows, lambda r: _sequential(r, dt))
            mean = (total / n).astype(dt)
            var_sum = _thread_buffers(rows, lambda r: _sequential(r - mean, dt, fused_squares=True))
        else:
            mean = (_sequential(rows) / n).astype(dt)
            d = rows - mean
            var_sum = _sequential(d, fused_squares=True) if dt == np.float64 else _sequential(d * d)
        return mean, var_sum.astype(dt)
    planes = _planes(x)
    mean = (_sequential(planes.T) / n).astype(dt)
    d = (planes - mean[:, None]).T
    var_sum = _sequential(d * d)
    return mean, var_sum.astype(dt)


def _channel_shape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def forward(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """``native_batch_norm``: (output, save_mean, save_invstd); the running statistics (arrays
    or None) are updated in place in training mode."""
    x = np.ascontiguousarray(x)
    dt = x.dtype
    f = dt.type
    n = x.size // x.shape[1]
    if training:
        mean, var_sum = collect_stats(x)
        var = (var_sum / f(n)).astype(dt)
        with np.errstate(divide="ignore"):
            invstd = (1.0 / np.sqrt(var.astype(np.float64) + eps)).astype(dt)
        if eps == 0:
            invstd = np.where(var == 0, f(0), invstd)
        m = f(momentum)
        keep = f(1) - m
        if running_mean is not None:
            running_mean[...] = (m * mean + keep * running_mean).astype(running_mean.dtype)
        if running_var is not None:
            unbiased = (var_sum / f(n - 1)).astype(np.float64) if n > 1 else np.full(var_sum.shape, np.inf)
            running_var[...] = (np.float64(m) * unbiased + (keep * running_var).astype(np.float64)).astype(
                running_var.dtype)
        alpha_invstd = invstd
    else:
        mean = running_mean.astype(dt)
        alpha_invstd = (f(1) / np.sqrt(running_var.astype(dt) + f(eps))).astype(dt)
        invstd = (1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt)   # what backward uses
    alpha = alpha_invstd * weight.astype(dt) if weight is not None else alpha_invstd
    beta = fma(-mean, alpha, bias.astype(dt)) if bias is not None else (-mean * alpha).astype(dt)
    shape = _channel_shape(x)
    out = fma(x, alpha.reshape(shape), beta.reshape(shape)).astype(dt)
    return out, mean.astype(dt), invstd


def _lane_reduce(acc: np.ndarray) -> np.ndarray:
    """vec_reduce_all's shuffle tree over the last axis (8 float or 4 double lanes)."""
    while acc.shape[-1] > 1:
        half = acc.shape[-1] // 2
        acc = acc[..., :half] + acc[..., half:]
    return acc[..., 0]


def _reduce_all(v: np.ndarray) -> np.ndarray:
    """vec::reduce_all(+) of each row of ``v`` (..., L) in its dtype, as AVX2 computes it."""
    lanes = _LANES[v.dtype.itemsize]
    size = v.shape[-1]
    if size < lanes:
        return _sequential(np.moveaxis(v, -1, 0), v.dtype) if size else np.zeros(v.shape[:-1], v.dtype)
    full = size - size % lanes
    blocks = v[..., :full].reshape(v.shape[:-1] + (full // lanes, lanes))
    acc = _sequential(np.moveaxis(blocks, -2, 0), v.dtype)
    tail = size - full
    if tail:
        acc = acc.copy()
        acc[..., :tail] = acc[..., :tail] + v[..., full:]
    if lanes == 8:
        # permute the 128-bit halves, then swap 64-bit pairs, then neighbours
        acc = acc + acc[..., [4, 5, 6, 7, 0, 1, 2, 3]]
        acc = acc + acc[..., [2, 3, 0, 1, 6, 7, 4, 5]]
        acc = acc + acc[..., [1, 0, 3, 2, 5, 4, 7, 6]]
        return acc[..., 0]
    return ((acc[..., 0] + acc[..., 1]) + acc[..., 2]) + acc[..., 3]


def _map2_reduce_all(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """vec::map2_reduce_all of ``a * b`` with ``+``: the products fused into the lane sums."""
    lanes = _LANES[a.dtype.itemsize]
    size = a.shape[-1]
    if size < lanes:
        return _reduce_all(a * b)
    full = size - size % lanes
    acc = a[..., :lanes] * b[..., :lanes]
    for start in range(lanes, full, lanes):
        acc = acc + a[..., start:start + lanes] * b[..., start:start + lanes]
    tail = size - full
    if tail:
        acc = acc.copy()
        acc[..., :tail] = fma(a[..., full:], b[..., full:], acc[..., :tail])
    return _reduce_all(acc)


def _grad_sums(dy, x, mean):
    """(sum of dy, sum of (x - mean) * dy) per channel, in the input's dtype."""
    dt = x.dtype
    if channels_last(x.shape):
        rows_x, rows_dy = _rows(x), _rows(dy)

        def dotp(chunk):
            acc = np.zeros(x.shape[1], dt)
            for xr, dr in chunk:
                acc = fma(xr - mean, dr, acc)
            return acc
        sums = _thread_buffers(rows_dy, lambda r: _sequential(r, dt))
        pairs = list(zip(rows_x, rows_dy))
        parts = [dotp(pairs[b:e]) for b, e in _chunks(len(pairs))]
        return sums.astype(dt), _sequential(np.array(parts)).astype(dt), False
    n, c = x.shape[:2]
    xs, dys = x.reshape(n, c, -1), dy.reshape(n, c, -1)
    total = _sequential(_reduce_all(dys))                 # per sample into the double sum
    dot = _sequential(_map2_reduce_all(xs - mean.reshape(1, c, 1), dys))
    return total, dot, True


def backward(dy, x, weight, mean, invstd, training, eps, running_var=None):
    """``native_batch_norm_backward``: (grad_input, grad_weight, grad_bias) in the input's dtype."""
    x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    dt = x.dtype
    f = dt.type
    n = x.size // x.shape[1]
    if not training:
        invstd = (1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt)
    total, dot, wide = _grad_sums(dy, x, mean)
    w = weight.astype(dt) if weight is not None else np.ones(x.shape[1], dt)
    shape = _channel_shape(x)
    if training:
        k = (dot.astype(dt) * invstd * invstd / f(n)).astype(dt)
        grad_mean = (total / n).astype(dt) if wide else (total / f(n)).astype(dt)
        centred = x - mean.reshape(shape)
        fused = fma(-centred, k.reshape(shape), dy - grad_mean.reshape(shape))
        if not wide:        # channels-last: the vector loop fuses, the partial last vector does not
            vectors = x.shape[1] - x.shape[1] % _LANES[dt.itemsize]
            plain = dy - grad_mean.reshape(shape) - centred * k.reshape(shape)
            fused[:, vectors:] = plain[:, vectors:]
        dx = fused * invstd.reshape(shape) * w.reshape(shape)
    else:
        dx = dy * invstd.reshape(shape) * w.reshape(shape)
    grad_weight = (dot * invstd).astype(dt) if wide else (dot.astype(dt) * invstd).astype(dt)
    return dx.astype(dt), grad_weight, np.asarray(total).astype(dt)
