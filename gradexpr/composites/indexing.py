"""The indexing engine: ``t[index]`` and ``t[index] = value`` with basic and advanced indices, as
views where PyTorch makes views, and the scatter helpers backward formulas use.
"""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import ops as D
from .. import dtypes, errors, limits
from ..forward_ad import ACTIVE as _DUAL_LEVEL
from ..graph import _grad_enabled
from ..inplace_engine import check_inplace, check_writeable, write_inplace
from ..op import apply, bump_version
from ..tensor import Tensor
from ..zero_tensor import LIVE as _ZERO_TENSORS, check_mutable, is_zero
from .arguments import _is_tensor, _scalar
from .conversion import to
from .creation import tensor
from .inplace import copy_
from .shape import expand, view


_INT_KINDS = "iu"


def _normalise_index(t: Tensor, index):
    """PyTorch's indexing as one NumPy index (checked as PyTorch checks it), and whether it has tensor
    (advanced) parts."""
    if not t._data.ndim and not isinstance(index, tuple):
        # a lone int or slice on a 0-d tensor: checked as applySelect / applySlice check it
        if isinstance(index, numbers.Integral) and not isinstance(index, bool):
            if index == 0:
                raise errors.IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                        "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            raise errors.IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
        if isinstance(index, slice):
            raise errors.IndexError("slice() cannot be applied to a 0-dim tensor.")
    if not isinstance(index, tuple):
        index = (index,)
    out, advanced = [], False
    dim = 0
    n_specified = builtins.sum(1 for i in index if i is not None and i is not Ellipsis and not (
        _is_tensor(i) and i._dtype is dtypes.bool_) and not isinstance(i, bool)) + builtins.sum(
        i._data.ndim for i in index if _is_tensor(i) and i._dtype is dtypes.bool_)
    shape = t._data.shape
    if n_specified > len(shape):
        raise errors.IndexError(f"too many indices for tensor of dimension {len(shape)}")
    for i in index:
        if i is None:
            out.append(None)
        elif i is Ellipsis:
            out.append(Ellipsis)
            dim += len(shape) - n_specified
        elif isinstance(i, bool) or (_is_tensor(i) and i._dtype is dtypes.bool_ and i._data.ndim == 0):
            # a 0-d bool tensor indexes as the Python bool does: a new dim of size 1 or 0
            out.append(builtins.bool(i._data) if _is_tensor(i) else i)
            advanced = True
        elif isinstance(i, numbers.Integral) or (_is_tensor(i) and i._data.ndim == 0 and i._dtype.category == 1):
            i = int(i)
            size = shape[dim]
            if not -size <= i < size:
                raise errors.IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            out.append(i)
            dim += 1
        elif isinstance(i, slice):
            start, stop, step = (_scalar(x) if x is not None else None for x in (i.start, i.stop, i.step))
            if step is not None and step <= 0:
                raise errors.ValueError("step must be greater than zero")
            out.append(slice(start, stop, step))
            dim += 1
        elif _is_tensor(i) or isinstance(i, (list, tuple, np.ndarray)):
            # (an ndarray is an index this module normalised before, e.g. in a backward formula)
            arr = i._data if _is_tensor(i) else i if isinstance(i, np.ndarray) else np.asarray(tensor(list(i))._data)
            if arr.dtype.kind == "b":
                for k, (ms, ts_) in enumerate(zip(arr.shape, shape[dim:dim + arr.ndim])):
                    if ms != ts_:
                        raise errors.IndexError(f"The shape of the mask {list(arr.shape)} at index {k} does not match "
                                                f"the shape of the indexed tensor {list(shape)} at index {dim + k}")
                dim += arr.ndim
            elif arr.dtype.kind in _INT_KINDS:
                size = shape[dim]
                if arr.size and (arr.max() >= size or arr.min() < -size):
                    bad = int(arr[(arr >= size) | (arr < -size)].ravel()[0])
                    raise errors.IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
                dim += 1
            else:
                raise errors.IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            advanced = True
        else:
            raise errors.IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                                    "are valid indices (got " + type(i).__name__ + ")")
    return tuple(out), advanced


_ALL = slice(None)


def _view_steps(t, basic, lone=False):
    """The basic part of an index (ints, slices, None, ...) applied as PyTorch's ``applySlicing``
    applies it: one view op per step, each its own node (``x[0, 1:]`` is SliceBackward0 over
    SelectBackward0), a slice over a whole dimension skipped unless it is the ``lone`` index
    (``x[:]`` records SliceBackward0); ``t`` itself when no step applies."""
    ndim = t._data.ndim
    shape = t._data.shape
    skipped = ndim - builtins.sum(1 for i in basic if i is not None and i is not Ellipsis)
    out, dim, source_dim = t, 0, 0      # dim: in the result so far; source_dim: in t
    for i in basic:
        if i is None:
            out = apply(D.GETITEM["UnsqueezeBackward0"], (out,), {"index": (_ALL,) * dim + (None,)})
            dim += 1
        elif i is Ellipsis:
            dim += skipped
            source_dim += skipped
        elif isinstance(i, slice):
            if lone or i.indices(shape[source_dim]) != (0, shape[source_dim], 1):
                out = apply(D.GETITEM["SliceBackward0"], (out,), {"index": (_ALL,) * dim + (i,)})
            dim += 1
            source_dim += 1
        else:
            out = apply(D.GETITEM["SelectBackward0"], (out,), {"index": (_ALL,) * dim + (i,)})
            source_dim += 1
    return out


