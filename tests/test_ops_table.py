"""Every entry of the op table, checked against central differences.

``CASES`` (and each entry's own ``samples``, called through the names the table binds for it) give
each differentiable entry one or more sample calls through the public
functions (``torch.X``, ``F.X``, tensor methods): a function of float64 tensors drawn
from the entry's ``domain`` (``gradexpr.testing.DOMAINS``) with the given shapes. The
non-differentiable arguments a call needs (conditions, masks, indices, targets) are
constants of the call. Each case must actually record the entry's node, passes
``gradcheck``, and ``gradgradcheck`` when the entry is twice differentiable.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pytest

from gradexpr import api, functions as T, ops as D, surface, testing
from gradexpr.errors import GxError
from gradexpr.op import apply

G = api.build()
torch, F = G["torch"], G["F"]
tensor = torch.tensor

NODE_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*Backward[0-9]+(_copy)?$")
# PyTorch's nodes without a derivatives.yaml entry: name() carries the C++ namespace
SPECIAL_NODES = {"torch::autograd::CopySlices", "torch::autograd::CopyBackwards", "torch::autograd::NotImplemented",
                 "torch::autograd::Identity"}


@dataclass
class Case:
    fn: object
    shapes: tuple
    domain: str | None = None            # overrides the entry's domain
    tol: dict = field(default_factory=dict)
    twice: bool = True                   # False: this call is not twice differentiable (a kink)


def case(fn, *shapes, domain=None, twice=True, **tol):
    return Case(fn, shapes, domain, tol, twice)


# constants the calls need
COND = tensor([[True, False, True], [False, True, False]])
IDX_ROWS = tensor([1, 0, 1])
GATHER_IDX = tensor([[0, 2], [1, 1]])
SCATTER_IDX = tensor([[0, 1, 2], [2, 0, 1]])
TARGET = tensor([2, 0])
TARGET_2D = tensor([[[1, 0]], [[2, 2]]])


def _seeded_dropout(a):
    torch.manual_seed(0)           # the same mask on every evaluation
    return F.dropout(a, 0.4)


def _setitem(a, b):
    y = a.clone()
    y[0] = b
    return y


def _fill(a):
    y = a * 1
    return y.fill_(2.5) + a


def _fill_tensor(a, v):
    y = a * 1
    return y.fill_(v) * a


def _zero(a):
    y = a * 1
    return y.zero_() + a


def _copy(a, b):
    y = a * 1
    return y.copy_(b)


def _write_through_view(a, w):
    """A column of a non-leaf changed in place: the base's history becomes CopySlices, the view's
    AsStridedBackward0; both outputs are differentiated."""
    y = a * 1
    v = y[:, 1]
    v.mul_(w)
    return y, v * 1


def _clamp_between(x, lo, hi):
    return x.clamp(-lo.abs() - 0.1, hi.abs() + 0.1)


CASES: dict[str, list[Case]] = {
    # arithmetic
    "add": [case(lambda a, b: a + b, (2, 3), (2, 3)), case(lambda a, b: torch.add(a, b, alpha=2.5), (2, 3), (3,))],
    "sub": [case(lambda a, b: a - b, (2, 3), (1, 3)), case(lambda a, b: a.sub(b, alpha=-2), (3,), ())],
    "rsub": [case(lambda a: 2 - a, (2, 3)), case(lambda a: torch.rsub(a, 3.0, alpha=2), (3,))],
    "rsub_tensor": [case(lambda a, b: torch.rsub(a, b), (2, 3), (3,))],
    "mul": [case(lambda a, b: a * b, (2, 3), (2, 1)), case(lambda a: a * 3.5, (3,))],
    "div": [case(lambda a, b: a / b, (2, 3), (3,)), case(lambda a: a / 4.0, (3,))],
    "mul_scalar": [case(lambda a, b: F.cross_entropy(a, F.softmax(b, 1), label_smoothing=0.2), (2, 3), (2, 3))],
    "div_scalar": [case(lambda a, b: F.cross_entropy(a, F.softmax(b, 1)), (2, 3), (2, 3))],
    "div_mode": [case(lambda a, b: torch.div(a, b, rounding_mode="floor") + a, (2, 3), (3,), domain="nonzero"),
                 case(lambda a: a.div(0.7, rounding_mode="trunc") * a, (3,))],
    "remainder": [case(lambda a: a % 1.5, (2, 3))],
    "remainder_tensor": [case(lambda a, b: torch.remainder(a, b), (2, 3), (2, 3))],
    "fmod": [case(lambda a: torch.fmod(a, 0.7), (2, 3))],
    "fmod_tensor": [case(lambda a, b: torch.fmod(a, b), (2, 3), (3,))],
    "neg": [case(lambda a: -a, (2, 3))],
    "pow_scalar": [case(lambda a: a ** 3, (2, 3)), case(lambda a: a.pow(0.5), (3,)), case(lambda a: a ** 0, (2,)),
                   case(lambda a: torch.square(a), (3,))],
    "pow_tensor": [case(lambda a, b: a ** b, (2, 3), (3,))],
    "pow_rscalar": [case(lambda a: 2.5 ** a, (2, 3))],
    # unary math
    "abs": [case(lambda a: a.abs(), (2, 3))],
    "sign": [case(lambda a: a.sign() * a, (2, 3))],
    "sgn": [case(lambda a: a.sgn() * a, (2, 3))],
    "sqrt": [case(lambda a: a.sqrt(), (2, 3))],
    "rsqrt": [case(lambda a: torch.rsqrt(a), (2, 3))],
    "exp": [case(lambda a: a.exp(), (2, 3))],
    "exp2": [case(lambda a: torch.exp2(a), (2, 3))],
    "expm1": [case(lambda a: a.expm1(), (2, 3))],
    "log": [case(lambda a: a.log(), (2, 3))],
    "log2": [case(lambda a: a.log2(), (2, 3))],
    "log10": [case(lambda a: torch.log10(a), (2, 3))],
    "log1p": [case(lambda a: a.log1p(), (2, 3))],
    "sin": [case(lambda a: a.sin(), (2, 3))],
    "cos": [case(lambda a: torch.cos(a), (2, 3))],
    "tan": [case(lambda a: a.tan(), (2, 3))],
    "asin": [case(lambda a: a.asin(), (2, 3))],
    "acos": [case(lambda a: torch.acos(a), (2, 3))],
    "atan": [case(lambda a: a.atan(), (2, 3))],
    "sinh": [case(lambda a: a.sinh(), (2, 3))],
    "cosh": [case(lambda a: a.cosh(), (2, 3))],
    "tanh": [case(lambda a: a.tanh(), (2, 3)), case(lambda a: F.tanh(a), (3,))],
    "sigmoid": [case(lambda a: torch.sigmoid(a), (2, 3)), case(lambda a: F.sigmoid(a), (3,))],
    "relu": [case(lambda a: a.relu(), (2, 3)), case(lambda a: F.relu(a * 1, inplace=True), (3,))],
    "reciprocal": [case(lambda a: a.reciprocal(), (2, 3)), case(lambda a: 2 / a, (3,))],
    "erf": [case(lambda a: a.erf(), (2, 3))],
    "floor": [case(lambda a: a.floor() + a, (2, 3))],
    "ceil": [case(lambda a: a.ceil() * a, (2, 3))],
    "trunc": [case(lambda a: torch.trunc(a) + a, (2, 3))],
    "frac": [case(lambda a: a.frac(), (2, 3))],
    "round": [case(lambda a: a.round() * a, (2, 3))],
    "round_decimals": [case(lambda a: a.round(decimals=1) + a, (3,)), case(lambda a: torch.round(a, decimals=0) * a, (2,))],
    "atan2": [case(lambda a, b: torch.atan2(a, b), (2, 3), (3,))],
    "xlogy": [case(lambda a, b: torch.xlogy(a, b), (2, 3), (3,)), case(lambda a, b: a.xlogy(b), (3,), (3,)),
              case(lambda a, b: F.kl_div(a, b, reduction="sum"), (2, 3), (2, 3), domain="positive")],
    "logit": [case(lambda a: torch.logit(a), (2, 3)), case(lambda a: a.logit(0.05), (4,))],
    "nan_to_num": [case(lambda a: torch.nan_to_num(a), (2, 3)), case(lambda a: a.nan_to_num(posinf=1.0), (3,))],
    "addcmul": [case(lambda a, b, c: torch.addcmul(a, b, c, value=0.5), (2, 3), (2, 3), (3,))],
    "addcdiv": [case(lambda a, b, c: a.addcdiv(b, c, value=-2), (2, 3), (2, 3), (2, 3))],
    "maximum": [case(lambda a, b: torch.maximum(a, b), (2, 3), (3,)), case(lambda a, b: torch.max(a, b), (3,), (3,))],
    "minimum": [case(lambda a, b: torch.minimum(a, b), (2, 3), (2, 3))],
    "clamp": [case(lambda a: a.clamp(-1, 1), (2, 3)), case(lambda a: torch.clip(a, min=0.5), (3,)),
              case(lambda a: a.clamp(max=-0.5), (3,))],
    "clamp_tensor": [case(_clamp_between, (2, 3), (2, 3), (3,), twice=False)],
    "clamp_min": [case(lambda a: a.clamp_min(0.25), (2, 3)), case(lambda a: torch.clamp_min(a, -0.5), (3,))],
    "clamp_max": [case(lambda a: a.clamp_max(0.25), (2, 3))],
    "clamp_min_tensor": [case(lambda a, m: a.clamp_min(m), (2, 3), (3,), twice=False)],
    "clamp_max_tensor": [case(lambda a, m: torch.clamp_max(a, m), (2, 3), (2, 1), twice=False)],
    "where": [case(lambda a, b: torch.where(COND, a, b), (2, 3), (3,)), case(lambda a: a.where(COND, 0.5), (2, 3))],
    "lerp": [case(lambda a, b: torch.lerp(a, b, 0.3), (2, 3), (2, 3))],
    "lerp_tensor": [case(lambda a, b, w: a.lerp(b, w), (2, 3), (3,), (2, 1))],
    "masked_fill": [case(lambda a: a.masked_fill(COND, 2.0), (2, 3))],
    "masked_fill_tensor": [case(lambda a, v: a.masked_fill(COND, v), (2, 3), ())],
    # reductions
    "sum": [case(lambda a: a.sum(), (2, 3)), case(lambda a: torch.sum(a, dtype=torch.float64), (3,))],
    "sum_dim": [case(lambda a: a.sum(1), (2, 3)), case(lambda a: a.sum((0, -1), keepdim=True), (2, 3, 2))],
    "mean": [case(lambda a: a.mean(), (2, 3))],
    "mean_dim": [case(lambda a: a.mean(-1), (2, 3)), case(lambda a: torch.mean(a, (0,), keepdim=True), (2, 3))],
    "prod": [case(lambda a: a.prod(), (2, 3))],
    "prod_dim": [case(lambda a: a.prod(1), (2, 3)), case(lambda a: a.prod(0, keepdim=True), (3, 2))],
    "max": [case(lambda a: a.max(), (2, 3))],
    "min": [case(lambda a: torch.min(a), (2, 3))],
    "max_dim": [case(lambda a: a.max(1).values, (2, 3)), case(lambda a: torch.max(a, 0, keepdim=True)[0], (2, 3))],
    "sort": [case(lambda a: a.sort().values, (2, 3)), case(lambda a: torch.sort(a, 0, descending=True)[0], (3, 2))],
    "sort_stable": [case(lambda a: torch.sort(a, stable=True, dim=1).values, (2, 4))],
    "topk": [case(lambda a: a.topk(2).values, (2, 4)), case(lambda a: torch.topk(a, 2, 0, largest=False)[0], (3, 2))],
    "kthvalue": [case(lambda a: a.kthvalue(2, 1).values, (2, 4)), case(lambda a: torch.kthvalue(a, 1, 0, True)[0], (3, 2))],
    "median_dim": [case(lambda a: a.median(1).values, (2, 5)), case(lambda a: torch.median(a, 0, True)[0], (4, 2))],
    "median": [case(lambda a: a.median(), (3, 3)), case(lambda a: torch.median(a), (4,))],
    "min_dim": [case(lambda a: a.min(-1)[0], (2, 3))],
    "amax": [case(lambda a: a.amax(), (2, 3)), case(lambda a: a.amax((0, 1)), (2, 3, 2))],
    "amin": [case(lambda a: a.amin(1, keepdim=True), (2, 3))],
    "var": [case(lambda a: a.var(), (2, 3)), case(lambda a: a.var(1, keepdim=True, correction=0), (2, 3))],
    "std": [case(lambda a: a.std(0), (3, 2)), case(lambda a: torch.std(a, unbiased=False), (2, 3))],
    "var_mean_var": [case(lambda a: torch.var_mean(a, 1)[0], (2, 3))],
    "var_mean_mean": [case(lambda a: torch.var_mean(a)[1], (2, 3))],
    "std_mean_std": [case(lambda a: torch.std_mean(a, 0, keepdim=True)[0], (2, 3))],
    "std_mean_mean": [case(lambda a: torch.std_mean(a, 0)[1], (2, 3))],
    # multi-output nodes: both outputs, and one alone (the other's gradient never arrives)
    "aminmax": [case(lambda a: tuple(torch.aminmax(a, dim=1)), (2, 3)), case(lambda a: torch.aminmax(a).max, (2, 3))],
    "var_mean": [case(lambda a: torch.var_mean(a, 1), (2, 3)), case(lambda a: torch.var_mean(a)[1], (2, 3))],
    "std_mean": [case(lambda a: torch.std_mean(a, -1, keepdim=True), (2, 3)),
                 case(lambda a: torch.std_mean(a, 0)[0], (2, 3))],
    "norm": [case(lambda a: a.norm(), (2, 3)), case(lambda a: a.norm(1, dim=1), (2, 3), twice=False),
             case(lambda a: torch.linalg.vector_norm(a, 3), (4,)),
             case(lambda a: a.norm(float("inf")), (2, 3), domain="distinct", twice=False),
             case(lambda a: torch.linalg.norm(a, dim=0, keepdim=True), (2, 3))],
    "logsumexp": [case(lambda a: a.logsumexp(1), (2, 3)), case(lambda a: torch.logsumexp(a, (0, 1)), (2, 3))],
    "cumsum": [case(lambda a: a.cumsum(1), (2, 3)), case(lambda a: torch.cumsum(a, 0), (4,))],
    "cumprod": [case(lambda a: a.cumprod(-1), (2, 3))],
    # linear algebra
    "mm": [case(lambda a, b: a.mm(b), (2, 3), (3, 2)), case(lambda a, b: a @ b, (2, 3), (3, 4))],
    "bmm": [case(lambda a, b: torch.bmm(a, b), (2, 2, 3), (2, 3, 2)), case(lambda a, b: a @ b, (2, 2, 3), (2, 3, 2))],
    "mv": [case(lambda a, b: a.mv(b), (2, 3), (3,)), case(lambda a, b: a @ b, (2, 3), (3,))],
    "dot": [case(lambda a, b: a.dot(b), (3,), (3,)), case(lambda a, b: a @ b, (4,), (4,))],
    "addmm": [case(lambda b, x, w: F.linear(x, w, b), (2,), (3, 4), (2, 4))],
    "det": [case(lambda a: torch.det(a), (3, 3)), case(lambda a: torch.linalg.det(a), (2, 2, 2))],
    "inverse": [case(lambda a: torch.inverse(a), (3, 3)), case(lambda a: torch.linalg.inv(a), (2, 2, 2))],
    "svdvals": [case(lambda a: torch.linalg.svdvals(a), (3, 2)), case(lambda a: torch.linalg.norm(a, 2), (3, 3))],
    "baddbmm": [case(lambda c, a, b: torch.baddbmm(c, a, b), (2, 2, 4), (2, 2, 3), (2, 3, 4)),
                case(lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=-2), (1, 3), (2, 1, 2), (2, 2, 3))],
    # (squares: the singular vectors' signs are arbitrary, their squares are not)
    "linalg_svd_U": [case(lambda a: torch.linalg.svd(a, full_matrices=False).U ** 2, (4, 3)),
                     case(lambda a: torch.linalg.svd(a).U[:, :2] ** 2, (3, 2))],
    "linalg_svd_S": [case(lambda a: torch.linalg.svd(a).S, (2, 3))],
    "linalg_svd_Vh": [case(lambda a: torch.linalg.svd(a, full_matrices=False).Vh ** 2, (2, 3)),
                      case(lambda a: torch.linalg.svd(a, full_matrices=False).Vh ** 2, (3, 3))],
    "linalg_svd": [case(lambda a: (lambda r: (r.U ** 2, r.S, r.Vh ** 2))(torch.linalg.svd(a, full_matrices=False)),
                        (3, 2)),
                   case(lambda a: (lambda r: (r.U ** 2, r.Vh[:2] ** 2))(torch.linalg.svd(a)), (2, 4))],
    "trace": [case(lambda a: a.trace(), (3, 3)), case(lambda a: torch.trace(a), (2, 3))],
    # factorizations: symmetric positive-definite inputs made from the sample (A Aᵀ + I), and squares of
    # factors whose signs are arbitrary
    "linalg_cholesky_ex": [case(lambda a: torch.linalg.cholesky(a @ a.mT + torch.eye(3, dtype=a.dtype)), (3, 3)),
                           case(lambda a: torch.linalg.cholesky_ex(a.mT @ a, upper=True).L, (2, 3, 3))],
    "cholesky": [case(lambda a: torch.cholesky(a @ a.mT), (3, 3))],
    "linalg_solve_ex": [case(lambda a, b: torch.linalg.solve(a, b), (3, 3), (3, 2)),
                        case(lambda a, b: torch.linalg.solve(a, b), (2, 3, 3), (3,)),
                        case(lambda a, b: torch.linalg.solve_ex(a, b, left=False).result, (3, 3), (2, 2, 3)),
                        case(lambda a, b: torch.linalg.solve(a, b), (3, 3), (2, 3, 1))],
    "linalg_slogdet_sign": [case(lambda a: torch.linalg.slogdet(a).sign * a, (3, 3))],
    "linalg_slogdet_logabsdet": [case(lambda a: torch.linalg.slogdet(a).logabsdet, (3, 3)),
                                 case(lambda a: torch.logdet(a @ a.mT), (2, 3, 3))],
    "linalg_slogdet": [case(lambda a: tuple(torch.slogdet(a)), (2, 2, 2))],
    "linalg_qr_Q": [case(lambda a: torch.linalg.qr(a).Q, (4, 3)), case(lambda a: torch.linalg.qr(a).Q, (2, 4))],
    "linalg_qr_R": [case(lambda a: torch.linalg.qr(a).R, (3, 3)), case(lambda a: torch.linalg.qr(a).R, (2, 4)),
                    case(lambda a: torch.linalg.qr(a, mode="complete").R, (2, 3))],
    "linalg_qr": [case(lambda a: tuple(torch.linalg.qr(a)), (4, 3)), case(lambda a: tuple(torch.qr(a)), (2, 2, 3))],
    "linalg_eigh_eigenvalues": [case(lambda a: torch.linalg.eigvalsh(a + a.mT), (3, 3)),
                                case(lambda a: torch.linalg.eigh(a @ a.mT, UPLO="U").eigenvalues, (2, 3, 3))],
    "linalg_eigh_eigenvectors": [case(lambda a: torch.linalg.eigh(a + a.mT).eigenvectors ** 2, (3, 3))],
    "linalg_eigh": [case(lambda a: (lambda r: (r.eigenvalues, r.eigenvectors ** 2))(torch.linalg.eigh(a + a.mT)),
                         (3, 3))],
    "linalg_matrix_exp": [case(lambda a: torch.linalg.matrix_exp(a), (3, 3), domain="real"),
                          case(lambda a: torch.matrix_exp(a * 0.1), (2, 2, 2))],
    "linalg_solve_triangular": [case(lambda a, b: torch.linalg.solve_triangular(a, b, upper=True), (3, 3), (3, 2)),
                                case(lambda a, b: torch.linalg.solve_triangular(a.mT, b, upper=False, left=False,
                                                                                unitriangular=True), (2, 3, 3),
                                     (2, 3)),
                                case(lambda a, b: torch.linalg.solve_triangular(a, b, upper=False), (3, 3), (2, 3, 1))],
    "linalg_lu_factor_ex": [case(lambda a: torch.linalg.lu_factor(a).LU, (3, 3)),
                            case(lambda a: torch.linalg.lu_factor_ex(a).LU, (2, 3, 4)),
                            case(lambda a: torch.linalg.lu_factor(a).LU, (4, 2))],
    "linalg_lu_L": [case(lambda a: torch.linalg.lu(a).L, (3, 3)), case(lambda a: torch.linalg.lu(a).L, (4, 2))],
    "linalg_lu_U": [case(lambda a: torch.linalg.lu(a).U, (3, 3)), case(lambda a: torch.linalg.lu(a).U, (2, 2, 4))],
    "linalg_lu": [case(lambda a: tuple(torch.linalg.lu(a)[1:]), (3, 3)), case(lambda a: tuple(torch.linalg.lu(a)[1:]),
                                                                               (2, 4)),
                  case(lambda a: tuple(torch.linalg.lu(a)[1:]), (4, 3))],
    "lu_unpack_L": [case(lambda a: torch.lu_unpack(a, torch.tensor([2, 2, 3], dtype=torch.int32)).L, (3, 3)),
                    case(lambda a: torch.lu_unpack(a, torch.tensor([1, 2], dtype=torch.int32)).L, (2, 3))],
    "lu_unpack_U": [case(lambda a: torch.lu_unpack(a, torch.tensor([3, 2, 3], dtype=torch.int32)).U, (3, 3)),
                    case(lambda a: torch.lu_unpack(a, torch.tensor([2, 2], dtype=torch.int32)).U, (3, 2))],
    "lu_unpack": [case(lambda a: tuple(torch.lu_unpack(a, torch.tensor([1, 3, 3], dtype=torch.int32))[1:]), (3, 3))],
    "linalg_lu_solve": [case(lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b), (3, 3), (3, 2)),
                        case(lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=True), (3, 3),
                             (2, 3, 1)),
                        case(lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=False), (3, 3),
                             (2, 3)),
                        case(lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=False,
                                                                adjoint=True), (2, 3, 3), (2, 3))],
    "cholesky_solve": [case(lambda b, a: torch.cholesky_solve(b, a.tril()), (3, 2), (3, 3)),
                       case(lambda b, a: torch.cholesky_solve(b, a.triu(), upper=True), (2, 3, 1), (3, 3))],
    "cholesky_inverse": [case(lambda a: torch.cholesky_inverse(a.tril()), (3, 3)),
                         case(lambda a: torch.cholesky_inverse(a.triu(), upper=True), (2, 3, 3))],
    "linalg_lstsq_solution": [case(lambda a, b: torch.linalg.lstsq(a, b).solution, (4, 3), (4, 2)),
                              case(lambda a, b: torch.linalg.lstsq(a, b).solution, (2, 4), (2,))],
    "linalg_lstsq_residuals": [case(lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd").residuals, (4, 2), (4, 3))],
    "linalg_lstsq": [case(lambda a, b: tuple(torch.linalg.lstsq(a, b, driver="gelss")[:2]), (2, 4, 2), (2, 4, 1))],
    "linalg_pinv": [case(lambda a: torch.linalg.pinv(a), (3, 2)), case(lambda a: torch.pinverse(a), (2, 3)),
                    case(lambda a: torch.linalg.pinv(a @ a.mT, hermitian=True), (3, 3))],
    # shape
    "view": [case(lambda a: a.view(3, 2), (2, 3)), case(lambda a: a.reshape(-1), (2, 3))],
    "reshape_alias": [case(lambda a: a.t().reshape(1, 3, 2), (2, 3))],
    "unsafe_view": [case(lambda a: a.t().reshape(6), (2, 3))],
    "t": [case(lambda a: a.t(), (2, 3))],
    "transpose": [case(lambda a: a.transpose(0, 2), (2, 3, 2)), case(lambda a: a.mT, (2, 3))],
    "permute": [case(lambda a: a.permute(2, 0, 1), (2, 3, 2)), case(lambda a: a.T, (2, 3))],
    "squeeze": [case(lambda a: a.squeeze(), (2, 1, 3))],
    "squeeze_dim": [case(lambda a: a.squeeze(1), (2, 1, 3))],
    "squeeze_dims": [case(lambda a: a.squeeze((0, 2)), (1, 3, 1))],
    "squeeze_inplace_dim": [case(lambda a, b: a @ b, (3,), (3, 2)), case(lambda a: (a * 1).squeeze_(1), (2, 1, 3))],
    "squeeze_inplace": [case(lambda a: (a * 1).squeeze_(), (2, 1, 3))],
    "squeeze_inplace_dims": [case(lambda a: (a * 1).squeeze_((0, 2)), (1, 3, 1))],
    "unsqueeze_inplace": [case(lambda a: (a * 1).unsqueeze_(1), (2, 3))],
    "t_inplace": [case(lambda a: (a * 1).t_(), (2, 3))],
    "transpose_inplace": [case(lambda a: (a * 1).transpose_(0, 2), (2, 3, 2))],
    "as_strided": [case(_write_through_view, (3, 2), (3,))],
    "unsqueeze": [case(lambda a: a.unsqueeze(-1), (2, 3))],
    "expand": [case(lambda a: a.expand(2, 3), (3,)), case(lambda a: a.expand_as(torch.ones(4, 2, 3)), (2, 1))],
    "repeat": [case(lambda a: a.repeat(2, 1, 2), (2, 3))],
    "cat": [case(lambda a, b: torch.cat([a, b], 1), (2, 3), (2, 1)), case(lambda a, b: torch.cat((a, b)), (2,), (3,))],
    "stack": [case(lambda a, b: torch.stack([a, b], -1), (2, 3), (2, 3))],
    "narrow": [case(lambda a: a.narrow(1, 1, 2), (2, 3))],
    "split": [case(lambda a: a.split(2, 1)[1], (2, 3)), case(lambda a: a.chunk(2)[0], (4,))],
    "split_with_sizes": [case(lambda a: a.split([1, 2], 1)[1], (2, 3))],
    "slice_scatter": [case(lambda a, b: T._slice_scatter(a, b, 1, 0, 3, 2), (2, 3), (2, 2))],
    "select": [case(lambda a: a.select(1, 2), (2, 3)), case(lambda a: a[1], (2, 3))],
    "unbind": [case(lambda a: a.unbind(1)[2], (2, 3))],
    "masked_scatter": [case(lambda a, s: torch.masked_scatter(a, COND, s), (2, 3), (4,)),
                       case(lambda a, s: a.masked_scatter(COND[1], s), (2, 3), (2, 2)),
                       case(lambda a, s: (a * 1).masked_scatter_(COND, s), (2, 3), (3,))],
    "masked_select": [case(lambda a: a.masked_select(a > 0), (2, 3)),
                      case(lambda a: torch.masked_select(a, torch.tensor([[True], [False]])), (3,))],
    "unbind_outputs": [case(lambda a: a.unbind(-1), (2, 3)), case(lambda a: a.unbind(0)[1], (2, 3))],
    "split_outputs": [case(lambda a: a.split(2, 1), (2, 3)), case(lambda a: a.chunk(3, -1)[1], (2, 3))],
    "split_with_sizes_outputs": [case(lambda a: a.split([2, 1], 1)[0], (2, 3)),
                                 case(lambda a: torch.split(a, [1, 1], 0), (2, 3))],
    "select_scatter": [case(lambda a, b: T._select_scatter(a, b, 0, 1), (2, 3), (3,))],
    "diagonal": [case(lambda a: a.diagonal(1), (3, 3)), case(lambda a: a.diagonal(0, 0, 2), (2, 3, 2))],
    "diag_copy": [case(lambda a: torch.diag(a), (3, 3)), case(lambda a: torch.diag(a, -1), (3, 2))],
    "diag_embed": [case(lambda a: torch.diag(a), (3,)), case(lambda a: a.diag(1), (2,))],
    "diagonal_scatter": [case(lambda a, b: T._diagonal_scatter(a, b), (3, 3), (3,))],
    "index_select": [case(lambda a: a.index_select(1, tensor([2, 0, 2])), (2, 3))],
    "index_add": [case(lambda a, s: a.index_add(0, IDX_ROWS, s), (2, 3), (3, 3))],
    "gather": [case(lambda a: a.gather(1, GATHER_IDX), (2, 3))],
    "scatter": [case(lambda a, s: a.scatter(1, SCATTER_IDX, s), (2, 3), (2, 3))],
    "scatter_value": [case(lambda a: a.scatter(1, SCATTER_IDX[:, :1], 0.5), (2, 3))],
    "scatter_add": [case(lambda a, s: torch.scatter_add(a, 1, SCATTER_IDX, s), (2, 3), (2, 3))],
    "flip": [case(lambda a: a.flip(1), (2, 3)), case(lambda a: torch.flip(a, (0, 1)), (2, 3))],
    "roll": [case(lambda a: a.roll(1, 1), (2, 3)), case(lambda a: a.roll(2), (2, 3))],
    "tril": [case(lambda a: a.tril(), (3, 3))],
    "triu": [case(lambda a: torch.triu(a, 1), (3, 4))],
    "clone": [case(lambda a: a.clone(), (2, 3)), case(lambda a: a.t().contiguous(), (2, 3))],
    "to": [case(lambda a: a.to(torch.float32), (2, 3), eps=1e-3, atol=1e-3),
           case(lambda a: a.float().double(), (3,), eps=1e-3, atol=1e-3)],
    "alias": [case(lambda a: a[...], (2, 3))],
    # (forward_ad.unpack_dual's primal inside a dual level, where gradcheck can't open its own)
    "fw_primal": [case(lambda a: apply(D.fw_primal, (a,)), (2, 3))],
    "getitem_basic": [case(lambda a: a[:, 1:], (2, 3))],
    "index": [case(lambda a: a[[1, 0, 1]], (2, 3)), case(lambda a: a[COND], (2, 3))],
    "index_put": [case(lambda a, v: T._index_put_(a, (np.array([0, 1, 0]),), v, True), (2, 3), (3, 3)),
                  case(lambda a, v: T._index_put_(a, (np.array([1]),), v), (2, 3), (1, 3))],
    "copy_slices": [case(_setitem, (2, 3), (3,)), case(_write_through_view, (2, 3), (2,))],
    # neural-network functions
    "softmax": [case(lambda a: F.softmax(a, 1), (2, 3)), case(lambda a: torch.softmax(a, 0), (2, 3))],
    "log_softmax": [case(lambda a: F.log_softmax(a, -1), (2, 3)), case(lambda a: a.log_softmax(0), (3,))],
    "leaky_relu": [case(lambda a: F.leaky_relu(a, 0.2), (2, 3))],
    "leaky_relu_inplace": [case(lambda a: F.leaky_relu(a * 1, 0.2, inplace=True), (2, 3))],
    "elu": [case(lambda a: F.elu(a), (2, 3)), case(lambda a: F.elu(a, alpha=0.5), (3,))],
    "elu_inplace": [case(lambda a: F.elu(a * 1, inplace=True), (2, 3))],
    "gelu": [case(lambda a: F.gelu(a), (2, 3)), case(lambda a: F.gelu(a, approximate="tanh"), (3,))],
    "softplus": [case(lambda a: F.softplus(a), (2, 3)), case(lambda a: F.softplus(a, beta=2, threshold=1), (4,),
                                                              twice=False)],
    "silu": [case(lambda a: F.silu(a), (2, 3))],
    "hardtanh": [case(lambda a: F.hardtanh(a, -0.5, 0.5), (2, 3)), case(lambda a: F.relu6(a * 4), (3,))],
    "hardtanh_backward": [case(lambda g, a: D.nn._apply(D.hardtanh_backward, (g, a), {"min_val": -0.5, "max_val": 0.5}),
                               (2, 3), (2, 3))],
    "log_sigmoid": [case(lambda a: F.logsigmoid(a), (2, 3))],
    "log_sigmoid_backward": [case(lambda g, a: D.nn._apply(D.log_sigmoid_backward, (g, a, (-a.abs()).exp().detach())),
                                  (2, 3), (2, 3))],
    "mse_loss": [case(lambda a, b: F.mse_loss(a, b), (2, 3), (2, 3)),
                 case(lambda a, b: F.mse_loss(a, b, reduction="none"), (2, 3), (3,))],
    "smooth_l1_loss": [case(lambda a, b: F.smooth_l1_loss(a, b), (2, 3), (2, 3)),
                       case(lambda a, b: F.smooth_l1_loss(a, b, beta=0.5, reduction="sum"), (2, 3), (2, 3))],
    # the layers' ops (ops/nn_layers.py), through the torch.nn.functional functions
    "convolution": [case(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
                         (2, 4, 5, 6), (6, 2, 3, 2), (6,)),
                    case(lambda x, w, b: F.conv1d(x, w, b, padding=2), (2, 3, 7), (4, 3, 3), (4,))],
    "convolution_nobias": [case(lambda x, w: F.conv2d(x, w, stride=2), (1, 2, 5, 5), (3, 2, 2, 2)),
                           case(lambda x, w: F.conv1d(x, w, dilation=2), (2, 2, 8), (3, 2, 3))],
    "convolution_backward_input": [case(lambda g, w: D.nn_layers.conv_input_grad(g, w, (2, 4, 5, 6), (2, 1), (1, 1),
                                                                                  (1, 2), 2), (2, 6, 3, 6), (6, 2, 3, 2))],
    "convolution_backward_weight": [case(lambda x, g: D.nn_layers.conv_weight_grad(x, g, (6, 2, 3, 2), (2, 1), (1, 1),
                                                                                   (1, 2), 2), (2, 4, 5, 6), (2, 6, 3, 6))],
    "convolution_transposed": [
        case(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0), output_padding=(1, 0),
                                                groups=2, dilation=(1, 2)), (2, 4, 3, 4), (4, 3, 3, 2), (6,)),
        case(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=1, padding=1, output_padding=1, dilation=2),
             (2, 3, 5), (3, 2, 3), (2,))],
    "convolution_transposed_nobias": [
        case(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), (1, 2, 3, 3), (2, 3, 3, 3)),
        case(lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=2, output_padding=1, dilation=2), (2, 4, 4),
             (4, 2, 3))],
    "max_pool2d_with_indices": [case(lambda x: F.max_pool2d(x, 2), (2, 3, 4, 6)),
                                case(lambda x: F.max_pool1d(x, 3, stride=2, padding=1), (2, 3, 7)),
                                case(lambda x: F.max_pool2d(x, (3, 2), stride=2, padding=1, ceil_mode=True), (1, 2, 5, 5))],
    "avg_pool2d": [case(lambda x: F.avg_pool2d(x, 2), (2, 3, 4, 6)),
                   case(lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                        (1, 2, 5, 6)),
                   case(lambda x: F.avg_pool1d(x, 3, stride=2, padding=1), (2, 3, 7))],
    "adaptive_avg_pool2d": [case(lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (2, 3, 7, 6)),
                            case(lambda x: F.adaptive_avg_pool1d(x, 3), (2, 5))],
    # pooling over 3 dims and the adaptive max poolings (ops/nn_pooling.py), and the 1-d forms over the 2-d ops
    "max_pool3d_with_indices": [case(lambda x: F.max_pool3d(x, 2), (1, 2, 4, 3, 4)),
                                case(lambda x: F.max_pool3d(x, (3, 2, 2), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1),
                                                            ceil_mode=True), (2, 5, 6, 5))],
    "avg_pool3d": [case(lambda x: F.avg_pool3d(x, 2), (1, 2, 4, 3, 4)),
                   case(lambda x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                        (1, 4, 5, 6))],
    "adaptive_avg_pool3d": [case(lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), (1, 2, 5, 4, 3))],
    "adaptive_max_pool2d": [case(lambda x: F.adaptive_max_pool2d(x, (3, 2)), (2, 2, 5, 4)),
                            case(lambda x: F.adaptive_max_pool1d(x, 3), (2, 7))],
    "adaptive_max_pool3d": [case(lambda x: F.adaptive_max_pool3d(x, (2, 3, 2)), (1, 2, 5, 4, 3))],
    # the split ATen's recurrent cells use (ops/nn_recurrent.py), through the cells
    "unsafe_split": [case(lambda x: D.nn_recurrent.unsafe_chunk(x, 2, 1)[1] * 1, (2, 4))],
    "unsafe_split_outputs": [case(lambda x: D.nn_recurrent.unsafe_chunk(x, 3, 1), (2, 6)),
                             case(lambda x: D.nn_recurrent.unsafe_chunk(x * 1, 2, 0)[0].sigmoid_(), (4, 3))],
    "max_unpool2d": [case(lambda x: F.max_unpool2d(x, torch.tensor([[[[0, 3], [9, 10]]]]), 2), (1, 1, 2, 2)),
                     case(lambda x: F.max_unpool1d(x, torch.tensor([[1, 2, 5]]), 2, output_size=(7,)), (1, 3))],
    "max_unpool3d": [case(lambda x: F.max_unpool3d(x, torch.tensor([[[[[0, 3]], [[20, 31]]]]]), 2), (1, 1, 2, 1, 2))],
    # the float32 LSTM layer PyTorch runs on oneDNN (one node for output, hy, cy), its BPTT formula in float64
    **{name: [case(lambda x, a, b, c, d, h, s: D.nn_recurrent.lstm_layer(x, a, b, c, d, h, s, False)[k],
                   (3, 2, 2), (8, 2), (8, 2), (8,), (8,), (2, 2), (2, 2)),
              case(lambda x, a, b, c, d, h, s: D.nn_recurrent.lstm_layer(x, a, b, c, d, h, s, True),
                   (2, 1, 3), (4, 3), (4, 1), (4,), (4,), (1, 1), (1, 1))]
       for k, name in enumerate(("mkldnn_rnn_layer_output", "mkldnn_rnn_layer_hy", "mkldnn_rnn_layer_cy"))},
    "mkldnn_rnn_layer": [case(lambda x, a, b, c, d, h, s: D.nn_recurrent.lstm_layer(x, a, b, c, d, h, s, True),
                              (3, 2, 2), (8, 2), (8, 2), (8,), (8,), (2, 2), (2, 2))],
    # resampling (ops/nn_resample.py)
    "pixel_shuffle": [case(lambda x: F.pixel_shuffle(x, 2), (1, 8, 2, 3)), case(lambda x: F.pixel_shuffle(x, 3), (9, 1, 2))],
    "pixel_unshuffle": [case(lambda x: F.pixel_unshuffle(x, 2), (1, 2, 4, 6))],
    "channel_shuffle": [case(lambda x: F.channel_shuffle(x, 3), (2, 6, 2)), case(lambda x: F.channel_shuffle(x, 2), (1, 4, 2, 3))],
    "im2col": [case(lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 2, 3, 4)),
               case(lambda x: F.unfold(x, 2), (1, 3, 3))],
    "col2im": [case(lambda x: F.fold(x, (4, 5), 2, padding=1, stride=(2, 1)), (2, 8, 18)),
               case(lambda x: F.fold(x, 3, 2), (4, 4))],
    "upsample_nearest1d": [case(lambda x: F.interpolate(x, scale_factor=2.5), (2, 2, 3))],
    "upsample_nearest2d": [case(lambda x: F.interpolate(x, scale_factor=2), (1, 2, 2, 3)),
                           case(lambda x: F.interpolate(x, size=(3, 5)), (1, 2, 2, 3))],
    "upsample_nearest3d": [case(lambda x: F.interpolate(x, scale_factor=(2, 1.5, 1)), (1, 1, 2, 2, 3))],
    "_upsample_nearest_exact1d": [case(lambda x: F.interpolate(x, size=7, mode="nearest-exact"), (1, 2, 3))],
    "_upsample_nearest_exact2d": [case(lambda x: F.interpolate(x, scale_factor=1.7, mode="nearest-exact"), (1, 2, 2, 3))],
    "_upsample_nearest_exact3d": [case(lambda x: F.interpolate(x, size=(3, 3, 2), mode="nearest-exact"), (1, 1, 2, 2, 3))],
    "upsample_linear1d": [case(lambda x: F.interpolate(x, scale_factor=2, mode="linear"), (2, 2, 3)),
                          case(lambda x: F.interpolate(x, size=7, mode="linear", align_corners=True), (1, 2, 3))],
    "upsample_bilinear2d": [case(lambda x: F.interpolate(x, scale_factor=(1.5, 2.5), mode="bilinear"), (1, 2, 2, 3)),
                            case(lambda x: F.interpolate(x, size=(3, 5), mode="bilinear", align_corners=True), (1, 1, 3, 3))],
    "upsample_trilinear3d": [case(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"), (1, 1, 2, 2, 3))],
    "trilinear": [case(lambda a, w, b: F.bilinear(a, b, w), (4, 2), (5, 2, 3), (4, 3)),
                  case(lambda a, w, b: F.bilinear(a, b, w), (2, 3, 2), (4, 2, 2), (2, 3, 2))],
    "embedding": [case(lambda w: F.embedding(tensor([[0, 2], [3, 2]]), w), (4, 3))],
    "native_batch_norm": [case(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (4, 3), (3,), (3,)),
                          case(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (2, 3, 5), (3,), (3,)),
                          case(lambda x, w, b: F.batch_norm(x, torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64) * 2,
                                                            w, b), (2, 2, 3, 3), (2,), (2,))],
    "constant_pad_nd": [case(lambda x: F.pad(x, (1, 2)), (2, 3)),
                        case(lambda x: F.pad(x, (-1, 2, 1, 0), value=0.5), (2, 3, 4))],
    "reflect_pad1d": [case(lambda x: F.pad(x, (2, 1), mode="reflect"), (2, 4))],
    "reflect_pad2d": [case(lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), (1, 3, 4))],
    "reflect_pad3d": [case(lambda x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="reflect"), (1, 2, 3, 3))],
    "replicate_pad1d": [case(lambda x: F.pad(x, (2, 1), mode="replicate"), (2, 3))],
    "replicate_pad2d": [case(lambda x: F.pad(x, (2, 1, 1, 2), mode="replicate"), (1, 3, 4))],
    "replicate_pad3d": [case(lambda x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="replicate"), (1, 2, 3, 3))],
    "native_layer_norm": [case(lambda x, w, b: F.layer_norm(x, (3, 4), w, b), (2, 3, 4), (3, 4), (3, 4)),
                          case(lambda x: F.layer_norm(x, (4,)), (3, 4))],
    "huber_loss": [case(lambda a, b: F.huber_loss(a, b), (2, 3), (2, 3)),
                   case(lambda a, b: F.huber_loss(a, b, delta=0.5, reduction="sum"), (2, 3), (2, 3))],
    "binary_cross_entropy": [case(lambda p, y: F.binary_cross_entropy(p, y), (2, 3), (2, 3)),
                             case(lambda p, y: F.binary_cross_entropy(p, y, weight=tensor([1., 2., 3.]),
                                                                      reduction="sum"), (2, 3), (2, 3))],
    "binary_cross_entropy_with_logits": [
        case(lambda x, y: F.binary_cross_entropy_with_logits(x, y), (2, 3), (2, 3)),
        case(lambda x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=tensor([1., 2., 3.]),
                                                             weight=tensor([0.5, 1., 2.])), (2, 3), (2, 3))],
    "nll_loss": [case(lambda a: F.nll_loss(a, TARGET), (2, 3)),
                 case(lambda a: F.nll_loss(a, TARGET, weight=tensor([1., 2., 3.], dtype=torch.float64), reduction="none"),
                      (2, 3)),
                 case(lambda a: F.cross_entropy(a, TARGET, label_smoothing=0.1), (2, 3))],
    "nll_loss2d": [case(lambda a: F.cross_entropy(a, TARGET_2D), (2, 3, 1, 2)),
                   case(lambda a: F.nll_loss(a, TARGET_2D[:, 0], reduction="sum"), (2, 3, 2))],
    "dropout": [case(_seeded_dropout, (2, 3))],
    "fill_inplace": [case(_fill, (2, 3))],
    "fill_tensor_inplace": [case(_fill_tensor, (2, 3), ())],
    "zero_inplace": [case(_zero, (2, 3))],
    "copy": [case(_copy, (2, 3), (3,))],
    "hardtanh": [case(lambda a: F.hardtanh(a, -0.5, 0.5), (2, 3)), case(lambda a: F.relu6(a * 4), (3,))],
}


def _differentiable(x):
    """``x`` itself when it requires grad, else a copy that does (the finite differences run the case
    under no_grad, on inputs that do not)."""
    return x if x.requires_grad else x.detach().requires_grad_()


def _vjp(f):
    """``x, *rest, g -> grad(f(x, *rest), x, g)``: the backward of ``f`` as a function, which records the
    fused backward op and is differentiated again (the second and third derivatives of ``f``)."""
    def call(x, *rest):
        with torch.enable_grad():
            x = _differentiable(x)
            return torch.autograd.grad(f(x, *rest[:-1]), x, rest[-1], create_graph=True)[0]
    return call


def _vjp_both(f):
    """The backward of a loss ``f(x, t)`` with respect to both inputs, summed into one output."""
    def call(x, t, g):
        with torch.enable_grad():
            x, t = _differentiable(x), _differentiable(t)
            gx, gt = torch.autograd.grad(f(x, t), (x, t), g, create_graph=True)
            return gx + 2 * gt
    return call


# the fused backward ops (ops/backward_ops.py): recorded by a gradient taken with create_graph=True
CASES.update({
    "tanh_backward": [case(_vjp(lambda a: a.tanh()), (2, 3), (2, 3))],
    "index_fill_tensor": [case(_vjp(lambda a: a.trace()), (2, 3), ()),
                          case(lambda a, v: apply(D.index_fill_tensor, (a, v), {"dim": 1, "index": np.array([2, 0, 2])}),
                               (2, 3), ())],
    "index_fill_scalar": [case(lambda a: apply(D.index_fill_scalar, (a,), {"value": 1.5, "dim": 0,
                                                                           "index": np.array([1])}), (2, 3))],
    "index_put_impl": [case(_vjp(lambda a: a[[1, 0, 1]]), (2, 3), (3, 3)),
                       case(_vjp(lambda a: a[COND]), (2, 3), (3,))],
    "slice_backward": [case(_vjp(lambda a: a.narrow(1, 1, 2)), (2, 3), (2, 2)),
                       case(_vjp(lambda a: a[:, ::2]), (2, 3), (2, 2))],
    "select_backward": [case(_vjp(lambda a: a.select(1, 2)), (2, 3), (2,)), case(_vjp(lambda a: a[-1]), (2, 3), (3,))],
    "diagonal_backward": [case(_vjp(lambda a: a.diagonal()), (3, 3), (3,)),
                          case(_vjp(lambda a: a.diagonal(1, 1, 0)), (3, 4), (2,))],
    "sigmoid_backward": [case(_vjp(lambda a: a.sigmoid()), (2, 3), (2, 3), domain="real")],
    "threshold_backward": [case(_vjp(lambda a: a.relu()), (2, 3), (2, 3))],
    "leaky_relu_backward": [case(_vjp(lambda a: F.leaky_relu(a, 0.2)), (2, 3), (2, 3))],
    "hardtanh_backward": [case(_vjp(lambda a: F.hardtanh(a, -0.5, 0.5)), (2, 3), (2, 3))],
    "hardshrink_backward": [case(_vjp(lambda a: F.hardshrink(a, 0.3)), (2, 3), (2, 3))],
    "softshrink_backward": [case(_vjp(lambda a: F.softshrink(a, 0.3)), (2, 3), (2, 3))],
    "hardswish_backward": [case(_vjp(lambda a: F.hardswish(a * 4)), (2, 3), (2, 3))],
    "softplus_backward": [case(_vjp(lambda a: F.softplus(a)), (2, 3), (2, 3)),
                          case(_vjp(lambda a: F.softplus(a, beta=2, threshold=1)), (4,), (4,))],
    "elu_backward": [case(_vjp(lambda a: F.elu(a, 0.5)), (2, 3), (2, 3))],
    "gelu_backward": [case(_vjp(lambda a: F.gelu(a)), (2, 3), (2, 3)),
                      case(_vjp(lambda a: F.gelu(a, approximate="tanh")), (3,), (3,))],
    "mse_loss_backward": [case(_vjp_both(lambda a, b: F.mse_loss(a, b)), (2, 3), (2, 3), ()),
                          case(_vjp_both(lambda a, b: F.mse_loss(a, b, reduction="none")), (3,), (3,), (3,))],
    "smooth_l1_loss_backward": [
        case(_vjp_both(lambda a, b: F.smooth_l1_loss(a, b, beta=0.5)), (2, 3), (2, 3), ()),
        case(_vjp_both(lambda a, b: F.smooth_l1_loss(a, b, reduction="sum")), (3,), (3,), ())],
    "huber_loss_backward": [case(_vjp_both(lambda a, b: F.huber_loss(a, b, delta=0.5)), (2, 3), (2, 3), ())],
    "binary_cross_entropy_backward": [
        case(_vjp_both(lambda a, b: F.binary_cross_entropy(a, b)), (2, 3), (2, 3), ()),
        case(_vjp_both(lambda a, b: F.binary_cross_entropy(a, b, reduction="none")), (3,), (3,), (3,))],
    "nll_loss_backward": [case(_vjp(lambda a: F.nll_loss(a, TARGET)), (2, 3), ()),
                          case(_vjp(lambda a: F.nll_loss(a, TARGET, reduction="none")), (2, 3), (2,))],
    "nll_loss2d_backward": [case(_vjp(lambda a: F.cross_entropy(a, TARGET_2D)), (2, 3, 1, 2), ())],
    # ops/special.py: the entries whose calls need a number besides the tensors
    "polygamma": [case(lambda a: torch.polygamma(2, a), (2, 3)), case(lambda a: a.polygamma(1), (3,)),
                  case(lambda a: torch.polygamma(0, a), (2,))],
    "xlog1py_self_scalar": [case(lambda a: torch.special.xlog1py(2.5, a), (2, 3))],
    "xlog1py_other_scalar": [case(lambda a: torch.special.xlog1py(a, 0.5), (2, 3)),
                             case(lambda a: torch.special.xlog1py(a, -0.5), (3,))],
    "xlogy_self_scalar": [case(lambda a: torch.xlogy(2.5, a), (2, 3))],
    "xlogy_other_scalar": [case(lambda a: torch.xlogy(a, 1.5), (2, 3)), case(lambda a: a.xlogy(0.5), (3,))],
    "copysign_scalar": [case(lambda a: a.copysign(-2.0), (2, 3)), case(lambda a: torch.copysign(a, 0.0), (3,))],
    "softmax_backward_data": [case(_vjp(lambda a: F.softmax(a, 1)), (2, 3), (2, 3))],
    # issues 16 and 19: the fused backward ops of glu, rrelu (eval and training) and embedding
    "glu_backward": [case(_vjp(lambda a: F.glu(a)), (3, 4), (3, 2)), case(_vjp(lambda a: F.glu(a, 0)), (2, 3), (1, 3))],
    "rrelu_with_noise_backward": [
        case(_vjp(lambda a: F.rrelu(a, 0.1, 0.3)), (2, 3), (2, 3)),
        case(_vjp(lambda a: (torch.manual_seed(0), F.rrelu(a, 0.1, 0.3, training=True))[1]), (3, 2), (3, 2))],
    # the upsamplings' backward ops (linear: their gradient is the upsampling again)
    "upsample_nearest1d_backward": [case(_vjp(lambda x: F.interpolate(x, scale_factor=2.5)), (2, 2, 3), (2, 2, 7))],
    "upsample_nearest2d_backward": [case(_vjp(lambda x: F.interpolate(x, scale_factor=2)), (1, 2, 2, 3), (1, 2, 4, 6))],
    "upsample_nearest3d_backward": [case(_vjp(lambda x: F.interpolate(x, scale_factor=(2, 1.5, 1))), (1, 1, 2, 2, 3),
                                         (1, 1, 4, 3, 3))],
    "_upsample_nearest_exact1d_backward": [case(_vjp(lambda x: F.interpolate(x, size=7, mode="nearest-exact")),
                                                (1, 2, 3), (1, 2, 7))],
    "_upsample_nearest_exact2d_backward": [case(_vjp(lambda x: F.interpolate(x, scale_factor=1.7, mode="nearest-exact")),
                                                (1, 2, 2, 3), (1, 2, 3, 5))],
    "_upsample_nearest_exact3d_backward": [case(_vjp(lambda x: F.interpolate(x, size=(3, 3, 2), mode="nearest-exact")),
                                                (1, 1, 2, 2, 3), (1, 1, 3, 3, 2))],
    "upsample_linear1d_backward": [case(_vjp(lambda x: F.interpolate(x, scale_factor=2, mode="linear")), (2, 2, 3),
                                        (2, 2, 6))],
    "upsample_bilinear2d_backward": [case(_vjp(lambda x: F.interpolate(x, scale_factor=(1.5, 2.5), mode="bilinear")),
                                          (1, 2, 2, 3), (1, 2, 3, 7))],
    "upsample_trilinear3d_backward": [case(_vjp(lambda x: F.interpolate(x, scale_factor=2, mode="trilinear")),
                                           (1, 1, 2, 2, 3), (1, 1, 4, 4, 6))],
    # the reflect/replicate pads' backward ops
    **{f"{mode}_pad{n}d_backward": [case(_vjp(lambda x, pad=pad, mode=mode: F.pad(x, pad, mode=mode)), x, g)]
       for mode in ("reflect", "replicate")
       for n, pad, x, g in ((1, (2, 1), (2, 4), (2, 7)), (2, (2, 1, 1, 2), (1, 3, 4), (1, 6, 7)),
                            (3, (1, 1, 1, 0, 0, 1), (1, 2, 3, 3), (1, 3, 4, 5)))},
    # the poolings' backward ops
    "max_pool2d_with_indices_backward": [case(_vjp(lambda x: F.max_pool2d(x, 2)), (2, 3, 4, 6), (2, 3, 2, 3))],
    "max_pool3d_with_indices_backward": [case(_vjp(lambda x: F.max_pool3d(x, 2)), (1, 2, 4, 3, 4), (1, 2, 2, 1, 2))],
    "avg_pool2d_backward": [case(_vjp(lambda x: F.avg_pool2d(x, 2)), (2, 3, 4, 6), (2, 3, 2, 3)),
                            case(_vjp(lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                             count_include_pad=False)), (1, 2, 5, 6), (1, 2, 3, 4))],
    "avg_pool3d_backward": [case(_vjp(lambda x: F.avg_pool3d(x, 2)), (1, 2, 4, 3, 4), (1, 2, 2, 1, 2))],
    "adaptive_avg_pool2d_backward": [case(_vjp(lambda x: F.adaptive_avg_pool2d(x, (3, 4))), (2, 3, 7, 6), (2, 3, 3, 4))],
    "adaptive_avg_pool3d_backward": [case(_vjp(lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2))), (1, 2, 5, 4, 3),
                                          (1, 2, 2, 3, 2))],
    "fractional_max_pool2d_backward": [case(_vjp(lambda x: F.fractional_max_pool2d(
        x, 2, output_size=(3, 2), _random_samples=torch.tensor([[[0.3, 0.7], [0.6, 0.1]]], dtype=x.dtype))),
        (1, 2, 5, 4), (1, 2, 3, 2))],
    "fractional_max_pool3d_backward": [case(_vjp(lambda x: F.fractional_max_pool3d(
        x, 2, output_size=2, _random_samples=torch.tensor([[[0.2, 0.5, 0.9]]], dtype=x.dtype))),
        (1, 1, 4, 4, 5), (1, 1, 2, 2, 2))],
    "adaptive_max_pool2d_backward": [case(_vjp(lambda x: F.adaptive_max_pool2d(x, (3, 2))), (2, 2, 5, 4), (2, 2, 3, 2))],
    "adaptive_max_pool3d_backward": [case(_vjp(lambda x: F.adaptive_max_pool3d(x, (2, 3, 2))), (1, 2, 5, 4, 3),
                                          (1, 2, 2, 3, 2))],
    "embedding_dense_backward": [
        case(_vjp(lambda w: F.embedding(tensor([[0, 2], [3, 2]]), w)), (4, 3), (2, 2, 3)),
        case(_vjp(lambda w: F.embedding(tensor([1, 1, 3, 0]), w, padding_idx=3)), (4, 2),
             (4, 2))],
    "log_softmax_backward_data": [case(_vjp(lambda a: F.log_softmax(a, 0)), (2, 3), (2, 3))],
    # issue 14's entries
    "unfold": [case(lambda a: a.unfold(1, 2, 1), (3, 4)), case(lambda a: a.unfold(0, 3, 2), (7,)),
               case(lambda a: a.unfold(-2, 2, 3), (5, 2, 2))],
    "masked_scatter_backward": [case(_vjp(lambda s: torch.masked_scatter(torch.zeros(2, 3, dtype=torch.float64), COND, s)),
                                     (5,), (2, 3))],
    "cdist_forward": [case(lambda a, b: torch.cdist(a, b), (2, 3), (4, 3), domain="distinct"),
                      case(lambda a, b: torch.cdist(a, b, 1.0), (2, 2, 3), (3, 3), domain="distinct"),
                      case(lambda a, b: torch.cdist(a, b, 3.5), (3, 2), (2, 2), domain="distinct"),
                      case(lambda a, b: torch.cdist(a, b, 0.5, "donot_use_mm_for_euclid_dist"), (2, 2), (3, 2),
                           domain="distinct"),
                      case(lambda a, b: torch.cdist(a, b, float("inf")), (2, 3), (2, 3), domain="distinct")],
    "euclidean_dist": [case(lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), (2, 3), (4, 3),
                            domain="distinct"),
                       case(lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), (2, 1, 2, 3),
                            (3, 3, 3), domain="distinct"),
                       case(lambda a, b: torch.cdist(a, b), (26, 2), (2, 2), domain="distinct")],
    "cummax": [case(lambda a: torch.cummax(a, 1).values, (2, 4)), case(lambda a: a.cummax(0)[0], (3, 2)),
               case(lambda a: a.cummax(-1).values, (5,))],
    "cummin": [case(lambda a: torch.cummin(a, 0).values, (3, 2)), case(lambda a: a.cummin(-1)[0], (2, 4))],
    "logcumsumexp": [case(lambda a: torch.logcumsumexp(a, 1), (2, 4)), case(lambda a: a.logcumsumexp(-1), (5,)),
                     case(lambda a: a.logcumsumexp(0), (3, 2))],
    # torch.nanmean is ATen's composite over nansum (no entry of its own): its calls check nansum's formula
    "nansum": [case(lambda a: torch.nanmean(a, 1), (2, 3)), case(lambda a: a.nanmean(), (3, 2)),
               case(lambda a: a.nanmean((0, 1), keepdim=True), (2, 2))],
    "nanmedian": [case(lambda a: torch.nanmedian(a), (3, 3)), case(lambda a: a.nanmedian(), (4,))],
    "nanmedian_dim": [case(lambda a: torch.nanmedian(a, 1).values, (2, 5)), case(lambda a: a.nanmedian(0, True)[0], (4, 2))],
    "unfold_backward": [case(_vjp(lambda a: a.unfold(1, 3, 2)), (2, 7), (2, 3, 3))],
})
# det's gradient under create_graph is a linalg.solve (ATen's linalg_det_backward)
CASES["linalg_solve_ex"] += [case(_vjp(lambda a: torch.linalg.det(a)), (3, 3), ()),
                             case(_vjp(lambda a: torch.det(a) ** 2), (2, 2, 2), (2,))]



def _sample_cases(entry):
    """The entry's own samples, called through every public name the table binds for it."""
    names = {line.partition("(")[0].split(".")[0] for line in entry.schema}
    calls = []
    for public in sorted(names):
        if "function" in entry.variants:
            calls.append(lambda *xs, f=getattr(torch, public): f(*xs))
        if "method" in entry.variants:
            calls.append(lambda x, *xs, m=public: getattr(x, m)(*xs))
        if "inplace" in entry.variants and entry.inplace_entry is None:     # (else the other entry's call)
            calls.append(lambda x, *xs, m=public + "_": getattr(x * 1, m)(*xs))
        if "F" in entry.variants:
            calls.append(lambda *xs, f=getattr(F, public): f(*xs))
        if "linalg" in entry.variants:
            calls.append(lambda *xs, f=getattr(torch.linalg, surface.linalg_name(public)): f(*xs))
        if "special" in entry.variants:
            calls.append(lambda *xs, f=getattr(torch.special, public): f(*xs))
    return [case(call, *shapes) for shapes in entry.samples for call in calls]


