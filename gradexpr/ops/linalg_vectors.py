"""Operations on the vectors along a dim or the rows of matrices: cross products (torch.cross,
linalg.cross) and the distances between rows (torch.cdist's _cdist_forward and _euclidean_dist)."""
from __future__ import annotations

import math

import numpy as np

from .. import errors, exact
from ..tensor import _wrap_dim
from .registry import NotDifferentiable, batch_rules, op
from .common import _apply


# ============================================================ cross products
def _cross(a, b, dim):
    """ATen's cross kernel: component i is a_j * b_k - a_k * b_j ((i, j, k) cyclic) for broadcast a and b,
    the first product fused into the subtraction (its CPU kernels are compiled with FMA contraction)."""
    a, b = np.broadcast_arrays(a, b)
    a, b = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    parts = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        if a.dtype.kind == "f":
            parts.append(exact.fma(a[..., j], b[..., k], -(a[..., k] * b[..., j])))
        else:
            parts.append(a[..., j] * b[..., k] - a[..., k] * b[..., j])
    return np.ascontiguousarray(np.moveaxis(np.stack(parts, -1), -1, dim))


def _cross_dtype(ts, params):
    a, b = ts[0]._dtype, ts[1]._dtype
    if a is not b:
        raise errors.RuntimeError(f"expected scalar type {a._scalar_name} but found {b._scalar_name}")
    return None, a


def _check_cross(self, other, dim):
    """linalg_cross's meta checks in ATen's order (the dim shown as given), then the broadcast."""
    from ..op import _check_broadcast
    if self._data.ndim != other._data.ndim:
        raise errors.RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, self._data.ndim)
    if self._data.shape[d] != 3 or other._data.shape[d] != 3:
        raise errors.RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                                  f"{self._data.shape[d]} and {other._data.shape[d]}")
    _check_broadcast([self._data, other._data])
    return (self, other), {"dim": dim}         # (the node keeps the dim as given)


def _linalg_cross_call(values):
    return _check_cross(values["self"], values["other"], values["dim"])


_WARNED = []        # TORCH_WARN_ONCE: once per process


def _cross_call(values):
    """torch.cross: ATen's composite over linalg_cross; without ``dim``, the first dim of size 3 of the
    input (deprecated, with PyTorch's warning once)."""
    dim = values["dim"]
    if dim is None:
        if not _WARNED:
            _WARNED.append(True)
            from ..warn import warn
            warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                 "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
                 "that of linalg.cross in a future release. (Triggered internally at "
                 "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")
        dim = next((i for i, n in enumerate(values["self"]._data.shape) if n == 3), None)
        if dim is None:
            raise errors.RuntimeError("no dimension of size 3 in input")
    return _check_cross(values["self"], values["other"], dim)


# derivatives.yaml: self: linalg_cross(other, grad, dim), other: linalg_cross(grad, self, dim) (real inputs)
def _cross_self_grad(grad, other, dim):
    return _apply(linalg_cross, (other, grad), {"dim": dim})


def _cross_other_grad(grad, self, dim):
    return _apply(linalg_cross, (grad, self), {"dim": dim})


def _cross_tangent(self_t, other_t, self, other, dim):
    return _apply(linalg_cross, (self_t, other), {"dim": dim}) + _apply(linalg_cross, (self, other_t), {"dim": dim})


linalg_cross = op("linalg_cross", "LinalgCrossBackward0", _cross, ("self", "other"),
                  self=_cross_self_grad, other=_cross_other_grad, dtype=_cross_dtype, domain="vectors",
                  broadcast=False, forward_ad=_cross_tangent, prepare=_linalg_cross_call, zero_tensor="mul",
                  schema="linalg_cross(Tensor self, Tensor other, *, int dim=-1, Tensor(a!)? out=None) -> Tensor",
                  variants="linalg", samples=[((2, 3), (2, 3)), ((1, 3), (4, 3))])
# torch.cross / Tensor.cross: the same node (ATen's cross is a composite calling linalg_cross)
cross = op("cross", "LinalgCrossBackward0", _cross, ("self", "other"),
           self=_cross_self_grad, other=_cross_other_grad, dtype=_cross_dtype, domain="vectors",
           broadcast=False, forward_ad=_cross_tangent, prepare=_cross_call,
           schema="cross(Tensor self, Tensor other, int? dim=None, *, Tensor(a!)? out=None) -> Tensor",
           variants="function method", samples=[((2, 3), (2, 3)), ((3, 2), (3, 1))])


# ============================================================ distances between rows (torch.cdist)
def _paired(x1, x2):
    """x1 (..., r1, c) and x2 (..., r2, c) with their batch dims broadcast."""
    batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return np.broadcast_to(x1, batch + x1.shape[-2:]), np.broadcast_to(x2, batch + x2.shape[-2:])


