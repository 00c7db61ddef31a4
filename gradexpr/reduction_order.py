"""PyTorch's CPU summation order (``cascade_sum`` in aten/src/ATen/native/cpu/SumKernel.cpp),
reproduced with NumPy so that ``sum``, ``nansum`` and ``mean`` of float32/float64 tensors
agree with PyTorch to the last bit.

How PyTorch sums (AVX2 build, which an AVX-512 machine gives the same bits as):

* TensorIterator orders the dimensions fastest-first with the reduced ones in front
  (``reorder_dimensions``), merges the ones whose strides allow it
  (``coalesce_dimensions``) and calls a 2-D loop over the first two; further dimensions
  are iterated around it, each call adding its partial sums into the output (``+=``).
* The 2-D loop picks one of four shapes: contiguous rows (``vectorized_inner_sum``: the
  row as vectors of 8 floats / 4 doubles, four vectors interleaved, then the scalar
  tail, then the lanes), contiguous columns (``vectorized_outer_sum``: 4 vectors of
  columns at a time summed straight down, the rest row by row), or the scalar forms.
* Each straight-down sum is the cascade of ``multi_row_sum``: chunks of ``2**p``
  elements (``p = max(4, ceil(log2(n)) // 4)``) summed in order, chunk sums carried
  up four levels; ``row_sum`` first splits the row four ways (``ilp_factor``).
* A full reduction of 32768 elements or more is split between the threads
  (``two_pass_reduction``): each thread sums its contiguous chunk, then the per-thread
  partials are summed.  PyTorch uses as many threads as the machine has processors
  (``OMP_NUM_THREADS`` overrides), so that count is read here the same way.

Lanes become rows of a reshaped array and sums that PyTorch does in order become
``np.add.accumulate`` along an axis, so no Python loop runs per element.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["torch_sum", "torch_nansum", "torch_mean", "torch_cumsum", "torch_cumprod"]

_GRAIN = 32768                      # at::internal::GRAIN_SIZE
_LEVELS = 4                         # multi_row_sum's num_levels
_ILP = 4                            # row_sum's ilp_factor
_NROWS = 4                          # rows per multi_row_sum call in the outer sums
_VEC = {4: 8, 8: 4}                 # AVX2 lanes per vector by itemsize (float32, float64)


def _threads() -> int:
    """at::get_num_threads() as PyTorch starts it: OMP_NUM_THREADS, else the usable CPUs."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.strip().isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


_THREADS = _threads()


def threads() -> int:
    """The thread count PyTorch would split work between (tests pin it to a recording's)."""
    return _THREADS


def reorder(items, should_swap) -> list:
    """TensorIterator's reorder_dimensions: ``items`` (fastest dim first) by its insertion sort, which
    moves an item left past each one ``should_swap(left, item)`` ranks after it (> 0) and stops at the
    first it ranks before (< 0); ties keep their place. (Reductions, results' layouts and indexing
    each order dims with a comparator of their own.)"""
    items = list(items)
    for i in range(1, len(items)):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(items[k], items[j])
            if c > 0:
                items[k], items[j] = items[j], items[k]
                j = k
            elif c < 0:
                break
    return items


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def _to_front(a: np.ndarray, axis: int) -> np.ndarray:
    """``np.moveaxis(a, axis, 0)`` without its argument checks (every gradient reduction passes here)."""
    axis %= a.ndim
    if not axis:
        return a
    return a.transpose((axis,) + tuple(range(axis)) + tuple(range(axis + 1, a.ndim)))


def _in_order(a: np.ndarray, axis: int = 0) -> np.ndarray:
    """The left-to-right sum along ``axis`` (a running sum, as a C loop adds)."""
    if axis:
        a = _to_front(a, axis)
    n, lanes = a.shape[0], a.shape[1:]
    if n <= 1:
        return a[0].copy() if n else np.zeros(lanes, a.dtype)
    width = a.size // n
    if width < 2:
        return np.add.accumulate(a.reshape(n), 0)[-1].reshape(lanes)
    # NumPy reduces a leading axis of a C-contiguous array row after row, in order (its
    # pairwise summation only applies along the contiguous last axis)
    return np.add.reduce(np.ascontiguousarray(a).reshape(n, width), axis=0).reshape(lanes)


