"""The autograd graph and the backward engine.

A ``Node`` is one recorded operation: its PyTorch name, edges to the nodes that
produced its inputs (``next_functions``), the tensors its backward formula needs
(saved with their version, so a later in-place change is caught), and the op whose
formulas compute input gradients. ``AccumulateGrad`` is the node of a leaf.

The engine knows no individual op: it walks the graph iteratively in PyTorch's
order (ready nodes by decreasing sequence number), sums gradients per input, reduces
broadcast gradients to each input's shape, frees saved tensors unless
``retain_graph``, and runs the formulas with grad mode on when ``create_graph``.
"""
from __future__ import annotations

import contextvars
import itertools
import weakref

from . import errors
from .forward_ad import ACTIVE as _DUAL_LEVEL, copy_tangent

# grad mode and inference mode live in grad_mode.py; the engine and the rest of gradexpr read them here too
from .grad_mode import (INFERENCE, InferenceVersion, _grad_enabled, _GradMode,  # noqa: F401
                        _inference_mode, _set_grad_enabled, check_not_inference, enable_grad,
                        inference_mode, is_grad_enabled, is_inference_mode_enabled, mark_inference,
                        no_grad, set_grad_enabled)
from .grad_mode import _SAVED_INFERENCE
from .grad_ownership import SOLE_LOCAL, STEAL_MIN, add_into, held_by, owns_memory, refs
from .zero_tensor import LIVE as ZERO_TENSORS, check_mutable, is_zero
from .ready_queue import LEAF_SEQ, ready_pop, ready_push


# ---------------------------------------------------------------- anomaly mode
# (enabled, check_nan): set by torch.autograd.detect_anomaly / set_detect_anomaly (gradexpr/anomaly.py).
# While enabled, backward leaves its fast path and checks every node's gradients for NaN.
_anomaly: contextvars.ContextVar[tuple] = contextvars.ContextVar("anomaly_mode", default=(False, True))


def is_anomaly_enabled() -> bool:
    return _anomaly.get()[0]


def is_anomaly_check_nan_enabled() -> bool:
    return _anomaly.get()[1]


def _check_nan(node, grads):
    from numpy import isnan
    for i, g in enumerate(grads):
        if g is not None and g._dtype.is_floating_point and isnan(g._data).any():
            raise with_origin(errors.RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                                                  "output."), node)


def with_origin(err, node):
    """``err`` with a note naming where the forward recorded ``node`` (see gradexpr/origin.py)."""
    if getattr(node, "_origin", None) is not None:
        from .origin import note_for
        err.origin = note_for(node)
    return err


# ---------------------------------------------------------------- saved tensors
_TYPE_STRING = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
                "int64": "torch.LongTensor", "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
                "int8": "torch.CharTensor", "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor"}

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


# The messages of the blocks in which saved-tensor hooks may not be registered, innermost last: a
# program's disable_saved_tensors_hooks and the reverse-mode torch.func transforms (saved_hooks.py,
# func.py). Here, not in saved_hooks.py, so that a transform can refuse hooks without loading it.
SAVED_HOOKS_DISABLED: list = []


class SavedTensor:
    """A tensor kept for backward, with the version it had, as PyTorch's SavedVariable."""

    __slots__ = ("tensor", "version", "producer", "is_output", "hooks")

    def __init__(self, tensor, is_output: bool = False, producer=None):
        # An output is stored without its grad_fn (no reference cycle); it is re-attached on unpack.
        # ``producer`` (named in the in-place error) is the saving op's node name for an output; for
        # an input the error names the tensor's grad_fn at the time of the error, as PyTorch does
        # (after ``y.add_(1)`` that is AddBackward0, after a write through a view CopySlices).
        self.is_output = is_output
        self.producer = producer if is_output else None
        vc = tensor._version_counter
        if type(vc) is not list and type(vc) is InferenceVersion:
            raise errors.RuntimeError(_SAVED_INFERENCE)
        self.tensor = tensor._detached_alias() if is_output else tensor
        self.version = vc[0]

    def unpack(self, node):
        t = self.tensor
        if t._version_counter[0] != self.version:
            shape = "[" + ", ".join(str(s) for s in t._data.shape) + "]"
            msg = ("one of the variables needed for gradient computation has been modified by an inplace "
                   f"operation: [{_TYPE_STRING[t._dtype.name]} {shape}]")
            producer = self.producer if self.is_output else t._grad_fn
            if producer is not None:
                name = producer if type(producer) is str else producer.name()
                msg += f", which is output 0 of {short_node_name(name)},"
            msg += (f" is at version {t._version_counter[0]}; expected version {self.version} instead. Hint: "
                    "enable anomaly detection to find the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True, check_nan=False).")
            raise with_origin(errors.RuntimeError(msg, hint="a tensor saved for backward was changed in place; "
                                                            "use an out-of-place op (y = y * 3 instead of y.mul_(3))"),
                              node)
        if self.is_output and _grad_enabled.get():
            u = t._with_grad_fn(node)
            if _DUAL_LEVEL:
                copy_tangent(t, u)      # forward-over-reverse: a saved output keeps its tangent
            return u
        return t


