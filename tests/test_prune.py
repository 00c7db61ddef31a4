"""torch.nn.utils.prune (gradexpr/nn/prune.py) from programs: what PyTorch prints is held against the
oracle in tests/programs (real/intermediate/pruning_tutorial.gx, real/docstrings/nn_utils_prune.*,
nn/prune_*.gx); here: the gradient through the mask checked against finite differences in float64,
the underscored names the attribute policy opens (and those it keeps closed), the hook ids each checked
program starts from, and topk's tie order (which L1 pruning follows) as libstdc++'s algorithms leave it."""
from __future__ import annotations

import numpy as np
import pytest

from gradexpr import functions as T
from gradexpr.std_sort import topk_order
from test_bad_input import assert_fails, gx


def run_ok(source):
    r = gx(source)
    assert r.exit_code == 0, (r.stdout, r.stderr)
    return r.stdout


def test_the_pruned_tensor_differentiates_to_the_original_through_the_mask_in_float64():
    out = run_ok("""
import torch.nn as nn
import torch.nn.utils.prune as prune
torch.manual_seed(0)
conv = nn.Conv2d(2, 3, 2).double()
prune.random_unstructured(conv, "weight", amount=0.4)
prune.ln_structured(conv, "weight", amount=1, n=1, dim=0)
x = torch.randn(1, 2, 4, 4, dtype=torch.float64)
w0 = conv.weight_orig.detach().clone()
del conv.weight_orig
def f(w, b):
    conv.weight_orig = w
    return conv(x * b)
print(torch.autograd.gradcheck(f, (w0.clone().requires_grad_(), torch.tensor(1.5, dtype=torch.float64, requires_grad=True))))
w = w0.clone().requires_grad_()
f(w, 1.0).sum().backward()
print(bool((w.grad[conv.weight_mask == 0] == 0).all()), bool((w.grad[conv.weight_mask == 1] != 0).all()), conv.weight.grad_fn.name())
""")
    assert out == "True\nTrue True MulBackward0\n"


def test_programs_read_the_hooks_and_name_a_methods_tensor_but_no_other_underscored_name():
    out = run_ok("""
import torch.nn as nn
import torch.nn.utils.prune as prune
m = nn.Linear(2, 2)
prune.identity(m, "weight")
hook = list(m._forward_pre_hooks.values())[0]
method = prune.Identity()
method._tensor_name = "bias"
print(hook._tensor_name, method._tensor_name, len(m._forward_pre_hooks))
""")
    assert out == "weight bias 1\n"
    assert_fails(gx("import torch.nn as nn\nprint(nn.Linear(2, 2)._parameters)\n"), 1, "AttributeError", 2, 7,
                 "access to '_parameters' is not allowed in gradexpr")
    assert_fails(gx("import torch.nn as nn\nm = nn.Linear(2, 2)\nm._forward_pre_hooks = {}\n"), 1,
                 "AttributeError", 3, 1, "access to '_forward_pre_hooks' is not allowed in gradexpr")
    assert_fails(gx("import torch.nn.utils.prune as prune\nc = prune.PruningContainer()\nc._pruning_methods = ()\n"),
                 1, "AttributeError", 3, 1, "access to '_pruning_methods' is not allowed in gradexpr")
    assert_fails(gx("import torch.nn.utils.prune as prune\nprint(prune.Identity()._secret)\n"), 1,
                 "AttributeError", 2, 7, "access to '_secret' is not allowed in gradexpr")


def test_each_checked_program_numbers_its_module_hooks_from_zero(tmp_path):
    from click.testing import CliRunner
    from gradexpr.cli.main import cli
    program = "import torch.nn as nn\nm = nn.Linear(1, 1)\nm.register_forward_pre_hook(lambda *a: None)\n" \
              "print(list(m._forward_pre_hooks))\n"
    for name in ("a.gx", "b.gx"):
        (tmp_path / name).write_text(program)
        (tmp_path / (name + ".out")).write_text("[0]\n")
    r = CliRunner().invoke(cli, ["check", str(tmp_path), "--plain"])
    assert r.exit_code == 0 and "2 passed" in r.output, r.output


def _is_topk(a, k, largest, indices):
    """What any topk must give: k distinct indices whose values are the k extreme ones, in order."""
    row = np.where(np.isnan(a), np.inf if largest else -np.inf, a)
    picked = row[indices]
    expected = np.sort(row)[::-1][:k] if largest else np.sort(row)[:k]
    return len(set(indices.tolist())) == k and np.array_equal(picked, expected)


@pytest.mark.parametrize("n, k", [(12, 5), (40, 7), (40, 39), (300, 4), (300, 5), (1000, 15), (20, 20), (5, 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_tied_rows_picks_extreme_values_in_order(n, k, largest):
    rng = np.random.default_rng(n * 31 + k)
    a = rng.integers(0, 3, size=n).astype(np.float32)
    stable = np.argsort(-a if largest else a, kind="stable").astype(np.int64)
    indices = topk_order(a, k, 0, largest, True, stable)
    assert _is_topk(a, k, largest, indices)
    result = T.topk(T.tensor(a), k, largest=largest)
    assert np.array_equal(result.indices.numpy(), indices)


def test_topk_replays_std_algorithms_on_ties_not_the_stable_order():
    # PyTorch 2.13: torch.topk(x, 5, largest=False).indices (nth_element + sort of the first four)
    x = T.tensor([1., 1, 2, 1, 2, 1, 1, 1, 3, 1, 1, 2])
    assert T.topk(x, 5, largest=False).indices.tolist() == [9, 6, 7, 1, 10]
    # partial_sort (64·k <= n) of equal values keeps the heap's first two; sorted=False keeps nth_element's order
    assert T.topk(T.zeros(128), 2).indices.tolist() == [0, 1]
    assert T.topk(T.tensor([0., 1.] * 10), 3, sorted=False).indices.tolist() == [11, 13, 15]
