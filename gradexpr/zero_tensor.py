"""ATen's ZeroTensor (``at::_efficientzerotensor``): zeros with no memory behind them.

PyTorch makes one where a derivative is known to be zero without computing it: sgn's gradient for a
real input (FunctionsManual's ``sgn_backward``), and, inside a recorded forward formula, an undefined
tangent (forward_ad.py). A program sees it: it prints as zeros and ``item()`` reads it, but ``tolist()``
and ``numpy()`` refuse it, nothing may change it in place (so neither may a ``.grad`` that is one: a second
backward into it fails), its views are ZeroTensors, and the ops with a ZeroTensor kernel take it as an
exact zero — ``Z * x`` is Z even where x is inf or nan, ``x + Z`` is a copy of x (a -0 stays -0),
``x / Z`` is inf, ``dot``/``linalg.cross`` with one is Z. Every other op reads it as ordinary +0 zeros and
makes an ordinary tensor (ATen's ZeroTensorFallback materializes it).

Here a ZeroTensor is a tensor of zeros whose array is read-only and whose identity is in ``LIVE`` (weakly:
``apply`` pays one truth test of this dict while none lives). This is the engine's only notion of one.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import errors

LIVE: dict = {}             # id -> weak reference, of the ZeroTensors alive

IMMUTABLE = ("ZeroTensors are immutable. Please use the materialized zero tensor obtained using .clone() "
             "if you want a mutable tensor.")
IMMUTABLE_COPY = ("ZeroTensors are immutable. Please materialize the tensor using `.clone()`, if you want a "
                  "mutable zero tensor.")      # (copy_'s own check, and so item assignment's)


def is_zero(t) -> bool:
    ref = LIVE.get(id(t))
    return ref is not None and ref() is t


def mark(t):
    """Make ``t`` (a tensor of zeros) a ZeroTensor: registered, its array read-only."""
    key = id(t)

    def _gone(ref, key=key):
        if LIVE.get(key) is ref:
            del LIVE[key]

    t._data.flags.writeable = False
    LIVE[key] = weakref.ref(t, _gone)
    return t


def plain_zeros_like(t):
    """Ordinary zeros shaped as ``t`` (a wrapped number's stay one: PyTorch's update_wrapped_number)."""
    from .tensor import Tensor
    z = Tensor._make(np.zeros(t._data.shape, t._dtype.np if t._dtype.is_floating_point else np.float32))
    z._wrapped = t._wrapped
    return z


def zeros_like(t):
    """A new ZeroTensor shaped as ``t``."""
    return mark(plain_zeros_like(t))


def materialized(t):
    """``t`` as ordinary +0 zeros when it is a ZeroTensor (what ATen's fallback hands the kernel)."""
    if not is_zero(t) or t._requires_grad:
        return t
    return t._detached_copy()


def alias(src, t):
    """``t``, a view or alias of ``src`` (or a tensor given ``src``'s data: ``t.data = src``), is a ZeroTensor
    exactly when ``src`` is one."""
    if is_zero(src):
        mark(t)
    elif is_zero(t):
        del LIVE[id(t)]
    return t


def check_mutable(t, copy: bool = False):
    """PyTorch's refusal to change a ZeroTensor in place (``copy``: copy_'s and item assignment's words)."""
    if LIVE and is_zero(t):
        raise errors.RuntimeError(IMMUTABLE_COPY if copy else IMMUTABLE,
                                  hint="clone() it first (a gradient that is a ZeroTensor: set .grad = None "
                                       "before the next backward)")


def inplace_operands(t, args):
    """ATen's ZeroTensorFallback around ``t.op_(*args)``: ``t`` may not be a ZeroTensor, and the other operands
    are read as plain zeros (``x.mul_(Z)`` is nan where x is inf, ``x.add_(Z)`` makes a -0 +0)."""
    check_mutable(t)
    return tuple(materialized(a) for a in args)         # (numbers pass as they are)


def check_storage(t, what: str):
    """``tolist()`` and ``numpy()`` read memory a ZeroTensor does not have."""
    if LIVE and is_zero(t):
        hint = "a ZeroTensor (sgn's gradient, and what mul/div/views make of it) has no memory: clone() it first"
        if what == "numpy":
            raise errors.RuntimeError(" Cannot convert a ZeroTensor to numpy. Set force=True if you need the "
                                      "zero array.", hint=hint)
        raise errors.RuntimeError(f"{what}() shouldn't be called on a tensor with unallocated storage", hint=hint)


def op_result(op, ts, params, result):
    """After ``op`` made ``result`` from ``ts`` while some ZeroTensor lives: a view of one is one, and an
    entry with ``zero_tensor=`` (the ops with a ZeroTensor kernel) gets that kernel's value, written into
    ``result``'s memory (a saved alias sees it too)."""
    if op.view:
        if ts and is_zero(ts[0]):
            mark(result)
        return
    rule = op.zero_tensor
    if rule is None:
        return
    zeros = [is_zero(t) for t in ts]
    if not any(zeros):
        return
    out = result._data
    if rule == "div":
        if len(ts) == 1 or zeros[0]:        # 0/x (a Scalar divisor too) is zero, 0/0 nan
            if len(ts) > 1 and zeros[1]:
                out[...] = np.nan
                return
        else:                               # x/0: ATen's kernel fills inf, whatever x
            out[...] = np.inf
            return
    elif rule in ("add", "sub") and not all(zeros):
        if zeros[0]:                        # Z + b, Z - b: b (in the result's dtype) times ±alpha
            alpha = params.get("alpha", 1)
            out[...] = ts[1]._data
            if rule == "sub" or alpha != 1:
                out *= alpha if rule == "add" else -alpha
        else:                               # a ± Z: a copy of a
            out[...] = ts[0]._data
        return
    out[...] = 0                            # mul, dot, cross, Z ± Z, 0/x
    mark(result)
