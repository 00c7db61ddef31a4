"""What a graph node saved, as a program reads it: ``y.grad_fn._saved_self``, ``_saved_result``,
``_saved_exponent``, ``_saved_self_sym_sizes`` … and ``_raw_saved_*`` (the saved tensor itself).

The names are the parameters of the op's backward formulas (the op table names them as PyTorch's
derivatives.yaml does), so ``_saved_<name>`` reads the node's saved context; a few values are
shown the way PyTorch stores them (sizes and strides as tuples, the reduction enum's number, a
list of dims as a tuple).
"""
from __future__ import annotations

from . import errors
from .graph import _RELEASED, SECOND_BACKWARD, SavedTensor, SavedTensors
from .saved_hooks import RawSavedTensor

_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}
_SCALAR_SAVED = frozenset({("PowBackward2", "self")})
# nodes whose op takes ``dim`` as a list (PyTorch shows a tuple even for one dim)
_DIM_LIST_NODES = frozenset(("SumBackward1", "MeanBackward1", "LogsumexpBackward0", "AmaxBackward0",
                             "AminBackward0", "NansumBackward0"))


def _derived_saved(saved, key):
    """``X_sym_sizes`` / ``X_sym_strides`` / ``X_sym_numel`` of what the node saved of input X."""
    for suffix in ("_sym_sizes", "_sym_strides", "_sym_numel"):
        if key.endswith(suffix):
            base = key[:-len(suffix)]
            break
    else:
        return None
    shape = saved.get(base + "_shape")
    v = saved.get(base)
    if shape is None and type(v) is SavedTensor:
        shape = v.tensor._data.shape
    if shape is None:
        return None
    shape = tuple(int(s) for s in shape)
    if suffix == "_sym_sizes":
        return shape
    if suffix == "_sym_numel":
        n = 1
        for d in shape:
            n *= d
        return n
    if type(v) is not SavedTensor:
        return None
    data = v.tensor._data
    return tuple(int(st) // data.itemsize for st in data.strides)



def _saved_entry(node, key, attribute):
    saved = node._saved
    if saved is _RELEASED:
        raise errors.RuntimeError(SECOND_BACKWARD, hint="pass retain_graph=True to the first backward()")
    derived = _derived_saved(saved, key)
    if derived is not None:
        return derived
    if key in saved:
        return saved[key]
    params = _formula_parameters(node)
    if key in params:
        # a parameter left at its default (add's alpha), or a tensor this call did not need (None)
        return params[key]
    raise errors.AttributeError(f"'{node.type_name()}' object has no attribute '{attribute}'")

def _formula_parameters(node):
    """The names the op's formulas read, with their defaults (None where there is none)."""
    out = {}
    for f in getattr(node._op, "formulas", {}).values():
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        names = code.co_varnames[:code.co_argcount]
        defaults = f.__defaults__ or ()
        first_default = len(names) - len(defaults)
        for i, a in enumerate(names):
            if a != "grad" and a not in out:
                out[a] = defaults[i - first_default] if i >= first_default else None
    return out

def saved_value(node, key, attribute):
    v = _saved_entry(node, key, attribute)
    tv = type(v)
    if tv is SavedTensor:
        t = v.unpack(node)
        if t._wrapped and (node._op.node, key) in _SCALAR_SAVED:
            return t._data.item()       # a Python number PyTorch's overload takes as a Scalar
        return t
    if tv is SavedTensors:
        return tuple(x.unpack(node) for x in v)
    if tv is tuple and key.endswith(("_sym_sizes", "_sym_strides")):
        return tuple(int(s) for s in v)
    if key == "reduction" and tv is str:
        return _REDUCTION_ENUM.get(v, v)        # PyTorch saves the enum's value
    if key == "dim" and type(v) is int and node._op.node in _DIM_LIST_NODES:
        return (v,)                             # these ops take a list of dims
    return v

def raw_saved_value(node, key, attribute):
    v = _saved_entry(node, key, attribute)
    from .saved_hooks import RawSavedTensor
    if type(v) is SavedTensor:
        return RawSavedTensor(v)
    if type(v) is SavedTensors:
        return tuple(RawSavedTensor(x) for x in v)
    raise errors.AttributeError(f"'{node.type_name()}' object has no attribute '{attribute}'")
