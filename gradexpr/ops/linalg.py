"""Matrix products and linear algebra."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import corner_grads, errors, exact, mkl, reduction_order
from . import backward_ops as _bw
from ..graph import NOT_IMPLEMENTED_NODE
from ..tensor import _wrap_dim
from .registry import NotDifferentiable, batch_rules, op
from .common import _F, _apply, _floating_only, _kernel
from .pointwise import _F_
from .reductions import _sum_dtype


# ============================================================ linear algebra
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
            return np.einsum("bik,bkj->bij", a, b)
        if mkl.available() and rows and cols and depth:
            return np.stack([mkl.addmm(None, a[i], b[i], 0, 1) for i in range(batches)]) if batches \
                else np.empty((0, rows, cols), a.dtype)
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


def _times(t, alpha):
    """derivatives.yaml's maybe_multiply: ``t * alpha`` unless alpha is 1."""
    return t if alpha == 1 else t * alpha


addmm = op("addmm", "AddmmBackward0", _addmm,
           ("self", "mat1", "mat2"),
           self=lambda grad, beta=1: grad if beta == 1 else grad * beta,
           # (F.linear's mat2 is weight.t(), column-major: its gradient is computed transposed, as ATen's)
           mat1=lambda grad, mat2, mat1_column_major, alpha=1: _times(_mm_mat1_backward(grad, mat2, mat1_column_major),
                                                                      alpha),
           mat2=lambda grad, mat1, mat2_column_major, alpha=1: _times(_mm_mat2_backward(grad, mat1, mat2_column_major),
                                                                      alpha),
           domain="addmm", broadcast=False,
           forward_ad=lambda self_t, mat1_t, mat2_t, mat1, mat2, beta=1, alpha=1: self_t * beta + (mat1_t.mm(mat2) + mat1.mm(mat2_t)) * alpha)


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
             forward_ad=lambda self_t, batch1_t, batch2_t, batch1, batch2, beta=1, alpha=1:
             self_t * beta + (batch1_t.bmm(batch2) + batch1.bmm(batch2_t)) * alpha)


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


def lu_packed(a, transposed=None):
    """LAPACK getrf's factorisation as ATen calls it (the first largest |pivot|, the column scaled by
    the pivot's reciprocal): (LU packed in one matrix, the 1-based int32 pivots, the sign of the row
    swaps), what linalg.det's node saves as ``LU`` and ``pivots``. ``transposed=False``: of A itself
    whatever its layout (linalg.solve's)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    # ATen's det hands LAPACK a contiguous A as the column-major A^T (same det, no copy); another layout
    # is copied column-major and A itself is factored
    if transposed is None:
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


def _inv(a, check_errors=True):
    """ATen's linalg.inv_ex: getrf of a column-major copy of A and getrs on the identity, with MKL (measured:
    A itself is factored whatever its layout, unlike det's); NumPy's inverse without it. getrf's info per
    matrix is an extra; ``check_errors`` (linalg.inv) raises PyTorch's error for the first singular one."""
    n = a.shape[-1]
    columns = _column_major(a)
    found = mkl.lu_factor(columns)
    if found is not None:
        pivots, infos = found
        infos = infos.reshape(a.shape[:-2])
        if check_errors:
            _refuse_singular(infos.reshape(-1), a.ndim)
        solution = np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape).copy()
        mkl.lu_solve(columns, pivots, solution, False)
        return np.swapaxes(solution, -1, -2), {"info": infos}
    infos = np.array([_zero_pivot(m) for m in a.reshape((-1,) + a.shape[-2:])], np.int32)
    if check_errors:
        _refuse_singular(infos, a.ndim)
    with np.errstate(all="ignore"):
        try:
            inverse = np.linalg.inv(a).astype(a.dtype)
        except np.linalg.LinAlgError:
            inverse = np.full(a.shape, np.nan, a.dtype)
    return inverse, {"info": infos.reshape(a.shape[:-2])}


def _refuse_singular(infos, ndim):
    singular = np.flatnonzero(infos > 0)
    if singular.size:
        b = int(singular[0])
        where = f"(Batch element {b}): " if ndim > 2 else ""
        raise LinAlgError(f"linalg.inv: {where}The diagonal element {int(infos[b])} is zero, the inversion could "
                          "not be completed because the input matrix is singular.")


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
def _svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    """ATen's ``svd_backward`` (real case), with derivatives.yaml's narrowing of full matrices to the
    first k = min(m, n) singular vectors; written with Tensor ops, so it differentiates again."""
    k = S.shape[-1]
    if full_matrices:
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return U.matmul(gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)).matmul(Vh)
    UhgU = None if gU is None else _skew(U.mT.matmul(gU))
    VhgV = None if gVh is None else _skew(Vh.matmul(gVh.mT))
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _F().eye(k, dtype=S.dtype)     # (its diagonal is 1: 0 + 1)
    if gU is not None and gVh is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif gU is not None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if m > n and gU is not None:
        gA = U.matmul(gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U.matmul(U.mT.matmul(gUSinv))
        return gA.matmul(Vh)
    if m < n and gVh is not None:
        gA = gA.matmul(Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - SinvgVh.matmul(Vh.mT).matmul(Vh)
        return U.matmul(gA)
    return U.matmul(gA.matmul(Vh)) if m >= n else U.matmul(gA).matmul(Vh)


def _skew(A):
    return A - A.mT


def _svd_part(k):
    """Output ``k`` of ``linalg.svd`` (U, S, Vh), the others kept for its backward."""
    def forward(a, full_matrices):
        found = mkl.svd(a, True, full_matrices)     # (ATen's gesdd, jobz 'A' or 'S'; NumPy's without MKL)
        if found is not None:
            s, u, vh = found
        else:
            u, s, vh = (x.astype(a.dtype) for x in np.linalg.svd(a, full_matrices=full_matrices))
        parts = {"U": u, "S": s, "Vh": vh}
        name = ("U", "S", "Vh")[k]
        return parts.pop(name), parts
    return forward


# each output computed by its own entry (vmap knows them); op.share_node gives them linalg_svd's one node
linalg_svd_U = op("linalg_svd_U", "LinalgSvdBackward0", _svd_part(0), ("A",), dtype=_F_, domain="matrix",
                  A=lambda grad, full_matrices, result, S, Vh: _svd_backward(grad, None, None, result, S, Vh,
                                                                             full_matrices))
linalg_svd_S = op("linalg_svd_S", "LinalgSvdBackward0", _svd_part(1), ("A",), dtype=_F_, domain="matrix",
                  A=lambda grad, full_matrices, U, result, Vh: _svd_backward(None, grad, None, U, result, Vh,
                                                                             full_matrices))
linalg_svd_Vh = op("linalg_svd_Vh", "LinalgSvdBackward0", _svd_part(2), ("A",), dtype=_F_, domain="matrix",
                   A=lambda grad, full_matrices, U, S, result: _svd_backward(None, None, grad, U, S, result,
                                                                             full_matrices))
linalg_svd = op("linalg_svd", "LinalgSvdBackward0", None, ("A",), outputs=("U", "S", "Vh"), domain="matrix",
                A=lambda grad, full_matrices, U, S, Vh: _svd_backward(*grad, U, S, Vh, full_matrices))


trace = op("trace", "TraceBackward0", lambda a: np.asarray(np.trace(a)),
           self=lambda grad, self_shape: _bw.trace_backward(grad, self_shape),
           dtype=_sum_dtype, domain="matrix", forward_ad="linear")




# ============================================================ factorizations and solvers (LAPACK's, as ATen calls it)
def _column_major(a):
    """``a``'s matrices as ATen hands them to LAPACK, copied column-major: held here as the C-contiguous
    stack of their transposes, the layout ``mkl``'s LAPACK functions read and write."""
    return np.array(np.swapaxes(a, -1, -2), dtype=a.dtype, order="C")


def _solve_triangular(A, B, upper, left=True, unitriangular=False):
    """ATen's linalg_solve_triangular: BLAS's trsm on a column-major copy of B (the batches broadcast), with a
    C-contiguous A read as its transpose (its other triangle, transposed: no copy) and any other A
    column-major (measured: PyTorch's bits). NumPy's solve without MKL."""
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    rhs = _column_major(np.broadcast_to(B, batch + B.shape[-2:]))
    transposed = A.flags.c_contiguous
    columns = np.ascontiguousarray(A) if transposed else _column_major(A)
    if mkl.triangular_solve(columns, rhs, left, upper != transposed, transposed, unitriangular) is not None:
        return np.swapaxes(rhs, -1, -2)
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        T = T - np.diagonal(T, 0, -2, -1)[..., None] * np.eye(A.shape[-1]) + np.eye(A.shape[-1])
    if left:
        return np.linalg.solve(T, np.broadcast_to(B, batch + B.shape[-2:])).astype(A.dtype)
    return np.swapaxes(np.linalg.solve(np.swapaxes(T, -1, -2), np.swapaxes(np.broadcast_to(B, batch + B.shape[-2:]),
                                                                            -1, -2)), -1, -2).astype(A.dtype)


def _solve_triangular_grad(grad, self, B, result, upper, left=True, unitriangular=False, output_mask=(True, True)):
    """FunctionsManual's linalg_solve_triangular_backward (real): gB solves with Aᵀ (the other triangle), gA
    is -gB Xᵀ (left) or -Xᵀ gB in A's triangle (without its diagonal if unitriangular); each summed back to
    its input's shape where the batches were broadcast."""
    gB = _apply(linalg_solve_triangular, (self.mT, grad), {"upper": not upper, "left": left,
                                                            "unitriangular": unitriangular})
    gA = None
    if output_mask[0]:
        gA = -gB.matmul(result.mT) if left else -result.mT.matmul(gB)
        gA = (gA.triu(int(unitriangular)) if upper else gA.tril(-int(unitriangular))).sum_to_size(self.shape)
    return gA, gB.sum_to_size(B.shape) if output_mask[1] else None


def _check_solve_triangular(values):
    """linalg_solve_triangular's checks in ATen's words, before the solve."""
    A, B, left = values["self"], values["B"], values["left"]
    for t in (A, B):
        if t._dtype.name not in ("float32", "float64"):
            raise errors.NotImplementedError(f'"triangular_solve_cpu" not implemented for \'{t._dtype._scalar_name}\'')
    if B._data.ndim < 2:
        raise errors.RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    a, b = A._data.shape, B._data.shape
    if len(a) < 2:
        raise errors.RuntimeError("linalg.solve_triangular: The input tensor A must have at least 2 dimensions.")
    if a[-1] != a[-2]:
        raise errors.RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but they are "
                                  f"{a[-2]} by {a[-1]} matrices")
    if (b[-2] if left else b[-1]) != a[-1]:
        raise errors.RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                                  f"{'AX = B' if left else 'XA = B'} ({a[-2]}x{a[-1]} and {b[-2]}x{b[-1]})")
    return (A, B), {"upper": values["upper"], "left": left, "unitriangular": values["unitriangular"]}


