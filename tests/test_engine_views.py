"""Views changed in place: gradients against central differences (float64), the graph PyTorch
records (CopySlices on the base, AsStridedBackward0 on the views), the version counter a base
shares with its views, and the refusals. What PyTorch prints for the same programs is recorded in
tests/programs/engine/."""
import numpy as np
import pytest

from gradexpr import ops as D
from gradexpr import errors, testing
from gradexpr.api import build
from gradexpr.graph import CopySlices, InvalidGradFn
from gradexpr.op import ViewGeometry
from gradexpr.inplace_engine import write_inplace

T = build()
torch, tensor, zeros, ones, grad = T["torch"], T["tensor"], T["zeros"], T["ones"], T["grad"]


def sample(*shape, seed=0):
    return testing.sample("positive", shape, np.random.default_rng(seed))


def names(t):
    return [None if n is None else n.name() for n, _ in t.grad_fn.next_functions]


# ------------------------------------------------------------ gradients
IN_PLACE_THROUGH_VIEWS = {
    "mul_ on a row": lambda y, w: y[1].mul_(w),
    "add_ on a column, alpha": lambda y, w: y[:, 2].add_(w, alpha=-2),
    "div_ through t()": lambda y, w: y.t()[0].div_(w),
    "pow_ on a strided slice of a reshape": lambda y, w: y.view(9)[::2].pow_(2),
    "exp_ on the diagonal": lambda y, w: y.diagonal().exp_(),
    "clamp_ on a block": lambda y, w: y[1:, 1:].clamp_(0.3, 0.6),
    "copy_ into a column": lambda y, w: y[:, 0].copy_(w * w),
    "fill_ with a tensor": lambda y, w: y[0, 1:].fill_(w[0]),
    "zero_ on an element": lambda y, w: y[2][1].zero_(),
    "sigmoid_ through unsqueeze": lambda y, w: y.unsqueeze(0)[0, 1].sigmoid_(),
    "setitem of a row": lambda y, w: y.__setitem__(0, w * 3),
    "setitem with tensor indices": lambda y, w: y.__setitem__((1, [0, 2]), w[:2]),
    "setitem of a scalar": lambda y, w: y.__setitem__((slice(None), 1), 0.5),
    "augmented assignment on a view": lambda y, w: y[2].__iadd__(w),
    "in-place view op, then in place": lambda y, w: y[1].unsqueeze_(0).t_().mul_(w.unsqueeze(1)),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_THROUGH_VIEWS))
def test_gradients_through_base_and_view_match_finite_differences(name):
    change = IN_PLACE_THROUGH_VIEWS[name]

    def f(x, w):
        y = x * 1.5
        keep = y[1:]                 # a view made before the change, read after it
        change(y, w)
        return y, keep * keep
    x, w = sample(3, 3), sample(3, seed=1)
    y, _ = f(x, w)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert testing.gradcheck(f, (x, w))
    assert testing.gradgradcheck(f, (x, w))


def test_base_and_view_nodes_and_gradient_values():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    v = y[0]
    assert v.grad_fn.name() == "SelectBackward0"
    v.mul_(3)
    assert v.grad_fn.name() == "AsStridedBackward0" and repr(v).endswith("grad_fn=<AsStridedBackward0>)")
    assert y.grad_fn.name() == "torch::autograd::CopySlices" and repr(y).endswith("grad_fn=<CopySlices>)")
    assert names(y) == ["MulBackward0", None]       # the base's old history, then mul_'s other input
    assert v.grad_fn.next_functions[0][0] is y.grad_fn
    (y.sum() + (v * v).sum()).backward()
    # y[0] = 6 x[0], y[1] = 2 x[1]: d/dx of sum(y) + sum(v^2) = 6 + 72 x[0] on row 0, 2 on row 1
    assert x.grad.tolist() == [[78., 150., 222.], [2., 2., 2.]]


def test_in_place_through_a_chain_of_views_rebases_the_root():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    y[0][1].add_(1)
    assert y.tolist() == [[2., 5., 6.], [8., 10., 12.]]
    assert names(y) == ["MulBackward0", None]
    (y * y).sum().backward()
    assert x.grad.tolist() == [[8., 20., 24.], [32., 40., 48.]]


