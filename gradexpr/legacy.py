"""PyTorch's legacy constructors: ``torch.Tensor(2, 3)``, ``torch.Tensor([1, 2])``,
``torch.FloatTensor([...])`` and the other typed tensor classes, ``torch.autograd.Variable``.

``torch.Tensor(*sizes)`` makes an uninitialised float tensor in PyTorch (whatever memory held);
here it is zeros: a program cannot see memory it did not write. A sequence or an ndarray is
data, converted to the class's dtype; a tensor of that dtype is shared (an alias); anything else
fails with the argument parser's words for ``new()``.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, errors, limits

__all__ = ["construct", "TYPED_CLASSES", "typed_class_dtype", "Variable"]


def _is_size(args):
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def construct(dtype, args, kwargs, typed=False):
    """``torch.Tensor(*args, device=None)`` (``dtype``: float32) or, ``typed``, ``torch.LongTensor(...)``."""
    from . import device as _device
    from .functions import tensor as _tensor
    from .tensor import Size, Tensor
    where = kwargs.pop("device", None)
    if kwargs:
        got = [type(a).__name__ for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
        raise errors.TypeError(f"new() received an invalid combination of arguments - got ({', '.join(got)}), but "
                               "expected one of:")
    if where is not None:
        d = _device.device(where) if isinstance(where, str) else where
        if getattr(d, "type", "cpu") != "cpu":
            raise errors.RuntimeError(f"legacy constructor expects device type: cpu but device type: {d.type} "
                                      f"was passed")
    if not args:
        return Tensor._make(np.zeros((0,), dtype.np), dtype)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if not typed:           # torch.Tensor(t): an alias of t whatever its dtype (Tensor.alias())
            from . import ops
            from .op import apply
            return apply(ops.alias, (t,))
        if t._dtype is not dtype:
            raise errors.TypeError(f"expected TensorOptions(dtype={dtype._cpp_name}, device=cpu, layout=Strided, "
                                   "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)) "
                                   f"(got TensorOptions(dtype={t._dtype._cpp_name}, device=cpu, layout=Strided, "
                                   "requires_grad=false (default), pinned_memory=false (default), "
                                   "memory_format=(nullopt)))")
        return t.detach()
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    elif len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        return _tensor(args[0], dtype=dtype)
    if not _is_size(args):
        for i, a in enumerate(args):
            if isinstance(a, str) or (len(args) == 1 and not isinstance(a, (int, float))):
                raise errors.TypeError(f"new(): invalid data type '{type(a).__name__}'")
            if not isinstance(a, int) or isinstance(a, bool):
                raise errors.TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                                       f"\"type must be tuple of ints,but got {type(a).__name__}\"")
    for a in args:
        if a < 0:
            raise errors.RuntimeError(f"Trying to create tensor with negative dimension {a}: {list(args)}")
    limits.check_elements(args)
    return Tensor._make(np.zeros(args, dtype.np), dtype)


def _type_name(value):
    return "torch.dtype" if isinstance(value, dtypes.DType) else type(value).__name__


class _TypedMeta(type):
    """The metaclass of ``torch.FloatTensor`` …: calling one constructs, ``isinstance`` checks the dtype."""

    def __call__(cls, *args, **kwargs):
        return construct(cls._gx_dtype, args, dict(kwargs), typed=True)

    def __instancecheck__(cls, obj):
        from .tensor import Tensor
        return isinstance(obj, Tensor) and obj._dtype is cls._gx_dtype

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _typed_classes():
    from .graph import _TYPE_STRING
    classes = {}
    for name, qualified in _TYPE_STRING.items():
        short = qualified.split(".")[1]
        cls = _TypedMeta(short, (), {"__module__": "torch", "_gx_dtype": dtypes.by_name(name), "__slots__": ()})
        classes[short] = cls
    return classes


TYPED_CLASSES = _typed_classes()


def typed_class_dtype(obj):
    """The dtype ``torch.DoubleTensor`` stands for in ``x.type(torch.DoubleTensor)`` (None otherwise)."""
    return obj._gx_dtype if isinstance(obj, _TypedMeta) else None


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        from .tensor import Tensor
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``torch.autograd.Variable(t, requires_grad=False)``: a new leaf over ``t``'s data (the old
    wrapper is a tensor today); ``isinstance(t, Variable)`` holds for every tensor."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from .tensor import Tensor
        if data is None:
            return construct(dtypes.float32, (), {})
        if not isinstance(data, Tensor):
            raise errors.TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        alias = data.detach()
        if requires_grad:
            alias.requires_grad_(True)
        return alias


Variable.__module__ = "torch.autograd.variable"
