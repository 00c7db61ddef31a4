"""Conversions (``to``, ``type``, ``float()`` …) and the ``new_*`` factories of a tensor.
"""
from __future__ import annotations


from .. import ops as D
from .. import device as _device
from .. import dtypes, errors
from ..dtypes import DType
from ..op import _grad_enabled, apply
from ..signatures import binding_overloads
from .arguments import _is_tensor, _missing, _shape_args
from .creation import _batched_like, full, ones, tensor, zeros
from .shape import clone, view


def _to_arguments(self, args, kwargs):
    """``to``'s arguments by its signatures; as PyTorch's parser allows for ``to``, a Python number where
    no signature takes it stands for a tensor of its type (``t.to(1.5)`` is ``t.to(torch.float64)``)."""
    signatures = binding_overloads("to", True)
    try:
        return signatures.parse((self,) + args, kwargs, method=True)[1]
    except errors.TypeError:
        if not (args and isinstance(args[0], (float, bool))):
            raise
        try:
            number = tensor(args[0], dtype=dtypes.bool_ if isinstance(args[0], bool) else dtypes.float64)
            return signatures.parse((self, number) + args[1:], kwargs, method=True)[1]
        except errors.TypeError:
            pass
        raise


def to(self, *args, **kwargs):
    """``t.to(dtype)``, ``t.to(other)``, ``t.to('cpu')``, ``t.to('cpu', dtype)``: the three signatures of
    PyTorch's ``Tensor.to`` (its errors for anything else); the same dtype without ``copy`` returns ``t``."""
    if not kwargs and len(args) == 1 and isinstance(args[0], DType):      # (the common call)
        values = {"dtype": args[0]}
    else:
        values = _to_arguments(self, args, kwargs)
    where = values.get("device")
    if where is not None:
        _device.check_to(where)     # moving a tensor: PyTorch's errors of .to, not of a factory's
    other = values.get("tensor")
    dtype = other._dtype if other is not None else values.get("dtype")
    if dtype is None or dtype is self._dtype:
        return clone(self) if values.get("copy") else self
    return apply(D.to_copy, (self,), {"dtype": dtype})


def _converter(d, name):
    def conv(self, *, memory_format=None):
        return to(self, d)
    conv.__name__ = conv.__qualname__ = name      # (errors about its arguments name it)
    return conv


# Tensor.float(), .double(), …
(_float, _double, _half, _long, _int, _short, _bool, _byte, _char) = (
    _converter(dtypes.float32, "float"), _converter(dtypes.float64, "double"), _converter(dtypes.float16, "half"),
    _converter(dtypes.int64, "long"), _converter(dtypes.int32, "int"), _converter(dtypes.int16, "short"),
    _converter(dtypes.bool_, "bool"), _converter(dtypes.uint8, "byte"), _converter(dtypes.int8, "char"))


def _arguments(name, self, args, kwargs):
    """The method's arguments by PyTorch's binding signatures (recorded in ops/_bindings.py)."""
    return binding_overloads(name, True).parse((self,) + args, kwargs, method=True)[1]


def type_(self, *args, **kwargs):
    """``t.type()`` (its legacy type name), ``t.type(torch.float64)``, ``t.type('torch.DoubleTensor')``,
    ``t.type(torch.DoubleTensor)``, with PyTorch's errors."""
    dtype = _arguments("type", self, args, kwargs)["dtype"] if args or kwargs else None
    if dtype is None:
        from ..graph import _TYPE_STRING
        return _TYPE_STRING[self._dtype.name]
    if isinstance(dtype, str):
        from ..graph import _TYPE_STRING
        names = {v: k for k, v in _TYPE_STRING.items()}
        if dtype not in names:
            raise errors.ValueError(f"invalid type: '{dtype}'")
        return to(self, dtypes.by_name(names[dtype]))
    from ..legacy import typed_class_dtype
    typed = typed_class_dtype(dtype)
    if typed is None and not isinstance(dtype, DType):
        raise errors.TypeError("dtype must be a type, str, or dtype object")
    return to(self, typed or dtype)


def type_as(self, other):
    return to(self, other._dtype)


