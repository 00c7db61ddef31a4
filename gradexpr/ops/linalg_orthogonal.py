"""The decompositions into orthogonal factors, as ATen calls LAPACK for them: the SVD (svdvals,
linalg.svd), QR and the symmetric eigendecomposition (linalg.eigh), and what is computed from them:
linalg.pinv and linalg.lstsq."""
from __future__ import annotations

import numpy as np

from .. import errors, mkl
from .registry import op
from .common import _F, _apply, _floating_only
from .pointwise import _F_
from .linalg import _column_major, _is_vector_rhs, _matmul
from .linalg_triangular import linalg_solve_triangular


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


def _svdvals_grad(grad, U, Vh):
    """FunctionsManual's svd_backward for the values alone: ``U @ (gS.unsqueeze(-1) * Vh)`` when A has at
    least as many rows as columns, ``(U * gS.unsqueeze(-2)) @ Vh`` otherwise. Only a call that cannot
    need a gradient reaches this entry (svdvals of a tensor that may: linalg.svd's node, whose U and Vh
    are outputs, so that a second derivative goes through them as ATen's)."""
    from ..tensor import Tensor
    U, Vh = Tensor._make(U), Tensor._make(Vh)
    if U.shape[-2] >= Vh.shape[-1]:
        return U.matmul(grad.unsqueeze(-1) * Vh)
    return (U * grad.unsqueeze(-2)).matmul(Vh)


svdvals = op("svdvals", "LinalgSvdBackward0", _svdvals, ("A",),
             A=lambda grad, U, Vh: _svdvals_grad(grad, U._data, Vh._data),
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
        sym.diagonal(0, -2, -1).mul_(0.5)      # (in place on the diagonal, as ATen's syminvadj: CopySlices)
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
            term = g * -2 * residual        # (linalg_lstsq_backward's order: the Scalar product first)
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
