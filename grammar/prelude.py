"""The names a program starts with: SPEC's prelude.

``import torch; from torch import *`` binds the torch names; ``from builtins import
abs, all, …`` then gives Python's builtins back, so they come last and win.
"""
from __future__ import annotations


def make_globals() -> dict:
    from gradexpr import api
    from .builtins import BUILTINS
    names = api.build()
    for shadowed in ("float", "int", "bool"):   # torch.float etc. keep their prefix
        names.pop(shadowed, None)
    names.update(BUILTINS)
    return names
