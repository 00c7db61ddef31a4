"""Fused backward ops: the kernels PyTorch's backward formulas call, as entries of their own.

PyTorch's ``derivatives.yaml`` writes the gradient of ``tanh`` as ``tanh_backward(grad, result)``,
of ``relu`` as ``threshold_backward(grad, result, 0)``, of ``mse_loss`` as
``mse_loss_backward(grad, self, target, reduction)`` …; each of these is an ATen op with a
derivative entry of its own.  So a gradient taken with ``create_graph=True`` records
``TanhBackwardBackward0`` (not the ``MulBackward0`` of a formula spelled out), and its own
gradient is that entry's formula.  The forward of each entry here is the CPU kernel's arithmetic in
its order (``tanh_backward`` is ``g * fma(-y, y, 1)``: the kernel is compiled with contraction);
the formulas are PyTorch's (``derivatives.yaml`` and ``FunctionsManual.cpp``), written with tensor
ops so a third derivative works.  The entries have no public names: the forward ops' formulas
(``pointwise``, ``nn``) call them through ``apply``.  The losses' and softmax's backwards read sizes
and dims of the whole input, so vmap maps them sample by sample (``batch="loop"``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import blocks, corner_grads, onednn_gelu, reduction_order, sleef, vectorized_float
from ..exact import fma
from ..graph import no_grad
from ..tensor import Tensor
from .common import _F, _apply, _exp, _vector_or_scalar, _zero_where, in_float32
from .registry import NotDifferentiable, op


def _ops():
    """The op package (the forward families import this file, so their entries are read late)."""
    from .. import ops
    return ops


def _smul(t, s):
    """``t * s`` for a C++ Scalar ``s`` (mul.Scalar: ``MulBackward1``)."""
    return _apply(_ops().mul_scalar, (t,), {"other": s})


def _sdiv(t, s):
    return _apply(_ops().div_scalar, (t,), {"other": s})


def _const(array, like):
    """A loss's weight (an array parameter: PyTorch sends it no gradient) as a tensor."""
    return Tensor._make(np.asarray(array, like.dtype.np))


def _erf(a):
    from .pointwise import _erf
    return _erf(a)


def _softmax_backward(g, y, dim):
    from ..softmax_order import softmax_backward      # (loaded by the first softmax backward)
    return softmax_backward(g, y, dim)


def _log_softmax_backward(g, y, dim):
    from ..softmax_order import log_softmax_backward
    return log_softmax_backward(g, y, dim)


# ============================================================ activations
def _tanh_backward32(g, y):
    """``g * fma(-y, y, 1)`` for float32 ``y`` (PyTorch's ``1 - y * y``, contracted). y² is exact in
    float64, so ``1 - y²`` there is rounded once, and rounding that to float32 is the single rounding
    the fma does. The double rounding could only differ where the float64 difference lands exactly
    on a float32 midpoint without being exact, and for |y| <= 1 (tanh's outputs) there is no such
    float32 (all 2**31 of them checked), so no element needs the exact fma. Computed block by block
    (``blocks``) in a float64 scratch that stays in the cache: a float64 temporary of the whole array
    costs three extra passes over memory."""
    factor = np.empty(y.shape, np.float32)
    flat, dest = y.reshape(-1), factor.reshape(-1)
    # a float32 grad of the same layout is multiplied in while the block is in cache
    same = g.shape == y.shape and g.dtype == np.float32
    grad = g.reshape(-1) if same and g.flags.c_contiguous else None
    scratch = np.empty(min(blocks.BLOCK, flat.size), np.float64)
    for span in blocks.spans(flat.size):
        part, out = flat[span], dest[span]
        wide = scratch[:part.size]
        np.copyto(wide, part)
        np.multiply(wide, wide, out=wide)
        np.subtract(1.0, wide, out=wide)
        np.copyto(out, wide, casting="same_kind")
        if grad is not None:
            np.multiply(grad[span], out, out=out)
    if grad is not None:
        return factor
    return np.multiply(g, factor, out=factor) if same else g * factor


def _tanh_backward(g, y):
    if y.dtype == np.float32:
        return _tanh_backward32(g, y)
    return g * fma(-y, y, y.dtype.type(1))


tanh_backward = op(
    "tanh_backward", "TanhBackwardBackward0", in_float32(_tanh_backward), ("grad_output", "output"),
    grad_output=lambda grad, output: _apply(tanh_backward, (grad, output)),
    output=lambda grad, grad_output, output: grad * (_smul(output, -2) * grad_output),
    domain="unit", forward_ad="element_wise")


def _sigmoid_backward(g, y):
    """``g * (1 - y) * y``; float16 in float16, each step rounded (ATen's Half kernel, unlike the other
    activations' backward kernels: measured on 100,000 random halves, none differ)."""
    return g * (y.dtype.type(1) - y) * y


sigmoid_backward = op(
    "sigmoid_backward", "SigmoidBackwardBackward0", _sigmoid_backward, ("grad_output", "output"),
    grad_output=lambda grad, output: _apply(sigmoid_backward, (grad, output)),
    output=lambda grad, grad_output, output: (grad * grad_output) * (_smul(output, -2) + 1),
    domain="probability", forward_ad="element_wise")


