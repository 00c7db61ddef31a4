"""Matrix products and linear algebra."""
from __future__ import annotations

import builtins

import numpy as np

from .. import corner_grads, errors, mkl
from ..graph import NOT_IMPLEMENTED_NODE
from .registry import NotDifferentiable, batch_rules, op
from .common import _F, _apply, _floating_only, _kernel
from .pointwise import _F_
from .reductions import _sum_dtype


# ============================================================ linear algebra
def _mm(a, b):
    """ATen's mm: MKL's gemm as addmm_impl_cpu_ calls it (NumPy's matmul without MKL)."""
    product = mkl.addmm(None, a, b, 0, 1)
    return np.matmul(a, b) if product is None else product


mm = op("mm", "MmBackward0", _mm, ("self", "mat2"),
        # ATen's mm_mat1/mat2_backward: a column-major input gets its gradient column-major (transposed)
        self=lambda grad, mat2, self_column_major: mat2.mm(grad.t()).t() if self_column_major else grad.mm(mat2.t()),
        mat2=lambda grad, self, mat2_column_major: grad.t().mm(self).t() if mat2_column_major else self.t().mm(grad),
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
        if mkl.available() and rows and cols and depth:
            return np.stack([mkl.addmm(None, a[i], b[i], 0, 1) for i in range(batches)]) if batches \
                else np.empty((0, rows, cols), a.dtype)
        if depth == 1 and a.shape[0] == b.shape[0]:
            return np.einsum("bik,bkj->bij", a, b)
    return np.matmul(a, b)


_EINSUM_EXACT = (np.dtype(np.float32), np.dtype(np.float64))


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
         forward_ad=lambda self_t, tensor_t, self, tensor: self_t.dot(tensor) + self.dot(tensor_t))


def _addmm(c, a, b, beta=1, alpha=1):
    """``c * beta + (a @ b) * alpha``: inside MKL's gemm as ATen computes it (``c`` broadcast into the
    result first), or without MKL in NumPy, where a scalar of 1 multiplies nothing (x * 1 is x)."""
    if a.ndim == b.ndim == 2:
        result = mkl.addmm(np.broadcast_to(c, (a.shape[0], b.shape[1])), a, b, beta, alpha)
        if result is not None:
            return result
    product = a @ b if alpha == 1 else (a @ b) * alpha
    return (c if beta == 1 else c * beta) + product


addmm = op("addmm", "AddmmBackward0", _addmm,
           ("self", "mat1", "mat2"),
           self=lambda grad, beta=1: grad if beta == 1 else grad * beta,
           mat1=lambda grad, mat2, alpha=1: grad.mm(mat2.t()) if alpha == 1 else grad.mm(mat2.t()) * alpha,
           mat2=lambda grad, mat1, alpha=1: mat1.t().mm(grad) if alpha == 1 else mat1.t().mm(grad) * alpha,
           domain="addmm", broadcast=False,
           forward_ad=lambda self_t, mat1_t, mat2_t, mat1, mat2, beta=1, alpha=1: self_t * beta + (mat1_t.mm(mat2) + mat1.mm(mat2_t)) * alpha)


def _det(a):
    """PyTorch's linalg.det: an LU factorisation with partial pivoting (``lu_packed``), then the sign
    of the row swaps times the product of U's diagonal. (np.linalg.det goes through exp(log|det|),
    which is not exact where PyTorch is: det([[2., 1.], [1., 3.]]) in float64 is 5.000000000000001.)
    This reproduces MKL's result bit for bit on most inputs, not all (its small-matrix kernels)."""
    n = a.shape[-1]
    A, _, sign = lu_packed(a)
    with np.errstate(all="ignore"):
        d = sign.reshape(-1)
        A = A.reshape((d.shape[0], n, n))
        for k in range(n):
            d = d * A[:, k, k]
        return np.asarray(d.reshape(a.shape[:-2]), a.dtype)


