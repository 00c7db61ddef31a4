"""Ops with several outputs share ONE node (graph.MultiOutputNode), declared in the op table
(``outputs=``) and made by ``op.share_node``: the engine knows no op. The oracle-recorded programs
(tests/programs/autograd/builtin_multi_output_*.gx) check the PyTorch-visible side; these check the
mechanism itself, with an entry made up here."""
import numpy as np

from gradexpr import api, functions as F
from gradexpr.graph import MultiOutputNode, OutputEdge
from gradexpr.op import apply, share_node
from gradexpr.ops.registry import Op

torch = api.build()["torch"]


def _halves(a):
    n = a.shape[0] // 2
    return a[:n].copy()


def _second_half(a):
    n = a.shape[0] // 2
    return a[n:].copy()


# each output's own entry (what vmap and forward-mode AD see): its gradient padded to the input's shape
FIRST = Op("test_first_half", "FirstBackward0", _halves,
           grads={"self": lambda grad: F.cat([grad, grad.new_zeros(grad.shape)], 0)})
SECOND = Op("test_second_half", "SecondBackward0", _second_half,
            grads={"self": lambda grad: F.cat([grad.new_zeros(grad.shape), grad], 0)})


def _halves_grad(grad, scale):
    """Both halves' gradients, put back in order (zeros for one that got none), times ``scale``."""
    first, second = grad
    like = first if first is not None else second
    parts = [g if g is not None else like.new_zeros(like.shape) for g in grad]
    return F.cat(parts, 0) * scale


HALVES = Op("test_halves", "HalvesBackward0", None, grads={"self": _halves_grad}, outputs=("", ""))


def halves(x, scale=1.0):
    parts = [apply(FIRST, (x,)), apply(SECOND, (x,))]
    return tuple(share_node(HALVES, (x,), {"scale": scale}, parts))


def test_one_node_for_every_output_with_numbered_edges():
    x = torch.arange(4.0).requires_grad_()
    a, b = halves(x)
    assert a.grad_fn is b.grad_fn and type(a.grad_fn) is MultiOutputNode
    assert type(b._grad_fn) is OutputEdge            # the engine's edge, never shown
    assert (a.output_nr, b.output_nr) == (0, 1)
    assert a.grad_fn.name() == "HalvesBackward0"
    assert a.grad_fn._saved_scale == 1.0
    y = a * b
    assert [(n.name(), k) for n, k in y.grad_fn.next_functions] == [("HalvesBackward0", 0), ("HalvesBackward0", 1)]


def test_the_node_runs_once_with_all_gradients_and_zeros_for_missing_ones():
    x = torch.arange(4.0).requires_grad_()
    a, b = halves(x, scale=3.0)
    seen = []
    a.grad_fn.register_prehook(lambda grads: seen.append(tuple(g is None for g in grads)))
    (b * 2).sum().backward(retain_graph=True)
    assert x.grad.tolist() == [0.0, 0.0, 6.0, 6.0]
    assert seen == [(True, False)]
    x.grad = None
    (a.sum() + b.sum() * 10).backward()
    assert x.grad.tolist() == [3.0, 3.0, 30.0, 30.0]
    assert seen[-1] == (False, False)


def test_double_backward_and_batched_jacobian_through_the_shared_node():
    x = torch.arange(4.0).requires_grad_()
    a, b = halves(x)
    g, = torch.autograd.grad((a ** 2).sum() + (b ** 3).sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 2.0, 12.0, 27.0]
    gg, = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [2.0, 2.0, 12.0, 18.0]
    jac = torch.autograd.functional.jacobian(lambda t: F.stack(halves(t)[::-1]), torch.arange(4.0))
    assert np.array_equal(jac._data.reshape(4, 4), np.eye(4)[[2, 3, 0, 1]])


def test_nothing_is_shared_without_grad():
    x = torch.arange(4.0)
    a, b = halves(x)
    assert a.grad_fn is None and b.grad_fn is None
    with torch.no_grad():
        a, b = halves(torch.arange(4.0).requires_grad_())
    assert a.grad_fn is None and b.grad_fn is None
