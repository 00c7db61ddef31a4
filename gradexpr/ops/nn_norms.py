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


def _group_moments(x, N, group, eps):
    """GroupNormKernelImpl's statistics of a contiguous input, per (sample, group): RowwiseMoments' mean
    and rstd = 1 / sqrt(var + eps) in double, both in the input's dtype (the op's outputs 1 and 2)."""
    from ..rowwise_moments import rowwise_moments
    rows = np.ascontiguousarray(x).reshape(N * group, -1)
    if rows.shape[1] == 0 or x.dtype not in (np.float32, np.float64):
        wide = rows.astype(np.float64)
        mean, var = wide.mean(1), wide.var(1)
    else:
        mean, var = rowwise_moments(rows)
    rstd = (1.0 / np.sqrt(np.maximum(var, 0).astype(np.float64) + eps)).astype(x.dtype)
    return mean.astype(x.dtype), rstd


def _group_norm(x, weight=None, bias=None, N=1, C=1, HxW=1, group=1, eps=1e-5):
    """GroupNormKernelImpl on a contiguous input: (x - mean)·rstd, or with an affine part
    scale·x + bias, scale = rstd·gamma[c], bias = beta[c] - scale·mean (the compiler fuses both
    multiply-adds)."""
    mean, rstd = _group_moments(x, N, group, eps)
    rows = np.ascontiguousarray(x).reshape(N * group, -1)
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


# native_group_norm's other outputs (mean and rstd per sample and group): computed by entries of their
# own, then one NativeGroupNormBackward0 node for the three (op.share_node, nn/functional_norms.py),
# whose formula reads them as outputs of the node, as ATen's does
def _group_rstd_tangent(self_t, self, result, N=1, group=1):
    """d(1/sqrt(var + eps)) = -rstd³ · mean((x - mean) · dx) per group."""
    rows = self.reshape(N, group, -1)
    centred = rows - rows.mean(-1, keepdim=True)
    return -(result * result * result) * (centred * self_t.reshape(N, group, -1)).mean(-1)


native_group_norm_mean = op("native_group_norm_mean", "", lambda x, N=1, C=1, HxW=1, group=1, eps=1e-5:
                            _group_moments(x, N, group, eps)[0].reshape(N, group), domain="real", batch="loop",
                            forward_ad=lambda self_t, N=1, group=1: self_t.reshape(N, group, -1).mean(-1))
native_group_norm_rstd = op("native_group_norm_rstd", "", lambda x, N=1, C=1, HxW=1, group=1, eps=1e-5:
                            _group_moments(x, N, group, eps)[1].reshape(N, group), domain="real", batch="loop",
                            forward_ad=_group_rstd_tangent)


def _group_norm_grads(grad, input, result1, result2, weight=None, N=1, C=1, HxW=1, group=1, eps=1e-5,
                      output_mask=(True, True, True)):
    """derivatives.yaml's native_group_norm: under create_graph, or when the mean or rstd got a gradient,
    FunctionsManual's infinitely_differentiable_native_group_norm_backward; else (ATen's fused kernel)
    the formulas above."""
    from ..graph import is_grad_enabled
    dY, dmean, drstd = grad
    mask = tuple(output_mask) + (False,) * (3 - len(output_mask))
    if not is_grad_enabled() and dmean is None and drstd is None:
        params = dict(N=N, C=C, HxW=HxW, group=group, eps=eps)
        return (_group_norm_input_grad(dY, input, weight, **params) if mask[0] else None,
                _sum_but_channels(dY * _normalized(input, N, group, eps)[0]) if mask[1] else None,
                _sum_but_channels(dY) if mask[2] else None)
    return _group_norm_backward_graph(dY, dmean, drstd, input, result1, result2, weight, N, C, HxW, group, eps,
                                      mask)


def _group_norm_backward_graph(dY, dmean, drstd, X, mean, rstd, gamma, N, C, HxW, group, eps, mask):
    """FunctionsManual's infinitely_differentiable_native_group_norm_backward, op for op (its numbers are
    C++ Scalars: the Scalar overloads)."""
    from .backward_ops import _smul
    from .reductions import _mean_grad, _var_grad
    G, D = group, C // group
    s = 1.0 / (D * HxW)
    X_t = X.reshape(N, G, D, HxW)
    mean_t, rstd_t = mean.reshape(N, G, 1, 1), rstd.reshape(N, G, 1, 1)
    dX = dgamma = dbeta = None
    if dY is not None:
        dY_t = dY.reshape(N, G, D, HxW)
        ds = (dY_t * X_t).sum(3).unsqueeze_(-1)
        db = dY_t.sum(3).unsqueeze_(-1)
    if mask[0]:
        gamma_t = gamma.reshape(1, G, D, 1) if gamma is not None else None
        rstd_cube = rstd_t * rstd_t * rstd_t
        moments = None
        if dmean is not None and drstd is not None:
            dvar = _smul(rstd_cube, -0.5) * drstd.view(N, G, 1, 1)
            moments = _var_grad(dvar, X_t, (2, 3), 0, True) + _mean_grad(dmean.view(N, G, 1, 1), X_t.shape, (2, 3),
                                                                         True)
        if dY is not None:
            a = rstd_t * gamma_t if gamma_t is not None else rstd_t
            b = ((ds * gamma_t).sum(2) if gamma_t is not None else ds.sum(2)).unsqueeze_(-2)
            c = ((db * gamma_t).sum(2) if gamma_t is not None else db.sum(2)).unsqueeze_(-2)
            b = _smul((c * mean_t - b) * rstd_cube, s)
            c = -b * mean_t - _smul(c * rstd_t, s)
            dX = a * dY_t + b * X_t + c
            if moments is not None:
                dX = dX + moments
            dX = dX.reshape(X.shape)
        elif moments is not None:
            dX = moments.reshape(X.shape)
    if mask[1] and dY is not None and gamma is not None:
        dgamma = ((ds - db * mean_t) * rstd_t).sum(0).reshape(gamma.shape)
    if mask[2] and dY is not None and gamma is not None:
        dbeta = db.sum(0).reshape(gamma.shape)
    return dX, dgamma, dbeta


native_group_norm_outputs = op(
    "native_group_norm_outputs", "NativeGroupNormBackward0", None, ("input", "weight", "bias"),
    outputs=("", "result1", "result2"), **dict.fromkeys(("input", "weight", "bias"), _group_norm_grads),
    broadcast=False, domain="real")
native_group_norm_nobias_outputs = op(
    "native_group_norm_nobias_outputs", "NativeGroupNormBackward0", None, ("input",),
    outputs=("", "result1", "result2"), input=lambda grad, input, result1, result2, weight=None, N=1, C=1, HxW=1,
    group=1, eps=1e-5: _group_norm_grads(grad, input, result1, result2, weight, N, C, HxW, group, eps, (True,))[0],
    broadcast=False, domain="real")


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