# the late families (ops/registry.LATE_FAMILIES: loaded by torch.nn on first use), every entry tested too
D.load_late_families()
from late_op_cases import late_cases  # noqa: E402

CASES.update(late_cases(torch, F, case))

for _name, _entry in D.TABLE.items():
    if _entry.samples:
        CASES.setdefault(_name, []).extend(_sample_cases(_entry))

# entries whose gradient PyTorch does not implement: asking for it must fail, never give zeros
NOT_IMPLEMENTED = {
    "floor_divide": lambda x: x // 2.0,
    "remainder_scalar_self": lambda x: 2.0 % x,
    "heaviside": lambda x: torch.heaviside(x, torch.tensor(0.5, dtype=x.dtype)),
    "hardsigmoid_backward": lambda x: torch.autograd.grad(F.hardsigmoid(x).sum(), x, create_graph=True)[0],
    "cdist_backward": lambda x: torch.autograd.grad(torch.cdist(x, x.flip(0)).sum(), x, create_graph=True)[0],
    "ctc_loss_backward": lambda x: torch.autograd.grad(
        F.ctc_loss(x.log_softmax(1).unsqueeze(1), torch.tensor([[1]]), [2], [1]), x, create_graph=True)[0],
    "scatter_reduce_src": lambda x: x.scatter(1, torch.tensor([[1, 1], [0, 1]]), x * 2, reduce="multiply"),
    "scatter_reduce_value": lambda x: x.scatter(0, torch.tensor([[1, 0]]), 1.5, reduce="add"),
    "unique2": lambda x: torch.unique(x),
    "unique_dim": lambda x: torch.unique(x, dim=0),
    "unique_consecutive": lambda x: torch.unique_consecutive(x, dim=1),
    "multi_margin_loss_backward": lambda x: torch.autograd.grad(
        F.multi_margin_loss(x, torch.tensor([1, 0])), x, create_graph=True)[0],
    "multilabel_margin_loss_backward": lambda x: torch.autograd.grad(
        F.multilabel_margin_loss(x, torch.tensor([[1, -1], [0, 1]])), x, create_graph=True)[0],
    # derivatives.yaml's not_implemented("inplace version of ..."): t.op_() records its own node
    "asinh_inplace": lambda x: (x * 1).asinh_(),
    "acosh_inplace": lambda x: (x * 1).arccosh_(),
    "atanh_inplace": lambda x: torch.atanh_(x * 1),
}

