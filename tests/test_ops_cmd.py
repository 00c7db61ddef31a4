"""``gradexpr ops``: the op table as a listing (plain in a pipe, rich tables, versioned JSON)."""
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from gradexpr import ops as D
from gradexpr import functions  # noqa: F401  (registers the in-place fill_/copy_ entries)
from gradexpr.cli.main import cli


def ops(*args):
    return CliRunner().invoke(cli, ["ops", *args])


def test_plain_listing_has_one_line_per_entry_with_node_and_gradient_inputs():
    r = ops()
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert lines[0].split()[:2] == ["NAME", "NODE"]
    assert len(lines) == 1 + len(D.TABLE)
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["mul"].split()[1:4] == ["MulBackward0", "self,", "other"]
    assert "NotImplemented" in rows["floor_divide"] and "self (not implemented)" in rows["floor_divide"]
    assert rows["argmax"].split()[1] == "-"          # never records a node


def test_json_lists_every_entry_as_the_table_says():
    r = ops("--json")
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert doc["version"] == 1
    by_name = {row["name"]: row for row in doc["ops"]}
    assert set(by_name) == set(D.TABLE)
    for name, entry in D.TABLE.items():
        row = by_name[name]
        assert row["node"] == (entry.node if entry.differentiable else None)
        assert set(row["differentiable"]) <= set(row["inputs"])
    assert by_name["cat"]["inputs"] == ["*tensors"] and by_name["cat"]["differentiable"] == ["*tensors"]
    assert by_name["where"]["differentiable"] == ["self", "other"]           # not the condition
    assert by_name["svdvals"]["second_order"] is False and by_name["exp"]["second_order"] is True
    assert by_name["remainder_scalar_self"]["not_implemented"] == ["other"]


def test_patterns_filter_by_entry_or_node_name_as_substring_or_glob():
    doc = json.loads(ops("--json", "Softmax").output)
    assert {row["name"] for row in doc["ops"]} == {"softmax", "log_softmax",       # and their fused backwards
                                                   "softmax_backward_data", "log_softmax_backward_data"}
    doc = json.loads(ops("--json", "max_*", "NllLoss*").output)
    assert {row["name"] for row in doc["ops"]} == {"max_dim", "max_pool2d_with_indices", "max_pool3d_with_indices",
                                                   "max_pool2d_with_indices_backward",     # (their fused backwards)
                                                   "max_pool3d_with_indices_backward",
                                                   "max_unpool2d", "max_unpool3d",
                                                   "nll_loss", "nll_loss2d",
                                                   "nll_loss_backward", "nll_loss2d_backward"}


def test_no_match_is_an_error_with_a_message():
    r = ops("no-such-op")
    assert r.exit_code == 1
    assert r.stdout == "" and "gradexpr ops: no entry matches no-such-op" in r.stderr


def test_rich_format_draws_a_table():
    r = ops("--rich", "exp")
    assert r.exit_code == 0
    assert "┃ name" in r.output and "ExpBackward0" in r.output and "op table" in r.output


@pytest.mark.parametrize("flag", ["--plain", "--format=plain"])
def test_format_flags_agree(flag):
    assert ops(flag, "sum").output == ops("sum").output


def test_as_a_subprocess_in_a_pipe_it_prints_plain_text():
    r = subprocess.run([sys.executable, "-m", "gradexpr.cli.main", "ops", "trace"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].split()[:2] == ["trace", "TraceBackward0"]
    assert "Traceback" not in r.stderr


def test_json_has_each_entrys_signatures_variants_and_formula_sources():
    doc = json.loads(ops("--json").output)
    by_name = {row["name"]: row for row in doc["ops"]}
    row = by_name["logaddexp"]
    assert row["signatures"] == ["logaddexp(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor"]
    assert row["variants"] == ["function", "method"]
    assert row["formulas"] == {"self": "grad / (1 + (other - self).exp())",
                               "other": "grad / (1 + (self - other).exp())"}
    assert by_name["mul"]["formulas"] == {"self": "grad * other", "other": "grad * self"}
    assert by_name["nll_loss"]["formulas"]["self"].startswith("def nll_grad(grad, self, target")
    for row in doc["ops"]:
        assert set(row["formulas"]) == set(row["differentiable"])
        assert all("<source not available>" != text for text in row["formulas"].values()), row["name"]


def test_a_pattern_shows_the_entrys_signature_and_formulas_on_the_terminal():
    out = ops("logaddexp").output
    assert "logaddexp(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor" in out
    assert "variants: function, method" in out
    assert "self:   grad / (1 + (other - self).exp())" in out
