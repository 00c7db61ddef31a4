"""Indexing: index_select, gather/scatter, getitem/index_put, views changed in place."""
from __future__ import annotations

import numpy as np

from .. import dtypes, errors
from .common import _F, maybe_multiply
from .common import _apply
from ..graph import NOT_IMPLEMENTED_NODE
from ..tensor import Tensor
from .registry import TABLE, NotDifferentiable, Op, batch_rules, op


index_select = op("index_select", "IndexSelectBackward0", lambda a, index, dim: np.take(a, index, axis=dim),
                  ("self", "index"),
                  self=lambda grad, self_shape, dim, index: grad.new_zeros(self_shape).index_add(dim, index, grad),
                  dtype="first", domain="index", forward_ad="linear")
index_add = op("index_add", "IndexAddBackward0", lambda a, index, src, dim, alpha=1: _index_add(a, index, src, dim,
                                                                                                  alpha),
               ("self", "index", "source"),
               self=lambda grad: grad,
               # (expanded to the source: a 0-d source of a 0-d self; the node keeps the source, as PyTorch's;
               # alpha multiplies only when it is not 1: ATen's maybe_multiply)
               source=lambda grad, index, source, dim, alpha=1: maybe_multiply(
                   grad.index_select(dim, index).expand_as(source), alpha),
               dtype="first", domain="index", forward_ad="linear")


def _index_add(a, index, src, dim, alpha):
    out = a.copy()
    moved = np.moveaxis(out, dim, 0)
    np.add.at(moved, index, np.moveaxis(src * alpha if alpha != 1 else src, dim, 0).astype(a.dtype))
    return out


def _gather(a, index, dim):
    if a.ndim == 0:
        return a.copy() if index.ndim == 0 else np.full(index.shape, a[()], a.dtype)
    # the index may be smaller than the input in the other dimensions: gather from that corner
    corner = tuple(slice(None) if k == dim % a.ndim else slice(0, n) for k, n in enumerate(index.shape))
    return np.take_along_axis(a[corner], index, axis=dim)


gather = op("gather", "GatherBackward0", _gather, ("self", "index"),
            self=lambda grad, self, dim, index: grad.new_zeros(self.shape).scatter_add(dim, index, grad),
            dtype="first", domain="index", forward_ad="linear")


def _scatter(a, index, src, dim):
    """``a`` with ``src[i][j]`` written at ``[index[i][j]][j]`` (dim 0), for every position of ``index``:
    the index may be smaller than ``a`` and ``src`` in the other dims (their corner is used)."""
    out = a.copy()
    if a.ndim == 0:
        if index.size:
            out[()] = src if np.ndim(src) == 0 else src.reshape(-1)[0]
        return out
    if np.ndim(src) and src.shape != index.shape:
        src = src[tuple(slice(0, n) for n in index.shape)]
    at = list(np.indices(index.shape, sparse=True))
    at[dim % a.ndim] = index
    out[tuple(at)] = src
    return out


def _scatter_add(a, index, src, dim):
    out = a.copy()
    if a.ndim == 0:         # (a 0-d input and index: the one value added, if the index has one)
        if index.size:
            out[()] += src if np.ndim(src) == 0 else src.reshape(-1)[0]
        return out
    moved = np.moveaxis(out, dim, -1)
    idx = np.moveaxis(index, dim, -1)
    s = np.moveaxis(src[tuple(slice(0, n) for n in index.shape)], dim, -1)
    grids = np.indices(idx.shape[:-1])
    for k in range(idx.shape[-1]):
        sel = tuple(g for g in grids) + (idx[..., k],)
        np.add.at(moved, sel, s[..., k])
    return out


scatter = op("scatter", "ScatterBackward0", _scatter, ("self", "index", "src"),
             self=lambda grad, index, dim: grad.scatter(dim, index, 0.0),
             src=lambda grad, index, dim: grad.gather(dim, index),
             dtype="first", domain="index", forward_ad="linear")
