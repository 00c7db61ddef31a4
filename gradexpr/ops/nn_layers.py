"""Neural-network layers' ops (torch.nn's functional side): PyTorch's node names and formulas for
the losses and layer functions the ``nn`` modules need beyond ``nn.py``."""
from __future__ import annotations

import numpy as np

from .common import _F, _NOT_FLOAT, _kernel
from .nn import _reduce
from .registry import op


def _huber(a, b, reduction="mean", delta=1.0):
    z = np.abs(a - b)
    d = a.dtype.type(delta)
    with np.errstate(all="ignore"):
        x = np.where(z < d, a.dtype.type(0.5) * z * z, d * (z - a.dtype.type(0.5) * d))
    return _reduce(x.astype(a.dtype), reduction)


def _huber_grad(grad, self, target, reduction="mean", delta=1.0):
    """PyTorch's huber_backward: ``norm * x * grad`` inside the band, ``±norm * delta * grad`` outside."""
    F = _F()
    x = self - target
    norm = 1.0 / self.numel() if reduction == "mean" else 1.0
    inside = x * norm * grad
    return F.where(x <= -delta, -norm * delta * grad, F.where(x >= delta, norm * delta * grad, inside))


huber_loss = op("huber_loss", "HuberLossBackward0", _huber, ("self", "target"),
                self=_huber_grad,
                target=lambda grad, self, target, reduction="mean", delta=1.0:
                -_huber_grad(grad, self, target, reduction, delta),
                dtype=_kernel("huber_cpu", "promote", _NOT_FLOAT), domain="real")