def _threshold_backward(g, x, threshold):
    """``x <= threshold ? 0 : g`` (a nan x passes g)."""
    if x.dtype == g.dtype:
        picked = _zero_where(x <= threshold, g)
        if picked is not None:
            return picked
    return np.where(x <= threshold, g.dtype.type(0), g)


threshold_backward = op(
    "threshold_backward", "ThresholdBackwardBackward0", _threshold_backward, ("grad_output", "self"),
    grad_output=lambda grad, self, threshold: _apply(threshold_backward, (grad, self), {"threshold": threshold}),
    self=corner_grads.zero_grad, domain="nonzero", broadcast=True, forward_ad="element_wise")


def _leaky_relu_backward(g, x, negative_slope, self_is_result=False):
    return np.where(x > 0, g, g * g.dtype.type(negative_slope))


leaky_relu_backward = op(
    "leaky_relu_backward", "LeakyReluBackwardBackward0", in_float32(_leaky_relu_backward), ("grad_output", "self"),
    grad_output=lambda grad, self, negative_slope: leaky_relu_grad(grad, self, negative_slope),
    self=corner_grads.zero_grad, domain="nonzero", broadcast=True, forward_ad="element_wise")


def leaky_relu_grad(grad, self, negative_slope, self_is_result=False):
    return _apply(leaky_relu_backward, (grad, self),
                  {"negative_slope": negative_slope, "self_is_result": self_is_result})


def _softplus_backward(g, x, beta, threshold):
    """ATen's softplus_backward kernel: g where x·beta > threshold, else g·z/(z + 1) with z = exp(x·beta):
    SLEEF's exp on the vector loop's runs, the C library's on the tails."""
    c = x.dtype.type
    b, th = c(beta), c(threshold)

    def kernel(exp):
        def run(gv, xv):
            with np.errstate(all="ignore"):
                bx = xv * b
                z = exp(bx)
                return np.where(bx > th, gv, gv * z / (z + c(1))).astype(xv.dtype)
        return run
    if sleef.vector_function("exp", x.dtype) is None or g.dtype != x.dtype:
        return kernel(np.exp)(g, x)
    return sleef.vectorized_map((g, x), kernel(sleef.exp), kernel(sleef.libm_exp), reduction_order.threads())


def softplus_grad(grad, self, beta=1, threshold=20):         # (ATen's defaults, Scalars 1 and 20)
    return _apply(softplus_backward, (grad, self), {"beta": beta, "threshold": threshold})


def _softplus_double_backward(grad, self, beta, threshold):
    """FunctionsManual's: ``sigmoid_backward(grad, x.sigmoid()) * (x < threshold) * beta``, x = self·beta."""
    x = _smul(self, beta)
    inside = (x < threshold).to(grad.dtype)
    return _smul(_apply(sigmoid_backward, (grad, x.sigmoid())) * inside, beta)


softplus_backward = op(
    "softplus_backward", "SoftplusBackwardBackward0", in_float32(_softplus_backward), ("grad_output", "self"),
    grad_output=softplus_grad,
    self=lambda grad, grad_output, self, beta, threshold:
    _softplus_double_backward(grad * grad_output, self, beta, threshold),
    domain="real", forward_ad="element_wise")


def _elu_backward(g, x, alpha, scale, input_scale, is_result):
    """ATen's elu_backward kernel, the coefficients in x's type (alpha·scale a product of the two); from the
    input, SLEEF's exp on the vector loop's runs and the C library's on the tails; from the result (the
    in-place forms), g·input_scale·(result + alpha·scale) on the negative side, split between the loops alike."""
    c = g.dtype.type
    negcoef, poscoef, negiptcoef = c(alpha) * c(scale), c(scale), c(input_scale)

    def kernel(exp, positive):
        def run(gv, xv):
            with np.errstate(all="ignore"):
                negative = gv * negiptcoef * (xv + negcoef) if is_result else \
                    gv * negiptcoef * negcoef * exp(xv * negiptcoef)
                return np.where(positive(xv), gv * poscoef, negative)
        return run
    # the vector loop blends on x > 0, the scalar one tests x <= 0: a nan takes the negative side in the
    # first and the positive one in the second (its gradient nan there, grad · scale here)
    vector, scalar = kernel(sleef.exp, lambda xv: xv > 0), kernel(sleef.libm_exp, lambda xv: ~(xv <= 0))
    if g.dtype not in (np.float32, np.float64) or x.dtype != g.dtype:
        return kernel(np.exp, lambda xv: ~(xv <= 0))(g, x)
    return sleef.vectorized_map((g, x), vector, scalar, reduction_order.threads())


def elu_grad(grad, self_or_result, alpha=1.0, is_result=False, scale=1, input_scale=1):    # (elu's: Scalars 1)
    return _apply(elu_backward, (grad, self_or_result),
                  {"alpha": alpha, "scale": scale, "input_scale": input_scale, "is_result": is_result})


def _elu_double_backward(grad, grad_output, self_or_result, alpha, scale, input_scale, is_result):
    negative = (self_or_result < 0).to(grad.dtype)
    if is_result:
        return _smul(grad * grad_output, input_scale) * negative
    return elu_grad(_smul(grad * grad_output, input_scale), self_or_result, alpha, is_result, scale,
                    input_scale) * negative


elu_backward = op(
    "elu_backward", "EluBackwardBackward0", in_float32(_elu_backward), ("grad_output", "self_or_result"),
    grad_output=lambda grad, self_or_result, alpha, scale, input_scale, is_result:
    elu_grad(grad, self_or_result, alpha, is_result, scale, input_scale),
    self_or_result=_elu_double_backward, domain="nonzero", forward_ad="element_wise")

