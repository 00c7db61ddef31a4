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
* ``relu``'s (``threshold_backward``) and ``max``/``min``'s (``evenly_distribute_backward``:
  ``zeros.masked_fill_(mask, grad / count)``) gradients write +0 where the input did not win,
  never ``grad * 0`` (which is -0 for a negative grad).
* ``softplus``'s gradient is ``grad * z / (z + 1)`` with ``z = exp(beta*x)``, which keeps the
  subnormals ``sigmoid`` loses (``8.194e-40`` at ``beta*x = -90``).
"""
from __future__ import annotations


def _T():
    from . import functions
    return functions


def _reversed_cumsum(t, dim):
    return t.flip(dim).cumsum(dim).flip(dim)


def cumprod_grad(grad, self, result, dim):
    """PyTorch's cumprod_backward: before the first zero the usual formula; at the first zero the
    sum of grad times the product that skips it; after it, zero."""
    T = _T()
    w = grad * result
    is_zero = self == 0
    if not bool(is_zero.any()):
        return _reversed_cumsum(w, dim) / self
    count = is_zero.long().cumsum(dim)
    before = count == 0
    first = is_zero & (count == 1)
    plain = _reversed_cumsum(w, dim) / T.where(before, self, 1.0)
    skipping = T.where(first, 1.0, self).cumprod(dim)
    at_first = T.where(count == 1, grad * skipping, 0.0).sum(dim, keepdim=True)
    return T.where(before, plain, T.where(first, at_first, 0.0))


def _atan2_recip(self, other):
    denom = self * self + other * other
    return _T().where(denom == 0, 0.0, denom.reciprocal())


def atan2_self_grad(grad, self, other):
    return grad * other * _atan2_recip(self, other)


def atan2_other_grad(grad, self, other):
    return grad * -self * _atan2_recip(self, other)


def zero_grad(grad):
    """``zeros_like(grad)``: the gradient of a piecewise-constant op."""
    return _T().zeros_like(grad)


def relu_grad(grad, result):
    """threshold_backward(grad, result, 0): +0 where result <= 0, else grad (nan keeps grad)."""
    return _T().where(result <= 0, 0.0, grad)


def evenly_distribute(grad, self, result):
    """The gradient of a full max/min: grad shared between the tied winners, +0 elsewhere."""
    T = _T()
    mask = self.isnan() if bool(result.isnan()) else self == result
    return T.where(mask, grad / mask.sum(), 0.0)


def softplus_grad(grad, self, beta=1.0, threshold=20.0):
    z = (self * beta).exp()
    return _T().where(self * beta > threshold, grad, grad * z / (z + 1))
