"""Resource limits for untrusted programs (SPEC section 3).

One ``Limits`` value is active at a time, held in a ContextVar so the engine (tensor
sizes) and the interpreter (loops, time, depth, literal sizes) read the same numbers.
Zero means "no limit". The CLI fills it from options and environment variables.
"""
from __future__ import annotations

import contextvars
import math
import os

from . import errors

# name -> (default, "int" or "float"), in the order of the options' help
_FIELDS = {
    "max_elements": (10**8, "int"),            # elements of any one tensor, checked before allocating
    "max_loop_iterations": (10**6, "int"),     # all loops of a program together
    "max_seconds": (30.0, "float"),            # wall time of a program
    "max_depth": (200, "int"),                 # nesting of brackets, expressions and blocks
    "max_int_digits": (10_000, "int"),         # digits of an integer literal or result
    "max_str_len": (10**7, "int"),             # length of a string (and of a list built by repetition)
    "max_recursion": (1000, "int"),            # depth of calls of the program's own functions and methods
}
_FIELD_TYPES = {name: kind for name, (_, kind) in _FIELDS.items()}
# decimal digits per bit: the digits of an integer estimated from its bit length (max_int_digits)
LOG10_2 = 0.30102999566398120


class Limits:
    """The limits of one run: immutable, compared and hashed by value.

    (A plain class, not a frozen dataclass: defining a dataclass costs about a millisecond
    at every start of the command.)
    """

    __slots__ = tuple(_FIELDS)

    def __init__(self, max_elements: int = 10**8, max_loop_iterations: int = 10**6, max_seconds: float = 30.0,
                 max_depth: int = 200, max_int_digits: int = 10_000, max_str_len: int = 10**7,
                 max_recursion: int = 1000):
        values = (max_elements, max_loop_iterations, max_seconds, max_depth, max_int_digits, max_str_len,
                  max_recursion)
        for name, value in zip(self.__slots__, values):
            self.parse(name, value, name)
            object.__setattr__(self, name, value)

    @classmethod
    def from_env(cls, environ=os.environ, **overrides) -> "Limits":
        """Defaults, then ``GRADEXPR_MAX_ELEMENTS``-style variables, then explicit overrides."""
        values = {}
        for name in _FIELDS:
            env = "GRADEXPR_" + name.upper()
            raw = environ.get(env)
            if raw is not None and raw.strip():
                values[name] = cls.parse(name, raw, env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @classmethod
    def parse(cls, name: str, raw, label: str | None = None):
        """Limit ``name`` from text or a number: non-negative, ``1e8`` allowed, 0 for no limit;
        a ValueError naming ``label`` (the option or variable) otherwise."""
        integral = _FIELD_TYPES[name] == "int"
        try:
            value = int(raw) if integral and not isinstance(raw, float) else float(raw)
        except (TypeError, ValueError):
            try:
                value = float(raw)
            except (TypeError, ValueError):
                value = math.nan
        if not math.isfinite(value) or value < 0 or (integral and value != int(value)):
            what = "a whole number" if integral else "a number of seconds"
            raise errors.ValueError(f"{label + ' ' if label else ''}must be {what} >= 0 (0 means no limit), "
                                    f"not {raw!r}")
        return int(value) if integral else float(value)

    def _values(self):
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}: Limits are immutable")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}: Limits are immutable")

    def __reduce__(self):            # copy and pickle
        return Limits, self._values()

    def __eq__(self, other):
        return self._values() == other._values() if type(other) is Limits else NotImplemented

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        return "Limits(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__) + ")"


OPTION_NAMES = {name: "--" + name.replace("_", "-") for name in _FIELDS}

_active: contextvars.ContextVar[Limits] = contextvars.ContextVar("gradexpr_limits", default=Limits())


def current() -> Limits:
    return _active.get()


def activate(limits: Limits):
    """Make ``limits`` the active limits; returns a token for ``deactivate``."""
    return _active.set(limits)


def deactivate(token) -> None:
    _active.reset(token)


def exceeded(what: str, limit, name: str) -> errors.LimitError:
    env = "GRADEXPR_" + name.upper()
    if type(limit) is float and limit.is_integer():
        limit = int(limit)          # "30 seconds", not "30.0"
    return errors.LimitError(
        f"{what} exceeds the limit of {limit:,} (raise it with {OPTION_NAMES[name]} or {env}; 0 means no limit)")


def check_elements(shape) -> None:
    """Refuse a tensor of more than ``max_elements`` elements before it is allocated."""
    limit = _active.get().max_elements
    n = 1
    overflow = False
    for s in shape:
        n *= int(s)
        overflow = overflow or n >= 2**63
    if limit and n > limit:
        raise exceeded(f"a tensor of {n:,} elements (shape {tuple(int(s) for s in shape)})", limit, "max_elements")
    if overflow:        # PyTorch multiplies the sizes in int64 (a zero size later does not help)
        raise errors.RuntimeError(f"Storage size calculation overflowed with sizes={[int(s) for s in shape]}")
    if n == 0 and len(shape) > 1:
        stride = 1
        for s in reversed(shape[1:]):
            stride *= max(int(s), 1)
        if stride >= 2**63:
            raise errors.RuntimeError("Stride calculation overflowed")