_SQRT1_2 = math.sqrt(0.5)
_GELU_PDF = 2 / math.sqrt(math.pi) * _SQRT1_2 * 0.5          # M_2_SQRTPI * M_SQRT1_2 * 0.5
_GELU_TANH_BETA = math.sqrt(2.0) * (2 / math.sqrt(math.pi)) * 0.5
_GELU_KAPPA = 0.044715


def gelu_tanh(x, tanh):
    """GeluKernelImpl's tanh approximation of one loop, with ``tanh`` that loop's: 0.5·x·(1 + tanh(β(x + κx³)))
    (the inner sum fused, as PyTorch's AVX2 build contracts it)."""
    c = x.dtype.type
    with np.errstate(all="ignore"):
        return c(0.5) * x * (c(1) + tanh(c(_GELU_TANH_BETA) * fma(c(_GELU_KAPPA), x * x * x, x)))


def _gelu_tanh_backward(g, x, tanh):
    """GeluBackwardKernelImpl's tanh approximation of one loop: the inner sum, the tanh derivative and the
    inner derivative fused (fma), as PyTorch's AVX2 build rounds them."""
    c = x.dtype.type
    with np.errstate(all="ignore"):
        beta, kappa = c(_GELU_TANH_BETA), c(_GELU_KAPPA)
        x_sq = x * x
        tanh_inner = tanh(beta * fma(kappa, x_sq * x, x))
        left = c(0.5) * x
        left_derivative = c(0.5) * (c(1) + tanh_inner)
        tanh_derivative = fma(-tanh_inner, tanh_inner, c(1))
        inner_derivative = beta * fma(c(3) * kappa, x_sq, c(1))
        return g * (left_derivative + left * tanh_derivative * inner_derivative)


def _gelu_backward(g, x, approximate="none", onednn=True):
    if approximate == "tanh":
        vector = sleef.vector_function("tanh", x.dtype)
        if vector is None or g.dtype != x.dtype:
            return _gelu_tanh_backward(g, x, np.tanh)
        return sleef.vectorized_map((g, x), lambda gv, xv: _gelu_tanh_backward(gv, xv, vector),
                                    lambda gv, xv: _gelu_tanh_backward(gv, xv, lambda v: sleef.libm("tanh", v)),
                                    reduction_order.threads())
    if onednn and gelu_by_onednn(x):
        return onednn_gelu.gelu_backward(g, x)
    if x.dtype not in (np.float32, np.float64) or g.dtype != x.dtype:
        return _gelu_erf_backward(g, x, _erf, np.exp, True)
    return sleef.vectorized_map((g, x), lambda gv, xv: _gelu_erf_backward(gv, xv, vector_erf(x.dtype), sleef.exp, True),
                                lambda gv, xv: _gelu_erf_backward(gv, xv, lambda v: sleef.libm("erf", v),
                                                                  sleef.libm_exp, False), reduction_order.threads())


def vector_erf(dtype):
    """``Vectorized::erf``: ATen's own polynomial for float32 (vectorized_float.erf), SLEEF's erfd for
    float64 (vectorized_double.erfd)."""
    from .. import vectorized_double
    return vectorized_float.erf if dtype == np.float32 else vectorized_double.erfd


def _gelu_backward_any_float(g, x, approximate="none"):
    if x.dtype == np.float16 and g.dtype == np.float16:
        return _gelu_backward_half(g, x, approximate)
    if x.dtype == np.float16:
        f32 = np.float32
        return _gelu_backward(g.astype(f32), x.astype(f32), approximate).astype(np.float16)
    return _gelu_backward(g, x, approximate)


def _gelu_backward_half(g, x, approximate):
    """GeluBackwardKernelImpl's reduced-precision branch: the loop runs over halves (runs of two vectors of
    16, the tails element by element), each converted to float32, through float32's steps and rounded back
    once; its last sum is not fused in the vector loop, as it is for float32 (measured: fused, 35 of 2^20
    values differ). Where oneDNN has native fp16 (onednn_gelu.takes_half) the
    erf form of a contiguous tensor is its kernel's, approximated by its float32 one."""
    f32, half = np.float32, np.float16
    if approximate == "tanh":
        vector_tanh = sleef.vector_function("tanh", f32)

        def vector(gv, xv):
            return _gelu_tanh_backward(gv.astype(f32), xv.astype(f32), vector_tanh).astype(half)

        def scalar(gv, xv):
            return _gelu_tanh_backward(gv.astype(f32), xv.astype(f32), lambda v: sleef.libm("tanh", v)).astype(half)
    elif onednn_gelu.takes_half() and gelu_by_onednn(x.astype(f32)):
        return onednn_gelu.gelu_backward(g.astype(f32), x.astype(f32)).astype(half)
    else:
        def vector(gv, xv):
            return _gelu_erf_backward(gv.astype(f32), xv.astype(f32), vector_erf(f32), sleef.exp, False).astype(half)

        def scalar(gv, xv):
            return _gelu_erf_backward(gv.astype(f32), xv.astype(f32), lambda v: sleef.libm("erf", v),
                                      sleef.libm_exp, False).astype(half)
    return sleef.vectorized_map((g, x), vector, scalar, reduction_order.threads())