scatter_value = op("scatter_value", "ScatterBackward1",
                   lambda a, index, dim, value: _scatter(a, index, np.asarray(value, a.dtype), dim),
                   ("self", "index"),
                   self=lambda grad, index, dim: grad.scatter(dim, index, 0.0), dtype="first", domain="index",
                   forward_ad="transpose")
def _scatter_reduce(a, index, src, dim, reduce):
    """``a`` with ``src[i][j]`` added to (``reduce='add'``) or multiplied into (``'multiply'``) the place
    at ``[index[i][j]][j]`` (dim 0), position after position as ATen's serial loop does, so that
    repeated indices accumulate; ``src`` may be a number (scatter.value_reduce)."""
    out = a.copy()
    combine = np.add if reduce == "add" else np.multiply
    if np.ndim(src) and src.shape != index.shape:
        src = src[tuple(slice(0, n) for n in index.shape)]
    src = np.broadcast_to(np.asarray(src, a.dtype), index.shape)
    if a.ndim == 0:
        for v in src.reshape(-1):
            out[()] = combine(out[()], v)
        return out
    at = list(np.indices(index.shape, sparse=True))
    at[dim % a.ndim] = index
    combine.at(out, tuple(np.broadcast_arrays(*at)), src)
    return out


# scatter(..., reduce=) has no derivative in PyTorch: its node is NotImplemented
_SCATTER_NO_GRAD = NotDifferentiable("derivative for aten::scatter is not implemented")
scatter_reduce_src = op("scatter_reduce_src", NOT_IMPLEMENTED_NODE, _scatter_reduce, ("self", "index", "src"),
                        self=_SCATTER_NO_GRAD, src=_SCATTER_NO_GRAD, dtype="first", domain="index")
scatter_reduce_value = op("scatter_reduce_value", NOT_IMPLEMENTED_NODE,
                          lambda a, index, dim, value, reduce: _scatter_reduce(a, index, value, dim, reduce),
                          ("self", "index"), self=_SCATTER_NO_GRAD, dtype="first", domain="index")
scatter_add = op("scatter_add", "ScatterAddBackward0", _scatter_add, ("self", "index", "src"),
                 self=lambda grad: grad,
                 src=lambda grad, index, dim: grad.gather(dim, index),
                 dtype="first", domain="index", forward_ad="linear")
# ------------------------------------------------------------ indexing
def _getitem(a, index):
    out = a[index]
    if type(out) is not np.ndarray:      # NumPy gives a scalar for a full integer index: take a 0-d view
        out = a[index + (Ellipsis,)]
    return out


def _index_forward(a, index):
    """``a[index]`` for tensor (advanced) indices, laid out in memory as PyTorch's index kernel lays
    out its result, so ``is_contiguous()``, ``stride()`` and ``view`` answer as there."""
    out = a[index]
    order = _index_memory_order(a, index, out.shape)
    if order is None:
        out = np.ascontiguousarray(out)
        row_major = _row_major_strides(out)
        # NumPy calls an array contiguous whatever the strides of its size-1 dimensions; PyTorch
        # gives them the row-major value, which stride() shows
        return out if out.strides == row_major else np.lib.stride_tricks.as_strided(out, strides=row_major)
    buf = np.empty([out.shape[d] for d in order], out.dtype)
    laid = buf.transpose([order.index(d) for d in range(out.ndim)])
    laid[...] = out
    return laid


