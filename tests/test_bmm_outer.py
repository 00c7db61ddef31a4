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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("edges", [False, True])
def test_outer_products_through_batched_gemm_are_einsums(dtype, edges, monkeypatch):
    # large enough for the one-product-per-element path; MKL's batched gemm taken whatever code path
    # MKL runs on (it is only chosen from AVX2 up): a zero product is +0 (+0 + a * b, einsum's and
    # PyTorch's), the inputs without zeros or underflow skip that second pass
    from gradexpr import mkl
    if mkl.available():
        monkeypatch.setitem(mkl._state, "branch", 14)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 32, 1)).astype(dtype)
    b = rng.standard_normal((6, 1, 20)).astype(dtype)
    if edges:
        tiny = np.finfo(dtype).smallest_subnormal
        a[0, :4, 0] = -0.0
        b[1, 0, :3] = 0.0
        a[2, :, 0] = tiny * 3                   # times entries below 1/6: products underflow to zero,
        b[2, 0, :4] = [-0.01, 0.01, -0.1, 0.5]  # which a fused kernel signs as the exact product
        b[3, 0, 5], b[4, 0, 6], a[5, 7, 0] = np.inf, -np.inf, np.nan
    with np.errstate(all="ignore"):
        expected = np.multiply(a, b) + dtype(0)
        got = _bmm(a, b)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{got.itemsize}"))
    assert np.array_equal(got, np.einsum("bik,bkj->bij", a, b), equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_products_of_a_fused_kernel_are_settled_to_plus_zero(dtype, monkeypatch):
    # MKL's AVX2 and AVX-512 kernels sign an underflowing product as the exact one (-0), as a plain
    # product signs -0 * 1; the suite runs MKL's SSE4.2 path, so such a kernel stands in for them here
    from gradexpr import mkl
    monkeypatch.setattr(mkl, "outer_products", lambda a, b: np.multiply(a, b))
    a = np.full((6, 32, 1), 2.0, dtype)
    b = np.full((6, 1, 20), 3.0, dtype)
    a[0, :4, 0] = -0.0
    a[2, :, 0] = np.finfo(dtype).smallest_subnormal * 3
    b[2, 0, :4] = [-0.01, 0.01, -0.1, 0.5]
    got = _bmm(a, b)
    assert not np.signbit(got[got == 0]).any()
    assert np.array_equal(got, np.einsum("bik,bkj->bij", a, b))
    clean = _bmm(np.abs(a) + 1, b + 4)          # no zero or underflowing product: the kernel's result as is
    assert np.array_equal(clean, (np.abs(a) + 1) * (b + 4))
