"""PyTorch's public functions with their signatures, dispatching to the op table.

Each function parses PyTorch's arguments (overloads such as ``max(input)`` /
``max(input, dim)`` / ``max(input, other)`` included), picks the table entry and
calls ``apply``. The same functions become ``Tensor`` methods and operators at
the end of this module, so ``torch.exp(x)``, ``x.exp()`` and ``F.relu`` share one
path. Composite ops (``outer``, ``matmul``, ``l1_loss``, ``cross_entropy`` …) are
written here as PyTorch composes them, which is what gives them PyTorch's node
names.
"""
from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from . import ops as D
from . import device as _device
from . import dtypes, errors, limits, range_factories
from .dtypes import DType
from .graph import Node, _grad_enabled
from .forward_ad import ACTIVE as _DUAL_LEVEL, copy_tangent
from .batching import LEVELS as _VMAP
from .op import (_check_broadcast, apply, apply_ex, apply_inplace, apply_inplace_view, bump_version, check_inplace,
                 check_writeable, mark_multi_output_views, save_inplace_result, wrap, write_inplace)
from .ops.common import _reduce_dim
from .signatures import _check_device
from .tensor import Size, Tensor, _wrap_dim

_bpy = builtins


# ================================================================ helpers
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
    from . import surface
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
    if requires_grad:
        if not t._dtype.is_floating_point:
            raise errors.RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _dim_arg(dim, ndim):
    if isinstance(dim, (tuple, list)):
        return tuple(_wrap_dim(d, ndim) for d in dim)
    return _wrap_dim(dim, ndim)


def _scalar(x):
    """A Python number from a number or a one-element tensor (for parameters such as ``clamp(min=…)``)."""
    if _is_tensor(x):
        return x.item()
    return x


# ================================================================ creation
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
        return _finish(Tensor._make(fill(input._data.shape, d.np), d), requires_grad)
    return make


zeros_like = _like(np.zeros)
ones_like = _like(np.ones)
empty_like = _like(np.zeros)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    _check_device(device)
    d = _dtype_arg(dtype, input._dtype)
    return _finish(Tensor._make(np.full(input._data.shape, _scalar(fill_value), d.np), d), requires_grad)


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
    if d.name in ("float32", "float64"):
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
        values = range_factories.logspace_values(_scalar(start), _scalar(end), steps, _scalar(base), d.np)
        return _finish(Tensor._make(values, d), requires_grad)
    return pow(base, linspace(start, end, steps, dtype=dtypes.float64 if dtype is dtypes.float64 else None)).to(
        _dtype_arg(dtype, dtypes.default_float))


# ---------------------------------------------------------------- random numbers
def _rng():
    from . import rng as _random
    return _random


def manual_seed(seed):
    return _rng().manual_seed(int(seed))


def seed():
    return _rng().default_generator.seed()


def initial_seed():
    return _rng().default_generator.initial_seed()


def _random_factory(kind):
    def make(*args, size=_UNSET, generator=None, dtype=None, device=None, requires_grad=False, out=None,
             layout=None, pin_memory=False):
        shape = _size_keyword(kind, args, size, overloaded=True)
        if shape is None:
            raise _no_overload(kind)
        _check_device(device)
        _check_new_shape(shape)
        d = _dtype_arg(dtype, dtypes.default_float)
        arr = getattr(_rng(), kind)(shape, d.name, generator=generator)
        return _finish(Tensor._make(arr, d), requires_grad)
    make.__name__ = kind
    return make


rand = _random_factory("rand")
randn = _random_factory("randn")


def rand_like(input, *, dtype=None, requires_grad=False, generator=None, **_):
    return rand(input._data.shape, dtype=dtype or input._dtype, requires_grad=requires_grad, generator=generator)


def randn_like(input, *, dtype=None, requires_grad=False, generator=None, **_):
    return randn(input._data.shape, dtype=dtype or input._dtype, requires_grad=requires_grad, generator=generator)


def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, **_):
    _check_device(device)
    args = list(args)
    if size is None:
        if not args or (len(args) == 1 and not isinstance(args[0], (tuple, list, Size))):
            types = ", ".join(type(v).__name__ for v in args)
            raise _no_overload("randint", types)
        if not isinstance(args[-1], (tuple, list, Size)):
            raise errors.TypeError(f"randint(): argument 'size' (position {len(args)}) must be tuple of ints, not "
                                   f"{type(args[-1]).__name__}")
        size = args.pop()
    low, high = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    shape = _shape_args((size,))
    _check_new_shape(shape)
    if high <= low:
        raise errors.RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = _dtype_arg(dtype, dtypes.int64)
    arr = _rng().randint(int(low), int(high), shape, d.name, generator=generator)
    return _finish(Tensor._make(arr, d), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, generator=None, **_):
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input._dtype, generator=generator)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, **_):
    _check_device(device)
    _check_new_shape((n,))
    d = _dtype_arg(dtype, dtypes.int64)
    return _finish(Tensor._make(_rng().randperm(int(n), d.name, generator=generator), d), requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False, **_):
    if _is_tensor(mean) or _is_tensor(std):
        m = mean._data if _is_tensor(mean) else mean
        s = std._data if _is_tensor(std) else std
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        d = mean._dtype if _is_tensor(mean) else std._dtype
        arr = _rng().normal(m, s, shape, d.name, generator=generator)
        return Tensor._make(arr, d)
    shape = _shape_args((size,)) if size is not None else ()
    _check_new_shape(shape)
    d = _dtype_arg(dtype, dtypes.default_float)
    return _finish(Tensor._make(_rng().normal(mean, std, shape, d.name, generator=generator), d), requires_grad)


def bernoulli(input, p=None, *, generator=None):
    if p is not None:
        arr = _rng().bernoulli(float(p), input._data.shape, input._dtype.name, generator=generator)
    else:
        arr = _rng().bernoulli(input._data, input._data.shape, input._dtype.name, generator=generator)
    return Tensor._make(arr, input._dtype)


def _uniform_(self, a=0.0, b=1.0, *, generator=None):
    with _NoGrad():
        self._data[...] = _rng().uniform(a, b, self._data.shape, self._dtype.name, generator=generator)
    bump_version(self)
    return self


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    self._data[...] = _rng().normal(mean, std, self._data.shape, self._dtype.name, generator=generator)
    bump_version(self)
    return self


def _random_(self, *bounds, generator=None):
    self._data[...] = _rng().random_(self._data.shape, self._dtype.name, *bounds, generator=generator)
    bump_version(self)
    return self


def _bernoulli_(self, p=0.5, *, generator=None):
    self._data[...] = _rng().bernoulli(float(_scalar(p)), self._data.shape, self._dtype.name, generator=generator)
    bump_version(self)
    return self


class _NoGrad:
    def __enter__(self):
        self._t = _grad_enabled.set(False)

    def __exit__(self, *a):
        _grad_enabled.reset(self._t)


# ================================================================ arithmetic
def _binary(entry_tensor, reverse_entry=None):
    def f(input, other, *, out=None):
        return apply(entry_tensor, (input, other))
    return f


def _alpha_check(input, other, alpha):
    """ATen's alpha_check on the result dtype of ``add``/``sub``: a float alpha needs a floating
    result, a bool alpha a bool one."""
    a, b = wrap(input), wrap(other)
    d = dtypes.result_type([a, b])
    if isinstance(alpha, bool) and d is not dtypes.bool_:
        raise errors.RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and d.category != 2:
        raise errors.RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(input, other, *, alpha=1, out=None):
    if type(alpha) is not int:          # (an int alpha suits every dtype)
        _alpha_check(input, other, alpha)
    return apply(D.add, (input, other), {"alpha": alpha} if alpha != 1 else {})


def sub(input, other, *, alpha=1, out=None):
    if _is_tensor(input) and input._dtype is dtypes.bool_ and _is_tensor(other) and other._dtype is dtypes.bool_:
        raise errors.RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                                  "`^` or `logical_xor()` operator instead.")
    if type(alpha) is not int:          # (an int alpha suits every dtype)
        _alpha_check(input, other, alpha)
    return apply(D.sub, (input, other), {"alpha": alpha} if alpha != 1 else {})


def rsub(input, other, *, alpha=1):
    if type(alpha) is not int:          # (an int alpha suits every dtype)
        _alpha_check(input, other, alpha)
    entry = D.rsub_tensor if _is_tensor(other) and not other._wrapped else D.rsub
    return apply(entry, (input, other), {"alpha": alpha} if alpha != 1 else {})


def mul(input, other, *, out=None):
    return apply(D.mul, (input, other))


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return apply(D.div, (input, other))
    if rounding_mode not in ("trunc", "floor"):
        raise errors.RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                                  f"'{rounding_mode}'")
    return apply(D.div_mode, (input, other), {"rounding_mode": rounding_mode})


def true_divide(input, other):
    return apply(D.div, (input, other))


def floor_divide(input, other):
    return apply(D.floor_divide, (input, other))


def remainder(input, other):
    if not _is_tensor(input) or input._wrapped:
        return apply(D.remainder_scalar_self, (wrap(input), other))
    if _is_tensor(other) and not other._wrapped:
        return apply(D.remainder_tensor, (input, other))
    return apply(D.remainder, (input, other))


def fmod(input, other):
    return apply(D.fmod_tensor if _is_tensor(other) and not other._wrapped else D.fmod, (input, other))


def pow(input, exponent, *, out=None):
    if not _is_tensor(input):
        return apply(D.pow_rscalar, (input, exponent))
    if _is_tensor(exponent):
        return apply(D.pow_tensor, (input, exponent))
    exponent = _scalar(exponent)
    if input._dtype.category != 2:
        # the exponent takes part in type promotion (bool ** 2 is int64, int ** 0.5 is float)
        promoted = dtypes.result_type([input, wrap(exponent)])
        if promoted is not input._dtype:
            input = input.to(promoted)
    if input._dtype.category != 2 and isinstance(exponent, int) and exponent < 0:
        raise errors.RuntimeError("Integers to negative integer powers are not allowed.")
    return apply(D.pow_scalar, (input,), {"exponent": exponent})


def float_power(input, exponent):
    return pow(input.double() if _is_tensor(input) else input,
               exponent.double() if _is_tensor(exponent) else exponent)


def square(input):
    return pow(input, 2)


