"""Parse gradexpr source into a :mod:`gradexpr.grammar.ast` tree.

``parse(source, filename)`` returns an ``ast.Module``; ``parse_expression`` one expression.
Every syntax error is a ``gradexpr.errors.SyntaxError`` located at the offending spot;
a program nested deeper than ``limits.max_depth`` raises ``gradexpr.errors.LimitError``.

How it works. ``gradexpr.lark`` is compiled by Lark into an LALR(1) table *ahead of time*:
``tools/gen_parser_tables.py`` writes everything parsing needs -- the scanner's terminals
(regexes in match order, keywords, ignored terminals, which terminals can start with each
ASCII character), the table, its start and end states, and for every rule a recipe of the
callback Lark builds for it -- into ``_tables.py`` as plain literals, with a checksum of
the grammar file. This module only loads that file: on first use the checksum of
``gradexpr.lark`` is compared with the recorded one (a read and a CRC-32, well under a
millisecond), and if the grammar was edited without regenerating the tables, parsing
raises ``StaleTablesError`` naming the command::

    python tools/gen_parser_tables.py          # --check: only report whether it is stale

Lark is never imported at run time; ``tests/lark_reference.py`` parses with Lark's own
lexer, LALR loop and ``Indenter`` and the tests compare its trees and errors with ours.

The AST is built *while parsing*: each reduction calls the rule's callback, made from its
recipe the way Lark's ``ParseTreeBuilder`` makes it (child filter with ``[..]``
placeholders and ``_rule`` inlining, single-child expansion of ``?rule``) around the
``_Builder`` method named after the rule or alias. No parse tree exists (the helper rules
Lark makes for ``x*`` give bare lists, which their parent inlines). One loop scans (trying
the terminals a token's first character allows: fixed texts by comparison, the others by
their regexes, compiled when first needed), applies Python's indentation and bracket rules,
and drives the LALR table; where a reduction leads (the goto and any chain of single-child
``?rule`` reductions after it) is worked out once per table entry and state below, and
remembered.

Files: this module holds the table loading, the scanner and LALR loop (``_Engine``) and
the API; ``tokens.py`` the tokens and syntax-error carrier, ``callbacks.py`` the reduction
callbacks made from recipes, ``indentation.py`` Python's indentation and bracket rules,
``builder.py`` the AST builder, ``literals.py`` numbers and strings, ``fstrings.py``
f-strings, ``syntax_errors.py`` the wording of syntax errors and Python's compile-time
checks.

The garbage collector is paused while parsing (the tree has no cycles; rescanning it as it
grows made big programs many times slower).
"""
from __future__ import annotations

import _thread
import gc
import os
import re

from gradexpr import errors, limits

from . import ast
from . import source as source_file
from .builder import _MAX_DEPTH, _NUMBERS, _SAW_YIELD, _Builder
from .callbacks import _bare_origins, _make_callback
from .indentation import _CLOSE, _CLOSE_OF, _OPEN, _SPECIAL, _bracket, _check_first, _indentation, _unclosed
from .syntax_errors import _check_module, _lex_error, _unexpected
from .tokens import Tok, _at, _Fail, _syntax

__all__ = ["parse", "parse_expression", "GRAMMAR_PATH"]

GRAMMAR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gradexpr.lark")


# ============================================================================ the tables

TABLES_FORMAT = 1       # bump when the layout of the data below changes
REGENERATE = "python tools/gen_parser_tables.py"