def _chunk_sums(a: np.ndarray, chunks: int, step: int) -> np.ndarray:
    """The running sums of ``chunks`` consecutive groups of ``step`` rows of ``a``."""
    lanes = a.shape[1:]
    if not chunks:
        return np.zeros((0,) + lanes, a.dtype)
    width = a.size // a.shape[0]
    if width < 2:
        return _in_order(a[:chunks * step].reshape((chunks, step) + lanes), axis=1)
    block = np.ascontiguousarray(a[:chunks * step]).reshape(chunks, step, width)
    # both add the rows of each chunk into the lanes one after another; einsum's loop per row is cheaper
    # on big blocks (2.5x on the 32 lanes of a float32 sum), reduce's set-up on small ones
    if block.size >= 1 << 16:
        return np.einsum("krl->kl", block).reshape((chunks,) + lanes)
    return np.add.reduce(block, axis=1).reshape((chunks,) + lanes)


def _cascade(a: np.ndarray) -> np.ndarray:
    """multi_row_sum: every lane (trailing axes) of ``a`` summed down axis 0 in the cascade."""
    n = a.shape[0]
    power = max(4, _ceil_log2(n) // _LEVELS)
    step = 1 << power
    chunks = n // step
    tail = a[chunks * step:]                                  # after the last full chunk
    if not chunks:
        return _in_order(tail)
    s0 = _chunk_sums(a, chunks, step)
    # level 1 collects chunk sums; every `step` of them moves up to level 2, and so on
    g1 = chunks // step
    acc1 = _in_order(s0[g1 * step:])
    if not g1:      # levels 2 and 3 hold zeros (so does level 0 with no tail): adding one turns -0.0 into 0.0
        return ((_in_order(tail) + acc1) if len(tail) else acc1) + a.dtype.type(0)
    acc0 = _in_order(tail)
    s1 = _chunk_sums(s0, g1, step)
    g2 = g1 // step
    acc2 = _in_order(s1[g2 * step:])
    acc3 = _in_order(_chunk_sums(s1, g2, step))
    return ((acc0 + acc1) + acc2) + acc3


def _row_sum(a: np.ndarray) -> np.ndarray:
    """row_sum: axis 0 split four ways (element 4i+k to partial k), cascaded, then combined."""
    n = a.shape[0]
    m = n // _ILP
    lanes = a.shape[1:]
    part = _cascade(a[:m * _ILP].reshape((m, _ILP) + lanes))  # (ILP, *lanes)
    first = part[0]
    if n > m * _ILP:
        first = _in_order(np.concatenate([first[None], a[m * _ILP:]]))
    return ((first + part[1]) + part[2]) + part[3]


def _vectorized_inner(rows: np.ndarray, vec: int) -> np.ndarray:
    """vectorized_inner_sum: each row (last axis, contiguous) as vectors of ``vec`` lanes."""
    size0 = rows.shape[-1]
    nvec = size0 // vec
    lead = rows.shape[:-1]
    v = _to_front(rows[..., :nvec * vec].reshape(lead + (nvec, vec)), -2)
    lanes = _row_sum(v)                                      # (*lead, vec)
    tail = rows[..., nvec * vec:]
    seq = np.concatenate([tail, lanes], axis=-1)             # scalar tail first, then the lanes
    return _in_order(_to_front(seq, -1))


def _outer(block: np.ndarray, group: int) -> np.ndarray:
    """The outer sums: columns (last axis) in groups of ``group`` summed straight down
    (multi_row_sum), the remaining columns by row_sum; axis -2 is the reduced one."""
    cols = block.shape[-1]
    full = cols // group * group
    down = _to_front(block, -2)
    if full == cols:
        return _cascade(down)
    out = np.empty(down.shape[1:], block.dtype)
    if full:
        out[..., :full] = _cascade(down[..., :full])
    if full < cols:
        out[..., full:] = _row_sum(down[..., full:])
    return out


def _loop2d(block: np.ndarray, in0: int, in1: int) -> np.ndarray:
    """cascade_sum's 2-D loop over ``block`` (``[..., size1, size0]``) whose dim 0 is reduced,
    given the input's byte strides of dims 0 and 1: one partial sum per row (``[..., size1]``)."""
    item = block.itemsize
    vec = _VEC[item]
    size1, size0 = block.shape[-2], block.shape[-1]
    if in0 == item and size0 >= vec:
        return _vectorized_inner(block, vec)
    if in1 == item and size1 >= vec:
        return _outer(block.swapaxes(-1, -2), _NROWS * vec)
    if in0 < in1:
        return _row_sum(_to_front(block, -1))
    return _outer(block.swapaxes(-1, -2), _NROWS)


def _should_swap(a, b) -> int:
    """reorder_dimensions' comparison of dims ``a``, ``b`` = (size, out_stride, in_stride)."""
    for k in (1, 2):
        s0, s1 = a[k], b[k]
        if k == 1 and (s0 == 0) != (s1 == 0):
            return 1 if s1 == 0 else -1
        if s0 == 0 or s1 == 0:
            continue
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        if a[0] > b[0]:
            return 1
    return 0


def _iteration_dims(x: np.ndarray, reduced: set):
    """TensorIterator's dims for ``x`` reduced over ``reduced``: (size, out_stride, in_stride,
    axes) fastest first, reordered and coalesced; ``axes`` lists the source axes merged."""
    out_strides, stride = {}, x.itemsize
    for ax in reversed(range(x.ndim)):
        if ax not in reduced:
            out_strides[ax] = stride
            stride *= x.shape[ax]
    dims = [(x.shape[ax], out_strides.get(ax, 0), x.strides[ax], [ax])
            for ax in reversed(range(x.ndim)) if x.shape[ax] != 1]
    dims = reorder(dims, _should_swap)
    merged = []
    for d in dims:
        if merged:
            p = merged[-1]
            if p[0] * p[1] == d[1] and p[0] * p[2] == d[2]:
                merged[-1] = (p[0] * d[0], p[1], p[2], p[3] + d[3])
                continue
        merged.append(d)
    return merged


def _view_layout(x: np.ndarray, dims: list):
    """(axis order, shape) that show x through the iteration dims, slowest first (NumPy's order)."""
    order = [ax for d in reversed(dims) for ax in reversed(d[3])]
    ones = [ax for ax in range(x.ndim) if x.shape[ax] == 1]
    return tuple(ones + order), tuple(d[0] for d in reversed(dims))


def _iteration_view(x: np.ndarray, dims: list) -> np.ndarray:
    """x seen through the iteration dims, slowest first (NumPy's order)."""
    order, shape = _view_layout(x, dims)
    return x.transpose(order).reshape(shape)


def _serial(view: np.ndarray, dims: list, half_output: bool = False) -> np.ndarray:
    """serial_for_each over a whole iteration space (``view``, its ``dims``): the outputs,
    kept dims in view order (a 0-d array for a full reduction). ``half_output``: each 2-D loop's
    partial sums are added into a float16 output, each rounded to half and each addition rounded."""
    zero = view.dtype.type(0)
    if not dims:
        return np.asarray(view.reshape(()) + zero)
    if len(dims) == 1:                                       # a 1-D loop: size1 = 1, stride 0
        dims = dims + [(1, 0, 0, [])]
        view = view[None]
    reduced = [d[1] == 0 for d in reversed(dims)]           # per view axis
    d0, d1 = dims[0], dims[1]
    if d0[1] != 0 and d1[1] == 0:                            # only dim 1 reduced: make it dim 0
        view = view.swapaxes(-1, -2)
        d0, d1 = d1, d0
    if d0[1] != 0:
        partial = view                                       # nothing reduced: out = 0 + x
    else:
        partial = _loop2d(view, d0[2], d1[2])
        reduced = reduced[:-2] + [d1[1] == 0]
    # the outer reduced dims (and a reduced dim 1) add their partials into the output in order
    axes = [i for i, r in enumerate(reduced) if r]
    if axes:
        keep = [i for i, r in enumerate(reduced) if not r]
        arr = partial.transpose(axes + keep)
        arr = arr.reshape((-1,) + arr.shape[len(axes):])
        partial = _into_half(arr) if half_output else _in_order(arr)
    return partial + zero


def _into_half(partials: np.ndarray) -> np.ndarray:
    """The partials (axis 0, in order) added one by one into a float16 output that starts at 0."""
    out = np.zeros(partials.shape[1:], np.float16)
    for p in partials:
        out = out + p.astype(np.float16)
    return out.astype(partials.dtype)


def _split_dim(dims: list, threads: int) -> int:
    """find_split_dim: the outermost kept dim with at least one column per thread, else the
    largest kept one."""
    best = len(dims) - 1
    for k in range(len(dims) - 1, -1, -1):
        if dims[k][1] == 0:
            break
        if dims[k][0] >= threads:
            return k
        if dims[k][0] > dims[best][0]:
            best = k
    return best


def _parallel_dims(view: np.ndarray, dims: list, half_output: bool = False) -> np.ndarray:
    """parallel_dim_reduction: the kept dim ``find_split_dim`` picks is cut between the
    threads (at 128-byte boundaries when it is contiguous), each part summed on its own."""
    k = _split_dim(dims, _THREADS)
    cols = dims[k][0]
    axis = len(dims) - 1 - k                                 # its view axis
    out_axis = sum(1 for d in dims[k + 1:] if d[1] != 0)     # its place among the outputs
    nthreads = min(_THREADS, cols)
    chunk = -(-cols // nthreads)
    per_128 = 128 // view.itemsize if dims[k][2] == view.itemsize else 1
    parts = []
    for t in range(nthreads):
        begin, end = t * chunk, min(cols, (t + 1) * chunk)
        begin -= begin % per_128
        if end != cols:
            end -= end % per_128
        if begin >= end:
            continue
        sub = dims[:k] + [(end - begin,) + tuple(dims[k][1:])] + dims[k + 1:]
        parts.append(_serial(np.take(view, np.arange(begin, end), axis=axis), sub, half_output))
    return np.concatenate(parts, axis=out_axis)


def _line_sum(x: np.ndarray) -> np.ndarray:
    """The sum of a contiguous 1-D ``x`` of at least one vector (vectorized_inner_sum's one
    row), without the general machinery: the common case, kept cheap."""
    vec = _VEC[x.itemsize]
    n = x.size
    nvec = n // vec
    m = nvec // _ILP
    width = _ILP * vec
    if m == 0:
        lanes = np.zeros(width, x.dtype)
    elif m < 16:                                             # one cascade chunk: a running sum
        lanes = np.add.accumulate(x[:m * width].reshape(m, width))[-1]
    else:
        lanes = _cascade(x[:m * width].reshape(m, width))
    part = lanes.reshape(_ILP, vec)
    first = part[0].copy()
    for i in range(m * _ILP, nvec):                          # the vectors after the last group
        first += x[i * vec:(i + 1) * vec]
    acc = ((first + part[1]) + part[2]) + part[3]
    seq = np.concatenate([x[nvec * vec:], acc])
    return np.add.accumulate(seq)[-1] + x.dtype.type(0)


def _rows_sum(x: np.ndarray) -> np.ndarray:
    """The sums of the rows of a C-contiguous matrix of fewer than 16 groups of ``_ILP`` vectors per row
    (its last dim reduced), each row summed as ``_line_sum`` sums one, all rows at once: the route
    _serial takes for it (vectorized_inner_sum row by row), without its general machinery. A
    per-sample loss summed over its classes, at every step of vmap(grad(loss)). Worked on the
    transpose, so that each step adds whole contiguous rows of lanes (NumPy reduces a leading axis
    of a C-contiguous array row after row, in order)."""
    rows, n = x.shape
    vec = _VEC[x.itemsize]
    nvec = n // vec
    m = nvec // _ILP
    width = _ILP * vec
    xt = np.ascontiguousarray(x.T)                           # (n, rows): element k of every row
    if m == 0:
        lanes = np.zeros((width, rows), x.dtype)
    else:                                                    # one cascade chunk: a running sum
        lanes = np.add.reduce(xt[:m * width].reshape(m, width, rows), axis=0)
    part = lanes.reshape(_ILP, vec, rows)
    first = part[0].copy()
    for i in range(m * _ILP, nvec):                          # the vectors after the last group
        first += xt[i * vec:(i + 1) * vec]
    acc = ((first + part[1]) + part[2]) + part[3]
    seq = np.concatenate([xt[nvec * vec:], acc])             # the scalar tail first, then the lanes
    return np.add.reduce(seq, axis=0) + x.dtype.type(0)


def _reduce(x: np.ndarray, dims: tuple, half=None) -> np.ndarray:
    """The sum of a float32/float64 ``x`` over ``dims``; ``half``: x is a float16 tensor widened to
    float32, summed by ``"sum"``'s kernel (the threads' partials of a two-pass sum stored as halves) or
    ``"nansum"``'s (each 2-D loop's partial sums added into a float16 output too)."""
    half_output = half == "nansum"
    full = len(dims) == x.ndim
    if full and x.flags.c_contiguous and x.size >= _VEC[x.itemsize]:
        line = x.reshape(-1)
        if x.size < _GRAIN or _THREADS == 1:
            return np.asarray(_line_sum(line))
        return _two_pass(line, half is not None)
    if dims == (0,) and x.ndim == 2 and x.shape[0] > 1 and x.shape[1] >= _VEC[x.itemsize] \
            and x.flags.c_contiguous and (x.size < _GRAIN or _THREADS == 1):
        # the rows of a C-ordered matrix summed down (a bias's gradient, at every training step): the
        # route _serial takes for it (the columns are the contiguous kept dim, so _loop2d's outer sums)
        return _outer(x, _NROWS * _VEC[x.itemsize]) + x.dtype.type(0)
    if dims == (1,) and x.ndim == 2 and x.shape[0] > 1 and _VEC[x.itemsize] <= x.shape[1] < 16 * _ILP * _VEC[x.itemsize] \
            and x.flags.c_contiguous and (x.size < _GRAIN or _THREADS == 1) and not half_output:
        return _rows_sum(x)
    it, order, view_shape, full, kept_order, kept_shape = _plan(x, dims)
    view = x.transpose(order).reshape(view_shape)
    if x.size < _GRAIN or _THREADS == 1:
        out = _serial(view, it, half_output)
    elif not full:
        out = _parallel_dims(view, it, half_output)
    elif len(it) == 1:
        out = _two_pass(view, half is not None)
    else:
        out = _serial(view, it, half_output)                 # (not split here: a rare layout)
    if kept_order is not None:                               # outputs back in source order
        out = out.reshape(kept_order[0]).transpose(kept_order[1])
    return np.ascontiguousarray(out).reshape(kept_shape)


_PLANS: dict = {}


def _plan(x: np.ndarray, dims: tuple):
    """The layout work of reducing ``x`` over ``dims`` (TensorIterator's dims, the view's axis order
    and shape, where the outputs land), kept per shape, strides and dims: a training loop reduces
    the same gradient layouts at every step."""
    key = (x.shape, x.strides, x.itemsize, dims)
    plan = _PLANS.get(key)
    if plan is None:
        reduced = set(dims)
        it = _iteration_dims(x, reduced)
        full = all(x.shape[a] == 1 or a in reduced for a in range(x.ndim))
        kept_shape = tuple(x.shape[a] for a in range(x.ndim) if a not in reduced)
        kept_in_view = [ax for d in reversed(it) if d[1] != 0 for ax in reversed(d[3])]
        kept_sorted = sorted(kept_in_view)
        kept_order = None
        if kept_in_view != kept_sorted:
            kept_order = (tuple(x.shape[a] for a in kept_in_view), tuple(kept_in_view.index(a) for a in kept_sorted))
        if len(_PLANS) > 512:
            _PLANS.clear()
        plan = _PLANS[key] = (it, *_view_layout(x, it), full, kept_order, kept_shape)
    return plan


def _two_pass(line: np.ndarray, half_partials: bool = False) -> np.ndarray:
    """two_pass_reduction of a 1-D sum: each thread sums a contiguous chunk, then the
    per-thread partials (one slot per thread, zero if unused; ``half_partials``: stored as float16,
    as a float16 sum's are) are summed."""
    n = line.size
    nthreads = min(_THREADS, -(-n // _GRAIN))
    chunk = -(-n // nthreads)
    partials = np.zeros(_THREADS, line.dtype)
    for t in range(nthreads):
        piece = line[t * chunk:(t + 1) * chunk]
        if piece.size:
            partials[t] = _line_sum(piece) if piece.flags.c_contiguous and piece.size >= _VEC[piece.itemsize] \
                else _serial(piece, [(piece.size, 0, piece.strides[0], [0])])
    if half_partials:
        partials = partials.astype(np.float16).astype(line.dtype)
    return _serial(partials, [(partials.size, 0, partials.itemsize, [0])])


def _dims_of(x: np.ndarray, dim) -> tuple:
    if dim is None:
        return tuple(range(x.ndim))
    if isinstance(dim, (tuple, list)):
        return tuple(d % x.ndim for d in dim) if x.ndim else ()
    return (dim % x.ndim,) if x.ndim else ()


def _exact_kind(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype in (np.float32, np.float64) and x.size > 0


def widened(x: np.ndarray) -> np.ndarray:
    """A float16 ``x`` as the float32 its reduction kernels accumulate in (opmath), element for
    element at ``x``'s own strides, so that the float32 reduction of it takes the order ``x``'s takes;
    PyTorch's float16 sum, mean, var/std and norms are those of float32 rounded once (measured)."""
    return _same_strides_copy(x, np.float32)


def torch_sum(x: np.ndarray, dim=None, keepdim: bool = False, half=None) -> np.ndarray:
    """``torch.sum(x, dim, keepdim)`` in PyTorch's order (float32/float64, float16 in float32; others
    via NumPy). ``half``: ``x`` is a widened float16 tensor, summed by that kernel (see _reduce)."""
    if x.dtype == np.float16 and x.size:
        return torch_sum(widened(x), dim, keepdim, "sum").astype(np.float16)
    dims = _dims_of(x, dim)
    if not _exact_kind(x) or (dims == () and x.ndim):
        return np.sum(x, axis=dims if dim is not None else None, keepdims=keepdim)
    out = _reduce(x, dims, half)
    if keepdim:
        out = out.reshape(tuple(1 if a in dims else s for a, s in enumerate(x.shape)))
    return out


def _same_strides_copy(x: np.ndarray, dtype=None) -> np.ndarray:
    """A writable copy of ``x`` (in ``dtype``, else x's) with ``x``'s own strides in elements (a
    strided view's gaps included), so that a reduction of it takes the path and order it takes for
    ``x``; a dense copy where a stride is negative."""
    dtype = np.dtype(dtype or x.dtype)
    if any(st < 0 for st in x.strides) or not x.size:
        return x.astype(dtype, order="K")
    span = sum((n - 1) * st for n, st in zip(x.shape, x.strides)) // x.itemsize + 1
    buffer = np.empty(span, dtype)
    strides = tuple(st // x.itemsize * dtype.itemsize for st in x.strides)
    copy = np.lib.stride_tricks.as_strided(buffer, x.shape, strides, writeable=True)
    copy[...] = x
    return copy


def torch_nansum(x: np.ndarray, dim=None, keepdim: bool = False, half=None) -> np.ndarray:
    """``torch.nansum``: NaNs load as zero, then the same order as ``sum``."""
    if x.dtype == np.float16 and x.size:
        return torch_nansum(widened(x), dim, keepdim, "nansum").astype(np.float16)
    if _exact_kind(x):
        nans = np.isnan(x)
        if nans.any():
            x = _same_strides_copy(x)     # (the layout decides the summation order: a dense copy of a
            x[nans] = 0                   # strided view would be summed another way)
        return torch_sum(x, dim, keepdim, half)
    return np.nansum(x, axis=_dims_of(x, dim) if dim is not None else None, keepdims=keepdim)


def torch_mean(x: np.ndarray, dim=None, keepdim: bool = False) -> np.ndarray:
    """``torch.mean`` on CPU: the sum in PyTorch's order, divided by the count."""
    if x.dtype == np.float16 and x.size:
        return torch_mean(widened(x), dim, keepdim).astype(np.float16)
    dims = _dims_of(x, dim)
    count = 1
    for d in dims:
        count *= x.shape[d]
    return np.asarray(torch_sum(x, dim, keepdim) / x.dtype.type(count))


def torch_cumsum(x: np.ndarray, dim: int) -> np.ndarray:
    """``torch.cumsum`` on CPU: a running sum in CPU's accumulation type (``acc_type<T, false>``:
    double for float32, float for float16), each output rounded once to the dtype."""
    if x.ndim == 0:
        return x.copy()
    axis = dim % x.ndim
    acc = _CUM_ACC.get(x.dtype)
    # C order whatever the input's layout (NumPy keeps it, ATen allocates the result contiguous)
    out = np.cumsum(x, axis=axis, dtype=acc).astype(x.dtype, order="C") if acc is not None \
        else np.ascontiguousarray(np.cumsum(x, axis=axis))
    if out.dtype.kind == "f":
        out += out.dtype.type(0)      # the running sum starts at +0: a zero sum is never -0
    return out


def torch_cumprod(x: np.ndarray, dim: int) -> np.ndarray:
    """``torch.cumprod`` on CPU: a running product in the accumulation type, as cumsum."""
    if x.ndim == 0:
        return x.copy()
    acc = _CUM_ACC.get(x.dtype)
    axis = dim % x.ndim
    return np.cumprod(x, axis=axis, dtype=acc).astype(x.dtype, order="C") if acc is not None \
        else np.ascontiguousarray(np.cumprod(x, axis=axis))


# acc_type<T, /*is_cuda=*/false> of the cumulative kernels
_CUM_ACC = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}


def nll_cascade(picked: np.ndarray, valid: np.ndarray, weights=None):
    """``nll_loss``'s sum over the batch as its CPU kernel adds it, and the total weight: eight levels of
    partial sums, level j flushed into level j + 1 whenever the sample index is a multiple of
    ``2**((j + 1) * power)`` (ignored samples are skipped before the flush), the levels added in order.
    ``picked``: each sample's input at its target; ``valid``: whether it counts (None: every one does);
    ``weights``: its class weight, or None."""
    c = picked.dtype.type
    batch = picked.shape[0]
    power = max(4, _ceil_log2(batch) // 8)
    step = (1 << power) - 1
    if weights is None and batch and (valid is None or valid.all()):
        return _nll_cascade_runs(picked, power, step), c(batch)
    if valid is None:
        valid = np.ones(batch, np.bool_)
    loss = [c(0)] * 8
    weight = [c(0)] * 8
    for b in range(batch):
        if not valid[b]:
            continue
        if weights is None:
            loss[0] = loss[0] - picked[b]
        else:
            loss[0] = loss[0] - picked[b] * weights[b]
            weight[0] = weight[0] + weights[b]
        for j in range(7):
            if b & (step << (j * power)):
                break
            weight[j + 1] = weight[j + 1] + weight[j]
            loss[j + 1] = loss[j + 1] + loss[j]
            weight[j] = loss[j] = c(0)
    total = c(0)
    for v in loss:
        total = total + v
    if weights is None:
        return total, c(int(np.count_nonzero(valid)))
    weight_total = c(0)
    for v in weight:
        weight_total = weight_total + v
    return total, weight_total


def _nll_cascade_runs(picked, power, step):
    """``nll_cascade``'s sum when every sample counts with weight 1: level 0 takes the samples one by
    one between its flushes (after sample 0, then after every multiple of ``2**power``), so each run
    between two flushes is a running sum, which NumPy's ``accumulate`` adds in that order, all runs
    at once; the levels above move only at flushes."""
    c = picked.dtype.type
    zero = c(0)
    negated = np.negative(picked)           # (0 - p is -p, and a - p is a + -p, exactly)
    n, run = picked.shape[0], step + 1
    full = (n - 1) // run                   # the runs that end at a flush, after sample 0's
    # (+ 0: a run starts from level 0's zero, so an all -0. run sums to 0., as the kernel's)
    sums = [negated[0] + zero, *(np.add.accumulate(negated[1:1 + full * run].reshape(full, run), axis=1)[:, -1]
                                 + zero)]
    loss = [zero] * 8
    for k, value in enumerate(sums):
        b = k * run
        loss[0] = value
        for j in range(7):
            if b & (step << (j * power)):
                break
            loss[j + 1] = loss[j + 1] + loss[j]
            loss[j] = zero
    if 1 + full * run < n:
        loss[0] = np.add.accumulate(negated[1 + full * run:])[-1] + zero
    total = zero
    for v in loss:
        total = total + v
    return total


def torch_norm2_rows(rows: np.ndarray) -> np.ndarray:
    """ATen's vectorized L2 norm of each row of ``rows`` (2-D, rows contiguous), float32 or float64:
    the squares added in order into the lanes of one vector (a product then a sum, no fused
    multiply-add), the lanes folded left into lane 0, the scalar tail added with a fused
    multiply-add (the compiler contracts ``buffer[0] += v * v``), then the square root. In float32
    the compiler runs the first four elements of a tail of four or more as one SSE product, added
    one by one unfused (measured on rows of 1 to 39 elements: 0 of 2,000 each differ)."""
    from .exact import fma
    count, n = rows.shape
    vec = _VEC[rows.itemsize]
    m = n - n % vec
    if m:
        body = rows[:, :m].reshape(count, m // vec, vec)
        acc = np.add.accumulate(body * body, axis=1)[:, -1]
    else:
        acc = np.zeros((count, vec), rows.dtype)
    total = acc[:, 0]
    for j in range(1, vec):
        total = total + acc[:, j]
    if rows.itemsize == 4 and n - m >= 4:
        for j in range(m, m + 4):
            total = total + rows[:, j] * rows[:, j]
        m += 4
    for j in range(m, n):
        total = fma(rows[:, j], rows[:, j], total).astype(rows.dtype)
    return np.sqrt(total)


def serial_sum(terms: np.ndarray, axis, keepdim: bool, like: np.ndarray) -> np.ndarray:
    """ATen's ``binary_kernel_reduce`` adding ``terms``: for each output, its reduced elements added one
    by one in memory order (``like``'s, as TensorIterator walks it); a single output of GRAIN_SIZE
    elements or more is split between the threads (``parallel_for``: one contiguous chunk each), whose
    partial sums are then added in thread order."""
    axis = sorted(axis)
    kept = [d for d in range(terms.ndim) if d not in axis]
    walked = sorted(axis, key=lambda d: -abs(like.strides[d]))        # the fastest-moving dim last
    out_shape = [terms.shape[d] for d in kept]
    count = int(np.prod([terms.shape[d] for d in axis], dtype=np.int64))
    flat = np.transpose(terms, kept + walked).reshape(out_shape + [count])
    if count == 0:
        total = np.zeros(out_shape, terms.dtype)
    elif flat.size == count and count >= _GRAIN and threads() > 1:
        tasks = min(threads(), -(-count // _GRAIN))
        chunk = -(-count // tasks)
        total = None
        for start in range(0, count, chunk):
            part = np.add.accumulate(flat[..., start:start + chunk], axis=-1)[..., -1]
            total = part if total is None else total + part
    else:
        total = np.add.accumulate(flat, axis=-1)[..., -1]
    if keepdim:
        total = total.reshape([1 if d in axis else s for d, s in enumerate(terms.shape)])
    return total
