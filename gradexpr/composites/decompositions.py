"""Matrix factorizations, solvers and functions of a matrix (``torch.linalg.cholesky``, ``solve``, ``qr``,
``eigh``, ``slogdet``, ``matrix_exp``, ``pinv`` … and their older ``torch.X`` forms), and ``torch.unique``:
PyTorch's argument checks, errors and named results around the op table's entries (``ops/linalg_*.py``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import ops as D
from .. import dtypes, errors
from ..op import apply, apply_ex, share_node
from ..tensor import Tensor, _wrap_dim
from .linalg import _square, inverse, matmul
from .reductions import _may_require_grad, linalg_svd, named_result, svdvals


def _floating(A, name):
    if A._dtype.category != 2:
        raise errors.RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                                  f"{A._dtype._scalar_name}")


def _square_floating(A, name):
    _square(A, name)
    _floating(A, name)


_LAPACK_DTYPES = ("float32", "float64")


def _lapack_kernel(A, kernel):
    """ATen's dispatch to its LAPACK kernel, which has none for half precision (nor integers)."""
    if A._dtype.name not in _LAPACK_DTYPES:
        raise errors.NotImplementedError(f'"{kernel}" not implemented for \'{A._dtype._scalar_name}\'')


def _not_low_precision(A, name):
    """checkFloatingOrComplex with low precision refused (linalg.inv, linalg.slogdet)."""
    if A._dtype.name not in _LAPACK_DTYPES:
        raise errors.RuntimeError(f"{name}: Low precision dtypes not supported. Got {A._dtype._scalar_name}")


def _extra(extras, name, dtype):
    """An extra the forward left beside its result, as a tensor (under vmap it already is one)."""
    value = extras[name]
    return value if isinstance(value, Tensor) else Tensor._make(np.asarray(value), dtype)


def _raise_on_failure(info, A, message, kind=None):
    """ATen's check of LAPACK's infos: the first failing matrix's ``message`` (formatted with its info),
    after ``(Batch element k): `` for a batch, as torch.linalg.LinAlgError (or ``kind``)."""
    if isinstance(info, Tensor):            # (under vmap, every sample's: the physical tensor)
        info = getattr(info, "_phys", info)._data
    flat = np.asarray(info).reshape(-1)
    failed = np.flatnonzero(flat)
    if failed.size:
        first = int(failed[0])
        where = f"(Batch element {first}): " if A._data.ndim > 2 else ""
        raise (kind or D.linalg.LinAlgError)(message.format(where=where, info=int(flat[first])))


# ------------------------------------------------------------------ Cholesky
def _cholesky(A, upper, name, check_errors, entry, checked_by=None):
    """The factor and potrf's infos; with ``check_errors`` the first failure raised, named by ``checked_by``
    (linalg.cholesky_ex's own check says so, its argument checks are linalg.cholesky's)."""
    _square_floating(A, name)
    _lapack_kernel(A, "cholesky_cpu")
    L, extras = apply_ex(entry, (A,), {"upper": bool(upper)})
    info = _extra(extras, "info", dtypes.int32)
    if check_errors:
        _raise_on_failure(info, A, (checked_by or name) + ": {where}The factorization could not be completed because the input is "
                                          "not positive-definite (the leading minor of order {info} is not "
                                          "positive-definite).")
    return L, info


def linalg_cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    return named_result("linalg_cholesky_ex", "L", "info")(*_cholesky(A, upper, "linalg.cholesky", check_errors,
                                                                       D.linalg_cholesky_ex, "linalg.cholesky_ex"))


def linalg_cholesky(A, *, upper=False, out=None):
    return _cholesky(A, upper, "linalg.cholesky", True, D.linalg_cholesky_ex)[0]


def cholesky(input, upper=False, *, out=None):
    """The deprecated torch.cholesky: linalg.cholesky's factor under a node of its own, and a warning once."""
    from ..warn import warn_once
    warn_once("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
              "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
              "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
              "transform will produce equivalent results for all valid (symmetric positive definite) inputs. "
              "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:1765.)")
    return _cholesky(input, upper, "cholesky", True, D.cholesky)[0]



