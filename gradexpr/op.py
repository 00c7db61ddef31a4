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
from .tensor import Tensor, _fresh


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
                 "differentiable", "variadic", "_args", "_optional", "_save_cache", "doc", "twice", "broadcast",
                 "_calls", "_plans", "_any_optional")

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
        self._any_optional = frozenset().union(*self._optional.values())
        self._save_cache = {}
        self._plans = {}
        # per input: a call of its formula reading its arguments from the backward context
        self._calls = {k: _caller(f, self._optional[k]) for k, f in self.formulas.items() if callable(f)}

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

    def save_plan(self, needs):
        """``save_names(needs)`` with how ``apply`` gets each: (name, _RESULT | _INPUTS | input index | _LATE)."""
        plan = self._plans.get(needs)
        if plan is None:
            plan = []
            for name in self.save_names(needs):
                if name == "result":
                    plan.append((name, _RESULT))
                elif self.variadic and name == self.inputs[0]:
                    plan.append((name, _INPUTS))
                elif name in self.inputs:
                    plan.append((name, self.inputs.index(name)))
                else:
                    plan.append((name, _LATE))      # a parameter, an extra, a shape or dtype: see _record
            plan = self._plans[needs] = tuple(plan)
        return plan

    def optional(self, name):
        return name in self._any_optional

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
            call = self._calls.get(name)
            if call is None:
                f = self.formulas.get(name, NOT_DIFFERENTIABLE)
                raise errors.RuntimeError(f"the derivative for '{self.name}' is not implemented."
                                          if not getattr(f, "why", "") else f.why)
            out.append(call(ctx))
        return out


_RESULT, _INPUTS, _LATE = -1, -2, -3


def _caller(f, optional):
    """``ctx -> f(...)`` with f's arguments taken from ctx by name (optional ones only if present)."""
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    if optional:
        required = tuple(n for n in names if n not in optional)
        return lambda ctx: f(*[ctx[a] for a in required], **{a: ctx[a] for a in optional if a in ctx})
    if len(names) == 1:
        a, = names
        return lambda ctx: f(ctx[a])
    if len(names) == 2:
        a, b = names
        return lambda ctx: f(ctx[a], ctx[b])
    return lambda ctx: f(*[ctx[a] for a in names])


# ---------------------------------------------------------------- inputs
# Wrapped numbers are made once per value (programs multiply by the same few constants again
# and again): a small table of read-only 0-d tensors, with their casts to each float dtype.
_WRAPPED: dict = {}
_WRAPPED_CASTS: dict = {}      # (id of a cached number's array, numpy dtype) -> its cast (read-only)
_WRAPPED_MAX = 1024
_FLOAT_NP = tuple(d.np for d in (dtypes.float16, dtypes.float32, dtypes.float64))


def wrap(value) -> Tensor:
    """A Python number as a 0-d 'wrapped number' tensor (lower priority in promotion)."""
    tv = type(value)
    if tv is Tensor:
        return value
    if tv is float or tv is int or tv is bool:
        t = _WRAPPED.get((tv, value))
        if t is None:
            key = (tv, value)
            t = _wrapped_number(value)
            # never 0.0 (it equals -0.0) nor nan (it equals nothing): a cached tensor must be this number
            if value and value == value and len(_WRAPPED) < _WRAPPED_MAX:
                _cache_wrapped(key, t)
        return t
    if isinstance(value, (int, float)):
        return _wrapped_number(value)
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.generic):
        return Tensor._make(np.asarray(value))
    raise errors.TypeError(f"expected Tensor as element 0 in argument 0, but got {type(value).__name__}")


def _wrapped_number(value) -> Tensor:
    d = dtypes.of_python_scalar(value)
    if d.category == 1 and not -2**63 <= value < 2**63:
        raise OverflowError("int too big to convert")     # PyTorch's words (NumPy: "... to C long")
    # A Python float keeps its exact double value; its dtype is the default float, as torch's
    # wrapped numbers promote (apply casts the value to the op's dtype before computing).
    t = _fresh(np.array(value, dtype=np.float64 if d.category == 2 else d.np), d)
    t._wrapped = True
    return t


def _cache_wrapped(key, t):
    data = t._data
    data.flags.writeable = False
    for want in _FLOAT_NP:
        if want != data.dtype:
            cast = data.astype(want)
            cast.flags.writeable = False
            _WRAPPED_CASTS[(id(data), want)] = cast
    _WRAPPED[key] = t