linalg_solve_triangular = op(
    "linalg_solve_triangular", "LinalgSolveTriangularBackward0", _solve_triangular, ("self", "B"),
    self=_solve_triangular_grad, B=_solve_triangular_grad, dtype="promote", domain="square", broadcast=False,
    prepare=_check_solve_triangular, variants="linalg",
    schema="linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False, "
           "Tensor(a!)? out=None) -> Tensor", forward_ad="transpose")


def _cholesky(a, upper=False):
    """ATen's linalg_cholesky_ex: potrf on a column-major copy of A, the other triangle then zeroed (the
    factor column-major, as ATen leaves it); potrf's info per matrix is an extra the call checks."""
    columns = _column_major(a)
    infos = mkl.cholesky(columns, upper)
    if infos is None:
        return _cholesky_numpy(a, upper)
    factor = np.swapaxes(columns, -1, -2)
    factor[...] = np.triu(factor) if upper else np.tril(factor)
    return factor, {"info": infos.reshape(a.shape[:-2])}


def _cholesky_numpy(a, upper):
    """NumPy's Cholesky factor, and the order of the first leading minor that is not positive-definite."""
    n = a.shape[-1]
    stack = a.reshape((-1, n, n))
    factors = np.zeros(stack.shape, a.dtype)
    infos = np.zeros(stack.shape[0], np.int32)
    for i, m in enumerate(stack):
        try:
            factors[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            infos[i] = next(k for k in range(1, n + 1) if not _positive_definite(m[:k, :k]))
    factors = factors.reshape(a.shape)
    return (np.swapaxes(factors, -1, -2) if upper else factors), {"info": infos.reshape(a.shape[:-2])}


def _positive_definite(m):
    try:
        np.linalg.cholesky(m)
        return True
    except np.linalg.LinAlgError:
        return False


def _cholesky_grad(grad, result, upper):
    """FunctionsManual's cholesky_backward (real): Φ = tril(Lᵀ gL) made symmetric with its diagonal halved,
    then ``L^-T Φ L^-1`` by two triangular solves."""
    L, gL = (result.mT, grad.mT) if upper else (result, grad)
    gA = L.mT.matmul(gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mT)
    gA = _apply(linalg_solve_triangular, (L.mT, gA), {"upper": True, "left": True, "unitriangular": False})
    return _apply(linalg_solve_triangular, (L, gA), {"upper": False, "left": False, "unitriangular": False})


_CHOLESKY_DTYPE = _floating_only("linalg.cholesky: Expected a floating point or complex tensor as input. Got {}")
linalg_cholesky_ex = op("linalg_cholesky_ex", "LinalgCholeskyExBackward0", _cholesky, ("A",), A=_cholesky_grad,
                        dtype=_CHOLESKY_DTYPE, domain="square", forward_ad="transpose")
# torch.cholesky: the deprecated function records a node of its own
cholesky = op("cholesky", "CholeskyBackward0", _cholesky, ("A",), A=_cholesky_grad, dtype=_CHOLESKY_DTYPE,
              domain="square", forward_ad="transpose")



def _cholesky_solve(B, L, upper=False):
    """ATen's cholesky_solve: potrs with a column-major copy of each factor on a column-major copy of B, the
    batches broadcast (the result column-major). NumPy's solves without MKL."""
    batch = np.broadcast_shapes(B.shape[:-2], L.shape[:-2])
    factors = np.ascontiguousarray(np.broadcast_to(_column_major(L), batch + L.shape[-2:]))
    rhs = _column_major(np.broadcast_to(B, batch + B.shape[-2:]))
    if mkl.cholesky_solve(factors, rhs, upper) is None:
        T = np.swapaxes(np.broadcast_to(L, batch + L.shape[-2:]), -1, -2) if upper else np.broadcast_to(L, batch + L.shape[-2:])
        with np.errstate(all="ignore"):
            return np.linalg.solve(T @ np.swapaxes(T, -1, -2), np.broadcast_to(B, batch + B.shape[-2:])).astype(B.dtype)
    return np.swapaxes(rhs, -1, -2)


def _cholesky_solve_grad(grad, self, input2, result, upper, output_mask=(True, True)):
    """FunctionsManual's cholesky_solve_backward (real): B's gradient solves with the same factor; the
    factor's is -(G + Gᵀ) L (or -U (G + Gᵀ)), G = gB Xᵀ."""
    grad_self = _apply(cholesky_solve, (grad, input2), {"upper": upper})
    grad_input2 = None
    if output_mask[1]:
        common = grad_self.matmul(result.mT)
        common = common + common.mT
        grad_input2 = (-input2.matmul(common) if upper else -common.matmul(input2)).sum_to_size(input2.shape)
    return grad_self.sum_to_size(self.shape) if output_mask[0] else None, grad_input2


cholesky_solve = op("cholesky_solve", "CholeskySolveBackward0", _cholesky_solve, ("self", "input2"),
                    self=_cholesky_solve_grad, input2=_cholesky_solve_grad, dtype="first", domain="square",
                    broadcast=False, forward_ad="transpose")


def _cholesky_inverse(L, upper=False):
    """ATen's cholesky_inverse: potri on a column-major copy of the factor, its triangle mirrored into the
    other (exactly symmetric); potri's info per matrix is an extra the call checks."""
    columns = _column_major(L)
    infos = mkl.cholesky_inverse(columns, upper)
    if infos is None:
        T = np.swapaxes(L, -1, -2) if upper else L
        with np.errstate(all="ignore"):
            inverse = np.linalg.inv(T @ np.swapaxes(T, -1, -2)).astype(L.dtype)
        return inverse, {"info": np.zeros(L.shape[:-2], np.int32)}
    half = np.swapaxes(columns, -1, -2)
    half = np.triu(half) if upper else np.tril(half)
    strict = np.triu(half, 1) if upper else np.tril(half, -1)
    full = np.ascontiguousarray(np.swapaxes(half + np.swapaxes(strict, -1, -2), -1, -2))
    return np.swapaxes(full, -1, -2), {"info": infos.reshape(L.shape[:-2])}       # (column-major, as ATen's)


def _cholesky_inverse_grad(grad, self, result, upper):
    """FunctionsManual's cholesky_inverse_backward (real): -(A⁻¹ (G + Gᵀ) A⁻¹) L (or -U (…))."""
    common = result.matmul((grad + grad.mT).matmul(result))
    return -self.matmul(common) if upper else -common.matmul(self)


cholesky_inverse = op("cholesky_inverse", "CholeskyInverseBackward0", _cholesky_inverse, ("self",),
                      self=_cholesky_inverse_grad, dtype="first", domain="square", forward_ad="transpose")


def _is_vector_rhs(A, B):
    """ATen's linalg_solve_is_vector_rhs: B is a vector (or a batch of them) rather than a matrix."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def _solve(A, B, left=True):
    """ATen's linalg_solve_ex: getrf of a column-major copy of A (A itself, whatever its layout: measured, as
    linalg.inv, which is this solve on the identity), getrs on a column-major copy of B with the batches
    broadcast; getrf's info per matrix is an extra the call checks. X A = B (``left=False``) is Aᵀ Xᵀ = Bᵀ,
    solved with A's LU transposed (lu_solve's adjoint). NumPy's solve without MKL."""
    if not left:
        B = np.swapaxes(B, -1, -2)
    vector = _is_vector_rhs(A, B)
    if vector:
        B = B[..., None]
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    found = _lu_solve(A, B, batch, not left)
    if found is not None:
        X, infos = found
    else:
        infos = np.array([_zero_pivot(m) for m in A.reshape((-1,) + A.shape[-2:])], np.int32) if A.size \
            else np.zeros(A.shape[:-2], np.int32)
        with np.errstate(all="ignore"):
            try:
                X = np.linalg.solve(np.broadcast_to(A if left else np.swapaxes(A, -1, -2), batch + A.shape[-2:]),
                                    np.broadcast_to(B, batch + B.shape[-2:]))
            except np.linalg.LinAlgError:
                X = np.full(batch + B.shape[-2:], np.nan)
        X = X.astype(A.dtype)
    if vector:
        X = X[..., 0]
    if not left:
        X = np.swapaxes(X, -1, -2)
    return X, {"info": np.asarray(infos, np.int32).reshape(A.shape[:-2])}


