"""``torch.nn.utils.prune``: a module's tensor reparametrized as ``name_orig * name_mask``.

As PyTorch's ``torch/nn/utils/prune.py``: pruning moves the parameter to ``name + "_orig"``, keeps the
mask as the buffer ``name + "_mask"`` and registers the pruning method itself as a forward pre-hook,
which recomputes the attribute ``name`` (a ``MulBackward0`` of mask and original) before each call.
Pruning the same tensor again gathers the methods in a ``PruningContainer``, which computes the new
mask on the part the old one left (entries, channels or everything, by the method's ``PRUNING_TYPE``).
Random methods draw as PyTorch's do (``rand_like`` then ``topk``; ``rand`` then ``kthvalue``), so a
seeded program prunes the same entries.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod

from .. import errors
from .. import functions as T
from ..tensor import Tensor
from .module import AnyPublicName
from .utils import parameters_to_vector

NAMES = ("BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
         "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
         "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
         "remove", "is_pruned")

_PRUNED_MODULE = "torch.nn.utils.prune"


class BasePruningMethod(ABC):
    """A pruning technique: ``compute_mask`` says what to zero; ``apply`` reparametrizes a module's tensor."""
    _gx_exposed = True
    _gx_readable = frozenset({"_tensor_name"})
    _gx_settable = AnyPublicName("_tensor_name")        # PyTorch's own tests name the tensor of a method
    __module__ = _PRUNED_MODULE
    _tensor_name = None

    def __call__(self, module, inputs):
        """The forward pre-hook: the pruned tensor from the current original and mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for ``t``, keeping what ``default_mask`` (earlier pruning) zeroed."""

    def apply_mask(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        method = _method_joining_earlier_pruning(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        importance_scores = _scores_for(orig, importance_scores, f"parameter {name} of {module}")
        first_pruning = not isinstance(method, PruningContainer)
        if first_pruning:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = T.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_pruning:     # the module as it was: the parameter back under its name
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times its mask (no reparametrization)."""
        importance_scores = _scores_for(t, importance_scores, "tensor t")
        default_mask = default_mask if default_mask is not None else T.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``name`` is a parameter again (the ``_orig`` one, holding the pruned
        values), and ``_orig``/``_mask`` go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _scores_for(t, importance_scores, what):
    """The importance scores a mask is computed from: ``t`` itself unless others of its shape are given."""
    if importance_scores is None:
        return t
    if importance_scores.shape != t.shape:
        raise AssertionError(f"importance_scores should have the same shape as {what}, got "
                             f"{importance_scores.shape} vs {t.shape}")
    return importance_scores


def _method_joining_earlier_pruning(cls, module, name, *args, **kwargs):
    """The new ``cls(*args, **kwargs)`` for ``module.name``, in a container with the method already there
    (whose hook comes off: the caller registers the result)."""
    earlier = [(k, hook) for k, hook in module._forward_pre_hooks.items()
               if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(earlier) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    for k, _ in earlier:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not earlier:
        return method
    old_method = earlier[0][1]
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        return old_method
    container = PruningContainer(old_method)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """The methods that pruned one tensor, in order; the last one's mask is computed on what the earlier
    masks kept."""
    _gx_readable = frozenset({"_tensor_name", "_pruning_methods"})

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise errors.TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise errors.ValueError(f"Can only add pruning methods acting on the parameter named "
                                    f"'{self._tensor_name}' to PruningContainer {self}. "
                                    f"Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        where = _unpruned_part(method, t, default_mask)
        partial_mask = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


def _unpruned_part(method, t, mask):
    """The index of the part of ``t`` the next method prunes: the entries the mask kept (unstructured), the
    channels along ``method.dim`` not entirely zeroed (structured), or all of it (global)."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "structured":
        if not hasattr(method, "dim"):
            raise errors.AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                        "`dim` defined.")
        n_dims = t.dim()
        dim = method.dim + n_dims if method.dim < 0 else method.dim
        if dim < 0:
            raise errors.IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
        keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
        return tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
    if kind == "global":
        return tuple(slice(None) for _ in range(len(t.shape)))
    raise errors.ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class Identity(BasePruningMethod):
    """The reparametrization with a mask of ones."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _AmountPruning(BasePruningMethod):
    """A method that prunes ``amount`` units (an int, or a fraction of them)."""

    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def _units_to_prune(self, tensor_size):
        nparams_toprune = amount_to_count(self.amount, tensor_size)
        if isinstance(nparams_toprune, numbers.Integral) and nparams_toprune > tensor_size:
            raise errors.ValueError(f"amount={nparams_toprune} should be smaller than the number of parameters "
                                    f"to prune={tensor_size}")
        return nparams_toprune


class _UnstructuredPruning(_AmountPruning):
    """A method that zeroes ``amount`` entries, wherever they are."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        k = self._units_to_prune(t.nelement())
        mask = default_mask.clone()
        if k != 0:
            mask.view(-1)[self._entries_to_prune(t, k)] = 0
        return mask

    def _entries_to_prune(self, t, k):
        """The flat indices of the ``k`` entries to zero."""
        raise NotImplementedError


class RandomUnstructured(_UnstructuredPruning):
    """Zeroes ``amount`` entries at random (those with the largest of ``rand_like`` draws)."""

    def _entries_to_prune(self, t, k):
        return T.topk(T.rand_like(t).view(-1), k=k).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredPruning):
    """Zeroes the ``amount`` entries of smallest magnitude (ties as ``topk`` picks them)."""

    def _entries_to_prune(self, t, k):
        return T.topk(T.abs(t).view(-1), k=k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _StructuredPruning(_AmountPruning):
    """A method that prunes whole channels along ``dim``."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        super().__init__(amount)
        self.dim = dim

    def compute_mask(self, t, default_mask):
        if len(t.shape) <= 1:
            raise errors.ValueError("Structured pruning can only be applied to multidimensional tensors. Found "
                                    f"tensor of shape {t.shape} with {len(t.shape)} dims")
        if self.dim >= t.dim():
            raise errors.IndexError(f"Invalid index {self.dim} for tensor of size {t.shape}")
        tensor_size = t.shape[self.dim]
        k = self._units_to_prune(tensor_size)
        kept = self._kept_channels(t, tensor_size, k)
        if k == 0:
            return default_mask
        mask = T.zeros_like(t)
        mask[tuple(kept if d == self.dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    def _kept_channels(self, t, nchannels, nchannels_toprune):
        """The channels along ``dim`` that stay (asked even when none is pruned: LnStructured computes its
        norms, and fails on a bad ``n``, before it looks)."""
        raise NotImplementedError


class RandomStructured(_StructuredPruning):
    """Zeroes ``amount`` channels along ``dim`` at random (those above the k-th smallest ``rand`` draw stay)."""

    def _kept_channels(self, t, nchannels, nchannels_toprune):
        if nchannels_toprune == 0:          # (no draw)
            return None
        prob = T.rand(nchannels)
        threshold = T.kthvalue(prob, k=nchannels_toprune).values
        return prob > threshold

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_StructuredPruning):
    """Zeroes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    def __init__(self, amount, n, dim=-1):
        super().__init__(amount, dim)
        self.n = n

    def _kept_channels(self, t, nchannels, nchannels_toprune):
        dims = list(range(t.dim()))
        dims.remove(dims[self.dim])
        norm = T.norm(t, p=self.n, dim=dims)
        return T.topk(norm, k=nchannels - nchannels_toprune, largest=True).indices

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """The given mask (on top of earlier pruning)."""
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# Programs subclass these and name them (``prune.L1Unstructured``): shown as PyTorch's classes.
for _cls in (PruningContainer, Identity, RandomUnstructured, L1Unstructured, RandomStructured, LnStructured,
             CustomFromMask, _AmountPruning, _UnstructuredPruning, _StructuredPruning):
    _cls.__module__ = _PRUNED_MODULE


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the ``(module, name)`` tensors together: one mask over their concatenation, then a
    ``custom_from_mask`` of its slice for each."""
    if not _is_iterable(parameters):
        raise errors.TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise errors.TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for (module, name) in parameters])
    default_mask = parameters_to_vector([getattr(module, name + "_mask", T.ones_like(getattr(module, name)))
                                         for (module, name) in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise errors.TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                               f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer: pointer + num_param].view_as(param))
        pointer += num_param


def remove(module, name):
    """Makes the pruning of ``module.name`` permanent and takes its hook off."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise errors.ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be "
                            "removed")


def is_pruned(module):
    return any(isinstance(hook, BasePruningMethod)
               for _, submodule in module.named_modules() for hook in submodule._forward_pre_hooks.values())


def _is_iterable(obj):
    try:
        iter(obj)
    except TypeError:
        return False
    return True


def _validate_amount(amount):
    """PyTorch's checks of ``amount`` when a method is made: a real number, a fraction in [0, 1] or a
    non-negative count."""
    if not isinstance(amount, numbers.Real):
        raise errors.TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise errors.ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
                                "integer")


def amount_to_count(amount, tensor_size):
    """The number of units ``amount`` means: itself if an int, else the rounded fraction of ``tensor_size``."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)
