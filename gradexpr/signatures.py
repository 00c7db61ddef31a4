"""PyTorch's Python argument parser, driven by the op table's schema lines.

A schema line is ``native_functions.yaml``'s (``"nansum(Tensor self, int[1]? dim=None, bool
keepdim=False, *, ScalarType? dtype=None) -> Tensor"``), written as PyTorch's Python binding
sees it: an op with an ``.out`` overload ends its keyword-only part with ``Tensor(a!)? out=None``,
factories carry the ``layout``/``device``/``pin_memory``/``requires_grad`` keywords the binding
adds. ``Signature.parse`` chooses among the overloads of one name and words the failures as
``torch/csrc/utils/python_arg_parser.cpp`` and ``invalid_arguments.cpp`` do (``missing 1
required positional arguments``, ``got an unexpected keyword argument``, ``received an invalid
combination of arguments`` with the list of signatures). Lines are parsed lazily, on the first
call of a name, so start-up only stores strings.
"""
from __future__ import annotations

import sys

import numbers
import re

from . import dtypes, errors
from .tensor import Tensor

_PARAM = re.compile(r"^(?P<type>[A-Za-z]+(?:\([a-z]!?\))?(?:\[\d*\])?\??) (?P<name>\w+)(?:=(?P<default>.+))?$")

# the Python binding's words for each schema type (FunctionParameter::type_name)
_TYPE_NAMES = {"Tensor": "Tensor", "Scalar": "Number", "int": "int", "SymInt": "int", "float": "float",
               "bool": "bool", "str": "str", "ScalarType": "torch.dtype", "Layout": "torch.layout",
               "Device": "torch.device", "Generator": "torch.Generator", "MemoryFormat": "torch.memory_format",
               "int[]": "tuple of ints", "SymInt[]": "tuple of ints", "Tensor[]": "tuple of Tensors",
               "float[]": "tuple of floats", "PyObject": "object"}


def _check_device(device):
    """The one check of a ``device=`` argument (gradexpr/device.py): None, 'cpu' or a CPU device;
    CUDA and MPS fail with PyTorch's errors for a CPU-only build."""
    if device is None and f"{__package__}.device" not in sys.modules:
        return None                 # (nothing set a default device: it is the CPU)
    from .device import check
    checked = check(device)         # None: the default device (torch.set_default_device), checked too
    return None if device is None else checked


def _is_device(x):
    return type(x).__name__ == "device" and type(x).__module__ == "torch"


def _is_tensor(x):
    return isinstance(x, Tensor)


def _int_like(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, numbers.Integral):
        return True
    return _is_tensor(x) and x._dtype.category < 2 and x._dtype is not dtypes.bool_ and x._data.ndim == 0


def _as_int(x):
    return int(x.item()) if _is_tensor(x) else int(x)


class Param:
    __slots__ = ("name", "base", "size", "optional", "default", "has_default", "kwonly", "is_out", "numbers")

    def __init__(self, text, kwonly):
        m = _PARAM.match(text.strip())
        if m is None:
            raise ValueError(f"bad schema parameter {text!r}")
        t = re.sub(r"\([a-z]!?\)", "", m.group("type"))
        self.optional = t.endswith("?")
        t = t.rstrip("?")
        size = re.search(r"\[(\d*)\]$", t)
        self.size = int(size.group(1)) if size and size.group(1) else None
        self.base = re.sub(r"\[\d*\]$", "[]", t)
        self.name = m.group("name")
        self.has_default = m.group("default") is not None
        self.default = _literal(m.group("default")) if self.has_default else None
        self.kwonly = kwonly
        self.is_out = self.name == "out" and "!" in m.group("type")
        self.numbers = False        # a Tensor parameter that takes a Python number (_NUMBERS_AS_TENSORS)

    def display(self, function):
        """The parameter as PyTorch's signature list shows it (``tuple of ints dim = None``)."""
        name = "input" if function and self.name == "self" and self.base == "Tensor" else self.name
        text = f"{_TYPE_NAMES.get(self.base, self.base)} {name}"
        if self.has_default:
            text += " = " + _show(self.default, self.base)
        return text

    def accepts(self, value):
        """``value`` converted for this parameter, or ``_NO`` when PyTorch's parser refuses it."""
        if value is None:
            return None if (self.optional or (self.has_default and self.default is None)) else _NO
        return _CONVERT.get(self.base, _as_is)(self, value)


