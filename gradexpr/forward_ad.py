"""Forward-mode AD: dual levels, tangents beside their primals, and their propagation through ops.

PyTorch keeps a tensor's forward gradient ("tangent") in its autograd meta, per level. forward_ad
allows one level at a time; torch.func's jvp opens its own levels, which nest (jvp of jvp, jacfwd of
jacfwd) but refuse to meet a forward_ad level, as functorch's do. Here each open level's tangents
live in a side table keyed by the tensor's identity, so tensors carry nothing for forward AD and
``apply`` pays one truthiness test of ``ACTIVE`` when no level is open. Leaving a level drops its
tangents, as in PyTorch.

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

Tangent formulas run with their level (and the ones inside it) paused but the outer levels active, so
a tangent carries its own tangents at the outer levels; grad mode stays as it is, so their ops are recorded by reverse mode: reverse-over-forward and forward-over-reverse
both work.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import errors
from .grad_mode import IN_FORMULA, _grad_enabled
from .zero_tensor import LIVE as ZERO_TENSORS, materialized
# an undefined tangent read as plain zeros, and as a recorded formula reads it (ATen's _efficientzerotensor)
from .zero_tensor import plain_zeros_like as _zeros_for, zeros_like as _efficient_zeros

ACTIVE: list = []          # the open levels, outermost first (level k is ACTIVE[k] == k); apply tests truthiness
_TABLES: list = []         # per open level: id(tensor) -> (weak reference to the tensor, its tangent)
_FROM_FUNC: list = []      # per open level: opened by torch.func (jvp, jacfwd) rather than forward_ad
_state = {"current": -1}   # forward_ad's own current level (PyTorch's _current_level)

_NESTED = "Nested forward mode AD is not supported at the moment"
_NOT_LAST = "Trying to exit a forward AD level that was not the last one that was created. This is not supported."


# ---------------------------------------------------------------- the side tables
def tangent_of(t, level=None):
    """``t``'s tangent at ``level`` (default: the innermost active one), or None."""
    if level is None:
        if not ACTIVE:
            return None
        level = ACTIVE[-1]
    e = _TABLES[level].get(id(t))
    if e is not None and e[0]() is t:
        return e[1]
    return None


def set_tangent(t, tangent, level=None):
    table = _TABLES[ACTIVE[-1] if level is None else level]
    key = id(t)

    def _gone(ref, key=key):
        e = table.get(key)
        if e is not None and e[0] is ref:
            del table[key]

    table[key] = (weakref.ref(t, _gone), tangent)


def copy_tangent(src, dst):
    """Give ``dst`` (another tensor object for the same value, e.g. an unpacked saved output) ``src``'s
    tangents at every active level."""
    for level in ACTIVE:
        tan = tangent_of(src, level)
        if tan is not None:
            set_tangent(dst, tan, level)


# ---------------------------------------------------------------- levels
def _push(from_func: bool) -> int:
    level = len(_TABLES)
    _TABLES.append({})
    _FROM_FUNC.append(from_func)
    ACTIVE.append(level)
    return level


def _pop(level: int):
    del _TABLES[level:], _FROM_FUNC[level:], ACTIVE[level:]


def enter_dual_level():
    """forward_ad's level: one at a time, not inside a torch.func forward transform either."""
    if _TABLES:
        raise errors.RuntimeError(_NESTED)
    level = _push(False)
    _state["current"] = level
    return level


def exit_dual_level(*, level=None):
    if level is None:
        level = _state["current"]
    if level != _state["current"]:
        raise errors.RuntimeError(_NOT_LAST)
    if level < 0:
        raise errors.RuntimeError("Dual level must be a positive number.")
    if _FROM_FUNC[-1]:          # torch.func's level is left by the transform that opened it
        raise errors.RuntimeError(_NOT_LAST)
    _pop(level)
    _state["current"] = level - 1


class dual_level:
    """``with fwAD.dual_level():`` — the scope in which dual tensors exist."""

    _gx_exposed = True
    __module__ = "torch.autograd.forward_ad"

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


