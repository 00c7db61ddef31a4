"""``torch.autograd.Function``: operations whose forward and backward a program writes itself.

``Fn.apply(*args)`` runs ``Fn.forward`` with grad mode off and records ONE graph node, an
instance of ``FnBackward`` (made once per Function class, named as PyTorch names it). As in
PyTorch the node is also the ``ctx`` the forward and backward receive, so what the forward
stores on it (``ctx.k = 3``, ``save_for_backward``) is what backward and the program read on
``y.grad_fn``. The engine runs the node like any other (``Node._apply``): the gradients of its
outputs go in, the user's ``backward`` runs, and its results are checked (number, type, shape)
with PyTorch's words before they flow on.

A Function with several outputs is still one node, every output's ``grad_fn`` (``a.grad_fn is
b.grad_fn``): the node is a ``graph.MultiOutputNode``, as are built-in ops with several outputs.
"""
from __future__ import annotations

import functools
import sys

import numpy as np

from . import errors, forward_ad
from .grad_mode import VMAP_LEVELS
from .graph import _RELEASED, SECOND_BACKWARD, MultiOutputNode, Node, OutputEdge, SavedTensor, _grad_enabled
from .tensor import Tensor
from .warn import warn

_NOT_IMPLEMENTED_BACKWARD = ("You must implement either the backward or vjp method for your custom "
                             "autograd.Function to use it with backward mode AD.")
_LEGACY = ("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
           "autograd function with static forward method. (Example: "
           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")
_NEEDS_SETUP_CONTEXT = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), "
                        "it must override the setup_context staticmethod. For more details, please see "
                        "https://pytorch.org/docs/main/notes/extending.func.html")
_LEAF_DIRTY = "a leaf Variable that requires grad has been used in an in-place operation."


class _AnyPublicName:
    """``_gx_settable`` of a ctx: a program may store any public attribute on it (``ctx.k = k``)."""

    def __contains__(self, name):
        return not name.startswith("_")


class _FunctionOp:
    """The ``_op`` record of a custom node: its name, and no formulas (batched Jacobians fall back
    to running the node row by row)."""

    __slots__ = ("name", "node")
    inputs = ()

    def __init__(self, name):
        self.name = self.node = name

    def backward(self, ctx, needed):
        raise TypeError("a custom Function's backward runs only through its node")


class FunctionCtx:
    """What ``forward``/``setup_context`` may tell the node (PyTorch's FunctionCtx)."""

    _gx_exposed = True
    _gx_settable = _AnyPublicName()

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise errors.TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                       f"{type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)