_NO = object()


def _as_is(p, value):
    return value


def _to_int_list(p, value):
    if p.size is not None and _int_like(value):
        return (_as_int(value),)
    if isinstance(value, (tuple, list)) and all(_int_like(v) for v in value):
        return tuple(_as_int(v) for v in value)
    return _NO


def _to_scalar(p, value):
    if isinstance(value, numbers.Number):
        return value
    return value.item() if _is_tensor(value) and value._data.ndim == 0 else _NO


def _to_dtype(p, value):
    if isinstance(value, dtypes.DType):
        return value
    if not isinstance(value, type):
        return _NO
    return {float: dtypes.float64, int: dtypes.int64, bool: dtypes.bool_}.get(value, _NO)


# each schema type's conversion of a Python value (PyTorch's parser's checks)
_CONVERT = {
    "Tensor": lambda p, v: v if isinstance(v, Tensor) or (p.numbers and isinstance(v, numbers.Number)) else _NO,
    "int": lambda p, v: _as_int(v) if _int_like(v) else _NO,
    "SymInt": lambda p, v: _as_int(v) if _int_like(v) else _NO,
    "int[]": _to_int_list,
    "SymInt[]": _to_int_list,
    "bool": lambda p, v: bool(v) if type(v).__name__ in ("bool", "bool_") else _NO,
    "float": lambda p, v: float(v) if isinstance(v, numbers.Real) and not isinstance(v, bool) else _NO,
    "Scalar": _to_scalar,
    "str": lambda p, v: v if isinstance(v, str) else _NO,
    "ScalarType": _to_dtype,
    "Device": lambda p, v: v if isinstance(v, (str, int)) and not isinstance(v, bool) or _is_device(v) else _NO,
    "MemoryFormat": lambda p, v: v if _short_typename(v) == "torch.memory_format" else _NO,
    "Tensor[]": lambda p, v: tuple(v) if isinstance(v, (tuple, list)) and all(map(_is_tensor, v)) else _NO,
}


def _literal(text):
    return {"None": None, "True": True, "False": False, "[]": (), "()": ()}.get(text, None) \
        if text in ("None", "True", "False", "[]", "()") else (text.strip("\"'") if text[0] in "\"'" else
                                                               (float(text) if "." in text or "e" in text
                                                                else int(text)))


def _show(value, base):
    if value is None:
        return "None"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "(" + ", ".join(map(str, value)) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def _typename(value):
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_typename(v) for v in value)
        if isinstance(value, tuple):
            return f"tuple of ({inner}{',' if len(value) == 1 else ''})"
        return f"list of [{inner}]"
    return _short_typename(value)


def _short_typename(value):
    """The value's type as PyTorch's messages name it: its C type's ``tp_name`` (``torch.dtype``,
    ``torch.device``), a Python class's name (``Tensor``, ``Parameter``, ``int``)."""
    t = type(value)
    if t.__module__ == "torch" and not _is_tensor(value):
        return f"torch.{t.__qualname__}"
    return t.__name__


def _int_list_varargs(args, positional, method):
    """PyTorch's parser takes a lone int-list parameter as separate ints (``x.view(2, 3)``,
    ``x.new_zeros(2, 3)``): the arguments with those ints packed as the list."""
    first = 1 if method else 0
    rest = args[first:]
    if len(positional) - first != 1 or not rest or positional[first].base not in ("int[]", "SymInt[]"):
        return args
    if not _int_like(rest[0]):      # (the parser packs them when the first is an int; the elements are
        return args                 # checked then: _element_refusal)
    return tuple(args[:first]) + (tuple(rest),)


def _element_refusal(label, p, value, position, method):
    """PyTorch's words for a list refused for one of its elements: a tensor list (``expected Tensor as
    element 1 in argument 0, but got int``), an int list (``argument 'size' failed to unpack the object at
    pos 2 ...``); None for any other refusal. ``position``: the argument's, from 0 (None: by keyword)."""
    if not isinstance(value, (tuple, list)) or not value:
        return None
    if p.base == "Tensor[]":
        bad = next((j for j, v in enumerate(value) if not _is_tensor(v)), None)
        if bad is not None and position is not None:
            return errors.TypeError(f"expected Tensor as element {bad} in argument {position}, but got "
                                    f"{type(value[bad]).__name__}")
    elif p.base in ("int[]", "SymInt[]"):
        bad = next((j for j, v in enumerate(value) if not _int_like(v)), None)
        if bad is not None:
            return errors.TypeError(f"{label}(): argument '{_pname(p, method)}' failed to unpack the object at pos "
                                    f"{bad + 1} with error \"type must be tuple of ints,but got "
                                    f"{_typename_short(value[bad])}\"")
    return None


