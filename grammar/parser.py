"""Parse gradexpr source into a :mod:`gradexpr.grammar.ast` tree.

``parse(source, filename)`` returns an ``ast.Module``; ``parse_expression`` one expression.
Every syntax error is a ``gradexpr.errors.SyntaxError`` located at the offending spot;
a program nested deeper than ``limits.max_depth`` raises ``gradexpr.errors.LimitError``.

How it works. ``gradexpr.lark`` is compiled by Lark into an LALR(1) table *ahead of time*:
``tools/gen_parser_tables.py`` writes everything parsing needs -- the scanner's terminals
(regexes in match order, keywords, ignored terminals, which terminals can start with each
ASCII character), the table, its start and end states, and for every rule a recipe of the
callback Lark builds for it -- into ``_tables.py`` as plain literals, with a checksum of
the grammar file. On first use the checksum of ``gradexpr.lark`` is compared with the
recorded one (a read and a CRC-32, well under a millisecond): if they match, the parser is
built from ``_tables.py`` and Lark is never imported. If not (the grammar was edited and the
tables not regenerated), Lark compiles the grammar as before (its ``cache=`` file lives in
``$XDG_CACHE_HOME/gradexpr/``, else ``~/.cache/gradexpr/``, else the temp dir) and the same
data is derived from it in memory, so the two ways cannot disagree. After editing the
grammar, regenerate with::

    python tools/gen_parser_tables.py          # --check: only report whether it is stale

The AST is built *while parsing*: each reduction calls the rule's callback, made from its
recipe the way Lark's ``ParseTreeBuilder`` makes it (child filter with ``[..]``
placeholders and ``_rule`` inlining, single-child expansion of ``?rule``) around the
``_Builder`` method named after the rule or alias. No parse tree exists (the helper rules
Lark makes for ``x*`` give bare lists, which their parent inlines). One loop scans (trying
the terminals a token's first character allows: fixed texts by comparison, the others by
their regexes, compiled when first needed), applies Python's indentation and bracket rules,
and drives the LALR table; where a reduction leads (the goto and any chain of single-child
``?rule`` reductions after it) is worked out once per table entry and state below, and
remembered. ``_parse_with_lark`` runs Lark's own lexer and LALR parser with the same
builder (on a ``lark.Transformer``) and ``GxIndenter`` postlexer; the tests use it to
cross-check the fast path.

Files: this module holds the tables (loading, and deriving them from Lark), the scanner
and LALR loop (``_Engine``) and the API; ``tokens.py`` the tokens and syntax-error carrier,
``callbacks.py`` the reduction callbacks made from recipes, ``indentation.py`` Python's
indentation and bracket rules, ``builder.py`` the AST builder, ``literals.py`` numbers and
strings, ``fstrings.py`` f-strings, ``syntax_errors.py`` the wording of syntax errors and
Python's compile-time checks.

Importing this module does not import Lark (nor does parsing, normally). The garbage
collector is paused while parsing (the tree has no cycles; rescanning it as it grows made
big programs many times slower).
"""
from __future__ import annotations

import _thread
import gc
import os
import re
import sys

from gradexpr import errors, limits

from . import ast
from .builder import _MAX_DEPTH, _NUMBERS, _SAW_YIELD, _Builder, _lark_builder
from .callbacks import _Tree, _bare_origins, _make_callback  # noqa: F401 - _Tree: the tests build with it
from .indentation import _CLOSE, _CLOSE_OF, _OPEN, _SPECIAL, GxIndenter, _bracket, _check_first, _indentation
from .syntax_errors import _check_module, _lex_error, _unexpected
from .tokens import Tok, _at, _Fail, _syntax

__all__ = ["parse", "parse_expression", "GRAMMAR_PATH"]

GRAMMAR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gradexpr.lark")


# ============================================================================ the tables

TABLES_FORMAT = 1       # bump when the layout of the data below changes

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
#               of each rule's callback (see _make_callback)
#   STATES      the row of each state, a string "symbol action symbol action ..." (one
#               constant per state loads several times faster than tuples of them; a row is
#               read when the parser first needs it): action >= 0 shifts (terminals) or goes
#               (nonterminals) to that state, action < 0 reduces by RULES[~action]
#   START_STATES, END_STATES   {start symbol: state}
TABLE_FIELDS = ("GRAMMAR_CHECKSUM", "TERMINALS", "SPACES", "KEYWORDS", "IGNORE", "DISPATCH",
                "TERM_TEXT", "TERM_CHOICES", "RULES", "STATES", "START_STATES", "END_STATES")

