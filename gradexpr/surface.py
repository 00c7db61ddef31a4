"""The public names bound from the op table: ``torch.X``, ``Tensor.X``, ``Tensor.X_``, ``F.X``,
``torch.linalg.X`` of every entry that declares ``variants``, and the alias lines of ``ops/aliases.py``.

Each bound name is one small function: PyTorch's argument parser (``signatures.py``) picks the
overload and its entry, then ``apply`` runs it (an in-place variant writes back through
``apply_inplace``). Names also bound by hand (``composites/``, ``nn_functional.py``)
must not be declared here too: ``bind`` refuses a name bound twice.
"""
from __future__ import annotations

import types

import numpy as np

from . import dtypes, errors, ops
from .inplace_engine import _can_cast, apply_inplace
from .op import apply, apply_ex, bump_version
from .ops._catalogue import PUBLIC, TABLE_ALIASES as _TABLE_ALIASES
from .signatures import Overloads
from .tensor import Tensor

_NAMESPACES = ("function", "method", "inplace", "F", "linalg", "special")


def _values_to_call(entry, values):
    """(inputs, params) of ``apply`` from the parsed values: the entry's tensor inputs in order, the
    other parameters given (None means absent, as ATen's optionals)."""
    inputs = tuple(values[name] for name in entry.inputs)
    params = {k: v for k, v in values.items() if k not in entry.inputs and k != "out" and v is not None}
    return inputs, params


def run(entry, values, name):
    """The result of one parsed call of ``entry`` (written into ``out=`` when given); an entry whose
    schema returns ``(Tensor values, Tensor indices)`` gives PyTorch's named pair
    (``torch.return_types.cummax(values=…, indices=…)``), the indices being an extra of its forward."""
    out = values.get("out")
    if out is not None:
        return _into(out, entry, values, name)
    inputs, params = entry.prepare(values) if entry.prepare else _values_to_call(entry, values)
    if _returns_pair(entry):
        return _named_pair(name, entry, inputs, params)
    return apply(entry, inputs, params)


_PAIRS: dict = {}


def _returns_pair(entry) -> bool:
    """Whether the entry's schema returns (values, indices): ``... -> (Tensor values, Tensor indices)``."""
    pair = _PAIRS.get(entry.name)
    if pair is None:
        pair = _PAIRS[entry.name] = bool(entry.schema) and \
            entry.schema[0].rpartition("->")[2].replace(" ", "") == "(Tensorvalues,Tensorindices)"
    return pair


def _named_pair(name, entry, inputs, params):
    from .composites.reductions import ReturnType      # (the reductions' composites load on first use)
    result, extras = apply_ex(entry, inputs, params)
    indices = extras["indices"]         # (under vmap already a batched tensor)
    return ReturnType(name, result, indices if isinstance(indices, Tensor) else Tensor._make(indices, dtypes.int64))


def _into(out, entry, values, name):
    """``torch.X(..., out=t)`` of a table-bound name (see ``write_out``); a pair's ``out=(values, indices)``
    gets each of them written, and is returned as the named pair."""
    if not _returns_pair(entry):
        # (an op whose result has no derivative -- a comparison, isnan, signbit -- takes out= whatever
        # requires grad, as derivatives.yaml's output_differentiability: [False] lets it)
        return write_out(out, name, values.values(), lambda: run(entry, {**values, "out": None}, name),
                         differentiable=bool(entry.node) and entry.dtype != "compare")
    return write_pair(out, name, values.values(), lambda: run(entry, {**values, "out": None}, name))


def write_pair(out, name, arguments, compute):
    """``out=(values, indices)`` of a function returning that pair (``compute()``): each written as
    ``write_out`` writes one, the named pair ``<name>_out`` returned."""
    if len(out) != 2:
        raise errors.TypeError(f"{name}(): argument 'out' must be tuple of Tensors of size 2, not of size {len(out)}")
    pair = []

    def first_of_pair():
        pair.append(compute())
        return pair[0][0]
    first = write_out(out[0], name, arguments, first_of_pair)
    second = write_out(out[1], name, (), lambda: pair[0][1])
    from .composites.reductions import ReturnType
    return ReturnType(name + "_out", first, second)       # (torch.return_types.cummax_out)


_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does not match the "
            "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will not "
            "be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, "
            "inplace, to zero elements with t.resize_(0). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)")