def atan2(input, other):
    _need_tensors("atan2", input, other)
    return apply(D.atan2, (input, other))


def maximum(input, other):
    _need_tensors("maximum", input, other)
    return apply(D.maximum, (input, other))


def minimum(input, other):
    _need_tensors("minimum", input, other)
    return apply(D.minimum, (input, other))


def clamp(input, min=None, max=None, *, out=None):
    _need_tensor(input, "input", "clamp")
    if min is None and max is None:
        raise errors.RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [wrap(b) for b in (min, max) if b is not None]
    d = dtypes.result_type([input, *bounds])          # the bounds take part in type promotion
    if d is not input._dtype and input._dtype.category != 2:
        input = input.to(d)
    if _is_tensor(min) or _is_tensor(max):
        def bound(b, extreme):
            if _is_tensor(b):
                return b
            if b is None:
                b = extreme if d.category == 2 else (np.iinfo(d.np).min if extreme < 0 else np.iinfo(d.np).max)
            return full_like(input, b, dtype=d)
        return apply(D.clamp_tensor, (input, bound(min, -math.inf), bound(max, math.inf)))
    params = {}
    if min is not None:
        params["min"] = min
    if max is not None:
        params["max"] = max
    return apply(D.clamp, (input,), params)


clip = clamp


def _clamp_one(name, entry, entry_tensor, input, bound):
    if bound is _UNSET:
        raise _no_overload(name)
    _need_tensor(input, "input", name)
    d = dtypes.result_type([input, wrap(bound)])      # the bound takes part in type promotion
    if d is not input._dtype:
        input = input.to(d)
    if _is_tensor(bound):
        return apply(entry_tensor, (input, bound if bound._dtype is d else bound.to(d)))
    return apply(entry, (input,), {name[-3:]: bound})


def clamp_min(input, min=_UNSET):
    return _clamp_one("clamp_min", D.clamp_min, D.clamp_min_tensor, input, min)


def clamp_max(input, max=_UNSET):
    return _clamp_one("clamp_max", D.clamp_max, D.clamp_max_tensor, input, max)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        types = ", ".join("Tensor" if _is_tensor(a) else type(a).__name__ for a in (condition, input, other)
                          if a is not None)
        raise _no_overload("where", types)
    condition = wrap(condition)
    if condition._dtype is not dtypes.bool_:
        if condition._dtype is dtypes.uint8:
            condition = condition.bool()
        else:
            raise errors.RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with "
                                      f"dtype {D._cap_name(condition._dtype) if condition._dtype.category != 2 else {'float32': 'Float', 'float64': 'Double', 'float16': 'Half'}[condition._dtype.name]}")
    return apply(D.where, (condition, input, other))


def lerp(input, end, weight):
    if not (_is_tensor(input) and _is_tensor(end)):
        types = ", ".join("Tensor" if _is_tensor(a) else type(a).__name__ for a in (input, end, weight))
        raise _no_overload("lerp", types)
    if input._dtype.category != 2:
        kernel = "lerp_kernel_tensor" if _is_tensor(weight) else "lerp_kernel_scalar"
        raise errors.NotImplementedError(f'"{kernel}" not implemented for \'{_cap_dtype(input._dtype)}\'')
    for name, t in (("end", end), ("weight", weight)):
        if _is_tensor(t) and t._dtype is not input._dtype:
            raise errors.RuntimeError(f"expected dtype {_long_name(input._dtype)} for `{name}` but got dtype "
                                      f"{_long_name(t._dtype)}")
    if _is_tensor(weight):
        return apply(D.lerp_tensor, (input, end, weight))
    return apply(D.lerp, (input, end), {"weight": weight})


def masked_fill(input, mask, value):
    _need_tensor(mask, "mask", "masked_fill", 2)
    if mask._dtype is not dtypes.bool_:
        raise errors.RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                                  f"{_long_name(mask._dtype)}")
    if mask._data.shape != input._data.shape:
        _check_broadcast([mask._data, input._data])
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
        if shape != input._data.shape:
            input = expand(input, shape)
    if _is_tensor(value):
        if value._data.ndim != 0:
            raise errors.RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                                      f"with {value._data.ndim} dimension(s).")
        return apply(D.masked_fill_tensor, (input, mask, value))      # the Tensor overload, as in PyTorch
    return apply(D.masked_fill, (input, mask), {"value": value})


def _unary(entry):
    def f(input, *, out=None):
        if type(input) is not Tensor:
            _need_tensor(input, "input", entry.name)
        return apply(entry, (input,))
    f.__name__ = entry.name
    return f


def neg(input, *, out=None):
    if _is_tensor(input) and input._dtype is dtypes.bool_:
        raise errors.RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                                  "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return apply(D.neg, (input,))


negative = neg
abs = _unary(D.abs_)
sign = _unary(D.sign)
sgn = _unary(D.sgn)
sqrt = _unary(D.sqrt)
rsqrt = _unary(D.rsqrt)
exp = _unary(D.exp)
exp2 = _unary(D.exp2)
expm1 = _unary(D.expm1)
log = _unary(D.log)
log2 = _unary(D.log2)
log10 = _unary(D.log10)
log1p = _unary(D.log1p)
sin = _unary(D.sin)
cos = _unary(D.cos)
tan = _unary(D.tan)
asin = arcsin = _unary(D.asin)
acos = arccos = _unary(D.acos)
atan = arctan = _unary(D.atan)
arctan2 = atan2
sinh = _unary(D.sinh)
cosh = _unary(D.cosh)
tanh = _unary(D.tanh)
sigmoid = _unary(D.sigmoid)
reciprocal = _unary(D.reciprocal)
erf = _unary(D.erf)
floor = _unary(D.floor)
ceil = _unary(D.ceil)
trunc = fix = _unary(D.trunc)
frac = _unary(D.frac)


def relu(input, inplace=False):
    if inplace:
        return apply_inplace(D.relu, input)
    return apply(D.relu, (input,))


def round(input, *, decimals=0, out=None):
    return apply(D.round_, (input,), {"decimals": decimals} if decimals else {})


def isnan(input):
    return apply(D.isnan, (input,))


def isinf(input):
    return apply(D.isinf, (input,))


def isfinite(input):
    return apply(D.isfinite, (input,))


def isreal(input):
    return ones_like(input, dtype=dtypes.bool_)


def logical_not(input):
    return apply(D.logical_not, (input,))


def logical_and(input, other):
    return apply(D.logical_and, (input, other))


def logical_or(input, other):
    return apply(D.logical_or, (input, other))


def logical_xor(input, other):
    return apply(D.logical_xor, (input, other))


def bitwise_and(input, other):
    return apply(D.bitwise_and, (input, other), ) if _int_or_bool(input, other) else _bitwise_fail("and", input, other)


def bitwise_or(input, other):
    return apply(D.bitwise_or, (input, other)) if _int_or_bool(input, other) else _bitwise_fail("or", input, other)


def bitwise_xor(input, other):
    return apply(D.bitwise_xor, (input, other)) if _int_or_bool(input, other) else _bitwise_fail("xor", input, other)


def bitwise_not(input):
    return apply(D.bitwise_not, (input,))


def _int_or_bool(a, b):
    return builtins.all(not isinstance(x, float) and (not _is_tensor(x) or x._dtype.category < 2) for x in (a, b))


def _bitwise_fail(kind, a, b):
    ta = a if _is_tensor(a) else wrap(a)
    tb = b if _is_tensor(b) else wrap(b)
    d = dtypes.result_type([ta, tb])
    if d.category < 2:   # a Python float with an integer tensor
        d = dtypes.default_float
    name = {"float32": "Float", "float64": "Double", "float16": "Half"}[d.name]
    hint = "`^` is xor in Python and PyTorch; for a power write `**`" if kind == "xor" else None
    raise errors.NotImplementedError(f'"bitwise_{kind}_cpu" not implemented for \'{name}\'', hint=hint)


# ---------------------------------------------------------------- comparisons
def _compare(entry):
    def f(input, other, *, out=None):
        return apply(entry, (input, other))
    f.__name__ = entry.name
    return f


eq = _compare(D.eq)
ne = not_equal = _compare(D.ne)
lt = less = _compare(D.lt)
le = less_equal = _compare(D.le)
gt = greater = _compare(D.gt)
ge = greater_equal = _compare(D.ge)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _need_tensors("isclose", input, other)
    if input._dtype is not other._dtype:
        raise errors.RuntimeError(f"{_cap_dtype(input._dtype)} did not match {_cap_dtype(other._dtype)}")
    _check_broadcast([input._data, other._data])
    a, b = input, other
    d = dtypes.result_type([a, b])
    x, y = a._data.astype(d.np), b._data.astype(d.np)
    with np.errstate(all="ignore"):
        close = (x == y) | (np.abs(x - y) <= atol + rtol * np.abs(y))
        if d.category == 2:
            close &= np.isfinite(x) & np.isfinite(y) | (x == y)
            if equal_nan:
                close |= np.isnan(x) & np.isnan(y)
    return Tensor._make(np.asarray(close), dtypes.bool_)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    _need_tensors("allclose", input, other)
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other) -> bool:
    return input._data.shape == other._data.shape and builtins.bool(np.array_equal(input._data, other._data))


# ================================================================ reductions
def _int_dim(dim, name, position=None):
    if isinstance(dim, (tuple, list)):
        where = f" (position {position})" if position else ""
        raise errors.TypeError(f"{name}(): argument 'dim'{where} must be int, not {type(dim).__name__}")
    return dim


def prod(input, dim=None, keepdim=False, *, dtype=None):
    params = {"dtype": _dtype_arg(dtype)} if dtype is not None else {}
    if dim is None:
        return apply(D.prod_all, (input,), params)
    if isinstance(dim, (tuple, list)):
        raise _no_overload("prod", "tuple")
    return apply(D.prod_dim, (input,), {"dim": _wrap_dim(dim, input._data.ndim), "keepdim": keepdim, **params})


class ReturnType(tuple):
    """A named pair such as ``torch.return_types.max(values=…, indices=…)``."""

    _gx_exposed = True
    _fields = ("values", "indices")

    def __new__(cls, name, values, indices):
        self = tuple.__new__(cls, (values, indices))
        self._name = name
        return self

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"

    __str__ = __repr__


