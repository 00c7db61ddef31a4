"""The ``torch`` namespace as programs see it: ``torch``, ``torch.nn.functional`` (``F``),
``torch.autograd``, ``torch.autograd.functional``, ``torch.linalg``, ``torch.optim``.

Each is a ``Namespace`` whose attributes are the engine's functions, so a program
reaches exactly these names and nothing of Python or NumPy behind them.
"""
from __future__ import annotations

import math

from . import autograd, dtypes, functions as T, graph, memory_format, printing, type_info
from .made_on_use import MadeOnUse
from .tensor import Size, Tensor


class Namespace:
    """A read-only module-like object (``torch``, ``F`` …) exposing a fixed set of names."""

    _gx_exposed = True

    def __init__(self, name, names, lazy=None, every=None):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_names", dict(names))
        object.__setattr__(self, "_lazy", lazy)     # name -> value or None, for names loaded on first use
        object.__setattr__(self, "_every", every)   # () -> {name: value} of all of those (for dir)

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
        if self._every is not None:
            for name, value in self._every().items():
                self._names.setdefault(name, value)
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
bitwise_not isclose allclose equal max min amax amin aminmax argmax argmin sort argsort msort topk bucketize searchsorted
kthvalue median std var var_mean std_mean norm
logsumexp cumsum cumprod all any count_nonzero nonzero matmul mm bmm mv dot vdot inner outer ger addmm t transpose
swapaxes swapdims permute movedim det inverse trace reshape flatten unflatten squeeze unsqueeze broadcast_to cat
concat concatenate stack hstack vstack column_stack dstack tile atleast_1d atleast_2d atleast_3d meshgrid split chunk tensor_split unbind narrow select index_select index_add gather
scatter scatter_add flip fliplr flipud roll tril triu diag diagonal diag_embed clone masked_select is_tensor
is_floating_point numel is_signed is_conj is_distributed is_inference is_same_size
einsum tensordot kron take_along_dim cdist nanmean resize_as_ cartesian_prod baddbmm
cholesky qr svd slogdet logdet matrix_exp matrix_power pinverse unique unique_consecutive lu lu_unpack cholesky_solve
cholesky_inverse
""".split()


_prelude = None


def build() -> "PreludeNames":
    """The names a program sees after the prelude, keyed by name (``torch``, ``F``, bare torch names).

    Made once per process (every value is immutable: functions, classes, read-only namespaces);
    each call returns a fresh dict, which the caller may change (``eval --batch`` runs one
    program per line). The names whose module is not imported yet are made on first use."""
    global _prelude
    if _prelude is None:
        _prelude = _build()
    return PreludeNames(_prelude)


class PreludeNames(MadeOnUse):
    """The prelude's names (a program's globals start as a copy). Those whose module is not imported
    yet (a composite, an nn function, a device, …: ``prelude_name``) are added on first use, so a
    program imports only what it reads; ``in`` and ``get`` see them as present, iteration only once
    made. ``shadowed``: names the prelude never makes (Python's builtins, in a program's globals)."""

    __slots__ = ("_deleted", "_shadowed")

    def __init__(self, names=(), shadowed=frozenset()):
        super().__init__(names)
        self._deleted = set()       # names the program deleted (``del t``): never made again
        self._shadowed = shadowed

    def __missing__(self, name):
        value = None
        if isinstance(name, str) and name not in self._deleted and name not in self._shadowed:
            value = prelude_name(name)
        if value is None:
            raise KeyError(name)
        self[name] = value
        return value

    def __delitem__(self, name):
        dict.__delitem__(self, name)
        self._deleted.add(name)

    def pop(self, name, *default):
        self._deleted.add(name)
        return dict.pop(self, name, *default)

    def copy(self):
        return PreludeNames(self, self._shadowed)

    def all_names(self) -> set:
        """The names defined now and those the prelude would make."""
        return set(self) | {n for n in prelude_names() if n not in self._shadowed and n not in self._deleted}


def _with_out(fn):
    """``fn`` with ``out=`` written by ``surface.write_out`` when its signature takes one."""
    from . import surface
    inner = fn
    while hasattr(inner, "__wrapped__"):          # (the axis=/keepdims= wrappers of methods._numpy_names)
        inner = inner.__wrapped__
    code = getattr(inner, "__code__", None)
    if code is None or "out" not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        return fn
    return surface.with_out(fn, pair=getattr(fn, "__name__", "") in _PAIR_RESULTS)


# hand-written functions returning (values, indices): their out= is a pair of tensors
_PAIR_RESULTS = frozenset(("sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"))


def _named(fn, name):
    """``fn`` as torch.``name``: a function of its own when it is another's under a second name
    (``swapaxes = transpose`` in a composite), as PyTorch's aliases are distinct functions."""
    if getattr(fn, "__name__", name) != name:
        from .surface import own_function
        return own_function(fn)
    return fn