def gelu_by_onednn(x):
    """Whether ATen hands GELU (erf form) of ``x`` to oneDNN (``use_mkldnn``: a contiguous float32 tensor of
    more than one element)."""
    return x.dtype == np.float32 and x.size > 1 and x.flags.c_contiguous


def gelu_erf(x, erf):
    """GeluKernelImpl's erf form of one loop, with ``erf`` that loop's: x·0.5·(1 + erf(x/√2))."""
    c = x.dtype.type
    with np.errstate(all="ignore"):
        return x * c(0.5) * (c(1) + erf(x * c(_SQRT1_2)))


def _gelu_erf_backward(g, x, erf, exp, fused):
    """GeluBackwardKernelImpl's erf form of one loop: g·(cdf + x·pdf), the last sum ``fused`` in the vector
    loop as PyTorch's AVX2 build contracts it, not in the scalar one (measured both ways)."""
    c = x.dtype.type
    with np.errstate(all="ignore"):
        cdf = c(0.5) * (c(1) + erf(x * c(_SQRT1_2)))
        pdf = c(_GELU_PDF) * exp(x * x * c(-0.5))
        return g * (fma(x, pdf, cdf) if fused else cdf + x * pdf)


def gelu_grad(grad, self, approximate="none"):
    return _apply(gelu_backward, (grad, self), {"approximate": approximate})


def _gelu_double_backward(grad, grad_output, self, approximate):
    """FunctionsManual's gelu_double_backward: ``grad * grad_output * d(gelu')/dx``."""
    if approximate == "tanh":
        beta, kappa = _GELU_TANH_BETA, _GELU_KAPPA
        inner = _smul(self + _smul(self.pow(3), kappa), beta)
        tanh_inner = inner.tanh()
        sech_inner = 1 / inner.cosh()
        f = _smul(self, 0.5)
        g = 1 - tanh_inner * tanh_inner
        h = _smul(1 + _smul(_smul(self, 3 * kappa) * self, 1), beta)
        f_prime_gh = _smul(g, 0.5) * h
        g_prime = _smul(sech_inner, 2) * (-sech_inner * tanh_inner) * h
        g_prime_fh = f * h * g_prime
        h_prime = _smul(_smul(self, 6 * kappa), beta)
        h_prime_fg = f * g * h_prime
        return grad * grad_output * (f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg)
    input_sq = self * self
    pdf = _smul(_smul(input_sq, -0.5).exp(), _GELU_PDF)
    return grad * grad_output * (_smul(pdf, 2) - input_sq * pdf)


gelu_backward = op(
    "gelu_backward", "GeluBackwardBackward0", _gelu_backward_any_float, ("grad_output", "self"),
    grad_output=lambda grad, self, approximate: gelu_grad(grad, self, approximate),
    self=_gelu_double_backward, domain="real", forward_ad="element_wise")


# ============================================================ losses
def _mse_loss_backward(g, x, t, reduction="mean"):
    c = x.dtype.type
    norm = c(2.0 / x.size) if reduction == "mean" else c(2.0)
    return norm * (x - t) * g


def mse_grad(grad, self, target, reduction="mean"):
    return _apply(mse_loss_backward, (grad, self, target), {"reduction": reduction})


def _mse_double_backward(grad, self, reduction):
    g = _smul(grad, 2)
    return _sdiv(g, self.numel()) if reduction == "mean" else g


mse_loss_backward = op(
    "mse_loss_backward", "MseLossBackwardBackward0", in_float32(_mse_loss_backward),
    ("grad_output", "self", "target"),
    grad_output=mse_grad,
    self=lambda grad, grad_output, self, reduction: _mse_double_backward(grad * grad_output, self, reduction),
    target=lambda grad, grad_output, target, reduction: -_mse_double_backward(grad * grad_output, target,
                                                                              reduction),
    broadcast=True, domain="real", forward_ad="element_wise", batch="loop")


def _smooth_l1_loss_backward(g, x, t, reduction="mean", beta=1.0):
    c = x.dtype.type
    norm = c(1.0 / x.size) if reduction == "mean" else c(1.0)
    d = x - t
    with np.errstate(all="ignore"):
        inner = d / c(beta) if beta else np.zeros_like(d)
    slope = np.where(d <= -beta, c(-1), np.where(d >= beta, c(1), inner))
    return slope * norm * g


def smooth_l1_grad(grad, self, target, reduction="mean", beta=1.0):
    return _apply(smooth_l1_loss_backward, (grad, self, target), {"reduction": reduction, "beta": beta})


def _smooth_l1_double_backward(grad, self, target, reduction, beta):
    if beta == 0:
        return _F().zeros_like(grad)
    inside = ((self - target).abs() < beta).to(grad.dtype)
    g = _sdiv(grad * inside, beta)
    return _sdiv(g, self.numel()) if reduction == "mean" else g


smooth_l1_loss_backward = op(
    "smooth_l1_loss_backward", "SmoothL1LossBackwardBackward0", in_float32(_smooth_l1_loss_backward),
    ("grad_output", "self", "target"),
    grad_output=smooth_l1_grad,
    self=lambda grad, grad_output, self, target, reduction, beta:
    _smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta),
    target=lambda grad, grad_output, self, target, reduction, beta:
    -_smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta),
    broadcast=True, domain="real", forward_ad="element_wise", batch="loop")

