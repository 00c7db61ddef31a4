"""User-visible errors.

Each class carries the name PyTorch (or Python) would print for it, so a program's
failure reads exactly as it would under PyTorch: ``RuntimeError: grad can be
implicitly created only for scalar outputs``. They subclass the matching Python
builtin too, so code that catches ``RuntimeError`` behaves as in Python.

The interpreter attaches a source location (``filename``, ``line``, ``column``,
``end_column``) to the innermost expression that failed; library code never
prints or exits.
"""
from __future__ import annotations

import builtins


class GxError(Exception):
    """Base of every error gradexpr reports to a user."""

    kind = "Error"
    hint: str | None = None

    def __init__(self, message: str = "", *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint
        self.filename: str | None = None
        self.line: int | None = None
        self.column: int | None = None
        self.end_column: int | None = None

    def at(self, filename, line, column, end_column=None):
        """Attach a location unless a more precise one is already attached."""
        if self.line is None:
            self.filename, self.line, self.column, self.end_column = filename, line, column, end_column
        return self

    def headline(self) -> str:
        """``Type: message`` (just ``Type`` for an empty message), as Python prints it."""
        return f"{self.kind}: {self.message}" if self.message else self.kind


def _kind(name: str, base: type) -> type:
    # named as Python's class, so repr(e) reads ``IndexError('...')`` as under PyTorch
    return type(name, (GxError, base), {"kind": name, "__module__": __name__})


RuntimeError = _kind("RuntimeError", builtins.RuntimeError)
TypeError = _kind("TypeError", builtins.TypeError)
ValueError = _kind("ValueError", builtins.ValueError)
IndexError = _kind("IndexError", builtins.IndexError)
KeyError = _kind("KeyError", builtins.KeyError)
NameError = _kind("NameError", builtins.NameError)
AttributeError = _kind("AttributeError", builtins.AttributeError)
AssertionError = _kind("AssertionError", builtins.AssertionError)
NotImplementedError = _kind("NotImplementedError", builtins.NotImplementedError)
ZeroDivisionError = _kind("ZeroDivisionError", builtins.ZeroDivisionError)
RecursionError = _kind("RecursionError", builtins.RecursionError)


class LimitError(GxError, builtins.RuntimeError):
    """A resource limit of SPEC section 3 was reached (elements, loops, time, depth, size)."""

    kind = "LimitError"


class SyntaxError(GxError):
    """The program is not in the language; reported with exit status 2."""

    kind = "SyntaxError"


def describe(exc: BaseException) -> str:
    """``Type: message`` for any exception, the way Python's traceback ends."""
    if isinstance(exc, GxError):
        return exc.headline()
    name = type(exc).__name__
    if name == "AxisError":         # NumPy's, where an engine check is missing: PyTorch's type for a bad dim
        name = "IndexError"
    msg = exception_text(exc)
    return f"{name}: {msg}" if msg else name


def exception_text(exc: BaseException) -> str:
    """The message Python prints for ``exc``, or its ``<exception str() failed>`` when making it fails
    (a KeyError of a 5,000-digit integer: its repr exceeds the digit limit)."""
    try:
        return str(exc) if not isinstance(exc, builtins.KeyError) else repr(exc.args[0]) if exc.args else ""
    except Exception:
        return "<exception str() failed>"
