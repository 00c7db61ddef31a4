"""The composites einsum, tensordot, kron and take_along_dim: first and second derivatives against
central differences in float64 (their graphs and values against PyTorch are in
tests/programs/ops/einsum_composite.gx and tensordot_kron_take_along_dim.gx)."""
import numpy as np
import pytest

from gradexpr import dtypes
from gradexpr import functions as T
from gradexpr.testing import gradcheck, gradgradcheck


def _leaf(*shape, seed=0):
    data = np.random.default_rng(seed + len(shape)).standard_normal(shape)
    return T.tensor(data, dtype=dtypes.float64).requires_grad_()


CASES = {
    "einsum_rowdot": (lambda a, b: T.einsum("ij,ij->i", a, b), ((2, 3), (2, 3))),
    "einsum_batched": (lambda a, b: T.einsum("bij,jk->bik", a, b), ((2, 3, 4), (4, 5))),
    "einsum_three": (lambda a, b, c: T.einsum("bij,jk,kl->bil", a, b, c), ((2, 3, 4), (4, 5), (5, 2))),
    "einsum_trace": (lambda a: T.einsum("ii", a), ((3, 3),)),
    "einsum_diag_ellipsis": (lambda a, b: T.einsum("...ii,i->...i", a, b), ((2, 3, 3), (3,))),
    "einsum_outer_implicit": (lambda a, b: T.einsum("i,j", a, b), ((3,), (4,))),
    "tensordot_lists": (lambda a, b: T.tensordot(a, b, dims=([1], [1])), ((2, 3), (4, 3))),
    "tensordot_two": (lambda a, b: T.tensordot(a, b), ((2, 3, 4), (3, 4, 2))),
    "kron": (lambda a, b: T.kron(a, b), ((2, 3), (3, 2))),
    "kron_ranks": (lambda a, b: T.kron(a, b), ((2, 2, 3), (3,))),
    "take_along_dim": (lambda a: T.take_along_dim(a, T.tensor([[0, 2, 2], [1, 0, 0]]), 1), ((2, 3),)),
    "take_along_flat": (lambda a: T.take_along_dim(a, T.tensor([5, 0, 5])), ((2, 3),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_and_second_derivatives(name):
    fn, shapes = CASES[name]
    inputs = tuple(_leaf(*s, seed=k) for k, s in enumerate(shapes))
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_einsum_matches_numpy():
    a, b, c = _leaf(2, 3, 4), _leaf(4, 5, seed=1), _leaf(5, 2, seed=2)
    got = T.einsum("bij,jk,kl->lbi", a, b, c).detach().numpy()
    want = np.einsum("bij,jk,kl->lbi", a.detach().numpy(), b.detach().numpy(), c.detach().numpy())
    np.testing.assert_allclose(got, want, rtol=1e-12)
