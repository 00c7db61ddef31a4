"""``gradexpr eval``: the commands of issue 3 through Click's CliRunner and as a subprocess,
every JSON output validated against docs/eval.schema.json (tests/eval_schema.py), numbers against PyTorch's
(tests/data/eval_functional_cases.json, recorded by make_eval_functional_cases.py)."""
import json
import math
import os
import re
import subprocess
import sys
import time

import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner

from eval_schema import strict_loads, validate
from gradexpr.cli.main import cli

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = json.load(open(os.path.join(HERE, "data", "eval_functional_cases.json"), encoding="utf-8"))


def eval_(*args, input=None):
    return CliRunner().invoke(cli, ["eval", *args], input=input)


def eval_json(*args, input=None, code=0):
    r = eval_(*args, "--json", input=input)
    assert r.exit_code == code, (r.output, r.stderr)
    doc = strict_loads(r.stdout)
    validate(doc)
    return doc


def test_validator_rejects_what_the_schema_forbids():
    good = eval_json("x.sum()", "-v", "x=ones(2)")
    for broken in ({**good, "value": float("nan")}, {**good, "extra": 1}, {**good, "grads": {"x": {"shape": [2]}}},
                   {k: v for k, v in good.items() if k != "graph"}, {**good, "schema": "gradexpr-eval/2"}):
        with pytest.raises(jsonschema.ValidationError):
            validate(broken)


# ------------------------------------------------------------------ the commands of the issue
FIRST_PLAIN = """\
value:
tensor(27., grad_fn=<MeanBackward0>)

grad_fn:
MeanBackward0 [] float32 (n0)  ← target
MulBackward0 [2, 2] float32 (n1)
PowBackward0 [2, 2] float32 (n2)
AddBackward0 [2, 2] float32 (n3)
x: AccumulateGrad [2, 2] float32 (n4)

gradients:
x [2, 2] float32
  tensor([[4.5000, 4.5000],
          [4.5000, 4.5000]])
"""


def test_first_command_plain_is_stable_text():
    r = eval_("((x + 2) ** 2 * 3).mean()", "-v", "x=ones(2, 2)")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == FIRST_PLAIN
    assert r.stderr == ""


def test_first_command_json():
    doc = eval_json("((x + 2) ** 2 * 3).mean()", "-v", "x=ones(2, 2)")
    assert doc["value"] == 27.0 and doc["shape"] == [] and doc["dtype"] == "float32"
    assert doc["grad_fn"] == "MeanBackward0" and doc["text"] == "tensor(27., grad_fn=<MeanBackward0>)"
    assert doc["grads"] == {"x": {"shape": [2, 2], "dtype": "float32", "value": [[4.5, 4.5], [4.5, 4.5]]}}
    assert [n["name"] for n in doc["graph"]["nodes"]] == [
        "MeanBackward0", "MulBackward0", "PowBackward0", "AddBackward0", "torch::autograd::AccumulateGrad"]
    assert doc["graph"]["nodes"][-1]["variable"] == "x"
    assert doc["graph"]["edges"][0] == {"source": "n1", "target": "n0", "input": 0}
    assert doc["jacobian"] is None and doc["hessian"] is None and doc["errors"] == []


def test_first_command_rich_shows_tree_and_table():
    r = eval_("((x + 2) ** 2 * 3).mean()", "-v", "x=ones(2, 2)", "--rich")
    assert r.exit_code == 0
    for text in ("tensor(27., grad_fn=<MeanBackward0>)", "MeanBackward0 [] float32 (n0)", "x: AccumulateGrad", "gradients",
                 "4.5000"):
        assert text in r.stdout
    assert "\x1b[" not in eval_("x.sum()", "-v", "x=ones(2)", "--plain").stdout


