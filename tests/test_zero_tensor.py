"""sgn's gradient is ATen's ZeroTensor (gradexpr/zero_tensor.py): what a program sees of it is pinned by the
oracle-recorded programs tests/programs/exact/zero_tensor_*.gx; here the other entry points that read a
gradient (``gradexpr eval``'s views and JSON, the REPL) and the engine's bookkeeping of ZeroTensors."""
from __future__ import annotations

import gc
import io
import json

from click.testing import CliRunner

from gradexpr import zero_tensor
from gradexpr.cli.main import cli
from gradexpr.cli.runner import execute


def _eval(*args):
    return CliRunner().invoke(cli, ["eval", *args])


def test_eval_shows_a_zero_tensor_gradient_and_its_jacobian():
    r = _eval("x.sgn().sum()", "-v", "x=tensor([1., -2., 0.])", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["ok"] and doc["grads"]["x"]["value"] == [0.0, 0.0, 0.0]
    r = _eval("(x * 2).sgn()", "-v", "x=tensor([1., -2., 0.])", "--jacobian", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["jacobian"]["x"]["value"] == [[0.0] * 3] * 3
    r = _eval("x.sgn().sum()", "-v", "x=tensor([1., -2., 0.])", "--plain", "--trace")
    assert r.exit_code == 0 and "tensor([0., 0., 0.])" in r.output, r.output


def test_repl_reports_tolist_of_a_zero_tensor_in_pytorch_words():
    r = CliRunner().invoke(cli, ["repl"], input="x = tensor([1., -2.], requires_grad=True)\n"
                                                "x.sgn().sum().backward()\nx.grad\nx.grad.tolist()\n")
    assert "tensor([0., 0.])" in r.output
    assert "RuntimeError: tolist() shouldn't be called on a tensor with unallocated storage" in r.output
    assert r.exit_code == 1


def test_zero_tensors_are_forgotten_with_their_tensors():
    """The registry holds them weakly: once a program's ZeroTensors are gone, ``apply`` and the engine take
    their paths without ZeroTensor checks again."""
    out = io.StringIO()
    program = "x = torch.ones(3, requires_grad=True)\nx.sgn().sum().backward()\nprint(x.grad.view(3, 1) * 2)\n"
    outcome = execute(program, "prog.gx", out=out)
    assert outcome.error is None and out.getvalue() == "tensor([[0.],\n        [0.],\n        [0.]])\n"
    del outcome
    gc.collect()
    assert zero_tensor.LIVE == {}
