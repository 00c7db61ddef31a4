"""The evaluation API (gradexpr.session) from Python, and the numbers a calculator user types."""
import ast
import json
import pathlib

import pytest
from click.testing import CliRunner

from gradexpr import session
from gradexpr.cli.main import cli

ROOT = pathlib.Path(__file__).resolve().parent.parent


def eval_(*args, input=None):
    return CliRunner().invoke(cli, ["eval", *args], input=input, catch_exceptions=False)


def test_evaluate_from_python_values():
    bindings = session.Bindings.of({"x": [1.0, 2.0, 3.0]})
    ev = session.evaluate("(x ** 2).sum()", "<expr>", bindings, session.Request(hessian=True))
    assert ev.ok and ev.value.item() == 14.0
    assert ev.grads["x"].tolist() == [2.0, 4.0, 6.0]
    assert ev.hessian["x"]["x"].tolist() == [[2.0, 0, 0], [0, 2.0, 0], [0, 0, 2.0]]
    assert [n.name for n in ev.graph[0]][:2] == ["SumBackward0", "PowBackward0"]


def test_bad_requests_raise_and_program_errors_are_kept():
    with pytest.raises(session.RequestError, match="--wrt y"):
        session.evaluate("x * 2", "<expr>", session.Bindings.of({"x": 1.0}), session.Request(wrt=("y",)))
    with pytest.raises(session.RequestError) as info:
        session.Bindings.parse(variables=["x=nope(1)"])
    assert info.value.error is not None and info.value.source == "nope(1)"
    ev = session.evaluate("x / undefined", "<expr>", session.Bindings.of({"x": 1.0}), session.Request())
    assert not ev.ok and "undefined" in str(ev.error)


def test_the_engine_package_imports_no_grammar_or_cli_at_module_level():
    for path in (ROOT / "gradexpr").glob("*.py"):
        if path.name == "__main__.py":      # python -m gradexpr: the command, not the engine
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:          # module level only: session.py runs programs from inside a function
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any("grammar" in n or "cli" in n.split(".") for n in names), (path.name, names)


def test_graph_command_does_not_reach_into_eval():
    assert "eval_cmd" not in (ROOT / "cli" / "graph_cmd.py").read_text()


# ------------------------------------------------------------------ numbers a calculator user types
def test_an_integer_variable_is_differentiated_at_its_value_with_a_note():
    r = eval_("x**2", "-v", "x=3", "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["grads"]["x"]["value"] == 6.0 and doc["dtype"] == "float32"
    assert any("promoted to float32" in n and "-c x=3" in n for n in doc["notes"])
    plain = eval_("x**2", "-v", "x=3", "--plain").stdout
    assert "tensor(6.)" in plain and "note: -v x=3 is an integer" in plain


def test_a_constant_integer_stays_exact_and_an_integer_a_shape_needs_stays_an_integer():
    doc = json.loads(eval_("x**2", "-c", "x=3", "--json").stdout)
    assert doc["value"] == 9 and doc["grads"] is None
    doc = json.loads(eval_("(x * n).sum()", "-v", "n=3", "-v", "x=ones(n) * 0.5", "--json").stdout)
    assert list(doc["grads"]) == ["x"] and not any("promoted" in n for n in doc["notes"])


def test_promotion_reruns_from_the_same_random_state_and_check_uses_it():
    doc = json.loads(eval_("x * 2 + 0 * randn(1).sum()", "-v", "x=2", "--check", "--json").stdout)
    assert doc["grads"]["x"]["value"] == 2.0 and doc["check"]["ok"] is True


@pytest.mark.parametrize("expr, args, value", [
    ("-log(p)", ["-v", "p=0.5"], 0.6931471824645996),
    ("-cos(x)", ["-v", "x=0."], -1.0),
    ("-2*x", ["-vx=1."], -2.0),
])
def test_a_leading_minus_expression_is_not_an_option(expr, args, value):
    r = eval_(expr, *args, "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["value"] == pytest.approx(value)
    r = eval_(*args, expr, "--json")           # after the options too
    assert r.exit_code == 0 and json.loads(r.stdout)["value"] == pytest.approx(value)


def test_an_option_value_starting_with_minus_stays_the_value():
    doc = json.loads(eval_("x", "-v", "x=ones(2)", "--grad-output", "-ones(2)", "--json").stdout)
    assert doc["grads"]["x"]["value"] == [-1.0, -1.0]


def test_json_and_csv_files_agree(tmp_path):
    (tmp_path / "a.json").write_text("[1, 2, 3]")
    (tmp_path / "a.csv").write_text("1,2,3\n")
    docs = [json.loads(eval_("(v * v).sum()", "-c", f"v=@{tmp_path / f}", "--json").stdout)
            for f in ("a.json", "a.csv")]
    assert docs[0]["value"] == docs[1]["value"] == 14.0 and docs[0]["dtype"] == docs[1]["dtype"] == "float32"
