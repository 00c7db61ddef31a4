"""The ``torch.nn.functional`` functions of the layers (convolution, pooling, normalisation,
embedding) with PyTorch's signatures and checks, over the entries of ``ops/nn_layers.py``."""
from __future__ import annotations

from .. import dtypes, errors
from .. import functions as T
from ..op import apply
from ..ops import nn_layers as L


def _tuple(value, n, name="value"):
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return tuple(value) * n
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _batched(name, nd, input):
    """(input with a batch dimension, whether it had none): a convolution's accepted ranks."""
    if input.dim() not in (nd + 1, nd + 2):
        raise errors.RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
                                  f"input of size: {list(input.shape)}")
    unbatched = input.dim() == nd + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


def _conv(nd, input, weight, bias, stride, padding, dilation, groups):
    input, unbatched = _batched(f"conv{nd}d", nd, input)
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            padding = tuple(d * (k - 1) // 2 for d, k in zip(dilation, weight.shape[2:]))
        else:
            raise errors.RuntimeError(f"Invalid padding string: '{padding}'")
    padding = _tuple(padding, nd)
    if input.shape[1] != weight.shape[1] * groups:
        raise errors.RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                                  f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                                  f"{input.shape[1]} channels instead")
    for size, k, p, d in zip(input.shape[2:], weight.shape[2:], padding, dilation):
        if size + 2 * p < d * (k - 1) + 1:
            raise errors.RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(str(s + 2 * q) for s, q in zip(input.shape[2:], padding))}). "
                f"Kernel size: ({' x '.join(str(kk) for kk in weight.shape[2:])}). Kernel size can't be greater than "
                "actual input size")
    params = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    out = apply(L.convolution, (input, weight, bias), params) if bias is not None else \
        apply(L.convolution_nobias, (input, weight), params)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    name = f"conv_transpose{nd}d"
    for arg, value in (("stride", stride), ("padding", padding), ("output_padding", output_padding),
                       ("dilation", dilation)):
        if isinstance(value, str):
            raise errors.TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not str")
    input, unbatched = _batched(name, nd, input)
    stride, padding, dilation = _tuple(stride, nd), _tuple(padding, nd), _tuple(dilation, nd)
    output_padding = _tuple(output_padding, nd)
    if weight.shape[0] % groups != 0:
        raise errors.RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                                  f"but got weight of size [{list(weight.shape)}] instead")
    if input.shape[1] != weight.shape[0]:
        raise errors.RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                                  f"input{list(input.shape)} to have {weight.shape[0]} channels, but got "
                                  f"{input.shape[1]} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[1] * groups):
        raise errors.RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                                  f"1-dimensional with {weight.shape[1] * groups} elements, but got bias of size "
                                  f"{list(bias.shape)} instead")
    _check_transposed_sizes(input, weight, stride, padding, output_padding, dilation)
    params = {"stride": stride, "padding": padding, "output_padding": output_padding, "dilation": dilation,
              "groups": groups}
    out = apply(L.convolution_transposed, (input, weight, bias), params) if bias is not None else \
        apply(L.convolution_transposed_nobias, (input, weight), params)
    return out.squeeze(0) if unbatched else out