def _row_major_strides(a):
    strides, step = [], a.itemsize
    for n in reversed(a.shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _index_memory_order(a, index, shape):
    """The result's dimensions from slowest to fastest in memory, None for row-major order.

    ATen's index runs a TensorIterator over the source restrided to the result's shape (stride 0
    along the indexed dimensions) and the broadcast index tensors; the result, allocated by the
    iterator, takes the order its ``reorder_dimensions`` finds: an insertion sort of the
    dimensions by the operands' strides, an operand skipped where either stride is 0, equal
    strides broken by the smaller size first.
    """
    if len(shape) < 2:
        return None
    indexed, indices, d = [], [], 0
    for i in index:
        if isinstance(i, np.ndarray):
            if i.dtype.kind == "b":
                indexed.extend(range(d, d + i.ndim))
                indices.extend(i.nonzero())
                d += i.ndim
            else:
                indexed.append(d)
                indices.append(i)
                d += 1
        elif i is not None:
            d += 1
    if not indexed:
        return None
    bshape = np.broadcast_shapes(*(i.shape for i in indices))
    if indexed == list(range(indexed[0], indexed[0] + len(indexed))):
        before, after = list(range(indexed[0])), list(range(indexed[-1] + 1, a.ndim))
    else:                                       # apart: the index dimensions come first
        before, after = [], [k for k in range(a.ndim) if k not in indexed]
    width = len(bshape)
    source = ([a.strides[k] for k in before] + [0] * width + [a.strides[k] for k in after])
    operands = [source]
    for i in indices:
        # each index viewed as (1, ..., *bshape, ..., 1); a dimension it broadcasts along has stride 0
        st = np.broadcast_to(i, bshape).reshape((1,) * len(before) + bshape + (1,) * len(after)).strides
        operands.append([s if n == 1 or k in range(len(before), len(before) + width) else 0
                         for k, (s, n) in enumerate(zip(st, shape))])

    def should_swap(d0, d1):
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    ndim = len(shape)
    from ..reduction_order import reorder
    order = reorder(range(ndim - 1, -1, -1), should_swap)[::-1]
    return None if order == list(range(ndim)) else order


def _index_backward(grad, self_shape, index):
    """FunctionsManual's index_backward: ``_index_put_impl_(zeros, indices, grad, accumulate=true)``
    (IndexPutImplBackward0 under create_graph)."""
    from ..op import apply
    return apply(index_put_impl, (grad.new_zeros(self_shape), grad), {"index": index, "accumulate": True})


def _view_backward(grad, self_shape, index):
    # a basic index reaches each element once: PyTorch copies the gradient into zeros (slice_backward,
    # select_backward), so a -0 stays -0 where accumulating (0 + -0) would give +0
    single = _one_view(index)
    if single is not None:          # (one int or one slice: the node of the one view op PyTorch records)
        dim, item = single
        if isinstance(item, slice):
            return _apply(TABLE["slice_backward"], (grad,), {
                "input_sizes": tuple(self_shape), "dim": dim, "start": item.start, "end": item.stop,
                "step": 1 if item.step is None else item.step})
        return _apply(TABLE["select_backward"], (grad,), {"input_sizes": tuple(self_shape), "dim": dim,
                                                           "index": item})
    return grad.new_zeros(self_shape)._index_put(index, grad)


def _one_view(index):
    """(dim, int or slice) when ``index`` does one thing on one dim (other entries ``:``), else None."""
    found = None
    for dim, item in enumerate(index):
        if isinstance(item, slice) and item == slice(None):
            continue
        if found is not None or not isinstance(item, (int, slice)) or isinstance(item, bool):
            return None
        found = (dim, item)
    return found


getitem_basic = op("getitem_basic", "SliceBackward0", _getitem,
                   self=_view_backward, dtype="first", view=True, domain="real", forward_ad="linear")


def _named(base, node, view, forward=None, grads=None):
    # (a view keeps vmap's rule for basic indexing: t[1:], t[0] are views of the batch, which an in-place
    # change through them must reach; a loop would stack copies)
    return Op(base.name + ":" + node, node, forward or base.forward, base.inputs, grads or base.formulas,
              dtype=base.dtype, view=view, domain=base.domain, forward_ad=base.tangent, batch="index" if view else None)


GETITEM = {name: _named(getitem_basic, name, True)
           for name in ("SliceBackward0", "SelectBackward0", "UnsqueezeBackward0")}
# t[...] is alias(t): its gradient is grad itself (derivatives.yaml's alias entry)
GETITEM["AliasBackward0"] = _named(getitem_basic, "AliasBackward0", True, grads={"self": lambda grad: grad})
GETITEM["IndexBackward0"] = _named(getitem_basic, "IndexBackward0", False, _index_forward, {"self": _index_backward})
TABLE["index"] = GETITEM["IndexBackward0"]


def _index_put(a, values, index, accumulate=False):
    out = a.copy()
    if accumulate:
        np.add.at(out, index, values)
    else:
        out[index] = values
    return out


index_put = op("index_put", "IndexPutBackward0", _index_put, ("self", "values"),
               self=lambda grad, index, accumulate=False: grad if accumulate else grad._index_put(index, 0.0),
               values=lambda grad, index: grad[index],
               dtype="first", domain="index", forward_ad="linear")
# ATen's _index_put_impl_, the in-place put index's backward calls: index_put's formulas, its own node
index_put_impl = op("index_put_impl", "IndexPutImplBackward0", _index_put, ("self", "values"),
                    self=index_put.formulas["self"], values=index_put.formulas["values"],
                    dtype="first", domain="index", forward_ad="linear")


def _masked_select(a, mask):
    a, mask = np.broadcast_arrays(a, mask)
    return a[mask]


def _masked_select_grad(grad, self, mask):
    """The selected elements' gradients scattered into zeros of the broadcast shape (the engine sums
    them to the input's shape), as ATen's masked_select_backward: a masked_scatter node under create_graph."""
    from ..op import apply
    shape = np.broadcast_shapes(self.shape, mask.shape)
    return apply(masked_scatter, (grad.new_zeros(shape), mask.expand(shape), grad))


masked_select = op("masked_select", "MaskedSelectBackward0", _masked_select, ("self", "mask"),
                   self=_masked_select_grad, dtype="first", broadcast=False, domain="real", forward_ad="linear")


def _masked_scatter(a, mask, source):
    """``a`` with the places ``mask`` marks filled, in order, by the first elements of ``source``."""
    a, mask = np.broadcast_arrays(a, mask)
    out = a.copy()
    out[mask] = source.reshape(-1)[:int(mask.sum())]
    return out


def _masked_scatter_backward(g, mask, sizes):
    """ATen's masked_scatter_backward: the gradient at the masked places, in order, padded with zeros
    to the source's size (the source elements never used get none)."""
    picked = np.broadcast_to(g, mask.shape)[mask]
    out = np.zeros(int(np.prod(sizes, dtype=np.int64)), g.dtype)
    out[:picked.size] = picked
    return out.reshape(sizes)


# masked_scatter_backward(grad_output, mask, sizes): its own node under create_graph, whose gradient puts
# the incoming gradient back at the masked places (a masked_scatter of it into zeros)
masked_scatter_backward = op("masked_scatter_backward", "MaskedScatterBackwardBackward0", _masked_scatter_backward,
                             ("grad_output", "mask"),
                             grad_output=lambda grad, mask: apply_masked_scatter(grad.new_zeros(mask.shape), mask,
                                                                                  grad),
                             dtype="first", broadcast=False, domain="real", forward_ad="linear")


def _masked_scatter_source_grad(grad, mask, source_shape):
    return _apply(masked_scatter_backward, (grad, mask), {"sizes": tuple(source_shape)})


def apply_masked_scatter(self, mask, source):
    from ..op import apply
    return apply(masked_scatter, (self, mask, source))


def _check_masked_scatter(values, inplace=False):
    """ATen's checks of masked_scatter, in its order: the dtypes of self and source, the mask broadcast
    with self (out of place both expand; in place the mask expands to self, with expand's errors), a
    bool mask, enough source elements for the mask's ones."""
    from ..op import _check_broadcast
    self, mask, source = values["self"], values["mask"], values["source"]
    if self._dtype is not source._dtype:
        raise errors.RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                                  f"{self._dtype._scalar_name} and {source._dtype._scalar_name}")
    if inplace and mask._data.shape != self._data.shape:
        mask = mask.expand(self._data.shape)
    _check_broadcast([mask._data, self._data])
    if mask._dtype is not dtypes.bool_:
        raise errors.RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                                  f"{mask._dtype._scalar_name}")
    shape = np.broadcast_shapes(self._data.shape, mask._data.shape)
    if int(np.count_nonzero(np.broadcast_to(mask._data, shape))) > source._data.size:
        raise errors.RuntimeError("Number of elements of source < number of ones in mask")
    if mask._data.shape != shape:
        mask = mask.expand(shape)
    return (self, mask, source), {}


