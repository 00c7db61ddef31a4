"""Arithmetic whose overloads need more than a schema line: ``add``/``sub`` with ``alpha``, ``div``'s
rounding modes, ``pow``'s scalar and tensor forms, ``clamp``, ``where``, ``lerp``, ``masked_fill``,
bitwise ops and ``isclose``.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import ops as D
from .. import dtypes, errors
from ..grad_mode import IN_FORMULA as _IN_FORMULA
from ..inplace_engine import apply_inplace
from ..op import _check_broadcast, apply, wrap
from ..tensor import Tensor
from .arguments import _UNSET, _is_tensor, _need_tensor, _need_tensors, _no_overload, _scalar
from .creation import full_like, ones_like


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


def _cpp_scalar(input, other) -> bool:
    """In a backward formula (PyTorch's are C++), ``tensor OP number`` is the Scalar overload
    (``MulBackward1`` …), as for a floating tensor there; a program's is the Tensor one, as in Python."""
    return type(other) in (int, float) and isinstance(input, Tensor) and input._dtype.category == 2


def add(input, other, *, alpha=1, out=None):
    if _IN_FORMULA and alpha == 1 and _cpp_scalar(input, other):
        return apply(D.add_scalar, (input,), {"other": other})
    if type(alpha) is not int:          # (an int alpha suits every dtype)
        _alpha_check(input, other, alpha)
    return apply(D.add, (input, other), {"alpha": alpha} if alpha != 1 else {})


def sub(input, other, *, alpha=1, out=None):
    if _is_tensor(input) and input._dtype is dtypes.bool_ and _is_tensor(other) and other._dtype is dtypes.bool_:
        raise errors.RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                                  "`^` or `logical_xor()` operator instead.")
    if _IN_FORMULA and alpha == 1 and _cpp_scalar(input, other):
        return apply(D.sub_scalar, (input,), {"other": other})
    if type(alpha) is not int:          # (an int alpha suits every dtype)
        _alpha_check(input, other, alpha)
    return apply(D.sub, (input, other), {"alpha": alpha} if alpha != 1 else {})


def rsub(input, other, *, alpha=1):
    if _IN_FORMULA and alpha == 1 and _cpp_scalar(input, other):
        # C++'s ``number - tensor``: empty_like(tensor).fill_(number).sub_(tensor), a SubBackward0
        return apply(D.sub, (full_like(input, other), input))
    if type(alpha) is not int:          # (an int alpha suits every dtype)
        _alpha_check(input, other, alpha)
    entry = D.rsub_tensor if _is_tensor(other) and not other._wrapped else D.rsub
    return apply(entry, (input, other), {"alpha": alpha} if alpha != 1 else {})


def mul(input, other, *, out=None):
    if _IN_FORMULA and _cpp_scalar(input, other):
        return apply(D.mul_scalar, (input,), {"other": other})
    return apply(D.mul, (input, other))


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        if _IN_FORMULA and _cpp_scalar(input, other):
            return apply(D.div_scalar, (input,), {"other": other})
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
    # a number exponent is taken as a double too (PowBackward0 keeps 2.0 for float_power(x, 2))
    return pow(input.double() if _is_tensor(input) else input,
               exponent.double() if _is_tensor(exponent) else float(exponent)
               if type(exponent) in (int, bool) else exponent)


def square(input):
    return pow(input, 2)


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
            if b is None:       # the bound not given: no bound (the node shows None for it)
                from ..saved_attributes import absent
                fill = extreme if d.category == 2 else (np.iinfo(d.np).min if extreme < 0 else np.iinfo(d.np).max)
                return absent(full_like(input, fill, dtype=d))
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
        from .reductions import nonzero         # (the reduction composites load on first use)
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
                                      f"dtype {condition._dtype._scalar_name}")
    return apply(D.where, (condition, input, other))


