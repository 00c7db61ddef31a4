"""Elementwise ops: arithmetic, comparisons, unary math."""
from __future__ import annotations

import math

import numpy as np

from .. import corner_grads, dtypes, errors, reduction_order, sleef, vectorized_double, vectorized_float
from ..graph import NOT_IMPLEMENTED_NODE, is_grad_enabled
from ..tensor import Tensor
from ..zero_tensor import LIVE as ZERO_TENSORS, is_zero
from .registry import TABLE, NotDifferentiable, op
from .common import (_F, _NOT_FLOAT, maybe_multiply, _apply, _ew, _kernel, _lerp, _log, _scalar_like, _sleef,
                     _vector_or_scalar, _vml, _zero_where, fma, in_float32)


# ============================================================ elementwise arithmetic
add = op("add", "AddBackward0",
         _ew(lambda a, b, alpha=1: a + b if alpha == 1 else fma(b, _scalar_like(alpha, a), a)),
         ("self", "other"),
         self=lambda grad: grad,
         other=lambda grad, alpha=1: grad if alpha == 1 else grad * alpha,
         domain="real", forward_ad="element_wise",
         tangent_formula=lambda self_t, other_t, alpha=1: self_t + maybe_multiply(other_t, alpha), zero_tensor="add")
sub = op("sub", "SubBackward0", _ew(lambda a, b, alpha=1: a - b if alpha == 1 else fma(b, _scalar_like(-alpha, a), a)),
         ("self", "other"),
         self=lambda grad: grad,
         other=lambda grad, alpha=1: -grad if alpha == 1 else -grad * alpha,
         domain="real", forward_ad="element_wise",
         tangent_formula=lambda self_t, other_t, alpha=1: self_t - maybe_multiply(other_t, alpha), zero_tensor="sub")
rsub = op("rsub", "RsubBackward1", _ew(lambda a, b, alpha=1: b - a if alpha == 1 else fma(a, _scalar_like(-alpha, a), b)),
          ("self", "other"),
          self=lambda grad, alpha=1: -grad if alpha == 1 else -grad * alpha,
          domain="real", forward_ad="element_wise")
rsub_tensor = op("rsub_tensor", "RsubBackward0",
                 _ew(lambda a, b, alpha=1: b - a if alpha == 1 else fma(a, _scalar_like(-alpha, a), b)),
                 ("self", "other"),
                 self=lambda grad, alpha=1: -grad if alpha == 1 else -grad * alpha,
                 other=lambda grad: grad, domain="real", forward_ad="element_wise",
                 tangent_formula=lambda self_t, other_t, alpha=1: -maybe_multiply(self_t, alpha) + other_t)
mul = op("mul", "MulBackward0", _ew(np.multiply), ("self", "other"),
         self=lambda grad, other: grad * other,
         other=lambda grad, self: grad * self,
         domain="real", forward_ad="element_wise",
         tangent_formula=lambda self_t, other_t, self_p, other_p: other_t * self_p + self_t * other_p,
         zero_tensor="mul")
div = op("div", "DivBackward0", _ew(np.true_divide), ("self", "other"),
         self=lambda grad, other: grad / other,
         other=lambda grad, self, other: -grad * ((self / other) / other),
         dtype="float", domain="nonzero_other", forward_ad="element_wise",
         tangent_formula=lambda self_t, other_t, other_p, result: (self_t - other_t * result) / other_p,
         zero_tensor="div")
# Scalar overloads, as ATen's own composites call them (``loss * 0.5`` in C++ is mul.Scalar):
def _with_scalar(fn):
    """A ``.Scalar`` overload's kernel: the number in the tensor's dtype, but float16 computed in float32
    with the number unrounded (opmath) and rounded once, as ``h * 1.1`` is (see op._half_with_scalar)."""
    def forward(a, other):
        if a.dtype == np.float16:
            return fn(a.astype(np.float32), np.float32(other)).astype(np.float16)
        return fn(a, np.asarray(other, a.dtype))
    return forward


mul_scalar = op("mul_scalar", "MulBackward1", _with_scalar(np.multiply),
                self=lambda grad, other: grad * other, dtype="first", domain="real", forward_ad="element_wise",
                zero_tensor="mul")
div_scalar = op("div_scalar", "DivBackward1", _with_scalar(np.true_divide),
                self=lambda grad, other: grad / other, dtype="first", domain="real", forward_ad="element_wise",
                zero_tensor="div")
add_scalar = op("add_scalar", "AddBackward1", lambda a, other: a + np.asarray(other, a.dtype),
                self=lambda grad: grad, dtype="first", domain="real", forward_ad="element_wise")
sub_scalar = op("sub_scalar", "SubBackward1", lambda a, other: a - np.asarray(other, a.dtype),
                self=lambda grad: grad, dtype="first", domain="real", forward_ad="element_wise")


def _check_int_divisor(a, b):
    """Integer division by zero is an error in PyTorch (floats give inf/nan)."""
    if a.dtype.kind in "iub" and b.dtype.kind in "iub" and not np.all(b):
        raise errors.RuntimeError("ZeroDivisionError")


def _not_implemented(name):
    """An input PyTorch records a ``NotImplemented`` node for: asking its gradient fails."""
    return NotDifferentiable(f"derivative for aten::{name} is not implemented")


def _div_floor_float(fmod, vector):
    """ATen's div_floor_floating (scalar) or div_floor_floating_vec (``vector``): (a - fmod(a, b)) / b, one
    less where the remainder's sign is not the divisor's, floored and rounded back up past .5; a zero
    quotient takes a / b's sign, a zero divisor gives a / b. The vector one (SLEEF's fmod) keeps a
    where a / b overflows and a does not."""
    def run(a, b):
        t = a.dtype.type
        basic = a / b
        mod = fmod(a, b)
        top = a - mod
        if vector:
            top = np.where((np.abs(basic) == np.inf) & (np.abs(a) != np.inf), a, top)
        div = top / b
        div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - t(1), div)
        floor = np.floor(div)
        floor = np.where(div - floor > t(0.5), floor + t(1), floor)
        floor = np.where(div == 0, np.copysign(t(0), basic), floor)
        return np.where(b == 0, basic, floor).astype(a.dtype)
    return run


