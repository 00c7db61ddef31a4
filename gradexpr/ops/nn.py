"""Neural-network functions: activations, softmax, losses, dropout."""
from __future__ import annotations

import math

import numpy as np

from .. import corner_grads, errors, onednn_gelu, reduction_order, sleef
from ..graph import is_grad_enabled
from ..tensor import Tensor
from . import backward_ops as _bw
from .registry import batch_rules, op
from .common import _F, _NN, _NOT_FLOAT, _kernel, _np_mean, _vector_or_scalar, fma, in_float32
from .pointwise import _clamp, _erf, _sigmoid
from .reductions import logsumexp_jvp


# ============================================================ neural-network functions
def _softmax_kernel(name):
    def kernel(ts, params):
        n = ts[0]._data.ndim
        last = n and params["dim"] % n == n - 1
        return f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
    return kernel


def _softmax(a, dim):
    from ..softmax_order import softmax   # (PyTorch's kernels' order: loaded by the first softmax)
    return softmax(a, dim)


def _log_softmax(a, dim):
    from ..softmax_order import log_softmax
    return log_softmax(a, dim)


softmax = op("softmax", "SoftmaxBackward0", _softmax,
             self=_bw.softmax_grad,
             dtype=_kernel(_softmax_kernel("softmax"), refuse=_NOT_FLOAT), domain="real",
             forward_ad=lambda self, self_t, result, dim: result * (self_t - logsumexp_jvp(self, self_t, dim, True)))
log_softmax = op("log_softmax", "LogSoftmaxBackward0", _log_softmax,
                 self=_bw.log_softmax_grad,
                 dtype=_kernel(_softmax_kernel("log_softmax"), refuse=_NOT_FLOAT), domain="real",
                 forward_ad=lambda self, self_t, dim: self_t - logsumexp_jvp(self, self_t, dim, True))
