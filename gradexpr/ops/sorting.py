"""Sorting and order statistics (sort, topk, kthvalue, median, nanmedian: ATen's Sorting.cpp) and
unique values (torch.unique, unique_consecutive): the entries that order a tensor's values."""
from __future__ import annotations

import numpy as np

from .. import errors
from ..tensor import _wrap_dim
from .registry import NotDifferentiable, batch_rules, op
from .reductions import _check_dims_nonempty, _evenly, _value_selecting_grad


# ============================================================ sorting and order statistics
def _stable_order(a, dim, descending):
    """PyTorch's CPU sort order along ``dim``: stable (ties keep their order), NaN above every number
    (last ascending, first descending)."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        key = np.where(nan, -np.inf, -a)
        moved = np.moveaxis(key, dim, -1)
        order = np.lexsort((moved, ~np.moveaxis(nan, dim, -1)), axis=-1)   # NaN first, then -a ascending
        return np.moveaxis(order, -1, dim)
    return np.argsort(~a if a.dtype.kind in "iu" else ~a.astype(np.int64), axis=dim, kind="stable")


def _sorted(a, dim, descending=False, stable=False):
    order = _stable_order(a, dim, descending).astype(np.int64)
    if not stable:              # std::sort's order of equal values (std_sort.py)
        from ..std_sort import unstable_order
        order = unstable_order(a, dim, descending, order)
    if a.flags.c_contiguous:            # row-major in, row-major out (a permuted input: op.apply lays it out)
        order = np.ascontiguousarray(order)
    return (np.take_along_axis(a, order, axis=dim) if a.ndim else a.copy()), {"indices": order}


def _selected_grad(grad, self_shape, dim, indices):
    return _value_selecting_grad(grad, self_shape, dim, True, indices)


sort = op("sort", "SortBackward0", _sorted, self=_selected_grad, dtype="first", domain="distinct",
          forward_ad="transpose")
sort_stable = op("sort_stable", "SortBackward1", _sorted, self=_selected_grad, dtype="first", domain="distinct",
                 forward_ad="transpose")


def _topk(a, k, dim, largest=True, sorted=True):
    if a.ndim and not 0 <= k <= a.shape[dim]:
        raise errors.RuntimeError("selected index k out of range")
    from ..std_sort import topk_order
    order = topk_order(a, k, dim, largest, sorted, _stable_order(a, dim, largest).astype(np.int64))
    if a.flags.c_contiguous:
        order = np.ascontiguousarray(order)
    return (np.take_along_axis(a, order, axis=dim) if a.ndim else a.copy()), {"indices": order}


topk = op("topk", "TopkBackward0", _topk, self=_selected_grad, dtype="first", domain="distinct",
          forward_ad="transpose")


def _kth(a, k, dim, keepdim=False):
    n = a.shape[dim] if a.ndim else 1
    if not 1 <= k <= n:
        raise errors.IndexError(f"kthvalue(): selected number k out of range for dimension {dim}")
    return _pick(a, dim, keepdim, k - 1, kthvalue=True)


def _pick(a, dim, keepdim, position, kthvalue=False):
    """The element at ``position`` of each sorted slice along ``dim`` (NaN last), and its index."""
    if a.ndim == 0:
        return a.copy(), {"indices": np.zeros((), np.int64)}
    order = _stable_order(a, dim, False)
    if not kthvalue and a.dtype.kind == "f":
        # median: a slice holding NaN has NaN as its median (the first NaN's index)
        nans = np.isnan(a).sum(axis=dim, keepdims=True)
        position = np.where(nans > 0, a.shape[dim] - nans, position)
    else:
        position = np.full(order.shape[:dim % a.ndim] + (1,) + order.shape[dim % a.ndim + 1:], position)
    idx = np.take_along_axis(order, position, axis=dim).astype(np.int64)
    vals = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        idx, vals = np.squeeze(idx, axis=dim), np.squeeze(vals, axis=dim)
    return vals, {"indices": idx}


kthvalue = op("kthvalue", "KthvalueBackward0", _kth,
              self=lambda grad, self_shape, dim, keepdim, indices:
              _value_selecting_grad(grad, self_shape, dim, keepdim, indices),
              dtype="first", domain="distinct", forward_ad="transpose")


def _median_dim(a, dim, keepdim=False):
    _check_dims_nonempty(a, dim, "median")
    n = a.shape[dim] if a.ndim else 1
    return _pick(a, dim, keepdim, (n - 1) // 2)


median_dim = op("median_dim", "MedianBackward1", _median_dim,
                self=lambda grad, self_shape, dim, keepdim, indices:
                _value_selecting_grad(grad, self_shape, dim, keepdim, indices),
                dtype="first", domain="distinct", forward_ad="transpose")


def _median_all(a):
    flat = a.reshape(-1)
    if flat.size == 0:
        return np.array(np.nan, a.dtype) if a.dtype.kind == "f" else np.zeros((), a.dtype)
    if a.dtype.kind == "f" and np.isnan(flat).any():
        return np.array(np.nan, a.dtype)
    return np.sort(flat, kind="stable")[(flat.size - 1) // 2].copy()


median = op("median", "MedianBackward0", _median_all, self=_evenly, dtype="first", domain="distinct",
            forward_ad="transpose")


def _nanmedian_all(a):
    """The lower median of the elements that are not NaN (NaN when there is none)."""
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        return np.array(np.nan, a.dtype) if a.dtype.kind == "f" else np.zeros((), a.dtype)
    return np.sort(flat, kind="stable")[(flat.size - 1) // 2].copy()


def _nth_element_all_equivalent(n):
    """The index ``std::nth_element(first, first, last)`` (libstdc++'s introselect) leaves first when the
    comparator holds for no pair, as ATen's nanmedian comparator for a slice of NaN only: each round
    swaps the middle to the front and partitions by swapping inward; the insertion sort of the last
    three or fewer moves nothing."""
    idx = list(range(n))
    first, last = 0, n
    while last - first > 3:
        mid = first + (last - first) // 2
        idx[first], idx[mid] = idx[mid], idx[first]
        lo, hi = first + 1, last
        while True:
            hi -= 1
            if not lo < hi:
                break
            idx[lo], idx[hi] = idx[hi], idx[lo]
            lo += 1
        last = lo
    return idx[0]


def _nanmedian_dim(a, dim, keepdim=False):
    """Along ``dim``: the lower median of each slice's numbers and its index, as ATen's nth_element over
    (value, index) finds it (ties by index: the stable order); an all-NaN slice gives NaN at the index
    nth_element leaves first among equivalent elements."""
    _check_dims_nonempty(a, dim, "median")
    if a.ndim == 0:
        return a.copy(), {"indices": np.zeros((), np.int64)}
    order = _stable_order(a, dim, False)
    numbers = a.shape[dim] - (np.isnan(a).sum(axis=dim, keepdims=True) if a.dtype.kind == "f" else 0)
    position = np.broadcast_to(np.maximum(numbers - 1, 0) // 2,
                               order.shape[:dim % a.ndim] + (1,) + order.shape[dim % a.ndim + 1:])
    idx = np.take_along_axis(order, position, axis=dim).astype(np.int64)
    if a.dtype.kind == "f":
        idx = np.where(numbers == 0, _nth_element_all_equivalent(a.shape[dim]), idx)
    vals = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        idx, vals = np.squeeze(idx, axis=dim), np.squeeze(vals, axis=dim)
    return vals, {"indices": idx}


def _nanmedian_dim_call(values):
    """``dim`` checked (IndexError out of range) and kept as given, as the node shows it."""
    self = values["self"]
    _wrap_dim(values["dim"], max(self._data.ndim, 1))
    return (self,), {"dim": int(values["dim"]), "keepdim": bool(values["keepdim"])}


nanmedian = op("nanmedian", "NanmedianBackward0", _nanmedian_all, self=_evenly, dtype="first", domain="distinct",
               forward_ad="transpose", schema="nanmedian(Tensor self) -> Tensor", variants="function method")
nanmedian_dim = op("nanmedian_dim", "NanmedianBackward1", _nanmedian_dim,
                   self=lambda grad, self_shape, dim, keepdim, indices:
                   _value_selecting_grad(grad, self_shape, dim, keepdim, indices),
                   dtype="first", domain="distinct", forward_ad="transpose", prepare=_nanmedian_dim_call,
                   schema="nanmedian.dim(Tensor self, int dim, bool keepdim=False, *, Tensor(a!)[]? out=None) -> "
                          "(Tensor values, Tensor indices)",
                   variants="function method")


# ============================================================ unique values (sorted, or of consecutive runs)
def _unique(a, return_inverse=False, return_counts=False, dim=None):
    """ATen's _unique2 / unique_dim on CPU: the distinct values (slices along ``dim``) in ascending (lexicographic)
    order; the index of each input element's (slice's) value and the counts are extras."""
    if dim is None:
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True,
                                            equal_nan=False)       # (each NaN its own value, as ATen's sort)
        inverse = inverse.reshape(a.shape)
    else:
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
        inverse = inverse.reshape(-1)
    return values.astype(a.dtype), {"inverse": inverse.astype(np.int64), "counts": counts.astype(np.int64)}


def _unique_consecutive(a, return_inverse=False, return_counts=False, dim=None):
    """ATen's unique_consecutive: the first value (slice along ``dim``) of each run of equal ones; the run
    each element (slice) belongs to and the runs' lengths are extras."""
    moved = a.reshape(-1, 1) if dim is None else np.moveaxis(a, dim, 0).reshape(a.shape[dim], -1)
    starts = np.ones(moved.shape[0], bool)
    if moved.shape[0]:
        starts[1:] = np.any(moved[1:] != moved[:-1], axis=1)
    runs = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), moved.shape[0]))
    if dim is None:
        values, inverse = a.reshape(-1)[starts], runs.reshape(a.shape)
    else:
        values, inverse = np.compress(starts, a, axis=dim), runs
    return np.ascontiguousarray(values), {"inverse": inverse.astype(np.int64), "counts": counts.astype(np.int64)}


def _not_implemented(name):
    return NotDifferentiable(f"the derivative for '{name}' is not implemented.", not_implemented=True)


unique2 = op("unique2", "Unique2Backward0", _unique, self=_not_implemented("_unique2"), dtype="first", domain="real")
unique_dim = op("unique_dim", "UniqueDimBackward0", _unique, self=_not_implemented("unique_dim"), dtype="first",
                domain="real")
unique_consecutive = op("unique_consecutive", "UniqueConsecutiveBackward0", _unique_consecutive,
                        self=_not_implemented("unique_consecutive"), dtype="first", domain="real")


# ============================================================ vmap's batch rules (batching.py)
batch_rules("reduce", "kthvalue", "median_dim", "nanmedian_dim")
batch_rules("dims", "sort", "sort_stable", "topk")
batch_rules(("reduce_all", "nanmedian_dim"), "nanmedian")