# The names of the data, as module attributes of _tables.py and keys of a tables dict:
#   GRAMMAR_CHECKSUM  _grammar_checksum() of the gradexpr.lark the data was made from
#   TERMINALS   ((name, regex), ...) that the scanner tries, in Lark's order of preference
#   SPACES      the characters of the blank space skipped in front of a token (the
#               %ignore'd terminals that match a space; no terminal starts with one)
#   KEYWORDS    {text: terminal}: string terminals that NAME also matches (scanned as NAME)
#   IGNORE      the %ignore'd terminals (dropped by the scanner)
#   DISPATCH    {ASCII character: (index in TERMINALS, ...)}: the terminals a token starting
#               with that character can be (an over-approximation; characters not listed
#               and failed matches use all of TERMINALS)
#   TERM_TEXT   {terminal: its text} for the string terminals
#   TERM_CHOICES  {terminal: (text, ...)} for the regex terminals that are only a choice of
#               fixed texts (AUGOP), in the order the regex tries them
#   RULES       ((origin, callback name, length, expand1, child filter), ...), the recipe
#               of each rule's callback (see callbacks._make_callback)
#   STATES      the row of each state, a string "symbol action symbol action ..." (one
#               constant per state loads several times faster than tuples of them; a row is
#               read when the parser first needs it): action >= 0 shifts (terminals) or goes
#               (nonterminals) to that state, action < 0 reduces by RULES[~action]
#   START_STATES, END_STATES   {start symbol: state}
TABLE_FIELDS = ("GRAMMAR_CHECKSUM", "TERMINALS", "SPACES", "KEYWORDS", "IGNORE", "DISPATCH",
                "TERM_TEXT", "TERM_CHOICES", "RULES", "STATES", "START_STATES", "END_STATES")


class StaleTablesError(RuntimeError):
    """grammar/_tables.py was not generated from this gradexpr.lark (the grammar was edited)."""


def _grammar_checksum(data: bytes) -> str:
    """A cheap fingerprint of the grammar file's bytes (zlib is ~0.4 ms to import, hashlib's
    OpenSSL ~5 ms; this only has to notice an edit, not resist an adversary)."""
    import zlib
    return f"crc32:{zlib.crc32(data):08x}:{len(data)}"


def _load_tables() -> dict:
    """The tables from _tables.py, if they were generated from the grammar file as it is."""
    with open(GRAMMAR_PATH, "rb") as f:
        checksum = _grammar_checksum(f.read())
    try:
        from . import _tables as generated
    except ImportError:
        generated = None
    if (generated is None or getattr(generated, "FORMAT", None) != TABLES_FORMAT
            or getattr(generated, "GRAMMAR_CHECKSUM", None) != checksum):
        raise StaleTablesError(f"the parser's tables (grammar/_tables.py) are not those of grammar/gradexpr.lark "
                               f"as it is now: regenerate them with `{REGENERATE}`")
    return {k: getattr(generated, k) for k in TABLE_FIELDS}


# ============================================================================ the engine

class _PendingRow:
    """A row of the LALR table not made yet: makes itself on first use, in its place."""

    __slots__ = ("engine", "state")

    def __init__(self, engine, state):
        self.engine = engine
        self.state = state

    def __getitem__(self, symbol):
        return self.engine._row(self.state)[symbol]

    def get(self, symbol, default=None):
        return self.engine._row(self.state).get(symbol, default)

    def __iter__(self):
        return iter(self.engine._row(self.state))


_lock = _thread.RLock()
_engine = None          # the _Engine, built on first use