class SavedTensors(tuple):
    """The saved inputs of a variadic op (``cat``, ``stack``)."""


class InplaceViewResult:
    """The ``producer`` of a saved result of an in-place op on a view (``v.exp_()``): PyTorch's error names
    the view's grad_fn of that moment while it lives (it is held weakly), else the op's own node."""

    __slots__ = ("view_grad_fn", "node_name")

    def __init__(self, view_grad_fn, node_name: str):
        self.view_grad_fn = weakref.ref(view_grad_fn) if isinstance(view_grad_fn, Node) else None
        self.node_name = node_name

    def name(self) -> str:
        fn = None if self.view_grad_fn is None else self.view_grad_fn()
        return self.node_name if fn is None else fn.name()


def short_node_name(name: str) -> str:
    """A node's name as PyTorch's error messages write it: ``AddBackward0`` -> ``Add``,
    ``SumBackward1`` -> ``Sum1``; names without the suffix (``torch::autograd::CopySlices``) as they are."""
    head, found, number = name.rpartition("Backward")
    if not found or not (number == "" or number.isascii() and number.isdigit()):
        return name
    return head + ("" if number in ("0", "") else number)


_RELEASED = object()
_sequence = itertools.count()


# ---------------------------------------------------------------- nodes
NOT_IMPLEMENTED_NODE = "torch::autograd::NotImplemented"
# C++ nodes that PyTorch binds to no Python class: their type is CppFunction (a tensor prints the name's tail)
UNBOUND_NODES = frozenset(("torch::autograd::Identity",))


# Where the program's forward is: (filename, statement) of the statement running, published by the
# interpreter; a node keeps it as its origin, which errors of backward name in a note.
forward_site = [None]


