"""PyTorch's argument checks shared by the hand-written functions: tensors, shapes, dims, dtypes,
and the wording of their errors.
"""
from __future__ import annotations

import numbers

from .. import dtypes, errors, limits
from ..grad_mode import INFERENCE as _INFERENCE, mark_inference
from ..tensor import Tensor, _wrap_dim


def _is_tensor(x) -> bool:
    return type(x) is Tensor or isinstance(x, Tensor)


def _need_tensor(x, name="input", fn="", position=1):
    """PyTorch's argument check for parameters typed ``Tensor`` (a Python number is refused)."""
    if not _is_tensor(x):
        raise errors.TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                               f"{type(x).__name__}")
    return x


def _need_tensors(fn, input, other, other_name="other"):
    _need_tensor(input, "input", fn)
    _need_tensor(other, other_name, fn, 2)


def _torch(name):
    """The ``torch.<name>`` the op table binds (for composites written with torch calls)."""
    from .. import surface
    return surface.bound()["function"][name]


def _not_int(a) -> bool:
    return isinstance(a, bool) or not (isinstance(a, numbers.Integral) or (_is_tensor(a) and a._dtype.category == 1
                                                                           and a._data.ndim == 0))


class _Unset:
    """The default of an argument whose absence selects a different overload than ``None`` does:
    ``x.sum()`` is ``sum(Tensor)`` (SumBackward0), ``x.sum(dim=None)`` is ``sum.dim_IntList`` with
    every dimension reduced (SumBackward1, and ``keepdim`` applies)."""

    __slots__ = ()

    def __repr__(self):
        return "<unset>"


_UNSET = _Unset()


def _shape_args(args, name="size", arg="size"):
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size)`` all mean the shape (2, 3);
    ``arg`` is the parameter's name in PyTorch's signature, as its messages quote it."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    elif len(args) == 1 and _not_int(args[0]):
        raise errors.TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, not "
                               f"{type(args[0]).__name__}")
    shape = []
    for a in args:
        if _not_int(a):
            raise errors.TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {len(shape) + 1} "
                                   f"with error \"type must be tuple of ints,but got {type(a).__name__}\"")
        shape.append(int(a.item() if _is_tensor(a) else a))
    return tuple(shape)


def _missing(name, arg):
    """PyTorch's argument parser's words for one missing argument (plural and all, as it has them)."""
    return errors.TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')


def _no_overload(name, got=""):
    """PyTorch's words when no overload of ``name`` takes the arguments (its list of them follows)."""
    return errors.TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                            "one of:")


def _check_new_shape(shape):
    for s in shape:
        if s < 0:
            raise errors.RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    limits.check_elements(shape)


def _dtype_arg(dtype, default=None):
    if dtype is None:
        return default
    return dtypes.resolve(dtype)


def _finish(t: Tensor, requires_grad=False):
    if _INFERENCE:
        mark_inference(t)
    if requires_grad:
        if not t._dtype.is_floating_point:
            raise errors.RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _given_dim(dim, ndim):
    """``dim`` checked against ``ndim`` (PyTorch's IndexError) and kept as given: a node shows a negative
    dim raw, as PyTorch's does (the kernels and formulas take negative dims)."""
    _wrap_dim(dim, ndim)
    return int(dim)


def _dim_arg(dim, ndim):
    if isinstance(dim, (tuple, list)):
        return tuple(_wrap_dim(d, ndim) for d in dim)
    return _wrap_dim(dim, ndim)


def _scalar(x):
    """A Python number from a number or a one-element tensor (for parameters such as ``clamp(min=…)``)."""
    if _is_tensor(x):
        return x.item()
    return x


def _int_list_arg(value, name, arg, position):
    """An ``int[]`` argument of a function form (``torch.permute(x, dims)``), which takes one
    sequence: a bare int is PyTorch's TypeError there (the method forms take varargs)."""
    if not isinstance(value, (tuple, list)):
        where = f" (position {position})" if position else ""
        raise errors.TypeError(f"{name}(): argument '{arg}'{where} must be tuple of ints, not {type(value).__name__}")
    return _shape_args((value,), name, arg)


def _varargs_method(name, arg, fn):
    """The method form of an op whose one ``int[]`` argument may also be spread (``x.permute(1, 0)``,
    ``x.permute((1, 0))``, ``x.permute(dims=(1, 0))``), calling ``fn(self, tuple)``."""
    def method(self, *args, **kwargs):
        if arg in kwargs:
            if args:
                raise errors.TypeError(f"{name}() got multiple values for argument '{arg}'")
            value = kwargs.pop(arg)
            args = (value,) if isinstance(value, (tuple, list)) else None
            if args is None:
                raise errors.TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not {type(value).__name__}")
        if kwargs:
            raise errors.TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if not args:
            raise _missing(name, arg)
        if len(args) > 1 and isinstance(args[0], (tuple, list)):
            raise errors.TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
        return fn(self, _shape_args(args, name, arg))
    method.__name__ = name
    return method
