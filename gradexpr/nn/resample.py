"""The resampling modules (``torch/nn/modules/pixelshuffle.py``, ``upsampling.py``,
``channelshuffle.py``): PixelShuffle, PixelUnshuffle, ChannelShuffle and Upsample with its two
fixed-mode subclasses, holding and printing their arguments as PyTorch's do."""
from __future__ import annotations

from . import functional_resample as FR
from .module import Module


class PixelShuffle(Module):
    __module__ = "torch.nn.modules.pixelshuffle"

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return FR.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    __module__ = "torch.nn.modules.pixelshuffle"

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return FR.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    __module__ = "torch.nn.modules.channelshuffle"

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return FR.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class Upsample(Module):
    __module__ = "torch.nn.modules.upsampling"

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return FR.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                              recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    __module__ = "torch.nn.modules.upsampling"

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    __module__ = "torch.nn.modules.upsampling"

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Fold(Module):
    """``nn.Fold`` (torch/nn/modules/fold.py): the arguments are kept as given, used by ``forward``."""
    __module__ = "torch.nn.modules.fold"

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return FR.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """``nn.Unfold`` (torch/nn/modules/fold.py)."""
    __module__ = "torch.nn.modules.fold"

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return FR.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


__all__ = NAMES = ("PixelShuffle PixelUnshuffle ChannelShuffle Upsample UpsamplingNearest2d UpsamplingBilinear2d "
                   "Fold Unfold").split()
