"""Which of two equal values PyTorch's CPU max/min kernels return: it shows only as the sign of a zero.

``max(-0., 0.)`` is a tie, and a kernel returns one operand or the other by how it is written.
NumPy's choice differs from PyTorch's, so ``torch.maximum``, ``max()``, ``amax`` and their ``min``
twins printed ``0.`` where PyTorch prints ``-0.`` (and the other way). PyTorch's choice, read from
its AVX2 kernels (``aten/src/ATen/cpu/vec``: ``maximum`` is ``_mm256_max_ps``, which returns its
second operand on a tie; the scalar loops keep the first) and pinned down with the oracle:

* ``maximum``/``minimum`` (``cpu_kernel_vec``): along the innermost (coalesced) run of the output,
  blocks of two vectors (16 float32, 8 float64) take ``other``; the scalar tail takes ``self``.
  Only when every input is contiguous along the run or one of them is a broadcast scalar; else
  all elements are scalar.
* ``max()``/``min()`` of a whole tensor (``reduce_all``): one accumulator vector over the data in
  order (a later equal value replaces the held one), then lanes combined by shuffles — float32
  in lane order 0, 4, 2, 6, 1, 5, 3, 7, later winning; fewer elements than a vector: the last
  (``_reduce_all_lanes``).
* ``amax``/``amin`` (``binary_kernel_reduce_vec``): along a contiguous reduced run, four
  accumulator vectors (a later block wins, lane by lane), combined in order, then lanes 0..V-1
  with the first winning, then the scalar tail, which never wins a tie over them. Reducing an
  outer dim with contiguous columns: the columns in blocks of four vectors take the last row,
  the remaining columns the first.

Each function takes NumPy's result and only rewrites the zeros that are ties; tensors above
``GRAIN_SIZE`` elements split across threads and keep NumPy's choice there.
"""
from __future__ import annotations

import numpy as np

VECTOR_BYTES = 32          # AVX2, PyTorch's CPU capability on the reference machine
GRAIN_SIZE = 32768         # at::internal::GRAIN_SIZE: above it the kernels split the work


def _lanes(dtype) -> int:
    return VECTOR_BYTES // np.dtype(dtype).itemsize


def _tied_zeros(a):
    return a.dtype.kind == "f" and a.size and a.size <= GRAIN_SIZE


# ---------------------------------------------------------------- maximum / minimum
def maximum(a, b):
    return _pick_elementwise(np.maximum(a, b), a, b)


def minimum(a, b):
    return _pick_elementwise(np.minimum(a, b), a, b)