class _Engine:
    """The scanner and the LALR table with its callbacks."""

    def __init__(self, tables):
        self.builder = _Builder()
        t = tables
        self.terminals = terms = t["TERMINALS"]
        self.spaces = t["SPACES"]
        self.keywords = t["KEYWORDS"]
        self.ignore = frozenset(t["IGNORE"])
        self.term_text = texts = t["TERM_TEXT"]
        # The scanner looks at a token's first character, and tries the terminals that can
        # start with it (DISPATCH; all of them for other characters) in order: the first that
        # matches wins, as in the alternation of Lark's lexer. A terminal that only matches
        # fixed texts (TERM_TEXT, TERM_CHOICES) is tried by comparing them, in order; another
        # by its regex, compiled when first needed. (Compiling costs up to half a
        # millisecond a regex; trying all ~40 terminals at each character would be slow.)
        self._dispatch_terms = t["DISPATCH"]
        self._fixed = dict(t["TERM_CHOICES"])       # terminal -> its texts in order, if fixed
        for name, regex in terms:
            if name in texts and regex == re.escape(texts[name]):
                self._fixed[name] = (texts[name],)
        self._regexes = {}          # terminal index -> compiled regex (a group named after it)
        self.choices_of = {}        # character -> ((terminal, text or None, regex or None), ...)
        # character -> (its regex's match, {text: terminal}, terminal) if the one terminal that
        # can start with it is a regex one, not ignored (NAME, NUMBER, _NEWLINE, STRING): its
        # tokens need neither the regex's group name nor the ignore check. The dict renames a
        # NAME that is a keyword (KEYWORDS; empty for the others).
        self.single_of = {}
        self.literal = {}           # character -> (terminal, text) if it is the one token
        for ch, key in self._dispatch_terms.items():
            if len(key) == 1:
                name = terms[key[0]][0]
                if self._fixed.get(name) == (ch,) and name not in self.ignore:
                    self.literal[ch] = (name, ch)

        # The table: a list of rows {symbol: action}, where an action is a state (shift or
        # goto) or a reduction (-length, origin, callback, memo). A single-child '?' rule that
        # passes its child through has no callback. Where the parser goes after a reduction
        # depends only on the state below the popped ones (the entry fixes the lookahead):
        # the goto, then any chain of pass-through reductions that follows for that
        # lookahead; each entry remembers it per state below in its memo, with the action
        # of that state for the lookahead, which comes next (see run, _after). Rows are
        # made from STATES when first used (a small program needs few of them), callbacks
        # when a row needs them.
        self._rules = t["RULES"]
        self._bare = _bare_origins(self.builder, self._rules)
        self._raw_states = t["STATES"]
        self._reductions = [None] * len(self._rules)
        self.table = [_PendingRow(self, i) for i in range(len(self._raw_states))]
        self.start_states = t["START_STATES"]
        self.end_states = t["END_STATES"]

    def _row(self, state):
        """Make row ``state`` of the table (replacing its _PendingRow)."""
        row = {}
        reductions = self._reductions
        items = self._raw_states[state].split()
        for sym, a in zip(items[::2], map(int, items[1::2])):
            if a >= 0:
                row[sym] = a
                continue
            red = reductions[~a]
            if red is None:
                rule = self._rules[~a]
                origin, _name, length, expand1, child_filter = rule
                if expand1 and length == 1 and child_filter is None:
                    red = (-1, origin, None)        # passes its child through
                else:
                    red = (-length, origin, _make_callback(self.builder, rule, self._bare))
                reductions[~a] = red
            row[sym] = red + ({},)
        self.table[state] = row
        return row

    # ------------------------------------------------------------------ scanner
    def _choices(self, c):
        """The ways a token starting with character ``c`` is tried (see __init__), cached."""
        terms = self.terminals
        key = self._dispatch_terms.get(c)
        if key is None:
            # DISPATCH has every ASCII character some terminal can start with: for others, try
            # all terminals
            key = () if c < "\x80" else range(len(terms))
        out = []
        for i in key:
            name, regex = terms[i]
            texts = self._fixed.get(name)
            if texts is not None:
                out += [(name, x, None) for x in texts if x[:1] == c]
            else:
                rx = self._regexes.get(i)
                if rx is None:
                    rx = self._regexes[i] = re.compile(f"(?P<{name}>{regex})")
                out.append((name, None, rx))
        out = tuple(out)
        self.choices_of[c] = out
        if len(out) == 1 and out[0][2] is not None and out[0][0] not in self.ignore:
            name = out[0][0]
            self.single_of[c] = (out[0][2].match, self.keywords if name == "NAME" else {}, name)
        return out

    def _scan_at(self, src, begin):
        """-> (terminal, end) of the token at ``begin`` (not blank space), or None."""
        c = src[begin]
        lit = self.literal.get(c)
        if lit is not None:
            return lit[0], begin + 1
        choices = self.choices_of.get(c)
        if choices is None:
            choices = self._choices(c)
        for name, text, rx in choices:
            if text is None:
                m = rx.match(src, begin)
                if m is not None:
                    return name, m.end()
            elif src.startswith(text, begin):
                return name, begin + len(text)
        return None

    def tokenize(self, src, pos=0, line=1, line_start=0):
        """Yield Tok for ``src`` (which ends with a newline), from offset ``pos`` (on ``line``,
        whose first character is at offset ``line_start``), as ``run`` scans it."""
        spaces = self.spaces
        n = len(src)
        while pos < n:
            begin = pos
            c = src[begin]
            while c in spaces:
                begin += 1
                c = src[begin] if begin < n else ""
            found = self._scan_at(src, begin) if begin < n else None
            if found is None:
                # only blank space may precede the bad character
                while pos < n and src[pos] in " \t\f":
                    pos += 1
                if pos >= n:
                    return
                raise _lex_error(src, pos, line, pos - line_start + 1)
            typ, end = found
            if typ in self.ignore:
                if src[end - 1] == "\n":            # a backslash continuation
                    line += 1
                    line_start = end
                pos = end
                continue
            val = src[begin:end]
            col = begin - line_start + 1
            if typ == "NAME":
                yield Tok(self.keywords.get(val, "NAME"), val, line, col, line, col + end - begin, begin, end)
            elif (typ == "_NEWLINE" or typ == "STRING") and "\n" in val:
                nl = val.count("\n")
                last = begin + val.rindex("\n") + 1
                tok = Tok(typ, val, line, col, line + nl, end - last + 1, begin, end)
                line += nl
                line_start = last
                yield tok
            else:
                yield Tok(typ, val, line, col, line, col + end - begin, begin, end)
            pos = end

    # ------------------------------------------------------------------ parsing
    def run(self, src, start, line=1, line_start=0):
        """Parse ``src`` (which ends with a newline) from start symbol ``start``: scanning
        (as ``tokenize``), the indentation and bracket rules (``indentation.py``) and the LALR
        loop (as ``_feed``) in one loop -- the hot path, written out for speed. ``src``
        starts on ``line``, and a negative ``line_start`` moves its first line to the right
        (an f-string field is parsed in place; see _parse_field_expr)."""
        table = self.table
        max_depth = limits.current().max_depth
        brackets = []           # open bracket tokens, innermost last
        blocks = [(0, 0)]       # indentation of the open blocks: (column, column with tab = 1)
        state = self.start_states[start]
        states = [state]
        values = []
        feed = self._feed
        opening = _OPEN
        closing = _CLOSE
        closing_of = _CLOSE_OF
        new_tok = object.__new__
        literal = self.literal
        choices_of = self.choices_of
        single_of = self.single_of
        spaces = self.spaces
        keywords = self.keywords
        ignore = self.ignore
        special = _SPECIAL
        first = True
        newline = False
        tok = None
        n = len(src)
        pos = 0
        while pos < n:
            # ---------------------------------------------------------- scan a token
            begin = pos
            c = src[begin]
            while c in spaces:
                begin += 1
                c = src[begin]         # (src ends with a newline, not blank)
            one = single_of.get(c)
            if one is not None and (m := one[0](src, begin)) is not None:
                pos = m.end()
                val = src[begin:pos]
                tt = one[1].get(val, one[2])
            elif (lit := literal.get(c)) is not None:
                tt, val = lit
                pos = begin + 1
            else:
                choices = choices_of.get(c)
                if choices is None:
                    choices = self._choices(c) if begin < n else ()
                for tt, text, rx in choices:
                    if text is None:
                        m = rx.match(src, begin)
                        if m is not None:
                            pos = m.end()
                            break
                    elif src.startswith(text, begin):
                        pos = begin + len(text)
                        break
                else:
                    # only blank space may precede the bad character
                    while pos < n and src[pos] in " \t\f":
                        pos += 1
                    if pos >= n:
                        break
                    raise _lex_error(src, pos, line, pos - line_start + 1)
                if tt in ignore:
                    if src[pos - 1] == "\n":            # a backslash continuation
                        line += 1
                        line_start = pos
                    continue
                val = src[begin:pos]
                if tt == "NAME":
                    tt = keywords.get(val, "NAME")
            # the Tok, its slots filled here (twice as fast as calling Tok())
            tok = new_tok(Tok)
            tok.type = tt
            tok.value = val
            tok.line = line
            tok.col = col = begin - line_start + 1
            tok.start_pos = begin
            tok.end_pos = pos
            if (tt == "_NEWLINE" or tt == "STRING") and "\n" in val:
                line += val.count("\n")
                line_start = begin + val.rindex("\n") + 1
                tok.end_line = line
                tok.end_col = pos - line_start + 1
            else:
                tok.end_line = line
                tok.end_col = col + pos - begin

            # ---------------------------------------------------------- indentation, brackets
            if first or tt in special:
                if tt == "_NEWLINE":
                    if brackets:
                        continue
                    first = False
                    newline = True      # the indentation is looked at once it is shifted
                else:
                    if first:
                        first = False
                        _check_first(tok, src)
                    if tt in opening:
                        brackets.append(tok)
                        if max_depth and len(brackets) > max_depth:
                            _bracket(brackets.pop(), tt, brackets, max_depth)     # raises
                    elif tt in closing:
                        if brackets and closing_of[brackets[-1].type] == tt:
                            brackets.pop()
                        else:
                            _bracket(tok, tt, brackets, max_depth)      # raises

            # ---------------------------------------------------------- the LALR loop
            try:
                a = table[state][tt]
            except KeyError:
                raise _unexpected(tok, table[state], values, brackets, src) from None
            while True:
                if type(a) is int:      # (faster than a.__class__ in 3.11)
                    states.append(a)
                    values.append(tok)
                    state = a
                    break
                # A reduction. Where it leads (the state, and its action for tt) is memoised
                # per state below: see _after.
                back, origin, cb, memo = a      # (back: minus the rule's length)
                if cb is None:
                    # a chain of single-child '?' rules
                    below = states[-2]
                    try:                # (a subscript, not .get: this is the hot loop)
                        state, a = memo[below]
                    except KeyError:
                        state, a = memo[below] = self._after(below, state, tt)
                    states[-1] = state
                elif back == -1:
                    values[-1] = cb([values[-1]])
                    below = states[-2]
                    try:
                        state, a = memo[below]
                    except KeyError:
                        state, a = memo[below] = self._after(below, table[below][origin], tt)
                    states[-1] = state
                else:
                    if back:
                        children = values[back:]
                        del values[back:]
                        del states[back:]
                        values.append(cb(children))
                        below = states[-1]
                    else:
                        values.append(cb([]))
                        below = state
                    try:
                        state, a = memo[below]
                    except KeyError:
                        state, a = memo[below] = self._after(below, table[below][origin], tt)
                    states.append(state)
                if a is None:
                    raise _unexpected(tok, table[state], values, brackets, src)

            if newline:
                newline = False
                # (a line not indented, with no block open: nothing to do, the usual case
                # at the top level)
                if val[-1] != "\n" or len(blocks) > 1:
                    extra, error = _indentation(tok, blocks, max_depth)
                    for t in extra:
                        feed(t, states, values, brackets, src)
                    if error is not None:
                        raise error
                    state = states[-1]

        if brackets:
            raise _unclosed(brackets[-1])
        ln = tok.end_line if tok is not None else 1
        while len(blocks) > 1:
            blocks.pop()
            feed(Tok("_DEDENT", "", ln, 1, ln, 1), states, values, brackets, src)

        return feed(_end_token(src), states, values, brackets, src, self.end_states[start])

    def _feed(self, tok, states, values, brackets, src, end_state=None):
        """Shift ``tok``, after the reductions it calls for; or, for the end of input, reduce
        until ``end_state`` is reached and return the value parsed."""
        table = self.table
        tt = tok.type
        while True:
            a = table[states[-1]].get(tt)
            if a is None:
                raise _unexpected(tok, table[states[-1]], values, brackets, src)
            if a.__class__ is int:
                if end_state is not None:       # pragma: no cover - $END is never shifted
                    raise _at(tok, "invalid syntax")
                states.append(a)
                values.append(tok)
                return
            back, origin, cb, memo = a       # as in run
            if cb is None:
                below = states[-2]
                hit = memo.get(below)
                if hit is None:
                    hit = memo[below] = self._after(below, states[-1], tt)
                states[-1] = hit[0]
            else:
                if back:
                    children = values[back:]
                    del values[back:]
                    del states[back:]
                else:
                    children = []
                values.append(cb(children))
                below = states[-1]
                hit = memo.get(below)
                if hit is None:
                    hit = memo[below] = self._after(below, table[below][origin], tt)
                states.append(hit[0])
            if states[-1] == end_state:
                return values[-1]

    def _after(self, below, top, tt):
        """Where a reduction in lookahead ``tt``'s entry leads above state ``below``, for its
        memo: the state ``_unit_chain`` ends in, and that state's action for ``tt`` (None: a
        syntax error), which the parser would look up next anyway."""
        state = self._unit_chain(below, top, tt)
        return state, self.table[state].get(tt)

    def _unit_chain(self, below, top, tt):
        """The state where the chain of pass-through reductions that lookahead ``tt`` calls
        for in state ``top``, above state ``below``, ends (``top`` if none)."""
        table = self.table
        while True:
            a = table[top].get(tt)
            if a is None or a.__class__ is int or a[2] is not None:
                return top
            top = table[below][a[1]]


