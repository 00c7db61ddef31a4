"""Shape functions: views and reshapes, squeeze/unsqueeze, expand, cat/stack/split, gathers and
scatters, flips, rolls, triangles and diagonals.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import ops as D
from .. import dtypes, errors, limits
from ..dtypes import DType
from ..op import _check_broadcast, apply, share_node
from ..ops.common import _reduce_dim
from ..tensor import _wrap_dim
from .arguments import (_UNSET, _check_new_shape, _given_dim, _int_list_arg, _is_tensor, _missing, _need_tensor,
                        _no_overload, _scalar, _shape_args, _varargs_method)


def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise errors.RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise errors.RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise errors.RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                                      "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise errors.RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise errors.RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _viewable(a: np.ndarray, shape) -> bool:
    try:
        v = a.view()
        v.shape = shape
        return True
    except AttributeError:
        return False


def view(input, *shape):
    if not shape:
        raise _no_overload("view")
    if len(shape) == 1 and isinstance(shape[0], DType):
        return apply(D.view_dtype, (input,), {"dtype": shape[0]})
    shape = _infer_shape(_shape_args(shape, "view"), input._data.size)
    if not _viewable(input._data, shape):
        raise errors.RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                                  "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(D.view, (input,), {"shape": shape})


def reshape(input, *shape):
    """A view when the tensor is contiguous, an alias with computed strides when the shape can still be
    viewed (``ReshapeAliasBackward0``), else a copy (``UnsafeViewBackward0`` of a clone), as ATen."""
    if not shape:
        raise _missing("reshape", "shape")
    shape = _infer_shape(_shape_args(shape, "reshape", "shape"), input._data.size)
    if input._data.flags.c_contiguous:
        return apply(D.view, (input,), {"shape": shape})
    if _viewable(input._data, shape):
        return apply(D.reshape_alias, (input,), {"shape": shape})
    return apply(D.unsafe_view, (clone(input),), {"shape": shape})


def view_as(input, other):
    return view(input, other._data.shape)


def reshape_as(input, other):
    return reshape(input, other._data.shape)


def flatten(input, start_dim=0, end_dim=-1):
    n = input._data.ndim
    if n == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise errors.RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._data.shape
    return reshape(input, shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input._data.ndim)
    shape = input._data.shape
    sizes = _shape_args((sizes,), "unflatten", "sizes")
    if not sizes:
        raise errors.RuntimeError("unflatten: sizes must be non-empty")
    known = math.prod(n for n in sizes if n != -1)
    if (math.prod(sizes) != shape[d]) if -1 not in sizes else (known == 0 and shape[d] or known and shape[d] % known):
        raise errors.RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                                  f"({shape[d]}) in the input tensor")
    try:
        sizes = _infer_shape(sizes, shape[d])
    except errors.RuntimeError as exc:
        raise errors.RuntimeError(f"unflatten got an unexpected error:\n{exc}") from None
    return view(input, shape[:d] + tuple(sizes) + shape[d + 1:])


def squeeze(input, dim=None):
    if dim is None:
        return apply(D.squeeze, (input,))
    if isinstance(dim, (tuple, list)):
        return apply(D.squeeze_dims, (input,), {"dims": _reduce_dim(dim, input, empty_means_all=False)})
    return apply(D.squeeze_dim, (input,), {"dim": _given_dim(dim, input._data.ndim)})


def unsqueeze(input, dim):
    return apply(D.unsqueeze, (input,), {"dim": _given_dim(dim, input._data.ndim + 1)})


def expand(input, *sizes):
    if not sizes:
        raise _missing("expand", "size")
    sizes = _shape_args(sizes, "expand")
    cur = input._data.shape
    if len(sizes) < len(cur):
        # (PyTorch names the tensor by its legacy type, torch.FloatTensor; bool has none: CPUBoolType)
        kind = "CPUBoolType" if input._dtype is dtypes.bool_ else f"torch.{input._dtype._scalar_name}Tensor"
        raise errors.RuntimeError(f"expand({kind}{{{list(cur)}}}, size={list(sizes)}): "
                                  "the number of sizes provided (" + str(len(sizes)) + ") must be greater or equal "
                                  "to the number of dimensions in the tensor (" + str(len(cur)) + ")")
    lead = len(sizes) - len(cur)
    shape = []
    for i, s in reversed(list(enumerate(sizes))):       # checked from the last dim, as ATen does
        c = cur[i - lead] if i >= lead else None
        if s == -1:
            if c is None:
                raise errors.RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                          f"non-existing dimension {i}")
            s = c
        elif c is not None and c != s and c != 1:
            raise errors.RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({c}) at "
                                      f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                                      f"{list(cur)}")
        shape.insert(0, s)
    limits.check_elements(shape)    # a view, but every later op would materialise it
    return apply(D.expand, (input,), {"shape": tuple(shape)})


def expand_as(input, other):
    return expand(input, other._data.shape)


def broadcast_to(input, size):
    return expand(input, size)


def repeat(input, *sizes):
    if not sizes:
        raise _missing("repeat", "repeats")
    sizes = _shape_args(sizes, "repeat")
    if len(sizes) < input._data.ndim:
        raise errors.RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                                  "of tensor")
    shape = (1,) * (len(sizes) - input._data.ndim) + input._data.shape
    _check_new_shape(tuple(a * b for a, b in zip(shape, sizes)))
    return apply(D.repeat, (input,), {"repeats": sizes})


def _tensor_list(tensors, name):
    if _is_tensor(tensors) or not isinstance(tensors, (list, tuple)):
        raise errors.TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                               f"{type(tensors).__name__}")
    if not tensors:
        if name == "stack":
            raise errors.RuntimeError("stack expects a non-empty TensorList")
        raise errors.ValueError(f"torch.{name}(): expected a non-empty list of Tensors")
    return [t if _is_tensor(t) else _bad_elem(name, t, i) for i, t in enumerate(tensors)]


def _bad_elem(name, t, i):
    raise errors.TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")


def cat(tensors, dim=0, *, out=None):
    ts = _tensor_list(tensors, "cat")
    for i, t in enumerate(ts):
        if t._data.ndim == 0:
            raise errors.RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    nonempty = [t for t in ts if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    ref = nonempty[0] if nonempty else ts[0]
    d = _wrap_dim(dim, ref._data.ndim)
    for i, t in enumerate(ts):
        if builtins.any(t is n for n in nonempty) or t is ref:
            if t._data.ndim != ref._data.ndim:
                raise errors.RuntimeError(f"Tensors must have same number of dimensions: got {ref._data.ndim} and "
                                          f"{t._data.ndim}")
            for k, (a, b) in enumerate(zip(ref._data.shape, t._data.shape)):
                if k != d and a != b:
                    raise errors.RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                              f"{a} but got size {b} for tensor number {i} in the list.")
    limits.check_elements(ref._data.shape[:d] + (builtins.sum(t._data.shape[d] for t in nonempty),)
                          + ref._data.shape[d + 1:]) if nonempty else None
    params = {"dim": int(dim)}         # as given: the node shows a negative dim raw
    if len(nonempty) != len(ts):
        # skipped legacy empty tensors still take part in type promotion
        promoted = dtypes.result_type(ts)
        ts = nonempty or ts[:1]
        if promoted is not dtypes.result_type(ts):
            params["dtype"] = promoted
    return apply(D.cat, ts, params)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    ts = _tensor_list(tensors, "stack")
    for i, t in enumerate(ts):
        if t._data.shape != ts[0]._data.shape:
            raise errors.RuntimeError(f"stack expects each tensor to be equal size, but got {list(ts[0]._data.shape)} "
                                      f"at entry 0 and {list(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, ts[0]._data.ndim + 1)
    limits.check_elements(ts[0]._data.shape[:d] + (len(ts),) + ts[0]._data.shape[d:])
    return apply(D.stack, ts, {"dim": int(dim)})


def hstack(tensors):
    ts = _tensor_list(tensors, "hstack")
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors):
    return cat([t if t._data.ndim > 1 else t.reshape(1, -1) for t in _tensor_list(tensors, "vstack")], 0)


def split(tensor, split_size_or_sections, dim=0):
    if tensor._data.ndim == 0:
        raise errors.RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor._data.ndim)
    size = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != size:
            raise errors.RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                                      f"size at dimension {d}), but got split_sizes={sizes}")
        entry, node, params = D.split_sizes_part, D.split_with_sizes_outputs, {"dim": dim, "split_sizes": tuple(sizes)}
    else:
        step = int(split_size_or_sections)
        if step < 0:
            raise errors.RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and size:
            raise errors.RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of "
                                      f"{size}")
        sizes = [builtins.min(step, size - i) for i in range(0, size, step)] if size else [0]
        entry, node, params = D.split_part, D.split_outputs, {"dim": dim, "split_size": step}
    out, offset = [], 0
    for s in sizes:
        out.append(apply(entry, (tensor,), {"dim": d, "start": offset, "end": offset + s}))
        offset += s
    return tuple(share_node(node, (tensor,), params, out, views=True))


def chunk(input, chunks, dim=0):
    if input._data.ndim == 0:
        raise errors.RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise errors.RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if size == 0:
        # ATen: split_with_sizes into `chunks` empty parts (split would give one)
        return split(input, [0] * chunks, dim)
    return split(input, -(-size // chunks), dim)


def tensor_split(input, sections, dim=0):
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if isinstance(sections, int):
        q, r = divmod(size, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
    else:
        bounds = [0] + list(sections) + [size]
        sizes = [builtins.max(0, bounds[i + 1] - bounds[i]) for i in range(len(bounds) - 1)]
    # one slice per part (SliceBackward0, each its own view), as ATen composes tensor_split
    out, offset = [], 0
    for s in sizes:
        out.append(apply(D.narrow, (input,), {"dim": d, "start": offset, "end": offset + s}))
        offset += s
    return tuple(out)


def unbind(input, dim=0):
    if input._data.ndim == 0:
        raise errors.IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input._data.ndim)
    # the node keeps the dim as given (PyTorch shows a negative one raw)
    return tuple(share_node(D.unbind_outputs, (input,), {"dim": dim},
                            [apply(D.unbind_part, (input,), {"dim": d, "index": i})
                             for i in range(input._data.shape[d])], views=True))


def narrow(input, dim, start, length):
    if input._data.ndim == 0:
        raise errors.RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise errors.RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    start = _scalar(start)
    if not -size <= start <= size:
        raise errors.IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise errors.RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return apply(D.narrow, (input,), {"dim": int(dim), "start": start, "end": start + length})


def select(input, dim, index):
    if input._data.ndim == 0:
        raise errors.IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    i = _scalar(index)
    if not -size <= i < size:
        raise errors.IndexError(f"select(): index {i} out of range for tensor of size {list(input._data.shape)} at "
                                f"dimension {d}")
    return apply(D.select, (input,), {"dim": int(dim), "index": i})      # as given (the node shows them so)


def index_select(input, dim, index, *, out=None):
    _need_tensor(index, "index", "index_select", 3)
    if index._dtype.category != 1:
        raise errors.RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index._data.ndim > 1:
        raise errors.IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        # ATen checks dim 1 of a tensor of two or more dims in its batch-gather kernel
        # (index_select_out_cpu_dim1_), every other case in the generic loop
        if d == 1 and input._data.ndim > 1:
            raise errors.RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad.flat[0])} axis_dim={size}")
        raise errors.IndexError("index out of range in self")
    return apply(D.index_select, (input, reshape(index, -1) if index._data.ndim == 0 else index), {"dim": int(dim)})


def index_add(input, dim, index, source, *, alpha=1):
    return apply(D.index_add, (input, index, source), {"dim": _given_dim(dim, input._data.ndim), "alpha": alpha})


def gather(input, dim, index, *, sparse_grad=False, out=None):
    _need_tensor(index, "index", "gather", 3)
    if index._dtype.category != 1:
        raise errors.RuntimeError("gather(): Expected dtype int32/int64 for index")
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if index._data.ndim != n and builtins.max(n, 1) != builtins.max(index._data.ndim, 1):
        raise errors.RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k, (i, m) in enumerate(zip(index._data.shape, input._data.shape)):
        if k != d and i > m:
            raise errors.RuntimeError(f"Size does not match at dimension {k} expected index "
                                      f"{list(index._data.shape)} to be no larger than self "
                                      f"{list(input._data.shape)} apart from dimension {d}")
    size = input._data.shape[d] if n else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        raise errors.RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {size}")
    return apply(D.gather, (input, index), {"dim": int(dim)})


def take_along_dim(input, indices, dim=None, *, out=None):
    """ATen's take_along_dim: both broadcast to each other's shape apart from ``dim``, then gather
    (without ``dim``: the flattened input gathered at the flattened indices)."""
    _need_tensor(indices, "indices", "take_along_dim", 2)
    if dim is None:
        return gather(view(input, -1), 0, view(indices, -1))
    if input._data.ndim != indices._data.ndim:
        raise errors.RuntimeError("torch.take_along_dim(): input and indices should have the same number of "
                                  f"dimensions, but got {input._data.ndim} dimensions for input, and "
                                  f"{indices._data.ndim} dimensions for indices")
    if indices._dtype is not dtypes.int64:
        raise errors.RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                                  f"{indices._dtype._scalar_name}")
    d = _wrap_dim(dim, input._data.ndim)
    self_sizes = list(input._data.shape)
    self_sizes[d] = indices._data.shape[d]
    indices_sizes = list(indices._data.shape)
    indices_sizes[d] = input._data.shape[d]
    indices_broadcast = broadcast_to(indices, _broadcast_shapes(self_sizes, indices._data.shape))
    input_broadcast = broadcast_to(input, _broadcast_shapes(indices_sizes, input._data.shape))
    return gather(input_broadcast, d, indices_broadcast)


def _broadcast_shapes(a, b):
    """ATen's infer_size: the broadcast shape of two shapes, or its error."""
    _check_broadcast([np.broadcast_to(np.empty(()), tuple(s)) for s in (a, b)])
    return np.broadcast_shapes(tuple(a), tuple(b))


