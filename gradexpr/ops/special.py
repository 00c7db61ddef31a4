"""Special functions and the rarer elementwise ops: inverse hyperbolics, erfc/erfinv, the gamma family,
sinc, angle conversions, hypot, copysign, fmax/fmin, logaddexp2, nextafter, heaviside.

Each entry's backward is derivatives.yaml's formula written with Tensor ops, so a double backward
records PyTorch's nodes (lgamma's gradient calls digamma, digamma's polygamma(1, x), ...). Values:
digamma and polygamma run ATen's own scalar kernels and the inverse hyperbolics the C library's
functions in the input's precision, as ATen's CPU kernels do (atanh split as its vectorized loop is); lgamma and erfc are the double
functions rounded once, where ATen's float32 kernels (SLEEF) differ in the last bit now and then
(``special_math``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import errors, sleef, special_math
from ..graph import NOT_IMPLEMENTED_NODE
from .common import _F, _apply, _kernel, _sleef, _vml
from .registry import TABLE, NotDifferentiable, op

_FLOAT = "float"
_ONE = ((2, 3),)                                    # the op-table tests' samples: input shapes
_TWO = [((2, 3), (2, 3)), ((2, 3), (3,))]


def _unary_schema(name):
    return f"{name}(Tensor self, *, Tensor(a!)? out=None) -> Tensor"


def _binary_schema(name):
    return f"{name}(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor"


def _rounded(fn):
    """``fn`` over float64, rounded once to the input's dtype."""
    def forward(*arrays):
        dt = np.result_type(*arrays)
        return np.asarray(fn(*(a.astype(np.float64, copy=False) for a in arrays))).astype(dt, copy=False)
    return forward


def _unary(name, node, forward, grad, domain="real"):
    return op(name, node, forward, self=grad, dtype=_FLOAT, domain=domain, forward_ad="element_wise",
              schema=_unary_schema(name), variants="function method inplace", samples=_ONE)


# ============================================================ inverse hyperbolic functions
asinh = _unary("asinh", "AsinhBackward0", special_math.libm("asinh"),
               lambda grad, self: grad * (self.pow(2) + 1).rsqrt())
acosh = _unary("acosh", "AcoshBackward0", special_math.libm("acosh"),
               lambda grad, self: grad * (self * self - 1).rsqrt(), domain="above_one")
atanh = _unary("atanh", "AtanhBackward0", special_math.vectorized_libm("atanh"),
               lambda grad, self: grad * 1 / (1 - self.pow(2)), domain="unit")


def _inplace_not_implemented(entry, node):
    """derivatives.yaml's ``op_: not_implemented("inplace version of op")``: ``t.op_()`` records its
    own node (``AcoshBackward1``), whose gradient raises NotImplementedError."""
    entry.inplace_entry = op(entry.name + "_inplace", node, entry.forward, dtype=entry.dtype, domain=entry.domain,
                             self=NotDifferentiable(f"the derivative for 'inplace version of {entry.name}' is not "
                                                    "implemented.", not_implemented=True))


_inplace_not_implemented(asinh, "AsinhBackward1")
_inplace_not_implemented(acosh, "AcoshBackward1")
_inplace_not_implemented(atanh, "AtanhBackward1")

# ============================================================ error function relatives
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
erfc = _unary("erfc", "ErfcBackward0", _vml("erfc", special_math.rounded_libm("erfc")),
              lambda grad, self: -_TWO_OVER_SQRT_PI * (-(self.pow(2))).exp() * grad)
erfinv = _unary("erfinv", "ErfinvBackward0", _vml("erfinv", special_math.erfinv),
                lambda grad, self: 0.5 * math.sqrt(math.pi) * self.erfinv().pow(2).exp() * grad, domain="unit")


# ============================================================ the gamma family
def _polygamma_forward(a, n):
    return special_math.elementwise(special_math.polygamma, a, n)


def _polygamma(self, n):
    """``polygamma(n, self)`` as a formula calls it (a PolygammaBackward0 node under create_graph)."""
    return _apply(TABLE["polygamma"], (self,), {"n": n})


def _check_polygamma(values):
    if values["n"] < 0:
        raise errors.RuntimeError("polygamma(n, x) does not support negative n.")
    return (values["self"],), {"n": values["n"]}


