"""What LAPACK's LU factorization (getrf) computes, as ATen calls it: linalg.det and slogdet, inverse,
linalg.solve, and linalg.lu_factor, lu, lu_solve and torch.lu_unpack."""
from __future__ import annotations

import numpy as np

from .. import corner_grads, mkl, reduction_order, zero_tensor
from .registry import op
from .common import _F, _apply, _floating_only
from .linalg import LinAlgError, _column_major, _is_vector_rhs
from .linalg_triangular import linalg_solve_triangular


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
# (the sign's tangent, real A: slogdet_jvp's _efficientzerotensor)
linalg_slogdet_sign = op("linalg_slogdet_sign", "LinalgSlogdetBackward0", _slogdet_part(0), ("A",),
                         A=lambda grad, A: _F().zeros_like(A), dtype=_SLOGDET_DTYPE, domain="square",
                         forward_ad=lambda A_t, result: zero_tensor.zeros_like(result))
linalg_slogdet_logabsdet = op("linalg_slogdet_logabsdet", "LinalgSlogdetBackward0", _slogdet_part(1), ("A",),
                              A=lambda grad, A: _slogdet_grad(grad, A), dtype=_SLOGDET_DTYPE, domain="square", forward_ad="transpose")
linalg_slogdet = op("linalg_slogdet", "LinalgSlogdetBackward0", None, ("A",), outputs=("sign", "logabsdet"),
                    domain="square", A=lambda grad, A: _slogdet_grad(grad[1], A) if grad[1] is not None else None)


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
