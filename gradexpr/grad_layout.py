"""The memory layout of a leaf's ``.grad``: PyTorch's gradient layout contract.

A first gradient stored in ``.grad`` has the strides of its parameter when the parameter is dense and
non-overlapping (a permuted leaf gets a permuted ``.grad``), else it is row-major contiguous; a gradient
the engine alone holds is kept as it is only when it already has that layout.
``torch.autograd.enforce_grad_layout_policy(False)`` relaxes the last rule: such a gradient is kept
whatever its layout. Loaded when a leaf or its gradient is not row-major contiguous (the common case,
both contiguous, needs none of this), or when a program changes the policy.
"""
from __future__ import annotations

import functools

import numpy as np

from .graph import LAYOUT_RELAXED
from .tensor import Tensor


def _dense(a: np.ndarray) -> bool:
    """Whether ``a``'s elements fill its memory block exactly once (PyTorch's non-overlapping and dense)."""
    dims = sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n != 1)
    expected = a.itemsize
    for stride, n in dims:
        if stride != expected:
            return False
        expected *= n
    return True


def obeys_contract(grad: np.ndarray, param: np.ndarray) -> bool:
    """PyTorch's obeys_layout_contract: the parameter's strides (size-1 dims aside), or row-major."""
    if _dense(param):
        for n, gs, ps in zip(grad.shape, grad.strides, param.strides):
            if n != 1 and gs != ps or n == 1 and gs == 0:
                return False
        return True
    return grad.flags.c_contiguous


def may_keep(grad: Tensor, param: Tensor) -> bool:
    """Whether a gradient only the engine holds may become ``.grad`` as it is."""
    return LAYOUT_RELAXED[0] or obeys_contract(grad._data, param._data)


def copy_obeying_contract(grad: Tensor, param: Tensor) -> Tensor:
    """A copy of ``grad`` laid out as the contract asks (PyTorch's clone_obey_contract)."""
    p = param._data
    out = np.empty_like(p, dtype=grad._data.dtype) if p.flags.c_contiguous or _dense(p) \
        else np.empty(p.shape, grad._data.dtype)
    out[...] = grad._data
    return Tensor._make(out, grad._dtype)


class enforce_grad_layout_policy:
    """``torch.autograd.enforce_grad_layout_policy(enable)``: takes effect at once, and as a ``with`` block or a
    decorator restores the previous policy after."""

    _gx_exposed = True

    def __init__(self, enable: bool = True):
        self.prev = not LAYOUT_RELAXED[0]
        self.mode = bool(enable)
        LAYOUT_RELAXED[0] = not self.mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        LAYOUT_RELAXED[0] = not self.prev
        return False

    def __call__(self, fn):
        LAYOUT_RELAXED[0] = not self.prev

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return run

    def clone(self):
        return type(self)(self.mode)


enforce_grad_layout_policy.__module__ = "torch.autograd.grad_mode"