class Signature:
    """One schema line: its name, parameters (``self`` first for ops on a tensor) and entry."""

    __slots__ = ("line", "name", "params", "entry", "_min", "_max", "_layouts")

    def __init__(self, line, entry=None):
        self.line = line
        self.entry = entry
        head, _, _ = line.partition(") ->")
        name, _, params = head.partition("(")
        self.name = name.split(".")[0].strip()
        self.params = []
        kwonly = False
        for text in filter(None, (p.strip() for p in params.split(","))):
            if text == "*":
                kwonly = True
                continue
            self.params.append(Param(text, kwonly))
        self._min = sum(1 for p in self.params if not p.has_default and not p.kwonly)
        self._max = len(self.params)
        self._layouts = {m: self._layout(m) for m in (False, True)}

    def _layout(self, method):
        """(parameters, positional ones, parameter by keyword, defaults of the ones not required)."""
        params = [p for p in self.params if not (method and p.is_out)]
        positional = [p for p in params if not p.kwonly]
        if method:      # a method's self comes first whatever the schema's order (polygamma(int n, Tensor self))
            positional.sort(key=lambda p: p.name != "self")
        by_name = {("input" if p.name == "self" and not method else p.name): p for p in params
                   if not (method and p.name == "self")}
        return params, positional, by_name

    def max_args(self, method):
        """How many arguments a call can give (a method's ``self`` and ``out`` are not among them)."""
        return len(self._layouts[method][0]) - (1 if method else 0)

    def display(self, method):
        """PyTorch's text of this signature in its list of overloads."""
        parts, star = [], False
        for p in self.params:
            if method and p.name == "self":
                continue
            if method and p.is_out:
                continue
            if p.kwonly and not star:
                parts.append("*")
                star = True
            parts.append(p.display(not method))
        return "(" + ", ".join(parts) + ")"

    def bind(self, args, kwargs, method, raise_=False, label=None):
        """The parameters' values by name, or None (or PyTorch's TypeError when ``raise_``)."""
        label = label or self.name
        params, positional, by_name = self._layouts[method]
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            kwargs = _numpy_keywords(kwargs, label, by_name)
        if method and kwargs and not by_name and raise_:
            # a method of no parameters is METH_NOARGS in PyTorch: CPython refuses keywords first
            raise errors.TypeError(f"TensorBase.{label}() takes no keyword arguments")
        values = {}
        args = _int_list_varargs(args, positional, method)
        if len(args) > len(positional):
            if not raise_:
                return None
            lo = sum(1 for p in positional if not p.has_default) - (1 if method else 0)
            hi = len(positional) - (1 if method else 0)
            if method and hi == 0 and not by_name:       # METH_NOARGS: a method of no parameters at all
                raise errors.TypeError(f"TensorBase.{label}() takes no arguments ({len(args) - 1} given)")
            takes = f"{hi} positional argument{'s' if hi != 1 else ''}" if lo == hi else \
                f"from {lo} to {hi} positional arguments"
            n = len(args) - (1 if method else 0)
            raise errors.TypeError(f"{label}() takes {takes} but {n} {'was' if n == 1 else 'were'} given")
        for i, (p, value) in enumerate(zip(positional, args)):
            got = p.accepts(value)
            if got is _NO:
                if not raise_:
                    return None
                where = i + (0 if method else 1)
                raise _element_refusal(label, p, value, where - 1, method) or errors.TypeError(
                    f"{label}(): argument '{_pname(p, method)}' (position {where}) must be "
                    f"{_TYPE_NAMES.get(p.base, p.base)}, not {_typename_short(value)}")
            values[p.name] = got
        for key in kwargs:
            p = by_name.get(key)
            if p is not None and p.name in values:
                if not raise_:
                    return None
                raise errors.TypeError(f"{label}() got multiple values for argument '{key}'")
        missing = []
        for p in params:
            if p.name in values:
                continue
            key = "input" if p.name == "self" and not method else p.name
            if key in kwargs:
                got = p.accepts(kwargs[key])
                if got is _NO:
                    if not raise_:
                        return None
                    raise _element_refusal(label, p, kwargs[key], None, method) or errors.TypeError(
                        f"{label}(): argument '{key}' must be {_TYPE_NAMES.get(p.base, p.base)}, not "
                        f"{_typename_short(kwargs[key])}")
                values[p.name] = got
            elif p.has_default:
                values[p.name] = p.default
            else:
                if not raise_:
                    return None
                missing.append(key)
        if missing:     # all of them, in PyTorch's words (its plural is on one, not on more)
            names = ", ".join(f'"{key}"' for key in missing)
            n = len(missing)
            raise errors.TypeError(f"{label}() missing {n} required positional argument{'s' if n == 1 else ''}: "
                                   f"{names}")
        for key in kwargs:
            if key not in by_name:
                if not raise_:
                    return None
                raise errors.TypeError(f"{label}() got an unexpected keyword argument '{key}'")
        return values

    def arg_count_matches(self, args, kwargs, method):
        """``_argcountMatch`` of PyTorch's error text: the signature's items ('*' counted, as its
        text is split) against the arguments given."""
        text = self.display(method)[1:-1]
        items = text.split(", ")        # (an empty signature is one empty item there, as in PyTorch)
        n = len(items)
        return len(args) + len(kwargs) == n, items


