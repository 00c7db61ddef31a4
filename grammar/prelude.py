"""The names a program starts with: SPEC's prelude.

``import torch; from torch import *`` binds the torch names; ``from builtins import
abs, all, …`` then gives Python's builtins back, so they come last and win.
"""
from __future__ import annotations

_names = None


def make_globals():
    """A fresh dict of the prelude's names (made once per process; every value in it is
    immutable, so each program — each line of ``eval --batch`` — gets a plain copy). It is an
    ``api.PreludeNames``: the names whose module is not imported yet are made on first use."""
    global _names
    if _names is None:
        from gradexpr import api
        from .builtins import BUILTINS
        shadowed = frozenset({*BUILTINS, "float", "int", "bool"})   # torch.float etc. keep their prefix
        names = api.PreludeNames(api.build(), shadowed)
        for name in ("float", "int", "bool"):
            dict.pop(names, name, None)
        names.update(BUILTINS)
        _names = names
    return _names.copy()
