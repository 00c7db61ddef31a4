"""bmm of a contraction of length 1 (per-sample outer products) gives NumPy matmul's numbers exactly,
the sign of zero products included."""
import numpy as np
import pytest

from gradexpr.ops.linalg import _bmm


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_outer_product_stack_matches_matmul(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((7, 5, 1)) * 1e-20).astype(dtype)
    b = rng.standard_normal((7, 1, 4)).astype(dtype)
    b[..., 2] = 0                                        # -0 products: matmul gives +0
    a[0, 0, 0], a[1, 1, 0], b[2, 0, 1] = np.inf, np.nan, -0.0
    with np.errstate(all="ignore"):
        expected = np.matmul(a, b)
        got = _bmm(a, b)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(expected))
