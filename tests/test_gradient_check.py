"""``gradexpr eval --check`` when the program computes below float64 (gradexpr/gradient_check.py),
through Click's runner: the check must neither fail a right gradient because the differences
were rounding noise, nor pass a wrong one, and must say that it was a lower-precision check."""
from click.testing import CliRunner

from eval_schema import strict_loads, validate
from gradexpr.cli.main import cli

WRONG_BY = """
class Off(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.sin()
    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a.cos() * FACTOR
Off.apply(x * 2 + torch.rand(3))
"""


def check(*args, input=None, code=0):
    r = CliRunner().invoke(cli, ["eval", *args, "--check"], input=input)
    assert r.exit_code == code, (r.output, r.stderr)
    doc_run = CliRunner().invoke(cli, ["eval", *args, "--check", "--json"], input=input)
    doc = strict_loads(doc_run.stdout)
    validate(doc)
    return r.stdout, doc["check"]


def test_a_float32_operand_that_wins_promotion_no_longer_fails_a_right_gradient():
    # x is a 0-dim float64 leaf in the check's runs; rand(1) is 1-dim float32, so the target is float32
    text, doc = check("x*2 + torch.rand(1)", "-v", "x=3.0")
    leaf = doc["leaves"]["x"]
    assert doc["ok"] and leaf["precision"] == "float32" and leaf["max_abs_error"] < 1e-4
    assert 0 < leaf["rounding_allowance"] < 1e-3 and 4e-3 < leaf["eps"] < 6e-3
    assert "x: ok" in text and "the program computes in float32, so x was checked in float32" in text


def test_a_float64_program_is_still_checked_in_float64():
    text, doc = check("sin(x) * x ** 2", "-v", "x=1.5")
    assert doc["ok"] and doc["leaves"]["x"]["precision"] is None and "eps" not in doc["leaves"]["x"]
    assert "computes in" not in text


def test_a_round_trip_through_float32_is_found_on_the_graph():
    # the target is float64, but the value went through float32 on the way
    text, doc = check("(x.float() * 3).double().sin()", "-v", "x=3.0")
    assert doc["ok"] and doc["leaves"]["x"]["precision"] == "float32"


def test_float16_steps_are_extrapolated():
    # a step of 0.099 alone leaves a 1.5% truncation error in d exp(3x)/dx; h and h/2 combined do not
    text, doc = check("(x.half() * 3).exp()", "-v", "x=1.0")
    assert doc["ok"] and doc["leaves"]["x"]["precision"] == "float16" and doc["leaves"]["x"]["max_rel_error"] < 0.01


def test_a_gradient_off_by_two_tenths_of_a_percent_still_fails_in_float32():
    text, doc = check("-", "-v", "x=0.5", input=WRONG_BY.replace("FACTOR", "1.002"), code=1)
    assert not doc["ok"] and doc["leaves"]["x"]["precision"] == "float32"
    assert "x: FAILED" in text
    text, doc = check("-", "-v", "x=0.5", input=WRONG_BY.replace("FACTOR", "1.0"))
    assert doc["ok"]


def test_a_kink_still_fails_in_float32():
    text, doc = check("relu(x + zeros(1)).sum()", "-v", "x=0.", code=1)
    assert not doc["ok"] and doc["leaves"]["x"]["max_abs_error"] > 0.4
