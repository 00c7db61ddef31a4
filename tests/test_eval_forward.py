"""``gradexpr eval --mode forward|reverse|auto`` and ``--jvp NAME=VALUE`` (issue 17): through Click's
CliRunner and as a subprocess, every JSON output validated against docs/eval.schema.json, numbers against
``torch.func.jacfwd`` and ``torch.autograd.functional.jvp`` (tests/data/eval_forward_cases.json, recorded
by make_eval_forward_cases.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from eval_schema import strict_loads, validate
from gradexpr.cli.main import cli

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = json.load(open(os.path.join(HERE, "data", "eval_forward_cases.json"), encoding="utf-8"))
CLOSE = dict(rtol=1e-5, atol=1e-7)


def eval_(*args):
    return CliRunner().invoke(cli, ["eval", *args])


def eval_json(*args, code=0):
    r = eval_(*args, "--json")
    assert r.exit_code == code, (r.output, r.stderr)
    doc = strict_loads(r.stdout)
    validate(doc)
    return doc


def _args(case, options=None):
    args = [case["program"]]
    for name, value in case["vars"]:
        args += ["-v", f"{name}={value}"]
    for name, value in case["tangents"].items():
        args += ["--jvp", f"{name}={value}"]
    return args + (case["options"] if options is None else options)


def _expected_mode(case, doc):
    mode = case["options"][1] if case["options"] else "reverse"
    if mode == "auto":
        inputs = sum(int(np.prod(leaf["shape"])) for leaf in doc["leaves"])
        return "forward" if inputs < int(np.prod(doc["shape"])) else "reverse"
    return mode


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_agrees_with_torch_func_jacfwd_and_jvp(case):
    doc = eval_json(*_args(case))
    want = case["expected"]
    np.testing.assert_allclose(doc["value"], want["value"], **CLOSE)
    assert doc["mode"] == _expected_mode(case, doc)
    for name, j in want["jacobian"].items():
        if doc["shape"]:
            np.testing.assert_allclose(doc["jacobian"][name]["value"], j, **CLOSE)
        else:                                   # a scalar target: its gradient is the Jacobian's one row
            np.testing.assert_allclose(doc["grads"][name]["value"], j, **CLOSE)
    if "jvp" in want:
        np.testing.assert_allclose(doc["jvp"]["value"]["value"], want["jvp"], **CLOSE)
        assert set(doc["jvp"]["tangents"]) == set(case["tangents"])
    else:
        assert doc["jvp"] is None


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_forward_and_reverse_mode_give_the_same_jacobian(case):
    forward = eval_json(*_args(case, ["--mode", "forward", "--jacobian"]))
    reverse = eval_json(*_args(case, ["--mode", "reverse", "--jacobian"]))
    assert (forward["mode"], reverse["mode"]) == ("forward", "reverse")
    for name, block in reverse["jacobian"].items():
        assert forward["jacobian"][name]["shape"] == block["shape"]
        np.testing.assert_allclose(forward["jacobian"][name]["value"], block["value"], rtol=1e-5, atol=1e-6)


def test_auto_chooses_forward_for_fewer_inputs_than_outputs():
    assert eval_json("x.repeat(3)", "-v", "x=[1., 2.]", "--mode", "auto")["mode"] == "forward"
    assert eval_json("x[:2] * 3", "-v", "x=[1., 2., 3.]", "--mode", "auto")["mode"] == "reverse"
    assert eval_json("x.sum()", "-v", "x=[1., 2.]", "--mode", "auto")["mode"] == "reverse"
    # a leaf the program made cannot be seeded by re-running the program: auto stays in reverse mode
    doc = eval_json("w = ones(1, requires_grad=True); (w * x).repeat(4)", "-v", "x=[1.]", "--mode", "auto")
    assert doc["mode"] == "reverse" and set(doc["jacobian"]) == {"x", "w"}


def test_default_mode_is_reverse_and_null_without_differentiation():
    assert eval_json("x * 2", "-v", "x=[1., 2.]")["mode"] == "reverse"
    assert eval_json("3 * 2")["mode"] is None


def test_forward_mode_runs_the_program_again_but_shows_what_it_printed_once():
    doc = eval_json('print("hi"); x * x', "-v", "x=[1., 2.]", "--mode", "forward", "--jvp", "x=[1., 1.]")
    assert doc["output"] == "hi\n"
    assert doc["jvp"]["value"]["value"] == [2.0, 4.0]
    assert doc["jacobian"]["x"]["value"] == [[2.0, 0.0], [0.0, 4.0]]


def test_forward_mode_reruns_the_program_from_the_random_state_it_started_with():
    # x = 1: the value is the draw a, the Jacobian diag(a) of the re-run's draw: the same numbers
    for extra in ([], ["--jvp", "x=[1., 1.]"]):
        doc = eval_json("b = rand(3); a = randn(2); x * a", "-v", "x=[1., 1.]", "--mode", "forward", *extra)
        np.testing.assert_array_equal(np.diag(doc["jacobian"]["x"]["value"]), doc["value"])
        if extra:
            assert doc["jvp"]["value"]["value"] == doc["value"]


def test_jvp_tangent_broadcast_from_a_number_and_zero_for_other_leaves():
    doc = eval_json("x * y", "-v", "x=[1., 2.]", "-v", "y=[3., 4.]", "--jvp", "x=1.")
    assert doc["jvp"]["tangents"]["x"]["value"] == [1.0, 1.0]
    assert doc["jvp"]["value"]["value"] == [3.0, 4.0]
    assert doc["mode"] == "reverse"          # the Jacobian beside it, as asked (--mode reverse, the default)


def test_forward_mode_check_passes():
    r = eval_("(x.sin() * y).sum()", "-v", "x=[0.5, 1.]", "-v", "y=[2., -1.]", "--mode", "forward", "--check",
              "--plain")
    assert r.exit_code == 0, r.output
    assert "forward mode" not in r.output or "gradients:" in r.output


@pytest.mark.parametrize("args, message", [
    (["x * 2", "-v", "x=[1., 2.]", "--jvp", "z=[1., 0.]"], "--jvp z: not a leaf of the target (leaves: x)"),
    (["x * 2", "-v", "x=[1., 2.]", "--jvp", "x=[1., 0., 0.]"],
     "--jvp x: Mismatch in shape: the tangent has a shape of torch.Size([3]) and x has a shape of torch.Size([2])."),
    (["x * 2", "-v", "x=[1., 2.]", "--jvp", "x=1.", "--jvp", "x=2."], "--jvp x: x is given two tangents"),
    (["w = ones(2, requires_grad=True); w * x", "-v", "x=[1., 2.]", "--mode", "forward"],
     "--mode forward: w was created by the program"),
    (["(x * 2).sum()", "-v", "x=[1., 2.]", "--mode", "forward", "--trace"],
     "--trace follows the backward pass: it needs --mode reverse"),
])
def test_bad_forward_requests_exit_2_with_the_option_named(args, message):
    r = eval_(*args)
    assert r.exit_code == 2, r.output
    assert message in r.stderr and "Traceback" not in r.stderr
    doc = eval_json(*args, code=2)
    assert message in doc["errors"][0]["message"]


def test_an_op_without_a_forward_formula_is_pytorchs_error():
    r = eval_("x.clamp(min=0.) + torch.remainder(2., x)", "-v", "x=[1.5, 2.5]", "--mode", "forward")
    assert r.exit_code == 1
    assert "NotImplementedError: Trying to use forward AD with aten::remainder that does not support it." in r.stderr


def test_plain_and_rich_show_the_jvp_and_the_mode():
    args = ["tanh(W @ x)", "-v", "W=[[1., 2.], [3., 4.]]", "-v", "x=[0.1, 0.2]", "--mode", "forward",
            "--jvp", "x=[1., 0.]"]
    plain = eval_(*args, "--plain").output
    assert "Jacobian-vector product (--jvp, forward mode):\nx tangent\n  tensor([1., 0.])\ntarget tangent (J.v)\n" \
        in plain
    assert "columns: x [2] (2); forward mode: a column per leaf element)" in plain
    rich = eval_(*args, "--rich").output
    assert "Jacobian–vector product" in rich and "target tangent (J·v)" in rich


def test_subprocess_forward_json():
    p = subprocess.run([sys.executable, "-m", "gradexpr", "eval", "x.exp().repeat(2)", "-v", "x=[0., 1.]",
                        "--mode", "auto", "--jvp", "x=[1., 0.]", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc = strict_loads(p.stdout)
    validate(doc)
    assert doc["mode"] == "forward"
    np.testing.assert_allclose(doc["jvp"]["value"]["value"], [1.0, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(doc["jacobian"]["x"]["value"], [[1, 0], [0, np.e], [1, 0], [0, np.e]], rtol=1e-6)
