"""Backward formulas whose corners (zeros, ties, signed zeros, subnormals) follow PyTorch's
``FunctionsManual.cpp`` and CPU kernels exactly, written with tensor ops so they can be
differentiated again.

* ``cumprod`` over an input with zeros: PyTorch's ``cumprod_backward`` splits at the first
  zero (the plain ``sum(grad*result)/self`` is 0/0 there): ``cumprod([3, 0, 2])`` has the
  gradient ``[1, 9, 0]``.
* ``atan2`` at ``(0, 0)``: the reciprocal of ``self² + other²`` is taken as 0 where it is 0,
  so the gradient is 0 (``-0`` for ``other``), not nan.
* The gradient of ``sign``/``round``/``floor``/``ceil``/``trunc`` is ``zeros_like(grad)``: a
  plain zero tensor, outside the graph.
* ``max``/``min``'s gradient (``evenly_distribute_backward``: ``zeros.masked_fill_(mask, grad /
  count)``) writes +0 where the input did not win, never ``grad * 0`` (-0 for a negative grad).
  (``relu``'s and ``softplus``'s corners are their fused backward kernels: ``ops/backward_ops.py``.)
"""
from __future__ import annotations

import sys

from . import zero_tensor
from .graph import is_grad_enabled


def _T():
    from . import functions
    return functions


def in_transform() -> bool:
    """Whether a torch.func transform is running: its tensors are PyTorch's functorch wrappers there,
    for which FunctionsManual's ``isTensorSubclassLike`` takes the branch-free form of a formula (no
    value read back into C++), whatever the values."""
    func = sys.modules.get("gradexpr.func")
    return func is not None and func._depth[0] > 0


def _reversed_cumsum(t, dim):
    return t.flip(dim).cumsum(dim).flip(dim)


def cumsum_grad(grad, dim):
    """PyTorch's cumsum_backward: a sum along a dim of one element hands ``grad`` on as it is (a
    ``-0.`` stays ``-0.``; the reversed cumsum would start from ``0. + -0. = 0.``)."""
    if grad.numel() <= 1 or grad.size(dim) == 1:
        return grad
    return _reversed_cumsum(grad, dim)


def cumprod_grad(grad, self, result, dim):
    """PyTorch's cumprod_backward: without zeros the reversed cumsum over the input; with zeros and no
    graph to record, the O(n) masked form (before the first zero the usual formula, at it the sum of
    grad times the products that skip it, after it zero); with a graph to record or inside a
    torch.func transform (where PyTorch's tensors are subclass-like), the O(n^2) form by slices."""
    T = _T()
    if self.numel() <= 1 or self.shape[dim] == 1:
        return grad
    w = result * grad
    is_zero = self == 0
    transformed = in_transform()
    if not transformed and not bool(is_zero.any()):
        return _reversed_cumsum(w, dim) / self
    if transformed or is_grad_enabled():
        return _cumprod_grad_by_slices(grad, self, dim % self.dim(), transformed)
    count = is_zero.long().cumsum(dim)
    before = count == 0
    first = is_zero & (count == 1)
    # before the first zero z1: reversed_cumsum(w with 0 from z1 on) / self; at z1: the product
    # before z1 (result[z1 - 1]) times the sum of grad times the products over (z1, k]
    plain = _reversed_cumsum(w.masked_fill(~before, 0.0), dim) / self
    between = (count == 1) & ~first
    after = (self.masked_fill(~between, 1.0).cumprod(dim) * grad.masked_fill(count != 1, 0.0)).sum(
        dim, keepdim=True)
    z1 = first.long().argmax(dim, keepdim=True)
    prefix = T.where(z1 == 0, 1.0, result.gather(dim, (z1 - 1).clamp_min(0)))
    return T.where(before, plain, T.where(first, after * prefix, 0.0))


