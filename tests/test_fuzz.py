"""Fuzzing: hostile and random programs end in a clean outcome, and random differentiable
expressions have the gradients finite differences give.

Three generators, all driven by hypothesis:

- ``programs()``: syntactically plausible programs built from the language's constructs
  (statements, blocks, every operator, calls of torch functions and Tensor methods,
  attributes, subscripts, f-strings, lambdas), mostly valid, sometimes not;
- ``mutants()``: the conformance programs of ``tests/conformance`` with random byte edits;
- ``differentiable()``: compositions of ops on their safe domains, checked with
  ``gradexpr.testing.gradcheck`` in float64.

Every program runs in-process through ``gradexpr.cli.runner.execute`` with small limits and
must end with exit status 0, 1 or 2, and an error must render as one
``FILE:LINE:COL: Type: message`` block (source line, caret, optional ``hint:``) — never a
traceback. The default profile keeps the whole file well under a minute; a longer run:

    GRADEXPR_FUZZ_EXAMPLES=5000 python -m pytest tests/test_fuzz.py
"""
from __future__ import annotations

import contextvars
import functools
import io
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradexpr import errors, printing
from gradexpr import api as _engine  # noqa: F401  (imported here: NumPy's quiet error state is set in
#                                     this context, not only in the first program's copy of it)
from gradexpr.cli.diagnostics import render
from gradexpr.cli.exitcodes import Exit
from gradexpr.cli.runner import execute
from gradexpr.limits import Limits
from gradexpr.testing import gradcheck

EXAMPLES = int(os.environ.get("GRADEXPR_FUZZ_EXAMPLES", "0")) or None
FUZZ_LIMITS = Limits(max_seconds=2, max_elements=10**5, max_loop_iterations=10**4)
CONFORMANCE = sorted(Path(__file__).parent.joinpath("conformance").rglob("*.gx"))


def fuzz_settings(default_examples):
    """``default_examples`` per test, or ``GRADEXPR_FUZZ_EXAMPLES`` for a longer run."""
    return settings(max_examples=EXAMPLES or default_examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# ============================================================================ running and judging

HEADER = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): (?P<kind>[A-Z][A-Za-z]*)(?:: (?P<msg>.*))?$")


def run(source: str, filename: str = "fuzz.gx"):
    """Run ``source`` as a fresh process would (grad mode on, default print options); return
    the outcome and the rendered error text ('' when it succeeded)."""
    out = io.StringIO()
    with printing.printoptions(profile="default"):
        outcome = contextvars.copy_context().run(_grad_enabled_run, source, filename, out)
    text = render(outcome.error, source, filename) if outcome.error is not None else ""
    return outcome, text


def _grad_enabled_run(source, filename, out):
    from gradexpr.graph import enable_grad
    with enable_grad():
        return execute(source, filename, out=out, limits=FUZZ_LIMITS)


def check_clean(source: str, filename: str = "fuzz.gx"):
    """The contract for any input: exit 0/1/2, and an error is one located, rendered block."""
    outcome, text = run(source, filename)
    assert outcome.code in (Exit.OK, Exit.RUNTIME, Exit.USAGE), (outcome.code, source)
    if outcome.error is None:
        assert outcome.code == Exit.OK
        return outcome
    err = outcome.error
    assert isinstance(err, errors.GxError), f"unconverted {type(err).__name__}: {err}\n{source}"
    assert "Traceback" not in text and 'File "' not in text, text
    assert (outcome.code == Exit.USAGE) == isinstance(err, errors.SyntaxError), (outcome.code, text)
    assert err.kind not in ("MemoryError", "SystemError"), text     # a limit must come first
    lines = text.rstrip("\n").split("\n")
    head = HEADER.match(lines[0])
    assert head, f"not FILE:LINE:COL: Type: message:\n{text}\n--- source:\n{source}"
    assert head["file"] == filename and head["kind"] == err.kind
    n_source_lines = len(source.splitlines())
    line, col = int(head["line"]), int(head["col"])
    assert 1 <= line <= max(1, n_source_lines + 1) and col >= 1, text
    rest = lines[1 + err.message.count("\n"):]
    if rest and rest[0].startswith("    "):   # the source line, then the caret under the spot
        assert len(rest) >= 2 and re.fullmatch(r"    *\^+", rest[1]), text
        rest = rest[2:]
    if rest and rest[0].startswith("hint: "):
        rest = rest[1:]
    if rest:        # where backward's failing node was recorded: a note, then its line and caret
        assert rest[0].startswith("note: ") and len(rest) in (1, 3), text
        if len(rest) == 3:
            assert rest[1].startswith("    ") and re.fullmatch(r"    *\^+", rest[2]), text
    return outcome


