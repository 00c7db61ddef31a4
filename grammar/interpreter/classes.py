"""The program's classes at run time: a ``class`` statement makes a real Python class with
``type(name, bases, namespace)``, whose methods are the interpreter's compiled functions,
so Python's own protocols drive the special methods it defines and library classes
(``_gx_exposed = True``: ``nn.Module``, ``autograd.Function`` ...) can be its bases.

What a class may be built from is checked here; what a program may then read or write on
it is ``policy.py``'s concern.
"""
from __future__ import annotations

from gradexpr import errors

from .policy import SPECIAL_METHODS, _is_program_type, register_program_class

__all__ = ["make_class", "check_exception_types"]

_CONTAINER_BASES = frozenset((object, list, dict, tuple, set, frozenset, int, float, str))
# names a class body may bind besides its own: Python's, set by make_class, and ``__slots__`` (its
# names become the instances' only attributes: nothing a program could not already reach)
_IMPLICIT = frozenset(("__module__", "__qualname__", "__slots__"))


def _allowed_base(b):
    if not isinstance(b, type):
        return False
    if b in _CONTAINER_BASES or _is_program_type(b) or getattr(b, "_gx_exposed", False) is True:
        return True
    # Python's exception classes (the builtins a program can name)
    return issubclass(b, Exception) and b.__module__ == "builtins"


def make_class(name: str, qualname: str, bases: list, keywords: dict, namespace: dict):
    """The class a program's ``class name(*bases, **keywords): ...`` defines, from the
    ``namespace`` its body filled."""
    if keywords:
        raise errors.TypeError(f"class keyword arguments ({', '.join(keywords)}) are not supported in gradexpr")
    for b in bases:
        if not _allowed_base(b):
            what = b.__name__ if isinstance(b, type) else type(b).__name__
            if not isinstance(b, type):
                raise errors.TypeError(f"class bases must be classes, not '{what}' objects")
            raise errors.TypeError(f"subclassing '{what}' is not supported in gradexpr")
    for k in namespace:
        if k.startswith("__") and k.endswith("__") and k not in SPECIAL_METHODS and k not in _IMPLICIT:
            raise errors.TypeError(f"defining '{k}' in a class is not allowed in gradexpr")
    ns = dict(namespace)
    ns["__module__"] = "__main__"
    ns["__qualname__"] = qualname
    try:
        cls = type(name, tuple(bases), ns)
    except TypeError as e:
        raise errors.TypeError(str(e)) from None
    register_program_class(cls, namespace)
    return cls


def check_exception_types(types):
    """The ``T`` of ``except T:``: a class deriving from BaseException, or a tuple of them."""
    items = types if type(types) is tuple else (types,)
    for t in items:
        if not (isinstance(t, type) and issubclass(t, BaseException)):
            raise errors.TypeError("catching classes that do not inherit from BaseException is not allowed")
    return types
