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


# ---- the other activations of torch/nn/modules/activation.py (F. functions in functional_activations.py)
def _FA():
    from . import functional_activations
    return functional_activations


class _Inplace(Module):
    """An activation whose only option is ``inplace``, calling ``F.<_function>``."""
    __module__ = "torch.nn.modules.activation"
    _function = ""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(_FA(), self._function)(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class SELU(_Inplace):
    _function = "selu"


class Mish(_Inplace):
    _function = "mish"


class Hardswish(_Inplace):
    _function = "hardswish"

    def extra_repr(self):
        return ""


class Hardsigmoid(Hardswish):
    _function = "hardsigmoid"


class CELU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return _FA().celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace, ", ")


class GLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return _FA().glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardshrink(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return _FA().hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input):
        return _FA().softshrink(input, self.lambd)


class Hardtanh(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            from .. import errors
            raise errors.AssertionError()

    def forward(self, input):
        return NF.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_repr(self.inplace, ", ")


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class LogSigmoid(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        return NF.logsigmoid(input)


class PReLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        from .parameter import Parameter
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(T.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from . import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return _FA().prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return _FA().rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + _inplace_repr(self.inplace, ", ")


class Threshold(Module):
    __module__ = "torch.nn.modules.activation"

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return _FA().threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + _inplace_repr(self.inplace, ", ")


class _Pointwise(Module):
    __module__ = "torch.nn.modules.activation"
    _function = ""

    def forward(self, input):
        return getattr(_FA(), self._function)(input)


class Softsign(_Pointwise):
    _function = "softsign"


class Tanhshrink(_Pointwise):
    _function = "tanhshrink"


class Softmin(Softmax):
    def forward(self, input):
        return _FA().softmin(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    __module__ = "torch.nn.modules.activation"

    def forward(self, input):
        if input.dim() not in (3, 4):
            from .. import errors
            raise errors.ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return NF.softmax(input, -3, _stacklevel=5)


MORE_ACTIVATIONS = ("SELU Mish Hardswish Hardsigmoid CELU GLU Hardshrink Softshrink Hardtanh ReLU6 LogSigmoid PReLU "
                    "RReLU Threshold Softsign Tanhshrink Softmin Softmax2d").split()
for _name in MORE_ACTIVATIONS:
    globals()[_name].__module__ = "torch.nn.modules.activation"