_NUMPY_KEYWORDS = (("axis", "dim"), ("keepdims", "keepdim"))


def _numpy_keywords(kwargs, label, by_name):
    """NumPy's names for ``dim``/``keepdim`` (``x.sum(axis=0, keepdims=True)``), which PyTorch's parser
    takes for every op with those parameters (``by_name``; another op's is an unexpected ``axis``);
    giving both names is an unexpected keyword."""
    kwargs = dict(kwargs)
    for alias, param in _NUMPY_KEYWORDS:
        if alias in kwargs and param in by_name:
            if param in kwargs:
                raise errors.TypeError(f"{label}() got an unexpected keyword argument '{alias}'")
            kwargs[param] = kwargs.pop(alias)
    return kwargs


def _pname(p, method):
    return "input" if p.name == "self" and not method else p.name


def _typename_short(value):
    return _short_typename(value)


class Overloads:
    """The schema lines of one public name; ``parse`` returns (signature, values)."""

    __slots__ = ("name", "_lines", "_sigs", "_hidden")

    def __init__(self, name, lines, hidden=()):
        self.name = name
        self._lines = lines         # (line, entry) pairs, or a function giving them; parsed on first use
        self._sigs = None
        self._hidden = frozenset(hidden)    # lines PyTorch tries but never lists (deprecated, hidden)

    @property
    def lines(self):
        """The (line, entry) pairs (read when first needed: their entries' family loads then)."""
        if callable(self._lines):
            self._lines = self._lines()
        return self._lines

    @property
    def signatures(self):
        if self._sigs is None:
            self._sigs = [Signature(line, entry) for line, entry in self.lines]
        return self._sigs

    def parse(self, args, kwargs, method=False, label=None):
        """Choose the overload taking ``args``/``kwargs`` (``args[0]`` is the tensor for a method)."""
        sigs = self.signatures
        label = label or self.name
        if len(sigs) == 1:
            return sigs[0], sigs[0].bind(args, kwargs, method, True, label)
        for s in sigs:
            values = s.bind(args, kwargs, method)
            if values is not None:
                return s, values
        given = len(args) - (1 if method else 0) + len(kwargs)
        plausible = [s for s in sigs if s._min - (1 if method else 0) <= given <= s.max_args(method)
                     and s.line not in self._hidden]
        if len(plausible) == 1:
            plausible[0].bind(args, kwargs, method, True, label)
        raise errors.TypeError(self.invalid_combination(args[1:] if method else args, kwargs, method, label))

    def invalid_combination(self, args, kwargs, method, label):
        """``invalid_arguments.cpp``'s text for a call no overload takes."""
        got = ", ".join([_short_typename(a) for a in args] +
                        [f"{k}={_short_typename(v)}" for k, v in reversed(list(kwargs.items()))])
        if kwargs and not args:
            got += ", "         # (PyTorch trims the last separator only after a positional argument)
        shown = [s for s in self.signatures if s.line not in self._hidden]
        if len(shown) == 1:     # the arguments marked where their count matches the signature's items
            matches, items = shown[0].arg_count_matches(args, kwargs, method)
            unmatched = _unmatched_keywords(items, kwargs)
            if unmatched:
                return (f"{label}() received an invalid combination of arguments - got unrecognized keyword "
                        f"arguments: {', '.join(unmatched)}")
            given = _marked(shown[0], items, args, kwargs, method) if matches else f"({got})"
            return (f"{label}() received an invalid combination of arguments - got {given}, but expected "
                    f"{shown[0].display(method)}")
        lines = [f"{label}() received an invalid combination of arguments - got ({got}), but expected one of:"]
        for s in shown:
            text = s.display(method)
            lines.append(f" * {text}")
            matches, items = s.arg_count_matches(args, kwargs, method)
            if matches:
                unmatched = _unmatched_keywords(items, kwargs)
                if unmatched:
                    lines.append("      didn't match because some of the keywords were incorrect: "
                                 + ", ".join(unmatched))
                else:
                    lines.append("      didn't match because some of the arguments have invalid types: "
                                 + _marked(s, items, args, kwargs, method))
        return "\n".join(lines) + "\n"


