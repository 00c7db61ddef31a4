"""Hooks on the tensors nodes save for backward: ``torch.autograd.graph.saved_tensors_hooks(pack,
unpack)``, ``save_on_cpu``, ``disable_saved_tensors_hooks``, ``allow_mutation_on_saved_tensors``,
``increment_version``, and the ``_raw_saved_*`` handles of a node (``register_hooks``).

Saving a tensor is on every op's path, so ``graph.SavedTensor`` knows nothing of hooks: while a
``saved_tensors_hooks`` block is active its constructor is swapped for one that packs (and, from
the first use of hooks on, its ``unpack`` for one that unpacks what was packed). A run that never
uses these hooks pays nothing for them.
"""
from __future__ import annotations

from . import errors
from .graph import _RELEASED, SAVED_HOOKS_DISABLED, Node, SavedTensor, _grad_enabled
from .tensor import Tensor

_PLAIN_INIT = SavedTensor.__init__
_PLAIN_UNPACK = SavedTensor.unpack
_PLAIN_NODE_INIT = Node.__init__
_DEFERRED = object()            # an output waiting for its node before it is packed
_HOOKS_AFTER_FREE = ("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of "
                     "the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                     "you need to backward through the graph a second time or if you need to access saved variables "
                     "after calling backward.")
_stack: list = []               # active (pack, unpack) pairs, innermost last
_disabled = SAVED_HOOKS_DISABLED    # messages of active disable_saved_tensors_hooks blocks (and transforms)


class _Packed:
    """What a hook packed, with what unpacking needs to give the tensor back its history."""

    __slots__ = ("value", "unpack", "grad_fn", "requires_grad", "leaf", "check_version")

    def __init__(self, value, unpack, original, check_version=True):
        self.value = value
        self.check_version = check_version
        self.unpack = unpack
        self.grad_fn = original._grad_fn
        self.requires_grad = original._requires_grad
        self.leaf = original._accumulator_link()   # a leaf: whose accumulator the unpacked tensor feeds


def _pack(saved: SavedTensor, pack, unpack, original, check_version=True):
    token = _grad_enabled.set(False)
    try:
        packed = pack(original)
    finally:
        _grad_enabled.reset(token)
    saved.hooks = _Packed(packed, unpack, original, check_version)


def _hooked_init(self, tensor, is_output=False, producer=None):
    _PLAIN_INIT(self, tensor, is_output, producer)
    if is_output and tensor._grad_fn is None:
        # PyTorch gives pack an output with its history: packed once the node is made (_hooked_node_init)
        self.hooks = _DEFERRED
        return
    pack, unpack, check_version = _stack[-1]
    _pack(self, pack, unpack, tensor, check_version)


def _hooked_node_init(self, op, next_nodes, saved, meta, frees=None):
    _PLAIN_NODE_INIT(self, op, next_nodes, saved, meta, frees)
    for v in saved.values():
        if type(v) is SavedTensor and getattr(v, "hooks", None) is _DEFERRED:
            pack, unpack, check_version = _stack[-1]
            _pack(v, pack, unpack, v.tensor._with_grad_fn(self), check_version)


def _hooked_unpack(self, node):
    packed = getattr(self, "hooks", None)
    if packed is None or packed is _DEFERRED:
        return _PLAIN_UNPACK(self, node)
    if packed.check_version:
        _PLAIN_UNPACK(self, node)       # the version check, as without hooks
    value = packed.unpack(packed.value)
    if not isinstance(value, Tensor):
        raise errors.TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                               f"type {type(value).__name__}")
    t = Tensor._make(value._data, value._dtype)
    t._version_counter = value._version_counter
    if self.is_output:
        return t._with_grad_fn(node) if _grad_enabled.get() else t
    if packed.requires_grad:
        t._requires_grad = True
        t._grad_fn = packed.grad_fn
        t._acc = packed.leaf
    return t


class saved_tensors_hooks:
    """A block in which every tensor saved for backward goes through ``pack`` (and ``unpack`` when used)."""

    _gx_exposed = True

    _check_version = True

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled:
            raise errors.RuntimeError(_disabled[-1])
        self._entry = (self.pack_hook, self.unpack_hook, self._check_version)
        _stack.append(self._entry)
        SavedTensor.__init__ = _hooked_init
        Node.__init__ = _hooked_node_init
        SavedTensor.unpack = _hooked_unpack
        return None

    def __exit__(self, *exc):
        # its own entry, wherever it is: a block left open in an abandoned generator closes when the
        # generator is collected, in the middle of someone else's block
        entry = getattr(self, "_entry", None)
        for i in range(len(_stack) - 1, -1, -1):
            if _stack[i] is entry:
                del _stack[i]
                break
        if not _stack:
            _plain()
        return False


def _plain():
    SavedTensor.__init__ = _PLAIN_INIT
    Node.__init__ = _PLAIN_NODE_INIT


def forget_all():
    """No block active, as in a new process (a program run gives back what its blocks left open)."""
    _stack.clear()
    _plain()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept in CPU memory: on a CPU-only build they already are (identity hooks)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """A block in which registering saved-tensor hooks fails with ``error_message`` (as does entering it
    while such hooks are active)."""

    _gx_exposed = True

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if _stack:
            raise errors.RuntimeError(self.error_message)
        _disabled.append(self.error_message)
        return None

    def __exit__(self, *exc):
        _disabled.pop()
        return False


def _copy_of(t):
    c = Tensor._make(t._data.copy(), t._dtype)
    return c


class allow_mutation_on_saved_tensors(saved_tensors_hooks):
    """Tensors saved in this block may be changed in place afterwards: backward uses their values at
    the time they were saved (PyTorch clones them when mutated; here they are copied when saved)."""

    _check_version = False

    def __init__(self):
        super().__init__(_copy_of, lambda t: t)

    def __enter__(self):
        super().__enter__()
        return self


def increment_version(tensor):
    """Count an in-place change the engine did not see (as if ``tensor`` had been modified in place)."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tuple(tensor)
    for t in tensors:
        t._version_counter[0] += 1


class RawSavedTensor:
    """``node._raw_saved_X``: the saved tensor itself, on which hooks can be registered once."""

    _gx_exposed = True
    __slots__ = ("_saved", "_node")

    def __init__(self, saved: SavedTensor | None, node):
        self._saved = saved         # (None: read after backward freed it)
        self._node = node

    def register_hooks(self, pack_hook, unpack_hook):
        saved = self._saved
        if saved is None or self._node._saved is _RELEASED:
            raise errors.RuntimeError(_HOOKS_AFTER_FREE)
        if getattr(saved, "hooks", None) is not None:
            raise errors.RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                                      "Hint: only one pair of hooks is allowed at a time.")
        SavedTensor.unpack = _hooked_unpack
        _pack(saved, pack_hook, unpack_hook, saved.tensor)

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


for _cls in (saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks, allow_mutation_on_saved_tensors):
    _cls.__module__ = "torch.autograd.graph"


def region_activation_memory_budget(budget):
    """How much of a compiled region's activations to save rather than recompute: it only means something
    under torch.compile, which gradexpr does not have, so (as PyTorch in eager mode) it is refused."""
    name = "torch.autograd.graph.region_activation_memory_budget"
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise errors.TypeError(f"{name}: expects a float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise errors.ValueError(f"{name}: must be in [0, 1], got {budget}")
    raise errors.RuntimeError(f"{name} can only be used inside a torch.compile region; it has no effect in "
                              "eager mode.")
