"""Torch dtypes and PyTorch's type-promotion rules.

A ``DType`` wraps a NumPy dtype with torch's name. Promotion follows c10's
``result_type``: operands fall into three tiers (tensors with dimensions, 0-d
tensors, wrapped Python numbers) and a lower tier only wins when it is of a higher
category (bool < integer < floating) — so ``int_tensor * 2.5`` is float32 and
``float16_tensor + 2.5`` stays float16.
"""
from __future__ import annotations

import numpy as np


class DType:
    _gx_exposed = True
    __module__, __qualname__ = "torch", "dtype"       # print(torch.dtype) is <class 'torch.dtype'>
    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "category", "_scalar_name", "_cpp_name")

    def __init__(self, name: str, np_dtype, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category  # 0 bool, 1 integer, 2 floating
        self.is_floating_point = category == 2
        self.is_signed = name not in ("bool", "uint8")
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (by_name, (self.name,))

    def to_real(self):
        return self

    @property
    def is_complex(self):
        return False


bool_ = DType("bool", np.bool_, 0)
uint8 = DType("uint8", np.uint8, 1)
int8 = DType("int8", np.int8, 1)
int16 = DType("int16", np.int16, 1)
int32 = DType("int32", np.int32, 1)
int64 = DType("int64", np.int64, 1)
float16 = DType("float16", np.float16, 2)
float32 = DType("float32", np.float32, 2)
float64 = DType("float64", np.float64, 2)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)

# PyTorch's two names of each dtype in its messages, written once: c10's ScalarType name ("result type
# Float can't be cast to the desired output type Long") and the C++ type name ("expected dtype float for
# `end` but got dtype long int"). Underscored: programs read only PyTorch's public dtype attributes.
for _d, _scalar, _cpp in ((bool_, "Bool", "bool"), (uint8, "Byte", "unsigned char"), (int8, "Char", "signed char"),
                          (int16, "Short", "short int"), (int32, "Int", "int"), (int64, "Long", "long int"),
                          (float16, "Half", "c10::Half"), (float32, "Float", "float"), (float64, "Double", "double")):
    _d._scalar_name, _d._cpp_name = _scalar, _cpp
del _d, _scalar, _cpp
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}
# torch's aliases: torch.float is float32, torch.double float64, torch.long int64, ...
ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
           "short": int16, "bool": bool_}

default_float = float32      # torch.get_default_dtype(); a program changes it with set_default_dtype


def set_default_dtype(d) -> None:
    """``torch.set_default_dtype``: the dtype of float factories and of Python floats met by integer
    tensors; the run gives it back when it ends (grammar/modules/run_context.py)."""
    global default_float
    if not isinstance(d, DType) or not d.is_floating_point:
        from . import errors
        raise errors.TypeError("only floating-point types are supported as the default type")
    default_float = d


def get_default_dtype() -> DType:
    return default_float


def by_name(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy(np_dtype) -> DType:
    d = _BY_NP.get(np.dtype(np_dtype))
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
                        "float64, float32, float16, int64, int32, int16, int8, uint8, and bool.")
    return d


def promote(a: DType | None, b: DType | None) -> DType | None:
    """torch.promote_types for two dtypes (None means 'no operand yet')."""
    if a is None or a is b:
        return b if a is None else a
    if b is None:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == 2:
            return hi
        return hi  # integer beats bool
    if a.category == 2:
        return a if a.itemsize >= b.itemsize else b
    if a.category == 0:
        return a
    return from_numpy(np.promote_types(a.np, b.np))


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    # c10's combine_categories: a lower tier only matters when its category is higher.
    if higher is None:
        return lower
    if higher.category == 2:
        return higher
    if lower is not None and (higher.category == 0 or lower.category == 2):
        return promote(higher, lower)
    return higher


def result_type(operands) -> DType:
    """The dtype of an elementwise op over ``operands`` (Tensors) as torch computes it."""
    dim = zero = wrapped = None
    for t in operands:
        d = t._dtype
        if t._wrapped:
            wrapped = promote(wrapped, default_float if d.category == 2 else d)
        elif t._data.ndim == 0:
            zero = promote(zero, d)
        else:
            dim = promote(dim, d)
    return _combine(dim, _combine(zero, wrapped))


def of_python_scalar(value) -> DType:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    return default_float


def resolve(value) -> DType:
    """Accept a DType, or Python's float/int/bool types as torch does (float means float64)."""
    if isinstance(value, DType):
        return value
    if value is float:
        return float64
    if value is int:
        return int64
    if value is bool:
        return bool_
    raise TypeError(f"dtype must be a torch.dtype, not {type(value).__name__}")
