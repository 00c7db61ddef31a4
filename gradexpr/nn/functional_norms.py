"""The ``torch.nn.functional`` normalisations beyond batch and layer norm: group_norm (native, over
``ops/nn_norms.py``), instance_norm (ATen's composite: batch norm over the input viewed as one sample
of N·C channels) and rms_norm (ATen's composite), each recording PyTorch's nodes."""
from __future__ import annotations

import numpy as np

from .. import errors
from .. import functions as T
from ..op import apply, share_node
from .. import ops as D
from ..ops import nn_norms as NN
from . import functional as NF2


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise errors.RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    size = list(input.shape)
    NF2._verify_batch_size([size[0] * size[1] // num_groups, num_groups] + size[2:])
    n, c = size[0], size[1]
    if c % num_groups:
        raise errors.RuntimeError("Expected number of channels in input to be divisible by num_groups, but got "
                                  f"input of shape {size} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise errors.RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in "
                                      f"input, but got {name} of shape {list(t.shape)} and input of shape {size}")
    params = {"N": n, "C": c, "HxW": int(np.prod(size[2:], dtype=np.int64)), "group": num_groups, "eps": eps}
    if weight is None and bias is None:
        return _with_statistics(NN.native_group_norm_nobias, NN.native_group_norm_nobias_outputs, (input,), params)
    weight = T.ones(c, dtype=input.dtype) if weight is None else weight
    bias = T.zeros(c, dtype=input.dtype) if bias is None else bias
    return _with_statistics(NN.native_group_norm, NN.native_group_norm_outputs, (input, weight, bias), params)


def _with_statistics(entry, node_entry, args, params):
    """native_group_norm's result, one node with its mean and rstd outputs (which its formula reads back,
    so that a second derivative records PyTorch's graph); they are computed only for that node."""
    from ..graph import is_grad_enabled
    out = apply(entry, args, params)
    if out.grad_fn is None or not is_grad_enabled():
        return out
    stats = [apply(NN.native_group_norm_mean, args[:1], params), apply(NN.native_group_norm_rstd, args[:1], params)]
    share_node(node_entry, args, params, [out] + stats)
    return out


def _verify_spatial_size(size):
    if int(np.prod(size[2:], dtype=np.int64)) == 1:
        raise errors.ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(T.Size(input.shape))
    if not use_input_stats and (running_mean is None or running_var is None):
        raise errors.RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is "
                                  "false")
    b, c = input.shape[0], input.shape[1]
    shape = [1, b * c] + list(input.shape[2:])
    repeated = [None if t is None else t.repeat(b) for t in (weight, bias, running_mean, running_var)]
    weight_, bias_, mean_, var_ = repeated
    out = NF2.batch_norm(input.contiguous().view(shape), mean_, var_, weight_, bias_, use_input_stats, momentum,
                         eps)
    for stat, updated in ((running_mean, mean_), (running_var, var_)):
        if stat is not None:          # ATen writes the averaged statistics back through an alias
            np.copyto(stat._data, updated._data.reshape(b, c).mean(0).astype(stat._data.dtype))
    return out.view(list(input.shape))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if list(input.shape[input.dim() - len(shape):]) != shape or input.dim() < len(shape):
        raise errors.RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                                  f"[*, {', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = [input.dim() - i - 1 for i in range(len(shape))]
    rsqrt = apply(D.add_scalar, (input.pow(2).mean(dims, keepdim=True),), {"other": eps}).rsqrt()
    result = input.mul(rsqrt)
    return result.mul(weight) if weight is not None else result


NAMES = "group_norm instance_norm rms_norm".split()
