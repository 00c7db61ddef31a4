"""The modules a program may import (SPEC 1), each built the first time a program imports it.

``resolve(initial, ["numpy", "linalg"])`` gives what ``import numpy.linalg`` reaches: the
``torch`` of the prelude (``initial``), or one of the namespaces listed here (a fixed list of
names of the real module: see ``namespace.py``). Every other module is refused: one that
exists (``os``, ``pickle``, ``subprocess``…) with an ``ImportError`` saying that gradexpr
allows no file, process or network access, an unknown one with ``ModuleNotFoundError``.
Nothing is imported before a program asks (start-up stays lean).
"""
from __future__ import annotations

import sys


__all__ = ["resolve", "module", "star_names", "MODULES"]


def _stdlib(name):
    def build():
        from . import stdlib
        return stdlib.BUILDERS[name]()
    return build


def _random():
    from .pyrandom import build_random
    return build_random()


def _warnings():
    from .program_warnings import build_warnings
    return build_warnings()


def _numpy():
    from .numpy_module import build_numpy
    return build_numpy()


def _functorch():
    from gradexpr.api import functorch_namespace
    return functorch_namespace()


MODULES = {
    **{n: _stdlib(n) for n in ("math", "itertools", "functools", "collections", "copy", "typing", "time",
                               "dataclasses")},
    "random": _random, "warnings": _warnings, "numpy": _numpy, "functorch": _functorch,
}

_built: dict = {}


def module(name: str):
    """The namespace of allowed module ``name`` (built once per process)."""
    ns = _built.get(name)
    if ns is None:
        ns = _built[name] = MODULES[name]()
    return ns


def _refused(root: str) -> Exception:
    from .namespace import NO_ACCESS
    if root in sys.stdlib_module_names or root in sys.modules:
        err = ImportError(f"import of '{root}' is not allowed: {NO_ACCESS}")
        err.name = root
        return err
    return ModuleNotFoundError(f"No module named '{root}'")


def _walk(obj, parts):
    """``import a.b.c``: from ``a`` down the attributes (only to namespaces)."""
    from ..interpreter import attribute_getter
    from gradexpr.api import Namespace
    for i, p in enumerate(parts[1:], 1):
        try:
            obj = attribute_getter(type(obj), p)(obj)
        except Exception:
            obj = None
        if obj is None or (not isinstance(obj, Namespace) and parts[0] != "torch"):
            qualified = ".".join(parts[:i + 1])
            parent = ".".join(parts[:i])
            return None, ModuleNotFoundError(f"No module named '{qualified}'" if i > 1 or parts[0] in ("torch", "numpy")
                                             else f"No module named '{qualified}'; '{parent}' is not a package")
    return obj, None


def resolve(initial: dict, parts: list):
    """What ``import '.'.join(parts)`` reaches (raising Python's ImportError/ModuleNotFoundError)."""
    root = parts[0]
    if root == "torch":
        obj = initial.get("torch")
        if obj is None:
            raise ModuleNotFoundError("No module named 'torch'")
    elif root in MODULES:
        obj = module(root)
    else:
        raise _refused(root)
    obj, err = _walk(obj, parts)
    if err is not None:
        raise err
    return obj


def star_names(mod) -> dict:
    """What ``from M import *`` binds: a module's ``__all__`` (or public names), a torch
    namespace's public names."""
    from .namespace import ModuleNamespace
    if isinstance(mod, ModuleNamespace):
        return mod.star_names()
    return {n: getattr(mod, n) for n in dir(mod) if not n.startswith("_")}
