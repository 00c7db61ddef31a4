"""Neural-network layers' ops (torch.nn's functional side): PyTorch's node names and formulas for
the losses and layer functions the ``nn`` modules need beyond ``nn.py``."""
from __future__ import annotations

import functools

import numpy as np

from . import backward_ops as _bw
from .. import conv_order, corner_grads, errors, trilinear_kernel
from .common import _F, _NOT_FLOAT, _apply, _kernel
from .nn import _reduce
from .registry import batch_rules, op


def _huber(a, b, reduction="mean", delta=1.0):
    z = np.abs(a - b)
    d = a.dtype.type(delta)
    with np.errstate(all="ignore"):
        x = np.where(z < d, a.dtype.type(0.5) * z * z, d * (z - a.dtype.type(0.5) * d))
    return _reduce(x.astype(a.dtype), reduction, (a, b))


huber_loss = op("huber_loss", "HuberLossBackward0", _huber, ("self", "target"),
                self=lambda grad, self, target, reduction="mean", delta=1.0:
                _bw.huber_grad(grad, self, target, reduction, delta),
                target=lambda grad, self, target, reduction="mean", delta=1.0:
                _bw.huber_grad(grad, target, self, reduction, delta),
                dtype=_kernel("huber_cpu", "promote", _NOT_FLOAT), domain="real", forward_ad="transpose")


