"""``nn.DataParallel`` and ``nn.parallel.DistributedDataParallel`` on a machine without accelerators,
as ``torch/nn/parallel`` behaves there: DataParallel finds no device to replicate on and calls the
wrapped module itself; DistributedDataParallel needs the default process group, which gradexpr's
process never has (see ``gradexpr/distributed.py``)."""
from __future__ import annotations

from .module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "NAMES"]


class DataParallel(Module):
    __module__ = "torch.nn.parallel.data_parallel"

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # no CUDA, XPU or other accelerator: PyTorch keeps the module and no device ids
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    __module__ = "torch.nn.parallel.distributed"

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        if process_group is None:
            from .. import distributed
            distributed.names()["new_group"]()      # the default group is needed: PyTorch's ValueError
        self.module = module

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


NAMES = ["DataParallel"]