def lu_packed(a):
    """LAPACK getrf's factorisation as ATen calls it (the first largest |pivot|, the column scaled by
    the pivot's reciprocal): (LU packed in one matrix, the 1-based int32 pivots, the sign of the row
    swaps), what linalg.det's node saves as ``LU`` and ``pivots``."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    # ATen hands LAPACK a contiguous A as the column-major A^T (same det, no copy); another layout is
    # copied column-major and A itself is factored
    transposed = a.flags.c_contiguous
    columns = np.array(a if transposed else np.swapaxes(a, -1, -2), dtype=a.dtype, order="C")
    found = mkl.lu_factor(columns)
    if found is not None:
        pivots, _ = found
        swaps = np.count_nonzero(pivots != np.arange(1, n + 1, dtype=np.int32), axis=-1)
        sign = np.where(swaps % 2 == 0, 1, -1).astype(a.dtype)
        return np.swapaxes(columns, -1, -2), pivots, sign
    with np.errstate(all="ignore"):
        A = np.array(np.swapaxes(a, -1, -2) if transposed else a, dtype=a.dtype).reshape(
            (int(np.prod(batch, dtype=np.int64)), n, n))
        sign = np.ones(A.shape[0], a.dtype)
        pivots = np.zeros((A.shape[0], n), np.int32)
        rows = np.arange(A.shape[0])
        for k in range(n):
            p = np.argmax(np.abs(A[:, k:, k]), axis=1) + k
            pivots[:, k] = p + 1
            swap = p != k
            if swap.any():
                top = A[rows, k].copy()
                A[rows, k] = A[rows, p]
                A[rows, p] = top
                sign[swap] = -sign[swap]
            piv = A[:, k, k]
            inv = np.where(piv != 0, a.dtype.type(1) / np.where(piv != 0, piv, 1), 0).astype(a.dtype)
            A[:, k + 1:, k] *= inv[:, None]
            A[:, k + 1:, k + 1:] -= A[:, k + 1:, k, None] * A[:, k, None, k + 1:]
    return A.reshape(batch + (n, n)), pivots.reshape(batch + (n,)), sign.reshape(batch)


def det_gradient(scale, a):
    """``scale * A^{-T}`` (``scale`` = grad * det per matrix) as linalg_det_backward computes it when no
    graph is recorded: getrs with det's own LU, on ``scale`` times the identity (LU of A^T for a
    contiguous A, solved as it is; of A otherwise, solved transposed). None without MKL."""
    n = a.shape[-1]
    transposed = a.flags.c_contiguous
    columns = np.array(a if transposed else np.swapaxes(a, -1, -2), dtype=a.dtype, order="C")
    found = mkl.lu_factor(columns) if a.size else None
    if found is None:
        return None
    rhs = np.zeros(a.shape, a.dtype)                   # diag_embed(scale): zeros off the diagonal
    rhs[..., np.arange(n), np.arange(n)] = np.asarray(scale, a.dtype)[..., None]
    mkl.lu_solve(columns, found[0], rhs, not transposed)
    return np.swapaxes(rhs, -1, -2)


det = op("det", "LinalgDetBackward0", _det, ("A",),
         A=corner_grads.det_grad,
         dtype=_floating_only("linalg.det: Expected a floating point or complex tensor as input. Got {}"),
         domain="square", forward_ad="transpose")


# PyTorch raises torch.linalg.LinAlgError (a RuntimeError), printed under its qualified name
LinAlgError = errors._kind("torch._C._LinAlgError", builtins.RuntimeError)


def _zero_pivot(m):
    """The 1-based index of the first zero pivot of LU with partial pivoting (as LAPACK's getrf), or 0."""
    u = np.array(m, dtype=np.float64)
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:] -= np.outer(u[k + 1:, k] / u[k, k], u[k])
    return 0