# ============================================================ convolution (1-d and 2-d, groups, dilation)
def _columns(x, kernel, stride, padding, dilation, groups, limit=None):
    """im2col: (N, G, L, C/G * prod(kernel)) patches, L the number of output positions."""
    nd = len(kernel)
    win = conv_order.windows(x, kernel, stride, padding, dilation, limit)    # N, C, *out, *kernel
    n, c = x.shape[:2]
    outs = win.shape[2:2 + nd]
    win = win.reshape((n, groups, c // groups) + win.shape[2:])      # N, G, C/G, *out, *kernel
    order = (0, 1) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = np.ascontiguousarray(win.transpose(order))                # N, G, *out, C/G, *kernel
    return cols.reshape(n, groups, int(np.prod(outs)), -1), outs


# im2col's columns are made for a few samples at a time, at most this many elements (the products are
# the same, sample by sample: the memory of a big 3-d convolution stays bounded)
_COLUMNS_AT_ONCE = 1 << 24


def _conv(x, w, stride, padding, dilation, groups, limit=None):
    n, o = x.shape[0], w.shape[0]
    per_sample = int(np.prod(x.shape[1:])) * int(np.prod(w.shape[2:]))      # (at least the columns' size)
    step = max(1, _COLUMNS_AT_ONCE // max(per_sample, 1))
    if n > step:
        return np.concatenate([_conv(x[i:i + step], w, stride, padding, dilation, groups, limit)
                               for i in range(0, n, step)])
    cols, outs = _columns(x, w.shape[2:], stride, padding, dilation, groups, limit)
    wg = w.reshape(groups, o // groups, -1)
    out = np.matmul(cols, wg.transpose(0, 2, 1)[None])               # N, G, L, O/G
    return np.ascontiguousarray(out.transpose(0, 1, 3, 2).reshape((n, o) + tuple(outs)), dtype=x.dtype)


def _native_conv(input, weight, stride, dilation, groups, transposed=False, output_padding=()):
    """Whether PyTorch computes this convolution with its native kernels, which conv_order reproduces."""
    return input.dtype == weight.dtype and conv_order.native(input.dtype, input.shape, weight.shape, stride,
                                                             dilation, groups, transposed, output_padding)


def _conv_forward(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1, output_padding=None):
    # (output_padding: at::convolution's, which a non-transposed forward ignores and its backward refuses)
    if _native_conv(input, weight, stride, dilation, groups):
        return conv_order.forward(input, weight, bias, stride, padding, dilation, groups)
    out = _conv(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def _conv_input_grad(grad, weight, input_shape=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    """The gradient of a convolution's input: each output's gradient times the kernel, added back into
    the patch it read (a few samples at a time, as ``_conv``)."""
    nd = grad.ndim - 2
    n, o = grad.shape[:2]
    per_sample = int(np.prod(grad.shape[2:])) * int(np.prod(weight.shape[1:])) * groups
    step = max(1, _COLUMNS_AT_ONCE // max(per_sample, 1))
    if n > step:
        return np.concatenate([_conv_input_grad(grad[i:i + step], weight, (min(step, n - i),) + tuple(input_shape[1:]),
                                                stride, padding, dilation, groups) for i in range(0, n, step)])
    outs, kernel = grad.shape[2:], weight.shape[2:]
    cg = weight.shape[1]
    c = cg * groups
    gg = grad.reshape(n, groups, o // groups, -1).transpose(0, 1, 3, 2)          # N, G, L, O/G
    patches = np.matmul(gg, weight.reshape(groups, o // groups, -1)[None])       # N, G, L, C/G*K
    patches = patches.reshape((n, groups) + tuple(outs) + (cg,) + tuple(kernel))
    order = (0, 1, 2 + nd) + tuple(range(2, 2 + nd)) + tuple(range(3 + nd, 3 + 2 * nd))
    patches = patches.transpose(order).reshape((n, c) + tuple(outs) + tuple(kernel))
    # kernel offsets first, in one copy: each offset's (N, C, *out) block is then contiguous to add
    by_offset = np.ascontiguousarray(patches.transpose(tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2 + nd))))
    padded = np.zeros((n, c) + tuple(s + 2 * p for s, p in zip(input_shape[2:], padding)), grad.dtype)
    conv_order.col2im(padded, lambda offset: by_offset[offset], kernel, stride, dilation, outs)
    inner = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, input_shape[2:]))
    return np.ascontiguousarray(padded[inner])


def _conv_weight_grad(input, grad, weight_shape=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    cols, _ = _columns(input, weight_shape[2:], stride, padding, dilation, groups, grad.shape[2:])  # N, G, L, K
    n, o = grad.shape[:2]
    gg = grad.reshape(n, groups, o // groups, -1)                                    # N, G, O/G, L
    out = np.matmul(gg, cols).sum(axis=0)                                           # G, O/G, K
    return np.ascontiguousarray(out.reshape(weight_shape), dtype=input.dtype)


def _conv_params(stride, padding, dilation, groups):
    return {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


def conv_input_grad(grad, weight, input_shape, stride, padding, dilation, groups):
    from ..op import apply
    return apply(convolution_backward_input, (grad, weight),
                 {"input_shape": tuple(input_shape), **_conv_params(stride, padding, dilation, groups)})


def conv_weight_grad(input, grad, weight_shape, stride, padding, dilation, groups):
    from ..op import apply
    return apply(convolution_backward_weight, (input, grad),
                 {"weight_shape": tuple(weight_shape), **_conv_params(stride, padding, dilation, groups)})


def conv_apply(input, weight, stride, padding, dilation, groups, out_shape=None, output_padding=None):
    """A convolution without bias; cut to ``out_shape`` where given (the gradient of a transposed
    convolution whose output_padding reached past the last stride: those positions had no input).
    ``output_padding``: at::convolution's argument, kept by the node (whose backward refuses one)."""
    from ..op import apply
    params = _conv_params(stride, padding, dilation, groups)
    if output_padding is not None:
        params["output_padding"] = tuple(output_padding)
    out = apply(convolution_nobias, (input, weight), params)
    if out_shape is not None and tuple(out.shape[2:]) != tuple(out_shape[2:]):
        out = out[(slice(None), slice(None)) + tuple(slice(0, m) for m in out_shape[2:])]
    return out


def _bias_grad(grad):
    return grad.sum([0] + list(range(2, grad.dim())))


def _conv_grads(transposed, with_bias):
    """The convolution entries' one formula for all their inputs: ATen's convolution_backward
    (layer_backward.py), told which gradients are wanted."""
    def regular(grad, input, weight, stride, padding, dilation, groups, output_mask=None, output_padding=None):
        from .layer_backward import convolution_backward
        if output_padding is not None and any(output_padding):       # (ATen's convolution_backward's check)
            raise errors.RuntimeError("output_padding is not supported for non-transposed convolutions; got: "
                                      + " ".join(str(p) for p in output_padding))
        return convolution_backward(grad, input, weight, stride, padding, dilation, groups, False, output_mask,
                                    with_bias)

    # output_padding is not read (the saved input's shape fixes the sizes) but named so that the node
    # saves it, as PyTorch's does (_saved_output_padding)
    def transposed_(grad, input, weight, stride, padding, dilation, groups, output_padding, output_mask=None):
        from .layer_backward import convolution_backward
        return convolution_backward(grad, input, weight, stride, padding, dilation, groups, True, output_mask,
                                    with_bias)

    formula = transposed_ if transposed else regular
    return dict(input=formula, weight=formula, **({"bias": formula} if with_bias else {}))


convolution = op("convolution", "ConvolutionBackward0", _conv_forward, ("input", "weight", "bias"),
                 dtype="promote", broadcast=False, domain="real", **_conv_grads(False, True), forward_ad="transpose")
convolution_nobias = op("convolution_nobias", "ConvolutionBackward0", _conv_forward, ("input", "weight"),
                        dtype="promote", broadcast=False, domain="real", **_conv_grads(False, False),
                        forward_ad="transpose")
# the backward passes are convolutions too, linear in each input: their derivatives are each other
convolution_backward_input = op(
    "convolution_backward_input", "ConvolutionBackwardBackward0", _conv_input_grad, ("grad_output", "weight"),
    grad_output=lambda grad, weight, stride, padding, dilation, groups:
    conv_apply(grad, weight, stride, padding, dilation, groups),
    weight=lambda grad, grad_output, weight_shape, stride, padding, dilation, groups:
    conv_weight_grad(grad, grad_output, weight_shape, stride, padding, dilation, groups),
    dtype="promote", broadcast=False, domain="real")
convolution_backward_weight = op(
    "convolution_backward_weight", "ConvolutionBackwardBackward0", _conv_weight_grad, ("input", "grad_output"),
    input=lambda grad, grad_output, input_shape, stride, padding, dilation, groups:
    conv_input_grad(grad_output, grad, input_shape, stride, padding, dilation, groups),
    grad_output=lambda grad, input, grad_output_shape, stride, padding, dilation, groups:
    conv_apply(input, grad, stride, padding, dilation, groups, grad_output_shape),
    dtype="promote", broadcast=False, domain="real")

batch_rules("conv", "convolution", "convolution_nobias")
batch_rules("conv_input_grad", "convolution_backward_input")
batch_rules("conv_weight_grad", "convolution_backward_weight")


# ---------------------------------------------------------------- transposed convolution: the input gradient
# of a convolution run forward (weight (C_in, C_out/G, *k)); PyTorch records it as ConvolutionBackward0 too
def transposed_size(in_sizes, kernel, stride, padding, output_padding, dilation):
    return tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1
                 for i, k, s, p, op, d in zip(in_sizes, kernel, stride, padding, output_padding, dilation))


def _conv_transpose_forward(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,),
                            dilation=(1,), groups=1):
    outs = transposed_size(input.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation)
    shape = (input.shape[0], weight.shape[1] * groups) + outs
    if _native_conv(input, weight, stride, dilation, groups, True, output_padding):
        out = conv_order.input_grad(input, weight, shape, stride, padding, dilation, groups)
    else:
        out = _conv_input_grad(input, weight, shape, stride, padding, dilation, groups).astype(input.dtype, copy=False)
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


convolution_transposed = op(
    "convolution_transposed", "ConvolutionBackward0", _conv_transpose_forward, ("input", "weight", "bias"),
    dtype="promote", broadcast=False, domain="real", **_conv_grads(True, True), forward_ad="transpose")
convolution_transposed_nobias = op(
    "convolution_transposed_nobias", "ConvolutionBackward0", _conv_transpose_forward, ("input", "weight"),
    dtype="promote", broadcast=False, domain="real", **_conv_grads(True, False), forward_ad="transpose")
convolution_nobias.absent_edges = convolution_transposed_nobias.absent_edges = 1      # (the bias's edge)


# ============================================================ embedding
embedding = op("embedding", "EmbeddingBackward0",
               lambda weight, indices, padding_idx=None, scale_grad_by_freq=False: weight[indices],
               ("weight", "indices"),
               weight=lambda grad, weight_shape, indices, padding_idx=None, scale_grad_by_freq=False:
               _bw.embedding_grad(grad, weight_shape, indices, padding_idx, scale_grad_by_freq),
               dtype="first", broadcast=False, domain="real", forward_ad="transpose")


# ============================================================ layer norm
def _layer_norm(input, weight, bias, normalized_ndim=1, eps=1e-5):
    width = int(np.prod(input.shape[input.ndim - normalized_ndim:], dtype=np.int64))
    if input.dtype in (np.float32, np.float64) and input.size and width:     # ATen's kernel, bit for bit
        from ..rowwise_moments import layer_norm_rows
        return layer_norm_rows(input.reshape(-1, width), weight.reshape(-1), bias.reshape(-1), eps).reshape(input.shape)
    axes = tuple(range(input.ndim - normalized_ndim, input.ndim))
    wide = input.astype(np.float64) if input.dtype != np.float64 else input
    mean = wide.mean(axis=axes, keepdims=True)
    var = ((wide - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    out = ((wide - mean) * rstd).astype(input.dtype) * weight + bias
    return out.astype(input.dtype)


def _layer_norm_parts(x, normalized_ndim, eps):
    dims = list(range(x.dim() - normalized_ndim, x.dim()))
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    rstd = ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
    return dims, centred * rstd, rstd


def _layer_norm_input_grad(grad, input, weight, normalized_ndim, eps):
    dims, xhat, rstd = _layer_norm_parts(input, normalized_ndim, eps)
    g = grad * weight
    return rstd * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))


def _leading(t, normalized_ndim):
    return list(range(t.dim() - normalized_ndim))


def _layer_norm_grad_terms(grad, input, weight, normalized_ndim, eps, mask):
    """(grad_input, grad_weight, grad_bias) in Tensor ops, None where ``mask`` says unwanted."""
    gi = _layer_norm_input_grad(grad, input, weight, normalized_ndim, eps) if mask[0] else None
    gw = (grad * _layer_norm_parts(input, normalized_ndim, eps)[1]).sum(_leading(grad, normalized_ndim)) \
        if mask[1] else None
    gb = grad.sum(_leading(grad, normalized_ndim)) if mask[2] else None
    return gi, gw, gb


def layer_norm_stats(data, normalized_ndim, eps):
    """What native_layer_norm saves besides its inputs, per normalized row (keeping its dims): the mean
    and 1/sqrt(var + eps), computed in float64 and given in the input's dtype."""
    axes = tuple(range(data.ndim - normalized_ndim, data.ndim))
    keep = data.shape[:data.ndim - normalized_ndim] + (1,) * normalized_ndim
    width = int(np.prod(data.shape[data.ndim - normalized_ndim:], dtype=np.int64))
    if data.dtype in (np.float32, np.float64) and data.size and width:      # the kernel's own, as _layer_norm
        from ..rowwise_moments import rowwise_moments
        t = data.dtype.type
        mean, var = rowwise_moments(np.ascontiguousarray(data.reshape(-1, width)))
        return mean.reshape(keep), (t(1) / np.sqrt(var + t(eps))).reshape(keep)
    mean = data.astype(np.float64).mean(axis=axes, keepdims=True)
    var = ((data.astype(np.float64) - mean) ** 2).mean(axis=axes, keepdims=True)
    return mean.astype(data.dtype), (1.0 / np.sqrt(var + eps)).astype(data.dtype)


def _layer_norm_grads(grad, input, weight, bias, normalized_ndim=1, eps=1e-5, output_mask=None):
    """(grad_input, grad_weight, grad_bias), one formula for the three inputs as ATen's
    native_layer_norm_backward; under create_graph one NativeLayerNormBackwardBackward0 node with those
    outputs, whose edges are (grad_out, input, mean, rstd, weight, bias) (the statistics: no edge)."""
    from .. import forward_ad
    from ..grad_mode import VMAP_LEVELS
    from ..graph import is_grad_enabled
    mask = tuple(output_mask) if output_mask is not None else (True, True, True)
    if not is_grad_enabled() or VMAP_LEVELS or forward_ad.ACTIVE:
        # plain backward (values only), or under vmap / a dual level: the Tensor ops, which those follow
        return _layer_norm_grad_terms(grad, input, weight, normalized_ndim, eps, mask)
    from ..tensor import Tensor
    mean, rstd = layer_norm_stats(input._data, normalized_ndim, eps)
    shape = tuple(int(d) for d in input._data.shape[input._data.ndim - normalized_ndim:])
    return _layer_norm_backward_node().apply(grad, input, Tensor._make(mean), Tensor._make(rstd), weight, bias,
                                             shape, eps, mask)


@functools.lru_cache(maxsize=None)
def _layer_norm_backward_node():
    from .fused_nodes import node_class
    return node_class("NativeLayerNormBackwardBackward0", _layer_norm_backward_kernel, _layer_norm_double_backward,
                      ("grad_out", "input", "mean", "rstd", "weight", None, "normalized_shape", None, None))


def _layer_norm_backward_kernel(grad, input, mean, rstd, weight, bias, normalized_shape, eps, mask):
    return _layer_norm_grad_terms(grad, input, weight, len(normalized_shape), eps, mask)


def _layer_norm_double_backward(ctx, gg_input, gg_weight, gg_bias):
    """The gradients of (grad_out, input, weight) from those of the three gradients: ATen's
    layer_norm_double_backward, term for term, in Tensor ops on the (M, N) rows it reshapes everything
    to, with the mean and rstd the forward saved held constant (so a third derivative is PyTorch's);
    the results reshaped back (ViewBackward0 nodes, as ATen's)."""
    from ..saved_attributes import is_absent
    grad, input, mean, rstd, weight = ctx.saved_tensors[:5]
    normalized_shape = ctx.params[6]
    needs = ctx.needs_input_grad
    n = 1
    for d in normalized_shape:
        n *= int(d)
    m = input.numel() // n if n else 0
    affine = not is_absent(weight)
    if not affine and gg_bias is not None and gg_input is not None:
        # ATen adds the bias term it only makes with a weight: a bias without weight fails so
        raise errors.RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for "
                                  "argument #1 'other'")
    rows = lambda t: t.reshape(m, n)
    x, g_out = rows(input), rows(grad)
    mu, s1 = mean.reshape(m, 1), rstd.reshape(m, 1)
    gamma = weight.reshape(1, n) if affine else _F().ones(1, dtype=input.dtype)
    gg_w = gg_weight.reshape(1, n) if affine and gg_weight is not None else None
    gg_b = gg_bias.reshape(1, n) if affine and gg_bias is not None else None
    gg_i = rows(gg_input) if gg_input is not None else None
    total = lambda t: t.sum(1, True)
    centred = x - mu
    s2, s3 = s1.pow(2), s1.pow(3)
    centred_s3 = centred * s3

    # (the operands of a C++ product of two calls are made right to left, GCC's order: the nodes are
    # then created, and a third derivative sums its gradients, in PyTorch's order)
    def first_grad_input(g, gamma_local):    # the first backward's grad_input of grad_out g
        h0 = (gamma_local * s1) / n
        projected = total(g * centred)
        return h0 * (n * g - total(g) - centred.mul(s2) * projected)

    d_grad = d_input = d_weight = None
    if gg_i is not None:
        gxhat = g_out * gamma
        gxhat_centred_sum, gxhat_sum = total(gxhat * centred), total(gxhat)
        gg_sum, gg_centred_sum = total(gg_i), total(gg_i * centred)
        all_sub = (gg_sum * gxhat_sum / n - total(gg_i * gxhat)
                   + s2 * gxhat_centred_sum * gg_centred_sum * (3. / n))
        term0 = centred_s3 * all_sub / n
        spread = gxhat_sum / n - gxhat
        term1 = gg_centred_sum * s3 / n * spread
        spread = gg_sum / n - gg_i
        term2 = gxhat_centred_sum * s3 / n * spread
        d_input = term0 + term1 + term2
    if affine and gg_w is not None:
        term = (g_out * gg_w * s1 + s1 * total(g_out * gg_w) / -n
                + centred_s3 * total(g_out * gg_w * centred) / -n)
        d_input = term if d_input is None else d_input + term
    if d_input is not None:
        d_input = d_input.reshape(input.shape)
    if affine and gg_i is not None and needs[4]:
        d_weight = (g_out * first_grad_input(gg_i, _F().ones((), dtype=input.dtype))).sum(0).reshape(weight.shape)
    if needs[0]:
        if gg_i is not None:
            d_grad = first_grad_input(gg_i, gamma)
        if gg_w is not None:
            term = gg_w * centred * s1
            d_grad = term if d_grad is None else d_grad + term
        if gg_b is not None:
            d_grad = gg_b if d_grad is None else d_grad + gg_b
        if d_grad is not None:
            d_grad = d_grad.expand(m, n).reshape(input.shape)
        else:
            d_grad = grad * 0
    if needs[1] and d_input is None:
        d_input = input * 0
    if needs[4] and d_weight is None:
        d_weight = weight * 0
    return d_grad, d_input, None, None, d_weight, None, None, None, None


# one formula for the three inputs, as ATen's; it takes ``bias`` as ATen's layer-norm backward does
# (the node keeps it: ``_saved_bias``)
def _layer_norm_tangent(input_p, input_t, weight_p, weight_t, bias_p, bias_t, normalized_ndim=1, eps=1e-5):
    """FunctionsManual's layer_norm_jvp: the tangent of (x - mean) * rstd, then of its affine map. The mean
    and rstd are the forward's saved statistics, outputs without gradient: constants to a graph of the
    tangent (forward-over-reverse differentiates through the formula's other reads only)."""
    from ..zero_tensor import is_zero as _is_zero
    from ..saved_attributes import is_absent
    dims = list(range(input_p.dim() - normalized_ndim, input_p.dim()))
    numel = 1
    for d in dims:
        numel *= input_p.size(d)
    mean_p, invstd_p = _saved_statistics(input_p, dims, normalized_ndim, eps)
    branch_free = _is_zero(input_t) or corner_grads.in_transform()
    result_t = _norm_jvp(input_p, input_t, mean_p, invstd_p, dims, numel, branch_free)
    affine = [1] * (input_p.dim() - normalized_ndim) + list(input_p.shape[input_p.dim() - normalized_ndim:])
    if not is_absent(weight_p):
        result_p = (input_p - mean_p) * invstd_p
        weight_p, weight_t = weight_p.view(affine), weight_t.view(affine)
        if corner_grads.in_transform() or _is_zero(weight_t):
            result_t = result_t * weight_p + result_p * weight_t
        else:
            result_t *= weight_p
            result_p *= weight_t
            result_t += result_p
    if not is_absent(bias_p):
        bias_t = bias_t.view(affine)
        result_t = result_t + bias_t if corner_grads.in_transform() else result_t.add_(bias_t)
    return result_t


def _saved_statistics(input_p, dims, normalized_ndim, eps):
    """native_layer_norm's saved mean and rstd (keeping the normalized dims), as constants; under vmap the
    kernel's rows are the physical tensor's."""
    from ..tensor import Tensor

    def statistic(k):
        return lambda x: Tensor._make(layer_norm_stats(x._data, normalized_ndim, eps)[k])
    if type(input_p) is Tensor:
        mean, rstd = layer_norm_stats(input_p._data, normalized_ndim, eps)
        return Tensor._make(mean), Tensor._make(rstd)
    from ..batching import on_physical
    return on_physical(input_p, statistic(0)), on_physical(input_p, statistic(1))


def _norm_jvp(input_p, input_t, mean_p, invstd_p, dims, numel, branch_free):
    """FunctionsManual's _norm_jvp: the tangent of (x - mean) * invstd, through _invstd_jvp's tangent of invstd;
    ``branch_free``: its out-of-place form (a zero tangent, or functorch's tensors), else its in-place one."""
    centred_t = input_t - input_t.mean(dims, True)
    if branch_free:
        invstd_t = -invstd_p.pow(3) * centred_t * (input_p - mean_p)
    else:
        invstd_t = input_t - input_t.mean(dims, True)
        invstd_t *= input_p - mean_p
        invstd_t *= -invstd_p.pow(3)
    invstd_t = invstd_t.sum(dims, True)
    invstd_t /= numel
    if branch_free:
        return centred_t * invstd_p + (input_p - mean_p) * invstd_t
    centred_t *= invstd_p
    temp = input_p - mean_p
    temp *= invstd_t
    centred_t += temp
    return centred_t


native_layer_norm = op(
    "native_layer_norm", "NativeLayerNormBackward0", _layer_norm, ("input", "weight", "bias"),
    input=_layer_norm_grads, weight=_layer_norm_grads, bias=_layer_norm_grads,
    dtype="promote", broadcast=False, domain="real", forward_ad=_layer_norm_tangent)


# ============================================================ _trilinear (ATen's, as bilinear uses it)
def _trilinear_forward(i1, i2, i3, expand1, expand2, expand3, sumdim):
    from .linalg import _bmm
    return trilinear_kernel.trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, _bmm)


def _trilinear_call(i1, i2, i3, expand1, expand2, expand3, sumdim):
    return _apply(trilinear, (i1, i2, i3), {"expand1": expand1, "expand2": expand2, "expand3": expand3,
                                            "sumdim": sumdim})


def _trilinear_grads(grad, i1, i2, i3, expand1, expand2, expand3, sumdim, output_mask=(True, True, True)):
    """FunctionsManual's ``_trilinear_backward``: each input's gradient is a ``_trilinear`` of the other
    two and ``grad``, with ``grad`` expanded where the output was summed and the result summed where
    that input was expanded (so under create_graph each is a TrilinearBackward0 node)."""
    return (_trilinear_call(grad, i2, i3, sumdim, expand2, expand3, expand1) if output_mask[0] else None,
            _trilinear_call(i1, grad, i3, expand1, sumdim, expand3, expand2) if output_mask[1] else None,
            _trilinear_call(i1, i2, grad, expand1, expand2, sumdim, expand3) if output_mask[2] else None)


# one formula for the three inputs, as derivatives.yaml's ``i1, i2, i3: _trilinear_backward(...)``
trilinear = op("trilinear", "TrilinearBackward0", _trilinear_forward, ("i1", "i2", "i3"),
               i1=_trilinear_grads, i2=_trilinear_grads, i3=_trilinear_grads,
               dtype="promote", broadcast=False, domain="real", forward_ad="transpose")


# ============================================================ batch norm (PyTorch's CPU kernels: batch_norm_kernel.py)
def _batch_norm(input, weight, bias, running_mean=None, running_var=None, training=True, momentum=0.1, eps=1e-5):
    from .. import batch_norm_kernel
    out, mean, invstd = batch_norm_kernel.forward(input, weight, bias, running_mean, running_var, training,
                                                  momentum, eps)
    return out, {"save_mean": mean, "save_invstd": invstd}


def _batch_norm_grads(grad, input, weight, save_mean, save_invstd, training=True, eps=1e-5, running_mean=None,
                      running_var=None, output_mask=None):
    """(grad_input, grad_weight, grad_bias), one formula for the three inputs: PyTorch's kernel, recorded
    under create_graph as one NativeBatchNormBackwardBackward0 node with those three outputs."""
    from .. import batch_norm_kernel
    from ..graph import is_grad_enabled
    from ..tensor import Tensor
    if not is_grad_enabled():
        dx, dw, db = batch_norm_kernel.backward(grad._data, input._data, weight._data, save_mean._data,
                                                save_invstd._data, training, eps, running_var)
        return Tensor._make(dx), Tensor._make(dw), Tensor._make(db)
    # an absent running statistic is ATen's undefined tensor: still an edge of the node, to nothing
    from ..saved_attributes import absent
    stats = [absent(Tensor._make(np.zeros(0, input._data.dtype))) if s is None else Tensor._make(np.asarray(s))
             for s in (running_mean, running_var)]
    # the batch statistics go in as arrays: saved by the node, not edges of it (as in ATen)
    return _batch_norm_backward_node().apply(grad, input, weight, *stats, save_mean._data, save_invstd._data,
                                             training, eps)


@functools.lru_cache(maxsize=None)
def _batch_norm_backward_node():
    from .fused_nodes import node_class
    return node_class("NativeBatchNormBackwardBackward0", _batch_norm_backward_kernel, _batch_norm_double_backward,
                      ("grad_out", "input", "weight", "running_mean", "running_var", "save_mean", "save_invstd",
                       "train", "eps"))


def _batch_norm_backward_kernel(grad, input, weight, running_mean, running_var, save_mean, save_invstd, training, eps):
    from .. import batch_norm_kernel
    from ..tensor import Tensor
    dx, dw, db = batch_norm_kernel.backward(grad._data, input._data, weight._data, save_mean, save_invstd,
                                            training, eps, None if running_var is None else running_var._data)
    return Tensor._make(dx), Tensor._make(dw), Tensor._make(db)


def _batch_norm_double_backward(ctx, gg_input, gg_weight, gg_bias):
    """The gradients of (grad_out, input, weight) from those of the three gradients, in Tensor ops with
    the batch statistics the forward saved held constant, as ATen's batchnorm_double_backward holds
    them (so a third derivative is PyTorch's, which leaves out their dependence on the input). With xh the normalised input, s its invstd, A v = v - mean(v) - xh * mean(xh * v) (per channel),
    grad_input = w s (A grad_out) gives d/dgrad_out = A(w s gg_input) + gg_weight xh + gg_bias, and in training
    d/dinput = w s² (-(P - m Q)/M xh - Q/M A grad_out - m A gg_input) + gg_weight s A grad_out, where
    P = sum(gg_input (grad_out - mean(grad_out))), Q = sum(gg_input xh), m = mean(grad_out xh)."""
    from ..tensor import Tensor
    grad, input, weight, running_mean, running_var = ctx.saved_tensors[:5]
    training, eps = ctx.params[7:9]
    needs = ctx.needs_input_grad
    dims = [0] + list(range(2, input.dim()))
    shape = (1, -1) + (1,) * (input.dim() - 2)
    count = input.numel() // input.shape[1]
    mean = lambda t: t.mean(dims, keepdim=True)
    total = lambda t: t.sum(dims, keepdim=True)
    if training:        # the batch statistics as the forward saved them: constants, as in ATen's formula
        save_mean, save_invstd = ctx.params[5:7]
        centred = input - Tensor._make(save_mean.reshape(shape))
        invstd = Tensor._make(save_invstd.reshape(shape))
    else:
        centred = input - running_mean.view(shape)
        invstd = (running_var.view(shape) + eps).rsqrt()
    xhat = centred * invstd
    w = weight.view(shape)
    zeros = lambda t: t * 0
    project = (lambda v: v - mean(v) - xhat * mean(xhat * v)) if training else (lambda v: v)
    ggi = gg_input if gg_input is not None else zeros(input)
    d_grad = d_input = d_weight = None
    if needs[0]:
        d_grad = project(w * invstd * ggi)
        if gg_weight is not None:
            d_grad = d_grad + gg_weight.view(shape) * xhat
        if gg_bias is not None:
            d_grad = d_grad + gg_bias.view(shape)
    if needs[1]:
        if training:
            p, q, m = total(ggi * (grad - mean(grad))), total(ggi * xhat), mean(grad * xhat)
            d_input = w * invstd * invstd * (-(p - m * q) / count * xhat - q / count * project(grad) - m * project(ggi))
            if gg_weight is not None:
                d_input = d_input + gg_weight.view(shape) * invstd * project(grad)
        else:
            d_input = gg_weight.view(shape) * invstd * grad if gg_weight is not None else zeros(input)
    if needs[2]:
        d_weight = _sum_exclude_dim1(ggi * invstd * project(grad))
    return d_grad, d_input, d_weight, None, None, None, None, None, None


def _sum_exclude_dim1(t):
    """FunctionsManual's sum_exclude_dim1 (keepdim false): the batch dim summed, then each trailing
    dim from the last, one sum each (SumBackward1 nodes, PyTorch's order of additions)."""
    r = t.sum(0)
    for d in range(r.dim() - 1, 0, -1):
        r = r.sum(d)
    return r


native_batch_norm = op("native_batch_norm", "NativeBatchNormBackward0", _batch_norm, ("input", "weight", "bias"),
                       input=_batch_norm_grads, weight=_batch_norm_grads, bias=_batch_norm_grads,
                       dtype="first", broadcast=False, domain="real",
                       samples=[((4, 3), (3,), (3,)), ((2, 3, 5), (3,), (3,)), ((2, 2, 3, 3), (2,), (2,))])


# ============================================================ padding (F.pad): constant_pad_nd, reflection and replication
def _constant_pad(a, pad, value=0.0):
    """``pad`` as F.pad gives it (last dimension first, (left, right) pairs); negative sizes crop."""
    k = len(pad) // 2
    widths = [(0, 0)] * (a.ndim - k) + [(max(pad[2 * i], 0), max(pad[2 * i + 1], 0)) for i in reversed(range(k))]
    out = np.pad(a, widths, constant_values=value) if any(w != (0, 0) for w in widths) else a
    crop = [slice(None)] * (a.ndim - k) + [slice(-min(pad[2 * i], 0), out.shape[a.ndim - 1 - i] + min(pad[2 * i + 1], 0))
                                           for i in reversed(range(k))]
    return np.ascontiguousarray(out[tuple(crop)])


constant_pad_nd = op("constant_pad_nd", "ConstantPadNdBackward0", _constant_pad,
                     self=lambda grad, pad: _apply(constant_pad_nd, (grad,), {"pad": tuple(-p for p in pad)}),
                     dtype="first", domain="real",
                     forward_ad=lambda self_t, pad: _apply(constant_pad_nd, (self_t,), {"pad": pad}))


def pad_positions(mode, size, left, right):
    """The input position each output position of a reflect/replicate pad of one dimension reads."""
    i = np.arange(-left, size + right)
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    period = 2 * (size - 1)
    i = np.abs(i) % period if period else np.zeros_like(i)
    return np.where(i >= size, period - i, i)


def _index_pad(a, mode, pad):
    k = len(pad) // 2
    index = np.ix_(*[pad_positions(mode, a.shape[a.ndim - k + j], pad[2 * (k - 1 - j)], pad[2 * (k - 1 - j) + 1])
                     for j in range(k)])
    return np.ascontiguousarray(a[(Ellipsis,) + index])


def _index_pad_grad(grad, self_shape, mode, pad):
    """Each output's gradient added back into the input position it read."""
    k = len(pad) // 2
    inner = tuple(self_shape[-k:])
    positions = [pad_positions(mode, inner[j], pad[2 * (k - 1 - j)], pad[2 * (k - 1 - j) + 1]) for j in range(k)]
    flat = np.ravel_multi_index(np.ix_(*positions), inner).reshape(-1)
    lead = tuple(self_shape[:-k])
    g = grad.reshape(lead + (-1,))
    total = _F().zeros(lead + (int(np.prod(inner)),), dtype=grad.dtype)
    return total.index_add(len(lead), _F().tensor(flat), g).view(self_shape)


def _pad_entry(mode, nd):
    """The pad entry and its backward's (``reflection_pad2d_backward``: a node of its own under
    create_graph, whose gradient is the pad of grad)."""
    node = f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{nd}DBackward0"
    forward = op(f"{mode}_pad{nd}d", node, lambda a, pad: _index_pad(a, mode, pad),
                 self=lambda grad, self, pad: _apply(backward, (grad, self), {"pad": pad}),
                 dtype="first", domain="real", forward_ad="linear")
    backward = _bw.adjoint_entry(f"{mode}_pad{nd}d_backward", node.replace("Backward0", "BackwardBackward0"),
                                 lambda g, x, pad: _index_pad_grad(g, x.shape, mode, pad),
                                 lambda grad, pad: _apply(forward, (grad,), {"pad": pad}), with_self=True)
    return forward, backward


(reflect_pad1d, reflect_pad1d_backward), (reflect_pad2d, reflect_pad2d_backward), \
    (reflect_pad3d, reflect_pad3d_backward) = (_pad_entry("reflect", n) for n in (1, 2, 3))
(replicate_pad1d, replicate_pad1d_backward), (replicate_pad2d, replicate_pad2d_backward), \
    (replicate_pad3d, replicate_pad3d_backward) = (_pad_entry("replicate", n) for n in (1, 2, 3))