def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solves A X = B with A's Cholesky factor (CholeskySolveBackward0); ``input`` is B."""
    if input._data.ndim < 2:
        raise errors.RuntimeError(f"b should have at least 2 dimensions, but has {input._data.ndim} dimensions "
                                  "instead")
    if input2._data.ndim < 2:
        raise errors.RuntimeError(f"u should have at least 2 dimensions, but has {input2._data.ndim} dimensions "
                                  "instead")
    if input._dtype is not input2._dtype:
        raise errors.RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                                  f"{input._dtype._scalar_name} and A of type {input2._dtype._scalar_name} instead.")
    a, b = input2._data.shape, input._data.shape
    if a[-1] != b[-2]:
        raise errors.RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {a[-2]} by {a[-1]} "
                                  f"but each b matrix is {b[-2]} by {b[-1]}")
    _lapack_kernel(input, "cholesky_solve_cpu")
    return apply(D.cholesky_solve, (input, input2), {"upper": bool(upper)})


def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of A from its Cholesky factor (CholeskyInverseBackward0)."""
    _square(input, "cholesky_inverse")
    _lapack_kernel(input, "cholesky_inverse_out_cpu")
    result, extras = apply_ex(D.cholesky_inverse, (input,), {"upper": bool(upper)})
    _raise_on_failure(_extra(extras, "info", dtypes.int32), input,
                      "cholesky_inverse: {where}The diagonal element {info} is zero, the inversion could not be "
                      "completed because the input matrix is singular.")
    return result


# ------------------------------------------------------------------ solve, inverse
def _solve(A, B, left, check_errors):
    if A._data.ndim < 2:
        raise errors.RuntimeError("linalg.solve: The input tensor A must have at least 2 dimensions.")
    _square_floating(A, "linalg.solve")
    if A._dtype is not B._dtype:
        raise errors.RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                                  f"{A._dtype._scalar_name} and B of type {B._dtype._scalar_name} instead")
    _lapack_kernel(A, "lu_cpu")
    a, b = A._data.shape, B._data.shape
    vector = len(b) == 1 or (len(b) == len(a) - 1 and b == a[:-1])
    rows = b[-1] if vector else (b[-2] if left else b[-1])
    if rows != a[-1]:
        shown = f"{b[-1]}x1" if vector else f"{b[-2]}x{b[-1]}"
        equation = "AX = B" if left else "XA = B"
        raise errors.RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {equation} "
                                  f"({a[-2]}x{a[-1]} and {shown})")
    X, extras = apply_ex(D.linalg_solve_ex, (A, B), {"left": bool(left)})
    info = _extra(extras, "info", dtypes.int32)
    if check_errors:
        _raise_on_failure(info, A, "torch.linalg.solve: {where}The solver failed because the input matrix is "
                                   "singular.")
    return X, info


def linalg_solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return named_result("linalg_solve_ex", "result", "info")(*_solve(A, B, left, check_errors))


def linalg_solve(A, B, *, left=True, out=None):
    return _solve(A, B, left, True)[0]


def linalg_inv_ex(A, *, check_errors=False, out=None):
    """linalg.inv_ex: linalg.inv's node (LinalgInvExBackward0); a singular matrix gives its info, not an error."""
    _square_floating(A, "linalg.inv")
    _not_low_precision(A, "linalg.inv")
    result, extras = apply_ex(D.inverse, (A,), {"check_errors": bool(check_errors)})
    return named_result("linalg_inv_ex", "inverse", "info")(result, _extra(extras, "info", dtypes.int32))



def linalg_tensorinv(A, ind=2, *, out=None):
    """ATen's linalg_tensorinv: A as a square matrix (its first ``ind`` dims against the others), inverted
    (linalg.inv_ex, its errors checked), reshaped to A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise errors.RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._data.shape)
    rows, cols = int(np.prod(shape[ind:], dtype=np.int64)), int(np.prod(shape[:ind], dtype=np.int64))
    if rows != cols:
        raise errors.RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                                  f"prod(self.shape[:ind]), but got {rows} != {cols}")
    from .shape import reshape
    return reshape(inverse(reshape(A, rows, rows)), *(shape[ind:] + shape[:ind]))


def linalg_tensorsolve(A, B, dims=None, *, out=None):
    """ATen's linalg_tensorsolve: the dims ``dims`` of A moved last, A as a square matrix against B
    flattened, solved (linalg.solve), reshaped to A's trailing dims."""
    from .linalg import movedim
    from .shape import flatten, reshape
    ndim = A._data.ndim
    if dims is not None:
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        A = movedim(A, dims, tuple(range(ndim - len(dims), ndim)))
    result_shape = tuple(A._data.shape[B._data.ndim:])
    result_size, other_size = int(np.prod(result_shape, dtype=np.int64)), int(B._data.size)
    if result_size != other_size:
        raise errors.RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                                  f"prod(self.shape[:other.ndim]), but got {result_size} != {other_size}")
    return reshape(linalg_solve(reshape(A, result_size, result_size), flatten(B)), *result_shape)



