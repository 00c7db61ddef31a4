"""The names a program starts with: SPEC's prelude.

``import torch; from torch import *`` binds the torch names; ``from builtins import
abs, all, …`` then gives Python's builtins back, so they come last and win.
"""
from __future__ import annotations

_names = None


def make_globals() -> dict:
    """A fresh dict of the prelude's names (made once per process; every value in it is
    immutable, so each program — each line of ``eval --batch`` — gets a plain copy)."""
    global _names
    if _names is None:
        from gradexpr import api
        from .builtins import BUILTINS
        names = api.build()
        for shadowed in ("float", "int", "bool"):   # torch.float etc. keep their prefix
            names.pop(shadowed, None)
        names.update(BUILTINS)
        _name_classes_as_torch(names)
        _names = names
    return dict(_names)


# Engine classes a program can reach, and where PyTorch defines them: ``print(torch.dtype)``,
# ``type(opt)``, ``print(no_grad())`` show the class's module and qualified name.
_TORCH_CLASS_NAMES = {
    ("dtype",): ("torch", "dtype"),
    ("no_grad",): ("torch.autograd.grad_mode", "no_grad"),
    ("enable_grad",): ("torch.autograd.grad_mode", "enable_grad"),
    ("torch", "set_grad_enabled"): ("torch.autograd.grad_mode", "set_grad_enabled"),
    ("torch", "optim", "SGD"): ("torch.optim.sgd", "SGD"),
    ("torch", "optim", "Adam"): ("torch.optim.adam", "Adam"),
    ("torch", "optim", "Optimizer"): ("torch.optim.optimizer", "Optimizer"),
    ("Generator",): ("torch._C", "Generator"),
}


def _name_classes_as_torch(names: dict) -> None:
    for path, (module, qualname) in _TORCH_CLASS_NAMES.items():
        obj = names.get(path[0])
        for attr in path[1:]:
            obj = getattr(obj, attr, None)
        if not isinstance(obj, type):
            continue
        classes = [obj]
        if path == ("Generator",):      # and the engine's generator it extends (manual_seed's result)
            classes += [c for c in obj.__mro__[1:] if c.__module__ == "gradexpr.random"]
        for cls in classes:
            cls.__module__ = module
            cls.__qualname__ = qualname