# (``mask`` is not differentiable; a ``self`` broadcast by the mask gets its gradient summed back)
masked_scatter = op("masked_scatter", "MaskedScatterBackward0", _masked_scatter, ("self", "mask", "source"),
                    self=lambda grad, mask: grad.masked_fill(mask, 0.0),
                    source=_masked_scatter_source_grad,
                    dtype="first", broadcast=False, domain="real", forward_ad="linear", prepare=_check_masked_scatter,
                    schema="masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
                    variants="function method inplace")
# ------------------------------------------------------------ views changed in place
# What a view becomes after its memory was changed in place (see op.py): the view taken afresh
# from its base, whatever chain of view ops made it. ``geometry`` (op.ViewGeometry) gives the flat
# position in the base of each element of the view.
def _as_strided(a, geometry):
    return a.reshape(-1)[geometry.index()]


def _as_strided_grad(grad, self_shape, geometry):
    size = int(np.prod(self_shape, dtype=np.int64))
    return grad.new_zeros(size)._index_put((geometry.index(),), grad, accumulate=True).view(self_shape)


as_strided = op("as_strided", "AsStridedBackward0", _as_strided, self=_as_strided_grad, dtype="first",
                domain="real", forward_ad="transpose")


def _copy_slices_self(grad, geometry, view_grad=None):
    """The base's gradient: ``grad`` with the view's part replaced by the gradient of the view's old
    value (zero when the in-place op made the new value without reading the old one)."""
    flat = grad.reshape(-1)
    return flat._index_put((geometry.index(),), 0.0 if view_grad is None else view_grad).view(grad.shape)