# ============================================================================ a program generator

NAMES = ["x", "y", "z", "w", "n", "s", "f", "g", "i", "j"]
CALLABLES = ("tensor ones zeros full eye arange linspace rand randn randint randperm zeros_like ones_like "
             "rand_like randn_like manual_seed add sub mul div pow neg abs sqrt exp log sin cos tanh sigmoid "
             "relu clamp where maximum minimum lerp sum mean prod max min amax argmax std var norm logsumexp "
             "cumsum all any matmul mm bmm mv dot outer t transpose permute reshape flatten squeeze unsqueeze "
             "cat stack split chunk narrow select index_select gather masked_fill flip roll tril triu diag "
             "diagonal clone isclose allclose equal isnan isinf softmax log_softmax dropout grad jacobian "
             "hessian vjp jvp hvp range len list tuple dict str repr print int float bool round abs sorted "
             "reversed enumerate zip isinstance type pow no_grad enable_grad").split()
QUALIFIED = ("torch.ones torch.tensor torch.zeros torch.set_grad_enabled torch.linalg.norm torch.autograd.grad "
             "F.relu F.gelu F.softmax F.mse_loss F.cross_entropy F.one_hot F.linear F.dropout F.silu "
             "torch.optim.SGD torch.optim.Adam torch.float64 torch.int64 torch.bool").split()
METHODS = ("sum mean max min backward item tolist numpy size dim numel view reshape expand repeat t "
           "transpose permute squeeze unsqueeze flatten contiguous clone detach requires_grad_ retain_grad "
           "add add_ mul mul_ zero_ fill_ clamp clamp_ exp log sqrt pow abs neg sigmoid tanh relu softmax "
           "float double long int bool to type_as index_select gather masked_fill cumsum norm std var argmax "
           "split chunk unbind flip roll tril diag diagonal matmul mm dot sum_to_size new_zeros new_ones "
           "append pop keys items join upper format").split()
ATTRIBUTES = ("grad grad_fn requires_grad is_leaf data shape dtype T mT ndim next_functions name "
              "__class__ __dict__ __globals__ _data").split()
KEYWORDS = ["dim", "keepdim", "requires_grad", "dtype", "retain_graph", "create_graph", "gradient", "p",
            "alpha", "min", "max", "end", "sep", "inputs", "allow_unused"]
BINOPS = "+ - * / // % ** @ & | ^ << >>".split()
CMPOPS = "== != < <= > >= is in".split() + ["is not", "not in"]


def _join(parts, sep=", "):
    return sep.join(parts)


@functools.lru_cache(maxsize=None)
def leaves():
    ints = st.one_of(st.integers(-3, 6), st.sampled_from([10**3, 10**5, 10**9, 2**63, 10**20, -1, -10**6]))
    floats = st.one_of(st.sampled_from(["0.5", "1.", "-2.5", "1e-3", "1e308", "3.14", "0."]),
                       st.floats(-10, 10, allow_nan=False).map(repr))
    strings = st.sampled_from(["'a'", '"text"', "''", "'%d'", "'{}'", '"""doc"""', "'\\n'"])
    return st.one_of(
        st.sampled_from(NAMES), st.sampled_from(NAMES), ints.map(str), floats,
        strings, st.sampled_from(["True", "False", "None", "pi", "inf", "nan", "e", "float64", "int64", "bool"]),
        st.sampled_from(["ones(2, 3)", "ones(3, requires_grad=True)", "tensor([1., 2., 3.])", "arange(6)",
                         "randn(2, 2, requires_grad=True)", "tensor([[1, 2], [3, 4]])", "tensor(2.)",
                         "zeros(3, dtype=float64)", "tensor([True, False])", "torch", "F"]),
    )


