"""Grad mode and inference mode: whether ops are recorded, and PyTorch's inference tensors.

``no_grad`` / ``enable_grad`` / ``set_grad_enabled`` / ``inference_mode`` set a context variable the
ops read; tensors an op or a factory makes in inference mode carry an ``InferenceVersion`` counter,
which refuses what PyTorch refuses of them. (Split from graph.py, which re-exports these names.)
"""
from __future__ import annotations

import contextvars

from . import errors

# ---------------------------------------------------------------- grad mode
_grad_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar("grad_enabled", default=True)


def is_grad_enabled() -> bool:
    return _grad_enabled.get()


def _set_grad_enabled(mode: bool):
    return _grad_enabled.set(bool(mode))


class _GradMode:
    """Base of no_grad / enable_grad / set_grad_enabled: a context manager that restores the mode."""

    _gx_exposed = True
    _mode = True

    def __init__(self):
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_grad_enabled.set(self._mode))
        return None

    def __exit__(self, *exc):
        _grad_enabled.reset(self._tokens.pop())
        return False

    def __call__(self, fn):
        """Use as a decorator: run ``fn`` in this grad mode."""
        mode = self._mode

        def wrapped(*args, **kwargs):
            token = _grad_enabled.set(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _grad_enabled.reset(token)
        return wrapped


class no_grad(_GradMode):
    _mode = False


class enable_grad(_GradMode):
    _mode = True


class set_grad_enabled(_GradMode):
    """Like torch.set_grad_enabled: takes effect at once, and as a ``with`` block restores on exit."""

    def __init__(self, mode: bool):
        super().__init__()
        self._prev = _grad_enabled.get()
        self._mode = bool(mode)
        _grad_enabled.set(self._mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _grad_enabled.set(self._prev)
        return False


# [level, batch size, randomness] of each running vmap (batching.py pushes them); ``apply`` tests its
# truthiness before it loads the batch rules, so a program that never calls vmap never imports them
VMAP_LEVELS: list = []

# non-empty while the op table's backward formulas run (ops/registry.py): PyTorch writes them in C++, where
# ``tensor * 2`` is mul.Scalar (MulBackward1), so a formula's arithmetic with a number records the Scalar
# overloads there (composites/arithmetic.py), where a program's records the Tensor ones, as in Python
IN_FORMULA: list = []

_inference_mode: contextvars.ContextVar[bool] = contextvars.ContextVar("inference_mode", default=False)
# [True] while inference mode is on: ``apply`` and the factories test its truthiness (as forward_ad.ACTIVE)
# to make their results inference tensors
INFERENCE: list = []
_INPLACE_INFERENCE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
                      "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
                      "for more details.")
_SAVED_INFERENCE = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                    "`torch.inference_mode()`.")


class InferenceVersion(list):
    """The version counter of an inference tensor (one made in inference mode, and its views): PyTorch
    tracks none, so reading ``_version`` fails, and so do an in-place change outside inference mode
    and saving the tensor for backward."""

    __slots__ = ()

    def __setitem__(self, i, v):
        if not INFERENCE:
            raise errors.RuntimeError(_INPLACE_INFERENCE)
        list.__setitem__(self, i, v)


def mark_inference(t):
    """Make ``t``, made in inference mode (not a view of a normal tensor), an inference tensor."""
    if type(t._version_counter) is list:
        t._version_counter = InferenceVersion(t._version_counter)
    return t


def check_not_inference(t):
    """Before an in-place change of ``t``: PyTorch's refusal for an inference tensor outside inference mode."""
    if type(t._version_counter) is InferenceVersion and not INFERENCE:
        raise errors.RuntimeError(_INPLACE_INFERENCE)


class inference_mode(_GradMode):
    """``torch.inference_mode(mode=True)``: no graph is recorded (as no_grad), and the tensors made
    meanwhile are inference tensors (``graph.InferenceVersion``)."""

    def __init__(self, mode: bool = True):
        super().__init__()
        self._mode = not mode
        self._inference = bool(mode)

    def __enter__(self):
        self._tokens.append((_grad_enabled.set(self._mode), _inference_mode.set(self._inference), INFERENCE[:]))
        INFERENCE[:] = [True] if self._inference else []
        return None

    def __exit__(self, *exc):
        grad, inference, flag = self._tokens.pop()
        INFERENCE[:] = flag
        _inference_mode.reset(inference)
        _grad_enabled.reset(grad)
        return False

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with self.__class__(self._inference):
                return fn(*args, **kwargs)
        return wrapped


def is_inference_mode_enabled() -> bool:
    return _inference_mode.get()


for _cls in (no_grad, enable_grad, set_grad_enabled, inference_mode):     # named where PyTorch defines them
    _cls.__module__ = "torch.autograd.grad_mode"
    _cls.__qualname__ = _cls.__name__
