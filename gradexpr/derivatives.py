"""The op table: gradexpr's counterpart of PyTorch's ``tools/autograd/derivatives.yaml``.

One entry per op: its name, PyTorch's node name, the NumPy forward, and a backward
formula for each differentiable input written with Tensor operations — so the
backward pass is itself differentiable (``create_graph``, ``hessian``, grad of
grad). A formula's parameter names say what it reads (see ``op.py``). ``domain``
says where the tests may sample the op's inputs for a finite-difference check.

Formulas longer than an expression are named helpers just above the entries that
use them. Public signatures (``torch.sum(input, dim, keepdim)`` …) are in
``functions.py``; they choose an entry (an overload) and pass its parameters.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from . import dtypes, errors
from . import corner_grads, reduction_order
from .exact import fma
from .graph import NOT_IMPLEMENTED_NODE, is_grad_enabled, may_expand_lazily
from .op import NOT_DIFFERENTIABLE, NotDifferentiable, Op
from .tensor import Tensor

TABLE: dict[str, Op] = {}


def op(name, node, forward, inputs=("self",), **kw):
    """Add one entry to the table (and return it for the functions that dispatch to it)."""
    grads = {k: kw.pop(k) for k in list(kw) if k in inputs or "*" + k in inputs}
    entry = Op(name, node, forward, inputs, grads, **kw)
    TABLE[name] = entry
    return entry


def _F():
    from . import functions
    return functions


def _NN():
    from . import nn_functional
    return nn_functional


def _apply(entry, args, params=None):
    from .op import apply
    return apply(entry, args, params or {})


# ============================================================ numpy helpers
def _ew(fn):
    """An elementwise forward (floating-point warnings are off engine-wide, see op.py)."""
    return fn


def _np_mean(a, axis=None, keepdims=False, dtype=None):
    """NumPy's mean in the input's precision; an empty reduction is nan (without NumPy's warning)."""
    n = a.size if axis is None else int(np.prod([a.shape[d] for d in axis], dtype=np.int64))
    if n == 0:
        return np.full(np.sum(a, axis=axis, keepdims=keepdims).shape, np.nan, a.dtype)
    return reduction_order.torch_mean(a, axis, keepdims)


def _scalar_like(value, a):
    return np.asarray(value, a.dtype) if a.dtype.kind == "f" else value


def _lerp(a, b, weight):
    """PyTorch's lerp: start + w (end - start) for |w| < 0.5, else end - (1 - w)(end - start), fused."""
    w = np.asarray(weight, a.dtype)
    small = np.abs(w) < 0.5
    return fma(np.where(small, w, w - 1), b - a, np.where(small, a, b)).astype(a.dtype)


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        return tuple(d % max(ndim, 1) for d in dim) if ndim else ()
    return (dim % max(ndim, 1),) if ndim else ()


def _restore(grad, shape, dim, keepdim):
    """Re-insert the reduced dimensions of ``grad`` so it broadcasts against an input of ``shape``."""
    if keepdim or dim is None or len(shape) == 0:
        return grad if dim is not None or grad.dim() == len(shape) else grad.reshape((1,) * len(shape))
    for d in sorted(_dims(dim, len(shape))):
        grad = grad.unsqueeze(d)
    return grad


_CAP = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
        "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _kernel(kernel, base="first", refuse="b"):
    """A dtype rule for an op PyTorch has no CPU kernel for on some input dtypes (``refuse``: "b" bool,
    "iu" integers): PyTorch's ``NotImplementedError: "<kernel>" not implemented for 'Bool'``, else
    the ``base`` rule ("first": the input's dtype; "float": promoted, integers to the default float)."""
    def rule(ts, params):
        d = ts[0]._dtype
        if np.dtype(d.np).kind in refuse:
            name = kernel(ts, params) if callable(kernel) else kernel
            raise errors.NotImplementedError(f'"{name}" not implemented for \'{_CAP[d.name]}\'')
        if base == "first":
            return None, d
        out = dtypes.result_type(ts)
        if base == "float" and out.category != 2:
            out = dtypes.default_float
        return out, out
    return rule


def _floating_only(message):
    """A dtype rule for ops defined on floating tensors only: PyTorch's RuntimeError otherwise."""
    def rule(ts, params):
        d = ts[0]._dtype
        if d.category != 2:
            raise errors.RuntimeError(message.format(_CAP[d.name]))
        return d, d
    return rule


_NOT_FLOAT = "biu"

# ============================================================ elementwise arithmetic
add = op("add", "AddBackward0",
         _ew(lambda a, b, alpha=1: a + b if alpha == 1 else fma(b, _scalar_like(alpha, a), a)),
         ("self", "other"),
         self=lambda grad: grad,
         other=lambda grad, alpha=1: grad if alpha == 1 else grad * alpha,
         domain="real")
sub = op("sub", "SubBackward0", _ew(lambda a, b, alpha=1: a - b if alpha == 1 else fma(b, _scalar_like(-alpha, a), a)),
         ("self", "other"),
         self=lambda grad: grad,
         other=lambda grad, alpha=1: -grad if alpha == 1 else -grad * alpha,
         domain="real")
rsub = op("rsub", "RsubBackward1", _ew(lambda a, b, alpha=1: b - a if alpha == 1 else fma(a, _scalar_like(-alpha, a), b)),
          ("self", "other"),
          self=lambda grad, alpha=1: -grad if alpha == 1 else -grad * alpha,
          domain="real")
rsub_tensor = op("rsub_tensor", "RsubBackward0",
                 _ew(lambda a, b, alpha=1: b - a if alpha == 1 else fma(a, _scalar_like(-alpha, a), b)),
                 ("self", "other"),
                 self=lambda grad, alpha=1: -grad if alpha == 1 else -grad * alpha,
                 other=lambda grad: grad, domain="real")
mul = op("mul", "MulBackward0", _ew(np.multiply), ("self", "other"),
         self=lambda grad, other: grad * other,
         other=lambda grad, self: grad * self,
         domain="real")
div = op("div", "DivBackward0", _ew(np.true_divide), ("self", "other"),
         self=lambda grad, other: grad / other,
         other=lambda grad, self, other: -grad * ((self / other) / other),
         dtype="float", domain="nonzero_other")
# Scalar overloads, as ATen's own composites call them (``loss * 0.5`` in C++ is mul.Scalar):
mul_scalar = op("mul_scalar", "MulBackward1", lambda a, other: a * np.asarray(other, a.dtype),
                self=lambda grad, other: grad * other, dtype="first", domain="real")
div_scalar = op("div_scalar", "DivBackward1", lambda a, other: a / np.asarray(other, a.dtype),
                self=lambda grad, other: grad / other, dtype="first", domain="real")


def _check_int_divisor(a, b):
    """Integer division by zero is an error in PyTorch (floats give inf/nan)."""
    if a.dtype.kind in "iub" and b.dtype.kind in "iub" and not np.all(b):
        raise errors.RuntimeError("ZeroDivisionError")


def _not_implemented(name):
    """An input PyTorch records a ``NotImplemented`` node for: asking its gradient fails."""
    return NotDifferentiable(f"derivative for aten::{name} is not implemented")


def _div_mode(a, b, rounding_mode):
    _check_int_divisor(a, b)
    with np.errstate(all="ignore"):
        if rounding_mode == "floor":
            return np.floor_divide(a, b) if a.dtype.kind != "f" else np.floor(a / b)
        if a.dtype.kind != "f":
            q = np.abs(a) // np.abs(b)
            return np.where((a < 0) ^ (b < 0), -q, q).astype(a.dtype)
        return np.trunc(a / b)


div_mode = op("div_mode", "DivBackward2", _div_mode, ("self", "other"),
              self=lambda grad: grad * 0, other=lambda grad: grad * 0, domain="real")
floor_divide = op("floor_divide", NOT_IMPLEMENTED_NODE, lambda a, b: _div_mode(a, b, "floor"), ("self", "other"),
                  self=_not_implemented("floor_divide"), other=_not_implemented("floor_divide"),
                  dtype=_kernel("div_floor_cpu", "promote"), domain="real", broadcast=True)


def _remainder(a, b):
    """Python's modulus with C's signed zero: fmod, moved into the divisor's sign (as PyTorch)."""
    _check_int_divisor(a, b)
    if a.dtype.kind != "f":
        return np.mod(a, b)
    m = np.fmod(a, b)
    return np.where((m != 0) & ((m < 0) != (b < 0)), m + b, m)


def _fmod(a, b):
    _check_int_divisor(a, b)
    return np.fmod(a, b)


remainder = op("remainder", "RemainderBackward0", _remainder, ("self", "other"),
               self=lambda grad: grad,
               dtype=_kernel("remainder_cpu", "promote"), domain="real", broadcast=True)
remainder_tensor = op("remainder_tensor", "RemainderBackward1", _remainder, ("self", "other"),
                      self=lambda grad: grad,
                      other=lambda grad, self, other: -grad * self.div(other, rounding_mode="floor"),
                      dtype=remainder.dtype, domain="positive", broadcast=True)
remainder_scalar_self = op("remainder_scalar_self", NOT_IMPLEMENTED_NODE, _remainder, ("self", "other"),
                           other=_not_implemented("remainder"), domain="positive")
fmod = op("fmod", "FmodBackward0", _fmod, ("self", "other"), self=lambda grad: grad, domain="real",
          dtype=_kernel("fmod_cpu", "promote"), broadcast=True)
fmod_tensor = op("fmod_tensor", "FmodBackward1", _fmod, ("self", "other"),
                 self=lambda grad: grad,
                 other=lambda grad, self, other: -grad * self.div(other, rounding_mode="trunc"),
                 dtype=fmod.dtype, domain="positive", broadcast=True)
neg = op("neg", "NegBackward0", np.negative, self=lambda grad: -grad, domain="real")


def _pow_forward(a, b):
    if a.dtype.kind == "b" and b.dtype.kind == "b":
        raise errors.NotImplementedError('"pow" not implemented for \'Bool\'')
    with np.errstate(all="ignore"):
        if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b < 0):
            # integer powers with negative exponents as PyTorch's powi: 1 and -1 keep a value, others give 0
            safe = np.where(b < 0, 0, b)
            r = np.power(a, safe)
            inv = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0)).astype(r.dtype)
            return np.where(b < 0, inv, r)
        return np.power(a, b)