class BackwardCFunction(MultiOutputNode, FunctionCtx):
    """The node of one ``Fn.apply`` call (PyTorch's class of the same name); ``FnBackward`` derives
    from it. No ``__slots__``: a ctx takes any attribute."""

    _gx_exposed = True
    _forward_cls = None
    materialize_grads = True
    to_save = None
    dirty_tensors = None
    non_differentiable = None
    _in_jvp = False

    def __init__(self):
        MultiOutputNode.__init__(self, type(self)._record, [], {}, [], False)
        self._saved_list = None     # [SavedTensor or None], what save_for_backward kept
        self._inputs = ()           # per argument: its position among the edges, or None (not a tensor)
        self.needs_input_grad = ()

    def name(self) -> str:
        return type(self)._record.node

    def type_name(self) -> str:
        return type(self)._record.node

    def __repr__(self):
        return f"<torch.autograd.function.{self.type_name()} object at {hex(id(self))}>"

    # ------------------------------------------------------------ saved tensors
    @property
    def saved_tensors(self):
        if self._in_jvp:
            return tuple(getattr(self, "saved_for_forward", ()))
        saved = self._saved_list
        if self._saved is _RELEASED:
            raise errors.RuntimeError(SECOND_BACKWARD, hint="pass retain_graph=True to the first backward()")
        if saved is None:
            return ()
        # a saved output comes back with its history: this node, or for output k >= 1 its edge
        edges = self._saved_edges
        return tuple(None if s is None else s.unpack(self if e is None else e) for s, e in zip(saved, edges))

    saved_variables = saved_tensors

    def _save(self, outputs):
        tensors = self.to_save
        self.to_save = None
        if not tensors:
            return
        producer = self.name()
        saved, edges = [], []
        for t in tensors:
            k = next((k for k, o in enumerate(outputs) if t is o), None)
            if t is None:
                saved.append(None)
            elif k is not None:
                saved.append(SavedTensor(t, is_output=True, producer=producer))
            else:
                saved.append(SavedTensor(t))
            edges.append(outputs[k]._grad_fn if k and type(outputs[k]._grad_fn) is OutputEdge else None)
        self._saved_list = saved
        self._saved_edges = edges
        self._saved = {f"saved_tensors[{i}]": s for i, s in enumerate(saved) if s is not None}
        self._frees = True

    # ------------------------------------------------------------ backward
    def _run_outputs(self, grads):
        grads = list(grads)
        for k, meta in enumerate(self._outputs):
            if grads[k] is None and self.materialize_grads and meta is not None:
                shape, dtype = meta
                grads[k] = Tensor._make(np.zeros(shape, dtype.np), dtype)
        cls = self._forward_cls
        backward = cls.backward
        if backward is Function.backward and cls.vjp is Function.vjp:
            raise errors.NotImplementedError(_NOT_IMPLEMENTED_BACKWARD)
        result = (backward if backward is not Function.backward else cls.vjp)(self, *grads)
        if type(result) is not tuple:
            result = (result,)
        n = len(self._inputs)
        if len(result) != n:
            if len(result) > n and all(g is None for g in result[n:]):
                result = result[:n]
            else:
                raise errors.RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                                          f"(expected {n}, got {len(result)})")
        out = [None] * len(self._next)
        for i, (g, edge) in enumerate(zip(result, self._inputs)):
            if g is None or edge is None:
                continue
            if not isinstance(g, Tensor):
                raise errors.RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if self._next[edge] is None:
                continue
            shape, dtype = self._meta[edge]
            if g._data.shape != shape:
                if not _expandable(shape, g._data.shape):
                    raise errors.RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index {i} - got "
                        f"{list(g._data.shape)} but expected shape compatible with {list(shape)}")
                g = g.sum_to_size(shape)
            if g._dtype is not dtype:
                g = g.to(dtype)
            out[edge] = g
        return out


def _expandable(shape, desired) -> bool:
    """Whether a tensor of ``shape`` broadcasts to ``desired`` (PyTorch's is_expandable_to)."""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


class _FunctionMeta(type):
    """Gives each Function class its node class, ``<Name>Backward`` (as PyTorch's FunctionMeta)."""

    def __init__(cls, name, bases, namespace):
        record = _FunctionOp(f"{name}Backward")
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "_record": record,
                                  "__module__": "torch.autograd.function"})
        super().__init__(name, bases, namespace)


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Base of a program's custom autograd operation: static ``forward`` and ``backward``."""

    _gx_exposed = True

    def __init__(self, *args, **kwargs):
        warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so you "
             "should invoke them on the class itself. Instantiating an autograd function will raise an error in a "
             "future version of PyTorch.", DeprecationWarning)

    def __call__(self, *args, **kwargs):
        raise errors.RuntimeError(_LEGACY)

    @staticmethod
    def forward(*args, **kwargs):
        raise errors.NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise errors.NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise errors.NotImplementedError(_NOT_IMPLEMENTED_BACKWARD)

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise errors.NotImplementedError("You must implement the jvp function for custom autograd.Function "
                                         "to use it with forward mode AD.")

    # under torch.vmap: a vmap rule of the Function's own, or one made from its forward/backward
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise errors.NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                         "staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        return _apply(cls, args, kwargs)