# ------------------------------------------------------------------ LU
def _lu_checks(A, name, pivot):
    if A._data.ndim < 2:
        raise errors.RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                                  f"{list(A._data.shape)} instead")
    if not pivot:
        raise errors.RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _lapack_kernel(A, "lu_cpu")


def _lu_factor_ex(A, pivot, check_errors, name):
    _lu_checks(A, name, pivot)
    LU, extras = apply_ex(D.linalg_lu_factor_ex, (A,))
    pivots, info = _extra(extras, "pivots", dtypes.int32), _extra(extras, "info", dtypes.int32)
    if check_errors:
        _raise_on_failure(info, A, "torch.linalg.lu_factor: {where}U[{info},{info}] is zero and using it on lu_solve "
                                   "would result in a division by zero. If you still want to perform the "
                                   "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                                   "pivot)", errors.RuntimeError)
    return LU, pivots, info


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    return named_result("linalg_lu_factor_ex", "LU", "pivots", "info")(
        *_lu_factor_ex(A, pivot, check_errors, "torch.lu_factor"))


def linalg_lu_factor(A, *, pivot=True, out=None):
    return named_result("linalg_lu_factor", "LU", "pivots")(*_lu_factor_ex(A, pivot, True, "torch.lu_factor")[:2])


def lu(A, pivot=True, get_infos=False, out=None):
    """The deprecated torch.lu: linalg.lu_factor(_ex), and a warning once."""
    from ..warn import warn_once
    warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
              "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
              "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
              "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
              "torch.linalg.lu_factor_ex(A, compute_pivots) (Triggered internally at "
              "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2073.)")
    LU, pivots, info = _lu_factor_ex(A, pivot, not get_infos, "torch.lu_factor")
    return named_result("_lu_with_info", "LU", "pivots", "info")(LU, pivots, info) if get_infos else (LU, pivots)


def linalg_lu(A, *, pivot=True, out=None):
    """(P, L, U) as ``torch.return_types.linalg_lu``: L and U on one LinalgLuBackward0 node, P a constant."""
    _lu_checks(A, "linalg.lu", pivot)
    L, extras = apply_ex(D.linalg_lu_L, (A,))
    U = apply(D.linalg_lu_U, (A,))
    share_node(D.linalg_lu, (A,), {}, [L, U])
    return named_result("linalg_lu", "P", "L", "U")(_extra(extras, "P", A._dtype), L, U)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) of packed factors as ``torch.return_types.lu_unpack``: L and U on one LuUnpackBackward0 node."""
    if LU_pivots._dtype is not dtypes.int32:
        raise errors.RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                                  "dtype.\nNote: this function is intended to be used with the output produced by "
                                  "torch.linalg.lu_factor")
    params = {"unpack_data": bool(unpack_data), "unpack_pivots": bool(unpack_pivots)}
    L, extras = apply_ex(D.lu_unpack_L, (LU_data, LU_pivots), params)
    U = apply(D.lu_unpack_U, (LU_data, LU_pivots), params)
    share_node(D.lu_unpack, (LU_data, LU_pivots), params, [L, U])
    return named_result("lu_unpack", "P", "L", "U")(_extra(extras, "P", LU_data._dtype), L, U)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solves with linalg.lu_factor's factors (LinalgLuSolveBackward0)."""
    a, b = LU._data.shape, B._data.shape
    if (b[-2] if left else b[-1]) != a[-1]:
        equation = "AX = B" if left else "XA = B"
        raise errors.RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {equation} "
                                  f"({a[-2]}x{a[-1]} and {b[-2]}x{b[-1]})")
    return apply(D.linalg_lu_solve, (LU, pivots, B), {"left": bool(left), "adjoint": bool(adjoint)})


# ------------------------------------------------------------------ QR
def linalg_qr(A, mode="reduced", *, out=None):
    """(Q, R) as ``torch.return_types.linalg_qr``, one LinalgQrBackward0 node; mode 'r' leaves Q empty."""
    if A._data.ndim < 2:
        raise errors.RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _floating(A, "linalg.qr")
    _lapack_kernel(A, "geqrf_cpu")
    if mode not in ("reduced", "r", "complete"):
        raise errors.RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                                  "'r', or 'complete'")
    params = {"mode": mode}
    parts = [apply(D.linalg_qr_Q, (A,), params), apply(D.linalg_qr_R, (A,), params)]
    share_node(D.linalg_qr, (A,), params, parts)
    return named_result("linalg_qr", "Q", "R")(*parts)


