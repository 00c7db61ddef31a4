"""Forward-mode AD: dual levels, tangents beside their primals, and their propagation through ops.

PyTorch keeps a tensor's forward gradient ("tangent") in its autograd meta, per level; it allows one
level at a time. Here the tangents of the (single) active level live in a side table keyed by the
tensor's identity, so tensors carry nothing for forward AD and ``apply`` pays one truthiness test of
``ACTIVE`` when no level is open. Leaving the level drops every tangent, as in PyTorch.

How an op's tangent is computed is declared by its table entry (``forward=``, the ``result:`` lines
of PyTorch's derivatives.yaml):

* ``"element_wise"`` (PyTorch's ``auto_element_wise``): the op is elementwise, so each backward
  formula, linear and elementwise in ``grad``, is evaluated with the input's tangent as ``grad``;
* ``"linear"`` (``auto_linear``): the op is linear in its differentiable inputs, so the tangent is the
  op itself applied to the tangents (non-differentiable inputs such as indices stay as they are);
* ``"transpose"``: the tangent is the transpose of the backward formulas (the vector-Jacobian
  product, linear in ``grad``, differentiated with respect to ``grad``), for ops whose Jacobian is
  dense (reductions with weights, matrix functions, losses);
* a callable: an explicit formula whose parameters name what it reads, as the backward formulas do,
  plus ``<input>_t`` for each input's tangent (zeros where an input has none).

Tangent formulas run with the level paused (they compute values, not new duals) but with grad mode
as it is, so their ops are recorded by reverse mode: reverse-over-forward and forward-over-reverse
both work.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import errors

ACTIVE: list = []          # [level] while a dual level is open (apply tests its truthiness)
_TANGENTS: dict = {}       # id(tensor) -> (weak reference to the tensor, its tangent)
_state = {"next_level": 0}


# ---------------------------------------------------------------- the side table
def tangent_of(t):
    """``t``'s tangent at the active level, or None."""
    e = _TANGENTS.get(id(t))
    if e is not None and e[0]() is t:
        return e[1]
    return None


def set_tangent(t, tangent):
    key = id(t)

    def _gone(ref, key=key):
        e = _TANGENTS.get(key)
        if e is not None and e[0] is ref:
            del _TANGENTS[key]

    _TANGENTS[key] = (weakref.ref(t, _gone), tangent)


def copy_tangent(src, dst):
    """Give ``dst`` (another tensor object for the same value, e.g. an unpacked saved output) ``src``'s
    tangent."""
    tan = tangent_of(src)
    if tan is not None:
        set_tangent(dst, tan)


# ---------------------------------------------------------------- levels
def enter_dual_level():
    if ACTIVE:
        raise errors.RuntimeError("Nested forward mode AD is not supported at the moment")
    level = _state["next_level"]
    ACTIVE.append(level)
    return level


def exit_dual_level(*, level=None):
    if not ACTIVE:
        raise errors.RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                                  "This is not supported.")
    if level is not None and level != ACTIVE[-1]:
        raise errors.RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                                  "This is not supported.")
    ACTIVE.clear()
    _TANGENTS.clear()


class dual_level:
    """``with fwAD.dual_level():`` — the scope in which dual tensors exist."""

    _gx_exposed = True
    __module__ = "torch.autograd.forward_ad"

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


# ---------------------------------------------------------------- make / unpack
def make_dual(tensor, tangent, *, level=None):
    from .tensor import Tensor
    if not ACTIVE:
        raise errors.RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                                  "enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise errors.TypeError("make_dual(): expected Tensor arguments")
    if not tensor._dtype.is_floating_point:
        raise errors.ValueError(f"Expected primal to be floating point or complex, but got: {tensor._dtype}")
    if not tangent._dtype.is_floating_point:
        raise errors.ValueError(f"Expected tangent to be floating point or complex, but got: {tangent._dtype}")
    if tangent._data.shape != tensor._data.shape:
        raise errors.RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {_size(tensor)} while the given forward gradient is of size "
            f"{_size(tangent)}.")
    dual = _alias(tensor)        # a view of the primal (PyTorch's make_dual is a view op)
    set_tangent(dual, tangent if tangent._dtype is tensor._dtype else tangent.to(tensor._dtype))
    return dual


def _size(t):
    return "[" + ", ".join(str(s) for s in t._data.shape) + "]"