_NO_BYTES = np.dtype([])


def getitem(self, index):
    idx, advanced = _normalise_index(self, index)
    if not advanced:
        out = _view_steps(self, idx, lone=not isinstance(index, tuple))
        # PyTorch's x[...] / x[:, :] is a new view all the same: an alias
        return out if out is not self else apply(D.GETITEM["AliasBackward0"], (self,), {"index": (Ellipsis,)})
    # As PyTorch: the basic part of the index (ints, slices, None) first, as views; then the tensor
    # indices on the last view. (NumPy would broadcast an int with the tensor indices, which moves the
    # result's dimensions when a slice stands between them: x[0, :, [0, 1]].)
    basic, tensors = _split_index(self, idx)
    source = _view_steps(self, basic)
    # the result's shape from NumPy's own indexing rules, on an array of zero-byte elements
    # (nothing is allocated, however large the result would be)
    limits.check_elements(np.empty(source._data.shape, dtype=_NO_BYTES)[tensors].shape)
    return apply(D.GETITEM["IndexBackward0"], (source,), {"index": tensors})


def _index_put_(self, index, values, accumulate=False):
    return apply(D.index_put, (self, values), {"index": index, "accumulate": accumulate})


def _refuse_zero_tensor(self, idx, advanced, value):
    """``t[index] = value`` on a ZeroTensor, in the words of the op PyTorch's setitem reaches: copy_ where the
    value is copied into the view (a value that is not 0-d, or a 0-d view), else fill_ or index_put_."""
    copies = not advanced and (getattr(value, "ndim", 0) > 0 or np.ndim(self._data[idx]) == 0)
    check_mutable(self, copy=copies)


def setitem(self, index, value):
    """``t[index] = value`` in place, composed as PyTorch composes it (so the same nodes are recorded):
    the basic part of the index (ints, slices, None, ...) takes a view of ``t``; without tensor indices
    the value is then copied into that view (``copy_``, ``fill_`` for a 0-d value, an ``expand`` first
    when the shapes differ), with them it is put there (``index_put_``). A view changed in place gives
    its base a ``CopySlices`` node (see op.write_inplace)."""
    if index is False:
        return                                   # PyTorch: t[False] = v assigns nothing
    idx, advanced = _normalise_index(self, index)
    if _ZERO_TENSORS and is_zero(self):
        _refuse_zero_tensor(self, idx, advanced, value)
    tracked = _grad_enabled.get() and self.requires_grad
    if not tracked and type(value) in (float, int, bool) and not _DUAL_LEVEL:     # (a dual's tangent changes too)
        # a number where nothing is recorded: one NumPy assignment (it selects the same elements,
        # and casts as PyTorch casts the number to the tensor's dtype)
        check_writeable(self)
        self._data[idx] = value
        bump_version(self)
        return
    v = _setitem_value(self, value)
    basic, advanced = _split_index(self, idx)
    if not (tracked or (_grad_enabled.get() and v._requires_grad) or _DUAL_LEVEL):
        try:
            if _setitem_untracked(self, basic, advanced, v):
                return
        except ValueError:
            pass                                 # shapes that do not fit: the tracked path words the error
    target = self
    view_arr = self._data[basic]
    if not (view_arr.shape == self._data.shape and view_arr.strides == self._data.strides):
        target = apply(D.GETITEM["SliceBackward0"], (self,), {"index": basic})
    if advanced is None:
        _copy_to(target, v)
    else:
        _index_put_inplace(target, advanced, v)


def _setitem_value(self, value):
    """The assigned value as a tensor: a Python number becomes a 0-d tensor of ``self``'s dtype."""
    if _is_tensor(value):
        return value
    if isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, complex):
        return Tensor._make(np.array(value).astype(self._dtype.np), self._dtype)
    from ..graph import _TYPE_STRING
    raise errors.TypeError(f"can't assign a {type(value).__name__} to a {_TYPE_STRING[self._dtype.name]}")


