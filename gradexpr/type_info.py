"""``torch.finfo`` and ``torch.iinfo``: the numerical properties of a floating or integer dtype,
with PyTorch's fields, printing and errors (torch/csrc/TypeInfo.cpp)."""
from __future__ import annotations

import numpy as np

from . import dtypes, errors

__all__ = ["finfo", "iinfo"]


def _g(x) -> str:
    """C's ``%g``, as TypeInfo's repr formats its numbers."""
    return "%g" % x


def _dtype_arg(name, args, kwargs):
    """The dtype argument (``type``); PyTorch's parser names the missing argument for any other keyword."""
    if len(args) + len(kwargs) > 1:
        raise errors.TypeError(f"{name}() takes at most 1 argument ({len(args) + len(kwargs)} given)")
    if kwargs and "type" not in kwargs:
        raise errors.TypeError(f'{name}() missing 1 required positional arguments: "type"')
    if args:
        return args[0]
    return kwargs.get("type", dtypes.get_default_dtype() if name == "finfo" else None)


def _type_argument(name, args, kwargs):
    """finfo's / iinfo's ``type`` argument, a torch.dtype, with PyTorch's errors for a missing or other one."""
    dt = _dtype_arg(name, args, kwargs)
    if dt is None:
        raise errors.TypeError(f'{name}() missing 1 required positional arguments: "type"')
    if not isinstance(dt, dtypes.DType):
        raise errors.TypeError(f"{name}(): argument 'type' (position 1) must be torch.dtype, not "
                               f"{type(dt).__name__}")
    return dt


class finfo:
    """``torch.finfo(type=torch.get_default_dtype())`` of a floating dtype."""
    _gx_exposed = True
    __module__ = "torch"
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, *args, **kwargs):
        dt = _type_argument("finfo", args, kwargs)
        if not dt.is_floating_point:
            raise errors.TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to "
                                   f"handle '{'torch.finfo'}'")
        info = np.finfo(dt.np)
        self.bits = dt.np.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(10.0 ** -info.precision)        # std::pow(10, -digits10)
        self.dtype = dt.name

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, "
                f"eps={_g(self.eps)}, smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")

    __str__ = __repr__

    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype

    def __hash__(self):
        return hash((type(self).__name__, self.dtype))


class iinfo:
    """``torch.iinfo(type)`` of an integer dtype."""
    _gx_exposed = True
    __module__ = "torch"
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, *args, **kwargs):
        dt = _type_argument("iinfo", args, kwargs)
        if dt.category == 0:
            raise errors.TypeError(f"{dt} is not supported by torch.iinfo")
        if dt.is_floating_point:
            raise errors.TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                                   "'torch.iinfo'")
        info = np.iinfo(dt.np)
        self.bits = dt.np.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = dt.name

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"

    __str__ = __repr__
    __eq__ = finfo.__eq__
    __hash__ = finfo.__hash__
