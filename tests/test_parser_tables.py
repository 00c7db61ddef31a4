"""The parser's generated tables (grammar/_tables.py) and the reference it is checked against.

The parser is built only from the tables that tools/gen_parser_tables.py generated from
gradexpr.lark, without importing Lark (stale tables are an error naming that command);
Lark's own parser (``lark_reference.parse_with_lark``) is the reference it must agree with.
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

from gradexpr import errors, limits
from gradexpr.grammar import _tables, ast, parser
from gradexpr.grammar.callbacks import _bare_origins, _make_callback, _Tree

import test_bad_input
import test_grammar
from lark_reference import generator, parse_with_lark, plain_lark

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
PROGRAMS = sorted(glob.glob(os.path.join(TESTS, "**", "*.gx"), recursive=True))


# ============================================================================ the tables

def committed():
    return {k: getattr(_tables, k) for k in parser.TABLE_FIELDS}


def test_the_committed_tables_are_those_lark_builds_from_the_grammar_now():
    """Fails when gradexpr.lark (or Lark) changed and the tables were not regenerated:
    run ``python tools/gen_parser_tables.py``."""
    fresh = generator.fresh_tables()
    assert list(fresh) == list(parser.TABLE_FIELDS)
    assert _tables.FORMAT == parser.TABLES_FORMAT
    assert fresh["GRAMMAR_CHECKSUM"] == _tables.GRAMMAR_CHECKSUM == \
        parser._grammar_checksum(open(parser.GRAMMAR_PATH, "rb").read())
    stale = [k for k in parser.TABLE_FIELDS if fresh[k] != getattr(_tables, k)]
    assert not stale, f"grammar/_tables.py is stale in {stale}: run python tools/gen_parser_tables.py"


def test_the_generator_writes_the_committed_file_and_check_says_so():
    out = subprocess.run([sys.executable, os.path.join(REPO, "tools", "gen_parser_tables.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "up to date" in out.stdout


def test_the_tables_do_not_depend_on_the_hash_seed():
    # Lark numbers its LALR states in an order that depends on string hashing; the tables
    # renumber them, so that regenerating on another machine gives the same file.
    code = (f"import sys; sys.path.insert(0, {os.path.join(REPO, 'tools')!r}); import gen_parser_tables; "
            "print(repr(gen_parser_tables.fresh_tables()))")
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=300, check=True)
        outs.append(p.stdout)
    assert outs[0] == outs[1]
    assert outs[0].strip() == repr(committed())


def _edited_grammar(tmp_path):
    grammar = tmp_path / "gradexpr.lark"
    grammar.write_text(open(parser.GRAMMAR_PATH, encoding="utf-8").read() + "\n// edited\n", encoding="utf-8")
    return str(grammar)


def test_a_grammar_edit_without_new_tables_is_an_error_naming_the_command(tmp_path, monkeypatch):
    """No fallback: with the grammar file changed, the recorded checksum does not match and
    parsing says how to regenerate the tables."""
    monkeypatch.setattr(parser, "GRAMMAR_PATH", _edited_grammar(tmp_path))
    monkeypatch.setattr(parser, "_engine", None)
    with pytest.raises(parser.StaleTablesError) as info:
        parser.parse("x = 1\n")
    assert str(info.value) == ("the parser's tables (grammar/_tables.py) are not those of grammar/gradexpr.lark "
                               "as it is now: regenerate them with `python tools/gen_parser_tables.py`")


def test_tables_of_another_layout_are_stale_too(monkeypatch):
    monkeypatch.setattr(parser, "_engine", None)
    monkeypatch.setattr(_tables, "FORMAT", parser.TABLES_FORMAT + 1)
    with pytest.raises(parser.StaleTablesError, match="python tools/gen_parser_tables.py"):
        parser.parse_expression("1")


def test_the_generator_reports_an_edited_grammar_as_stale(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(parser, "GRAMMAR_PATH", _edited_grammar(tmp_path))
    assert generator.main(["--check"]) == 1
    assert "is stale: run python tools/gen_parser_tables.py" in capsys.readouterr().err


_EDITED = """
import sys
from gradexpr.grammar import parser
parser.GRAMMAR_PATH = sys.argv[1]
try:
    parser.parse('x = 1')