def _check_transposed_sizes(input, weight, stride, padding, output_padding, dilation):
    """ATen's checks, worded as its 2-d kernels word them (a 1-d call runs as 2-d with height 1)."""
    lift = (lambda v, one: (one,) + tuple(v)) if len(stride) == 1 else (lambda v, one: tuple(v))
    if len(stride) == 3 and any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        (od, oh, ow), (sd, sh, sw), (dd, dh, dw) = output_padding, stride, dilation
        raise errors.RuntimeError("output padding must be smaller than either stride or dilation, but got "
                                  f"output_padding_depth: {od} output_padding_height: {oh} output_padding_width: "
                                  f"{ow} stride_depth: {sd} stride_height: {sh} stride_width: {sw} dilation_depth: "
                                  f"{dd} dilation_height: {dh} dilation_width: {dw}")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        (oh, ow), (sh, sw), (dh, dw) = lift(output_padding, 0), lift(stride, 1), lift(dilation, 1)
        raise errors.RuntimeError("output padding must be smaller than either stride or dilation, but got "
                                  f"output_padding_height: {oh} output_padding_width: {ow} stride_height: {sh} "
                                  f"stride_width: {sw} dilation_height: {dh} dilation_width: {dw}")
    outs = L.transposed_size(input.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation)
    if any(o < 1 for o in outs):
        if input.dtype is dtypes.float32:    # float32 runs on oneDNN, whose descriptor refuses the size
            raise errors.RuntimeError("could not construct a memory descriptor using a format tag")
        ins, outs = lift(input.shape[2:], 1), lift(outs, 1)
        raise errors.RuntimeError(f"Given input size per channel: ({' x '.join(map(str, ins))}). Calculated output "
                                  f"size per channel: ({' x '.join(map(str, outs))}). Output size is too small")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise errors.AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise errors.AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    if input.dtype.is_floating_point:
        raise errors.RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                                  f"types: Long, Int; but got torch.{input.dtype.name.capitalize()}Tensor instead "
                                  "(while checking arguments for embedding)")
    params = {"padding_idx": padding_idx} if padding_idx is not None else {}
    if scale_grad_by_freq:
        params["scale_grad_by_freq"] = True
    return apply(L.embedding, (weight, input), params)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)
    if tuple(input.shape[input.dim() - len(shape):]) != shape or input.dim() < len(shape):
        raise errors.RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                                  f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                                  f"{list(input.shape)}")
    from ..saved_attributes import absent       # an absent weight/bias: the node shows None for it
    if weight is None:
        weight = absent(T.ones(shape, dtype=input.dtype))
    if bias is None:
        bias = absent(T.zeros(shape, dtype=input.dtype))
    return apply(L.native_layer_norm, (input, weight, bias), {"normalized_ndim": len(shape), "eps": eps})


NAMES = ("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d embedding layer_norm bilinear "
         "batch_norm").split()


def _verify_batch_size(size):
    count = size[0]
    for s in size[2:]:
        count *= s
    if count == 1:
        raise errors.ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """F.batch_norm -> torch.batch_norm -> native_batch_norm (one NativeBatchNormBackward0 node)."""
    if training:
        _verify_batch_size(T.Size(input.shape))
    if training and eps <= 0.0:
        raise errors.ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise errors.ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise errors.RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
        if t is None and name.startswith("running") and not training:
            raise errors.RuntimeError(f"{name} must be defined in evaluation mode")
    from ..saved_attributes import absent       # an absent weight/bias: the node shows None for it
    if weight is None:
        weight = absent(T.ones(channels, dtype=input.dtype))
    if bias is None:
        bias = absent(T.zeros(channels, dtype=input.dtype))
    params = {"running_mean": None if running_mean is None else running_mean._data,
              "running_var": None if running_var is None else running_var._data,
              "training": bool(training), "momentum": float(momentum), "eps": float(eps)}
    return apply(L.native_batch_norm, (input, weight, bias), params)


def bilinear(input1, input2, weight, bias=None):
    """ATen's bilinear: a trilinear product over the flattened leading dims, viewed back, plus the bias."""
    if input1.dim() != input2.dim():
        raise errors.RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                                  f"{input2.dim()}")
    if input1.shape[-1] != weight.shape[1]:
        raise errors.RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} "
                                  f"but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise errors.RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} "
                                  f"but expected {weight.shape[2]}")
    lead = tuple(input1.shape[:-1])
    out = apply(L.trilinear, (input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1])),
                {"expand1": (1, 3), "expand2": (0,), "expand3": (1, 2), "sumdim": (2, 3)})
    out = out.view(lead + (weight.shape[0],))
    return out + bias if bias is not None else out