def _minmax(name, all_entry, dim_entry, binary):
    def f(input, dim=_UNSET, keepdim=_UNSET, *, other=_UNSET, out=None, _method=False):
        if other is not _UNSET and dim is _UNSET and keepdim is _UNSET:
            return binary(input, other)
        if dim is None or other is not _UNSET or (dim is _UNSET and keepdim is not _UNSET):
            # no overload of max/min takes these (max(None), max(keepdim=True)): PyTorch's TypeError
            pos = ([] if _method else ["Tensor"]) + ([type(dim).__name__] if dim is not _UNSET else [])
            kws = [f"{k}={type(v).__name__}" for k, v in (("keepdim", keepdim), ("other", other)) if v is not _UNSET]
            # (PyTorch's parser leaves a ", " after keywords when no positional argument came first)
            got = ", ".join(pos + kws) + (", " if kws and not pos else "")
            raise _no_overload(name, got)
        if dim is _UNSET:
            return apply(all_entry, (input,))
        if _is_tensor(dim):
            return binary(input, dim)
        keepdim = False if keepdim is _UNSET else keepdim
        d = _wrap_dim(dim, input._data.ndim)
        values, extras = apply_ex(dim_entry, (input,), {"dim": d, "keepdim": keepdim})
        return ReturnType(name, values, Tensor._make(extras["indices"], dtypes.int64))
    f.__name__ = name
    return f


max = _minmax("max", D.max_all, D.max_dim, maximum)
min = _minmax("min", D.min_all, D.min_dim, minimum)


def amax(input, dim=(), keepdim=False):
    return apply(D.amax, (input,), {"dim": _reduce_dim(dim, input) if dim != () else (), "keepdim": keepdim})


def amin(input, dim=(), keepdim=False):
    return apply(D.amin, (input,), {"dim": _reduce_dim(dim, input) if dim != () else (), "keepdim": keepdim})


def aminmax(input, *, dim=None, keepdim=False):
    return ReturnType("aminmax", amin(input, () if dim is None else dim, keepdim),
                      amax(input, () if dim is None else dim, keepdim))


def argmax(input, dim=None, keepdim=False):
    return apply(D.argmax, (input,), {"dim": _reduce_dim(_int_dim(dim, "argmax"), input), "keepdim": keepdim})


def argmin(input, dim=None, keepdim=False):
    return apply(D.argmin, (input,), {"dim": _reduce_dim(_int_dim(dim, "argmin"), input), "keepdim": keepdim})


def _var_args(input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):        # var(input, unbiased)
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return {"dim": _reduce_dim(dim, input), "correction": correction, "keepdim": keepdim}


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return apply(D.var, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return apply(D.std, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    params = _var_args(input, dim, unbiased, keepdim, correction)
    return apply(D.var_mean_var, (input,), params), apply(D.var_mean_mean, (input,), params)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    params = _var_args(input, dim, unbiased, keepdim, correction)
    return apply(D.std_mean_std, (input,), params), apply(D.std_mean_mean, (input,), params)


def _ord(p):
    if p in ("fro", None):
        return 2.0
    if p == "nuc":
        raise errors.RuntimeError("nuclear norm is not supported in gradexpr")
    return float(p)


def _norm_params(params, dtype):
    if dtype is not None:
        params["dtype"] = _dtype_arg(dtype)
    return params


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    return apply(D.norm, (input,), _norm_params({"ord": _ord(p), "dim": _reduce_dim(dim, input), "keepdim": keepdim},
                                                dtype))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return apply(D.norm, (x,), _norm_params({"ord": float(ord), "dim": _reduce_dim(dim, x), "keepdim": keepdim},
                                            dtype))


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.norm``: a vector norm over one dim (or all, without ord), else a matrix norm."""
    n = A._data.ndim
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    if isinstance(dim, int) or (dim is None and (ord is None or (n == 1 and not isinstance(ord, str)))):
        if isinstance(ord, str):
            raise errors.RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord}")
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None:
        if n != 2 and not (n == 1 and isinstance(ord, str)):     # a string ord is a matrix norm's
            raise errors.RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                                      f"Got {n}D.")
        dim = (-2, -1)
    return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """PyTorch's composition: Frobenius as a vector norm, 1/inf norms as amax(sum(abs))."""
    n = A._data.ndim
    if n < 2:
        raise errors.RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (_wrap_dim(d, n) for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in (1, -1, math.inf, -math.inf):
        if ord in (math.inf, -math.inf):
            d0, d1 = d1, d0
        if not keepdim and d0 < d1:
            d1 -= 1
        summed = _torch("sum")(abs(A), d0, keepdim)
        return amax(summed, d1, keepdim) if ord > 0 else amin(summed, d1, keepdim)
    if ord in (2, -2, "nuc"):
        s = svdvals(movedim(A, (d0, d1), (-2, -1)))
        if ord == "nuc":
            out = _torch("sum")(s, -1)
        else:
            out = amax(s, -1) if ord == 2 else amin(s, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                out = unsqueeze(out, d)
        return out
    raise errors.RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def svdvals(A, *, driver=None):
    if A._data.ndim < 2:
        raise errors.RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if A._dtype.category != 2:
        raise errors.RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. Got "
                                  f"{_cap_dtype(A._dtype)}")
    return apply(D.svdvals, (A,))


def logsumexp(input, dim=None, keepdim=False):
    if dim is None:
        raise _missing("logsumexp", "dim")
    return apply(D.logsumexp, (input,), {"dim": _reduce_dim(dim, input), "keepdim": keepdim})


def cumsum(input, dim, *, dtype=None):
    params = {"dim": _wrap_dim(_int_dim(dim, "cumsum", 1), input._data.ndim)}
    if dtype is not None:
        params["dtype"] = _dtype_arg(dtype)
    return apply(D.cumsum, (input,), params)


def cumprod(input, dim, *, dtype=None):
    params = {"dim": _wrap_dim(_int_dim(dim, "cumprod", 1), input._data.ndim)}
    if dtype is not None:
        params["dtype"] = _dtype_arg(dtype)
    return apply(D.cumprod, (input,), params)


def all(input, dim=None, keepdim=False):
    t = apply(D.all_, (input,), {"dim": _reduce_dim(dim, input, empty_means_all=False), "keepdim": keepdim})
    return t if input._dtype is not dtypes.uint8 else t.to(dtypes.uint8)


def any(input, dim=None, keepdim=False):
    return apply(D.any_, (input,), {"dim": _reduce_dim(dim, input, empty_means_all=False), "keepdim": keepdim})


def count_nonzero(input, dim=None):
    return _torch("sum")(ne(input, 0), dim)


def nonzero(input, *, as_tuple=False):
    idx = np.nonzero(input._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in idx)
    return Tensor._make(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64))


# ================================================================ linear algebra
def _ensure_float_matmul(a, b, name):
    if a._dtype is not b._dtype:
        raise errors.RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a._dtype.name if False else _long_name(a._dtype)} != {_long_name(b._dtype)}")


def _long_name(d):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "float16": "c10::Half",
            "bool": "bool"}.get(d.name, d.name)


def mm(input, mat2, *, out=None):
    _need_tensors("mm", input, mat2, "mat2")
    if input._data.ndim != 2:
        raise errors.RuntimeError(f"self must be a matrix")
    if mat2._data.ndim != 2:
        raise errors.RuntimeError(f"mat2 must be a matrix")
    a, b = input._data.shape, mat2._data.shape
    if a[1] != b[0]:
        raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")
    _ensure_float_matmul(input, mat2, "mm")
    limits.check_elements((a[0], b[1]))
    return apply(D.mm, (input, mat2))


def bmm(input, mat2, *, out=None):
    _need_tensors("bmm", input, mat2, "mat2")
    if input._data.ndim != 3:
        raise errors.RuntimeError(f"batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise errors.RuntimeError(f"batch2 must be a 3D tensor")
    a, b = input._data.shape, mat2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise errors.RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a[0]}, {a[2]}] "
                                  f"but got: [{b[0]}, {b[1]}].")
    _ensure_float_matmul(input, mat2, "bmm")
    limits.check_elements((a[0], a[1], b[2]))
    return apply(D.bmm, (input, mat2))


def mv(input, vec, *, out=None):
    _need_tensors("mv", input, vec, "vec")
    a, b = input._data.shape, vec._data.shape
    if len(a) != 2 or len(b) != 1:
        raise errors.RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a)}, {len(b)}")
    if a[1] != b[0]:
        raise errors.RuntimeError(f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec ({b[0]})")
    return apply(D.mv, (input, vec))


def dot(input, tensor, *, out=None):
    _need_tensors("dot", input, tensor, "tensor")
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise errors.RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors")
    if input._data.shape[0] != tensor._data.shape[0]:
        raise errors.RuntimeError(f"inconsistent tensor size, expected tensor [{input._data.shape[0]}] and src "
                                  f"[{tensor._data.shape[0]}] to have the same number of elements, but got "
                                  f"{input._data.shape[0]} and {tensor._data.shape[0]} elements respectively")
    if input._dtype is not tensor._dtype:
        raise errors.RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                                  f"{_cap_dtype(input._dtype)} and {_cap_dtype(tensor._dtype)}")
    return apply(D.dot, (input, tensor))


def _cap_dtype(d):
    from .op import _cap
    return _cap(d)


vdot = inner = dot


def matmul(input, other, *, out=None):
    """PyTorch's matmul: dot, mv, mm, a folded mm/mv, or a broadcast bmm, chosen as ATen chooses
    (which is what decides the node names of the result)."""
    _need_tensors("matmul", input, other)
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise errors.RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        if input._data.shape[0] != other._data.shape[0]:
            raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{input._data.shape[0]} and "
                                      f"{other._data.shape[0]}x{other._data.shape[1]})")
        return apply(D.squeeze_inplace_dim, (mm(unsqueeze(input, 0), other),), {"dim": 0})
    if da == 2 and db == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _matmul_folded(input, other)
    return _matmul_batched(input, other)


def _batch_contiguous(t):
    a = t._data
    return builtins.all(a.strides[i] == a.strides[i + 1] * a.shape[i + 1] for i in range(a.ndim - 2))


def _should_fold(a, b):
    """ATen's should_fold: fold the larger operand's batch into rows and use mm/mv instead of bmm."""
    larger = a if a._data.ndim >= b._data.ndim else None
    smaller = b if larger is not None else a
    ndim_big = builtins.max(a._data.ndim, b._data.ndim)
    if not (ndim_big >= 3 and smaller._data.ndim <= 2):
        return False
    if smaller._requires_grad:
        return True
    if a._data.ndim == 2:
        return False
    big = larger if larger is not None else _mT(b)
    return big._data.size == 0 or _batch_contiguous(big)


