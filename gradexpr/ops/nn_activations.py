"""The activations PyTorch implements natively beyond relu/elu/gelu (``ops/nn.py``): celu, selu,
hard/soft shrink, hardsigmoid, hardswish, mish, glu, prelu, rrelu, threshold, each with its own node.

A late family: ``ops/__init__`` does not import it, so a one-liner's start-up does not pay for it;
``torch.nn`` / ``torch.nn.functional`` load it on first use (``registry.LATE_FAMILIES``).
Kernels follow ATen's CPU kernels step by step in the input's precision, so float32 matches bit
for bit where the kernel is plain arithmetic.
"""
from __future__ import annotations

import numpy as np

from . import backward_ops as _bw
from .. import reduction_order, sleef
from ..exact import fma
from ..graph import is_grad_enabled
from ..tensor import Tensor
from .common import _NOT_FLOAT, _apply, _kernel, in_float32
from .nn import elu_kernel
from .registry import op


# ---------------------------------------------------------------- celu / selu: elu with scales
def _celu(a, alpha=1.0):
    return elu_kernel(a, alpha, 1.0, 1.0 / alpha)


def _celu_input_scale(alpha):
    """celu's backward input scale as derivatives.yaml writes it, ``1.0 / alpha.toFloat()``: alpha rounded to
    float32 first (the forward's is ``1. / alpha.to<double>()``)."""
    return 1.0 / float(np.float32(alpha))


