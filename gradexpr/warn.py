"""The one way the engine gives a warning (PyTorch's ``UserWarning``s).

The library never prints. While a program runs, whoever runs it installs a handler
(``handling``) that knows where the program is and how to show the warning there; called from
Python, without a handler, the warning goes to Python's own ``warnings`` machinery."""
from __future__ import annotations

import contextlib
import contextvars

__all__ = ["warn", "warn_once", "handling", "current_handler", "non_leaf_grad"]

_handler: contextvars.ContextVar = contextvars.ContextVar("gradexpr_warning_handler", default=None)


def warn(message: str, category: type = UserWarning) -> None:
    handler = _handler.get()
    if handler is not None:
        handler.warn(message, category)
        return
    import warnings
    warnings.warn(message, category, stacklevel=3)


_WARNED_ONCE: set = set()      # (without a handler: once per process, as C++'s TORCH_WARN_ONCE)


def warn_once(message: str, category: type = UserWarning) -> None:
    """PyTorch's ``TORCH_WARN_ONCE``: the first time in a program run only, wherever it comes from
    (a handler keeps the run's record in its ``warned_once`` set)."""
    handler = _handler.get()
    seen = getattr(handler, "warned_once", _WARNED_ONCE) if handler is not None else _WARNED_ONCE
    if message in seen:
        return
    seen.add(message)
    warn(message, category)


def current_handler():
    return _handler.get()


@contextlib.contextmanager
def handling(handler):
    """``handler.warn(message, category)`` receives the warnings given inside the block."""
    token = _handler.set(handler)
    try:
        yield handler
    finally:
        _handler.reset(token)


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered internally "
    "at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")


def non_leaf_grad() -> None:
    """PyTorch's warning for reading ``.grad`` of a non-leaf that does not retain it."""
    warn(_NON_LEAF_GRAD, UserWarning)
