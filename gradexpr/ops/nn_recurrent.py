"""The op ATen's recurrent cells add beyond the table: ``unsafe_split`` (``Tensor.unsafe_chunk``),
which gives copies rather than views of its input so that the cells may change the gates in place
(``chunk[0].sigmoid_()``), recorded as one ``UnsafeSplitBackward0`` node for all its outputs."""
from __future__ import annotations

import numpy as np

from .registry import op
from .shape import _slice, _slice_grad, _split_grad, _split_sizes

unsafe_split_part = op("unsafe_split", "UnsafeSplitBackward0",
                       lambda a, dim, start, end: np.array(_slice(a, dim, start, end)),
                       self=_slice_grad, dtype="first", domain="real", forward_ad="linear")
unsafe_split_outputs = op("unsafe_split_outputs", "UnsafeSplitBackward0", None, outputs="*", domain="real",
                          self=lambda grad, self_shape, dim, split_size: _split_grad(
                              grad, self_shape, dim, _split_sizes(self_shape[dim], split_size)))


def unsafe_chunk(input, chunks, dim):
    """``input.unsafe_chunk(chunks, dim)``: equal parts (the last smaller), not views."""
    from ..op import apply, share_node
    d = dim % input.dim()
    size = input.shape[d]
    step = -(-size // chunks)
    parts = [apply(unsafe_split_part, (input,), {"dim": d, "start": i, "end": min(i + step, size)})
             for i in range(0, size, step)]
    return tuple(share_node(unsafe_split_outputs, (input,), {"dim": d, "split_size": step}, parts))
