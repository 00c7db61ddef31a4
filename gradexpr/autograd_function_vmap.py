"""vmap over a custom ``autograd.Function``, as PyTorch's functorch does it.

Under vmap a Function needs a batching rule: its own ``vmap`` staticmethod, called with the
unbatched tensors and their batch dims (``in_dims``) and returning ``(outputs, out_dims)``, or
``generate_vmap_rule = True``, where gradexpr runs the Function itself on the batched tensors
(its forward and backward are made of ops that batch). Without either PyTorch refuses, and so
does this. Loaded only when a Function is applied while a vmap runs.
"""
from __future__ import annotations

from . import errors
from .batching import LEVELS, BatchedTensor, batched
from .grad_mode import _grad_enabled
from .tensor import Tensor

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(tuple):
    """What a Function's ``vmap`` staticmethod is told about the running vmap (PyTorch's NamedTuple)."""

    _gx_exposed = True
    __slots__ = ()

    def __new__(cls, batch_size: int, randomness: str):
        return tuple.__new__(cls, (batch_size, randomness))

    @property
    def batch_size(self) -> int:
        return self[0]

    @property
    def randomness(self) -> str:
        return self[1]

    def __repr__(self):
        return f"VmapInfo(batch_size={self[0]}, randomness={self[1]!r})"


VmapInfo.__module__ = "torch._functorch.autograd_function"


def apply_under_vmap(cls, args, kwargs, apply_and_record):
    """``cls.apply(*args)`` while a vmap runs: the Function's vmap rule, PyTorch's refusals, or (with
    ``generate_vmap_rule``) the Function itself on the batched arguments. ``apply_and_record(run_forward)``
    records the node, its outputs computed by ``run_forward()`` (default: the Function's forward)."""
    from .autograd_function import Function
    if any(isinstance(v, Tensor) for v in kwargs.values()):
        raise errors.NotImplementedError(f"Run vmap on autograd.Function with kwarg-only Tensor args. Please do not "
                                         f"pass kwarg-only Tensors to autograd.Function. Got: {kwargs}")
    overridden = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule:
        if overridden:
            raise errors.RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
                                      "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
                                      f"delete the overridden vmap staticmethod to avoid ambiguity. {_DOCS}")
        return apply_and_record()
    if not overridden:
        raise errors.RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                                  "override and implement the vmap staticmethod or set generate_vmap_rule=True. "
                                  f"{_DOCS}")
    if _grad_enabled.get() and any(type(a) is BatchedTensor and a._requires_grad for a in args):
        # a transform inside this vmap (vmap(grad(f))) differentiates the batched tensors themselves: the
        # node is recorded on them (its backward runs batched), its outputs computed by the vmap rule
        return apply_and_record(lambda: _run_vmap_rule(cls, args, kwargs))
    return _run_vmap_rule(cls, args, kwargs)


def _run_vmap_rule(cls, args, kwargs):
    """PyTorch's custom_function_call_vmap_helper: unwrap the arguments batched at the innermost level,
    call ``cls.vmap`` one level down, and batch its outputs along the out_dims it returned."""
    level, size, randomness = LEVELS[-1]
    unwrapped, in_dims = [], []
    for a in args:
        if type(a) is BatchedTensor and a._level == level:
            unwrapped.append(a._phys)
            in_dims.append(a._bdim)
        else:
            unwrapped.append(a)
            in_dims.append(None)
    running = LEVELS.pop()          # the rule (and a Function it applies) runs at the next level out
    try:
        if all(d is None for d in in_dims):
            return cls.apply(*args, **kwargs)
        result = cls.vmap(VmapInfo(size, randomness), tuple(in_dims), *unwrapped, **kwargs)
    finally:
        LEVELS.append(running)
    base = ("Expected the vmap staticmethod to have two returns, an output and out_dims with pytree structure "
            "compatible with the output. ")
    if not isinstance(result, tuple):
        raise errors.RuntimeError(base + f"Got a {_type_text(result)} instead")
    if len(result) != 2:
        raise errors.RuntimeError(base + f"Got {len(result)} returns instead")
    outputs, out_dims = result
    single = not isinstance(outputs, tuple)
    flat = (outputs,) if single else outputs
    dims = (out_dims,) * len(flat) if not isinstance(out_dims, tuple) else out_dims
    if len(dims) != len(flat):
        raise errors.RuntimeError(
            f"The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) tuple. Expected "
            f"out_dims={out_dims} to be compatible with the structure of `output`. {_DOCS}")
    wrapped = []
    for o, d in zip(flat, dims):
        original = next((a for a, u in zip(args, unwrapped) if o is u), None) if isinstance(o, Tensor) else None
        if original is not None:
            wrapped.append(original)        # an input returned as it is stays the caller's tensor
        elif isinstance(o, Tensor) and d is not None:
            wrapped.append(batched(o, d if d >= 0 else d + o._data.ndim, level))
        else:
            wrapped.append(o)
    return wrapped[0] if single else tuple(wrapped)


def _type_text(value) -> str:
    """``type(value)`` as Python prints it in PyTorch (a Tensor's class is torch.Tensor)."""
    cls = type(value)
    if isinstance(value, Tensor):
        return "<class 'torch.Tensor'>"
    module = cls.__module__
    return f"<class '{cls.__qualname__}'>" if module == "builtins" else f"<class '{module}.{cls.__qualname__}'>"