def _lu_solve(A, B, batch, transpose):
    """getrf of a column-major copy of each matrix of A, then getrs (with Aᵀ if ``transpose``) on a
    column-major copy of the matrices B (batches broadcast to ``batch``): (X, getrf's infos), or None."""
    columns = _column_major(A)
    found = mkl.lu_factor(columns) if A.size and B.size else None
    if found is None:
        return None
    pivots, infos = found
    columns = np.ascontiguousarray(np.broadcast_to(columns, batch + columns.shape[-2:]))
    pivots = np.ascontiguousarray(np.broadcast_to(pivots, batch + pivots.shape[-1:]))
    rhs = _column_major(np.broadcast_to(B, batch + B.shape[-2:]))
    mkl.lu_solve(columns, pivots, rhs, transpose)
    return np.swapaxes(rhs, -1, -2), infos


def _solve_adjoint(A, G, left):
    """gB of linalg_solve_backward when no graph is recorded: ATen's lu_solve with A's LU, adjoint, on the
    gradient (from the right for ``left=False``), as a constant tensor; None without MKL."""
    from ..graph import is_grad_enabled
    from ..tensor import Tensor
    if is_grad_enabled() or type(A) is not Tensor or type(G) is not Tensor:
        return None
    a, g = A._data, G._data
    if not left:
        g = np.swapaxes(g, -1, -2)
    found = _lu_solve(a, g, np.broadcast_shapes(a.shape[:-2], g.shape[:-2]), left)
    if found is None:
        return None
    solved = found[0] if left else np.swapaxes(found[0], -1, -2)
    return Tensor._make(solved, A._dtype)


def _solve_grad(grad, A, B, result, left, output_mask=(True, True)):
    """FunctionsManual's linalg_solve_backward (real): gB solves Aᵀ gB = gX (from the same side), gA is
    -gB Xᵀ (left) or -Xᵀ gB; each summed back to its input's shape where the batches were broadcast.
    With a graph, gB is linalg.solve's (differentiable again), without, LU's solve as ATen's."""
    vector = _is_vector_rhs(A, B)
    gX = grad.unsqueeze(-1) if vector else grad          # (vector_to_matrix, as ATen's: a matrix solve)
    gB = _solve_adjoint(A, gX, left)
    if gB is None:
        gB = _apply(linalg_solve_ex, (A.mT, gX), {"left": left})
    if vector:
        gB = gB.squeeze(-1)
    gA = None
    if output_mask[0]:
        if _is_vector_rhs(A, B):
            gA = -gB.unsqueeze(-1).matmul(result.unsqueeze(-2))
        else:
            gA = -gB.matmul(result.mT) if left else -result.mT.matmul(gB)
        gA = gA.sum_to_size(A.shape)
    return gA, gB.sum_to_size(B.shape) if output_mask[1] else None


linalg_solve_ex = op("linalg_solve_ex", "LinalgSolveExBackward0", _solve, ("A", "B"), A=_solve_grad, B=_solve_grad,
                     dtype="promote", domain="square", broadcast=False, forward_ad="transpose")


def solve(A, B):
    """``linalg.solve(A, B)`` as ATen's formulas call it (det's backward): one LinalgSolveExBackward0 node."""
    return _apply(linalg_solve_ex, (A, B), {"left": True})


def _slogdet(a):
    """ATen's _linalg_slogdet from det's LU (``lu_packed``): the sign of the row swaps times the signs of
    U's diagonal, and the sum of the logs of its absolute values (VML's log, PyTorch's summation order)."""
    LU, _, sign = lu_packed(a)
    diagonal = np.diagonal(LU, 0, -2, -1)
    with np.errstate(all="ignore"):
        sign = np.asarray(sign * np.prod(np.sign(diagonal), axis=-1), a.dtype)
        logs = mkl.elementwise("log", np.abs(diagonal))
        if logs is None:
            logs = np.log(np.abs(diagonal))
    return sign, np.asarray(reduction_order.torch_sum(np.ascontiguousarray(logs), -1), a.dtype)


def _slogdet_part(k):
    def forward(a):
        sign, logabsdet = _slogdet(a)
        return (sign, {"logabsdet": logabsdet}) if k == 0 else (logabsdet, {"sign": sign})
    return forward


def _slogdet_grad(g_logabsdet, A):
    """FunctionsManual's slogdet_backward (real): the sign has no derivative, log|det A| has g A^-T: without
    a graph from det's LU (``det_gradient``, ATen's lu_solve), with one linalg.solve(Aᵀ, g I) as ATen's."""
    from ..graph import is_grad_enabled
    from ..tensor import Tensor
    if not is_grad_enabled() and type(A) is Tensor and type(g_logabsdet) is Tensor:
        solved = det_gradient(g_logabsdet._data, A._data)
        if solved is not None:
            return Tensor._make(solved, A._dtype)
    eye_scaled = g_logabsdet.unsqueeze(-1).expand(A.shape[:-1]).diag_embed().mT     # (ATen's F-transposed d)
    return _apply(linalg_solve_ex, (A.mT, eye_scaled), {"left": True})


_SLOGDET_DTYPE = _floating_only("linalg.slogdet: Expected a floating point or complex tensor as input. Got {}")
linalg_slogdet_sign = op("linalg_slogdet_sign", "LinalgSlogdetBackward0", _slogdet_part(0), ("A",),
                         A=lambda grad, A: _F().zeros_like(A), dtype=_SLOGDET_DTYPE, domain="square", forward_ad="transpose")