class Node:
    """One recorded op. ``_next[i]`` is the node that receives input i's gradient (None: no grad)."""

    _gx_exposed = True
    # (``_params``, set by op.py's record when the call had parameters: what ``_saved_*`` still shows
    # once backward has freed the saved tensors)
    __slots__ = ("_op", "_next", "_saved", "_meta", "_seq", "_retains", "_frees", "_origin", "_params", "__weakref__")

    def __init__(self, op, next_nodes, saved, meta, frees=None):
        self._origin = forward_site[0]
        self._op = op
        self._next = next_nodes
        self._saved = saved
        self._meta = meta          # per input: (shape, dtype) for reducing and casting its gradient
        self._seq = next(_sequence)
        self._retains = None
        # whether ``saved`` holds tensors, which backward frees (a node without, ``x + 1``, can run again)
        self._frees = frees if frees is not None else any(
            type(v) is SavedTensor or type(v) is SavedTensors for v in saved.values())

    def name(self) -> str:
        return self._op.node

    def type_name(self) -> str:
        """The name of the node's Python class in PyTorch, which ``repr`` and tensor printing show:
        ``name()`` without its C++ namespace (``torch::autograd::CopySlices`` prints as ``CopySlices``)."""
        name = self._op.node
        if name in UNBOUND_NODES:
            return "CppFunction"
        i = name.rfind("::")
        return name if i < 0 else name[i + 2:]

    @property
    def next_functions(self):
        op = self._op
        if op.node == NOT_IMPLEMENTED_NODE:
            # PyTorch's fallback node has edges only to the inputs that require grad
            return tuple(_edge(n) for n in self._next if n is not None)
        edges = self._edge_mask()
        absent = ((None, 0),) * getattr(op, "absent_edges", 0)
        if edges is None:
            return tuple(_edge(n) for n in self._next) + absent
        return tuple(_edge(n) for n, e in zip(self._next, edges) if e) + absent

    def _edge_mask(self):
        """Which of ``_next`` PyTorch lists in next_functions (None: all)."""
        edges = getattr(self._op, "edges", None)
        if edges is None or len(edges) != len(self._next):
            return None
        return edges

    @property
    def metadata(self):
        return {}

    # ``_saved_<name>`` / ``_raw_saved_<name>``: what the node saved, under the names of its formulas'
    # parameters (the interpreter lets programs read these underscored names on nodes)
    _gx_saved_attributes = True

    def __getattr__(self, name):
        if name.startswith("_saved_"):
            from .saved_attributes import saved_value
            return saved_value(self, name[7:], name)
        if name.startswith("_raw_saved_"):
            from .saved_attributes import raw_saved_value
            return raw_saved_value(self, name[11:], name)
        raise AttributeError(name)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node runs; a tuple it returns replaces grad_inputs."""
        from .hooks import node_hooks
        return node_hooks(self).add("post", fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the node runs; a tuple it returns replaces grad_outputs."""
        from .hooks import node_hooks
        return node_hooks(self).add("pre", fn)

    def __repr__(self):
        return f"<{self.type_name()} object at {hex(id(self))}>"

    def _unpack(self):
        saved = self._saved
        if saved is _RELEASED:
            raise errors.RuntimeError(SECOND_BACKWARD, hint="pass retain_graph=True to the first backward()")
        ctx = {}
        for k, v in saved.items():
            tv = type(v)
            if tv is SavedTensor:
                ctx[k] = v.unpack(self)
            elif tv is SavedTensors:
                ctx[k] = [x.unpack(self) for x in v]
            else:
                ctx[k] = v
        return ctx

    def _release(self):
        if self._frees:
            self._saved = _RELEASED

    def _apply(self, grad):
        """Gradients for each input (None where not needed), reduced to the input's shape and dtype."""
        return self._input_grads(grad, self._next)

    def _input_grads(self, grad, needed):
        """``_apply`` for the inputs flagged in ``needed`` (truthy where wanted): those with an edge
        (``_next`` itself is the mask: a node or None), or, for CopySlices running the node of the
        in-place op it wraps (not in the graph itself), those it asks for."""
        ctx = self._unpack()
        ctx["grad"] = grad
        grads = self._op.backward(ctx, needed)
        out = []
        for g, need, (shape, dtype) in zip(grads, needed, self._meta):
            if not need or g is None:
                out.append(None)
                continue
            if g._data.shape != shape:
                g = g.sum_to_size(shape)
            if g._dtype is not dtype:
                g = g.to(dtype)
            out.append(g)
        return out


