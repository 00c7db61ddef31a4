"""The engine's performance paths give exactly the results of the plain ones.

Covers what ``apply``'s fast path, the wrapped-number cache, a leaf keeping a gradient
the engine alone holds (no copy), in-place sums of gradient buffers, the lazily expanded
mean gradient and the batched Jacobian rules must never change: values, aliasing and
what PyTorch shows of the results.
"""
import numpy as np
import pytest

from gradexpr import api, grad_ownership
from gradexpr.functional import hessian, jacobian

torch = api.build()["torch"]
BIG = 5000          # above the size where the engine stops copying (grad_ownership.STEAL_MIN)


def test_wrapped_numbers_are_exact_and_cached_ones_cannot_be_changed():
    x = torch.ones(3, dtype=torch.float64)
    assert (x * 0.1).tolist() == [0.1] * 3               # the exact double, not a float32 cast
    assert (torch.ones(3) * 0.1).tolist() == [np.float32(0.1).item()] * 3
    assert (x * -0.0).tolist() == [-0.0] * 3 and str((x * -0.0)[0].item()) == "-0.0"
    assert np.isnan((x * float("nan")).numpy()).all()
    y = x * 3
    y.add_(1)                                          # an op's result never aliases a cached number
    assert (x * 3).tolist() == [3.0] * 3


def test_a_gradient_only_the_engine_holds_becomes_the_leaf_grad_without_a_copy():
    w = torch.ones(BIG, requires_grad=True)
    x = torch.full((BIG,), 3.0)
    (w * x).sum().backward()
    assert w.grad._data.base is None and w.grad._data.flags.writeable
    assert w.grad.tolist()[:2] == [3.0, 3.0]


def test_one_gradient_reaching_two_leaves_is_not_shared_between_them():
    a = torch.ones(BIG, requires_grad=True)
    b = torch.ones(BIG, requires_grad=True)
    ((a + b) * 2).sum().backward()
    assert not np.shares_memory(a.grad._data, b.grad._data)
    ((a + b) * 2).sum().backward()                     # accumulation in place into each
    assert a.grad[0].item() == 4.0 and b.grad[0].item() == 4.0


def test_a_gradient_passed_by_the_user_is_never_kept_or_changed():
    c = torch.ones(BIG, requires_grad=True)
    u = torch.full((BIG,), 5.0)
    (c * 1).backward(u)
    assert not np.shares_memory(c.grad._data, u._data)
    (c * 1).backward(u)
    assert u[0].item() == 5.0 and c.grad[0].item() == 10.0


def test_gradients_of_a_tensor_used_twice_are_summed(monkeypatch):
    calls = []
    real_add = grad_ownership.np_add
    monkeypatch.setattr(grad_ownership, "np_add", lambda *a, **k: (calls.append(1), real_add(*a, **k))[1])
    x = torch.ones(BIG, requires_grad=True)
    y = x * 2
    (y * 3 + y * 4).sum().backward()
    assert x.grad[0].item() == 14.0
    assert calls, "the second gradient was added into the first one's buffer"


def test_retained_and_leaf_gradients_do_not_share_memory():
    p = torch.ones(BIG, requires_grad=True)
    q = p * 2
    q.retain_grad()
    (q * 3).sum().backward()
    assert q.grad[0].item() == 3.0 and p.grad[0].item() == 6.0
    assert not np.shares_memory(q.grad._data, p.grad._data)


@pytest.mark.parametrize("n", [7, BIG])
def test_mean_and_square_gradients_match_the_recorded_formulas_bit_for_bit(n):
    rng = np.random.default_rng(0)
    X, W, B = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    x = torch.from_numpy(X)
    w = torch.from_numpy(W.copy()).requires_grad_()
    b = torch.from_numpy(B.copy()).requires_grad_()
    ((x * w + b).tanh() ** 2).mean().backward()          # plain pass: the lazy mean, the square's fast form
    w2 = torch.from_numpy(W.copy()).requires_grad_()
    b2 = torch.from_numpy(B.copy()).requires_grad_()
    gw, gb = torch.autograd.grad(((x * w2 + b2).tanh() ** 2).mean(), (w2, b2))   # PyTorch's formulas
    assert np.array_equal(w.grad.numpy(), gw.numpy()) and np.array_equal(b.grad.numpy(), gb.numpy())
    assert w.grad.is_contiguous() and gw.is_contiguous()


