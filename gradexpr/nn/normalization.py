"""``nn.GroupNorm``, ``nn.RMSNorm`` (torch/nn/modules/normalization.py) and ``nn.InstanceNorm1d/2d/3d``
(torch/nn/modules/instancenorm.py), over ``functional_norms.py``."""
from __future__ import annotations

import numbers

from .. import errors
from .. import functions as T
from . import functional_norms as FN
from . import init
from .batchnorm import _NormBase
from .linear import _factory
from .module import Module
from .parameter import Parameter


class GroupNorm(Module):
    __module__ = "torch.nn.modules.normalization"

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, bias=True, device=None, dtype=None):
        factory = _factory(device, dtype)
        super().__init__()
        if num_channels % num_groups != 0:
            raise errors.ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.weight = Parameter(T.empty(num_channels, **factory))
            if bias:
                self.bias = Parameter(T.empty(num_channels, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return FN.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    __module__ = "torch.nn.modules.normalization"

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        factory = _factory(device, dtype)
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(T.empty(self.normalized_shape, **factory))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return FN.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _InstanceNorm(_NormBase):
    __module__ = "torch.nn.modules.instancenorm"
    _dims = ()          # (input dims accepted, the unbatched one)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise errors.ValueError(f"expected {self._dims[0]}D or {self._dims[1]}D input (got {input.dim()}D "
                                    "input)")

    def forward(self, input):
        self._check_input_dim(input)
        no_batch = self._dims[0]
        feature_dim = input.dim() - no_batch
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise errors.ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                        f"({self.num_features}), but got: {input.size(feature_dim)}.")
            from ..warn import warn
            warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this warning by "
                 "not passing in num_features, which is not used because affine=False")
        if input.dim() == no_batch:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _apply_instance_norm(self, input):
        return FN.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                self.training or not self.track_running_stats,
                                self.momentum if self.momentum is not None else 0.0, self.eps)


class InstanceNorm1d(_InstanceNorm):
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    _dims = (4, 5)


NORM_NAMES = "GroupNorm RMSNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d".split()
for _name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
    globals()[_name].__module__ = "torch.nn.modules.instancenorm"