except parser.StaleTablesError as e:
    print('stale', 'lark' in sys.modules)
"""


def test_stale_tables_never_bring_lark_in(tmp_path):
    out = subprocess.run([sys.executable, "-c", _EDITED, _edited_grammar(tmp_path)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["stale", "False"]


def test_unchanged_grammar_uses_the_committed_tables():
    assert parser._load_tables() == committed()


_NO_LARK = """
import sys
from gradexpr.grammar import parser
m = parser.parse('x = 1\\nif x:\\n    y = f"{x:3}" + "s"\\nelse:\\n    y = [1, 2][0]\\n', 'f')
e = parser.parse_expression('((x + 2) ** 2 * 3).mean()')
assert type(e).__name__ == 'Call' and len(m.body) == 2
try:
    parser.parse('x = (1 +\\n', 'f')
except Exception as err:
    assert 'unclosed' in err.message, err.message
else:
    raise AssertionError('no error')
assert 'lark' not in sys.modules, sorted(m for m in sys.modules if m.startswith('lark'))
print('ok')
"""


def test_parsing_does_not_import_lark():
    out = subprocess.run([sys.executable, "-c", _NO_LARK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_a_one_shot_eval_does_not_import_lark():
    code = ("import sys\nfrom gradexpr.cli.main import main\n"
            "try:\n    main(['eval', '((x + 2) ** 2 * 3).mean()', '-v', 'x=ones(2,2)', '--json'])\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "assert not [m for m in sys.modules if m == 'lark' or m.startswith('lark.')]\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert '"value": 27.0' in out.stdout


_RUN_PROGRAMS = """
import sys
from gradexpr.cli.main import main
for path, status in ((sys.argv[1], 0), (sys.argv[2], 2)):
    try:
        main(['run', path])
    except SystemExit as e:
        assert e.code == status, (path, e.code)
