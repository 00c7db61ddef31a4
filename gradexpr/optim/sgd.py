"""``torch.optim.SGD``, step for step as PyTorch's single-tensor loop."""
from __future__ import annotations

import numpy as np

from .. import errors
from . import _kernels as K
from .optimizer import Optimizer


class SGD(Optimizer):
    __module__ = "torch.optim.sgd"

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise errors.ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise errors.ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise errors.ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise errors.ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _update(self, p, group):
        d = p._data
        g = p.grad._data
        if group["maximize"]:
            g = -g
        if group["weight_decay"] != 0:
            g = K.add(g, d, group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[p]
            held = state.get("momentum_buffer")
            if held is None:
                state["momentum_buffer"] = K.state_tensor(np.array(g, copy=True), p)
                buf = state["momentum_buffer"]._data
            else:
                buf = held._data
                buf[...] = K.add(buf * d.dtype.type(momentum), g, 1 - group["dampening"])
            g = K.add(g, buf, momentum) if group["nesterov"] else buf
        d[...] = K.add(d, g, -group["lr"])