def _pow_self(grad, self, exponent):
    if isinstance(exponent, (int, float)) and exponent == 0:
        return grad * 0
    if exponent == 2 and not is_grad_enabled():
        return _square_grad(grad, self)
    return grad * (exponent * self.pow(exponent - 1))


def _square_grad(grad, self):
    """PyTorch's ``grad * (2 * self.pow(1))`` for ``self ** 2`` when no graph is recorded, with fewer
    passes over memory: 2·x is exact, so ``grad * (self * 2)`` has the same value, and a uniform grad
    (a mean's or sum's, expanded) of the same shape is doubled first, ``self * (2·g)``, one pass."""
    data = grad._data
    if data.shape == self._data.shape and data.size > 1 and not any(data.strides):
        g2 = grad[(0,) * data.ndim] * 2
        if np.isfinite(g2._data):
            return self * g2
    return grad * (self * 2)


def _pow_scalar_forward(a, exponent):
    if exponent == 2 and a.dtype.kind == "f":
        return a * a                    # PyTorch's kernel for x ** 2 (one pass, exact as x * x)
    if a.dtype.kind == "f" and exponent in _POW_SPECIAL:
        with np.errstate(all="ignore"):
            return _POW_SPECIAL[exponent](a)
    return _pow_forward(a, np.asarray(exponent, a.dtype))


# PyTorch's pow kernel special-cases these exponents (PowKernel.cpp), so their roundings differ from pow()
_POW_SPECIAL = {3: lambda a: a * a * a, -2: lambda a: a.dtype.type(1) / (a * a), 0.5: np.sqrt,
                -0.5: lambda a: a.dtype.type(1) / np.sqrt(a), -1: lambda a: a.dtype.type(1) / a}


pow_scalar = op("pow_scalar", "PowBackward0", _pow_scalar_forward,
                self=_pow_self, domain="positive")


def _pow_exponent(grad, self, exponent, result):
    F = _F()
    return grad * F.where((self == 0) & (exponent >= 0), 0.0, result * self.log())


pow_tensor = op("pow_tensor", "PowBackward1", _pow_forward, ("self", "exponent"),
                self=lambda grad, self, exponent: grad * _F().where(exponent == 0.0, 0.0,
                                                                     exponent * self.pow(exponent - 1)),
                exponent=_pow_exponent, domain="positive")


def _rpow_exponent(grad, self, exponent, result):
    # self is the scalar base (a wrapped number), exponent the tensor
    base = self.item()
    if base == 0:
        return grad * _F().where(exponent >= 0, 0.0, result * math.log(base) if base > 0 else result * 0)
    return grad * (result * math.log(base)) if base > 0 else grad * (result * float("nan"))


pow_rscalar = op("pow_rscalar", "PowBackward2", _pow_forward, ("self", "exponent"),
                 exponent=_rpow_exponent, domain="real")

# ============================================================ unary math
_F_ = "float"
abs_ = op("abs", "AbsBackward0", np.abs, self=lambda grad, self: grad * self.sign(), domain="nonzero",
          dtype=_kernel("abs_cpu"))
def _sign(a):
    """(0 < a) - (a < 0): nan has sign 0, as in PyTorch; bool is its own sign."""
    if a.dtype.kind == "b":
        return a.copy()
    return ((a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)).astype(a.dtype)


sign = op("sign", "SignBackward0", _sign, self=corner_grads.zero_grad, domain="real")
sgn = op("sgn", "SgnBackward0", _sign, self=lambda grad: grad * 0, domain="real")
sqrt = op("sqrt", "SqrtBackward0", _ew(np.sqrt), self=lambda grad, result: grad / (2 * result),
          dtype=_F_, domain="positive")
rsqrt = op("rsqrt", "RsqrtBackward0", _ew(lambda a: 1 / np.sqrt(a)),
           self=lambda grad, result: -0.5 * grad * result.pow(3), dtype=_F_, domain="positive")
exp = op("exp", "ExpBackward0", _ew(np.exp), self=lambda grad, result: grad * result, dtype=_F_, domain="real")
exp2 = op("exp2", "Exp2Backward0", _ew(np.exp2), self=lambda grad, result: grad * (result * math.log(2.0)),
          dtype=_F_, domain="real")
expm1 = op("expm1", "Expm1Backward0", _ew(np.expm1), self=lambda grad, result: grad * (result + 1),
           dtype=_F_, domain="real")
log = op("log", "LogBackward0", _ew(np.log), self=lambda grad, self: grad / self, dtype=_F_, domain="positive")
log2 = op("log2", "Log2Backward0", _ew(np.log2), self=lambda grad, self: grad / (self * math.log(2.0)),
          dtype=_F_, domain="positive")
log10 = op("log10", "Log10Backward0", _ew(np.log10), self=lambda grad, self: grad / (self * math.log(10.0)),
           dtype=_F_, domain="positive")
log1p = op("log1p", "Log1PBackward0", _ew(np.log1p), self=lambda grad, self: grad / (self + 1),
           dtype=_F_, domain="positive")
sin = op("sin", "SinBackward0", _ew(np.sin), self=lambda grad, self: grad * self.cos(), dtype=_F_, domain="real")
cos = op("cos", "CosBackward0", _ew(np.cos), self=lambda grad, self: grad * -self.sin(), dtype=_F_,
         domain="real")
tan = op("tan", "TanBackward0", _ew(np.tan), self=lambda grad, result: grad * (1 + result.pow(2)), dtype=_F_,
         domain="unit")
asin = op("asin", "AsinBackward0", _ew(np.arcsin), self=lambda grad, self: grad * (-self * self + 1).rsqrt(),
          dtype=_F_, domain="unit")
acos = op("acos", "AcosBackward0", _ew(np.arccos), self=lambda grad, self: grad * -((-self * self + 1).rsqrt()),
          dtype=_F_, domain="unit")
atan = op("atan", "AtanBackward0", _ew(np.arctan), self=lambda grad, self: grad / (self * self + 1), dtype=_F_,
          domain="real")
sinh = op("sinh", "SinhBackward0", _ew(np.sinh), self=lambda grad, self: grad * self.cosh(), dtype=_F_,
          domain="real")
cosh = op("cosh", "CoshBackward0", _ew(np.cosh), self=lambda grad, self: grad * self.sinh(), dtype=_F_,
          domain="real")
tanh = op("tanh", "TanhBackward0", _ew(np.tanh), self=lambda grad, result: grad * (1 - result * result),
          dtype=_F_, domain="real")


def _sigmoid(a):
    # PyTorch's kernel is 1 / (1 + exp(-a)) in the input's precision (so float32 sigmoid(-100) is 0)
    one = a.dtype.type(1)
    return (one / (one + np.exp(-a))).astype(a.dtype)


sigmoid = op("sigmoid", "SigmoidBackward0", _sigmoid, self=lambda grad, result: grad * (result * (1 - result)),
             dtype=_F_, domain="real")
def _relu(a):
    if a.dtype.kind == "b":
        raise errors.RuntimeError("Boolean inputs not supported for relu")
    # PyTorch's x < 0 ? 0 : x (so relu(-0.) is -0., nan stays nan), as maximum and a copy of the zeros:
    # ten times faster than np.where
    if a.ndim == 0:
        return np.where(a < 0, a.dtype.type(0), a)
    r = np.maximum(a, a.dtype.type(0))
    np.copyto(r, a, where=(a == 0))
    return r


relu = op("relu", "ReluBackward0", _relu,
          self=corner_grads.relu_grad, dtype="first", domain="nonzero")
reciprocal = op("reciprocal", "ReciprocalBackward0", _ew(np.reciprocal),
                self=lambda grad, result: -grad * (result * result), dtype=_F_, domain="nonzero")


def _erf(a):
    # Abramowitz–Stegun is not accurate enough; use the vectorised math.erf over float64.
    flat = np.fromiter((math.erf(v) for v in a.astype(np.float64).ravel()), np.float64, a.size)
    return flat.reshape(a.shape).astype(a.dtype)


erf = op("erf", "ErfBackward0", _erf, self=lambda grad, self: grad * (2 / math.sqrt(math.pi)) * (-self * self).exp(),
         dtype=_F_, domain="real")
floor = op("floor", "FloorBackward0", np.floor, self=corner_grads.zero_grad, dtype=_kernel("floor_vml_cpu"),
           domain="real")
ceil = op("ceil", "CeilBackward0", np.ceil, self=corner_grads.zero_grad, dtype=_kernel("ceil_vml_cpu"),
          domain="real")
trunc = op("trunc", "TruncBackward0", np.trunc, self=corner_grads.zero_grad, dtype=_kernel("trunc_vml_cpu"),
           domain="real")
frac = op("frac", "FracBackward0", lambda a: a - np.trunc(a), self=lambda grad: grad,
           dtype=_kernel("frac_cpu", refuse=_NOT_FLOAT),
          domain="real")


def _round(a, decimals=0):
    if a.dtype.kind != "f":
        return a
    if decimals == 0:
        return np.round(a)
    with np.errstate(all="ignore"):
        s = a.dtype.type(10.0 ** decimals)
        return np.round(a * s) / s


round_ = op("round", "RoundBackward0", _round, self=corner_grads.zero_grad, dtype=_kernel("round_vml_cpu"),
             domain="real")
atan2 = op("atan2", "Atan2Backward0", _ew(np.arctan2), ("self", "other"),
           self=corner_grads.atan2_self_grad, other=corner_grads.atan2_other_grad,
           dtype=_F_, domain="real")


def _pick_grad(grad, mine, theirs, greater):
    # PyTorch's where(self == other, grad / 2, grad).masked_fill_(self loses, 0): a nan keeps grad
    F = _F()
    lose = (mine < theirs) if greater else (mine > theirs)
    return F.where(mine == theirs, grad / 2, F.where(lose, 0.0, grad))


maximum = op("maximum", "MaximumBackward0", np.maximum, ("self", "other"),
             self=lambda grad, self, other: _pick_grad(grad, self, other, True),
             other=lambda grad, self, other: _pick_grad(grad, other, self, True),
             domain="real")