def _new_filled(name, factory):
    """``Tensor.new_zeros``/``new_ones``/``new_empty``: ``factory`` with the tensor's dtype by default; the
    size as one list or as separate ints (PyTorch's parser's varargs for a lone int-list parameter)."""
    def method(self, *args, **kwargs):
        if args and all(_is_int(a) for a in args):
            args = (args,)
        v = _arguments(name, self, args, kwargs)
        return _batched_new(factory(v["size"], dtype=v["dtype"] or self._dtype, layout=v["layout"],
                                    device=v["device"], requires_grad=v["requires_grad"]), self)
    method.__name__ = method.__qualname__ = name
    return method


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


new_zeros = _new_filled("new_zeros", zeros)
new_ones = _new_filled("new_ones", ones)
new_empty = _new_filled("new_empty", zeros)        # (uninitialised in PyTorch: zeros are one of its values)


def new_full(self, *args, **kwargs):
    v = _arguments("new_full", self, args, kwargs)
    return _batched_new(full(v["size"], v["fill_value"], dtype=v["dtype"] or self._dtype, layout=v["layout"],
                             device=v["device"], requires_grad=v["requires_grad"]), self)


def _batched_new(t, self):
    """``self.new_zeros(...)`` under vmap: batched as ``self`` is (a leaf that requires grad stays one)."""
    return t if t._requires_grad else _batched_like(t, self)


def new_tensor(self, *args, **kwargs):
    v = _arguments("new_tensor", self, args, kwargs)
    return tensor(v["data"], dtype=v["dtype"] or self._dtype, device=v["device"], requires_grad=v["requires_grad"])


def is_tensor(obj) -> bool:
    return _is_tensor(obj)


def is_floating_point(input) -> bool:
    return input._dtype.is_floating_point


def _tensor_predicate(name, test, arity=1):
    """``torch.<name>(input)``: a question about a tensor (PyTorch's TypeError for anything else)."""
    names = ("input", "other")

    def predicate(*args):
        if len(args) != arity:
            raise errors.TypeError(f"{name}() takes {arity} positional argument{'s' if arity > 1 else ''} but "
                                   f"{len(args)} were given")
        for k, a in enumerate(args):
            if not _is_tensor(a):
                raise errors.TypeError(f"{name}(): argument '{names[k]}' (position {k + 1}) must be Tensor, not "
                                       f"{type(a).__name__}")
        return test(*args)
    predicate.__name__ = predicate.__qualname__ = name
    return predicate


is_signed = _tensor_predicate("is_signed", lambda t: t._dtype.is_signed)
is_conj = _tensor_predicate("is_conj", lambda t: False)
is_distributed = _tensor_predicate("is_distributed", lambda t: False)
is_inference = _tensor_predicate("is_inference", lambda t: t.is_inference())
is_same_size = _tensor_predicate("is_same_size", lambda a, b: a._data.shape == b._data.shape, arity=2)


def numel(input) -> int:
    return int(input._data.size)


def sum_to_size(self, *size):
    """Sum ``self`` down to ``size`` (the reverse of broadcasting): the engine's gradient reduction."""
    if not size:
        raise _missing("sum_to_size", "size")
    shape = _shape_args(size)
    if not shape:
        return apply(D.sum_all, (self,))     # at::sum_to's rule for a 0-d target: a full sum (SumBackward0)
    cur = self._data.shape
    lead = len(cur) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and cur[i + lead] != 1)
    out = self
    if len(dims) == lead and lead and not _grad_enabled.get():
        # only leading dims go, and nothing is recorded (a backward without create_graph): the sum drops
        # them itself, the same values as at::sum_to's keepdim sum and view, without the view
        return apply(D.sum_dim, (out,), {"dim": dims, "keepdim": False})
    if dims:        # (the entry itself: dims are already checked, so no argument parsing per gradient)
        out = apply(D.sum_dim, (out,), {"dim": dims, "keepdim": True})
    if lead:
        out = view(out, shape) if out._data.shape != shape else out
    elif out._data.shape != shape:
        out = view(out, shape)
    return out