def _split_index(t, idx):
    """A normalised index as PyTorch applies it: (the NumPy basic index that makes the view, the index of
    that view's dimensions by tensors, or None when there is none)."""
    ndim = t._data.ndim
    consumed = builtins.sum(1 if not isinstance(i, np.ndarray) or i.dtype.kind != "b" else i.ndim
                        for i in idx if i is not None and i is not Ellipsis and not isinstance(i, bool))
    basic, advanced, any_tensor = [], [], False
    for i in idx:
        if i is None:
            basic.append(None)
            advanced.append(slice(None))
        elif i is Ellipsis:
            basic.append(Ellipsis)
            advanced.extend([slice(None)] * (ndim - consumed))
        elif isinstance(i, bool):               # True/False: a new dimension, indexed by [0] or by []
            basic.append(None)
            advanced.append(np.zeros(1 if i else 0, np.int64))
            any_tensor = True
        elif isinstance(i, slice):
            basic.append(i)
            advanced.append(slice(None))
        elif isinstance(i, np.ndarray):
            basic.extend([slice(None)] * (i.ndim if i.dtype.kind == "b" else 1))
            advanced.append(i)
            any_tensor = True
        else:
            basic.append(int(i))
    while basic and basic[-1] == slice(None):
        basic.pop()
    if not builtins.any(i is Ellipsis for i in basic):
        basic.append(Ellipsis)                  # NumPy then always returns a view, never a scalar
    return tuple(basic), (tuple(advanced) if any_tensor else None)


def _setitem_untracked(self, basic, advanced, v):
    """``setitem`` when nothing is recorded: NumPy assignment, same steps (False: take the tracked path)."""
    src = v._data
    if src.dtype != self._data.dtype:
        if advanced is not None and not (src.ndim == 0 and _mask_fill(advanced)):
            return False                         # index_put_ refuses mixed dtypes: the tracked path says so
        src = src.astype(self._dtype.np)
    if not self._data.flags.writeable:
        return False
    target = self._data[basic]
    if advanced is None:
        if target.shape != src.shape and src.ndim:
            np.broadcast_to(_strip_leading_ones(src), target.shape)    # ValueError when PyTorch refuses
        target[...] = src
    else:
        target[advanced] = _strip_leading_ones(src)
    bump_version(self)
    return True


def _strip_leading_ones(a):
    k = 0
    while k < a.ndim - 1 and a.shape[k] == 1:
        k += 1
    return a.reshape(a.shape[k:]) if k else a


def _mask_fill(advanced):
    """Whether an index is one boolean mask (then PyTorch fills with a 0-d value of any dtype)."""
    arrays = [a for a in advanced if isinstance(a, np.ndarray)]
    return len(arrays) == 1 and arrays[0].dtype.kind == "b"


def _copy_to(dst, src):
    """PyTorch's ``copy_to`` of indexing: ``dst`` is ``t`` itself or a view of it."""
    if dst._data.shape == src._data.shape:
        copy_(dst, src)
        return
    if src._data.ndim == 0:
        _fill_with_tensor(dst, src)
        return
    stripped = _strip_leading_ones(src._data).shape
    if stripped != src._data.shape:
        src = view(src, stripped)
    if src._data.shape != dst._data.shape:
        src = expand(src, dst._data.shape)
    copy_(dst, src)


def _fill_with_tensor(dst, value):
    """``dst.fill_(value)`` for a 0-d tensor value (``FillBackward3`` whenever it is recorded)."""
    check_inplace(dst, (value,))
    if (_grad_enabled.get() and (dst._requires_grad or value._requires_grad)) or _DUAL_LEVEL:
        write_inplace(dst, apply(D.fill_tensor_inplace, (dst, value)))
        return
    check_writeable(dst)
    dst._data[...] = value._data.astype(dst._dtype.np, copy=False)
    bump_version(dst)


def _index_put_inplace(dst, index, values):
    """``dst.index_put_(index, values)`` with PyTorch's checks, as indexing calls it."""
    if values._dtype is not dst._dtype:
        if values._data.ndim == 0 and _mask_fill(index):
            values = to(values, dst._dtype)
        else:
            raise errors.RuntimeError(f"Index put requires the source and destination dtypes match, got "
                                      f"{dst._dtype._scalar_name} for the destination and "
                                      f"{values._dtype._scalar_name} for the source.")
    stripped = _strip_leading_ones(values._data).shape
    if stripped != values._data.shape:
        values = view(values, stripped)
    target = np.empty(dst._data.shape, dtype=np.bool_)[index].shape
    try:
        fits = np.broadcast_shapes(values._data.shape, target) == tuple(target)
    except ValueError:
        fits = False
    if not fits:
        raise errors.RuntimeError(f"shape mismatch: value tensor of shape {list(values._data.shape)} cannot be "
                                  f"broadcast to indexing result of shape {list(target)}")
    check_inplace(dst, (values,))
    if (_grad_enabled.get() and (dst._requires_grad or values._requires_grad)) or _DUAL_LEVEL:
        write_inplace(dst, apply(D.index_put, (dst, values), {"index": index, "accumulate": False}))
        return
    check_writeable(dst)
    dst._data[index] = values._data
    bump_version(dst)


def _slice_scatter(self, src, dim, start, end, step=1):
    return apply(D.slice_scatter, (self, src), {"dim": dim, "start": start, "end": end, "step": step})


def _narrow_step(self, dim, start, end, step=1):
    idx = (slice(None),) * (dim % self._data.ndim) + (slice(start, end, step),)
    return getitem(self, idx)


def _select_scatter(self, src, dim, index):
    return apply(D.select_scatter, (self, src), {"dim": dim, "index": index})


def _diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    return apply(D.diagonal_scatter, (self, src), {"offset": offset, "dim1": dim1, "dim2": dim2})