def _matmul_folded(a, b):
    transpose = b._data.ndim > a._data.ndim
    t1 = _mT(b) if transpose else a
    t2 = (t(a) if a._data.ndim == 2 else a) if transpose else b
    k = t1._data.shape[-1]
    if t2._data.shape[0] != k:
        rows = int(np.prod(t1._data.shape[:-1]))
        cols = t2._data.shape[-1] if t2._data.ndim == 2 else 1
        raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                                  f"{t2._data.shape[0]}x{cols})")
    shape = t1._data.shape[:-1]
    folded = reshape(t1, int(np.prod(shape)), k)
    if t2._data.ndim == 2:
        out = apply(D.unsafe_view, (mm(folded, t2),), {"shape": shape + (t2._data.shape[1],)})
        return contiguous(_mT(out)) if transpose else out
    return apply(D.unsafe_view, (mv(folded, t2),), {"shape": shape})


def _matmul_batched(a, b):
    da, db = a._data.ndim, b._data.ndim
    sa, sb = a._data.shape, b._data.shape
    if da == 3 and db == 3 and sa[0] != sb[0]:
        if sa[0] == 1 and a._requires_grad:
            return matmul(squeeze(a, 0), b)
        if sb[0] == 1 and b._requires_grad:
            return matmul(a, squeeze(b, 0))
    n = sa[-2] if da > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if db > 1 else sb[0]
    p = sb[-1] if db > 1 else 1
    if m1 != m2:
        raise errors.RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                                  f"[{int(np.prod(sa[:-2])) if da > 2 else 1}, {m1}] but got: "
                                  f"[{int(np.prod(sb[:-2])) if db > 2 else 1}, {m2}].")
    try:
        batch = tuple(np.broadcast_shapes(sa[:builtins.max(da - 2, 0)], sb[:builtins.max(db - 2, 0)]))
    except ValueError:
        ba, bb = sa[:builtins.max(da - 2, 0)], sb[:builtins.max(db - 2, 0)]
        k = next(i for i in range(1, builtins.min(len(ba), len(bb)) + 1)
                 if ba[-i] != bb[-i] and ba[-i] != 1 and bb[-i] != 1)
        raise errors.RuntimeError(f"The size of tensor a ({ba[-k]}) must match the size of tensor b ({bb[-k]}) at "
                                  f"non-singleton dimension {builtins.max(len(ba), len(bb)) - k}") from None
    nb = int(np.prod(batch))
    a3 = reshape(expand(a, batch + (n, m1)), nb, n, m1)
    if db == 1:
        b3 = unsqueeze(reshape(expand(b, batch + (m2,)), nb, m2), 2)
    else:
        b3 = reshape(expand(b, batch + (m2, p)), nb, m2, p)
    shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    out = bmm(a3, b3)
    if db == 1:
        out = squeeze(out, -1)
    return apply(D.unsafe_view, (out,), {"shape": shape})


def outer(input, vec2):
    _need_tensors("outer", input, vec2, "vec2")
    return input.reshape(input._data.shape[0], 1) * vec2


ger = outer


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    params = {}
    if beta != 1:
        params["beta"] = beta
    if alpha != 1:
        params["alpha"] = alpha
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m._data.ndim != 2:
            raise errors.RuntimeError(f"{name} must be a matrix, got {m._data.ndim}-D tensor")
    a, b = mat1._data.shape, mat2._data.shape
    if a[1] != b[0]:
        raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")
    _check_broadcast([input._data, np.empty((a[0], b[1]), dtype=np.bool_)])
    return apply(D.addmm, (input, mat1, mat2), params)


def t(input):
    if input._data.ndim > 2:
        raise errors.RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return apply(D.t, (input,))


def transpose(input, dim0, dim1):
    n = input._data.ndim
    return apply(D.transpose, (input,), {"dim0": _wrap_dim(dim0, n), "dim1": _wrap_dim(dim1, n)})


swapaxes = swapdims = transpose


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


def permute(input, dims=_UNSET, *extra):
    if extra:
        raise errors.TypeError(f"permute() takes 2 positional arguments but {2 + len(extra)} were given")
    if dims is _UNSET:
        raise _missing("permute", "dims")
    dims = _int_list_arg(dims, "permute", "dims", 2)
    n = input._data.ndim
    if len(dims) != n:
        raise errors.RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                                  f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
                                  f"to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise errors.RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(D.permute, (input,), {"dims": dims})


def movedim(input, source, destination):
    n = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(d, n) for d in dst]
    if n == 0:
        return apply(D.alias, (input,))         # as ATen: a 0-d tensor's dims go nowhere
    rest = [i for i in range(n) if i not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return permute(input, perm)


def det(A):
    _square(A, "linalg.det")
    return apply(D.det, (A,))


def inverse(A):
    _square(A, "linalg.inv")
    return apply(D.inverse, (A,))


def _square(A, name):
    s = A._data.shape
    if len(s) < 2:
        raise errors.RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if s[-1] != s[-2]:
        raise errors.RuntimeError(f"{name}: A must be batches of square matrices, but they are {s[-2] if len(s) > 1 else 1} by {s[-1] if s else 1} matrices")


def trace(input):
    if input._data.ndim != 2:
        raise errors.RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input._data.ndim))
    return apply(D.trace, (input,))


# ================================================================ shape
def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise errors.RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise errors.RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise errors.RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                                      "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise errors.RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise errors.RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _viewable(a: np.ndarray, shape) -> bool:
    try:
        v = a.view()
        v.shape = shape
        return True
    except AttributeError:
        return False


def view(input, *shape):
    if not shape:
        raise _no_overload("view")
    if len(shape) == 1 and isinstance(shape[0], DType):
        return apply(D.view_dtype, (input,), {"dtype": shape[0]})
    shape = _infer_shape(_shape_args(shape, "view"), input._data.size)
    if not _viewable(input._data, shape):
        raise errors.RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                                  "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(D.view, (input,), {"shape": shape})


def reshape(input, *shape):
    """A view when the tensor is contiguous, an alias with computed strides when the shape can still be
    viewed (``ReshapeAliasBackward0``), else a copy (``UnsafeViewBackward0`` of a clone), as ATen."""
    if not shape:
        raise _missing("reshape", "shape")
    shape = _infer_shape(_shape_args(shape, "reshape", "shape"), input._data.size)
    if input._data.flags.c_contiguous:
        return apply(D.view, (input,), {"shape": shape})
    if _viewable(input._data, shape):
        return apply(D.reshape_alias, (input,), {"shape": shape})
    return apply(D.unsafe_view, (clone(input),), {"shape": shape})


def view_as(input, other):
    return view(input, other._data.shape)


def reshape_as(input, other):
    return reshape(input, other._data.shape)


def flatten(input, start_dim=0, end_dim=-1):
    n = input._data.ndim
    if n == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise errors.RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._data.shape
    return reshape(input, shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input._data.ndim)
    shape = input._data.shape
    sizes = _shape_args((sizes,), "unflatten", "sizes")
    if not sizes:
        raise errors.RuntimeError("unflatten: sizes must be non-empty")
    known = math.prod(n for n in sizes if n != -1)
    if (math.prod(sizes) != shape[d]) if -1 not in sizes else (known == 0 and shape[d] or known and shape[d] % known):
        raise errors.RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                                  f"({shape[d]}) in the input tensor")
    try:
        sizes = _infer_shape(sizes, shape[d])
    except errors.RuntimeError as exc:
        raise errors.RuntimeError(f"unflatten got an unexpected error:\n{exc}") from None
    return view(input, shape[:d] + tuple(sizes) + shape[d + 1:])


def squeeze(input, dim=None):
    if dim is None:
        return apply(D.squeeze, (input,))
    if isinstance(dim, (tuple, list)):
        return apply(D.squeeze_dims, (input,), {"dims": _reduce_dim(dim, input, empty_means_all=False)})
    return apply(D.squeeze_dim, (input,), {"dim": _wrap_dim(dim, input._data.ndim)})


def unsqueeze(input, dim):
    return apply(D.unsqueeze, (input,), {"dim": _wrap_dim(dim, input._data.ndim + 1)})


def expand(input, *sizes):
    if not sizes:
        raise _missing("expand", "size")
    sizes = _shape_args(sizes, "expand")
    cur = input._data.shape
    if len(sizes) < len(cur):
        raise errors.RuntimeError(f"expand(torch.{_cap_dtype(input._dtype)}Tensor{{{list(cur)}}}, size={list(sizes)}): "
                                  "the number of sizes provided (" + str(len(sizes)) + ") must be greater or equal "
                                  "to the number of dimensions in the tensor (" + str(len(cur)) + ")")
    lead = len(sizes) - len(cur)
    shape = []
    for i, s in reversed(list(enumerate(sizes))):       # checked from the last dim, as ATen does
        c = cur[i - lead] if i >= lead else None
        if s == -1:
            if c is None:
                raise errors.RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                          f"non-existing dimension {i}")
            s = c
        elif c is not None and c != s and c != 1:
            raise errors.RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({c}) at "
                                      f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                                      f"{list(cur)}")
        shape.insert(0, s)
    limits.check_elements(shape)    # a view, but every later op would materialise it
    return apply(D.expand, (input,), {"shape": tuple(shape)})


def expand_as(input, other):
    return expand(input, other._data.shape)


def broadcast_to(input, size):
    return expand(input, size)


def repeat(input, *sizes):
    if not sizes:
        raise _missing("repeat", "repeats")
    sizes = _shape_args(sizes, "repeat")
    if len(sizes) < input._data.ndim:
        raise errors.RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                                  "of tensor")
    shape = (1,) * (len(sizes) - input._data.ndim) + input._data.shape
    _check_new_shape(tuple(a * b for a, b in zip(shape, sizes)))
    return apply(D.repeat, (input,), {"repeats": sizes})


