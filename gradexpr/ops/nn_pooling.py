"""Pooling ops (max, average, adaptive max and adaptive average over 2 or 3 spatial dims), one
kernel per kind for any number of spatial dims: PyTorch reduces its 1-d pooling to the 2-d ops
(``nn/functional_pooling.py``), so the 1-d forms need no entry of their own.

Every kernel takes ``(*lead, *spatial)``: ATen's CPU kernels accept the unbatched ``(C, *spatial)``
as they accept ``(N, C, *spatial)``, and so the node sees the input the program gave."""
from __future__ import annotations

import numpy as np

from . import backward_ops as _bw
from .common import _F, _apply
from .registry import op


def _output_sizes(sizes, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's pooling_output_shape per spatial dim."""
    outs = []
    for size, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        num = size + 2 * p - d * (k - 1) - 1 + ((s - 1) if ceil_mode else 0)
        o = num // s + 1
        if ceil_mode and (o - 1) * s >= size + p:
            o -= 1
        outs.append(o)
    return outs


def _pool_windows(x, kernel, stride, padding, dilation, ceil_mode, fill):
    """(*lead, *out, *kernel) windows over ``x`` padded with ``fill`` (extra cells at the end for
    ceil_mode), and the output sizes."""
    from numpy.lib.stride_tricks import sliding_window_view
    nd = len(kernel)
    outs = _output_sizes(x.shape[-nd:], kernel, stride, padding, dilation, ceil_mode)
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    extra = [max(0, (o - 1) * s + span - (n + 2 * p))
             for o, s, span, n, p in zip(outs, stride, spans, x.shape[-nd:], padding)]
    lead = x.ndim - nd
    xp = np.pad(x, [(0, 0)] * lead + [(p, p + e) for p, e in zip(padding, extra)], constant_values=fill)
    w = sliding_window_view(xp, spans, axis=tuple(range(lead, x.ndim)))
    w = w[(Ellipsis,) + tuple(slice(None, None, s) for s in stride) + tuple(slice(None, None, d) for d in dilation)]
    return w[(Ellipsis,) + tuple(slice(0, o) for o in outs) + (slice(None),) * nd], outs


def _flat_index(coords, sizes):
    """Row-major index over the spatial dims of the given per-dim coordinates."""
    index = np.zeros_like(coords[0])
    for c, n in zip(coords, sizes):
        index = index * n + c
    return index.astype(np.int64)


def _window_max(win, nd, nan):
    """(max, its flat kernel offset) over the last ``nd`` axes: the first maximum, a NaN winning, as
    PyTorch's pooling kernels keep it (``nan``: whether the input holds one); cell after cell, so no
    copy of the windows is made."""
    kernel = win.shape[-nd:]
    best = pick = better = None
    for k, offset in enumerate(np.ndindex(*kernel)):
        cell = win[(Ellipsis,) + offset]
        if best is None:
            best, pick = cell.copy(), np.zeros(cell.shape, np.int32)
            better = np.empty(cell.shape, bool)
            continue
        np.greater(cell, best, out=better)
        if nan:
            better |= np.isnan(cell) & ~np.isnan(best)
        np.maximum(best, cell, out=best)        # (a tie keeps the value; a NaN propagates)
        np.copyto(pick, k, where=better)
    return best, pick


def _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode=False):
    stride = stride or kernel_size          # () when not given (the node keeps it so)
    nd = len(kernel_size)
    win, outs = _pool_windows(x, kernel_size, stride, padding, dilation, ceil_mode, -np.inf)
    values, pick = _window_max(win, nd, bool(np.isnan(x).any()))
    offsets = np.unravel_index(pick, kernel_size)
    coords = []
    for axis, (o, s, p, d) in enumerate(zip(outs, stride, padding, dilation)):
        shape = [1] * nd
        shape[axis] = o
        coords.append(np.arange(o).reshape(shape) * s - p + offsets[axis] * d)
    indices = _flat_index(coords, x.shape[-nd:])
    return np.ascontiguousarray(values, dtype=x.dtype), {"indices": indices}


def max_pool_grad(grad, self_shape, indices, nd):
    """The gradient of a max pooling over ``nd`` dims (plain or adaptive): each output's gradient
    added at its input index."""
    lead = len(self_shape) - nd
    flat = _F().zeros(tuple(self_shape[:lead]) + (int(np.prod(self_shape[lead:])),), dtype=grad.dtype)
    return flat.scatter_add(lead, indices.flatten(lead), grad.flatten(lead)).view(self_shape)