@functools.lru_cache(maxsize=None)
def expressions(depth=3):
    if depth <= 0:
        return leaves()
    sub = expressions(depth - 1)
    args = st.lists(st.one_of(sub, sub, sub, sub.map(lambda a: f"*{a}")), max_size=3)
    kwargs = st.lists(st.tuples(st.sampled_from(KEYWORDS), sub), max_size=2)

    def call_text(fn, a, kw):
        return f"{fn}({_join(list(a) + [f'{k}={v}' for k, v in kw])})"

    index = st.one_of(sub, st.sampled_from([":", "0", "-1", "1:", "::2", "None", "...", "0, 1", ":, 0",
                                            "[0, 1]", "tensor([True, False])", "1:2, None", "5"]))
    return st.one_of(
        leaves(),
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub, st.sampled_from(BINOPS), sub),
        st.builds(lambda op, a: f"({op}{a})", st.sampled_from(["-", "+", "~", "not "]), sub),
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub, st.sampled_from(CMPOPS), sub),
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub, st.sampled_from(["and", "or"]), sub),
        st.builds(lambda a, c, b: f"({a} if {c} else {b})", sub, sub, sub),
        st.builds(call_text, st.one_of(st.sampled_from(CALLABLES), st.sampled_from(QUALIFIED)), args, kwargs),
        st.builds(lambda o, m, a, kw: call_text(f"{o}.{m}", a, kw), sub, st.sampled_from(METHODS), args, kwargs),
        st.builds(lambda o, a: f"{o}.{a}", sub, st.sampled_from(ATTRIBUTES)),
        st.builds(lambda o, i: f"{o}[{i}]", sub, index),
        st.builds(lambda xs: f"[{_join(xs)}]", st.lists(sub, max_size=4)),
        st.builds(lambda xs: f"({_join(xs)},)", st.lists(sub, min_size=1, max_size=3)),
        st.builds(lambda k, v: f"{{{k}: {v}}}", sub, sub),
        st.builds(lambda v, conv: f"f\"<{{{v}{conv}}}>\"", sub, st.sampled_from(["", "!r", ":.3f", ":>8", ":d", "!s"])),
        st.builds(lambda p, body, a: f"(lambda {p}: {body})({a})", st.sampled_from(NAMES), sub, sub),
    )


@functools.lru_cache(maxsize=None)
def simple_statements():
    e = expressions(2)
    target = st.one_of(st.sampled_from(NAMES), st.builds(lambda a, b: f"{a}, {b}", st.sampled_from(NAMES),
                                                         st.sampled_from(NAMES)),
                       st.builds(lambda a, i: f"{a}[{i}]", st.sampled_from(NAMES), st.sampled_from(["0", ":", "1, 0"])),
                       st.builds(lambda a, t: f"{a}.{t}", st.sampled_from(NAMES),
                                 st.sampled_from(["requires_grad", "grad", "data", "shape", "__class__"])),
                       expressions(1))
    valid = st.one_of(
        st.builds(lambda t, v: f"{t} = {v}", target, e),
        st.builds(lambda t, op, v: f"{t} {op}= {v}", st.sampled_from(NAMES), st.sampled_from(BINOPS), e),
        e,
        st.builds(lambda v: f"print({v})", e),
        st.builds(lambda v: f"{v}.backward()", st.sampled_from(NAMES)),
        st.builds(lambda v: f"assert {v}", e),
        st.sampled_from(["pass", "break", "continue", "import torch", "from torch import *", "# a comment",
                         "x.grad = None", "z[0] = 5.", "print(x.grad)"]),
    )
    # statements outside the language or misplaced: refused, rarely drawn
    refused = st.sampled_from(["return x", "import os", "del x", "global x", "x = yield", "class A: pass",
                               "try: pass", "x = [a for a in y]", "raise x", "f(**g)", "x := 1"])
    return st.one_of(valid, valid, valid, valid, valid, valid, refused)


