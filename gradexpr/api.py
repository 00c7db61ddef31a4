"""The ``torch`` namespace as programs see it: ``torch``, ``torch.nn.functional`` (``F``),
``torch.autograd``, ``torch.autograd.functional``, ``torch.linalg``, ``torch.optim``.

Each is a ``Namespace`` whose attributes are the engine's functions, so a program
reaches exactly these names and nothing of Python or NumPy behind them.
"""
from __future__ import annotations

import math

from . import autograd, dtypes, functional, functions as T, graph, nn_functional as NF, printing
from .tensor import Size, Tensor


class Namespace:
    """A read-only module-like object (``torch``, ``F`` …) exposing a fixed set of names."""

    _gx_exposed = True

    def __init__(self, name, names, lazy=None):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_names", dict(names))
        object.__setattr__(self, "_lazy", lazy)     # name -> value or None, for names loaded on first use

    def __getattr__(self, item):
        try:
            return self._names[item]
        except KeyError:
            value = None if self._lazy is None or item.startswith("__") else self._lazy(item)
            if value is None:
                raise AttributeError(f"module '{self._name}' has no attribute '{item}'") from None
            self._names[item] = value
            return value

    def __setattr__(self, key, value):
        raise AttributeError(f"cannot set attributes of module '{self._name}'")

    def __dir__(self):
        return sorted(self._names)

    def __repr__(self):
        return f"<module '{self._name}'>"


class LazyNamespace(Namespace):
    """A namespace whose names come from ``loader()`` when a program first reads one: the packages
    behind ``torch.nn``, ``torch.optim`` and ``torch.utils.data`` load only in programs that use them."""

    def __init__(self, name, names, loader):
        super().__init__(name, names)
        object.__setattr__(self, "_loader", loader)

    def _load(self):
        loader = self._loader
        if loader is not None:
            object.__setattr__(self, "_loader", None)
            self._names.update(loader())

    def __getattr__(self, item):
        self._load()
        return super().__getattr__(item)

    def __dir__(self):
        self._load()
        return super().__dir__()


def _dtype_names():
    d = {}
    for dt in dtypes.ALL:
        d[dt.name if dt.name != "bool" else "bool"] = dt
    d.update({"float": dtypes.float32, "double": dtypes.float64, "half": dtypes.float16, "long": dtypes.int64,
              "int": dtypes.int32, "short": dtypes.int16})
    return d


_TORCH_FUNCTIONS = """
tensor as_tensor from_numpy zeros ones empty full zeros_like ones_like empty_like full_like eye arange linspace
logspace rand randn rand_like randn_like randint randint_like randperm normal bernoulli multinomial manual_seed seed initial_seed
add sub rsub subtract mul multiply div divide true_divide floor_divide remainder fmod neg negative pow float_power
square relu round clamp clip clamp_min clamp_max where lerp masked_fill isreal bitwise_and bitwise_or bitwise_xor
bitwise_not isclose allclose equal max min amax amin aminmax argmax argmin std var var_mean std_mean norm
logsumexp cumsum cumprod all any count_nonzero nonzero matmul mm bmm mv dot vdot inner outer ger addmm t transpose
swapaxes swapdims permute movedim det inverse trace reshape flatten unflatten squeeze unsqueeze broadcast_to cat
concat concatenate stack hstack vstack split chunk tensor_split unbind narrow select index_select index_add gather
scatter scatter_add flip fliplr flipud roll tril triu diag diagonal diag_embed clone masked_select is_tensor
is_floating_point numel
""".split()


_prelude = None


def build() -> dict:
    """The names a program sees after the prelude, keyed by name (``torch``, ``F``, bare torch names).

    Made once per process (every value is immutable: functions, classes, read-only namespaces);
    each call returns a fresh dict, which the caller may change (``eval --batch`` runs one
    program per line)."""
    global _prelude
    if _prelude is None:
        _prelude = _build()
    return dict(_prelude)


def _with_out(fn):
    """``fn`` with ``out=`` written by ``surface.write_out`` when its signature takes one."""
    from . import surface
    inner = fn
    while hasattr(inner, "__wrapped__"):          # (the axis=/keepdims= wrappers of methods._numpy_names)
        inner = inner.__wrapped__
    code = getattr(inner, "__code__", None)
    if code is None or "out" not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        return fn
    return surface.with_out(fn)