minimum = op("minimum", "MinimumBackward0", np.minimum, ("self", "other"),
             self=lambda grad, self, other: _pick_grad(grad, self, other, False),
             other=lambda grad, self, other: _pick_grad(grad, other, self, False),
             domain="real")


def _lo(a, lo):
    """max(a, lo) as ATen's clamp kernels take it: comparisons rather than np.maximum, so -0. stays
    -0.; a nan in ``a`` stays nan, and a nan bound makes the result nan."""
    return np.asarray(np.where((a < lo) | (lo != lo), lo, a), a.dtype)


def _hi(a, hi):
    return np.asarray(np.where((a > hi) | (hi != hi), hi, a), a.dtype)


def _clamp(a, min=None, max=None):
    out = a
    if min is not None:
        out = _lo(out, a.dtype.type(min))
    if max is not None:
        out = _hi(out, a.dtype.type(max))
    return out


def _clamp_grad(grad, self, min=None, max=None):
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        m = self <= max
        mask = m if mask is None else mask & m
    return _F().where(mask, grad, 0.0)


clamp = op("clamp", "ClampBackward1", _clamp, self=_clamp_grad, dtype="first", domain="real")


def _clamp_t(a, lo, hi):
    a, lo, hi = np.broadcast_arrays(a, lo, hi)
    return _hi(_lo(a, lo), hi)


# clamp_min / clamp_max: their own ATen ops and nodes (ClampMin/ClampMaxBackward0 for a scalar
# bound, ...Backward1 for a tensor one); a nan bound gives nan and no gradient (self >= nan is false)
def _above_min(grad, self, min):
    return _F().where(self >= min, grad, 0.0)


def _below_max(grad, self, max):
    return _F().where(self <= max, grad, 0.0)


clamp_min = op("clamp_min", "ClampMinBackward0", lambda a, min: _lo(a, a.dtype.type(min)),
               self=_above_min, dtype="first", domain="real")
clamp_max = op("clamp_max", "ClampMaxBackward0", lambda a, max: _hi(a, a.dtype.type(max)),
               self=_below_max, dtype="first", domain="real")
clamp_min_tensor = op("clamp_min_tensor", "ClampMinBackward1", lambda a, lo: _lo(*np.broadcast_arrays(a, lo)),
                      ("self", "min"), self=_above_min,
                      min=lambda grad, self, min: _F().where(self < min, grad, 0.0), domain="real")
clamp_max_tensor = op("clamp_max_tensor", "ClampMaxBackward1", lambda a, hi: _hi(*np.broadcast_arrays(a, hi)),
                      ("self", "max"), self=_below_max,
                      max=lambda grad, self, max: _F().where(self > max, grad, 0.0), domain="real")


clamp_tensor = op("clamp_tensor", "ClampBackward0", _clamp_t, ("self", "min", "max"),
                  self=lambda grad, self, min, max: _F().where((self >= min) & (self <= max), grad, 0.0),
                  # where the bounds cross, the result is max: only max receives the gradient
                  min=lambda grad, self, min, max: _F().where((self < min) & (min < max), grad, 0.0),
                  max=lambda grad, self, min, max: _F().where((self > max) | (max < min), grad, 0.0),
                  domain="real")


def _where_dtypes(ts, params):
    d = dtypes.result_type(ts[1:])
    return d, d


where = op("where", "WhereBackward0", lambda c, a, b: np.where(c, a, b), ("condition", "self", "other"),
           self=lambda grad, condition: _F().where(condition, grad, 0.0),
           other=lambda grad, condition: _F().where(condition, 0.0, grad),
           dtype=_where_dtypes, cast=(1, 2), domain="where", broadcast=True)
lerp = op("lerp", "LerpBackward0", _lerp, ("self", "end"),
          self=lambda grad, weight: grad * (1 - weight),
          end=lambda grad, weight: grad * weight, domain="real")
lerp_tensor = op("lerp_tensor", "LerpBackward1", _lerp, ("self", "end", "weight"),
                 self=lambda grad, weight: grad * (1 - weight),
                 end=lambda grad, weight: grad * weight,
                 weight=lambda grad, self, end: grad * (end - self), domain="real")
masked_fill = op("masked_fill", "MaskedFillBackward0",
                 lambda a, mask, value: np.where(mask, np.asarray(value, a.dtype), a), ("self", "mask"),
                 self=lambda grad, mask: grad.masked_fill(mask, 0.0),
                 dtype="first", domain="mask")
masked_fill_tensor = op("masked_fill_tensor", "MaskedFillBackward1",
                        lambda a, mask, v: np.where(mask, v.astype(a.dtype), a), ("self", "mask", "value"),
                        self=lambda grad, mask: grad.masked_fill(mask, 0.0),
                        value=lambda grad, mask: _F().where(mask, grad, 0.0).sum(),
                        dtype="first", domain="mask")

# ------------------------------------------------------------ comparison and logic (not differentiable)
eq = op("eq", "EqBackward0", np.equal, ("self", "other"), dtype="compare")
ne = op("ne", "NeBackward0", np.not_equal, ("self", "other"), dtype="compare")
lt = op("lt", "LtBackward0", np.less, ("self", "other"), dtype="compare")
le = op("le", "LeBackward0", np.less_equal, ("self", "other"), dtype="compare")
gt = op("gt", "GtBackward0", np.greater, ("self", "other"), dtype="compare")
ge = op("ge", "GeBackward0", np.greater_equal, ("self", "other"), dtype="compare")
isnan = op("isnan", "", np.isnan, dtype="compare")
isinf = op("isinf", "", np.isinf, dtype="compare")
isfinite = op("isfinite", "", np.isfinite, dtype="compare")
logical_not = op("logical_not", "", np.logical_not, dtype="compare")
logical_and = op("logical_and", "", np.logical_and, ("self", "other"), dtype="compare")
logical_or = op("logical_or", "", np.logical_or, ("self", "other"), dtype="compare")
logical_xor = op("logical_xor", "", np.logical_xor, ("self", "other"), dtype="compare")


def _bitwise(name, fn):
    def forward(a, b=None):
        if a.dtype.kind == "f":
            kind = {"float32": "Float", "float64": "Double", "float16": "Half"}[a.dtype.name]
            raise errors.NotImplementedError(f'"{name}_cpu" not implemented for \'{kind}\'',
                                             hint="`^` is xor in Python and PyTorch; for a power write `**`"
                                             if name == "bitwise_xor" else None)
        return fn(a) if b is None else fn(a, b)
    return forward


bitwise_and = op("bitwise_and", "", _bitwise("bitwise_and", np.bitwise_and), ("self", "other"))
bitwise_or = op("bitwise_or", "", _bitwise("bitwise_or", np.bitwise_or), ("self", "other"))
bitwise_xor = op("bitwise_xor", "", _bitwise("bitwise_xor", np.bitwise_xor), ("self", "other"))
bitwise_not = op("bitwise_not", "", _bitwise("bitwise_not", np.invert))

# ============================================================ reductions
def _sum_dtype(ts, params):
    d = params.get("dtype") or ts[0]._dtype
    if d.category != 2:
        d = dtypes.int64
    return d, d


def _sum(a, dim=None, keepdim=False, dtype=None):
    return reduction_order.torch_sum(a, _dims(dim, a.ndim), keepdim)


sum_all = op("sum", "SumBackward0", lambda a, dtype=None: reduction_order.torch_sum(a),
             self=lambda grad, self_shape: grad.expand(self_shape), dtype=_sum_dtype, domain="real")
sum_dim = op("sum_dim", "SumBackward1", _sum,
             self=lambda grad, self_shape, dim, keepdim: _restore(grad, self_shape, dim, keepdim).expand(self_shape),
             dtype=_sum_dtype, domain="real")


def _mean_dtype(ts, params):
    d = params.get("dtype") or ts[0]._dtype
    if d.category != 2:
        raise errors.RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                                  f"point or complex dtype. Got: {_cap_name(d)}")
    return d, d


def _cap_name(d):
    return {"int64": "Long", "int32": "Int", "bool": "Bool", "int16": "Short", "int8": "Char",
            "uint8": "Byte"}.get(d.name, d.name)


def _numel(shape, dim=None):
    n = 1
    for i in (range(len(shape)) if dim is None else _dims(dim, len(shape))):
        n *= shape[i]
    return n


# (In a plain backward pass the mean's gradient is divided before it is expanded, a view instead
# of a full copy: the same values; see graph.may_expand_lazily.)
mean_all = op("mean", "MeanBackward0", lambda a, dtype=None: _np_mean(a),
              self=lambda grad, self_shape: (grad / _numel(self_shape)).expand(self_shape) if may_expand_lazily()
              else grad.expand(self_shape) / _numel(self_shape),
              dtype=_mean_dtype, domain="real")
mean_dim = op("mean_dim", "MeanBackward1",
              lambda a, dim=None, keepdim=False, dtype=None: _np_mean(a, axis=_dims(dim, a.ndim), keepdims=keepdim,
                                                                     dtype=a.dtype),
              self=lambda grad, self_shape, dim, keepdim:
              _restore(grad / _numel(self_shape, dim), self_shape, dim, keepdim).expand(self_shape)
              if may_expand_lazily() else
              _restore(grad, self_shape, dim, keepdim).expand(self_shape) / _numel(self_shape, dim),
              dtype=_mean_dtype, domain="real")


def _prod_grad(grad, self, result, dim=None, keepdim=False):
    # grad * prod(others): result / self where self != 0; with exactly one zero the zero's
    # gradient is the product of the others; with two or more zeros everything is zero.
    F = _F()
    shape = self.shape
    g = _restore(grad, shape, dim, keepdim) if dim is not None else grad
    r = _restore(result, shape, dim, keepdim) if dim is not None else result
    zero = self == 0
    nzeros = zero.sum() if dim is None else zero.sum(dim, keepdim=True)
    if not bool((nzeros > 0).any()):
        return g * (r / self)
    others = F.where(zero, 1.0, self)
    prod_others = others.prod() if dim is None else others.prod(dim, keepdim=True)
    at_zero = F.where(nzeros == 1, prod_others, 0.0)
    return g * F.where(zero, at_zero, F.where(nzeros > 0, 0.0, r / F.where(zero, 1.0, self)))


