"""Program files read as CPython reads source files: bytes decoded by PEP 263's rules.

A file is UTF-8 unless its first or second line declares another encoding
(``# -*- coding: latin-1 -*-``); a UTF-8 byte-order mark is dropped. What CPython refuses
with a ``SyntaxError`` is refused in its words, located at the offending byte, whichever
problem comes first in the file:

* bytes that do not decode: ``Non-UTF-8 code starting with '\\xff' in file F on line N, but
  no encoding declared; see https://peps.python.org/pep-0263/ for details`` (a UTF-16 file
  starts with such a byte),
* a NUL byte (an ELF header has one at byte 7): ``source code cannot contain null bytes``,
* an encoding Python does not know, or a declaration other than UTF-8 after a UTF-8 mark:
  ``encoding problem: NAME`` (``encoding problem: iso-8859-1 with BOM``).

The error is not raised while reading: ``read_program`` returns a ``ProgramText`` (the text
decoded as far as it goes) carrying it, and the parser raises it (``check``), so the CLI shows
it as any other syntax error of the program, with exit status 2.  Also CPython's compile-time
limit on decimal integer literals (``sys.get_int_max_str_digits()``, 4300 digits), in its words.
"""
from __future__ import annotations

import codecs
import re
import sys

from gradexpr import errors

__all__ = ["ProgramText", "read_program", "decode", "check", "int_literal_error"]

_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")
_BOM = b"\xef\xbb\xbf"


class ProgramText(str):
    """Program text, with the SyntaxError CPython would raise on reading its file (or None)."""

    error: errors.SyntaxError | None = None


def _normal_name(name: str) -> str:
    """CPython's tokenizer's names: utf-8 and latin-1 families by their canonical spelling."""
    low = name.lower().replace("_", "-")
    if low == "utf-8" or low.startswith("utf-8-"):
        return "utf-8"
    if low in ("latin-1", "iso-8859-1", "iso-latin-1") or low.startswith(("latin-1-", "iso-8859-1-",
                                                                            "iso-latin-1-")):
        return "iso-8859-1"
    return name


def _declared(data: bytes):
    """(encoding name, line number) of a PEP 263 declaration on line 1 or 2, or None."""
    lines = data.split(b"\n", 2)
    for number, line in enumerate(lines[:2], start=1):
        m = _CODING.match(line)
        if m:
            return m.group(1).decode("ascii"), number
        if not _BLANK_OR_COMMENT.match(line):
            break                      # code on line 1: line 2 is not looked at
    return None


def _where(data: bytes, index: int):
    """1-based (line, column) of byte ``index``."""
    line = data.count(b"\n", 0, index) + 1
    return line, index - (data.rfind(b"\n", 0, index) + 1) + 1


def _located(message: str, filename: str, data: bytes, index: int) -> errors.SyntaxError:
    line, col = _where(data, index)
    return errors.SyntaxError(message).at(filename, line, col)


def decode(data: bytes, filename: str) -> ProgramText:
    """The program text of a file's bytes, with CPython's reading error (if any) attached."""
    bom = data.startswith(_BOM)
    if bom:
        data = data[len(_BOM):]
    declared = _declared(data)
    encoding, error = "utf-8", None
    if declared:
        name, number = declared
        try:
            encoding = codecs.lookup(name).name
        except LookupError:
            error = errors.SyntaxError(f"encoding problem: {name}").at(filename, number, 1)
        else:
            if bom and _normal_name(name) != "utf-8":
                error = errors.SyntaxError(f"encoding problem: {_normal_name(name)} with BOM").at(
                    filename, number, 1)
    if error is not None:
        return _with_error(data.decode("utf-8", "replace"), error)
    try:
        text = data.decode(encoding)
        bad = len(data)
    except UnicodeDecodeError as e:
        text = data.decode(encoding, "replace")
        bad = e.start
    nul = data.find(b"\0")
    if 0 <= nul < bad:
        error = _located("source code cannot contain null bytes", filename, data, nul)
    elif bad < len(data):
        line, _ = _where(data, bad)
        error = _located(f"Non-UTF-8 code starting with '\\x{data[bad]:02x}' in file {filename} on line {line}, "
                         "but no encoding declared; see https://peps.python.org/pep-0263/ for details",
                         filename, data, bad)
    return _with_error(text.replace("\0", " ") if error is not None else text, error)


def _with_error(text: str, error) -> ProgramText:
    out = ProgramText(text)
    out.error = error
    return out


def read_program(path: str) -> ProgramText:
    """Read a program file as CPython reads a source file (OSError if it cannot be read)."""
    with open(path, "rb") as f:
        return decode(f.read(), path)


def check(source: str) -> str:
    """Raise the reading error a ``ProgramText`` carries; otherwise return the text unchanged."""
    error = getattr(source, "error", None)
    if error is not None:
        raise error
    return source


def int_literal_error(text: str) -> str | None:
    """CPython's compile-time refusal of a decimal integer literal longer than
    ``sys.get_int_max_str_digits()`` digits, in its words (None when it is accepted)."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    digits = len(text) - text.count("_")
    if not limit or digits <= limit or text[:2].lower() in ("0x", "0o", "0b") or not text.replace("_", "").isdigit():
        return None
    return (f"Exceeds the limit ({limit} digits) for integer string conversion: value has {digits} digits; "
            "use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer "
            "literals to avoid decimal conversion limits.")
