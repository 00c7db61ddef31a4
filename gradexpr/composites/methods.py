"""``Tensor``'s hand-written methods and operators, bound beside the op table's (``surface.bind_tensor``)
when this module is imported.
"""
from __future__ import annotations

import numbers

from .. import ops as D
from .. import dtypes, errors
from ..op import apply, wrap
from ..tensor import Size, Tensor, _wrap_dim
from .arguments import _is_tensor
from .arithmetic import (add, allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, clamp, clamp_max,
                         clamp_min, div, equal, float_power, floor_divide, fmod, isclose, lerp, masked_fill, mul, neg,
                         pow, relu, remainder, round, rsub, square, sub, true_divide, where)

# the composites whose methods are bound on first use (a product of two numbers needs none of them)
LAZY_MODULES = ("random_functions", "shape", "linalg", "reductions", "conversion", "inplace", "indexing")


def _reflected(fn):
    """``number OP t`` for a commutative OP: PyTorch's ``t.__rOP__(number)`` calls ``OP(t, number)``, so the
    tensor stays the node's first input (``2 * b`` records ``MulBackward0`` with edges (b, None))."""
    def r(self, other):
        return fn(self, other)
    return r


def _rtruediv(self, other):
    # PyTorch computes ``number / t`` as ``t.reciprocal() * number`` (hence MulBackward0)
    return mul(self.reciprocal(), other)


def _rpow(self, other):
    return apply(D.pow_rscalar, (other, self))


def _rmatmul(self, other):
    from .linalg import matmul
    return matmul(other, self)


def _iop(fn_name):
    """``t += other`` …: the in-place method ``add_`` … (bound with the lazy methods)."""
    method_name = fn_name + "_"

    def iop(self, other):
        return getattr(self, method_name)(other)
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
        return apply(D.logical_not, (self,))
    return bitwise_not(self)


def _eq(self, other):
    if not (_is_tensor(other) or isinstance(other, numbers.Number)):
        return False
    return apply(D.eq, (self, other))


def _ne(self, other):
    if not (_is_tensor(other) or isinstance(other, numbers.Number)):
        return True
    return apply(D.ne, (self, other))


def _comparison(entry):
    def compare(self, other):
        return apply(entry, (self, other))
    return compare


def _floordiv(self, other):
    return floor_divide(self, other)


def _rfloordiv(self, other):
    return floor_divide(wrap(other), self)


def _mod(self, other):
    return remainder(self, other)


def _rmod(self, other):
    return remainder(wrap(other), self)


def _abs(self):
    return self.abs()


def _pos(self):
    return self


def _iter(self):
    if self._data.ndim == 0:
        raise errors.TypeError("iteration over a 0-d tensor")
    from .shape import unbind
    return iter(unbind(self, 0))


def _size_method(self, dim=None):
    if dim is None:
        return Size(self._data.shape)
    return self._data.shape[_wrap_dim(dim, self._data.ndim)]


def _view_method(self, *shape):
    from .shape import view
    return view(self, *shape)


def _cuda(self, device=None, *args, **kwargs):
    from .. import device as _device
    return _device.check_to("cuda")


_METHODS = {
    # arithmetic
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div, "divide": div,
    "true_divide": true_divide, "floor_divide": floor_divide, "remainder": remainder, "fmod": fmod,
    "neg": neg, "negative": neg, "pow": pow, "float_power": float_power, "square": square,
    "relu": relu, "round": round, "clamp": clamp, "clip": clamp, "clamp_min": clamp_min, "clamp_max": clamp_max,
    "lerp": lerp, "masked_fill": masked_fill, "where": lambda self, c, o: where(c, self, o),
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not,
    "isclose": isclose, "allclose": allclose, "equal": equal,
    "softmax": lambda self, dim, dtype=None: _nn().softmax(self, dim, dtype=dtype),
    "log_softmax": lambda self, dim, dtype=None: _nn().log_softmax(self, dim, dtype=dtype),
    "cpu": lambda self, *a, **k: self, "cuda": _cuda, "size": _size_method, "view": _view_method,
}


