"""PyTorch's native CPU convolutions (ATen's slow_conv2d, slow_conv3d, slow_conv_dilated2d/3d and
slow_conv_transpose2d/3d: im2col and one gemm a sample at a time), in their order, so that every
float64 convolution -- and every float32 one PyTorch does not hand to oneDNN -- agrees with
PyTorch's to the last bit.

Which kernel PyTorch runs (``_select_conv_backend``; a 1-d convolution is first viewed as a 2-d one
of height 1): oneDNN for a float32 problem unless it is small (one sample, one group, a kernel at
most 3 wide in one of its last two dims, at most 20,480 input elements in the first four dims) or a
transposed one whose output_padding reaches a stride -- oneDNN's JIT kernels pick their blocking
and order by shape and are not reproduced here -- and the native kernels for everything else.
What decides their bits (checked against PyTorch 2.13 on ~600 random problems of 1 to 3 dims,
strides, paddings, dilations, output paddings and groups):

* forward: per sample and group, the output rows filled with the bias (no bias: a plain product),
  then ``gemm(weight (O, K), columns (K, L))`` added into them (beta = 1), K = C * prod(kernel);
* input gradient: ``gemm(weight^T, grad (O, L))`` gives the columns' gradients, added back into a
  zero input (col2im) kernel offset by offset;
* weight gradient: ``gemm(grad (O, L), columns^T)`` accumulated sample after sample (beta = 1),
  from zero;
* bias gradient: each group's slice of the gradient summed on its own (slow_conv_dilated: sample by
  sample);
* a transposed convolution is the input gradient of the convolution (the bias added after), and its
  gradients are the forward (cut to the input's positions) and the weight gradient with the roles
  of input and output's gradient exchanged.

slow_conv3d runs its groups through one batched gemm, whose MKL kernel is not always the plain
gemm's: a grouped, undilated 3-d problem keeps the general path.  Without MKL the products are
NumPy's.
"""
from __future__ import annotations

import numpy as np

from . import mkl
from .reduction_order import threads, torch_sum

_SMALL_INPUT = 20480                # use_mkldnn's "for some case, native is faster" size


def native(dtype, input_shape, weight_shape, stride, dilation, groups, transposed=False,
           output_padding=()) -> bool:
    """Whether PyTorch runs this convolution with the native kernels reproduced here."""
    if dtype not in (np.float32, np.float64) or len(input_shape) not in (3, 4, 5) or 0 in input_shape \
            or 0 in weight_shape or len(stride) != len(input_shape) - 2 or len(dilation) != len(stride):
        return False
    if len(input_shape) == 3:                                   # view1d_as_2d
        input_shape, weight_shape = input_shape[:2] + (1,) + input_shape[2:], weight_shape[:2] + (1,) + weight_shape[2:]
        stride, dilation = (1,) + tuple(stride), (1,) + tuple(dilation)
        output_padding = (0,) + tuple(output_padding)
    if not transposed and len(input_shape) == 5 and groups > 1 and all(d == 1 for d in dilation):
        return False                                            # slow_conv3d's batched gemm
    if dtype == np.float64:
        return True
    if transposed and any(p >= s for p, s in zip(output_padding, stride)):
        return True                                             # oneDNN refuses a big output_padding
    strided, dilated = any(s != 1 for s in stride), any(d != 1 for d in dilation)
    batch = input_shape[0]
    onednn = ((strided or dilated or batch >= 16 or weight_shape[-1] != 1 or weight_shape[-2] != 1
               or threads() > 1)
              and (groups > 1 or (weight_shape[-1] > 3 and weight_shape[-2] > 3) or batch > 1
                   or int(np.prod(input_shape[:4])) > _SMALL_INPUT))
    return not onednn


def windows(x, kernel, stride, padding, dilation, limit=None):
    """(N, C, *out, *kernel) views of the zero-padded input: the patches each output reads (the first
    ``limit`` outputs per dimension where given: a transposed convolution's output_padding leaves
    positions no input reached)."""
    from numpy.lib.stride_tricks import sliding_window_view
    nd = len(kernel)
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    span = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    w = sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    limit = limit or (None,) * nd
    return w[(slice(None), slice(None)) + tuple(slice(None, m * s if m else None, s) for s, m in zip(stride, limit))
             + tuple(slice(None, None, d) for d in dilation)]


def col2im(padded, block_of, kernel, stride, dilation, outs):
    """col2im: each kernel offset's block of patch gradients (``block_of(offset)``, shaped as ``padded``'s
    leading dims then ``outs``) added into the zero-padded input where that offset read, offset by offset
    (ATen's order: an input element's contributions arrive by increasing offset)."""
    lead = (slice(None),) * (padded.ndim - len(kernel))
    for offset in np.ndindex(*kernel):
        padded[lead + tuple(slice(k * d, k * d + s * (m - 1) + 1, s)
                            for k, d, s, m in zip(offset, dilation, stride, outs))] += block_of(offset)


