"""``torch.optim``: the optimisers, each step equal to PyTorch's single-tensor (``foreach=False``)
loop to the last bit, and ``torch.optim.lr_scheduler``. Imported when a program first reads a
name of ``torch.optim`` (see api.py)."""
from __future__ import annotations

from . import lr_scheduler, lr_scheduler_composite
from .adam import Adam, Adamax, AdamW
from .adaptive import Adadelta, Adagrad, RMSprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

NAMES = "Optimizer SGD Adam AdamW Adamax RMSprop Adagrad Adadelta LBFGS".split()


def names():
    """``torch.optim``'s names, and ``torch.optim.lr_scheduler``'s."""
    g = globals()
    schedulers = {n: getattr(m, n) for m in (lr_scheduler, lr_scheduler_composite) for n in m.NAMES}
    return {n: g[n] for n in NAMES}, schedulers
