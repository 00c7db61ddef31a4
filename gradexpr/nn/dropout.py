"""``nn.Dropout``: ``F.dropout`` in training mode (PyTorch's mask from its generator), the identity in eval."""
from __future__ import annotations

from .. import errors
from .. import nn_functional as NF
from .module import Module


class Dropout(Module):
    __module__ = "torch.nn.modules.dropout"

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise errors.ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return NF.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