def _columns(sample, kernel, stride, padding, dilation, limit=None):
    """im2col of one sample (C, *spatial): (C * prod(kernel), L), rows ordered channel, then offsets;
    only the first ``limit`` output positions per dim where given (a transposed convolution's input)."""
    nd = len(kernel)
    patches = windows(sample[None], kernel, stride, padding, dilation, limit)[0]     # C, *out, *kernel
    order = (0,) + tuple(range(1 + nd, 1 + 2 * nd)) + tuple(range(1, 1 + nd))      # C, *kernel, *out
    outs = patches.shape[1:1 + nd]
    return np.ascontiguousarray(patches.transpose(order)).reshape(-1, int(np.prod(outs))), outs


def _gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c):
    """cpublas::gemm into ``c`` (column-major, so the row-major products read transposed); NumPy's
    matmul without MKL."""
    if not mkl.gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c):
        c_rows = c.reshape(n, m)
        a_rows = np.asarray(a).reshape(-1, lda)
        b_rows = np.asarray(b).reshape(-1, ldb)
        op_a = a_rows[:m, :k] if trans_a else a_rows[:k, :m].T       # m x k
        op_b = b_rows[:k, :n] if trans_b else b_rows[:n, :k].T       # k x n
        c_rows[...] = (beta * c_rows if beta else 0) + (op_a @ op_b).T
    return c


def forward(x, w, bias, stride, padding, dilation, groups, limit=None):
    n, o = x.shape[0], w.shape[0]
    og, cg = o // groups, x.shape[1] // groups
    kernel = w.shape[2:]
    out = None
    for g in range(groups):
        weight = np.ascontiguousarray(w[g * og:(g + 1) * og]).reshape(og, -1)
        for i in range(n):
            columns, outs = _columns(x[i, g * cg:(g + 1) * cg], kernel, stride, padding, dilation, limit)
            if out is None:
                out = np.empty((n, o) + tuple(outs), x.dtype)
            positions, depth = columns.shape[1], columns.shape[0]
            result = np.empty((og, positions), x.dtype)
            if bias is not None:
                result[...] = bias[g * og:(g + 1) * og, None]
            _gemm(False, False, positions, og, depth, columns, positions, weight, depth,
                  0.0 if bias is None else 1.0, result)
            out[i, g * og:(g + 1) * og] = result.reshape((og,) + tuple(outs))
    return out


def input_grad(grad, w, input_shape, stride, padding, dilation, groups):
    n, o = grad.shape[:2]
    og, cg = o // groups, input_shape[1] // groups
    kernel, outs = w.shape[2:], grad.shape[2:]
    padded = np.zeros(tuple(input_shape[:2]) + tuple(s + 2 * p for s, p in zip(input_shape[2:], padding)),
                      grad.dtype)
    for g in range(groups):
        weight = np.ascontiguousarray(w[g * og:(g + 1) * og]).reshape(og, -1)
        depth = weight.shape[1]
        for i in range(n):
            grad_rows = np.ascontiguousarray(grad[i, g * og:(g + 1) * og]).reshape(og, -1)
            positions = grad_rows.shape[1]
            columns = np.empty((depth, positions), grad.dtype)
            _gemm(False, True, positions, depth, og, grad_rows, positions, weight, depth, 0.0, columns)
            columns = columns.reshape((cg,) + tuple(kernel) + tuple(outs))
            col2im(padded[i, g * cg:(g + 1) * cg], lambda offset: columns[(slice(None),) + offset], kernel,
                   stride, dilation, outs)
    inner = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, input_shape[2:]))
    return np.ascontiguousarray(padded[inner])


def weight_grad(x, grad, weight_shape, stride, padding, dilation, groups, limit=None):
    n, o = grad.shape[:2]
    og, cg = o // groups, x.shape[1] // groups
    kernel = weight_shape[2:]
    out = np.empty(weight_shape, x.dtype)
    for g in range(groups):
        depth = int(np.prod(weight_shape[1:]))
        total = np.zeros((og, depth), x.dtype)
        for i in range(n):
            columns, _ = _columns(x[i, g * cg:(g + 1) * cg], kernel, stride, padding, dilation, limit)
            positions = columns.shape[1]
            grad_rows = np.ascontiguousarray(grad[i, g * og:(g + 1) * og]).reshape(og, -1)
            _gemm(True, False, depth, og, positions, columns, positions, grad_rows, positions, 1.0, total)
        out[g * og:(g + 1) * og] = total.reshape((og,) + tuple(weight_shape[1:]))
    return out


def bias_grad(grad, groups, dilated=False):
    """The bias gradient: ATen sums each group's (contiguous) slice of ``grad`` over all dims but 1 --
    one output channel a group makes it a full reduction, in another order than the whole tensor's;
    slow_conv_dilated sums sample by sample, each sample's sum added to the total."""
    og = grad.shape[1] // groups
    spatial = tuple(range(1, grad.ndim - 1))
    parts = []
    for g in range(groups):
        part = np.ascontiguousarray(grad[:, g * og:(g + 1) * og])
        if dilated:
            total = np.zeros(og, grad.dtype)
            for sample in part:
                total += np.asarray(torch_sum(sample, spatial), grad.dtype).reshape(og)
        else:
            total = np.asarray(torch_sum(part, (0,) + tuple(d + 1 for d in spatial)), grad.dtype).reshape(og)
        parts.append(total)
    return np.concatenate(parts)