_SCATTER_REDUCE_DEPRECATED = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future PyTorch "
    "release. Use torch.scatter_reduce instead for more reduction options. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:225.)")


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    d = _given_dim(dim, input._data.ndim)         # as given (the node shows it so)
    if reduce is not None:                        # scatter.reduce / scatter.value_reduce
        if reduce not in ("add", "multiply"):
            raise errors.RuntimeError("reduce argument must be either add or multiply.")
        if src is not None and _is_tensor(src):
            from .. import warn
            warn.warn_once(_SCATTER_REDUCE_DEPRECATED)
            return apply(D.scatter_reduce_src, (input, index, src), {"dim": d, "reduce": reduce})
        v = value if src is None else src
        return apply(D.scatter_reduce_value, (input, index), {"dim": d, "value": _scalar(v), "reduce": reduce})
    if src is None or not _is_tensor(src):
        v = value if src is None else src
        return apply(D.scatter_value, (input, index), {"dim": d, "value": _scalar(v)})
    return apply(D.scatter, (input, index, src), {"dim": d})


def scatter_add(input, dim, index, src):
    return apply(D.scatter_add, (input, index, src), {"dim": _given_dim(dim, input._data.ndim)})


def flip(input, dims=_UNSET, *extra):
    if extra:
        raise errors.TypeError(f"flip() takes 2 positional arguments but {2 + len(extra)} were given")
    if dims is _UNSET:
        raise _missing("flip", "dims")
    given = tuple(int(d) for d in _int_list_arg(dims, "flip", "dims", 2))
    dims = tuple(_wrap_dim(d, input._data.ndim) for d in given)
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise errors.RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return apply(D.flip, (input,), {"dims": given})       # as given (the node shows them so)


