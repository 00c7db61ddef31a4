"""Matrix products and linear algebra."""
from __future__ import annotations

import builtins

import numpy as np

from .. import corner_grads, errors
from ..graph import NOT_IMPLEMENTED_NODE
from .registry import NotDifferentiable, batch_rules, op
from .common import _F, _apply, _floating_only, _kernel
from .pointwise import _F_
from .reductions import _sum_dtype


# ============================================================ linear algebra
mm = op("mm", "MmBackward0", np.matmul, ("self", "mat2"),
        # ATen's mm_mat1/mat2_backward: a column-major input gets its gradient column-major (transposed)
        self=lambda grad, mat2, self_column_major: mat2.mm(grad.t()).t() if self_column_major else grad.mm(mat2.t()),
        mat2=lambda grad, self, mat2_column_major: grad.t().mm(self).t() if mat2_column_major else self.t().mm(grad),
        dtype=_kernel("addmm_impl_cpu_", "promote"), domain="matrices", broadcast=False,
        forward_ad=lambda self_t, mat2_t, self, mat2: self_t.mm(mat2) + self.mm(mat2_t))


def _bmm(a, b):
    """NumPy's matmul of two stacks of matrices, but a contraction of length 1 (per-sample outer products,
    which vmap's weight gradients are) through einsum: NumPy makes one BLAS call per matrix (~5x slower
    here) for the same numbers, a zero product's sign included (both add the one product to a zero)."""
    if a.shape[-1] == 1 and a.ndim == b.ndim == 3 and a.shape[0] == b.shape[0] and a.dtype == b.dtype \
            and a.dtype in _EINSUM_EXACT:
        return np.einsum("bik,bkj->bij", a, b)
    return np.matmul(a, b)


_EINSUM_EXACT = (np.dtype(np.float32), np.dtype(np.float64))


bmm = op("bmm", "BmmBackward0", _bmm, ("self", "mat2"),
         self=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
         mat2=lambda grad, self: self.transpose(1, 2).bmm(grad),
         dtype=_kernel("bmm", "promote"), domain="batched", broadcast=False,
         forward_ad=lambda self_t, mat2_t, self, mat2: self_t.bmm(mat2) + self.bmm(mat2_t))
mv = op("mv", "MvBackward0", np.matmul, ("self", "vec"),
        self=lambda grad, vec: _F().outer(grad, vec),
        vec=lambda grad, self: self.t().mv(grad),
        dtype=_kernel("addmv_impl_cpu", "promote"), domain="matvec", broadcast=False,
        forward_ad=lambda self_t, vec_t, self, vec: self_t.mv(vec) + self.mv(vec_t))
dot = op("dot", "DotBackward0", lambda a, b: np.asarray(np.dot(a, b)), ("self", "tensor"),
         self=lambda grad, tensor: grad * tensor,
         tensor=lambda grad, self: grad * self, dtype=_kernel("dot", "promote"), domain="vectors", broadcast=False,
         forward_ad=lambda self_t, tensor_t, self, tensor: self_t.dot(tensor) + self.dot(tensor_t))


def _addmm(c, a, b, beta=1, alpha=1):
    """``c * beta + (a @ b) * alpha``; a scalar of 1 multiplies nothing (x * 1 is x, bit for bit)."""
    product = a @ b if alpha == 1 else (a @ b) * alpha
    return (c if beta == 1 else c * beta) + product


addmm = op("addmm", "AddmmBackward0", _addmm,
           ("self", "mat1", "mat2"),
           self=lambda grad, beta=1: grad if beta == 1 else grad * beta,
           mat1=lambda grad, mat2, alpha=1: grad.mm(mat2.t()) if alpha == 1 else grad.mm(mat2.t()) * alpha,
           mat2=lambda grad, mat1, alpha=1: mat1.t().mm(grad) if alpha == 1 else mat1.t().mm(grad) * alpha,
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
    with np.errstate(all="ignore"):
        # ATen hands LAPACK the row-major A as a column-major matrix: it factors A^T (same det)
        A = np.array(np.swapaxes(a, -1, -2), dtype=a.dtype).reshape((int(np.prod(batch, dtype=np.int64)), n, n))
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


def _svdvals(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s.astype(a.dtype), {"U": u.astype(a.dtype), "Vh": vh.astype(a.dtype)}


# The backward U diag(grad) Vh treats the singular vectors as constants, which is exact for the
# first derivative only; it runs through an op that refuses to be differentiated again.
# A is an input of that op (though only U and Vh are used) so that its node is recorded whenever A
# requires grad: a second derivative then fails loudly instead of coming out as zero.
svd_backward = op("svd_backward", NOT_IMPLEMENTED_NODE, lambda g, a, U, Vh: (U * g[..., None, :]) @ Vh,
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


# ============================================================ vmap's batch rules (batching.py)
for _name in ("mm", "mv", "dot", "bmm", "addmm"):
    batch_rules(_name, _name)
