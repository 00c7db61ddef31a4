"""A derivative on a grid is a column: x | f(x) | f'(x) (| f''(x)) when the target is elementwise in a leaf."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from eval_schema import validate
from gradexpr.cli.main import cli



def eval_(*args):
    return CliRunner().invoke(cli, ["eval", *args], catch_exceptions=False)


def eval_json(*args):
    r = eval_(*args, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    validate(doc)
    return doc


def test_detected_from_a_diagonal_jacobian_with_the_second_derivative():
    doc = eval_json("sin(x) * 2", "-v", "x=linspace(0, 3, 7)", "--hessian")
    x = np.array(doc["pointwise"]["x"]["x"]["value"])
    np.testing.assert_allclose(doc["pointwise"]["x"]["derivative"]["value"], 2 * np.cos(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(doc["pointwise"]["x"]["second_derivative"]["value"], -2 * np.sin(x), rtol=1e-5,
                               atol=1e-6)
    assert doc["jacobian"] is not None          # still there for consumers of the Jacobian


def test_plain_view_is_a_table_of_columns():
    r = eval_("x ** 2", "-v", "x=tensor([1., 2., 3.])", "--plain")
    assert "pointwise in x (the target is elementwise in x" in r.stdout
    lines = r.stdout.split("pointwise in x")[1].splitlines()
    assert lines[1].split() == ["x", "f(x)", "f'(x)"]
    assert [line.split() for line in lines[2:5]] == [["0", "1.", "1.", "2."], ["1", "2.", "4.", "4."],
                                                     ["2", "3.", "9.", "6."]]
    assert "Jacobian dtarget/dx" not in r.stdout


def test_not_elementwise_is_not_pointwise_and_jacobian_flag_keeps_the_table():
    doc = eval_json("x * x.sum()", "-v", "x=ones(3)")
    assert "pointwise" not in doc and doc["jacobian"] is not None
    r = eval_("x * 2", "-v", "x=ones(3)", "--plain", "--jacobian")
    assert "Jacobian dtarget/dx" in r.stdout and "pointwise" not in r.stdout


def test_asked_for_it_skips_the_jacobian_of_a_big_target():
    doc = eval_json("tanh(x)", "-v", "x=linspace(-2, 2, 200000)", "--pointwise")
    assert doc["jacobian"] is None
    x = np.array(doc["pointwise"]["x"]["x"]["value"])
    np.testing.assert_allclose(doc["pointwise"]["x"]["derivative"]["value"], 1 - np.tanh(x) ** 2, atol=1e-6)


def test_asked_for_on_a_target_that_is_not_elementwise_is_a_usage_error():
    r = eval_("x * x.sum()", "-v", "x=ones(3)", "--pointwise")
    assert r.exit_code == 2 and "--pointwise: the target is not elementwise" in r.stderr
    r = eval_("x.cumsum(0) + x * x.sum()", "-v", "x=ones(3)", "--hessian")
    assert r.exit_code == 2 and "--pointwise" in r.stderr


@pytest.mark.parametrize("width", (60, 80, 120))
def test_rich_column_view_fits(width):
    import io
    from rich.console import Console
    from gradexpr import session
    from gradexpr.cli.rich_view import show
    ev = session.evaluate("exp(x)", "<expr>", session.Bindings.parse(["x=linspace(-1, 1, 40)"]),
                          session.Request(hessian=True))
    out = io.StringIO()
    show(ev, Console(file=out, width=width, color_system=None))
    text = out.getvalue()
    assert "f''(x)" in text and all(len(line) <= width for line in text.splitlines())