class func_level:
    """A level of ``torch.func.jvp``: these nest (jvp of jvp, jacfwd of jacfwd), as functorch's
    interpreter stack allows, but not inside (or around) a forward_ad level. Inside one, forward_ad's
    functions see it as their level 0 (each functorch layer has its own level 0)."""

    def __enter__(self):
        if _TABLES and not _FROM_FUNC[-1]:
            raise errors.RuntimeError(_NESTED)
        self.level = _push(True)
        self.outer = _state["current"]
        _state["current"] = 0
        return self.level

    def __exit__(self, *exc):
        _pop(self.level)
        _state["current"] = self.outer
        return False


def _public_level(level, invalid: str):
    """The open level forward_ad's make_dual/unpack_dual address (None: its current one), checked as
    PyTorch's C++ checks it; -1 when no level is open (unpack_dual then finds no tangent, make_dual fails)."""
    current = _state["current"]
    if level is None or current < 0:
        if level is not None and level >= 0 and invalid.endswith("_make_dual"):
            raise errors.RuntimeError("Trying to access a forward AD level with an invalid index. This index was "
                                      "either not created or is already deleted.")
        return -1 if current < 0 else len(_TABLES) - 1
    if level >= 0 and level != current:
        raise errors.RuntimeError(invalid)
    return len(_TABLES) - 1 if level >= 0 else level


# ---------------------------------------------------------------- make / unpack
def make_dual(tensor, tangent, *, level=None):
    from .tensor import Tensor
    if level is None and _state["current"] < 0 or level is not None and level < 0:
        raise errors.RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                                  "enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise errors.TypeError("make_dual(): expected Tensor arguments")
    if not tensor._dtype.is_floating_point:
        raise errors.ValueError(f"Expected primal to be floating point or complex, but got: {tensor._dtype}")
    if not tangent._dtype.is_floating_point:
        raise errors.ValueError(f"Expected tangent to be floating point or complex, but got: {tangent._dtype}")
    return dual_at(tensor, tangent, _public_level(level, "Invalid level given to _make_dual"), _view_node)


def _view_node(t):
    """``_make_dual``'s view of the primal: ViewBackward0 in the graph, as PyTorch records it."""
    from . import ops
    from .op import apply
    return apply(ops.view, (t,), {"shape": tuple(t._data.shape)})


def dual_at(tensor, tangent, level, view=None):
    """A view of ``tensor`` carrying ``tangent`` at ``level`` (and ``tensor``'s tangents at outer levels):
    an alias (functorch's wrapping), or what ``view`` makes."""
    if tangent._data.shape != tensor._data.shape:
        raise errors.RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {_size(tensor)} while the given forward gradient is of size "
            f"{_size(tangent)}.")
    dual = _alias(tensor, level, view)      # a view of the primal (PyTorch's make_dual is a view op)
    set_tangent(dual, tangent if tangent._dtype is tensor._dtype else tangent.to(tensor._dtype), level)
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
    level = _public_level(level, "Invalid level given to _fw_primal")
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    # (always a new view, as aten::_fw_primal makes one even of a tensor without a tangent)
    return UnpackedDualTensor(_alias(tensor, level, _primal_view), tangent_of(tensor, level))


def unpacked_at(tensor, level):
    tangent = tangent_of(tensor, level)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor, level), tangent)


def _alias(t, level, view=None):
    """A view of ``t`` with its history (``aten::alias``, or what ``view`` makes), made with ``level`` and the
    ones inside it paused: it has no tangent there, and the tangents of the outer levels."""
    from . import ops
    from .op import apply
    active = ACTIVE[:]
    del ACTIVE[level:]
    try:
        return apply(ops.alias, (t,)) if view is None else view(t)
    finally:
        ACTIVE[:] = active