linalg_slogdet_logabsdet = op("linalg_slogdet_logabsdet", "LinalgSlogdetBackward0", _slogdet_part(1), ("A",),
                              A=lambda grad, A: _slogdet_grad(grad, A), dtype=_SLOGDET_DTYPE, domain="square", forward_ad="transpose")
linalg_slogdet = op("linalg_slogdet", "LinalgSlogdetBackward0", None, ("A",), outputs=("sign", "logabsdet"),
                    domain="square", A=lambda grad, A: _slogdet_grad(grad[1], A) if grad[1] is not None else None)


def _qr(a, mode="reduced"):
    """ATen's linalg_qr: geqrf on a column-major copy of A, R its upper triangle, Q from orgqr ('r': no Q).
    NumPy's QR without MKL. Returns (Q, R), each column-major as ATen's."""
    m, n = a.shape[-2:]
    k = min(m, n)
    columns = _column_major(a)
    found = mkl.qr(columns, m, mode == "complete")
    if found is None:
        q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
        return q.astype(a.dtype), r.astype(a.dtype)
    packed, _, q_columns = found
    rows = m if mode == "complete" else k
    R = np.zeros(a.shape[:-2] + (n, rows), a.dtype)
    R[...] = np.swapaxes(np.triu(np.swapaxes(packed, -1, -2)[..., :rows, :]), -1, -2)
    return np.swapaxes(q_columns, -1, -2), np.swapaxes(R, -1, -2)


def _qr_part(k):
    def forward(a, mode):
        Q, R = _qr(a, mode)
        if mode == "r":
            Q = np.zeros((0,), a.dtype)
        return (Q, {"R": R}) if k == 0 else (R, {"Q": Q})
    return forward


def _qr_grad(gQ, gR, Q, R, mode):
    """FunctionsManual's linalg_qr_backward (real), written with Tensor ops."""
    if mode == "r":
        raise errors.RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                                  "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                                  "through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise errors.RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is not None:
        gA = -Q.mT.matmul(gQ) if gR is None else gR.matmul(R.mT) - Q.mT.matmul(gQ)
    else:
        gA = gR.matmul(R.mT)
    if m >= n:
        upper = gA.triu()
        sym = upper + upper.mT
        sym = sym - sym.diagonal(0, -2, -1).diag_embed() * 0.5
        gA = Q.matmul(sym)
        if gQ is not None:
            gA = gA + gQ
        return _apply(linalg_solve_triangular, (R.mT, gA), {"upper": False, "left": False, "unitriangular": False})
    gA = Q.matmul((-gA - (-gA).mT).tril())
    gA = _apply(linalg_solve_triangular, (R.narrow(-1, 0, m).mT, gA),
                {"upper": False, "left": False, "unitriangular": False})
    gA = _F().cat([gA, gA.new_zeros(gA.shape[:-1] + (n - m,))], -1)
    if gR is not None:
        gA = gA + Q.matmul(gR)
    return gA


linalg_qr_Q = op("linalg_qr_Q", "LinalgQrBackward0", _qr_part(0), ("A",), dtype=_F_, domain="matrix",
                 A=lambda grad, mode, result, R: _qr_grad(grad, None, result, R, mode), forward_ad="transpose")
linalg_qr_R = op("linalg_qr_R", "LinalgQrBackward0", _qr_part(1), ("A",), dtype=_F_, domain="matrix",
                 A=lambda grad, mode, Q, result: _qr_grad(None, grad, Q, result, mode), forward_ad="transpose")
linalg_qr = op("linalg_qr", "LinalgQrBackward0", None, ("A",), outputs=("Q", "R"), domain="matrix",
               A=lambda grad, mode, Q, R: _qr_grad(grad[0], grad[1], Q, R, mode))


def _eigh(a, UPLO="L", compute_v=True):
    """ATen's linalg_eigh: syevd on a column-major copy of A reading the triangle UPLO, eigenvalues
    ascending, eigenvectors column-major ('N' when nothing will differentiate them: LAPACK rounds the
    values otherwise then). NumPy's eigh without MKL. Returns (values, vectors or None, infos)."""
    columns = _column_major(a)
    found = mkl.eigh(columns, UPLO == "U", compute_v)
    if found is None:
        values, vectors = np.linalg.eigh(a, UPLO=UPLO)
        return values.astype(a.dtype), vectors.astype(a.dtype), np.zeros(a.shape[:-2], np.int32)
    values, infos = found
    return values, (np.swapaxes(columns, -1, -2) if compute_v else None), infos.reshape(a.shape[:-2])


def _eigh_part(k):
    def forward(a, UPLO, compute_v=True):
        values, vectors, infos = _eigh(a, UPLO, compute_v)
        if vectors is None:
            vectors = _eigh(a, UPLO, True)[1]          # (for the backward formula only)
        return (values, {"eigenvectors": vectors, "info": infos}) if k == 0 \
            else (vectors, {"eigenvalues": values, "info": infos})
    return forward


def _eigh_grad(gL, gV, L, V):
    """FunctionsManual's linalg_eig_backward for a symmetric A: ``V (skew(Vᵀ gV) / E + diag(gL)) Vᵀ``,
    E_ij = L_j - L_i (ones on its diagonal)."""
    if gV is None:
        return (V * gL.unsqueeze(-2)).matmul(V.mT)
    VhgV = V.mT.matmul(gV)
    VhgV = (VhgV - VhgV.mT) * 0.5
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + _F().eye(L.shape[-1], dtype=L.dtype)
    gA = VhgV / E
    if gL is not None:
        gA = gA - gA.diagonal(0, -2, -1).diag_embed() + gL.diag_embed()
    return V.matmul(gA.matmul(V.mT))


def _eigenvalues_grad(grad, A, UPLO, eigenvectors):
    """eigvalsh's gradient ``V diag(gL) Vᵀ``. PyTorch's node keeps V as an output of its own, so a second
    derivative goes through it: under create_graph V is computed again here as an output of A."""
    from ..graph import is_grad_enabled
    if is_grad_enabled():
        eigenvectors = _apply(linalg_eigh_eigenvectors, (A,), {"UPLO": UPLO})
    return _eigh_grad(grad, None, None, eigenvectors)


_EIGH_DTYPE = _floating_only("linalg.eigh: Expected a floating point or complex tensor as input. Got {}")
linalg_eigh_eigenvalues = op("linalg_eigh_eigenvalues", "LinalgEighBackward0", _eigh_part(0), ("A",),
                             dtype=_EIGH_DTYPE, domain="square",
                             A=lambda grad, A, UPLO, eigenvectors: _eigenvalues_grad(grad, A, UPLO, eigenvectors), forward_ad="transpose")
linalg_eigh_eigenvectors = op("linalg_eigh_eigenvectors", "LinalgEighBackward0", _eigh_part(1), ("A",),
                              dtype=_EIGH_DTYPE, domain="square",
                              A=lambda grad, eigenvalues, result: _eigh_grad(None, grad, eigenvalues, result), forward_ad="transpose")
linalg_eigh = op("linalg_eigh", "LinalgEighBackward0", None, ("A",), outputs=("eigenvalues", "eigenvectors"),
                 domain="square", A=lambda grad, eigenvalues, eigenvectors: _eigh_grad(grad[0], grad[1], eigenvalues,
                                                                                      eigenvectors))



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