def test_a_view_is_seen_afresh_when_its_base_changes_even_under_no_grad():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    v = y[0]
    y.add_(1)
    assert v.grad_fn.name() == "AsStridedBackward0" and names(v) == ["AddBackward0"]
    u = y[1]
    with torch.no_grad():
        y.mul_(2)
    assert names(u) == ["AddBackward0"]               # the base's history did not change
    (v.sum() + u.sum()).backward()
    assert x.grad.tolist() == [[2., 2., 2.], [2., 2., 2.]]


def test_setitem_composes_copy_fill_and_index_put_as_pytorch():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    z = tensor([7., 8., 9.], requires_grad=True)
    cases = [
        (lambda y: y.__setitem__(0, 5.), "torch::autograd::CopySlices", ["MulBackward0", None]),
        (lambda y: y.__setitem__([0, 1], z), "IndexPutBackward0", ["MulBackward0", "torch::autograd::AccumulateGrad"]),
        (lambda y: y.__setitem__(Ellipsis, z), "torch::autograd::CopyBackwards", ["MulBackward0", "ExpandBackward0"]),
        (lambda y: y.__setitem__(slice(None), 1.), "FillBackward3", ["MulBackward0", None]),
        (lambda y: y.__setitem__((0, [0, 2]), z[:2]), "torch::autograd::CopySlices", ["MulBackward0", "SliceBackward0"]),
        (lambda y: y.__setitem__(None, z), "torch::autograd::CopySlices", ["MulBackward0", "ExpandBackward0"]),
    ]
    for assign, node, edges in cases:
        y = x * 2
        assign(y)
        assert (y.grad_fn.name(), names(y)) == (node, edges)
    y = x * 2
    y[False] = 3.
    assert y.grad_fn.name() == "MulBackward0"


def test_augmented_assignment_on_a_slice_records_two_copyslices():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    w = tensor([1., 1.], requires_grad=True)
    y = x * 2
    y[:, 1] += w
    assert names(y) == ["torch::autograd::CopySlices", "AsStridedBackward0"]
    (y * y).sum().backward()
    assert x.grad.tolist() == [[8., 20., 24.], [32., 44., 48.]]
    assert w.grad.tolist() == [10., 22.]


def test_an_op_recorded_as_several_nodes_is_wrapped_whole():
    """When the in-place op's last node does not take the view itself, CopySlices takes the view's
    new value as its input (its history reaches the view's old value)."""
    def f(x, w):
        y = x * 1
        v = y[1]
        write_inplace(v, (v.clone() * w).sin() + 1)
        return y
    x, w = sample(3, 3), sample(3, seed=1)
    y = f(x, w)
    assert isinstance(y.grad_fn, CopySlices) and y.grad_fn._saved["fn"] is None
    assert testing.gradcheck(f, (x, w))
    assert testing.gradgradcheck(f, (x, w))


def test_jacobian_and_hessian_through_copyslices():
    def f(x):
        y = x * x
        y[0] = x[1] * x[2]
        y[1:].mul_(x[0])
        return y
    x = tensor([1., 2., 3.], dtype=torch.float64)
    expected = [[0., 3., 2.], [4., 4., 0.], [9., 0., 6.]]
    assert T["jacobian"](f, x).tolist() == expected
    assert T["jacobian"](f, x, vectorize=True).tolist() == expected
    # sum f = x1 x2 + x0 x1^2 + x0 x2^2
    assert T["hessian"](lambda t: f(t).sum(), x).tolist() == [[0., 4., 6.], [4., 2., 1.], [6., 1., 2.]]


def test_retain_grad_follows_the_new_history():
    x = tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    assert y.retains_grad
    v = y[0:2]
    v.retain_grad()
    v.add_(1)
    assert v.retains_grad
    ((y * y).sum() + v.sum()).backward()
    assert y.grad.tolist() == [15., 27., 36.] and v.grad.tolist() == [1., 1.]   # as PyTorch


def test_a_zero_dimensional_view_writes_into_its_base():
    x = zeros(3)
    x[1].fill_(5.)
    m = zeros(2, 3)
    m[1][2].add_(4.)
    assert x.tolist() == [0., 5., 0.] and m.tolist() == [[0., 0., 0.], [0., 0., 4.]]


def test_diagonal_is_a_writable_view():
    x = tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = x * 1
    y.diagonal().mul_(3)
    assert y.tolist() == [[3., 2.], [3., 12.]]
    y.sum().backward()
    assert x.grad.tolist() == [[3., 1.], [1., 3.]]


