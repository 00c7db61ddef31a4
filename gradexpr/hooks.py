"""Hooks a program registers on tensors and graph nodes, and their removable handles.

The hooks live on the graph's nodes, in their ``_retains`` slot (``NodeHooks``): a node that has
them leaves the engine's fast path, and ``_run_node`` hands it to ``run_hooked_node``, which runs
them in PyTorch's order. A leaf's own hooks are kept on the tensor (``LeafHooks``), whose
AccumulateGrad, made again whenever no graph holds it, shares them. The program-facing side: ``Tensor.register_hook``,
``register_post_accumulate_grad_hook``, ``torch.autograd.graph.register_multi_grad_hook`` and
the ``RemovableHandle`` each returns.
"""
from __future__ import annotations

import itertools

from . import errors
from .grad_ownership import refs
from .graph import AccumulateGrad, _retain, _run_node, queue_callback
from .zero_tensor import LIVE as ZERO_TENSORS, is_zero


class RemovableHandle:
    """``handle.remove()`` unregisters the hook (PyTorch's torch.utils.hooks.RemovableHandle)."""

    _gx_exposed = True
    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict, key: int):
        self._hooks = hooks
        self.id = key

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __repr__(self):
        return f"<torch.utils.hooks.RemovableHandle object at {hex(id(self))}>"


class NodeHooks(list):
    """A node's ``_retains`` once a hook is registered on it: the retain_grad references (the list
    itself) and the hooks, in registration order. Always true, so the engine's fast path, which
    only looks at ``_retains``, leaves such a node to ``_run_node`` (a backward without hooks
    pays nothing for them)."""

    __slots__ = ("tensor_pre", "pre", "post", "post_accumulate")
    _ids = itertools.count()

    def __init__(self, retains=()):
        super().__init__(retains)
        self.tensor_pre, self.pre, self.post, self.post_accumulate = {}, {}, {}, {}

    def __bool__(self):
        return True

    def add(self, kind, fn):
        key = next(NodeHooks._ids)
        getattr(self, kind)[key] = fn
        return RemovableHandle(getattr(self, kind), key)

    def run_tensor_pre(self, grad):
        """The tensor's hooks (``register_hook``): each sees the gradient the previous one left."""
        for fn in list(self.tensor_pre.values()):
            new = fn(grad)
            if new is not None:
                grad = _checked_hook_result(fn, new, grad)
        return grad

    def run_pre(self, grad_outputs: tuple) -> tuple:
        for fn in list(self.pre.values()):
            new = fn(grad_outputs)
            if new is not None:
                new = _checked_hook_tuple(fn, new, len(grad_outputs))
                grad_outputs = tuple(n if n is None else _checked_hook_result(fn, n, g)
                                     for n, g in zip(new, grad_outputs))
        return grad_outputs

    def run_post(self, grad_inputs, grad_outputs: tuple):
        for fn in list(self.post.values()):
            new = fn(tuple(grad_inputs), grad_outputs)
            if new is not None:
                grad_inputs = list(_checked_hook_tuple(fn, new, len(grad_inputs)))
        return grad_inputs


class LeafHooks:
    """A leaf's own hooks (``register_hook``, ``register_post_accumulate_grad_hook``), kept on the
    tensor (``_leaf_hooks``) as PyTorch keeps them on its autograd meta: the leaf's AccumulateGrad is
    made again once no graph holds it (``Tensor._accumulator``), and each one it makes runs these
    same dicts (its ``NodeHooks`` shares them). Hooks registered on the node itself
    (``acc.register_hook``, ``register_prehook``) stay the node's and go with it, as in PyTorch."""

    __slots__ = ("tensor_pre", "post_accumulate")

    def __init__(self):
        self.tensor_pre, self.post_accumulate = {}, {}


def leaf_hooks(t) -> LeafHooks:
    hooks = t._leaf_hooks
    if hooks is None:
        hooks = t._leaf_hooks = LeafHooks()
    return hooks


def node_hooks(node) -> NodeHooks:
    """The hooks of ``node``, made on first use (taking over its retain_grad references; a leaf's
    node shares the leaf's own hooks)."""
    hooks = node._retains
    if type(hooks) is not NodeHooks:
        hooks = node._retains = NodeHooks(hooks or ())
        if type(node) is AccumulateGrad:
            leaf = leaf_hooks(node.variable)
            hooks.tensor_pre, hooks.post_accumulate = leaf.tensor_pre, leaf.post_accumulate
    return hooks


def _hook_name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def _checked_hook_result(fn, new, old):
    from .tensor import Tensor
    if not isinstance(new, Tensor):
        raise errors.TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if old is not None and new._data.shape != old._data.shape:
        raise errors.RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    return new