def _pinv(a, atol=0.0, rtol=None, hermitian=False):
    """ATen's linalg_pinv: from the SVD (the eigendecomposition if ``hermitian``), the singular values
    at most max(atol, rtol * the largest) dropped, the others inverted; rtol is eps * max(m, n) unless
    an atol is given."""
    m, n = a.shape[-2:]
    if rtol is None:
        rtol = 0.0 if atol > 0 else float(np.finfo(a.dtype).eps) * max(m, n)
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        values, vectors, _ = _eigh(a)
        tol = np.maximum(atol, rtol * np.abs(values).max(-1, keepdims=True))
        with np.errstate(divide="ignore"):
            inverse = np.where(np.abs(values) > tol, 1 / values, 0).astype(a.dtype)
        return _matmul(np.ascontiguousarray(vectors * inverse[..., None, :]), np.swapaxes(vectors, -1, -2))
    found = mkl.svd(a, True)
    if found is not None:
        S, U, Vh = found
    else:
        U, S, Vh = (x.astype(a.dtype) for x in np.linalg.svd(a, full_matrices=False))
    tol = np.maximum(atol, rtol * S[..., :1])
    with np.errstate(divide="ignore"):
        inverse = np.where(S > tol, 1 / S, 0).astype(a.dtype)
    return _matmul(np.ascontiguousarray(np.swapaxes(Vh, -1, -2) * inverse[..., None, :]), np.swapaxes(U, -1, -2))


def _pinv_grad(grad, result, self):
    """FunctionsManual's pinv_backward: products of A, A⁺ and the gradient, the smaller side first."""
    m, n = self.shape[-2], self.shape[-1]
    pinvAh, gradh = result.mT, grad.mT
    if m <= n:
        K = gradh.matmul(result)
        KpinvAh = K.matmul(pinvAh)
        return (-(result.matmul(K)).mT + KpinvAh - self.matmul(result).matmul(KpinvAh)
                + pinvAh.matmul(result).matmul(gradh - K.matmul(self)))
    K = result.matmul(gradh)
    pinvAhK = pinvAh.matmul(K)
    return (-(K.matmul(result)).mT + (gradh - self.matmul(K)).matmul(result).matmul(pinvAh) + pinvAhK
            - pinvAhK.matmul(result).matmul(self))


linalg_pinv = op("linalg_pinv", "LinalgPinvBackward0", _pinv, ("self",), self=_pinv_grad,
                 dtype=_floating_only("linalg.pinv: Expected a floating point or complex tensor as input. Got {}"),
                 domain="matrix", forward_ad="transpose")



