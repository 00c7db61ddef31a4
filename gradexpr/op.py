"""The op record and its application: forward on NumPy, then the graph node.

An ``Op`` is one entry of the op table (``ops/``): PyTorch's node name, a
NumPy forward, and one backward formula per differentiable input written with
Tensor operations. A formula's parameter names say what it needs — ``grad``, an
input's name (the input tensor, saved with its version), ``result`` (the output),
``<input>_shape``, a parameter of the op, or a value the forward returned as an
extra — so ``apply`` saves exactly what the formulas of the inputs that need a
gradient will read, as PyTorch's generated code does. Everything shared by all
ops (type promotion, wrapping Python numbers, skipping inputs without grad,
version counters of views) lives here once; the in-place rules are inplace_engine.py's.
"""
from __future__ import annotations

import weakref as _weakref

import numpy as np

from . import dtypes, errors, limits
from .graph import InvalidGradFn, MultiOutputNode, Node, OutputEdge, SavedTensor, SavedTensors, _grad_enabled
from .ops.registry import _COLUMN_MAJOR_OF, _DTYPE_OF, _INPUTS, _RESULT, _SHAPE_OF  # noqa: F401
from .ops.registry import NOT_DIFFERENTIABLE, NotDifferentiable, Op  # noqa: F401  (re-exported)
from .tensor import Tensor, _fresh
from .forward_ad import ACTIVE as _DUAL_LEVEL, propagate as _propagate_tangent
from .zero_tensor import LIVE as _ZEROS, op_result as _zero_tensor_result
from .grad_mode import VMAP_LEVELS as _VMAP     # non-empty only once batching.py is loaded (by vmap)
from .graph import INFERENCE as _INFERENCE, mark_inference


# PyTorch computes nan/inf silently; so does the engine (once, instead of an errstate per op).
np.seterr(all="ignore")
_EMPTY = {}


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


_HALF = np.dtype(np.float16)


_OPMATH_SCALAR = frozenset(("mul", "div", "div_mode"))
_OPMATH_SECOND_SCALAR = frozenset(("floor_divide",))     # (div_floor reads only its second operand unrounded)


def _half_with_scalar(op, a, b, x, y):
    """PyTorch's CPU kernels compute float16 with a Python number in float32 and round the result once;
    mul's and div's take the number unrounded (opmath: ``h * 1.1``), floor_divide's its second one
    (``h // 1e-3``), the others rounded to float16 first (``h + 0.1`` adds float16(0.1))."""
    exact = op.name in _OPMATH_SCALAR
    x = a._data.astype(np.float32) if a._wrapped and exact else x.astype(np.float32)
    y = b._data.astype(np.float32) if b._wrapped and (exact or op.name in _OPMATH_SECOND_SCALAR) else \
        y.astype(np.float32)
    return x, y


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


_RESULT_LAYOUT = []     # [the result_layout module] once loaded


def _layout():
    """The result-layout rules (loaded by the first op with a non-C-contiguous input or result, then
    kept here: an import statement per op that settles a layout cost a microsecond)."""
    if not _RESULT_LAYOUT:
        from . import result_layout
        _RESULT_LAYOUT.append(result_layout)
    return _RESULT_LAYOUT[0]


# Set (result_layout.note) once a tensor whose dims are not in row-major order exists (a transpose, a
# permuted result): until then every input is row-major or a row-major-ordered view (a slice, an
# expand), the forwards' results are row-major as ATen's are, and apply checks no layout.
PERMUTED = [False]


def row_major_ordered(a) -> bool:
    """Whether ``a``'s strides (over dims of size > 1 that are not broadcast) decrease from the first
    dim to the last, as a C-contiguous array's or a broadcast view of one: such an input never asks
    TensorIterator for another order (the common case of a gradient expanded by sum's backward)."""
    last = None
    for size, stride in zip(a.shape, a.strides):
        if size > 1 and stride:
            if last is not None and stride >= last:
                return False
            last = stride
    return True