_flip_method = _varargs_method("flip", "dims", flip)     # Tensor.flip


def fliplr(input):
    if input._data.ndim < 2:
        raise errors.RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input._data.ndim < 1:
        raise errors.RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
    if dims is not None:
        dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
        n_shifts = len(shifts) if isinstance(shifts, tuple) else 1
        if not dims or n_shifts != len(dims):
            raise errors.RuntimeError("`shifts` required" if not dims else
                                      f"shifts and dimensions must align. shifts: {n_shifts}, dims:{len(dims)}")
        if input._data.ndim == 0:
            raise errors.IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        for d in dims:
            _wrap_dim(d, input._data.ndim)
        dims = tuple(int(d) for d in dims)          # as given (the node shows them so)
        shifts = shifts if isinstance(shifts, tuple) else (shifts,)
    return apply(D.roll, (input,), {"shifts": shifts, "dims": dims})


def tril(input, diagonal=0, *, out=None):
    if input._data.ndim < 2:
        raise errors.RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply(D.tril, (input,), {"diagonal": diagonal})


def triu(input, diagonal=0, *, out=None):
    if input._data.ndim < 2:
        raise errors.RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply(D.triu, (input,), {"diagonal": diagonal})


def diag(input, diagonal=0, *, out=None):
    if input._data.ndim == 1:
        n = input._data.shape[0] + builtins.abs(diagonal)
        limits.check_elements((n, n))
        return apply(D.diag_embed, (input,), {"offset": diagonal})
    if input._data.ndim == 2:
        return apply(D.diag_copy, (input,), {"diagonal": diagonal} if diagonal else {})
    raise errors.RuntimeError("diag(): Supports 1D or 2D tensors. Got " + str(input._data.ndim) + "D")


