"""Syntax errors in Python's words: an unexpected token explained, an unscannable
character, and Python's compile-time checks the grammar cannot make.
"""
from __future__ import annotations

import re

from . import ast
from .indentation import _CLOSE, _OPEN, _unclosed
from .tokens import Tok, _Fail, _at, _syntax


_EXPR_START = frozenset({"NAME", "NUMBER", "STRING", "LPAR", "LSQB", "LBRACE", "MINUS", "PLUS",
                         "TILDE", "NOT", "LAMBDA", "NONE", "TRUE", "FALSE", "ELLIPSIS"})
_KEYWORD_TYPES = frozenset({"IF", "ELIF", "ELSE", "WHILE", "FOR", "DEF", "WITH", "LAMBDA", "RETURN",
                            "ASSERT", "PASS", "BREAK", "CONTINUE", "IMPORT", "FROM", "NOT", "NONE",
                            "TRUE", "FALSE", "AS", "IN", "IS", "AND", "OR", "CLASS", "TRY", "EXCEPT",
                            "FINALLY", "RAISE", "YIELD", "GLOBAL", "NONLOCAL", "DEL", "ASYNC", "AWAIT"})
_UNSUPPORTED_MESSAGES = {
    "ASYNC": "'async' is not supported in gradexpr",
    "AWAIT": "'await' is not supported in gradexpr",
}
_ATOM_END = frozenset({"NAME", "NUMBER", "STRING", "RPAR", "RSQB", "RBRACE", "NONE", "TRUE", "FALSE",
                       "ELLIPSIS"})
_ATOM_START = frozenset({"NAME", "NUMBER", "STRING", "NONE", "TRUE", "FALSE", "ELLIPSIS", "LAMBDA"})
_HEADER_WORDS = {"IF": "'if' statement", "ELIF": "'elif' statement", "ELSE": "'else' statement",
                 "WHILE": "'while' statement", "FOR": "'for' statement", "DEF": "function definition",
                 "WITH": "'with' statement", "CLASS": "class definition", "TRY": "'try' statement",
                 "EXCEPT": "'except' statement", "FINALLY": "'finally' statement"}


def _term_text(name):
    from . import parser
    eng = parser._engine
    if eng is None:
        return None
    return eng.term_text.get(name)


def _describe(tok):
    if tok.type == "$END":
        return "end of input"
    if tok.type == "_NEWLINE":
        return "end of line"
    if tok.type in ("_INDENT", "_DEDENT"):
        return "indentation"
    v = tok.value
    if len(v) > 20:
        v = v[:17] + "..."
    return repr(v) if "'" not in v else '"' + v + '"'


def _line_text(src, line):
    lines = src.split("\n")
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _still_open(src, tok, brackets):
    """After an error inside brackets: scan on, and return the innermost bracket that is
    still open at the end of the file (CPython's "'(' was never closed"), else None."""
    stack = list(brackets)
    if tok.start_pos is None:
        return None
    try:
        from .parser import _get_engine
        eng = _get_engine()
        ls = src.rfind("\n", 0, tok.start_pos) + 1
        for t in eng.tokenize(src, tok.start_pos, tok.line, ls):
            if t.type in _OPEN:
                stack.append(t)
            elif t.type in _CLOSE:
                if not stack:
                    return None
                stack.pop()
    except _Fail:
        return None
    return stack[-1] if stack else None


def _unexpected(tok, row, values, brackets, src):
    """The _Fail for token ``tok`` not being acceptable in the parser state whose action row is
    ``row``, with ``values`` the parser's value stack (the previous token is on top) and
    ``brackets`` the open brackets."""
    t = tok.type
    if t == "_NEWLINE":     # point at the end of the line, one character wide
        tok = Tok(t, tok.value, tok.line, tok.col, tok.line, tok.col + 1, tok.start_pos, tok.end_pos)
    expected = {k for k in row if k.isupper() or k == "$END"}
    prev = values[-1] if values else None
    prev_tok = prev if isinstance(prev, Tok) else None

    if t in _UNSUPPORTED_MESSAGES:
        return _at(tok, _UNSUPPORTED_MESSAGES[t])
    first = _line_text(src, tok.line).lstrip()
    if re.match(r"match\b(?!\s*[=.\[(,)]).*:\s*(#.*)?$", first):
        return _at(tok, "'match' statements are not supported in gradexpr")
    if t == "_INDENT":
        return _at(tok, "unexpected indent")
    if "_INDENT" in expected:
        for v in reversed(values):
            if isinstance(v, Tok) and v.type in _HEADER_WORDS:
                return _at(tok, f"expected an indented block after {_HEADER_WORDS[v.type]} on line {v.line}")
        return _at(tok, "expected an indented block")
    if brackets and (t == "$END" or brackets[-1].line < tok.line):
        o = _still_open(src, tok, brackets) if t != "$END" else brackets[-1]
        if o is not None:
            return _unclosed(o)
    if t == "_NEWLINE" and "COLON" in expected:
        return _at(tok, "expected ':'")
    if t == "EQUAL" and "EQUAL" not in expected:
        return _at(tok, "invalid syntax: '=' assigns; to compare, use '=='")
    starters = expected & _EXPR_START
    if t in _KEYWORD_TYPES and starters == {"NAME"}:
        return _at(tok, f"'{tok.value}' is a keyword and cannot be used as a name")
    if t in ("ELSE", "ELIF") and "ELSE" not in expected and "ELIF" not in expected:
        return _at(tok, f"'{tok.value}' without a matching 'if'")
    if prev_tok is not None and prev_tok.type in ("FROM", "IMPORT"):
        if t == "DOT":
            return _at(tok, "relative imports are not supported in gradexpr")
        return _at(tok, f"expected a module name after '{prev_tok.value}'")
    if prev_tok is not None and starters and t not in _EXPR_START:
        return _at(tok, f"expected an expression after '{prev_tok.value}'")
    if t == "$END":
        return _at(tok, "unexpected end of input")
    if brackets and t in _ATOM_START and (prev_tok is None or prev_tok.type in _ATOM_END):
        return _at(tok, f"invalid syntax: unexpected {_describe(tok)} (perhaps a missing comma?)")
    if t == "_NEWLINE":
        return _at(tok, "invalid syntax: unexpected end of line")
    return _at(tok, f"invalid syntax: unexpected {_describe(tok)}")


