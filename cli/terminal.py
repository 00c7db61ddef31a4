"""The one decision about colour, and the consoles and error lines that follow it.

``--color auto|always|never`` (on the ``gradexpr`` group) decides; under ``auto``,
``NO_COLOR`` (https://no-color.org) turns colour off, ``FORCE_COLOR`` on, and otherwise a
stream is coloured when it is a terminal. Rich's consoles and the error lines written here
(without importing rich: a one-shot ``gradexpr run`` stays lean) all ask ``colour(stream)``.
"""
from __future__ import annotations

import os
import sys

CHOICES = ("auto", "always", "never")
_choice = "auto"


def is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (False for closed or fake streams)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def set_colour(choice: str | None) -> None:
    global _choice
    _choice = choice or "auto"


def colour(stream=None) -> bool:
    """Whether to colour what goes to ``stream`` (stdout by default)."""
    if _choice != "auto":
        return _choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def forced() -> bool:
    """Colour asked for whatever the stream (``--color always`` or ``FORCE_COLOR``)."""
    if _choice != "auto":
        return _choice == "always"
    return bool(os.environ.get("FORCE_COLOR")) and not os.environ.get("NO_COLOR")


def console(file=None, **kwargs):
    """A rich console for ``file`` (stdout) that follows the decision."""
    from rich.console import Console
    on = colour(file or sys.stdout)
    return Console(file=file, force_terminal=on, no_color=not on, highlight=False, emoji=False, **kwargs)


_RED, _BOLD, _DIM, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def paint_error(text: str) -> str:
    """An error report for a terminal: the ``Type:`` of its first line red and bold, ``hint:`` lines dim."""
    lines = text.split("\n")
    head = lines[0]
    # FILE:LINE:COL: Type: message  — the type is the word before the second ": " from the end of the location
    parts = head.split(": ", 2)
    if len(parts) == 3 and parts[1][:1].isupper() and parts[1].isidentifier():
        lines[0] = f"{parts[0]}: {_RED}{_BOLD}{parts[1]}{_RESET}: {parts[2]}"
    elif len(parts) == 2 and parts[0][:1].isupper() and " " not in parts[0]:
        lines[0] = f"{_RED}{_BOLD}{parts[0]}{_RESET}: {parts[1]}"
    for i, line in enumerate(lines):
        if line.startswith("hint:"):
            lines[i] = f"{_DIM}{line}{_RESET}"
        elif line.strip() and set(line.strip()) <= {"^"}:
            lines[i] = f"{_RED}{line}{_RESET}"
    return "\n".join(lines)


def write_error(text: str) -> None:
    """Write an error report to stderr, coloured when stderr is a terminal (and colour is on)."""
    sys.stderr.write(paint_error(text) if colour(sys.stderr) else text)
