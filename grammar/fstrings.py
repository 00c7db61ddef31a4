"""f-strings: scanning the literal text, fields, conversions and format specs of an
f-string token, parsing each field's expression, and the nodes the builder's ``string`` rule
makes of them (loaded by the first f-string).
"""
from __future__ import annotations

import re

from gradexpr import errors

from . import ast
from .builder import _deepest, _depth
from .literals import _decode_escapes, _position_in
from .tokens import Tok, _Fail, _syntax


_FIELD_PLAIN = r"[^'\"\\()\[\]{}!:=#]*"     # nothing to do in a field but move on
_LITERAL_PLAIN = r"[^{}\\]+"                 # nor in literal text (raw: backslashes too)
_RAW_LITERAL_PLAIN = r"[^{}]+"
_compiled = {}


def _regex(pattern):
    """``pattern`` compiled on first use (at import, a regex costs a tenth of a millisecond)."""
    rx = _compiled.get(pattern)
    if rx is None:
        rx = _compiled[pattern] = re.compile(pattern)
    return rx


def _field_end(body, i, tok, boff):
    """Where the expression of the field starting at body[i] ends (len(body) if it does not)."""
    n = len(body)
    depth = 0
    quote = None
    j = i
    plain = _regex(_FIELD_PLAIN).match
    while j < n:
        if quote:
            k = body.find(quote, j)         # (no escapes inside: a backslash is an error anyway)
            if k < 0:
                j = n
                break
            b = body.find("\\", j, k)
            if b >= 0:                      # CPython 3.11: not even inside a string in the field
                raise _fpos(tok, boff + b, "f-string expression part cannot include a backslash")
            j = k + len(quote)
            quote = None
            continue
        j = plain(body, j).end()            # characters that only move on
        if j >= n:
            break
        c = body[j]
        if c in "'\"":
            quote = c * 3 if body.startswith(c * 3, j) else c
            j += len(quote)
            continue
        if c == "\\":
            raise _fpos(tok, boff + j, "f-string expression part cannot include a backslash")
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                if c == "}":
                    break
                raise _fpos(tok, boff + j, f"f-string: unmatched '{c}'")
            depth -= 1
        elif depth == 0:
            if c == "!" and not body.startswith("!=", j):
                break
            if c == ":":
                break
            if c == "=" and not body.startswith("==", j) and body[j - 1:j] not in ("=", "!", "<", ">"):
                k = j + 1
                while k < n and body[k] in " \t":
                    k += 1
                if k < n and body[k] in "!:}":
                    break
        if c == "#":
            raise _fpos(tok, boff + j, "f-string expression part cannot include '#'")
        j += 1
    return j


def _scan_field(body, i, tok, boff, nest=0):
    """Parse one replacement field starting after '{' at body[i]; return (parts, new index) where
    parts is a list of nodes (a Constant for the '=' debug text, then the FormattedValue)."""
    n = len(body)
    start = i
    # The usual field (see _plain_field) ends where its plain text does, at a '}' or ':',
    # as _field_end would find one character after another.
    m = _regex(_PLAIN_FIELD).match(body, i)
    if m is not None and body[m.end():m.end() + 1] in ("}", ":"):
        j = m.end()
    else:
        j = _field_end(body, i, tok, boff)
    if j >= n:
        raise _fpos(tok, boff + start - 1, "f-string: expecting '}'")
    expr_text = body[start:j]
    if not expr_text.strip():
        raise _fpos(tok, boff + start - 1, "f-string: empty expression not allowed")
    value = _parse_field_expr(expr_text, tok, boff + start)
    parts = []
    conversion = None
    spec = None
    if body[j] == "=":
        debug = body[start:j + 1]
        k = j + 1
        while k < n and body[k] in " \t":
            k += 1
        debug += body[j + 1:k]
        parts.append(debug)
        j = k
        if body[j] not in "!:":
            conversion = "r"
    if body[j] == "!":
        conv = body[j + 1:j + 2]
        if conv not in ("r", "s", "a") or j + 2 >= n or body[j + 2] not in ":}":
            raise _fpos(tok, boff + j, "f-string: invalid conversion character: expected 's', 'r', or 'a'")
        conversion = conv
        j += 2
    if body[j] == ":":
        spec_parts, j = _scan_literal(body, j + 1, tok, boff, in_spec=True, nest=nest + 1)
        spec = spec_parts
    if j >= n or body[j] != "}":
        raise _fpos(tok, boff + start - 1, "f-string: expecting '}'")
    return parts, value, conversion, spec, j + 1


