"""Factories: ``tensor``, ``zeros``/``ones``/``full`` (and ``_like``), ``eye``, ``arange``, ``linspace``,
``logspace``, with PyTorch's inference of dtype from nested Python data.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from .. import dtypes, errors, limits
from ..grad_mode import VMAP_LEVELS as _VMAP
from ..signatures import _check_device
from ..tensor import Tensor
from .arguments import (_UNSET, _check_new_shape, _dtype_arg, _finish, _is_tensor, _missing, _need_tensor,
                        _no_overload, _not_int, _scalar, _shape_args)


def _infer(data, depth=0):
    """Shape and flat values of nested Python data, with PyTorch's errors for ragged input."""
    if _is_tensor(data):
        return data._data.shape, [data._data], data._dtype
    if isinstance(data, np.ndarray):
        return data.shape, [data], dtypes.from_numpy(data.dtype)
    if isinstance(data, (list, tuple)):
        if depth > 1000:
            raise errors.ValueError("too deeply nested sequence")
        if len(data) == 0:
            return (0,), [], None
        shapes, flat, kind = None, [], None
        for i, item in enumerate(data):
            s, f, k = _infer(item, depth + 1)
            if shapes is None:
                shapes = s
            elif s != shapes:
                if len(s) != len(shapes) or not s:
                    raise errors.ValueError(f"expected sequence of length {shapes[0] if shapes else 0} at dim "
                                            f"{depth + 1} (got {s[0] if s else 0})") if shapes and s else \
                        errors.TypeError("can't assign a sequence to a scalar") if shapes else \
                        errors.ValueError(f"expected sequence of length {len(data)} at dim {depth}")
                for d, (a, b) in enumerate(zip(s, shapes)):
                    if a != b:
                        raise errors.ValueError(f"expected sequence of length {b} at dim {depth + 1 + d} (got {a})")
            flat.extend(f)
            kind = _kind_join(kind, k)
        return (len(data),) + tuple(shapes), flat, kind
    if isinstance(data, bool):
        return (), [data], dtypes.bool_
    if isinstance(data, numbers.Integral):
        return (), [int(data)], dtypes.int64
    if isinstance(data, numbers.Real):
        return (), [float(data)], dtypes.default_float
    raise errors.TypeError(f"Could not infer dtype of {type(data).__name__}")