def test_second_command_jacobian_of_a_tanh_layer():
    doc = eval_json("tanh(W @ x + b)", "-v", "W=randn(3, 4)", "-v", "x=ones(4)", "-c", "b=zeros(3)", "--jacobian")
    assert [leaf["name"] for leaf in doc["leaves"]] == ["W", "x"]      # b is a constant
    y = np.array(doc["value"])
    jw, jx = np.array(doc["jacobian"]["W"]["value"]), np.array(doc["jacobian"]["x"]["value"])
    assert jw.shape == (3, 3, 4) and jx.shape == (3, 4)
    assert doc["jacobian"]["W"]["rows"] == 3 and doc["jacobian"]["W"]["columns"] == 12
    d = 1 - y ** 2
    # y_i = tanh(sum_k W_ik) since x = 1: dy_i/dW_ik = d_i, and sum_k dy_i/dx_k = d_i * atanh(y_i)
    np.testing.assert_allclose(jw, d[:, None, None] * np.eye(3)[:, :, None] * np.ones((1, 1, 4)), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(jx.sum(1), d * np.arctanh(y), rtol=1e-4, atol=1e-5)
    assert doc["grads"] is None


MODEL = """\
W = tensor([[1., 2.], [3., 4.]], requires_grad=True)
x = tensor([0.5, -1.])
print("building the loss")
h = (W @ x).tanh()
loss = (h ** 2).sum()
"""


def test_third_command_hessian_of_a_named_target_in_a_file(tmp_path):
    model = tmp_path / "model.gx"
    model.write_text(MODEL)
    doc = eval_json("-f", str(model), "--of", "loss", "--hessian")
    assert doc["target"] == "loss" and doc["output"] == "building the loss\n"
    assert doc["leaves"] == [{"name": "W", "shape": [2, 2], "dtype": "float32", "bound": "program"}]
    W, x = np.array([[1., 2.], [3., 4.]]), np.array([0.5, -1.])
    h = np.tanh(W @ x)
    np.testing.assert_allclose(doc["grads"]["W"]["value"], np.outer(2 * h * (1 - h ** 2), x), rtol=1e-5)
    second = 2 * (1 - h ** 2) * (1 - 3 * h ** 2)    # d/dz of 2 tanh(z) (1 - tanh(z)^2)
    expected = np.einsum("ik,i,j,l->ijkl", np.eye(2), second, x, x)
    np.testing.assert_allclose(doc["hessian"]["W"]["W"]["value"], expected, rtol=1e-5, atol=1e-6)
    r = eval_("-f", str(model), "--of", "loss", "--hessian", "--plain")
    assert r.stdout.startswith("printed:\nbuilding the loss\n\nvalue:\ntensor(1.7927, grad_fn=<SumBackward0>)")
    assert "Hessian d2loss/dWdW (rows: W [2, 2] (4), columns: W [2, 2] (4))" in r.stdout
    assert "loss: SumBackward0 [] float32 (n0)" in r.stdout


def test_fourth_command_program_made_leaf_from_stdin():
    r = eval_("-", input="x = ones(3, requires_grad=True); (x ** 3).sum()")
    assert r.exit_code == 0, r.stderr
    assert "x: AccumulateGrad [3] float32 (n2)" in r.stdout and "tensor([3., 3., 3.])" in r.stdout
    doc = eval_json("-", input="x = ones(3, requires_grad=True); (x ** 3).sum()")
    assert doc["leaves"] == [{"name": "x", "shape": [3], "dtype": "float32", "bound": "program"}]
    assert doc["grads"]["x"]["value"] == [3.0, 3.0, 3.0]
    unnamed = eval_json("-", input="(ones(2, requires_grad=True) * 2).sum()")
    assert list(unnamed["grads"]) == ["<leaf 1>"]


def test_fifth_command_batch_one_json_object_per_line(tmp_path):
    exprs = tmp_path / "exprs.txt"
    exprs.write_text("x.sum()\n\n# a comment\n(x ** 2).mean()\nx ^ 2\nsin(x)\nnope(\n")
    r = eval_("--batch", str(exprs), "-v", "x=linspace(0, 1, 5)")
    assert r.exit_code == 1       # lines 5 and 7 failed; the others still ran
    docs = [strict_loads(line) for line in r.stdout.splitlines()]
    for doc in docs:
        validate(doc)
    assert [d["line"] for d in docs] == [1, 4, 5, 6, 7]
    assert docs[0]["grads"]["x"]["value"] == [1.0] * 5
    np.testing.assert_allclose(docs[1]["grads"]["x"]["value"], np.linspace(0, 1, 5) * 2 / 5, rtol=1e-6)
    assert docs[2]["error"]["type"] == "NotImplementedError" and docs[2]["error"]["line"] == 5
    assert docs[2]["error"]["exit_status"] == 1 and "**" in docs[2]["error"]["hint"]
    assert docs[3]["jacobian"]["x"]["shape"] == [5, 5]
    assert docs[4]["error"]["type"] == "SyntaxError" and docs[4]["error"]["exit_status"] == 2
    assert f"{exprs}:5:1: NotImplementedError" in r.stderr and "Traceback" not in r.stderr
    ok = eval_("--batch", "-", "-v", "x=ones(2)", input="x.sum()\n(x * 3).sum()\n")
    assert ok.exit_code == 0 and len(ok.stdout.splitlines()) == 2


def test_batch_check_reruns_each_line_from_its_own_random_state():
    # eval takes the random state only for --check; each line's check must still replay that line's draws
    lines = "W = randn(3, 2); tanh(W @ x)\nW = randn(4, 2); (W @ x).sum()\n(rand(2) * x).sum()\n"
    r = eval_("--batch", "-", "-v", "x=tensor([0.3, -0.7])", "--check", input="manual_seed(0)\n" + lines)
    assert r.exit_code == 0, r.stderr
    docs = [strict_loads(line) for line in r.stdout.splitlines()]
    assert len(docs) == 4 and all(d["check"]["ok"] for d in docs[1:]), [d["check"] for d in docs]
    plain = eval_("--batch", "-", "-v", "x=tensor([0.3, -0.7])", input="manual_seed(0)\n" + lines)
    assert [d["value"] for d in map(strict_loads, plain.stdout.splitlines())] == [d["value"] for d in docs]


def test_sixth_command_trace_and_check():
    r = eval_("sin(x) * x ** 2", "-v", "x=1.5", "--trace", "--check")
    assert r.exit_code == 0, r.stderr
    assert "trace (the backward pass in the order the engine ran it):\n1. MulBackward0 (n0)" in r.stdout
    assert re.search(r"x: ok  max abs error \S+  max rel error \S+  \(1 of 1 elements\)", r.stdout)
    doc = eval_json("sin(x) * x ** 2", "-v", "x=1.5", "--trace", "--check")
    assert [s["name"] for s in doc["trace"]] == ["MulBackward0", "PowBackward0", "SinBackward0"]
    names = {n["id"]: n["name"] for n in doc["graph"]["nodes"]}
    assert all(names[s["node"]] == s["name"] for s in doc["trace"])
    first = doc["trace"][0]
    assert first["grad_in"]["value"] == 1.0 and [s["input"] for s in first["sent"]] == [0, 1]
    x = 1.5
    assert first["sent"][0]["grad"]["value"] == pytest.approx(x ** 2)             # to sin(x)
    assert first["sent"][1]["grad"]["value"] == pytest.approx(math.sin(x), rel=1e-6)  # to x ** 2
    into_x = [s["grad"]["value"] for step in doc["trace"] for s in step["sent"] if s["label"] == "x"]
    assert sum(into_x) == pytest.approx(doc["grads"]["x"]["value"], rel=1e-6)
    assert doc["grads"]["x"]["value"] == pytest.approx(math.cos(x) * x ** 2 + 2 * x * math.sin(x), rel=1e-6)
    assert doc["check"]["ok"] and doc["check"]["leaves"]["x"]["max_abs_error"] < 1e-5


def test_check_fails_beyond_tolerance_with_exit_1():
    r = eval_("relu(x).sum()", "-v", "x=tensor([0., 1.])", "--check")     # a kink at 0: autograd says 0
    assert r.exit_code == 1
    assert "x: FAILED" in r.stdout and "gradient check failed for x" in r.stderr
    doc = eval_json("relu(x).sum()", "-v", "x=tensor([0., 1.])", "--check", code=1)
    assert doc["ok"] is False and doc["check"]["leaves"]["x"]["max_abs_error"] == pytest.approx(0.5)


def test_check_of_a_jacobian_reuses_the_random_draws_of_the_program():
    doc = eval_json("W = randn(3, 2); tanh(W @ x)", "-v", "x=tensor([0.3, -0.7])", "--check")
    assert doc["check"]["ok"], doc["check"]
    program_leaf = eval_json("-", "--check", input="x = ones(2, requires_grad=True); (x * 2).sum()")
    assert program_leaf["check"]["leaves"]["x"]["skipped"].startswith("created by the program")


# ------------------------------------------------------------------ PyTorch's numbers
def _flag_args(case):
    args = [case["expr"]]
    for name, value in case["vars"]:
        args += ["-v", f"{name}={value}"]
    args += case["options"]
    if case["grad_output"]:
        args += ["--grad-output", case["grad_output"]]
    return args


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_agrees_with_pytorch_on_the_functional_cases(case):
    doc = eval_json(*_flag_args(case))
    want = case["expected"]
    close = dict(rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(doc["value"], want["value"], **close)
    assert (doc["grads"] is None) == ("grads" not in want)
    for name, g in want.get("grads", {}).items():
        np.testing.assert_allclose(doc["grads"][name]["value"], g, **close)
    assert (doc["jacobian"] is None) == ("jacobian" not in want)
    for name, j in want.get("jacobian", {}).items():
        np.testing.assert_allclose(doc["jacobian"][name]["value"], j, **close)
    assert (doc["hessian"] is None) == ("hessian" not in want)
    for a, row in want.get("hessian", {}).items():
        for b, h in row.items():
            np.testing.assert_allclose(doc["hessian"][a][b]["value"], h, **close)


# ------------------------------------------------------------------ values from files
def test_values_from_npy_csv_json_files(tmp_path):
    np.save(tmp_path / "a.npy", np.array([[1., 2.], [3., 4.]]))
    (tmp_path / "b.csv").write_text("1,2\n3,4\n")
    (tmp_path / "c.json").write_text("[[1.0, 2.0], [3.0, 4.0]]")
    for name, dtype in (("a.npy", "float64"), ("b.csv", "float32"), ("c.json", "float32")):
        doc = eval_json("(v * v).sum()", "-v", f"v=@{tmp_path / name}")
        assert doc["value"] == 30.0 and doc["dtype"] == dtype
        assert doc["grads"]["v"]["value"] == [[2.0, 4.0], [6.0, 8.0]]


def test_missing_or_malformed_files_name_the_file_and_exit_2(tmp_path):
    (tmp_path / "bad.csv").write_text("1,2\n3,x\n")
    (tmp_path / "bad.json").write_text("[[1, 2], [3]")
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for name in ("missing.npy", "bad.csv", "bad.json", "bad.npy", "obj.npy", "data.txt"):
        r = eval_("v.sum()", "-v", f"v=@{tmp_path / name}")
        assert r.exit_code == 2, (name, r.stderr)
        assert str(tmp_path / name) in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ options and errors
def test_grad_output_gives_a_vector_jacobian_product():
    doc = eval_json("x ** 2", "-v", "x=tensor([1., 2., 3.])", "--grad-output", "tensor([1., 0., 2.])")
    assert doc["grads"]["x"]["value"] == [2.0, 0.0, 12.0] and doc["jacobian"] is None
    assert doc["grad_output"]["value"] == [1.0, 0.0, 2.0]
    r = eval_("x ** 2", "-v", "x=tensor([1., 2.])", "--grad-output", "ones(3)")
    assert r.exit_code == 2 and "Mismatch in shape" in r.stderr


def test_wrt_limits_the_leaves_and_constants_are_not_leaves():
    doc = eval_json("(a * b).sum()", "-v", "a=ones(2)", "-v", "b=tensor([2., 3.])", "--wrt", "b")
    assert list(doc["grads"]) == ["b"] and doc["grads"]["b"]["value"] == [1.0, 1.0]
    doc = eval_json("(a * b).sum()", "-v", "a=ones(2)", "-c", "b=tensor([2., 3.])")
    assert list(doc["grads"]) == ["a"]
    r = eval_("(a * 2).sum()", "-v", "a=ones(2)", "--wrt", "z")
    assert r.exit_code == 2 and "--wrt z" in r.stderr


def test_values_are_expressions_that_see_earlier_bindings():
    doc = eval_json("(x * n).sum()", "-v", "n=3", "-v", "x=ones(n) * 0.5")
    assert doc["value"] == 4.5 and list(doc["grads"]) == ["x"]     # an int is not a leaf
    assert eval_json("x.sum()", "-v", "x=[1., 2.]")["grads"]["x"]["value"] == [1.0, 1.0]


@pytest.mark.parametrize("args, message", [
    (["x * x.sum()", "-v", "x=ones(2)", "--hessian"], "--hessian needs a scalar target"),   # x * 2: f'' (pointwise)
    (["x * 2", "-v", "x=ones(2)", "--trace"], "--trace follows one backward pass"),
    (["x * 2", "-v", "x=ones(2)", "--of", "y"], "--of y"),
    (["y = 2"], "nothing to evaluate"),
    (["x", "-v", "x=ones(2"], "SyntaxError"),
    (["x", "-v", "1x=2"], "expected NAME=VALUE"),
    (["x", "-f", "prog.gx"], "exactly one program"),
    (["--batch", "-", "--plain"], "JSON"),
])
def test_usage_errors_exit_2(args, message):
    r = eval_(*args)
    assert r.exit_code == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_program_errors_exit_1_with_a_located_diagnostic_and_json_errors():
    r = eval_("y = x * 2\ny.backward()\ny", "-v", "x=ones(2)")
    assert r.exit_code == 1 and r.stdout == ""
    assert "<expr>:2:1: RuntimeError: grad can be implicitly created only for scalar outputs" in r.stderr
    doc = eval_json("y = x * 2\ny.backward()\ny", "-v", "x=ones(2)", code=1)
    assert doc["ok"] is False and doc["value"] is None
    assert doc["errors"][0]["type"] == "RuntimeError" and doc["errors"][0]["line"] == 2
    assert eval_("x = (1 +").exit_code == 2


def test_non_finite_numbers_are_strings_in_json():
    doc = eval_json("log(x) * 1", "-v", "x=tensor([0., 1., -1.])")
    assert doc["value"] == ["-inf", 0.0, "nan"]
    assert doc["jacobian"]["x"]["value"][0][0] == "inf"
    assert eval_json("x.sqrt().sum()", "-v", "x=zeros(1)")["grads"]["x"]["value"] == ["inf"]


def test_non_tensor_and_untracked_targets():
    doc = eval_json("1 + 2.5")
    assert doc["value"] == 3.5 and doc["shape"] is None and doc["grads"] is None
    doc = eval_json("ones(2) * 2")
    assert doc["requires_grad"] is False and doc["graph"] == {"nodes": [], "edges": []} and doc["notes"]


def test_printed_output_is_a_section_not_mixed_into_json():
    doc = eval_json('print("hi"); x.sum()', "-v", "x=ones(2)")
    assert doc["output"] == "hi\n"
    assert eval_('print("hi"); x.sum()', "-v", "x=ones(2)").stdout.startswith("printed:\nhi\n\nvalue:")


def test_big_jacobians_are_capped_tables_and_big_tensors_summarised():
    r = eval_("x * 2", "-v", "x=ones(2000)", "--plain", "--jacobian")     # (without: the pointwise column)
    assert r.exit_code == 0
    assert "tensor([2., 2., 2.,  ..., 2., 2., 2.], grad_fn=<MulBackward0>)" in r.stdout
    assert "(showing 12 of 2000 rows and 8 of 2000 columns; --json has them all)" in r.stdout
    assert len(r.stdout.splitlines()) < 40


def test_shared_subexpressions_are_shown_once():
    r = eval_("y = x * 2; (y * y).sum()", "-v", "x=ones(2)", "--plain")
    assert "MulBackward0 (shown above) (n2)" in r.stdout and r.stdout.count("x: AccumulateGrad [2] float32") == 1


# ------------------------------------------------------------------ the Jacobian is batched and fast
def test_jacobian_of_tanh_layer_n256_is_fast_and_right():
    args = ("tanh(W @ x)", "-c", "W=manual_seed(0); randn(256, 256) / 16", "-v", "x=manual_seed(1); randn(256)",
            "--jacobian")
    start = time.perf_counter()
    r = eval_(*args, "--plain")
    elapsed = time.perf_counter() - start
    assert r.exit_code == 0 and "(showing 12 of 256 rows and 8 of 256 columns; --json has them all)" in r.stdout
    assert elapsed < 2.0, elapsed      # about 0.05 s on an idle machine
    doc = eval_json(*args)
    J = np.array(doc["jacobian"]["x"]["value"])
    y = np.array(doc["value"])
    assert J.shape == (256, 256)
    from gradexpr import api
    torch = api.build()
    torch["manual_seed"](0)
    W = (torch["randn"](256, 256) / 16).numpy()
    np.testing.assert_allclose(J, (1 - y ** 2)[:, None] * W, rtol=1e-5, atol=1e-6)   # J = diag(1 - y²) W


def _row_by_row(f, x):
    """The Jacobian the slow way: one backward pass per output element."""
    from gradexpr import autograd, functions
    leaf = functions.tensor(x, requires_grad=True)
    out = f(leaf).reshape(-1)
    rows = []
    for j in range(out.shape[0]):
        g, = autograd.grad(out[j], leaf, retain_graph=True, allow_unused=True)
        rows.append(np.zeros(x.shape) if g is None else g.numpy())
    return np.stack(rows).reshape(tuple(f(leaf).shape) + tuple(x.shape))


def _functions():
    from gradexpr import api
    T = api.build()
    torch, F = T["torch"], T["F"]
    T["manual_seed"](3)
    A, B, C, D = T["randn"](3, 4), T["randn"](4, 3), T["randn"](2, 1, 4), T["randn"](2, 2)
    r = T["randn"]
    return [
        ("broadcast", lambda x: (x + C) * x, r(4)),
        ("sum_dim", lambda x: (x * x).sum(dim=1), r(3, 4)),
        ("mean_keepdim", lambda x: x.mean(0, keepdim=True) * x, r(3, 4)),
        ("transpose_mm", lambda x: x.t() @ A, r(3, 4)),
        ("mm", lambda x: x @ B, r(3, 4)),
        ("mv", lambda x: A @ x.exp(), r(4)),
        ("batched_matmul_softmax", lambda x: (x.reshape(2, 3, 2) @ D).softmax(-1), r(12)),
        ("cat", lambda x: torch.cat([x, x * 2, x.sin()]), r(5)),
        ("index", lambda x: x[[0, 2, 2]] * x[1:4], r(5)),
        ("log_softmax", lambda x: F.log_softmax(x, dim=-1), r(2, 5)),
        ("max_logsumexp", lambda x: x.logsumexp(0) + x.max(0).values, r(4, 3)),
        ("expand", lambda x: x.unsqueeze(0).expand(3, 4) * A, r(4)),
        ("cumsum_flip", lambda x: x.cumsum(0) * x.flip(0), r(6)),
        ("norm", lambda x: x / x.norm(), r(5)),
        ("prod", lambda x: x.prod(1), r(3, 3)),
        ("det", lambda x: torch.det(x.reshape(3, 3)).reshape(1) * x, r(9)),
        ("inverse", lambda x: torch.inverse(x.reshape(2, 2) + 3 * torch.eye(2)).flatten(), r(4)),
        ("stack_transpose", lambda x: torch.stack([x, x.T]).sum(0), r(3, 3)),
    ]


@pytest.mark.parametrize("name, f, x", _functions(), ids=[c[0] for c in _functions()])
def test_batched_jacobian_equals_one_backward_per_row(name, f, x):
    from gradexpr import functional
    J = functional.jacobian(f, x)
    np.testing.assert_allclose(J.numpy(), _row_by_row(f, x.numpy()), rtol=1e-6, atol=1e-7)


def test_batched_hessian_and_create_graph_jacobian():
    from gradexpr import functional, functions
    x = functions.tensor([0.3, -1.2, 2.0])
    H = functional.hessian(lambda t: (t.sin() * t.exp()).sum() * t[0], x).numpy()
    h = 1e-4
    xs = x.numpy().astype(np.float64)

    def grad64(v):
        s, e = np.sin(v), np.exp(v)
        g = (np.cos(v) * e + s * e) * v[0]
        g[0] += (s * e).sum()
        return g
    fd = np.stack([(grad64(xs + h * np.eye(3)[k]) - grad64(xs - h * np.eye(3)[k])) / (2 * h) for k in range(3)], 1)
    np.testing.assert_allclose(H, fd, rtol=1e-4, atol=1e-4)
    leaf = functions.tensor([1., 2.], requires_grad=True)
    J = functional.jacobian(lambda t: t ** 3, leaf, create_graph=True)
    assert repr(J) == "tensor([[ 3.,  0.],\n        [ 0., 12.]], grad_fn=<ViewBackward0>)"


# ------------------------------------------------------------------ as a subprocess
def _gradexpr(*args, input=None):
    return subprocess.run([sys.executable, "-m", "gradexpr.cli.main", *args], capture_output=True, text=True,
                          input=input, timeout=120)


def test_as_a_subprocess_plain_when_piped_and_json():
    p = _gradexpr("eval", "((x + 2) ** 2 * 3).mean()", "-v", "x=ones(2, 2)")
    assert p.returncode == 0 and p.stdout == FIRST_PLAIN and p.stderr == ""
    p = _gradexpr("eval", "tanh(W @ x + b)", "-v", "W=randn(3, 4)", "-v", "x=ones(4)", "-c", "b=zeros(3)",
                  "--jacobian", "--json")
    assert p.returncode == 0, p.stderr
    validate(strict_loads(p.stdout))
    p = _gradexpr("eval", "-", input="x = ones(3, requires_grad=True); (x ** 3).sum()")
    assert p.returncode == 0 and "tensor([3., 3., 3.])" in p.stdout
    p = _gradexpr("eval", "--batch", "-", "-v", "x=linspace(0, 1, 5)", input="x.sum()\nx ^ 2\n")
    assert p.returncode == 1 and len(p.stdout.splitlines()) == 2 and "Traceback" not in p.stderr
    p = _gradexpr("eval", "sin(x) * x ** 2", "-v", "x=1.5", "--trace", "--check")
    assert p.returncode == 0 and "x: ok" in p.stdout


def test_a_jacobian_over_the_limit_shows_value_and_graph_then_says_how_to_ask_for_less():
    r = eval_("x.expand(3000, 3000) * 1", "-v", "x=ones(3000, 1)")
    assert r.exit_code == 1
    assert r.stdout.startswith("value:\ntensor([[1., 1., 1.,  ..., 1., 1., 1.],")
    assert "grad_fn:\nMulBackward0 [3000, 3000] float32 (n0)" in r.stdout
    assert ("LimitError: the Jacobian of the target [3000, 3000] with respect to x [3000, 1] would have "
            "27,000,000,000 elements, over the limit of 100,000,000") in r.stderr
    assert "--wrt" in r.stderr and "--grad-output" in r.stderr and "--pointwise" in r.stderr
    assert "--max-elements" not in r.stderr
    doc = eval_json("x * 2", "-v", "x=ones(20000)", code=1)
    assert doc["ok"] is False and doc["shape"] == [20000] and len(doc["graph"]["nodes"]) == 2
    assert doc["errors"][0]["type"] == "LimitError" and "--wrt" in doc["errors"][0]["hint"]
    assert eval_("(x * x).sum()", "-v", "x=ones(20000)", "--hessian").stderr.endswith(
        "hint: differentiate less: --wrt NAME keeps some leaves\n")


CUBE = ("class Cube(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n        return x ** 3, x * 2\n    @staticmethod\n"
        "    def backward(ctx, g, g2):\n        x, = ctx.saved_tensors\n        return 3 * x ** 2 * g + 2 * g2\n"
        "a, b = Cube.apply(x)\n(a * b).sum()\n")


def test_a_custom_function_is_one_node_in_the_tree_and_the_trace():
    r = eval_(CUBE, "-v", "x=[1., 2.]", "--trace")
    assert r.exit_code == 0, r.stderr
    assert ("MulBackward0 [2] float32 (n1)\n├── CubeBackward [2] float32 (n2)\n│   x: AccumulateGrad [2] float32 "
            "(n3)\n└── CubeBackward (shown above) (n2)\n") in r.stdout
    doc = eval_json(CUBE, "-v", "x=[1., 2.]", "--trace")
    names = {n["id"]: n["name"] for n in doc["graph"]["nodes"]}
    assert sorted(names.values()) == ["CubeBackward", "MulBackward0", "SumBackward0",
                                      "torch::autograd::AccumulateGrad"]
    cube = next(n for n in doc["graph"]["nodes"] if n["name"] == "CubeBackward")
    assert cube["saved"] == [{"name": "saved_tensors[0]", "shape": [2]}]
    steps = [(s["node"], s["name"]) for s in doc["trace"]]
    assert steps[2:] == [(cube["id"], "CubeBackward (output 1)"), (cube["id"], "CubeBackward")]
    assert doc["grads"]["x"]["value"] == [8.0, 64.0]