def _lazy_methods() -> dict:
    """The methods of the composites in ``LAZY_MODULES`` (imported here, on first use)."""
    from .conversion import (_converter, new_empty, new_full, new_ones, new_tensor, new_zeros, sum_to_size, to,
                             type_, type_as)
    from .indexing import _diagonal_scatter, _index_put_, _narrow_step, _select_scatter, _slice_scatter
    from .inplace import copy_, fill_, squeeze_, t_, transpose_, unsqueeze_, zero_
    from .linalg import (_varargs_method, addmm, bmm, det, dot, inner, inverse, matmul, mm, movedim, mv, outer,
                         permute, t, trace, transpose)
    from .random_functions import (_bernoulli_, _cauchy_, _exponential_, _geometric_, _log_normal_, _normal_,
                                   _random_, _uniform_, bernoulli, multinomial)
    from .reductions import (all, amax, amin, aminmax, any, argmax, argmin, argsort, kthvalue, median, msort, sort,
                             topk, count_nonzero, cumprod, cumsum, logsumexp, nonzero, norm, std, var, _max_method,
                             _min_method)
    from .shape import (broadcast_to, chunk, clone, contiguous, diag, diag_embed, diagonal, expand, expand_as,
                        flatten, flip, fliplr, flipud, gather, index_add, index_select, masked_select, narrow, repeat,
                        reshape, reshape_as, roll, scatter, scatter_add, select, split, squeeze, tensor_split, tile,
                        tril, triu, unbind, unflatten, unsqueeze, view_as)
    return {
        # reductions
        "max": _max_method,
        "min": _min_method, "amax": amax,
        "amin": amin, "aminmax": aminmax, "argmax": argmax, "argmin": argmin, "sort": sort, "argsort": argsort,
        "msort": msort, "topk": topk, "kthvalue": kthvalue, "median": median, "std": std, "var": var, "norm": norm,
        "logsumexp": logsumexp, "cumsum": cumsum, "cumprod": cumprod, "all": all, "any": any,
        "count_nonzero": count_nonzero, "nonzero": nonzero,
        # linear algebra
        "matmul": matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot, "inner": inner, "vdot": dot, "outer": outer,
        "ger": outer, "addmm": addmm, "t": t, "transpose": transpose, "swapaxes": transpose, "swapdims": transpose,
        "permute": _varargs_method("permute", "dims", permute), "movedim": movedim, "det": det, "inverse": inverse,
        "trace": trace,
        # shape
        "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as, "flatten": flatten,
        "unflatten": unflatten, "squeeze": squeeze, "unsqueeze": unsqueeze, "expand": expand,
        "expand_as": expand_as, "broadcast_to": broadcast_to, "repeat": repeat, "tile": tile, "split": split,
        "chunk": chunk, "tensor_split": tensor_split, "unbind": unbind, "narrow": narrow, "select": select,
        "index_select": index_select, "index_add": index_add, "gather": gather, "scatter": scatter,
        "scatter_add": scatter_add, "flip": _varargs_method("flip", "dims", flip), "fliplr": fliplr,
        "flipud": flipud, "roll": roll, "tril": tril, "triu": triu, "diag": diag, "diagonal": diagonal,
        "diag_embed": diag_embed, "clone": clone, "contiguous": contiguous, "masked_select": masked_select,
        "sum_to_size": sum_to_size,
        # conversion
        "to": to, "type": type_, "type_as": type_as, "float": _converter(dtypes.float32),
        "double": _converter(dtypes.float64), "half": _converter(dtypes.float16), "long": _converter(dtypes.int64),
        "int": _converter(dtypes.int32), "short": _converter(dtypes.int16), "bool": _converter(dtypes.bool_),
        "byte": _converter(dtypes.uint8), "char": _converter(dtypes.int8),
        "new_zeros": new_zeros, "new_ones": new_ones, "new_full": new_full, "new_tensor": new_tensor,
        "new_empty": new_empty,
        # random, in place
        "uniform_": _uniform_, "normal_": _normal_, "bernoulli_": _bernoulli_, "bernoulli": bernoulli,
        "random_": _random_, "exponential_": _exponential_, "multinomial": multinomial, "cauchy_": _cauchy_,
        "geometric_": _geometric_, "log_normal_": _log_normal_,
        "zero_": zero_, "fill_": fill_, "copy_": copy_, "t_": t_, "transpose_": transpose_, "swapaxes_": transpose_,
        "swapdims_": transpose_, "unsqueeze_": unsqueeze_, "squeeze_": squeeze_,
        # internal helpers used by backward formulas (underscored: not reachable from programs)
        "_slice_scatter": _slice_scatter, "_select_scatter": _select_scatter, "_diagonal_scatter": _diagonal_scatter,
        "_index_put": _index_put_, "_narrow_step": _narrow_step,
    }