def _div_mode(a, b, rounding_mode):
    _check_int_divisor(a, b)
    if a.dtype == np.float16 and b.dtype == np.float16 and b.size == 1:
        # a one-element divisor is TensorIterator's CPU scalar: the Half kernels divide by it in float32
        # (opmath) and round the quotient once; a tensor divisor is divided in half, step by step (measured)
        return _div_mode(a.astype(np.float32), b.astype(np.float32), rounding_mode).astype(np.float16)
    with np.errstate(all="ignore"):
        if rounding_mode == "floor":
            if a.dtype.kind != "f":
                return np.floor_divide(a, b)
            a, b = np.broadcast_arrays(a, b)
            return _vector_or_scalar((a, b), _div_floor_float(sleef.fmod, True),
                                     _div_floor_float(lambda x, y: sleef.libm("fmod", x, y), False))
        if a.dtype.kind != "f":
            q = np.abs(a) // np.abs(b)
            return np.where((a < 0) ^ (b < 0), -q, q).astype(a.dtype)
        return np.trunc(a / b)


div_mode = op("div_mode", "DivBackward2", _div_mode, ("self", "other"),
              # (zeros, +0 and no history as PyTorch's; they keep what ATen's rounding-mode backward takes, as
              # the node shows)
              self=lambda grad, other, rounding_mode: corner_grads.zero_grad(grad),
              other=lambda grad, self, other, rounding_mode: corner_grads.zero_grad(grad), domain="real",
              forward_ad="element_wise")
floor_divide = op("floor_divide", NOT_IMPLEMENTED_NODE, lambda a, b: _div_mode(a, b, "floor"), ("self", "other"),
                  self=_not_implemented("floor_divide"), other=_not_implemented("floor_divide"),
                  dtype=_kernel("div_floor_cpu", "promote"), domain="real", broadcast=True)


# ATen's float fmod kernel: SLEEF's fmod on the vector runs (nan where the quotient overflows, as
# fmodf(3e38, 0.2)), C's on the tails; remainder's kernel starts from the same Vectorized::fmod
_fmod_kernel = _sleef("fmod", np.fmod, sleef.fmod, sleef.fmod)


def _remainder(a, b):
    """Python's modulus with C's signed zero: fmod, moved into the divisor's sign (as PyTorch)."""
    _check_int_divisor(a, b)
    if a.dtype.kind != "f":
        return np.mod(a, b)
    m = _fmod_kernel(a, b)
    return np.where((m != 0) & ((m < 0) != (b < 0)), m + b, m)


def _fmod(a, b):
    _check_int_divisor(a, b)
    return _fmod_kernel(a, b) if a.dtype.kind == "f" else np.fmod(a, b)


remainder = op("remainder", "RemainderBackward0", _remainder, ("self", "other"),
               self=lambda grad: grad,
               dtype=_kernel("remainder_cpu", "promote"), domain="real", broadcast=True, forward_ad="element_wise")
remainder_tensor = op("remainder_tensor", "RemainderBackward1", _remainder, ("self", "other"),
                      self=lambda grad: grad,
                      other=lambda grad, self, other: -grad * self.div(other, rounding_mode="floor"),
                      dtype=remainder.dtype, domain="positive", broadcast=True, forward_ad="element_wise")
remainder_scalar_self = op("remainder_scalar_self", NOT_IMPLEMENTED_NODE, _remainder, ("self", "other"),
                           other=_not_implemented("remainder"), domain="positive")
fmod = op("fmod", "FmodBackward0", _fmod, ("self", "other"), self=lambda grad: grad, domain="real",
          dtype=_kernel("fmod_cpu", "promote"), broadcast=True, forward_ad="element_wise")
fmod_tensor = op("fmod_tensor", "FmodBackward1", _fmod, ("self", "other"),
                 self=lambda grad: grad,
                 other=lambda grad, self, other: -grad * self.div(other, rounding_mode="trunc"),
                 dtype=fmod.dtype, domain="positive", broadcast=True, forward_ad="element_wise")
neg = op("neg", "NegBackward0", np.negative, self=lambda grad: -grad, domain="real", forward_ad="element_wise")


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
    """PyTorch's ``pow_backward`` (a zero exponent's gradient is a plain zeros_like)."""
    if isinstance(exponent, (int, float)) and exponent == 0:
        return _F().zeros_like(self)
    if exponent == 2 and not is_grad_enabled() and not (ZERO_TENSORS and is_zero(grad)):
        return _square_grad(grad, self)         # (a ZeroTensor grad takes mul's ZeroTensor kernel below)
    # PyTorch's pow_backward: grad * (exponent * self.pow(exponent - 1)), a Tensor times a C++ Scalar
    # (the exponent as a double)
    return grad * _mul_scalar(self.pow(exponent - 1), float(exponent))


def _mul_scalar(t, scalar):
    """``t * scalar`` as ATen's C++ formulas write it: ``mul.Scalar`` (node ``MulBackward1``)."""
    return _apply(mul_scalar, (t,), {"other": scalar})


def _square_grad(grad, self):
    """PyTorch's ``grad * (2 * self.pow(1))`` for ``self ** 2`` when no graph is recorded: ``2·x`` then
    the product with the grad, block by block (``blocks``) where x is contiguous and the grad
    (a real one, or the uniform one of a mean or sum, expanded) has its shape and dtype, so ``2·x``
    never crosses memory."""
    from .. import blocks
    if type(grad) is not Tensor or type(self) is not Tensor:        # (a batched tensor's _data is one sample)
        return grad * (self * 2)
    g, x = grad._data, self._data
    if g.shape == x.shape and g.dtype == x.dtype and x.dtype.kind == "f" and x.flags.c_contiguous \
            and (g.flags.c_contiguous or not any(g.strides)):
        out = np.empty_like(x)
        flat, dest = x.reshape(-1), out.reshape(-1)
        uniform = g.reshape(-1)[0] if g.size and not any(g.strides) else None
        grads = g.reshape(-1) if uniform is None else None
        two = x.dtype.type(2)
        for span in blocks.spans(flat.size):
            part = dest[span]
            np.multiply(flat[span], two, out=part)
            np.multiply(part, uniform if uniform is not None else grads[span], out=part)
        return Tensor._make(out)
    return grad * (self * 2)