def _tensor_list(tensors, name):
    if _is_tensor(tensors) or not isinstance(tensors, (list, tuple)):
        raise errors.TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                               f"{type(tensors).__name__}")
    if not tensors:
        if name == "stack":
            raise errors.RuntimeError("stack expects a non-empty TensorList")
        raise errors.ValueError(f"torch.{name}(): expected a non-empty list of Tensors")
    return [t if _is_tensor(t) else _bad_elem(name, t, i) for i, t in enumerate(tensors)]


def _bad_elem(name, t, i):
    raise errors.TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")


def cat(tensors, dim=0, *, out=None):
    ts = _tensor_list(tensors, "cat")
    for i, t in enumerate(ts):
        if t._data.ndim == 0:
            raise errors.RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    nonempty = [t for t in ts if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    ref = nonempty[0] if nonempty else ts[0]
    d = _wrap_dim(dim, ref._data.ndim)
    for i, t in enumerate(ts):
        if builtins.any(t is n for n in nonempty) or t is ref:
            if t._data.ndim != ref._data.ndim:
                raise errors.RuntimeError(f"Tensors must have same number of dimensions: got {ref._data.ndim} and "
                                          f"{t._data.ndim}")
            for k, (a, b) in enumerate(zip(ref._data.shape, t._data.shape)):
                if k != d and a != b:
                    raise errors.RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                              f"{a} but got size {b} for tensor number {i} in the list.")
    limits.check_elements(ref._data.shape[:d] + (builtins.sum(t._data.shape[d] for t in nonempty),)
                          + ref._data.shape[d + 1:]) if nonempty else None
    params = {"dim": d}
    if len(nonempty) != len(ts):
        # skipped legacy empty tensors still take part in type promotion
        promoted = dtypes.result_type(ts)
        ts = nonempty or ts[:1]
        if promoted is not dtypes.result_type(ts):
            params["dtype"] = promoted
    return apply(D.cat, ts, params)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    ts = _tensor_list(tensors, "stack")
    for i, t in enumerate(ts):
        if t._data.shape != ts[0]._data.shape:
            raise errors.RuntimeError(f"stack expects each tensor to be equal size, but got {list(ts[0]._data.shape)} "
                                      f"at entry 0 and {list(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, ts[0]._data.ndim + 1)
    limits.check_elements(ts[0]._data.shape[:d] + (len(ts),) + ts[0]._data.shape[d:])
    return apply(D.stack, ts, {"dim": d})


def hstack(tensors):
    ts = _tensor_list(tensors, "hstack")
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors):
    return cat([t if t._data.ndim > 1 else t.reshape(1, -1) for t in _tensor_list(tensors, "vstack")], 0)


def split(tensor, split_size_or_sections, dim=0):
    if tensor._data.ndim == 0:
        raise errors.RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor._data.ndim)
    size = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != size:
            raise errors.RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                                      f"size at dimension {d}), but got split_sizes={sizes}")
        entry = D.split_sizes_part
    else:
        step = int(split_size_or_sections)
        if step < 0:
            raise errors.RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and size:
            raise errors.RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of "
                                      f"{size}")
        sizes = [builtins.min(step, size - i) for i in range(0, size, step)] if size else [0]
        entry = D.split_part
    out, offset = [], 0
    for s in sizes:
        out.append(apply(entry, (tensor,), {"dim": d, "start": offset, "end": offset + s}))
        offset += s
    return tuple(mark_multi_output_views(out))


def chunk(input, chunks, dim=0):
    if input._data.ndim == 0:
        raise errors.RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise errors.RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if size == 0:
        # ATen: split_with_sizes into `chunks` empty parts (split would give one)
        return split(input, [0] * chunks, d)
    return split(input, -(-size // chunks), d)


def tensor_split(input, sections, dim=0):
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if isinstance(sections, int):
        q, r = divmod(size, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
    else:
        bounds = [0] + list(sections) + [size]
        sizes = [builtins.max(0, bounds[i + 1] - bounds[i]) for i in range(len(bounds) - 1)]
    # one slice per part (SliceBackward0, each its own view), as ATen composes tensor_split
    out, offset = [], 0
    for s in sizes:
        out.append(apply(D.narrow, (input,), {"dim": d, "start": offset, "end": offset + s}))
        offset += s
    return tuple(out)


def unbind(input, dim=0):
    if input._data.ndim == 0:
        raise errors.IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input._data.ndim)
    return tuple(mark_multi_output_views(
        [apply(D.unbind_part, (input,), {"dim": d, "index": i}) for i in range(input._data.shape[d])]))


def narrow(input, dim, start, length):
    if input._data.ndim == 0:
        raise errors.RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise errors.RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    start = _scalar(start)
    if not -size <= start <= size:
        raise errors.IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise errors.RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return apply(D.narrow, (input,), {"dim": d, "start": start, "end": start + length})


def select(input, dim, index):
    if input._data.ndim == 0:
        raise errors.IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    i = _scalar(index)
    if not -size <= i < size:
        raise errors.IndexError(f"select(): index {i} out of range for tensor of size {list(input._data.shape)} at "
                                f"dimension {d}")
    return apply(D.select, (input,), {"dim": d, "index": i % size})


def index_select(input, dim, index):
    _need_tensor(index, "index", "index_select", 3)
    if index._dtype.category != 1:
        raise errors.RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index._data.ndim > 1:
        raise errors.IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        # ATen checks dim 1 of a tensor of two or more dims in its batch-gather kernel
        # (index_select_out_cpu_dim1_), every other case in the generic loop
        if d == 1 and input._data.ndim > 1:
            raise errors.RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad.flat[0])} axis_dim={size}")
        raise errors.IndexError("index out of range in self")
    return apply(D.index_select, (input, reshape(index, -1) if index._data.ndim == 0 else index), {"dim": d})


def index_add(input, dim, index, source, *, alpha=1):
    return apply(D.index_add, (input, index, source), {"dim": _wrap_dim(dim, input._data.ndim), "alpha": alpha})


def gather(input, dim, index, *, sparse_grad=False):
    _need_tensor(index, "index", "gather", 3)
    if index._dtype.category != 1:
        raise errors.RuntimeError("gather(): Expected dtype int32/int64 for index")
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if index._data.ndim != n and builtins.max(n, 1) != builtins.max(index._data.ndim, 1):
        raise errors.RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k, (i, m) in enumerate(zip(index._data.shape, input._data.shape)):
        if k != d and i > m:
            raise errors.RuntimeError(f"Size does not match at dimension {k} expected index "
                                      f"{list(index._data.shape)} to be no larger than self "
                                      f"{list(input._data.shape)} apart from dimension {d}")
    size = input._data.shape[d] if n else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        raise errors.RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {size}")
    return apply(D.gather, (input, index), {"dim": d})


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    d = _wrap_dim(dim, input._data.ndim)
    if src is None or not _is_tensor(src):
        v = value if src is None else src
        return apply(D.scatter_value, (input, index), {"dim": d, "value": _scalar(v)})
    return apply(D.scatter, (input, index, src), {"dim": d})


def scatter_add(input, dim, index, src):
    return apply(D.scatter_add, (input, index, src), {"dim": _wrap_dim(dim, input._data.ndim)})


def flip(input, dims=_UNSET, *extra):
    if extra:
        raise errors.TypeError(f"flip() takes 2 positional arguments but {2 + len(extra)} were given")
    if dims is _UNSET:
        raise _missing("flip", "dims")
    dims = tuple(_wrap_dim(d, input._data.ndim) for d in _int_list_arg(dims, "flip", "dims", 2))
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise errors.RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return apply(D.flip, (input,), {"dims": dims})


def fliplr(input):
    if input._data.ndim < 2:
        raise errors.RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input._data.ndim < 1:
        raise errors.RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
    if dims is not None:
        dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
        n_shifts = len(shifts) if isinstance(shifts, tuple) else 1
        if not dims or n_shifts != len(dims):
            raise errors.RuntimeError("`shifts` required" if not dims else
                                      f"shifts and dimensions must align. shifts: {n_shifts}, dims:{len(dims)}")
        if input._data.ndim == 0:
            raise errors.IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = tuple(_wrap_dim(d, input._data.ndim) for d in dims)
        shifts = shifts if isinstance(shifts, tuple) else (shifts,)
    return apply(D.roll, (input,), {"shifts": shifts, "dims": dims})


def tril(input, diagonal=0):
    if input._data.ndim < 2:
        raise errors.RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply(D.tril, (input,), {"diagonal": diagonal})


def triu(input, diagonal=0):
    if input._data.ndim < 2:
        raise errors.RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply(D.triu, (input,), {"diagonal": diagonal})


def diag(input, diagonal=0):
    if input._data.ndim == 1:
        n = input._data.shape[0] + builtins.abs(diagonal)
        limits.check_elements((n, n))
        return apply(D.diag_embed, (input,), {"offset": diagonal})
    if input._data.ndim == 2:
        return apply(D.diag_copy, (input,), {"diagonal": diagonal} if diagonal else {})
    raise errors.RuntimeError("diag(): Supports 1D or 2D tensors. Got " + str(input._data.ndim) + "D")


def diagonal(input, offset=0, dim1=0, dim2=1):
    n = input._data.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise errors.RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(D.diagonal, (input,), {"offset": offset, "dim1": d1, "dim2": d2})


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input._data.shape[-1] + builtins.abs(offset) if input._data.ndim else 1
    d1, d2 = _wrap_dim(dim1, input._data.ndim + 1), _wrap_dim(dim2, input._data.ndim + 1)
    if d1 == d2:
        raise errors.RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    limits.check_elements(input._data.shape[:-1] + (n, n))
    return apply(D.diag_embed, (input,), {"offset": offset, "dim1": d1, "dim2": d2})


def clone(input, *, memory_format=None):
    return apply(D.clone, (input,))


def contiguous(input, memory_format=None):
    if input._data.flags.c_contiguous:
        return input
    return clone(input)


def masked_select(input, mask):
    return input[mask.expand_as(input) if mask._data.shape != input._data.shape else mask]


# ================================================================ indexing
_INT_KINDS = "iu"