def _lex_error(src, pos, line, col):
    ch = src[pos]
    if ch in "'\"":
        q = ch
        if src[pos - 2:pos + 1] == q * 3 and pos >= 2:
            start_col = col - 2
            nlines = src.count("\n", pos)
            return _syntax(f"unterminated triple-quoted string literal (detected at line {line + nlines - 1})",
                           line, start_col, line, start_col + 3)
        return _syntax("unterminated string literal", line, col, line, col + 1)
    if ch == "\\":
        return _syntax("unexpected character after line continuation character", line, col, line, col + 1)
    if ch.isprintable() and not ch.isspace():
        return _syntax(f"invalid character '{ch}' (U+{ord(ch):04X})", line, col, line, col + 1)
    return _syntax(f"invalid non-printable character U+{ord(ch):04X}", line, col, line, col + 1)


_SIMPLE_STATEMENTS = frozenset((ast.ExprStmt, ast.Assign, ast.AugAssign, ast.Pass, ast.Assert, ast.Import,
                                ast.AnnAssign, ast.Raise, ast.Global, ast.Delete))


def _check_module(body, filename):
    """Python's compile-time checks the grammar cannot make: 'return' and 'yield' outside a
    function, 'break'/'continue' outside a loop, 'import *' and 'nonlocal' where not allowed."""
    todo = [(body, False, False, False)]
    simple = _SIMPLE_STATEMENTS
    while todo:
        stmts, in_func, in_loop, in_class = todo.pop()
        for s in stmts:
            t = type(s)
            if t is ast.ExprStmt or t is ast.Assign or t is ast.AnnAssign:
                if not in_func and _saw_yield():
                    _no_yield(s)
                continue
            if t in simple:
                continue
            if t is ast.Return and not in_func:
                raise _at(s, "'return' outside function")
            if t is ast.Break and not in_loop:
                raise _at(s, "'break' outside loop")
            if t is ast.Continue and not in_loop:
                raise _at(s, "'continue' not properly in loop")
            if t is ast.ImportFrom and (in_func or in_class) and s.names[0].name == "*":
                raise _at(s, "import * only allowed at module level")
            if t is ast.Nonlocal and not in_func:
                raise _at(s, "nonlocal declaration not allowed at module level")
            if t is ast.Decorated:
                s = s.definition
                t = type(s)
            if t is ast.FunctionDef:
                todo.append((s.body, True, False, False))
            elif t is ast.ClassDef:
                todo.append((s.body, False, False, True))
            elif t is ast.For or t is ast.While:
                todo.append((s.body, in_func, True, in_class))
                todo.append((s.orelse, in_func, in_loop, in_class))
            elif t is ast.If:
                todo.append((s.body, in_func, in_loop, in_class))
                todo.append((s.orelse, in_func, in_loop, in_class))
            elif t is ast.With:
                todo.append((s.body, in_func, in_loop, in_class))
            elif t is ast.Try:
                for part in (s.body, s.orelse, s.finalbody, *(h.body for h in s.handlers)):
                    todo.append((part, in_func, in_loop, in_class))


def _no_yield(stmt):
    """'yield' outside a function (a lambda or comprehension does not count as one)."""
    for n in ast.walk(stmt):
        if type(n) is ast.Yield or type(n) is ast.YieldFrom:
            raise _at(n, "'yield' outside function")


def _saw_yield():
    from .builder import _SAW_YIELD
    return _SAW_YIELD[0]
