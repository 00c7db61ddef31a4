"""``torch.optim.Optimizer``: parameter groups, per-parameter state, ``zero_grad``, ``state_dict`` /
``load_state_dict`` and the step loop that each optimiser's single-tensor update plugs into, as
PyTorch's ``torch/optim/optimizer.py`` (its checks, its packed state dict, its ``repr``)."""
from __future__ import annotations

import collections
import copy
import itertools
import warnings

import numpy as np

from .. import dtypes, errors
from ..graph import enable_grad, no_grad
from ..op import bump_version
from ..tensor import Tensor


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    _gx_exposed = True
    __module__ = "torch.optim.optimizer"        # type(opt) names PyTorch's modules

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise errors.TypeError("params argument given to the optimizer should be an iterable of Tensors or "
                                   "dicts, but got " + _typename(params))
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if not param_groups:
            raise errors.ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise errors.TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise errors.TypeError("optimizer parameters need to be organized in ordered collections, but the "
                                   "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise errors.ValueError("all optimizer params should be with/without names. Some param names are "
                                        "missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise errors.TypeError("optimizer can only optimize Tensors, but one of the params is "
                                       + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise errors.ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise errors.ValueError(f"parameter group didn't specify a value of required optimization "
                                        f"parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise errors.ValueError("all optimizer param groups should be with/without names. "
                                        f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise errors.ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------ state
    def state_dict(self):
        """PyTorch's packed form: parameters numbered in order across the groups; the state's
        tensors are the optimizer's own (not copies)."""
        mapping = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise errors.ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise errors.ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                    "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key == "step":
                    return value
                return value.to(param.dtype) if param.is_floating_point() else value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = collections.defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v)
            else:
                state[k] = v
        for g, new in zip(groups, saved_groups):
            new["params"] = g["params"]
            if "param_names" in g and "param_names" not in new:
                new["param_names"] = g["param_names"]
        self.state = state
        self.param_groups = saved_groups

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    # ------------------------------------------------------------ stepping
    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def step(self, closure=None):
        """The single-tensor loop: each parameter with a gradient, in group order, updated in place."""
        self._opt_called = True         # what lr_scheduler's order check reads
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._check_grad(p)
                        self._update(p, group)
                        bump_version(p)     # views of p get their new history too
        return loss

    def _check_grad(self, p):
        pass

    def _update(self, p, group):
        raise errors.NotImplementedError


def first_use_state(optimizer, p, *buffers):
    """``optimizer.state[p]``, made on the first step as Adam and friends make it: a float32 step count,
    then a zeroed buffer of ``p``'s shape per name in ``buffers`` (in that order, as state_dict shows them)."""
    state = optimizer.state[p]
    if not state:
        state["step"] = _scalar_step()
        for name in buffers:
            state[name] = Tensor._make(np.zeros(p._data.shape, p._data.dtype), p._dtype)   # (C order)
    return state


def _scalar_step():
    """The step count of Adam and friends: a float32 0-d tensor (prints as ``tensor(1.)``)."""
    return Tensor._make(np.zeros((), np.float32), dtypes.float32)
