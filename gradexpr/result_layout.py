"""The memory layout of an op's result, as ATen allocates it.

* Elementwise ops (TensorIterator): NumPy lays a ufunc's result out in C order unless *every*
  operand agrees on another order; PyTorch (``TensorIteratorBase``: ``compute_fast_setup_type``,
  ``reorder_dimensions``, ``allocate_or_resize_outputs``) follows the first input whose strides
  decide: ``a.t() + b`` is laid out like ``a.t()`` (strides ``(1, n)``), ``b + a.t()`` like ``b``.
* Ops that write into ``empty_like(self)`` or a clone of ``self`` (flip, sort, the scatters): the
  first input's layout.
* Every other op (reductions, softmax, matrix products, convolutions, cat, ...): a fresh
  row-major (contiguous) result, whatever layout NumPy's computation left.

The layout shows in ``stride()``/``is_contiguous()``, in which ``view`` succeeds, and in the order
a later reduction adds in (reduction_order.py reads the strides), so the last bit of
``(a.t() + b).sum(0)`` depends on it. op.apply calls :func:`settle` only when an input or the
result is not C-contiguous (with C-contiguous inputs and result every rule gives C order).
"""
from __future__ import annotations

import numpy as np

from .grad_layout import _dense      # PyTorch's is_non_overlapping_and_dense
from .op import row_major_ordered as _row_major_ordered
from .reduction_order import reorder