def _huber_loss_backward(g, x, t, reduction="mean", delta=1.0):
    c = x.dtype.type
    norm, d = c(1.0 / x.size) if reduction == "mean" else c(1.0), c(delta)
    diff = x - t
    return np.where(diff <= -d, -norm * g * d, np.where(diff >= d, norm * g * d, diff * norm * g))


def huber_grad(grad, self, target, reduction="mean", delta=1.0):
    return _apply(huber_loss_backward, (grad, self, target), {"reduction": reduction, "delta": delta})


def _huber_double_backward(grad, self, target, reduction, delta):
    g = grad * ((self - target).abs() < delta).to(grad.dtype)
    return _sdiv(g, self.numel()) if reduction == "mean" else g


def _huber_double_backward_grad_output(grad, grad_output, self, target, reduction="mean", delta=1.0):
    """FunctionsManual's huber_loss_double_backward_grad_output: a reduced loss's grad_output is one
    number, so its gradient is the backward at grad_output = 1 weighted by grad and summed."""
    if reduction == "none":
        return huber_grad(grad, self, target, reduction, delta)
    return (huber_grad(_F().ones_like(grad_output), self, target, reduction, delta) * grad).sum()


huber_loss_backward = op(
    "huber_loss_backward", "HuberLossBackwardBackward0", in_float32(_huber_loss_backward),
    ("grad_output", "self", "target"),
    grad_output=_huber_double_backward_grad_output,
    self=lambda grad, grad_output, self, target, reduction, delta:
    _huber_double_backward(grad * grad_output, self, target, reduction, delta),
    target=lambda grad, grad_output, self, target, reduction, delta:
    -_huber_double_backward(grad * grad_output, self, target, reduction, delta),
    broadcast=True, domain="real", forward_ad="transpose", batch="loop")     # (grad_output's formula sums)

def _soft_margin_loss_backward(g, x, t, reduction="mean"):
    """ATen's kernel: z = exp(-target · input) (VML's exp), target · z · (-norm), divided by z + 1,
    times grad_output, each step rounded in the input's type."""
    c = x.dtype.type
    norm = c(-(1.0 / x.size if reduction == "mean" else 1.0))
    z = _exp(np.asarray((-t) * x, x.dtype))
    return np.asarray(t * z * norm / (z + c(1)) * g, x.dtype)


def soft_margin_grad(grad, self, target, reduction="mean"):
    return _apply(soft_margin_loss_backward, (grad, self, target), {"reduction": reduction})


def _soft_margin_double_backward(grad, self, target, reduction):
    """FunctionsManual's soft_margin_loss_double_backward: grad · target² · z / (z + 1)², z = exp(-target · self)."""
    z = (self * -target).exp()
    zplus1 = z + 1
    g = grad * (target * target) * z / (zplus1 * zplus1)
    return _sdiv(g, self.numel()) if reduction == "mean" else g


def _soft_margin_double_backward_grad_output(grad, grad_output, self, target, reduction="mean"):
    """soft_margin_loss_double_backward_grad_output: as huber's, the backward at grad_output = 1
    weighted by grad and summed when the loss is reduced."""
    if reduction == "none":
        return soft_margin_grad(grad, self, target, reduction)
    return (soft_margin_grad(_F().ones_like(grad_output), self, target, reduction) * grad).sum()


soft_margin_loss_backward = op(
    "soft_margin_loss_backward", "SoftMarginLossBackwardBackward0", in_float32(_soft_margin_loss_backward),
    ("grad_output", "self", "target"),
    grad_output=_soft_margin_double_backward_grad_output,
    self=lambda grad, grad_output, self, target, reduction:
    _soft_margin_double_backward(grad * grad_output, self, target, reduction),
    broadcast=True, domain="real", batch="loop")

_BCE_EPS = 1e-12


def _bce_backward(g, x, t, weight=None, reduction="mean"):
    c = x.dtype.type
    out = g * (x - t) / np.maximum((c(1) - x) * x, c(_BCE_EPS))
    if weight is not None:
        out = out * np.asarray(weight, x.dtype)
    return out / c(x.size) if reduction == "mean" else out


def bce_grad(grad, self, target, weight=None, reduction="mean"):
    params = {"reduction": reduction}
    if weight is not None:
        params["weight"] = weight
    return _apply(binary_cross_entropy_backward, (grad, self, target), params)


def _bce_weighted(t, weight, reduction, n):
    if weight is not None:
        t = t * _const(weight, t)
    return _sdiv(t, n) if reduction == "mean" else t


def _bce_double_backward(grad, grad_output, self, target, weight=None, reduction="mean"):
    """d/dself: ``(x² - 2xy + y) / ((x + eps)² (1 - x + eps)²) · grad · grad_output``."""
    eps = _BCE_EPS
    numerator = self * self - _smul(self, 2) * target + target
    denominator = (self + eps).pow(2) * (1 - self + eps).pow(2)
    return _bce_weighted(numerator / denominator * (grad * grad_output), weight, reduction, self.numel())


def _bce_double_backward_grad_output(grad, self, target, weight=None, reduction="mean"):
    g = (self - target) / ((self + _BCE_EPS) * (1 - self + _BCE_EPS)) * grad
    return _bce_weighted(g, weight, reduction, self.numel())


