"""The fused backward of the convolution entries (ATen's ``convolution_backward``): the gradients
of input, weight and bias in one call; under ``create_graph`` one ``ConvolutionBackwardBackward0``
node with those outputs, whose own gradients are convolutions again (ATen's
``_convolution_double_backward``), so that every order records PyTorch's nodes."""
from __future__ import annotations

import functools

from .. import conv_order
from ..grad_mode import VMAP_LEVELS
from ..graph import is_grad_enabled, no_grad
from ..tensor import Tensor
from . import nn_layers as L
from .common import _F


def convolution_backward(grad, input, weight, stride, padding, dilation, groups, transposed, output_mask,
                         with_bias):
    """(grad_input, grad_weight[, grad_bias]) of a convolution, None where ``output_mask`` says unwanted."""
    n = 3 if with_bias else 2
    mask = tuple(output_mask) if output_mask is not None else (True,) * n
    mask = mask + (False,) * (3 - len(mask))
    if VMAP_LEVELS:     # under vmap: one entry per gradient, which vmap's batch rules (or its loop) run
        return _unfused(grad, input, weight, stride, padding, dilation, groups, transposed, mask)[:n]
    if not is_grad_enabled():
        return _kernels(grad, input, weight, stride, padding, dilation, groups, transposed, mask)[:n]
    return _node().apply(grad, input, weight, stride, padding, dilation, groups, transposed, mask)[:n]


def _kernels(grad, input, weight, stride, padding, dilation, groups, transposed, mask):
    g, x, w = grad._data, input._data, weight._data
    gi = gw = gb = None
    native = g.dtype == x.dtype and L._native_conv(x, w, stride, dilation, groups, transposed,
                                                    _output_padding(g, x, w, stride, padding, dilation, transposed))
    if mask[0]:
        if native:
            gi = conv_order.forward(g, w, None, stride, padding, dilation, groups, x.shape[2:]) if transposed else \
                conv_order.input_grad(g, w, x.shape, stride, padding, dilation, groups)
        else:
            gi = L._conv(g, w, stride, padding, dilation, groups, x.shape[2:]) if transposed else \
                L._conv_input_grad(g, w, x.shape, stride, padding, dilation, groups)
        gi = Tensor._make(gi.astype(x.dtype, copy=False))
    if mask[1]:
        if native:
            gw = conv_order.weight_grad(g, x, w.shape, stride, padding, dilation, groups, x.shape[2:]) \
                if transposed else conv_order.weight_grad(x, g, w.shape, stride, padding, dilation, groups)
        else:
            gw = L._conv_weight_grad(g, x, w.shape, stride, padding, dilation, groups) if transposed else \
                L._conv_weight_grad(x, g, w.shape, stride, padding, dilation, groups)
        gw = Tensor._make(gw)
    if mask[2]:
        if native:
            dilated = not transposed and any(d != 1 for d in dilation)
            gb = Tensor._make(conv_order.bias_grad(g, groups, dilated))
        else:
            with no_grad():
                gb = L._bias_grad(grad)
    return gi, gw, gb


def _output_padding(grad, input, weight, stride, padding, dilation, transposed):
    """A transposed convolution's output_padding, read off its output's (the gradient's) size."""
    if not transposed:
        return ()
    reach = L.transposed_size(input.shape[2:], weight.shape[2:], stride, padding, (0,) * len(stride), dilation)
    return tuple(o - r for o, r in zip(grad.shape[2:], reach))


def _unfused(grad, input, weight, stride, padding, dilation, groups, transposed, mask):
    gi = gw = gb = None
    if mask[0]:
        gi = L.conv_apply(grad, weight, stride, padding, dilation, groups, input.shape) if transposed else \
            L.conv_input_grad(grad, weight, input.shape, stride, padding, dilation, groups)
    if mask[1]:
        gw = L.conv_weight_grad(grad, input, weight.shape, stride, padding, dilation, groups) if transposed else \
            L.conv_weight_grad(input, grad, weight.shape, stride, padding, dilation, groups)
    if mask[2]:
        gb = L._bias_grad(grad)
    return gi, gw, gb