def _lstsq(A, B, rcond=None, driver="gelsy"):
    """ATen's linalg_lstsq: LAPACK's ``driver`` on column-major copies of A and of B padded to
    max(m, n) rows, the batches broadcast. The solution (its first n rows); the residuals' squares
    summed (only for m > n, a driver other than gelsy and, for gelsd/gelss, full rank), the rank and
    the singular values (gelsd/gelss) are extras. NumPy's lstsq without MKL."""
    m, n = A.shape[-2:]
    vector = _is_vector_rhs(A, B)
    if vector:
        B = B[..., None]
    own_batch = A.shape[:-2]
    batch = np.broadcast_shapes(own_batch, B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    if rcond is None:
        rcond = float(np.finfo(A.dtype).eps) * max(m, n)
    rows = max(m, n)
    rhs = np.zeros(batch + (B.shape[-1], rows), A.dtype)
    rhs[..., :m] = np.swapaxes(B, -1, -2)
    found = mkl.lstsq(_column_major(A), rhs, m, rcond, driver) if A.size and B.size else None
    if found is not None:
        ranks, values = found
        padded = np.swapaxes(rhs, -1, -2)
    elif not (A.size and B.size):      # nothing to solve: zeros, rank 0
        padded = np.swapaxes(rhs, -1, -2)
        ranks, values = np.zeros(batch, np.int64), np.zeros(batch + (min(m, n),), A.dtype)
    else:
        padded, ranks, values = _lstsq_numpy(A, B, rcond, rows)
    solution = padded[..., :n, :]
    residuals = np.zeros(0, A.dtype)
    if m > n and driver != "gelsy" and (driver == "gels" or np.all(ranks == n)):
        residuals = np.sum(padded[..., n:, :] ** 2, axis=-2)
    if vector:
        solution = solution[..., 0]
    ranks, values = _per_matrix_of(ranks, own_batch), _per_matrix_of(values, own_batch, 1)
    return solution, {"residuals": residuals,
                      "rank": ranks if driver != "gels" else np.zeros(0, np.int64),
                      "singular_values": values if driver in ("gelsd", "gelss") else np.zeros(0, A.dtype)}


def _per_matrix_of(x, own_batch, trailing=0):
    """Values computed per broadcast batch element, one per matrix of A's own batch (ATen writes A's rank and
    singular values once per matrix of A, the same for every right-hand side it was broadcast to)."""
    lead = x.ndim - trailing - len(own_batch)
    x = x[(0,) * lead]
    index = tuple(slice(0, 1) if own == 1 else slice(None) for own in own_batch)
    return np.array(x[index])


def _lstsq_numpy(A, B, rcond, rows):
    """The padded solutions (the residual rows A X - B below them), ranks and singular values by NumPy."""
    m, n = A.shape[-2:]
    flat_a = A.reshape((-1, m, n))
    flat_b = B.reshape((-1, m, B.shape[-1]))
    padded = np.zeros((flat_a.shape[0], rows, B.shape[-1]), A.dtype)
    ranks = np.zeros(flat_a.shape[0], np.int64)
    values = np.zeros((flat_a.shape[0], min(m, n)), A.dtype)
    for i, (a, b) in enumerate(zip(flat_a, flat_b)):
        x, _, ranks[i], values[i] = np.linalg.lstsq(a, b, rcond=rcond)
        padded[i, :n] = x
        if m > n:
            padded[i, n:] = (a @ x - b)[n:]
    batch = A.shape[:-2]
    return (padded.reshape(batch + padded.shape[1:]), ranks.reshape(batch), values.reshape(batch + values.shape[1:]))


def _lstsq_grad(gX, gL, A, B, X, output_mask):
    """FunctionsManual's linalg_lstsq_backward (real): X = A⁺ B, through pinv_backward for A; the
    residuals |A X - B|² add 2 g r Xᵀ to A's gradient and -2 g r to B's."""
    vector = _is_vector_rhs(A, B)
    B_matrix = B.unsqueeze(-1) if vector else B
    gA = gB = None
    if gX is not None:
        gX_matrix = gX.unsqueeze(-1) if vector else gX
        pinvA = _apply(linalg_pinv, (A,), {"atol": 0.0, "rtol": None, "hermitian": False})
        if output_mask[0]:
            gA = _pinv_grad(gX_matrix.matmul(B_matrix.mT), pinvA, A)
        if output_mask[1]:
            gB = pinvA.mT.matmul(gX_matrix)
            gB = gB.squeeze(-1) if vector else gB
    if gL is not None and gL.numel() > 0:
        X_matrix = X.unsqueeze(-1) if vector else X
        residual = A.matmul(X_matrix) - B_matrix
        g = gL.unsqueeze(-2)
        if output_mask[0]:
            term = (g * residual).matmul(X_matrix.mT) * 2
            gA = term if gA is None else gA + term
        if output_mask[1]:
            term = g * residual * -2
            term = term.squeeze(-1) if vector else term
            gB = term if gB is None else gB + term
    return gA, gB


def _lstsq_part(k):
    def forward(A, B, rcond=None, driver="gelsy"):
        solution, extras = _lstsq(A, B, rcond, driver)
        if k == 0:
            return solution, extras
        residuals = extras.pop("residuals")
        return residuals, {"solution": solution, **extras}
    return forward


def _lstsq_solution_grad(grad, A, B, result, output_mask=(True, True)):
    return _lstsq_grad(grad, None, A, B, result, output_mask)


def _lstsq_residuals_grad(grad, A, B, solution, output_mask=(True, True)):
    return _lstsq_grad(None, grad, A, B, solution, output_mask)


def _lstsq_joint_grad(grad, A, B, solution, output_mask=(True, True)):
    return _lstsq_grad(grad[0], grad[1], A, B, solution, output_mask)


linalg_lstsq_solution = op("linalg_lstsq_solution", "LinalgLstsqBackward0", _lstsq_part(0), ("A", "B"),
                           A=_lstsq_solution_grad, B=_lstsq_solution_grad, dtype="first", domain="matrix",
                           broadcast=False, forward_ad="transpose")
linalg_lstsq_residuals = op("linalg_lstsq_residuals", "LinalgLstsqBackward0", _lstsq_part(1), ("A", "B"),
                            A=_lstsq_residuals_grad, B=_lstsq_residuals_grad, dtype="first", domain="matrix",
                            broadcast=False, forward_ad="transpose")
linalg_lstsq = op("linalg_lstsq", "LinalgLstsqBackward0", None, ("A", "B"), outputs=("solution", "residuals"),
                  A=_lstsq_joint_grad, B=_lstsq_joint_grad, domain="matrix", broadcast=False)



# ============================================================ LU (torch.linalg.lu_factor, lu, lu_solve, torch.lu_unpack)
def _lu_factor(A):
    """ATen's linalg_lu_factor_ex: getrf on a column-major copy of A (any m x n), the factors left
    column-major; the 1-based pivots and getrf's infos are extras."""
    columns = _column_major(A)
    found = mkl.lu_factor(columns)
    if found is None:
        return _lu_factor_numpy(A)
    pivots, infos = found
    return np.swapaxes(columns, -1, -2), {"pivots": pivots, "info": infos.reshape(A.shape[:-2])}


def _lu_factor_numpy(A):
    """getrf's algorithm in NumPy: the first largest |pivot| of each column, rows swapped, the column
    below it scaled by its reciprocal, the rest updated."""
    m, n = A.shape[-2:]
    k = min(m, n)
    LU = np.array(A.reshape((-1, m, n)), dtype=A.dtype)
    pivots = np.zeros((LU.shape[0], k), np.int32)
    infos = np.zeros(LU.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for b in range(LU.shape[0]):
            for j in range(k):
                p = j + int(np.argmax(np.abs(LU[b, j:, j])))
                pivots[b, j] = p + 1
                LU[b, [j, p]] = LU[b, [p, j]]
                if LU[b, j, j] == 0:
                    infos[b] = infos[b] or j + 1
                    continue
                LU[b, j + 1:, j] *= A.dtype.type(1) / LU[b, j, j]
                LU[b, j + 1:, j + 1:] -= np.outer(LU[b, j + 1:, j], LU[b, j, j + 1:])
    batch = A.shape[:-2]
    return LU.reshape(A.shape), {"pivots": pivots.reshape(batch + (k,)), "info": infos.reshape(batch)}


def _permutation(pivots, m, dtype):
    """P of A = P L U from LAPACK's 1-based row swaps (applied in turn to the rows of the identity)."""
    flat = np.asarray(pivots).reshape((-1, pivots.shape[-1]))
    P = np.zeros((flat.shape[0], m, m), dtype)
    for b, swaps in enumerate(flat):
        order = np.arange(m)
        for i, p in enumerate(swaps - 1):
            order[[i, p]] = order[[p, i]]
        P[b, order, np.arange(m)] = 1
    return P.reshape(pivots.shape[:-1] + (m, m))


# P from the pivots as an entry without a node: under vmap its input is every sample's pivots
lu_permutation = op("lu_permutation", "", lambda pivots, m, dtype: _permutation(pivots, m, dtype.np), ("pivots",),
                    dtype=lambda ts, params: (None, params["dtype"]))


def _unpacked(LU, pivots, unpack_data=True, unpack_pivots=True):
    """ATen's lu_unpack: P, the unit lower L (m x k) and the upper U (k x n) of packed factors (empty where
    not asked for)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    P = _permutation(pivots, m, LU.dtype) if unpack_pivots else np.zeros(0, LU.dtype)
    if not unpack_data:
        return P, np.zeros(0, LU.dtype), np.zeros(0, LU.dtype)
    return P, np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype), np.triu(LU[..., :k, :])


def _lu_backward(L_grad, U_grad, P, L, U):
    """FunctionsManual's linalg_lu_backward (real, pivoted): for a square A, P L^-T (Lᵀ gL ∘ 1_L + gU Uᵀ ∘ 1_U) U^-T;
    a wide or tall A carries the extra block of U or L through."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)

    def solve(A, B, upper, left, unit=False):
        return _apply(linalg_solve_triangular, (A, B), {"upper": upper, "left": left, "unitriangular": unit})
    if m == n:
        gA = None if L_grad is None else L.mT.matmul(L_grad).tril(-1)
        if U_grad is not None:
            term = U_grad.matmul(U.mT).triu()
            gA = term if gA is None else gA + term
        gA = solve(U.mT, gA, False, False)
        return P.matmul(solve(L.mT, gA, True, True, True))
    if m < n:
        U1 = U.narrow(-1, 0, k)
        gA = None if L_grad is None else L.mT.matmul(L_grad)
        if U_grad is not None:
            term = U_grad.triu().matmul(U.mT)
            gA = -term if gA is None else gA - term
        gA = solve(U1.mT, gA.tril(-1), False, False)
        if U_grad is not None:
            gA = _F().cat([gA + U_grad.narrow(-1, 0, k).triu(), U_grad.narrow(-1, k, n - k)], -1)
        gA = solve(L.mT, gA, True, True, True)
        if U_grad is None:
            gA = _F().cat([gA, gA.new_zeros(gA.shape[:-1] + (n - k,))], -1)
        return P.matmul(gA)
    L1 = L.narrow(-2, 0, k)
    gA = None if U_grad is None else U_grad.matmul(U.mT)
    if L_grad is not None:
        term = L.mT.matmul(L_grad.tril(-1))
        gA = -term if gA is None else gA - term
    gA = solve(L1.mT, gA.triu(), True, True, True)
    if L_grad is not None:
        gA = _F().cat([gA + L_grad.narrow(-2, 0, k).tril(-1), L_grad.narrow(-2, k, m - k)], -2)
    gA = solve(U.mT, gA, False, False)
    if L_grad is None:
        gA = _F().cat([gA, gA.new_zeros(gA.shape[:-2] + (m - k, gA.shape[-1]))], -2)
    return P.matmul(gA)


def _factors_of(LU, pivots):
    """P (a constant), L and U of packed factors as Tensor expressions of LU (differentiable again)."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    P = _apply(lu_permutation, (pivots,), {"m": m, "dtype": LU._dtype})
    L = LU.narrow(-1, 0, k).tril(-1) + _F().eye(m, k, dtype=LU.dtype)
    return P, L, LU.narrow(-2, 0, k).triu()


def _lu_factor_grad(grad, result, pivots):
    """FunctionsManual's lu_factor_ex_backward: L's and U's parts of the gradient through linalg_lu_backward."""
    P, L, U = _factors_of(result, pivots)
    k = min(result.shape[-2], result.shape[-1])
    return _lu_backward(grad.narrow(-1, 0, k).tril(-1), grad.narrow(-2, 0, k).triu(), P, L, U)


linalg_lu_factor_ex = op("linalg_lu_factor_ex", "LinalgLuFactorExBackward0", _lu_factor, ("A",), A=_lu_factor_grad,
                         dtype="first", domain="square", forward_ad="transpose")


def _lu_part(k):
    """Output k (1: L, 2: U) of linalg.lu, the other factors kept as extras."""
    def forward(A):
        LU, extras = _lu_factor(A)
        P, L, U = _unpacked(LU, extras["pivots"])
        return (L, {"P": P, "U": U}) if k == 1 else (U, {"P": P, "L": L})
    return forward


linalg_lu_L = op("linalg_lu_L", "LinalgLuBackward0", _lu_part(1), ("A",), dtype="first", domain="square",
                 A=lambda grad, P, result, U: _lu_backward(grad, None, P, result, U), forward_ad="transpose")
linalg_lu_U = op("linalg_lu_U", "LinalgLuBackward0", _lu_part(2), ("A",), dtype="first", domain="square",
                 A=lambda grad, P, L, result: _lu_backward(None, grad, P, L, result), forward_ad="transpose")
def _pivoting_of(A):
    """P of A's LU factorisation, a constant (linalg.lu's node keeps it beside L and U; gradexpr's shared node
    keeps the outputs that have a gradient, so it is found again from A: every sample's under vmap)."""
    from ..op import apply_ex
    _, extras = apply_ex(linalg_lu_factor_ex, (A.detach(),))
    pivots = extras["pivots"]
    if not hasattr(pivots, "_data"):
        from ..tensor import Tensor
        pivots = Tensor._make(pivots)
    return _apply(lu_permutation, (pivots,), {"m": A.shape[-2], "dtype": A._dtype})


linalg_lu = op("linalg_lu", "LinalgLuBackward0", None, ("A",), outputs=("L", "U"), domain="square",
               A=lambda grad, A, L, U: _lu_backward(grad[0], grad[1], _pivoting_of(A), L, U))


def _lu_unpack_grad(L_grad, U_grad, shape):
    """FunctionsManual's lu_unpack_backward: L's strict lower and U's upper triangle back into one matrix."""
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    if L_grad is not None and U_grad is not None:
        if m == n:
            return L_grad.tril(-1) + U_grad.triu()
        first = L_grad.narrow(-2, 0, k).tril(-1) + U_grad.narrow(-1, 0, k).triu()
        return _F().cat([first, U_grad.narrow(-1, k, n - k)], -1) if m < n else \
            _F().cat([first, L_grad.narrow(-2, k, m - k)], -2)
    if L_grad is not None:
        lower = L_grad.tril(-1)
        return lower if m >= n else _F().cat([lower, lower.new_zeros(lower.shape[:-1] + (n - m,))], -1)
    upper = U_grad.triu()
    return upper if n >= m else _F().cat([upper, upper.new_zeros(upper.shape[:-2] + (m - n, n))], -2)


def _unpack_part(k):
    def forward(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
        P, L, U = _unpacked(LU_data, LU_pivots, unpack_data, unpack_pivots)
        return (L, {"P": P, "U": U}) if k == 1 else (U, {"P": P, "L": L})
    return forward


lu_unpack_L = op("lu_unpack_L", "LuUnpackBackward0", _unpack_part(1), ("LU_data", "LU_pivots"), dtype="first",
                 domain="square", broadcast=False,
                 LU_data=lambda grad, LU_data_shape: _lu_unpack_grad(grad, None, LU_data_shape),
                 forward_ad="transpose")
lu_unpack_U = op("lu_unpack_U", "LuUnpackBackward0", _unpack_part(2), ("LU_data", "LU_pivots"), dtype="first",
                 domain="square", broadcast=False,
                 LU_data=lambda grad, LU_data_shape: _lu_unpack_grad(None, grad, LU_data_shape),
                 forward_ad="transpose")
lu_unpack = op("lu_unpack", "LuUnpackBackward0", None, ("LU_data", "LU_pivots"), outputs=("L", "U"), domain="square",
               broadcast=False,
               LU_data=lambda grad, LU_data_shape: _lu_unpack_grad(grad[0], grad[1], LU_data_shape))


def _solve_with_factors(LU, pivots, B, left=True, adjoint=False):
    """ATen's linalg_lu_solve: getrs with the packed factors (copied column-major) on a column-major copy of
    B, the batches broadcast; X A = B (``left=False``) is solved as Aᵀ Xᵀ = Bᵀ, adjoint flipping getrs'
    transpose."""
    if not left:
        B = np.swapaxes(B, -1, -2)
    batch = np.broadcast_shapes(LU.shape[:-2], B.shape[:-2])
    columns = np.ascontiguousarray(np.broadcast_to(_column_major(LU), batch + LU.shape[-2:]))
    pivots = np.ascontiguousarray(np.broadcast_to(np.asarray(pivots, np.int32), batch + pivots.shape[-1:]))
    rhs = _column_major(np.broadcast_to(B, batch + B.shape[-2:]))
    transpose = adjoint if left else not adjoint
    if mkl.lu_solve(columns, pivots, rhs, transpose) is None:
        P, L, U = _unpacked(LU, pivots)
        A = np.matmul(np.matmul(P, L), U)
        rhs = np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2) if transpose else A,
                                          np.broadcast_to(B, batch + B.shape[-2:])), -1, -2).astype(LU.dtype)
    X = np.swapaxes(rhs, -1, -2)
    return X if left else np.swapaxes(X, -1, -2)


