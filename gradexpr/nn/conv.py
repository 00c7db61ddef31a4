"""``nn.Conv1d``, ``nn.Conv2d`` and their transposed forms (PyTorch's constructor, initialisation and
``repr``) and the 2-d pooling modules."""
from __future__ import annotations

import math

from .. import errors
from .. import functions as T
from . import functional as NF2
from . import init
from .linear import _factory
from .module import Module
from .parameter import Parameter


def _ntuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None, output_padding=0):
        factory = _factory(device, dtype)
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise errors.ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise errors.ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise errors.ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise errors.ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise errors.ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode != "zeros":
            raise errors.NotImplementedError(f"padding_mode={padding_mode!r} is not supported in gradexpr")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        channels = (in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(T.empty(channels + self.kernel_size, **factory))
        if bias:
            self.bias = Parameter(T.empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s

    def forward(self, input):
        conv = (NF2.conv1d, NF2.conv2d, NF2.conv3d)[self._nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    __module__ = "torch.nn.modules.conv"
    _nd = 1


class Conv2d(_ConvNd):
    __module__ = "torch.nn.modules.conv"
    _nd = 2


class Conv3d(_ConvNd):
    __module__ = "torch.nn.modules.conv"
    _nd = 3


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise errors.ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that gives ``output_size`` (PyTorch's check of the sizes reachable)."""
        if output_size is None:
            return self.output_padding
        n = self._nd
        batched = input.dim() == n + 2
        lead = 2 if batched else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise errors.ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} "
                                    f"or {lead + n} elements (got {len(output_size)})")
        low = [(input.size(d + lead) - 1) * self.stride[d] - 2 * self.padding[d]
               + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        high = [m + s - 1 for m, s in zip(low, self.stride)]
        for size, a, b in zip(output_size, low, high):
            if size < a or size > b:
                raise errors.ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                        f"{low} to {high} (for an input of {input.size()[2:]})")
        return [size - a for size, a in zip(output_size, low)]

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        conv = (NF2.conv_transpose1d, NF2.conv_transpose2d, NF2.conv_transpose3d)[self._nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                    self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    __module__ = "torch.nn.modules.conv"
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    __module__ = "torch.nn.modules.conv"
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    __module__ = "torch.nn.modules.conv"
    _nd = 3
