"""Derive the parser's tables from grammar/gradexpr.lark with Lark, and write grammar/_tables.py.

    python tools/gen_parser_tables.py            # write grammar/_tables.py (after editing the grammar)
    python tools/gen_parser_tables.py --check    # exit 1 if it is stale, write nothing

This is the only place the tables are derived. Lark compiles the grammar into LALR(1)
tables; this writes what ``grammar/parser.py`` needs to parse without Lark (scanner
terminals, the table, each rule's callback recipe; see ``parser.TABLE_FIELDS``) as plain
Python literals, with the grammar file's checksum. The parser loads only that file: while
the checksum does not match the grammar file, parsing fails with an error naming this
command, and ``tests/test_parser_tables.py`` fails. The tests also use ``build_lark`` and
``fresh_tables`` (Lark's own parser of the grammar is their reference).
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from gradexpr.grammar import parser
from gradexpr.grammar.syntax_errors import _UNSUPPORTED_MESSAGES

TABLES_PATH = os.path.join(os.path.dirname(os.path.abspath(parser.__file__)), "_tables.py")

# How Lark compiles the grammar (the parser's tables and the tests' reference parser alike).
LARK_OPTIONS = dict(parser="lalr", lexer="basic", start=["file_input", "eval_input"],
                    maybe_placeholders=True)

# The terminals Lark must keep although no rule uses them: the newline the postlexer turns
# into indentation, and the keywords gradexpr refuses (scanned, so the error can name them).
ALWAYS_ACCEPT = ("_NEWLINE",) + tuple(_UNSUPPORTED_MESSAGES)


class _KeepTerminals:
    """A postlexer that only tells Lark which terminals to keep (tables are made, nothing parsed)."""

    always_accept = ALWAYS_ACCEPT

    def process(self, stream):      # pragma: no cover - the tables' Lark never parses
        return stream


def build_lark(transformer=None, postlex=None):
    """Lark's LALR parser of gradexpr.lark (``postlex`` must keep ALWAYS_ACCEPT)."""
    return _compile(_grammar_bytes(), transformer, postlex)


def fresh_tables() -> dict:
    """The tables (see ``parser.TABLE_FIELDS``) of gradexpr.lark as Lark compiles it now."""
    data = _grammar_bytes()
    return tables_from_lark(_compile(data), parser._grammar_checksum(data))


def _grammar_bytes() -> bytes:
    with open(parser.GRAMMAR_PATH, "rb") as f:
        return f.read()


def _compile(data: bytes, transformer=None, postlex=None):
    import lark

    return lark.Lark(data.decode("utf-8"), transformer=transformer, postlex=postlex or _KeepTerminals(),
                     **LARK_OPTIONS)


# ============================================================================ the tables

