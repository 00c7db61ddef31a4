"""The public names bound from the op table: ``torch.X``, ``Tensor.X``, ``Tensor.X_``, ``F.X``,
``torch.linalg.X`` of every entry that declares ``variants``, and the alias lines of ``ops/aliases.py``.

Each bound name is one small function: PyTorch's argument parser (``signatures.py``) picks the
overload and its entry, then ``apply`` runs it (an in-place variant writes back through
``apply_inplace``). Names also bound by hand (``composites/``, ``nn_functional.py``)
must not be declared here too: ``bind`` refuses a name bound twice.
"""
from __future__ import annotations

import numpy as np

from . import errors, ops
from .op import _can_cast, apply, apply_inplace, bump_version
from .signatures import Overloads
from .tensor import Tensor

_NAMESPACES = ("function", "method", "inplace", "F", "linalg")


def _values_to_call(entry, values):
    """(inputs, params) of ``apply`` from the parsed values: the entry's tensor inputs in order, the
    other parameters given (None means absent, as ATen's optionals)."""
    inputs = tuple(values[name] for name in entry.inputs)
    params = {k: v for k, v in values.items() if k not in entry.inputs and k != "out" and v is not None}
    return inputs, params


def run(entry, values, name):
    """The result of one parsed call of ``entry`` (written into ``out=`` when given)."""
    out = values.get("out")
    if out is not None:
        return _into(out, entry, values, name)
    inputs, params = entry.prepare(values) if entry.prepare else _values_to_call(entry, values)
    return apply(entry, inputs, params)


def _into(out, entry, values, name):
    """``torch.X(..., out=t)``: computed without a graph, then stored in ``t`` (resized when its shape
    differs), as ATen's ``.out`` overloads do; they are not differentiable."""
    from .graph import _grad_enabled, no_grad
    if _grad_enabled.get() and any(isinstance(v, Tensor) and v._requires_grad for v in values.values()):
        raise errors.RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                                  "differentiation, but one of the arguments requires grad.")
    with no_grad():
        result = run(entry, {**values, "out": None}, name)
    if not _can_cast(result._dtype, out._dtype):
        raise errors.RuntimeError(f"result type {result._dtype._scalar_name} can't be cast to the desired output type "
                                  f"{out._dtype._scalar_name}")
    if out._data.shape != result._data.shape:
        out._data = np.empty(result._data.shape, out._dtype.np)
    np.copyto(out._data, result._data, casting="unsafe")
    bump_version(out)
    return out


def _lone_tensor_call(entry, values):
    """(entry, params) when a call given only its tensor can skip the parser next time: the overload
    chosen for a lone tensor is always the same, so its parameters (the defaults) are too."""
    if entry.prepare is None and entry.inputs == ("self",) and values.get("out") is None:
        return entry, _values_to_call(entry, values)[1]
    return None


def _function(overloads):
    lone = []           # (entry, params) of a call with one tensor and nothing else, once known

    def function(*args, **kwargs):
        if lone and not kwargs and len(args) == 1 and type(args[0]) is Tensor:
            entry, params = lone[0]
            return apply(entry, args, params)
        sig, values = overloads.parse(args, kwargs)
        if not lone and not kwargs and len(args) == 1 and type(args[0]) is Tensor:
            lone.extend(filter(None, [_lone_tensor_call(sig.entry, values)]))
        return run(sig.entry, values, overloads.name)
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
        entry = sig.entry
        if not lone and not args and not kwargs:
            lone.extend(filter(None, [_lone_tensor_call(entry, values)]))
        inputs, params = entry.prepare(values) if entry.prepare else _values_to_call(entry, values)
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
    lines = {}
    for entry in ops.TABLE.values():
        if entry.variants:
            for line in entry.schema:
                name = line.partition("(")[0].split(".")[0]
                lines.setdefault(name, ([], set()))
                lines[name][0].append((line, entry))
                lines[name][1].update(entry.variants)
    for alias, target in ops.ALIASES.items():
        renamed = _alias_lines(alias, target, lines)
        if renamed is not None:
            _TABLE_ALIASES.add(alias)
            lines[renamed[0]] = renamed[1:]
    out = {ns: {} for ns in _NAMESPACES}
    for name, (pairs, variants) in lines.items():
        overloads = _overloads[name] = Overloads(name, pairs)
        for ns in variants:
            if ns == "method":
                out[ns][name] = _method(overloads)
            elif ns == "inplace":
                out[ns][name + "_"] = _inplace(overloads)
            else:
                out[ns][name] = _function(overloads)
    return out


_TABLE_ALIASES: set = set()


def _alias_lines(alias, target, lines):
    """(name, schema lines renamed, namespaces) of an alias of a table-bound name: PyTorch binds an
    alias as its own schema, so its errors carry the alias's name (``arcsin()``, not ``asin()``)."""
    inplace = target.endswith("_") and target[:-1] in lines
    base = target[:-1] if inplace else target
    if base not in lines:
        return None             # the target is bound by hand: with_aliases binds the alias
    name = alias[:-1] if inplace else alias
    pairs = [(name + line[len(base):], entry) for line, entry in lines[base][0]]
    namespaces = {"inplace"} if inplace else lines[base][1] - {"inplace"}
    if name in lines:           # the alias's other variants (arcsin beside arcsin_)
        pairs, namespaces = lines[name][0], lines[name][1] | namespaces
    return name, pairs, namespaces


def with_aliases(names: dict) -> dict:
    """``names`` (one namespace, table and hand-written together) plus the aliases of its names
    bound by hand (the table's own aliases are bound with their own schema lines)."""
    for alias, target in ops.ALIASES.items():
        if target in names and alias not in _TABLE_ALIASES:
            if alias in names:
                raise ValueError(f"{alias!r} is bound twice (an alias line and a name)")
            names[alias] = names[target]
    return names


def bind_tensor(hand_written: dict):
    """Put the table's methods and in-place methods on ``Tensor`` (refusing a name also bound by hand)."""
    table = bound()
    names = dict(hand_written)
    for ns in ("method", "inplace"):
        for name, fn in table[ns].items():
            if name in names:
                raise ValueError(f"Tensor.{name} is bound twice (from the op table and by hand)")
            names[name] = fn
    for name, fn in with_aliases(names).items():
        setattr(Tensor, name, fn)


def namespace(ns: str, hand_written: dict) -> dict:
    """The table's names for ``torch`` ("function"), ``F`` or ``linalg``, checked against the hand-written ones."""
    names = bound()[ns]
    twice = set(names) & set(hand_written)
    if twice:
        raise ValueError(f"bound twice (from the op table and by hand): {sorted(twice)}")
    return with_aliases({**hand_written, **names})