def _bce_double_backward_target(grad, grad_output, self, weight=None, reduction="mean"):
    res = -grad * grad_output
    if weight is not None:
        res = res * _const(weight, self)
    denominator = (1 - self) * self
    with no_grad():                         # PyTorch clamps in place without recording: the graph is (1-x)x's
        denominator.clamp_min_(_BCE_EPS)
    res = res / denominator
    return _sdiv(res, self.numel()) if reduction == "mean" else res


binary_cross_entropy_backward = op(
    "binary_cross_entropy_backward", "BinaryCrossEntropyBackwardBackward0", in_float32(_bce_backward),
    ("grad_output", "self", "target"),
    grad_output=_bce_double_backward_grad_output, self=_bce_double_backward, target=_bce_double_backward_target,
    broadcast=True, domain="probability", forward_ad="element_wise", batch="loop")


_SUMS_ONES_EXACTLY = (np.dtype(np.float32), np.dtype(np.float64))     # (float16 cannot count past 2048)


def _nll_loss_backward(g, x, target, weight=None, reduction="mean", ignore_index=-100):
    """-w[t] · grad_output (divided by the total weight for a mean) at each sample's target class."""
    logp2 = x[None, :] if x.ndim == 1 else x if x.ndim == 2 else np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])
    tgt = target.reshape(-1)
    valid = tgt != ignore_index
    n = len(tgt)
    if weight is None and reduction != "none" and x.ndim <= 2 and x.dtype in _SUMS_ONES_EXACTLY \
            and n < 1 << 24 and np.count_nonzero(valid) == n:
        # every sample counts with weight 1: the total weight is n exactly, each row's entry -g/n (or -g)
        go = g.reshape(()).astype(x.dtype)
        out = np.zeros(logp2.shape, x.dtype)
        out[np.arange(n), tgt] = -(go / x.dtype.type(n)) if reduction == "mean" else -go
        return out[0] if x.ndim == 1 else out
    safe = np.where(valid, tgt, 0)
    if weight is None:
        wt = valid.astype(x.dtype)
    else:
        wt = np.where(valid, np.asarray(weight, x.dtype)[safe], 0).astype(x.dtype)
    if reduction == "none":
        per = -(g.reshape(-1).astype(x.dtype))
    else:
        go = g.reshape(()).astype(x.dtype)
        per = np.full(len(tgt), -(go / wt.sum(dtype=x.dtype)) if reduction == "mean" else -go, x.dtype)
    out = np.zeros(logp2.shape, x.dtype)            # row-major whatever the layout of x
    rows = np.flatnonzero(valid)
    out[rows, safe[rows]] = wt[rows] * per[rows]
    if x.ndim <= 2:
        return out[0] if x.ndim == 1 else out
    moved = out.reshape(np.moveaxis(x, 1, -1).shape)
    return np.ascontiguousarray(np.moveaxis(moved, -1, 1))


def _nll_params(weight, reduction, ignore_index):
    params = {"reduction": reduction, "ignore_index": ignore_index}
    if weight is not None:
        params["weight"] = weight
    return params


def _nll_of_grad(forward_name):
    def of_grad(grad, target, weight=None, reduction="mean", ignore_index=-100):
        """d/dgrad_output: the forward loss of ``grad`` (``nll_loss(grad, target, weight, ...)``)."""
        return _apply(getattr(_ops(), forward_name), (grad, target), _nll_params(weight, reduction, ignore_index))
    return of_grad


nll_loss_backward = op(
    "nll_loss_backward", "NllLossBackwardBackward0", _nll_loss_backward, ("grad_output", "self", "target"),
    grad_output=_nll_of_grad("nll_loss"), self=corner_grads.zero_grad, dtype="first", domain="logprob",
    forward_ad="transpose", batch="loop")
nll_loss2d_backward = op(
    "nll_loss2d_backward", "NllLoss2DBackwardBackward0", _nll_loss_backward, ("grad_output", "self", "target"),
    grad_output=_nll_of_grad("nll_loss2d"), self=corner_grads.zero_grad, dtype="first", domain="logprob",
    forward_ad="transpose", batch="loop")


def nll_grad(grad, self, target, weight=None, reduction="mean", ignore_index=-100):
    """nll_loss's: ``nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)``."""
    return _apply(nll_loss_backward, (grad, self, target), _nll_params(weight, reduction, ignore_index))


def nll2d_grad(grad, self, target, weight=None, reduction="mean", ignore_index=-100):
    return _apply(nll_loss2d_backward, (grad, self, target), _nll_params(weight, reduction, ignore_index))


# ============================================================ softmax
def softmax_grad(grad, result, dim):
    return _apply(softmax_backward_data, (grad, result), {"dim": dim})


def _softmax_double_backward(grad, grad_output, output, dim):
    """FunctionsManual's: ``gO·g - (y·gO).sum(dim)·g - gO·(y·g).sum(dim)``."""
    return (grad_output * grad - (output * grad_output).sum(dim, keepdim=True) * grad
            - grad_output * (output * grad).sum(dim, keepdim=True))


softmax_backward_data = op(
    "softmax_backward_data", "SoftmaxBackwardDataBackward0", in_float32(_softmax_backward),
    ("grad_output", "output"),
    grad_output=lambda grad, output, dim: softmax_grad(grad, output, dim),
    output=lambda grad, grad_output, output, dim: _softmax_double_backward(grad, grad_output, output, dim),
    domain="probability", forward_ad="transpose", twice=True, batch="loop")