print('lark' in sys.modules, sorted(m for m in sys.modules if m.startswith('lark')))
"""


def test_running_programs_does_not_import_lark(tmp_path):
    """A program with blocks, a class, f-strings and a lambda, then one with a syntax error:
    parsing, f-string fields and the error's wording all run without Lark."""
    good = tmp_path / "good.gx"
    good.write_text("class A:\n    def __init__(self, v):\n        self.v = v\n\n"
                    "def f(a, *, k=2):\n    return [a.v * k for _ in range(2)]\n\n"
                    "x = torch.ones(2, requires_grad=True)\ny = (lambda t: (t * 3).sum())(x)\n"
                    "y.backward()\nprint(f'{y.item():.1f} {x.grad!r}', f(A(1)))\n", encoding="utf-8")
    bad = tmp_path / "bad.gx"
    bad.write_text("x = [1,\n  2\nif x:\n    pass\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", _RUN_PROGRAMS, str(good), str(bad)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["6.0 tensor([3., 3.]) [2, 2]", "False []"]
    assert "SyntaxError" in out.stderr

# ============================================================================ the callbacks

class _Recorder:
    """A builder whose every callback records its name and children (except ``missing``,
    for which the default tree is made)."""

    def __init__(self, missing=()):
        self._missing = set(missing)

    def __getattr__(self, name):
        if name.startswith("__") or name in self._missing:
            raise AttributeError(name)
        return lambda children: ("called", name, list(children))


def _normal(x):
    """Lark's trees and ours as plain data."""
    if hasattr(x, "data") and hasattr(x, "children"):
        return ("tree", str(x.data), [_normal(c) for c in x.children])
    if isinstance(x, tuple) and x and x[0] == "called":
        return ("called", x[1], [_normal(c) for c in x[2]])
    return x


def _children(rule_expansion, tree_class, bare=()):
    """Children for a reduction by a rule: a token-like marker per terminal, two markers in a
    tree (a list for a ``bare`` rule) per ``_rule`` (inlined by the filter), a marker per
    other nonterminal."""
    out = []
    for i, sym in enumerate(rule_expansion):
        if not sym.is_term and sym.name.startswith("_"):
            kids = [("in", i, 0), ("in", i, 1)]
            out.append(kids if sym.name in bare else tree_class(sym.name, kids))
        else:
            out.append(("sym", i, sym.name))
    return out


@pytest.mark.parametrize("missing", [(), ("or_test", "term", "simple_stmt", "param", "comp_op")])
@pytest.mark.parametrize("bare", [False, True])
def test_every_rule_callback_does_what_larks_does(missing, bare):
    """Each rule's callback, rebuilt from its recipe, against the callback Lark builds for
    the same rule and transformer (child filtering, placeholders, inlining, ?rule expansion,
    the default tree for a missing method). With ``bare``, the helper rules' values are their
    lists of children, without the tree."""
    import lark
    from lark.parse_tree_builder import ParseTreeBuilder

    lk = plain_lark()

    class Transformer(lark.Transformer):
        pass

    for name in {r.alias or r.options.template_source or r.origin.name for r in lk.rules}:
        if name not in missing and not name.startswith("_"):
            setattr(Transformer, name, (lambda n: lambda self, children: ("called", n, list(children)))(name))
    theirs = ParseTreeBuilder(lk.rules, lark.Tree, maybe_placeholders=True).create_callback(Transformer())
    recipes = generator.tables_from_lark(lk, "x")["RULES"]
    assert len(recipes) == len(lk.rules)
    ours_builder = _Recorder(missing)
    bare_rules = _bare_origins(ours_builder, recipes) if bare else frozenset()
    if bare:
        assert "__file_input_star_0" in bare_rules and not any(not o.startswith("_") for o in bare_rules)
    checked = 0
    for rule, recipe in zip(lk.rules, recipes):
        ours = _make_callback(ours_builder, recipe, bare_rules)
        want = _normal(theirs[rule](_children(rule.expansion, lark.Tree)))
        got = ours(_children(rule.expansion, _Tree, bare_rules))
        if rule.origin.name in bare_rules:
            assert type(got) is list, (str(rule), recipe)
            got = _Tree(rule.origin.name, got)
        assert _normal(got) == want, (str(rule), recipe)
        checked += 1
    assert checked == len(lk.rules) > 200


# ============================================================================ the two ways agree

def _outcome(fn, src, *args):
    try:
        node = fn(src, "prog.gx", *args)
    except errors.GxError as e:
        return ("error", type(e).__name__, e.message, e.filename, e.line, e.column, e.end_column, e.hint)
    return ("ok", ast.dump(node), node)


def _agree(src, start="file_input"):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))     # dump and == walk trees recursively (chains are deep)
    try:
        return _agree_within_limit(src, start)
    finally:
        sys.setrecursionlimit(old)


def _agree_within_limit(src, start):
    if start == "file_input":
        fast = _outcome(parser.parse, src)
    else:
        fast = _outcome(parser.parse_expression, src)
    slow = _outcome(parse_with_lark, src, start)
    assert fast[:2] == slow[:2], src
    if fast[0] == "ok":
        assert fast[1] == slow[1], src                     # same tree
        assert fast[2] == slow[2], src                     # and the same positions (node equality)
    else:
        assert fast == slow, src                           # same error, message and location
    return fast


def test_there_are_programs_to_compare():
    assert len(PROGRAMS) > 100


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: os.path.relpath(p, TESTS))
def test_both_ways_give_the_same_tree_for_every_test_program(path):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    _agree(src)


