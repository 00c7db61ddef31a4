"""Python's indentation and bracket rules for the token stream (INDENT/DEDENT, implicit
continuation inside brackets, the block and bracket depth limits).
"""
from __future__ import annotations

from .tokens import Tok, _at, _syntax, _too_deep


_OPEN = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
_CLOSE = {"RPAR": "(", "RSQB": "[", "RBRACE": "{"}
_CLOSE_OF = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_SPECIAL = frozenset(("_NEWLINE",) + tuple(_OPEN) + tuple(_CLOSE))


def _indentation(tok, blocks, max_depth):
    """After NEWLINE token ``tok`` (outside brackets): -> (the _INDENT/_DEDENT tokens due,
    an error to raise once they are parsed, or None). ``blocks`` is updated. Python's rules:
    tabs to multiples of 8, checked against tab = 1 column as CPython does; a form feed
    resets the column."""
    val = tok.value
    indent = val[val.rindex("\n") + 1:] if "\n" in val else ""
    col = alt = 0
    for ch in indent:
        if ch == " ":
            col += 1
            alt += 1
        elif ch == "\t":
            col = (col // 8 + 1) * 8
            alt += 1
        else:               # form feed resets, as in CPython
            col = alt = 0
    top, top_alt = blocks[-1]
    ln = tok.end_line
    w = len(indent) + 1
    if col == top:
        if alt != top_alt:
            raise _syntax("inconsistent use of tabs and spaces in indentation", ln, 1, ln, w)
        return (), None
    if col > top:
        if alt <= top_alt:
            raise _syntax("inconsistent use of tabs and spaces in indentation", ln, 1, ln, w)
        if max_depth and len(blocks) > max_depth:
            raise _too_deep("block nesting depth", ln, 1, ln, w)
        blocks.append((col, alt))
        return (Tok("_INDENT", indent, ln, 1, ln, w),), None
    out = []
    while col < blocks[-1][0]:
        blocks.pop()
        out.append(Tok("_DEDENT", indent, ln, w, ln, w))
    error = None
    if col != blocks[-1][0]:
        error = _syntax("unindent does not match any outer indentation level", ln, 1, ln, w)
    elif alt != blocks[-1][1]:
        error = _syntax("inconsistent use of tabs and spaces in indentation", ln, 1, ln, w)
    return out, error


def _check_first(tok, src):
    """The first token of the input (other than a newline) must not be indented."""
    if tok.col > 1:
        lead = src[tok.start_pos - tok.col + 1:tok.start_pos]
        if lead.rsplit("\f", 1)[-1]:      # a form feed resets the column
            raise _syntax("unexpected indent", tok.line, 1, tok.line, tok.col)


def _bracket(tok, tt, brackets, max_depth):
    """Track an opening or closing bracket token."""
    if tt in _OPEN:
        brackets.append(tok)
        if max_depth and len(brackets) > max_depth:
            raise _too_deep("bracket nesting depth", tok.line, tok.col, tok.end_line, tok.end_col)
    elif tt in _CLOSE:
        if not brackets:
            raise _at(tok, f"unmatched '{tok.value}'")
        o = brackets.pop()
        if _CLOSE_OF[o.type] != tt:
            raise _at(tok, f"closing '{tok.value}' does not match opening '{o.value}' "
                           f"at {o.line}:{o.col}")


def _unclosed(o):
    """The failure for bracket token ``o`` still open at the end of the input."""
    return _at(o, f"unclosed '{o.value}' opened at {o.line}:{o.col}")