def _pow_scalar_forward(a, exponent):
    if exponent == 2 and a.dtype.kind == "f":
        return a * a                    # PyTorch's kernel for x ** 2 (one pass, exact as x * x)
    if a.dtype == np.float16:
        # the special exponents' kernels compute halves in float32; any other exponent, +-0.5 too (not sqrt:
        # (-inf) ** 0.5 is inf, (-0.) ** 0.5 is 0., (-inf) ** -0.5 is 0.), is std::pow of the half and the
        # exponent rounded to half
        if exponent in _POW_SPECIAL and exponent not in (0.5, -0.5):
            return _POW_SPECIAL[exponent](a.astype(np.float32)).astype(np.float16)
        return _pow_forward(a, np.asarray(exponent, a.dtype))
    if a.dtype.kind == "f" and exponent in _POW_SPECIAL:
        with np.errstate(all="ignore"):
            return _POW_SPECIAL[exponent](a)
    if a.dtype in (np.float32, np.float64) and isinstance(exponent, (int, float)) \
            and not isinstance(exponent, bool) and exponent not in (0, 1):
        return sleef.pow_scalar(a, exponent, reduction_order.threads())   # SLEEF's powf / powd on the runs
    return _pow_forward(a, np.asarray(exponent, a.dtype))


# PyTorch's pow kernel special-cases these exponents (PowKernel.cpp), so their roundings differ from pow();
# 0.5 is sqrt's own kernel (VML's, see mkl.py), -0.5 a vectorized 1 / sqrt
_POW_SPECIAL = {3: lambda a: a * a * a, -2: lambda a: a.dtype.type(1) / (a * a), 0.5: _vml("sqrt", np.sqrt),
                -0.5: lambda a: a.dtype.type(1) / np.sqrt(a), -1: lambda a: a.dtype.type(1) / a}


pow_scalar = op("pow_scalar", "PowBackward0", _pow_scalar_forward,
                self=_pow_self, domain="positive", forward_ad="element_wise")


def _pow_exponent(grad, self, exponent, result):
    F = _F()
    return grad * F.where((self == 0) & (exponent >= 0), 0.0, result * self.log())


def _pow_self(grad, self, exponent):
    """pow_backward_self: 0 where the exponent is 0, whatever grad is (an inf grad too)."""
    return _F().where(exponent == 0.0, 0.0, grad * (exponent * self.pow(exponent - 1)))


pow_tensor = op("pow_tensor", "PowBackward1", _pow_forward, ("self", "exponent"),
                self=_pow_self, exponent=_pow_exponent, domain="positive", forward_ad="element_wise",
                tangent_formula=lambda self_t, exponent_t, self_p, exponent_p, result: (
                    _pow_self(self_t, self_p, exponent_p) + _pow_exponent(exponent_t, self_p, exponent_p, result)))


def _rpow_exponent(grad, self, exponent, result):
    """pow_backward_exponent of a Scalar base (``self``, a wrapped number): ``grad * (result *
    log(base))``, the log of the C++ Scalar (-inf at 0, nan below), 0 where base 0 meets exponent >= 0."""
    base = self.item()
    log_base = math.log(base) if base > 0 else -math.inf if base == 0 else math.nan
    scaled = _mul_scalar(result, log_base)
    if base == 0:
        return grad * _F().where(exponent >= 0, 0.0, scaled)
    return grad * scaled


pow_rscalar = op("pow_rscalar", "PowBackward2", _pow_forward, ("self", "exponent"),
                 exponent=_rpow_exponent, domain="real", forward_ad="element_wise")