def qr(input, some=True, *, out=None):
    """The deprecated torch.qr: linalg.qr with mode 'reduced' or 'complete', and a warning once."""
    from ..warn import warn_once
    warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
              "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)"
              "\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete') (Triggered "
              "internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2505.)")
    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return named_result("qr", "Q", "R")(Q, R)


# ------------------------------------------------------------------ symmetric eigendecomposition
def _check_eigh(A, UPLO, name):
    _square(A, name)
    _lapack_kernel(A, "linalg_eigh_cpu")
    if UPLO not in ("L", "U", "l", "u"):
        raise errors.RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def linalg_eigh(A, UPLO="L", *, out=None):
    """(eigenvalues, eigenvectors) as ``torch.return_types.linalg_eigh``, one LinalgEighBackward0 node."""
    return named_result("linalg_eigh", "eigenvalues", "eigenvectors")(*_eigh_outputs(A, _check_eigh(A, UPLO,
                                                                                                    "linalg.eigh")))


def _eigh_outputs(A, UPLO):
    """ATen's _linalg_eigh with the eigenvectors: both outputs of one LinalgEighBackward0 node."""
    params = {"UPLO": UPLO}
    parts = [apply(D.linalg_eigh_eigenvalues, (A,), params), apply(D.linalg_eigh_eigenvectors, (A,), params)]
    share_node(D.linalg_eigh, (A,), params, parts)
    return parts


def linalg_eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues alone: the eigenvectors computed only when A may need a gradient, as ATen's, and
    then as the other output of the same node (the gradient reads them: a second derivative reaches it)."""
    UPLO = _check_eigh(A, UPLO, "linalg.eigvalsh")
    if _may_require_grad(A):
        return _eigh_outputs(A, UPLO)[0]
    return apply(D.linalg_eigh_eigenvalues, (A,), {"UPLO": UPLO, "compute_v": False})


# ------------------------------------------------------------------ determinants
def linalg_slogdet(A, *, out=None):
    """(sign, logabsdet) as ``torch.return_types.linalg_slogdet``, one LinalgSlogdetBackward0 node."""
    _square_floating(A, "linalg.slogdet")
    _not_low_precision(A, "linalg.slogdet")
    parts = [apply(D.linalg_slogdet_sign, (A,)), apply(D.linalg_slogdet_logabsdet, (A,))]
    share_node(D.linalg_slogdet, (A,), {}, parts)
    return named_result("linalg_slogdet", "sign", "logabsdet")(*parts)


def slogdet(input, *, out=None):
    return named_result("slogdet", "sign", "logabsdet")(*linalg_slogdet(input))


def logdet(input):
    """ATen's logdet: linalg.slogdet's log|det|, NaN where the determinant is negative."""
    _square_floating(input, "logdet")
    sign, logabsdet = linalg_slogdet(input)
    from .arithmetic import where
    return where(sign == -1.0, math.nan, logabsdet)


# ------------------------------------------------------------------ functions of a matrix
def linalg_matrix_exp(A):
    _square_floating(A, "linalg.matrix_exp")
    return apply(D.linalg_matrix_exp, (A,))


def linalg_matrix_power(A, n, *, out=None):
    """ATen's linalg_matrix_power: the identity for 0, A's inverse for a negative power, then products
    by binary powering (matmul's nodes); 1 is a clone."""
    _square(A, "linalg.matrix_power")
    if n == 0:
        from .creation import eye
        from .inplace import copy_
        from .shape import clone, expand_as
        return copy_(clone(A), expand_as(eye(A._data.shape[-2], A._data.shape[-1], dtype=A._dtype), A))
    if n < 0:
        A = inverse(A)
        n = -n
    if n == 1:
        from .shape import clone
        return clone(A)
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The pseudo-inverse (LinalgPinvBackward0); ``rcond`` is the old name of ``rtol``."""
    if A._data.ndim < 2 or A._dtype.name not in _LAPACK_DTYPES:
        raise errors.RuntimeError(f"linalg.pinv({A._dtype._scalar_name}{{{list(A._data.shape)}}}): expected a "
                                  "tensor with 2 or more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    return apply(D.linalg_pinv, (A,), {"atol": 0.0 if atol is None else float(atol),
                                       "rtol": None if rtol is None else float(rtol), "hermitian": bool(hermitian)})


def pinverse(input, rcond=1e-15):
    return linalg_pinv(input, rtol=rcond)


def matrix_power(input, n):
    return linalg_matrix_power(input, n)


def matrix_exp(input):
    return linalg_matrix_exp(input)



def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) as ``torch.return_types.linalg_lstsq``; the solution
    and the residuals share one LinalgLstsqBackward0 node. CPU's default driver is gelsy."""
    if A._data.ndim < 2:
        raise errors.RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A._dtype is not B._dtype:
        raise errors.RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                                  f"input's dtype {A._dtype._scalar_name} and other's dtype {B._dtype._scalar_name}")
    if not 0 <= A._data.ndim - B._data.ndim <= 1:
        raise errors.RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                                  "(input.dim() - other.dim()) <= 1")
    _floating(A, "torch.linalg.lstsq")
    if A._dtype.name not in _LAPACK_DTYPES:
        raise errors.RuntimeError("This function doesn't handle types other than float and double")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise errors.RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    a, b = A._data.shape, B._data.shape
    vector = len(b) == 1 or (len(b) == len(a) - 1 and b == a[:-1])
    if (b[-1] if vector else b[-2]) != a[-2]:
        raise errors.RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    params = {"rcond": None if rcond is None else float(rcond), "driver": driver}
    solution, extras = apply_ex(D.linalg_lstsq_solution, (A, B), params)
    residuals = apply(D.linalg_lstsq_residuals, (A, B), params)
    share_node(D.linalg_lstsq, (A, B), params, [solution, residuals])
    return named_result("linalg_lstsq", "solution", "residuals", "rank", "singular_values")(
        solution, residuals, _extra(extras, "rank", dtypes.int64), _extra(extras, "singular_values", A._dtype))



