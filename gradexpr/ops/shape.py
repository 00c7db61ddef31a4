"""Views and shape changes: view, transpose, squeeze, cat/stack, slices, diagonals, copies."""
from __future__ import annotations

import numpy as np

from .. import dtypes, errors
from ..tensor import _wrap_dim
from .common import _F, _apply
from .registry import batch_rules, op


def _zeros(grad):
    """derivatives.yaml's ``zeros_like(grad)``: +0 everywhere, no history (``grad * 0`` would give -0 where
    grad is negative, and record a node)."""
    from ..corner_grads import zero_grad
    return zero_grad(grad)


# ============================================================ shape and views
view = op("view", "ViewBackward0", lambda a, shape: a.view().reshape(shape), dtype="first", view=True,
          self=lambda grad, self_shape: grad.reshape(self_shape), domain="real", forward_ad="linear")
reshape_alias = op("reshape_alias", "ReshapeAliasBackward0", lambda a, shape: a.view().reshape(shape),
                   self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True, domain="real",
                   forward_ad="linear")
unsafe_view = op("unsafe_view", "UnsafeViewBackward0", lambda a, shape: a.reshape(shape), dtype="first",
                 self=lambda grad, self_shape: grad.reshape(self_shape), domain="real", forward_ad="linear")


def _view_dtype(a, dtype):
    """``Tensor.view(dtype)``: the same bytes read as ``dtype``; a different element size rescales the
    last dimension, which must then be contiguous and divisible (PyTorch's checks and words)."""
    want = np.dtype(dtype.np)
    if want.itemsize != a.itemsize:
        names = f"{_cap(a.dtype)} as {_cap(want)} (different element sizes)"
        if a.ndim == 0:
            raise errors.RuntimeError(f"self.dim() cannot be 0 to view {names}")
        if a.shape[-1] != 1 and a.strides[-1] != a.itemsize:
            raise errors.RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got "
                                      f"{a.strides[-1] // a.itemsize}")
        if want.itemsize > a.itemsize and a.shape[-1] % (want.itemsize // a.itemsize):
            raise errors.RuntimeError(f"self.size(-1) must be divisible by {want.itemsize // a.itemsize} to view "
                                      f"{names}, but got {a.shape[-1]}")
    return a.view(want)


def _cap(np_dtype):
    return dtypes.from_numpy(np.dtype(np_dtype))._scalar_name


# not differentiable (derivatives.yaml: output_differentiability [False]): no node, no grad, and not an
# autograd view of its base (the memory is shared all the same: NumPy's view)
view_dtype = op("view_dtype", "", _view_dtype, dtype=lambda ts, params: (None, params["dtype"]))
t = op("t", "TBackward0", lambda a: a.T, self=lambda grad: grad.t(), dtype="first", view=True, domain="matrix",
       forward_ad="linear")
transpose = op("transpose", "TransposeBackward0",
               lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1) if a.ndim else a.view(),    # 0-d: itself
               self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1), dtype="first", view=True,
               domain="matrix", forward_ad="linear")
permute = op("permute", "PermuteBackward0", lambda a, dims: np.transpose(a, dims),
             self=lambda grad, dims: grad.permute(tuple(int(i) for i in np.argsort([d % len(dims) for d in dims]))),
             dtype="first",
             view=True, domain="matrix", forward_ad="linear")