class UnpackedDualTensor(tuple):
    """``unpack_dual``'s result: a named tuple ``(primal, tangent)``."""

    _gx_exposed = True
    __slots__ = ()
    __module__ = "torch.autograd.forward_ad"

    def __new__(cls, primal, tangent):
        return tuple.__new__(cls, (primal, tangent))

    @property
    def primal(self):
        return self[0]

    @property
    def tangent(self):
        return self[1]

    def __repr__(self):
        return f"UnpackedDualTensor(primal={self[0]!r}, tangent={self[1]!r})"


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the primal a view of ``tensor`` without a tangent, the tangent or None."""
    tangent = tangent_of(tensor) if ACTIVE else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)


def _alias(t):
    """A view of ``t`` with its history (``aten::alias``), made with the level paused so it has no tangent."""
    from . import ops
    from .op import apply
    level = ACTIVE[:]
    ACTIVE.clear()
    try:
        return apply(ops.alias, (t,))
    finally:
        ACTIVE[:] = level


# ---------------------------------------------------------------- propagation through ops
def propagate(op, ts, params, result, extras):
    """After ``apply`` ran ``op``: give ``result`` its tangent when an input carries one."""
    tangents = None
    for i, t in enumerate(ts):
        e = _TANGENTS.get(id(t))
        if e is not None and e[0]() is t:
            if tangents is None:
                tangents = [None] * len(ts)
            tangents[i] = e[1]
    if tangents is None or not result._dtype.is_floating_point:
        return
    how = op.tangent
    if how is None:
        raise errors.NotImplementedError(f"Trying to use forward AD with aten::{_aten_name(op)} that does not "
                                         "support it.")
    level = ACTIVE[:]
    ACTIVE.clear()            # the formula computes plain values: no tangents of tangents
    try:
        tangent = _TANGENT_RULES[how](op, ts, tangents, params, result, extras) if type(how) is str \
            else _explicit(how, op, ts, tangents, params, result, extras)
    finally:
        ACTIVE[:] = level
    if tangent is not None:
        if tangent._data.shape != result._data.shape:
            tangent = tangent.expand(*result._data.shape).clone()
        if tangent._dtype is not result._dtype:
            tangent = tangent.to(result._dtype)
        set_tangent(result, tangent)
        saved = getattr(result._grad_fn, "_saved", None)
        if type(saved) is dict and "result" in saved:       # the alias backward formulas will read
            set_tangent(saved["result"].tensor, tangent)


def move_tangent(src, dst):
    """After an in-place op wrote ``src`` (its out-of-place result) into ``dst``: dst's tangent is src's."""
    tan = tangent_of(src)
    if tan is not None:
        set_tangent(dst, tan)
        if dst._base is not None:
            _write_into_base(dst, tan)
    elif tangent_of(dst) is not None:
        del _TANGENTS[id(dst)]


def _write_into_base(view, tan):
    """A view changed in place changes its base: the base's tangent takes the view's at its positions
    (PyTorch's tangent of a view is a view of the base's tangent)."""
    from .op import ViewGeometry
    from .tensor import Tensor
    base = view._base
    old = tangent_of(base)
    data = np.zeros(base._data.shape, base._dtype.np) if old is None else old._data.copy()
    index = ViewGeometry(base._data, view._data).index()
    data.reshape(-1)[index.reshape(-1)] = np.broadcast_to(tan._data, view._data.shape).reshape(-1)
    set_tangent(base, Tensor._make(data, base._dtype))


def _aten_name(op):
    if op.schema:
        return op.schema[0].split("(", 1)[0].split(".", 1)[0]
    return op.name


def _zeros_for(t):
    from .tensor import Tensor
    return Tensor._make(np.zeros(t._data.shape, t._dtype.np if t._dtype.is_floating_point else np.float32))


def _context(op, ts, params, result, extras, names):
    """The values the formulas name: inputs, ``result``, parameters, extras, ``<input>_shape``."""
    from .tensor import Tensor
    ctx = dict(params)
    for name in names:
        if name in ctx or name == "grad" or name.endswith("_t"):
            continue
        if name == "result":
            ctx[name] = result
        elif op.variadic and name == op.inputs[0]:
            ctx[name] = list(ts)
        elif name in op.inputs:
            ctx[name] = ts[op.inputs.index(name)]
        elif extras is not None and name in extras:
            ctx[name] = Tensor._make(extras[name])
        elif name.endswith("_shape"):
            key = name[:-6]
            if op.variadic and key == op.inputs[0]:
                ctx[name] = [t._data.shape for t in ts]
            elif key in op.inputs:
                ctx[name] = ts[op.inputs.index(key)]._data.shape
        elif name.endswith("_dtype") and name[:-6] in op.inputs:
            ctx[name] = ts[op.inputs.index(name[:-6])]._dtype
    return ctx


def _element_wise(op, ts, tangents, params, result, extras):
    total = None
    for name, t, tan in zip(op.inputs, ts, tangents):
        if tan is None or name not in op._calls:
            continue
        ctx = _context(op, ts, params, result, extras, op._args[name])
        ctx["grad"] = tan
        part = op._calls[name](ctx)
        total = part if total is None else total + part
    return total


def _linear(op, ts, tangents, params, result, extras):
    from .op import apply
    if op.variadic:
        args = [tan if tan is not None else _zeros_for(t) for t, tan in zip(ts, tangents)]
    else:
        args = [(tan if tan is not None else _zeros_for(t)) if name in op.formulas else t
                for name, t, tan in zip(op.inputs, ts, tangents)]
    return apply(op, args, params)


def _transpose(op, ts, tangents, params, result, extras):
    """J·v from the backward formulas: u ↦ Jᵀu is linear, so differentiating ⟨Jᵀu, v⟩ in u gives J·v."""
    from .autograd import grad as autograd_grad
    from .graph import enable_grad
    from .tensor import Tensor
    from .graph import is_grad_enabled
    recording = is_grad_enabled()
    u = Tensor._make(np.zeros(result._data.shape, result._dtype.np), result._dtype, requires_grad=True)
    total = None
    with enable_grad():
        for name, t, tan in zip(op.inputs, ts, tangents):
            if tan is None or name not in op._calls:
                continue
            ctx = _context(op, ts, params, result, extras, op._args[name])
            ctx["grad"] = u
            g = op._calls[name](ctx)
            if g._data.shape != t._data.shape:
                g = g.sum_to_size(*t._data.shape)
            inner = (g * tan).sum()
            total = inner if total is None else total + inner
    if total is None or not total._requires_grad:
        return None
    (jv,) = autograd_grad(total, u, create_graph=True, allow_unused=True)
    return jv if recording else jv.detach()


def _explicit(formula, op, ts, tangents, params, result, extras):
    code = formula.__code__
    names = code.co_varnames[:code.co_argcount]
    ctx = _context(op, ts, params, result, extras, names)
    for name, t, tan in zip(op.inputs, ts, tangents):
        ctx[name + "_t"] = tan if tan is not None else _zeros_for(t)
    return formula(**{n: ctx[n] for n in names if n in ctx})


_TANGENT_RULES = {"element_wise": _element_wise, "linear": _linear, "transpose": _transpose}