_LARK_OPTIONS = dict(parser="lalr", lexer="basic", start=["file_input", "eval_input"],
                     maybe_placeholders=True)


def _grammar_checksum(data: bytes) -> str:
    """A cheap fingerprint of the grammar file's bytes (zlib is ~0.4 ms to import, hashlib's
    OpenSSL ~5 ms; this only has to notice an edit, not resist an adversary)."""
    import zlib
    return f"crc32:{zlib.crc32(data):08x}:{len(data)}"


def _read_grammar() -> bytes:
    with open(GRAMMAR_PATH, "rb") as f:
        return f.read()


def _cache_file(grammar_text: str):
    """A writable cache path outside the package for Lark's compiled grammar, or None."""
    import hashlib
    import tempfile

    import lark
    key = hashlib.sha256((grammar_text + lark.__version__ + sys.version).encode()).hexdigest()[:20]
    candidates = []
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        candidates.append(os.path.join(xdg, "gradexpr"))
    home = os.path.expanduser("~")
    if home and home != "~":
        candidates.append(os.path.join(home, ".cache", "gradexpr"))
    candidates.append(os.path.join(tempfile.gettempdir(), f"gradexpr-{os.getuid() if hasattr(os, 'getuid') else 'u'}"))
    for d in candidates:
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
            st = os.stat(d)
            # Lark unpickles its cache file: only trust a directory that is ours and that
            # nobody else can write to (matters for the shared temp dir).
            if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
                continue
            if os.access(d, os.W_OK | os.X_OK):
                return os.path.join(d, f"grammar-{key}.lark-cache")
        except OSError:
            continue
    return None


def _build_lark(text: str, transformer=None, postlex=None, cache=True):
    """Lark's LALR parser for grammar ``text`` (with Lark's cache file unless ``cache`` is
    false; an unusable cache is skipped)."""
    import lark

    opts = dict(_LARK_OPTIONS, transformer=transformer, postlex=postlex)
    path = None
    if cache:
        try:
            path = _cache_file(text)
        except Exception:
            path = None
    try:
        return lark.Lark(text, cache=path or False, **opts)
    except Exception:
        if not path:
            raise
        return lark.Lark(text, cache=False, **opts)   # an unreadable/unwritable cache


def _tables_from_lark(lk, checksum: str) -> dict:
    """The tables (see TABLE_FIELDS) of the Lark LALR parser ``lk``. Deterministic: states
    are renumbered in breadth-first order from the start states, so the result does not
    depend on Lark's (hash-seed dependent) numbering."""
    from lark.parsers.lalr_analysis import Shift

    # ---------------------------------------------------------------- the scanner
    terms = list(lk.terminals)
    ignore = set(lk.lexer_conf.ignore)
    name_full = re.compile(next(t for t in terms if t.name == "NAME").pattern.to_regexp())
    keywords = {}
    scanned = []
    for t in terms:
        p = t.pattern
        if type(p).__name__ == "PatternStr" and t.priority == 0 and name_full.fullmatch(p.value):
            keywords[str(p.value)] = str(t.name)    # matched as NAME, then renamed
        else:
            scanned.append(t)
    # Lark's basic lexer's order of preference
    scanned.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    # Blank space between tokens (the %ignore'd terminals that match a space) is skipped
    # before each token.
    spaces = [t for t in scanned if t.name in ignore and re.fullmatch(t.pattern.to_regexp(), " \t")]
    scanned = [t for t in scanned if t not in spaces]
    skip = "|".join(t.pattern.to_regexp() for t in spaces)
    firsts = [_first_ascii(t.pattern.to_regexp()) for t in scanned]
    dispatch = {}
    for code in range(128):
        ch = chr(code)
        if ch not in " \t\f":
            idx = tuple(i for i, f in enumerate(firsts) if f is None or ch in f)
            if idx:
                dispatch[ch] = idx

    # ---------------------------------------------------------------- the callbacks
    rules = list(lk.rules)
    rule_index = {r: i for i, r in enumerate(rules)}
    assert len(rule_index) == len(rules), "duplicate rules"

    # ---------------------------------------------------------------- the table
    pt = lk.parser.parser._parse_table
    starts = sorted(pt.start_states)
    order = [pt.start_states[s] for s in starts]
    number = {}
    for s in order:
        number.setdefault(s, len(number))
    i = 0
    while i < len(order):
        row = pt.states[order[i]]
        for sym in sorted(row):
            action, arg = row[sym]
            if action is Shift and arg not in number:
                number[arg] = len(number)
                order.append(arg)
        i += 1
    for s in pt.end_states.values():
        if s not in number:
            number[s] = len(number)
            order.append(s)
    assert len(number) == len(pt.states), "unreachable parser states"
    states = []
    for s in order:
        row = sorted(pt.states[s].items())
        assert not any(" " in sym for sym, _ in row)
        states.append(" ".join(f"{sym} {number[arg] if action is Shift else ~rule_index[arg]}"
                               for sym, (action, arg) in row))

    return {
        "GRAMMAR_CHECKSUM": checksum,
        "TERMINALS": tuple((str(t.name), str(t.pattern.to_regexp())) for t in scanned),
        "SPACES": "".join(c for c in " \t\f" if skip and re.fullmatch(f"(?:{skip})", c)),
        "KEYWORDS": dict(sorted(keywords.items())),
        "IGNORE": tuple(sorted(str(t) for t in ignore)),
        "DISPATCH": dispatch,
        "TERM_TEXT": {str(t.name): str(t.pattern.value) for t in sorted(terms, key=lambda t: t.name)
                      if type(t.pattern).__name__ == "PatternStr"},
        "TERM_CHOICES": {str(t.name): choices for t in scanned if type(t.pattern).__name__ != "PatternStr"
                         for choices in [_literal_alternatives(t.pattern.to_regexp())] if choices},
        "RULES": tuple(_rule_recipe(r) for r in rules),
        "STATES": tuple(states),
        "START_STATES": {str(s): number[pt.start_states[s]] for s in starts},
        "END_STATES": {str(s): number[pt.end_states[s]] for s in sorted(pt.end_states)},
    }