def _kind_join(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if b.category > a.category:
        return b if b.category < 2 else (b if a.category < 2 else dtypes.promote(a, b))
    if a.category == 2 and b.category == 2:
        return dtypes.promote(a, b)
    return a


def _python_dtype(k):
    if k is None:
        return dtypes.default_float
    if k.category == 2:
        return k if k is not dtypes.float64 else k
    return k


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    _check_device(device)
    if _is_tensor(data):
        arr = np.array(data._data, copy=True)
        d = _dtype_arg(dtype, data._dtype)
        return _finish(Tensor._make(arr, d), requires_grad)
    _check_nested_size(data)
    shape, flat, kind = _infer(data)
    limits.check_elements(shape)
    d = _dtype_arg(dtype)
    if d is None:
        d = dtypes.default_float if kind is None else kind
        if kind is not None and kind.category == 2 and not builtins.any(
                isinstance(v, np.ndarray) for v in flat):
            d = dtypes.default_float
    if flat and builtins.any(isinstance(v, np.ndarray) for v in flat):
        arr = np.array([np.asarray(v).astype(d.np) for v in flat]).reshape(shape) if flat else np.zeros(shape)
    else:
        if d.category != 2 and builtins.any(isinstance(v, float) and not math.isfinite(v) for v in flat):
            raise errors.RuntimeError("value cannot be converted to type int64 without overflow")
        if kind is not None and kind.category < 2 and builtins.any(
                type(v) is int and not -2**63 <= v < 2**63 for v in flat):
            raise errors.ValueError("Overflow when unpacking long long")
        try:
            arr = np.array(flat, dtype=d.np if d.category == 2 else None).reshape(shape)
        except OverflowError:
            raise errors.RuntimeError("Overflow when unpacking long") from None
        if arr.dtype != d.np:
            if d.category == 1 and arr.dtype.kind == "f":
                arr = np.trunc(arr)
            arr = arr.astype(d.np)
    return _finish(Tensor._make(arr, d), requires_grad)


def _check_nested_size(data):
    """The element limit on the shape read along first items, before walking nested data:
    ``[[0] * 10**4] * 10**5`` is a small Python object that stands for 10^9 elements."""
    shape = []
    while isinstance(data, (list, tuple)) and data and len(shape) < 64:
        shape.append(len(data))
        data = data[0]
    if _is_tensor(data):
        shape.extend(data._data.shape)
    limits.check_elements(shape)


def as_tensor(data, dtype=None, device=None):
    _check_device(device)
    if _is_tensor(data) and (dtype is None or dtypes.resolve(dtype) is data._dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(array):
    return Tensor._make(np.asarray(array))


def _size_keyword(name, args, size, overloaded=False):
    """The shape of a factory called ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``, as PyTorch parses it
    (``overloaded``: the factory has several signatures, so a size given twice matches none of them)."""
    if size is _UNSET:
        return _shape_args(args, name) if args else None
    if args and overloaded:
        got = ", ".join([type(a).__name__ for a in args] + [f"size={type(size).__name__}"])
        raise _no_overload(name, got)
    if args:
        raise errors.TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise errors.TypeError(f"{name}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return _shape_args((size,), name)


def _factory(fill, name):
    def make(*args, size=_UNSET, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, memory_format=None):
        shape = _size_keyword(name, args, size)
        if shape is None:
            raise _missing(name, "size")
        _check_device(device)
        if name == "zeros" and builtins.any(s < 0 for s in shape):
            raise errors.RuntimeError("zeros: Dimension size must be non-negative.")
        _check_new_shape(shape)
        d = _dtype_arg(dtype, dtypes.default_float)
        if memory_format is not None:
            if name != "empty":             # (only torch.empty takes a memory format)
                raise errors.TypeError(f"{name}() got an unexpected keyword argument 'memory_format'")
            from ..memory_format import channels_last_data
            return _finish(Tensor._make(channels_last_data(fill, shape, d.np, memory_format), d), requires_grad)
        return _finish(Tensor._make(fill(shape, d.np), d), requires_grad)
    make.__name__ = name
    return make


zeros = _factory(np.zeros, "zeros")
ones = _factory(np.ones, "ones")
empty = _factory(np.zeros, "empty")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, out=None):
    _check_device(device)
    if not isinstance(size, (tuple, list)):
        raise errors.TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                               f"{type(size).__name__}")
    shape = _shape_args(size, "full")
    _check_new_shape(shape)
    fill_value = _scalar(fill_value)
    if not isinstance(fill_value, numbers.Number):
        raise errors.TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                               f"{type(fill_value).__name__}")
    d = _dtype_arg(dtype, dtypes.of_python_scalar(fill_value))
    return _finish(Tensor._make(np.full(shape, fill_value, d.np), d), requires_grad)


def _like(fill):
    def make(input, dtype=None, *, device=None, requires_grad=False, memory_format=None, layout=None):
        _check_device(device)
        _need_tensor(input, "input", "zeros_like")
        d = _dtype_arg(dtype, input._dtype)
        return _finish(_batched_like(Tensor._make(_laid_like(fill(input._data, d.np)), d), input), requires_grad)
    return make


def _batched_like(t, input):
    """``t`` made from ``input``'s shape: under vmap, batched as ``input`` is (vmap's factories do so)."""
    if not _VMAP:
        return t
    from ..batching import made_like
    return made_like(t, input)