def lerp(input, end, weight):
    if not (_is_tensor(input) and _is_tensor(end)):
        types = ", ".join("Tensor" if _is_tensor(a) else type(a).__name__ for a in (input, end, weight))
        raise _no_overload("lerp", types)
    if input._dtype.category != 2:
        kernel = "lerp_kernel_tensor" if _is_tensor(weight) else "lerp_kernel_scalar"
        raise errors.NotImplementedError(f'"{kernel}" not implemented for \'{input._dtype._scalar_name}\'')
    for name, t in (("end", end), ("weight", weight)):
        if _is_tensor(t) and t._dtype is not input._dtype:
            raise errors.RuntimeError(f"expected dtype {input._dtype._cpp_name} for `{name}` but got dtype "
                                      f"{t._dtype._cpp_name}")
    if _is_tensor(weight):
        return apply(D.lerp_tensor, (input, end, weight))
    return apply(D.lerp, (input, end), {"weight": weight})


def masked_fill(input, mask, value):
    _need_tensor(mask, "mask", "masked_fill", 2)
    if mask._dtype is not dtypes.bool_:
        raise errors.RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                                  f"{mask._dtype._cpp_name}")
    if mask._data.shape != input._data.shape:
        _check_broadcast([mask._data, input._data])
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
        if shape != input._data.shape:
            from .shape import expand           # (the shape composites load on first use)
            input = expand(input, shape)
    if _is_tensor(value):
        if value._data.ndim != 0:
            raise errors.RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                                      f"with {value._data.ndim} dimension(s).")
        return apply(D.masked_fill_tensor, (input, mask, value))      # the Tensor overload, as in PyTorch
    return apply(D.masked_fill, (input, mask), {"value": value})


def neg(input, *, out=None):
    if _is_tensor(input) and input._dtype is dtypes.bool_:
        raise errors.RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                                  "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return apply(D.neg, (input,))


negative = neg

def relu(input, inplace=False):
    if inplace:
        return apply_inplace(D.relu, input)
    return apply(D.relu, (input,))


def round(input, *, decimals=None, out=None):
    if decimals is None:
        return apply(D.round_, (input,))
    return apply(D.round_decimals, (input,), {"decimals": int(decimals)})


def isreal(input):
    return ones_like(input, dtype=dtypes.bool_)


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
    name = d._scalar_name
    hint = "`^` is xor in Python and PyTorch; for a power write `**`" if kind == "xor" else None
    raise errors.NotImplementedError(f'"bitwise_{kind}_cpu" not implemented for \'{name}\'', hint=hint)


# ---------------------------------------------------------------- comparisons
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _need_tensors("isclose", input, other)
    if input._dtype is not other._dtype:
        raise errors.RuntimeError(f"{input._dtype._scalar_name} did not match {other._dtype._scalar_name}")
    _check_broadcast([input._data, other._data])
    a, b = input, other
    d = dtypes.result_type([a, b])
    x, y = a._data.astype(d.np, copy=False), b._data.astype(d.np, copy=False)
    if x.shape == y.shape and x.size > _CLOSE_BLOCK and d.category == 2:
        # block by block, so the dozen passes over each block stay in cache (allclose of the
        # per-sample gradients of a CNN compares 75 million elements)
        xf, yf = x.reshape(-1), y.reshape(-1)
        close = np.empty(xf.size, bool)
        for begin in range(0, xf.size, _CLOSE_BLOCK):
            end = begin + _CLOSE_BLOCK
            close[begin:end] = _close(xf[begin:end], yf[begin:end], rtol, atol, equal_nan, True)
        return Tensor._make(close.reshape(x.shape), dtypes.bool_)
    return Tensor._make(np.asarray(_close(x, y, rtol, atol, equal_nan, d.category == 2)), dtypes.bool_)


_CLOSE_BLOCK = 1 << 16


def _close(x, y, rtol, atol, equal_nan, floating):
    """PyTorch's isclose: equal, or within ``atol + rtol * |y|`` and both finite."""
    with np.errstate(all="ignore"):
        close = (x == y) | (np.abs(x - y) <= atol + rtol * np.abs(y))
        if floating:
            close &= np.isfinite(x) & np.isfinite(y) | (x == y)
            if equal_nan:
                close |= np.isnan(x) & np.isnan(y)
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    _need_tensors("allclose", input, other)
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other) -> bool:
    return input._data.shape == other._data.shape and builtins.bool(np.array_equal(input._data, other._data))


subtract = sub
multiply = mul
divide = div