# ---------------------------------------------------------------- propagation through ops
def propagate(op, ts, params, result, extras):
    """After ``apply`` ran ``op``: give ``result`` its tangent at each level where an input carries one.
    Level k's formula runs with levels k and inward paused, so its ops carry the outer levels' tangents
    (the tangent of a tangent: jvp of jvp, jacfwd of jacfwd)."""
    if not result._dtype.is_floating_point:
        return
    active = ACTIVE[:]
    for level in active:
        table = _TABLES[level]
        tangents = None
        for i, t in enumerate(ts):
            e = table.get(id(t))
            if e is not None and e[0]() is t:
                if tangents is None:
                    tangents = [None] * len(ts)
                tangents[i] = e[1]
        if tangents is None:
            continue
        how = op.tangent
        if how is None:
            raise errors.NotImplementedError(f"Trying to use forward AD with aten::{_aten_name(op)} that does not "
                                             "support it.")
        if how == "not_implemented":        # in derivatives.yaml, without a forward formula
            raise errors.NotImplementedError(
                f"Trying to use forward AD with {_aten_name(op)} that does not support it because it has not been "
                "implemented yet.\nPlease file an issue to PyTorch at "
                "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
                "its implementation or submit a PR adding the implementation to derivatives.yaml")
        del ACTIVE[level:]
        IN_FORMULA.append(True)         # the formulas are PyTorch's C++: ``t * 2`` is mul.Scalar (MulBackward1)
        try:
            if _grad_enabled.get() and _records(ts, tangents):
                tangent = _as_written(op, ts, tangents, params, result, extras)
            else:
                tangent = _TANGENT_RULES[how](op, ts, tangents, params, result, extras) if type(how) is str \
                    else _explicit(how, op, ts, tangents, params, result, extras)
            if not op.view and any(tangent is tan for tan in tangents):
                tangent = tangent.clone()   # a result's tangent is its own (in-place ops write into it), as ATen's
            elif op.tangent_copied is not None and tangent is not None and tangent._requires_grad and \
                    _grad_enabled.get() and op.tangent_copied(**params):
                tangent = _copied(tangent, result)
        finally:
            IN_FORMULA.pop()
            ACTIVE[:] = active
        if tangent is not None:
            _give(result, tangent, level)


def _copied(tangent, result):
    """``_set_fw_grad``'s copy of a tangent whose metadata differ from the output's (CopyBackwards)."""
    from .tensor import Tensor
    return Tensor._make(np.empty(result._data.shape, tangent._dtype.np), tangent._dtype).copy_(tangent)


def _records(ts, tangents) -> bool:
    """Whether the tangent's own graph is recorded (forward-over-reverse): a primal or a tangent requires grad."""
    for t in ts:
        if t._requires_grad:
            return True
    for tan in tangents:
        if tan is not None and tan._requires_grad:
            return True
    return False


def _as_written(op, ts, tangents, params, result, extras):
    """The tangent as PyTorch's generated code computes it when its graph is recorded: the formula reads
    each primal through ``_fw_primal`` (a view whose node is Identity) and an undefined tangent as zeros,
    and an entry's ``tangent_formula`` (derivatives.yaml's ``result:`` line as written) replaces the
    cheaper rule that skips undefined tangents."""
    primals = tuple(_primal_view(t) if t._requires_grad else t for t in ts)
    formula = op.tangent_formula
    if formula is not None:
        tangent = _explicit(formula, op, primals, tangents, params, result, extras, _efficient_zeros)
        if tangent is not NotImplemented:       # (a formula written for some of the op's cases only)
            return tangent
    how = op.tangent
    return _TANGENT_RULES[how](op, primals, tangents, params, result, extras) if type(how) is str \
        else _explicit(how, op, primals, tangents, params, result, extras, _efficient_zeros)


def _primal_view(t):
    from . import ops
    from .op import apply
    return apply(ops.fw_primal, (t,))


def _give(result, tangent, level):
    if ZERO_TENSORS and result._data.size != 1:
        # _set_fw_grad copies a ZeroTensor (sgn's tangent) into memory of its own, unless the output has
        # one element (its storage then has the ZeroTensor's metadata: a 0-d sgn's tangent stays one)
        tangent = materialized(tangent)
    if tangent._data.shape != result._data.shape:
        tangent = tangent.expand(*result._data.shape).clone()
    if tangent._dtype is not result._dtype:
        tangent = tangent.to(result._dtype)
    set_tangent(result, tangent, level)
    saved = getattr(result._grad_fn, "_saved", None)
    if type(saved) is dict and "result" in saved:       # the alias backward formulas will read
        set_tangent(saved["result"].tensor, tangent, level)