leaky_relu = op("leaky_relu", "LeakyReluBackward0",
                in_float32(lambda a, negative_slope=0.01: np.where(a > 0, a, a * a.dtype.type(negative_slope))),
                self=lambda grad, self, negative_slope=0.01: _bw.leaky_relu_grad(grad, self, negative_slope),
                dtype=_kernel("leaky_relu_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")
# the in-place forms save the result (the input is overwritten), hence other node names
leaky_relu_inplace = op("leaky_relu_inplace", "LeakyReluBackward1", leaky_relu.forward,
                        self=lambda grad, result, negative_slope=0.01:
                        _bw.leaky_relu_grad(grad, result, negative_slope, True),
                        dtype=leaky_relu.dtype, domain="nonzero", forward_ad="element_wise")


def _hardtanh_dtype(ts, params):
    if ts[0]._dtype.name == "bool":
        raise errors.RuntimeError("Bool inputs not supported for hardtanh")
    return None, ts[0]._dtype


def _hardtanh(a, min_val=-1.0, max_val=1.0):
    """ATen's hardtanh is its clamp: -0. stays -0. (relu6(-0.) is -0.), nan stays nan."""
    return _clamp(a, min_val, max_val)


def _apply(entry, ts, params=None):
    from ..op import apply
    return apply(entry, ts, params or {})


def _hardtanh_grad(g, x, min_val=-1.0, max_val=1.0):
    """ATen's hardtanh_backward kernel: g strictly inside the bounds, else 0, where its vector lambda
    tests "inside" (0 at nan) and its scalar one "outside" (g at nan)."""
    zero = g.dtype.type(0)

    def vector(gv, xv):
        return np.where((xv > min_val) & (xv < max_val), gv, zero)

    def scalar(gv, xv):
        return np.where((xv <= min_val) | (xv >= max_val), zero, gv)
    return _vector_or_scalar((g, x), vector, scalar, half=True)


# hardtanh's own node (F.hardtanh, relu6): unlike clamp's, its gradient is 0 AT the bounds; its
# backward is an op too (HardtanhBackwardBackward0 under create_graph, as PyTorch's)
hardtanh_backward = op("hardtanh_backward", "HardtanhBackwardBackward0", _hardtanh_grad, ("grad_output", "self"),
                       grad_output=lambda grad, self, min_val=-1.0, max_val=1.0:
                       _apply(hardtanh_backward, (grad, self), {"min_val": min_val, "max_val": max_val}),
                       self=lambda grad: grad.new_zeros(grad.shape), dtype="promote", domain="nonzero")
hardtanh = op("hardtanh", "HardtanhBackward0", _hardtanh,
              self=lambda grad, self, min_val=-1.0, max_val=1.0:
              _apply(hardtanh_backward, (grad, self), {"min_val": min_val, "max_val": max_val}),
              dtype=_hardtanh_dtype, domain="nonzero", forward_ad="element_wise")


def _log_sigmoid(a):
    """PyTorch's kernel: min(x, 0) - log1p(exp(-|x|)), keeping exp(-|x|) as the node's ``buffer``. Its
    loop runs every element through the vector functions (a partial vector for the tail): SLEEF's exp
    and log1p of the input's precision (sleef.py, vectorized_double.py)."""
    exp, log1p = sleef.vector_function("exp", a.dtype), sleef.vector_function("log1p", a.dtype)
    with np.errstate(all="ignore"):
        if exp is not None:
            z = exp(-np.abs(a))
            return (np.minimum(a, a.dtype.type(0)) - log1p(z)).astype(a.dtype), {"buffer": z}
        z = np.exp(-np.abs(a))
        return (np.minimum(a, 0) - np.log1p(z)).astype(a.dtype), {"buffer": z.astype(a.dtype)}


def _log_sigmoid_grad(g, x, buffer):
    one = g.dtype.type(1)
    with np.errstate(all="ignore"):
        t = buffer / (one + buffer)
        return (np.where(x < 0, one - t, t) * g).astype(g.dtype)


def _log_sigmoid_double_grad(grad, grad_output, self):
    z = self.sigmoid()
    return (grad * grad_output) * (z - 1) * z


log_sigmoid_backward = op("log_sigmoid_backward", "LogSigmoidBackwardBackward0", in_float32(_log_sigmoid_grad),
                          ("grad_output", "self", "buffer"),
                          grad_output=lambda grad, self, buffer: _apply(log_sigmoid_backward, (grad, self, buffer)),
                          # (the node keeps the buffer whichever input needs a gradient, as ATen's)
                          self=lambda grad, grad_output, self, buffer: _log_sigmoid_double_grad(grad, grad_output, self),
                          dtype="promote", broadcast=False, domain="real")
log_sigmoid = op("log_sigmoid", "LogSigmoidBackward0", in_float32(_log_sigmoid),
                 self=lambda grad, self, buffer: _apply(log_sigmoid_backward, (grad, self, buffer)),
                 dtype=_kernel("log_sigmoid_cpu", refuse=_NOT_FLOAT), domain="real", forward_ad="element_wise")


def elu_kernel(a, alpha, scale, input_scale):
    """ATen's elu kernel (elu, selu, celu): x > 0 ? x·scale : expm1(x·input_scale)·(alpha·scale), the
    coefficients in x's type (float16's in float32); SLEEF's expm1 on the vector loop's runs, the C
    library's on the tails."""
    if a.dtype == np.float16:
        return in_float32(elu_kernel)(a, alpha, scale, input_scale)
    c = a.dtype.type
    negcoef, poscoef, negiptcoef = c(alpha) * c(scale), c(scale), c(input_scale)

    def kernel(expm1):
        def run(x):
            with np.errstate(all="ignore"):
                return np.where(x > 0, x * poscoef, expm1(x * negiptcoef) * negcoef).astype(x.dtype)
        return run
    vector = sleef.vector_function("expm1", a.dtype)
    if vector is None:
        return kernel(np.expm1)(a)
    return sleef.vectorized(a, kernel(vector), kernel(lambda x: sleef.libm("expm1", x)), reduction_order.threads())


def _elu(a, alpha=1.0):
    return elu_kernel(a, alpha, 1.0, 1.0)


elu = op("elu", "EluBackward0", _elu,
         self=lambda grad, self, alpha=1.0: _bw.elu_grad(grad, self, alpha),
         dtype=_kernel("elu_cpu", refuse=_NOT_FLOAT), domain="nonzero", forward_ad="element_wise")
elu_inplace = op("elu_inplace", "EluBackward1", _elu,
                 self=lambda grad, result, alpha=1.0: _bw.elu_grad(grad, result, alpha, True),
                 dtype=elu.dtype, domain="nonzero", forward_ad="element_wise")


_GELU_THREADED = 16384          # GeluKernelImpl: above it, one grain per thread


def _gelu(a, approximate="none"):
    """PyTorch's kernel, step by step in the input's precision; the tanh approximation with SLEEF's tanh on
    the vector loop's runs and the C library's on the tails; the erf form of a contiguous float32 input
    with oneDNN's kernel (onednn_gelu.py), else ATen's with its vectorized erf (backward_ops.vector_erf)
    on the vector runs and the C library's on the tails."""
    if a.dtype == np.float16:
        return _gelu_half(a, approximate)
    if approximate == "tanh":
        vector = sleef.vector_function("tanh", a.dtype)
        if vector is None:
            return _bw.gelu_tanh(a, np.tanh).astype(a.dtype)
        return _gelu_loop(a, lambda x: _bw.gelu_tanh(x, vector),
                          lambda x: _bw.gelu_tanh(x, lambda v: sleef.libm("tanh", v)))
    if _bw.gelu_by_onednn(a):
        return onednn_gelu.gelu(a)
    if a.dtype == np.float32 or a.dtype == np.float64:
        return _gelu_loop(a, lambda x: _bw.gelu_erf(x, _bw.vector_erf(a.dtype)),
                          lambda x: _bw.gelu_erf(x, lambda v: sleef.libm("erf", v)))
    return _bw.gelu_erf(a, _erf).astype(a.dtype)


def _gelu_half(a, approximate):
    """GELU of halves in float32, rounded back: GeluKernelImpl's reduced-precision branch, each run of two
    vectors of halves (and each tail element) converted to float32, through float32's formula (SLEEF's tanhf,
    ATen's erf polynomial; the C library's on the tails). Where oneDNN has native fp16
    (onednn_gelu.takes_half) ATen hands it the erf form of a contiguous tensor: that kernel's fp16
    arithmetic is approximated by its float32 one, rounded once."""
    f32, half = np.dtype(np.float32), np.float16
    if approximate == "tanh":
        vector_tanh = sleef.vector_function("tanh", f32)
        return _gelu_loop(a, lambda x: _bw.gelu_tanh(x.astype(f32), vector_tanh).astype(half),
                          lambda x: _bw.gelu_tanh(x.astype(f32), lambda v: sleef.libm("tanh", v)).astype(half))
    if onednn_gelu.takes_half() and _bw.gelu_by_onednn(a.astype(f32)):
        return onednn_gelu.gelu(a.astype(f32)).astype(half)
    return _gelu_loop(a, lambda x: _bw.gelu_erf(x.astype(f32), _bw.vector_erf(f32)).astype(half),
                      lambda x: _bw.gelu_erf(x.astype(f32), lambda v: sleef.libm("erf", v)).astype(half))


def _gelu_loop(a, vector, scalar):
    """GeluKernelImpl's cpu_kernel_vec: above 16,384 elements one grain per thread."""
    threads = reduction_order.threads()
    grain = a.size // threads if a.size > _GELU_THREADED else sleef._GRAIN
    return sleef.vectorized(a, vector, scalar, threads, grain)


gelu = op("gelu", "GeluBackward0", _gelu, self=_bw.gelu_grad, dtype=_kernel("GeluKernelImpl", refuse=_NOT_FLOAT),
          domain="real", forward_ad="element_wise")


def _softplus(a, beta=1.0, threshold=20.0):
    """ATen's softplus kernel: a where a·beta > threshold, else log1p(exp(a·beta)) / beta; with SLEEF's exp
    and log1p of the input's precision in the vector loop and the C library's on its tails (sleef.py)."""
    exp, log1p = sleef.vector_function("exp", a.dtype), sleef.vector_function("log1p", a.dtype)
    if exp is not None:
        b, th = a.dtype.type(beta), a.dtype.type(threshold)

        def kernel(exp, log1p):
            def run(x):
                with np.errstate(all="ignore"):
                    bx = x * b
                    return np.where(bx > th, x, log1p(exp(bx)) / b)
            return run
        return sleef.vectorized(a, kernel(exp, log1p),
                                kernel(sleef.libm_exp, lambda x: sleef.libm("log1p", x)), reduction_order.threads())
    with np.errstate(all="ignore"):
        bx = a * a.dtype.type(beta)
        return np.where(bx > threshold, a, np.log1p(np.exp(-np.abs(bx))) / a.dtype.type(beta)
                        + np.maximum(bx, 0) / a.dtype.type(beta)).astype(a.dtype)


softplus = op("softplus", "SoftplusBackward0", in_float32(_softplus),
              self=_bw.softplus_grad,
              dtype=_kernel("softplus_cpu", refuse=_NOT_FLOAT), domain="real", forward_ad="element_wise")
def _silu_backward_kernel(g, x):
    """ATen's silu_backward kernel: g·σ·(1 + x·(1 - σ)) with σ = 1 / (1 + exp(-x)), the inner sum fused
    (in either loop, measured), SLEEF's exp on the vector runs and the C library's on the tails."""
    c = x.dtype.type

    def kernel(exp):
        def run(gv, xv):
            with np.errstate(all="ignore"):
                sigmoid = c(1) / (c(1) + exp(-xv))
                return (gv * sigmoid * fma(xv, c(1) - sigmoid, c(1))).astype(xv.dtype)
        return run
    return sleef.vectorized_map((g, x), kernel(sleef.exp), kernel(sleef.libm_exp), reduction_order.threads())


def _silu_grad(grad, self):
    """derivatives.yaml: ATen's silu_backward kernel, or with grad mode on (a graph of the backward)
    infinitely_differentiable_silu_backward, the same formula in tensor ops."""
    if not is_grad_enabled() and type(grad) is Tensor and type(self) is Tensor \
            and grad._data.dtype == self._data.dtype and self._data.dtype.kind == "f":
        return Tensor._make(in_float32(_silu_backward_kernel)(grad._data, self._data))
    sigmoid = self.sigmoid()
    return grad * sigmoid * (1.0 + self * (1.0 - sigmoid))


def _silu(a):
    """ATen's silu kernel: x / (1 + exp(-x)), with SLEEF's exp in the vector loop and the C library's on
    its tails (sleef.py)."""
    one = a.dtype.type(1)
    if a.dtype == np.float32 or a.dtype == np.float64:
        return sleef.vectorized(a, lambda x: x / (one + sleef.exp(-x)), lambda x: x / (one + sleef.libm_exp(-x)),
                                reduction_order.threads())
    with np.errstate(all="ignore"):
        return (a / (one + np.exp(-a))).astype(a.dtype)


silu = op("silu", "SiluBackward0", in_float32(_silu),
          self=_silu_grad,
          dtype=_kernel("silu_cpu", refuse=_NOT_FLOAT), domain="real", forward_ad="element_wise")


def _reduce(x, reduction, inputs=()):
    """A loss's elementwise values reduced as ATen reduces them: laid out first as TensorIterator
    lays them out from the ``inputs`` (``F.l1_loss(a.t(), b)`` adds in the order of a.t()'s memory)."""
    if inputs and reduction != "none" and x.ndim > 1:
        from ..result_layout import torch_layout
        x = torch_layout(inputs, x)
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


mse_loss = op("mse_loss", "MseLossBackward0", lambda a, b, reduction="mean": _reduce((a - b) ** 2, reduction, (a, b)),
              ("self", "target"),
              self=lambda grad, self, target, reduction="mean": _bw.mse_grad(grad, self, target, reduction),
              target=lambda grad, self, target, reduction="mean": _bw.mse_grad(grad, target, self, reduction),
              dtype=_kernel("mse_cpu", "promote", _NOT_FLOAT), domain="real",
              forward_ad=lambda self_t, target_t, self, target, reduction="mean": _apply_loss_reduction(
                  _bw.mse_grad(self_t, self, target, "none") + _bw.mse_grad(target_t, target, self, "none"), reduction),
              tangent_copied=lambda reduction="mean": reduction != "none")


def _apply_loss_reduction(loss, reduction):
    """FunctionsManual's apply_loss_reduction: the elementwise loss reduced as the call asks."""
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _smooth_l1(a, b, reduction="mean", beta=1.0):
    d = np.abs(a - b)
    with np.errstate(all="ignore"):
        x = np.where(d < beta, 0.5 * d * d / (beta if beta else 1), d - 0.5 * beta) if beta else d
    return _reduce(x.astype(a.dtype), reduction, (a, b))


smooth_l1_loss = op("smooth_l1_loss", "SmoothL1LossBackward0", _smooth_l1, ("self", "target"),
                    self=_bw.smooth_l1_grad,
                    target=lambda grad, self, target, reduction="mean", beta=1.0:
                    _bw.smooth_l1_grad(grad, target, self, reduction, beta),
                    dtype=_kernel("smooth_l1_cpu", "promote", _NOT_FLOAT), domain="real",
                    forward_ad=lambda self_t, target_t, self, target, reduction="mean", beta=1.0: _apply_loss_reduction(
                        _bw.smooth_l1_grad(self_t, self, target, "none", beta)
                        + _bw.smooth_l1_grad(target_t, target, self, "none", beta), reduction),
                    tangent_copied=lambda reduction="mean", beta=1.0: reduction != "none")


def _bce(p, y, weight=None, reduction="mean"):
    if np.any((p < 0) | (p > 1)):
        raise errors.RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(all="ignore"):
        # ATen's scalar kernel calls the C library's logf and log1pf: NumPy's float32 log1p is that log1pf,
        # its float32 log a SIMD one off in ~1 % of last bits, so the log goes through float64 (a correctly
        # rounded result, which the C library's logf differs from in ~0.8 % of last bits)
        lp = np.maximum(np.log(p.astype(np.float64)).astype(p.dtype) if p.dtype == np.float32 else np.log(p), -100)
        l1p = np.maximum(np.log1p(-p), -100)
    loss = (y - 1) * l1p - y * lp          # ATen's order of operations
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.astype(p.dtype), reduction, (p, y))


