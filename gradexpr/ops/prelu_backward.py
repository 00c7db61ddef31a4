"""The fused backward of ``prelu_kernel`` (ATen's ``_prelu_kernel_backward``): the gradients of input
and weight in one call; under ``create_graph`` one ``PreluKernelBackwardBackward0`` node with those
two outputs (in the input's shape: the engine sums the weight's to its shape, as PyTorch's does),
whose own gradients are derivatives.yaml's ``where(self >= 0, ...)`` formulas."""
from __future__ import annotations

import functools

import numpy as np

from ..grad_mode import VMAP_LEVELS
from ..graph import is_grad_enabled
from ..tensor import Tensor


def prelu_grads(grad, self, weight, output_mask=None):
    """(grad_self, grad_weight) of prelu: ATen computes both whichever is wanted."""
    if VMAP_LEVELS:     # under vmap: tensor ops, which vmap's batch rules (or its loop) run
        return grad.where(self > 0, grad * weight), (grad * self).masked_fill(self > 0, 0)
    if not is_grad_enabled():
        return _kernel(grad, self, weight)
    return _node().apply(grad, self, weight)


def _kernel(grad, self, weight):
    """ATen's prelu_backward kernel, elementwise over the broadcast operands: ``x > 0 ? (g, 0) : (w·g, x·g)``."""
    g, x, w = grad._data, self._data, weight._data
    positive = x > 0
    dtype = np.result_type(g, x, w)
    grad_self = np.where(positive, g, w * g).astype(dtype, copy=False)
    grad_weight = np.where(positive, dtype.type(0), x * g).astype(dtype, copy=False)
    return Tensor._make(grad_self), Tensor._make(grad_weight)


@functools.lru_cache(maxsize=None)
def _node():
    from .fused_nodes import node_class
    return node_class("PreluKernelBackwardBackward0", _kernel, _double_backward, ("grad_output", "self", "weight"))


def _double_backward(ctx, gg_self, gg_weight):
    """derivatives.yaml's ``_prelu_kernel_backward`` entry (note its ``self >= 0``, where the kernel
    has ``self > 0``)."""
    grad_output, self, weight = ctx.saved_tensors
    needs = ctx.needs_input_grad
    non_negative = self >= 0
    zero = lambda like: Tensor._make(np.zeros((), like.dtype.np))
    d_grad = d_self = d_weight = None
    if needs[0]:
        if gg_self is not None:
            inner = gg_self * weight + gg_weight * self if gg_weight is not None else gg_self * weight
            d_grad = gg_self.where(non_negative, inner)
        elif gg_weight is not None:
            d_grad = zero(grad_output).where(non_negative, gg_weight * self)
    if needs[1]:
        d_self = (zero(self).where(non_negative, grad_output * gg_weight) if gg_weight is not None
                  else _zeros_like(self))
    if needs[2]:
        d_weight = (zero(weight).where(non_negative, grad_output * gg_self) if gg_self is not None
                    else _zeros_like(self))
    return d_grad, d_self, d_weight


def _zeros_like(t):
    from ..functions import zeros_like
    return zeros_like(t)
