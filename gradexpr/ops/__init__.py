"""The op table: one entry per op, one file per family (see ``registry.py`` for the format).

Importing the package fills ``TABLE`` (families in the order of the old single file) and
exposes every entry by its Python name (``ops.mul``, ``ops.sum_dim``), which the
composites (``composites/``, ``nn_functional.py``) use to choose an overload.
"""
from __future__ import annotations

from . import common, backward_ops, pointwise, reductions, linalg, shape, indexing, nn, nn_layers, aliases  # noqa: F401  (fill the table)
from .indexing import GETITEM, _as_strided_grad  # noqa: F401  (used by the indexing engine and views)
from .nn import NON_DIFFERENTIABLE_FUNCTIONS, _check_reduction  # noqa: F401
from .registry import ALIASES, NOT_DIFFERENTIABLE, TABLE, NotDifferentiable, Op, load_late_families, op  # noqa: F401


def _expose():
    """Every entry of every family (and the few helpers composites share) as an attribute of the package."""
    g = globals()
    for family in (pointwise, reductions, linalg, shape, indexing, nn, nn_layers, backward_ops):
        for name, value in vars(family).items():
            if isinstance(value, Op):
                if g.get(name, value) is not value:
                    raise ValueError(f"two entries are named {name!r} in the op families")
                g[name] = value


_expose()
