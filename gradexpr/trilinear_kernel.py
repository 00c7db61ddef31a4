"""ATen's ``_trilinear`` (aten/src/ATen/native/Linear.cpp), step by step in NumPy, so that
``nn.Bilinear``/``F.bilinear`` and their gradients agree with PyTorch's to the last bit.

An einsum of the three inputs gives the same numbers up to rounding only: PyTorch adds the
products in an order of its own.  It unrolls one dimension (``unroll_dim``, 1 by default) and,
for each index along it, multiplies two inputs and then the third through
``sumproduct_pair``: a dimension summed in one operand only is summed right away (``sum``),
the others are permuted into ``(kept in both, kept in left, summed)`` x
``(kept in both, summed, kept in right)`` and multiplied by ``bmm`` -- whose own order
(its loop below 400 multiply-adds, MKL's gemm above) ``ops.linalg`` reproduces.  Each slice
is added into a zero output.  (Checked against ``torch._trilinear`` on the bilinear forward
and its three backward forms, sizes 1-20: equal bit for bit.)
"""
from __future__ import annotations

import numpy as np

from .reduction_order import torch_sum


def _sumproduct_pair(left: np.ndarray, right: np.ndarray, sum_dims: list, bmm) -> np.ndarray:
    """``(left * right).sum(sum_dims, keepdim=True)`` as ATen's einsum helper computes it."""
    if not sum_dims:
        return left * right
    kept_both, kept_left, kept_right = [], [], []
    sum_size = 1
    for d in range(left.ndim):
        in_left, in_right = left.shape[d] != 1, right.shape[d] != 1
        if d in sum_dims:
            if in_left and in_right:
                sum_size *= left.shape[d]
            elif in_left:
                left = torch_sum(left, d, keepdim=True)
            elif in_right:
                right = torch_sum(right, d, keepdim=True)
        elif in_left and in_right:
            kept_both.append(d)
        elif in_left:
            kept_left.append(d)
        else:
            kept_right.append(d)
    both = int(np.prod([left.shape[d] for d in kept_both]))
    left_size = int(np.prod([left.shape[d] for d in kept_left]))
    right_size = int(np.prod([right.shape[d] for d in kept_right]))
    out_order = kept_both + kept_left + list(sum_dims) + kept_right
    out_shape = [left.shape[d] for d in kept_both + kept_left] + [1] * len(sum_dims) + \
        [right.shape[d] for d in kept_right]
    lhs = left.transpose(kept_both + kept_left + list(sum_dims) + kept_right).reshape(both, left_size, sum_size)
    rhs = right.transpose(kept_both + list(sum_dims) + kept_right + kept_left).reshape(both, sum_size, right_size)
    return bmm(lhs, rhs).reshape(out_shape).transpose(np.argsort(out_order))


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, bmm, unroll_dim: int = 1) -> np.ndarray:
    """``torch._trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim)``; input k
    lacks the dims of ``expandk`` (unsqueezed there), the output those of ``sumdim``. ``bmm`` is the
    engine's exact batched matrix product."""
    dtype = np.result_type(i1, i2, i3)
    i1, i2, i3 = (np.asarray(i, dtype) for i in (i1, i2, i3))
    total = i1.ndim + len(expand1)
    sum_12, sum_23, out_shape = [], [], []
    unroll_size = -1
    for d in range(total):
        size = 0
        if d in expand1:
            i1 = np.expand_dims(i1, d)
        else:
            size = i1.shape[d]
        if d in expand2:
            i2 = np.expand_dims(i2, d)
        else:
            size = i2.shape[d]
        if d in expand3:
            i3 = np.expand_dims(i3, d)
        else:
            size = i3.shape[d]
        if d in sumdim and d != unroll_dim:
            (sum_12 if d in expand3 else sum_23).append(d)
        out_shape.append(1 if d in sumdim else size)
        if d == unroll_dim:
            unroll_size = size
    out = np.zeros(out_shape, dtype)
    if i1.size and i2.size and i3.size:
        steps = [0 if unroll_dim in expand else 1 for expand in (expand1, expand2, expand3)]

        def narrow(x, start):
            return x[(slice(None),) * unroll_dim + (slice(start, start + 1),)]

        for k in range(unroll_size):
            part = _sumproduct_pair(narrow(i1, k * steps[0]), narrow(i2, k * steps[1]), sum_12, bmm)
            part = _sumproduct_pair(part, narrow(i3, k * steps[2]), sum_23, bmm)
            if unroll_dim in sumdim:
                out += part
            else:
                narrow(out, k)[...] += part
    return out.reshape([s for d, s in enumerate(out_shape) if d not in sumdim])
