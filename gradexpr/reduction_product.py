"""``prod`` in the order of PyTorch's CPU kernel (``binary_kernel_reduce_vec``), so float32 and float64
products agree to the bit.

TensorIterator's loop (dims reordered and coalesced, fastest first: ``reduction_order``) decides:

* the reduced dim is the fastest and contiguous (``is_contiguous_reduction``): each row goes through
  ``vectorized_inner_reduction`` -- four vector accumulators over blocks of ``4 * lanes`` elements,
  combined as ``(a0 * a1) * (a2 * a3)``, their lanes multiplied in order into the output, then the
  leftover elements one by one;
* otherwise each output is a running product over its elements in iteration order (the outer
  reduction's columns and ``basic_loop`` both multiply one element at a time).

The output starts at 1 and rows of the same output chain into it in iteration order.
"""
from __future__ import annotations

import numpy as np

from . import reduction_order as order


# AVX2 lanes per vector by itemsize: float16 multiplies as Vectorized<Half>, 16 lanes, each product
# rounded to half (the kernel's scalar_t is Half, not its opmath float)
_LANES = {2: 16, **order._VEC}


def _row_into(out: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """vectorized_inner_reduction of one row per output, multiplied into the outputs' running values."""
    lanes = _LANES[rows.itemsize]
    block = 4 * lanes
    blocks = rows.shape[1] // block
    if blocks:
        acc = rows[:, :block].reshape(-1, 4, lanes).copy()
        for i in range(1, blocks):
            acc *= rows[:, i * block:(i + 1) * block].reshape(-1, 4, lanes)
        combined = (acc[:, 0] * acc[:, 1]) * (acc[:, 2] * acc[:, 3])
        lane = combined[:, 0]
        for j in range(1, lanes):
            lane = lane * combined[:, j]
        out = out * lane
    for i in range(blocks * block, rows.shape[1]):
        out = out * rows[:, i]
    return out


def torch_prod(x: np.ndarray, dims: tuple, keepdim: bool) -> np.ndarray:
    """``x.prod(dims, keepdim)`` for float16/32/64 ``x`` with at least one element."""
    reduced = tuple(sorted(set(dims))) if dims else tuple(range(x.ndim))
    kept = [ax for ax in range(x.ndim) if ax not in reduced]
    dims_it = order._iteration_dims(x, set(reduced))
    fastest_first = [ax for d in dims_it if d[1] == 0 for ax in d[3]]
    singles = [ax for ax in reduced if ax not in fastest_first]
    lines = np.transpose(x, kept + singles + fastest_first[::-1])
    outputs = int(np.prod([x.shape[ax] for ax in kept], dtype=np.int64))
    lines = lines.reshape(outputs, -1)
    with np.errstate(all="ignore"):
        inner = dims_it[0] if dims_it else None
        if inner is not None and inner[1] == 0 and inner[2] == x.itemsize and lines.shape[1]:
            rows = lines.reshape(outputs, -1, inner[0])           # each output's rows, in order
            out = np.ones(outputs, x.dtype)
            for r in range(rows.shape[1]):
                out = _row_into(out, rows[:, r])
        elif lines.shape[1]:
            out = np.multiply.accumulate(lines, axis=1)[:, -1]
        else:
            out = np.ones(outputs, x.dtype)
    shape = tuple(1 if ax in reduced else s for ax, s in enumerate(x.shape)) if keepdim \
        else tuple(x.shape[ax] for ax in kept)
    return out.reshape(shape)
