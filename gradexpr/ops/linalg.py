"""Matrix products (mm, bmm, mv, dot, addmm, baddbmm), trace and matrix_exp, and what the other
linalg families share: products of arrays as at::matmul computes them, the column-major copies ATen
hands LAPACK, the test for a vector right-hand side, and torch.linalg.LinAlgError.

The factorizations are families of their own, one per kind of factor (LAPACK's, as ATen calls it):
``linalg_triangular`` (solve_triangular, Cholesky), ``linalg_lu_decomposition`` (det, slogdet,
inverse, solve and the LU functions), ``linalg_orthogonal`` (SVD, QR, eigh, and pinv and lstsq built
on them); ``linalg_vectors`` holds cross products and distances between rows.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import errors, mkl
from .registry import batch_rules, op
from .common import _F, _apply, _floating_only, _kernel, maybe_multiply
from .reductions import _sum_dtype


def _indexing():
    from . import indexing          # (a lazy family: trace's gradient fills with its index_fill)
    return indexing


def _mm(a, b):
    """ATen's mm: MKL's gemm as addmm_impl_cpu_ calls it (NumPy's matmul without MKL)."""
    product = mkl.addmm(None, a, b, 0, 1)
    return np.matmul(a, b) if product is None else product


def _mm_mat1_backward(grad, mat2, column_major):
    """ATen's mm_mat1_backward: a column-major input gets its gradient column-major (transposed)."""
    return mat2.mm(grad.t()).t() if column_major else grad.mm(mat2.t())


def _mm_mat2_backward(grad, mat1, column_major):
    return grad.t().mm(mat1).t() if column_major else mat1.t().mm(grad)


mm = op("mm", "MmBackward0", _mm, ("self", "mat2"),
        self=lambda grad, mat2, self_column_major: _mm_mat1_backward(grad, mat2, self_column_major),
        mat2=lambda grad, self, mat2_column_major: _mm_mat2_backward(grad, self, mat2_column_major),
        dtype=_kernel("addmm_impl_cpu_", "promote"), domain="matrices", broadcast=False,
        forward_ad=lambda self_t, mat2_t, self, mat2: self_t.mm(mat2) + self.mm(mat2_t))


def _bmm(a, b):
    """ATen's bmm: below 400 multiply-adds per matrix its own loop (each sum from zero, in order, in the
    dtype), above them MKL's gemm matrix by matrix, as addmm. Without MKL, NumPy's matmul, but a
    contraction of length 1 (per-sample outer products, which vmap's weight gradients are) through einsum:
    NumPy makes one BLAS call per matrix (~5x slower here) for the same numbers."""
    if a.ndim == b.ndim == 3 and a.dtype == b.dtype and a.dtype in _EINSUM_EXACT:
        batches, rows, depth = a.shape
        cols = b.shape[2]
        if depth * rows * cols < 400:
            return _bmm_in_order(a, b)
        if depth == 1 and a.shape[0] == b.shape[0]:         # one product per element: no sum to order
            return _outer_products(a, b)
        if mkl.available() and rows and cols and depth:
            return np.stack([mkl.addmm(None, a[i], b[i], 0, 1) for i in range(batches)]) if batches \
                else np.empty((0, rows, cols), a.dtype)
    return np.matmul(a, b)


_EINSUM_EXACT = (np.dtype(np.float32), np.dtype(np.float64))


def _outer_products(a, b):
    """Per-sample outer products (vmap's weight gradients) as einsum computes them, ``+0 + a * b`` (a zero
    product is +0, as PyTorch's): through MKL's batched gemm where it is faster (one pass over the result,
    not einsum's two), the sign of its zero products then settled by adding +0, a second pass skipped
    when no product can be zero (no zero factor, none small enough to underflow)."""
    # the factors looked at before the product is written, while they are in the cache (the ufuncs
    # themselves: ndarray.min's Python wrapper and finfo cost as much as the passes here)
    smallest = float(_minimum(_abs(a), axis=None)) * float(_minimum(_abs(b), axis=None))   # NaN: not >=
    product = mkl.outer_products(a, b)
    if product is None:
        return np.einsum("bik,bkj->bij", a, b)
    if not smallest >= _NO_ZERO_PRODUCT[a.dtype]:
        product += product.dtype.type(0)
    return product


_minimum, _abs = np.minimum.reduce, np.abs
# the smallest product of two factors at least this large in magnitude is neither zero nor underflows to it
_NO_ZERO_PRODUCT = {t: 8 * float(np.finfo(t).smallest_subnormal) for t in _EINSUM_EXACT}


def _bmm_in_order(a, b):
    """ATen's baddbmm_cpu_kernel for bmm: ``sum_k a[i, k] * b[k, j]`` added to a zero one term at a time
    (no fused multiply-add), all rows and columns at once."""
    total = np.zeros((a.shape[0], a.shape[1], b.shape[2]), a.dtype)
    for k in range(a.shape[2]):
        total += a[:, :, k, None] * b[:, None, k, :]
    return total


bmm = op("bmm", "BmmBackward0", _bmm, ("self", "mat2"),
         self=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
         mat2=lambda grad, self: self.transpose(1, 2).bmm(grad),
         dtype=_kernel("bmm", "promote"), domain="batched", broadcast=False,
         forward_ad=lambda self_t, mat2_t, self, mat2: self_t.bmm(mat2) + self.bmm(mat2_t))
def _mv(a, x):
    """ATen's mv: MKL's gemv as addmv_impl_cpu_ calls it (NumPy's matmul without MKL)."""
    product = mkl.addmv(None, a, x, 0, 1)
    return np.matmul(a, x) if product is None else product


def _dot(x, y):
    """ATen's dot: MKL's ?dot (NumPy's without MKL)."""
    product = mkl.dot(x, y)
    return np.asarray(np.dot(x, y)) if product is None else product


mv = op("mv", "MvBackward0", _mv, ("self", "vec"),
        self=lambda grad, vec: _F().outer(grad, vec),
        vec=lambda grad, self: self.t().mv(grad),
        dtype=_kernel("addmv_impl_cpu", "promote"), domain="matvec", broadcast=False,
        forward_ad=lambda self_t, vec_t, self, vec: self_t.mv(vec) + self.mv(vec_t))
dot = op("dot", "DotBackward0", _dot, ("self", "tensor"),
         self=lambda grad, tensor: grad * tensor,
         tensor=lambda grad, self: grad * self, dtype=_kernel("dot", "promote"), domain="vectors", broadcast=False,
         forward_ad=lambda self_t, tensor_t, self, tensor: self_t.dot(tensor) + self.dot(tensor_t),
         zero_tensor="mul")


def _addmm(c, a, b, beta=1, alpha=1):
    """``c * beta + (a @ b) * alpha``: inside MKL's gemm as ATen computes it (``c`` broadcast into the
    result first), or without MKL in NumPy, where a scalar of 1 multiplies nothing (x * 1 is x)."""
    if a.ndim == b.ndim == 2:
        shape = (a.shape[0], b.shape[1])
        # (a bias row or a whole matrix is broadcast as gemm's result is filled with it)
        result = mkl.addmm(c if c.shape == shape[1:] or c.shape == shape else np.broadcast_to(c, shape), a, b,
                           beta, alpha)
        if result is not None:
            return result
    product = a @ b if alpha == 1 else (a @ b) * alpha
    return (c if beta == 1 else c * beta) + product


addmm = op("addmm", "AddmmBackward0", _addmm,
           ("self", "mat1", "mat2"),
           self=lambda grad, beta=1: grad if beta == 1 else grad * beta,
           # (F.linear's mat2 is weight.t(), column-major: its gradient is computed transposed, as ATen's)
           mat1=lambda grad, mat2, mat1_column_major, alpha=1: maybe_multiply(
               _mm_mat1_backward(grad, mat2, mat1_column_major), alpha),
           mat2=lambda grad, mat1, mat2_column_major, alpha=1: maybe_multiply(
               _mm_mat2_backward(grad, mat1, mat2_column_major), alpha),
           domain="addmm", broadcast=False,
           forward_ad=lambda self_t, mat1_t, mat2_t, mat1, mat2, beta=1, alpha=1: (
               maybe_multiply(self_t, beta) + maybe_multiply(mat1_t.mm(mat2), alpha)
               + maybe_multiply(mat1.mm(mat2_t), alpha)))


def _baddbmm(c, a, b, beta=1, alpha=1):
    """``c * beta + (a @ b) * alpha`` for stacks of matrices (``c`` broadcast to the product's shape)."""
    product = _bmm(a, b) if alpha == 1 else _bmm(a, b) * alpha
    return (c if beta == 1 else c * beta) + product


baddbmm = op("baddbmm", "BaddbmmBackward0", _baddbmm,
             ("self", "batch1", "batch2"),
             self=lambda grad, beta=1: grad if beta == 1 else grad * beta,
             batch1=lambda grad, batch2, alpha=1: grad.bmm(batch2.transpose(1, 2)) if alpha == 1
             else grad.bmm(batch2.transpose(1, 2)) * alpha,
             batch2=lambda grad, batch1, alpha=1: batch1.transpose(1, 2).bmm(grad) if alpha == 1
             else batch1.transpose(1, 2).bmm(grad) * alpha,
             domain="real", broadcast=False,
             forward_ad=lambda self_t, batch1_t, batch2_t, batch1, batch2, beta=1, alpha=1: (
                 maybe_multiply(self_t, beta) + maybe_multiply(batch1_t.bmm(batch2), alpha)
                 + maybe_multiply(batch1.bmm(batch2_t), alpha)))


def _matmul(a, b):
    """at::matmul of two arrays of equal rank: mm for matrices, bmm over the flattened batch otherwise."""
    if a.ndim == 2:
        return _mm(a, b)
    batch = a.shape[:-2]
    flat = _bmm(a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:]))
    return flat.reshape(batch + flat.shape[-2:])


