"""Rendering errors for people: ``FILE:LINE:COL: Type: message``, the line, a caret, a hint."""
from __future__ import annotations

from gradexpr import errors


def render(exc: BaseException, source: str | None, filename: str) -> str:
    """The text written to stderr for a user-facing error (never a traceback)."""
    if not isinstance(exc, errors.GxError):
        return f"{filename}: {errors.describe(exc)}\n"
    name = exc.filename or filename
    lines = []
    if exc.line is not None:
        lines.append(f"{name}:{exc.line}:{exc.column or 1}: {exc.headline()}")
        text = _source_line(source, exc.line)
        if text is not None:
            col = max(1, exc.column or 1)
            expanded = text.expandtabs(1).rstrip("\n")
            width = 1
            if exc.end_column and exc.end_column > col:
                width = exc.end_column - col
            width = max(1, min(width, max(1, len(expanded) - col + 1)))
            expanded, col, width = _window(expanded, col, width)
            lines.append("    " + expanded)
            lines.append("    " + " " * (col - 1) + "^" * width)
    else:
        lines.append(f"{name}: {exc.headline()}")
    if exc.hint:
        lines.append(f"hint: {exc.hint}")
    return "\n".join(lines) + "\n"


def request_error_text(e) -> str:
    """A bad option value (``gradexpr.session.RequestError``) as a usage error shows it: when the
    value's expression failed, that error located in the expression."""
    if e.error is None:
        return str(e)
    return render(e.error, e.source, e.filename).rstrip("\n")


_WIDTH = 100


def _window(text, col, width):
    """Show at most ~100 columns of a long line, around the caret, with ``…`` where cut."""
    if len(text) <= _WIDTH:
        return text, col, width
    width = min(width, _WIDTH // 2)
    start = max(0, col - 1 - _WIDTH // 3)
    end = min(len(text), start + _WIDTH)
    piece = text[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    return prefix + piece + suffix, col - start + len(prefix), width


def _source_line(source, line):
    if source is None:
        return None
    all_lines = source.splitlines()
    if 1 <= line <= len(all_lines):
        return all_lines[line - 1]
    return None
