"""``gradexpr.testing``, the tool the op-table tests check every entry with: gradcheck and
gradgradcheck must report a wrong first or second derivative, numerical_jacobian lays out one
row per output element and one column per input element, sample knows its domains."""
from __future__ import annotations

import numpy as np
import pytest

from gradexpr import api, testing
from gradexpr.errors import GxError

torch = api.build()["torch"]


def test_gradcheck_reports_a_wrong_derivative():
    from gradexpr.op import Op, apply
    wrong = Op("wrong_exp", "WrongExpBackward0", np.exp, ("self",), {"self": lambda grad, result: grad * result * 1.01})
    x = testing.sample("real", (3,))
    assert not testing.gradcheck(lambda a: apply(wrong, (a,)), x, raise_exception=False)
    with pytest.raises(testing.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        testing.gradcheck(lambda a: apply(wrong, (a,)), x)


def test_gradgradcheck_reports_a_wrong_second_derivative():
    from gradexpr.op import Op, apply
    # first derivative right, but written with a constant where the input should be: its derivative is 0
    frozen = Op("frozen_square", "FrozenSquareBackward0", np.square, ("self",),
                {"self": lambda grad, self: grad * 2 * self.detach()})
    x = testing.sample("real", (3,))
    assert testing.gradcheck(lambda a: apply(frozen, (a,)), x)
    assert not testing.gradgradcheck(lambda a: apply(frozen, (a,)), x, raise_exception=False)


def test_numerical_jacobian_layout_and_values():
    x = testing.sample("real", (2,))
    y = testing.sample("real", (3,))
    (jx, jy), = testing.numerical_jacobian(lambda a, b: torch.outer(a, b).reshape(-1), (x, y))
    assert jx.shape == (6, 2) and jy.shape == (6, 3)
    expected = np.kron(np.eye(2), y._data.reshape(3, 1))
    np.testing.assert_allclose(jx, expected, atol=1e-8)


def test_sample_rejects_an_unknown_domain():
    with pytest.raises(GxError, match="unknown sampling domain"):
        testing.sample("imaginary", (2,))