def _lu_solve_LU_grad(gX, LU, pivots, X, left, adjoint):
    """FunctionsManual's linalg_lu_solve_LU (real): the gradient of the packed factors, its strict lower
    part L's and its upper part U's."""
    P, L, U = _factors_of(LU, pivots)

    def solve(A, B, upper, left_side, unit=False):
        return _apply(linalg_solve_triangular, (A, B), {"upper": upper, "left": left_side, "unitriangular": unit})
    if left != adjoint:
        gR = solve(U.mT, -(gX if left else gX.mT).matmul(X.mT if left else X), False, True)
        gL = solve(L.mT, gR.matmul(U.mT), True, True, True).tril(-1)
        return gL + gR.triu()
    gR = -P.mT.matmul(X if left else X.mT).matmul(gX.mT if left else gX).matmul(P)
    gR = solve(L.mT, gR, True, False, True)
    gU = solve(U.mT, L.mT.matmul(gR), False, False).triu()
    return gR.tril(-1) + gU


def _lu_solve_grad(grad, LU, B, result, pivots, left, adjoint, output_mask=(True, True)):
    gLU = _lu_solve_LU_grad(grad, LU, pivots, result, left, adjoint).sum_to_size(LU.shape) if output_mask[0] else None
    gB = None
    if output_mask[1]:
        gB = _apply(linalg_lu_solve, (LU, pivots, grad), {"left": left, "adjoint": not adjoint})
        gB = gB.sum_to_size(B.shape)
    return gLU, gB


linalg_lu_solve = op("linalg_lu_solve", "LinalgLuSolveBackward0", _solve_with_factors, ("LU", "pivots", "B"),
                     LU=_lu_solve_grad,
                     B=_lu_solve_grad, dtype="first", domain="square", broadcast=False, forward_ad="transpose")


# ============================================================ cross products
def _cross(a, b, dim):
    """ATen's cross kernel: component i is a_j * b_k - a_k * b_j ((i, j, k) cyclic) for broadcast a and b,
    the first product fused into the subtraction (its CPU kernels are compiled with FMA contraction)."""
    a, b = np.broadcast_arrays(a, b)
    a, b = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    parts = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        if a.dtype.kind == "f":
            parts.append(exact.fma(a[..., j], b[..., k], -(a[..., k] * b[..., j])))
        else:
            parts.append(a[..., j] * b[..., k] - a[..., k] * b[..., j])
    return np.ascontiguousarray(np.moveaxis(np.stack(parts, -1), -1, dim))


def _cross_dtype(ts, params):
    a, b = ts[0]._dtype, ts[1]._dtype
    if a is not b:
        raise errors.RuntimeError(f"expected scalar type {a._scalar_name} but found {b._scalar_name}")
    return None, a


def _check_cross(self, other, dim):
    """linalg_cross's meta checks in ATen's order (the dim shown as given), then the broadcast."""
    from ..op import _check_broadcast
    if self._data.ndim != other._data.ndim:
        raise errors.RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, self._data.ndim)
    if self._data.shape[d] != 3 or other._data.shape[d] != 3:
        raise errors.RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                                  f"{self._data.shape[d]} and {other._data.shape[d]}")
    _check_broadcast([self._data, other._data])
    return (self, other), {"dim": dim}         # (the node keeps the dim as given)


def _linalg_cross_call(values):
    return _check_cross(values["self"], values["other"], values["dim"])


_WARNED = []        # TORCH_WARN_ONCE: once per process


def _cross_call(values):
    """torch.cross: ATen's composite over linalg_cross; without ``dim``, the first dim of size 3 of the
    input (deprecated, with PyTorch's warning once)."""
    dim = values["dim"]
    if dim is None:
        if not _WARNED:
            _WARNED.append(True)
            from ..warn import warn
            warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                 "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
                 "that of linalg.cross in a future release. (Triggered internally at "
                 "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")
        dim = next((i for i, n in enumerate(values["self"]._data.shape) if n == 3), None)
        if dim is None:
            raise errors.RuntimeError("no dimension of size 3 in input")
    return _check_cross(values["self"], values["other"], dim)


# derivatives.yaml: self: linalg_cross(other, grad, dim), other: linalg_cross(grad, self, dim) (real inputs)
def _cross_self_grad(grad, other, dim):
    return _apply(linalg_cross, (other, grad), {"dim": dim})


def _cross_other_grad(grad, self, dim):
    return _apply(linalg_cross, (grad, self), {"dim": dim})


