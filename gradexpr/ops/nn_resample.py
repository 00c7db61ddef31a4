"""Resampling ops: pixel (un)shuffle, channel shuffle, and the upsamplings F.interpolate reaches
(nearest, nearest-exact, linear over 1, 2 or 3 dims), with PyTorch's node names.

The upsamplings compute their source indices and weights in the input's float type as ATen's
UpSample.h does (``area_pixel_compute_source_index``, ``nearest_idx``), add the corners in its
order (the first dim outermost), and scatter gradients output after output, so float32 bits match."""
from __future__ import annotations

import itertools

import numpy as np

from . import backward_ops as _bw
from .common import _F, _apply
from .registry import op


# ============================================================ pixel shuffle, pixel unshuffle, channel shuffle
def _pixel_shuffle(x, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = x.shape
    out = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    out = out.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(out.reshape(*lead, c // (r * r), h * r, w * r))


def _pixel_unshuffle(x, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = x.shape
    out = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    out = out.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(out.reshape(*lead, c * r * r, h // r, w // r))


pixel_shuffle = op("pixel_shuffle", "PixelShuffleBackward0", _pixel_shuffle,
                   self=lambda grad, upscale_factor: _apply(pixel_unshuffle, (grad,),
                                                            {"downscale_factor": upscale_factor}),
                   dtype="first", domain="real", forward_ad="transpose")
pixel_unshuffle = op("pixel_unshuffle", "PixelUnshuffleBackward0", _pixel_unshuffle,
                     self=lambda grad, downscale_factor: _apply(pixel_shuffle, (grad,),
                                                                {"upscale_factor": downscale_factor}),
                     dtype="first", domain="real", forward_ad="transpose")


def _channel_shuffle(x, groups):
    n, c = x.shape[:2]
    out = x.reshape((n, groups, c // groups) + x.shape[2:]).swapaxes(1, 2)
    return np.ascontiguousarray(out.reshape(x.shape))


channel_shuffle = op("channel_shuffle", "ChannelShuffleBackward0", _channel_shuffle,
                     self=lambda grad, groups: _apply(channel_shuffle, (grad,), {"groups": grad.shape[1] // groups}),
                     dtype="first", domain="real", forward_ad="transpose")


# ============================================================ upsampling: indices and weights per dim
def _scale(dtype, input_size, output_size, scale, align_corners=False):
    """ATen's area_pixel_compute_scale in the input's float type."""
    t = dtype.type
    if align_corners:
        return t(input_size - 1) / t(output_size - 1) if output_size > 1 else t(0)
    if scale is not None and scale > 0:
        return t(1.0 / scale)
    return t(input_size) / t(output_size)


def _nearest_source(dtype, input_size, output_size, scale, exact):
    """The input index each output reads (nearest_idx / nearest_neighbor_exact_compute_source_index)."""
    dst = np.arange(output_size)
    if not exact and output_size == input_size:
        return dst
    if not exact and output_size == 2 * input_size:
        return dst >> 1
    s = _scale(np.dtype(np.float32), input_size, output_size, scale)      # (ATen computes it in float)
    at = (dst.astype(np.float32) + np.float32(0.5)) * s if exact else dst.astype(np.float32) * s
    return np.minimum(np.floor(at).astype(np.int64), input_size - 1)


def _linear_source(dtype, input_size, output_size, scale, align_corners):
    """(index0, index1, lambda0, lambda1) per output: compute_indices_weights_linear's values."""
    t = dtype.type
    s = _scale(dtype, input_size, output_size, scale, align_corners)
    dst = np.arange(output_size).astype(dtype)
    if align_corners:
        real = s * dst
    else:
        real = np.maximum(s * (dst + t(0.5)) - t(0.5), t(0))
    i0 = real.astype(np.int64)
    lambda1 = np.clip(real - i0.astype(dtype), t(0), t(1)).astype(dtype)
    lambda0 = (t(1) - lambda1).astype(dtype)
    i1 = i0 + (i0 < input_size - 1)
    return i0, i1, lambda0, lambda1


def _flat_positions(per_axis, sizes):
    """Row-major flat input index over the spatial dims, from each axis' index vector, of shape out."""
    nd = len(per_axis)
    index = np.zeros((1,) * nd, dtype=np.int64)
    for axis, (idx, n) in enumerate(zip(per_axis, sizes)):
        shape = [1] * nd
        shape[axis] = len(idx)
        index = index * n + idx.reshape(shape)
    return index


def _scatter(grad, self_shape, flat_index, weights=None):
    """The input's gradient: each output's gradient (times its weight per corner) added at its
    input positions, output after output (corners innermost), as ATen's backward kernels add."""
    F = _F()
    nd = flat_index.ndim - (0 if weights is None else 1)
    lead = tuple(self_shape[:-nd])
    contributions = grad.flatten(len(lead))
    if weights is not None:
        contributions = (contributions.unsqueeze(-1) * F.tensor(weights.reshape(-1, weights.shape[-1]),
                                                                 dtype=grad.dtype)).flatten(len(lead))
    total = int(np.prod(self_shape[len(lead):]))
    flat = F.zeros(lead + (total,), dtype=grad.dtype)
    return flat.index_add(len(lead), F.tensor(flat_index.reshape(-1)), contributions).view(tuple(self_shape))


# ============================================================ nearest and nearest-exact
def _nearest_indices(dtype, sizes, output_size, scales, exact):
    return [_nearest_source(dtype, n, o, s, exact) for n, o, s in zip(sizes, output_size, scales)]


def _upsample_nearest(x, output_size, scales, exact=False):
    nd = len(output_size)
    out = x
    for axis, idx in enumerate(_nearest_indices(x.dtype, x.shape[-nd:], output_size, scales, exact)):
        out = np.take(out, idx, axis=x.ndim - nd + axis)
    return np.ascontiguousarray(out)


def _nearest_grad(grad, self_shape, output_size, scales, exact):
    nd = len(output_size)
    sizes = tuple(self_shape[-nd:])
    index = _flat_positions(_nearest_indices(np.dtype(np.float32), sizes, output_size, scales, exact), sizes)
    return _scatter(grad, self_shape, index)


def _nearest_entry(nd, exact):
    """The upsampling entry and its backward's (``upsample_nearest2d_backward``: a node of its own under
    create_graph, whose gradient is the upsampling of grad)."""
    kind = "NearestExact" if exact else "Nearest"
    name = f"_upsample_nearest_exact{nd}d" if exact else f"upsample_nearest{nd}d"
    forward = op(name, f"Upsample{kind}{nd}DBackward0",
                 lambda self, output_size, scales: _upsample_nearest(self, output_size, scales, exact),
                 self=lambda grad, self, output_size, scales: _apply(backward, (grad,), {
                     "output_size": output_size, "input_size": tuple(self.shape), "scales": scales}),
                 dtype="first", domain="real", forward_ad="transpose")
    backward = _bw.adjoint_entry(
        name + "_backward", f"Upsample{kind}{nd}DBackwardBackward0",
        lambda g, output_size, input_size, scales: _nearest_grad(g, input_size, output_size, scales, exact),
        lambda grad, output_size, scales: _apply(forward, (grad,), {"output_size": output_size, "scales": scales}))
    return forward, backward


(upsample_nearest1d, upsample_nearest1d_backward), (upsample_nearest2d, upsample_nearest2d_backward), \
    (upsample_nearest3d, upsample_nearest3d_backward) = (_nearest_entry(nd, False) for nd in (1, 2, 3))
(upsample_nearest_exact1d, upsample_nearest_exact1d_backward), \
    (upsample_nearest_exact2d, upsample_nearest_exact2d_backward), \
    (upsample_nearest_exact3d, upsample_nearest_exact3d_backward) = (_nearest_entry(nd, True) for nd in (1, 2, 3))


# ============================================================ linear, bilinear, trilinear
def _linear_axes(dtype, sizes, output_size, scales, align_corners):
    return [_linear_source(dtype, n, o, s, align_corners) for n, o, s in zip(sizes, output_size, scales)]


def _upsample_linear(x, output_size, align_corners, scales):
    """Nested over the dims, first outermost: sum_j (inner at index_j) * lambda_j, as ATen's
    Interpolate<n> evaluates."""
    nd = len(output_size)
    axes = _linear_axes(x.dtype, x.shape[-nd:], output_size, scales, align_corners)
    lead = x.ndim - nd

    def interpolate(values, axis):
        i0, i1, l0, l1 = axes[axis]
        shape = [1] * nd
        shape[axis] = len(i0)
        dim = lead + axis
        if axis == nd - 1:
            return np.take(values, i0, axis=dim) * l0.reshape(shape) + np.take(values, i1, axis=dim) * l1.reshape(shape)
        return (interpolate(np.take(values, i0, axis=dim), axis + 1) * l0.reshape(shape)
                + interpolate(np.take(values, i1, axis=dim), axis + 1) * l1.reshape(shape))

    return np.ascontiguousarray(interpolate(x, 0), dtype=x.dtype)


def _linear_grad(grad, self_shape, output_size, align_corners, scales):
    """Each output's gradient times the product of its corner's lambdas (first dim first), added at
    the corner, corners in the order (0…0), (0…1), …, (1…1)."""
    nd = len(output_size)
    sizes = tuple(self_shape[-nd:])
    dtype = np.dtype(grad.dtype.name)
    axes = _linear_axes(dtype, sizes, output_size, scales, align_corners)
    indices, weights = [], []
    for corner in itertools.product((0, 1), repeat=nd):
        indices.append(_flat_positions([axes[a][corner[a]] for a in range(nd)], sizes))
        weight = np.ones((1,) * nd, dtype=dtype)
        for a in range(nd):
            shape = [1] * nd
            shape[a] = len(axes[a][0])
            weight = (weight * axes[a][2 + corner[a]].reshape(shape)).astype(dtype)
        weights.append(np.broadcast_to(weight, tuple(output_size)))
    return _scatter(grad, self_shape, np.stack(indices, -1), np.stack(weights, -1))


def _linear_entry(nd, name, node):
    """The upsampling entry and its backward's (as ``_nearest_entry``)."""
    forward = op(name, node, _upsample_linear,
                 self=lambda grad, self, output_size, align_corners, scales: _apply(backward, (grad,), {
                     "output_size": output_size, "input_size": tuple(self.shape), "align_corners": align_corners,
                     "scales": scales}),
                 dtype="first", domain="real", forward_ad="transpose")
    backward = _bw.adjoint_entry(
        name + "_backward", node.replace("Backward0", "BackwardBackward0"),
        lambda g, output_size, input_size, align_corners, scales:
        _linear_grad(g, input_size, output_size, align_corners, scales),
        lambda grad, output_size, align_corners, scales: _apply(forward, (grad,), {
            "output_size": output_size, "align_corners": align_corners, "scales": scales}))
    return forward, backward


upsample_linear1d, upsample_linear1d_backward = _linear_entry(1, "upsample_linear1d", "UpsampleLinear1DBackward0")
upsample_bilinear2d, upsample_bilinear2d_backward = _linear_entry(2, "upsample_bilinear2d",
                                                                  "UpsampleBilinear2DBackward0")
upsample_trilinear3d, upsample_trilinear3d_backward = _linear_entry(3, "upsample_trilinear3d",
                                                                    "UpsampleTrilinear3DBackward0")


# ============================================================ im2col / col2im (F.unfold, F.fold)
def _im2col(x, kernel_size, dilation, padding, stride):
    """(N, C, H, W) -> (N, C*kh*kw, L): each sliding block as a column, channels outermost, as ATen's
    im2col (a 3-d input has no batch dim)."""
    from numpy.lib.stride_tricks import sliding_window_view
    batched = x.ndim == 4
    if not batched:
        x = x[None]
    n, c = x.shape[:2]
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    span = [d * (k - 1) + 1 for d, k in zip(dilation, kernel_size)]
    win = sliding_window_view(x, span, axis=(2, 3))
    win = win[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]       # N, C, oh, ow, kh, kw
    oh, ow = win.shape[2:4]
    out = np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kernel_size[0] * kernel_size[1],
                                                                        oh * ow)
    return out if batched else out[0]


def blocks(size, kernel_size, dilation, padding, stride):
    """The number of sliding blocks along each spatial dim (ATen's div_rtn: floor division)."""
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, d, p, st in zip(size, kernel_size, dilation, padding, stride))


def _col2im(x, output_size, kernel_size, dilation, padding, stride):
    """(N, C*kh*kw, L) -> (N, C, H, W): the columns added back into their blocks, offset after offset
    from zero, as ATen's col2im adds them (a 2-d input has no batch dim)."""
    batched = x.ndim == 3
    if not batched:
        x = x[None]
    kh, kw = kernel_size
    n = x.shape[0]
    c = x.shape[1] // (kh * kw)
    bh, bw = blocks(output_size, kernel_size, dilation, padding, stride)
    cols = x.reshape(n, c, kh, kw, bh, bw)
    padded = np.zeros((n, c, output_size[0] + 2 * padding[0], output_size[1] + 2 * padding[1]), x.dtype)
    for i in range(kh):
        for j in range(kw):
            padded[:, :, i * dilation[0]:i * dilation[0] + stride[0] * (bh - 1) + 1:stride[0],
                   j * dilation[1]:j * dilation[1] + stride[1] * (bw - 1) + 1:stride[1]] += cols[:, :, i, j]
    out = np.ascontiguousarray(padded[:, :, padding[0]:padding[0] + output_size[0],
                                      padding[1]:padding[1] + output_size[1]])
    return out if batched else out[0]


im2col = op("im2col", "Im2ColBackward0", _im2col,
            self=lambda grad, self_shape, kernel_size, dilation, padding, stride: _apply(
                col2im, (grad,), {"output_size": tuple(self_shape[-2:]), "kernel_size": kernel_size,
                                  "dilation": dilation, "padding": padding, "stride": stride}),
            dtype="first", domain="real", forward_ad="linear")
col2im = op("col2im", "Col2ImBackward0", _col2im,
            self=lambda grad, kernel_size, dilation, padding, stride: _apply(
                im2col, (grad,), {"kernel_size": kernel_size, "dilation": dilation, "padding": padding,
                                  "stride": stride}),
            dtype="first", domain="real", forward_ad="linear")