def _scan_literal(body, i, tok, boff, in_spec=False, raw=False, nest=0):
    """Literal text and fields up to the end (or, in a spec, up to the closing '}').
    Returns (list of str | (value, conversion, spec, start, end) tuples, index)."""
    n = len(body)
    out = []
    buf = []
    lit_start = i
    plain = _regex(_RAW_LITERAL_PLAIN if raw else _LITERAL_PLAIN).match
    while i < n:
        m = plain(body, i)
        if m is not None:
            buf.append(m.group())
            i = m.end()
            continue
        c = body[i]
        if c == "{":
            if not in_spec and body.startswith("{{", i):
                buf.append("{")
                i += 2
                continue
            if buf:
                out.append(("lit", "".join(buf), lit_start))
                buf = []
            fstart = i
            if nest >= 2:       # a field in the spec of a field in a spec: CPython 3.11 refuses it
                raise _fpos(tok, boff + i, "f-string: expressions nested too deeply")
            debug, value, conversion, spec, i = _scan_field(body, i + 1, tok, boff, nest)
            for d in debug:
                out.append(("lit", d, None))
            out.append(("field", value, conversion, spec, fstart, i))
            lit_start = i
            continue
        if c == "}":
            if in_spec:
                break
            if body.startswith("}}", i):
                buf.append("}")
                i += 2
                continue
            raise _fpos(tok, boff + i, "f-string: single '}' is not allowed")
        if c == "\\" and not raw:
            if body.startswith("\\N{", i):
                k = body.find("}", i)
                if k < 0:
                    raise _fpos(tok, boff + i, "f-string: malformed \\N character escape")
                buf.append(body[i:k + 1])
                i = k + 1
                continue
            buf.append(body[i:i + 2])
            i += 2
            continue
        buf.append(c)
        i += 1
    if buf:
        out.append(("lit", "".join(buf), lit_start))
    return out, i


def _fpos(tok, offset, message):
    line, col = _position_in(tok, offset)
    return _syntax(message, line, col, line, col + 1)


def _parse_field_expr(text, tok, offset):
    """Parse the expression of an f-string field, positioned inside the source."""
    stripped = text.lstrip(" \t")
    offset += len(text) - len(stripped)
    line, col = _position_in(tok, offset)
    eng = _engine()
    # One line: parsed as it is. Several (a triple-quoted f-string): inside parentheses, as
    # CPython does, so the newlines are continuations.
    wrapped = "\n" in stripped
    if not wrapped:
        node = _plain_field(stripped, line, col, eng)
        if node is not None:
            return node
    text = ("(" + stripped + ")" if wrapped else stripped) + "\n"
    dcol = col - 1 - wrapped
    if stripped[:1] not in eng.spaces:
        # Parsed in place: its tokens, hence its nodes, get their positions in the source
        # directly (no _shift of the tree afterwards). An error, though, is located by
        # looking at the text on its own: parse again as below to report it.
        try:
            return eng.run(text, "eval_input", line, -dcol)
        except _Fail:
            pass
    try:
        node = eng.run(text, "eval_input")
    except _Fail as f:
        if isinstance(f.error, errors.SyntaxError) and not f.error.message.startswith("f-string"):
            f.error.message = "f-string: " + f.error.message
            f.error.args = (f.error.message,)
        if f.line == 1:
            f.col += dcol
            if f.end_col is not None and f.end_line in (None, 1):
                f.end_col += dcol
        if f.line is not None:
            f.line += line - 1
        if f.end_line is not None:
            f.end_line += line - 1
        raise
    _shift(node, line - 1, dcol)      # (a field that starts with a form feed)
    return node


