"""Resource limits for untrusted programs (SPEC section 3).

One ``Limits`` value is active at a time, held in a ContextVar so the engine (tensor
sizes) and the interpreter (loops, time, depth, literal sizes) read the same numbers.
Zero means "no limit". The CLI fills it from options and environment variables.
"""
from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, fields

from . import errors


@dataclass(frozen=True)
class Limits:
    max_elements: int = 10**8          # elements of any one tensor, checked before allocating
    max_loop_iterations: int = 10**6   # all loops of a program together
    max_seconds: float = 30.0          # wall time of a program
    max_depth: int = 200               # nesting of expressions and blocks (and user calls)
    max_int_digits: int = 10_000       # digits of an integer literal or result
    max_str_len: int = 10**7           # length of a string (and of a list built by repetition)

    @classmethod
    def from_env(cls, environ=os.environ, **overrides) -> "Limits":
        """Defaults, then ``GRADEXPR_MAX_ELEMENTS``-style variables, then explicit overrides."""
        values = {}
        for f in fields(cls):
            raw = environ.get("GRADEXPR_" + f.name.upper())
            if raw is not None and raw.strip():
                try:
                    values[f.name] = float(raw) if f.type == "float" else int(raw)
                except ValueError:
                    raise errors.ValueError(f"GRADEXPR_{f.name.upper()} must be a number, not {raw!r}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


OPTION_NAMES = {f.name: "--" + f.name.replace("_", "-") for f in fields(Limits)}

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
    return errors.LimitError(
        f"{what} exceeds the limit of {limit:,} (raise it with {OPTION_NAMES[name]} or {env}; 0 means no limit)")


def check_elements(shape) -> None:
    """Refuse a tensor of more than ``max_elements`` elements before it is allocated."""
    limit = _active.get().max_elements
    if not limit:
        return
    n = 1
    for s in shape:
        n *= int(s)
    if n > limit:
        raise exceeded(f"a tensor of {n:,} elements (shape {tuple(int(s) for s in shape)})", limit, "max_elements")
