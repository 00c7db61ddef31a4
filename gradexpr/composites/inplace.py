"""Hand-written in-place methods (``zero_``, ``fill_``, ``copy_``, ``t_`` …) and the in-place form of a
hand-written function (``_inplace_of``).
"""
from __future__ import annotations


import numpy as np

from .. import ops as D
from .. import errors
from ..graph import Node, _grad_enabled
from ..forward_ad import ACTIVE as _DUAL_LEVEL, inplace_formula as _inplace_formula
from ..grad_mode import VMAP_LEVELS as _VMAP
from ..inplace_engine import (apply_inplace_view, check_inplace, check_writeable, copy_with_history, records_inplace,
                              save_inplace_result, save_original_self, write_inplace)
from ..op import apply, bump_version, wrap
from ..zero_tensor import LIVE as _ZERO_TENSORS, check_mutable, inplace_operands
from ..ops.common import _reduce_dim
from .arguments import _given_dim, _is_tensor


def _inplace_of(fn_name, fn):
    """``Tensor.<fn_name>_`` of a hand-written ``fn``: computed out of place, then written back into the tensor."""
    def inplace(self, *args, **kwargs):
        check_inplace(self, args + tuple(kwargs.values()) if kwargs else args)
        if _ZERO_TENSORS:
            args = inplace_operands(self, args)
        old = _old_self(self, fn_name, args, kwargs)
        result = _inplace_formula(old, lambda: fn(old, *args, **kwargs)) if _DUAL_LEVEL else fn(old, *args, **kwargs)
        node = result._grad_fn
        if old is not self:
            save_original_self(node, old)
        write_inplace(self, result)
        if node is not None:
            save_inplace_result(self, node)
        return self
    inplace.__name__ = fn_name + "_"
    return inplace


def _save_inplace_result(t, node=None):
    """``op.save_inplace_result`` for callers that only have ``t`` (its grad_fn is then the op's node)."""
    node = t._grad_fn if node is None else node
    if type(node) is Node:
        save_inplace_result(t, node)


def _old_self(t, name, args=(), kwargs=None):
    """The value of ``t`` before an in-place op, carrying ``t``'s history (a copy when a formula reads it:
    also when only another argument requires grad, as ``h.mul_(w)``'s gradient for ``w`` reads ``h``)."""
    if name in _INPLACE_NO_SELF or not records_inplace(t, (*args, *(kwargs or {}).values())):
        return t
    return copy_with_history(t)


# in-place methods whose backward formulas do not read the input (others get a copy of the old value)
_INPLACE_NO_SELF = {"add", "sub", "neg", "clone", "masked_fill", "relu", "exp", "sigmoid", "tanh", "sqrt", "rsqrt",
                    "reciprocal"}


def zero_(self):
    return fill_(self, 0, entry=D.zero_inplace)


def fill_(self, value, *, entry=None):
    check_inplace(self, (value,))
    if _is_tensor(value):
        if value._data.ndim != 0:
            raise errors.RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                                      f"{value._data.ndim} dimensions.")
        if (_grad_enabled.get() and value._requires_grad) or _VMAP or _DUAL_LEVEL:
            write_inplace(self, apply(D.fill_tensor_inplace, (self, value)))
            return self
        value = value.item()
    if (_grad_enabled.get() and self._requires_grad) or _VMAP or _DUAL_LEVEL:   # (vmap: the batch rule writes;
        # a dual level: the tangent is filled too)
        write_inplace(self, apply(entry or D.fill_inplace, (self,), {"value": value}))
        return self
    check_writeable(self)
    self._data[...] = value
    bump_version(self)
    return self


def copy_(self, src, non_blocking=False):
    check_inplace(self, (src,))
    check_mutable(self, copy=True)
    src = src if _is_tensor(src) else wrap(src)
    if (_grad_enabled.get() and (self._requires_grad or src._requires_grad)) or _VMAP or _DUAL_LEVEL:
        result = apply(D.copy_inplace, (self, src))
        write_inplace(self, result)
        return self
    check_writeable(self)
    np.copyto(self._data, np.broadcast_to(src._data, self._data.shape).astype(self._dtype.np), casting="unsafe")
    bump_version(self)
    return self


def t_(self):
    if self._data.ndim > 2:
        raise errors.RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return apply_inplace_view(D.t_inplace, self)


def transpose_(self, dim0, dim1):
    n = self._data.ndim
    return apply_inplace_view(D.transpose_inplace, self, {"dim0": _given_dim(dim0, n), "dim1": _given_dim(dim1, n)})


def unsqueeze_(self, dim):
    return apply_inplace_view(D.unsqueeze_inplace, self, {"dim": _given_dim(dim, self._data.ndim + 1)})


def squeeze_(self, dim=None):
    if dim is None:
        return apply_inplace_view(D.squeeze_inplace, self)
    if isinstance(dim, (tuple, list)):
        return apply_inplace_view(D.squeeze_inplace_dims, self,
                                  {"dims": _reduce_dim(dim, self, empty_means_all=False)})
    return apply_inplace_view(D.squeeze_inplace_dim, self, {"dim": _given_dim(dim, self._data.ndim)})


def resize_(self, *size, memory_format=None):
    """``Tensor.resize_``: the tensor takes the new shape over its own memory, read in memory order from its
    first element; elements beyond it are new (PyTorch leaves them uninitialized: zeros here). The same shape
    changes nothing (strides kept). A tensor that requires grad cannot be resized."""
    from .arguments import _missing, _shape_args
    if not size:
        raise _missing("resize_", "size")
    shape = _shape_args(size, "resize_", "size")
    if self._requires_grad:
        raise errors.RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in shape):
        raise errors.RuntimeError("numel: integer multiplication overflow")
    from .. import limits
    limits.check_elements(shape)
    n = 1
    for s in shape:
        n *= s
    if shape != self._data.shape:
        flat = np.ravel(self._data, order="K")
        if n <= flat.size:
            data = flat[:n].reshape(shape)
        else:
            data = np.zeros(shape, self._data.dtype)
            data.reshape(-1)[:flat.size] = flat
        self._data = data
    bump_version(self)
    return self


def resize_as_(self, the_template, memory_format=None):
    """``Tensor.resize_as_`` / ``torch.resize_as_``: ``resize_`` to the template's shape."""
    if not _is_tensor(the_template):
        raise errors.TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                               f"{type(the_template).__name__}")
    return resize_(self, tuple(the_template._data.shape))