def _rule_recipe(rule):
    """How Lark (``lark/parse_tree_builder.py``, LALR, ``maybe_placeholders=True``, no
    ``propagate_positions``) builds the callback of ``rule``, as plain data:
    ``(origin, callback name, length, expand1, child filter)``.

    The user callback is the transformer's attribute named after the rule's alias, template
    or origin (else a tree of that name). ``expand1`` (a ``?rule`` without alias) wraps it
    to return a lone child as it is. The child filter, if any, is ``(keep, trailing)``:
    ``keep`` lists ``(index, inlined, nones)`` for each child kept -- ``nones`` placeholders
    (``None``, for an absent ``[item]``) go in front of it, and a child that is a ``_rule``
    (``inlined`` is its name, else None) contributes its children instead of itself -- and
    ``trailing`` placeholders end the list. Terminals marked filter_out (anonymous punctuation, ``_TERMINALS``) are
    dropped unless the rule keeps all tokens (``!rule``)."""
    opts = rule.options
    expansion = rule.expansion
    n = len(expansion)
    empty = opts.empty_indices
    if empty:
        # empty_indices has a True for each absent optional item and a False for each
        # symbol present: the run of Trues before symbol i (and at the end) is how many
        # placeholders go there
        runs = [len(ones) for ones in "".join("1" if b else "0" for b in empty).split("0")]
        assert len(runs) == n + 1
    else:
        runs = [0] * (n + 1)
    keep = []
    pending = 0
    for i, sym in enumerate(expansion):
        pending += runs[i]
        if opts.keep_all_tokens or not (sym.is_term and sym.filter_out):
            keep.append((i, str(sym.name) if not sym.is_term and sym.name.startswith("_") else None, pending))
            pending = 0
    pending += runs[n]
    changes = bool(empty) or len(keep) < n or any(inlined for _, inlined, _ in keep)
    child_filter = (tuple(keep), pending) if changes else None
    name = rule.alias or opts.template_source or rule.origin.name
    return (str(rule.origin.name), str(name), n, bool(opts.expand1 and not rule.alias), child_filter)


def _load_tables():
    """-> (tables, None) from _tables.py if they are those of the grammar file, else
    (tables, (Lark parser, builder, postlexer)) derived from Lark's compilation of it."""
    data = _read_grammar()
    checksum = _grammar_checksum(data)
    try:
        from . import _tables as generated
    except ImportError:
        generated = None
    if (generated is not None and getattr(generated, "FORMAT", None) == TABLES_FORMAT
            and getattr(generated, "GRAMMAR_CHECKSUM", None) == checksum):
        return {k: getattr(generated, k) for k in TABLE_FIELDS}, None
    # The grammar was edited (or the tables are from an older format): let Lark compile it.
    bundle = _make_lark_bundle(data)
    return _tables_from_lark(bundle[0], checksum), bundle