trace = op("trace", "TraceBackward0", lambda a: np.asarray(np.trace(a)),
           self=lambda grad, self_shape: _indexing().trace_backward(grad, self_shape),
           dtype=_sum_dtype, domain="matrix", forward_ad="linear")


def _matrix_exp(a):
    """ATen's matrix exponential (``matrix_exp.py``: its Taylor polynomials by 1-norm, scaling and squaring)."""
    from ..matrix_exp import matrix_exp
    return matrix_exp(a) if a.size else np.array(a, copy=True)


def _matrix_exp_grad(grad, self):
    """FunctionsManual's linalg_matrix_exp_differential (adjoint): the upper right block of the
    exponential of [[Aᵀ, G], [0, Aᵀ]]."""
    n = self.shape[-1]
    At = self.mT
    top = _F().cat([At, grad], -1)
    bottom = _F().cat([At.new_zeros(At.shape), At], -1)
    blocks = _apply(linalg_matrix_exp, (_F().cat([top, bottom], -2),))
    return blocks.narrow(-2, 0, n).narrow(-1, n, n)


linalg_matrix_exp = op("linalg_matrix_exp", "LinalgMatrixExpBackward0", _matrix_exp, ("self",), self=_matrix_exp_grad,
                       dtype=_floating_only("linalg.matrix_exp: Expected a floating point or complex tensor as "
                                            "input. Got {}"), domain="square", forward_ad="transpose")


# ============================================================ shared by the other linalg families
def _column_major(a):
    """``a``'s matrices as ATen hands them to LAPACK, copied column-major: held here as the C-contiguous
    stack of their transposes, the layout ``mkl``'s LAPACK functions read and write."""
    return np.array(np.swapaxes(a, -1, -2), dtype=a.dtype, order="C")


def _is_vector_rhs(A, B):
    """ATen's linalg_solve_is_vector_rhs: B is a vector (or a batch of them) rather than a matrix."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


# PyTorch raises torch.linalg.LinAlgError (a RuntimeError), printed under its qualified name
LinAlgError = errors._kind("torch._C._LinAlgError", builtins.RuntimeError)


# ============================================================ vmap's batch rules (batching.py)
for _name in ("mm", "mv", "dot", "bmm", "addmm"):
    batch_rules(_name, _name)