class MultiOutputNode(Node):
    """A node with several outputs, as PyTorch records ``unbind``, ``split``, ``aminmax`` … and a
    custom Function: every output's ``grad_fn`` is this node (``a.grad_fn is b.grad_fn``). Inside the
    engine output 0 reaches it directly and output k >= 1 through an ``OutputEdge`` that hands its
    gradient over (``_pending``), so the engine keeps its one gradient per node; when the node runs,
    its formulas read ``grad`` as the tuple of all the outputs' gradients (None for one that got none)."""

    __slots__ = ("_pending", "_outputs")

    def __init__(self, op, next_nodes, saved, meta, frees=None):
        Node.__init__(self, op, next_nodes, saved, meta, frees)
        self._pending = None        # output number -> gradient, handed over by the OutputEdges
        self._outputs = ()          # per output: (shape, dtype), None for one that is not a tensor

    def _take_grad_outputs(self, grad) -> tuple:
        """The gradients of all the outputs: ``grad`` (output 0's, the engine's) and those the
        outputs' edges handed over (None for an output that got none)."""
        grads = [grad] + ([None] * (len(self._outputs) - 1))
        if self._pending:
            for k, g in self._pending.items():
                grads[k] = g
            self._pending = None
        return tuple(grads)

    def _apply(self, grad):
        return self._run_outputs(self._take_grad_outputs(grad))

    def _run_outputs(self, grads):
        """Input gradients from the tuple of the outputs' gradients (a custom Function overrides it)."""
        return self._input_grads(grads, self._next)

    def _apply_batched(self, grad):
        """``_apply`` for a batch of cotangent rows (batched Jacobians): the node runs once per row,
        and the rows' gradients are stacked."""
        from .functions import stack
        from .tensor import Tensor
        from numpy import zeros
        grads = self._take_grad_outputs(grad)
        m = next(g._data.shape[0] for g in grads if g is not None)
        rows = [self._run_outputs(tuple(None if g is None else g[i] for g in grads)) for i in range(m)]
        out = []
        for k, (nxt, meta) in enumerate(zip(self._next, self._meta)):
            column = [r[k] for r in rows]
            if nxt is None or all(g is None for g in column):
                out.append(None)
                continue
            shape, dtype = meta
            out.append(stack([g if g is not None else Tensor._make(zeros(shape, dtype.np), dtype)
                              for g in column], 0))
        return out


def _edge(node):
    """A ``next_functions`` entry: the node and the number of its output the edge reads."""
    if node is None:
        return (None, 0)
    if type(node) is OutputEdge:
        return (node._fn, node._k)
    return (node, 0)


def shown_node(node):
    """The node a program (and gradexpr's graph views) sees for ``node``: a multi-output node for
    the edge of one of its outputs, else the node itself."""
    return node._fn if type(node) is OutputEdge else node


def output_nr(t) -> int:
    """``Tensor.output_nr``: which output of its grad_fn the tensor is (0 for a leaf)."""
    fn = t._grad_fn
    return fn._k if type(fn) is OutputEdge else 0


class OutputEdge(Node):
    """The engine-side grad_fn of output k >= 1 of a ``MultiOutputNode``: it hands its gradient to
    that node (which must run once, with all of them). Programs never see it: ``Tensor.grad_fn`` and
    ``next_functions`` show the node and the output number."""

    __slots__ = ("_fn", "_k")

    def __init__(self, fn, k, meta):
        Node.__init__(self, fn._op, [fn], {}, [meta], False)
        self._fn = fn
        self._k = k

    def name(self):
        return self._fn.name()

    def type_name(self):
        return self._fn.type_name()

    def __repr__(self):
        return repr(self._fn)

    @property
    def next_functions(self):
        return self._fn.next_functions

    def __getattr__(self, name):
        return getattr(self._fn, name)

    def _apply(self, grad):
        fn = self._fn
        if fn._pending is None:
            fn._pending = {}
        old = fn._pending.get(self._k)
        fn._pending[self._k] = grad if old is None else old + grad
        return [None]

    _apply_batched = _apply         # a batch of rows is handed over whole


class CopySlices(Node):
    """PyTorch's CopySlices: the node a base gets when one of its views is changed in place (made by
    ``op.write_inplace``; its op record, with the backward, is ``derivatives.copy_slices``). Its edges
    are the base's old history and the in-place op's other inputs; which of those PyTorch lists in
    next_functions follows the op's node (``edges``), fixed when made since backward frees ``fn``."""

    __slots__ = ("_edges",)

    def __init__(self, op, next_nodes, saved, meta, frees, edges):
        super().__init__(op, next_nodes, saved, meta, frees)
        self._edges = edges

    def _edge_mask(self):
        return self._edges


class InvalidGradFn:
    """The grad_fn of a view whose history can no longer be told: one created in no_grad mode, or
    one of several outputs of unbind/split, whose base (or another view of it) was then changed in
    place. PyTorch raises ``message`` whenever such a view's grad_fn is read (by an op, by
    ``.grad_fn``, by backward); printing the view shows ``grad_fn=<Invalid>``."""

    __slots__ = ("message",)
    _next = ()
    _meta = ()
    _saved = None
    _retains = None

    def __init__(self, message: str):
        self.message = message

    def type_name(self) -> str:
        return "Invalid"

    def fail(self):
        raise errors.RuntimeError(self.message)

    # Reading the view's grad_fn fails; tools that walk the graph from ``_grad_fn`` (gradexpr graph)
    # see a node without edges, named as printing names it.
    def name(self) -> str:
        return "Invalid"

    @property
    def next_functions(self):
        return ()


