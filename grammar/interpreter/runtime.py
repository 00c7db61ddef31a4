"""The run-time pieces every compiled closure shares: the control-flow signals, the unbound
marker, Python's operators (with the size guards), unpacking, and the counters of loop
iterations, call depth and wall time (``Runtime``).
"""
from __future__ import annotations

import itertools
import operator
import time

from gradexpr import errors
from gradexpr import limits as _limits

from .. import builtins as _b
from .located import _loc


class _Signal:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


BREAK = _Signal("BREAK")
CONTINUE = _Signal("CONTINUE")
RETURN = _Signal("RETURN")      # the value is in frame[1]


class _Unbound:
    __slots__ = ()

    def __repr__(self):
        return "<unbound>"


UNBOUND = _Unbound()
_NO_DEFAULT = _Unbound()

_FunctionType = type(lambda: None)
_GUARD_TYPES = _b.GUARDED_CALLABLE_TYPES
_CALL_GUARDS = _b.CALL_GUARDS


# ============================================================================ operators

_BINOPS = {
    "+": _b.guarded_add, "-": operator.sub, "*": _b.guarded_mul, "/": operator.truediv,
    "//": operator.floordiv, "%": _b.guarded_mod, "@": operator.matmul, "**": _b.guarded_pow,
    "<<": _b.guarded_lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
    "^": operator.xor,
}
_IOPS = {
    "+": _b.guarded_iadd, "-": operator.isub, "*": _b.guarded_imul, "/": operator.itruediv,
    "//": operator.ifloordiv, "%": _b.guarded_imod, "@": operator.imatmul, "**": _b.guarded_ipow,
    "<<": _b.guarded_ilshift, ">>": operator.irshift, "&": operator.iand, "|": operator.ior,
    "^": operator.ixor,
}


_CMPOPS = {
    "<": operator.lt, ">": operator.gt, "==": operator.eq, "!=": operator.ne, "<=": operator.le,
    ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
}
_UNOPS = {"-": operator.neg, "+": operator.pos, "~": operator.invert}


def _unpack(value, n):
    """Python's iterable unpacking into exactly ``n`` targets, with Python's messages."""
    t = type(value)
    if t is tuple or t is list:
        k = len(value)
        if k == n:
            return value
        if k < n:
            raise errors.ValueError(f"not enough values to unpack (expected {n}, got {k})")
        raise errors.ValueError(f"too many values to unpack (expected {n})")
    try:
        it = iter(value)
    except TypeError:
        if not hasattr(t, "__iter__") and not hasattr(t, "__getitem__"):
            raise errors.TypeError(f"cannot unpack non-iterable {t.__name__} object") from None
        raise
    items = list(itertools.islice(it, n + 1))
    if len(items) < n:
        raise errors.ValueError(f"not enough values to unpack (expected {n}, got {len(items)})")
    if len(items) > n:
        raise errors.ValueError(f"too many values to unpack (expected {n})")
    return items


def _name_list(names):
    q = [f"'{n}'" for n in names]
    if len(q) == 1:
        return q[0]
    if len(q) == 2:
        return f"{q[0]} and {q[1]}"
    return ", ".join(q[:-1]) + ", and " + q[-1]


# ============================================================================ runtime

class _Runtime:
    """Counters shared by the compiled code of one Interpreter: loop iterations (counted
    down in windows of at most 1024 between checkpoints), call depth, wall time."""

    __slots__ = ("interp", "out", "loop", "calls", "depth", "max_depth", "max_iters", "used",
                 "window", "deadline", "max_seconds", "active", "handling")

    def __init__(self, interp):
        self.interp = interp
        self.out = None
        self.loop = [1023]
        self.calls = [1023]
        self.depth = 0
        self.max_depth = 0
        self.max_iters = 0
        self.used = 0
        self.window = 1023
        self.deadline = None
        self.max_seconds = 0
        self.active = 0
        self.handling = []      # the exceptions being handled (innermost last), for a bare 'raise'

    def start(self, lim, out):
        self.out = out
        self.max_depth = lim.max_recursion
        self.max_iters = lim.max_loop_iterations
        self.max_seconds = lim.max_seconds
        self.used = 0
        self.deadline = time.monotonic() + lim.max_seconds if lim.max_seconds else None
        self._window()

    def _window(self):
        w = 1023
        if self.max_iters:
            w = min(w, self.max_iters - self.used)
        self.window = w
        self.loop[0] = w

    def checkpoint(self, node=None):
        """The current window of loop iterations is used up (one more began)."""
        self.used += self.window + 1
        if self.max_iters and self.used > self.max_iters:
            self.used = self.max_iters + 1
            self.loop[0] = 1023
            raise self._locate(_limits.exceeded("the number of loop iterations", self.max_iters,
                                                "max_loop_iterations"), node)
        self.check_time(node)
        self._window()

    def charge(self, n):
        """Count ``n`` iterations done by a builtin (``sum(range(n))``...)."""
        self.used += self.window - self.loop[0] + n
        self.loop[0] = self.window
        if self.max_iters and self.used > self.max_iters:
            raise _limits.exceeded("the number of loop iterations", self.max_iters, "max_loop_iterations")
        self.check_time()
        self._window()

    def call_checkpoint(self):
        self.calls[0] = 1023
        self.check_time()

    def check_time(self, node=None):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise self._locate(_limits.exceeded("the running time (seconds)", self.max_seconds,
                                                "max_seconds"), node)

    def _locate(self, err, node):
        if node is not None:
            return _loc(err, self.interp.filename, node)
        return err


# ============================================================================ closures

def _const(v):
    def const(fr):
        return v
    return const


def _noop(fr):
    return None