_PLAIN_FIELD = r"[^\W\d]\w*(?:\.[^\W\d]\w*|\(\))*"     # name, .attribute, () -- no blanks
_PLAIN_FIELD_PIECE = r"\.?[^\W\d]\w*|\(\)"       # name, .attribute, ()
_NAME_RX = r"[^\W\d]\w*"


def _plain_field(text, line, col, eng):
    """The node of field expression ``text`` (at ``line``:``col``) if it is only a name
    followed by attributes and calls without arguments (``{loss.item()}``, the usual field),
    made by the builder's own name/getattr/call from the tokens, without a parse (which costs
    more than the rest of the f-string). Else (a keyword among the names, or anything else) None."""
    if _regex(_PLAIN_FIELD).fullmatch(text) is None:
        return None
    if not eng.keywords.keys().isdisjoint(_regex(_NAME_RX).findall(text)):
        return None
    b = eng.builder
    node = None
    c = col
    for piece in _regex(_PLAIN_FIELD_PIECE).findall(text):
        e = c + len(piece)
        if node is None:
            node = b.name([Tok("NAME", piece, line, c, line, e)])
        elif piece == "()":
            node = b.call([node, None, None, Tok("RPAR", ")", line, e - 1, line, e)])
        else:
            node = b.getattr([node, Tok("NAME", piece[1:], line, c + 1, line, e)])
        c = e
    return node


def _shift(node, dline, dcol):
    """Move positions of a tree parsed from a fragment: line 1 of the fragment starts at column
    ``dcol + 1`` of line ``dline + 1``."""
    Node = ast.Node
    todo = [node]
    while todo:         # ast.walk, written out (a field of an f-string is shifted each time)
        n = todo.pop()
        for name in n._fields:
            v = getattr(n, name)
            if isinstance(v, Node):
                todo.append(v)
            elif isinstance(v, list):
                todo += [x for x in v if isinstance(x, Node)]
        if n.line == 1:
            n.col += dcol
        if n.end_line == 1:
            n.end_col += dcol
        n.line += dline
        n.end_line += dline


def _engine():
    from .parser import _get_engine     # (the engine parses fields; it imports this module)
    return _get_engine()


# ---------------------------------------------------------------- the nodes
def f_string_pieces(body, tok, boff, raw):
    """The texts and fields (FormattedValue nodes) of the body of f-string token ``tok``."""
    pieces = []
    parts, _ = _scan_literal(body, 0, tok, boff, raw=raw)
    for p in parts:
        if p[0] == "lit":
            pieces.append(p[1] if raw else _decode_escapes(p[1], tok))
        else:
            pieces.append(_field(p, tok, boff, raw))
    return pieces


def joined_str(pieces, f, l):
    """The JoinedStr of a string's ``pieces`` (texts and fields) from token ``f`` to ``l``: adjacent
    texts in one Constant."""
    values = []
    for p in pieces:
        if type(p) is str:
            if not p:
                continue
            if values and type(values[-1]) is ast.Constant:
                values[-1].value += p
                continue
            values.append(ast.Constant(p, f.line, f.col, l.end_line, l.end_col))
        else:
            values.append(p)
    d = _deepest(values) + 1
    n = ast.JoinedStr(values, f.line, f.col, l.end_line, l.end_col, d)
    _depth(d, n)
    return n


def _field(p, tok, boff, raw):
    _kind, value, conversion, spec, fstart, fend = p
    spec_node = None
    if spec is not None:
        svals = []
        for s in spec:
            if s[0] == "lit":
                text = s[1] if raw else _decode_escapes(s[1], tok)
                if text:
                    line, col = _position_in(tok, boff + (s[2] or fstart))
                    svals.append(ast.Constant(text, line, col, line, col + len(text)))
            else:
                svals.append(_field(s, tok, boff, raw))
    line, col = _position_in(tok, boff + fstart)
    eline, ecol = _position_in(tok, boff + fend)
    if spec is not None:
        sd = _deepest(svals) + 1
        spec_node = ast.JoinedStr(svals, line, col, eline, ecol, sd)
    d = max(value.depth, spec_node.depth if spec_node else 0) + 1
    return ast.FormattedValue(value, conversion, spec_node, line, col, eline, ecol, d)