def _prod_dtype(ts, params):
    d = params.get("dtype") or ts[0]._dtype
    if d.category != 2:
        d = dtypes.int64
    return d, d


prod_all = op("prod", "ProdBackward0", lambda a, dtype=None: np.prod(a),
              self=lambda grad, self, result: _prod_grad(grad, self, result), dtype=_prod_dtype, domain="real")
prod_dim = op("prod_dim", "ProdBackward1",
              lambda a, dim, keepdim=False, dtype=None: np.prod(a, axis=dim, keepdims=keepdim),
              self=lambda grad, self, result, dim, keepdim: _prod_grad(grad, self, result, dim, keepdim),
              dtype=_prod_dtype, domain="real")


_evenly = corner_grads.evenly_distribute


def _check_nonempty(a, name):
    if a.size == 0:
        raise errors.RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                  "Specify the reduction dim with the 'dim' argument.")


def _max_all(a):
    _check_nonempty(a, "max")
    return np.max(a) if a.dtype.kind != "f" or not np.isnan(a).any() else np.array(np.nan, a.dtype)


def _min_all(a):
    _check_nonempty(a, "min")
    return np.min(a) if a.dtype.kind != "f" or not np.isnan(a).any() else np.array(np.nan, a.dtype)


max_all = op("max", "MaxBackward1", _max_all, self=_evenly, dtype="first", domain="distinct")
min_all = op("min", "MinBackward1", _min_all, self=_evenly, dtype="first", domain="distinct")


def _check_dims_nonempty(a, dim, name):
    """A reduction along a dim of size 0 has no value to pick: PyTorch's IndexError."""
    for d in (dim,) if isinstance(dim, int) else dim:
        if a.ndim and a.shape[d] == 0:
            raise errors.IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _index_reduce(fn, name):
    def forward(a, dim, keepdim=False):
        _check_dims_nonempty(a, dim, name)
        if a.ndim == 0:
            idx = np.zeros((), np.int64)
            return a.copy(), {"indices": idx}
        idx = fn(a, axis=dim, keepdims=True)
        vals = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            idx = np.squeeze(idx, axis=dim)
            vals = np.squeeze(vals, axis=dim)
        return vals, {"indices": idx.astype(np.int64)}
    return forward


def _value_selecting_grad(grad, self_shape, dim, keepdim, indices):
    F = _F()
    if len(self_shape) == 0:
        return grad
    g = grad if keepdim else grad.unsqueeze(dim)
    idx = indices if keepdim else indices.unsqueeze(dim)
    return F.zeros(self_shape, dtype=grad.dtype).scatter(dim, idx, g)


max_dim = op("max_dim", "MaxBackward0", _index_reduce(np.argmax, "max"),
             self=lambda grad, self_shape, dim, keepdim, indices:
             _value_selecting_grad(grad, self_shape, dim, keepdim, indices),
             dtype="first", domain="distinct")
min_dim = op("min_dim", "MinBackward0", _index_reduce(np.argmin, "min"),
             self=lambda grad, self_shape, dim, keepdim, indices:
             _value_selecting_grad(grad, self_shape, dim, keepdim, indices),
             dtype="first", domain="distinct")


def _amax_grad(grad, self, result, dim, keepdim):
    r = _restore(result, self.shape, dim, keepdim)
    g = _restore(grad, self.shape, dim, keepdim)
    mask = self == r
    return g * mask / mask.sum(dim, keepdim=True)


def _amax(fn, name):
    def forward(a, dim=(), keepdim=False):
        if a.size == 0 and dim == ():
            _check_nonempty(a, name)
        _check_dims_nonempty(a, dim, name)
        return fn(a, axis=_dims(None if dim == () else dim, a.ndim), keepdims=keepdim)
    return forward


amax = op("amax", "AmaxBackward0", _amax(np.amax, "amax"),
          self=lambda grad, self, result, dim, keepdim: _amax_grad(grad, self, result, None if dim == () else dim, keepdim),
          dtype="first", domain="distinct")
amin = op("amin", "AminBackward0", _amax(np.amin, "amin"),
          self=lambda grad, self, result, dim, keepdim: _amax_grad(grad, self, result, None if dim == () else dim, keepdim),
          dtype="first", domain="distinct")


def _arg(fn, name):
    def forward(a, dim=None, keepdim=False):
        if a.dtype.kind == "b":
            raise errors.RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if a.size == 0:
                raise errors.IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            r = fn(a)
            return np.asarray(r, np.int64).reshape((1,) * a.ndim if keepdim else ())
        _check_dims_nonempty(a, dim, name)
        return np.asarray(fn(a, axis=dim, keepdims=keepdim), np.int64)
    return forward


argmax = op("argmax", "", _arg(np.argmax, "argmax"), dtype="keep")
argmin = op("argmin", "", _arg(np.argmin, "argmin"), dtype="keep")


def _var(a, dim=None, correction=1, keepdim=False):
    axis = _dims(dim, a.ndim)
    n = _numel(a.shape, dim)
    with np.errstate(all="ignore"):
        m = _np_mean(a, axis=axis, keepdims=True)
        s = np.sum((a - m) ** 2, axis=axis, keepdims=keepdim)
        # ATen divides by max(0, n - correction): inf where the sum of squares is positive, nan where 0
        return np.asarray(s / max(n - correction, 0), a.dtype)


def _var_grad(grad, self, dim, correction, keepdim):
    n = _numel(self.shape, dim)
    g = _restore(grad, self.shape, dim, keepdim)
    mean = self.mean(dim, keepdim=True) if dim is not None else self.mean()
    scale = 2.0 / (n - correction) if n != correction else math.inf      # inf * 0 = nan, as PyTorch
    return scale * g * (self - mean)


var = op("var", "VarBackward0", _var, self=_var_grad,
         dtype=_floating_only("std and var only support floating point and complex dtypes"), domain="real")


def _std(a, dim=None, correction=1, keepdim=False):
    with np.errstate(all="ignore"):
        return np.sqrt(_var(a, dim, correction, keepdim))


def _std_grad(grad, self, result, dim, correction, keepdim):
    F = _F()
    g = F.where(result == 0, 0.0, grad / (result * 2))
    return _var_grad(g, self, dim, correction, keepdim)


std = op("std", "StdBackward0", _std, self=_std_grad, dtype=var.dtype, domain="real")


def _mean_part(a, dim=None, correction=1, keepdim=False):
    return np.asarray(_np_mean(a, axis=_dims(dim, a.ndim), keepdims=keepdim))


def _mean_grad(grad, self_shape, dim=None, keepdim=False):
    return _restore(grad, self_shape, dim, keepdim).expand(self_shape) / _numel(self_shape, dim)


# var_mean / std_mean: PyTorch records one node with two outputs; here each output has its own
# node of the same name (the gradients are the same).
var_mean_var = op("var_mean_var", "VarMeanBackward0", _var, self=_var_grad, domain="real",
                  dtype=_floating_only("var_mean only support floating point and complex dtypes"))
var_mean_mean = op("var_mean_mean", "VarMeanBackward0", _mean_part, self=_mean_grad, dtype=var_mean_var.dtype,
                   domain="real")
std_mean_std = op("std_mean_std", "StdMeanBackward0", _std, self=_std_grad, domain="real",
                  dtype=_floating_only("std_mean only support floating point and complex dtypes"))
std_mean_mean = op("std_mean_mean", "StdMeanBackward0", _mean_part, self=_mean_grad, dtype=std_mean_std.dtype,
                   domain="real")


def _norm(a, ord=2.0, dim=None, keepdim=False, dtype=None):
    axis = _dims(dim, a.ndim)
    with np.errstate(all="ignore"):
        x = np.abs(a)
        if ord == 2:
            r = np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim))
        elif ord == 1:
            r = np.sum(x, axis=axis, keepdims=keepdim)
        elif ord == math.inf:
            r = np.amax(x, axis=axis, keepdims=keepdim) if x.size else np.zeros(())
        elif ord == -math.inf:
            r = np.amin(x, axis=axis, keepdims=keepdim)
        elif ord == 0:
            r = np.sum(x != 0, axis=axis, keepdims=keepdim)
        else:
            r = np.sum(x ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r, a.dtype)


def _norm_grad(grad, self, result, ord, dim, keepdim):
    F = _F()
    g = _restore(grad, self.shape, dim, keepdim)
    r = _restore(result, self.shape, dim, keepdim)
    if ord == 0:
        return None         # PyTorch leaves the gradient of the 0-"norm" undefined
    if ord == 1:
        return g * self.sign()
    if ord == 2:
        return g * F.where(r == 0, 0.0, self / r)
    if ord in (math.inf, -math.inf):
        mask = self.abs() == r
        return g * self.sign() * mask / mask.sum(dim, keepdim=True) if dim is not None else \
            g * self.sign() * mask / mask.sum()
    return g * self * self.abs().pow(ord - 2) / F.where(r == 0, 1.0, r.pow(ord - 1)) * (r != 0)


def _norm_dtype(ts, params, _check=_floating_only(
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}")):
    """A floating input, computed in ``dtype`` when one is given (``x.norm(dtype=torch.float64)``)."""
    d, _ = _check(ts, params)
    want = params.get("dtype")
    if want is not None and want is not d:
        if want.category != 2:
            raise errors.RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                                      f"{_CAP[want.name]}")
        if want.itemsize < d.itemsize:
            raise errors.RuntimeError(f"linalg.vector_norm: the dtype of the input ({_CAP[d.name]}) should be "
                                      f"convertible without narrowing to the specified dtype ({_CAP[want.name]})")
        d = want
    return d, d


norm = op("norm", "LinalgVectorNormBackward0", _norm,
          self=lambda grad, self, result, ord, dim, keepdim, dtype=None: _norm_grad(grad, self, result, ord, dim, keepdim),
          domain="nonzero", dtype=_norm_dtype)


def _logsumexp(a, dim, keepdim=False):
    axis = _dims(dim, a.ndim)
    with np.errstate(all="ignore"):
        m = np.amax(a, axis=axis, keepdims=True) if a.size else np.zeros((1,) * a.ndim, a.dtype)
        m = np.where(np.isfinite(m), m, 0)
        r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdim:
        r = np.squeeze(r, axis=axis)
    return np.asarray(r, a.dtype)


