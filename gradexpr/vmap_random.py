"""Random ops under ``vmap``: its ``randomness=`` flag, level by level as functorch's batch rules apply it.

Each running vmap (innermost first) decides for itself:

* ``"error"``: any random op raises PyTorch's error;
* ``"same"``: the op runs as if this vmap were not there, so every sample sees one draw;
* ``"different"``: the op runs once over the whole batch — a factory draws ``(batch size, *shape)``,
  an op with tensor inputs (``bernoulli(p)``, ``normal(mean, std)``) draws over the physical inputs
  (an unbatched one expanded to the batch), an in-place sampler (``x.normal_()``) fills the physical
  tensor — and the result is batched at this level.

So nested vmaps draw with every "different" level's batch dimension, outermost first, in the order
one plain call of that shape draws. ``rand_like``, ``randint_like`` and dropout's mask are factories
of the input's (logical) shape, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from . import errors
from .grad_mode import VMAP_LEVELS

_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
          "'different' randomness flags on vmap or perform the randomness operation out of vmap")
_SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor input. Please file an issue "
                 "with functorch")
_INPLACE_UNBATCHED = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear like "
                      "same randomness. If this is necessary for your usage, please file an issue with functorch.")


def _innermost(levels):
    level, size, randomness = levels[-1]
    if randomness == "error":
        raise errors.RuntimeError(_ERROR)
    return level, size, randomness


def factory(draw, shape):
    """``draw(shape)`` (a plain tensor of that shape) under the running vmaps."""
    return _factory(draw, tuple(shape), VMAP_LEVELS[:])


def _factory(draw, shape, levels):
    from .batching import batched
    if not levels:
        return draw(shape)
    level, size, randomness = _innermost(levels)
    if randomness == "same":
        return _factory(draw, shape, levels[:-1])
    return batched(_factory(draw, (size,) + shape, levels[:-1]), 0, level)


def with_inputs(draw, inputs):
    """``draw(*inputs)`` (plain tensors in, a plain tensor out) under the running vmaps; inputs that are
    not tensors pass through."""
    return _with_inputs(draw, list(inputs), VMAP_LEVELS[:])


def _with_inputs(draw, inputs, levels):
    from .batching import _front, _unwrap, batched
    from .tensor import Tensor
    if not levels:
        return draw(*inputs)
    level, size, randomness = _innermost(levels)
    unwrapped = [_unwrap(a, level) if isinstance(a, Tensor) else (a, None) for a in inputs]
    if randomness == "same":
        if any(bdim is not None for _, bdim in unwrapped):
            raise errors.RuntimeError(_SAME_BATCHED)
        return _with_inputs(draw, inputs, levels[:-1])
    physical = [_front(p, bdim) if bdim is not None else
                p.unsqueeze(0).expand((size,) + tuple(p.shape)) if isinstance(p, Tensor) else p
                for p, bdim in unwrapped]
    return batched(_with_inputs(draw, physical, levels[:-1]), 0, level)


def fill(t, draw):
    """``t``'s elements replaced in place by ``draw(shape)`` (an array of that shape) under the running vmaps."""
    _fill(t, draw, VMAP_LEVELS[:])


def _fill(t, draw, levels):
    from .batching import _unwrap
    from .tensor import Tensor
    if not levels:
        t._data[...] = draw(t._data.shape)
        return
    level, _, randomness = _innermost(levels)
    phys, bdim = _unwrap(t, level)
    if randomness == "different":
        if bdim is None:
            raise errors.RuntimeError(_INPLACE_UNBATCHED)
        _fill(phys, draw, levels[:-1])
    elif bdim is None:
        _fill(t, draw, levels[:-1])
    else:                                   # one draw of a sample's shape, written to every sample
        sample = Tensor._make(np.empty(t._data.shape, t._dtype.np), t._dtype)
        _fill(sample, draw, levels[:-1])
        _storage_batch_first(t)[...] = sample._data


def _storage_batch_first(t):
    """A view of the storage under ``t``'s wrappers with its batch dimensions first (outermost first)."""
    from .batching import BatchedTensor
    bdims = []
    while type(t) is BatchedTensor:
        bdims.append(t._bdim)
        t = t._phys
    arr = t._data
    for k, bdim in enumerate(reversed(bdims)):
        arr = np.moveaxis(arr, k + bdim, k)
    return arr