def diagonal(input, offset=0, dim1=0, dim2=1):
    n = input._data.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise errors.RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(D.diagonal, (input,), {"offset": offset, "dim1": int(dim1), "dim2": int(dim2)})


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input._data.shape[-1] + builtins.abs(offset) if input._data.ndim else 1
    d1, d2 = _wrap_dim(dim1, input._data.ndim + 1), _wrap_dim(dim2, input._data.ndim + 1)
    if d1 == d2:
        raise errors.RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    limits.check_elements(input._data.shape[:-1] + (n, n))
    return apply(D.diag_embed, (input,), {"offset": offset, "dim1": int(dim1), "dim2": int(dim2)})   # as given


def clone(input, *, memory_format=None):
    return apply(D.clone, (input,))


def contiguous(input, *, memory_format=None):
    if input._data.flags.c_contiguous:
        return input
    return apply(D.clone, (input,), {"contiguous": True})


def masked_select(input, mask):
    if mask._dtype is not dtypes.bool_:
        raise errors.RuntimeError("masked_select: expected BoolTensor for mask")
    _check_broadcast((mask._data, input._data))         # PyTorch names the mask tensor a
    return apply(D.masked_select, (input, mask))


def tile(input, dims):
    """``torch.tile``: ``repeat`` with the missing leading repeats as 1 (a RepeatBackward0)."""
    dims = _shape_args((dims,) if not isinstance(dims, (tuple, list)) else tuple(dims), "tile")
    return repeat(input, *((1,) * (input._data.ndim - len(dims)) + tuple(dims)))