class AccumulateGrad:
    """The node of a leaf that requires grad: adds incoming gradients to ``leaf.grad``. It holds the
    leaf; the leaf holds it weakly (``Tensor._accumulator``), so it lives as long as a graph does."""

    _gx_exposed = True
    __slots__ = ("variable", "_seq", "_retains", "__weakref__")
    _next = ()

    def __init__(self, variable):
        self.variable = variable
        self._seq = LEAF_SEQ        # first among ready nodes, as PyTorch's (its sequence_nr is UINT64_MAX)
        self._retains = None         # NodeHooks once a hook is registered (a leaf retains its grad anyway;
                                     # its own hooks are the tensor's, hooks.LeafHooks)

    # a leaf's node saves nothing: ``_saved_*`` names fail in PyTorch's words, not the interpreter's refusal
    _gx_saved_attributes = True

    def __getattr__(self, name):
        if name.startswith(("_saved_", "_raw_saved_")):
            raise errors.AttributeError(f"'AccumulateGrad' object has no attribute '{name}'")
        raise AttributeError(name)

    register_hook = Node.register_hook
    register_prehook = Node.register_prehook

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    @property
    def metadata(self):
        return {}

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"

    def _release(self):
        pass

    def _accumulate(self, grad, create_graph: bool, owned: bool = False):
        accumulate_into(self.variable, grad, create_graph, owned)


class _Copy:
    """Op record for the ``CopyBackwards`` node PyTorch gives a leaf's grad under create_graph."""

    node = "torch::autograd::CopyBackwards"

    @staticmethod
    def backward(ctx, needed):
        return [ctx["grad"]]


# [True] while torch.autograd.enforce_grad_layout_policy(False) lets a gradient the engine alone holds
# become a leaf's .grad whatever its layout (grad_layout.py), which the engine then also checks when small
LAYOUT_RELAXED = [False]


_GRAD_LAYOUT = []       # [the grad_layout module] once loaded (an import statement per gradient cost 1 us)


def _layout():
    if not _GRAD_LAYOUT:
        from . import grad_layout
        _GRAD_LAYOUT.append(grad_layout)
    return _GRAD_LAYOUT[0]


def accumulate_into(t, grad, create_graph: bool, owned: bool = False):
    """PyTorch's AccumulateGrad: first gradient stored (a copy), later ones added.

    ``owned``: nothing but the engine can reach ``grad`` or its memory (see ``_exclusive``),
    so the first gradient is kept as it is instead of copied, as PyTorch steals a gradient
    whose use count says it is not shared.
    """
    if grad._dtype is not t._dtype:
        grad = grad.to(t._dtype)
    if t._grad is None:
        # both row-major: the layout contract holds (else grad_layout.py: .grad takes the leaf's strides)
        plain = t._data.flags.c_contiguous and grad._data.flags.c_contiguous
        if create_graph and grad._grad_fn is not None:
            copy = grad._detached_copy() if plain else _layout().copy_obeying_contract(grad, t)
            copy._requires_grad = True
            copy._grad_fn = Node(_Copy, [grad._grad_fn], {}, [(grad._data.shape, grad._dtype)], False)
            t._grad = copy
        elif owned and grad._data.shape == t._data.shape and (plain or _layout().may_keep(grad, t)):
            t._grad = grad._detached_alias()
        else:
            t._grad = grad._detached_copy() if plain else _layout().copy_obeying_contract(grad, t)
    elif create_graph:
        t._grad = t._grad + grad
    else:
        g = t._grad
        if g._data.flags.writeable:
            g._data += grad._data           # (a ZeroTensor grad: +0 zeros, so a -0 there becomes +0, as in ATen)
            g._version_counter[0] += 1
        else:
            check_mutable(g)                # ATen's ``variable_grad += new_grad`` into a ZeroTensor
            t._grad = g.detach() + grad.detach()


