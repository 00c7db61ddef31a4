"""Untrusted input through ``gradexpr run``: every bad program ends with a located, worded error
and a defined exit status — never a traceback, a hang or a huge allocation — and nothing in a
program reaches outside the language.

Each case asserts the exit status, the error type, the location (``FILE:LINE:COL``, the source
line and a caret), PyTorch's message or ours, the ``hint:`` where one is promised, and that no
traceback was printed. Most run in-process through Click's ``CliRunner``; a few as a subprocess.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from gradexpr.cli.main import cli

FILE = "<stdin>"


def gx(source: str, *options: str, env: dict | None = None):
    """``gradexpr run - OPTIONS`` with ``source`` on stdin."""
    return CliRunner().invoke(cli, ["run", "-", *options], input=source, env=env)


def error_block(result):
    """The (header match, the lines after it) of the one error on stderr."""
    lines = result.stderr.rstrip("\n").split("\n")
    head = re.match(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<kind>\w+)(?:: (?P<message>.*))?$", lines[0])
    assert head, f"not FILE:LINE:COL: Type: message:\n{result.stderr}"
    return head, lines[1:]


def assert_fails(result, code, kind, line, col, message=None, hint=None, caret=None):
    """Exit ``code``; one ``<stdin>:LINE:COL: KIND: …`` block with the source line and a caret;
    ``message``: a fragment of the message; ``hint``: a fragment of the one ``hint:`` line;
    ``caret``: the source text the carets underline."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    head, rest = error_block(result)
    assert (head["file"], head["kind"], int(head["line"]), int(head["col"])) == (FILE, kind, line, col), \
        result.stderr
    if message is not None:
        assert message in (head["message"] or ""), result.stderr
    assert len(rest) >= 2 and rest[0].startswith("    ") and re.fullmatch(r"    *\^+", rest[1]), result.stderr
    carets = rest[1].strip()
    if caret is not None:
        start = len(rest[1]) - len(rest[1].lstrip(" "))
        assert rest[0][start:start + len(carets)] == caret, result.stderr
    hints = [h for h in rest[2:] if h.startswith("hint: ")]
    if hint is not None:
        assert len(hints) == 1 and hint in hints[0], result.stderr
    return head


# ============================================================================ syntax errors (exit 2)

