"""``torch.optim.SGD`` and ``torch.optim.Adam``, step for step as PyTorch 2.13's single-tensor loops."""
from __future__ import annotations

import collections

import numpy as np

from . import dtypes, errors
from .ops.common import _lerp, fma
from .graph import no_grad
from .op import bump_version
from .tensor import Tensor


class Optimizer:
    _gx_exposed = True
    __module__ = "torch.optim.optimizer"        # type(opt) names PyTorch's modules

    def __init__(self, params, defaults):
        if isinstance(params, Tensor):
            raise errors.TypeError("params argument given to the optimizer should be an iterable of Tensors or "
                                   "dicts, but got torch.FloatTensor")
        params = list(params)
        if not params:
            raise errors.ValueError("optimizer got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        self.defaults = dict(defaults)
        self.param_groups = []
        for g in params:
            # as add_param_group: the group's own keys ('params' first), then the defaults it lacks
            group = dict(g)
            for k, v in defaults.items():
                group.setdefault(k, v)
            group["params"] = list(group["params"]) if not isinstance(group["params"], Tensor) else [group["params"]]
            for p in group["params"]:
                if not isinstance(p, Tensor):
                    raise errors.TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                           f"{type(p).__name__}")
                if not p.is_leaf:
                    raise errors.ValueError("can't optimize a non-leaf Tensor")
            self.param_groups.append(group)
        # per parameter (the tensor is the key, as in PyTorch): its buffers, as tensors
        self.state = collections.defaultdict(dict)

    def state_dict(self):
        """PyTorch's packed form: parameters numbered in order across the groups; the state's
        tensors are the optimizer's own (not copies)."""
        index, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    p._grad = p._grad.detach()
                    p._grad._data[...] = 0

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)

    def _arrays(self, p):
        return p._data

    def step(self, closure=None):
        loss = None
        if closure is not None:
            from .graph import enable_grad
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is not None:
                        self._update(p, group)
                        bump_version(p)     # views of p get their new history too
        return loss


class SGD(Optimizer):
    __module__ = "torch.optim.sgd"

    def __init__(self, params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0:
            raise errors.ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0:
            raise errors.ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0:
            raise errors.ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise errors.ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update(self, p, group):
        # _single_tensor_sgd, op for op: ``x.add(y, alpha=a)`` is a fused multiply-add in PyTorch's kernel
        d = p._data
        dt = d.dtype.type
        g = p._grad._data
        if group["maximize"]:
            g = -g
        wd = group["weight_decay"]
        if wd != 0:
            g = fma(d, dt(wd), g)
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[p]
            held = state.get("momentum_buffer")
            if held is None:
                buf = np.array(g, dtype=d.dtype, copy=True)
                state["momentum_buffer"] = Tensor._make(buf, p._dtype)
            else:
                buf = held._data
                buf[...] = fma(g, dt(1 - group["dampening"]), buf * dt(momentum))
            g = fma(buf, dt(momentum), g) if group["nesterov"] else buf
        d[...] = fma(g, dt(-group["lr"]), d)


class Adam(Optimizer):
    __module__ = "torch.optim.adam"

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if lr < 0:
            raise errors.ValueError(f"Invalid learning rate: {lr}")
        if eps < 0:
            raise errors.ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise errors.ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise errors.ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if weight_decay < 0:
            raise errors.ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, p, group):
        d = p._data
        dt = d.dtype.type
        g = p._grad._data
        if group["maximize"]:
            g = -g
        state = self.state[p]
        if not state:
            # the step count is a float32 tensor in PyTorch (printed as tensor(1.))
            state["step"] = Tensor._make(np.zeros((), np.float32), dtypes.float32)
            for name in ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ()):
                state[name] = Tensor._make(np.zeros_like(d), p._dtype)
        beta1, beta2 = group["betas"]
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        state["step"]._data += np.float32(1)
        step = float(state["step"]._data)
        # _single_tensor_adam, op for op (lerp_ and addcmul_ are fused multiply-adds in PyTorch's kernels)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                d *= dt(1 - lr * wd)
            else:
                g = fma(d, dt(wd), g)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        m[...] = _lerp(m, g, 1 - beta1)                                   # exp_avg.lerp_(grad, 1 - beta1)
        v[...] = fma(dt(1 - beta2) * g, g, v * dt(beta2))                  # .mul_(beta2).addcmul_(grad, grad, ...)
        bias1 = 1 - beta1 ** step
        bias2 = 1 - beta2 ** step
        step_size = lr / bias1
        bias2_sqrt = bias2 ** 0.5
        if group["amsgrad"]:
            mx = state["max_exp_avg_sq"]._data
            np.maximum(mx, v, out=mx)
            denom = np.sqrt(mx) / dt(bias2_sqrt) + dt(eps)
        else:
            denom = np.sqrt(v) / dt(bias2_sqrt) + dt(eps)
        d[...] = d + (dt(-step_size) * m) / denom                         # addcdiv_(exp_avg, denom, -step_size)