def _const(array, like):
    """A loss's weight (kept as an array parameter: PyTorch sends it no gradient) as a tensor."""
    return None if array is None else Tensor._make(np.asarray(array, like.dtype.np))


def _bce_target_grad(grad, self, weight=None, reduction="mean"):
    """FunctionsManual's binary_cross_entropy_target_backward: -logit(self) · grad (· weight), over the
    element count for the mean (logit's own node: its gradient is the where of logit's backward), in
    place as ATen's (mul_'s node saves the old value's clone), out of place under torch.func transforms."""
    g = self.logit().neg_()
    if corner_grads.in_transform():
        g = g * grad
        if weight is not None:
            g = g * _const(weight, self)
        return _reduce_grad(g, reduction, self.numel())
    g = g.mul_(grad)
    if weight is not None:
        g = g.mul_(_const(weight, self))
    return g.div_(self.numel()) if reduction == "mean" else g


binary_cross_entropy = op("binary_cross_entropy", "BinaryCrossEntropyBackward0", _bce, ("self", "target"),
                          self=_bw.bce_grad, target=_bce_target_grad,
                          dtype=_kernel("binary_cross_entropy", "promote", _NOT_FLOAT), domain="probability",
                          forward_ad=lambda self_t, target_t, self, target, weight=None, reduction="mean": (
                              _apply_loss_reduction(_bw.bce_grad(self_t, self, target, weight, "none")
                                                    + _bce_target_grad(target_t, self, weight, "none"), reduction)),
                          tangent_copied=lambda weight=None, reduction="mean": reduction != "none")


