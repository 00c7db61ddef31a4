"""The channel-wise and alpha dropout modules (``torch/nn/modules/dropout.py``): Dropout's arguments
and printing over their ``F.`` functions (``functional_dropout.py``)."""
from __future__ import annotations

from . import functional_dropout as FD
from .dropout import Dropout


class Dropout1d(Dropout):
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return FD.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return FD.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return FD.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """(PyTorch's forward passes no ``inplace``: the module never writes into its input.)"""
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return FD.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    __module__ = "torch.nn.modules.dropout"

    def forward(self, input):
        return FD.feature_alpha_dropout(input, self.p, self.training)


__all__ = NAMES = "Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout".split()
