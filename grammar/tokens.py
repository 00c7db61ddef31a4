"""Tokens and the syntax errors raised while parsing (``_Fail`` carries one to the API).
"""
from __future__ import annotations

from gradexpr import errors, limits



class Tok:
    """A token: its terminal (``type``), text and position (``col`` counts from 1)."""

    __slots__ = ("type", "value", "line", "col", "end_line", "end_col", "start_pos", "end_pos")

    def __init__(self, type, value, line, col, end_line, end_col, start_pos=None, end_pos=None):
        self.type = type
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.start_pos = start_pos
        self.end_pos = end_pos

    def __repr__(self):
        return f"Tok({self.type!r}, {self.value!r}, {self.line}:{self.col})"


class _Fail(Exception):
    """An error found while parsing, located; ``parse`` turns it into the user-visible error."""

    def __init__(self, error, line, col, end_line=None, end_col=None):
        super().__init__(error)
        self.error = error
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


def _syntax(message, line, col, end_line=None, end_col=None):
    return _Fail(errors.SyntaxError(message), line, col, end_line, end_col)


def _at(x, message):
    """A syntax failure spanning node or token ``x``."""
    return _syntax(message, x.line, x.col, x.end_line, x.end_col)


def _too_deep(what, line, col, end_line=None, end_col=None):
    lim = limits.current().max_depth
    return _Fail(limits.exceeded(what, lim, "max_depth"), line, col, end_line, end_col)
