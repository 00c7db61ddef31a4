"""``torch.nn``: ``Module`` and the library's modules, ``init`` and ``utils``, written as PyTorch's
``torch/nn`` so that a program's ``class Net(nn.Module)`` subclasses them as PyTorch code does.

Imported when a program first reads a name of ``torch.nn`` other than ``functional`` (see api.py)."""
from __future__ import annotations

from . import init, utils
from .activation import ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Softplus, Tanh
from . import activation as _activation
from .activation import MORE_ACTIVATIONS
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .pooling import *  # noqa: F401,F403  (the pooling modules)
from .pooling import NAMES as POOLING_NAMES
from .resample import *  # noqa: F401,F403  (pixel/channel shuffle, upsampling)
from .resample import NAMES as RESAMPLE_NAMES
from .recurrent import *  # noqa: F401,F403  (the recurrent cells)
from .recurrent import NAMES as CELL_NAMES
from .recurrent_layers import *  # noqa: F401,F403  (RNN, LSTM, GRU)
from .recurrent_layers import NAMES as RECURRENT_NAMES
from .local_response_norm import LocalResponseNorm  # noqa: F401
from . import local_response_norm as _lrn
from .container import ModuleDict, ModuleList, ParameterList, Sequential
from .dropout import Dropout
from .dropout_more import *  # noqa: F401,F403  (the channel-wise and alpha dropouts)
from .dropout_more import NAMES as DROPOUT_NAMES
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss,
                   SmoothL1Loss)
from .module import Module
from .padding import *  # noqa: F401,F403  (the padding modules, CosineSimilarity)
from .padding import PADDING_NAMES
from . import parallel as _parallel
from . import transformer as _transformer
from .parameter import Parameter
from .sparse import Embedding, LayerNorm
from . import functional, functional_activations, functional_losses, functional_norms, functional_pooling
from . import functional_attention, functional_dropout, functional_resample
from .normalization import NORM_NAMES, GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, RMSNorm  # noqa: F401
from . import loss as _loss
from .loss import MORE_LOSSES

globals().update({n: getattr(_activation, n) for n in MORE_ACTIVATIONS})
globals().update({n: getattr(_loss, n) for n in MORE_LOSSES})

MODULE_NAMES = """Module Parameter Sequential ModuleList ModuleDict ParameterList Identity Linear Bilinear Flatten
Unflatten Dropout ReLU LeakyReLU ELU GELU SiLU Sigmoid Tanh Softmax LogSoftmax Softplus MSELoss L1Loss
SmoothL1Loss HuberLoss CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss Conv1d Conv2d Conv3d ConvTranspose1d
ConvTranspose2d ConvTranspose3d Embedding
LayerNorm BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm CosineSimilarity""".split() + PADDING_NAMES \
    + MORE_ACTIVATIONS + MORE_LOSSES + NORM_NAMES + POOLING_NAMES + DROPOUT_NAMES \
    + RESAMPLE_NAMES + CELL_NAMES + RECURRENT_NAMES + _lrn.NAMES + _parallel.NAMES \
    + _transformer.NAMES
globals().update({n: getattr(_parallel, n) for n in _parallel.NAMES})
globals().update({n: getattr(_transformer, n) for n in _transformer.NAMES})


def names():
    """The names of ``torch.nn`` (besides ``functional``), with ``init`` and ``utils`` as name dicts."""
    g = globals()
    return ({n: g[n] for n in MODULE_NAMES}, {n: getattr(init, n) for n in init.NAMES},
            {n: getattr(utils, n) for n in utils.NAMES})


def functional_names():
    """The ``F.`` functions this package adds (convolution, pooling, normalisation, embedding)."""
    return {**{n: getattr(functional, n) for n in functional.NAMES},
            **{n: getattr(functional_activations, n) for n in functional_activations.NAMES},
            **{n: getattr(functional_losses, n) for n in functional_losses.NAMES},
            **{n: getattr(functional_norms, n) for n in functional_norms.NAMES},
            **{n: getattr(functional_pooling, n) for n in functional_pooling.NAMES},
            **{n: getattr(functional_dropout, n) for n in functional_dropout.NAMES},
            **{n: getattr(functional_resample, n) for n in functional_resample.NAMES},
            **{n: getattr(functional_attention, n) for n in functional_attention.NAMES},
            "local_response_norm": _lrn.local_response_norm}