def _build() -> dict:
    """The prelude's names that cost nothing to make; the others (``_lazy_torch_name``) are made on
    first use, by the ``torch`` namespace and the program's globals (``grammar/prelude.py``) alike."""
    from . import surface
    eager = {name: _with_out(_named(vars(T)[name], name)) for name in _TORCH_FUNCTIONS if name in vars(T)}
    torch_names = surface.namespace("function", eager)
    torch_names.update(_dtype_names())
    torch_names.update({
        "Tensor": Tensor, "Size": Size, "dtype": dtypes.DType, "no_grad": graph.no_grad,
        "enable_grad": graph.enable_grad, "set_grad_enabled": graph.set_grad_enabled,
        "is_grad_enabled": graph.is_grad_enabled, "e": math.e, "pi": math.pi, "inf": math.inf, "nan": math.nan,
        "set_printoptions": printing.set_printoptions, "get_default_dtype": dtypes.get_default_dtype,
        "set_default_dtype": dtypes.set_default_dtype,
        "is_nonzero": lambda t: bool(t),
        "finfo": type_info.finfo, "iinfo": type_info.iinfo, **memory_format.NAMES,
    })
    torch_names.update({"is_anomaly_enabled": graph.is_anomaly_enabled,       # anomaly mode (issue 16)
                        "is_anomaly_check_nan_enabled": graph.is_anomaly_check_nan_enabled,
                        "inference_mode": graph.inference_mode,
                        "is_inference_mode_enabled": graph.is_inference_mode_enabled})
    linalg = Namespace("torch.linalg", {}, lazy=lambda name: _linalg_names().get(name), every=_linalg_names)
    F = Namespace("torch.nn.functional", {}, lazy=_nn_functional_name, every=_all_nn_functional_names)
    # ---- torch.nn, torch.optim, torch.utils.data (gradexpr/nn, optim, data): loaded on first use
    nn = LazyNamespace("torch.nn", {"functional": F}, _nn_names)
    optim_ns = LazyNamespace("torch.optim", {}, _optim_names)
    utils = Namespace("torch.utils", {"data": LazyNamespace("torch.utils.data", {}, _data_names)})
    # ----
    afunctional = LazyNamespace("torch.autograd.functional", {}, _autograd_functional_names)
    autograd_ns = Namespace("torch.autograd", {"grad": autograd.grad, "backward": autograd.backward,
                                               "functional": afunctional, "forward_ad": _forward_ad_namespace()},
                            lazy=_autograd_extension_points)
    torch_names["vmap"] = _vmap            # ---- torch.vmap is torch.func.vmap (gradexpr/func.py)
    # ----
    torch = Namespace("torch", {**torch_names, "nn": nn, "autograd": autograd_ns, "optim": optim_ns,
                                "utils": utils, "linalg": linalg, "functional": Namespace("torch.functional", {}),
                                "func": LazyNamespace("torch.func", {}, _func_names),
                                "special": LazyNamespace("torch.special", {}, _special_names),
                                "distributed": LazyNamespace("torch.distributed", {}, _distributed_names)},
                      lazy=_torch_name_made_late, every=_all_late_torch_names)
    _made["torch"] = torch
    prelude = dict(torch_names)
    # `from torch import *` does not bind these (they need their prefix)
    for name in _PREFIXED:
        prelude.pop(name, None)
    prelude.update({"torch": torch, "F": F, "grad": autograd.grad})
    return prelude


_PREFIXED = frozenset(("set_grad_enabled", "cuda", "backends", "accelerator"))
_AUTOGRAD_FUNCTIONAL = ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")
_made: dict = {}            # the torch namespace, once built


def _lazy_torch_name(name):
    """torch.X of the prelude made on first use (its module imported then), or None: the hand-written
    functions of the composites not imported yet and their aliases, the nn functions that are also
    torch.X, ``torch.Generator``, the devices, and the legacy typed tensor classes. Made once: the
    ``torch`` namespace and the programs' globals hold the same object."""
    value = _lazily_made.get(name)
    if value is None:
        value = _make_torch_name(name)
        if value is not None:
            _lazily_made[name] = value
    return value


_lazily_made: dict = {}


