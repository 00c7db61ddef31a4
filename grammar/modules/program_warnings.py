"""Warnings as a running program sees them, and ``import warnings``.

PyTorch's warnings (reading ``.grad`` of a non-leaf …) and a program's ``warnings.warn`` are
shown as CPython shows them for a script: ``FILE:LINE: Category: message`` and the source
line, on stderr, once per place unless the filters say otherwise. The filters and the
once-per-place registry belong to one run of one program (not to the host process), so
``warnings.filterwarnings("ignore")`` in one program does not silence the next.
The place is the innermost program node being evaluated, found on the interpreter's stack
when (rarely) a warning is given, so running costs nothing until then.
"""
from __future__ import annotations

import re
import sys

from gradexpr import warn as _engine


__all__ = ["ProgramWarnings", "build_warnings", "handling_for"]

_ACTIONS = ("default", "error", "ignore", "always", "module", "once")
_MAIN = "__main__"


def _default_filters():
    return [("default", None, DeprecationWarning, re.compile(_MAIN), 0),
            ("ignore", None, DeprecationWarning, None, 0),
            ("ignore", None, PendingDeprecationWarning, None, 0),
            ("ignore", None, ImportWarning, None, 0),
            ("ignore", None, ResourceWarning, None, 0)]


class ProgramWarnings:
    """The warning state of one program run: filters, what was shown, where it goes."""

    def __init__(self, filename: str = "<string>", source: str = "", stream=None):
        self.filename = filename
        self.lines = source.splitlines()
        self.stream = stream
        self.filters = _default_filters()
        self.shown = set()
        self.warned_once = set()    # PyTorch's TORCH_WARN_ONCE messages given in this run (warn.warn_once)
        self.record = None          # a list while catch_warnings(record=True) is active

    # ---------------------------------------------------------------- filters
    def add_filter(self, action, message="", category=Warning, module="", lineno=0, append=False):
        if action not in _ACTIONS:
            raise ValueError(f"invalid action: {action!r}")
        if not isinstance(message, str):
            raise TypeError("message must be a string")
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError("category must be a Warning subclass")
        if not isinstance(lineno, int) or lineno < 0:
            raise ValueError("lineno must be an int >= 0")
        item = (action, re.compile(message, re.I) if message else None, category,
                re.compile(module) if module else None, lineno)
        if item in self.filters:
            self.filters.remove(item)
        if append:
            self.filters.append(item)
        else:
            self.filters.insert(0, item)
        self.shown.clear()          # as CPython's registries are reset when filters change

    def action_for(self, text, category, lineno):
        for action, msg, cat, mod, ln in self.filters:
            if ((msg is None or msg.match(text)) and issubclass(category, cat)
                    and (mod is None or mod.match(_MAIN)) and (ln == 0 or ln == lineno)):
                return action
        return "default"

    # ---------------------------------------------------------------- giving one
    def warn(self, message, category=UserWarning, stacklevel=1):
        if isinstance(message, Warning):
            category = type(message)
        elif category is None:
            category = UserWarning
        elif not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError(f"category must be a Warning subclass, not '{type(category).__name__}'")
        text = str(message)
        lineno = self.program_line()
        action = self.action_for(text, category, lineno)
        if action == "error":
            raise message if isinstance(message, Warning) else category(text)
        if action == "ignore":
            return
        key = {"once": (text, category), "module": (text, category, 0)}.get(action, (text, category, lineno))
        if action != "always":
            if key in self.shown:
                return
            self.shown.add(key)
        self.show(message if isinstance(message, Warning) else category(text), category, lineno)

    def show(self, message, category, lineno):
        if self.record is not None:
            import warnings
            self.record.append(warnings.WarningMessage(message, category, self.filename, lineno))
            return
        text = f"{self.filename}:{lineno}: {category.__name__}: {message}\n"
        if 0 < lineno <= len(self.lines) and self.lines[lineno - 1].strip():
            text += f"  {self.lines[lineno - 1].strip()}\n"
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(text)

    @staticmethod
    def program_line() -> int:
        """The line of the innermost program node on the interpreter's stack (0 if none)."""
        from ..ast import Node
        frame = sys._getframe(2)
        while frame is not None:
            for value in frame.f_locals.values():
                if isinstance(value, Node) and getattr(value, "line", None):
                    return value.line
            frame = frame.f_back
        return 0


def handling_for(filename: str, source: str, stream=None):
    """The warnings of a program run, handled by a fresh ``ProgramWarnings``."""
    return _engine.handling(ProgramWarnings(filename, source, stream))


def _state() -> ProgramWarnings:
    handler = _engine.current_handler()
    if not isinstance(handler, ProgramWarnings):
        raise RuntimeError("warnings are only available while a program runs")
    return handler


class catch_warnings:
    """``with warnings.catch_warnings(record=False):`` -- the filters (and the record) restored on exit."""

    _gx_exposed = True

    def __init__(self, *, record=False, action=None, category=Warning, lineno=0, append=False):
        self._record = record
        self._action = (action, category, lineno, append)
        self._saved = None

    def __enter__(self):
        state = _state()
        self._saved = (list(state.filters), state.record, set(state.shown))
        log = [] if self._record else None
        if self._record:
            state.record = log
        action, category, lineno, append = self._action
        if action is not None:
            state.add_filter(action, "", category, "", lineno, append)
        return log

    def __exit__(self, *exc):
        state = _state()
        state.filters, state.record, state.shown = self._saved
        return False

    def __repr__(self):
        return "catch_warnings()" if not self._record else "catch_warnings(record=True)"


catch_warnings.__module__ = "warnings"


def build_warnings():
    import warnings
    from . import guards
    from .namespace import ModuleNamespace
    guards.allow_attributes(warnings.WarningMessage, "message category filename lineno file line source")

    def warn(message, category=None, stacklevel=1, source=None):
        _state().warn(message, category, stacklevel)

    def filterwarnings(action, message="", category=Warning, module="", lineno=0, append=False):
        _state().add_filter(action, message, category, module, lineno, append)

    def simplefilter(action, category=Warning, lineno=0, append=False):
        _state().add_filter(action, "", category, "", lineno, append)

    def resetwarnings():
        state = _state()
        state.filters = []
        state.shown.clear()

    names = {"warn": warn, "filterwarnings": filterwarnings, "simplefilter": simplefilter,
             "resetwarnings": resetwarnings, "catch_warnings": catch_warnings,
             "WarningMessage": warnings.WarningMessage}
    return ModuleNamespace("warnings", names, star=[n for n in warnings.__all__ if n in names])