def _pick_elementwise(out, a, b):
    out = np.asarray(out)
    if not _tied_zeros(out):
        return out
    zero = out == 0
    if not zero.any():
        return out
    a_full, b_full = np.broadcast_to(a, out.shape), np.broadcast_to(b, out.shape)
    tie = zero & (a_full == 0) & (b_full == 0)
    run, vectorised = _inner_run(out.shape, [np.asarray(a), np.asarray(b)])
    from_other = np.zeros(out.shape, bool)
    if vectorised:
        block = 2 * _lanes(out.dtype)
        position = np.arange(out.size).reshape(out.shape) % run
        from_other = position < (run // block) * block
    out = out.copy()
    out[tie] = np.where(from_other, b_full, a_full)[tie]
    return out


def _inner_run(shape, operands):
    """The length of the output's innermost run after TensorIterator coalesces dims, and
    whether ``cpu_kernel_vec`` vectorises it (each input contiguous along it, or one of them
    a broadcast scalar)."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    if not dims:
        return 1, False
    strides = []
    for x in operands:
        own = np.broadcast_to(x, shape).strides if x.ndim else (0,) * len(shape)
        strides.append([s // x.itemsize for s in own])
    inner = dims[-1]
    run = shape[inner]
    for d in reversed(dims[:-1]):
        if all(s[d] == s[inner] * run for s in strides):
            run *= shape[d]
        else:
            break
    inner_strides = [s[inner] for s in strides]
    vectorised = all(s == 1 for s in inner_strides) or sorted(inner_strides) == [0, 1]
    return run, vectorised


# ---------------------------------------------------------------- max() / min() of everything
def pick_all(a, result):
    """``result`` (NumPy's max or min of all of ``a``) with the zero ``reduce_all`` keeps."""
    if not (_tied_zeros(a) and result == 0):
        return result
    flat = np.ascontiguousarray(a).reshape(-1)
    zeros = np.flatnonzero(flat == 0)
    lanes, order = _reduce_all_lanes(flat.dtype, flat.size)
    rank = np.empty(lanes, np.int64)
    rank[order] = np.arange(lanes)
    strength = rank[zeros % lanes] * flat.size + zeros // lanes
    return np.array(flat[zeros[np.argmax(strength)]], a.dtype)


def _reduce_all_lanes(dtype, n):
    """The accumulator's lanes and their order from weakest to strongest when combined.

    Fewer elements than a vector are combined one after another (the last wins). float32
    (8 lanes) and float16 (16 lanes) vectors are folded by shuffles — halves swapped, then
    quarters, … — where the shuffled-in lane wins a tie, which orders the lanes by their
    bit-reversed index; float64's 4 lanes, and a float16 tensor of 8 to 15 elements (reduced
    as 8 lanes), are combined in lane order."""
    lanes = _lanes(dtype)
    if n < lanes and dtype == np.float16 and n >= 8:
        return 8, list(range(8))
    if n < lanes or lanes == 4:
        return lanes, list(range(lanes))
    bits = lanes.bit_length() - 1
    return lanes, sorted(range(lanes), key=lambda lane: int(format(lane, f"0{bits}b")[::-1], 2))


# ---------------------------------------------------------------- amax / amin over dims
def pick_over_dims(a, result, axes, keepdims, largest: bool):
    """``result`` (NumPy's amax/amin over ``axes``) with the zeros PyTorch's reduction keeps."""
    result = np.asarray(result)
    if not _tied_zeros(a) or not (result == 0).any() or a.ndim == 0:
        return result
    axes = tuple(sorted(ax % a.ndim for ax in ((axes,) if isinstance(axes, int) else
                                               (range(a.ndim) if axes is None else axes))))
    # iterate in memory order, as TensorIterator does: axes by decreasing stride
    order = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))
    view = np.transpose(a, order)
    sized = [d for d in range(view.ndim) if view.shape[d] != 1]
    reduced = sorted(order.index(ax) for ax in axes if a.shape[ax] != 1)
    kept = [d for d in sized if d not in reduced]
    where = [sized.index(d) for d in reduced]
    if not reduced or where != list(range(where[0], where[-1] + 1)):
        return result                    # reduced dims apart: not modelled, NumPy's choice stays
    outer = int(np.prod([view.shape[d] for d in kept if d < reduced[0]], dtype=np.int64))
    inner = int(np.prod([view.shape[d] for d in kept if d > reduced[-1]], dtype=np.int64))
    span = int(np.prod([view.shape[d] for d in reduced], dtype=np.int64))
    block = np.ascontiguousarray(view).reshape(outer, span, inner)
    lanes = _lanes(a.dtype)
    positions = np.arange(span)
    if inner == 1:       # a contiguous reduced run per output
        wide = 4 * lanes
        in_vectors = positions < (span // wide) * wide
        lane, j, i = positions % lanes, (positions % wide) // lanes, positions // wide
        strength = np.where(in_vectors, (((lanes - lane) * 4 + j) * span + i) + span, span - 1 - positions)
        strength = np.broadcast_to(strength[None, :, None], block.shape)
    else:                # an outer dim reduced over contiguous columns
        columns = np.arange(inner)
        vector_columns = columns < (inner // (4 * lanes)) * (4 * lanes)
        strength = np.where(vector_columns[None, :], positions[:, None], span - 1 - positions[:, None])
        strength = np.broadcast_to(strength[None], block.shape)
    value = np.where(np.isnan(block), -np.inf, block)
    best = (np.max if largest else np.min)(value, axis=1, keepdims=True)
    candidates = np.where(value == best, strength, -1)
    chosen = np.take_along_axis(block, np.argmax(candidates, axis=1)[:, None, :], axis=1)[:, 0, :]
    picked = _back_to_result(chosen, view, order, kept, reduced, a, axes, keepdims)
    fixed = result.copy()
    zero = fixed == 0
    fixed[zero] = picked[zero]
    return fixed


def _back_to_result(chosen, view, order, kept, reduced, a, axes, keepdims):
    """``chosen`` (outer, inner) laid out as NumPy's result of ``a`` over ``axes``."""
    kept_view_shape = [view.shape[d] if d not in reduced else 1 for d in range(view.ndim)]
    full = chosen.reshape(kept_view_shape)
    full = np.transpose(full, np.argsort(order))        # back to a's axis order, reduced axes as 1
    return full if keepdims else full.reshape([a.shape[d] for d in range(a.ndim) if d not in axes])