def _laid_like(data):
    """A ``*_like`` result (NumPy's ``*_like`` keep the input's layout, as preserve_format does); a
    permuted one is noted, so op.apply lays results computed from it out as PyTorch does."""
    if not data.flags.c_contiguous:
        from ..result_layout import note
        note(data)
    return data


# preserve_format: the result is laid out like the input (a permuted input gives a permuted result)
zeros_like = _like(np.zeros_like)
ones_like = _like(np.ones_like)
empty_like = _like(np.zeros_like)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    _check_device(device)
    d = _dtype_arg(dtype, input._dtype)
    return _finish(_batched_like(Tensor._make(_laid_like(np.full_like(input._data, _scalar(fill_value), d.np)), d),
                                 input), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    _check_device(device)
    if _not_int(n) or (m is not None and _not_int(m)):
        types = ", ".join(type(v).__name__ for v in (n, m) if v is not None)
        raise _no_overload("eye", types)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise errors.RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    m = n if m is None else m
    _check_new_shape((n, m))
    d = _dtype_arg(dtype, dtypes.default_float)
    return _finish(Tensor._make(np.eye(n, m, dtype=d.np), d), requires_grad)


def arange(start=_UNSET, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    _check_device(device)
    if start is _UNSET:
        if end is None:
            raise _no_overload("arange")
        start = 0                       # arange(end=5)
    elif end is None:
        start, end = 0, start
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if step == 0 or step != step:
        raise errors.RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise errors.RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if (end - start) / step < 0:
        raise errors.RuntimeError("upper bound and lower bound inconsistent with step sign")
    floating = builtins.any(isinstance(v, float) for v in (start, end, step))
    d = _dtype_arg(dtype, dtypes.default_float if floating else dtypes.int64)
    n = int(math.ceil((end - start) / step))
    _check_new_shape((n,))
    if d.name in ("float32", "float64"):
        from .. import range_factories    # (loaded by the first range: start-up stays lean)
        arr = range_factories.arange_values(start, step, n, d.np)
    elif d.category == 2:
        arr = (start + np.arange(n, dtype=np.float64) * step).astype(d.np)
    else:
        arr = np.arange(start, end, step, dtype=np.float64).astype(d.np) if floating else \
            np.arange(start, end, step, dtype=d.np)
    return _finish(Tensor._make(arr, d), requires_grad)


def linspace(start, end, steps=None, *, dtype=None, device=None, requires_grad=False, out=None):
    _check_device(device)
    if steps is None or _not_int(steps):
        types = ", ".join(type(v).__name__ for v in (start, end, steps) if v is not None)
        raise _no_overload("linspace", types)
    start, end = _scalar(start), _scalar(end)
    if steps < 0:
        raise errors.RuntimeError("number of steps must be non-negative")
    _check_new_shape((steps,))
    d = _dtype_arg(dtype, dtypes.default_float)
    if d.name in ("float32", "float64", "float16"):
        from .. import range_factories
        arr = range_factories.linspace_values(start, end, steps, d.np)
    elif steps == 1:
        arr = np.array([start], dtype=np.float64)
    else:
        # PyTorch fills the first half from the start and the second half back from the end
        step = (end - start) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        half = steps // 2
        arr = np.where(i < half, start + step * i, end - step * (steps - i - 1))
    if d.category != 2:
        arr = np.trunc(arr)
    return _finish(Tensor._make(arr.astype(d.np), d), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, requires_grad=False):
    d = _dtype_arg(dtype, dtypes.default_float)
    if d.name in ("float32", "float64") and not _not_int(steps) and steps >= 0:
        from .. import range_factories
        values = range_factories.logspace_values(_scalar(start), _scalar(end), steps, _scalar(base), d.np)
        return _finish(Tensor._make(values, d), requires_grad)
    return (base ** linspace(start, end, steps, dtype=dtypes.float64 if dtype is dtypes.float64 else None)).to(
        _dtype_arg(dtype, dtypes.default_float))