def _end_token(src):
    lines = src.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    ln = max(1, len(lines))
    col = len(lines[-1]) + 1 if lines else 1
    return Tok("$END", "", ln, col, ln, col, len(src), len(src))


def _get_engine() -> _Engine:
    global _engine
    if _engine is None:
        with _lock:
            if _engine is None:
                _engine = _Engine(_load_tables())
    return _engine


# ============================================================================ API

def _prepare(source: str) -> str:
    if not isinstance(source, str):
        raise TypeError(f"source must be str, not {type(source).__name__}")
    if "\r" in source:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    if source.startswith("\ufeff"):
        source = source[1:]
    if "\0" in source:
        i = source.index("\0")
        line = source.count("\n", 0, i) + 1
        col = i - (source.rfind("\n", 0, i) + 1) + 1
        raise _syntax("source code cannot contain null bytes", line, col, line, col + 1)
    if not source.endswith("\n"):
        source += "\n"
    return source


def _run(source, start, filename):
    lim = limits.current().max_depth
    gc_was_enabled = gc.isenabled()
    try:
        src = _prepare(source)
        eng = _get_engine()
        with _lock:
            saved = _MAX_DEPTH[0], _NUMBERS[0]
            _MAX_DEPTH[0] = lim
            _NUMBERS[0] = {}
            # The tree holds no cycles; Python's collector would only rescan it, again and
            # again as it grows (tens of times slower on big programs).
            gc.disable()
            try:
                return eng.run(src, start), src
            finally:
                _MAX_DEPTH[0], _NUMBERS[0] = saved
                if gc_was_enabled:
                    gc.enable()
    except _Fail as f:
        err = f.error
        end_col = f.end_col if (f.end_line is None or f.end_line == f.line) else None
        err.at(filename, f.line, f.col, end_col)
        raise err from None
    except RecursionError:
        err = limits.exceeded("nesting depth", lim, "max_depth") if lim else \
            errors.RecursionError("maximum recursion depth exceeded while parsing")
        raise err.at(filename, 1, 1) from None


def parse(source: str, filename: str = "<string>") -> ast.Module:
    """Parse a whole program. Raises ``gradexpr.errors.SyntaxError`` (or ``LimitError``)."""
    _SAW_YIELD[0] = False
    module, _src = _run(source_file.check(source), "file_input", filename)
    try:
        _check_module(module.body, filename)
    except _Fail as f:
        raise f.error.at(filename, f.line, f.col, f.end_col if f.end_line == f.line else None) from None
    return module


def parse_expression(source: str, filename: str = "<string>") -> ast.Expr:
    """Parse one expression (e.g. a ``-v NAME=VALUE`` value). A bare tuple ``1, 2`` is allowed."""
    node, _src = _run(source, "eval_input", filename)
    return node