def _unsqueeze_to(grad, self_shape, dim=None):
    """PyTorch's unsqueeze_to: ``grad`` with each size-1 dim of ``self_shape`` (or just those of ``dim``,
    an int or a list, when given) put back by an unsqueeze, lowest first."""
    n = len(self_shape)
    if dim is None:
        wanted = range(n)
    elif isinstance(dim, int):
        wanted = (dim % n,) if n else ()
    else:
        wanted = sorted({d % n for d in dim}) if n else ()
    for d in wanted:
        if self_shape[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


squeeze = op("squeeze", "SqueezeBackward0", lambda a: np.squeeze(a),
             self=lambda grad, self_shape: _unsqueeze_to(grad, self_shape), dtype="first", view=True, domain="real",
             forward_ad="linear")
squeeze_dim = op("squeeze_dim", "SqueezeBackward1",
                 lambda a, dim: np.squeeze(a, axis=dim) if a.ndim and a.shape[dim] == 1 else a.view(),
                 # (dim unused: named so the node keeps it, as PyTorch's _saved_dim)
                 self=lambda grad, self_shape, dim=None: _unsqueeze_to(grad, self_shape, dim), dtype="first", view=True,
                 domain="real",
                 forward_ad="linear")
squeeze_dims = op("squeeze_dims", "SqueezeBackward2",
                  lambda a, dims: np.squeeze(a, axis=tuple(d for d in dims if a.shape[d] == 1)) if a.ndim else a.view(),
                  self=lambda grad, self_shape, dims: _unsqueeze_to(grad, self_shape, dims), dtype="first", view=True,
                  domain="real", forward_ad="linear")
squeeze_inplace_dim = op("squeeze_inplace_dim", "SqueezeBackward4",
                         lambda a, dim: np.squeeze(a, axis=dim) if a.ndim and a.shape[dim] == 1 else a.view(),
                         self=lambda grad, self_shape, dim=None: _unsqueeze_to(grad, self_shape, dim), dtype="first", view=True,
                         domain="real", forward_ad="linear")
def _unsqueezed(a, dim):
    """np.expand_dims(a, dim) (the same reshaped view) without its argument checks, which were
    most of the op's cost (the table's callers give a dim in range)."""
    d = dim % (a.ndim + 1)
    return a.reshape(a.shape[:d] + (1,) + a.shape[d:])


unsqueeze = op("unsqueeze", "UnsqueezeBackward0", _unsqueezed,
               self=lambda grad, dim: grad.squeeze(dim), dtype="first", view=True, domain="real", forward_ad="linear")
# the in-place view ops (t.t_(), t.squeeze_() …): the tensor itself takes the new shape; PyTorch's
# overloads of the same formulas (TBackward1 …). squeeze_(dim) is squeeze_inplace_dim above.
t_inplace = op("t_inplace", "TBackward1", lambda a: a.T, self=lambda grad: grad.t(), dtype="first", view=True,
               domain="matrix", forward_ad="linear")
transpose_inplace = op("transpose_inplace", "TransposeBackward1", lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1),
                       self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1), dtype="first", view=True,
                       domain="matrix", forward_ad="linear")
unsqueeze_inplace = op("unsqueeze_inplace", "UnsqueezeBackward1", _unsqueezed,
                       self=lambda grad, dim: grad.squeeze(dim), dtype="first", view=True, domain="real",
                       forward_ad="linear")
squeeze_inplace = op("squeeze_inplace", "SqueezeBackward3", lambda a: np.squeeze(a),
                     self=lambda grad, self_shape: _unsqueeze_to(grad, self_shape), dtype="first", view=True, domain="real",
                     forward_ad="linear")
squeeze_inplace_dims = op("squeeze_inplace_dims", "SqueezeBackward5",
                          lambda a, dims: np.squeeze(a, axis=tuple(d for d in dims if a.shape[d] == 1)) if a.ndim
                          else a.view(),
                          self=lambda grad, self_shape, dims: _unsqueeze_to(grad, self_shape, dims), dtype="first",
                          view=True,
                          domain="real", forward_ad="linear")
expand = op("expand", "ExpandBackward0", lambda a, shape: np.broadcast_to(a, shape),
            self=lambda grad, self_shape: grad.sum_to_size(self_shape), dtype="first", view=True, domain="real",
            forward_ad="linear")


def _repeat_grad(grad, self_shape, repeats):
    """ATen's repeat_backward: the leading repeated dims summed away one by one, then each repeated
    dim split into (repeat, size) by one reshape and the repeats summed in one reduction."""
    if 0 in repeats:
        return grad.new_zeros(self_shape)
    lead = len(repeats) - len(self_shape)
    for _ in range(lead):
        grad = grad.sum(0)
    split, summed = [], []
    for r, s in zip(repeats[lead:], self_shape):
        if r != 1:
            split.append(r)
            summed.append(len(split) - 1)
        split.append(s)
    if summed:
        grad = grad.reshape(tuple(split)).sum(tuple(summed))
    return grad


repeat = op("repeat", "RepeatBackward0",
            lambda a, repeats: np.tile(a.reshape((1,) * (len(repeats) - a.ndim) + a.shape), repeats),
            self=_repeat_grad, dtype="first", domain="real", forward_ad="linear")


def _cat_dtypes(ts, params):
    d = params.get("dtype") or dtypes.result_type(ts)
    return d, d