def _make_torch_name(name):
    if name in _TORCH_FUNCTION_SET:
        return _with_out(_named(getattr(T, name), name))
    from . import ops, surface
    target = ops.ALIASES.get(name)
    if target in _TORCH_FUNCTION_SET and name not in surface._TABLE_ALIASES:
        return surface.own_function(getattr(_made["torch"], target))
    if name in _NN_TORCH_NAMES:
        return getattr(NF(), _NN_TORCH_NAMES[name])
    if name in _INPLACE_TORCH_FUNCTIONS:
        return _inplace_torch_function(name)
    if name == "Generator":
        return _generator_class()
    from . import device as _device, legacy as _legacy
    return _device.namespaces().get(name) or _legacy.TYPED_CLASSES.get(name)


def is_torch_function(f, name) -> bool:
    """Whether ``torch.name`` is ``f`` (a function another namespace binds under the same name is not)."""
    torch = (_prelude or {}).get("torch")
    return torch is not None and name in torch._names and torch._names[name] is f


def _torch_name_made_late(name):
    return _lazy_torch_name(name) or _late_torch_name(name)


def _all_late_torch_names() -> dict:
    from . import device as _device, legacy as _legacy
    names = [*_TORCH_FUNCTIONS, *_NN_TORCH_NAMES, *sorted(_INPLACE_TORCH_FUNCTIONS), "Generator",
             *_device.namespaces(), *_legacy.TYPED_CLASSES]
    from . import ops
    names += [alias for alias, target in ops.ALIASES.items() if target in _TORCH_FUNCTION_SET]
    torch = _made["torch"]
    return {name: getattr(torch, name) for name in names if hasattr(torch, name)}


def prelude_name(name):
    """A name of the prelude not made yet (``grammar/prelude.py``), or None."""
    if name in _PREFIXED:
        return None
    if name in _AUTOGRAD_FUNCTIONAL and name != "vhp":
        from . import functional
        return getattr(functional, name)
    if _made.get("torch") is None:
        build()
    return _lazy_torch_name(name)


def prelude_names() -> list:
    """Every name of the prelude, made or not (for ``from torch import *`` and name suggestions)."""
    build()
    return [*_prelude, *(n for n in _all_late_torch_names() if n not in _PREFIXED),
            *(n for n in _AUTOGRAD_FUNCTIONAL if n != "vhp")]


_TORCH_FUNCTION_SET = frozenset(_TORCH_FUNCTIONS)
# torch.X names of nn functions (nn_functional.py)
_NN_TORCH_NAMES = {"softmax": "torch_softmax", "log_softmax": "torch_log_softmax", "dropout": "torch_dropout",
                   "binary_cross_entropy_with_logits": "torch_binary_cross_entropy_with_logits",
                   "cosine_similarity": "cosine_similarity"}


def NF():
    from . import nn_functional
    return nn_functional


# torch.X_ of PyTorch's in-place ops with a function variant (native_functions.yaml's
# ``variants: function, method``): ``torch.sin_(t)`` is ``t.sin_()``. (Not torch.abs_: the op table's
# alias absolute_ would have to be bound beside it, and PyTorch has no torch.absolute_.)
_INPLACE_TORCH_FUNCTIONS = frozenset("""
acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_
ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_
fill_ fix_ floor_ frac_ gcd_ i0_ index_put_ lcm_ ldexp_ log10_ log1p_ log2_ log_ logit_ nan_to_num_
neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_
tan_ tanh_ trunc_ xlogy_ zero_""".split())


