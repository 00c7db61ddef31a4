"""The matrix exponential as ATen computes it (``mexp`` in aten/src/ATen/native/LinearAlgebra.cpp), so that
``torch.linalg.matrix_exp`` gives PyTorch's bits.

ATen follows Bader, Blanes and Casas (2019), "Computing the Matrix Exponential with an Optimized Taylor
Polynomial Approximation": by each matrix's 1-norm, a Taylor polynomial of degree 1, 2, 4, 8 or 12
evaluated with few products, or the degree-18 one of A / 2^s squared s times. The polynomials are
linear combinations of the powers I, A, A², A³ (A⁶) with ATen's coefficients (rounded to the dtype),
each combination summed term by term from zero; the products are bmm's (``linalg._matmul``), the
squarings mm's.
"""
from __future__ import annotations

import numpy as np

# the largest 1-norm each degree (1, 2, 4, 8, 12, 18) is accurate for, by dtype
_THETAS = {np.dtype(np.float32): (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                                  5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00),
           np.dtype(np.float64): (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                                  4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00)}

_T12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359))
_T18 = ((0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.),
        (0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
         -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05))


def matrix_exp(a):
    """exp of each square matrix of ``a`` (any batch), ATen's way: one matrix by its 1-norm's degree, a batch of
    several always by degree 18 (ATen's mexp_impl); a 1 x 1 matrix is its element's exp."""
    from . import mkl
    if a.dtype not in _THETAS:      # (half precision: in float32; PyTorch's reads its double coefficients as halves)
        return matrix_exp(a.astype(np.float32)).astype(a.dtype)
    if a.shape[-1] == 1:
        out = mkl.elementwise("exp", a)
        return np.exp(a) if out is None else out
    flat = a.reshape((-1,) + a.shape[-2:])
    thetas = _THETAS[a.dtype]
    norms = _one_norms(flat)
    if flat.shape[0] > 1:           # (ATen: a batch of several matrices always takes degree 18)
        return _t18_scaled(flat, norms, a.dtype.type(thetas[5])).reshape(a.shape)
    result = np.full_like(flat, np.nan)         # (a NaN norm is in no interval: the result stays NaN)
    lower = -1.0
    for degree, (theta, polynomial) in enumerate(zip(thetas, (_t1, _t2, _t4, _t8, _t12))):
        chosen = np.flatnonzero((lower < norms) & (norms <= a.dtype.type(theta)))
        if chosen.size:
            result[chosen] = polynomial(flat[chosen])
        lower = a.dtype.type(theta)
    large = np.flatnonzero(norms >= a.dtype.type(thetas[4]))
    if large.size:
        result[large] = _t18_scaled(flat[large], norms[large], a.dtype.type(thetas[5]))
    return result.reshape(a.shape)


def _one_norms(stack):
    """operator_1_norm: the largest column sum of |A| (the sums in PyTorch's order)."""
    from .reduction_order import torch_sum
    return torch_sum(np.abs(stack), -2).max(-1)


def _powers(A, count):
    """The first ``count`` of I, A, A², A³, A⁶ (ATen's _fill_matrix_powers), stacked in front."""
    from .ops.linalg import _matmul
    powers = [np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape), A]
    if count > 2:
        powers.append(_matmul(A, A))
    if count > 3:
        powers.append(_matmul(A, powers[2]))
    if count > 4:
        powers.append(_matmul(powers[3], powers[3]))
    return np.stack(powers[:count])


def _combination(powers, coefficients):
    """ATen's _compute_linear_combination: row i is the sum of powers[j] * c[i][j], added to zero in order
    (the coefficients rounded to the dtype)."""
    c = np.asarray(coefficients, dtype=np.float64).astype(powers.dtype).reshape(-1, powers.shape[0])
    out = np.zeros((c.shape[0],) + powers.shape[1:], powers.dtype)
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            out[i] = out[i] + powers[j] * c[i, j]
    return out


def _t1(A):
    powers = _powers(A, 2)
    return powers[0] + powers[1]


def _t2(A):
    powers = _powers(A, 3)
    powers[2] = powers[2] / A.dtype.type(2)
    return (powers[0] + powers[1]) + powers[2]


def _t4(A):
    from .ops.linalg import _matmul
    powers = np.concatenate([_powers(A, 3), np.empty((1,) + A.shape, A.dtype)])
    powers[3] = _matmul(powers[2], _combination(powers[:3], (1 / 2.0, 1 / 6.0, 1 / 24.0))[0])
    return _combination(powers, (1.0, 1.0, 0.0, 1.0))[0]


def _t8(A):
    """Degree 8 with two products, ATen's constants computed as it computes them (in double, stored in
    the dtype)."""
    from .ops.linalg import _matmul
    t = A.dtype.type
    sqrt_177 = float(t(0.1330413469565007072504e+2))
    x3 = float(t(2. / 3.))
    x1, x2 = t(x3 * ((1. + sqrt_177) / 88.)), t(x3 * ((1. + sqrt_177) / 352.))
    x4, x5 = t((-271. + 29. * sqrt_177) / (315. * x3)), t((-11. + 11. * sqrt_177) / (1260. * x3))
    x6, x7 = t((-99. + 11. * sqrt_177) / (5040. * x3)), t((89. - sqrt_177) / (5040. * x3))
    y2 = t((857. - 58. * sqrt_177) / 630.)
    powers = np.concatenate([_powers(A, 3), np.empty((2,) + A.shape, A.dtype)])
    powers[3] = _matmul(powers[2], _combination(powers[1:3], (x1, x2))[0])
    powers[4] = _matmul(_combination(powers[2:4], (x3, 1.0))[0], _combination(powers[:4], (x4, x5, x6, x7))[0])
    return _combination(powers, (1.0, 1.0, y2, 0.0, 1.0))[0]


def _t12(A):
    from .ops.linalg import _matmul
    B = _combination(_powers(A, 4), _T12)
    B[2] = B[2] + _matmul(B[3], B[3])
    B[1] = B[1] + B[2]
    return B[0] + _matmul(B[1], B[2])


def _t18(A):
    from .ops.linalg import _matmul
    B = _combination(_powers(A, 5), _T18)
    B[3] = B[3] + _matmul(B[0], B[4])
    B[2] = B[2] + B[3]
    return B[1] + _matmul(B[2], B[3])


def _t18_scaled(A, norms, theta):
    """compute_T18_scale_square: A / 2^s with s = max(0, ceil(log2(norm / theta))), degree 18, then each
    matrix squared s times (mm's)."""
    from .ops.linalg import _mm
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.maximum(0, np.ceil(np.log2(norms / theta))).astype(np.int64)
    scaled = A / (2.0 ** steps).astype(np.int64)[:, None, None].astype(A.dtype)
    out = _t18(scaled)
    for i, s in enumerate(steps):
        for _ in range(int(s)):
            out[i] = _mm(out[i], out[i])
    return out

