"""``nn.Identity``, ``nn.Linear``, ``nn.Bilinear``: PyTorch's constructors (hence its seeded weights)."""
from __future__ import annotations

import math

from .. import errors
from .. import functions as T
from . import init
from .. import nn_functional as NF
from .module import Module
from .parameter import Parameter


def _factory(device, dtype):
    from .module import _check_device
    _check_device(device)
    return {"dtype": dtype} if dtype is not None else {}


class Identity(Module):
    __module__ = "torch.nn.modules.linear"

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    __module__ = "torch.nn.modules.linear"

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        factory = _factory(device, dtype)
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(T.empty((out_features, in_features), **factory))
        if bias:
            self.bias = Parameter(T.empty(out_features, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # a=sqrt(5) makes kaiming_uniform_ draw from U(-1/sqrt(in_features), 1/sqrt(in_features))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return NF.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    __module__ = "torch.nn.modules.linear"

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        factory = _factory(device, dtype)
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(T.empty((out_features, in1_features, in2_features), **factory))
        if bias:
            self.bias = Parameter(T.empty(out_features, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.in1_features <= 0:
            raise errors.ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return NF.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
