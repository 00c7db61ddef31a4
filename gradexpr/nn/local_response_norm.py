"""``nn.LocalResponseNorm`` and ``F.local_response_norm``: PyTorch's Python, an average pooling of the
squared input over neighbouring channels (2-d for 3-D inputs, 3-d otherwise)."""
from __future__ import annotations

from .. import errors
from .. import nn_functional as NF
from . import functional_pooling as FP
from .module import Module


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise errors.ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = NF.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = FP.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = NF.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = FP.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


class LocalResponseNorm(Module):
    __module__ = "torch.nn.modules.normalization"

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = NAMES = ["LocalResponseNorm"]