def log_softmax_grad(grad, result, dim):
    return _apply(log_softmax_backward_data, (grad, result), {"dim": dim})


log_softmax_backward_data = op(
    "log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0", in_float32(_log_softmax_backward),
    ("grad_output", "output"),
    grad_output=lambda grad, output, dim: grad - (grad * output.exp()).sum(dim, keepdim=True),
    output=lambda grad, grad_output, output, dim: -grad_output.sum(dim, keepdim=True) * output.exp() * grad,
    domain="logprob", forward_ad="transpose", batch="loop")


# ---------------------------------------------------------------- shrinks, hard sigmoid / swish
def _shrink_backward(g, x, lambd):
    """hardshrink_backward and softshrink_backward: the gradient where |x| > lambd, else 0."""
    c = x.dtype.type
    return _zero_where((x >= c(-lambd)) & (x <= c(lambd)), g)


def shrink_grad(entry, grad, self, lambd):
    return _apply(entry, (grad, self), {"lambd": lambd})


hardshrink_backward = op(
    "hardshrink_backward", "HardshrinkBackwardBackward0", _shrink_backward, ("grad_out", "self"),
    grad_out=lambda grad, self, lambd: shrink_grad(hardshrink_backward, grad, self, lambd),
    self=corner_grads.zero_grad, domain="nonzero", broadcast=True, forward_ad="element_wise")
softshrink_backward = op(
    "softshrink_backward", "SoftshrinkBackwardBackward0", _shrink_backward, ("grad_output", "self"),
    grad_output=lambda grad, self, lambd: shrink_grad(softshrink_backward, grad, self, lambd),
    self=corner_grads.zero_grad, domain="nonzero", broadcast=True, forward_ad="element_wise")


def _hardsigmoid_backward(g, x):
    # ATen's kernel: grad * one_sixth inside (-3, 3), one_sixth being the float 1.0f / 6.0f in every dtype
    c = x.dtype.type
    return np.where((x > c(-3)) & (x < c(3)), g * g.dtype.type(np.float32(1) / np.float32(6)), g.dtype.type(0))


hardsigmoid_backward = op(
    "hardsigmoid_backward", "torch::autograd::NotImplemented", in_float32(_hardsigmoid_backward), ("grad_output", "self"),
    grad_output=NotDifferentiable("derivative for aten::hardsigmoid_backward is not implemented"),
    self=NotDifferentiable("derivative for aten::hardsigmoid_backward is not implemented"),
    domain="nonzero", broadcast=True)


def _hardswish_backward(g, x):
    """ATen's hardswish_backward kernel: 0 up to -3, g·(x/3 + 1/2) below 3, g from 3 on; at nan its vector
    lambda gives the middle formula's nan, its scalar one g."""
    c = x.dtype.type

    def kernel(nan_in_middle):
        def run(gv, xv):
            middle = gv * (xv / c(3) + c(0.5))
            upper = np.where(xv >= c(3), gv, middle) if nan_in_middle else np.where(xv < c(3), middle, gv)
            return np.where(xv <= c(-3), gv.dtype.type(0), upper).astype(gv.dtype)
        return run
    return _vector_or_scalar((g, x), kernel(True), kernel(False))


hardswish_backward = op(
    "hardswish_backward", "HardswishBackwardBackward0", in_float32(_hardswish_backward), ("grad_output", "self"),
    grad_output=lambda grad, self: _apply(hardswish_backward, (grad, self)),
    self=lambda grad, grad_output, self: (grad * grad_output / 3.0).where((self > -3.0).logical_and(self < 3.0), 0.0),
    domain="nonzero", broadcast=True, forward_ad="element_wise")


# ---------------------------------------------------------------- glu, rrelu
def _glu_backward(g, x, dim):
    """ATen's glu_backward: the first half ``sigmoid(b) · gO``, the second ``(1 - sigmoid(b)) · sigmoid(b)
    · a · gO`` (its kernel's order; a, b: the input's halves along ``dim``)."""
    from .pointwise import _sigmoid
    first, second = np.split(x, 2, axis=dim)
    gate = _sigmoid(second)
    one = x.dtype.type(1)
    return np.concatenate((gate * g, (one - gate) * gate * first * g), axis=dim)


def glu_grad(grad, self, dim=-1):
    return _apply(glu_backward, (grad, self), {"dim": dim})


def _glu_double_backward(grad, grad_output, self, dim):
    """FunctionsManual's glu_double_backward: ``grad``'s halves through the derivatives of both halves'
    gradients (a, b: the input's halves, s = sigmoid(b))."""
    half = self.shape[dim] // 2
    first, second = self.narrow(dim, 0, half), self.narrow(dim, half, half)
    sig = second.sigmoid()
    one_sub_sig = 1 - sig
    sig_one_sub_sig = sig * one_sub_sig
    gg_first, gg_second = grad.narrow(dim, 0, half), grad.narrow(dim, half, half)
    gg_second_times_first = gg_second * first
    gi_first = gg_second * grad_output * sig_one_sub_sig
    second_order = sig_one_sub_sig * one_sub_sig - sig * sig_one_sub_sig
    gi_second = gg_second_times_first * grad_output * second_order + gg_first * grad_output * sig_one_sub_sig
    from ..functions import cat
    return cat([gi_first, gi_second], dim)