def _normalise_index(t: Tensor, index):
    """PyTorch's indexing as one NumPy index (checked as PyTorch checks it), and whether it has tensor
    (advanced) parts."""
    if not t._data.ndim and not isinstance(index, tuple):
        # a lone int or slice on a 0-d tensor: checked as applySelect / applySlice check it
        if isinstance(index, numbers.Integral) and not isinstance(index, bool):
            if index == 0:
                raise errors.IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                        "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            raise errors.IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
        if isinstance(index, slice):
            raise errors.IndexError("slice() cannot be applied to a 0-dim tensor.")
    if not isinstance(index, tuple):
        index = (index,)
    out, advanced = [], False
    dim = 0
    n_specified = builtins.sum(1 for i in index if i is not None and i is not Ellipsis and not (
        _is_tensor(i) and i._dtype is dtypes.bool_) and not isinstance(i, bool)) + builtins.sum(
        i._data.ndim for i in index if _is_tensor(i) and i._dtype is dtypes.bool_)
    shape = t._data.shape
    if n_specified > len(shape):
        raise errors.IndexError(f"too many indices for tensor of dimension {len(shape)}")
    for i in index:
        if i is None:
            out.append(None)
        elif i is Ellipsis:
            out.append(Ellipsis)
            dim += len(shape) - n_specified
        elif isinstance(i, bool) or (_is_tensor(i) and i._dtype is dtypes.bool_ and i._data.ndim == 0):
            # a 0-d bool tensor indexes as the Python bool does: a new dim of size 1 or 0
            out.append(builtins.bool(i._data) if _is_tensor(i) else i)
            advanced = True
        elif isinstance(i, numbers.Integral) or (_is_tensor(i) and i._data.ndim == 0 and i._dtype.category == 1):
            i = int(i)
            size = shape[dim]
            if not -size <= i < size:
                raise errors.IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            out.append(i)
            dim += 1
        elif isinstance(i, slice):
            start, stop, step = (_scalar(x) if x is not None else None for x in (i.start, i.stop, i.step))
            if step is not None and step <= 0:
                raise errors.ValueError("step must be greater than zero")
            out.append(slice(start, stop, step))
            dim += 1
        elif _is_tensor(i) or isinstance(i, (list, tuple, np.ndarray)):
            # (an ndarray is an index this module normalised before, e.g. in a backward formula)
            arr = i._data if _is_tensor(i) else i if isinstance(i, np.ndarray) else np.asarray(tensor(list(i))._data)
            if arr.dtype.kind == "b":
                for k, (ms, ts_) in enumerate(zip(arr.shape, shape[dim:dim + arr.ndim])):
                    if ms != ts_:
                        raise errors.IndexError(f"The shape of the mask {list(arr.shape)} at index {k} does not match "
                                                f"the shape of the indexed tensor {list(shape)} at index {dim + k}")
                dim += arr.ndim
            elif arr.dtype.kind in _INT_KINDS:
                size = shape[dim]
                if arr.size and (arr.max() >= size or arr.min() < -size):
                    bad = int(arr[(arr >= size) | (arr < -size)].ravel()[0])
                    raise errors.IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
                dim += 1
            else:
                raise errors.IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            advanced = True
        else:
            raise errors.IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                                    "are valid indices (got " + type(i).__name__ + ")")
    return tuple(out), advanced


_ALL = slice(None)


def _view_steps(t, basic, lone=False):
    """The basic part of an index (ints, slices, None, ...) applied as PyTorch's ``applySlicing``
    applies it: one view op per step, each its own node (``x[0, 1:]`` is SliceBackward0 over
    SelectBackward0), a slice over a whole dimension skipped unless it is the ``lone`` index
    (``x[:]`` records SliceBackward0); ``t`` itself when no step applies."""
    ndim = t._data.ndim
    shape = t._data.shape
    skipped = ndim - builtins.sum(1 for i in basic if i is not None and i is not Ellipsis)
    out, dim, source_dim = t, 0, 0      # dim: in the result so far; source_dim: in t
    for i in basic:
        if i is None:
            out = apply(D.GETITEM["UnsqueezeBackward0"], (out,), {"index": (_ALL,) * dim + (None,)})
            dim += 1
        elif i is Ellipsis:
            dim += skipped
            source_dim += skipped
        elif isinstance(i, slice):
            if lone or i.indices(shape[source_dim]) != (0, shape[source_dim], 1):
                out = apply(D.GETITEM["SliceBackward0"], (out,), {"index": (_ALL,) * dim + (i,)})
            dim += 1
            source_dim += 1
        else:
            out = apply(D.GETITEM["SelectBackward0"], (out,), {"index": (_ALL,) * dim + (i,)})
            source_dim += 1
    return out


_NO_BYTES = np.dtype([])


def getitem(self, index):
    idx, advanced = _normalise_index(self, index)
    if not advanced:
        out = _view_steps(self, idx, lone=not isinstance(index, tuple))
        # PyTorch's x[...] / x[:, :] is a new view all the same: an alias
        return out if out is not self else apply(D.GETITEM["AliasBackward0"], (self,), {"index": (Ellipsis,)})
    # As PyTorch: the basic part of the index (ints, slices, None) first, as views; then the tensor
    # indices on the last view. (NumPy would broadcast an int with the tensor indices, which moves the
    # result's dimensions when a slice stands between them: x[0, :, [0, 1]].)
    basic, tensors = _split_index(self, idx)
    source = _view_steps(self, basic)
    # the result's shape from NumPy's own indexing rules, on an array of zero-byte elements
    # (nothing is allocated, however large the result would be)
    limits.check_elements(np.empty(source._data.shape, dtype=_NO_BYTES)[tensors].shape)
    return apply(D.GETITEM["IndexBackward0"], (source,), {"index": tensors})


def _index_put_(self, index, values, accumulate=False):
    return apply(D.index_put, (self, values), {"index": index, "accumulate": accumulate})


def setitem(self, index, value):
    """``t[index] = value`` in place, composed as PyTorch composes it (so the same nodes are recorded):
    the basic part of the index (ints, slices, None, ...) takes a view of ``t``; without tensor indices
    the value is then copied into that view (``copy_``, ``fill_`` for a 0-d value, an ``expand`` first
    when the shapes differ), with them it is put there (``index_put_``). A view changed in place gives
    its base a ``CopySlices`` node (see op.write_inplace)."""
    if index is False:
        return                                   # PyTorch: t[False] = v assigns nothing
    idx, _ = _normalise_index(self, index)
    tracked = _grad_enabled.get() and self.requires_grad
    if not tracked and type(value) in (float, int, bool):
        # a number where nothing is recorded: one NumPy assignment (it selects the same elements,
        # and casts as PyTorch casts the number to the tensor's dtype)
        check_writeable(self)
        self._data[idx] = value
        bump_version(self)
        return
    v = _setitem_value(self, value)
    basic, advanced = _split_index(self, idx)
    if not (tracked or (_grad_enabled.get() and v._requires_grad)):
        try:
            if _setitem_untracked(self, basic, advanced, v):
                return
        except ValueError:
            pass                                 # shapes that do not fit: the tracked path words the error
    target = self
    view_arr = self._data[basic]
    if not (view_arr.shape == self._data.shape and view_arr.strides == self._data.strides):
        target = apply(D.GETITEM["SliceBackward0"], (self,), {"index": basic})
    if advanced is None:
        _copy_to(target, v)
    else:
        _index_put_inplace(target, advanced, v)


def _setitem_value(self, value):
    """The assigned value as a tensor: a Python number becomes a 0-d tensor of ``self``'s dtype."""
    if _is_tensor(value):
        return value
    if isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, complex):
        return Tensor._make(np.array(value).astype(self._dtype.np), self._dtype)
    from .graph import _TYPE_STRING
    raise errors.TypeError(f"can't assign a {type(value).__name__} to a {_TYPE_STRING[self._dtype.name]}")


def _split_index(t, idx):
    """A normalised index as PyTorch applies it: (the NumPy basic index that makes the view, the index of
    that view's dimensions by tensors, or None when there is none)."""
    ndim = t._data.ndim
    consumed = _bpy.sum(1 if not isinstance(i, np.ndarray) or i.dtype.kind != "b" else i.ndim
                        for i in idx if i is not None and i is not Ellipsis and not isinstance(i, bool))
    basic, advanced, any_tensor = [], [], False
    for i in idx:
        if i is None:
            basic.append(None)
            advanced.append(slice(None))
        elif i is Ellipsis:
            basic.append(Ellipsis)
            advanced.extend([slice(None)] * (ndim - consumed))
        elif isinstance(i, bool):               # True/False: a new dimension, indexed by [0] or by []
            basic.append(None)
            advanced.append(np.zeros(1 if i else 0, np.int64))
            any_tensor = True
        elif isinstance(i, slice):
            basic.append(i)
            advanced.append(slice(None))
        elif isinstance(i, np.ndarray):
            basic.extend([slice(None)] * (i.ndim if i.dtype.kind == "b" else 1))
            advanced.append(i)
            any_tensor = True
        else:
            basic.append(int(i))
    while basic and basic[-1] == slice(None):
        basic.pop()
    if not _bpy.any(i is Ellipsis for i in basic):
        basic.append(Ellipsis)                  # NumPy then always returns a view, never a scalar
    return tuple(basic), (tuple(advanced) if any_tensor else None)


def _setitem_untracked(self, basic, advanced, v):
    """``setitem`` when nothing is recorded: NumPy assignment, same steps (False: take the tracked path)."""
    src = v._data
    if src.dtype != self._data.dtype:
        if advanced is not None and not (src.ndim == 0 and _mask_fill(advanced)):
            return False                         # index_put_ refuses mixed dtypes: the tracked path says so
        src = src.astype(self._dtype.np)
    if not self._data.flags.writeable:
        return False
    target = self._data[basic]
    if advanced is None:
        if target.shape != src.shape and src.ndim:
            np.broadcast_to(_strip_leading_ones(src), target.shape)    # ValueError when PyTorch refuses
        target[...] = src
    else:
        target[advanced] = _strip_leading_ones(src)
    bump_version(self)
    return True


def _strip_leading_ones(a):
    k = 0
    while k < a.ndim - 1 and a.shape[k] == 1:
        k += 1
    return a.reshape(a.shape[k:]) if k else a


def _mask_fill(advanced):
    """Whether an index is one boolean mask (then PyTorch fills with a 0-d value of any dtype)."""
    arrays = [a for a in advanced if isinstance(a, np.ndarray)]
    return len(arrays) == 1 and arrays[0].dtype.kind == "b"