def _inplace_torch_function(name):
    """``torch.name(input, *args, **kwargs)``: the in-place method ``input.name(*args, **kwargs)``, or
    None where gradexpr's Tensor has no such method."""
    method = getattr(Tensor, name, None)
    if method is None:
        return None

    def fn(input, *args, **kwargs):
        return method(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    return fn


_cache: dict = {}


# ---- torch.special (ops/special.py): the table's "special" entries and PyTorch's names there for
# torch.X ops (torch.special.gammaln is torch.lgamma's kernel, expit sigmoid's)
_SPECIAL_OF_TORCH = {"erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "expm1": "expm1", "exp2": "exp2",
                     "log1p": "log1p", "sinc": "sinc", "digamma": "digamma", "psi": "digamma",
                     "polygamma": "polygamma", "gammaln": "lgamma", "logit": "logit", "expit": "sigmoid",
                     "xlogy": "xlogy", "logsumexp": "logsumexp", "softmax": "softmax", "log_softmax": "log_softmax"}


def _special_names() -> dict:
    from . import surface
    torch = _made["torch"]
    names = {name: getattr(torch, target) for name, target in _SPECIAL_OF_TORCH.items()}

    def round(input, *, decimals=0):                 # special.round is round.decimals (RoundBackward1)
        return torch.round(input, decimals=decimals)
    return _own_functions(surface.namespace("special", {**names, "round": round}))


# torch.linalg.X written in composites/decompositions.py as linalg_X
_LINALG_DECOMPOSITIONS = ("cholesky", "cholesky_ex", "solve", "solve_ex", "inv_ex", "qr", "eigh", "eigvalsh", "slogdet",
                          "matrix_exp", "matrix_power", "pinv", "lstsq", "multi_dot", "vecdot", "vander", "diagonal",
                          "tensorinv", "tensorsolve", "lu_factor", "lu_factor_ex", "lu", "lu_solve",
                          "matrix_rank")


def _linalg_names() -> dict:
    names = _cache.get("linalg")
    if names is None:
        from . import surface
        names = _cache["linalg"] = surface.namespace("linalg", {
            "norm": T.linalg_norm, "vector_norm": T.vector_norm, "matrix_norm": T.matrix_norm,
            "svdvals": T.svdvals, "svd": T.linalg_svd, "det": T.det, "inv": T.inverse, "matmul": T.matmul,
            **{name: getattr(T, "linalg_" + name) for name in _LINALG_DECOMPOSITIONS}})
        from .ops.linalg import LinAlgError
        names["LinAlgError"] = LinAlgError
        names = _cache["linalg"] = _own_functions(names)
    return names


def _own_functions(names: dict) -> dict:
    """``names`` with functions of their own: as in PyTorch, ``torch.special.erf is torch.erf`` and
    ``torch.linalg.det is torch.det`` are false (and each prints as PyTorch prints it)."""
    from .surface import own_function
    return {name: own_function(fn) for name, fn in names.items()}


_F_NAMES = ("softmax log_softmax relu relu6 leaky_relu elu gelu softplus silu sigmoid tanh hardtanh logsigmoid "
            "normalize mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
            "binary_cross_entropy_with_logits nll_loss cross_entropy linear dropout one_hot pad "
            "cosine_similarity").split()


def _core_nn_functional_names() -> dict:
    """torch.nn.functional's names that need no torch.nn (nn_functional.py and the table's F names)."""
    names = _cache.get("F")
    if names is None:
        from . import surface
        nf = NF()
        names = _cache["F"] = surface.namespace("F", {n: getattr(nf, n) for n in _F_NAMES})
    return names


def _nn_functional_name(name):
    return None if name.startswith("__") else _all_nn_functional_names().get(name)


def _all_nn_functional_names() -> dict:
    """Every name of torch.nn.functional (the rest come with torch.nn)."""
    return {**_core_nn_functional_names(), **_nn_functional_names()}


def _autograd_functional_names():
    from . import functional
    return {n: getattr(functional, n) for n in _AUTOGRAD_FUNCTIONAL}


# ---- torch.autograd's extension points (custom Functions, hooks, anomaly mode: issue 16), imported
# when a program first reads one of them
def _autograd_extension_points(name):
    if name == "Variable":
        from .legacy import Variable
        return Variable
    from . import autograd_extras
    return autograd_extras.autograd_name(name, Namespace)


def _names_namespace(qualified, module):
    """The namespace ``qualified`` of a gradexpr module's ``NAMES``."""
    return Namespace(qualified, {n: getattr(module, n) for n in module.NAMES})


def _nn_names():
    from . import nn
    from .nn import parametrize, prune
    modules, init, utils = nn.names()
    from .nn import parallel
    utils = {**utils, "parametrize": _names_namespace("torch.nn.utils.parametrize", parametrize),
             "prune": _names_namespace("torch.nn.utils.prune", prune)}
    return {**modules, "init": Namespace("torch.nn.init", init), "utils": Namespace("torch.nn.utils", utils),
            "parallel": Namespace("torch.nn.parallel", {"DataParallel": parallel.DataParallel,
                                                        "DistributedDataParallel": parallel.DistributedDataParallel})}


def _late_torch_name(name):
    """torch.X of the ops that load with torch.nn (torch.selu, torch.celu_, torch.hardshrink, torch.prelu …)."""
    from .nn import functional_activations as FA
    if name not in FA.TORCH_NAMES:
        return None
    from .surface import own_function       # (F.selu is the same function: torch.selu is one of its own)
    return own_function(getattr(FA, name))


def _nn_functional_names():
    from . import nn
    return nn.functional_names()


def _optim_names():
    from . import optim
    names, schedulers = optim.names()
    return {**names, "lr_scheduler": Namespace("torch.optim.lr_scheduler", schedulers)}


def _distributed_names():
    from . import distributed
    return distributed.names()


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


_vmap.__name__ = _vmap.__qualname__ = "vmap"      # (print(torch.vmap) shows <function vmap at 0x…>)


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