# the methods whose in-place form ``name_`` is made by ``inplace._inplace_of``
_INPLACE = ("add", "sub", "mul", "div", "pow", "neg", "relu", "clamp", "clip", "clamp_min", "clamp_max",
            "masked_fill", "round", "remainder", "fmod", "lerp", "square",
            "true_divide", "floor_divide", "index_add", "scatter", "scatter_add")


def _first_use(name):
    """An operator of the lazy composites as first bound: its first call binds them (``bind_lazy``),
    which replaces it on ``Tensor``, then runs the real one."""
    def operator(self, *args):
        bind_lazy()
        return getattr(Tensor, name)(self, *args)
    operator.__name__ = operator.__qualname__ = name
    return operator


_OPERATORS = {
    "__add__": add, "__radd__": _reflected(add), "__sub__": sub, "__rsub__": lambda self, other: rsub(self, other),
    "__mul__": mul, "__rmul__": _reflected(mul), "__truediv__": div, "__rtruediv__": _rtruediv,
    "__floordiv__": _floordiv, "__rfloordiv__": _rfloordiv, "__mod__": _mod, "__rmod__": _rmod,
    "__pow__": pow, "__rpow__": _rpow, "__matmul__": _first_use("__matmul__"), "__rmatmul__": _rmatmul,
    "__neg__": neg, "__pos__": _pos, "__abs__": _abs, "__invert__": _invert, "__xor__": _xor,
    "__rxor__": _reflected(_xor), "__and__": _and, "__rand__": _reflected(_and), "__or__": _or,
    "__ror__": _reflected(_or), "__eq__": _eq, "__ne__": _ne, "__lt__": _comparison(D.lt),
    "__le__": _comparison(D.le), "__gt__": _comparison(D.gt), "__ge__": _comparison(D.ge),
    "__getitem__": _first_use("__getitem__"), "__setitem__": _first_use("__setitem__"), "__iter__": _iter,
    "__iadd__": _iop("add"), "__isub__": _iop("sub"), "__imul__": _iop("mul"), "__itruediv__": _iop("div"),
    "__ipow__": _iop("pow"), "__ifloordiv__": _iop("floor_divide"), "__imod__": _iop("remainder"),
}


def _nn():
    from .. import nn_functional
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


def _with_numpy_names(methods: dict) -> dict:
    # (split and norm are Python functions in PyTorch, which its argument parser never sees)
    return {name: _numpy_names(fn, name) if _takes_dim(fn) and name not in ("split", "norm") else fn
            for name, fn in methods.items()}


def _bind():
    """``Tensor``'s operators, the op table's methods and the hand-written methods of the composites
    already imported; the others are bound by ``bind_lazy`` when a program first reads one."""
    global _METHODS
    _METHODS = _with_numpy_names(_METHODS)
    from .. import surface
    surface.bind_tensor(_METHODS)
    for name, fn in _OPERATORS.items():
        setattr(Tensor, name, fn)
    Tensor.__hash__ = object.__hash__


_lazy_bound = []


def bind_lazy():
    """Bind the methods of the lazy composites (and every in-place ``name_`` of ``_INPLACE``,
    ``T``/``mT``/``H``, ``[]``, ``@``), once: ``Tensor``'s lookup of a name it lacks calls this."""
    if _lazy_bound:
        return
    _lazy_bound.append(True)
    from .. import surface
    from .indexing import getitem, setitem
    from .inplace import _inplace_of
    from .linalg import _T, _mT, matmul
    lazy = _with_numpy_names(_lazy_methods())
    every = {**_METHODS, **lazy}
    for name in _INPLACE:
        lazy[name + "_"] = _inplace_of(name, every[name])
    surface.bind_tensor(lazy, table=False)
    Tensor.__getitem__, Tensor.__setitem__, Tensor.__matmul__ = getitem, setitem, matmul
    Tensor.T = property(_T)
    Tensor.mT = property(_mT)
    Tensor.H = property(_T)


_bind()