lgamma = op("lgamma", "LgammaBackward0", lambda a: special_math.elementwise(special_math.lgamma, a),
            self=lambda grad, self: grad * self.digamma(), dtype=_FLOAT, domain="positive",
            forward_ad="element_wise", schema=_unary_schema("lgamma"), variants="function method inplace",
            samples=_ONE)
digamma = op("digamma", "DigammaBackward0", lambda a: special_math.elementwise(special_math.digamma, a),
             self=lambda grad, self: grad * _polygamma(self, 1), dtype=_FLOAT, domain="positive",
             forward_ad="element_wise", schema=_unary_schema("digamma"), variants="function method inplace",
            samples=_ONE)
polygamma = op("polygamma", "PolygammaBackward0", _polygamma_forward,
               self=lambda grad, self, n: grad * _polygamma(self, n + 1), dtype=_FLOAT, domain="positive",
               forward_ad="element_wise", prepare=_check_polygamma,
               schema="polygamma(int n, Tensor self, *, Tensor(a!)? out=None) -> Tensor",
               variants="function method inplace")


# ============================================================ sinc, angles
def _sinc(a):
    """ATen's kernel: 1 at 0, else sin(pi x) / (pi x) with pi x rounded to the input's precision."""
    t = a.dtype.type
    product = t(math.pi) * a
    with np.errstate(all="ignore"):
        return np.where(a == 0, t(1), np.sin(product.astype(np.float64)).astype(a.dtype) / product).astype(a.dtype)


def _sinc_grad(grad, self):
    """FunctionsManual's ``sinc_backward``: 0 where x is 0 (the limit), else the quotient rule."""
    self_pi = self * math.pi
    self_squared_pi = self * self * math.pi
    out = grad * (((self_pi * self_pi.cos()) - self_pi.sin()) / self_squared_pi)      # (one quotient: MulBackward0)
    return _F().where(self_squared_pi == 0.0, _F().zeros((), dtype=grad.dtype), out)


sinc = _unary("sinc", "SincBackward0", _sinc, _sinc_grad)

_PI_OVER_180 = math.pi / 180.0
_180_OVER_PI = 180.0 / math.pi


def _scaled(factor):
    def forward(a):
        return a * a.dtype.type(factor)
    return forward


def _times(factor):
    """``at::mul(grad, factor)``: mul.Scalar (a MulBackward1 node under create_graph)."""
    def grad_formula(grad):
        return _apply(TABLE["mul_scalar"], (grad,), {"other": factor})
    return grad_formula


deg2rad = _unary("deg2rad", "Deg2RadBackward0", _scaled(_PI_OVER_180), _times(_PI_OVER_180))
rad2deg = _unary("rad2deg", "Rad2DegBackward0", _scaled(_180_OVER_PI), _times(_180_OVER_PI))


def _angle(a):
    """The argument of a real number: pi below 0, 0 otherwise, nan kept."""
    return np.where(np.isnan(a), a, np.where(a < 0, a.dtype.type(math.pi), a.dtype.type(0))).astype(a.dtype)