@functools.lru_cache(maxsize=None)
def blocks(depth=2):
    """A list of (indent level, line) pairs."""
    simple = simple_statements().map(lambda s: [(0, s)])
    if depth <= 0:
        return st.lists(simple, min_size=1, max_size=3).map(lambda ls: sum(ls, []))
    inner = blocks(depth - 1)

    def nest(header, body):
        return [(0, header)] + [(k + 1, s) for k, s in body]

    e = expressions(1)
    compound = st.one_of(
        st.builds(lambda c, b: nest(f"if {c}:", b), e, inner),
        st.builds(lambda c, b, o: nest(f"if {c}:", b) + nest("else:", o), e, inner, inner),
        st.builds(lambda c, b, d, o: nest(f"if {c}:", b) + nest(f"elif {d}:", o), e, inner, e, inner),
        st.builds(lambda v, it, b: nest(f"for {v} in {it}:", b), st.sampled_from(NAMES),
                  st.one_of(e, st.sampled_from(["range(5)", "range(10**9)", "[1, 2]", "ones(3)", "x"])), inner),
        st.builds(lambda c, b: nest(f"while {c}:", b), st.one_of(e, st.just("True")), inner),
        st.builds(lambda name, ps, b, r: nest(f"def {name}({ps}):", b + [(0, f"return {r}")]),
                  st.sampled_from(NAMES), st.sampled_from(["", "a", "a, b=1", "a, *rest", "x"]), inner, e),
        st.builds(lambda cm, b: nest(f"with {cm}:", b),
                  st.sampled_from(["no_grad()", "torch.no_grad()", "enable_grad()", "torch.set_grad_enabled(False)",
                                   "x", "open('f')"]), inner),
    )
    return st.lists(st.one_of(simple, simple, compound), min_size=1, max_size=4).map(lambda ls: sum(ls, []))


PROLOGUE = """manual_seed(0)
x = ones(2, 3, requires_grad=True)
y = tensor([1., 2., 3.])
z = randn(3, requires_grad=True)
w = [1, 2.5, ones(2)]
n = 3
s = "ab"
f = lambda a, b=1: a * b
g = {"k": ones(2), "v": 2}
i = 0
j = tensor([[1, 2], [3, 4]])
"""


@st.composite
def programs(draw):
    lines = draw(blocks(2))
    indent = draw(st.sampled_from(["    ", "  ", "\t"]))
    text = "\n".join(indent * k + s for k, s in lines) + "\n"
    return (PROLOGUE if draw(st.integers(0, 9)) else "") + text


# ============================================================================ the fuzz tests

@fuzz_settings(500)
@given(programs())
def test_random_programs_end_cleanly(src):
    check_clean(src)


_INTERESTING = b"()[]{}:;,.'\"\\\n\t #=+-*/@^~<>!%&|0123456789e_xf\x00\xff\xc3"


@st.composite
def mutants(draw):
    path = draw(st.sampled_from(CONFORMANCE))
    data = bytearray(path.read_bytes())
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "duplicate", "replace"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            one_interesting = st.sampled_from(_INTERESTING).map(lambda c: bytes([c]))
            data[at:at] = draw(st.binary(min_size=1, max_size=3) | one_interesting)
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 20))]
        elif kind == "duplicate":
            data[at:at] = data[at:at + draw(st.integers(1, 40))]
        elif data:
            data[at] = draw(st.sampled_from(_INTERESTING))
    return path.name, bytes(data)


@fuzz_settings(800)
@given(mutants())
def test_mutated_conformance_programs_end_cleanly(case):
    name, data = case
    check_clean(data.decode("utf-8", errors="replace"), name)


# ------------------------------------------------------------ differentiable expressions

