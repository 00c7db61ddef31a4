"""``torch.optim.Adam`` and ``AdamW`` (Adam with decoupled weight decay), step for step as PyTorch's
single-tensor loop."""
from __future__ import annotations

import numpy as np

from .. import errors
from . import _kernels as K
from .optimizer import Optimizer, first_use_state


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise errors.ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise errors.ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


class Adam(Optimizer):
    __module__ = "torch.optim.adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise errors.ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise errors.ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise errors.ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, p, group):
        d = p._data
        dt = d.dtype.type
        g = p.grad._data
        if group["maximize"]:
            g = -g
        state = first_use_state(self, p, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if group["amsgrad"] else ()))
        beta1, beta2 = group["betas"]
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        state["step"]._data += np.float32(1)
        step = float(state["step"]._data)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                d *= dt(1 - lr * wd)
            else:
                g = K.add(g, d, wd)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        K.lerp(m, g, 1 - beta1, out=m)
        v *= dt(beta2)
        K.addcmul(v, g, g, 1 - beta2, out=v)
        step_size = lr / (1 - beta1 ** step)
        bias2_sqrt = (1 - beta2 ** step) ** 0.5
        if group["amsgrad"]:
            mx = state["max_exp_avg_sq"]._data
            np.maximum(mx, v, out=mx)
            v = mx
        denom = np.sqrt(v, out=np.empty_like(v))       # (an array even for a 0-d parameter)
        np.divide(denom, dt(bias2_sqrt), out=denom)
        np.add(denom, dt(eps), out=denom)
        K.addcdiv(d, m, denom, -step_size, out=d)


class AdamW(Adam):
    __module__ = "torch.optim.adamw"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    __module__ = "torch.optim.adamax"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise errors.ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise errors.ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise errors.ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _update(self, p, group):
        d = p._data
        dt = d.dtype.type
        g = p.grad._data
        if group["maximize"]:
            g = -g
        state = first_use_state(self, p, "exp_avg", "exp_inf")
        beta1, beta2 = group["betas"]
        state["step"]._data += np.float32(1)
        if group["weight_decay"] != 0:
            g = K.add(g, d, group["weight_decay"])
        m, u = state["exp_avg"]._data, state["exp_inf"]._data
        K.lerp(m, g, 1 - beta1, out=m)
        u[...] = np.maximum(u * dt(beta2), np.abs(g) + dt(group["eps"]))
        clr = group["lr"] / (1 - beta1 ** float(state["step"]._data))
        K.addcdiv(d, m, u, -clr, out=d)
