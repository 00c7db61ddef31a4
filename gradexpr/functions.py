"""The ``torch`` functions as library code calls them (``from gradexpr import functions as T``).

Hand-written functions live in ``composites/`` (one concern per file); the functions bound from
the op table (``T.exp``, ``T.sum``, ``T.logaddexp`` …) are looked up in ``surface.py`` on first
use, so no op is named twice. Importing this module also puts every method and operator on
``Tensor`` (``composites/methods.py``). ``api.py`` builds a program's ``torch`` namespace from the
same two sources.
"""
from __future__ import annotations

import numpy as np  # noqa: F401  (T.np for the composites of nn_functional)

from . import dtypes  # noqa: F401
from .composites import (arguments, arithmetic, conversion, creation, indexing, inplace, linalg, methods,
                         random_functions, reductions, shape)
from .op import wrap  # noqa: F401
from .tensor import Size, Tensor, _wrap_dim  # noqa: F401

_MODULES = (arguments, creation, random_functions, shape, linalg, reductions, arithmetic, conversion, inplace,
            indexing, methods)


def _collect():
    """Every function and class the composites define, under its own name (``T.cat``, ``T._missing``)."""
    g = globals()
    for module in _MODULES:
        for name, value in vars(module).items():
            if getattr(value, "__module__", None) == module.__name__ and (callable(value)):
                if g.get(name, value) is not value:
                    raise ValueError(f"two hand-written functions are named {name!r}")
                g[name] = value


_collect()

# the torch.X functions with a dim/keepdim parameter also take NumPy's axis=/keepdims= (api.py reads them here)
for _name in ("amax", "amin", "aminmax", "argmax", "argmin", "std", "var", "var_mean",
              "std_mean", "logsumexp", "cumsum", "cumprod", "all", "any", "count_nonzero", "cat", "concat",
              "concatenate", "stack", "squeeze", "unsqueeze", "flatten", "unflatten", "chunk", "tensor_split",
              "unbind", "narrow", "select", "index_select", "index_add", "gather", "scatter", "scatter_add", "roll",
              "movedim", "vector_norm", "matrix_norm", "linalg_norm"):
    globals()[_name] = methods._numpy_names(globals()[_name], _name)
del _name


def __getattr__(name):
    """``functions.exp`` and the other ``torch.X`` bound from the op table (``surface.py``), for library
    code written with torch calls (``nn``, ``optim``, ``data`` import this module as their ``torch``)."""
    from . import surface
    fn = surface.namespace("function", {}).get(name)
    if fn is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return fn
