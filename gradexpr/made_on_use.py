"""A dict whose missing keys may be made on first use (``__missing__``), and that says so to ``in``
and ``get`` as to ``[]``: the op table (``ops/registry.py``) and the prelude (``api.py``)."""
from __future__ import annotations


class MadeOnUse(dict):
    """Subclasses define ``__missing__``: it makes the value (and stores it) or raises KeyError."""

    __slots__ = ()

    def __contains__(self, key):
        if dict.__contains__(self, key):
            return True
        try:
            self[key]
        except KeyError:
            return False
        return True

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default
