"""``copy.copy`` and ``copy.deepcopy`` of a tensor, as PyTorch's ``Tensor`` does them.

deepcopy (``torch/_tensor.py``'s ``__deepcopy__``): graph leaves only, a clone made without
recording, the same ``requires_grad``, the gradient deep-copied too, shared objects once (memo).
copy (``__reduce_ex__``'s rebuild): a new leaf over the same data with the same
``requires_grad`` and no gradient."""
from __future__ import annotations

import numpy as np

from . import errors

__all__ = ["deepcopy_tensor", "copy_tensor"]

_NOT_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment."
             "  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm "
             "usage, see https://github.com/pytorch/pytorch/pull/103001")


def _new_like(t, data):
    new = type(t)._make(data, t._dtype)
    new._requires_grad = t._requires_grad
    return new


def deepcopy_tensor(t, memo):
    if not t.is_leaf:
        raise errors.RuntimeError(_NOT_LEAF)
    known = memo.get(id(t))
    if known is not None:
        return known
    new = _new_like(t, np.array(t._data, copy=True))
    if t._grad is not None:
        new._grad = deepcopy_tensor(t._grad, memo)
    extra = getattr(t, "__dict__", None)
    if extra:
        import copy
        new.__dict__.update(copy.deepcopy(extra, memo))
    memo[id(t)] = new
    return new


def copy_tensor(t):
    return _new_like(t, t._data)