def _at_least(n, name):
    """``torch.atleast_{n}d``: one tensor, or several (a tuple back), each with ≥ n dims as PyTorch adds them."""
    def one(t):
        nd = t._data.ndim
        if nd >= n:
            return t
        if nd == 0:
            return t.reshape((1,) * n)
        if n == 2 or nd == 2:
            return unsqueeze(t, 0) if nd == 1 else unsqueeze(t, -1)
        return unsqueeze(unsqueeze(t, 0), -1)          # 1-d to 3-d: (1, N, 1)

    def at_least(*tensors):
        if len(tensors) == 1 and not _is_tensor(tensors[0]):
            tensors = tuple(tensors[0])
            return tuple(one(t) for t in tensors)
        out = tuple(one(t) for t in tensors)
        return out[0] if len(out) == 1 else out
    at_least.__name__ = at_least.__qualname__ = name
    return at_least


atleast_1d = _at_least(1, "atleast_1d")
atleast_2d = _at_least(2, "atleast_2d")
atleast_3d = _at_least(3, "atleast_3d")


def column_stack(tensors):
    ts = _tensor_list(tensors, "column_stack")
    return hstack([t.reshape(t.numel(), 1) if t._data.ndim <= 1 else t for t in ts])


def dstack(tensors):
    return cat([atleast_3d(t) for t in _tensor_list(tensors, "dstack")], 2)


def cartesian_prod(*tensors):
    """``torch.cartesian_prod`` as ATen writes it: the "ij" meshgrid of the 1-D inputs, each flattened,
    stacked along dim 1 (one input is returned as it is)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if not _is_tensor(t):
            raise errors.TypeError(f"cartesian_prod(): argument 'tensors' (position 1) must be tuple of Tensors, "
                                   f"not {type(t).__name__}")
        if t._data.ndim != 1:
            raise errors.RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([flatten(g) for g in meshgrid(*tensors, indexing="ij")], 1)


def meshgrid(*tensors, indexing=None):
    """``torch.meshgrid``: each 0-d or 1-d input viewed along its own dim and expanded to the grid
    (``indexing="xy"``: the grid of the first two inputs swapped, its first two outputs swapped back)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        from .. import warn
        warn.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. "
                  "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise errors.ValueError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t._data.ndim > 1:
            raise errors.RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    for a, b in zip(tensors, tensors[1:]):
        if a._dtype is not b._dtype:
            raise errors.RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    grids = []
    for i, t in enumerate(order):
        view = [1] * len(order)
        view[i] = -1
        grids.append(expand(t.view(*view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