@functools.lru_cache(maxsize=None)
def _node():
    from .fused_nodes import node_class
    return node_class("ConvolutionBackwardBackward0", _kernels, _double_backward,
                      ("grad_output", "input", "weight", "stride", "padding", "dilation", "groups", "transposed"))


def _transposed(a, kernel, out_shape, stride, padding, dilation, groups):
    """The transposed convolution of ``a`` with ``kernel`` whose output has ``out_shape``."""
    from ..op import apply
    output_padding = tuple(o - t for o, t in zip(out_shape[2:], L.transposed_size(
        a.shape[2:], kernel.shape[2:], stride, padding, (0,) * len(stride), dilation)))
    return apply(L.convolution_transposed_nobias, (a, kernel),
                 {"stride": stride, "padding": padding, "output_padding": output_padding, "dilation": dilation,
                  "groups": groups})


def _double_backward(ctx, gg_input, gg_weight, gg_bias):
    """The gradients of (grad_output, input, weight): each first-order gradient is bilinear in
    grad_output and one of input/weight, so each term is a convolution of the other two."""
    grad, input, weight = ctx.saved_tensors[:3]
    stride, padding, dilation, groups, transposed = ctx.params[3:8]
    needs = ctx.needs_input_grad
    conv = lambda a, k, out: L.conv_apply(a, k, stride, padding, dilation, groups, out.shape)
    spread = (lambda a, k, out: _transposed(a, k, out.shape, stride, padding, dilation, groups))
    forward = spread if transposed else conv      # the op the first-order gradients are adjoints of
    backward = conv if transposed else spread
    d_grad = d_input = d_weight = None
    if needs[0]:
        terms = []
        if gg_input is not None:
            terms.append(forward(gg_input, weight, grad))
        if gg_weight is not None:
            terms.append(forward(input, gg_weight, grad))
        if gg_bias is not None:
            terms.append(gg_bias.view((1, -1) + (1,) * (grad.dim() - 2)).expand(grad.shape))
        for t in terms:
            d_grad = t if d_grad is None else d_grad + t
    if needs[1] and gg_weight is not None:
        d_input = backward(grad, gg_weight, input)
    if needs[2] and gg_input is not None:
        d_weight = _weight_term(grad, gg_input, input, weight, stride, padding, dilation, groups, transposed)
    return (d_grad, d_input, d_weight) + (None,) * 6


def _weight_term(grad, gg_input, input, weight, stride, padding, dilation, groups, transposed):
    """_convolution_double_backward's gW: the batch-transposed gg_input and grad convolved (stride and
    dilation swapped, one group at a time, narrowed slices of both), concatenated, transposed back and
    narrowed to the weight's size. For a transposed convolution the output_padding goes along to a
    convolution that is not transposed: its own backward refuses it, as ATen's does."""
    output_padding = None
    if transposed:
        output_padding = tuple(o - t for o, t in zip(grad.shape[2:], L.transposed_size(
            input.shape[2:], weight.shape[2:], stride, padding, (0,) * len(stride), dilation)))
    grad_t, gg_t = grad.transpose(0, 1), gg_input.transpose(0, 1)
    parts = []
    for g in range(groups):
        grad_g = grad_t if groups == 1 else grad_t.narrow(0, g * grad_t.shape[0] // groups, grad_t.shape[0] // groups)
        gg_g = gg_t if groups == 1 else gg_t.narrow(0, g * gg_t.shape[0] // groups, gg_t.shape[0] // groups)
        a, k = (grad_g, gg_g) if transposed else (gg_g, grad_g)
        parts.append(L.conv_apply(a, k, dilation, padding, stride, 1, output_padding=output_padding))
    d_weight = (parts[0] if groups == 1 else _F().cat(parts, 1)).transpose(0, 1)
    for d in range(2, d_weight.dim()):
        if d_weight.shape[d] > weight.shape[d]:
            d_weight = d_weight.narrow(d, 0, weight.shape[d])
    return d_weight