def tables_from_lark(lk, checksum: str) -> dict:
    """The tables (see ``parser.TABLE_FIELDS``) of the Lark LALR parser ``lk``. Deterministic: states
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
    firsts = [first_ascii(t.pattern.to_regexp()) for t in scanned]
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
                         for choices in [literal_alternatives(t.pattern.to_regexp())] if choices},
        "RULES": tuple(rule_recipe(r) for r in rules),
        "STATES": tuple(states),
        "START_STATES": {str(s): number[pt.start_states[s]] for s in starts},
        "END_STATES": {str(s): number[pt.end_states[s]] for s in sorted(pt.end_states)},
    }


def rule_recipe(rule):
    """How Lark (``lark/parse_tree_builder.py``, LALR, ``maybe_placeholders=True``, no
    ``propagate_positions``) builds the callback of ``rule``, as plain data:
    ``(origin, callback name, length, expand1, child filter)``.

    The user callback is the transformer's attribute named after the rule's alias, template
    or origin (else a tree of that name). ``expand1`` (a ``?rule`` without alias) wraps it
    to return a lone child as it is. The child filter, if any, is ``(keep, trailing)``:
    ``keep`` lists ``(index, inlined, nones)`` for each child kept -- ``nones`` placeholders
    (``None``, for an absent ``[item]``) go in front of it, and a child that is a ``_rule``
    (``inlined`` is its name, else None) contributes its children instead of itself -- and
    ``trailing`` placeholders end the list. Terminals marked filter_out (anonymous
    punctuation, ``_TERMINALS``) are dropped unless the rule keeps all tokens (``!rule``).
    ``grammar/callbacks.py`` makes the callback back from this recipe."""
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



def literal_alternatives(pattern):
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


def first_ascii(pattern):
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



# ============================================================================ _tables.py

def render(tables: dict, lark_version: str, tables_format: int) -> str:
    """The text of _tables.py for ``tables`` (deterministic: dicts keep their order)."""
    out = [
        '"""Generated by tools/gen_parser_tables.py from gradexpr.lark -- do not edit.',
        "",
        "The LALR(1) tables Lark builds for the grammar, the scanner's terminals and a recipe of",
        "each rule's callback, for grammar/parser.py to parse without importing Lark (see",
        "parser.TABLE_FIELDS). Regenerate after editing the grammar:",
        "",
        "    python tools/gen_parser_tables.py",
        '"""',
        "# fmt: off",
        f"FORMAT = {tables_format!r}",
        f"LARK_VERSION = {lark_version!r}",
    ]
    for name, value in tables.items():
        if name in ("TERMINALS", "RULES"):
            out.append(f"{name} = (")
            for i, item in enumerate(value):
                out.append(f"    {item!r},  # {i}")
            out.append(")")
        elif name == "STATES":
            out.append("STATES = (")
            for i, row in enumerate(value):
                out.append(f"    # {i}")
                out.append(_string(row, 4) + ",")
            out.append(")")
        elif isinstance(value, dict):
            out.append(f"{name} = " + _wrapped(value, 0).lstrip())
        else:
            out.append(f"{name} = {value!r}")
    return "\n".join(out) + "\n"


def _string(row: str, indent: int, width: int = 96) -> str:
    """A row's string literal, split over lines (adjacent literals) between its pairs."""
    words = row.split(" ")
    pieces, piece = [], ""
    for word in (" ".join(words[i:i + 2]) for i in range(0, len(words), 2)):
        if piece and indent + 3 + len(piece) + 1 + len(word) > width:
            pieces.append(piece + " ")
            piece = word
        else:
            piece = f"{piece} {word}" if piece else word
    pieces.append(piece)
    if len(pieces) == 1:
        return " " * indent + repr(pieces[0])
    return "\n".join(" " * indent + ("(" if i == 0 else " ") + repr(p) + (")" if i == len(pieces) - 1 else "")
                     for i, p in enumerate(pieces))


def _wrapped(d: dict, indent: int, width: int = 96) -> str:
    """A dict literal, its items packed into lines of at most ``width`` characters."""
    lines, line = [], " " * indent + "{"
    for k, v in d.items():
        item = f"{k!r}: {v!r},"
        if len(line) + 1 + len(item) > width and line.strip() != "{":
            lines.append(line)
            line = " " * (indent + 1) + item
        else:
            line += ("" if line.endswith("{") else " ") + item
    lines.append(line.rstrip(",") + "}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="report whether the file is stale; write nothing")
    args = p.parse_args(argv)

    import lark

    tables = fresh_tables()
    path = TABLES_PATH
    text = render(tables, lark.__version__, parser.TABLES_FORMAT)
    try:
        with open(path, encoding="utf-8") as f:
            current = f.read()
    except FileNotFoundError:
        current = None
    if args.check:
        if current == text:
            print(f"{path} is up to date")
            return 0
        print(f"{path} is stale: run {parser.REGENERATE}", file=sys.stderr)
        return 1
    if current == text:
        print(f"{path} is up to date")
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    n_states = len(tables["STATES"])
    print(f"wrote {path}: {len(tables['TERMINALS'])} terminals, {len(tables['RULES'])} rules, {n_states} states")
    return 0


if __name__ == "__main__":
    sys.exit(main())