def _cross_tangent(self_t, other_t, self, other, dim):
    return _apply(linalg_cross, (self_t, other), {"dim": dim}) + _apply(linalg_cross, (self, other_t), {"dim": dim})


linalg_cross = op("linalg_cross", "LinalgCrossBackward0", _cross, ("self", "other"),
                  self=_cross_self_grad, other=_cross_other_grad, dtype=_cross_dtype, domain="vectors",
                  broadcast=False, forward_ad=_cross_tangent, prepare=_linalg_cross_call,
                  schema="linalg_cross(Tensor self, Tensor other, *, int dim=-1, Tensor(a!)? out=None) -> Tensor",
                  variants="linalg", samples=[((2, 3), (2, 3)), ((1, 3), (4, 3))])
# torch.cross / Tensor.cross: the same node (ATen's cross is a composite calling linalg_cross)
cross = op("cross", "LinalgCrossBackward0", _cross, ("self", "other"),
           self=_cross_self_grad, other=_cross_other_grad, dtype=_cross_dtype, domain="vectors",
           broadcast=False, forward_ad=_cross_tangent, prepare=_cross_call,
           schema="cross(Tensor self, Tensor other, int? dim=None, *, Tensor(a!)? out=None) -> Tensor",
           variants="function method", samples=[((2, 3), (2, 3)), ((3, 2), (3, 1))])


# ============================================================ distances between rows (torch.cdist)
def _paired(x1, x2):
    """x1 (..., r1, c) and x2 (..., r2, c) with their batch dims broadcast."""
    batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return np.broadcast_to(x1, batch + x1.shape[-2:]), np.broadcast_to(x2, batch + x2.shape[-2:])


def _cdist_forward(x1, x2, p, compute_mode=None):
    """ATen's CPU cdist kernel: for each pair of rows, |a - b| column by column folded in order into one
    sum, then the root (p=0: the count of differences, inf: the largest one). For p=2 its compiled loop
    squares the columns 16 bytes at a time (4 float32, 2 float64: rounded squares, added in order)
    and fuses the square of each remaining column into the sum (FMA). (One column's differences at a
    time: r1 x r2 values, never r1 x r2 x columns.)"""
    a, b = _paired(x1, x2)
    t = a.dtype.type
    m = a.shape[-1]

    def column(k):          # |a - b| of column k for every pair, in the input's precision
        return np.abs(a[..., :, None, k] - b[..., None, :, k])
    agg = np.zeros(a.shape[:-1] + (b.shape[-2],), a.dtype)
    if p == 2:
        head = m - m % max(16 // a.itemsize, 1)
        for k in range(m):
            d = column(k)
            agg = agg + d * d if k < head else exact.fma(d, d, agg)
        return np.sqrt(agg)
    if p not in (0, 1) and not math.isinf(p):
        from .. import special_math
        power, power64 = special_math._pow(t), special_math._pow(np.float64)
        powf = np.vectorize(lambda v: power(v, t(p)), otypes=[a.dtype])
    for k in range(m):
        d = column(k)
        if p == 0:
            agg = agg + np.minimum(np.ceil(d), t(1))
        elif p == 1:
            agg = agg + d
        elif math.isinf(p):
            agg = np.maximum(agg, d)
        else:
            agg = agg + (powf(d) if d.size else d)
    if p in (0, 1) or math.isinf(p) or agg.size == 0:
        return agg
    # finish: std::pow(agg, 1.0 / p), in double, rounded to the input's precision
    return np.vectorize(lambda v: t(power64(float(v), 1.0 / p)), otypes=[a.dtype])(agg)


def _sign(v):
    return np.sign(v).astype(v.dtype)


def _cdist_backward(grad, x1, x2, cdist, p):
    """ATen's _cdist_backward: the gradient of x1 (its batch dims broadcast with x2's; the engine sums
    them back), for each row of x1 the rows of x2 added in order, each term as its kernel words it."""
    a, b = _paired(x1, x2)
    t = a.dtype.type
    res = np.zeros(a.shape, a.dtype)
    if p == 0 or res.size == 0 or b.shape[-2] == 0:
        return res
    grad = np.broadcast_to(grad, a.shape[:-1] + (b.shape[-2],))
    cdist = np.broadcast_to(cdist, grad.shape)
    if p not in (1, 2) and not math.isinf(p):
        from .. import special_math
        power = np.vectorize(special_math._pow(t), otypes=[a.dtype])
    for j in range(b.shape[-2]):
        diff = a - b[..., j:j + 1, :]
        g = grad[..., j:j + 1]
        dist = cdist[..., j:j + 1]
        if p == 1:
            term = g * _sign(diff)
        elif p == 2:
            term = np.where(dist == 0, t(0), g * diff / dist)
        elif math.isinf(p):
            term = g * _sign(diff) * (t(1) - np.minimum(t(1), np.ceil(np.abs(np.abs(diff) - dist))))
        elif p < 2:
            term = np.where(dist == 0, t(0), _sign(diff) * power(np.abs(diff), t(p - 1)) * g / power(dist, t(p - 1)))
            if p < 1:
                term = np.where(diff == 0, t(0), term)
        else:
            term = np.where(dist == 0, t(0), diff * power(np.abs(diff), t(p - 2)) * g / power(dist, t(p - 1)))
        res = (res + term).astype(a.dtype)
    return res


_CDIST_BACKWARD = NotDifferentiable("the derivative for '_cdist_backward' is not implemented.", not_implemented=True)
# _cdist_backward(grad, x1, x2, p, cdist): a node of its own under create_graph, not differentiable again
cdist_backward = op("cdist_backward", "CdistBackwardBackward0",
                    lambda grad, x1, x2, cdist, p: _cdist_backward(grad, x1, x2, cdist, p),
                    ("grad", "x1", "x2", "cdist"), grad=_CDIST_BACKWARD, x1=_CDIST_BACKWARD, x2=_CDIST_BACKWARD,
                    cdist=_CDIST_BACKWARD, dtype="first", domain="real", broadcast=False)


def _cdist_x1_grad(grad, x1, x2, result, p):
    return _apply(cdist_backward, (grad.contiguous(), x1, x2, result), {"p": p})


def _cdist_x2_grad(grad, x1, x2, result, p):
    return _apply(cdist_backward, (grad.mT.contiguous(), x2, x1, result.mT.contiguous()), {"p": p})


# ATen's _cdist_forward (torch.cdist's composite picks it or _euclidean_dist: composites/linalg.py)
cdist_forward = op("cdist_forward", "CdistBackward0", _cdist_forward, ("x1", "x2"),
                   x1=_cdist_x1_grad, x2=_cdist_x2_grad, dtype="first", domain="real", broadcast=False, twice=False,
                   schema="_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
                   forward_ad="not_implemented")


def _euclidean_dist(x1, x2):
    """ATen's _euclidean_dist: one matrix product of [-2 x1, |x1|², 1] and [x2, 1, |x2|²], clamped at 0
    and square-rooted (the product is BLAS's: not to the last bit)."""
    n1 = np.sum(x1 * x1, axis=-1, keepdims=True)
    n2 = np.sum(x2 * x2, axis=-1, keepdims=True)
    left = np.concatenate([x1 * x1.dtype.type(-2), n1, np.ones_like(n1)], -1)
    right = np.concatenate([x2, np.ones_like(n2), n2], -1)
    return np.sqrt(np.maximum(left @ np.swapaxes(right, -1, -2), x1.dtype.type(0))).astype(x1.dtype)


def _euclidean_dist_grad(grad, x1, x2, result):
    """FunctionsManual's _euclidean_dist_backward: both gradients from grad / result (0 where the
    distance is 0, a subgradient)."""
    ratio = (grad / result).masked_fill(result == 0, 0)
    return (x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2),
            x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1))


euclidean_dist = op("euclidean_dist", "EuclideanDistBackward0", _euclidean_dist, ("x1", "x2"),
                    x1=_euclidean_dist_grad, x2=_euclidean_dist_grad, dtype="first", domain="real", broadcast=False,
                    schema="_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", forward_ad="not_implemented")

# ============================================================ vmap's batch rules (batching.py)
for _name in ("mm", "mv", "dot", "bmm", "addmm"):
    batch_rules(_name, _name)
batch_rules("dims", "linalg_cross", "cross")
