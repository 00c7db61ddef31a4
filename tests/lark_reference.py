"""Lark's own parser of gradexpr.lark, the reference the fast parser is checked against.

``parse_with_lark(source, filename, start)`` parses as ``parser.parse`` (or, with
``start="eval_input"``, ``parser.parse_expression``) does, but with Lark's lexer, Lark's
LALR loop and Lark's ``Indenter`` postlexer making INDENT/DEDENT, around the same AST
builder, and with the same error wording. Lark's ``Indenter`` knows nothing of the rest
of Python's rules -- the first line not indented, tabs checked against tab = 1 column,
bracket matching, an unclosed bracket, the depth limits, the wording of a bad dedent -- so
``PythonIndenter`` adds them from ``grammar/indentation.py`` (they are checked there once).
Lark is compiled by ``tools/gen_parser_tables.py``, the one place that knows how.
"""
from __future__ import annotations

import functools
import importlib.util
import os

import lark
from lark.indenter import DedentError, Indenter

from gradexpr import limits
from gradexpr.grammar import parser
from gradexpr.grammar.builder import _MAX_DEPTH, _NUMBERS, _Builder
from gradexpr.grammar.indentation import _CLOSE, _OPEN, _bracket, _check_first, _indentation, _unclosed
from gradexpr.grammar.syntax_errors import _check_module, _lex_error, _unexpected
from gradexpr.grammar.tokens import Tok, _Fail

_GENERATOR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools",
                          "gen_parser_tables.py")


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_parser_tables", _GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generator = _load_generator()


class _LarkTok(Tok):
    """Our token with ``lark.Token``'s names for its columns (Lark's parser borrows them
    for the end-of-input token)."""

    __slots__ = ()

    @property
    def column(self):
        return self.col

    @property
    def end_column(self):
        return self.end_col


def _tok(t):
    """A ``lark.Token`` (or one of ours) as a _LarkTok."""
    if isinstance(t, Tok):
        return _LarkTok(t.type, t.value, t.line, t.col, t.end_line, t.end_col, t.start_pos, t.end_pos)
    return _LarkTok(t.type, str(t), t.line, t.column, t.end_line, t.end_column, t.start_pos, t.end_pos)


class PythonIndenter(Indenter):
    """Lark's ``Indenter`` with our terminals, plus Python's rules it lacks (see above)."""

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = list(_OPEN)
    CLOSE_PAREN_types = list(_CLOSE)
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8
    always_accept = generator.ALWAYS_ACCEPT

    src = None              # the source being parsed (for the first line's check)
    brackets = ()           # the open bracket tokens, innermost last

    def process(self, stream):
        self.brackets = []
        self.blocks = [(0, 0)]          # Python's view of the open blocks (see _indentation)
        self.max_depth = limits.current().max_depth
        return map(_tok, super().process(self._python_brackets(stream)))

    def _python_brackets(self, stream):
        """The tokens as Lark scans them, after Python's first-line and bracket checks."""
        first = True
        for t in stream:
            if first or t.type in _OPEN or t.type in _CLOSE:
                tok = _tok(t)
                if first and t.type != self.NL_type:
                    _check_first(tok, self.src)
                first = False
                _bracket(tok, t.type, self.brackets, self.max_depth)
            yield t
        if self.brackets:
            raise _unclosed(self.brackets[-1])

    def handle_NL(self, token):
        if self.paren_level > 0:
            return
        lark_tokens = super().handle_NL(token)
        yield next(lark_tokens)                 # the newline
        # Python's rules (tabs, the depth limit, a dedent to no level; raises at once for
        # the first two) and its tokens, placed on the new line where Lark places them at
        # the newline: Lark's Indenter must open and close the same blocks.
        python_tokens, error = _indentation(_tok(token), self.blocks, self.max_depth)
        lark_types = []
        try:
            for t in lark_tokens:
                lark_types.append(t.type)
        except DedentError:
            if error is None:
                raise
        assert lark_types == [t.type for t in python_tokens], (token, lark_types, python_tokens)
        yield from map(_tok, python_tokens)
        if error is not None:
            raise error


@functools.lru_cache(maxsize=None)
def plain_lark():
    """Lark's parser of the grammar without a transformer (its rules, its callbacks), made once."""
    return generator.build_lark()


@functools.lru_cache(maxsize=None)
def _reference():
    """(Lark's parser with our builder on a ``lark.Transformer``, its postlexer), made once."""
    builder = type("LarkBuilder", (_Builder, lark.Transformer), {})()
    indenter = PythonIndenter()
    return generator.build_lark(transformer=builder, postlex=indenter), indenter


def parse_with_lark(source: str, filename: str = "<string>", start: str = "file_input"):
    """``parser.parse`` (or ``parse_expression``) by Lark's own lexer, LALR loop and Indenter."""
    lk, indenter = _reference()
    lim = limits.current().max_depth
    try:
        src = parser._prepare(source)
        with parser._lock:
            saved = _MAX_DEPTH[0], _NUMBERS[0]
            _MAX_DEPTH[0] = lim
            _NUMBERS[0] = {}
            try:
                node = _run(lk, indenter, src, start)
            finally:
                _MAX_DEPTH[0], _NUMBERS[0] = saved
        if start == "file_input":
            _check_module(node.body, filename)
        return node
    except _Fail as f:
        err = f.error
        end_col = f.end_col if (f.end_line is None or f.end_line == f.line) else None
        raise err.at(filename, f.line, f.col, end_col) from None


def _run(lk, indenter, src, start):
    indenter.src = src
    try:
        return lk.parse(src, start=start)
    except lark.exceptions.UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            tok = parser._end_token(src)
        elif not isinstance(tok, Tok):
            tok = _tok(tok)
        row = e.state.parse_conf.states[e.state.position] if e.state is not None else {}
        raise _unexpected(tok, row, e.state.value_stack if e.state else [], indenter.brackets, src) from None
    except lark.exceptions.UnexpectedCharacters as e:
        raise _lex_error(src, e.pos_in_stream, e.line, e.column) from None
    except lark.exceptions.VisitError as e:     # an error raised by the builder
        raise e.orig_exc from None
