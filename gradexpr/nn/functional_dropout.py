"""The channel-wise and alpha dropouts of ``torch.nn.functional`` (dropout1d/2d/3d, alpha_dropout,
feature_alpha_dropout), written as ATen's ``_dropout_impl``: one noise tensor drawn with
``bernoulli_(1 - p)`` from the generator (of shape (N, C, 1, ...) for the feature forms), scaled,
multiplied in (``MulBackward0``) and, for the alpha forms, shifted (``AddBackward0``)."""
from __future__ import annotations

import math

from .. import errors

SELU_ALPHA = 1.7580993408473766       # ATen's alpha_dropout constant: -SELU's scale * alpha


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise errors.ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, shape, p):
    from .. import rng
    from ..composites.random_functions import _drawn      # under vmap: a factory of the sample's shape
    from ..tensor import Tensor
    dtype = input.dtype
    return _drawn(lambda s: Tensor._make(rng.bernoulli(1.0 - p, s, dtype.name), dtype), shape)


def _dropout_impl(input, p, train, feature, alpha, inplace):
    _check_p(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    from .. import functions as T
    if p == 1:
        zero = T.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    if feature and input.dim() < 2:
        raise errors.RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = (tuple(input.shape[:2]) + (1,) * (input.dim() - 2)) if feature else tuple(input.shape)
    noise = _noise(input, shape, p)
    if alpha:
        a = 1.0 / math.sqrt((SELU_ALPHA * SELU_ALPHA * p + 1) * (1 - p))
        shift = noise.add(-1).mul_(SELU_ALPHA * a).add_(SELU_ALPHA * a * p)
        noise.mul_(a)
    else:
        noise.div_(1 - p)
    out = input.mul_(noise) if inplace else input * noise
    return out.add_(shift) if alpha else out


def _unbatched(input, inplace):
    return input.unsqueeze_(0) if inplace else input.unsqueeze(0)


def _rebatched(result, inplace):
    return result.squeeze_(0) if inplace else result.squeeze(0)


def _feature_dropout(input, p, training, inplace, batched_rank):
    """dropout1d and dropout3d: an unbatched input gets a batch dim for the draw and loses it after."""
    is_batched = input.dim() == batched_rank
    if not is_batched:
        input = _unbatched(input, inplace)
    result = _dropout_impl(input, p, training, True, False, inplace)
    return result if is_batched else _rebatched(result, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.dim() not in (2, 3):
        raise errors.RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 3)


def _warn_rank(name, input, ranks, spatial):
    from ..warn import warn
    if input.dim() not in ranks:
        warn(f"{name}: Received a {input.dim()}-D input to {name}, which is deprecated and will result in an error "
             "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
             f"that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a "
             f"channel dimension, and an optional batch dimension (i.e. {ranks[0]}D or {ranks[1]}D inputs).")


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    _warn_rank("dropout2d", input, (3, 4), 2)
    if input.dim() == 3:
        from ..warn import warn
        warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
             "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
             "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
             "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.")
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    _warn_rank("dropout3d", input, (4, 5), 3)
    return _feature_dropout(input, p, training, inplace, 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout_impl(input, p, training, True, True, inplace)


NAMES = "dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout".split()