# ============================================================ unary math
_F_ = "float"
abs_ = op("abs", "AbsBackward0", np.abs, self=lambda grad, self: grad * self.sgn(), domain="nonzero",
          dtype=_kernel("abs_cpu"), forward_ad="element_wise",
          schema="abs(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
def _sign(a):
    """(0 < a) - (a < 0): nan has sign 0, as in PyTorch; bool is its own sign."""
    if a.dtype.kind == "b":
        return a.copy()
    return ((a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)).astype(a.dtype)


sign = op("sign", "SignBackward0", _sign, self=corner_grads.zero_grad, domain="real", forward_ad="element_wise",
          schema="sign(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
# (sgn's derivative, for complex inputs, reads the input and the result: PyTorch's node saves both)
# (real inputs: ATen's _efficientzerotensor, +0 with no history)
sgn = op("sgn", "SgnBackward0", _sign, self=lambda grad, self, result: corner_grads.efficient_zero(grad), domain="real",
         forward_ad="element_wise",
         schema="sgn(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
sqrt = op("sqrt", "SqrtBackward0", _vml("sqrt", np.sqrt), self=lambda grad, result: grad / (2 * result),
          dtype=_F_, domain="positive", forward_ad="element_wise",
          schema="sqrt(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
def _rsqrt(a):
    """``1 / sqrt(a)``; float16 in float32 rounded once on the vector loop's runs (two vectors of 16
    halves) and step by step in half on the scalar tails (c10::Half's operators), as ATen's loop does."""
    if a.dtype == np.float16:
        return sleef.vectorized(a, lambda x: (np.float32(1) / np.sqrt(x.astype(np.float32))).astype(np.float16),
                                lambda x: np.float16(1) / np.sqrt(x), reduction_order.threads())
    return 1 / np.sqrt(a)


rsqrt = op("rsqrt", "RsqrtBackward0", _rsqrt,
           self=lambda grad, result: -0.5 * grad * result.pow(3), dtype=_F_, domain="positive",
           forward_ad="element_wise",
           schema="rsqrt(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
exp = op("exp", "ExpBackward0", _vml("exp", np.exp), self=lambda grad, result: grad * result, dtype=_F_, domain="real",
         forward_ad="element_wise",
         schema="exp(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
exp2 = op("exp2", "Exp2Backward0", _sleef("exp2", np.exp2, vectorized_float.exp2f, vectorized_double.exp2d),
          self=lambda grad, result: grad * result * math.log(2.0),
          dtype=_F_, domain="real", forward_ad="element_wise",
          schema="exp2(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
def _expm1(a):
    """ATen's expm1 kernel (vml.h's vec::map: every element through the vector function, a partial vector
    for the tail): SLEEF's expm1f / expm1d (sleef.py, vectorized_double.py); NumPy's for other dtypes."""
    vector = sleef.vector_function("expm1", a.dtype)
    return np.expm1(a) if vector is None else vector(a)


expm1 = op("expm1", "Expm1Backward0", _expm1, self=lambda grad, result: grad * (result + 1),
           dtype=_F_, domain="real", forward_ad="element_wise",
           schema="expm1(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
log = op("log", "LogBackward0", _vml("log", np.log), self=lambda grad, self: grad / self, dtype=_F_, domain="positive",
         forward_ad="element_wise",
         schema="log(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
log2 = op("log2", "Log2Backward0", _vml("log2", np.log2), self=lambda grad, self: grad / (self * math.log(2.0)),
          dtype=_F_, domain="positive", forward_ad="element_wise",
          schema="log2(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
_LN10 = 2.3025850929940456        # derivatives.yaml's literal: one ulp below math.log(10.0)
log10 = op("log10", "Log10Backward0", _vml("log10", np.log10), self=lambda grad, self: grad / (self * _LN10),
           dtype=_F_, domain="positive", forward_ad="element_wise",
           schema="log10(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
def _log1p(a):
    """ATen's log1p kernel (vml.h's vec::map: every element through the vector function, a partial vector
    for the tail): SLEEF's log1pf / log1pd (sleef.py, vectorized_double.py); NumPy's for other dtypes."""
    vector = sleef.vector_function("log1p", a.dtype)
    return np.log1p(a) if vector is None else vector(a)


log1p = op("log1p", "Log1PBackward0", _log1p, self=lambda grad, self: grad / (self + 1),
           dtype=_F_, domain="positive", forward_ad="element_wise",
           schema="log1p(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
sin = op("sin", "SinBackward0", _vml("sin", np.sin), self=lambda grad, self: grad * self.cos(), dtype=_F_, domain="real",
         forward_ad="element_wise",
         schema="sin(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
cos = op("cos", "CosBackward0", _vml("cos", np.cos), self=lambda grad, self: grad * -self.sin(), dtype=_F_,
         domain="real", forward_ad="element_wise",
         schema="cos(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
tan = op("tan", "TanBackward0", _vml("tan", np.tan), self=lambda grad, result: grad * (1 + result.pow(2)), dtype=_F_,
         domain="unit", forward_ad="element_wise",
         schema="tan(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
asin = op("asin", "AsinBackward0", _vml("asin", np.arcsin), self=lambda grad, self: grad * (-self * self + 1).rsqrt(),
          dtype=_F_, domain="unit", forward_ad="element_wise",
          schema="asin(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
acos = op("acos", "AcosBackward0", _vml("acos", np.arccos), self=lambda grad, self: grad * -((-self * self + 1).rsqrt()),
          dtype=_F_, domain="unit", forward_ad="element_wise",
          schema="acos(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
atan = op("atan", "AtanBackward0", _vml("atan", np.arctan), self=lambda grad, self: grad / (self * self + 1), dtype=_F_,
          domain="real", forward_ad="element_wise",
          schema="atan(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
sinh = op("sinh", "SinhBackward0", _sleef("sinh", np.sinh, vectorized_float.sinhf, vectorized_double.sinhd), self=lambda grad, self: grad * self.cosh(), dtype=_F_,
          domain="real", forward_ad="element_wise",
          schema="sinh(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
cosh = op("cosh", "CoshBackward0", _sleef("cosh", np.cosh, vectorized_float.coshf, vectorized_double.coshd), self=lambda grad, self: grad * self.sinh(), dtype=_F_,
          domain="real", forward_ad="element_wise",
          schema="cosh(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
# formulas that call backward entries (ops/backward_ops.py: that family loads with the first of them)
def _tanh_grad(grad, result):
    return _apply(TABLE["tanh_backward"], (grad, result))


def _sigmoid_grad(grad, result):
    return _apply(TABLE["sigmoid_backward"], (grad, result))


def _relu_grad(grad, result):
    """relu's: ``threshold_backward(grad, result, 0)`` (+0 where the result is <= 0, nan keeps grad)."""
    return _apply(TABLE["threshold_backward"], (grad, result), {"threshold": 0})


tanh = op("tanh", "TanhBackward0", _vml("tanh", np.tanh), self=_tanh_grad,
          dtype=_F_, domain="real", forward_ad="element_wise",
          schema="tanh(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")


def _sigmoid(a):
    """PyTorch's kernel: 1 / (1 + exp(-a)) in the input's precision (so float32 sigmoid(-100) is 0), with
    SLEEF's exp in the vector loop and the C library's on its tails, as ATen's (sleef.py)."""
    one = a.dtype.type(1)
    if a.dtype == np.float32 or a.dtype == np.float64:
        zero = a.dtype.type(0)
        return sleef.vectorized(a, lambda x: one / (one + sleef.exp(zero - x)),
                                lambda x: one / (one + sleef.libm_exp(-x)), reduction_order.threads())
    return (one / (one + np.exp(-a))).astype(a.dtype)


sigmoid = op("sigmoid", "SigmoidBackward0", in_float32(_sigmoid), self=_sigmoid_grad,
             dtype=_F_, domain="real", forward_ad="element_wise",
             schema="sigmoid(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
def _relu(a):
    if a.dtype.kind == "b":
        raise errors.RuntimeError("Boolean inputs not supported for relu")
    # PyTorch's x < 0 ? 0 : x (so relu(-0.) is -0., nan stays nan); integers as maximum and a copy of
    # the zeros: ten times faster than np.where
    if a.ndim == 0:
        return np.where(a < 0, a.dtype.type(0), a)
    picked = _zero_where(a < 0, a)
    if picked is not None:
        return picked
    r = np.maximum(a, a.dtype.type(0))
    np.copyto(r, a, where=(a == 0))
    return r


relu = op("relu", "ReluBackward0", _relu,
          self=_relu_grad, dtype="first", domain="nonzero", forward_ad="element_wise")
reciprocal = op("reciprocal", "ReciprocalBackward0", _ew(np.reciprocal),
                self=lambda grad, result: -grad * (result * result), dtype=_F_, domain="nonzero",
                forward_ad="element_wise",
                schema="reciprocal(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")


def _erf(a):
    # Abramowitz–Stegun is not accurate enough; use the vectorised math.erf over float64.
    flat = np.fromiter((math.erf(v) for v in a.astype(np.float64).ravel()), np.float64, a.size)
    return flat.reshape(a.shape).astype(a.dtype)


def _erf_half(a):
    """float16 erf as ATen's vml::verf maps it: Vectorized<Half>::erf, float32's polynomial
    (vectorized_float.erf), on every element (vec::map takes the tail as a partial vector), rounded once."""
    return vectorized_float.erf(a.astype(np.float32)).astype(np.float16)


_erf_vml = _vml("erf", _erf)
erf = op("erf", "ErfBackward0", lambda a: _erf_half(a) if a.dtype == np.float16 else _erf_vml(a), self=lambda grad, self: 2.0 / math.sqrt(math.pi) * (-self.pow(2)).exp() * grad,
         dtype=_F_, domain="real", forward_ad="element_wise",
         schema="erf(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
floor = op("floor", "FloorBackward0", np.floor, self=corner_grads.zero_grad, dtype=_kernel("floor_vml_cpu"),
           domain="real", forward_ad="element_wise",
           schema="floor(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
ceil = op("ceil", "CeilBackward0", np.ceil, self=corner_grads.zero_grad, dtype=_kernel("ceil_vml_cpu"),
          domain="real", forward_ad="element_wise",
          schema="ceil(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
trunc = op("trunc", "TruncBackward0", np.trunc, self=corner_grads.zero_grad, dtype=_kernel("trunc_vml_cpu"),
           domain="real", forward_ad="element_wise",
           schema="trunc(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
frac = op("frac", "FracBackward0", lambda a: a - np.trunc(a), self=lambda grad: grad,
           dtype=_kernel("frac_cpu", refuse=_NOT_FLOAT),
          domain="real", forward_ad="element_wise",
          schema="frac(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")


def _round(a, decimals=0):
    if a.dtype.kind != "f":
        return a
    if decimals == 0:
        return np.round(a)
    with np.errstate(all="ignore"):       # as ATen's round_decimals: a negative count divides by 10^-d
        if decimals < 0:
            s = a.dtype.type(10.0 ** -decimals)
            return np.round(a / s) * s
        s = a.dtype.type(10.0 ** decimals)
        return np.round(a * s) / s


round_ = op("round", "RoundBackward0", _round, self=corner_grads.zero_grad, dtype=_kernel("round_vml_cpu"),
             domain="real", forward_ad="element_wise")
# round(x, decimals=d): ATen's round.decimals overload, its own node (whatever d, 0 included)
round_decimals = op("round_decimals", "RoundBackward1", _round, self=corner_grads.zero_grad,
                    dtype=_kernel("round_vml_cpu"), domain="real", forward_ad="element_wise")
atan2 = op("atan2", "Atan2Backward0", _sleef("atan2", np.arctan2, vectorized_float.atan2f, vectorized_double.atan2d), ("self", "other"),
           self=corner_grads.atan2_grads, other=corner_grads.atan2_grads,
           dtype=_F_, domain="real", forward_ad="element_wise",
           tangent_formula=lambda self_t, other_t, self_p, other_p: (
               (-self_p * other_t + other_p * self_t) / (self_p.pow(2) + other_p.pow(2))),
           schema="atan2(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
def _xlogy(x, y):
    """ATen's scalar kernel: nan if y is nan, 0 where x == 0, else x·log(y), the log the C library's (its
    float32 logf is not always the correctly rounded one: 11 of 2,000 random inputs)."""
    with np.errstate(all="ignore"):
        log = sleef.libm("log", y) if y.dtype == np.float32 else np.log(y)
        return np.where(np.isnan(y), y, np.where(x == 0, x.dtype.type(0), x * log)).astype(np.result_type(x, y))


xlogy = op("xlogy", "XlogyBackward0", _xlogy, ("self", "other"),
           # 0 only where self is 0 and other <= 0 (the directional derivative along x = 0: pytorch#80770)
           self=lambda grad, self, other: grad.xlogy(other).masked_fill((self == 0.0) & (other <= 0.0), 0.0),
           other=lambda grad, self, other: grad * self / other,
           schema="xlogy.Tensor(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor",
           variants="function method inplace", dtype=_kernel("xlogy_cpu", "float", "b", on="promoted"),
           domain="positive", broadcast=True, forward_ad="element_wise",
           tangent_formula=lambda self_t, other_t, self_p, other_p: (
               self_t.xlogy(other_p).masked_fill((self_p == 0.0) & (other_p <= 0.0), 0.0) + other_t * self_p / other_p))


# the overloads with a number: their own nodes (derivatives.yaml's xlogy.Scalar_Self / Scalar_Other)
def _xlogy_self_scalar_other(grad, self, other):
    """``grad * self / other`` with ``self`` a C++ Scalar: a Scalar product (MulBackward1), then the quotient."""
    return _apply(TABLE["mul_scalar"], (grad,), {"other": self.item()}) / other


xlogy_self_scalar = op("xlogy_self_scalar", "XlogyBackward1", _xlogy, ("self", "other"),
                       other=_xlogy_self_scalar_other, dtype=xlogy.dtype, domain="positive", forward_ad="element_wise",
                       schema="xlogy.Scalar_Self(Scalar self, Tensor other, *, Tensor(a!)? out=None) -> Tensor",
                       variants="function")


def _xlogy_other_scalar_self(grad, self, other):
    """``at::xlogy(grad, other)``, zero where self is 0 when other <= 0 (XlogyBackward2's formula)."""
    scaled = _apply(TABLE["xlogy_other_scalar"], (grad, other))
    return scaled if other.item() > 0.0 else scaled.masked_fill(self == 0.0, 0.0)


xlogy_other_scalar = op("xlogy_other_scalar", "XlogyBackward2", _xlogy, ("self", "other"),
                        self=_xlogy_other_scalar_self, dtype=xlogy.dtype, domain="positive", forward_ad="element_wise",
                        schema="xlogy.Scalar_Other(Tensor self, Scalar other, *, Tensor(a!)? out=None) -> Tensor",
                        variants="function method inplace")


def _logit(a, eps=None):
    """ATen's logit: log(x / (1 - x)), x clamped to [eps, 1 - eps] first, the log MKL's (measured: the same
    bits as torch's own ``(x / (1 - x)).log()``, where SLEEF's and the C library's logs each differ in ~6 %)."""
    x = a
    if eps is not None:
        lo = a.dtype.type(eps)
        hi = a.dtype.type(1) - lo
        x = np.where(a < lo, lo, np.where(a > hi, hi, a)).astype(a.dtype)
    with np.errstate(all="ignore"):
        return np.asarray(_log(np.asarray(x / (1 - x), a.dtype)), a.dtype)


def _logit_backward_kernel(dy, x, eps):
    """ATen's logit_backward kernel (a plain backward): dy / (x (1 - x)) inside the domain ([eps, 1 - eps]
    with an eps), nan (0 with an eps) outside; its scalar loop gives dy · inf at x = 0 or 1 and lets a nan
    through, where the vector loop blends it away."""
    zero, one = x.dtype.type(0), x.dtype.type(1)
    lo, hi = (zero, one) if eps is None else (x.dtype.type(eps), one - x.dtype.type(eps))
    outside = np.nan if eps is None else 0.0

    def vector(g, v):
        return np.where((v >= lo) & (v <= hi), g / (v * (one - v)), outside).astype(v.dtype)

    def scalar(g, v):
        edge = np.where((v == zero) | (v == one), g * np.inf, g / (v * (one - v)))
        return np.where((v < lo) | (v > hi), outside, edge).astype(v.dtype)
    with np.errstate(all="ignore"):     # (float16 too: its kernel rounds each step to half, measured)
        return _vector_or_scalar((dy, x), vector, scalar, half=True)


def _logit_grad(grad, self, eps=None):
    """derivatives.yaml: the kernel in a plain backward, infinitely_differentiable_logit_backward (a where
    over the inside of the domain) when the backward is itself recorded."""
    if not is_grad_enabled() and not corner_grads.in_transform() and grad.dtype == self.dtype \
            and self.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):   # (a transform's batched tensors take the formula)
        return Tensor._make(_logit_backward_kernel(*np.broadcast_arrays(grad._data, self._data), eps))
    inside = (self >= 0) & (self <= 1) if eps is None else (self >= eps) & (self <= 1 - eps)
    outside = float("nan") if eps is None else 0.0
    return (grad / (self * (1 - self))).where(inside, outside)


logit = op("logit", "LogitBackward0", _logit, self=_logit_grad,
           schema="logit(Tensor self, float? eps=None, *, Tensor(a!)? out=None) -> Tensor",
           variants="function method inplace", dtype=_F_, domain="probability", forward_ad="element_wise")


def _nan_to_num(a, nan=None, posinf=None, neginf=None):
    if a.dtype.kind != "f":
        return a.copy()
    info = np.finfo(a.dtype)
    return np.nan_to_num(a, nan=0.0 if nan is None else nan, posinf=info.max if posinf is None else posinf,
                         neginf=info.min if neginf is None else neginf).astype(a.dtype)


nan_to_num = op("nan_to_num", "NanToNumBackward0", _nan_to_num, self=lambda grad, self: grad * self.isfinite(),
                schema="nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *, "
                       "Tensor(a!)? out=None) -> Tensor",
                variants="function method inplace", dtype="first", domain="real", forward_ad="element_wise")


def _opmath(dt):
    """The dtype a CPU kernel computes ``dt`` in (float16 in float32)."""
    return np.dtype(np.float32) if dt == np.float16 else dt


def _addcmul(a, t1, t2, value=1):
    """The kernel's ``self + value * t1 * t2``, compiled with contraction: fma(value * t1, t2, self)."""
    dt = np.result_type(a, t1, t2)
    if dt.kind != "f":
        return (a + (np.asarray(value, t1.dtype) * t1) * t2).astype(dt)
    w = _opmath(dt)
    return fma(np.asarray(value, w) * t1.astype(w, copy=False), t2, a).astype(dt, copy=False)


def _addcdiv(a, t1, t2, value=1):
    """The kernel's ``self + value * t1 / t2``: the product first, then the quotient."""
    dt = np.result_type(a, t1, t2)
    w = _opmath(dt) if dt.kind == "f" else t1.dtype
    with np.errstate(all="ignore"):
        return (a + (np.asarray(value, w) * t1.astype(w, copy=False)) / t2).astype(dt, copy=False)


def _addcdiv_tensor1_grad(grad, tensor2, value=1):
    """derivatives.yaml's ``grad * (value / tensor2)``: a Scalar over a tensor is a division whose
    dividend is a wrapped number (DivBackward0 with no edge for it), not Python's reciprocal."""
    return grad * _apply(div, (value, tensor2))


def _addcdiv_tensor2_grad(grad, tensor1, tensor2, value=1):
    """``-grad * (value * tensor1 / (tensor2 * tensor2))``, ``value * tensor1`` a Scalar product (MulBackward1)."""
    return -grad * (_apply(TABLE["mul_scalar"], (tensor1,), {"other": value}) / (tensor2 * tensor2))


addcmul = op("addcmul", "AddcmulBackward0", _addcmul, ("self", "tensor1", "tensor2"),
             self=lambda grad, value=1: grad,
             tensor1=lambda grad, tensor2, value=1: grad * (tensor2 * value),
             tensor2=lambda grad, tensor1, value=1: grad * (tensor1 * value),
             schema="addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!)? out=None) "
                    "-> Tensor",
             variants="function method inplace", dtype="promote", domain="real", forward_ad="element_wise",
             tangent_formula=lambda self_t, tensor1_t, tensor2_t, tensor1_p, tensor2_p, value=1: (
                 self_t + maybe_multiply(tensor1_t * tensor2_p, value) + maybe_multiply(tensor2_t * tensor1_p, value)))
addcdiv = op("addcdiv", "AddcdivBackward0", _addcdiv, ("self", "tensor1", "tensor2"),
             self=lambda grad, value=1: grad,
             tensor1=_addcdiv_tensor1_grad, tensor2=_addcdiv_tensor2_grad,
             schema="addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!)? out=None) "
                    "-> Tensor",
             variants="function method inplace", dtype="promote", domain="positive", forward_ad="element_wise",
             tangent_formula=lambda self_t, tensor1_t, tensor2_t, tensor1_p, tensor2_p, value=1: (
                 self_t + maybe_multiply(tensor1_t / tensor2_p, value)
                 - maybe_multiply(tensor2_t * (tensor1_p / tensor2_p) / tensor2_p, value)))
logaddexp = op("logaddexp", "LogaddexpBackward0", np.logaddexp, ("self", "other"),
               self=lambda grad, self, other: grad / (1 + (other - self).exp()),
               other=lambda grad, self, other: grad / (1 + (self - other).exp()),
               schema="logaddexp(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor",
               variants="function method", dtype=_kernel("logaddexp_cpu", "promote", _NOT_FLOAT, on="promoted"),
               domain="real", samples=[((2, 3), (2, 3)), ((2, 3), (3,))], pointwise=True, broadcast=True,
               forward_ad="element_wise",
               tangent_formula=lambda self_t, other_t, self_p, other_p: (
                   self_t / (1 + (other_p - self_p).exp()) + other_t / (1 + (self_p - other_p).exp())))


def _pick_grad(grad, mine, theirs, greater):
    # PyTorch's where(self == other, grad / 2, grad).masked_fill_(self loses, 0): a nan keeps grad
    lose = (mine < theirs) if greater else (mine > theirs)
    return _F().where(mine == theirs, grad / 2, grad).masked_fill_(lose, 0)


def _pick_tangent(self_t, other_t, self_p, other_p, result, greater):
    """maximum's/minimum's tangent: other's, moved to self's where self wins, halfway where they tie."""
    F = _F()
    wins = (self_p > other_p) if greater else (self_p < other_p)
    half = Tensor._make(np.array(0.5, result._dtype.np), result._dtype)     # at::scalar_tensor(0.5, ...)
    return other_t + F.where(self_p == other_p, half, wins.to(result._dtype)) * (self_t - other_t)


def _maximum(a, b):
    from ..tie_order import maximum       # (the AVX2 kernels' tie rules: loaded by the first maximum)
    return maximum(a, b)


def _minimum(a, b):
    from ..tie_order import minimum
    return minimum(a, b)


maximum = op("maximum", "MaximumBackward0", _maximum, ("self", "other"),
             self=lambda grad, self, other: _pick_grad(grad, self, other, True),
             other=lambda grad, self, other: _pick_grad(grad, other, self, True),
             domain="real", forward_ad="element_wise", tangent_formula=lambda self_t, other_t, self_p, other_p, result: (
                 _pick_tangent(self_t, other_t, self_p, other_p, result, True)),
             schema="maximum(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", variants="function method")
minimum = op("minimum", "MinimumBackward0", _minimum, ("self", "other"),
             self=lambda grad, self, other: _pick_grad(grad, self, other, False),
             other=lambda grad, self, other: _pick_grad(grad, other, self, False),
             domain="real", forward_ad="element_wise", tangent_formula=lambda self_t, other_t, self_p, other_p, result: (
                 _pick_tangent(self_t, other_t, self_p, other_p, result, False)),
             schema="minimum(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", variants="function method")


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


clamp = op("clamp", "ClampBackward1", _clamp, self=_clamp_grad, dtype="first", domain="real",
           forward_ad="element_wise")


def _bounded(lo_of, hi_of):
    """A clamp by tensor bounds as ATen's kernel loops: its vector loop takes vec::maximum / vec::minimum,
    which give the bound where the two are equal zeros (max(0., -0.) is the bound's -0.), its scalar loop
    std::max / std::min, which keep the input; both keep a nan of either."""
    def vector(a, *bounds):
        lo, hi = lo_of(bounds), hi_of(bounds)
        out = a if lo is None else np.where((a <= lo) | (lo != lo), lo, a)
        return out if hi is None else np.where((out >= hi) | (hi != hi), hi, out)

    def scalar(a, *bounds):
        lo, hi = lo_of(bounds), hi_of(bounds)
        out = a if lo is None else _lo(a, lo)
        return out if hi is None else _hi(out, hi)

    def forward(a, *bounds):
        return _vector_or_scalar(np.broadcast_arrays(a, *bounds), vector, scalar, half=True)
    return forward


_clamp_both = _bounded(lambda b: b[0], lambda b: b[1])
_clamp_min_t = _bounded(lambda b: b[0], lambda b: None)
_clamp_max_t = _bounded(lambda b: None, lambda b: b[0])


def _clamp_t(a, lo, hi):
    """clamp by tensor bounds. A bound not given (clamp's composite fills it with -inf / inf, see
    composites.clamp) is no operand of ATen's kernel (clamp_min / clamp_max): it takes no part in
    whether the loop runs vectors (an input broadcast along rows and a row of bounds: fuzzer seed
    3006724), and an all-infinite bound changes no value."""
    if lo.size and np.all(lo == -np.inf):
        return _clamp_max_t(a, hi)
    if hi.size and np.all(hi == np.inf):
        return _clamp_min_t(a, lo)
    return _clamp_both(a, lo, hi)


# clamp_min / clamp_max: their own ATen ops and nodes (ClampMin/ClampMaxBackward0 for a scalar
# bound, ...Backward1 for a tensor one); a nan bound gives nan and no gradient (self >= nan is false)
def _above_min(grad, self, min):
    return _F().where(self >= min, grad, 0.0)


def _below_max(grad, self, max):
    return _F().where(self <= max, grad, 0.0)


clamp_min = op("clamp_min", "ClampMinBackward0", lambda a, min: _lo(a, a.dtype.type(min)),
               self=_above_min, dtype="first", domain="real", forward_ad="element_wise")
clamp_max = op("clamp_max", "ClampMaxBackward0", lambda a, max: _hi(a, a.dtype.type(max)),
               self=_below_max, dtype="first", domain="real", forward_ad="element_wise")
clamp_min_tensor = op("clamp_min_tensor", "ClampMinBackward1", _clamp_min_t,
                      ("self", "min"), self=_above_min,
                      min=lambda grad, self, min: _F().where(self < min, grad, 0.0), domain="real",
                      forward_ad="element_wise")
clamp_max_tensor = op("clamp_max_tensor", "ClampMaxBackward1", _clamp_max_t,
                      ("self", "max"), self=_below_max,
                      max=lambda grad, self, max: _F().where(self > max, grad, 0.0), domain="real",
                      forward_ad="element_wise")


def _bound_grad(grad, self, bound, other, beyond, crossed):
    """FunctionsManual's clamp_backward_min_max for one bound: the gradient where ``self`` lies beyond it,
    and, both bounds given, where they cross (the result is max there: min loses, max takes it); with the
    other bound not given (``absent``), beyond it alone (a +inf stand-in would make min = inf cross)."""
    from ..saved_attributes import is_absent
    mask = beyond(self, bound)
    if not is_absent(other):
        mask = crossed(mask, bound, other)
    return _F().where(mask, grad, 0.0)


clamp_tensor = op("clamp_tensor", "ClampBackward0", _clamp_t, ("self", "min", "max"),
                  self=lambda grad, self, min, max: _F().where((self >= min) & (self <= max), grad, 0.0),
                  min=lambda grad, self, min, max: _bound_grad(grad, self, min, max, lambda s, b: s < b,
                                                               lambda m, lo, hi: m & (lo < hi)),
                  max=lambda grad, self, min, max: _bound_grad(grad, self, max, min, lambda s, b: s > b,
                                                               lambda m, hi, lo: m | (hi < lo)),
                  domain="real", forward_ad="element_wise")


def _where_dtypes(ts, params):
    d = dtypes.result_type(ts[1:])
    return d, d


where = op("where", "WhereBackward0", lambda c, a, b: np.where(c, a, b), ("condition", "self", "other"),
           self=lambda grad, condition: _F().where(condition, grad, 0.0),
           other=lambda grad, condition: _F().where(condition, 0.0, grad),
           dtype=_where_dtypes, cast=(1, 2), domain="where", broadcast=True, forward_ad="element_wise",
           tangent_formula=lambda condition, self_t, other_t: _F().where(condition, self_t, other_t))
lerp = op("lerp", "LerpBackward0", in_float32(_lerp), ("self", "end"),
          self=lambda grad, weight: grad * (1 - weight),
          end=lambda grad, weight: grad * weight, domain="real", forward_ad="element_wise",
          tangent_formula=lambda self_t, end_t, weight: _F().lerp(self_t, end_t, weight))
lerp_tensor = op("lerp_tensor", "LerpBackward1", in_float32(_lerp), ("self", "end", "weight"),
                 self=lambda grad, weight: grad * (1 - weight),
                 end=lambda grad, weight: grad * weight,
                 weight=lambda grad, self, end: grad * (end - self), domain="real", forward_ad="element_wise",
                 tangent_formula=lambda self_t, end_t, weight_t, self_p, end_p, weight_p: (
                     _F().lerp(self_t, end_t, weight_p) + weight_t * (end_p - self_p)))
masked_fill = op("masked_fill", "MaskedFillBackward0",
                 # out of place, ATen fills a contiguous clone (whatever the input's layout; a 0-d one stays 0-d,
                 # which np.ascontiguousarray would make 1-d)
                 lambda a, mask, value: np.asarray(np.where(mask, np.asarray(value, a.dtype), a), order="C"),
                 ("self", "mask"),
                 self=lambda grad, mask: grad.masked_fill(mask, 0.0),
                 dtype="first", domain="mask", forward_ad="element_wise")
def _masked_fill_value_grad(grad, mask):
    """FunctionsManual's masked_fill_backward: the masked elements summed, selected with masked_select
    (where(mask, grad, 0) under a torch.func transform, whose tensors take its subclass branch)."""
    if corner_grads.in_transform():
        return _F().where(mask, grad, 0.0).sum()
    return grad.masked_select(mask).sum()


masked_fill_tensor = op("masked_fill_tensor", "MaskedFillBackward1",
                        lambda a, mask, v: np.asarray(np.where(mask, v.astype(a.dtype), a), order="C"),
                        ("self", "mask", "value"),
                        self=lambda grad, mask: grad.masked_fill(mask, 0.0),
                        value=_masked_fill_value_grad, dtype="first", domain="mask", forward_ad="transpose")

# ------------------------------------------------------------ comparison and logic (not differentiable)
def _comparison(name, node, ufunc):
    """A comparison entry: its Tensor and Scalar overloads are the same two schema lines under its name."""
    return op(name, node, ufunc, ("self", "other"), dtype="compare",
              schema=(f"{name}.Tensor(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor",
                      f"{name}.Scalar(Tensor self, Scalar other, *, Tensor(a!)? out=None) -> Tensor"),
              variants="function method inplace")


eq = _comparison("eq", "EqBackward0", np.equal)
ne = _comparison("ne", "NeBackward0", np.not_equal)
lt = _comparison("lt", "LtBackward0", np.less)
le = _comparison("le", "LeBackward0", np.less_equal)
gt = _comparison("gt", "GtBackward0", np.greater)
ge = _comparison("ge", "GeBackward0", np.greater_equal)
def _test(name, ufunc, takes_out=True):
    """An elementwise test (a bool result, no derivative): ``torch.X(t)`` and ``t.X()``."""
    out = ", *, Tensor(a!)? out=None" if takes_out else ""
    return op(name, "", ufunc, dtype="compare", schema=f"{name}(Tensor self{out}) -> Tensor",
              variants="function method")


isnan = _test("isnan", np.isnan, takes_out=False)
isinf = _test("isinf", np.isinf, takes_out=False)
isfinite = _test("isfinite", np.isfinite, takes_out=False)
signbit = _test("signbit", np.signbit)
isposinf = _test("isposinf", np.isposinf)
isneginf = _test("isneginf", np.isneginf)
logical_not = op("logical_not", "", np.logical_not, dtype="compare",
                 schema="logical_not(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
logical_and = op("logical_and", "", np.logical_and, ("self", "other"), dtype="compare",
                 schema="logical_and(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
logical_or = op("logical_or", "", np.logical_or, ("self", "other"), dtype="compare",
                schema="logical_or(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")
logical_xor = op("logical_xor", "", np.logical_xor, ("self", "other"), dtype="compare",
                 schema="logical_xor(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", variants="function method inplace")


def _bitwise(name, fn):
    def forward(a, b=None):
        if a.dtype.kind == "f":
            kind = dtypes.from_numpy(a.dtype)._scalar_name
            raise errors.NotImplementedError(f'"{name}_cpu" not implemented for \'{kind}\'',
                                             hint="`^` is xor in Python and PyTorch; for a power write `**`"
                                             if name == "bitwise_xor" else None)
        return fn(a) if b is None else fn(a, b)
    return forward


bitwise_and = op("bitwise_and", "", _bitwise("bitwise_and", np.bitwise_and), ("self", "other"))
bitwise_or = op("bitwise_or", "", _bitwise("bitwise_or", np.bitwise_or), ("self", "other"))
bitwise_xor = op("bitwise_xor", "", _bitwise("bitwise_xor", np.bitwise_xor), ("self", "other"))
bitwise_not = op("bitwise_not", "", _bitwise("bitwise_not", np.invert))

def _shift(kernel, left):
    """ATen's lshift/rshift kernels: integers only; a shift by a negative amount or by the width or
    more gives 0 (left, and right of a non-negative value) or -1 (right of a negative one), where C
    leaves it undefined; a left shift wraps as the unsigned type does."""
    def forward(a, b):
        if a.dtype.kind not in "iu":
            raise errors.NotImplementedError(f'"{kernel}" not implemented for \'{dtypes.from_numpy(a.dtype)._scalar_name}\'')
        b = np.asarray(b)
        bits = a.dtype.itemsize * 8
        out_of_range = (b < 0) | (b >= bits)
        amount = np.where(out_of_range, 0, b).astype(a.dtype)
        if left:
            unsigned = np.dtype(f"u{a.dtype.itemsize}")
            shifted = np.left_shift(a.astype(unsigned), amount.astype(unsigned)).astype(a.dtype)
            return np.where(out_of_range, a.dtype.type(0), shifted)
        return np.where(out_of_range, np.where(a < 0, a.dtype.type(-1) if a.dtype.kind == "i" else 0, 0)
                        .astype(a.dtype), np.right_shift(a, amount))
    return forward


def _shift_entry(name, kernel, left):
    return op(name, "", _shift(kernel, left), ("self", "other"), dtype="promote",
              schema=(f"{name}.Tensor(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor",
                      f"{name}.Tensor_Scalar(Tensor self, Scalar other, *, Tensor(a!)? out=None) -> Tensor"),
              variants="function method inplace")


bitwise_left_shift = _shift_entry("bitwise_left_shift", "lshift_cpu", True)
bitwise_right_shift = _shift_entry("bitwise_right_shift", "rshift_cpu", False)