logsumexp = op("logsumexp", "LogsumexpBackward0", _logsumexp,
               self=lambda grad, self, result, dim, keepdim:
               _restore(grad, self.shape, dim, keepdim) * (self - _restore(result, self.shape, dim, keepdim)).exp(),
               dtype=_F_, domain="real")
cumsum = op("cumsum", "CumsumBackward0", lambda a, dim, dtype=None: reduction_order.torch_cumsum(a, dim),
            self=lambda grad, dim: grad.flip(dim).cumsum(dim).flip(dim) if grad.dim() else grad,
            dtype=_sum_dtype, domain="real")


cumprod = op("cumprod", "CumprodBackward0", lambda a, dim, dtype=None: reduction_order.torch_cumprod(a, dim),
             self=corner_grads.cumprod_grad, dtype=_sum_dtype, domain="positive")
all_ = op("all", "", lambda a, dim=None, keepdim=False: np.all(a, axis=dim, keepdims=keepdim), dtype="keep")
any_ = op("any", "", lambda a, dim=None, keepdim=False: np.any(a, axis=dim, keepdims=keepdim), dtype="keep")

# ============================================================ linear algebra
mm = op("mm", "MmBackward0", np.matmul, ("self", "mat2"),
        self=lambda grad, mat2: grad.mm(mat2.t()),
        mat2=lambda grad, self: self.t().mm(grad),
        dtype=_kernel("addmm_impl_cpu_", "promote"), domain="matrices", broadcast=False)
bmm = op("bmm", "BmmBackward0", np.matmul, ("self", "mat2"),
         self=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
         mat2=lambda grad, self: self.transpose(1, 2).bmm(grad),
         dtype=_kernel("bmm", "promote"), domain="batched", broadcast=False)
mv = op("mv", "MvBackward0", np.matmul, ("self", "vec"),
        self=lambda grad, vec: _F().outer(grad, vec),
        vec=lambda grad, self: self.t().mv(grad),
        dtype=_kernel("addmv_impl_cpu", "promote"), domain="matvec", broadcast=False)
dot = op("dot", "DotBackward0", lambda a, b: np.asarray(np.dot(a, b)), ("self", "tensor"),
         self=lambda grad, tensor: grad * tensor,
         tensor=lambda grad, self: grad * self, dtype=_kernel("dot", "promote"), domain="vectors", broadcast=False)
addmm = op("addmm", "AddmmBackward0", lambda c, a, b, beta=1, alpha=1: c * beta + (a @ b) * alpha,
           ("self", "mat1", "mat2"),
           self=lambda grad, beta=1: grad if beta == 1 else grad * beta,
           mat1=lambda grad, mat2, alpha=1: grad.mm(mat2.t()) if alpha == 1 else grad.mm(mat2.t()) * alpha,
           mat2=lambda grad, mat1, alpha=1: mat1.t().mm(grad) if alpha == 1 else mat1.t().mm(grad) * alpha,
           domain="addmm", broadcast=False)


