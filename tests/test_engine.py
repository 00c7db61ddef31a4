"""Engine behaviour through the public API (the functions programs call)."""
import math

import numpy as np
import pytest

from gradexpr import errors
from gradexpr.api import build

T = build()
tensor, ones, zeros, arange = T["tensor"], T["ones"], T["zeros"], T["arange"]
torch = T["torch"]
grad = T["grad"]


def test_gradients_accumulate_and_zero():
    x = ones(2, 2, requires_grad=True)
    ((x + 2) * (x + 2) * 3).mean().backward()
    assert np.allclose(x.grad._data, 4.5)
    x.sum().backward()
    assert np.allclose(x.grad._data, 5.5)
    x.grad.zero_()
    assert np.allclose(x.grad._data, 0)


def test_broadcast_gradients_are_reduced_to_each_input_shape():
    a = tensor([[1.], [2.], [3.]], requires_grad=True)
    b = tensor([[10., 20., 30., 40.]], requires_grad=True)
    (a + b).sum().backward()
    assert a.grad.shape == (3, 1) and np.all(a.grad._data == 4)
    assert b.grad.shape == (1, 4) and np.all(b.grad._data == 3)


def test_second_backward_fails_unless_retained_but_graphs_without_saved_tensors_rerun():
    x = tensor([1., 2.], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(errors.RuntimeError, match="backward through the graph a second time"):
        y.backward()
    z = (x + 1).sum()
    z.backward()
    z.backward()          # nothing saved: PyTorch allows it too
    w = (x * x).sum()
    w.backward(retain_graph=True)
    w.backward()


def test_create_graph_gives_higher_derivatives():
    x = tensor(1.5, requires_grad=True)
    y = x ** 4
    g1 = grad(y, x, create_graph=True)[0]
    g2 = grad(g1, x, create_graph=True)[0]
    g3 = grad(g2, x)[0]
    assert (g1.item(), g2.item(), g3.item()) == pytest.approx((13.5, 27.0, 36.0))
    assert g1.grad_fn.name() == "MulBackward0"


def test_hundred_thousand_op_chain_is_iterative():
    x = ones(2, 2, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    y.sum().backward()
    assert x.grad._data[0, 0] == pytest.approx(22051.88, rel=1e-5)   # float32, as PyTorch prints


def test_inplace_change_of_saved_tensor_is_detected():
    x = tensor([1., 2.], requires_grad=True)
    y = x.exp()
    z = y * 2
    y.mul_(3)
    with pytest.raises(errors.RuntimeError, match="output 0 of Exp, is at version 1; expected version 0"):
        z.sum().backward()


def test_inplace_on_leaf_requiring_grad_is_refused_outside_no_grad():
    w = tensor([1., 2.], requires_grad=True)
    with pytest.raises(errors.RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    with torch.no_grad():
        w.add_(1)
    assert w.tolist() == [2.0, 3.0]


def test_views_share_data_and_version_counter():
    x = arange(6.).reshape(2, 3)
    v = x[0]
    v[1] = 100.
    assert x[0, 1].item() == 100.0
    assert x._version == v._version == 1


def test_setitem_on_non_leaf_records_copyslices():
    x = tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    y[1] = 0.
    # PyTorch's name() carries the C++ namespace; repr and printing show the class name
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert repr(y).endswith("grad_fn=<CopySlices>)")
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 2.0]


def test_grad_mode_is_scoped():
    x = tensor(3., requires_grad=True)
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 2
    assert not a.requires_grad and b.requires_grad and T["is_grad_enabled"]()


def test_retain_grad_and_inputs_argument():
    x = tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y ** 2).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0, 12.0]
    w = tensor([1., 2.], requires_grad=True)
    b = tensor(0.5, requires_grad=True)
    ((w * 3 + b) ** 2).sum().backward(inputs=[w])
    assert b.grad is None and w.grad.tolist() == [21.0, 39.0]


def test_grad_unused_input():
    x = tensor(1., requires_grad=True)
    y = tensor(2., requires_grad=True)
    with pytest.raises(errors.RuntimeError, match="index 1 appears to not have been used"):
        grad(x * 3, [x, y])
    gx, gy = grad(x * 3, [x, y], allow_unused=True)
    assert gx.item() == 3.0 and gy is None


@pytest.mark.parametrize("expr, dtype", [
    (lambda: tensor([1, 2]) + 2.5, "float32"),
    (lambda: tensor([1., 2.], dtype=torch.float16) + 2.5, "float16"),
    (lambda: tensor(2., dtype=torch.float64) * ones(2), "float32"),
    (lambda: tensor([True, False]) + 1, "int64"),
    (lambda: tensor([1, 2]) / 2, "float32"),
    (lambda: ones(2, dtype=torch.float64) + ones(2), "float64"),
])
def test_type_promotion(expr, dtype):
    assert expr().dtype.name == dtype


def test_requires_grad_only_on_floating_dtypes():
    with pytest.raises(errors.RuntimeError, match="floating point and complex dtype"):
        tensor([1, 2], requires_grad=True)
    with pytest.raises(errors.RuntimeError, match="only Tensors of floating point dtype"):
        arange(3).requires_grad_()


def test_shape_mismatch_message_is_pytorchs():
    with pytest.raises(errors.RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(2\) "
                                                   r"at non-singleton dimension 1"):
        ones(2, 3) + ones(3, 2)


def test_element_limit_is_checked_before_allocating():
    from gradexpr import limits
    token = limits.activate(limits.Limits(max_elements=1000))
    try:
        with pytest.raises(errors.LimitError):
            zeros(10**6, 10**6)
        with pytest.raises(errors.LimitError):
            ones(100, 1) + ones(1, 100)
    finally:
        limits.deactivate(token)


def test_non_finite_values_are_quiet():
    assert math.isinf(tensor([1.]).div(0).item())


def _without_collector(fn):
    """Run ``fn`` with the cyclic collector off, as the command's rare full collections leave it
    most of the time: what is freed then is freed by reference counts alone."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        return fn()
    finally:
        if enabled:
            gc.enable()


def test_a_dropped_leaf_is_freed_by_reference_counts_after_backward():
    # the leaf holds its AccumulateGrad weakly (PyTorch: a weak_ptr on the autograd meta), so no
    # leaf <-> node cycle keeps a program's dropped leaves (and their .grad) until a full collection
    import weakref

    def run():
        refs = []
        for _ in range(3):
            x = torch.randn(1000, requires_grad=True)
            (x * 2).sum().backward()
            refs.append((weakref.ref(x), weakref.ref(x.grad)))
            del x
        return [(r() is None, g() is None) for r, g in refs]

    assert _without_collector(run) == [(True, True)] * 3


def test_a_leaf_shares_its_accumulator_while_a_graph_holds_it_and_keeps_its_hooks_after():
    import weakref

    def run():
        x = ones(2, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(("hook", g.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: seen.append(("post", t.grad.tolist())))
        y, z = x * 2, x * 3
        acc = y.grad_fn.next_functions[0][0]
        assert z.grad_fn.next_functions[0][0] is acc and acc.variable is x
        node_seen = []
        acc.register_prehook(lambda go: node_seen.append(go[0].tolist()))
        gone = weakref.ref(acc)
        del y, z, acc
        assert gone() is None                   # no graph holds it: the node (and its own hook) went
        (x * 3).sum().backward()                # a new node, which runs the leaf's hooks
        return seen, node_seen, x.grad.tolist()

    seen, node_seen, g = _without_collector(run)
    assert seen == [("hook", [3., 3.]), ("post", [3., 3.])] and node_seen == [] and g == [3., 3.]
