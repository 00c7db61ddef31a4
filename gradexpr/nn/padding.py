"""The padding modules (``torch/nn/modules/padding.py``) and ``nn.CosineSimilarity``: thin modules
over ``F.pad`` and ``F.cosine_similarity`` with PyTorch's ``extra_repr``."""
from __future__ import annotations

from .. import nn_functional as NF
from .module import Module


def _ntuple(padding, n):
    return tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * n


class _PadNd(Module):
    __module__ = "torch.nn.modules.padding"
    mode = "constant"
    sides = 2

    def __init__(self, padding, value=None):
        super().__init__()
        self.padding = _ntuple(padding, self.sides)
        if value is not None:
            self.value = value

    def forward(self, input):
        if self.mode == "constant":
            return NF.pad(input, self.padding, "constant", self.value)
        return NF.pad(input, self.padding, self.mode)

    def extra_repr(self):
        if self.mode == "constant" and type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _pad_class(name, mode, sides, zero=False):
    def __init__(self, padding, *value):
        _PadNd.__init__(self, padding, 0.0 if zero else (value[0] if value else None))
    attrs = {"mode": mode, "sides": sides, "__module__": "torch.nn.modules.padding"}
    if mode == "constant":
        attrs["__init__"] = __init__
    return type(name, (_PadNd,), attrs)


ZeroPad1d = _pad_class("ZeroPad1d", "constant", 2, zero=True)
ZeroPad2d = _pad_class("ZeroPad2d", "constant", 4, zero=True)
ConstantPad1d = _pad_class("ConstantPad1d", "constant", 2)
ConstantPad2d = _pad_class("ConstantPad2d", "constant", 4)
ReflectionPad1d = _pad_class("ReflectionPad1d", "reflect", 2)
ReflectionPad2d = _pad_class("ReflectionPad2d", "reflect", 4)
ReplicationPad1d = _pad_class("ReplicationPad1d", "replicate", 2)
ReplicationPad2d = _pad_class("ReplicationPad2d", "replicate", 4)
CircularPad1d = _pad_class("CircularPad1d", "circular", 2)
CircularPad2d = _pad_class("CircularPad2d", "circular", 4)
ZeroPad3d = _pad_class("ZeroPad3d", "constant", 6, zero=True)
ConstantPad3d = _pad_class("ConstantPad3d", "constant", 6)
ReflectionPad3d = _pad_class("ReflectionPad3d", "reflect", 6)
ReplicationPad3d = _pad_class("ReplicationPad3d", "replicate", 6)
CircularPad3d = _pad_class("CircularPad3d", "circular", 6)
PADDING_NAMES = [c.__name__ for c in (ZeroPad1d, ZeroPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d,
                                      ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, CircularPad1d,
                                      CircularPad2d, ZeroPad3d, ConstantPad3d, ReflectionPad3d, ReplicationPad3d,
                                      CircularPad3d)]


class CosineSimilarity(Module):
    __module__ = "torch.nn.modules.distance"

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return NF.cosine_similarity(x1, x2, self.dim, self.eps)
