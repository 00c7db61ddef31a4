"""``torch.memory_format`` (``contiguous_format``, ``channels_last``, ``channels_last_3d``,
``preserve_format``), ``torch.layout`` (``strided``: the only one, tensors here are dense), the layout checks of ``is_contiguous(memory_format=)`` and ``Tensor.dim_order``,
as c10's TensorImpl and torch/_prims_common compute them from sizes and strides."""
from __future__ import annotations

import numpy as np

from . import errors
from .reduction_order import reorder

__all__ = ["memory_format", "layout", "strided", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
           "is_contiguous_for", "channels_last_data", "dim_order", "NAMES"]


class _TorchConstant:
    """A named constant of ``torch`` (``torch.channels_last``, ``torch.strided``), printed as its name."""
    _gx_exposed = True
    __module__ = "torch"
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__


class memory_format(_TorchConstant):
    __module__ = "torch"
    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


class layout(_TorchConstant):
    """``torch.layout``: how a tensor's elements are stored; ``torch.strided`` (dense) is every tensor's."""
    __module__ = "torch"
    __slots__ = ()


strided = layout("strided")
NAMES = {"layout": layout, "strided": strided, "memory_format": memory_format,
         "contiguous_format": contiguous_format, "channels_last": channels_last,
         "channels_last_3d": channels_last_3d, "preserve_format": preserve_format}


def _nested(shape, strides, order):
    """Strides nested in ``order`` (innermost first), size-1 dims skipped: TensorImpl's checks."""
    expected = 1
    for d in order:
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def is_contiguous_for(shape, strides, fmt=None) -> bool:
    """``is_contiguous(memory_format=fmt)`` from sizes and strides (in elements)."""
    n = len(shape)
    if fmt is None or fmt is contiguous_format:
        return int(np.prod(shape)) < 2 or _nested(shape, strides, range(n - 1, -1, -1))
    if fmt is channels_last:
        return n == 4 and _nested(shape, strides, (1, 3, 2, 0))
    if fmt is channels_last_3d:
        return n == 5 and _nested(shape, strides, (1, 4, 3, 2, 0))
    raise errors.RuntimeError(f"is_contiguous: unsupported memory format {fmt}")


def channels_last_data(fill, shape, np_dtype, fmt):
    """A new array of ``shape`` laid out as ``fmt`` (channels last: C innermost, then W, H, (D), N)."""
    if fmt is None or fmt in (contiguous_format, preserve_format):
        return fill(shape, np_dtype)
    n = 4 if fmt is channels_last else 5
    if len(shape) != n:
        raise errors.RuntimeError(f"required rank {n} tensor to use {'channels_last' if n == 4 else 'channels_last_3d'}"
                                  " format")
    physical = (0,) + tuple(range(2, n)) + (1,)            # N, (D,) H, W, C
    data = fill(tuple(shape[d] for d in physical), np_dtype)
    return data.transpose(np.argsort(physical))


_AMBIGUOUS = "The tensor does not have unique dim order, or cannot map to exact one of the given memory formats."


def dim_order(shape, strides, ambiguity_check=False):
    """``Tensor.dim_order`` as torch/_tensor.py computes it (torch._prims_common's logical-to-physical
    permutation, with its ambiguity checks)."""
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(isinstance(f, memory_format) for f in ambiguity_check):
            raise errors.TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    valid = ambiguity_check if isinstance(ambiguity_check, list) else []
    check_multiple = ambiguity_check if isinstance(ambiguity_check, bool) else True
    multiple = any(a == b for a, b in zip(strides, strides[1:])) or any(s == 1 for s in shape)
    unique_format = sum(1 for f in valid if is_contiguous_for(shape, strides, f)) == 1
    if check_multiple and multiple and not unique_format:
        raise errors.RuntimeError(_AMBIGUOUS)
    ndim = len(shape)
    if ndim == 0:
        return ()
    if ndim == 1:
        return (0,)
    contiguous = is_contiguous_for(shape, strides, contiguous_format)
    last = is_contiguous_for(shape, strides, channels_last)
    if contiguous and not last:
        return tuple(range(ndim))
    if last and not contiguous:
        return (0, *range(2, ndim), 1)

    def ge(a, b):
        if b == 0:
            return True
        if a == 0:
            return False
        return a >= b or a % b == 0

    def should_swap(a, b):
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if ge(shape[b], shape[a]) else 1
        if ge(sb, sa):
            return -1
        if ge(sa, sb):
            return 1
        return 0

    perm = reorder(reversed(range(ndim)), should_swap)      # (TensorIterator's insertion sort)
    if ambiguity_check:
        for i in range(ndim - 1):
            if should_swap(perm[i], perm[i + 1]) != -1:
                raise errors.RuntimeError(_AMBIGUOUS)
    return tuple(reversed(perm))