# ------------------------------------------------------------ the version counter
def test_changing_a_view_after_its_base_was_saved_fails_naming_the_base_node():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    z = y.sin()
    y[0].mul_(2)
    with pytest.raises(errors.RuntimeError, match=r"\[torch.FloatTensor \[2, 3\]\], which is output 0 of "
                                                   r"torch::autograd::CopySlices, is at version 1; expected version 0"):
        z.sum().backward()


def test_changing_the_base_after_a_view_was_saved_fails():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    z = y[0].sin()
    y.add_(1)
    y.add_(1)
    with pytest.raises(errors.RuntimeError, match=r"\[3\]\], which is output 0 of AsStrided, is at version 2; "
                                                   r"expected version 0"):
        z.sum().backward()


def test_in_place_error_shortens_node_names_as_pytorch():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    for make, shown in ((lambda t: t.sum(1), "Sum1"), (lambda t: t.clamp(0, 1), "Clamp1"),
                        (lambda t: t.max(1)[0], "Max"), (lambda t: 2 ** t, "Pow2")):
        y = make(x)
        z = y.sin()
        with torch.no_grad():
            y.add_(1)
        with pytest.raises(errors.RuntimeError, match=f"which is output 0 of {shown}, is at version 1"):
            z.sum().backward()


# ------------------------------------------------------------ refusals
def test_a_view_of_a_leaf_that_requires_grad_refuses_in_place_changes():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    with pytest.raises(errors.RuntimeError, match="^a view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    with pytest.raises(errors.RuntimeError, match="^a view of a leaf Variable that requires grad"):
        x[0] = 1.
    with pytest.raises(errors.RuntimeError, match="^a leaf Variable that requires grad"):
        x[[0]] = 1.
    with torch.no_grad():
        x[0].mul_(2)
    assert x.tolist()[0] == [2., 4., 6.]


def test_views_made_under_no_grad_refuse_tracked_in_place_changes():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    with torch.no_grad():
        v = y[0]
    assert v.requires_grad and v.is_leaf and v.grad_fn is None
    r = v * 2
    assert r.grad_fn.name() == "MulBackward0" and names(r) == [None, None]
    with pytest.raises(errors.RuntimeError, match="^A view was created in no_grad mode and is being modified"):
        v.mul_(2)
    with pytest.raises(errors.RuntimeError, match="^Output 0 of Slice is a view of a view which was created in "
                                                   "no_grad mode"):
        v[1:].mul_(2)
    plain = zeros(2, 3)
    with torch.no_grad():
        row = plain[0]
    with pytest.raises(errors.RuntimeError, match="^A view was created in no_grad mode"):
        row.add_(ones(3, requires_grad=True))
    row.add_(1)                      # nothing to record: allowed
    assert plain.tolist()[0] == [1., 1., 1.]


def test_a_restricted_view_whose_base_changed_has_an_invalid_grad_fn():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    with torch.no_grad():
        v = y[0]
    y.mul_(2)
    assert repr(v).endswith("grad_fn=<Invalid>)") and isinstance(v._grad_fn, InvalidGradFn)
    message = "^A view was created in no_grad mode and its base or another view of its base has been modified"
    with pytest.raises(errors.RuntimeError, match=message):
        v.grad_fn
    with pytest.raises(errors.RuntimeError, match=message):
        v * 2
    with pytest.raises(errors.RuntimeError, match=message):
        v.backward(ones(3))
    y.sum().backward()
    assert x.grad.tolist() == [[4., 4., 4.], [4., 4., 4.]]


@pytest.mark.parametrize("split, node, index", [
    (lambda y: y.unbind(0), "Unbind", 1), (lambda y: y.split(1), "Split", 0),
    (lambda y: y.split([1, 1]), "SplitWithSizes", 1), (lambda y: y.chunk(2), "Split", 1)])
def test_outputs_of_functions_returning_several_views_refuse_in_place_changes(split, node, index):
    y = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True) * 2
    with pytest.raises(errors.RuntimeError, match=f"^Output {index} of {node} is a view and is being modified "
                                                   "inplace. This view is the output of a function that returns "
                                                   "multiple views"):
        split(y)[index].add_(1)
    parts = split(y)
    y.mul_(2)
    with pytest.raises(errors.RuntimeError, match=f"^Output {index} of {node} is a view and its base or another "
                                                   "view of its base has been modified inplace"):
        parts[index] * 1


