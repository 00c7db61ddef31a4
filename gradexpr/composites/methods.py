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


def _lshift(self, other):
    return self.bitwise_left_shift(other)


def _rshift(self, other):
    return self.bitwise_right_shift(other)


def _rlshift(self, other):      # number << t: bitwise_left_shift(number, t), the number a wrapped scalar
    return apply(D.bitwise_left_shift, (other, self))


def _rrshift(self, other):
    return apply(D.bitwise_right_shift, (other, self))


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


def _cpu(self, *, memory_format=None):
    return self         # the one device


def _cuda(self, device=None, *args, **kwargs):
    from .. import device as _device
    return _device.check_to("cuda" if device is None else device)


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
    "cpu": _cpu, "cuda": _cuda, "size": _size_method, "view": _view_method,
}


# The hand-written methods of the composites imported on first use: module -> its methods, each
# "name" (the module's function of that name) or "name=function". A program's first lookup of one
# that Tensor lacks imports that module and binds all of its methods (``bind_lazy``).
LAZY_METHODS = {
    "shape": "view_as reshape reshape_as flatten unflatten squeeze unsqueeze expand expand_as broadcast_to repeat "
             "tile split chunk tensor_split unbind narrow select index_select index_add gather scatter scatter_add "
             "flip=_flip_method fliplr flipud roll tril triu diag diagonal diag_embed clone contiguous "
             "masked_select take_along_dim",
    "reductions": "max=_max_method min=_min_method amax amin aminmax argmax argmin sort argsort msort topk kthvalue "
                  "median std var norm logsumexp cumsum cumprod all any count_nonzero nonzero nanmean=_nanmean_method",
    "linalg": "matmul mm bmm baddbmm mv dot inner vdot=dot outer ger=outer addmm t transpose swapaxes=transpose "
              "swapdims=transpose permute=_permute_method movedim det inverse trace",
    "conversion": "sum_to_size to type=type_ type_as float=_float double=_double half=_half long=_long int=_int "
                  "short=_short bool=_bool byte=_byte char=_char new_zeros new_ones new_full new_tensor new_empty",
    "random_functions": "uniform_=_uniform_ normal_=_normal_ bernoulli_=_bernoulli_ bernoulli random_=_random_ "
                        "exponential_=_exponential_ multinomial cauchy_=_cauchy_ geometric_=_geometric_ "
                        "log_normal_=_log_normal_",
    "contractions": "kron",
    "decompositions": "cholesky qr svd slogdet logdet matrix_exp matrix_power pinverse unique unique_consecutive lu "
                      "cholesky_solve cholesky_inverse",
    "inplace": "zero_ fill_ copy_ t_ transpose_ swapaxes_=transpose_ swapdims_=transpose_ unsqueeze_ squeeze_ "
               "resize_ resize_as_",
    # internal helpers used by backward formulas (underscored: not reachable from programs)
    "indexing": "_slice_scatter _select_scatter _diagonal_scatter _index_put=_index_put_ _narrow_step",
}
LAZY_MODULES = tuple(LAZY_METHODS)      # (a product of two numbers needs none of them)


# the methods whose in-place form ``name_`` is made by ``inplace._inplace_of``
_INPLACE = ("add", "sub", "mul", "div", "pow", "neg", "relu", "clamp", "clip", "clamp_min", "clamp_max",
            "masked_fill", "round", "remainder", "fmod", "lerp", "square",
            "true_divide", "floor_divide", "index_add", "scatter", "scatter_add", "tril", "triu")


def _first_use(name):
    """An operator of the lazy composites as first bound: its first call binds them (``bind_lazy``),
    which replaces it on ``Tensor``, then runs the real one."""
    def operator(self, *args):
        bind_lazy(name)
        return getattr(Tensor, name)(self, *args)
    operator.__name__ = operator.__qualname__ = name
    return operator


_OPERATORS = {
    "__add__": add, "__radd__": _reflected(add), "__sub__": sub, "__rsub__": lambda self, other: rsub(self, other),
    "__mul__": mul, "__rmul__": _reflected(mul), "__truediv__": div, "__rtruediv__": _rtruediv,
    "__floordiv__": _floordiv, "__rfloordiv__": _rfloordiv, "__mod__": _mod, "__rmod__": _rmod,
    "__pow__": pow, "__rpow__": _rpow, "__matmul__": _first_use("__matmul__"), "__rmatmul__": _rmatmul,
    "__neg__": neg, "__pos__": _pos, "__abs__": _abs, "__invert__": _invert, "__xor__": _xor,
    "__rxor__": _reflected(_xor), "__lshift__": _lshift, "__rshift__": _rshift, "__rlshift__": _rlshift,
    "__rrshift__": _rrshift, "__ilshift__": _iop("bitwise_left_shift"), "__irshift__": _iop("bitwise_right_shift"), "__and__": _and, "__rand__": _reflected(_and), "__or__": _or,
    "__ror__": _reflected(_or), "__eq__": _eq, "__ne__": _ne, "__lt__": _comparison(D.lt),
    "__le__": _comparison(D.le), "__gt__": _comparison(D.gt), "__ge__": _comparison(D.ge),
    "__getitem__": _first_use("__getitem__"), "__setitem__": _first_use("__setitem__"), "__iter__": _iter,
    "__iadd__": _iop("add"), "__isub__": _iop("sub"), "__imul__": _iop("mul"), "__itruediv__": _iop("div"),
    "__ipow__": _iop("pow"), "__ifloordiv__": _iop("floor_divide"), "__imod__": _iop("remainder"),
}