Function.__module__ = "torch.autograd.function"
FunctionCtx.__module__ = "torch.autograd.function"
BackwardCFunction.__module__ = "torch.autograd.function"


def _apply(cls, args, kwargs):
    if cls.forward is Function.forward:
        raise errors.NotImplementedError("You must implement the forward function for custom autograd.Function.")
    if cls.setup_context is Function.setup_context and (_in_func_transform() or VMAP_LEVELS):
        raise errors.RuntimeError(_NEEDS_SETUP_CONTEXT)
    if VMAP_LEVELS:
        from .autograd_function_vmap import apply_under_vmap
        return apply_under_vmap(cls, args, kwargs, lambda run_forward=None: _apply_and_record(cls, args, kwargs,
                                                                                              run_forward))
    return _apply_and_record(cls, args, kwargs)


def _apply_and_record(cls, args, kwargs, run_forward=None):
    """Run the forward with grad mode off and record the node (when an input needs a gradient);
    ``run_forward()``, when given, computes the outputs instead of ``cls.forward`` (a vmap rule)."""
    ctx = cls._backward_cls()
    needs, inputs, next_nodes, meta = [], [], [], []
    for a in args:
        if type(a) is Tensor or isinstance(a, Tensor):
            inputs.append(len(next_nodes))
            if a._requires_grad or a.requires_grad:
                fn = a._grad_fn
                if fn is not None and not isinstance(fn, Node):
                    fn.fail()          # an invalid view's history
                next_nodes.append(fn if fn is not None else a._accumulator())
                needs.append(next_nodes[-1] is not None)
            else:
                next_nodes.append(None)
                needs.append(False)
            meta.append((a._data.shape, a._dtype))
        else:
            inputs.append(None)
            needs.append(False)
    recording = _grad_enabled.get() and any(needs)
    ctx.needs_input_grad = tuple(needs) if recording else (False,) * len(needs)
    ctx._inputs = tuple(inputs)
    level = forward_ad.ACTIVE[:] if forward_ad.ACTIVE else None
    tangents = _input_tangents(args) if level else None
    token = _grad_enabled.set(False)
    if level:
        forward_ad.ACTIVE.clear()       # the forward's own ops carry no tangents: jvp gives the output's
    own_setup = cls.setup_context is not Function.setup_context
    try:
        if run_forward is not None:
            output = run_forward()
        elif not own_setup:
            output = cls.forward(ctx, *args, **kwargs) if kwargs else cls.forward(ctx, *args)
        else:
            output = cls.forward(*args, **kwargs)
    finally:
        if level:
            forward_ad.ACTIVE[:] = level
        _grad_enabled.reset(token)
    if own_setup:
        cls.setup_context(ctx, args, output)
    outputs = output if type(output) is tuple else (output,)
    if not recording:
        ctx.to_save = None
        wrapped = outputs
    else:
        ctx._next = next_nodes
        ctx._meta = meta
        wrapped = _attach_outputs(ctx, args, outputs)
        ctx._save(wrapped)
    if tangents is not None:
        _forward_tangents(cls, ctx, tangents, wrapped)
    return tuple(wrapped) if type(output) is tuple else wrapped[0]


def _in_func_transform() -> bool:
    """Whether a ``torch.func`` transform (grad, vjp, jvp, jacrev, jacfwd) is running."""
    func = sys.modules.get("gradexpr.func")
    return func is not None and func._depth[0] > 0


def _input_tangents(args):
    """Each argument's tangent at the open dual level (zeros for a tensor without one, None for a
    non-tensor), or None when no argument has one."""
    tangents, any_tangent = [], False
    for a in args:
        t = forward_ad.tangent_of(a) if isinstance(a, Tensor) else None
        if t is not None:
            any_tangent = True
        elif isinstance(a, Tensor):
            t = Tensor._make(np.zeros(a._data.shape, a._dtype.np), a._dtype)
        tangents.append(t)
    return tangents if any_tangent else None