def _cast(data, want):
    """``data`` as ``want`` (a cached wrapped number's cast is made once)."""
    c = _WRAPPED_CASTS.get((id(data), want))
    return c if c is not None else data.astype(want)


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
def apply(op: Op, args, params=_EMPTY, extras_out=None):
    """Run ``op`` forward on ``args`` (Tensors or numbers) and record its node when grad is needed.

    This is every op's path, forward and (for the formulas) backward, so it is written for
    speed: the common shapes of call (one or two inputs, an elementwise dtype rule) without
    lists or helper calls, dtype checks by identity first.
    ``extras_out``, a list, receives the extras dict the forward returned (see ``apply_ex``).
    """
    rule = op.dtype
    if len(args) == 2 and (rule == "promote" or rule == "float") and op.cast is None:
        a, b = args
        if type(a) is not Tensor:
            a = wrap(a)
        if type(b) is not Tensor:
            try:
                w = _WRAPPED.get((type(b), b))     # the common `tensor * number` without a call
            except TypeError:                      # unhashable (a list): wrap() refuses it in words
                w = None
            b = w if w is not None else wrap(b)
        ts = (a, b)
        compute = a._dtype
        if b._dtype is not compute:
            compute = dtypes.result_type(ts)
        if rule == "float" and compute.category != 2:
            compute = dtypes.default_float
        out_dtype = compute
        want = compute.np
        x = a._data
        if x.dtype is not want and x.dtype != want:
            x = _cast(x, want)
        y = b._data
        if y.dtype is not want and y.dtype != want:
            y = _cast(y, want)
        if op.broadcast:
            sx = x.shape
            sy = y.shape
            if sx != sy and sx and sy:
                _check_broadcast((x, y))
        out = op.forward(x, y, **params) if params else op.forward(x, y)
    else:
        if len(args) == 1:
            a = args[0]
            ts = (a if type(a) is Tensor else wrap(a),)
        else:
            ts = tuple([x if type(x) is Tensor else wrap(x) for x in args])
        compute, out_dtype = _dtypes_for(op, ts, params)
        if compute is not None:
            want = compute.np
            cast = op.cast
            arrays = []
            for i, t in enumerate(ts):
                data = t._data
                if data.dtype is not want and data.dtype != want and (cast is None or i in cast):
                    data = _cast(data, want)
                arrays.append(data)
        else:
            arrays = [t._data for t in ts]
        if op.broadcast:
            _check_broadcast(arrays)
        out = op.forward(*arrays, **params) if params else op.forward(*arrays)
    extras = None
    if type(out) is tuple:
        out, extras = out
    if extras_out is not None:
        extras_out.append(extras)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out_dtype is None:
        out_dtype = dtypes.from_numpy(out.dtype)
    elif out.dtype is not out_dtype.np and out.dtype != out_dtype.np:
        out = out.astype(out_dtype.np)
    result = _fresh(out, out_dtype)
    if op.view:
        base = ts[0]
        result._version_counter = base._version_counter
        result._base = base._base if base._base is not None else base
    if op.differentiable and out_dtype.category == 2 and _grad_enabled.get():
        for t in ts:
            if t._requires_grad:
                _record(op, ts, params, result, extras)
                break
    return result


def apply_ex(op: Op, args, params=_EMPTY):
    """``apply`` that also returns the extras dict the forward produced (e.g. max's indices)."""
    box = []
    result = apply(op, args, params, box)
    return result, box[0]


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


_NO_META = ((), None)     # the meta of an input that gets no gradient (never read)


def _record(op, ts, params, result, extras):
    if len(ts) == 2:
        a, b = ts
        if a._requires_grad:
            fn = a._grad_fn
            na = fn if fn is not None else a._accumulator()
            ma = (a._data.shape, a._dtype)
        else:
            na, ma = None, _NO_META
        if b._requires_grad:
            fn = b._grad_fn
            nb = fn if fn is not None else b._accumulator()
            mb = (b._data.shape, b._dtype)
        else:
            nb, mb = None, _NO_META
        next_nodes = [na, nb]
        needs = (na is not None, nb is not None)
        meta = [ma, mb]
    else:
        next_nodes = []
        meta = []
        for t in ts:
            if t._requires_grad:
                fn = t._grad_fn
                next_nodes.append(fn if fn is not None else t._accumulator())
                meta.append((t._data.shape, t._dtype))
            else:
                next_nodes.append(None)
                meta.append(_NO_META)
        needs = tuple([n is not None for n in next_nodes])
    saved = {}
    frees = False                   # whether the node holds tensors that backward frees
    plan = op._plans.get(needs)
    if plan is None:
        plan = op.save_plan(needs)
    for name, how in plan:
        if how >= 0:
            saved[name] = SavedTensor(ts[how])
            frees = True
        elif how == _RESULT:
            saved[name] = SavedTensor(result, is_output=True, producer=op.node)
            frees = True
        elif how == _INPUTS:
            saved[name] = SavedTensors(SavedTensor(t) for t in ts)
            frees = True
        elif name in params:
            saved[name] = params[name]
        elif extras is not None and name in extras:
            saved[name] = Tensor._make(extras[name])
        elif name.endswith("_shape"):
            key = name[:-6]
            if op.variadic and key == op.inputs[0]:
                saved[name] = [t._data.shape for t in ts]
            else:
                saved[name] = ts[op.inputs.index(key)]._data.shape
        elif name.endswith("_dtype"):
            saved[name] = ts[op.inputs.index(name[:-6])]._dtype
        elif op.optional(name):
            continue
        else:
            raise KeyError(f"formula of {op.name} reads unknown name {name!r}")
    result._requires_grad = True
    result._grad_fn = Node(op, next_nodes, saved, meta, frees)


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