def _copy_to(dst, src):
    """PyTorch's ``copy_to`` of indexing: ``dst`` is ``t`` itself or a view of it."""
    if dst._data.shape == src._data.shape:
        copy_(dst, src)
        return
    if src._data.ndim == 0:
        _fill_with_tensor(dst, src)
        return
    stripped = _strip_leading_ones(src._data).shape
    if stripped != src._data.shape:
        src = view(src, stripped)
    if src._data.shape != dst._data.shape:
        src = expand(src, dst._data.shape)
    copy_(dst, src)


def _fill_with_tensor(dst, value):
    """``dst.fill_(value)`` for a 0-d tensor value (``FillBackward3`` whenever it is recorded)."""
    check_inplace(dst, (value,))
    if _grad_enabled.get() and (dst._requires_grad or value._requires_grad):
        write_inplace(dst, apply(D.fill_tensor_inplace, (dst, value)))
        return
    check_writeable(dst)
    dst._data[...] = value._data.astype(dst._dtype.np, copy=False)
    bump_version(dst)


def _index_put_inplace(dst, index, values):
    """``dst.index_put_(index, values)`` with PyTorch's checks, as indexing calls it."""
    if values._dtype is not dst._dtype:
        if values._data.ndim == 0 and _mask_fill(index):
            values = to(values, dst._dtype)
        else:
            raise errors.RuntimeError(f"Index put requires the source and destination dtypes match, got "
                                      f"{_cap_dtype(dst._dtype)} for the destination and "
                                      f"{_cap_dtype(values._dtype)} for the source.")
    stripped = _strip_leading_ones(values._data).shape
    if stripped != values._data.shape:
        values = view(values, stripped)
    target = np.empty(dst._data.shape, dtype=np.bool_)[index].shape
    try:
        fits = np.broadcast_shapes(values._data.shape, target) == tuple(target)
    except ValueError:
        fits = False
    if not fits:
        raise errors.RuntimeError(f"shape mismatch: value tensor of shape {list(values._data.shape)} cannot be "
                                  f"broadcast to indexing result of shape {list(target)}")
    check_inplace(dst, (values,))
    if _grad_enabled.get() and (dst._requires_grad or values._requires_grad):
        write_inplace(dst, apply(D.index_put, (dst, values), {"index": index, "accumulate": False}))
        return
    check_writeable(dst)
    dst._data[index] = values._data
    bump_version(dst)


# ================================================================ conversion
def to(self, *args, **kwargs):
    """``t.to(dtype)``, ``t.to(other)``, ``t.to('cpu')``, ``t.to('cpu', dtype)``; same dtype returns ``t``."""
    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, DType) or a in (float, int, bool):
            dtype = dtypes.resolve(a)
        elif _is_tensor(a):
            dtype = a._dtype
        elif isinstance(a, (str, _device.device)) or (isinstance(a, int) and not isinstance(a, bool)):
            _device.check_to(a)     # moving a tensor: PyTorch's errors of .to, not of a factory
    if kwargs.get("device") is not None:
        _device.check_to(kwargs["device"])
    copy = kwargs.get("copy", False)
    if dtype is None or dtype is self._dtype:
        return clone(self) if copy else self
    return apply(D.to_copy, (self,), {"dtype": dtype})


def _converter(d):
    def conv(self, memory_format=None):
        return to(self, d)
    return conv


def type_(self, dtype=None, **_):
    if dtype is None:
        from .graph import _TYPE_STRING
        return _TYPE_STRING[self._dtype.name]
    if isinstance(dtype, str):
        names = {v: k for k, v in __import__("gradexpr.graph", fromlist=["_TYPE_STRING"])._TYPE_STRING.items()}
        return to(self, dtypes.by_name(names[dtype]))
    from .legacy import typed_class_dtype
    return to(self, typed_class_dtype(dtype) or dtype)


def type_as(self, other):
    return to(self, other._dtype)


def new_zeros(self, *size, dtype=None, requires_grad=False, **_):
    return zeros(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, requires_grad=False, **_):
    return ones(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, requires_grad=False, **_):
    return full(size, fill_value, dtype=dtype or self._dtype, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, requires_grad=False, **_):
    return tensor(data, dtype=dtype or self._dtype, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, requires_grad=False, **_):
    return zeros(*size, dtype=dtype or self._dtype, requires_grad=requires_grad)


def is_tensor(obj) -> bool:
    return _is_tensor(obj)


def is_floating_point(input) -> bool:
    return input._dtype.is_floating_point


def numel(input) -> int:
    return int(input._data.size)


def sum_to_size(self, *size):
    """Sum ``self`` down to ``size`` (the reverse of broadcasting): the engine's gradient reduction."""
    shape = _shape_args(size)
    cur = self._data.shape
    lead = len(cur) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and cur[i + lead] != 1)
    out = self
    if dims:
        out = _torch("sum")(out, dims, keepdim=True)
    if lead:
        out = view(out, shape) if out._data.shape != shape else out
    elif out._data.shape != shape:
        out = view(out, shape)
    return out


def _slice_scatter(self, src, dim, start, end, step=1):
    return apply(D.slice_scatter, (self, src), {"dim": dim, "start": start, "end": end, "step": step})


def _narrow_step(self, dim, start, end, step=1):
    idx = (slice(None),) * dim + (slice(start, end, step),)
    return getitem(self, idx)


def _select_scatter(self, src, dim, index):
    return apply(D.select_scatter, (self, src), {"dim": dim, "index": index})


def _diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    return apply(D.diagonal_scatter, (self, src), {"offset": offset, "dim1": dim1, "dim2": dim2})


# ================================================================ in-place methods
def _inplace_of(fn_name):
    fn = globals()[fn_name]

    def inplace(self, *args, **kwargs):
        check_inplace(self, args + tuple(kwargs.values()) if kwargs else args)
        result = fn(_old_self(self, fn_name), *args, **kwargs)
        node = result._grad_fn
        write_inplace(self, result)
        if node is not None:
            save_inplace_result(self, node)
        return self
    inplace.__name__ = fn_name + "_"
    return inplace


def _save_inplace_result(t, node=None):
    """``op.save_inplace_result`` for callers that only have ``t`` (its grad_fn is then the op's node)."""
    node = t._grad_fn if node is None else node
    if type(node) is Node:
        save_inplace_result(t, node)


def _old_self(t, name):
    """The value of ``t`` before an in-place op, carrying ``t``'s history (a copy when a formula reads it)."""
    if not (_grad_enabled.get() and t._requires_grad) or name in _INPLACE_NO_SELF:
        return t
    old = Tensor._make(t._data.copy(), t._dtype, t._requires_grad, t._grad_fn)
    old._acc = t._acc
    if _DUAL_LEVEL:
        copy_tangent(t, old)
    return old


# in-place methods whose backward formulas do not read the input (others get a copy of the old value)
_INPLACE_NO_SELF = {"add", "sub", "neg", "clone", "masked_fill", "relu", "exp", "sigmoid", "tanh", "sqrt", "rsqrt",
                    "reciprocal"}


def zero_(self):
    return fill_(self, 0, entry=D.zero_inplace)


def fill_(self, value, *, entry=None):
    check_inplace(self, (value,))
    if _is_tensor(value):
        if value._data.ndim != 0:
            raise errors.RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                                      f"{value._data.ndim} dimensions.")
        if (_grad_enabled.get() and value._requires_grad) or _VMAP:
            write_inplace(self, apply(D.fill_tensor_inplace, (self, value)))
            return self
        value = value.item()
    if (_grad_enabled.get() and self._requires_grad) or _VMAP:     # (under vmap: the batch rule writes)
        write_inplace(self, apply(entry or D.fill_inplace, (self,), {"value": value}))
        return self
    check_writeable(self)
    self._data[...] = value
    bump_version(self)
    return self


def copy_(self, src, non_blocking=False):
    check_inplace(self, (src,))
    src = src if _is_tensor(src) else wrap(src)
    if (_grad_enabled.get() and (self._requires_grad or src._requires_grad)) or _VMAP:
        result = apply(D.copy_inplace, (self, src))
        write_inplace(self, result)
        return self
    check_writeable(self)
    np.copyto(self._data, np.broadcast_to(src._data, self._data.shape).astype(self._dtype.np), casting="unsafe")
    bump_version(self)
    return self


def t_(self):
    if self._data.ndim > 2:
        raise errors.RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return apply_inplace_view(D.t_inplace, self)


def transpose_(self, dim0, dim1):
    n = self._data.ndim
    return apply_inplace_view(D.transpose_inplace, self, {"dim0": _wrap_dim(dim0, n), "dim1": _wrap_dim(dim1, n)})


def unsqueeze_(self, dim):
    return apply_inplace_view(D.unsqueeze_inplace, self, {"dim": _wrap_dim(dim, self._data.ndim + 1)})


def squeeze_(self, dim=None):
    if dim is None:
        return apply_inplace_view(D.squeeze_inplace, self)
    if isinstance(dim, (tuple, list)):
        return apply_inplace_view(D.squeeze_inplace_dims, self,
                                  {"dims": _reduce_dim(dim, self, empty_means_all=False)})
    return apply_inplace_view(D.squeeze_inplace_dim, self, {"dim": _wrap_dim(dim, self._data.ndim)})




# ================================================================ Tensor methods and operators
def _reflected(fn):
    """``number OP t`` for a commutative OP: PyTorch's ``t.__rOP__(number)`` calls ``OP(t, number)``, so the
    tensor stays the node's first input (``2 * b`` records ``MulBackward0`` with edges (b, None))."""
    def r(self, other):
        return fn(self, other)
    return r


def _rtruediv(self, other):
    # PyTorch computes ``number / t`` as ``t.reciprocal() * number`` (hence MulBackward0)
    return mul(reciprocal(self), other)


def _rpow(self, other):
    return apply(D.pow_rscalar, (other, self))


def _rmatmul(self, other):
    return matmul(other, self)


def _iop(fn_name):
    inplace = _inplace_of(fn_name)

    def iop(self, other):
        return inplace(self, other)
    return iop


def _xor(self, other):
    return bitwise_xor(self, other)


def _and(self, other):
    return bitwise_and(self, other)


def _or(self, other):
    return bitwise_or(self, other)


def _invert(self):
    if self._dtype.category == 2:
        raise errors.TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    if self._dtype is dtypes.bool_:
        return logical_not(self)
    return bitwise_not(self)


def _eq(self, other):
    if not (_is_tensor(other) or isinstance(other, numbers.Number)):
        return False
    return eq(self, other)