# ---------------------------------------------------------------- the engine
def _edge_of(t):
    """The node that receives ``t``'s gradient: its grad_fn, or a leaf's AccumulateGrad."""
    fn = t._grad_fn
    if fn is not None:
        if type(fn) is InvalidGradFn:
            fn.fail()
        return fn
    if t._requires_grad:
        return t._accumulator()
    return None


def run_backward(tensors, grad_tensors, *, retain_graph: bool, create_graph: bool,
                 inputs=None, accumulate: bool = True, allow_unused: bool = False, node_apply=None):
    """Back-propagate from ``tensors`` seeded with ``grad_tensors``.

    With ``accumulate`` (``Tensor.backward``) leaves' ``.grad`` are updated, limited to
    ``inputs`` if given. Without it (``autograd.grad``) the gradients reaching
    ``inputs`` are returned in order and nothing is accumulated.

    ``node_apply(node, grad) -> input gradients``, when given, runs each op node instead of
    ``Node._apply`` (and ``retain_grad`` is then its business): batched Jacobians carry a
    batch of cotangents through it, ``gradexpr eval --trace`` records each step with it.
    """
    roots = []
    for i, t in enumerate(tensors):
        node = _edge_of(t)
        if node is None:
            raise errors.RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn",
                                      hint="the tensor was computed without grad tracking: make a leaf "
                                           "require grad (requires_grad=True) or compute it outside no_grad")
        roots.append(node)

    # targets: node -> list of input positions whose gradient is that node's incoming gradient
    targets = None
    if inputs is not None:
        targets = {}
        for k, t in enumerate(inputs):
            node = _edge_of(t)
            if node is None:
                    raise errors.RuntimeError("One of the differentiated Tensors does not require grad")
            targets.setdefault(node, []).append(k)

    # Discover the graph: dependency counts, iteratively (a 10^6-node chain must work).
    deps = {r: 0 for r in roots}
    stack = list(deps)
    order = [] if targets is not None else None
    while stack:
        node = stack.pop()
        if order is not None:
            order.append(node)
        for nxt in node._next:
            if nxt is not None:
                count = deps.get(nxt)
                if count is None:
                    deps[nxt] = 1
                    stack.append(nxt)
                else:
                    deps[nxt] = count + 1

    needed = None
    if targets is not None:
        # A node is needed when a target can be reached from it; the discovery order lists every
        # node before its inputs' nodes only loosely, so iterate by sequence number (inputs are older).
        needed = set(targets)
        for node in sorted(order, key=lambda n: n._seq):
            if node in needed:
                continue
            for nxt in node._next:
                if nxt is not None and nxt in needed:
                    needed.add(node)
                    break
        if all(node in needed for node in order):
            needed = None           # every node leads to a target (grad of a loss in its weights): none pruned

    captured = [None] * len(inputs) if (inputs is not None and not accumulate) else None
    buffers = {}
    for r, g in zip(roots, grad_tensors):
        buffers[r] = buffers[r] + g if r in buffers else g

    # the common case (nothing pruned, no node_apply, no retain_grad) runs op nodes inline; the targets
    # of inputs= (their gradients are captured or accumulated) go through _run_node
    anomaly, check_nan = _anomaly.get()
    check_nan = anomaly and check_nan
    plain = needed is None and node_apply is None and not anomaly
    no_targets = not targets
    push, pop = ready_push, ready_pop
    grad_mode = _grad_enabled.set(bool(create_graph))
    try:
        # PyTorch's ready queue (a max-heap on sequence numbers): the roots, as its GraphRoot's edges
        # make them ready (in order; one given twice at its last place)
        ready = []
        for r in reversed(list(dict.fromkeys(reversed(roots)))):
            if deps[r] == 0:
                push(ready, r)
        node = None         # the next node when it was the only one made ready (a chain skips the heap)
        while True:
            if node is None:
                if not ready:
                    break
                node = pop(ready)
            grad = buffers.pop(node, None)
            if grad is None and getattr(node, "_pending", None) is None:
                # nothing arrived (a custom Function's node may have gradients of its other outputs)
                node_grads = (None,) * len(node._next)     # only release dependents
            elif plain and type(node) is Node and not node._retains and (no_targets or node not in targets):
                node_grads = node._input_grads(grad, node._next)      # node._apply(grad), one call less
                if not retain_graph and node._frees:
                    node._saved = _RELEASED                           # node._release(), inline
            else:
                # a leaf may keep a gradient that only the engine holds (here, and in buffers of nodes
                # still to run, which only read it) and whose memory is its own: see accumulate_into
                # (a ZeroTensor has no memory to own: only the references count, as ATen steals it)
                owned = (type(node) is AccumulateGrad and not create_graph
                         and ((grad._data.size >= STEAL_MIN or LAYOUT_RELAXED[0]) and owns_memory(grad)
                              or (ZERO_TENSORS and is_zero(grad)))
                         and refs(grad) == SOLE_LOCAL + held_by(buffers, grad))
                node_grads = _run_node(node, grad, targets, needed, captured, inputs,
                                       accumulate, create_graph, retain_graph, node_apply, owned)
                if check_nan:
                    _check_nan(node, node_grads)
            grad = following = None
            for nxt, g in zip(node._next, node_grads):
                if nxt is None:
                    continue
                if g is not None:
                    old = buffers.get(nxt)
                    if old is None:
                        buffers[nxt] = g
                    else:
                        buffers[nxt] = add_into(old, g)
                        old = None
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    if following is None and not ready:
                        following = nxt
                    else:
                        if following is not None:
                            push(ready, following)
                            following = None
                        push(ready, nxt)
            node = following
            node_grads = g = None       # the engine's references end here (see add_into)
    finally:
        _grad_enabled.reset(grad_mode)
    if _final_callbacks:
        _run_final_callbacks()

    if captured is not None:
        for k, g in enumerate(captured):
            if g is None and not allow_unused:
                raise errors.RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
            if g is not None and not create_graph:
                captured[k] = g.detach()
                if _DUAL_LEVEL:
                    copy_tangent(g, captured[k])    # computed from dual saved tensors: PyTorch's grad is dual
        return tuple(captured)
    return None