def _unmatched_keywords(items, kwargs):
    """``_tryMatchKwargs`` of PyTorch's error text: the keywords not among the last items' names (a name
    is an item's last word, which for ``Number alpha = 1`` is its default), in its map's order."""
    names = [item.rsplit(" ", 1)[-1] for item in items]
    start = max(len(items) - len(kwargs), 0)
    return [k for k in reversed(list(kwargs)) if k not in names[start:]]


def _marked(sig, items, args, kwargs, method):
    """The arguments with the ones the signature refuses between '!' (as PyTorch prints off a terminal).
    PyTorch matches them against the displayed items in order, its '*' among them (which takes
    nothing), and a ``torch.device`` item by the value's type alone."""
    params = iter(p for p in sig.params if not (method and (p.name == "self" or p.is_out)))
    shown = [None if item == "*" else next(params, None) for item in items]
    out = []
    for i, a in enumerate(args):
        p = shown[i] if i < len(shown) else None
        if p is not None and p.base == "Device":
            ok = _is_device(a)
        else:
            ok = p is not None and p.accepts(a) is not _NO
        out.append(_typename(a) if ok else f"!{_typename(a)}!")
    for k, v in kwargs.items():
        out.append(f"{k}={_typename(v)}")
    return "(" + ", ".join(out) + ")"


_BINDINGS: dict = {}        # (method?, name) -> Overloads of its recorded binding signatures (ops/_bindings.py)


def binding_overloads(name, method):
    """The Overloads of PyTorch's recorded binding signatures of ``Tensor.name`` (``method``) or
    ``torch.name`` (hidden and deprecated ones tried, never listed); None if none are recorded."""
    key = (method, name)
    overloads = _BINDINGS.get(key)
    if overloads is None:
        from .ops import _bindings
        lines = (_bindings.METHODS if method else _bindings.FUNCTIONS).get(name)
        if lines is None:
            return None
        overloads = _BINDINGS[key] = Overloads(name, [(line, None) for line, _ in lines],
                                               hidden=[line for line, hidden in lines if hidden])
        if name.rstrip("_") in _NUMBERS_AS_TENSORS:
            for signature in overloads.signatures:
                for p in signature.params:
                    p.numbers = p.base == "Tensor" and p.name != "self"
    return overloads


# the arithmetic whose Tensor arguments PyTorch's parser lets a Python number stand for
# (python_arg_parser.cpp's should_allow_numbers_as_tensors; ``to`` and ``copy_`` are parsed by hand here)
_NUMBERS_AS_TENSORS = frozenset(("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
                                 "floor_divide"))


def binding_call_error(name, args, kwargs, method):
    """The TypeError PyTorch's parser raises for ``Tensor.name(*args[1:], **kwargs)`` (``args[0]`` the
    tensor; ``method``) or ``torch.name(*args, **kwargs)``, from the recorded binding signatures; None if
    PyTorch takes the call or none are recorded (gradexpr writes it by hand, PyTorch in Python)."""
    overloads = binding_overloads(name, method)
    if overloads is None:
        return None
    try:
        overloads.parse(args, kwargs, method=method)
    except errors.TypeError as e:
        return e
    return None