def test_tensor_split_outputs_are_single_views():
    y = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True) * 2
    first, _ = y.tensor_split(2)
    assert first.grad_fn.name() == "SliceBackward0"
    first.mul_(2)
    assert y.tolist() == [[4., 8., 12.], [8., 10., 12.]]


# ------------------------------------------------------------ in-place view ops
def test_in_place_view_ops_reshape_the_tensor_itself():
    x = tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    y = x * 2
    y.t_()
    assert y.shape == (3, 2) and not y.is_contiguous() and y.grad_fn.name() == "TBackward1"
    assert y._version == 1
    y.unsqueeze_(0)
    assert y.shape == (1, 3, 2) and y.grad_fn.name() == "UnsqueezeBackward1"
    y.squeeze_()
    assert y.grad_fn.name() == "SqueezeBackward3"
    y.unsqueeze_(1).squeeze_(1)
    assert y.grad_fn.name() == "SqueezeBackward4"
    y.unsqueeze_(0).squeeze_((0, 2))
    assert y.grad_fn.name() == "SqueezeBackward5"
    y.transpose_(0, 1)
    assert y.grad_fn.name() == "TransposeBackward1" and y.shape == (2, 3)
    assert testing.gradcheck(lambda a: (a * 1).t_().unsqueeze_(2).transpose_(0, 2), (sample(2, 3),))
    with pytest.raises(errors.RuntimeError, match="^a leaf Variable that requires grad"):
        x.t_()
    with pytest.raises(errors.RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        ones(2, 3, 4).t_()


# ------------------------------------------------------------ smaller items
def test_not_implemented_nodes_are_named_and_list_only_inputs_that_require_grad():
    x = tensor([1.5, 2.5, 3.5], requires_grad=True)
    y = x // 2
    assert y.grad_fn.name() == "torch::autograd::NotImplemented" and repr(y).endswith("grad_fn=<NotImplemented>)")
    assert names(y) == ["torch::autograd::AccumulateGrad"]
    assert names(5 % x) == ["torch::autograd::AccumulateGrad"]
    assert len((x // x).grad_fn.next_functions) == 2


def test_next_functions_leave_out_indices_masks_and_targets():
    y = tensor([[1., -2., 3.], [-4., 5., -6.]], requires_grad=True) * 1
    assert names(y.masked_fill(y > 0, 1.)) == ["MulBackward0"]
    assert names(y.gather(1, tensor([[0], [1]]))) == ["MulBackward0"]
    assert names(torch.where(y > 0, y, 0.)) == ["MulBackward0", None]
    assert names(y.index_add(0, tensor([1]), ones(1, 3))) == ["MulBackward0", None]
    assert y.masked_fill(y > 0, tensor(1.)).grad_fn.name() == "MaskedFillBackward1"


def test_grad_with_no_inputs_is_refused():
    x = tensor([1., 2.], requires_grad=True)
    with pytest.raises(errors.RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty."):
        grad(x.sum(), [])


def test_view_geometry_of_non_contiguous_bases():
    base = np.arange(24.).reshape(4, 6).T          # a transposed (non-contiguous) base
    view = base[1:5:2, ::3]
    index = ViewGeometry(base, view).index()
    assert np.array_equal(base.reshape(-1)[index], view)
    flat = np.arange(5.)
    assert ViewGeometry(flat, flat[2:3].reshape(())).index().tolist() == 2


def test_dead_views_are_dropped_from_the_registry():
    y = ones(4, 4, requires_grad=True) * 1
    for _ in range(200):
        y[1]
    registry = y._version_counter[1]
    assert len(registry.refs) <= 2 * 16
    keep = y[2]
    y.add_(1)
    assert registry.live() == [keep] and keep.grad_fn.name() == "AsStridedBackward0"


def test_the_as_strided_entry_puts_gradients_back_where_the_view_lies():
    base = sample(3, 4)
    column = base._data.T[1]                        # base[:, 1], reached through a transpose
    g = D._as_strided_grad(tensor([1., 2., 3.], dtype=torch.float64), (3, 4), ViewGeometry(base._data, column))
    expected = np.zeros((3, 4))
    expected[:, 1] = [1., 2., 3.]
    assert np.array_equal(g._data, expected)