SYNTAX_ERRORS = [
    # (source, line, col, message fragment)
    ("x = 1 +\n", 1, 8, "expected an expression after '+'"),
    ("y = 2\nz = (1 +\n", 2, 5, "unclosed '(' opened at 2:5"),
    ("a = 1\nb = 2\nprint(a, [b,\n", 3, 10, "unclosed '[' opened at 3:10"),
    ("x = {1: 2\n", 1, 5, "unclosed '{' opened at 1:5"),
    ("x = 1)\n", 1, 6, "unmatched ')'"),
    ("x = ]\n", 1, 5, "unmatched ']'"),
    ("  x = 1\n", 1, 1, "unexpected indent"),
    ("if True:\n    a = 1\n  b = 2\n", 3, 1, "unindent does not match any outer indentation level"),
    ("if True:\na = 1\n", 2, 1, "expected an indented block after 'if' statement on line 1"),
    ("def f():\nreturn 1\n", 2, 1, "expected an indented block after function definition on line 1"),
    ("if True:\n\ta = 1\n        b = 2\n", 3, 1, "inconsistent use of tabs and spaces in indentation"),
    ("x = 'abc\n", 1, 5, "unterminated string literal"),
    ('x = """abc\n', 1, 5, "unterminated triple-quoted string literal"),
    ('x = f"abc{1\n', 1, 6, "unterminated string literal"),
    ("x = f'{1'\n", 1, 7, "f-string: expecting '}'"),
    ('x = f"{}"\n', 1, 7, "f-string: empty expression not allowed"),
    ("1 = x\n", 1, 1, "invalid assignment target: cannot assign to literal"),
    ("f() = 3\n", 1, 1, "invalid assignment target: cannot assign to function call"),
    ("x + 1 = 2\n", 1, 1, "invalid assignment target: cannot assign to expression"),
    ("(a, b) += 1\n", 1, 1, "'tuple' is an illegal expression for augmented assignment"),
    ("if x\n    pass\n", 1, 5, "expected ':'"),
    ("x = 5 5\n", 1, 7, "invalid syntax"),
    ("x = $\n", 1, 5, "invalid character '$' (U+0024)"),
    ("def f(a, a):\n    pass\n", 1, 10, "duplicate argument 'a' in function definition"),
    ("f(a=1, 2)\n", 1, 8, "positional argument follows keyword argument"),
    ("f(a=1, a=2)\n", 1, 8, "keyword argument repeated: a"),
    # Python outside the language: "... is not supported in gradexpr"
    ("nonlocal x\n", 1, 1, "nonlocal declaration not allowed at module level"),
    ("yield 1\n", 1, 1, "'yield' outside function"),
    ("a, *b, *c = x\n", 1, 8, "multiple starred expressions in assignment"),
    ("*a = x\n", 1, 1, "starred assignment target must be in a list or tuple"),
    ("try:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass\n", 3, 1, "default 'except:' must be last"),
    ("f(x for x in y, 1)\n", 1, 3, "Generator expression must be parenthesized"),
    ("del *a, b\n", 1, 5, "cannot delete starred"),
    ("async def f():\n    pass\n", 1, 1, "'async' is not supported in gradexpr"),
    ("x = b'abc'\n", 1, 5, "bytes literals are not supported in gradexpr"),
    ("match x:\n    case 1:\n        pass\n", 1, 7, "'match' statements are not supported in gradexpr"),
    ("x = *a\n", 1, 5, "can't use starred expression here"),
]


@pytest.mark.parametrize("src, line, col, message", SYNTAX_ERRORS)
def test_syntax_errors_are_located_and_worded(src, line, col, message):
    r = gx(src)
    assert_fails(r, 2, "SyntaxError", line, col, message)
    assert r.stdout == ""                       # nothing ran


def test_a_syntax_error_anywhere_stops_the_program_before_it_runs():
    r = gx("print('ran')\nx = (1 +\n")
    assert_fails(r, 2, "SyntaxError", 2, 5, "unclosed '('")
    assert r.stdout == ""


def test_non_utf8_and_binary_files_are_located_syntax_errors_in_cpythons_words(tmp_path):
    # (issue 19: as CPython reads a source file; tests/test_source_decoding.py compares with CPython itself)
    for data, where, words in ((b"x = 1\n\xff\xfe\n", ":2:1: SyntaxError: ", "Non-UTF-8 code starting with '\\xff'"),
                               (bytes(range(256)), ":1:1: SyntaxError: ", "source code cannot contain null bytes")):
        path = tmp_path / "bad.gx"
        path.write_bytes(data)
        r = CliRunner().invoke(cli, ["run", str(path)])
        assert r.exit_code == 2 and f"{path}{where}{words}" in r.stderr and "Traceback" not in r.stderr


def test_nul_bytes_and_control_characters_are_syntax_errors():
    r = gx("x = 1\x00\n")
    assert r.exit_code == 2 and "SyntaxError" in r.stderr and "Traceback" not in r.stderr


# ============================================================================ runtime errors (exit 1)

