"""Custom ``torch.autograd.Function``s, one per ctx feature, with PyTorch's results and messages
(recorded with the oracle). Written in Python over gradexpr's API: a program's ``class`` statement
makes the same kind of subclass."""
import re

import numpy as np
import pytest

from gradexpr import dtypes, errors, functions as torch
from gradexpr.autograd import grad
from gradexpr.autograd_function import Function, once_differentiable
from gradexpr.testing import GradcheckError, gradcheck, gradgradcheck


def leaf(values, dtype=None):
    return torch.tensor(values, requires_grad=True, dtype=dtype)


def values(t):
    return t._data.tolist()


class Mul(Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, g * x


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


def test_apply_records_one_node_named_as_pytorch():
    a, b = leaf([1., 2., 3.]), leaf([4., 5., 6.])
    z = Mul.apply(a, b)
    node = z.grad_fn
    assert node.name() == "MulBackward"
    assert re.fullmatch(r"<torch\.autograd\.function\.MulBackward object at 0x[0-9a-f]+>", repr(node))
    assert repr(z) == "tensor([ 4., 10., 18.], grad_fn=<MulBackward>)"
    assert [n for n, _ in node.next_functions] == [a._accumulator(), b._accumulator()]
    assert type(node).__module__ == "torch.autograd.function"
    assert node.needs_input_grad == (True, True)
    z.sum().backward()
    assert values(a.grad) == [4., 5., 6.] and values(b.grad) == [1., 2., 3.]


def test_node_appears_in_next_functions_of_later_ops():
    a = leaf([1., 2.])
    y = Square.apply(a) * 3
    assert y.grad_fn.next_functions[0][0].name() == "SquareBackward"


def test_saved_tensors_are_freed_after_backward_and_the_error_is_pytorchs():
    a = leaf([1., 2.])
    z = Mul.apply(a, torch.ones(2))
    assert z.grad_fn.needs_input_grad == (True, False)
    assert z.grad_fn.next_functions[1] == (None, 0)
    z.sum().backward()
    with pytest.raises(errors.RuntimeError, match="^Trying to backward through the graph a second time"):
        z.grad_fn.saved_tensors


def test_saved_tensor_changed_in_place_fails_with_version_message():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            return g

    c = leaf([1., 2., 3.]) * 1
    y = Keep.apply(c)
    c.add_(1)
    with pytest.raises(errors.RuntimeError) as e:
        y.sum().backward()
    assert str(e.value).startswith("one of the variables needed for gradient computation has been modified by an "
                                   "inplace operation: [torch.FloatTensor [3]], which is output 0 of Add, is at "
                                   "version 1; expected version 0 instead.")
    y = Keep.apply(c)
    y.add_(1)
    with pytest.raises(errors.RuntimeError, match=r"which is output 0 of Keep, is at version 1; expected version 0"):
        y.sum().backward()


def test_arbitrary_ctx_attributes_and_non_tensor_arguments():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.seen = ctx.needs_input_grad
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = leaf([3., 1., 2.])
    y = Scale.apply(x, 3)
    assert y.grad_fn.k == 3 and y.grad_fn.seen == (True, False)
    assert len(y.grad_fn.next_functions) == 1
    y.sum().backward()
    assert values(x.grad) == [3., 3., 3.]
    assert Scale.apply(x.detach(), 3).grad_fn is None
    from gradexpr.graph import no_grad
    with no_grad():
        assert not Scale.apply(x, 3).requires_grad


def test_setup_context_style():
    class Scale(Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * ctx.k, None

    x = leaf([3., 1., 2.])
    y = Scale.apply(x, 2.)
    assert repr(y) == "tensor([6., 2., 4.], grad_fn=<ScaleBackward>)"
    y.sum().backward()
    assert values(x.grad) == [2., 2., 2.]


def test_backward_returning_none_and_extra_nones():
    class First(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    a, b = leaf([1., 2.]), leaf([3., 4.])
    First.apply(a, b).sum().backward()
    assert values(a.grad) == [1., 1.] and b.grad is None


def test_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(errors.RuntimeError) as e:
        Bad.apply(leaf([1.]), leaf([2.])).sum().backward()
    assert str(e.value) == "function BadBackward returned an incorrect number of gradients (expected 2, got 1)"


@pytest.mark.parametrize("make, got", [(lambda g: g.sum(), "[]"), (lambda g: torch.ones(4), "[4]")])
def test_gradient_of_the_wrong_shape(make, got):
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return make(g)

    with pytest.raises(errors.RuntimeError) as e:
        BadShape.apply(leaf([1., 2., 3.])).sum().backward()
    assert str(e.value) == (f"Function BadShapeBackward returned an invalid gradient at index 0 - got {got} but "
                            "expected shape compatible with [3]")


def test_broadcastable_gradient_is_summed_and_non_tensor_refused():
    class Wide(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(2, 3)

    x = leaf([1., 2., 3.])
    Wide.apply(x).sum().backward()
    assert values(x.grad) == [2., 2., 2.]

    class Number(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 3

    with pytest.raises(errors.RuntimeError, match=r"^expected Variable or None \(got int\)$"):
        Number.apply(x).sum().backward()


def test_legacy_use_and_missing_methods():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        instance = Mul()
    with pytest.raises(errors.RuntimeError, match="^Legacy autograd function with non-static forward method is "
                                                  "deprecated"):
        instance(leaf([1.]), leaf([2.]))

    class NoForward(Function):
        pass

    with pytest.raises(errors.NotImplementedError,
                       match="^You must implement the forward function for custom autograd.Function.$"):
        NoForward.apply(leaf([1.]))

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(errors.NotImplementedError, match="^You must implement either the backward or vjp method"):
        NoBackward.apply(leaf([1.])).sum().backward()

    class SavesNumber(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

    with pytest.raises(errors.TypeError,
                       match="^save_for_backward can only save variables, but argument 1 is of type int$"):
        SavesNumber.apply(leaf([1.]))


def test_mark_dirty_changes_the_input_in_place():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = leaf([1., 2., 3.])
    c = a.clone()
    d = Double.apply(c)
    assert d is c and c._version == 2
    assert repr(c) == "tensor([2., 4., 6.], grad_fn=<DoubleBackward>)"
    d.sum().backward()
    assert values(a.grad) == [2., 2., 2.]
    with pytest.raises(errors.RuntimeError, match="^a leaf Variable that requires grad has been used in an in-place "
                                                  "operation.$"):
        Double.apply(a)


def test_mark_non_differentiable_and_materialized_grads():
    class MaxWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            i = x.argmax()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            ctx.n = x.shape[0]
            return x.max(), i

        @staticmethod
        def backward(ctx, gm, gi):
            ctx.gi = gi
            i, = ctx.saved_tensors
            r = torch.zeros(ctx.n)
            r[i] = gm
            return r

    x = leaf([3., 1., 2.])
    m, i = MaxWithIndex.apply(x)
    assert not i.requires_grad and i.grad_fn is None
    m.backward()
    assert values(x.grad) == [1., 0., 0.]
    gi = m.grad_fn.gi         # a non-differentiable output's gradient is materialized as zeros, in its dtype
    assert repr(gi) == "tensor(0)"


def test_tuple_outputs_one_node_and_set_materialize_grads():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 if g1 is None else values(g1), values(g2)))
            return (g2 * 3 if g1 is None else g1 * 2 + g2 * 3), None

    a = leaf([1., 2., 3.])
    u, v = Two.apply(a, True)
    w = u * v
    (n0, k0), (n1, k1) = w.grad_fn.next_functions
    assert (n0.name(), k0, n1.name(), k1) == ("TwoBackward", 0, "TwoBackward", 1)
    assert n0 is n1 and u.grad_fn is v.grad_fn is n0      # one node, numbered outputs (as PyTorch)
    assert (u.output_nr, v.output_nr, a.output_nr) == (0, 1, 0)
    v.sum().backward()
    assert seen[-1] == ([0., 0., 0.], [1., 1., 1.]) and values(a.grad) == [3., 3., 3.]
    a.grad = None
    u, v = Two.apply(a, False)
    v.sum().backward()
    assert seen[-1] == (None, [1., 1., 1.]) and values(a.grad) == [3., 3., 3.]
    a.grad = None
    u, v = Two.apply(a, True)
    (u * v).sum().backward()
    assert values(a.grad) == [12., 24., 36.]


def test_double_backward_through_a_differentiable_custom_backward():
    x = leaf(2.)
    y = Square.apply(x)
    g, = grad(y, x, create_graph=True)
    assert repr(g) == "tensor(4., grad_fn=<MulBackward0>)"
    g2, = grad(g, x)
    assert repr(g2) == "tensor(2.)"


def test_once_differentiable_refuses_double_backward():
    class Once(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    a = leaf([1., 2., 3.])
    y = (Once.apply(a) * a).sum()
    gx, = grad(y, a, create_graph=True)
    assert repr(gx) == "tensor([ 3., 12., 27.], grad_fn=<AddBackward0>)"
    err = gx.grad_fn.next_functions[1][0]
    assert err.name() == "torch::autograd::Error" and repr(err).startswith("<Error object at 0x")
    with pytest.raises(errors.RuntimeError, match="^trying to differentiate twice a function that was marked with "
                                                  "@once_differentiable$"):
        gx.sum().backward()


def test_gradcheck_and_gradgradcheck_of_custom_functions():
    a = leaf([0.3, -1.2, 2.0], dtype=dtypes.float64)
    b = leaf([1.5, 0.7, -0.4], dtype=dtypes.float64)
    assert gradcheck(Mul.apply, (a, b))
    assert gradgradcheck(Mul.apply, (a, b))
    assert gradgradcheck(Square.apply, (a,))

    class Wrong(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    with pytest.raises(GradcheckError) as e:
        gradcheck(Wrong.apply, (a, b))
    text = str(e.value)
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[ 1.5000, ")
    assert "analytical:tensor([[2., 0., 0.],\n        [0., 2., 0.],\n        [0., 0., 2.]], dtype=torch.float64)" \
        in text
    assert GradcheckError.kind == "torch.autograd.gradcheck.GradcheckError"


def test_function_subclass_of_a_function_gets_its_own_node_class():
    class Cube(Square):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = leaf([2.])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert np.allclose(values(x.grad), [12.])