BAD = [src for src, *_ in test_bad_input.SYNTAX_ERRORS] + [src for src, *_ in test_grammar.SYNTAX_ERRORS] + [
    # scanner
    "x = 1 ? 2\n", "x = `a`\n", "x = 1\n\\", "x = 'a' 'b\n", "x = \"\"\"a\n\nb\n", "é = 1\né +\n",
    "x = 0x\n", "x = 1__0\n", "x = 1e\n", "x = 09\n", "x = 0_0\n", "x = 00\n", "\f  x = 1\n", " \fx = 1\n",
    "x = 1 \\\n + \n", "x = (1,\n 2\n", "x = ... ...\n", "x = 1;;\n", "x ; = 1\n",
    # indentation and brackets
    "if x:\n  a\n    b\n", "if x:\n    a\n b\n", "if x:\n\tpass\n        pass\n", "if x:\n    pass\n  else:\n",
    "def f(:\n    pass\n", "x = [1, 2)\n", "x = (1, 2]\n", "x = {)\n", "(\n", "[\n[\n", "x = 1\n)\n",
    "if x:\n    y = (\n        1,\n", "while x:\n", "for x in y:\n", "if x:\n    pass\nelif:\n", "with:\n",
    "def f():\n    return\n  x\n", "if 1:\n    if 2:\n        pass\n  pass\n",
    # parser
    "x = = 1\n", "x ==\n", "f(,)\n", "f(a for)\n", "x[1:2:3:4]\n", "x.1\n", "x..y\n", "lambda: \n",
    "lambda x, *: 1\n", "def f(*, **k): pass\n", "def f(a, *a): pass\n", "import torch.\n", "from torch import\n",
    "from torch import (a, \n", "assert\n", "return return\n", "x = not\n", "a if b\n", "a if b else\n",
    "x = {1: 2, 3}\n", "x = {1: }\n", "x = [1, 2\n", "print('a' 1)\n", "x = 1 if else 2\n", "f(x=)\n",
    "f(**)\n", "f(*)\n", "x = y = \n", "x += \n", "x, = \n", "pass pass\n", "break 1\n", "else\n",
    "elif x:\n    pass\n", "x = import\n", "x = (yield)\n", "def f(x) -> None: pass\n", "x = a := 1\n",
    "f'{1 +}'\n", "f'{'\n", "f'{a!}'\n", "f'{a:{b:{c}}}'\n", "f'''{\n1 +\n}'''\n", "x = f'{x}' f'{'\n",
    "", "\n\n", "# only a comment", "x = 1 # comment", "if x:\n    pass\n# end", "if x: pass\n",
    "x = 1; y = 2;\n", "def f(a, b=1, *c, d, e=2, **f):\n    return a\n", "x = lambda *a, **k: (a, k)\n",
    "x = a[1:2, ::3, ...]\n", "x = {'a': [1, (2, {3: 4})]}\n", "x = -~+1 ** -2\n", "x = a is not b not in c\n",
]


@pytest.mark.parametrize("src", BAD)
def test_both_ways_give_the_same_error_or_tree(src):
    _agree(src)


@pytest.mark.parametrize("src", ["1, 2", "f(x)[1].y", "lambda: 0", "x if y else z", "", "1 +", "(1", "'a' 'b'",
                                 "a = 1", "\n\n1\n\n", "f'{a}'"])
def test_both_ways_agree_on_expressions(src):
    _agree(src, "eval_input")


def test_both_ways_agree_on_depth_limits():
    token = limits.activate(limits.Limits(max_depth=12))
    try:
        for src in ("x = " + "(" * 20 + "1" + ")" * 20 + "\n", "x = " + "2 ** " * 20 + "1\n",
                    "".join("    " * i + "if x:\n" for i in range(15)) + "    " * 15 + "pass\n",
                    "x = " + "[" * 13 + "]" * 13 + "\n", "x = " + "f(" * 13 + ")" * 13 + "\n"):
            assert _agree(src)[0] == "error", src
    finally:
        limits.deactivate(token)


def test_both_ways_agree_on_a_big_program():
    lines = []
    for i in range(300):
        lines += [f"x{i} = ones(2, 2, requires_grad=True)",
                  f"y{i} = ((x{i} + 2) ** 2 * 3).mean() if x{i} is not None else -x{i} @ x{i}.t()",
                  f"print(f'value {{y{i}.item():.4f}}', x{i}[0, 1:], {{'k': [1, 2.5e-3, 0x1f]}})",
                  f"def f{i}(a, b=1, *c, d, **e):",
                  f"    for j in range(a):",
                  f"        b += j // 2 % 3 << 1",
                  f"    return lambda q: (q, b) if not c else d"]
    assert _agree("\n".join(lines) + "\n")[0] == "ok"