def _checked_hook_tuple(fn, new, n):
    if not isinstance(new, (tuple, list)) or len(new) != n:
        got = len(new) if isinstance(new, (tuple, list)) else 1
        raise errors.RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values "
                                  f"(got {got}, but expected {n})")
    return tuple(new)


def run_hooked_node(node, hooks, grad, targets, needed, captured, inputs, accumulate, create_graph,
                     retain_graph, node_apply, owned):
    """``_run_node`` with PyTorch's hook order: the tensor's hooks, retain_grad, the node's pre-hooks,
    the node, its post hooks (a leaf: its post-accumulate-grad hooks)."""
    # a ZeroTensor the tensor's hooks saw but kept no reference to stays the engine's alone (ATen steals it)
    received = grad if owned and hooks.tensor_pre and ZERO_TENSORS and is_zero(grad) else None
    before = refs(received) if received is not None else 0
    if grad is not None:
        grad = hooks.run_tensor_pre(grad)
        if received is not None and grad is received and refs(received) == before:
            owned = True
        elif hooks.tensor_pre:
            owned = False
        if len(hooks) and node_apply is None:
            _retain(node, grad)
    # a custom Function's node with several outputs: its hooks see all their gradients
    multi = len(getattr(node, "_outputs", ())) > 1 and (hooks.pre or hooks.post)
    if multi:
        grad_outputs = node._take_grad_outputs(grad)
        if hooks.pre:
            grad_outputs = hooks.run_pre(grad_outputs)
        node._pending = {k: g for k, g in enumerate(grad_outputs) if k and g is not None} or None
        grad = grad_outputs[0]
    elif grad is not None:
        grad_outputs = (grad,)
        if hooks.pre:
            grad_outputs = hooks.run_pre(grad_outputs)
            grad = grad_outputs[0]
    node._retains = None
    try:
        grads = _run_node(node, grad, targets, needed, captured, inputs, accumulate, create_graph,
                          retain_graph, node_apply, owned)
    finally:
        node._retains = hooks
    if type(node) is AccumulateGrad:
        if hooks.post_accumulate and accumulate and (targets is None or node in targets):
            for fn in list(hooks.post_accumulate.values()):
                fn(node.variable)
        if hooks.post and grad is not None:     # the node's own post hooks: no inputs, its one output
            hooks.run_post(grads, (grad,))
        return grads
    if hooks.post:
        grads = hooks.run_post(grads, grad_outputs if multi else (grad,))
    return grads



def _hook_node(t):
    """The node a tensor hook of ``t`` sits on: its grad_fn, or a leaf's AccumulateGrad."""
    if not t.requires_grad:
        raise errors.RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    t.grad_fn                   # raises for a view whose history is invalid
    fn = t._grad_fn             # (an output after the first of a custom Function: its own edge)
    return fn if fn is not None else t._accumulator()


def register_tensor_hook(t, hook):
    """``t.register_hook(hook)``: ``hook(grad)`` sees the gradient of ``t``; a tensor it returns replaces it."""
    node = _hook_node(t)
    if node is None:            # a view made under no_grad: gradients reaching it go nowhere
        raise errors.RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return node_hooks(node).add("tensor_pre", hook)     # (a leaf's: in the dict its tensor keeps)


def register_post_accumulate_grad_hook(t, hook):
    """``hook(t)`` after a leaf's ``.grad`` was updated."""
    if t.grad_fn is not None:
        raise errors.RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not t.requires_grad:
        raise errors.RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return node_hooks(t._accumulator()).add("post_accumulate", hook)


class _MultiHandle:
    """The handle of a multi-grad hook: removes the hook of every tensor."""

    _gx_exposed = True
    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()

    def __repr__(self):
        return f"<torch.autograd.graph._MultiHandle object at {hex(id(self))}>"


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """``fn`` once per backward pass with the gradients of ``tensors`` (None for those that got none),
    or, with ``mode="any"``, with the first of them to be computed."""
    if mode not in ("all", "any"):
        raise errors.ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        state = {"fired": False}

        def any_hook(grad):
            if not state["fired"]:
                state["fired"] = True
                queue_callback(lambda: state.update(fired=False))
                fn(grad)
        return _MultiHandle([register_tensor_hook(t, any_hook) for t in tensors if t.requires_grad])

    pending = {}

    def make_hook(i):
        def hook(grad):
            if not pending:
                queue_callback(flush)
            pending[i] = grad
        return hook

    def flush():
        grads = [pending.get(i) for i in range(len(tensors))]
        pending.clear()
        fn(grads)

    return _MultiHandle([register_tensor_hook(t, make_hook(i)) for i, t in enumerate(tensors) if t.requires_grad])


RemovableHandle.__module__ = "torch.utils.hooks"
_MultiHandle.__module__ = "torch.autograd.graph"