def _inv(a):
    """ATen's linalg.inv: getrf of a column-major copy of A and getrs on the identity, with MKL (measured:
    A itself is factored whatever its layout, unlike det's); NumPy's inverse without it."""
    n = a.shape[-1]
    columns = np.array(np.swapaxes(a, -1, -2), dtype=a.dtype, order="C")
    found = mkl.lu_factor(columns) if a.size else None
    if found is not None:
        pivots, infos = found
        singular = np.flatnonzero(infos > 0)
        if singular.size:
            b = int(singular[0])
            where = f"(Batch element {b}): " if a.ndim > 2 else ""
            raise LinAlgError(f"linalg.inv: {where}The diagonal element {int(infos[b])} is zero, the inversion could "
                              "not be completed because the input matrix is singular.")
        solution = np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape).copy()
        mkl.lu_solve(columns, pivots, solution, False)
        return np.swapaxes(solution, -1, -2)
    try:
        return np.linalg.inv(a).astype(a.dtype)
    except np.linalg.LinAlgError:
        batch = a.reshape((-1,) + a.shape[-2:])
        for b, m in enumerate(batch):
            k = _zero_pivot(m)
            if k:
                where = f"(Batch element {b}): " if a.ndim > 2 else ""
                raise LinAlgError(f"linalg.inv: {where}The diagonal element {k} is zero, the inversion could not be "
                                  "completed because the input matrix is singular.") from None
        raise


inverse = op("inverse", "LinalgInvExBackward0", _inv, ("A",),
             A=lambda grad, result: -(result.mT @ (grad @ result.mT)), domain="square",     # (ATen's order)
             dtype=_floating_only("linalg.inv: Expected a floating point or complex tensor as input. Got {}"),
             forward_ad="transpose")


def _svdvals(a, compute_uv=True):
    """The singular values, and U and Vh for the backward formula. ATen computes U and V only when A may
    need a gradient (``compute_uv``), and LAPACK rounds the values otherwise then: MKL's gesdd as ATen
    calls it, NumPy's SVD without MKL (U and Vh are computed in any case, for the saved attributes)."""
    found = mkl.svd(a, compute_uv)
    if found is not None:
        s, u, vh = found
        if u is None:
            _, u, vh = mkl.svd(a, True)
        return s, {"U": u, "Vh": vh}
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s.astype(a.dtype), {"U": u.astype(a.dtype), "Vh": vh.astype(a.dtype)}


# The backward U diag(grad) Vh treats the singular vectors as constants, which is exact for the
# first derivative only; it runs through an op that refuses to be differentiated again.
# A is an input of that op (though only U and Vh are used) so that its node is recorded whenever A
# requires grad: a second derivative then fails loudly instead of coming out as zero.
def _svdvals_backward(g, a, U, Vh):
    """FunctionsManual's svd_backward for the values alone: ``U @ (gS.unsqueeze(-1) * Vh)`` when A has at
    least as many rows as columns, ``(U * gS.unsqueeze(-2)) @ Vh`` otherwise, products as matmul's."""
    if U.shape[-2] >= Vh.shape[-1]:
        return _matmul(U, g[..., :, None] * Vh)
    return _matmul(U * g[..., None, :], Vh)


def _matmul(a, b):
    """at::matmul of two arrays of equal rank: mm for matrices, bmm over the flattened batch otherwise."""
    if a.ndim == 2:
        return _mm(a, b)
    batch = a.shape[:-2]
    flat = _bmm(a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:]))
    return flat.reshape(batch + flat.shape[-2:])


svd_backward = op("svd_backward", NOT_IMPLEMENTED_NODE, _svdvals_backward,
                  ("g", "A"), domain="real",
                  g=NotDifferentiable("derivative for linalg_svd_backward is not implemented"),
                  A=NotDifferentiable("derivative for linalg_svd_backward is not implemented"))
svdvals = op("svdvals", "LinalgSvdBackward0", _svdvals, ("A",),
             A=lambda grad, A, U, Vh: _apply(svd_backward, (grad, A), {"U": U._data, "Vh": Vh._data}),
             dtype=_F_, domain="matrix", twice=False,
             # PyTorch's svd jvp for the values: S_t = diag(Uᴴ A_t V)
             forward_ad=lambda A_t, U, Vh: U.transpose(-2, -1).matmul(A_t).matmul(Vh.transpose(-2, -1)).diagonal(
                 0, -2, -1))
trace = op("trace", "TraceBackward0", lambda a: np.asarray(np.trace(a)),
           self=lambda grad, self_shape: grad * _F().eye(self_shape[0], self_shape[1], dtype=grad.dtype),
           dtype=_sum_dtype, domain="matrix", forward_ad="linear")


# ============================================================ vmap's batch rules (batching.py)
for _name in ("mm", "mv", "dot", "bmm", "addmm"):
    batch_rules(_name, _name)
