"""``nn.BatchNorm1d`` / ``nn.BatchNorm2d`` as PyTorch's ``torch/nn/modules/batchnorm.py`` writes them:
unit weight, zero bias, running statistics as buffers, ``num_batches_tracked``, and the choice
between batch and running statistics made in ``forward``."""
from __future__ import annotations

from .. import dtypes, errors
from .. import functions as T
from . import functional as NF2
from . import init
from .linear import _factory
from .module import Module
from .parameter import Parameter


class _NormBase(Module):
    __module__ = "torch.nn.modules.batchnorm"
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        factory = _factory(device, dtype)
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(T.empty(num_features, **factory))
            if bias:
                self.bias = Parameter(T.empty(num_features, **factory))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", T.zeros(num_features, **factory))
            self.register_buffer("running_var", T.ones(num_features, **factory))
            self.register_buffer("num_batches_tracked", T.tensor(0, dtype=dtypes.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    __module__ = "torch.nn.modules.batchnorm"

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return NF2.batch_norm(input, self.running_mean if use_buffers else None,
                              self.running_var if use_buffers else None, self.weight, self.bias, bn_training,
                              factor, self.eps)


class BatchNorm1d(_BatchNorm):
    __module__ = "torch.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise errors.ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    __module__ = "torch.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise errors.ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    __module__ = "torch.nn.modules.batchnorm"

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise errors.ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """``nn.SyncBatchNorm``: batch norm whose statistics are synchronised over a process group in
    training. gradexpr's process never joins a group (torch.distributed is never initialized), so
    it computes as ``_BatchNorm`` does, which is PyTorch's own fallback when no sync is needed."""
    __module__ = "torch.nn.modules.batchnorm"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise errors.ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise errors.ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Every ``_BatchNorm`` of ``module`` replaced by a SyncBatchNorm sharing its parameters and buffers."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group)
            if module.affine:
                from ..graph import no_grad
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return module_output
