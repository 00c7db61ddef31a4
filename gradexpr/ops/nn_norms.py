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


# ============================================================ _weight_norm_interface (nn.utils.weight_norm, dim 0 or last)
def _weight_norm_rows(v, dim):
    """``v`` as the rows the CPU kernel normalises: (size of dim, rest) for dim 0, (rest, last)ᵀ else."""
    if dim == 0:
        return v.reshape(v.shape[0], -1)
    return v.reshape(-1, v.shape[-1]).T


def _slice_sums(a, b, dim=0):
    """Σ a·b of each row: along memory through vec::map2_reduce_all's lanes for dim 0 (as batch norm's
    kernels), in row order for the last dim (the kernel accumulates a buffer row after row)."""
    from ..batch_norm_kernel import _map2_reduce_all, _sequential
    if dim == 0:
        return _map2_reduce_all(a, b)
    return _sequential((a * b).T, a.dtype)


def _norm_shape(v, dim):
    return tuple(n if k == dim else 1 for k, n in enumerate(v.shape))


def _weight_norm_interface(v, g, dim):
    """ATen's weight_norm kernel: per slice ``norm = sqrt(Σ v²)`` (vec::map_reduce_all's lanes and
    shuffle tree, as batch norm's kernels), ``w = v * (g / norm)``; the norms are kept for backward."""
    rows = np.ascontiguousarray(_weight_norm_rows(v, dim))
    norms = np.sqrt(_slice_sums(rows, rows, dim))
    a = (g.reshape(-1) / norms).astype(v.dtype)
    w = rows * a[:, None]
    w = w.reshape(v.shape) if dim == 0 else np.ascontiguousarray(w.T).reshape(v.shape)
    return w, {"norms": norms.reshape(_norm_shape(v, dim)).astype(v.dtype)}


def _weight_norm_grads(which):
    def formula(grad, v, g, norms, dim):
        from ..graph import is_grad_enabled
        if not is_grad_enabled():            # ATen's fused _weight_norm_interface_backward
            return _fused_weight_norm_backward(grad, v, g, norms, dim)[which]
        # _weight_norm_differentiable_backward
        if dim == 0:
            sums = (grad * v).view(v.shape[0], -1).sum(1).view(_norm_shape(v._data, dim))
        else:
            sums = (grad * v).view(-1, v.shape[-1]).sum(0).view(_norm_shape(v._data, dim))
        if which == 0:
            return (g / norms) * (grad - v * (sums / (norms * norms)))
        return sums / norms
    return formula


def _fused_weight_norm_backward(grad, v, g, norms, dim):
    from ..tensor import Tensor
    gw = np.ascontiguousarray(_weight_norm_rows(grad._data, dim))
    vv = np.ascontiguousarray(_weight_norm_rows(v._data, dim))
    n = norms._data.reshape(-1)
    sums = _slice_sums(gw, vv, dim)
    grad_g = (sums / n).astype(v._data.dtype)
    a = (g._data.reshape(-1) / n).astype(v._data.dtype)
    b = (a * grad_g / n).astype(v._data.dtype)
    grad_v = a[:, None] * gw - b[:, None] * vv
    grad_v = grad_v.reshape(v.shape) if dim == 0 else np.ascontiguousarray(grad_v.T).reshape(v.shape)
    return Tensor._make(grad_v), Tensor._make(grad_g.reshape(g.shape))


# (twice=False: PyTorch's differentiable backward reads the saved norms as constants, so its second
# derivative is not the true one -- its own gradgradcheck fails; gradexpr gives the same numbers)
weight_norm_interface = op("weight_norm_interface", "WeightNormInterfaceBackward0", _weight_norm_interface,
                           ("v", "g"), v=_weight_norm_grads(0), g=_weight_norm_grads(1), dtype="first",
                           domain="real", broadcast=False, twice=False)