def _bce_logits(x, y, weight=None, pos_weight=None, reduction="mean"):
    # (1 - y) x - w log(sigmoid(x)) with w = (pos_weight - 1) y + 1, in the input's precision
    log_sig = _log_sigmoid(x)[0]                 # (ATen's at::log_sigmoid)
    if pos_weight is not None:
        log_sig = log_sig * ((np.asarray(pos_weight, x.dtype) - 1) * y + 1)
    loss = (1 - y) * x - log_sig
    if weight is not None:
        loss = loss * np.asarray(weight, x.dtype)
    # ATen's loss is (1 - target).mul_(input).sub_(...): laid out as the target is
    return _reduce(loss.astype(x.dtype), reduction, (y,))


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
    domain="real", forward_ad="transpose")


def _nll(logp, target, weight=None, reduction="mean", ignore_index=-100):
    if logp.ndim == 1:
        logp2, tgt = logp[None, :], target.reshape(1)
    elif logp.ndim == 2:
        logp2, tgt = logp, target
    else:
        logp2 = np.moveaxis(logp, 1, -1).reshape(-1, logp.shape[1])
        tgt = target.reshape(-1)
    n_classes = logp2.shape[1]
    # (np.count_nonzero: ndarray.any/all's Python layer costs more than the test on a batch)
    if 0 <= ignore_index < n_classes or np.count_nonzero(tgt.astype(np.uint64) >= n_classes):   # (-1 wraps)
        valid = tgt != ignore_index
        out_of_range = (tgt < 0) | (tgt >= n_classes)
        if np.count_nonzero(valid & out_of_range):
            bad = int(tgt[valid & out_of_range][0])
            raise errors.IndexError(f"Target {bad} is out of bounds.")
        safe = tgt if np.count_nonzero(valid) == valid.size else np.where(valid, tgt, 0)
    else:
        valid = None            # every target is a class, and ignore_index is none
        safe = tgt
    gathered = logp2[np.arange(len(safe)), safe]          # each sample's loss is -gathered
    if valid is None and (weight is not None or reduction == "none"):
        valid = np.ones(tgt.shape, np.bool_)
    if weight is None:
        wt = None if reduction != "none" else valid.astype(logp.dtype)
    else:
        wt = np.where(valid, weight[safe], 0).astype(logp.dtype)
    if reduction == "none":
        return (-gathered * wt).reshape(target.shape).astype(logp.dtype)
    with np.errstate(all="ignore"):
        if logp.ndim <= 2:              # the kernel's cascaded sum (reduction_order.nll_cascade)
            total, weight_total = reduction_order.nll_cascade(gathered, valid, wt)
        else:
            if wt is None:
                wt = valid.astype(logp.dtype) if valid is not None else np.ones(tgt.shape, logp.dtype)
            total, weight_total = np.sum(-gathered * wt), np.sum(wt)
        return np.asarray(total if reduction == "sum" else total / weight_total, logp.dtype)


# (derivatives.yaml: the tangent is nll_loss_forward of self_t, linear in self)
nll_loss = op("nll_loss", "NllLossBackward0", _nll, ("self", "target"), self=_bw.nll_grad, dtype="first",
              domain="logprob", forward_ad="linear")
nll_loss2d = op("nll_loss2d", "NllLoss2DBackward0", _nll, ("self", "target"), self=_bw.nll2d_grad, dtype="first",
                domain="logprob", forward_ad="linear")


def _mul_mask(a, mask):
    return a * mask


dropout = op("dropout", "MulBackward0", _mul_mask, ("self", "mask"),
             self=lambda grad, mask: grad * mask, dtype="first", domain="real", forward_ad="element_wise")

# ------------------------------------------------------------ not differentiable at all
NON_DIFFERENTIABLE_FUNCTIONS = ("argmax", "argmin", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
                                "isfinite", "signbit", "isposinf", "isneginf", "all", "any", "floor_divide", "bitwise_and", "bitwise_or",
                                "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "logical_not", "logical_and", "logical_or",
                                "logical_xor")


# ============================================================ vmap's batch rules (batching.py)
batch_rules("dims", "softmax", "log_softmax")
batch_rules("loss", "mse_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits")