def _unsettled(ts, out) -> bool:
    """Whether an input or ``out`` is not C-contiguous (the result may need PyTorch's layout)."""
    for t in ts:
        if not t._data.flags.c_contiguous:
            return True
    return not out.flags.c_contiguous


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
    if _VMAP:
        batching = _batching()
        level = batching.level_of(args)
        if level >= 0:                  # under vmap, a batched input: the op's batch rule (batching.py)
            return batching.dispatch(op, args, params, extras_out, level)
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
            # _cast(y, want), inline: `tensor * number` casts a cached number on every op
            c = _WRAPPED_CASTS.get((id(y), want))
            y = c if c is not None else y.astype(want)
        if op.broadcast:
            sx = x.shape
            sy = y.shape
            if sx != sy and sx and sy:
                _check_broadcast((x, y))
        if want is _HALF and (a._wrapped or b._wrapped):
            x, y = _half_with_scalar(op, a, b, x, y)   # float16 with a Python number: in float32, rounded once
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
        if len(arrays) == 2 and arrays[0].dtype is _HALF and (ts[0]._wrapped or ts[1]._wrapped) and \
                arrays[1].dtype is _HALF:
            arrays = _half_with_scalar(op, ts[0], ts[1], arrays[0], arrays[1])
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
    if PERMUTED[0] and out.ndim > 1 and not op.view and _unsettled(ts, out):
        out = _layout().settle(op, ts, out)          # a non-C layout: PyTorch's rule (result_layout.py)
    result = _fresh(out, out_dtype)
    if _ZEROS and (op.zero_tensor is not None or op.view):     # a ZeroTensor among the inputs?
        _zero_tensor_result(op, ts, params, result)
    if op.view:
        _link_view(result, ts[0])
    if op.differentiable and out_dtype.category == 2 and _grad_enabled.get():
        for t in ts:
            if t._requires_grad:
                _record(op, ts, params, result, extras)
                break
    if _DUAL_LEVEL:
        _propagate_tangent(op, ts, params, result, extras)
    if _INFERENCE and not op.view:
        mark_inference(result)
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
        for s in shapes:
            i = len(s) - ndim + k
            if i < 0:
                continue
            d = s[i]
            if d != 1:
                if size != 1 and d != size:
                    raise errors.RuntimeError(
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
            na = a._grad_fn
            if na is None:
                na = a._accumulator()
            elif type(na) is InvalidGradFn:
                na.fail()
            ma = (a._data.shape, a._dtype)
        else:
            na, ma = None, _NO_META
        if b._requires_grad:
            nb = b._grad_fn
            if nb is None:
                nb = b._accumulator()
            elif type(nb) is InvalidGradFn:
                nb.fail()
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
                if type(fn) is InvalidGradFn:
                    fn.fail()
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
    for name, how, index in plan:
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
            saved[name] = extras[name] if isinstance(extras[name], Tensor) else Tensor._make(extras[name])
            frees = True                # (a tensor the forward made, max's indices: freed by backward, as ATen's)
        elif how == _SHAPE_OF:
            saved[name] = ts[index]._data.shape
        elif how == _DTYPE_OF:
            saved[name] = ts[index]._dtype
        elif how == _COLUMN_MAJOR_OF:
            saved[name] = _column_major(ts[index]._data)
        elif name.endswith("_shape"):
            key = name[:-6]
            if op.variadic and key == op.inputs[0]:
                saved[name] = [t._data.shape for t in ts]
            else:
                saved[name] = ts[op.inputs.index(key)]._data.shape
        elif name.endswith("_dtype"):
            saved[name] = ts[op.inputs.index(name[:-6])]._dtype
        elif name.endswith("_column_major"):
            saved[name] = _column_major(ts[op.inputs.index(name[:-13])]._data)
        elif op.optional(name):
            continue
        else:
            raise KeyError(f"formula of {op.name} reads unknown name {name!r}")
    if params:
        for name in op._params_read.intersection(params):   # the call's scalars, needed or not (as PyTorch's node)
            if name not in saved:
                saved[name] = params[name]
    result._requires_grad = True
    result._grad_fn = node = (Node if op.outputs is None else MultiOutputNode)(op, next_nodes, saved, meta, frees)
    if params:
        node._params = params           # its scalars outlive the freed tensors (saved_attributes.py)


def _column_major(a) -> bool:
    """Whether a matrix is laid out column by column (ATen's mm backward reads the input's strides)."""
    return a.ndim == 2 and a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize


# ---------------------------------------------------------------- views
# A view op's output shares its input's memory and version counter, and is a *differentiable
# view* of the root base (``_base``). When the base or any view of it is changed in place, the
# views' histories no longer describe their values: PyTorch then gives each view a new grad_fn,
# ``AsStridedBackward0`` (the view taken afresh from the base's current history), and an in-place
# op on a view gives the base a ``CopySlices`` node wrapping the op's node. PyTorch regenerates a
# view's grad_fn when it is next read; here the views of a version counter are refreshed when the
# counter moves (``bump_version``), so the engine's hot paths read ``_grad_fn`` and
# ``_requires_grad`` as they are.
_new_ref = _weakref.ref

_NO_GRAD, _MULTI_OUTPUT = 1, 2          # PyTorch's CreationMeta (a view made the default way has none)


class ViewMeta:
    """How a view was created, when that restricts in-place changes (PyTorch's CreationMeta): under
    no_grad, or as one output of a function returning several views (unbind, split, chunk: share_node)."""

    __slots__ = ("creation", "output_nr")

    def __init__(self, creation: int, output_nr: int = 0):
        self.creation = creation
        self.output_nr = output_nr

    @property
    def created_without_grad(self) -> bool:
        return self.creation == _NO_GRAD


_NO_GRAD_VIEW = ViewMeta(_NO_GRAD)
_MULTI_OUTPUT_VIEW = ViewMeta(_MULTI_OUTPUT)


class _ViewRegistry:
    """The live differentiable views of one version counter (weak references, pruned as they die)."""

    __slots__ = ("refs", "limit")

    def __init__(self):
        self.refs = []
        self.limit = 16

    def prune(self):
        refs = self.refs
        refs[:] = [r for r in refs if r() is not None]
        self.limit = max(16, 2 * len(refs))

    def live(self):
        """The views still alive (the dead ones are dropped, so the next change looks at fewer)."""
        refs = self.refs
        views = [r() for r in refs]
        if any(v is None for v in views):
            refs[:] = [r for r, v in zip(refs, views) if v is not None]
            views = [v for v in views if v is not None]
        return views


def _link_view(view: Tensor, base: Tensor):
    """Make ``view``, a view op's output over ``base``, a differentiable view of base's root."""
    vc = base._version_counter
    view._version_counter = vc
    root = base._base
    if root is None:
        root = base
    else:
        meta = base._view_meta
        if meta is not None:     # a view of a restricted view is restricted the same way
            view._view_meta = _NO_GRAD_VIEW if meta.creation == _NO_GRAD else _MULTI_OUTPUT_VIEW
    view._base = root
    data = view._data
    if not PERMUTED[0] and data.ndim > 1 and not data.flags.c_contiguous and not row_major_ordered(data):
        PERMUTED[0] = True                           # a transposed view, say (result_layout.note)
    if not _grad_enabled.get():
        view._view_meta = _NO_GRAD_VIEW
        if root._requires_grad:
            view._requires_grad = True     # PyTorch: a view requires grad when its base does
    if len(vc) == 1:
        vc.append(_ViewRegistry())
    registry = vc[1]
    refs = registry.refs
    refs.append(_new_ref(view))
    if len(refs) > registry.limit:
        registry.prune()


def share_node(op: Op, args, params, outputs, views: bool = False):
    """Give the ``outputs`` of a multi-output op ONE node, of ``op`` (an entry with ``outputs=``), as
    PyTorch records it (``a, b = x.unbind(0)``: ``a.grad_fn is b.grad_fn``, output numbers 0 and 1).
    The outputs were computed by their own entries (which vmap and forward-mode AD know); their nodes
    are replaced here. ``views``: the outputs are views, which PyTorch forbids changing in place."""
    if not _grad_enabled.get():
        return outputs
    if views:
        for i, v in enumerate(outputs):
            if v._base is not None and v._view_meta is None:
                v._view_meta = ViewMeta(_MULTI_OUTPUT, i)
    if not all(type(o) is Tensor for o in outputs) or not any(o._grad_fn is not None for o in outputs):
        return outputs          # nothing recorded (or, under vmap, batched outputs: each keeps its node)
    ts = tuple(a if type(a) is Tensor else wrap(a) for a in args)
    named = {name: k for k, name in enumerate(() if op.outputs == "*" else op.outputs) if name}
    first = outputs[0]
    _record(op, ts, params, first, {name: outputs[k] for name, k in named.items()})
    node = first._grad_fn
    node._outputs = tuple((o._data.shape, o._dtype) for o in outputs)
    for k in range(1, len(outputs)):
        o = outputs[k]
        o._grad_fn = OutputEdge(node, k, node._outputs[k])
        o._requires_grad = True
    for name, k in named.items():
        if name in node._saved:
            # output 0 is kept as a result is; a later one keeps its edge (its history when unpacked)
            node._saved[name] = SavedTensor(outputs[k], is_output=k == 0, producer=op.node)
            node._frees = True
    return outputs


def bump_version(t: Tensor, keep: Tensor | None = None):
    """Count an in-place change of ``t``'s memory, and give the views sharing it their new histories
    (all but ``keep``, whose history the caller has just set)."""
    vc = t._version_counter
    vc[0] += 1
    if len(vc) > 1:
        _refresh_views(vc, t, keep)


def _refresh_views(vc, t: Tensor, keep):
    views = vc[1].live()
    if not views:               # (the views of a parameter's forward, say, died with their graph)
        return
    as_strided = _D().as_strided
    edges = {}                  # per root base (usually one): its edge, computed once per change
    for v in views:
        if v is not keep:
            _refresh_view(v, v is t, as_strided, edges)


def _refresh_view(view: Tensor, direct: bool, as_strided, edges):
    """PyTorch's regeneration of a view's grad_fn after its memory changed in place (``direct``: by an
    op on the view itself)."""
    base = view._base
    if view._grad_fn is None and not base._requires_grad:
        return
    meta = view._view_meta
    if meta is not None:
        view._grad_fn = InvalidGradFn(_view_rebase_message(view, meta, indirect=True))
        view._requires_grad = True
        return
    edge = edges.get(id(base), edges)
    if edge is edges:
        edge = edges[id(base)] = _edge(base)
    data = base._data
    saved = {"self_shape": data.shape, "geometry": ViewGeometry(data, view._data)}
    old = view._grad_fn
    if not direct and type(old) is Node:
        # PyTorch regenerates a view's grad_fn only when it is next read, so until then the old node lives
        # on (an in-place error may name it, see InplaceViewResult): keep it alive as long as the new one
        saved["replaced"] = old._saved.get("replaced", old) if old._op is as_strided else old
    _set_grad_fn(view, Node(as_strided, [edge], saved, [(data.shape, base._dtype)], False))


def strided_view_of(base: Tensor, geometry: "ViewGeometry") -> Tensor:
    """A view of ``base`` (contiguous) over the positions of ``geometry``, as ``base.as_strided(...)``
    makes it: sharing its memory and version counter, with an AsStridedBackward0 history; None where
    the positions are no sizes-and-strides geometry."""
    index = geometry.index()
    if not index.size:
        return None
    start = int(index.flat[0])
    steps = [int(index[(0,) * k + (1,) + (0,) * (index.ndim - k - 1)]) - start if n > 1 else 0
             for k, n in enumerate(index.shape)]
    positions = start + sum(np.arange(n).reshape((-1,) + (1,) * (index.ndim - k - 1)) * step
                            for k, (n, step) in enumerate(zip(index.shape, steps)))
    if not np.array_equal(positions, index) or min(steps, default=0) < 0:
        return None
    flat = base._data.reshape(-1)
    data = np.lib.stride_tricks.as_strided(flat[start:], index.shape, tuple(s * flat.itemsize for s in steps))
    view = Tensor._make(data, base._dtype)
    _link_view(view, base)
    _refresh_view(view, True, _D().as_strided, {})
    return view


def _set_grad_fn(t: Tensor, node):
    """Give ``t`` a new history after an in-place change; a ``retain_grad()`` follows it to the new node,
    as PyTorch moves a tensor's hooks."""
    old = t._grad_fn
    t._grad_fn = node
    t._requires_grad = True
    if old is not None and old._retains:
        _move_retains(t, old, node)


def _move_retains(t: Tensor, old, node):
    if isinstance(node, Node) and any(r() is t for r in old._retains):
        if node._retains is None:
            node._retains = []
        node._retains.append(_weakref.ref(t))


def _edge(t: Tensor):
    fn = t._grad_fn
    if fn is not None:
        return fn
    return t._accumulator() if t._requires_grad else None


def _D():
    from . import ops
    return ops


def _forward_ad():
    from . import forward_ad
    return forward_ad


_BATCHING = []       # [the batching module] once vmap has loaded it


def _batching():
    """The batch rules (batching.py): loaded by vmap, so they are in ``sys.modules`` whenever
    ``_VMAP`` is non-empty (kept here after the first call: an import statement per batched op
    cost 10 % of a vmap(grad))."""
    if not _BATCHING:
        from . import batching
        _BATCHING.append(batching)
    return _BATCHING[0]


class ViewGeometry:
    """Where a view's elements lie in its base: for each element of the view, its position in the
    base's flattened (row-major) order. This is PyTorch's as_strided geometry (sizes, strides,
    storage offset) in the form NumPy indexing takes; it is found from the two arrays' memory
    layouts, when first needed, so any chain of view ops (and ``t_()`` on either) is covered."""

    __slots__ = ("_base", "_view", "_index")

    def __init__(self, base: np.ndarray, view: np.ndarray):
        self._base = base
        self._view = view
        self._index = None

    def index(self) -> np.ndarray:
        if self._index is None:
            self._index = _positions_in(self._base, self._view)
            self._base = self._view = None
        return self._index


def _byte_offsets(a: np.ndarray, start: int) -> np.ndarray:
    off = np.full(a.shape, start, dtype=np.int64)
    for k, (n, stride) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = n
        off = off + (np.arange(n, dtype=np.int64) * stride).reshape(shape)
    return off


def _positions_in(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    offsets = _byte_offsets(view, start)
    if base.flags.c_contiguous:
        pos, rest = np.divmod(offsets, base.itemsize)
        ok = not rest.any() and (base.size == 0 or (pos.min(initial=0) >= 0 and pos.max(initial=0) < base.size))
    else:
        flat = _byte_offsets(base, 0).ravel()
        order = np.argsort(flat, kind="stable")
        ordered = flat[order]
        i = np.clip(np.searchsorted(ordered, offsets), 0, max(flat.size - 1, 0))
        ok = flat.size > 0 and bool(np.all(ordered[i] == offsets)) if offsets.size else True
        pos = order[i] if flat.size else np.zeros(offsets.shape, np.int64)
    if not ok:
        pos = _storage_positions(base, view)
    return pos.astype(np.int64, copy=False)


def _storage_positions(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """The view's positions in its own memory block, read as positions in the base's: what PyTorch's
    as_strided does when the base's ``.data`` was replaced after the view was made (the view keeps
    the old storage, its offset and strides are applied to the new one)."""
    owner = view
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    start = view.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    pos, rest = np.divmod(_byte_offsets(view, start), view.itemsize)
    if rest.any() or not base.flags.c_contiguous or (pos.size and (pos.min() < 0 or pos.max() >= base.size)):
        raise errors.RuntimeError("a view changed in place lies outside its base, whose memory was replaced "
                                  "(.data = ...) after the view was made; gradexpr cannot relate their histories")
    return pos


def _view_rebase_message(view: Tensor, meta: ViewMeta, indirect: bool) -> str:
    """PyTorch's refusal (handle_view_on_rebase) of an in-place change that reaches a restricted view."""
    from .graph import short_node_name
    fn = view._grad_fn
    if type(fn) is InvalidGradFn:
        fn = None
    modified = "its base or another view of its base has been" if indirect else "is being"
    if meta.creation == _NO_GRAD or fn is None:
        prefix = (f"Output {meta.output_nr} of {short_node_name(fn.name())} is a view of a view which was "
                  "created in" if fn is not None else "A view was created in")
        msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {meta.output_nr} of {short_node_name(fn.name())} is a view and {modified} modified inplace."
    if meta.creation == _MULTI_OUTPUT:
        msg += (" This view is the output of a function that returns multiple views. Such functions do not allow "
                "the output views to be modified inplace. You should replace the inplace operation by an "
                "out-of-place one.")
    else:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
                "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    return msg