def fresh_tables(cache=False) -> dict:
    """The tables of ``gradexpr.lark`` as Lark compiles it now (needs Lark). Used by
    ``tools/gen_parser_tables.py`` and by the test that the committed tables are current."""
    data = _read_grammar()
    # the postlexer matters: its always_accept keeps terminals the grammar does not use
    lk = _build_lark(data.decode("utf-8"), postlex=GxIndenter(), cache=cache)
    return _tables_from_lark(lk, _grammar_checksum(data))


def _literal_alternatives(pattern):
    """The texts regex ``pattern`` matches, in the order it tries them, if it is only literal
    text or a choice of literal texts (``a|bc|d``); else None."""
    try:
        import re._parser as sre
    except ImportError:             # Python 3.10
        import sre_parse as sre

    def text(items):
        if all(op is sre.LITERAL for op, _ in items):
            return "".join(chr(av) for _, av in items)
        return None

    try:
        items = list(sre.parse(pattern))
    except Exception:
        return None
    while len(items) == 1 and items[0][0] is sre.SUBPATTERN and not items[0][1][1] and not items[0][1][2]:
        items = list(items[0][1][3])        # a group without flags
    if len(items) == 1 and items[0][0] is sre.BRANCH:
        out = [text(list(alt)) for alt in items[0][1][1]]
    else:
        out = [text(items)]
    if not out or None in out or "" in out:
        return None
    return tuple(out)


def _first_ascii(pattern):
    """The ASCII characters a match of regex ``pattern`` can start with, or None for "any"
    (an over-approximation is harmless; it only has to include every possible one)."""
    try:
        import re._parser as sre
    except ImportError:             # Python 3.10
        import sre_parse as sre
    c = sre         # the opcode constants are re-exported by the parser module
    ascii_chars = [chr(i) for i in range(128)]

    def in_set(items):
        parts, neg = [], False
        for op, av in items:
            if op is c.NEGATE:
                neg = True
            elif op is c.LITERAL:
                parts.append(re.escape(chr(av)))
            elif op is c.RANGE:
                parts.append(re.escape(chr(av[0])) + "-" + re.escape(chr(av[1])))
            elif op is c.CATEGORY:
                cat = {c.CATEGORY_DIGIT: r"\d", c.CATEGORY_NOT_DIGIT: r"\D", c.CATEGORY_SPACE: r"\s",
                       c.CATEGORY_NOT_SPACE: r"\S", c.CATEGORY_WORD: r"\w", c.CATEGORY_NOT_WORD: r"\W"}.get(av)
                if cat is None:
                    return None
                parts.append(cat)
            else:
                return None
        cls = re.compile("[" + ("^" if neg else "") + "".join(parts) + "]")
        return {ch for ch in ascii_chars if cls.match(ch)}

    def seq(items):
        """-> (first chars | None, nullable)"""
        out = set()
        for op, av in items:
            f, nullable = item(op, av)
            if f is None:
                return None, False
            out |= f
            if not nullable:
                return out, False
        return out, True

    def item(op, av):
        if op is c.LITERAL:
            return {chr(av)} if av < 128 else set(), False
        if op is c.IN:
            return in_set(av), False
        if op is c.BRANCH:
            out, nullable = set(), False
            for alt in av[1]:
                f, n = seq(alt)
                if f is None:
                    return None, False
                out |= f
                nullable = nullable or n
            return out, nullable
        if op is c.SUBPATTERN:
            if av[1] or av[2]:          # inline flags
                return None, False
            return seq(av[3])
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) or op is getattr(c, "POSSESSIVE_REPEAT", None):
            f, n = seq(av[2])
            return f, n or av[0] == 0
        if op is getattr(c, "ATOMIC_GROUP", None):
            return seq(av)
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            return set(), True
        return None, False

    try:
        f, _ = seq(list(sre.parse(pattern)))
    except Exception:
        return None
    return frozenset(f) if f is not None else None


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
    """The scanner, the LALR table with its callbacks, and (on demand) Lark's own parser."""

    def __init__(self, tables, lark_bundle=None):
        self._lark_bundle = lark_bundle     # (Lark, its builder, its postlexer) once made
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

    # ------------------------------------------------------------------ Lark's parser
    def lark_bundle(self):
        """(Lark parser, its builder, its postlexer), built on first use."""
        if self._lark_bundle is None:
            with _lock:
                if self._lark_bundle is None:
                    self._lark_bundle = _make_lark_bundle()
        return self._lark_bundle

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
        (as ``tokenize``), the indentation and bracket rules (as ``GxIndenter``) and the LALR
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
            o = brackets[-1]
            raise _at(o, f"unclosed '{o.value}' opened at {o.line}:{o.col}")
        ln = tok.end_line if tok is not None else 1
        while len(blocks) > 1:
            blocks.pop()
            feed(Tok("_DEDENT", "", ln, 1, ln, 1), states, values, brackets, src)

        end_state = self.end_states[start]
        while True:
            a = table[states[-1]].get("$END")
            if a is None:  # noqa
                raise _unexpected(_end_token(src), table[states[-1]], values, brackets, src)
            if a.__class__ is int:      # pragma: no cover - $END is never shifted
                raise _at(_end_token(src), "invalid syntax")
            back, origin, cb, _memo = a
            if cb is None:
                states[-1] = table[states[-2]][origin]
            else:
                if back:
                    children = values[back:]
                    del values[back:]
                    del states[back:]
                else:
                    children = []
                values.append(cb(children))
                states.append(table[states[-1]][origin])
            if states[-1] == end_state:
                return values[-1]

    def _feed(self, tok, states, values, brackets, src):
        """Shift ``tok``, after the reductions it calls for."""
        table = self.table
        tt = tok.type
        while True:
            a = table[states[-1]].get(tt)
            if a is None:
                raise _unexpected(tok, table[states[-1]], values, brackets, src)
            if a.__class__ is int:
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
                continue
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

    def _run_lark(self, src, start):
        """Lark's own lexer and LALR loop (a cross-check in the tests)."""
        import lark
        lk, _builder, indenter = self.lark_bundle()
        indenter.src = src
        try:
            return lk.parse(src, start=start)
        except lark.exceptions.UnexpectedToken as e:
            tok = e.token
            if tok.type == "$END":
                tok = _end_token(src)
            elif not isinstance(tok, Tok):
                tok = Tok(tok.type, tok.value, tok.line, tok.column, tok.end_line, tok.end_column)
            row = e.state.parse_conf.states[e.state.position] if e.state is not None else {}
            raise _unexpected(tok, row, e.state.value_stack if e.state else [], indenter.brackets,
                              src) from None
        except lark.exceptions.UnexpectedCharacters as e:
            raise _lex_error(src, e.pos_in_stream, e.line, e.column) from None
        except lark.exceptions.VisitError as e:     # pragma: no cover
            raise e.orig_exc from None