def max_pool_double_backward(grad, indices, nd):
    """FunctionsManual's: the gradient of the max pool's backward is grad read at the indices."""
    size = tuple(indices.shape[:indices.dim() - nd]) + (-1,)
    return grad.contiguous().view(size).gather(-1, indices.view(size)).view(tuple(indices.shape))


def _max_pool_backward_entry(name, node, nd, **keep):
    """A max pool's backward op (``max_pool2d_with_indices_backward``, ``adaptive_max_pool2d_backward``):
    edges to grad_output and self, its gradient read at the indices (the pooling parameters kept)."""
    return _bw.adjoint_entry(name, node, lambda g, x, indices, **params: max_pool_grad(g, x.shape, indices, nd),
                             lambda grad, indices: max_pool_double_backward(grad, indices, nd), with_self=True,
                             indices=True)


def _max_pool_entry(nd):
    # (the formula names what ATen's node keeps: the input, its pooling parameters, the indices as result1)
    backward = _max_pool_backward_entry(f"max_pool{nd}d_with_indices_backward",
                                        f"MaxPool{nd}DWithIndicesBackwardBackward0", nd)
    forward = op(f"max_pool{nd}d_with_indices", f"MaxPool{nd}DWithIndicesBackward0", _max_pool,
                 self=lambda grad, self, indices, kernel_size, stride, padding, dilation, ceil_mode: _apply(
                     backward, (grad, self, indices), {"kernel_size": kernel_size, "stride": stride,
                                                       "padding": padding, "dilation": dilation, "ceil_mode": ceil_mode}),
                 dtype="first", domain="distinct", forward_ad="transpose")
    return forward, backward


max_pool2d_with_indices, max_pool2d_with_indices_backward = _max_pool_entry(2)
max_pool3d_with_indices, max_pool3d_with_indices_backward = _max_pool_entry(3)


# ============================================================ average pooling
def _avg_divisors(sizes, outs, kernel, stride, padding, count_include_pad, divisor_override):
    """PyTorch's divide factor for each output position of avg_pool (an array of the output's
    spatial shape)."""
    if divisor_override:
        return np.full(outs, divisor_override)
    factor = np.ones((), dtype=np.int64)
    for size, o, k, s, p in zip(sizes, outs, kernel, stride, padding):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        part = (end - start) if count_include_pad else (np.minimum(end, size) - np.maximum(start, 0))
        factor = np.multiply.outer(factor, part)
    return factor


def _avg_pool(x, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True, divisor_override=None):
    stride = stride or kernel_size          # () when not given (the node keeps it so)
    nd = len(kernel_size)
    win, outs = _pool_windows(x, kernel_size, stride, padding, (1,) * nd, ceil_mode, 0.0)
    sums = _sequential_sum(win, nd)
    div = _avg_divisors(x.shape[-nd:], outs, kernel_size, stride, padding, count_include_pad, divisor_override)
    return np.ascontiguousarray(sums / div.astype(x.dtype), dtype=x.dtype)


def _sequential_sum(cells, nd):
    """The sum over the last ``nd`` axes taken cell after cell in row-major order, as ATen's pooling
    kernels add (NumPy's multi-axis sum may take another order, and so other float bits)."""
    flat = cells.reshape(cells.shape[:-nd] + (-1,))
    total = np.zeros(flat.shape[:-1], dtype=cells.dtype)
    for k in range(flat.shape[-1]):
        total += flat[..., k]
    return total


def _window_index(sizes, outs, kernel, stride, padding):
    """(*out, *kernel) flat input index each window cell reads; cells in the padding (or past the
    end under ceil_mode) read the extra slot ``prod(sizes)``."""
    nd = len(kernel)
    inside = np.ones((), dtype=bool)
    coords = []
    for axis, (n, o, k, s, p) in enumerate(zip(sizes, outs, kernel, stride, padding)):
        shape = [1] * (2 * nd)
        shape[axis], shape[nd + axis] = o, 1
        at = np.arange(o).reshape(shape) * s - p
        shape = [1] * (2 * nd)
        shape[nd + axis] = k
        at = at + np.arange(k).reshape(shape)
        inside = inside & (at >= 0) & (at < n)
        coords.append(np.clip(at, 0, n - 1))
    index = _flat_index(np.broadcast_arrays(*coords), sizes)
    return np.where(np.broadcast_to(inside, index.shape), index, int(np.prod(sizes)))