def _cat_forward(*arrays, dim=0, dtype=None):
    return np.concatenate(arrays, axis=dim)


def _cat_grad(grad, tensors_shape, dim):
    out, offset = [], 0
    for shape in tensors_shape:
        if len(shape) == 1 and shape[0] == 0 and grad.dim() > 1:
            out.append(None)
            continue
        size = shape[dim]
        out.append(grad.narrow(dim, offset, size))
        offset += size
    return out


cat = op("cat", "CatBackward0", _cat_forward, ("*tensors",), tensors=_cat_grad, dtype=_cat_dtypes,
         domain="list", forward_ad="linear")
stack = op("stack", "StackBackward0", lambda *arrays, dim=0: np.stack(arrays, axis=dim), ("*tensors",),
           tensors=lambda grad, tensors_shape, dim: [grad.select(dim, i) for i in range(len(tensors_shape))],
           dtype=_cat_dtypes, domain="list", forward_ad="linear")


def _slice(a, dim, start, end, step=1):
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(start, end, step)
    return a[tuple(idx)]


def _slice_grad(grad, self_shape, dim, start, end, step=1):
    return _apply(slice_backward, (grad,), {"input_sizes": tuple(self_shape), "dim": dim, "start": start,
                                             "end": end, "step": step})


# The backward ops of the views (ATen's select_backward, slice_backward, diagonal_backward): the gradient
# copied into zeros of the input's shape, entries of their own so that a gradient taken with
# create_graph=True records PyTorch's SelectBackwardBackward0 … (their own gradient is the view again)
def _into_zeros(g, input_sizes, where):
    out = np.zeros(input_sizes, g.dtype)
    out[where] = g
    return out


def _dim_index(ndim, dim, index):
    return (slice(None),) * (dim % ndim) + (index,)


slice_backward = op("slice_backward", "SliceBackwardBackward0",
                    lambda g, input_sizes, dim, start, end, step=1: _into_zeros(
                        g, input_sizes, _dim_index(len(input_sizes), dim, slice(start, end, step))),
                    ("grad_output",), grad_output=lambda grad, dim, start, end, step=1: grad._narrow_step(
                        dim, start, end, step), dtype="first", domain="real", forward_ad="linear")
select_backward = op("select_backward", "SelectBackwardBackward0",
                     lambda g, input_sizes, dim, index: _into_zeros(
                         g, input_sizes, _dim_index(len(input_sizes), dim, index)),
                     ("grad_output",), grad_output=lambda grad, dim, index: grad.select(dim, index),
                     dtype="first", domain="real", forward_ad="linear")


narrow = op("narrow", "SliceBackward0", _slice, self=_slice_grad, dtype="first", view=True, domain="real",
            forward_ad="linear")
split_part = op("split", "SplitBackward0", _slice, self=_slice_grad, dtype="first", view=True, domain="real",
                forward_ad="linear")
split_sizes_part = op("split_with_sizes", "SplitWithSizesBackward0", _slice, self=_slice_grad, dtype="first",
                      view=True, domain="real", forward_ad="linear")


# split/chunk and unbind have ONE node for all their outputs (op.share_node): the part entries above and
# below compute each output (and are what vmap and forward-mode AD see); these entries are the node,
# whose formula reads ``grad``, the tuple of the outputs' gradients (None for one that got none).
def _split_grad(grad, self_shape, dim, sizes):
    """The outputs' gradients put back together along ``dim`` (zeros for those that got none)."""
    like = next(g for g in grad if g is not None)
    parts = []
    for g, size in zip(grad, sizes):
        if g is None:
            shape = list(self_shape)
            shape[dim] = size
            g = like.new_zeros(shape)
        parts.append(g)
    return _F().cat(parts, dim)


def _split_sizes(length, split_size):
    return [min(split_size, length - i) for i in range(0, length, split_size)] if length else [0]


split_outputs = op("split_outputs", "SplitBackward0", None, outputs="*", domain="real",
                   self=lambda grad, self_shape, dim, split_size: _split_grad(
                       grad, self_shape, dim, _split_sizes(self_shape[dim], split_size)))
split_with_sizes_outputs = op("split_with_sizes_outputs", "SplitWithSizesBackward0", None, outputs="*",
                              domain="real", self=lambda grad, self_shape, dim, split_sizes: _split_grad(
                                  grad, self_shape, dim, split_sizes))
