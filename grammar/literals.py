"""Number and string literals: their values, escapes and positions.
"""
from __future__ import annotations

import codecs
import warnings

from gradexpr import limits

from .tokens import _Fail, _at


_BASE_PREFIXES = frozenset(("0x", "0X", "0o", "0O", "0b", "0B"))


def _decode_escapes(body, tok):
    if "\\" not in body:
        return body
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except UnicodeDecodeError as e:
        raise _at(tok, f"(unicode error) 'unicodeescape' codec can't decode bytes: {e.reason}") from None


def _number(tok):
    text = tok.value
    if text.isascii() and text.isdigit() and (text[0] != "0" or not text.strip("0")):
        # the common case, a plain decimal integer (what the general path below does)
        lim = limits.current().max_int_digits
        if not lim or len(text) <= lim:
            try:
                return int(text)
            except ValueError:
                pass                # beyond int()'s own limit: reported below
    low = text.lower()
    if low.endswith("j"):
        raise _at(tok, "complex literals are not supported in gradexpr")
    based = text[:2] in _BASE_PREFIXES
    if based or not ("." in low or "e" in low):
        lim = limits.current().max_int_digits
        digits = len(text) - text.count("_")
        if based:
            base = {"x": 16, "o": 8, "b": 2}[low[1]]
            digits = int((digits - 2) * {16: 1.2042, 8: 0.9031, 2: 0.30103}[base]) + 1
        if lim and digits > lim:
            raise _Fail(limits.exceeded(f"an integer literal of {digits:,} digits", lim, "max_int_digits"),
                        tok.line, tok.col, tok.end_line, tok.end_col)
        if len(text) > 1 and text[0] == "0" and text[1].isdigit() and text.strip("0_"):
            raise _at(tok, "leading zeros in decimal integer literals are not permitted; "
                           "use an 0o prefix for octal integers")
        try:
            return int(text, 0)
        except ValueError as e:
            raise _at(tok, str(e)) from None
    return float(text)


_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _split_string_token(tok):
    """-> (prefix lowercased, body, quote length, offset of the body in the token)."""
    v = tok.value
    i = 0
    while v[i] in _ASCII_LETTERS:       # (a string token ends with a quote)
        i += 1
    prefix = v[:i].lower()
    q = v[len(prefix):len(prefix) + 3]
    ql = 3 if q in ("'''", '"""') else 1
    start = len(prefix) + ql
    return prefix, v[start:len(v) - ql], ql, start


def _position_in(tok, offset):
    """Absolute (line, col) of character ``offset`` of token ``tok``'s text."""
    v = tok.value
    nl = v.count("\n", 0, offset)
    if nl:
        return tok.line + nl, offset - v.rindex("\n", 0, offset)
    return tok.line, tok.col + offset


# ---------------------------------------------------------------------------- f-strings
