"""The activation modules: each holds its options and calls the matching ``F.`` function."""
from __future__ import annotations

from .. import functions as T
from .. import nn_functional as NF
from .module import Module


def _inplace_repr(inplace, leading=""):
    return (leading + "inplace=True") if inplace else ""


class ReLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return NF.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return NF.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + _inplace_repr(self.inplace, ", ")


class ELU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return NF.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class GELU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return NF.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return NF.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return T.sigmoid(input)


class Tanh(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return T.tanh(input)


class Softplus(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return NF.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return NF.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return NF.log_softmax(input, self.dim, _stacklevel=5)
