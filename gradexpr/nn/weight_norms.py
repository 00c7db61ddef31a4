"""``torch.nn.utils.weight_norm`` / ``spectral_norm`` and their ``remove_*``, as PyTorch writes them
(torch/nn/utils/weight_norm.py, spectral_norm.py): the weight becomes a function of new parameters,
recomputed by a forward pre-hook before every call."""
from __future__ import annotations

from .. import errors
from .. import functions as T
from ..graph import no_grad
from .parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "NAMES"]


def _weight_norm_of(v, g, dim):
    """``torch._weight_norm``: the fused kernel for dim 0 or the last dim (WeightNormInterfaceBackward0),
    else ``v * (g / norm_except_dim(v, 2, dim))``."""
    from ..op import apply
    from ..ops import nn_norms
    v, g = v.contiguous(), g.contiguous()
    if dim == 0 or dim == v.dim() - 1:
        return apply(nn_norms.weight_norm_interface, (v, g), {"dim": dim})
    return v * (g / _norm_except_dim(v, dim))


def _norm_except_dim(v, dim):
    """``torch.norm_except_dim(v, 2, dim)``: the 2-norm of each slice along ``dim`` (all of ``v`` for -1)."""
    if dim == -1:
        return v.norm(2)
    others = [d for d in range(v.dim()) if d != dim]
    return T.vector_norm(v, 2, others, keepdim=True)


class WeightNorm:
    _gx_exposed = True
    __module__ = "torch.nn.utils.weight_norm"

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm_of(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        from ..warn import warn_once       # (PyTorch's warns from one line of its own: shown once)
        warn_once("`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.",
                  FutureWarning)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise errors.RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        with no_grad():
            g = _norm_except_dim(weight, dim) if dim != -1 else weight.norm(2)
        module.register_parameter(name + "_g", Parameter(g.data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise errors.ValueError(f"weight_norm of '{name}' not found in {module}")


class SpectralNorm:
    _gx_exposed = True
    __module__ = "torch.nn.utils.spectral_norm"
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise errors.ValueError("Expected n_power_iterations to be positive, but got "
                                    f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        height = weight_mat.size(0)
        return weight_mat.reshape(height, -1)

    def compute_weight(self, module, do_power_iteration):
        from .. import nn_functional as NF
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = NF.normalize(T.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = NF.normalize(T.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                if self.n_power_iterations > 0:
                    u = u.clone()
                    v = v.clone()
        sigma = T.dot(u, T.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        from .. import nn_functional as NF
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise errors.RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise errors.ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = NF.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = NF.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    if dim is None:
        from .conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise errors.ValueError(f"spectral_norm of '{name}' not found in {module}")


NAMES = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