celu = op("celu", "CeluBackward0", _celu,
          self=lambda grad, self, alpha=1.0: _bw.elu_grad(grad, self, alpha, False, 1.0, _celu_input_scale(alpha)),
          dtype=_kernel("elu_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")
# F.celu(x, inplace=True) / torch.celu_: the node reads the result (x is overwritten)
celu_inplace = op("celu_inplace", "CeluBackward1", _celu,
                  self=lambda grad, result, alpha=1.0: _bw.elu_grad(grad, result, alpha, True, 1.0,
                                                                     _celu_input_scale(alpha)),
                  dtype=celu.dtype, domain="nonzero", forward_ad="element_wise")

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _selu(a):
    return elu_kernel(a, SELU_ALPHA, SELU_SCALE, 1.0)


# selu is ATen's elu(x, alpha, scale): its node is EluBackward0 (EluBackward1 in place)
selu = op("selu", "EluBackward0", _selu,
          self=lambda grad, self: _bw.elu_grad(grad, self, SELU_ALPHA, False, SELU_SCALE, 1.0),
          dtype=_kernel("elu_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")
selu_inplace = op("selu_inplace", "EluBackward1", _selu,
                  self=lambda grad, result: _bw.elu_grad(grad, result, SELU_ALPHA, True, SELU_SCALE, 1.0),
                  dtype=selu.dtype, domain="nonzero", forward_ad="element_wise")


# ---------------------------------------------------------------- shrinks

def _hardshrink(a, lambd=0.5):
    c = a.dtype.type
    return np.where((a >= c(-lambd)) & (a <= c(lambd)), c(0), a)


def _softshrink(a, lambd=0.5):
    """Inside [-lambd, lambd] ATen's vectorized loop writes +0, its scalar loop x·0 (-0 for x < 0)."""
    c = a.dtype.type
    lam = c(lambd)
    zero = np.where(_scalar_tail(a), a * c(0), c(0))
    return np.where(a > lam, a - lam, np.where(a < -lam, a + lam, zero)).astype(a.dtype)


def _scalar_tail(a):
    """The elements ATen's CPU loop (``cpu_kernel_vec``) leaves to its scalar code: the last
    n mod (2 vectors) of a contiguous tensor (AVX2's 32-byte vectors; one chunk, i.e. n <= 32768)."""
    n = a.size
    tail = n % (2 * (32 // a.itemsize))
    flat = np.zeros(n, bool)
    flat[n - tail:] = tail > 0
    return flat.reshape(a.shape)


hardshrink = op("hardshrink", "HardshrinkBackward0", _hardshrink,
                self=lambda grad, self, lambd=0.5: _bw.shrink_grad(_bw.hardshrink_backward, grad, self, lambd),
                dtype=_kernel("hardshrink_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")
softshrink = op("softshrink", "SoftshrinkBackward0", _softshrink,
                self=lambda grad, self, lambd=0.5: _bw.shrink_grad(_bw.softshrink_backward, grad, self, lambd),
                dtype=_kernel("softshrink_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")


# ---------------------------------------------------------------- hard sigmoid / swish, mish
def _hardsigmoid(a):
    c = a.dtype.type
    return (np.minimum(np.maximum(a + c(3), c(0)), c(6)) / c(6)).astype(a.dtype)


def _hardswish(a):
    c = a.dtype.type
    return (a * np.minimum(np.maximum(a + c(3), c(0)), c(6)) / c(6)).astype(a.dtype)


def _hardsigmoid_grad(grad, self):
    return _apply(_bw.hardsigmoid_backward, (grad, self))


def _hardswish_grad(grad, self):
    # ATen: x <= -3 -> 0; x < 3 -> grad·(x/3 + 0.5); else grad
    return _apply(_bw.hardswish_backward, (grad, self))


hardsigmoid = op("hardsigmoid", "HardsigmoidBackward0", in_float32(_hardsigmoid), self=_hardsigmoid_grad,
                 dtype=_kernel("hardsigmoid_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")
hardswish = op("hardswish", "HardswishBackward0", in_float32(_hardswish), self=_hardswish_grad,
               dtype=_kernel("hardswish_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")


def _mish(a):
    """ATen's mish kernel: x·tanh(log1p(exp(x))), SLEEF's three functions on the vector loop's runs and the
    C library's on the tails."""
    def kernel(exp, log1p, tanh):
        def run(x):
            with np.errstate(all="ignore"):
                return (x * tanh(log1p(exp(x)))).astype(x.dtype)
        return run
    vector = [sleef.vector_function(name, a.dtype) for name in ("exp", "log1p", "tanh")]
    if None in vector:
        return kernel(np.exp, np.log1p, np.tanh)(a)
    return sleef.vectorized(a, kernel(*vector), kernel(*(lambda x, n=n: sleef.libm(n, x) for n in ("exp", "log1p", "tanh"))),
                            reduction_order.threads())


def _mish_backward_kernel(g, x):
    """ATen's mish_backward kernel: g·(t + x·σ(x)·(1 - t²)) with t = tanh(log1p(exp(x))), both sums fused
    (in either loop, measured), SLEEF's functions on the vector runs and the C library's on the tails."""
    c = x.dtype.type

    def kernel(exp, log1p, tanh):
        def run(gv, xv):
            with np.errstate(all="ignore"):
                sigmoid = c(1) / (c(1) + exp(-xv))
                t = tanh(log1p(exp(xv)))
                return (gv * fma(xv * sigmoid, fma(-t, t, c(1)), t)).astype(xv.dtype)
        return run
    names = ("exp", "log1p", "tanh")
    return sleef.vectorized_map((g, x), kernel(*(sleef.vector_function(n, x.dtype) for n in names)),
                                kernel(*(lambda v, n=n: sleef.libm(n, v) for n in names)), reduction_order.threads())


def _mish_grad(grad, self):
    """derivatives.yaml: ATen's mish_backward kernel, or with grad mode on (a graph of the backward) the
    infinitely differentiable composite."""
    g, x = grad._data, self._data
    if not is_grad_enabled() and type(grad) is Tensor and type(self) is Tensor and g.dtype == x.dtype \
            and sleef.vector_function("tanh", np.float32 if x.dtype == np.float16 else x.dtype) is not None:
        return Tensor._make(in_float32(_mish_backward_kernel)(g, x))
    # ATen: grad · (tanh(softplus(x)) + x · sigmoid(x) · (1 - tanh(softplus(x))²))
    sigmoid = self.sigmoid()
    tanh_softplus = self.exp().log1p().tanh()
    return grad * (tanh_softplus + self * sigmoid * (1 - tanh_softplus * tanh_softplus))


mish = op("mish", "MishBackward0", in_float32(_mish), self=_mish_grad,
          dtype=_kernel("mish_cpu", refuse=_NOT_FLOAT), domain="real", forward_ad="element_wise")


# ---------------------------------------------------------------- glu
def _glu(a, dim=-1):
    first, second = np.split(a, 2, axis=dim)
    c = a.dtype.type
    with np.errstate(all="ignore"):
        return (first * (c(1) / (c(1) + np.exp(-second)))).astype(a.dtype)


glu = op("glu", "GluBackward0", _glu, self=_bw.glu_grad,
         dtype=_kernel("glu_cpu", refuse=_NOT_FLOAT), domain="real")


# ---------------------------------------------------------------- prelu, rrelu, threshold
def _prelu(a, w):
    return np.where(a > 0, a, w * a).astype(np.result_type(a, w))


def _prelu_grads(grad, self, weight, output_mask=None):
    """ATen's ``_prelu_kernel_backward``: both gradients in one call (one node under create_graph)."""
    from .prelu_backward import prelu_grads
    return prelu_grads(grad, self, weight, output_mask)


# torch.prelu reshapes the weight to broadcast over the channel dim, then calls _prelu_kernel
prelu_kernel = op("prelu_kernel", "PreluKernelBackward0", _prelu, ("self", "weight"),
                  **dict.fromkeys(("self", "weight"), _prelu_grads),
                  dtype=_kernel("prelu_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="transpose")


def _rrelu(a, noise, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """x·noise where x <= 0 (noise: the drawn slopes, or the mean slope in eval mode; the bounds and the
    mode are kept for the nodes, as ATen's)."""
    return np.where(a <= 0, a * noise.astype(a.dtype), a).astype(a.dtype)


rrelu_with_noise = op("rrelu_with_noise", "RreluWithNoiseBackward0", _rrelu,
                      self=lambda grad, self, noise, lower, upper, training:
                      _bw.rrelu_grad(grad, self, noise, lower, upper, training),
                      dtype=_kernel("rrelu_with_noise_out_cpu", refuse=_NOT_FLOAT), domain="nonzero",
                      forward_ad="element_wise")
rrelu_with_noise_inplace = op("rrelu_with_noise_inplace", "RreluWithNoiseBackward1", _rrelu,
                              self=lambda grad, result, noise, lower, upper, training:
                              _bw.rrelu_grad(grad, result, noise, lower, upper, training),
                              dtype=rrelu_with_noise.dtype, domain="nonzero", forward_ad="element_wise")


def _threshold(a, threshold, value):
    t = np.asarray(threshold).astype(a.dtype) if a.dtype.kind == "f" else threshold
    return np.where(a <= t, np.asarray(value).astype(a.dtype), a)


def _threshold_grad(grad, self, threshold):
    return _apply(_bw.threshold_backward, (grad, self), {"threshold": threshold})


threshold = op("threshold", "ThresholdBackward0", _threshold, self=_threshold_grad,
               dtype=_kernel("threshold_cpu", refuse="b"), domain="nonzero", forward_ad="element_wise")
# (ATen's threshold_ differentiates with the input's old value, of which apply_inplace keeps a copy: with
# ``value > threshold`` the result cannot stand in for it)
threshold_inplace = op("threshold_inplace", "ThresholdBackward1", _threshold, self=_threshold_grad,
                       dtype=threshold.dtype, domain="nonzero", forward_ad="element_wise")
