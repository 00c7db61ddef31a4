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

Importing this module does not import Lark (nor does parsing, normally). The garbage
collector is paused while parsing (the tree has no cycles; rescanning it as it grows made
big programs many times slower).
"""
from __future__ import annotations

import _thread
import codecs
import gc
import operator
import os
import re
import sys
import warnings

from gradexpr import errors, limits

from . import ast

__all__ = ["parse", "parse_expression", "GRAMMAR_PATH"]

GRAMMAR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gradexpr.lark")


# ============================================================================ tokens

class Tok:
    """A token: a light stand-in for ``lark.Token`` (same ``type``/``value``/positions)."""

    __slots__ = ("type", "value", "line", "col", "end_line", "end_col", "start_pos", "end_pos")

    def __init__(self, type, value, line, col, end_line, end_col, start_pos=None, end_pos=None):
        self.type = type
        self.value = value
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col
        self.start_pos = start_pos
        self.end_pos = end_pos

    # lark.Token's names, for Lark's own error paths
    @property
    def column(self):
        return self.col

    @property
    def end_column(self):
        return self.end_col

    def __repr__(self):
        return f"Tok({self.type!r}, {self.value!r}, {self.line}:{self.col})"


class _Fail(Exception):
    """An error found while parsing, located; ``parse`` turns it into the user-visible error."""

    def __init__(self, error, line, col, end_line=None, end_col=None):
        super().__init__(error)
        self.error = error
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


def _syntax(message, line, col, end_line=None, end_col=None):
    return _Fail(errors.SyntaxError(message), line, col, end_line, end_col)


def _at(x, message):
    """A syntax failure spanning node or token ``x``."""
    return _syntax(message, x.line, x.col, x.end_line, x.end_col)


def _too_deep(what, line, col, end_line=None, end_col=None):
    lim = limits.current().max_depth
    return _Fail(limits.exceeded(what, lim, "max_depth"), line, col, end_line, end_col)


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


# ============================================================================ callbacks from recipes

class _Tree:
    """What Lark's ``Transformer.__default__`` makes for a rule that has no ``_Builder``
    method (except for the rules whose values are bare lists, see ``_bare_origins``)."""

    __slots__ = ("data", "children")

    def __init__(self, data, children):
        self.data = data
        self.children = children

    def __repr__(self):
        return f"_Tree({self.data!r}, {self.children!r})"


def _bare_origins(builder, recipes):
    """The ``_rule``s none of whose callbacks is a ``builder`` method or ``?``-expanded: the
    helpers Lark makes for ``x*``/``x+``. Their trees are only ever inlined into the parent
    rule (Lark's filter takes their children), so their value is the list of children
    itself, without the tree around it -- the same lists, one object less per reduction."""
    out = set()
    notbare = set()
    for origin, name, _length, expand1, _filter in recipes:
        if origin.startswith("_") and not expand1 and getattr(builder, name, None) is None:
            out.add(origin)
        else:
            notbare.add(origin)
    return frozenset(out - notbare)


def _same(x):
    return x


def _make_callback(builder, recipe, bare=frozenset()):
    """The callback of a rule (see ``_rule_recipe``): what Lark builds for it with
    ``transformer=builder`` -- except that the rules in ``bare`` (see ``_bare_origins``) make
    the list of their children, not a tree of it."""
    origin, name, length, expand1, child_filter = recipe
    user = getattr(builder, name, None)
    if user is None and origin not in bare:
        def user(children, _name=name):
            return _Tree(_name, children)
    f = user
    if expand1:
        def f(children, _user=user):
            return children[0] if len(children) == 1 else _user(children)
    if child_filter is not None:
        return _child_filter(child_filter, f, bare, length)
    return f if f is not None else _same


def _child_filter(spec, inner, bare, length):
    """``inner`` (None: nothing, the list is the value) behind the child filter
    ``spec = (keep, trailing)`` of ``_rule_recipe`` for a rule of ``length`` symbols, where
    the values of the rules in ``bare`` are lists of children already. The callbacks receive
    a fresh list, which the filter may reuse."""
    keep, trailing = spec
    fin = inner if inner is not None else _same
    if not any(inlined for _, inlined, _ in keep):
        # Only dropping children and adding placeholders: pick by index
        picks = []
        for i, _inlined, nones in keep:
            picks += [-1] * nones + [i]
        picks += [-1] * trailing
        if not picks:
            def f(children):
                return fin([])
            return f
        if len(picks) == 1 and picks[0] >= 0:
            (a,) = picks
            if inner is None:
                def f(children):
                    return [children[a]]
            else:
                def f(children):
                    return inner([children[a]])
            return f
        if len(picks) == 2 and -1 not in picks:
            a, b = picks
            if inner is None:
                def f(children):
                    return [children[a], children[b]]
            else:
                def f(children):
                    return inner([children[a], children[b]])
            return f
        if -1 not in picks:
            get = operator.itemgetter(*picks)

            def f(children):
                return fin(list(get(children)))
            return f
        # placeholders: index len(children) (the rule's length) is a None appended to them
        get = operator.itemgetter(*[length if i < 0 else i for i in picks])
        if len(picks) == 1:
            def f(children):
                children.append(None)
                return fin([get(children)])
        else:
            def f(children):
                children.append(None)
                return fin(list(get(children)))
        return f
    # the usual shapes of rules with a repetition, e.g. ``x ("," x)*``, first
    shape = tuple((inlined is not None, nones) for _, inlined, nones in keep) + (trailing,)
    if shape == ((True, 0), (False, 0), 0):      # Lark's helper ``_x: _x "," x``
        (a, sa, _), (b, _, _) = keep
        if sa in bare and inner is None:
            def f(children):
                out = children[a]
                out.append(children[b])
                return out
        elif sa in bare:
            def f(children):
                out = children[a]
                out.append(children[b])
                return inner(out)
        else:
            def f(children):
                out = children[a].children
                out.append(children[b])
                return fin(out)
        return f
    if shape == ((True, 0), (False, 0), (False, 0), 0) and keep[0][1] in bare and inner is None:
        (a, _, _), (b, _, _), (c, _, _) = keep      # Lark's helper ``_x: _x OP x``

        def f(children):
            out = children[a]
            out.append(children[b])
            out.append(children[c])
            return out
        return f
    if shape == ((False, 0), (True, 0), 0):      # ``x _x``
        (a, _, _), (b, sb, _) = keep
        if sb in bare and inner is not None:
            def f(children):
                out = [children[a]]
                out += children[b]
                return inner(out)
        elif sb in bare:
            def f(children):
                out = [children[a]]
                out += children[b]
                return fin(out)
        else:
            def f(children):
                out = [children[a]]
                out += children[b].children
                return fin(out)
        return f
    if shape == ((True, 0), 0):                  # ``_x``, ``_x ","``
        (a, sa, _), = keep
        if sa in bare:
            def f(children):
                return fin(children[a])
        else:
            def f(children):
                return fin(children[a].children)
        return f

    entries = tuple((i, inlined is not None, inlined in bare, nones) for i, inlined, nones in keep)

    def f(children):
        out = []
        for i, inline, direct, nones in entries:
            if nones:
                out += [None] * nones
            if inline:
                kids = children[i] if direct else children[i].children
                if out:
                    out += kids
                else:       # as Lark does: take over the inlined child's list
                    out = kids
            else:
                out.append(children[i])
        if trailing:
            out += [None] * trailing
        return fin(out)
    return f


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


# ============================================================================ indentation

_OPEN = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
_CLOSE = {"RPAR": "(", "RSQB": "[", "RBRACE": "{"}
_CLOSE_OF = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_SPECIAL = frozenset(("_NEWLINE",) + tuple(_OPEN) + tuple(_CLOSE))

_UNSUPPORTED_TERMINALS = ("ASYNC", "AWAIT")


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
        lead = (src[tok.start_pos - tok.col + 1:tok.start_pos]
                if src is not None and tok.start_pos is not None else " ")
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


class GxIndenter:
    """The postlexer for Lark's own parser (``_parse_with_lark``): Python's INDENT/DEDENT,
    brackets (newlines inside them are continuations) and the block/bracket depth limits --
    the rules ``_Engine.run`` applies inline. Lark only needs ``process`` and
    ``always_accept`` (the terminals it must not drop: the unsupported keywords are lexed
    so that the error can name them)."""

    always_accept = ("_NEWLINE",) + _UNSUPPORTED_TERMINALS

    def __init__(self):
        self.brackets = []      # open bracket tokens, innermost last
        self.src = None         # the source being parsed, if known (see _check_first)

    def process(self, stream):
        self.brackets = brackets = []
        stream = (Tok(t.type, t.value, t.line, t.column, t.end_line, t.end_column, t.start_pos, t.end_pos)
                  for t in stream)
        return self._gen(stream, brackets, self.src)

    @staticmethod
    def _gen(stream, brackets, src):
        max_depth = limits.current().max_depth
        blocks = [(0, 0)]
        first = True
        tok = None
        for tok in stream:
            tt = tok.type
            if tt not in _SPECIAL and not first:
                yield tok
                continue
            if tt == "_NEWLINE":
                if brackets:
                    continue
                first = False
                yield tok
                extra, error = _indentation(tok, blocks, max_depth)
                yield from extra
                if error is not None:
                    raise error
                continue
            if first:
                first = False
                _check_first(tok, src)
            _bracket(tok, tt, brackets, max_depth)
            yield tok
        if brackets:
            o = brackets[-1]
            raise _at(o, f"unclosed '{o.value}' opened at {o.line}:{o.col}")
        ln = tok.end_line if tok is not None else 1
        while len(blocks) > 1:
            blocks.pop()
            yield Tok("_DEDENT", "", ln, 1, ln, 1)


# ============================================================================ error messages

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
    eng = _engine
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
            return _at(o, f"unclosed '{o.value}' opened at {o.line}:{o.col}")
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


# ============================================================================ literals

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
    eng = _get_engine()
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


# ============================================================================ the AST builder

_MAX_DEPTH = [200]      # set by parse() from limits.current().max_depth (0: unlimited)
# The values of the number literals seen so far in this parse, by text (None: not parsing).
# A program repeats the same few literals, and _number (the limits, the forms of numbers)
# costs more than the Constant; a value only depends on the text and the limits, which are
# fixed for the duration of a parse.
_NUMBERS = [None]
_SAW_YIELD = [False]    # a yield was built in this parse (else _check_module need not look)

_AUG_OPS = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "//=": "//", "%=": "%", "@=": "@",
            "**=": "**", "<<=": "<<", ">>=": ">>", "&=": "&", "|=": "|", "^=": "^"}

_TARGET_WORDS = {
    "Call": "function call", "Constant": "literal", "BinOp": "expression", "UnaryOp": "expression",
    "BoolOp": "expression", "Compare": "comparison", "IfExp": "conditional expression",
    "Lambda": "lambda", "JoinedStr": "f-string expression", "Dict": "dict literal",
    "Slice": "slice", "Starred": "starred expression",
}


_Name, _Keyword, _Starred = ast.Name, ast.Keyword, ast.Starred     # (one global lookup)


def _check_target(node, aug=False):
    t = type(node)
    if t is ast.Name or t is ast.Attribute or t is ast.Subscript:
        return
    if (t is ast.Tuple or t is ast.List) and not aug:
        starred = False
        for e in node.elts:
            if type(e) is _Starred:
                if starred:
                    raise _at(e, "multiple starred expressions in assignment")
                starred = True
                e = e.value
            _check_target(e)
        return
    if t is _Starred and not aug:
        raise _at(node, "starred assignment target must be in a list or tuple")
    if aug and (t is ast.Tuple or t is ast.List):
        word = "tuple" if t is ast.Tuple else "list"
        raise _at(node, f"invalid assignment target: '{word}' is an illegal expression for augmented assignment")
    if t is ast.Constant and (node.value is None or node.value is True or node.value is False):
        raise _at(node, f"invalid assignment target: cannot assign to {node.value!r}")
    if t is ast.Constant and node.value is Ellipsis:
        raise _at(node, "invalid assignment target: cannot assign to ellipsis")
    raise _at(node, f"invalid assignment target: cannot assign to {_TARGET_WORDS.get(t.__name__, 'expression')}")


def _depth(d, node):
    """Check the depth ``d`` of a new node against the limit."""
    lim = _MAX_DEPTH[0]
    if lim and d > lim:
        raise _too_deep("expression nesting depth", node.line, node.col, node.end_line, node.end_col)
    return d


def _deepest(nodes):
    """The greatest depth of ``nodes`` (0 if none)."""
    d = 0
    for n in nodes:
        if n.depth > d:
            d = n.depth
    return d


def _flatten(items):
    out = []
    for x in items:
        if x is None:
            continue
        if type(x) is list:
            out.extend(x)
        elif not isinstance(x, Tok):
            out.append(x)
    return out


class _Builder:
    """One method per rule (or alias) of gradexpr.lark; each receives the rule's kept
    children and returns an AST node (or a helper value for inner rules)."""

    # ------------------------------------------------------------ module
    def file_input(self, c):
        body = _flatten(c)
        if body:
            return ast.Module(body, 1, 1, body[-1].end_line, body[-1].end_col)
        return ast.Module([], 1, 1, 1, 1)

    def eval_input(self, c):
        for x in c:
            if isinstance(x, ast.Node):
                return x
        raise AssertionError("no expression")  # pragma: no cover

    # ------------------------------------------------------------ simple statements
    def simple_stmt(self, c):
        if len(c) == 1:         # the usual one statement a line
            x = c[0]
            return [] if x is None or isinstance(x, Tok) else [x]
        return [x for x in c if x is not None and not isinstance(x, Tok)]

    def expr_stmt(self, c):
        v = c[0]
        if v.__class__ is _Starred:
            raise _at(v, "can't use starred expression here")
        return ast.ExprStmt(v, v.line, v.col, v.end_line, v.end_col)

    def assign_stmt(self, c):
        *targets, value = c
        for t in targets:
            if t.__class__ is not _Name:        # (a name is fine: the usual target)
                _check_target(t)
        f = targets[0]
        if value.__class__ is _Starred:
            raise _at(value, "can't use starred expression here")
        return ast.Assign(targets, value, f.line, f.col, value.end_line, value.end_col)

    def annassign_stmt(self, c):
        target, _colon, annotation, value = c
        if type(target) not in (ast.Name, ast.Attribute, ast.Subscript):
            word = {ast.Tuple: "tuple", ast.List: "list"}.get(type(target))
            raise _at(target, f"only single target (not {word}) can be annotated" if word
                      else "illegal target for annotation")
        e = value if value is not None else annotation
        return ast.AnnAssign(target, annotation, value, target.line, target.col, e.end_line, e.end_col)

    def raise_stmt(self, c):
        k, exc, cause = c
        e = cause or exc or k
        return ast.Raise(exc, cause, k.line, k.col, e.end_line, e.end_col)

    def global_stmt(self, c, node=ast.Global):
        k, names = c[0], c[1:]
        return node([n.value for n in names], k.line, k.col, names[-1].end_line, names[-1].end_col)

    def nonlocal_stmt(self, c):
        return self.global_stmt(c, ast.Nonlocal)

    def del_stmt(self, c):
        k, target = c
        targets = target.elts if type(target) is ast.Tuple else [target]
        for t in targets:
            if type(t) is _Starred:
                raise _at(t, "cannot delete starred")
            _check_target(t)
        return ast.Delete(targets, k.line, k.col, target.end_line, target.end_col)

    def augassign_stmt(self, c):
        target, op, value = c
        _check_target(target, aug=True)
        return ast.AugAssign(target, _AUG_OPS[op.value], value, target.line, target.col,
                             value.end_line, value.end_col)

    def pass_stmt(self, c):
        k = c[0]
        return ast.Pass(k.line, k.col, k.end_line, k.end_col)

    def break_stmt(self, c):
        k = c[0]
        return ast.Break(k.line, k.col, k.end_line, k.end_col)

    def continue_stmt(self, c):
        k = c[0]
        return ast.Continue(k.line, k.col, k.end_line, k.end_col)

    def return_stmt(self, c):
        k, v = c
        e = v if v is not None else k
        return ast.Return(v, k.line, k.col, e.end_line, e.end_col)

    def assert_stmt(self, c):
        k, test, msg = c
        e = msg if msg is not None else test
        return ast.Assert(test, msg, k.line, k.col, e.end_line, e.end_col)

    # ------------------------------------------------------------ imports
    def dotted_name(self, c):
        return (".".join(t.value for t in c), c[0], c[-1])

    def dotted_as_name(self, c):
        (name, first, last), asname = c
        e = asname if asname is not None else last
        return ast.Alias(name, asname.value if asname is not None else None,
                         first.line, first.col, e.end_line, e.end_col)

    def import_as_name(self, c):
        name, asname = c
        e = asname if asname is not None else name
        return ast.Alias(name.value, asname.value if asname is not None else None,
                         name.line, name.col, e.end_line, e.end_col)

    def import_as_names(self, c):
        return [x for x in c if x is not None]

    def import_name(self, c):
        k = c[0]
        names = c[1:]
        e = names[-1]     # which modules exist is the interpreter's to say (grammar/modules)
        return ast.Import(names, k.line, k.col, e.end_line, e.end_col)

    def import_from(self, c):
        k, (module, first, last), _imp, what = c
        if isinstance(what, Tok):       # '*'
            names = [ast.Alias("*", None, what.line, what.col, what.end_line, what.end_col)]
        else:
            names = what
        root = module.split(".")[0]
        if root == "builtins" and module == "builtins":
            from .builtins import BUILTINS
            for a in names:
                if a.name not in BUILTINS:
                    raise _at(a, f"import of 'builtins.{a.name}' is not supported in gradexpr")
        e = names[-1]
        return ast.ImportFrom(module, names, k.line, k.col, e.end_line, e.end_col)

    # ------------------------------------------------------------ compound statements
    def suite(self, c):
        return _flatten(c)

    def elif_clause(self, c):
        return c

    def else_clause(self, c):
        return ("else", c[0])

    def if_stmt(self, c):
        k, test, body = c[0], c[1], c[2]
        rest = c[3:]
        orelse = []
        if rest and isinstance(rest[-1], tuple):
            orelse = rest[-1][1]
            rest = rest[:-1]
        elif rest and rest[-1] is None:
            rest = rest[:-1]
        for ek, etest, ebody in reversed(rest):
            end = (orelse or ebody)[-1]
            orelse = [ast.If(etest, ebody, orelse, ek.line, ek.col, end.end_line, end.end_col)]
        end = (orelse or body)[-1]
        return ast.If(test, body, orelse, k.line, k.col, end.end_line, end.end_col)

    def while_stmt(self, c):
        k, test, body, els = c
        orelse = els[1] if els is not None else []
        end = (orelse or body)[-1]
        return ast.While(test, body, orelse, k.line, k.col, end.end_line, end.end_col)

    def for_stmt(self, c):
        k, target, it, body, els = c
        _check_target(target)
        orelse = els[1] if els is not None else []
        end = (orelse or body)[-1]
        return ast.For(target, it, body, orelse, k.line, k.col, end.end_line, end.end_col)

    def funcdef(self, c):
        k, name, params, _returns, body = c
        args = params if params is not None else ast.Arguments([], None, [], None, name.line, name.col,
                                                               name.end_line, name.end_col)
        end = body[-1]
        return ast.FunctionDef(name.value, args, body, k.line, k.col, end.end_line, end.end_col)

    def classdef(self, c):
        k, name = c[0], c[1]
        body = c[-1]
        arglist = next((x for x in c[2:-1] if type(x) is list), None) or []
        bases = [a for a in arglist if type(a) is not _Keyword]
        keywords = [a for a in arglist if type(a) is _Keyword]
        for a in bases:
            if type(a) is ast.GeneratorExp:
                raise _at(a, "invalid syntax: a class's bases cannot be a generator expression")
        end = body[-1]
        return ast.ClassDef(name.value, bases, keywords, body, k.line, k.col, end.end_line, end.end_col)

    def decorator(self, c):
        return c[1]

    def decorated(self, c):
        *decorators, definition = c
        f = decorators[0]
        return ast.Decorated(decorators, definition, f.line, f.col - 1, definition.end_line, definition.end_col)

    def except_clause(self, c):
        k, typ, name, body = c
        end = body[-1]
        return ast.ExceptHandler(typ, name.value if name is not None else None, body,
                                 k.line, k.col, end.end_line, end.end_col)

    def finally_clause(self, c):
        return ("finally", c[1])

    def try_stmt(self, c):
        k, body = c[0], c[1]
        handlers, orelse, finalbody = [], [], []
        for x in c[2:]:
            if type(x) is ast.ExceptHandler:
                if handlers and handlers[-1].type is None:
                    raise _at(handlers[-1], "default 'except:' must be last")
                handlers.append(x)
            elif type(x) is tuple:
                if x[0] == "else":
                    orelse = x[1]
                else:
                    finalbody = x[1]
        end = (finalbody or orelse or handlers or body)[-1]
        return ast.Try(body, handlers, orelse, finalbody, k.line, k.col, end.end_line, end.end_col)

    def with_item(self, c):
        ctx, target = c
        if target is not None:
            _check_target(target)
        e = target if target is not None else ctx
        return ast.WithItem(ctx, target, ctx.line, ctx.col, e.end_line, e.end_col)

    def with_stmt(self, c):
        k = c[0]
        items = c[1:-1]
        body = c[-1]
        end = body[-1]
        return ast.With(items, body, k.line, k.col, end.end_line, end.end_col)

    # ------------------------------------------------------------ parameters
    def lparam(self, c):
        name, default = c
        e = default if default is not None else name
        return ast.Param(name.value, default, name.line, name.col, e.end_line, e.end_col)

    def lstar_param(self, c):
        star, name = c
        return ("*", name, star)

    def lkw_param(self, c):
        star, name = c
        return ("**", name, star)

    def param(self, c):         # annotations are read and ignored, as CPython's run time does
        return self.lparam((c[0], c[2]))

    def star_param(self, c):
        return self.lstar_param(c[:2])

    def kw_param(self, c):
        return self.lkw_param(c[:2])

    def parameters(self, c):
        items = [x for x in c if x is not None]
        params, kwonly = [], []
        vararg = kwarg = None
        seen_star = False
        seen_default = False
        names = set()
        for it in items:
            if kwarg is not None:
                raise _at(it if isinstance(it, ast.Node) else it[2], "parameter after '**' parameter")
            if isinstance(it, tuple):
                kind, name, star = it
                if kind == "*":
                    if seen_star:
                        raise _at(star, "'*' may appear only once in a parameter list")
                    seen_star = True
                    vararg = name.value if name is not None else None
                    n = name
                else:
                    kwarg = name.value
                    n = name
                if n is not None:
                    if n.value in names:
                        raise _at(n, f"duplicate argument '{n.value}' in function definition")
                    names.add(n.value)
                continue
            if it.name in names:
                raise _at(it, f"duplicate argument '{it.name}' in function definition")
            names.add(it.name)
            if seen_star:
                kwonly.append(it)
            else:
                if it.default is not None:
                    seen_default = True
                elif seen_default:
                    raise _at(it, "non-default argument follows default argument")
                params.append(it)
        if seen_star and vararg is None and not kwonly:
            raise _at(items[-1][2] if isinstance(items[-1], tuple) else items[-1],
                      "named arguments must follow bare *")
        first, last = items[0], items[-1]
        f = first[2] if isinstance(first, tuple) else first
        l = last[1] if isinstance(last, tuple) else last
        return ast.Arguments(params, vararg, kwonly, kwarg, f.line, f.col, l.end_line, l.end_col)

    lambda_parameters = parameters

    # ------------------------------------------------------------ expressions
    def tuple_list(self, c):
        elts = [x for x in c if x is not None]
        f, l = elts[0], elts[-1]
        d = _depth(_deepest(elts) + 1, f)
        return ast.Tuple(elts, f.line, f.col, l.end_line, l.end_col, d)

    expr_tuple = tuple_list

    def star_expr(self, c):
        k, v = c
        return ast.Starred(v, k.line, k.col, v.end_line, v.end_col, _depth(v.depth + 1, v))

    def namedexpr(self, c):
        name, _op, value = c
        target = ast.Name(name.value, name.line, name.col, name.end_line, name.end_col)
        d = _depth(value.depth + 1, value)
        return ast.NamedExpr(target, value, name.line, name.col, value.end_line, value.end_col, d)

    def yield_expr(self, c, node=ast.Yield):
        k, v = c
        _SAW_YIELD[0] = True
        e = v if v is not None else k
        if v is not None and v.__class__ is _Starred:
            raise _at(v, "can't use starred expression here")
        return node(v, k.line, k.col, e.end_line, e.end_col, (v.depth if v is not None else 0) + 1)

    def yield_from(self, c):
        return self.yield_expr(c, ast.YieldFrom)

    # ------------------------------------------------------------ comprehensions
    def comp_for(self, c):
        k, target, it = c
        _check_target(target)
        return ast.Comprehension(target, it, [], k.line, k.col, it.end_line, it.end_col)

    def comp_if(self, c):
        return c[0]

    def comprehension(self, c):
        clauses = []
        for x in c:
            if type(x) is ast.Comprehension:
                clauses.append(x)
            else:
                clauses[-1].ifs.append(x)
        return clauses

    @staticmethod
    def _comp_depth(nodes, clauses):
        d = _deepest(nodes)
        for g in clauses:
            d = max(d, g.target.depth, g.iter.depth, _deepest(g.ifs))
        return d + 1

    def _comp(self, node, c):
        lb, elt, gens, rb = c
        d = self._comp_depth([elt], gens)
        n = node(elt, gens, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def listcomp(self, c):
        return self._comp(ast.ListComp, c)

    def setcomp(self, c):
        return self._comp(ast.SetComp, c)

    def genexp(self, c):
        return self._comp(ast.GeneratorExp, c)

    def genexp_arg(self, c):
        elt, gens = c
        last = gens[-1]
        e = last.ifs[-1] if last.ifs else last.iter
        d = self._comp_depth([elt], gens)
        return ast.GeneratorExp(elt, gens, elt.line, elt.col, e.end_line, e.end_col, d)

    def dictcomp(self, c):
        lb, key, value, gens, rb = c
        d = self._comp_depth([key, value], gens)
        n = ast.DictComp(key, value, gens, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def ifexp(self, c):
        body, test, orelse = c
        d = max(body.depth, test.depth, orelse.depth) + 1
        n = ast.IfExp(test, body, orelse, body.line, body.col, orelse.end_line, orelse.end_col, d)
        _depth(d, n)
        return n

    def lambdef(self, c):
        k, params, body = c
        args = params if params is not None else ast.Arguments([], None, [], None, k.line, k.col,
                                                               k.end_line, k.end_col)
        d = body.depth + 1
        for p in args.params + args.kwonly:
            if p.default is not None:
                d = max(d, p.default.depth + 1)
        n = ast.Lambda(args, body, k.line, k.col, body.end_line, body.end_col, d)
        _depth(d, n)
        return n

    def _boolop(self, op, c):
        f, l = c[0], c[-1]
        d = _deepest(c) + 1
        n = ast.BoolOp(op, c, f.line, f.col, l.end_line, l.end_col, d)
        _depth(d, n)
        return n

    def or_test(self, c):
        return self._boolop("or", c)

    def and_test(self, c):
        return self._boolop("and", c)

    def not_op(self, c):        # a chain of unary operators is not nesting (SPEC 3)
        k, v = c
        return ast.UnaryOp("not", v, k.line, k.col, v.end_line, v.end_col, v.depth)

    def comp_op(self, c):
        if len(c) == 1:
            return c[0].value
        return c[0].value + " " + c[1].value

    def comparison(self, c):
        left = c[0]
        ops = c[1::2]
        comps = c[2::2]
        l = comps[-1]
        d = left.depth
        for x in comps:
            if x.depth > d:
                d = x.depth
        d += 1
        n = ast.Compare(left, ops, comps, left.line, left.col, l.end_line, l.end_col, d)
        _depth(d, n)
        return n

    @staticmethod
    def _chain_same(op, c):
        left = c[0]
        d = left.depth
        for right in c[1:]:
            if right.depth > d:
                d = right.depth
            left = ast.BinOp(left, op, right, left.line, left.col, right.end_line, right.end_col, d + 1)
        _depth(d + 1, left)
        return left

    def expr(self, c):
        return self._chain_same("|", c)

    def xor_expr(self, c):
        return self._chain_same("^", c)

    def and_expr(self, c):
        return self._chain_same("&", c)

    def shift_expr(self, c):
        left = c[0]
        d = left.depth
        for i in range(1, len(c), 2):
            right = c[i + 1]
            if right.depth > d:
                d = right.depth
            left = ast.BinOp(left, c[i].value, right, left.line, left.col, right.end_line, right.end_col, d + 1)
        _depth(d + 1, left)
        return left

    arith_expr = shift_expr
    term = shift_expr

    def unary(self, c):
        k, v = c
        return ast.UnaryOp(k.value, v, k.line, k.col, v.end_line, v.end_col, v.depth)

    def power_op(self, c):
        base, _k, exp = c
        d = max(base.depth, exp.depth) + 1
        n = ast.BinOp(base, "**", exp, base.line, base.col, exp.end_line, exp.end_col, d)
        _depth(d, n)
        return n

    # ------------------------------------------------------------ postfix
    def call(self, c):
        func, _lp, arglist, rp = c
        args, keywords = [], []
        d = 0       # a method chain x.f().g() is not nesting (SPEC 3): only the arguments nest
        if arglist:
            seen_kw = seen_kwargs = False
            names = ()
            for a in arglist:
                t = type(a)
                if t is _Keyword:
                    if a.arg is None:
                        seen_kwargs = True
                    else:
                        if a.arg in names:
                            raise _at(a, f"keyword argument repeated: {a.arg}")
                        if not names:
                            names = set()
                        names.add(a.arg)
                        seen_kw = True
                    keywords.append(a)
                    vd = a.value.depth
                else:
                    if t is _Starred:
                        if seen_kwargs:
                            raise _at(a, "iterable argument unpacking follows keyword argument unpacking")
                    elif seen_kwargs:
                        raise _at(a, "positional argument follows keyword argument unpacking")
                    elif seen_kw:
                        raise _at(a, "positional argument follows keyword argument")
                    args.append(a)
                    vd = a.depth
                if vd > d:
                    d = vd
        d += 1
        if func.depth > d:
            d = func.depth
        n = ast.Call(func, args, keywords, func.line, func.col, rp.end_line, rp.end_col, d)
        if d > _MAX_DEPTH[0] and _MAX_DEPTH[0]:        # (_depth, inline: calls are many)
            _depth(d, n)
        return n

    def arguments(self, c):
        args = [x for x in c if x is not None]
        if len(args) > 1:
            for a in args:
                if type(a) is ast.GeneratorExp and a.line == a.elt.line and a.col == a.elt.col:
                    raise _at(a, "Generator expression must be parenthesized")
        return args

    def kwarg(self, c):
        name, value = c
        return ast.Keyword(name.value, value, name.line, name.col, value.end_line, value.end_col)

    def star_arg(self, c):
        k, v = c
        return ast.Starred(v, k.line, k.col, v.end_line, v.end_col, v.depth + 1)

    def kwargs_arg(self, c):
        k, v = c
        return ast.Keyword(None, v, k.line, k.col, v.end_line, v.end_col)

    def getattr(self, c):
        v, name = c
        return ast.Attribute(v, name.value, v.line, v.col, name.end_line, name.end_col, v.depth)

    def getitem(self, c):
        v, _lb, sl, rb = c
        d = max(v.depth, sl.depth + 1)
        n = ast.Subscript(v, sl, v.line, v.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def subscript_tuple(self, c):
        elts = [x for x in c if x is not None]
        f, l = elts[0], elts[-1]
        d = _deepest(elts) + 1
        return ast.Tuple(elts, f.line, f.col, l.end_line, l.end_col, d)

    def sliceop(self, c):
        return c        # [COLON, test | None]

    def slice(self, c):
        lower, colon, upper, sop = c
        step = None
        last = upper if upper is not None else colon
        if sop is not None:
            colon2, step = sop
            last = step if step is not None else colon2
        first = lower if lower is not None else colon
        d = 1 + max((x.depth for x in (lower, upper, step) if x is not None), default=0)
        return ast.Slice(lower, upper, step, first.line, first.col, last.end_line, last.end_col, d)

    # ------------------------------------------------------------ atoms
    def empty_tuple(self, c):
        lp, rp = c
        return ast.Tuple([], lp.line, lp.col, rp.end_line, rp.end_col)

    def paren(self, c):
        lp, inner, rp = c
        inner.line, inner.col, inner.end_line, inner.end_col = lp.line, lp.col, rp.end_line, rp.end_col
        return inner

    def list(self, c):
        lb, items, rb = c
        items = items or []
        d = _deepest(items) + 1
        n = ast.List(items, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def list_items(self, c):
        return [x for x in c if x is not None]

    def set(self, c):
        lb, items, rb = c
        d = _deepest(items) + 1
        n = ast.Set(items, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    set_items = list_items

    def dict_unpack(self, c):
        return (None, c[1])

    def dict(self, c):
        lb, items, rb = c
        keys = [k for k, _ in items or ()]
        values = [v for _, v in items or ()]
        d = max(_deepest([k for k in keys if k is not None]), _deepest(values)) + 1
        n = ast.Dict(keys, values, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def dict_items(self, c):
        return [x for x in c if x is not None]

    def key_value(self, c):
        return (c[0], c[1])

    def name(self, c):
        t = c[0]
        return ast.Name(t.value, t.line, t.col, t.end_line, t.end_col)

    def number(self, c):
        t = c[0]
        known = _NUMBERS[0]
        if known is None:
            v = _number(t)
        else:
            v = known.get(t.value)
            if v is None:
                v = known[t.value] = _number(t)
        return ast.Constant(v, t.line, t.col, t.end_line, t.end_col)

    def ellipsis(self, c):
        t = c[0]
        return ast.Constant(Ellipsis, t.line, t.col, t.end_line, t.end_col)

    def const_none(self, c):
        t = c[0]
        return ast.Constant(None, t.line, t.col, t.end_line, t.end_col)

    def const_true(self, c):
        t = c[0]
        return ast.Constant(True, t.line, t.col, t.end_line, t.end_col)

    def const_false(self, c):
        t = c[0]
        return ast.Constant(False, t.line, t.col, t.end_line, t.end_col)

    def string(self, c):
        f, l = c[0], c[-1]
        pieces = []         # str, or ("field", ...) parts
        is_f = False
        for tok in c:
            prefix, body, ql, boff = _split_string_token(tok)
            if "b" in prefix:
                raise _at(tok, "bytes literals are not supported in gradexpr")
            raw = "r" in prefix
            if "f" in prefix:
                is_f = True
                parts, _ = _scan_literal(body, 0, tok, boff, raw=raw)
                for p in parts:
                    if p[0] == "lit":
                        pieces.append(p[1] if raw else _decode_escapes(p[1], tok))
                    else:
                        pieces.append(self._field(p, tok, boff, raw))
            else:
                pieces.append(body if raw else _decode_escapes(body, tok))
        if not is_f:
            return ast.Constant("".join(pieces), f.line, f.col, l.end_line, l.end_col)
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

    def _field(self, p, tok, boff, raw):
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
                    svals.append(self._field(s, tok, boff, raw))
        line, col = _position_in(tok, boff + fstart)
        eline, ecol = _position_in(tok, boff + fend)
        if spec is not None:
            sd = _deepest(svals) + 1
            spec_node = ast.JoinedStr(svals, line, col, eline, ecol, sd)
        d = max(value.depth, spec_node.depth if spec_node else 0) + 1
        return ast.FormattedValue(value, conversion, spec_node, line, col, eline, ecol, d)


def _lark_builder():
    """The builder for Lark's own parser: ``_Builder`` on a ``lark.Transformer``."""
    from lark import Transformer
    return type("Builder", (_Builder, Transformer), {})()


# ============================================================================ checks after parsing

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
                if not in_func and _SAW_YIELD[0]:
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