def _det(a):
    """PyTorch's linalg.det: an LU factorisation with partial pivoting (LAPACK getrf: the first
    largest |pivot|, the column scaled by the pivot's reciprocal), then the sign of the row swaps
    times the product of U's diagonal. (np.linalg.det goes through exp(log|det|), which is not
    exact where PyTorch is: det([[2., 1.], [1., 3.]]) in float64 is 5.000000000000001.) This
    reproduces MKL's result bit for bit on most inputs, not all (its small-matrix kernels)."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    with np.errstate(all="ignore"):
        # ATen hands LAPACK the row-major A as a column-major matrix: it factors A^T (same det)
        A = np.array(np.swapaxes(a, -1, -2), dtype=a.dtype).reshape((int(np.prod(batch, dtype=np.int64)), n, n))
        sign = np.ones(A.shape[0], a.dtype)
        rows = np.arange(A.shape[0])
        for k in range(n):
            p = np.argmax(np.abs(A[:, k:, k]), axis=1) + k
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
        d = sign
        for k in range(n):
            d = d * A[:, k, k]
        return np.asarray(d.reshape(batch), a.dtype)


det = op("det", "LinalgDetBackward0", _det, ("A",),
         A=lambda grad, A, result: (grad * result).unsqueeze(-1).unsqueeze(-1) * A.inverse().mT,
         dtype=_floating_only("linalg.det: Expected a floating point or complex tensor as input. Got {}"),
         domain="square")


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
             A=lambda grad, result: -(result.mT @ grad @ result.mT), domain="square",
             dtype=_floating_only("linalg.inv: Expected a floating point or complex tensor as input. Got {}"))


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
             dtype=_F_, domain="matrix", twice=False)
trace = op("trace", "TraceBackward0", lambda a: np.asarray(np.trace(a)),
           self=lambda grad, self_shape: grad * _F().eye(self_shape[0], self_shape[1], dtype=grad.dtype),
           dtype=_sum_dtype, domain="matrix")

# ============================================================ shape and views
view = op("view", "ViewBackward0", lambda a, shape: a.view().reshape(shape), dtype="first", view=True,
          self=lambda grad, self_shape: grad.reshape(self_shape), domain="real")
reshape_alias = op("reshape_alias", "ReshapeAliasBackward0", lambda a, shape: a.view().reshape(shape),
                   self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True, domain="real")
unsafe_view = op("unsafe_view", "UnsafeViewBackward0", lambda a, shape: a.reshape(shape), dtype="first",
                 self=lambda grad, self_shape: grad.reshape(self_shape), domain="real")
t = op("t", "TBackward0", lambda a: a.T, self=lambda grad: grad.t(), dtype="first", view=True, domain="matrix")
transpose = op("transpose", "TransposeBackward0",
               lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1) if a.ndim else a.view(),    # 0-d: itself
               self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1), dtype="first", view=True,
               domain="matrix")
permute = op("permute", "PermuteBackward0", lambda a, dims: np.transpose(a, dims),
             self=lambda grad, dims: grad.permute(tuple(int(i) for i in np.argsort(dims))), dtype="first",
             view=True, domain="matrix")
squeeze = op("squeeze", "SqueezeBackward0", lambda a: np.squeeze(a),
             self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True, domain="real")
squeeze_dim = op("squeeze_dim", "SqueezeBackward1",
                 lambda a, dim: np.squeeze(a, axis=dim) if a.ndim and a.shape[dim] == 1 else a.view(),
                 self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True, domain="real")
squeeze_dims = op("squeeze_dims", "SqueezeBackward2",
                  lambda a, dims: np.squeeze(a, axis=tuple(d for d in dims if a.shape[d] == 1)) if a.ndim else a.view(),
                  self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True, domain="real")
squeeze_inplace_dim = op("squeeze_inplace_dim", "SqueezeBackward4",
                         lambda a, dim: np.squeeze(a, axis=dim) if a.ndim and a.shape[dim] == 1 else a.view(),
                         self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True,
                         domain="real")
unsqueeze = op("unsqueeze", "UnsqueezeBackward0", lambda a, dim: np.expand_dims(a, dim),
               self=lambda grad, dim: grad.squeeze(dim), dtype="first", view=True, domain="real")
# the in-place view ops (t.t_(), t.squeeze_() …): the tensor itself takes the new shape; PyTorch's
# overloads of the same formulas (TBackward1 …). squeeze_(dim) is squeeze_inplace_dim above.
t_inplace = op("t_inplace", "TBackward1", lambda a: a.T, self=lambda grad: grad.t(), dtype="first", view=True,
               domain="matrix")
transpose_inplace = op("transpose_inplace", "TransposeBackward1", lambda a, dim0, dim1: np.swapaxes(a, dim0, dim1),
                       self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1), dtype="first", view=True,
                       domain="matrix")
unsqueeze_inplace = op("unsqueeze_inplace", "UnsqueezeBackward1", lambda a, dim: np.expand_dims(a, dim),
                       self=lambda grad, dim: grad.squeeze(dim), dtype="first", view=True, domain="real")
squeeze_inplace = op("squeeze_inplace", "SqueezeBackward3", lambda a: np.squeeze(a),
                     self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True, domain="real")
squeeze_inplace_dims = op("squeeze_inplace_dims", "SqueezeBackward5",
                          lambda a, dims: np.squeeze(a, axis=tuple(d for d in dims if a.shape[d] == 1)) if a.ndim
                          else a.view(),
                          self=lambda grad, self_shape: grad.reshape(self_shape), dtype="first", view=True,
                          domain="real")
expand = op("expand", "ExpandBackward0", lambda a, shape: np.broadcast_to(a, shape),
            self=lambda grad, self_shape: grad.sum_to_size(self_shape), dtype="first", view=True, domain="real")


def _repeat_grad(grad, self_shape, repeats):
    lead = len(repeats) - len(self_shape)
    shape = (1,) * lead + tuple(self_shape)
    split = []
    for r, s in zip(repeats, shape):
        split += [r, s]
    g = grad.reshape(tuple(split))
    return g.sum(tuple(range(0, 2 * len(shape), 2))).reshape(self_shape)


repeat = op("repeat", "RepeatBackward0",
            lambda a, repeats: np.tile(a.reshape((1,) * (len(repeats) - a.ndim) + a.shape), repeats),
            self=_repeat_grad, dtype="first", domain="real")


def _cat_dtypes(ts, params):
    d = params.get("dtype") or dtypes.result_type(ts)
    return d, d


def _cat_forward(*arrays, dim=0, dtype=None):
    return np.concatenate(arrays, axis=dim)


def _cat_grad(grad, tensors_shape, dim):
    out, offset = [], 0
    for shape in tensors_shape:
        if len(shape) == 1 and shape[0] == 0 and grad.dim() > 1:
            out.append(None)
            continue
        size = shape[dim]
        out.append(grad.narrow(dim, offset, size))
        offset += size
    return out


cat = op("cat", "CatBackward0", _cat_forward, ("*tensors",), tensors=_cat_grad, dtype=_cat_dtypes,
         domain="list")
stack = op("stack", "StackBackward0", lambda *arrays, dim=0: np.stack(arrays, axis=dim), ("*tensors",),
           tensors=lambda grad, tensors_shape, dim: [grad.select(dim, i) for i in range(len(tensors_shape))],
           dtype=_cat_dtypes, domain="list")


def _slice(a, dim, start, end, step=1):
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(start, end, step)
    return a[tuple(idx)]


def _slice_grad(grad, self_shape, dim, start, end, step=1):
    return grad.new_zeros(self_shape)._slice_scatter(grad, dim, start, end, step)


narrow = op("narrow", "SliceBackward0", _slice, self=_slice_grad, dtype="first", view=True, domain="real")
split_part = op("split", "SplitBackward0", _slice, self=_slice_grad, dtype="first", view=True, domain="real")
split_sizes_part = op("split_with_sizes", "SplitWithSizesBackward0", _slice, self=_slice_grad, dtype="first",
                      view=True, domain="real")
slice_scatter = op("slice_scatter", "SliceScatterBackward0",
                   lambda a, src, dim, start, end, step=1: _scatter_slice(a, src, dim, start, end, step),
                   ("self", "src"),
                   self=lambda grad, dim, start, end, step=1: grad._slice_scatter(
                       grad.new_zeros(_slice_shape(grad.shape, dim, start, end, step)), dim, start, end, step),
                   src=lambda grad, dim, start, end, step=1: grad.narrow_step(dim, start, end, step),
                   dtype="promote", domain="real", broadcast=False)


def _slice_shape(shape, dim, start, end, step):
    shape = list(shape)
    shape[dim] = len(range(*slice(start, end, step).indices(shape[dim])))
    return tuple(shape)


def _scatter_slice(a, src, dim, start, end, step):
    out = a.copy()
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(start, end, step)
    out[tuple(idx)] = src
    return out


def _select(a, dim, index):
    return a[(slice(None),) * dim + (index, Ellipsis)]      # the Ellipsis keeps a 0-d result a view


def _select_grad(grad, self_shape, dim, index):
    return grad.new_zeros(self_shape)._select_scatter(grad, dim, index)


select = op("select", "SelectBackward0", _select, self=_select_grad, dtype="first", view=True, domain="real")
unbind_part = op("unbind", "UnbindBackward0", _select, self=_select_grad, dtype="first", view=True,
                 domain="real")
select_scatter = op("select_scatter", "SelectScatterBackward0",
                    lambda a, src, dim, index: _scatter_select(a, src, dim, index), ("self", "src"),
                    self=lambda grad, dim, index: grad._select_scatter(
                        grad.select(dim, index) * 0, dim, index),
                    src=lambda grad, dim, index: grad.select(dim, index), dtype="promote", domain="real",
                    broadcast=False)


def _scatter_select(a, src, dim, index):
    out = a.copy()
    out[(slice(None),) * dim + (index,)] = src
    return out


def _diagonal(a, offset=0, dim1=0, dim2=1):
    d = np.diagonal(a, offset, dim1, dim2)
    if a.flags.writeable:
        d.flags.writeable = True      # NumPy hands out a read-only view; PyTorch's diagonal can be written
    return d


def _diagonal_grad(grad, self_shape, offset=0, dim1=0, dim2=1):
    return grad.new_zeros(self_shape)._diagonal_scatter(grad, offset, dim1, dim2)


diagonal = op("diagonal", "DiagonalBackward0", _diagonal, self=_diagonal_grad, dtype="first", view=True,
              domain="matrix")
diag_copy = op("diag_copy", "DiagonalBackward0_copy", lambda a, diagonal=0: np.diagonal(a, diagonal).copy(),
               self=lambda grad, self_shape, diagonal=0: _diagonal_grad(grad, self_shape, diagonal),
               dtype="first", domain="matrix")


def _diag_embed(a, offset=0, dim1=0, dim2=1):
    """The last dim of ``a`` laid on the ``offset`` diagonal of two new dims of size n + |offset|,
    which sit at ``dim1`` and ``dim2`` of the result (wrapped: 0 <= dim < a.ndim + 1)."""
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    rows = np.arange(a.shape[-1]) + max(-offset, 0)
    out[..., rows, rows + offset] = a
    return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (dim1, dim2)))


diag_embed = op("diag_embed", "DiagEmbedBackward0", _diag_embed,
                self=lambda grad, offset=0, dim1=0, dim2=1: grad.diagonal(offset, dim1, dim2), dtype="first",
                domain="real")


def _diag_scatter(a, src, offset, dim1, dim2):
    out = a.copy()
    d = np.diagonal(out, offset, dim1, dim2)
    d.setflags(write=True)
    d[...] = src
    return out


diagonal_scatter = op("diagonal_scatter", "DiagonalScatterBackward0", _diag_scatter, ("self", "src"),
                      self=lambda grad, offset, dim1, dim2: grad._diagonal_scatter(
                          grad.diagonal(offset, dim1, dim2) * 0, offset, dim1, dim2),
                      src=lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2),
                      dtype="promote", domain="matrix", broadcast=False)
index_select = op("index_select", "IndexSelectBackward0", lambda a, index, dim: np.take(a, index, axis=dim),
                  ("self", "index"),
                  self=lambda grad, self_shape, dim, index: grad.new_zeros(self_shape).index_add(dim, index, grad),
                  dtype="first", domain="index")
index_add = op("index_add", "IndexAddBackward0", lambda a, index, src, dim, alpha=1: _index_add(a, index, src, dim,
                                                                                                  alpha),
               ("self", "index", "source"),
               self=lambda grad: grad,
               source=lambda grad, index, dim, alpha=1: grad.index_select(dim, index) * alpha,
               dtype="first", domain="index")


def _index_add(a, index, src, dim, alpha):
    out = a.copy()
    moved = np.moveaxis(out, dim, 0)
    np.add.at(moved, index, np.moveaxis(src * alpha if alpha != 1 else src, dim, 0).astype(a.dtype))
    return out


def _gather(a, index, dim):
    if a.ndim == 0:
        return a.copy() if index.ndim == 0 else np.full(index.shape, a[()], a.dtype)
    # the index may be smaller than the input in the other dimensions: gather from that corner
    corner = tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(index.shape))
    return np.take_along_axis(a[corner], index, axis=dim)


gather = op("gather", "GatherBackward0", _gather, ("self", "index"),
            self=lambda grad, self_shape, dim, index: grad.new_zeros(self_shape).scatter_add(dim, index, grad),
            dtype="first", domain="index")


def _scatter(a, index, src, dim):
    out = a.copy()
    np.put_along_axis(out, index, src, axis=dim)
    return out


def _scatter_add(a, index, src, dim):
    out = a.copy()
    moved = np.moveaxis(out, dim, -1)
    idx = np.moveaxis(index, dim, -1)
    s = np.moveaxis(src[tuple(slice(0, n) for n in index.shape)], dim, -1)
    grids = np.indices(idx.shape[:-1])
    for k in range(idx.shape[-1]):
        sel = tuple(g for g in grids) + (idx[..., k],)
        np.add.at(moved, sel, s[..., k])
    return out


scatter = op("scatter", "ScatterBackward0", _scatter, ("self", "index", "src"),
             self=lambda grad, index, dim: grad.scatter(dim, index, 0.0),
             src=lambda grad, index, dim: grad.gather(dim, index),
             dtype="first", domain="index")
scatter_value = op("scatter_value", "ScatterBackward1",
                   lambda a, index, dim, value: _scatter(a, index, np.asarray(value, a.dtype), dim),
                   ("self", "index"),
                   self=lambda grad, index, dim: grad.scatter(dim, index, 0.0), dtype="first", domain="index")
scatter_add = op("scatter_add", "ScatterAddBackward0", _scatter_add, ("self", "index", "src"),
                 self=lambda grad: grad,
                 src=lambda grad, index, dim: grad.gather(dim, index),
                 dtype="first", domain="index")
flip = op("flip", "FlipBackward0", lambda a, dims: np.flip(a, dims).copy() if a.ndim else a.copy(),
          self=lambda grad, dims: grad.flip(dims), dtype="first", domain="real")
roll = op("roll", "RollBackward0", lambda a, shifts, dims: np.roll(a, shifts, dims) if dims is not None else
          np.roll(a.ravel(), shifts).reshape(a.shape),
          self=lambda grad, shifts, dims: grad.roll(tuple(-s for s in shifts) if isinstance(shifts, tuple)
                                                    else -shifts, dims),
          dtype="first", domain="real")
tril = op("tril", "TrilBackward0", lambda a, diagonal=0: np.tril(a, diagonal),
          self=lambda grad, diagonal=0: grad.tril(diagonal), dtype="first", domain="matrix")
triu = op("triu", "TriuBackward0", lambda a, diagonal=0: np.triu(a, diagonal),
          self=lambda grad, diagonal=0: grad.triu(diagonal), dtype="first", domain="matrix")
clone = op("clone", "CloneBackward0", lambda a: a.copy(), self=lambda grad: grad, dtype="first", domain="real")


def _to_dtype(ts, params):
    d = params["dtype"]
    return None, d


to_copy = op("to", "ToCopyBackward0", lambda a, dtype: a.astype(dtype.np),
             self=lambda grad, self_dtype: grad.to(self_dtype), dtype=_to_dtype, domain="real")
alias = op("alias", "AliasBackward0", lambda a: a.view(), self=lambda grad: grad, dtype="first", view=True,
           domain="real")


# in place: t.fill_(v) and t.zero_() (their overload numbers are the in-place ones)
fill_inplace = op("fill_inplace", "FillBackward2", lambda a, value: np.full(a.shape, value, a.dtype),
                  self=lambda grad: grad * 0, dtype="first", domain="real")
fill_tensor_inplace = op("fill_tensor_inplace", "FillBackward3", lambda a, v: np.full(a.shape, v, a.dtype),
                         ("self", "value"), self=lambda grad: grad * 0, value=lambda grad: grad.sum(),
                         dtype="first", domain="real", broadcast=False)
zero_inplace = op("zero_inplace", "ZeroBackward0", lambda a, value=0: np.zeros_like(a),
                  self=lambda grad: grad * 0, dtype="first", domain="real")


# ------------------------------------------------------------ indexing
def _getitem(a, index):
    out = a[index]
    if type(out) is not np.ndarray:      # NumPy gives a scalar for a full integer index: take a 0-d view
        out = a[index + (Ellipsis,)]
    return out


def _index_forward(a, index):
    """``a[index]`` for tensor (advanced) indices, laid out in memory as PyTorch's index kernel lays
    out its result, so ``is_contiguous()``, ``stride()`` and ``view`` answer as there."""
    out = a[index]
    order = _index_memory_order(a, index, out.shape)
    if order is None:
        out = np.ascontiguousarray(out)
        row_major = _row_major_strides(out)
        # NumPy calls an array contiguous whatever the strides of its size-1 dimensions; PyTorch
        # gives them the row-major value, which stride() shows
        return out if out.strides == row_major else np.lib.stride_tricks.as_strided(out, strides=row_major)
    buf = np.empty([out.shape[d] for d in order], out.dtype)
    laid = buf.transpose([order.index(d) for d in range(out.ndim)])
    laid[...] = out
    return laid


def _row_major_strides(a):
    strides, step = [], a.itemsize
    for n in reversed(a.shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _index_memory_order(a, index, shape):
    """The result's dimensions from slowest to fastest in memory, None for row-major order.

    ATen's index runs a TensorIterator over the source restrided to the result's shape (stride 0
    along the indexed dimensions) and the broadcast index tensors; the result, allocated by the
    iterator, takes the order its ``reorder_dimensions`` finds: an insertion sort of the
    dimensions by the operands' strides, an operand skipped where either stride is 0, equal
    strides broken by the smaller size first.
    """
    if len(shape) < 2:
        return None
    indexed, indices, d = [], [], 0
    for i in index:
        if isinstance(i, np.ndarray):
            if i.dtype.kind == "b":
                indexed.extend(range(d, d + i.ndim))
                indices.extend(i.nonzero())
                d += i.ndim
            else:
                indexed.append(d)
                indices.append(i)
                d += 1
        elif i is not None:
            d += 1
    if not indexed:
        return None
    bshape = np.broadcast_shapes(*(i.shape for i in indices))
    if indexed == list(range(indexed[0], indexed[0] + len(indexed))):
        before, after = list(range(indexed[0])), list(range(indexed[-1] + 1, a.ndim))
    else:                                       # apart: the index dimensions come first
        before, after = [], [k for k in range(a.ndim) if k not in indexed]
    width = len(bshape)
    source = ([a.strides[k] for k in before] + [0] * width + [a.strides[k] for k in after])
    operands = [source]
    for i in indices:
        # each index viewed as (1, ..., *bshape, ..., 1); a dimension it broadcasts along has stride 0
        st = np.broadcast_to(i, bshape).reshape((1,) * len(before) + bshape + (1,) * len(after)).strides
        operands.append([s if n == 1 or k in range(len(before), len(before) + width) else 0
                         for k, (s, n) in enumerate(zip(st, shape))])

    def should_swap(d0, d1):
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))        # fastest first
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    order = perm[::-1]
    return None if order == list(range(ndim)) else order


def _index_backward(grad, self_shape, index):
    return grad.new_zeros(self_shape)._index_put(index, grad, accumulate=True)


getitem_basic = op("getitem_basic", "SliceBackward0", _getitem,
                   self=_index_backward, dtype="first", view=True, domain="real")


def _named(base, node, view, forward=None):
    return Op(base.name + ":" + node, node, forward or base.forward, base.inputs, base.formulas, dtype=base.dtype,
              view=view, domain=base.domain)


GETITEM = {name: _named(getitem_basic, name, True)
           for name in ("SliceBackward0", "SelectBackward0", "UnsqueezeBackward0", "AliasBackward0")}
GETITEM["IndexBackward0"] = _named(getitem_basic, "IndexBackward0", False, _index_forward)
TABLE["index"] = GETITEM["IndexBackward0"]


def _index_put(a, values, index, accumulate=False):
    out = a.copy()
    if accumulate:
        np.add.at(out, index, values)
    else:
        out[index] = values
    return out


index_put = op("index_put", "IndexPutBackward0", _index_put, ("self", "values"),
               self=lambda grad, index, accumulate=False: grad if accumulate else grad._index_put(index, 0.0),
               values=lambda grad, index: grad[index],
               dtype="first", domain="index")
# ------------------------------------------------------------ views changed in place
# What a view becomes after its memory was changed in place (see op.py): the view taken afresh
# from its base, whatever chain of view ops made it. ``geometry`` (op.ViewGeometry) gives the flat
# position in the base of each element of the view.
def _as_strided(a, geometry):
    return a.reshape(-1)[geometry.index()]


def _as_strided_grad(grad, self_shape, geometry):
    size = int(np.prod(self_shape, dtype=np.int64))
    return grad.new_zeros(size)._index_put((geometry.index(),), grad, accumulate=True).view(self_shape)


as_strided = op("as_strided", "AsStridedBackward0", _as_strided, self=_as_strided_grad, dtype="first",
                domain="real")


def _copy_slices_self(grad, geometry, view_grad=None):
    """The base's gradient: ``grad`` with the view's part replaced by the gradient of the view's old
    value (zero when the in-place op made the new value without reading the old one)."""
    flat = grad.reshape(-1)
    return flat._index_put((geometry.index(),), 0.0 if view_grad is None else view_grad).view(grad.shape)


def _copy_slices_values(grad, geometry):
    """The part of the base's gradient that falls on the view."""
    return grad.reshape(-1)[geometry.index()]