def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """ATen's linalg_matrix_rank: the singular values (|eigenvalues| if ``hermitian``) above max(atol, rtol *
    the largest), counted; rtol defaults to eps * max(m, n) unless a positive atol is given (``tol``: the old
    atol, with rtol 0)."""
    if A._data.ndim < 2:
        raise errors.RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 "
                                  "dimensions.")
    if A._dtype.name not in _LAPACK_DTYPES:
        raise errors.RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = A._data.shape[-2:]
    from ..graph import no_grad
    with no_grad():
        S = (linalg_eigvalsh(A).abs() if hermitian else svdvals(A))._data
    atol_value = np.asarray(atol._data if isinstance(atol, Tensor) else (0.0 if atol is None else atol), np.float64)
    if rtol is None:
        default = float(np.finfo(S.dtype).eps) * max(m, n)
        rtol_value = np.where(atol_value > 0, 0.0, default) if atol is not None else np.asarray(default)
    else:
        rtol_value = np.asarray(rtol._data if isinstance(rtol, Tensor) else rtol, np.float64)
    largest = S.max(-1) if S.shape[-1] else np.zeros(S.shape[:-1], S.dtype)
    threshold = np.maximum(atol_value, rtol_value * largest).astype(S.dtype)
    return Tensor._make(np.asarray(np.sum(S > threshold[..., None], axis=-1), np.int64), dtypes.int64)


# ------------------------------------------------------------------ the old SVD
def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: linalg.svd's U and S, and V = Vhᵀ (a transpose of its output); without ``compute_uv``
    the singular values and zero matrices."""
    if input._data.ndim < 2:
        raise errors.RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                                  f"{input._data.ndim} dimensions instead")
    result = named_result("svd", "U", "S", "V")
    if compute_uv:
        U, S, Vh = linalg_svd(input, full_matrices=not some)
        return result(U, S, Vh.mT)
    from .creation import zeros
    S = svdvals(input)
    m, n = input._data.shape[-2:]
    batch = input._data.shape[:-2]
    return result(zeros(*batch, m, m, dtype=input._dtype), S, zeros(*batch, n, n, dtype=input._dtype))


# ------------------------------------------------------------------ unique values
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: the sorted distinct values (Unique2Backward0; slices along ``dim``: UniqueDimBackward0),
    then the inverse indices and the counts as asked, in a plain tuple."""
    if dim is not None:
        dim = _wrap_dim(dim, input._data.ndim)
    entry = D.unique2 if dim is None else D.unique_dim
    return _with_indices(*apply_ex(entry, (input,), {"dim": dim}), return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: the first value (slice) of each run of equal ones, then the run indices
    and the runs' lengths as asked."""
    if dim is not None:
        dim = _wrap_dim(dim, input._data.ndim)
    return _with_indices(*apply_ex(D.unique_consecutive, (input,), {"dim": dim}), return_inverse, return_counts)


def _with_indices(values, extras, return_inverse, return_counts):
    out = [values]
    if return_inverse:
        out.append(_extra(extras, "inverse", dtypes.int64))
    if return_counts:
        out.append(_extra(extras, "counts", dtypes.int64))
    return values if len(out) == 1 else tuple(out)