RUNTIME_ERRORS = [
    # (source, line, col, kind, message fragment, hint fragment, the text under the caret)
    ("x = ones(2, requires_grad=True)\ny = x * 2\ny.backward()\n", 3, 1, "RuntimeError",
     "grad can be implicitly created only for scalar outputs", "gradient=", "y.backward()"),
    ("x = ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()\n", 4, 1, "RuntimeError",
     "Trying to backward through the graph a second time", "retain_graph=True", "y.backward()"),
    ("x = ones(2, requires_grad=True)\nx += 1\n", 2, 1, "RuntimeError",
     "a leaf Variable that requires grad is being used in an in-place operation.", "torch.no_grad()", None),
    ("x = ones(2, requires_grad=True)\nx.add_(1)\n", 2, 1, "RuntimeError",
     "a leaf Variable that requires grad is being used in an in-place operation.", "torch.no_grad()",
     "x.add_(1)"),
    ("x = ones(2)\ny = 3 * (x ^ 2)\n", 2, 9, "NotImplementedError",
     "\"bitwise_xor_cpu\" not implemented for 'Float'", "**", "(x ^ 2)"),
    ("x = ones(2)\ny = sqr(x) + 1\n", 2, 5, "NameError", "name 'sqr' is not defined", "did you mean 'sqrt'?",
     "sqr"),
    ("value1 = 2\nprint(valeu1)\n", 2, 7, "NameError", "name 'valeu1' is not defined", "did you mean 'value1'?",
     "valeu1"),
    ("x = ones(2)\ny = x.sumn()\n", 2, 5, "AttributeError", "'Tensor' object has no attribute 'sumn'",
     "did you mean 'sum'?", "x.sumn"),
    ("y = torch.zeross(2)\n", 1, 5, "AttributeError", "module 'torch' has no attribute 'zeross'",
     "did you mean 'zeros'?", "torch.zeross"),
    ("x = ones(2)\ny = 2 * (x + ones(3))\n", 2, 9, "RuntimeError",
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0", None,
     "(x + ones(3))"),
    ("x = ones(2, 3)\ny = (x @ x).sum()\n", 2, 5, "RuntimeError",
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)", None, "(x @ x)"),
    ("x = ones(2, 2)\ny = x.view(5)\n", 2, 5, "RuntimeError", "shape '[5]' is invalid for input of size 4", None,
     "x.view(5)"),
    ("x = ones(3)\nprint(x[5])\n", 2, 7, "IndexError", "index 5 is out of bounds for dimension 0 with size 3",
     None, "x[5]"),
    ("x = ones(3)\ny = x.sum(dim=2)\n", 2, 5, "IndexError",
     "Dimension out of range (expected to be in range of [-1, 0], but got 2)", None, None),
    ("x = ones(3)\ny = x % ones(2)\n", 2, 5, "RuntimeError",
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0", None, None),
    ("x = ones(2)\ny = x + [1, 2]\n", 2, 5, "TypeError", "unsupported operand type(s) for +: 'Tensor' and 'list'",
     None, "x + [1, 2]"),
    ("x = ones(2)\ny = x.add([1, 2])\n", 2, 5, "TypeError",
     "add(): argument 'other' (position 1) must be Tensor, not list", None, None),
    ("y = rand_like(1.0)\n", 1, 5, "TypeError", "rand_like(): argument 'input' (position 1) must be Tensor, not float",
     None, None),
    ("y = zeros(2, fill=1)\n", 1, 5, "TypeError", "zeros() got an unexpected keyword argument 'fill'", None, None),
    ("y = tensor([[1, 2], [3]])\n", 1, 5, "ValueError", "expected sequence of length 2 at dim 1 (got 1)", None,
     None),
    ("y = ones(2) + 10**30\n", 1, 5, "OverflowError", "int too big to convert", None, None),
    ("y = tensor(10**30)\n", 1, 5, "ValueError", "Overflow when unpacking long long", None, None),
    ("y = ones(2).repeat(-1)\n", 1, 5, "RuntimeError", "Trying to create tensor with negative dimension -2: [-2]",
     None, None),
    ("y = arange(0, float('inf'))\n", 1, 5, "RuntimeError", "unsupported range: 0 -> inf", None, None),
    ("y = F.one_hot(tensor([-1]))\n", 1, 5, "RuntimeError", "Class values must be non-negative.", None, None),
    ("def f(t):\n    return t.foo\n\nf(ones(2))\n", 2, 12, "AttributeError", "'Tensor' object has no attribute 'foo'",
     None, "t.foo"),
    ("assert 1 == 2, 'one is not two'\n", 1, 1, "AssertionError", "one is not two", None, None),
    ("x = 1 / 0\n", 1, 5, "ZeroDivisionError", "division by zero", None, "1 / 0"),
]


@pytest.mark.parametrize("src, line, col, kind, message, hint, caret", RUNTIME_ERRORS)
def test_runtime_errors_have_pytorchs_words_a_location_a_caret_and_hints(src, line, col, kind, message, hint,
                                                                          caret):
    assert_fails(gx(src), 1, kind, line, col, message, hint, caret)


def test_output_before_the_error_is_kept_and_the_error_goes_to_stderr():
    r = gx("print('before')\nx = ones(2)\nx.view(3)\n")
    assert r.stdout == "before\n"
    assert_fails(r, 1, "RuntimeError", 3, 1, "shape '[3]' is invalid for input of size 2")


# ============================================================================ no way out

ESCAPES = [
    # (source, kind, message fragment)
    ("().__class__.__bases__\n", "AttributeError", "access to '__class__' is not allowed in gradexpr"),
    ("x = ones(2)\nx.__dict__\n", "AttributeError", "access to '__dict__' is not allowed in gradexpr"),
    ("x = ones(2)\nx._data\n", "AttributeError", "access to '_data' is not allowed in gradexpr"),
    ("def f():\n    return 1\nf.__globals__\n", "AttributeError", "access to '__globals__' is not allowed"),
    ("(lambda: 0).__code__\n", "AttributeError", "access to '__code__' is not allowed in gradexpr"),
    ("print.__self__\n", "AttributeError", "access to '__self__' is not allowed in gradexpr"),
    ("torch.__dict__\n", "AttributeError", "access to '__dict__' is not allowed in gradexpr"),
    ("x = ones(2)\ntype(x).mro()\n", "AttributeError", "access to 'Tensor.mro' is not allowed in gradexpr"),
    ("torch.Tensor.mro()\n", "AttributeError", "access to 'Tensor.mro' is not allowed in gradexpr"),
    ("torch.Tensor.grad.fset(ones(2), ones(2))\n", "AttributeError", "access to 'Tensor.grad' is not allowed"),
    ("torch.Tensor.sum.__globals__\n", "AttributeError", "access to '__globals__' is not allowed in gradexpr"),
    ("torch.Tensor._make_subclass\n", "AttributeError", "access to '_make_subclass' is not allowed in gradexpr"),
    ("type(1).__subclasses__()\n", "AttributeError", "access to '__subclasses__' is not allowed in gradexpr"),
    ("type(type(1))('X', (), {})\n", "TypeError", "type() takes 1 argument in gradexpr"),
    ("'{0.__class__}'.format(1)\n", "AttributeError", "access to '__class__' is not allowed in gradexpr"),
    ("'{0.real.__class__}'.format(1)\n", "AttributeError", "access to '__class__' is not allowed in gradexpr"),
    ("'{0[0].__class__}'.format([1])\n", "AttributeError", "access to '__class__' is not allowed in gradexpr"),
    ("'{0.numpy.__self__}'.format(ones(2))\n", "AttributeError", "access to '__self__' is not allowed in gradexpr"),
    ("'{x.__class__}'.format_map({'x': 1})\n", "AttributeError", "access to 'str.format_map' is not allowed"),
    ("f'{ones(2).__class__}'\n", "AttributeError", "access to '__class__' is not allowed in gradexpr"),
    ("'%s' % (1).__class__\n", "AttributeError", "access to '__class__' is not allowed in gradexpr"),
    ("x = ones(2)\nx.grad_fn\n(x * 1).grad_fn.__class__\n", "AttributeError", "access to '__class__' is not allowed"),
    ("x = ones(2)\nx.numpy().tofile('/tmp/gradexpr-escape')\n", "AttributeError",
     "access to 'ndarray.tofile' is not allowed in gradexpr"),
    ("x = ones(2)\nx.numpy().ctypes\n", "AttributeError", "access to 'ndarray.ctypes' is not allowed in gradexpr"),
    ("x = ones(2)\nx.numpy().data\n", "AttributeError", "access to 'ndarray.data' is not allowed in gradexpr"),
    ("x = ones(2)\nx.numpy().sum().dump('/tmp/gradexpr-escape')\n", "AttributeError", "is not allowed in gradexpr"),
    ("torch.load('/etc/passwd')\n", "AttributeError", "module 'torch' has no attribute 'load'"),
    ("torch.save(ones(2), '/tmp/gradexpr-escape')\n", "AttributeError", "module 'torch' has no attribute 'save'"),
    ("print('x', file=[])\n", "TypeError", "print(file=...) is not supported in gradexpr"),
]


@pytest.mark.parametrize("src, kind, message", ESCAPES)
def test_attributes_and_objects_outside_the_language_are_refused(src, kind, message):
    r = gx(src)
    assert r.exit_code == 1, r.stderr
    head, _ = error_block(r)
    assert head["kind"] == kind and message in head["message"], r.stderr
    assert "Traceback" not in r.stderr
    assert not os.path.exists("/tmp/gradexpr-escape")


@pytest.mark.parametrize("name", ["eval", "exec", "open", "__import__", "globals", "vars",
                                  "locals", "compile", "dir", "help", "breakpoint", "exit",
                                  "memoryview", "__builtins__", "os", "sys", "np", "numpy"])
def test_names_outside_the_prelude_are_not_defined(name):
    assert_fails(gx(f"y = {name}('1')\n"), 1, "NameError", 1, 5, f"name '{name}' is not defined")


def test_input_is_the_builtin_but_never_reads_stdin():
    # (docstrings pass an undefined `input` around as their tensor: Python's builtin, as in PyTorch)
    assert_fails(gx("y = input('1')\n"), 1, "RuntimeError", 1, 5,
                 "input() is not available in gradexpr: it allows no file, process or network access")


def test_imports_outside_spec_modules_are_located_runtime_errors():
    assert gx("import torch\nimport torch.nn.functional as F\nfrom torch import *\nprint(F.relu(ones(1)))\n") \
        .stdout == "tensor([1.])\n"
    no_access = "gradexpr allows no file, process or network access"
    assert_fails(gx("print(1)\nimport os\n"), 1, "ImportError", 2, 8, f"import of 'os' is not allowed: {no_access}")
    assert_fails(gx("from os import path\n"), 1, "ImportError", 1, 1, "import of 'os' is not allowed")
    assert_fails(gx("import builtins\n"), 1, "ImportError", 1, 8, "import of 'builtins' is not allowed")
    assert_fails(gx("import nosuchmodule\n"), 1, "ModuleNotFoundError", 1, 8, "No module named 'nosuchmodule'")


def test_reading_files_needs_an_explicit_at_file_value(tmp_path):
    """``gradexpr eval -v x=@file`` reads that file (without pickle); a program reads nothing."""
    secret = tmp_path / "secret.txt"
    secret.write_text("1, 2\n")
    r = gx(f"x = open({str(secret)!r}).read()\n")
    assert_fails(r, 1, "NameError", 1, 5, "name 'open' is not defined")
    data = tmp_path / "x.csv"
    data.write_text("1, 2\n")
    ok = CliRunner().invoke(cli, ["eval", "x * 2", "-v", f"x=@{data}", "--json"])
    assert ok.exit_code == 0 and '"value"' in ok.stdout, ok.stderr
    import numpy as np
    pickled = tmp_path / "obj.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    r = CliRunner().invoke(cli, ["eval", "x", "-v", f"x=@{pickled}"])
    assert r.exit_code == 2 and "cannot read" in r.stderr and "Traceback" not in r.stderr


# ============================================================================ limits

# (option, the small program that exceeds a small limit, that limit, the error's words)
SMALL_LIMITS = [
    ("max_elements", "x = zeros(10, 10)\n", "50", "a tensor of 100 elements (shape (10, 10)) exceeds the limit of 50"),
    ("max_loop_iterations", "n = 0\nfor i in range(100):\n    n += 1\n", "20",
     "the number of loop iterations exceeds the limit of 20"),
    ("max_depth", "x = " + "(" * 30 + "1" + ")" * 30 + "\n", "10", "nesting depth exceeds the limit of 10"),
    ("max_int_digits", "x = 10 ** 50\n", "20", "an integer of about 50 digits exceeds the limit of 20"),
    ("max_str_len", "x = 'ab' * 100\n", "50", "a string of 200 characters exceeds the limit of 50"),
    ("max_seconds", "while True:\n    pass\n", "0.3", "the running time (seconds) exceeds the limit of 0.3"),
]


def _option(name):
    return "--" + name.replace("_", "-")


@pytest.mark.parametrize("name, src, small, words", SMALL_LIMITS)
def test_each_limit_is_set_by_option_and_by_environment_variable(name, src, small, words):
    env_name = "GRADEXPR_" + name.upper()
    endless = ["--max-loop-iterations", "0"] if name == "max_seconds" else []   # let the clock stop it
    if name != "max_seconds":      # the default limit lets the small program run
        assert gx(src).exit_code == 0
    by_option = gx(src, _option(name), small, *endless)
    by_env = gx(src, *endless, env={env_name: small})
    for r in (by_option, by_env):
        assert r.exit_code == 1, r.stderr
        head, _ = error_block(r)
        assert head["kind"] == "LimitError" and words in head["message"], r.stderr
        assert f"raise it with {_option(name)} or {env_name}; 0 means no limit" in head["message"]
        assert "Traceback" not in r.stderr
    if name != "max_seconds":      # the option wins over the variable; 0 means no limit
        assert gx(src, _option(name), "0", env={env_name: small}).exit_code == 0


HOSTILE = [
    # (source, the words of the LimitError, the text under the caret)
    ("x = 10**10**10\n", "an integer of about 10,000,000,000 digits exceeds the limit of 10,000", "10**10**10"),
    ("s = 'a' * 10**9\n", "a string of 1,000,000,000 characters exceeds the limit of 10,000,000", "'a' * 10**9"),
    ("l = [0] * 10**9\n", "a list of 1,000,000,000 items exceeds the limit of 10,000,000", "[0] * 10**9"),
    ("x = zeros(10**5, 10**5)\n", "a tensor of 10,000,000,000 elements (shape (100000, 100000))",
     "zeros(10**5, 10**5)"),
    ("x = ones(10**4, 1) + ones(1, 10**5)\n", "a tensor of 1,000,000,000 elements (shape (10000, 100000))",
     "ones(10**4, 1) + ones(1, 10**5)"),
    ("x = arange(10**12)\n", "a tensor of 1,000,000,000,000 elements", "arange(10**12)"),
    ("x = ones(2)\ny = x.repeat(10**5, 10**5)\n", "a tensor of 20,000,000,000 elements (shape (100000, 200000))",
     "x.repeat(10**5, 10**5)"),
    ("x = ones(1)\ny = x.expand(10**5, 10**5).contiguous()\n", "a tensor of 10,000,000,000 elements",
     "x.expand(10**5, 10**5)"),
    ("x = randn(10**9)\n", "a tensor of 1,000,000,000 elements (shape (1000000000,))", "randn(10**9)"),
    ("x = ones(10**5, 1) @ ones(1, 10**5)\n", "a tensor of 10,000,000,000 elements", None),
    ("x = diag(ones(10**5))\n", "a tensor of 10,000,000,000 elements", None),
    ("x = ones(10**4)\ny = stack([x] * 10**5)\n", "a tensor of 1,000,000,000 elements", None),
    ("x = ones(10**4)\ny = cat([x] * 10**5)\n", "a tensor of 1,000,000,000 elements", None),
    ("x = tensor([[0] * 10**4] * 10**5)\n", "a tensor of 1,000,000,000 elements (shape (100000, 10000))", None),
    ("x = linspace(0, 1, 10**12)\n", "a tensor of 1,000,000,000,000 elements", None),
    ("x = full((10**5, 10**5), 1.)\n", "a tensor of 10,000,000,000 elements", None),
    ("x = F.one_hot(tensor([10**9]))\n", "a tensor of 1,000,000,001 elements", None),
    ("x = jacobian(lambda t: t * 2, ones(10**5))\n", "a tensor of 10,000,000,000 elements", None),
    ("x = randint(0, 10, (10**9,))\n", "a tensor of 1,000,000,000 elements", None),
    ("x = ones(2).new_zeros(10**5, 10**5)\n", "a tensor of 10,000,000,000 elements", None),
    ("x = ones(1, 10**5)[zeros(10**4, dtype=long)]\n", "a tensor of 1,000,000,000 elements", None),
    ("x = eye(10**5)\n", "a tensor of 10,000,000,000 elements", None),
    ("while True:\n    pass\n", "the number of loop iterations exceeds the limit of 1,000,000", "while True"),
    ("x = " + "(" * 300 + "1" + ")" * 300 + "\n", "nesting depth exceeds the limit of 200", None),
    ("s = '%*d' % (10**9, 1)\n", "a format width of 1,000,000,000 exceeds the limit of 10,000,000", None),
    ("s = f'{1:{10**9}}'\n", "a format width of 1,000,000,000 exceeds the limit of 10,000,000", None),
    ("s = 'a'.ljust(10**9)\n", "a string of 1,000,000,000 characters", None),
    ("x = sum(range(10**12))\n", "the number of loop iterations exceeds the limit of 1,000,000", None),
    ("x = list(range(10**9))\n", "a list of 1,000,000,000 items exceeds the limit of 10,000,000", None),
]


@pytest.mark.parametrize("src, words, caret", HOSTILE)
def test_hostile_programs_stop_at_a_limit_quickly_and_cleanly(src, words, caret):
    start = time.perf_counter()
    r = gx(src)
    assert time.perf_counter() - start < 10
    assert r.exit_code == 1, r.stderr
    head, rest = error_block(r)
    assert head["kind"] == "LimitError" and words in head["message"], r.stderr
    assert "0 means no limit" in head["message"] and "Traceback" not in r.stderr
    if caret is not None:
        col = int(head["col"])
        assert rest[0][4 + col - 1:].startswith(caret) and rest[1].strip().startswith("^"), r.stderr


def test_deep_recursion_of_a_user_function_is_stopped_with_a_hint():
    r = gx("def f(n):\n    return f(n + 1)\n\nf(0)\n")
    head = assert_fails(r, 1, "RecursionError", 2, 12, "maximum recursion depth exceeded",
                        "gradexpr allows 1000 nested calls (raise it with --max-recursion or GRADEXPR_MAX_RECURSION)",
                        "f(n + 1)")
    assert head


def test_deeply_nested_blocks_are_a_limit_not_a_crash():
    src = "".join("    " * k + "if True:\n" for k in range(250)) + "    " * 250 + "x = 1\n"
    r = gx(src)
    assert r.exit_code == 1 and "LimitError: block nesting depth exceeds the limit of 200" in r.stderr
    assert "Traceback" not in r.stderr


def test_wall_time_stops_a_loop_and_a_single_long_operation():
    r = gx("n = 0\nwhile True:\n    n += 1\n", "--max-seconds", "0.5", "--max-loop-iterations", "0")
    assert_fails(r, 1, "LimitError", 2, 1, "the running time (seconds) exceeds the limit of 0.5")
    start = time.perf_counter()   # one statement that runs long inside the engine: stopped by the alarm
    r = gx("x = tensor([[0.5] * 1000] * 10000)\nprint('unreachable')\n", "--max-seconds", "0.5")
    assert time.perf_counter() - start < 5
    assert_fails(r, 1, "LimitError", 1, 5, "the running time (seconds) exceeds the limit of 0.5")
    assert r.stdout == ""


@pytest.mark.parametrize("options, env, words", [
    (["--max-elements", "-1"], {}, "Invalid value for '--max-elements': must be a whole number >= 0"),
    (["--max-seconds", "soon"], {}, "Invalid value for '--max-seconds': must be a number of seconds >= 0"),
    (["--max-depth", "1.5"], {}, "Invalid value for '--max-depth'"),
    ([], {"GRADEXPR_MAX_ELEMENTS": "lots"}, "GRADEXPR_MAX_ELEMENTS must be a whole number >= 0"),
    ([], {"GRADEXPR_MAX_SECONDS": "-3"}, "GRADEXPR_MAX_SECONDS must be a number of seconds >= 0"),
])
def test_bad_limit_values_are_usage_errors(options, env, words):
    r = gx("x = 1\n", *options, env=env)
    assert r.exit_code == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_limits_accept_scientific_notation():
    assert gx("x = zeros(10, 10)\n", "--max-elements", "1e2").exit_code == 0
    assert gx("x = zeros(10, 11)\n", env={"GRADEXPR_MAX_ELEMENTS": "1e2"}).exit_code == 1


# ============================================================================ deep but legal programs still work

def test_a_100000_statement_program_builds_a_100000_op_chain_and_differentiates_it():
    src = "x = tensor(1.0, requires_grad=True)\ny = x\n" + "y = y * 1.000001\n" * 100_000 + \
        "y.backward()\nprint(x.grad)\nprint(y.grad_fn)\n"
    r = gx(src)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("tensor(1.0995)\n<MulBackward0 object at 0x")   # PyTorch's float32 result


def test_a_100000_iteration_loop_chain_with_backward():
    r = gx("x = tensor(2.0, requires_grad=True)\ny = x\nfor i in range(100000):\n    y = y + x\n"
           "y.backward()\nprint(x.grad)\n")
    assert r.exit_code == 0 and r.stdout == "tensor(100001.)\n", r.stderr


def test_100_deep_parentheses_and_blocks_are_legal():
    src = "x = " + "(" * 100 + "ones(2) + 1" + ")" * 100 + "\n"
    src += "".join("    " * k + "if True:\n" for k in range(100)) + "    " * 100 + "print(x)\n"
    r = gx(src)
    assert r.exit_code == 0 and r.stdout == "tensor([2., 2.])\n", r.stderr


# ============================================================================ as a subprocess

def _subprocess(args, source, env=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "gradexpr.cli.main", "run", *args], input=source,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def test_subprocess_syntax_error_exit_2_without_traceback():
    p = _subprocess(["-"], "x = (1 +\n")
    assert p.returncode == 2 and p.stderr.startswith("<stdin>:1:5: SyntaxError: unclosed '(' opened at 1:5\n")
    assert "Traceback" not in p.stderr


def test_subprocess_huge_allocation_refused_by_environment_limit():
    p = _subprocess(["-"], "x = ones(1)\ny = x.expand(10**5, 10**5).contiguous()\n",
                    env={"GRADEXPR_MAX_ELEMENTS": "1000"})
    assert p.returncode == 1 and "LimitError: a tensor of 10,000,000,000 elements" in p.stderr
    assert "GRADEXPR_MAX_ELEMENTS" in p.stderr and "Traceback" not in p.stderr


def test_subprocess_wall_time_interrupts_a_long_operation():
    start = time.perf_counter()
    p = _subprocess(["--max-seconds", "1", "-"], "x = tensor([[0.5] * 1000] * 20000)\n")
    assert time.perf_counter() - start < 20
    assert p.returncode == 1 and "LimitError: the running time (seconds) exceeds the limit of 1" in p.stderr
    assert "Traceback" not in p.stderr


def test_subprocess_hostile_program_with_a_runtime_error(tmp_path):
    prog = tmp_path / "p.gx"
    prog.write_text("x = ones(2, requires_grad=True)\n(x * 2).backward()\n")
    p = _subprocess([str(prog)], "")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"{prog}:2:1: RuntimeError: grad can be implicitly created only for scalar outputs\n")
    assert "\nhint: " in p.stderr
