"""The pooling modules (``torch/nn/modules/pooling.py``): max, average, adaptive average and adaptive
max pooling over 1, 2 and 3 dims, each holding its arguments as PyTorch's does and printing them
as PyTorch's ``extra_repr`` does."""
from __future__ import annotations

from . import functional_pooling as FP
from .module import Module


class _MaxPoolNd(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _pool = staticmethod(FP.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    _pool = staticmethod(FP.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _pool = staticmethod(FP.max_pool3d)


class _AvgPoolNd(Module):
    __module__ = "torch.nn.modules.pooling"

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Holds its sizes as 1-tuples, as PyTorch's does (``_single``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = FP._tuple(kernel_size, 1)
        self.stride = FP._tuple(stride if stride is not None else kernel_size, 1)
        self.padding = FP._tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return FP.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad)


class _AvgPool23d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPool23d):
    _pool = staticmethod(FP.avg_pool2d)


class AvgPool3d(_AvgPool23d):
    _pool = staticmethod(FP.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._pool(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _pool = staticmethod(FP.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _pool = staticmethod(FP.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _pool = staticmethod(FP.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return self._pool(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _pool = staticmethod(FP.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _pool = staticmethod(FP.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _pool = staticmethod(FP.adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = FP._tuple(kernel_size, self._nd)
        self.stride = FP._tuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = FP._tuple(padding, self._nd)

    def forward(self, input, indices, output_size=None):
        return self._unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _nd, _unpool = 1, staticmethod(FP.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    _nd, _unpool = 2, staticmethod(FP.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    _nd, _unpool = 3, staticmethod(FP.max_unpool3d)


class _LPPoolNd(Module):
    __module__ = "torch.nn.modules.pooling"

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return self._pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    _pool = staticmethod(FP.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _pool = staticmethod(FP.lp_pool2d)


class LPPool3d(_LPPoolNd):
    _pool = staticmethod(FP.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        from .. import errors
        super().__init__()
        nd = self._nd
        name = type(self).__name__
        self.kernel_size = FP._tuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = FP._tuple(output_size, nd) if output_size is not None else None
        self.output_ratio = FP._ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise errors.ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise errors.ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise errors.ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        pool = FP.fractional_max_pool2d if self._nd == 2 else FP.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _nd = 3


__all__ = NAMES = """FractionalMaxPool2d FractionalMaxPool3d MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d
AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d LPPool1d
LPPool2d LPPool3d""".split()

for _name in NAMES:          # (the base classes print as PyTorch's too)
    globals()[_name].__module__ = "torch.nn.modules.pooling"
