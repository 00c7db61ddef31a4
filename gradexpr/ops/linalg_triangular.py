"""Triangular factors: linalg.solve_triangular (BLAS's trsm) and the Cholesky family (cholesky,
linalg.cholesky_ex, cholesky_solve, cholesky_inverse: LAPACK's potrf, potrs, potri), as ATen calls
them. Their backward formulas solve with triangular matrices, and so do LU's and QR's
(``linalg_lu_decomposition``, ``linalg_orthogonal``)."""
from __future__ import annotations

import numpy as np

from .. import errors, mkl
from .registry import op
from .common import _apply, _floating_only
from .linalg import _column_major


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