def move_tangent(src, dst):
    """After an in-place op wrote ``src`` (its out-of-place result) into ``dst``: dst's tangents are src's,
    written into dst's tangent where it has one (PyTorch's in-place ``_set_fw_grad`` copies into it, so
    the tangent given to make_dual changes, and its graph gains a CopyBackwards node)."""
    for level in ACTIVE:
        tan = tangent_of(src, level)
        if tan is not None:
            old = tangent_of(dst, level)
            written = False
            if old is not None and old is not tan and old._data.shape == tan._data.shape:
                tan = _copy_into(old, tan, level)
                written = dst._base is not None and _views_tangent_of(old, dst._base, level)
            set_tangent(dst, tan, level)
            if dst._base is not None and not written:
                _write_into_base(dst, tan, level)
        elif tangent_of(dst, level) is not None:
            del _TABLES[level][id(dst)]


def inplace_formula(t, run):
    """``run()``, the out-of-place formula of ``t.op_()``, with ``t`` reading clones of its tangents under
    grad mode (PyTorch's ``self_t = GradMode::is_enabled() ? self_t.clone() : self_t``): the result's
    tangent is then written into them (move_tangent), which must not change what the formula saved."""
    if not ACTIVE or not _grad_enabled.get():
        return run()
    kept = []
    active = ACTIVE[:]
    for level in active:
        tan = tangent_of(t, level)
        if tan is not None:
            kept.append((level, tan))
            del ACTIVE[level:]
            try:
                copy = tan.clone()
            finally:
                ACTIVE[:] = active
            set_tangent(t, copy, level)
    try:
        return run()
    finally:
        for level, tan in kept:
            set_tangent(t, tan, level)


def _views_tangent_of(tangent, base, level) -> bool:
    """Whether ``tangent`` (a view's) is a view of ``base``'s tangent, as a view op's tangent is: writing
    into it wrote into the base's (whose history gains CopySlices, as in PyTorch)."""
    base_tangent = tangent_of(base, level)
    root = tangent._base
    return base_tangent is not None and root is not None and (root is base_tangent or root is base_tangent._base)


def _copy_into(old, tan, level):
    """``old.copy_(tan)`` with ``level`` and the ones inside it paused (outer levels' tangents follow)."""
    active = ACTIVE[:]
    del ACTIVE[level:]
    try:
        return old.copy_(tan)
    finally:
        ACTIVE[:] = active


def _write_into_base(view, tan, level):
    """A view changed in place changes its base: the base's tangent takes the view's at its positions
    (PyTorch's tangent of a view is a view of the base's tangent)."""
    from .op import ViewGeometry
    from .tensor import Tensor
    base = view._base
    old = tangent_of(base, level)
    data = np.zeros(base._data.shape, base._dtype.np) if old is None else old._data.copy()
    index = ViewGeometry(base._data, view._data).index()
    data.reshape(-1)[index.reshape(-1)] = np.broadcast_to(tan._data, view._data.shape).reshape(-1)
    set_tangent(base, Tensor._make(data, base._dtype), level)


def _aten_name(op):
    for formula in op.formulas.values():      # a NotImplemented input names PyTorch's op ("aten::remainder")
        why = getattr(formula, "why", "")
        if why.startswith("derivative for aten::"):
            return why.split("aten::", 1)[1].split(" ", 1)[0]
    if op.schema:
        return op.schema[0].split("(", 1)[0].split(".", 1)[0]
    return op.name


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
        elif name.endswith("_p") and name[:-2] in op.inputs:     # a primal (``_fw_primal`` when recorded)
            ctx[name] = list(ts) if op.variadic else ts[op.inputs.index(name[:-2])]
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
            if g is None:               # (a formula's "no gradient": lstsq's empty residuals)
                continue
            if g._data.shape != t._data.shape:
                g = g.sum_to_size(*t._data.shape)
            inner = (g * tan).sum()
            total = inner if total is None else total + inner
    if total is None or not total._requires_grad:
        return None
    (jv,) = autograd_grad(total, u, create_graph=True, allow_unused=True)
    return jv if recording else jv.detach()


def _explicit(formula, op, ts, tangents, params, result, extras, zeros=_zeros_for):
    code = formula.__code__
    names = code.co_varnames[:code.co_argcount]
    ctx = _context(op, ts, params, result, extras, names)
    for name, t, tan in zip(op.inputs, ts, tangents):
        ctx[name + "_t"] = tan if tan is not None else zeros(t)
    return formula(**{n: ctx[n] for n in names if n in ctx})


_TANGENT_RULES = {"element_wise": _element_wise, "linear": _linear, "transpose": _transpose}