def _glu_double_backward_grad_output(grad, self, dim):
    """glu_backward is linear in grad_output: ``grad · glu_backward(ones, self)``, its halves summed."""
    half = self.shape[dim] // 2
    sizes = list(self.shape)
    sizes[dim] = half
    tmp = grad * glu_grad(Tensor._make(np.ones(sizes, self.dtype.np)), self, dim)
    return tmp.narrow(dim, 0, half) + tmp.narrow(dim, half, half)


glu_backward = op(
    "glu_backward", "GluBackwardBackward0", in_float32(_glu_backward), ("grad_output", "self"),
    grad_output=lambda grad, self, dim: _glu_double_backward_grad_output(grad, self, dim),
    self=_glu_double_backward, broadcast=False, domain="real", batch="loop")


def _rrelu_backward(g, x, noise, lower, upper, training):
    """ATen's rrelu_with_noise_backward: ``gO · noise`` in training (noise is 1 where x > 0), else
    leaky_relu_backward with the mean slope (``noise`` holds it): both are gO where x > 0, else gO · slope."""
    return np.where(x > 0, g, g * noise.astype(g.dtype))


def rrelu_grad(grad, self_or_result, noise, lower, upper, training):
    """rrelu's (``self_is_result`` in place: the result is positive where the input was, so one kernel)."""
    return _apply(rrelu_with_noise_backward, (grad, self_or_result),
                  {"noise": noise, "lower": lower, "upper": upper, "training": training})


rrelu_with_noise_backward = op(
    "rrelu_with_noise_backward", "RreluWithNoiseBackwardBackward0", _rrelu_backward, ("grad_output", "self"),
    grad_output=lambda grad, self, noise, lower, upper, training: rrelu_grad(grad, self, noise, lower, upper,
                                                                           training),
    self=corner_grads.zero_grad, domain="nonzero", broadcast=True, forward_ad="element_wise", batch="loop")


# ---------------------------------------------------------------- embedding
def _embedding_dense_backward(g, indices, num_weights, padding_idx=-1, scale_grad_by_freq=False):
    """ATen's CPU kernel: the zero gradient's row k gets, in the indices' order, ``+= scale · grad[i]``
    for each i with indices[i] = k (a padding index skipped; scale 1, or 1/count of k with
    scale_grad_by_freq, added with one rounding as its fused add)."""
    flat = indices.reshape(-1).astype(np.int64)
    rows = g.reshape(flat.size, -1)
    out = np.zeros((num_weights, rows.shape[1]), g.dtype)
    keep = flat != padding_idx
    if not scale_grad_by_freq:
        np.add.at(out, flat[keep], rows[keep])
        return out
    counts = np.bincount(flat[keep], minlength=num_weights)
    for i in np.flatnonzero(keep):
        k = flat[i]
        out[k] = fma(rows[i], g.dtype.type(1.0 / counts[k]), out[k])
    return out


def embedding_grad(grad, weight_shape, indices, padding_idx=None, scale_grad_by_freq=False):
    """embedding's: ``embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)``
    (ATen's padding_idx is an int, -1 for none)."""
    params = {"num_weights": int(weight_shape[0]), "padding_idx": -1 if padding_idx is None else padding_idx,
              "scale_grad_by_freq": scale_grad_by_freq}
    return _apply(embedding_dense_backward, (grad, indices), params)


def _embedding_dense_double_backward(grad, indices, padding_idx):
    """FunctionsManual's: the rows of ``grad`` the indices picked (a padding index's zeroed), in the
    indices' shape."""
    picked = grad.index_select(0, indices.reshape(-1))
    if padding_idx >= 0:
        picked.masked_fill_((indices == padding_idx).reshape(-1, 1), 0)
    return picked.view(tuple(indices.shape) + (-1,))


embedding_dense_backward = op(
    "embedding_dense_backward", "EmbeddingDenseBackwardBackward0", _embedding_dense_backward,
    ("grad_output", "indices"),
    grad_output=lambda grad, indices, padding_idx: _embedding_dense_double_backward(grad, indices, padding_idx),
    dtype="first", broadcast=False, domain="real", forward_ad="linear", batch="loop")


# ---------------------------------------------------------------- backward ops of linear ops
def adjoint_entry(name, node, grad_kernel, grad_output_formula, with_self=False, indices=False, **kw):
    """The backward of a linear op as an entry of its own (``upsample_nearest2d_backward`` ...): its
    forward runs ``grad_kernel(grad tensor, [self tensor,] **params)`` -- the gradient as the forward op's
    formula computed it, no graph recorded -- and its own gradient is the forward op on ``grad``
    (``grad_output_formula``: the adjoint of an adjoint). ``with_self``: ATen's backward op takes the
    input too (the pads'), whose gradient is derivatives.yaml's zeros_like(self). ``indices``: and a max
    pool's indices (an input without a gradient, so that vmap takes each sample's)."""
    def forward(*arrays, **params):
        with no_grad():
            return grad_kernel(*(Tensor._make(a) for a in arrays), **params)._data
    inputs = ("grad_output",) + (("self",) if with_self else ()) + (("indices",) if indices else ())
    zeros = {"self": corner_grads.zero_grad} if with_self else {}
    return op(name, node, forward, inputs, grad_output=grad_output_formula, **zeros, dtype="first", domain="real",
              broadcast=False, forward_ad="linear", batch="loop", **kw)