def _copy_slices_values(grad, geometry):
    """The part of the base's gradient that falls on the view."""
    return grad.reshape(-1)[geometry.index()]


def _copy_slices_put(a, values, geometry):
    out = a.copy()
    out.reshape(-1)[geometry.index()] = values
    return out


class CopySlicesOp(Op):
    """PyTorch's ``CopySlices``: the base's node after an in-place op on one of its views.

    Its inputs are the base's old value and the in-place op's other inputs; ``fn`` (in the
    node's saved context) is the op's own node, whose input 0 was the view. Backward hands ``fn``
    the view's part of the gradient, puts ``fn``'s gradient for the view back into that part
    (the rest of the base passes through), and gives the other inputs what ``fn`` gives them.
    When the op was recorded as several nodes, ``fn`` is None and the node's second input is the
    view's new value (whose history reaches the view's old one)."""

    __slots__ = ()

    def backward(self, ctx, needed):
        grad, geometry, fn = ctx["grad"], ctx["geometry"], ctx["fn"]
        if fn is not None and _records_graph():
            recorded = _copy_slices_recorded(grad, geometry, fn, needed)
            if recorded is not None:
                return recorded
        values_grad = _copy_slices_values(grad, geometry)
        if fn is None:
            view_grad, rest = None, [values_grad if needed[1] else None]
        else:
            view_grad, *rest = fn._input_grads(values_grad, needed)
        base_grad = _copy_slices_self(grad, geometry, view_grad) if needed[0] else None
        return [base_grad, *rest]