angle = op("angle", "AngleBackward0", _angle, self=lambda grad, self: _F().zeros_like(self),
           dtype=_FLOAT, domain="nonzero", forward_ad="element_wise",
           schema="angle(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="function method", samples=_ONE)



# ============================================================ modified Bessel functions of the first kind
def _i1_grad(grad, self, result):
    """FunctionsManual's i1_backward: I0(x) - I1(x) / x, with its limit 1/2 where |x| <= eps (the input
    kept away from 0 by a where, whose own derivative is then harmless)."""
    F = _F()
    eps = float(np.finfo(self.dtype.np).eps) if self.dtype.is_floating_point else float(np.finfo(np.float32).eps)
    not_tiny = self.abs() > eps
    safe = F.where(not_tiny, self, F.full((), eps, dtype=self.dtype))
    slope = safe.i0() - result * safe.reciprocal()
    return grad * F.where(not_tiny, slope, F.full((), 0.5, dtype=self.dtype))


def _special_i1(self):
    """``at::special_i1(self)`` as i0's formula calls it (a SpecialI1Backward0 node under create_graph)."""
    return _apply(TABLE["i1"], (self,))


i0 = op("i0", "I0Backward0", lambda a: special_math.bessel_i(a, 0), self=lambda grad, self: grad * _special_i1(self),
        dtype=_FLOAT, domain="real", forward_ad="element_wise", schema=_unary_schema("i0"),
        variants="function method inplace special", samples=_ONE)
i1 = op("i1", "SpecialI1Backward0", lambda a: special_math.bessel_i(a, 1), self=_i1_grad,
        dtype=_FLOAT, domain="real", forward_ad="element_wise", schema=_unary_schema("i1"), variants="special",
        samples=_ONE)


# ============================================================ binary
hypot = op("hypot", "HypotBackward0", _sleef("hypot", np.hypot, sleef.hypot_u05, sleef.hypot_u05), ("self", "other"),
           self=lambda grad, self, result: grad * self / result,
           other=lambda grad, other, result: grad * other / result,
           dtype=_kernel("hypot_cpu", "promote", "biu", on="promoted"), domain="nonzero", broadcast=True,
           forward_ad="element_wise", schema=_binary_schema("hypot"),
           tangent_formula=lambda self_t, other_t, self_p, other_p, result: (
               self_t * self_p / result + other_t * other_p / result), variants="function method inplace", samples=_TWO)


def _copysign_self_grad(grad, self, result):
    """FunctionsManual's ``copysign_tensor_self_backward``: grad times result/self, 0 where self is 0."""
    ratio = result / self
    return grad * ratio.masked_fill(self == 0, 0)


copysign = op("copysign", "CopysignBackward0", _rounded(np.copysign), ("self", "other"),
              self=_copysign_self_grad, other=lambda grad, other: _F().zeros_like(other),
              dtype=_FLOAT, domain="nonzero", forward_ad="element_wise",
              schema="copysign.Tensor(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor",
              variants="function method inplace", samples=_TWO)
copysign_scalar = op("copysign_scalar", "CopysignBackward1", lambda a, other: _rounded(np.copysign)(a, np.asarray(other)),
                     self=_copysign_self_grad, dtype=_FLOAT, domain="nonzero", forward_ad="element_wise",
                     schema="copysign.Scalar(Tensor self, Scalar other, *, Tensor(a!)? out=None) -> Tensor",
                     variants="function method inplace")


def _fmax_self(grad, self, other):
    return grad.masked_fill((self >= other).logical_or_(other.isnan()).logical_not_(), 0)


def _fmin_self(grad, self, other):
    return grad.masked_fill((self <= other).logical_or_(other.isnan()).logical_not_(), 0)


fmax = op("fmax", "FmaxBackward0", np.fmax, ("self", "other"),
          self=_fmax_self, other=lambda grad, self, other: grad.masked_fill((self >= other).logical_or_(other.isnan()), 0),
          dtype="promote", domain="distinct", forward_ad="element_wise",
          schema=_binary_schema("fmax"), variants="function method", samples=_TWO)
fmin = op("fmin", "FminBackward0", np.fmin, ("self", "other"),
          self=_fmin_self, other=lambda grad, self, other: grad.masked_fill((self <= other).logical_or_(other.isnan()), 0),
          dtype="promote", domain="distinct", forward_ad="element_wise",
          schema=_binary_schema("fmin"), variants="function method", samples=_TWO)


logaddexp2 = op("logaddexp2", "Logaddexp2Backward0", _rounded(np.logaddexp2), ("self", "other"),
                self=lambda grad, self, other: grad / (1 + 2 ** (other - self)),
                other=lambda grad, self, other: grad / (1 + 2 ** (self - other)),
                dtype=_kernel("logaddexp2_cpu", "float", "biu", on="promoted"), domain="real", broadcast=True,
                forward_ad="element_wise", schema=_binary_schema("logaddexp2"), variants="function method", samples=_TWO)
nextafter = op("nextafter", "NextafterBackward0", np.nextafter, ("self", "other"),
               self=lambda grad, self, other: _F().where(self != other, grad, 0),
               other=lambda grad, other: _F().zeros_like(other),
               dtype=_kernel("nextafter_cpu", "promote", "biu", on="promoted"), domain="real", twice=False, broadcast=True,
               forward_ad="element_wise", schema=_binary_schema("nextafter"), variants="function method inplace", samples=_TWO)


def _heaviside_dtype(ts, params):
    if ts[0]._dtype != ts[1]._dtype:
        raise errors.RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return None, ts[0]._dtype


def _heaviside(a, values):
    return np.where(a == 0, values, (a > 0).astype(a.dtype)).astype(a.dtype)


def _not_implemented(name):
    from .registry import NotDifferentiable
    return NotDifferentiable(f"derivative for aten::{name} is not implemented")


heaviside = op("heaviside", NOT_IMPLEMENTED_NODE, _heaviside, ("self", "values"),
               self=_not_implemented("heaviside"), values=_not_implemented("heaviside"),
               dtype=_heaviside_dtype, domain="real", broadcast=True,
               schema="heaviside(Tensor self, Tensor values, *, Tensor(a!)? out=None) -> Tensor",
               variants="function method inplace")


# ============================================================ torch.special's own ops
def _xlog1py(x, y):
    """ATen's scalar kernel: nan if y is nan, 0 where x == 0, else x * log1p(y) (the C library's log1p
    in the computing precision)."""
    log1p = special_math.libm("log1p")(y)
    return np.where(np.isnan(y), y, np.where(x == 0, x.dtype.type(0), x * log1p)).astype(np.result_type(x, y))


def _xlog1py_self(grad, self, other):
    """``at::special_xlog1py(grad, other)`` with 0 where self is 0 and other <= -1."""
    return _apply(TABLE["xlog1py"], (grad, other)).masked_fill((self == 0.0) & (other <= -1.0), 0.0)


xlog1py = op("xlog1py", "SpecialXlog1PyBackward0", _xlog1py, ("self", "other"),
             self=_xlog1py_self, other=lambda grad, self, other: grad * self / (other + 1),
             dtype=_kernel("xlog1py_cpu", "float", "b", on="promoted"), domain="positive", broadcast=True,
             forward_ad="element_wise", samples=_TWO,
             schema="xlog1py(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", variants="special")
# the overloads with a number: their own nodes, as in derivatives.yaml
def _xlog1py_self_scalar_other(grad, self, other):
    """``grad * self / (other + 1)`` with ``self`` a C++ Scalar: a Scalar product (MulBackward1)."""
    return _apply(TABLE["mul_scalar"], (grad,), {"other": self.item()}) / (other + 1)


xlog1py_self_scalar = op("xlog1py_self_scalar", "SpecialXlog1PyBackward1", _xlog1py, ("self", "other"),
                         other=_xlog1py_self_scalar_other,
                         dtype=xlog1py.dtype, domain="positive", forward_ad="element_wise",
                         schema="xlog1py.self_scalar(Scalar self, Tensor other, *, Tensor(a!)? out=None) -> Tensor",
                         variants="special")


def _xlog1py_other_scalar_self(grad, self, other):
    """``special_xlog1py(grad, other)`` of the Scalar overload (SpecialXlog1PyBackward2 under create_graph)."""
    scaled = _apply(TABLE["xlog1py_other_scalar"], (grad, other))
    return scaled if other.item() > -1.0 else scaled.masked_fill(self == 0.0, 0.0)


xlog1py_other_scalar = op("xlog1py_other_scalar", "SpecialXlog1PyBackward2", _xlog1py, ("self", "other"),
                          self=_xlog1py_other_scalar_self, dtype=xlog1py.dtype, domain="positive",
                          forward_ad="element_wise",
                          schema="xlog1py.other_scalar(Tensor self, Scalar other, *, Tensor(a!)? out=None) -> Tensor",
                          variants="special")


def _entr(a):
    """ATen's kernel: -x log x above 0, 0 at 0, -inf below, nan kept (log in the input's precision)."""
    t = a.dtype.type
    log = special_math.libm("log")(np.where(a > 0, a, t(1)))
    return np.where(np.isnan(a), a, np.where(a > 0, -a * log, np.where(a == 0, t(0), t(-np.inf)))).astype(a.dtype)


entr = op("entr", "SpecialEntrBackward0", _entr, self=lambda grad, self: grad * (-(1 + self.log())),
          dtype=_FLOAT, domain="positive", forward_ad="element_wise", samples=_ONE,
          schema="entr(Tensor self, *, Tensor(a!)? out=None) -> Tensor", variants="special")