def _ne(self, other):
    if not (_is_tensor(other) or isinstance(other, numbers.Number)):
        return True
    return ne(self, other)


def _floordiv(self, other):
    return floor_divide(self, other)


def _rfloordiv(self, other):
    return floor_divide(wrap(other), self)


def _mod(self, other):
    return remainder(self, other)


def _rmod(self, other):
    return remainder(wrap(other), self)


def _abs(self):
    return abs(self)


def _pos(self):
    return self


def _T(self):
    n = self._data.ndim
    return permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    if self._data.ndim == 0:
        return self                             # PyTorch's mT of a 0-d tensor is the tensor itself
    if self._data.ndim < 2:
        raise errors.RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                                  f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _iter(self):
    if self._data.ndim == 0:
        raise errors.TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


def _size_method(self, dim=None):
    if dim is None:
        return Size(self._data.shape)
    return self._data.shape[_wrap_dim(dim, self._data.ndim)]


def _view_method(self, *shape):
    return view(self, *shape)


def _max_method(self, dim=_UNSET, keepdim=_UNSET, *, other=_UNSET):
    return max(self, dim, keepdim, other=other, _method=True)


def _min_method(self, dim=_UNSET, keepdim=_UNSET, *, other=_UNSET):
    return min(self, dim, keepdim, other=other, _method=True)


_METHODS = {
    # arithmetic
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div, "divide": div,
    "true_divide": true_divide, "floor_divide": floor_divide, "remainder": remainder, "fmod": fmod,
    "neg": neg, "negative": neg, "pow": pow, "float_power": float_power, "square": square, "abs": abs,
    "sign": sign, "sgn": sgn, "sqrt": sqrt, "rsqrt": rsqrt, "exp": exp, "exp2": exp2,
    "expm1": expm1, "log": log, "log2": log2, "log10": log10, "log1p": log1p, "sin": sin, "cos": cos, "tan": tan,
    "asin": asin, "arcsin": asin, "acos": acos, "arccos": acos, "atan": atan, "arctan": atan, "atan2": atan2,
    "arctan2": atan2, "sinh": sinh, "cosh": cosh, "tanh": tanh, "sigmoid": sigmoid, "relu": relu,
    "reciprocal": reciprocal, "erf": erf, "floor": floor, "ceil": ceil, "round": round, "trunc": trunc,
    "fix": trunc, "frac": frac, "clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "maximum": maximum, "minimum": minimum, "lerp": lerp, "masked_fill": masked_fill, "where": lambda self, c, o:
    where(c, self, o), "isnan": isnan, "isinf": isinf, "isfinite": isfinite, "logical_not": logical_not,
    "logical_and": logical_and, "logical_or": logical_or, "logical_xor": logical_xor,
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not,
    "eq": eq, "ne": ne, "not_equal": ne, "lt": lt, "less": lt, "le": le, "less_equal": le, "gt": gt,
    "greater": gt, "ge": ge, "greater_equal": ge, "isclose": isclose, "allclose": allclose, "equal": equal,
    # reductions
    "prod": prod, "max": _max_method,
    "min": _min_method, "amax": amax,
    "amin": amin, "aminmax": aminmax, "argmax": argmax, "argmin": argmin, "std": std, "var": var, "norm": norm,
    "logsumexp": logsumexp, "cumsum": cumsum, "cumprod": cumprod, "all": all, "any": any,
    "count_nonzero": count_nonzero, "nonzero": nonzero,
    # linear algebra
    "matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot, "inner": dot, "vdot": dot, "outer": outer,
    "ger": outer, "addmm": addmm, "t": t, "transpose": transpose, "swapaxes": transpose, "swapdims": transpose,
    "permute": _varargs_method("permute", "dims", permute), "movedim": movedim, "det": det, "inverse": inverse, "trace": trace,
    # shape
    "view": _view_method, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as, "flatten": flatten,
    "unflatten": unflatten, "squeeze": squeeze, "unsqueeze": unsqueeze, "expand": expand,
    "expand_as": expand_as, "broadcast_to": broadcast_to, "repeat": repeat, "split": split, "chunk": chunk,
    "tensor_split": tensor_split, "unbind": unbind, "narrow": narrow, "select": select,
    "index_select": index_select, "index_add": index_add, "gather": gather, "scatter": scatter,
    "scatter_add": scatter_add, "flip": _varargs_method("flip", "dims", flip), "fliplr": fliplr, "flipud": flipud, "roll": roll, "tril": tril,
    "triu": triu, "diag": diag, "diagonal": diagonal, "diag_embed": diag_embed, "clone": clone,
    "contiguous": contiguous, "softmax": lambda self, dim, dtype=None: _nn().softmax(self, dim, dtype=dtype),
    "log_softmax": lambda self, dim, dtype=None: _nn().log_softmax(self, dim, dtype=dtype), "masked_select": masked_select, "sum_to_size": sum_to_size,
    # conversion
    "to": to, "type": type_, "type_as": type_as, "float": _converter(dtypes.float32),
    "double": _converter(dtypes.float64), "half": _converter(dtypes.float16), "long": _converter(dtypes.int64),
    "int": _converter(dtypes.int32), "short": _converter(dtypes.int16), "bool": _converter(dtypes.bool_),
    "byte": _converter(dtypes.uint8), "char": _converter(dtypes.int8), "cpu": lambda self, *a, **k: self, "cuda": lambda self, device=None, *a, **k: _device.check_to("cuda"),
    "new_zeros": new_zeros, "new_ones": new_ones, "new_full": new_full, "new_tensor": new_tensor,
    "new_empty": new_empty, "size": _size_method,
    # random, in place
    "uniform_": _uniform_, "normal_": _normal_, "bernoulli_": _bernoulli_, "bernoulli": bernoulli, "random_": _random_,
    "zero_": zero_, "fill_": fill_, "copy_": copy_, "t_": t_, "transpose_": transpose_, "swapaxes_": transpose_,
    "swapdims_": transpose_, "unsqueeze_": unsqueeze_, "squeeze_": squeeze_,
    # internal helpers used by backward formulas (underscored: not reachable from programs)
    "_slice_scatter": _slice_scatter, "_select_scatter": _select_scatter, "_diagonal_scatter": _diagonal_scatter,
    "_index_put": _index_put_, "_narrow_step": _narrow_step,
}

_INPLACE = ("add", "sub", "mul", "div", "pow", "neg", "abs", "sqrt", "rsqrt", "exp", "log", "sin", "cos", "tanh",
            "sigmoid", "relu", "reciprocal", "clamp", "clip", "clamp_min", "clamp_max", "masked_fill", "floor",
            "ceil", "round", "trunc", "sign", "remainder", "fmod", "lerp", "square", "log1p", "expm1", "atan2",
            "fill_diagonal", "exp2", "log2", "log10", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf",
            "frac", "true_divide", "floor_divide", "index_add")

_OPERATORS = {
    "__add__": add, "__radd__": _reflected(add), "__sub__": sub, "__rsub__": lambda self, other: rsub(self, other),
    "__mul__": mul, "__rmul__": _reflected(mul), "__truediv__": div, "__rtruediv__": _rtruediv,
    "__floordiv__": _floordiv, "__rfloordiv__": _rfloordiv, "__mod__": _mod, "__rmod__": _rmod,
    "__pow__": pow, "__rpow__": _rpow, "__matmul__": matmul, "__rmatmul__": _rmatmul, "__neg__": neg,
    "__pos__": _pos, "__abs__": _abs, "__invert__": _invert, "__xor__": _xor, "__rxor__": _reflected(_xor),
    "__and__": _and, "__rand__": _reflected(_and), "__or__": _or, "__ror__": _reflected(_or),
    "__eq__": _eq, "__ne__": _ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "__getitem__": getitem, "__setitem__": setitem, "__iter__": _iter,
    "__iadd__": _iop("add"), "__isub__": _iop("sub"), "__imul__": _iop("mul"), "__itruediv__": _iop("div"),
    "__ipow__": _iop("pow"), "__ifloordiv__": _iop("floor_divide"), "__imod__": _iop("remainder"),
}


def _nn():
    from . import nn_functional
    return nn_functional


def _numpy_names(fn, name=None):
    """``fn`` also taking NumPy's names for ``dim`` and ``keepdim`` (``x.sum(axis=0, keepdims=True)``),
    as PyTorch's argument parser accepts them for every op with those parameters."""
    op_name = name or fn.__name__

    def call(*args, **kwargs):
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            for alias, param in (("axis", "dim"), ("keepdims", "keepdim")):
                if alias in kwargs:
                    if param in kwargs:
                        raise errors.TypeError(f"{op_name}() got an unexpected keyword argument '{alias}'")
                    kwargs[param] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn
    return call


def _takes_dim(fn) -> bool:
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return "dim" in names or "keepdim" in names


def _bind():
    global _METHODS
    # (split and norm are Python functions in PyTorch, which its argument parser never sees)
    _METHODS = {name: _numpy_names(fn, name) if _takes_dim(fn) and name not in ("split", "norm") else fn
                for name, fn in _METHODS.items()}
    g = globals()
    for name in _NUMPY_NAMED:
        g[name] = _numpy_names(g[name], name)
    methods = dict(_METHODS)
    for name in _INPLACE:
        if name in _METHODS or name in globals():
            methods[name + "_"] = _inplace_of(name)
    from . import surface
    surface.bind_tensor(methods)
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    Tensor.T = property(_T)
    Tensor.mT = property(_mT)
    Tensor.H = property(_T)
    Tensor.__hash__ = object.__hash__


# the torch.X functions with a dim/keepdim parameter (api.py reads them from this module)
_NUMPY_NAMED = [name for name in ("prod", "max", "min", "amax", "amin", "aminmax", "argmax", "argmin",
                                  "std", "var", "var_mean", "std_mean", "logsumexp", "cumsum", "cumprod", "all",
                                  "any", "count_nonzero", "cat", "concat", "concatenate", "stack", "squeeze",
                                  "unsqueeze", "flatten", "unflatten", "chunk", "tensor_split", "unbind",
                                  "narrow", "select", "index_select", "index_add", "gather", "scatter", "scatter_add",
                                  "roll", "movedim", "vector_norm", "matrix_norm", "linalg_norm")
                if name in globals()]
_bind()

subtract = sub
multiply = mul
divide = div
