"""What keeps the real functions of an imported module inside the limits (SPEC 3).

A module function implemented in C runs to completion once called: ``list(itertools.count())``
or ``collections.deque(range(10**10))`` would never come back to the interpreter's checks.
So the iterators the modules make count their items as loop iterations (in Python, where the
wall-time alarm can interrupt them), the iterables they consume are bounded as the guarded
builtins bound theirs, and sizes are checked before anything is allocated.

``allow_attributes``/``guard_call``/``guard_method`` register, in the interpreter's tables,
what a program may do with the objects these modules return.
"""
from __future__ import annotations

import functools

from gradexpr import limits

from .. import builtins as _b

__all__ = ["Counted", "counted", "bounded", "allow_attributes", "guard_call", "guard_method", "check_size"]


class Counted:
    """An iterator counting each item it yields against the program's loop budget."""

    __slots__ = ("_it", "_n")

    def __init__(self, iterator):
        self._it = iterator
        self._n = 0

    def __iter__(self):
        return self

    def __next__(self):
        value = next(self._it)
        n = self._n = self._n + 1
        if n & 63 == 0:
            _b._charge(64)
        return value

    def __repr__(self):
        return repr(self._it)


def counted(make):
    """``make`` (an itertools function) with bounded inputs and a counted result."""
    @functools.wraps(make)
    def call(*args, **kwargs):
        result = make(*[bounded(a) for a in args], **kwargs)
        if isinstance(result, tuple):          # tee
            return tuple(Counted(r) for r in result)
        return Counted(result)
    return call


def bounded(x, consume=False):
    """An iterable argument made safe for a C consumer (see ``grammar.builtins``)."""
    if type(x) is Counted:
        return x
    return _b._bounded_input(x, consume)


def check_size(n: int, what: str = "a list") -> None:
    _b.check_length(n, what)


def _safe_attributes():
    """The policy's whitelist; its per-(type, name) decisions are forgotten, since what a
    program may read of a type changes once a module has been imported."""
    from ..interpreter import policy
    policy._policy_cache.clear()
    return policy.SAFE_ATTRIBUTES


def allow_attributes(cls, names: str) -> None:
    """Let programs read these public attributes of ``cls``'s instances (and what its bases allow:
    a ``defaultdict`` keeps the methods of ``dict``)."""
    table = _safe_attributes()
    inherited = frozenset().union(*(table.get(base, frozenset()) for base in cls.__mro__))
    table[cls] = inherited | frozenset(names.split())


def guard_call(target, guard) -> None:
    """Calls of ``target`` (a class or function a module exposes) go through ``guard``."""
    guard.__name__ = getattr(target, "__name__", guard.__name__)
    _b.CALL_GUARDS[target] = guard


def guard_method(cls, name: str, wrap) -> None:
    """``obj.name`` of a ``cls`` instance gives ``wrap(bound method)``."""
    _safe_attributes()
    _b.METHOD_GUARDS[(cls, name)] = wrap


def elements_of(size) -> None:
    """The element limit for a ``size``/``shape`` argument (an int or a sequence of ints)."""
    if size is None:
        return
    if isinstance(size, int):
        limits.check_elements((size,))
    else:
        try:
            limits.check_elements(tuple(int(s) for s in size))
        except TypeError:
            pass