def _copy_slices_put(a, values, geometry):
    out = a.copy()
    out.reshape(-1)[geometry.index()] = values
    return out


class CopySlicesOp(Op):
    """PyTorch's ``CopySlices``: the base's node after an in-place op on one of its views.

    Its inputs are the base's old value and the in-place op's other inputs; ``fn`` (in the
    node's saved context) is the op's own node, whose input 0 was the view. Backward hands ``fn``
    the view's part of the gradient, puts ``fn``'s gradient for the view back into that part
    (the rest of the base passes through), and gives the other inputs what ``fn`` gives them.
    When the op was recorded as several nodes, ``fn`` is None and the node's second input is the
    view's new value (whose history reaches the view's old one)."""

    __slots__ = ()

    def backward(self, ctx, needed):
        grad, geometry, fn = ctx["grad"], ctx["geometry"], ctx["fn"]
        values_grad = _copy_slices_values(grad, geometry)
        if fn is None:
            view_grad, rest = None, [values_grad if needed[1] else None]
        else:
            view_grad, *rest = fn._input_grads(values_grad, needed)
        base_grad = _copy_slices_self(grad, geometry, view_grad) if needed[0] else None
        return [base_grad, *rest]


copy_slices = CopySlicesOp("copy_slices", "torch::autograd::CopySlices", _copy_slices_put, ("self", "values"),
                           {"self": _copy_slices_self, "values": _copy_slices_values}, dtype="first",
                           domain="index")
TABLE["copy_slices"] = copy_slices

# ============================================================ neural-network functions
def _softmax_kernel(name):
    def kernel(ts, params):
        last = params["dim"] == ts[0]._data.ndim - 1
        return f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
    return kernel


def _softmax(a, dim):
    with np.errstate(all="ignore"):
        m = np.amax(a, axis=dim, keepdims=True) if a.size else 0
        e = np.exp(a - m)
        return (e / np.sum(e, axis=dim, keepdims=True)).astype(a.dtype)


def _log_softmax(a, dim):
    with np.errstate(all="ignore"):
        m = np.amax(a, axis=dim, keepdims=True) if a.size else 0
        s = a - m
        return (s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))).astype(a.dtype)


softmax = op("softmax", "SoftmaxBackward0", _softmax,
             self=lambda grad, result, dim: result * (grad - (grad * result).sum(dim, keepdim=True)),
             dtype=_kernel(_softmax_kernel("softmax"), refuse=_NOT_FLOAT), domain="real")
log_softmax = op("log_softmax", "LogSoftmaxBackward0", _log_softmax,
                 self=lambda grad, result, dim: grad - result.exp() * grad.sum(dim, keepdim=True),
                 dtype=_kernel(_softmax_kernel("log_softmax"), refuse=_NOT_FLOAT), domain="real")
leaky_relu = op("leaky_relu", "LeakyReluBackward0",
                lambda a, negative_slope=0.01: np.where(a > 0, a, a * a.dtype.type(negative_slope)),
                self=lambda grad, self, negative_slope=0.01: _F().where(self > 0, grad, grad * negative_slope),
                dtype=_kernel("leaky_relu_cpu", refuse=_NOT_FLOAT), domain="nonzero")
# the in-place forms save the result (the input is overwritten), hence other node names
leaky_relu_inplace = op("leaky_relu_inplace", "LeakyReluBackward1", leaky_relu.forward,
                        self=lambda grad, result, negative_slope=0.01:
                        _F().where(result > 0, grad, grad * negative_slope),
                        dtype=leaky_relu.dtype, domain="nonzero")


def _elu(a, alpha=1.0):
    with np.errstate(all="ignore"):
        return np.where(a > 0, a, a.dtype.type(alpha) * np.expm1(a)).astype(a.dtype)


elu = op("elu", "EluBackward0", _elu,
         self=lambda grad, self, alpha=1.0: grad * _F().where(self > 0, 1.0, alpha * self.exp()),
         dtype=_kernel("elu_cpu", refuse=_NOT_FLOAT), domain="nonzero")
elu_inplace = op("elu_inplace", "EluBackward1", _elu,
                 self=lambda grad, result, alpha=1.0: grad * _F().where(result > 0, 1.0, result + alpha),
                 dtype=elu.dtype, domain="nonzero")


def _gelu(a, approximate="none"):
    # PyTorch's kernel, step by step in the input's precision (erf itself correctly rounded)
    c = a.dtype.type
    if approximate == "tanh":
        inner = c(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5) * (a + c(0.044715) * (a * a * a))
        return (c(0.5) * a * (c(1) + np.tanh(inner))).astype(a.dtype)
    return (a * c(0.5) * (c(1) + _erf(a * c(math.sqrt(0.5))))).astype(a.dtype)