def _cdist_forward(x1, x2, p, compute_mode=None):
    """ATen's CPU cdist kernel: for each pair of rows, |a - b| column by column folded in order into one
    sum, then the root (p=0: the count of differences, inf: the largest one). For p=2 its compiled loop
    squares the columns 16 bytes at a time (4 float32, 2 float64: rounded squares, added in order)
    and fuses the square of each remaining column into the sum (FMA). (One column's differences at a
    time: r1 x r2 values, never r1 x r2 x columns.)"""
    a, b = _paired(x1, x2)
    t = a.dtype.type
    m = a.shape[-1]

    def column(k):          # |a - b| of column k for every pair, in the input's precision
        return np.abs(a[..., :, None, k] - b[..., None, :, k])
    agg = np.zeros(a.shape[:-1] + (b.shape[-2],), a.dtype)
    if p == 2:
        head = m - m % max(16 // a.itemsize, 1)
        for k in range(m):
            d = column(k)
            agg = agg + d * d if k < head else exact.fma(d, d, agg)
        return np.sqrt(agg)
    if p not in (0, 1) and not math.isinf(p):
        from .. import special_math
        power, power64 = special_math._pow(t), special_math._pow(np.float64)
        powf = np.vectorize(lambda v: power(v, t(p)), otypes=[a.dtype])
    for k in range(m):
        d = column(k)
        if p == 0:
            agg = agg + np.minimum(np.ceil(d), t(1))
        elif p == 1:
            agg = agg + d
        elif math.isinf(p):
            agg = np.maximum(agg, d)
        else:
            agg = agg + (powf(d) if d.size else d)
    if p in (0, 1) or math.isinf(p) or agg.size == 0:
        return agg
    # finish: std::pow(agg, 1.0 / p), in double, rounded to the input's precision
    return np.vectorize(lambda v: t(power64(float(v), 1.0 / p)), otypes=[a.dtype])(agg)


def _sign(v):
    return np.sign(v).astype(v.dtype)


def _cdist_backward(grad, x1, x2, cdist, p):
    """ATen's _cdist_backward: the gradient of x1 (its batch dims broadcast with x2's; the engine sums
    them back), for each row of x1 the rows of x2 added in order, each term as its kernel words it."""
    a, b = _paired(x1, x2)
    t = a.dtype.type
    res = np.zeros(a.shape, a.dtype)
    if p == 0 or res.size == 0 or b.shape[-2] == 0:
        return res
    grad = np.broadcast_to(grad, a.shape[:-1] + (b.shape[-2],))
    cdist = np.broadcast_to(cdist, grad.shape)
    if p not in (1, 2) and not math.isinf(p):
        from .. import special_math
        power = np.vectorize(special_math._pow(t), otypes=[a.dtype])
    for j in range(b.shape[-2]):
        diff = a - b[..., j:j + 1, :]
        g = grad[..., j:j + 1]
        dist = cdist[..., j:j + 1]
        if p == 1:
            term = g * _sign(diff)
        elif p == 2:
            term = np.where(dist == 0, t(0), g * diff / dist)
        elif math.isinf(p):
            term = g * _sign(diff) * (t(1) - np.minimum(t(1), np.ceil(np.abs(np.abs(diff) - dist))))
        elif p < 2:
            term = np.where(dist == 0, t(0), _sign(diff) * power(np.abs(diff), t(p - 1)) * g / power(dist, t(p - 1)))
            if p < 1:
                term = np.where(diff == 0, t(0), term)
        else:
            term = np.where(dist == 0, t(0), diff * power(np.abs(diff), t(p - 2)) * g / power(dist, t(p - 1)))
        res = (res + term).astype(a.dtype)
    return res


_CDIST_BACKWARD = NotDifferentiable("the derivative for '_cdist_backward' is not implemented.", not_implemented=True)
# _cdist_backward(grad, x1, x2, p, cdist): a node of its own under create_graph, not differentiable again
cdist_backward = op("cdist_backward", "CdistBackwardBackward0",
                    lambda grad, x1, x2, cdist, p: _cdist_backward(grad, x1, x2, cdist, p),
                    ("grad", "x1", "x2", "cdist"), grad=_CDIST_BACKWARD, x1=_CDIST_BACKWARD, x2=_CDIST_BACKWARD,
                    cdist=_CDIST_BACKWARD, dtype="first", domain="real", broadcast=False)


def _cdist_x1_grad(grad, x1, x2, result, p):
    return _apply(cdist_backward, (grad.contiguous(), x1, x2, result), {"p": p})


def _cdist_x2_grad(grad, x1, x2, result, p):
    return _apply(cdist_backward, (grad.mT.contiguous(), x2, x1, result.mT.contiguous()), {"p": p})


# ATen's _cdist_forward (torch.cdist's composite picks it or _euclidean_dist: composites/linalg.py)
cdist_forward = op("cdist_forward", "CdistBackward0", _cdist_forward, ("x1", "x2"),
                   x1=_cdist_x1_grad, x2=_cdist_x2_grad, dtype="first", domain="real", broadcast=False, twice=False,
                   schema="_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
                   forward_ad="not_implemented")


def _euclidean_dist(x1, x2):
    """ATen's _euclidean_dist: one matrix product of [-2 x1, |x1|², 1] and [x2, 1, |x2|²], clamped at 0
    and square-rooted (the product is BLAS's: not to the last bit)."""
    n1 = np.sum(x1 * x1, axis=-1, keepdims=True)
    n2 = np.sum(x2 * x2, axis=-1, keepdims=True)
    left = np.concatenate([x1 * x1.dtype.type(-2), n1, np.ones_like(n1)], -1)
    right = np.concatenate([x2, np.ones_like(n2), n2], -1)
    return np.sqrt(np.maximum(left @ np.swapaxes(right, -1, -2), x1.dtype.type(0))).astype(x1.dtype)


def _euclidean_dist_grad(grad, x1, x2, result):
    """FunctionsManual's _euclidean_dist_backward: both gradients from grad / result (0 where the
    distance is 0, a subgradient)."""
    ratio = (grad / result).masked_fill(result == 0, 0)
    return (x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2),
            x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1))


euclidean_dist = op("euclidean_dist", "EuclideanDistBackward0", _euclidean_dist, ("x1", "x2"),
                    x1=_euclidean_dist_grad, x2=_euclidean_dist_grad, dtype="first", domain="real", broadcast=False,
                    schema="_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", forward_ad="not_implemented")


# ============================================================ vmap's batch rules (batching.py)
batch_rules("dims", "linalg_cross", "cross")
