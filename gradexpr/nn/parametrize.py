"""``torch.nn.utils.parametrize``: a module's parameter or buffer computed by modules from an original.

As PyTorch's ``torch/nn/utils/parametrize.py``: ``register_parametrization`` moves the tensor to
``module.parametrizations[name].original`` (a ``ParametrizationList``, an ``nn.ModuleList`` of the
parametrizations), gives the module a class of its own (``Parametrized<Class>``) and puts a property
``name`` on that class, which evaluates the list (``cached()`` evaluates it once per name inside the
block) and whose setter goes through the parametrizations' ``right_inverse``.
"""
from __future__ import annotations

from .. import errors
from ..grad_mode import no_grad
from ..tensor import Tensor
from .container import ModuleDict, ModuleList
from .module import Module
from .parameter import Parameter

NAMES = ("cached", "ParametrizationList", "register_parametrization", "is_parametrized",
         "remove_parametrizations", "type_before_parametrizations")

_cache_enabled = 0
_cache: dict = {}


class cached:
    """Within the block, each parametrized tensor is computed the first time it is read."""

    def __enter__(self):
        global _cache_enabled
        _cache_enabled += 1
        return None

    def __exit__(self, *exc):
        global _cache_enabled
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()
        return False


def _register_parameter_or_buffer(module, name, X):
    if isinstance(X, Parameter):
        module.register_parameter(name, X)
    else:
        module.register_buffer(name, X)


def _maybe_set(dest, src):
    """``dest.set_(src)`` under no_grad: ``dest`` (the same object, kept by optimisers) takes src's values."""
    dest.data = src


def _is_not_implemented(e):
    return isinstance(e, (NotImplementedError, errors.NotImplementedError))


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to ``original``."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise errors.ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except Exception as e:          # (a right_inverse may say it has none)
                        if not _is_not_implemented(e):
                            raise
        if not isinstance(new, (Tensor, list, tuple)):
            raise errors.ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                    f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise errors.ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                        f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise errors.ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                            f"(list, tuple...). Got element {i} of the sequence with type "
                                            f"{type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            Z = self()
            if not isinstance(Z, Tensor):
                raise errors.ValueError(f"A parametrization must return a tensor. Got {type(Z).__name__}.")
            if Z.dtype != original_dtype:
                raise errors.ValueError("Registering a parametrization may not change the dtype of the tensor, "
                                        "unless `unsafe` flag is enabled.\n"
                                        f"unparametrized dtype: {original_dtype}\nparametrized dtype: {Z.dtype}")
            if Z.shape != original_shape:
                raise errors.ValueError("Registering a parametrization may not change the shape of the tensor, "
                                        "unless `unsafe` flag is enabled.\n"
                                        f"unparametrized shape: {original_shape}\nparametrized shape: {Z.shape}")

    def right_inverse(self, value):
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise errors.RuntimeError(f"parametrization {type(module).__name__} does not implement "
                                              "right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise errors.ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise errors.ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                            f"`original` has dtype {self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, (list, tuple)):
                    raise errors.ValueError("'right_inverse' must return a sequence of tensors. "
                                            f"Got {type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise errors.ValueError("'right_inverse' must return a sequence of tensors of length "
                                            f"{self.ntensors}. Got a sequence of length {len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise errors.ValueError(f"`right_inverse` must return a sequence of tensors. "
                                                f"Got element {i} of type {type(tensor).__name__}")
                    if original_i.dtype != tensor.dtype:
                        raise errors.ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                                                f"while `original{i}` has dtype {original_i.dtype}")
                    _maybe_set(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        curr_idx = 1
        while hasattr(self, str(curr_idx)):
            x = self[curr_idx](x)
            curr_idx += 1
        return x


def _inject_new_class(module):
    cls = module.__class__

    def getstate(self):
        raise errors.RuntimeError("Serialization of parametrized modules is only supported through state_dict(). "
                                  "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
                                  "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(module), tensor_name)
            tensor = _cache.get(key)
            if tensor is None:
                tensor = _cache[key] = parametrization()
            return tensor
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name=None):
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, Tensor):
                raise errors.ValueError(f"A parametrization must return a tensor. Got {type(X).__name__}.")
            if X.dtype != Y.dtype:
                raise errors.ValueError("Registering a parametrization may not change the dtype of the tensor, "
                                        "unless the `unsafe` flag is enabled.\n"
                                        f"module.{tensor_name}.dtype: {Y.dtype}\nparametrization(module.{tensor_name}).dtype: {X.dtype}")
            if X.shape != Y.shape:
                raise errors.ValueError("Registering a parametrization may not change the shape of the tensor, "
                                        "unless the `unsafe` flag is enabled.\n"
                                        f"module.{tensor_name}.shape: {Y.shape}\nparametrization(module.{tensor_name}).shape: {X.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except Exception as e:
                    if not _is_not_implemented(e):
                        raise
                else:
                    if not isinstance(Z, Tensor):
                        raise errors.ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(Z).__name__}")
                    if Z.dtype != Y.dtype:
                        raise errors.ValueError("The tensor returned by parametrization.right_inverse must have the same "
                                                f"dtype as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                                                f"module.{tensor_name}.dtype: {Y.dtype}\nreturned dtype: {Z.dtype}")
                    if Z.shape != Y.shape:
                        raise errors.ValueError("The tensor returned by parametrization.right_inverse must have the same "
                                                f"shape as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                                                f"module.{tensor_name}.shape: {Y.shape}\nreturned shape: {Z.shape}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise errors.ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                                f"with name '{tensor_name}'")
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    if not is_parametrized(module, tensor_name):
        raise errors.ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            with no_grad():
                _maybe_set(original, t)         # (the same Parameter object: optimisers keep it)
    else:
        if leave_parametrized:
            t = getattr(module, tensor_name)
            original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
        else:
            raise errors.ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                                    "parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