def _cumprod_grad_by_slices(grad, self, dim, stacked):
    """cumprod_backward's O(n^2) form, whose own derivative is cumprod's second derivative: slice k
    of the gradient is sum_j grad_j * (product of the inputs up to j but the k-th), written into a
    zeros tensor slice by slice (CopySlices), or stacked inside a torch.func transform."""
    T = _T()
    n = self.shape[dim]
    ones_shape = list(self.shape)
    ones_shape[dim] = 1
    ones = T.ones([1], dtype=grad.dtype).expand(ones_shape)
    slices = []
    for k in range(n):
        if k == 0:
            omitted = T.cat([ones, self.narrow(dim, 1, n - 1).cumprod(dim)], dim)
        elif k == n - 1:
            omitted = self.narrow(dim, 0, k).prod(dim, keepdim=True)
        else:
            until = self.narrow(dim, 0, k).prod(dim, keepdim=True)
            after = self.narrow(dim, k + 1, n - k - 1).cumprod(dim)
            omitted = T.cat([until, until.expand_as(after) * after], dim)
        slices.append((grad.narrow(dim, k, n - k) * omitted).sum(dim))
    if stacked:
        return T.stack(slices, dim)
    out = T.zeros(self.shape, dtype=grad.dtype)
    for k, part in enumerate(slices):
        out.select(dim, k).copy_(part)
    return out


def atan2_grads(grad, self, other, output_mask=(True, True)):
    """FunctionsManual's atan2_backward, one call for both inputs (derivatives.yaml's ``self, other``):
    the reciprocal of self² + other² (masked to 0 where that is 0) made once and shared."""
    denom = self * self + other * other
    recip = denom.reciprocal().masked_fill(denom == 0, 0.0)
    return (grad * other * recip if output_mask[0] else None,
            grad * -self * recip if output_mask[1] else None)


def zero_grad(grad):
    """``zeros_like(grad)``: the gradient of a piecewise-constant op."""
    return _T().zeros_like(grad)


def efficient_zero(grad):
    """sgn's gradient for a real input: ATen's ``_efficientzerotensor`` shaped as ``grad`` (zero_tensor.py)."""
    return zero_tensor.mark(zero_grad(grad))


def evenly_distribute(grad, self, result):
    """The gradient of a full max/min: grad shared between the tied winners, +0 elsewhere (ATen's CPU
    evenly_distribute_backward: zeros with the share masked in, MaskedFillBackward1 under create_graph)."""
    if in_transform():      # (no value read back: the nan test is part of the mask)
        mask = (self == result).logical_or(self.isnan().logical_and(result.isnan()))
        return mask * (grad / mask.sum())
    mask = self.isnan() if bool(result.isnan()) else self == result
    return grad.new_zeros(self.shape).masked_fill_(mask, grad / mask.sum())