def test_mean_gradient_handed_to_the_user_is_materialized_as_in_pytorch():
    x = torch.ones(2, 3, requires_grad=True)
    (g,) = torch.autograd.grad(x.mean(), x)
    assert g.stride() == (3, 1) and g.is_contiguous()
    (g,) = torch.autograd.grad(x.sum(), x)
    assert g.stride() == (0, 0)                        # PyTorch's expanded gradient of sum
    x.mean(dim=1).sum().backward()
    assert x.grad.stride() == (3, 1)


def test_square_gradient_under_create_graph_keeps_pytorchs_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (g,) = torch.autograd.grad((x ** 2).mean(), x, create_graph=True)
    assert g.grad_fn.name() == "MulBackward0"
    assert g.tolist() == [1.0, 2.0]


def test_batched_jacobian_and_hessian_of_matrix_products_are_exact():
    rng = np.random.default_rng(1)
    n = 24
    W = torch.from_numpy(rng.standard_normal((n, n)))
    x = torch.from_numpy(rng.standard_normal(n))
    J = jacobian(lambda v: torch.tanh(W @ v), x)
    Wd, xd = W.numpy(), x.numpy()
    t = np.tanh(Wd @ xd)
    assert np.allclose(J.numpy(), (1 - t * t)[:, None] * Wd, rtol=1e-12, atol=1e-12)
    H = hessian(lambda v: (torch.tanh(W @ v) ** 2).sum(), x)
    s = 1 - t * t
    assert np.allclose(H.numpy(), Wd.T @ np.diag(2 * s * s - 4 * t * t * s) @ Wd, rtol=1e-10, atol=1e-10)
    M = torch.from_numpy(rng.standard_normal((3, 4)))
    A0 = torch.from_numpy(rng.standard_normal((5, 3)))
    f = lambda A: (A @ M).t().reshape(-1) * A.sum()     # mm, t, reshape (view) rules
    J2 = jacobian(f, A0)
    eps = 1e-6
    numeric = np.stack([(f(torch.from_numpy(A0.numpy() + eps * e)).numpy() - f(torch.from_numpy(A0.numpy() - eps * e))
                         .numpy()) / (2 * eps) for e in np.eye(15).reshape(15, 5, 3)], -1).reshape(20, 5, 3)
    assert np.allclose(J2.numpy(), numeric, rtol=1e-6, atol=1e-6)


def test_batched_addmm_rule_gives_the_row_by_row_hessian(monkeypatch):
    """addmm's batched rows (a linear layer's Jacobian under create_graph, as jacrev(jacrev)) equal the
    row-by-row passes exactly, alpha and beta included."""
    import gradexpr.functional as functional
    rng = np.random.default_rng(2)
    W = torch.from_numpy(rng.standard_normal((4, 6)))
    b = torch.from_numpy(rng.standard_normal(4))
    x0 = torch.from_numpy(rng.standard_normal((2, 6)))
    f = lambda x: torch.addmm(b, x, W.t(), beta=0.5, alpha=-2.0).tanh().pow(2).sum()
    fast = hessian(f, x0)
    monkeypatch.setattr(functional, "_BATCH_RULES", {k: v for k, v in functional._BATCH_RULES.items() if k != "addmm"})
    monkeypatch.setattr(functional, "_apply_whole_batch", lambda node, grad, m: None)
    slow = hessian(f, x0)
    assert np.array_equal(fast.numpy(), slow.numpy())


def test_long_chains_back_propagate():
    x = torch.ones(2, 2, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0001
    y.sum().backward()
    assert abs(x.grad[0, 0].item() - 1.0001 ** 20_000) < 1e-2


def test_grad_whose_inputs_every_node_leads_to_runs_inline_with_the_pruned_paths_results():
    """autograd.grad prunes the nodes that lead to none of its inputs; when none is pruned (a loss
    differentiated in all its weights, as torch.func.grad does) the nodes run inline, as backward's."""
    w = torch.tensor([0.5, -1.5, 2.0], requires_grad=True)
    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    unused = torch.ones(3, requires_grad=True)

    def loss(extra):
        h = (w * v).tanh()
        return h, (h * h).sum() + (extra * 0).sum()
    h, y = loss(torch.zeros(3))                           # every node leads to w, v or h: inline
    inline = torch.autograd.grad(y, (w, v, h))
    h2, y2 = loss(unused)                                 # unused's branch is pruned: the general path
    pruned = torch.autograd.grad(y2, (w, v, h2))
    for a, b in zip(inline, pruned):
        assert np.array_equal(a.numpy(), b.numpy())
    assert np.array_equal(inline[2].numpy(), (2 * h).detach().numpy())  # a non-leaf input's gradient
    with pytest.raises(Exception, match="backward through the graph a second time"):
        torch.autograd.grad(y, (w, v, h))                 # the inline path freed the saved tensors
