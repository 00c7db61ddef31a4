"""Hooks a program registers on tensors and graph nodes, and their removable handles.

The hooks themselves live on the graph's nodes (``graph.NodeHooks``), where the engine runs them
in PyTorch's order; this module is the program-facing side: ``Tensor.register_hook``,
``register_post_accumulate_grad_hook``, ``torch.autograd.graph.register_multi_grad_hook`` and
the ``RemovableHandle`` each returns.
"""
from __future__ import annotations

from . import errors
from .graph import node_hooks, queue_callback


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


def _hook_node(t):
    """The node a tensor hook of ``t`` sits on: its grad_fn, or a leaf's AccumulateGrad."""
    if not t.requires_grad:
        raise errors.RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = t.grad_fn
    return fn if fn is not None else t._accumulator()


def register_tensor_hook(t, hook):
    """``t.register_hook(hook)``: ``hook(grad)`` sees the gradient of ``t``; a tensor it returns replaces it."""
    node = _hook_node(t)
    if node is None:            # a view made under no_grad: gradients reaching it go nowhere
        raise errors.RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return node_hooks(node).add("tensor_pre", hook)


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