def _prod_safe_zeros(grad, inp, dim):
    """prod_safe_zeros_backward: grad times the exclusive products before and after each element
    (cumprods of the shifted input), which stay right where the input has zeros."""
    T = _T()
    n = inp.shape[dim]
    if inp.numel() == 0:
        return grad.expand_as(inp)
    if n == 1:
        return grad
    ones_shape = list(inp.shape)
    ones_shape[dim] = 1
    ones = T.ones(ones_shape, dtype=grad.dtype)
    before = T.cat([ones, inp.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    after = T.cat([ones, inp.narrow(dim, 1, n - 1).flip(dim)], dim).cumprod(dim).flip(dim)
    return grad * (before * after)


def prod_grad(grad, self, result):
    """prod_backward of a full product: result / self without zeros; all zeros (no graph) past one
    zero; else the zero-safe exclusive products over the flattened input."""
    if self.dim() == 0:
        return grad
    if in_transform():
        return _prod_safe_zeros(grad, self.contiguous().view(-1), 0).view_as(self)
    zeros = int((self == 0).sum())
    if zeros == 0:
        return grad * (result / self)
    if zeros > 1 and not is_grad_enabled():
        return _T().zeros_like(self)
    return _prod_safe_zeros(grad, self.contiguous().view(-1), 0).view_as(self)


def prod_dim_grad(grad, self, result, dim, keepdim=False):
    """prod_backward along ``dim``: result / self unless the input has a zero anywhere."""
    if self.dim() == 0:
        return grad
    dim = dim % self.dim()
    if not keepdim:
        grad, result = grad.unsqueeze(dim), result.unsqueeze(dim)
    if not in_transform() and not bool((self == 0).any()):
        return grad * (result / self)
    return _prod_safe_zeros(grad, self, dim)


def det_grad(grad, A, result):
    """linalg_det_backward: ``grad * det * A^{-H}`` for invertible matrices. Where a matrix is singular
    (det exactly 0), PyTorch's LU solve of a zero right-hand side gives zeros when no graph is
    recorded; with a graph, ATen's own formula (``_det_grad_recorded``)."""
    if is_grad_enabled():
        return _det_grad_recorded(grad, A, result)
    T = _T()
    scaled = (grad * result).unsqueeze(-1).unsqueeze(-1)
    singular = result == 0
    if not singular._data.any():        # (the data, not bool(): no control flow on a tensor under vmap)
        from .tensor import Tensor
        if not is_grad_enabled() and type(A) is Tensor and type(grad) is Tensor:   # (not a batched tensor)
            from .ops.linalg_lu_decomposition import det_gradient
            solved = det_gradient((grad * result)._data, A._data)
            if solved is not None:
                return Tensor._make(solved, A._dtype)
        return scaled * A.inverse().mT
    eye = T.eye(A.shape[-1], dtype=A.dtype)
    safe = T.where(singular.unsqueeze(-1).unsqueeze(-1), eye, A)
    return T.where(singular.unsqueeze(-1).unsqueeze(-1), 0.0, scaled * safe.inverse().mT)


def _det_grad_recorded(grad, A, result):
    """linalg_det_backward under create_graph: ``linalg.solve(A^H, diag_embed(grad * det)^T)``, whose node
    (LinalgSolveExBackward0) differentiates again as ATen's does; where every matrix is singular
    (|det| < 100 eps) ATen's SVD path; a batch of both kinds through the cofactors (not ATen's graph)."""
    from .ops.linalg_lu_decomposition import solve
    import numpy as np
    singular = result.abs()._data < 100 * np.finfo(A.dtype.np).eps
    if singular.all():
        return _det_grad_svd(grad, A)
    if singular.any():          # (ATen computes each part its own way and puts them together: not followed)
        return grad.unsqueeze(-1).unsqueeze(-1) * _cofactors(A)
    d = grad * result
    d_diag = _T().diag_embed(d.unsqueeze(-1).expand(tuple(A.shape[:-1]))).mT
    return solve(A.mT, d_diag)


def _det_grad_svd(grad, A):
    """linalg_det_backward's path for singular matrices: with A = U diag(S) Vh, det = det(U) det(Vh) prod(S),
    so the gradient is U diag(d prod(S)/dS) Vh scaled by det(U) det(Vh) (prod_safe_zeros_backward: the
    products of all the other singular values, exclusive cumulative products from both ends)."""
    from .composites.linalg import det
    from .composites.reductions import linalg_svd
    U, S, Vh = linalg_svd(A)
    alpha = det(U) * det(Vh)
    D = _prod_safe_zeros(grad.mul(alpha).unsqueeze(-1), S, S.dim() - 1)
    return (U * D.unsqueeze(-2)).matmul(Vh)


def _cofactors(A):
    """The cofactor matrix of (a batch of) square ``A``: signed determinants of the minors."""
    T = _T()
    n = A.shape[-1]
    if n == 1:
        return T.ones_like(A)
    rows = []
    for i in range(n):
        without_row = A.index_select(-2, T.tensor([r for r in range(n) if r != i]))
        rows.append(T.stack([without_row.index_select(-1, T.tensor([c for c in range(n) if c != j])).det()
                             * (-1.0) ** (i + j) for j in range(n)], -1))
    return T.stack(rows, -2)