def _avg_pool_grad(grad, self_shape, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True,
                   divisor_override=None):
    """Each output's gradient over its divisor, added to every input cell its window reads."""
    F = _F()
    nd = len(kernel_size)
    sizes, outs = tuple(self_shape[-nd:]), tuple(grad.shape[-nd:])
    div = _avg_divisors(sizes, outs, kernel_size, stride, padding, count_include_pad, divisor_override)
    scaled = grad / F.tensor(div, dtype=grad.dtype)
    index = F.tensor(_window_index(sizes, outs, kernel_size, stride, padding).reshape(-1))
    lead = tuple(self_shape[:-nd])
    spread = scaled.reshape(lead + outs + (1,) * nd).expand(lead + outs + tuple(kernel_size)).reshape(lead + (-1,))
    total = int(np.prod(sizes))
    flat = F.zeros(lead + (total + 1,), dtype=grad.dtype).index_add(len(lead), index, spread)
    return flat.narrow(len(lead), 0, total).contiguous().reshape(tuple(self_shape))


def _avg_pool_entry(nd):
    """The average pool's entry and its backward's (``avg_pool2d_backward``: edges to grad_output and self,
    the pool of grad as grad_output's gradient)."""
    def params(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        return {"kernel_size": kernel_size, "stride": stride, "padding": padding, "ceil_mode": ceil_mode,
                "count_include_pad": count_include_pad, "divisor_override": divisor_override}

    forward = op(f"avg_pool{nd}d", f"AvgPool{nd}DBackward0", _avg_pool,
                 self=lambda grad, self, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True,
                 divisor_override=None: _apply(backward, (grad, self), params(
                     kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)),
                 dtype="first", domain="real", forward_ad="transpose")
    backward = _bw.adjoint_entry(
        f"avg_pool{nd}d_backward", f"AvgPool{nd}DBackwardBackward0",
        lambda g, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override: _avg_pool_grad(
            g, x.shape, kernel_size, stride or kernel_size, padding, ceil_mode, count_include_pad, divisor_override),
        lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override: _apply(
            forward, (grad,), params(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)),
        with_self=True)
    return forward, backward


avg_pool2d, avg_pool2d_backward = _avg_pool_entry(2)
avg_pool3d, avg_pool3d_backward = _avg_pool_entry(3)


# ============================================================ adaptive pooling
def adaptive_ranges(size, out):
    """ATen's [start, end) input range of each output position of adaptive pooling."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _adaptive_regions(x, output_size):
    """Each output position (a tuple over the spatial dims) with the slices of its input region."""
    import itertools
    nd = len(output_size)
    ranges = [adaptive_ranges(n, o) for n, o in zip(x.shape[-nd:], output_size)]
    for position in itertools.product(*(range(o) for o in output_size)):
        yield position, tuple(slice(*ranges[d][i]) for d, i in enumerate(position))


def _adaptive_avg_pool(x, output_size):
    nd = len(output_size)
    out = np.empty(x.shape[:-nd] + tuple(output_size), x.dtype)
    for position, region in _adaptive_regions(x, output_size):
        out[(Ellipsis,) + position] = _divided(_sequential_sum(x[(Ellipsis,) + region], nd), region)
    return out


def _divided(value, region):
    """``value`` divided by the region's extent one dim after the other, as ATen's adaptive kernels do."""
    for s in region:
        value = value / (s.stop - s.start)
    return value


def _adaptive_avg_grad(grad, self_shape, output_size):
    """Each output's gradient divided by its region's extents one dim after the other, then added to
    every cell of the region, output after output, as ATen's backward kernel does."""
    F = _F()
    nd = len(output_size)
    sizes, lead = tuple(self_shape[-nd:]), tuple(self_shape[:-nd])
    scaled = grad
    for axis, (n, o) in enumerate(zip(sizes, output_size)):
        shape = [1] * nd
        shape[axis] = o
        extents = np.array([b - a for a, b in adaptive_ranges(n, o)]).reshape(shape)
        scaled = scaled / F.tensor(extents, dtype=grad.dtype)
    outputs, cells = [], []
    for number, (position, region) in enumerate(_adaptive_regions(np.empty((0,) + sizes), output_size)):
        grid = np.meshgrid(*(np.arange(r.start, r.stop) for r in region), indexing="ij")
        flat = _flat_index([g.reshape(-1) for g in grid], sizes)
        outputs.append(np.full(flat.shape, number))
        cells.append(flat)
    spread = scaled.flatten(len(lead)).index_select(len(lead), F.tensor(np.concatenate(outputs)))
    total = int(np.prod(sizes))
    gathered = F.zeros(lead + (total,), dtype=grad.dtype).index_add(len(lead), F.tensor(np.concatenate(cells)), spread)
    return gathered.reshape(tuple(self_shape))


def _adaptive_max_pool(x, output_size):
    nd = len(output_size)
    sizes = x.shape[-nd:]
    values = np.empty(x.shape[:-nd] + tuple(output_size), x.dtype)
    indices = np.empty(values.shape, np.int64)
    nan = bool(np.isnan(x).any())
    for position, region in _adaptive_regions(x, output_size):
        cells = x[(Ellipsis,) + region]
        values[(Ellipsis,) + position], pick = _window_max(cells, nd, nan)
        offsets = np.unravel_index(pick, cells.shape[-nd:])
        indices[(Ellipsis,) + position] = _flat_index([s.start + o for s, o in zip(region, offsets)], sizes)
    return values, {"indices": indices}


def _adaptive_entries(nd):
    """The adaptive pools' entries and their backward ops' (grad_output's gradient: the average pool of
    grad to grad_output's size; a max pool's read at the indices)."""
    avg = op(f"adaptive_avg_pool{nd}d", f"AdaptiveAvgPool{nd}DBackward0", _adaptive_avg_pool,
             self=lambda grad, self, output_size: _apply(avg_backward, (grad, self)),
             dtype="first", domain="real", forward_ad="transpose")
    avg_backward = _bw.adjoint_entry(
        f"adaptive_avg_pool{nd}d_backward", f"AdaptiveAvgPool{nd}DBackwardBackward0",
        lambda g, x: _adaptive_avg_grad(g, x.shape, tuple(g.shape[g.dim() - nd:])),
        lambda grad, grad_output_shape: _apply(avg, (grad,), {"output_size": tuple(grad_output_shape[-nd:])}),
        with_self=True)
    mx_backward = _max_pool_backward_entry(f"adaptive_max_pool{nd}d_backward",
                                           f"AdaptiveMaxPool{nd}DBackwardBackward0", nd)
    mx = op(f"adaptive_max_pool{nd}d", f"AdaptiveMaxPool{nd}DBackward0", _adaptive_max_pool,
            self=lambda grad, self, indices, output_size: _apply(mx_backward, (grad, self, indices)),
            dtype="first", domain="distinct", forward_ad="transpose")
    return avg, avg_backward, mx, mx_backward


adaptive_avg_pool2d, adaptive_avg_pool2d_backward, adaptive_max_pool2d, adaptive_max_pool2d_backward = \
    _adaptive_entries(2)
adaptive_avg_pool3d, adaptive_avg_pool3d_backward, adaptive_max_pool3d, adaptive_max_pool3d_backward = \
    _adaptive_entries(3)


# ============================================================ max unpooling (the inverse of max pooling's indices)
def _max_unpool(x, indices, output_size):
    nd = len(output_size)
    lead = x.shape[:-nd]
    out = np.zeros(lead + (int(np.prod(output_size)),), dtype=x.dtype)
    flat_index = indices.reshape(lead + (-1,))
    if flat_index.size and (flat_index.min() < 0 or flat_index.max() >= out.shape[-1]):
        from .. import errors
        bad = flat_index[(flat_index < 0) | (flat_index >= out.shape[-1])].flat[0]
        raise errors.RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                                  f"{'x'.join(str(s) for s in output_size)}")
    np.put_along_axis(out, flat_index, x.reshape(lead + (-1,)), axis=-1)
    return out.reshape(lead + tuple(output_size))