# Callbacks queued during a backward pass (register_multi_grad_hook's), run when the pass ends.
_final_callbacks: list = []


def queue_callback(fn):
    _final_callbacks.append(fn)


def _run_final_callbacks():
    callbacks = list(_final_callbacks)
    _final_callbacks.clear()
    for fn in callbacks:
        fn()


def _run_node(node, grad, targets, needed, captured, inputs, accumulate, create_graph, retain_graph,
              node_apply=None, owned=False):
    """Run one ready node; returns the gradients for its ``_next`` edges (``owned``: see accumulate_into)."""
    hooks = node._retains
    if hooks:
        if type(hooks) is not list:                 # hooks.NodeHooks: a hook was registered on the node
            from .hooks import run_hooked_node
            return run_hooked_node(node, hooks, grad, targets, needed, captured, inputs, accumulate,
                                   create_graph, retain_graph, node_apply, owned)
        if node_apply is None:
            _retain(node, grad)
    is_target = targets is not None and node in targets
    if is_target and captured is not None:
        for k in targets[node]:
            captured[k] = grad
    if type(node) is AccumulateGrad:
        if accumulate and (targets is None or is_target):
            node._accumulate(grad, create_graph, owned)
        return ()
    if is_target and accumulate:
        for k in targets[node]:
            accumulate_into(inputs[k], grad, create_graph)
    if needed is None:
        grads = node._apply(grad) if node_apply is None else node_apply(node, grad)
    elif any(n is not None and n in needed for n in node._next):
        grads = _apply_pruned(node, grad, needed, node_apply)
    else:
        grads = (None,) * len(node._next)
    if not retain_graph:
        node._release()
    return grads


def _apply_pruned(node, grad, needed, node_apply=None):
    saved_next = node._next
    node._next = [n if (n is not None and n in needed) else None for n in saved_next]
    try:
        return node._apply(grad) if node_apply is None else node_apply(node, grad)
    finally:
        node._next = saved_next


def _retain(node, grad):
    for ref in node._retains:
        t = ref()
        if t is None or t._grad_fn is not node:
            continue
        if t._grad is None:
            t._grad = grad._detached_copy() if not _grad_enabled.get() else grad
        else:
            t._grad = t._grad + grad
