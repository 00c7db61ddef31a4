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
    hint = better_hint(exc)
    if hint:
        lines.append(f"hint: {hint}")
    origin = getattr(exc, "origin", None)         # where backward's failing node was recorded (gradexpr/origin.py)
    if origin is not None:
        lines.append(f"note: {origin.text}")
        text = _source_line(source, origin.line) if origin.filename == name else None
        if text is not None:
            expanded = text.expandtabs(1).rstrip("\n")
            width = max(1, (origin.end_col or origin.col + 1) - origin.col)
            expanded, col, width = _window(expanded, origin.col, width)
            lines.append("    " + expanded)
            lines.append("    " + " " * (col - 1) + "^" * width)
    return "\n".join(lines) + "\n"


# Python's spellings of names other languages write in lower case: a NameError's hint should
# not suggest the nearest op ('true' is not 'triu')
_CONSTANTS = {"true": "True", "false": "False", "none": "None", "null": "None", "nil": "None",
              "TRUE": "True", "FALSE": "False", "NULL": "None", "inf": "math.inf", "nan": "math.nan"}


def better_hint(exc) -> str | None:
    """The error's hint, or a did-you-mean the rendering can add: a constant spelled as in another
    language, a keyword argument close to one of the parameters PyTorch lists in its message."""
    import re
    message = getattr(exc, "message", "") or ""
    if exc.kind == "NameError":
        m = re.match(r"name '(\w+)' is not defined", message)
        if m and m.group(1) in _CONSTANTS:
            return f"did you mean {_CONSTANTS[m.group(1)]!r}?"
    if exc.kind == "TypeError" and not exc.hint:
        m = re.search(r"unexpected keyword argument '(\w+)'", message) or \
            re.search(r"got \([^)]*?\b(\w+)=", message)
        if m:
            params = set(re.findall(r"(\w+)\s*=", message.split("expected one of", 1)[-1])) | \
                set(re.findall(r"\b(?:Tensor|int|float|bool|ints|dtype|Number|Scalar)\??\s+(\w+)", message))
            function = re.match(r"(\w+)\(\)", message)
            if function:
                params |= _schema_parameters(function.group(1))
            params.discard(m.group(1))
            from .suggest import did_you_mean
            return did_you_mean(m.group(1), sorted(params))
    return exc.hint


def error_object(kind: str, message: str, hint: str | None, exit_status: int, file=None, line=None,
                 column=None) -> dict:
    """An error as ``--json`` writes it (docs/eval.schema.json's error; ``{"error": …}`` for commands
    other than ``eval``)."""
    return {"type": kind, "message": message, "file": file, "line": line, "column": column, "hint": hint,
            "exit_status": exit_status}


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


def _schema_parameters(function: str) -> set:
    """The parameter names of PyTorch's schema lines for ``function`` in the op table (empty if none)."""
    import re
    import sys
    registry = sys.modules.get("gradexpr.ops.registry")     # loaded when the program ran, if it exists
    if registry is None:
        return set()
    name = getattr(registry, "ALIASES", {}).get(function, function)
    entries = [e for e in getattr(registry, "TABLE", {}).values() if getattr(e, "name", None) == name
               or str(getattr(e, "name", "")).startswith(name + "_")]
    names = set()
    for entry in entries:
        for line in getattr(entry, "schema", ()) or ():
            inside = line.split("(", 1)[-1].rsplit(")", 1)[0].split("->")[0]
            names |= {m for m in re.findall(r"(\w+)\s*(?:=|,|$)", inside) if m not in ("self",)}
    return names
