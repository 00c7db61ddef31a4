"""The ``torch.nn.functional`` activations over ``ops/nn_activations.py`` (and the Python composites
PyTorch writes in ``torch/nn/functional.py``: softsign, tanhshrink, softmin), with PyTorch's
signatures and checks. Loaded with ``torch.nn``."""
from __future__ import annotations

import numpy as np

from .. import errors
from .. import nn_functional as NF
from ..inplace_engine import apply_inplace
from ..op import apply
from ..ops import nn_activations as A


def _run(entry, inplace_entry, input, inplace, params=None):
    """The op out of place, or written into ``input`` (its node then reads the result)."""
    if inplace:
        return NF._inplace(inplace_entry, input, (), params)
    return apply(entry, (input,), params or {})


def celu(input, alpha=1.0, inplace=False):
    return _run(A.celu, A.celu_inplace, input, inplace, {"alpha": alpha})


def selu(input, inplace=False):
    return _run(A.selu, A.selu_inplace, input, inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def hardshrink(input, lambd=0.5):
    return apply(A.hardshrink, (input,), {"lambd": lambd})


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise errors.RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return apply(A.softshrink, (input,), {"lambd": lambd})


def _self_reading(entry, input, inplace):
    """hardsigmoid/hardswish/mish: in place they keep their node, which reads the old input."""
    return apply_inplace(entry, input) if inplace else apply(entry, (input,))


def hardsigmoid(input, inplace=False):
    return _self_reading(A.hardsigmoid, input, inplace)


def hardswish(input, inplace=False):
    return _self_reading(A.hardswish, input, inplace)


def mish(input, inplace=False):
    return _self_reading(A.mish, input, inplace)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise errors.RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.dim() if -input.dim() <= dim < input.dim() else dim
    if input.shape[d] % 2:
        raise errors.RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    return apply(A.glu, (input,), {"dim": int(dim)})      # as given (the node shows a negative dim raw)


def prelu(input, weight):
    """ATen's prelu: the weight reshaped to broadcast over the channel dim (dim 1), then _prelu_kernel."""
    if input.dtype != weight.dtype:
        raise errors.RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype._scalar_name} and "
                                  f"{weight.dtype._scalar_name}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise errors.RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise errors.RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter "
                                      f"numbers = {weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise errors.RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
                                  f"{weight.dim()}")
    if input.dim() != weight.dim():
        shape = [1] * input.dim()
        if input.dim() > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return apply(A.prelu_kernel, (input, weight))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Training: each x <= 0 gets its own slope drawn from U(lower, upper) by PyTorch's generator (one
    double per such element, in order); eval: the mean slope (lower + upper) / 2."""
    if training:
        negative = input._data <= 0
        from .. import rng
        drawn = rng.default_generator._uniform53(int(np.count_nonzero(negative)))
        noise = np.ones(input._data.shape, np.float64)
        low, high = _in_opmath(lower, input), _in_opmath(upper, input)
        noise[negative] = drawn * (high - low) + low
    else:
        noise = np.asarray((float(lower) + float(upper)) / 2)
    return _run(A.rrelu_with_noise, A.rrelu_with_noise_inplace, input, inplace,
                {"noise": noise, "lower": lower, "upper": upper, "training": training})


def _in_opmath(value, input):
    """A Scalar bound as ATen reads it in the kernel's opmath type (float for float32), then widened."""
    kind = input._data.dtype
    return float(np.float32(value)) if kind in (np.float32, np.float16) else float(value)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def threshold(input, threshold, value, inplace=False):
    return _run(A.threshold, A.threshold_inplace, input, inplace, {"threshold": threshold, "value": value})


def threshold_(input, threshold, value):
    return _run(A.threshold, A.threshold_inplace, input, True, {"threshold": threshold, "value": value})


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = NF._implicit_dim(input.dim())
    if dtype is None:
        return NF.softmax(-input, dim)
    return NF.softmax(-input.to(dtype), dim)


NAMES = ("celu selu celu_ selu_ hardshrink softshrink hardsigmoid hardswish mish glu prelu rrelu rrelu_ threshold "
         "threshold_ softsign tanhshrink softmin").split()
# the ones PyTorch also binds as torch.X (and Tensor.X)
TORCH_NAMES = "celu selu celu_ selu_ hardshrink prelu rrelu rrelu_ threshold threshold_".split()
TENSOR_METHODS = "hardshrink prelu".split()


def bind_tensor_methods():
    """``Tensor.hardshrink``/``Tensor.prelu``, put on the class when a program first reads one."""
    from ..tensor import Tensor
    for name in TENSOR_METHODS:
        setattr(Tensor, name, globals()[name])
