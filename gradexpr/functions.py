"""The ``torch`` functions as library code calls them (``from gradexpr import functions as T``).

Hand-written functions live in ``composites/`` (one concern per file); the functions bound from
the op table (``T.exp``, ``T.sum``, ``T.logaddexp`` …) are looked up in ``surface.py`` on first
use, so no op is named twice. Importing this module also puts every method and operator on
``Tensor`` (``composites/methods.py``). ``api.py`` builds a program's ``torch`` namespace from the
same two sources.

The composites a product of two numbers needs are imported here; the others
(``composites.methods.LAZY_MODULES``) with the first name read from them.
"""
from __future__ import annotations

import importlib

import numpy as np  # noqa: F401  (T.np for the composites of nn_functional)

from . import dtypes  # noqa: F401
from .composites import arguments, arithmetic, creation, methods
from .composites.methods import LAZY_MODULES
from .op import wrap  # noqa: F401
from .tensor import Size, Tensor, _wrap_dim  # noqa: F401

# the torch.X functions with a dim/keepdim parameter also take NumPy's axis=/keepdims= (api.py reads them here)
_NUMPY_NAMED = frozenset((
    "amax", "amin", "aminmax", "argmax", "argmin", "std", "var", "var_mean", "std_mean", "logsumexp", "cumsum",
    "cumprod", "all", "any", "count_nonzero", "cat", "concat", "concatenate", "stack", "squeeze", "unsqueeze",
    "flatten", "unflatten", "chunk", "tensor_split", "unbind", "narrow", "select", "index_select", "index_add",
    "gather", "scatter", "scatter_add", "roll", "movedim", "vector_norm", "matrix_norm", "linalg_norm"))


def _collect(modules):
    """Every function and class ``modules`` define, under its own name (``T.cat``, ``T._missing``)."""
    g = globals()
    for module in modules:
        for name, value in vars(module).items():
            if getattr(value, "__module__", None) == module.__name__ and callable(value):
                if name in _NUMPY_NAMED:
                    value = methods._numpy_names(value, name)
                if name in g and getattr(g[name], "__wrapped__", g[name]) is not getattr(value, "__wrapped__", value):
                    raise ValueError(f"two hand-written functions are named {name!r}")
                g[name] = value


_collect((arguments, creation, arithmetic, methods))
_lazy_collected = []


def __getattr__(name):
    """``functions.cat`` and the other composites of the modules not imported yet (all of them load
    with the first such name), then ``functions.exp`` and the other ``torch.X`` bound from the op
    table (``surface.py``), for library code written with torch calls (``nn``, ``optim``, ``data``
    import this module as their ``torch``)."""
    if not _lazy_collected and not name.startswith("__"):
        _lazy_collected.append(True)
        _collect([importlib.import_module(f"{__package__}.composites.{m}") for m in LAZY_MODULES])
        if name in globals():
            return globals()[name]
    from . import surface
    fn = surface.namespace("function", {}).get(name)
    if fn is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return fn
