"""Matrix products and linear algebra."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import corner_grads, errors, exact, mkl
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


def _solve(A, B, left=True):
    """ATen's _linalg_solve_ex for a matrix right-hand side (``left``: A X = B): getrf of a column-major
    copy of A, getrs on B (2.13 factors A whatever its layout, measured: the pivots are A's); the LU
    factors kept as ATen keeps them, column-major. NumPy's solve without MKL."""
    columns = np.array(np.swapaxes(A, -1, -2), dtype=A.dtype, order="C")
    found = mkl.lu_factor(columns) if A.size else None
    if found is None:
        X = np.linalg.solve(A, B).astype(A.dtype)
        return X, {"LU": np.swapaxes(columns, -1, -2), "pivots": np.zeros(A.shape[:-1], np.int32)}
    rhs = np.array(np.swapaxes(B, -1, -2), dtype=A.dtype, order="C")
    mkl.lu_solve(columns, found[0], rhs, False)
    return np.swapaxes(rhs, -1, -2), {"LU": np.swapaxes(columns, -1, -2), "pivots": found[0]}


def solve(A, B):
    """``linalg.solve(A, B)`` as ATen's formulas call it (one LinalgSolveExBackward0 node)."""
    return _apply(linalg_solve_ex, (A, B), {"left": True})


def _solve_grads(grad, A, result, LU=None, pivots=None, left=True, output_mask=(True, True)):
    """linalg_solve_backward: ``gB = A^{-H} gX``, ``gA = -gB X^H``; under create_graph gB is a solve
    with A^H again (so that its own gradient is this formula's), else getrs with the saved LU of A,
    transposed (none under vmap's loop)."""
    from ..graph import is_grad_enabled
    from ..tensor import Tensor
    if is_grad_enabled() or LU is None or type(grad) is not Tensor or type(A) is not Tensor or not mkl.available():
        g_B = solve(A.mT, grad)
    else:
        columns = np.ascontiguousarray(np.swapaxes(LU._data, -1, -2))
        rhs = np.array(np.swapaxes(grad._data, -1, -2), dtype=columns.dtype, order="C")
        mkl.lu_solve(columns, pivots._data, rhs, True)
        g_B = Tensor._make(np.swapaxes(rhs, -1, -2))
    g_A = -(g_B @ result.mT) if output_mask[0] else None
    return g_A, g_B


# (no public name: det's formula calls it, as ATen's linalg_det_backward calls linalg.solve)
linalg_solve_ex = op("linalg_solve_ex", "LinalgSolveExBackward0", _solve, ("A", "B"),
                     **dict.fromkeys(("A", "B"), _solve_grads), dtype="promote", broadcast=False,
                     domain="square", batch="loop")


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
           self=lambda grad, self_shape: grad * _F().eye(self_shape[0], self_shape[1], dtype=grad.dtype),
           dtype=_sum_dtype, domain="matrix", forward_ad="linear")



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