# templates of smooth compositions: each op kept on a domain where it is differentiable
_UNARY = [
    "({a}).sin()", "({a}).cos()", "({a}).tanh()", "({a}).sigmoid()", "(({a}) ** 2)", "(({a}) ** 3)",
    "(1 + ({a}) ** 2).log()", "(1 + ({a}) ** 2).sqrt()", "(({a}).tanh()).exp()", "(-({a}))",
    "F.softplus({a})", "F.silu({a})", "F.gelu({a})", "(({a}) * 0.5)", "torch.atan({a})",
    "(1 + ({a}) ** 2).rsqrt()", "(({a}) / (1 + ({a}) ** 2))", "(({a}).tanh() * 0.9).asin()",
    "F.softmax({a}, dim=-1)", "F.log_softmax({a}, dim=-1)", "({a}).cumsum(-1)", "({a}).flip(-1)",
    "({a}).sum(-1, keepdim=True).expand_as({a})", "(({a}) - ({a}).mean())", "({a}).t().t()",
    "(1 + ({a}) ** 2).log1p()", "torch.erf({a})", "(({a}).sigmoid() + 0.5).reciprocal()",
]
_BINARY = [
    "(({a}) + ({b}))", "(({a}) - ({b}))", "(({a}) * ({b}))", "(({a}) / (2 + ({b}).sin()))",
    "torch.atan2({a}, 2 + ({b}).cos())", "((1.5 + ({a}).sin()) ** ({b}).tanh())",
    "torch.lerp({a}, {b}, 0.25)", "(({a}) * ({b}).sum())", "torch.where(y > 0, {a}, {b})",
]
_REDUCE = ["({a}).sum()", "({a}).mean()", "(1 + (({a}) ** 2).sum()).sqrt()", "torch.logsumexp({a}, dim=-1).sum()",
           "({a}).prod()", "(({a}) @ ({b}).t()).sum()", "(1 + (({a}) ** 2).sum()).log()", "({a}).var()",
           "(({a}) * ({b})).sum(0).sum()", "(({a}).sin() * ({b}).cos()).sum()"]
# not here: sqrt, norm and std of something that may be 0 (``a - a``), where the derivative is nan


@st.composite
def differentiable(draw, depth=4):
    def build(d):
        if d == 0:
            return draw(st.sampled_from(["a", "b", "a", "b", "(a * 0.5 + 0.1)"]))
        if draw(st.booleans()):
            return draw(st.sampled_from(_UNARY)).format(a=build(d - 1))
        return draw(st.sampled_from(_BINARY)).format(a=build(d - 1), b=build(d - 1))
    body = build(draw(st.integers(1, depth)))
    if draw(st.booleans()):
        body = draw(st.sampled_from(_REDUCE)).format(a=body, b=build(1))
    return body


@fuzz_settings(100)
@given(differentiable(), st.integers(0, 2**32 - 1))
def test_random_differentiable_expressions_match_finite_differences(body, seed):
    outcome, text = run(f"f = lambda a, b: {body}\ny = tensor([0.5, -1.0, 2.0], dtype=float64)\n")
    assert outcome.code == Exit.OK, text
    f = outcome.interpreter.globals["f"]
    rng = np.random.default_rng(seed)
    from gradexpr import functions as T
    a = T.tensor(rng.uniform(-1.5, 1.5, (2, 3)), dtype=T.dtypes.float64, requires_grad=True)
    b = T.tensor(rng.uniform(-1.5, 1.5, (2, 3)), dtype=T.dtypes.float64, requires_grad=True)
    assert gradcheck(f, (a, b), eps=1e-6, atol=1e-5, rtol=1e-3)


# ============================================================================ the harness itself

@pytest.mark.parametrize("src", [
    "x = ones(2)\nprint(x)\n",
    "x = (1 +\n",
    "x = ones(2, requires_grad=True)\n(x * 2).backward()\n",
    "while True:\n    pass\n",
])
def test_the_harness_accepts_clean_outcomes(src):
    check_clean(src)


@pytest.mark.parametrize("error", [
    ValueError("a raw Python exception"),                       # not converted: would print "fuzz.gx: ValueError"
    errors.RuntimeError("no location"),                         # not located
    errors.RuntimeError("wrong exit status").at("fuzz.gx", 1, 1),
])
def test_the_harness_rejects_unclean_outcomes(monkeypatch, error):
    from gradexpr.cli.runner import Outcome
    code = Exit.USAGE if "exit status" in str(error) else Exit.RUNTIME
    monkeypatch.setattr(sys.modules[__name__], "execute", lambda *a, **k: Outcome(code, error))
    with pytest.raises(AssertionError):
        check_clean("x = 1\n")