def _nn():
    from .. import nn_functional
    return nn_functional


def _numpy_names(fn, name=None, numpy_names=True, python_method=False):
    """``fn`` also taking NumPy's names for ``dim`` and ``keepdim`` (``x.sum(axis=0, keepdims=True)``),
    as PyTorch's argument parser accepts them for every op with those parameters -- and, as a method,
    refusing ``out=`` (the function's own keyword: no Tensor method has one). A method PyTorch writes in
    Python (``python_method``) refuses NumPy's names as well, in Python's words."""
    op_name = name or fn.__name__
    refused = ("out", "axis", "keepdims") if python_method else ("out",)
    label = f"Tensor.{op_name}" if python_method else op_name

    def call(*args, **kwargs):
        if kwargs:
            for key in refused:
                if key in kwargs:
                    raise errors.TypeError(f"{label}() got an unexpected keyword argument '{key}'")
            if numpy_names and ("axis" in kwargs or "keepdims" in kwargs):
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


def _parameters(fn) -> tuple:
    code = getattr(fn, "__code__", None)
    return () if code is None else code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _with_numpy_names(methods: dict) -> dict:
    wrapped = {}
    for name, fn in methods.items():
        parameters = _parameters(fn)
        python_method = name in _PYTHON_METHODS
        numpy_names = not python_method and ("dim" in parameters or "keepdim" in parameters)
        wrapped[name] = _numpy_names(fn, name, numpy_names, python_method) if numpy_names or python_method or "out" in parameters \
            else fn
    return wrapped


_PYTHON_METHODS = ("split", "norm")     # Python functions in PyTorch, which its argument parser never sees


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


_lazy_bound = set()          # the LAZY_METHODS modules whose methods are bound


def _method_modules() -> dict:
    """Method name -> the module of LAZY_METHODS that binds it (the in-place forms of ``_INPLACE``
    with ``inplace``; ``T``/``mT``/``H`` with ``linalg``)."""
    where = {spec.partition("=")[0]: module for module, specs in LAZY_METHODS.items() for spec in specs.split()}
    where.update({name + "_": "inplace" for name in _INPLACE})
    where.update({"T": "linalg", "mT": "linalg", "H": "linalg", "__matmul__": "linalg",
                  "__getitem__": "indexing", "__setitem__": "indexing"})
    # an alias of a lazy method (moveaxis of movedim) binds with it
    where.update({alias: where[target] for alias, target in D.ALIASES.items() if target in where})
    return where


_METHOD_MODULES = _method_modules()


def bind_lazy(name=None) -> bool:
    """Bind the methods of the LAZY_METHODS module holding method ``name`` (None: of all of them);
    True if that bound something. ``Tensor``'s lookup of a name it lacks calls this."""
    import importlib
    modules = [_METHOD_MODULES.get(name)] if name is not None else list(LAZY_METHODS)
    bound_any = False
    for module_name in modules:
        if module_name is None or module_name in _lazy_bound:
            continue
        _lazy_bound.add(module_name)
        bound_any = True
        module = importlib.import_module(f"{__package__}.{module_name}")
        from .. import surface
        methods = {}
        for spec in LAZY_METHODS[module_name].split():
            method, _, attr = spec.partition("=")       # (swapaxes=transpose: a function of its own)
            methods[method] = surface.own_function(getattr(module, attr)) if attr else getattr(module, method)
        methods = _with_numpy_names(methods)
        if module_name == "inplace":
            for base in _INPLACE:       # add_, index_add_, …: the in-place form of the method
                methods[base + "_"] = module._inplace_of(base, getattr(Tensor, base))
        surface.bind_tensor(methods, table=False)
        if module_name == "linalg":
            Tensor.__matmul__ = module.matmul
            Tensor.T = Tensor.H = property(module._T)
            Tensor.mT = property(module._mT)
        elif module_name == "indexing":
            Tensor.__getitem__, Tensor.__setitem__ = module.getitem, module.setitem
    return bound_any


_bind()
