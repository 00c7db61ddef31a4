"""``RMSprop``, ``Adagrad`` and ``Adadelta``: the per-coordinate step sizes, each step as PyTorch's
single-tensor loop."""
from __future__ import annotations

import numpy as np

from .. import errors
from ..tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, _scalar_step, first_use_state


def _check(lr=0.0, eps=0.0, weight_decay=0.0):
    if not 0.0 <= lr:
        raise errors.ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise errors.ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= weight_decay:
        raise errors.ValueError(f"Invalid weight_decay value: {weight_decay}")


def _grad(p, group):
    g = p.grad._data
    if group["maximize"]:
        g = -g
    if group["weight_decay"] != 0:
        g = K.add(g, p._data, group["weight_decay"])
    return g


class RMSprop(Optimizer):
    __module__ = "torch.optim.rmsprop"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check(lr, eps)
        if not 0.0 <= momentum:
            raise errors.ValueError(f"Invalid momentum value: {momentum}")
        _check(weight_decay=weight_decay)
        if not 0.0 <= alpha:
            raise errors.ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _update(self, p, group):
        d = p._data
        dt = d.dtype.type
        state = first_use_state(self, p, "square_avg", *(("momentum_buffer",) if group["momentum"] > 0 else ()),
                                *(("grad_avg",) if group["centered"] else ()))
        state["step"]._data += np.float32(1)
        g = _grad(p, group)
        alpha = group["alpha"]
        sq = state["square_avg"]._data
        sq[...] = K.addcmul(sq * dt(alpha), g, g, 1 - alpha)
        if group["centered"]:
            ga = state["grad_avg"]._data
            ga[...] = K.lerp(ga, g, 1 - alpha)
            avg = np.sqrt(K.addcmul(sq, ga, ga, -1))
        else:
            avg = np.sqrt(sq)
        avg = avg + dt(group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]._data
            buf[...] = K.addcdiv(buf * dt(group["momentum"]), g, avg)
            d[...] = K.add(d, buf, -group["lr"])
        else:
            d[...] = K.addcdiv(d, g, avg, -group["lr"])


class Adagrad(Optimizer):
    __module__ = "torch.optim.adagrad"

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise errors.ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise errors.ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise errors.ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise errors.ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise errors.ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        # Adagrad's state exists from the start (PyTorch fills it in the constructor)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_step()
                init = group["initial_accumulator_value"]
                state["sum"] = Tensor._make(np.full_like(p._data, init), p._dtype)

    def _update(self, p, group):
        d = p._data
        state = self.state[p]
        state["step"]._data += np.float32(1)
        step = float(state["step"]._data)
        g = _grad(p, group)
        lr = group["lr"]
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        s = state["sum"]._data
        s[...] = K.addcmul(s, g, g, 1)
        std = np.sqrt(s) + d.dtype.type(group["eps"])
        d[...] = K.addcdiv(d, g, std, -clr)


class Adadelta(Optimizer):
    __module__ = "torch.optim.adadelta"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise errors.ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise errors.ValueError(f"Invalid rho value: {rho}")
        _check(eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update(self, p, group):
        d = p._data
        dt = d.dtype.type
        state = first_use_state(self, p, "square_avg", "acc_delta")
        state["step"]._data += np.float32(1)
        g = _grad(p, group)
        rho, eps = group["rho"], dt(group["eps"])
        sq, acc = state["square_avg"]._data, state["acc_delta"]._data
        sq[...] = K.addcmul(sq * dt(rho), g, g, 1 - rho)
        std = np.sqrt(sq + eps)
        delta = np.sqrt(acc + eps) / std * g
        acc[...] = K.addcmul(acc * dt(rho), delta, delta, 1 - rho)
        d[...] = K.add(d, delta, -group["lr"])