def _gelu_grad(grad, self, approximate="none"):
    if approximate == "tanh":
        # in PyTorch's order of operations (1 + tanh cancels for negative inputs: rounding shows)
        beta, kappa = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5, 0.044715
        x_sq = self * self
        tanh_inner = (beta * (self + kappa * (x_sq * self))).tanh()
        left_derivative = 0.5 * (1 + tanh_inner)
        right_derivative = (0.5 * self) * (1 - tanh_inner * tanh_inner) * (beta * (1 + 3 * kappa * x_sq))
        return grad * (left_derivative + right_derivative)
    cdf = 0.5 * (1 + (self / math.sqrt(2)).erf())
    pdf = (-0.5 * self * self).exp() / math.sqrt(2 * math.pi)
    return grad * (cdf + self * pdf)


gelu = op("gelu", "GeluBackward0", _gelu, self=_gelu_grad, dtype=_kernel("GeluKernelImpl", refuse=_NOT_FLOAT),
          domain="real")


def _softplus(a, beta=1.0, threshold=20.0):
    with np.errstate(all="ignore"):
        bx = a * a.dtype.type(beta)
        return np.where(bx > threshold, a, np.log1p(np.exp(-np.abs(bx))) / a.dtype.type(beta)
                        + np.maximum(bx, 0) / a.dtype.type(beta)).astype(a.dtype)


softplus = op("softplus", "SoftplusBackward0", _softplus,
              self=corner_grads.softplus_grad,
              dtype=_kernel("softplus_cpu", refuse=_NOT_FLOAT), domain="real")
silu = op("silu", "SiluBackward0", lambda a: (a * _sigmoid(a)).astype(a.dtype),
          self=lambda grad, self: grad * (self.sigmoid() * (1 + self * (1 - self.sigmoid()))),
          dtype=_kernel("silu_cpu", refuse=_NOT_FLOAT), domain="real")


def _reduce(x, reduction):
    if reduction == "mean":
        return np.asarray(_np_mean(x))
    if reduction == "sum":
        return np.asarray(reduction_order.torch_sum(x))
    return x


def _reduce_grad(g, reduction, n):
    return g / n if reduction == "mean" else g


def _check_reduction(reduction):
    if reduction not in ("mean", "sum", "none"):
        raise errors.ValueError(f"{reduction} is not a valid value for reduction")


mse_loss = op("mse_loss", "MseLossBackward0", lambda a, b, reduction="mean": _reduce((a - b) ** 2, reduction),
              ("self", "target"),
              self=lambda grad, self, target, reduction="mean":
              _reduce_grad(2 * (self - target) * grad, reduction, self.numel()),
              target=lambda grad, self, target, reduction="mean":
              _reduce_grad(-2 * (self - target) * grad, reduction, self.numel()),
              dtype=_kernel("mse_cpu", "promote", _NOT_FLOAT), domain="real")


def _smooth_l1(a, b, reduction="mean", beta=1.0):
    d = np.abs(a - b)
    with np.errstate(all="ignore"):
        x = np.where(d < beta, 0.5 * d * d / (beta if beta else 1), d - 0.5 * beta) if beta else d
    return _reduce(x.astype(a.dtype), reduction)


def _smooth_l1_grad(grad, self, target, reduction="mean", beta=1.0):
    F = _F()
    d = self - target
    g = F.where(d.abs() < beta, d / beta, d.sign()) if beta else d.sign()
    return _reduce_grad(g * grad, reduction, self.numel())


smooth_l1_loss = op("smooth_l1_loss", "SmoothL1LossBackward0", _smooth_l1, ("self", "target"),
                    self=_smooth_l1_grad,
                    target=lambda grad, self, target, reduction="mean", beta=1.0:
                    -_smooth_l1_grad(grad, self, target, reduction, beta),
                    dtype=_kernel("smooth_l1_cpu", "promote", _NOT_FLOAT), domain="real")


def _bce(p, y, weight=None, reduction="mean"):
    if np.any((p < 0) | (p > 1)):
        raise errors.RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(all="ignore"):
        lp = np.maximum(np.log(p), -100)
        l1p = np.maximum(np.log1p(-p), -100)
    loss = -(y * lp + (1 - y) * l1p)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.astype(p.dtype), reduction)


def _const(array, like):
    """A loss's weight (kept as an array parameter: PyTorch sends it no gradient) as a tensor."""
    return None if array is None else Tensor._make(np.asarray(array, like.dtype.np))


def _bce_grad(grad, self, target, weight=None, reduction="mean"):
    g = grad * (self - target) / (self * (1 - self)).clamp(min=1e-12)
    if weight is not None:
        g = g * _const(weight, self)
    return _reduce_grad(g, reduction, self.numel())


def _bce_target_grad(grad, self, weight=None, reduction="mean"):
    g = -(self / (1 - self)).log() * grad                    # -logit(self)
    if weight is not None:
        g = g * _const(weight, self)
    return _reduce_grad(g, reduction, self.numel())


binary_cross_entropy = op("binary_cross_entropy", "BinaryCrossEntropyBackward0", _bce, ("self", "target"),
                          self=_bce_grad, target=_bce_target_grad,
                          dtype=_kernel("binary_cross_entropy", "promote", _NOT_FLOAT), domain="probability")


def _log_sigmoid(x):
    """min(x, 0) - log1p(exp(-|x|)): finite for any x (PyTorch's kernel)."""
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _bce_logits(x, y, weight=None, pos_weight=None, reduction="mean"):
    # (1 - y) x - w log(sigmoid(x)) with w = (pos_weight - 1) y + 1, in the input's precision
    log_sig = _log_sigmoid(x)
    if pos_weight is not None:
        log_sig = log_sig * ((np.asarray(pos_weight, x.dtype) - 1) * y + 1)
    loss = (1 - y) * x - log_sig
    if weight is not None:
        loss = loss * np.asarray(weight, x.dtype)
    return _reduce(loss.astype(x.dtype), reduction)


def _bce_logits_grad(grad, self, target, weight=None, pos_weight=None, reduction="mean"):
    s = self.sigmoid()
    if pos_weight is not None:
        pw = _const(pos_weight, self) * target
        g = (pw + 1 - target) * s - pw
    else:
        g = s - target
    g = g * grad
    if weight is not None:
        g = g * _const(weight, self)
    return _reduce_grad(g, reduction, self.numel())


def _bce_logits_target_grad(grad, self, weight=None, pos_weight=None, reduction="mean"):
    if pos_weight is not None:
        # log_sigmoid(-x) - pos_weight * log_sigmoid(x), with log_sigmoid(x) = -softplus(-x)
        g = _const(pos_weight, self) * _NN().softplus(-self) - _NN().softplus(self)
    else:
        g = -self
    g = g * grad
    if weight is not None:
        g = g * _const(weight, self)
    return _reduce_grad(g, reduction, self.numel())


binary_cross_entropy_with_logits = op(
    "binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0", _bce_logits, ("self", "target"),
    self=_bce_logits_grad, target=_bce_logits_target_grad, dtype=_kernel("log_sigmoid_cpu", "promote", _NOT_FLOAT),
    domain="real")


def _nll(logp, target, weight=None, reduction="mean", ignore_index=-100):
    if logp.ndim == 1:
        logp2, tgt = logp[None, :], target.reshape(1)
    else:
        logp2 = np.moveaxis(logp, 1, -1).reshape(-1, logp.shape[1])
        tgt = target.reshape(-1)
    n_classes = logp2.shape[1]
    valid = tgt != ignore_index
    if np.any(valid & ((tgt < 0) | (tgt >= n_classes))):
        bad = int(tgt[valid & ((tgt < 0) | (tgt >= n_classes))][0])
        raise errors.IndexError(f"Target {bad} is out of bounds.")
    safe = np.where(valid, tgt, 0)
    picked = -logp2[np.arange(len(safe)), safe]
    w = np.ones(n_classes, logp.dtype) if weight is None else weight
    wt = np.where(valid, w[safe], 0).astype(logp.dtype)
    losses = picked * wt
    if reduction == "none":
        return losses.reshape(target.shape).astype(logp.dtype)
    if reduction == "sum":
        return np.asarray(np.sum(losses), logp.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(np.sum(losses) / np.sum(wt), logp.dtype)


def _nll_grad(grad, self, target, weight=None, reduction="mean", ignore_index=-100):
    F = _F()
    x = self if self.dim() > 1 else self.unsqueeze(0)
    tgt = (target if self.dim() > 1 else target.reshape((1,))).long()
    C = x.shape[1]
    w = F.ones(C, dtype=self.dtype) if weight is None else _const(weight, self)
    valid = tgt != ignore_index
    safe = F.where(valid, tgt, 0)
    wt = F.where(valid, w[safe], 0.0)                  # weight of each sample's target class
    if reduction == "mean":
        g = -(wt * (grad / wt.sum()))
    elif reduction == "sum":
        g = -(wt * grad)
    else:
        g = -(wt * grad.reshape(tgt.shape))
    # only each sample's target class receives a gradient (+0. elsewhere, ignored samples included)
    g = F.where(valid, g, 0.0)
    out = F.zeros(x.shape, dtype=self.dtype).scatter(1, safe.unsqueeze(1), g.unsqueeze(1))
    return out if self.dim() > 1 else out.squeeze(0)


nll_loss = op("nll_loss", "NllLossBackward0", _nll, ("self", "target"), self=_nll_grad, dtype="first",
              domain="logprob")
nll_loss2d = op("nll_loss2d", "NllLoss2DBackward0", _nll, ("self", "target"), self=_nll_grad, dtype="first",
                domain="logprob")


def _mul_mask(a, mask):
    return a * mask


dropout = op("dropout", "MulBackward0", _mul_mask, ("self", "mask"),
             self=lambda grad, mask: grad * mask, dtype="first", domain="real")

# ------------------------------------------------------------ not differentiable at all
NON_DIFFERENTIABLE_FUNCTIONS = ("argmax", "argmin", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
                                "isfinite", "all", "any", "floor_divide", "bitwise_and", "bitwise_or",
                                "bitwise_xor", "bitwise_not", "logical_not", "logical_and", "logical_or",
                                "logical_xor")