def write_out(out, name, arguments, compute, differentiable=True):
    """``torch.X(..., out=t)``: ``compute()`` without a graph, stored in ``t`` and ``t`` returned, as
    ATen's ``.out`` overloads do: not differentiable, the result's dtype must cast to ``t``'s, and
    ``t`` is resized when its shape differs (with PyTorch's warning unless it was empty).
    ``differentiable``: whether the function's result has a derivative (None: whether it is a float),
    without which an argument that requires grad is no error."""
    from .graph import _grad_enabled, no_grad
    from .warn import warn
    requires_grad = _grad_enabled.get() and any(_requires_grad(v) for v in (*arguments, out))
    if requires_grad and differentiable:
        raise _out_needs_no_grad(name)
    with no_grad():
        result = compute()
    if requires_grad and differentiable is None and (result._dtype.is_floating_point or result._dtype.is_complex):
        raise _out_needs_no_grad(name)
    if not _can_cast(result._dtype, out._dtype):
        raise errors.RuntimeError(f"result type {result._dtype._scalar_name} can't be cast to the desired output "
                                  f"type {out._dtype._scalar_name}")
    if out._data.shape != result._data.shape:
        if out._data.size:
            warn(_RESIZED.format(list(out._data.shape), list(result._data.shape)))
        out._data = np.empty(result._data.shape, out._dtype.np)
    np.copyto(out._data, result._data, casting="unsafe")
    bump_version(out)
    return out


def _out_needs_no_grad(name):
    return errors.RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")


def _requires_grad(value):
    if isinstance(value, Tensor):
        return value._requires_grad
    if isinstance(value, (list, tuple)):             # cat/stack's tensors
        return any(isinstance(v, Tensor) and v._requires_grad for v in value)
    return False


def with_out(fn, pair=False):
    """A hand-written ``torch.X`` whose signature has ``out=``, as programs call it: the ``out``
    tensor is written by ``write_out`` (the function itself computes without it); ``pair``: a
    function returning (values, indices), whose ``out`` is a pair of tensors."""
    import functools
    name = fn.__name__

    @functools.wraps(fn)
    def function(*args, **kwargs):
        out = kwargs.pop("out", None)
        if out is None:
            return fn(*args, **kwargs)
        if pair and isinstance(out, (tuple, list)) and all(isinstance(t, Tensor) for t in out):
            return write_pair(out, name, (*args, *kwargs.values()), lambda: fn(*args, **kwargs))
        if not isinstance(out, Tensor):
            raise errors.TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return write_out(out, name, (*args, *kwargs.values()), lambda: fn(*args, **kwargs), differentiable=None)
    return function


def _lone_tensor_call(entry, values):
    """(entry, params) when a call given only its tensor can skip the parser next time: the overload
    chosen for a lone tensor is always the same, so its parameters (the defaults) are too."""
    if entry.prepare is None and entry.inputs == ("self",) and values.get("out") is None and not _returns_pair(entry):
        return entry, _values_to_call(entry, values)[1]
    return None


def _function(overloads, label=None):
    """torch.X (F.X, linalg.X): a call parsed against the overloads; ``label`` names it in PyTorch's
    messages where that is not the public name (torch.special.xlog1py is ``special_xlog1py``)."""
    lone = []           # (entry, params) of a call with one tensor and nothing else, once known

    def function(*args, **kwargs):
        if lone and not kwargs and len(args) == 1 and type(args[0]) is Tensor:
            entry, params = lone[0]
            return apply(entry, args, params)
        sig, values = overloads.parse(args, kwargs, label=label)
        if not lone and not kwargs and len(args) == 1 and type(args[0]) is Tensor:
            lone.extend(filter(None, [_lone_tensor_call(sig.entry, values)]))
        return run(sig.entry, values, label or overloads.name)
    function.__name__ = function.__qualname__ = overloads.name
    return function


def _method(overloads):
    lone = []

    def method(self, *args, **kwargs):
        if lone and not args and not kwargs:
            entry, params = lone[0]
            return apply(entry, (self,), params)
        sig, values = overloads.parse((self,) + args, kwargs, method=True)
        if not lone and not args and not kwargs:
            lone.extend(filter(None, [_lone_tensor_call(sig.entry, values)]))
        return run(sig.entry, values, overloads.name)
    method.__name__ = method.__qualname__ = overloads.name
    return method


def _inplace(overloads):
    name = overloads.name + "_"
    lone = []

    def inplace(self, *args, **kwargs):
        if lone and not args and not kwargs:
            entry, params = lone[0]
            return apply_inplace(entry, self, (), params)
        sig, values = overloads.parse((self,) + args, kwargs, method=True, label=name)
        entry = sig.entry.inplace_entry or sig.entry
        if not lone and not args and not kwargs:
            lone.extend(filter(None, [_lone_tensor_call(entry, values)]))
        if entry.prepare is None:
            inputs, params = _values_to_call(entry, values)
        elif "inplace" in entry.prepare.__code__.co_varnames[:entry.prepare.__code__.co_argcount]:
            inputs, params = entry.prepare(values, inplace=True)      # (its in-place form checks otherwise)
        else:
            inputs, params = entry.prepare(values)
        return apply_inplace(entry, self, inputs[1:], params)
    inplace.__name__ = inplace.__qualname__ = name
    return inplace