slice_scatter = op("slice_scatter", "SliceScatterBackward0",
                   lambda a, src, dim, start, end, step=1: _scatter_slice(a, src, dim, start, end, step),
                   ("self", "src"),
                   self=lambda grad, dim, start, end, step=1: grad._slice_scatter(
                       grad.new_zeros(_slice_shape(grad.shape, dim, start, end, step)), dim, start, end, step),
                   src=lambda grad, dim, start, end, step=1: grad._narrow_step(dim, start, end, step),
                   dtype="promote", domain="real", broadcast=False, forward_ad="linear")


def _slice_shape(shape, dim, start, end, step):
    shape = list(shape)
    shape[dim] = len(range(*slice(start, end, step).indices(shape[dim])))
    return tuple(shape)


def _scatter_slice(a, src, dim, start, end, step):
    out = a.copy()
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(start, end, step)
    out[tuple(idx)] = src
    return out


def _select(a, dim, index):
    return a[(slice(None),) * (dim % a.ndim) + (index, Ellipsis)]      # the Ellipsis keeps a 0-d result a view


def _select_grad(grad, self_shape, dim, index):
    return _apply(select_backward, (grad,), {"input_sizes": tuple(self_shape), "dim": dim, "index": index})


select = op("select", "SelectBackward0", _select, self=_select_grad, dtype="first", view=True, domain="real",
            forward_ad="linear")
unbind_part = op("unbind", "UnbindBackward0", _select, self=_select_grad, dtype="first", view=True,
                 domain="real", forward_ad="linear")


def _unbind_grad(grad, dim):
    """unbind's gradient: the outputs' gradients stacked along ``dim`` (zeros for those that got none)."""
    like = next(g for g in grad if g is not None)
    return _F().stack([like.new_zeros(like.shape) if g is None else g for g in grad], dim)


unbind_outputs = op("unbind_outputs", "UnbindBackward0", None, outputs="*", self=_unbind_grad, domain="real")
select_scatter = op("select_scatter", "SelectScatterBackward0",
                    lambda a, src, dim, index: _scatter_select(a, src, dim, index), ("self", "src"),
                    self=lambda grad, dim, index: grad._select_scatter(
                        _zeros(grad.select(dim, index)), dim, index),
                    src=lambda grad, dim, index: grad.select(dim, index), dtype="promote", domain="real",
                    broadcast=False, forward_ad="linear")


def _scatter_select(a, src, dim, index):
    out = a.copy()
    out[(slice(None),) * (dim % a.ndim) + (index,)] = src
    return out


def _diagonal(a, offset=0, dim1=0, dim2=1):
    d = np.diagonal(a, offset, dim1, dim2)
    if a.flags.writeable:
        d.flags.writeable = True      # NumPy hands out a read-only view; PyTorch's diagonal can be written
    return d


def _diagonal_grad(grad, self_shape, offset=0, dim1=0, dim2=1):
    return _apply(diagonal_backward, (grad,), {"input_sizes": tuple(self_shape), "offset": offset, "dim1": dim1,
                                                "dim2": dim2})


def _diagonal_backward(g, input_sizes, offset, dim1, dim2):
    out = np.zeros(input_sizes, g.dtype)
    d = np.diagonal(out, offset, dim1, dim2)
    d.setflags(write=True)
    d[...] = g
    return out


diagonal_backward = op("diagonal_backward", "DiagonalBackwardBackward0", _diagonal_backward, ("grad_output",),
                       grad_output=lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2),
                       dtype="first", domain="matrix", forward_ad="linear")


diagonal = op("diagonal", "DiagonalBackward0", _diagonal, self=_diagonal_grad, dtype="first", view=True,
              domain="matrix", forward_ad="linear")
diag_copy = op("diag_copy", "DiagonalBackward0_copy", lambda a, diagonal=0: np.diagonal(a, diagonal).copy(),
               self=lambda grad, self_shape, diagonal=0: _diagonal_grad(grad, self_shape, diagonal),
               dtype="first", domain="matrix", forward_ad="linear")


def _diag_embed(a, offset=0, dim1=-2, dim2=-1):
    """The last dim of ``a`` laid on the ``offset`` diagonal of two new dims of size n + |offset|,
    which sit at ``dim1`` and ``dim2`` of the result (dims of the result, negative ones from its end)."""
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    rows = np.arange(a.shape[-1]) + max(-offset, 0)
    out[..., rows, rows + offset] = a
    return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (dim1, dim2)))


