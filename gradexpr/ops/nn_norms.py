"""native_group_norm, the one normalisation PyTorch adds natively beyond batch and layer norm
(``ops/nn_layers.py``); instance norm is batch norm over a reshaped input, RMS norm and local
response norm are composites (``nn/functional_norms.py``).

A late family (``registry.LATE_FAMILIES``): loaded with ``torch.nn``, not at start-up.
"""
from __future__ import annotations

import numpy as np

from ..exact import fma
from .common import _kernel
from .registry import op


def _group_norm(x, weight=None, bias=None, N=1, C=1, HxW=1, group=1, eps=1e-5):
    """GroupNormKernelImpl on a contiguous input: RowwiseMoments per (sample, group), rstd in double,
    then (x - mean)·rstd, or with an affine part scale·x + bias, scale = rstd·gamma[c],
    bias = beta[c] - scale·mean (the compiler fuses both multiply-adds)."""
    from ..rowwise_moments import rowwise_moments
    t = x.dtype.type
    rows = np.ascontiguousarray(x).reshape(N * group, -1)
    if rows.shape[1] == 0 or x.dtype not in (np.float32, np.float64):
        wide = rows.astype(np.float64)
        mean, var = wide.mean(1), wide.var(1)
    else:
        mean, var = rowwise_moments(rows)
    rstd = (1.0 / np.sqrt(np.maximum(var, 0).astype(np.float64) + eps)).astype(x.dtype)
    mean = mean.astype(x.dtype)
    if weight is None and bias is None:
        out = (rows - mean[:, None]) * rstd[:, None]
        return out.reshape(x.shape).astype(x.dtype)
    d = C // group
    gamma = np.ones(C, x.dtype) if weight is None else weight.astype(x.dtype)
    beta = np.zeros(C, x.dtype) if bias is None else bias.astype(x.dtype)
    per_channel = x.reshape(N, group, d, -1)
    scale = rstd.reshape(N, group, 1) * gamma.reshape(1, group, d)
    shift = fma(-scale, mean.reshape(N, group, 1), beta.reshape(1, group, d)).astype(x.dtype)
    out = fma(scale[..., None], per_channel, shift[..., None])
    return np.asarray(out, x.dtype).reshape(x.shape)


def _normalized(input, N, group, eps):
    """x̂ per (sample, group) with Tensor ops (differentiable again), and rstd."""
    rows = input.reshape(N, group, -1)
    mean = rows.mean(2, keepdim=True)
    centred = rows - mean
    rstd = ((centred * centred).mean(2, keepdim=True) + eps).rsqrt()
    return (centred * rstd).reshape(input.shape), rstd


def _channel_view(t, input):
    return t.reshape([1, -1] + [1] * (input.dim() - 2))


def _group_norm_input_grad(grad, input, weight=None, N=1, C=1, HxW=1, group=1, eps=1e-5):
    xhat, rstd = _normalized(input, N, group, eps)
    g = grad * _channel_view(weight, input) if weight is not None else grad
    g_rows, xhat_rows = g.reshape(N, group, -1), xhat.reshape(N, group, -1)
    out = rstd * (g_rows - g_rows.mean(2, keepdim=True) - xhat_rows * (g_rows * xhat_rows).mean(2, keepdim=True))
    return out.reshape(input.shape)


def _sum_but_channels(t):
    return t.sum([d for d in range(t.dim()) if d != 1])


native_group_norm = op(
    "native_group_norm", "NativeGroupNormBackward0", _group_norm, ("input", "weight", "bias"),
    input=_group_norm_input_grad,
    weight=lambda grad, input, N=1, C=1, HxW=1, group=1, eps=1e-5:
    _sum_but_channels(grad * _normalized(input, N, group, eps)[0]),
    bias=lambda grad: _sum_but_channels(grad),
    dtype=_kernel("GroupNormKernelImpl", "first", "biu"), broadcast=False, domain="real", forward_ad="transpose")
native_group_norm_nobias = op(
    "native_group_norm_nobias", "NativeGroupNormBackward0", _group_norm, ("input",),
    input=_group_norm_input_grad, dtype=native_group_norm.dtype, broadcast=False, domain="real",
    forward_ad="transpose")