def _records_graph():
    """Whether a backward formula runs under create_graph (and not under vmap or a dual level, whose
    tensors are not plain arrays to take strided views of)."""
    from .. import forward_ad
    from ..grad_mode import VMAP_LEVELS
    from ..graph import is_grad_enabled
    return is_grad_enabled() and not VMAP_LEVELS and not forward_ad.ACTIVE


def _copy_slices_recorded(grad, geometry, fn, needed):
    """CopySlices' backward as PyTorch's ``CopySlices::apply_impl`` runs it, in Tensor ops so that
    create_graph records its nodes: ``grad`` copied into a new tensor (CopyBackwards), the view's part
    taken as a strided view of it (AsStridedBackward0) and cloned (CloneBackward0) for ``fn``, and
    ``fn``'s gradient for the view's old value copied back into that view (CopySlices). None where
    the view is no strided view of the base's memory (the index formulas then serve)."""
    from ..op import strided_view_of
    result = grad.new_empty(grad.shape)
    result.copy_(grad)
    grad_slice = strided_view_of(result, geometry)
    if grad_slice is None:
        return None
    view_grad, *rest = fn._input_grads(grad_slice.clone(), needed)
    if not needed[0] or view_grad is None:
        return [None, *rest]
    grad_slice.copy_(view_grad)
    return [result, *rest]


copy_slices = CopySlicesOp("copy_slices", "torch::autograd::CopySlices", _copy_slices_put, ("self", "values"),
                           {"self": _copy_slices_self, "values": _copy_slices_values}, dtype="first",
                           domain="index")
TABLE["copy_slices"] = copy_slices


# ============================================================ vmap's batch rules (batching.py)
batch_rules("index", "getitem_basic")
batch_rules("dims", "index_select")


# ============================================================ index_fill (trace's gradient)
def _index_fill(a, value, dim, index):
    """``a.index_fill(dim, index, value)``: the slices ``index`` along ``dim`` set to ``value``."""
    out = a.copy()
    out[(slice(None),) * dim + (index,)] = value
    return out


def _index_filled_with_zero(grad, dim, index):
    """index_fill's gradient for self: ``grad.index_fill(dim, index, 0)`` (IndexFillBackward0)."""
    return _apply(index_fill_scalar, (grad,), {"value": 0, "dim": dim, "index": index})


def _index_fill_value_grad(grad, dim, index):
    """index_fill's gradient for a tensor value: ``grad.index_select(dim, unique(index)).sum()``."""
    return grad.index_select(dim, Tensor._make(np.unique(index))).sum()


# ATen's index_fill.int_Scalar / index_fill.int_Tensor as trace's gradient calls them (no public names here)
index_fill_scalar = op(
    "index_fill_scalar", "IndexFillBackward0", lambda a, value, dim, index: _index_fill(a, value, dim, index),
    self=_index_filled_with_zero, dtype="first", domain="real",
    forward_ad=lambda self_t, dim, index: _index_filled_with_zero(self_t, dim, index))
index_fill_tensor = op(
    "index_fill_tensor", "IndexFillBackward1", _index_fill, ("self", "value"),
    self=_index_filled_with_zero, value=_index_fill_value_grad, dtype="first", broadcast=False, domain="real",
    forward_ad="linear")


def trace_backward(grad, sizes):
    """FunctionsManual's trace_backward_symint: zeros of rows·cols elements, every (cols + 1)-th filled
    with grad (index_fill_, IndexFillBackward1), viewed as the matrix."""
    rows, cols = sizes
    flat = _F().zeros(rows * cols, dtype=grad.dtype)
    filled = _apply(index_fill_tensor, (flat, grad), {"dim": 0, "index": np.arange(0, rows * cols, cols + 1)})
    return filled.view(rows, cols)