diag_embed = op("diag_embed", "DiagEmbedBackward0", _diag_embed,
                self=lambda grad, offset=0, dim1=-2, dim2=-1: grad.diagonal(offset, dim1, dim2), dtype="first",
                domain="real", forward_ad="linear")


def _diag_scatter(a, src, offset, dim1, dim2):
    out = a.copy()
    d = np.diagonal(out, offset, dim1, dim2)
    d.setflags(write=True)
    d[...] = src
    return out


diagonal_scatter = op("diagonal_scatter", "DiagonalScatterBackward0", _diag_scatter, ("self", "src"),
                      self=lambda grad, offset, dim1, dim2: grad._diagonal_scatter(
                          _zeros(grad.diagonal(offset, dim1, dim2)), offset, dim1, dim2),
                      src=lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2),
                      dtype="promote", domain="matrix", broadcast=False, forward_ad="linear")
flip = op("flip", "FlipBackward0", lambda a, dims: np.flip(a, dims).copy(order="K") if a.ndim else a.copy(),
          self=lambda grad, dims: grad.flip(dims), dtype="first", domain="real", forward_ad="linear")
roll = op("roll", "RollBackward0", lambda a, shifts, dims: np.roll(a, shifts, dims) if dims is not None else
          np.roll(a.ravel(), shifts).reshape(a.shape),
          self=lambda grad, shifts, dims: grad.roll(tuple(-s for s in shifts) if isinstance(shifts, tuple)
                                                    else -shifts, dims),
          dtype="first", domain="real", forward_ad="linear")
tril = op("tril", "TrilBackward0", lambda a, diagonal=0: np.tril(a, diagonal),
          self=lambda grad, diagonal=0: grad.tril(diagonal), dtype="first", domain="matrix", forward_ad="linear")
triu = op("triu", "TriuBackward0", lambda a, diagonal=0: np.triu(a, diagonal),
          self=lambda grad, diagonal=0: grad.triu(diagonal), dtype="first", domain="matrix", forward_ad="linear")


def _clone(a, contiguous=False):
    """preserve_format (a dense input's strides, a permuted one's order), or row-major for ``contiguous()``."""
    if contiguous or a.flags.c_contiguous:
        return a.copy()
    from ..result_layout import preserve_copy
    return preserve_copy(a)


clone = op("clone", "CloneBackward0", _clone, self=lambda grad: grad, dtype="first", domain="real", forward_ad="linear")


def _to_dtype(ts, params):
    d = params["dtype"]
    return None, d


to_copy = op("to", "ToCopyBackward0", lambda a, dtype: a.astype(dtype.np),
             self=lambda grad, self_dtype: grad.to(self_dtype), dtype=_to_dtype, domain="real", forward_ad="linear")
alias = op("alias", "AliasBackward0", lambda a: a.view(), self=lambda grad: grad, dtype="first", view=True,
           domain="real", forward_ad="linear")
# unpack_dual's primal (aten::_fw_primal): a view whose node is PyTorch's C++ Identity, which no Python class
# wraps (its repr says CppFunction, a tensor's grad_fn=<Identity>)
fw_primal = op("fw_primal", "torch::autograd::Identity", lambda a: a.view(), self=lambda grad: grad, dtype="first",
               view=True, domain="real", forward_ad="linear")


# ============================================================ unfold: the windows of one dim as a new last dim
def _unfold(a, dimension, size, step):
    """The windows of ``size`` elements every ``step`` along ``dimension``, as ATen's strided view: that
    dim counts the windows, a new last dim walks one window (a 0-d tensor is one window of itself)."""
    if a.ndim == 0:
        return np.lib.stride_tricks.as_strided(a, (size,), (a.itemsize,))
    dimension %= a.ndim
    n = (a.shape[dimension] - size) // step + 1
    shape = a.shape[:dimension] + (n,) + a.shape[dimension + 1:] + (size,)
    strides = a.strides[:dimension] + (a.strides[dimension] * step,) + a.strides[dimension + 1:] + \
        (a.strides[dimension],)
    return np.lib.stride_tricks.as_strided(a, shape, strides)


