"""The op record and its application: forward on NumPy, then the graph node.

An ``Op`` is one entry of the table in ``derivatives.py``: PyTorch's node name, a
NumPy forward, and one backward formula per differentiable input written with
Tensor operations. A formula's parameter names say what it needs — ``grad``, an
input's name (the input tensor, saved with its version), ``result`` (the output),
``<input>_shape``, a parameter of the op, or a value the forward returned as an
extra — so ``apply`` saves exactly what the formulas of the inputs that need a
gradient will read, as PyTorch's generated code does. Everything shared by all
ops (type promotion, wrapping Python numbers, skipping inputs without grad,
version counters of views, in-place rules) lives here once.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, errors, limits
from .graph import Node, SavedTensor, SavedTensors, _grad_enabled
from .tensor import Tensor


class NotDifferentiable:
    """Marker for an input whose derivative PyTorch does not implement."""

    def __init__(self, why: str = ""):
        self.why = why


NOT_DIFFERENTIABLE = NotDifferentiable()

# PyTorch computes nan/inf silently; so does the engine (once, instead of an errstate per op).
np.seterr(all="ignore")
_EMPTY = {}


class Op:
    __slots__ = ("name", "node", "forward", "inputs", "formulas", "dtype", "cast", "view", "domain",
                 "differentiable", "variadic", "_args", "_optional", "_save_cache", "doc", "twice", "broadcast")

    def __init__(self, name, node, forward, inputs=("self",), grads=None, *, dtype="promote", cast=None,
                 view=False, domain=None, differentiable=True, doc="", twice=True, broadcast=None):
        self.name = name
        self.node = node
        self.forward = forward
        self.variadic = len(inputs) == 1 and inputs[0].startswith("*")
        self.inputs = tuple(i.lstrip("*") for i in inputs)
        self.formulas = dict(grads or {})
        self.dtype = dtype
        self.cast = cast
        self.view = view
        self.domain = domain
        self.differentiable = differentiable and bool(self.formulas)
        self.doc = doc
        self.twice = twice
        # elementwise ops broadcast their inputs (checked with PyTorch's message before computing)
        self.broadcast = (dtype in ("promote", "float", "compare") and len(inputs) > 1) if broadcast is None \
            else broadcast  # False where a second derivative is not meaningful to test (kinks, piecewise)
        self._args = {k: f.__code__.co_varnames[:f.__code__.co_argcount]
                      for k, f in self.formulas.items() if callable(f)}
        # names a formula can do without (it has a default for them)
        self._optional = {k: set(f.__code__.co_varnames[f.__code__.co_argcount - len(f.__defaults__ or ()):
                                                        f.__code__.co_argcount])
                          for k, f in self.formulas.items() if callable(f)}
        self._save_cache = {}

    def __repr__(self):
        return f"<op {self.name} -> {self.node}>"

    def save_names(self, needs):
        """The context names read by the formulas of the inputs in ``needs`` (a tuple of bools)."""
        names = self._save_cache.get(needs)
        if names is None:
            s = []
            for name, need in zip(self.inputs if not self.variadic else self.inputs * len(needs), needs):
                if need:
                    for a in self._args.get(name, ()):
                        if a != "grad" and a not in s:
                            s.append(a)
            names = self._save_cache[needs] = tuple(s)
        return names

    def optional(self, name):
        return any(name in o for o in self._optional.values())

    def backward(self, ctx, needed):
        """Gradients for each input, None where not needed."""
        if self.variadic:
            name = self.inputs[0]
            f = self.formulas[name]
            grads = f(**{a: ctx[a] for a in self._args[name] if a in ctx})
            return [g if n else None for g, n in zip(grads, needed)]
        out = []
        for name, need in zip(self.inputs, needed):
            if not need:
                out.append(None)
                continue
            f = self.formulas.get(name, NOT_DIFFERENTIABLE)
            if isinstance(f, NotDifferentiable):
                raise errors.RuntimeError(f"the derivative for '{self.name}' is not implemented."
                                          if not f.why else f.why)
            out.append(f(**{a: ctx[a] for a in self._args[name] if a in ctx}))
        return out


# ---------------------------------------------------------------- inputs
def wrap(value) -> Tensor:
    """A Python number as a 0-d 'wrapped number' tensor (lower priority in promotion)."""
    tv = type(value)
    if tv is Tensor:
        return value
    if tv is float or tv is int or tv is bool or isinstance(value, (int, float)):
        d = dtypes.of_python_scalar(value)
        t = object.__new__(Tensor)
        # A Python float keeps its exact double value; its dtype is the default float, as torch's
        # wrapped numbers promote (apply casts the value to the op's dtype before computing).
        t._data = np.array(value, dtype=np.float64 if d.category == 2 else d.np)
        t._dtype = d
        t._requires_grad = False
        t._grad = t._grad_fn = t._base = t._acc = t._name = None
        t._version_counter = [0]
        t._wrapped = True
        return t
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.generic):
        return Tensor._make(np.asarray(value))
    raise errors.TypeError(f"expected Tensor as element 0 in argument 0, but got {type(value).__name__}")


def _common(ts):
    d = ts[0]._dtype
    for t in ts:
        if t._dtype is not d:
            return dtypes.result_type(ts)
    return d


def _dtypes_for(op, ts, params):
    """(compute dtype, output dtype) of ``op`` over input tensors ``ts``."""
    rule = op.dtype
    if rule == "promote":
        d = _common(ts)
        return d, d
    if rule == "float":
        d = _common(ts)
        if d.category != 2:
            d = dtypes.default_float
        return d, d
    if rule == "compare":
        return _common(ts), dtypes.bool_
    if rule == "first":
        return None, ts[0]._dtype
    if rule == "keep":
        return None, None
    return rule(ts, params)


# ---------------------------------------------------------------- apply
def apply(op: Op, args, params=_EMPTY):
    """Run ``op`` forward on ``args`` (Tensors or numbers) and record its node when grad is needed."""
    return apply_ex(op, args, params)[0]


def apply_ex(op: Op, args, params=_EMPTY):
    """``apply`` that also returns the extras dict the forward produced (e.g. max's indices)."""
    ts = [a if type(a) is Tensor else wrap(a) for a in args]
    compute, out_dtype = _dtypes_for(op, ts, params)
    if compute is not None:
        cast = op.cast
        want = compute.np
        arrays = [t._data if (t._data.dtype == want or (cast is not None and i not in cast))
                  else t._data.astype(want) for i, t in enumerate(ts)]
    else:
        arrays = [t._data for t in ts]
    if op.broadcast:
        _check_broadcast(arrays)
    out = op.forward(*arrays, **params)
    extras = None
    if type(out) is tuple:
        out, extras = out
    result = Tensor._make(out, out_dtype)
    if op.view:
        base = ts[0]
        result._version_counter = base._version_counter
        result._base = base._base if base._base is not None else base
    if op.differentiable and _grad_enabled.get() and result._dtype.category == 2:
        for t in ts:
            if t._requires_grad:
                _record(op, ts, params, result, extras)
                break
    return result, extras


_BROADCASTING = ("promote", "float", "compare")


def _check_broadcast(arrays):
    """PyTorch's message for shapes that do not broadcast, and the element limit of the result."""
    first = None
    for a in arrays:
        s = a.shape
        if s:
            if first is None:
                first = s
            elif s != first:
                break
    else:
        return                  # equal shapes, apart from 0-d operands: nothing to check
    shapes = [a.shape for a in arrays]
    ndim = max(len(s) for s in shapes)
    out = [0] * ndim
    for k in reversed(range(ndim)):
        size = 1
        for j, s in enumerate(shapes):
            i = len(s) - ndim + k
            if i < 0:
                continue
            d = s[i]
            if d != 1:
                if size != 1 and d != size:
                    first = next(jj for jj, ss in enumerate(shapes) if len(ss) - ndim + k >= 0
                                 and ss[len(ss) - ndim + k] != 1)
                    raise errors.RuntimeError(
                        f"The size of tensor a ({size}) must match the size of tensor b ({d}) at non-singleton "
                        f"dimension {k}" if first == 0 else
                        f"The size of tensor a ({size}) must match the size of tensor b ({d}) at non-singleton "
                        f"dimension {k}")
                size = d
        out[k] = size
    limits.check_elements(out)


def _record(op, ts, params, result, extras):
    next_nodes = []
    needs = []
    for t in ts:
        if t._requires_grad:
            fn = t._grad_fn
            next_nodes.append(fn if fn is not None else t._accumulator())
            needs.append(True)
        else:
            next_nodes.append(None)
            needs.append(False)
    saved = {}
    names = op.save_names(tuple(needs))
    if names:
        inputs = op.inputs
        for name in names:
            if name == "result":
                saved[name] = SavedTensor(result, is_output=True)
            elif op.variadic and name == inputs[0]:
                saved[name] = SavedTensors(SavedTensor(t) for t in ts)
            elif name in inputs:
                saved[name] = SavedTensor(ts[inputs.index(name)])
            elif name in params:
                saved[name] = params[name]
            elif extras is not None and name in extras:
                saved[name] = Tensor._make(extras[name])
            elif name.endswith("_shape"):
                key = name[:-6]
                if op.variadic and key == inputs[0]:
                    saved[name] = [t._data.shape for t in ts]
                else:
                    saved[name] = ts[inputs.index(key)]._data.shape
            elif name.endswith("_dtype"):
                saved[name] = ts[op.inputs.index(name[:-6])]._dtype
            elif op.optional(name):
                continue
            else:
                raise KeyError(f"formula of {op.name} reads unknown name {name!r}")
    meta = [(t._data.shape, t._dtype) for t in ts]
    result._requires_grad = True
    result._grad_fn = Node(op, next_nodes, saved, meta)
    if "result" in saved:
        saved["result"].producer = op.node


# ---------------------------------------------------------------- in place
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_HINT_LEAF = "modify a leaf inside `with torch.no_grad():` (as optimisers do), or use an out-of-place op"


def check_inplace(t: Tensor):
    """PyTorch's refusals of in-place changes to a leaf (or a view of one) that requires grad."""
    if not _grad_enabled.get():
        return
    if t._requires_grad and t._grad_fn is None:
        raise errors.RuntimeError(LEAF_INPLACE, hint=_HINT_LEAF)
    b = t._base
    if b is not None and b._requires_grad and b._grad_fn is None:
        raise errors.RuntimeError(VIEW_OF_LEAF_INPLACE, hint=_HINT_LEAF)


def _can_cast(src: dtypes.DType, dst: dtypes.DType) -> bool:
    return src.category <= dst.category


def write_inplace(t: Tensor, result: Tensor):
    """Store ``result`` into ``t``'s memory and give ``t`` the history of ``result``."""
    if not _can_cast(result._dtype, t._dtype):
        raise errors.RuntimeError(f"result type {_cap(result._dtype)} can't be cast to the desired output type "
                                  f"{_cap(t._dtype)}")
    if result._data.shape != t._data.shape:
        try:
            shape = np.broadcast_shapes(result._data.shape, t._data.shape)
        except ValueError:
            shape = result._data.shape
        if shape != t._data.shape:
            raise errors.RuntimeError(f"output with shape {list(t._data.shape)} doesn't match the broadcast shape "
                                      f"{list(shape)}")
    if not t._data.flags.writeable:
        raise errors.RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                                  "a single memory location. Please clone() the tensor before performing the "
                                  "operation.")
    np.copyto(t._data, result._data, casting="unsafe")
    t._version_counter[0] += 1
    if result._grad_fn is not None:
        t._grad_fn = result._grad_fn
        t._requires_grad = True


def _cap(d):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}[d.name]


def apply_inplace(op: Op, t: Tensor, args=(), params=_EMPTY):
    """``t.op_(*args)``: compute out of place, then write back into ``t`` with its new history."""
    check_inplace(t)
    recording = _grad_enabled.get() and (t._requires_grad or any(
        type(a) is Tensor and a._requires_grad for a in args))
    if recording and "self" in op.save_names((True,) * (len(args) + 1)):
        # the formula reads the old value of t: give it its own copy, carrying t's history
        old = Tensor._make(t._data.copy(), t._dtype, t._requires_grad, t._grad_fn)
        old._acc = t._acc
    else:
        old = t
    result = apply(op, (old, *args), params)
    write_inplace(t, result)
    return t


def check_numel(shape):
    limits.check_elements(shape)