_bound = None
_overloads: dict = {}


def bound() -> dict:
    """{namespace: {public name: function}} for every entry with variants."""
    global _bound
    if _bound is None:
        _bound = _bind_table()
    return _bound


def overloads(name: str) -> Overloads:
    """The schema lines bound under the public ``name`` (``nansum``, not ``nansum_``)."""
    bound()
    return _overloads[name]


def _bind_table() -> dict:
    """A function per public name of ``ops/_catalogue.py``; its schema lines (and so the families
    holding their entries) are read on its first call, so binding imports no family."""
    out = {ns: {} for ns in _NAMESPACES}
    for name, (variants, lines) in PUBLIC.items():
        overloads = _overloads[name] = Overloads(name, _LinesOf(name, lines))
        for ns in variants.split():
            if ns == "method":
                out[ns][name] = _method(overloads)
            elif ns == "inplace":
                out[ns][name + "_"] = _inplace(overloads)
            elif ns == "special":
                out[ns][name] = _function(overloads, "special_" + name)
            elif ns == "linalg":        # linalg_cross(...) is torch.linalg.cross (its messages say linalg_cross())
                out[ns][linalg_name(name)] = _function(overloads)
            else:
                out[ns][name] = _function(overloads)
    return out


def linalg_name(name: str) -> str:
    """The torch.linalg name of a schema name (``linalg_cross`` -> ``cross``, as native_functions.yaml names them)."""
    return name[len("linalg_"):] if name.startswith("linalg_") else name


class _LinesOf:
    """The (schema line, entry) pairs of one public name, from the catalogue's (table key, line
    index, renamed from) triples: an alias bound with its own lines carries its own name."""

    __slots__ = ("name", "lines")

    def __init__(self, name, lines):
        self.name, self.lines = name, lines

    def __call__(self):
        pairs = []
        for key, index, renamed_from in self.lines:
            entry = ops.TABLE[key]
            line = entry.schema[index]
            pairs.append((self.name + line[len(renamed_from):] if renamed_from else line, entry))
        return pairs


def own_function(fn):
    """A copy of function ``fn`` (the same code, defaults and attributes) for a second name: PyTorch's
    aliases and namespaces bind distinct functions (``torch.swapaxes is torch.transpose`` and
    ``torch.special.erf is torch.erf`` are false), which print under their own names
    (callable_display.py finds a function by identity). Calling the copy costs the same."""
    if type(fn) is not types.FunctionType:
        return fn
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__dict__.update(fn.__dict__)
    copy.__qualname__, copy.__doc__, copy.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    return copy


def with_aliases(names: dict) -> dict:
    """``names`` (one namespace, table and hand-written together) plus the aliases of its names
    bound by hand (the table's own aliases are bound with their own schema lines), each a function
    of its own."""
    for alias, target in ops.ALIASES.items():
        if target in names and alias not in _TABLE_ALIASES:
            if alias in names:
                raise ValueError(f"{alias!r} is bound twice (an alias line and a name)")
            names[alias] = own_function(names[target])
    return names


def bind_tensor(hand_written: dict, table=True):
    """Put ``hand_written`` and (with ``table``) the table's methods and in-place methods on ``Tensor``,
    with their aliases (refusing a name bound both by hand and from the table)."""
    bound_table = bound()
    names = dict(hand_written)
    for ns in ("method", "inplace"):
        for name, fn in bound_table[ns].items():
            if name in names:
                raise ValueError(f"Tensor.{name} is bound twice (from the op table and by hand)")
            if table:
                names[name] = fn
    bound_now = {id(v) for v in vars(Tensor).values()}
    for name, fn in with_aliases(names).items():
        if id(fn) in bound_now:         # one function under a second name (clip and clamp): its own
            fn = own_function(fn)
        bound_now.add(id(fn))
        setattr(Tensor, name, fn)


def namespace(ns: str, hand_written: dict) -> dict:
    """The table's names for ``torch`` ("function"), ``F`` or ``linalg``, checked against the hand-written ones."""
    names = bound()[ns]
    twice = set(names) & set(hand_written)
    if twice:
        raise ValueError(f"bound twice (from the op table and by hand): {sorted(twice)}")
    return with_aliases({**hand_written, **names})