def _check_unfold(values):
    """ATen's checks of unfold, in its order (the dim wrapped as a 0-d tensor's 0 is)."""
    self = values["self"]
    ndim = self._data.ndim
    d = _wrap_dim(values["dimension"], max(ndim, 1))
    size, step = values["size"], values["step"]
    largest = self._data.shape[d] if ndim else 1
    if size > largest:
        raise errors.RuntimeError(f"maximum size for tensor at dimension {d} is {largest} but size is {size}")
    if size < 0:
        raise errors.RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise errors.RuntimeError(f"step is {step} but must be > 0")
    # (the node keeps the dim as given, as PyTorch's _saved_dimension shows it)
    return (self,), {"dimension": values["dimension"], "size": size, "step": step}


def _unfold_backward(g, input_sizes, dim, size, step):
    """ATen's unfold_backward: each window's gradient added back at its place, windows in order."""
    out = np.zeros(input_sizes, g.dtype)
    if not input_sizes:
        out[...] = g.sum() if g.size else 0
        return out
    dim = dim % len(input_sizes)
    moved = np.moveaxis(out, dim, -1)           # (a view: writes land in ``out``)
    windows = np.moveaxis(g, dim, -2)           # (..., window, element)
    for k in range(windows.shape[-2]):
        moved[..., k * step:k * step + size] += windows[..., k, :]
    return out


unfold_backward = op("unfold_backward", "UnfoldBackwardBackward0", _unfold_backward, ("grad_in",),
                     grad_in=lambda grad, dim, size, step: grad.unfold(dim, size, step),
                     dtype="first", domain="real", forward_ad="linear")


def _unfold_grad(grad, self_shape, dimension, size, step):
    """unfold_backward(grad, self.sizes(), dimension, size, step): an UnfoldBackwardBackward0 node under
    create_graph, whose own gradient is the unfold again."""
    return _apply(unfold_backward, (grad,), {"input_sizes": tuple(self_shape), "dim": dimension, "size": size,
                                             "step": step})


unfold = op("unfold", "UnfoldBackward0", _unfold,
            self=_unfold_grad, dtype="first", view=True, domain="real", forward_ad="linear", prepare=_check_unfold,
            schema="unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", variants="method")


# in place: t.fill_(v) and t.zero_() (their overload numbers are the in-place ones)
fill_inplace = op("fill_inplace", "FillBackward2", lambda a, value: np.full(a.shape, value, a.dtype),
                  self=_zeros, dtype="first", domain="real", forward_ad=lambda self_t: _zeros(self_t))
fill_tensor_inplace = op("fill_tensor_inplace", "FillBackward3", lambda a, v: np.full(a.shape, v, a.dtype),
                         ("self", "value"), self=_zeros, value=lambda grad: grad.sum(),
                         dtype="first", domain="real", broadcast=False,
                         forward_ad=lambda value_t: value_t)      # (self_t.fill_(value_t): a -0 stays -0)
zero_inplace = op("zero_inplace", "ZeroBackward0", lambda a, value=0: np.zeros_like(a),
                  self=_zeros, dtype="first", domain="real", forward_ad="linear")
copy_inplace = op("copy", "torch::autograd::CopyBackwards", lambda a, b: np.broadcast_to(b, a.shape).astype(a.dtype),
                  ("self", "src"), self=_zeros, src=lambda grad: grad, dtype="first", domain="real",
                  forward_ad=lambda src_t: src_t)      # (self_t.copy_(src_t): a -0 stays -0)


# ============================================================ vmap's batch rules (batching.py)
batch_rules("shape", "view", "reshape_alias", "unsafe_view", "expand")
batch_rules("t", "t", "t_inplace")
batch_rules("permute", "permute")
batch_rules("dims", "transpose", "transpose_inplace", "squeeze_dim", "squeeze_dims", "squeeze_inplace_dim",
            "squeeze_inplace_dims", "narrow", "split", "split_with_sizes", "select", "unbind",
            "diagonal", "flip", "cat", "unfold")
batch_rules("new_dim", "unsqueeze", "unsqueeze_inplace", "stack")
batch_rules("squeeze", "squeeze", "squeeze_inplace")
batch_rules("repeat", "repeat")
batch_rules("fill_value", "fill_tensor_inplace")
batch_rules("elementwise", "clone", "alias", "to", "copy", "fill_inplace", "zero_inplace", "tril",
            "triu")
