"""``torch.nn.utils``: gradient clipping and the flat-vector conversions, in PyTorch's operation
order (per-gradient norms, then the norm of their stack; one clamped coefficient for all)."""
from __future__ import annotations

import types
import warnings

from .. import errors
from .. import functions as T
from ..graph import no_grad
from ..tensor import Tensor
from .module import typename


def _by_dtype(tensors):
    groups = {}
    for t in tensors:
        groups.setdefault(t.dtype, []).append(t)
    return groups.values()


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    with no_grad():
        tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
        norm_type = float(norm_type)
        if not tensors:
            return T.tensor(0.0)
        norms = [T.vector_norm(g, norm_type) for group in _by_dtype(tensors) for g in group]
        total = T.vector_norm(T.stack(norms), norm_type)
        if error_if_nonfinite and bool(T.logical_or(total.isnan(), total.isinf())):
            raise errors.RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                                      "non-finite, so it cannot be clipped. To disable this error and scale the "
                                      "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    with no_grad():
        parameters = [parameters] if isinstance(parameters, Tensor) else parameters
        grads = [p.grad for p in parameters if p.grad is not None]
        max_norm = float(max_norm)
        if not grads:
            return
        coef = T.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for group in _by_dtype(grads):
            for g in group:
                g.mul_(coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", UserWarning,
                          stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    with no_grad():
        parameters = [parameters] if isinstance(parameters, Tensor) else parameters
        clip_value = float(clip_value)
        for g in [p.grad for p in parameters if p.grad is not None]:
            g.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters):
    return T.cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise errors.TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n


from .weight_norms import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm  # noqa: E402

NAMES = ("clip_grad_norm_ clip_grad_value_ parameters_to_vector vector_to_parameters get_total_norm "
         "clip_grads_with_norm_ weight_norm remove_weight_norm spectral_norm remove_spectral_norm").split()