def _unpool_grad(grad, self_shape, indices, nd):
    """Each input's gradient read back from the position its index names (ATen's max_pool_double_backward)."""
    lead = len(self_shape) - nd
    return grad.flatten(lead).gather(lead, indices.flatten(lead)).view(tuple(self_shape))


def _max_unpool_entry(nd):
    return op(f"max_unpool{nd}d", f"MaxUnpool{nd}DBackward0", _max_unpool, ("self", "indices"),
              self=lambda grad, self, indices, output_size: _unpool_grad(grad, self.shape, indices, nd),
              dtype="first", broadcast=False, domain="real", forward_ad="transpose")


max_unpool2d = _max_unpool_entry(2)
max_unpool3d = _max_unpool_entry(3)


# ============================================================ fractional max pooling (ATen's FractionalMaxPool2d/3d.cpp)
def _fractional_starts(samples, input_size, output_size, pool_size):
    """ATen's generate_intervals for every plane at once: ``int((i + u) * alpha) - int(u * alpha)`` in the
    input's dtype, alpha = (input - pool) / (output - 1), the last window ending at the input's end."""
    dt = samples.dtype.type
    seq = np.empty(samples.shape + (output_size,), np.int64)
    if output_size > 1:
        alpha = dt(input_size - pool_size) / dt(output_size - 1)
        i = np.arange(output_size - 1, dtype=samples.dtype)
        u = samples[..., None]
        seq[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    if output_size > 0:
        seq[..., -1] = input_size - pool_size
    return seq


def _fractional_max_pool(x, kernel_size, output_size, random_samples):
    """Each output the largest of its window (a NaN wins, the later one), planes (N, C) each with their
    own windows from their random samples (2-d: sample 0 for the width, 1 for the height; 3-d: T, H, W)."""
    nd = len(kernel_size)
    batched = x.ndim == nd + 2
    xb = x if batched else x[None]
    samples = random_samples.astype(x.dtype)
    order = (1, 0) if nd == 2 else (0, 1, 2)          # which sample each spatial dim (outermost first) reads
    starts = [_fractional_starts(samples[..., order[d]], xb.shape[2 + d], output_size[d], kernel_size[d])
              for d in range(nd)]
    n, c = xb.shape[:2]
    # gather every window: (N, C, *out, *kernel) positions along each dim
    index = [np.arange(n)[(slice(None),) + (None,) * (1 + 2 * nd)],
             np.arange(c)[(None, slice(None)) + (None,) * (2 * nd)]]
    for d in range(nd):
        pos = starts[d][(slice(None), slice(None)) + tuple(slice(None) if e == d else None for e in range(nd))
                        + (None,) * nd]
        k = np.arange(kernel_size[d])[(None, None) + (None,) * nd + tuple(slice(None) if e == d else None
                                                                          for e in range(nd))]
        index.append(pos + k)
    windows = xb[tuple(index)]
    flat = windows.reshape(windows.shape[:2 + nd] + (-1,))
    pick = np.argmax(flat, axis=-1)
    nan = np.isnan(flat)
    if nan.any():
        last_nan = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        pick = np.where(nan.any(axis=-1), last_nan, pick)
    values = np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]
    offsets = np.unravel_index(pick, tuple(kernel_size))
    sizes = xb.shape[2:]
    indices = np.zeros(values.shape, np.int64)
    for d in range(nd):
        start = starts[d][(slice(None), slice(None)) + tuple(slice(None) if e == d else None for e in range(nd))]
        indices = indices * sizes[d] + (start + offsets[d])
    if not batched:
        values, indices = values[0], indices[0]
    return np.ascontiguousarray(values), {"indices": np.ascontiguousarray(indices)}


def _fractional_entry(nd):
    # its gradient is ATen's fractional_max_pool{nd}d_backward, an op of its own (as the max pools')
    backward = _max_pool_backward_entry(f"fractional_max_pool{nd}d_backward",
                                        f"FractionalMaxPool{nd}DBackwardBackward0", nd)
    forward = op(f"fractional_max_pool{nd}d", f"FractionalMaxPool{nd}DBackward0", _fractional_max_pool,
                 self=lambda grad, self, indices, kernel_size, output_size: _apply(
                     backward, (grad, self, indices), {"kernel_size": kernel_size, "output_size": output_size}),
                 dtype="first", domain="distinct", forward_ad="transpose")
    return forward, backward


fractional_max_pool2d, fractional_max_pool2d_backward = _fractional_entry(2)
fractional_max_pool3d, fractional_max_pool3d_backward = _fractional_entry(3)