def _make_lark_bundle(data=None):
    """Lark's parser of the grammar file with our builder and postlexer."""
    if data is None:
        data = _read_grammar()
    builder, indenter = _lark_builder(), GxIndenter()
    lk = _build_lark(data.decode("utf-8"), transformer=builder, postlex=indenter)
    return lk, builder, indenter


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
                tables, bundle = _load_tables()
                _engine = _Engine(tables, bundle)
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
    module, _src = _run(source, "file_input", filename)
    try:
        _check_module(module.body, filename)
    except _Fail as f:
        raise f.error.at(filename, f.line, f.col, f.end_col if f.end_line == f.line else None) from None
    return module


def parse_expression(source: str, filename: str = "<string>") -> ast.Expr:
    """Parse one expression (e.g. a ``-v NAME=VALUE`` value). A bare tuple ``1, 2`` is allowed."""
    node, _src = _run(source, "eval_input", filename)
    return node


def _parse_with_lark(source: str, filename: str = "<string>", start: str = "file_input"):
    """``parse`` (or, with ``start="eval_input"``, ``parse_expression``) by Lark's own lexer
    and LALR loop, with the same grammar, builder and indentation rules. Slower (and it
    imports Lark); the tests use it to cross-check the fast path."""
    eng = _get_engine()
    lim = limits.current().max_depth
    try:
        src = _prepare(source)
        with _lock:
            saved = _MAX_DEPTH[0], _NUMBERS[0]
            _MAX_DEPTH[0] = lim
            _NUMBERS[0] = {}
            try:
                node = eng._run_lark(src, start)
            finally:
                _MAX_DEPTH[0], _NUMBERS[0] = saved
        if start == "file_input":
            _check_module(node.body, filename)
        return node
    except _Fail as f:
        err = f.error
        end_col = f.end_col if (f.end_line is None or f.end_line == f.line) else None
        raise err.at(filename, f.line, f.col, end_col) from None