DIFFERENTIABLE = [name for name, e in D.TABLE.items() if e.differentiable and name not in NOT_IMPLEMENTED]


def _node_names(t):
    """Names of all nodes reachable from ``t.grad_fn``."""
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.name())
        stack.extend(n for n, _ in node.next_functions)
    return names


def _inputs(entry, c, seed):
    rng = np.random.default_rng(seed)
    return [testing.sample(c.domain or entry.domain, s, rng) for s in c.shapes]


def _outputs(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_entry_matches_central_differences(name):
    entry = D.TABLE[name]
    for k, c in enumerate(CASES[name]):
        xs = _inputs(entry, c, seed=k)
        names = set().union(*(_node_names(o) for o in _outputs(c.fn(*xs)) if o.grad_fn is not None))
        assert entry.node in names, f"case {k} of {name} does not record {entry.node} (got {sorted(names)})"
        assert testing.gradcheck(c.fn, xs, **c.tol)
        if entry.twice and c.twice:
            assert testing.gradgradcheck(c.fn, xs, **c.tol)


@pytest.mark.parametrize("name", sorted(NOT_IMPLEMENTED))
def test_unimplemented_derivative_is_an_error_not_zero(name):
    entry = D.TABLE[name]
    x = testing.sample(entry.domain, (2, 2), np.random.default_rng(1))
    y = NOT_IMPLEMENTED[name](x)
    assert entry.node in _node_names(y)     # (torch::autograd::NotImplemented, or a node of its own)
    with pytest.raises(GxError, match="not implemented"):
        torch.autograd.grad(y.sum(), x)


def test_every_differentiable_entry_has_a_domain_a_case_and_a_pytorch_node_name():
    problems = []
    for name, e in D.TABLE.items():
        if not e.differentiable:
            continue
        if e.domain not in testing.DOMAINS:
            problems.append(f"{name}: domain {e.domain!r} is not in testing.DOMAINS")
        if not (NODE_NAME.match(e.node) or e.node in SPECIAL_NODES):
            problems.append(f"{name}: node name {e.node!r} is not of the form XxxBackwardN")
        if name not in CASES and name not in NOT_IMPLEMENTED:
            problems.append(f"{name}: no sample call in CASES")
    assert not problems, "\n".join(problems)
    assert not set(CASES) - set(D.TABLE), "CASES names entries the table no longer has"


def test_the_cases_record_every_node_name_of_the_table():
    produced = set()
    for name, cases in CASES.items():
        for k, c in enumerate(cases):
            for o in _outputs(c.fn(*_inputs(D.TABLE[name], c, seed=k))):
                if o.grad_fn is not None:
                    produced |= _node_names(o)
    for name, fn in NOT_IMPLEMENTED.items():
        produced |= _node_names(fn(testing.sample(D.TABLE[name].domain, (2, 2))))
    wanted = {e.node for e in D.TABLE.values() if e.differentiable}
    assert wanted <= produced, f"never recorded: {sorted(wanted - produced)}"


@pytest.mark.parametrize("alias", sorted(D.ALIASES))
def test_an_alias_is_its_target_wherever_the_target_is_bound(alias):
    from gradexpr.tensor import Tensor
    target = D.ALIASES[alias]
    places = [(space, getattr(space, target)) for space in (torch, F, torch.linalg, Tensor)
              if target in dir(space)]
    assert places, f"{alias}: its target {target} is bound nowhere"
    for space, bound in places:
        if alias in surface._TABLE_ALIASES:
            # bound from the table under its own name (its errors say ``arcsin()``, as PyTorch's do):
            # the same schema lines leading to the same entries
            def lines(name):
                return [(sig.line.partition("(")[2], sig.entry) for sig in surface.overloads(name).signatures]
            assert lines(alias.rstrip("_")) == lines(target.rstrip("_"))
            assert getattr(space, alias).__name__ == alias
        else:
            # the target's function, or (as PyTorch's aliases are functions of their own, printed under
            # their names) a copy of it: the same code over the same closure, defaults and attributes
            alias_fn = getattr(space, alias)
            assert alias_fn is bound or _same_function(alias_fn, bound)


def _same_function(a, b):
    cells = lambda f: [c.cell_contents for c in f.__closure__ or ()]
    return (type(a) is type(b) and a.__code__ is b.__code__ and a.__defaults__ == b.__defaults__
            and a.__kwdefaults__ == b.__kwdefaults__ and a.__dict__ == b.__dict__
            and all(x is y for x, y in zip(cells(a), cells(b))) and len(cells(a)) == len(cells(b)))