def _permutation(arrays, shape):
    """``reorder_dimensions``: the output's dims from fastest to slowest. Each pair is ordered by the
    first input whose (non-broadcast) strides differ, or, equal, whose dim sizes do; else kept."""
    ndim = len(shape)
    strides = []
    for a in arrays:
        offset = ndim - a.ndim
        st = [0] * ndim
        for i in range(a.ndim):
            st[offset + i] = 0 if a.shape[i] == 1 and shape[offset + i] != 1 else a.strides[i]
        strides.append(st)

    def should_swap(dim0, dim1):
        for st in strides:
            s0, s1 = st[dim0], st[dim1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    return reorder(range(ndim - 1, -1, -1), should_swap)


def _relaid(out, strides):
    """``out``'s values in a fresh array with byte ``strides`` (a dense layout)."""
    fresh = np.lib.stride_tricks.as_strided(np.empty(out.size, out.dtype), out.shape, strides)
    fresh[...] = out
    return fresh


def torch_layout(arrays, out):
    """``out`` (an elementwise result computed from the input ``arrays``) laid out as PyTorch lays it."""
    if type(out) is not np.ndarray:
        return out
    shape = out.shape
    ndim = len(shape)
    if ndim < 2 or out.size < 2:
        return out
    tensors = [a for a in arrays if a.ndim]
    if all(a.shape == shape for a in tensors) and len(tensors) == len(arrays):
        # compute_fast_setup_type: same shapes, no 0-d operand
        if all(a.flags.c_contiguous for a in tensors):
            return out if out.flags.c_contiguous else np.ascontiguousarray(out)
        if all(_dense(a) for a in tensors):
            first = [s // a.itemsize for a in tensors[:1] for s in a.strides]
            if all([s // a.itemsize for s in a.strides] == first for a in tensors[1:]):
                # every input has the same dense strides: the result takes them, size-1 dims' included
                strides = tuple(s * out.itemsize for s in first)
                return out if out.strides == strides else _relaid(out, strides)
    if 1 not in shape and all(_row_major_ordered(a) for a in arrays):     # (size-1 dims' strides vary)
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)
    perm = _permutation(arrays, shape)
    if perm == list(range(ndim - 1, -1, -1)):
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)
    strides = [0] * ndim
    step = out.itemsize
    for d in perm:
        strides[d] = step
        step *= shape[d]
    strides = tuple(strides)
    return out if out.strides == strides else _relaid(out, strides)


# elementwise in ATen (TensorIterator) though the table does not mark them pointwise
_ELEMENTWISE = frozenset(("bitwise_not", "isfinite", "isinf", "isnan", "logical_not", "prelu_kernel", "mse_loss",
                          "huber_loss", "smooth_l1_loss", "binary_cross_entropy", "soft_margin_loss"))
# pointwise in the table, but ATen fills a contiguous clone of the input (out-of-place masked_fill)
_CONTIGUOUS = frozenset(("masked_fill", "masked_fill_tensor"))
# the result is written into empty_like(self) or a clone of self: the first input's layout (log_sigmoid_backward:
# empty_like(grad_output))
_LIKE_INPUT = frozenset(("to", "flip", "sort", "sort_stable", "scatter", "scatter_add", "scatter_value", "index_add",
                         "index_put", "select_scatter", "slice_scatter", "diagonal_scatter", "log_sigmoid_backward"))
# results whose layout the forward already decides (clone: preserve_copy or row-major, views, in-place writes,
# outputs that alias their input), or whose ATen layout is not settled here (advanced indexing, topk)
_AS_COMPUTED = frozenset(("clone", "copy", "copy_slices", "fill_inplace", "fill_tensor_inplace", "zero_inplace",
                          "as_strided", "unsafe_view", "view_dtype", "split_outputs", "split_with_sizes_outputs",
                          "unbind_outputs", "getitem_basic:IndexBackward0", "topk", "kthvalue", "glu", "rrelu_with_noise",
                          "rrelu_with_noise_inplace",
                          # LAPACK's column-major results (and views of them), as ATen leaves them
                          "inverse", "linalg_solve_ex", "linalg_cholesky_ex", "cholesky", "linalg_qr_Q", "linalg_qr_R",
                          "linalg_eigh_eigenvectors", "linalg_lstsq_solution", "linalg_svd_U", "linalg_svd_Vh",
                          "linalg_solve_triangular", "linalg_lu_factor_ex", "linalg_lu_solve",
                          "cholesky_solve", "cholesky_inverse"))
# ops whose TensorIterator takes the inputs in another order than the table lists them (the first whose
# strides decide sets the layout): the metas of leaky_relu_backward and threshold_backward (relu's) add self
# before grad_output
_ITERATOR_ORDER = {"leaky_relu_backward": (1, 0), "threshold_backward": (1, 0)}
_KIND: dict = {}


def _kind(op) -> str:
    name = op.name
    if name in _AS_COMPUTED:
        return "as computed"
    if name in _CONTIGUOUS:
        return "contiguous"
    if name in _LIKE_INPUT:
        return "like input"
    if op.broadcast or op.pointwise or op.tangent == "element_wise" or name in _ELEMENTWISE:
        return "elementwise"
    return "contiguous"


def settle(op, ts, out):
    """``out``, the result of ``op`` over the tensors ``ts``, in the layout ATen gives it."""
    kind = _KIND.get(op.name)
    if kind is None:
        kind = _KIND[op.name] = _kind(op)
    if kind == "elementwise":
        out = torch_layout([ts[i]._data for i in _ITERATOR_ORDER.get(op.name, range(len(ts)))], out)
    elif kind == "like input":
        if ts and ts[0]._data.shape == out.shape:
            out = torch_layout([ts[0]._data], out)
    elif kind == "contiguous":
        return np.ascontiguousarray(out)
    return note(out)


def note(out):
    """``out`` (a tensor's data): once one has its dims out of row-major order, op.apply checks the
    layout of every elementwise op's inputs (op.PERMUTED)."""
    if out.ndim > 1 and not out.flags.c_contiguous and not _row_major_ordered(out):
        from . import op
        op.PERMUTED[0] = True
    return out


def preserve_copy(a):
    """``clone()``'s copy (memory_format=preserve): a dense input's strides, else its dims' order."""
    out = a.copy(order="K")
    return out if a.flags.c_contiguous else torch_layout([a], out)