def _build() -> dict:
    from . import surface
    torch_names = surface.namespace("function", {name: _with_out(getattr(T, name)) for name in _TORCH_FUNCTIONS})
    torch_names.update(_dtype_names())
    torch_names.update({
        "softmax": NF.torch_softmax, "log_softmax": NF.torch_log_softmax, "dropout": NF.torch_dropout,
        "binary_cross_entropy_with_logits": NF.torch_binary_cross_entropy_with_logits,
        "Tensor": Tensor, "Size": Size, "dtype": dtypes.DType, "no_grad": graph.no_grad,
        "enable_grad": graph.enable_grad, "set_grad_enabled": graph.set_grad_enabled,
        "is_grad_enabled": graph.is_grad_enabled, "e": math.e, "pi": math.pi, "inf": math.inf, "nan": math.nan,
        "set_printoptions": printing.set_printoptions, "get_default_dtype": dtypes.get_default_dtype,
        "set_default_dtype": dtypes.set_default_dtype,
        "is_nonzero": lambda t: bool(t), "Generator": _generator_class(),
    })
    torch_names.update({"is_anomaly_enabled": graph.is_anomaly_enabled,       # anomaly mode (issue 16)
                        "is_anomaly_check_nan_enabled": graph.is_anomaly_check_nan_enabled,
                        "inference_mode": graph.inference_mode,
                        "is_inference_mode_enabled": graph.is_inference_mode_enabled})
    torch_names["cosine_similarity"] = NF.cosine_similarity                     # torch.nn (issue 15)
    linalg = Namespace("torch.linalg", surface.namespace("linalg", {
        "norm": T.linalg_norm, "vector_norm": T.vector_norm, "matrix_norm": T.matrix_norm, "svdvals": T.svdvals,
        "det": T.det, "inv": T.inverse, "matmul": T.matmul}))
    fn_names = ("softmax log_softmax relu relu6 leaky_relu elu gelu softplus silu sigmoid tanh hardtanh logsigmoid "
                "normalize mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
                "binary_cross_entropy_with_logits nll_loss cross_entropy linear dropout one_hot pad cosine_similarity").split()
    F = LazyNamespace("torch.nn.functional", surface.namespace("F", {n: getattr(NF, n) for n in fn_names}),
                      _nn_functional_names)
    # ---- torch.nn, torch.optim, torch.utils.data (gradexpr/nn, optim, data): loaded on first use
    nn = LazyNamespace("torch.nn", {"functional": F}, _nn_names)
    optim_ns = LazyNamespace("torch.optim", {}, _optim_names)
    utils = Namespace("torch.utils", {"data": LazyNamespace("torch.utils.data", {}, _data_names)})
    # ----
    afunctional = Namespace("torch.autograd.functional", {n: getattr(functional, n) for n in
                                                          ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")})
    autograd_ns = Namespace("torch.autograd", {"grad": autograd.grad, "backward": autograd.backward,
                                               "functional": afunctional, "forward_ad": _forward_ad_namespace()},
                            lazy=_autograd_extension_points)
    # ---- devices (torch.device, torch.cuda, torch.backends, torch.accelerator) and the legacy
    # constructors (torch.FloatTensor …, torch.autograd.Variable): gradexpr/device.py, gradexpr/legacy.py
    from . import device as _device, legacy as _legacy
    torch_names.update(_device.namespaces())
    torch_names.update(_legacy.TYPED_CLASSES)
    autograd_ns._names["Variable"] = _legacy.Variable
    torch_names["vmap"] = _vmap            # ---- torch.vmap is torch.func.vmap (gradexpr/func.py)
    # ----
    torch = Namespace("torch", {**torch_names, "nn": nn, "autograd": autograd_ns, "optim": optim_ns,
                                "utils": utils, "linalg": linalg, "functional": Namespace("torch.functional", {}),
                                "func": LazyNamespace("torch.func", {}, _func_names)})
    prelude = dict(torch_names)
    # `from torch import *` does not bind these (they need their prefix)
    for name in ("set_grad_enabled", "cuda", "backends", "accelerator"):
        prelude.pop(name, None)
    prelude.update({"torch": torch, "F": F, "grad": autograd.grad,
                    **{n: getattr(functional, n) for n in ("jacobian", "hessian", "vjp", "jvp", "hvp")}})
    return prelude


# ---- torch.autograd's extension points (custom Functions, hooks, anomaly mode: issue 16), imported
# when a program first reads one of them
def _autograd_extension_points(name):
    from . import autograd_extras
    return autograd_extras.autograd_name(name, Namespace)


def _nn_names():
    from . import nn
    modules, init, utils = nn.names()
    return {**modules, "init": Namespace("torch.nn.init", init), "utils": Namespace("torch.nn.utils", utils)}


def _nn_functional_names():
    from . import nn
    return nn.functional_names()


def _optim_names():
    from . import optim
    names, schedulers = optim.names()
    return {**names, "lr_scheduler": Namespace("torch.optim.lr_scheduler", schedulers)}


def _data_names():
    from . import data
    return data.names()


# ---- forward-mode AD (torch.autograd.forward_ad): its state lives beside the engine, so nothing loads here
def _forward_ad_namespace():
    from . import forward_ad as fw
    return Namespace("torch.autograd.forward_ad", {
        "dual_level": fw.dual_level, "make_dual": fw.make_dual, "unpack_dual": fw.unpack_dual,
        "enter_dual_level": fw.enter_dual_level, "exit_dual_level": fw.exit_dual_level,
        "UnpackedDualTensor": fw.UnpackedDualTensor})


# ---- torch.func: its module is loaded when a program first reads one of its names
def _func_names():
    from . import func
    return func.NAMES


def _vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    from . import func as _func
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def functorch_namespace():
    """``functorch``, torch.func's old name (``from functorch import vmap, grad``)."""
    return LazyNamespace("functorch", {}, _func_names)


def _generator_class():
    """``torch.Generator`` as programs see it: PyTorch's default seed when new (not a random
    one), methods callable from a program, state as a uint8 tensor."""
    from . import errors
    from . import rng as _random

    class Generator(_random.Generator):
        __slots__ = ()
        __module__, __qualname__ = "torch._C", "Generator"
        _gx_exposed = True
        device = "cpu"

        def __init__(self, device="cpu"):
            if str(device) != "cpu":
                raise errors.RuntimeError(f"Device type {str(device).upper()} is not supported for torch.Generator() api.")
            super().__init__(_random.DEFAULT_RNG_SEED)

        def get_state(self):
            return T.from_numpy(super().get_state())

        def set_state(self, new_state):
            return super().set_state(new_state._data if hasattr(new_state, "_data") else new_state)

    return Generator