def _forward_tangents(cls, ctx, tangents, outputs):
    """Forward-mode AD through the Function: ``jvp(ctx, *input_tangents)`` gives the outputs' tangents
    (``ctx.saved_tensors`` reads what ``save_for_forward`` kept)."""
    if cls.jvp is Function.jvp:
        raise errors.NotImplementedError("You must implement the jvp function for custom autograd.Function "
                                         "to use it with forward mode AD.")
    level = forward_ad.ACTIVE[:]
    forward_ad.ACTIVE.clear()
    ctx._in_jvp = True
    try:
        result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
        forward_ad.ACTIVE[:] = level
    results = result if type(result) is tuple else (result,)
    if len(results) != len(outputs):
        raise errors.RuntimeError(f"{ctx.name()}: jvp returned an incorrect number of tangents "
                                  f"(expected {len(outputs)}, got {len(results)})")
    for o, t in zip(outputs, results):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and o._dtype.is_floating_point:
            forward_ad.set_tangent(o, t)


def _is_one_of(value, objects) -> bool:
    """Whether ``value`` is one of ``objects`` (by identity: ``in`` would compare tensors elementwise)."""
    for x in objects:
        if x is value:
            return True
    return False


def _attach_outputs(ctx, args, outputs):
    """Give the outputs the node as history (PyTorch's _wrap_outputs): dirty inputs are changed
    in place, non-differentiable outputs stay without history, an input returned as it is comes
    back as a new alias."""
    dirty = ctx.dirty_tensors or ()
    non_diff = ctx.non_differentiable or ()
    wrapped = []
    metas = []
    for k, o in enumerate(outputs):
        if type(o) is not Tensor and not isinstance(o, Tensor):
            wrapped.append(o)
            metas.append(None)
            continue
        if dirty and _is_one_of(o, dirty):
            if o._grad_fn is None and o._requires_grad:
                raise errors.RuntimeError(_LEAF_DIRTY)
            o._version_counter[0] += 1
        elif _is_one_of(o, args):
            o = o._detached_alias()
        out_meta = (o._data.shape, o._dtype)
        metas.append(out_meta)      # (a non-differentiable output's gradient is materialized too)
        if non_diff and (_is_one_of(o, non_diff) or _is_one_of(outputs[k], non_diff)) \
                or not o._dtype.is_floating_point:
            o._requires_grad = o._requires_grad and o._grad_fn is not None
            wrapped.append(o)
            continue
        if k == 0:
            o._grad_fn = ctx
        else:
            o._grad_fn = OutputEdge(ctx, k, out_meta)
        o._requires_grad = True
        wrapped.append(o)
    ctx._outputs = tuple(metas)
    return wrapped


# ---------------------------------------------------------------- once_differentiable
_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError:
    """Op record of PyTorch's ``Error`` node: a gradient made by a once-differentiable backward
    under create_graph, whose own backward refuses to run."""

    name = node = "torch::autograd::Error"
    inputs = ()

    @staticmethod
    def backward(ctx, needed):
        raise errors.RuntimeError(_TWICE)


def once_differentiable(fn):
    """Run ``backward`` without recording; its results, when a graph was asked for, fail if
    differentiated (PyTorch's decorator of the same name)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        token = _grad_enabled.set(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            _grad_enabled.reset(token)
        if not _grad_enabled.get():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # as PyTorch: each output is detached, made to require grad, and passed through the Error node
        leaves = []
        for o in outs:
            if isinstance(o, Tensor):
                leaf = o._detached_alias()
                leaf._requires_grad = True
                leaves.append(leaf)
        node = Node(_DelayedError, [leaf._accumulator() for leaf in leaves], {},
                    [(leaf._data.shape, leaf._dtype) for leaf in leaves], False)
        results = []
        for o in outs:
            if isinstance(o, Tensor):
                o = o._detached_alias()
                o._requires_grad = True
                o._grad_fn = node
            results.append(o)
        return results[0] if single else tuple(results)
    return wrapper

