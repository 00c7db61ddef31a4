"""A module as a program sees it: a read-only table of names, never the module object.

``import math`` binds a ``ModuleNamespace`` built from a list of the public names of
CPython's ``math``; whatever else the real module carries (``warnings.sys``,
``random._os``, ``np.ctypeslib``) is simply not in the table, and a program that reaches for
it is told so. Names a module refuses on purpose (NumPy's file functions) carry the reason.
"""
from __future__ import annotations

import sys

from gradexpr.api import Namespace

__all__ = ["ModuleNamespace", "names_of", "refusal"]

NO_ACCESS = "gradexpr allows no file, process or network access"


def refusal(qualified: str, why: str = NO_ACCESS) -> str:
    return f"'{qualified}' is not available in gradexpr: {why}"


class ModuleNamespace(Namespace):
    """``names``: what the program may read; ``refused``: name -> why it may not;
    ``star``: the names ``from M import *`` binds (the module's ``__all__`` where it has one)."""

    def __init__(self, name, names, *, refused=None, star=None):
        super().__init__(name, names)
        object.__setattr__(self, "_refused", dict(refused or {}))
        object.__setattr__(self, "_star", tuple(star) if star is not None else
                           tuple(n for n in names if not n.startswith("_")))

    def __getattr__(self, item):
        names = object.__getattribute__(self, "_names")
        try:
            return names[item]
        except KeyError:
            pass
        name = object.__getattribute__(self, "_name")
        why = object.__getattribute__(self, "_refused").get(item)
        if why is not None:
            raise AttributeError(refusal(f"{name}.{item}", why))
        real = sys.modules.get(name)
        if real is not None and not item.startswith("__") and hasattr(real, item):
            raise AttributeError(f"access to '{name}.{item}' is not allowed in gradexpr")
        raise AttributeError(f"module '{name}' has no attribute '{item}'")

    def star_names(self):
        """What ``from M import *`` binds: name -> value."""
        names = object.__getattribute__(self, "_names")
        return {n: names[n] for n in object.__getattribute__(self, "_star") if n in names}


def names_of(module, names: str, **replaced) -> dict:
    """``{name: module.name}`` for the whitespace-separated ``names`` that this Python's
    ``module`` has (the list is CPython 3.11's, the oracle's), with ``replaced`` overriding."""
    table = {n: getattr(module, n) for n in names.split() if hasattr(module, n)}
    table.update(replaced)
    return table
