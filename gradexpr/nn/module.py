"""``nn.Module`` as PyTorch writes it: parameters, buffers and submodules registered by attribute
assignment into three ordered dicts, ``__call__`` running the hooks around ``forward``, and the
traversals, state dicts and ``repr`` in PyTorch's order and words."""
from __future__ import annotations

import collections
import itertools

from .. import errors
from ..graph import no_grad
from ..tensor import Tensor
from .parameter import Parameter


def typename(obj):
    """``torch.typename``: a tensor's type string, else the object's qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    t = type(obj)
    module = t.__module__
    return t.__qualname__ if module in ("builtins", None) else f"{module}.{t.__qualname__}"


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` takes the hook out again."""
    _gx_exposed = True
    __module__ = "torch.utils.hooks"
    _next_id = 0

    def __init__(self, *hook_dicts):
        self._dicts = hook_dicts
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __module__ = "torch.nn.modules.module"

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class AnyPublicName:
    """A module's ``_gx_settable``: programs may set any public attribute (``model.fc = nn.Linear(…)``),
    and the underscored ones named (a pruning method's ``_tensor_name``)."""

    def __init__(self, *underscored):
        self.underscored = frozenset(underscored)

    def __contains__(self, name):
        return isinstance(name, str) and (not name.startswith("_") or name in self.underscored)


class Module:
    _gx_exposed = True
    _gx_settable = AnyPublicName()
    _gx_readable = frozenset({"_forward_pre_hooks"})     # the pruning tutorial prints them
    __module__ = "torch.nn.modules.module"
    dump_patches = False
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise errors.TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                                   f"{len(args) + 1} were given" if args else
                                   f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                                   f"'{next(iter(kwargs))}'")
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", {})
        sa(self, "_buffers", {})
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_backward_hooks", collections.OrderedDict())
        sa(self, "_backward_pre_hooks", collections.OrderedDict())
        sa(self, "_is_full_backward_hook", None)
        sa(self, "_forward_hooks", collections.OrderedDict())
        sa(self, "_forward_hooks_with_kwargs", {})
        sa(self, "_forward_pre_hooks", collections.OrderedDict())
        sa(self, "_forward_pre_hooks_with_kwargs", {})
        sa(self, "_modules", {})

    def forward(self, *input):
        raise errors.NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" '
                                         'function')

    # ------------------------------------------------------------ registration
    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise errors.AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise errors.TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise errors.KeyError('buffer name can\'t contain "."')
        if name == "":
            raise errors.KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise errors.KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise errors.TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                                   "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise errors.AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise errors.TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise errors.KeyError('parameter name can\'t contain "."')
        if name == "":
            raise errors.KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise errors.KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise errors.TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                                   "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise errors.ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters "
                                    f"must be created explicitly. To express '{name}' as a function of another "
                                    "Tensor, compute the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise errors.TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise errors.TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise errors.KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise errors.KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise errors.KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise errors.AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise errors.AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise errors.AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise errors.AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    # ------------------------------------------------------------ attributes
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise errors.AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise errors.AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise errors.TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                       "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise errors.AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise errors.TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                           "(torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise errors.TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                               "(torch.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for d in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(d, ()):
                del self.__dict__[d][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ------------------------------------------------------------ calling
    def _register_hook(self, store, hook, prepend, kw_store=None, with_kwargs=False):
        handle = RemovableHandle(store, *((kw_store,) if kw_store is not None else ()))
        store[handle.id] = hook
        if with_kwargs:
            kw_store[handle.id] = True
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return self._register_hook(self._forward_pre_hooks, hook, prepend, self._forward_pre_hooks_with_kwargs,
                                   with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        return self._register_hook(self._forward_hooks, hook, prepend, self._forward_hooks_with_kwargs,
                                   with_kwargs)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return self._register_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        if self._is_full_backward_hook is False:
            raise errors.RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single "
                                      "Module. Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", True)
        return self._register_hook(self._backward_hooks, hook, prepend)

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise errors.RuntimeError("forward pre-hook must return None or a tuple of "
                                                  f"(new_args, new_kwargs), but got {result}.")
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            from .backward_hook import BackwardHook
            bw_hook = BackwardHook(self, list(self._backward_hooks.values()), list(self._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                hook_result = hook(self, args, kwargs, result)
            else:
                hook_result = hook(self, args, result)
            if hook_result is not None:
                result = hook_result
        if bw_hook:
            result = bw_hook.setup_output_hook(result)
        return result

    # ------------------------------------------------------------ traversal
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # ------------------------------------------------------------ modes and conversions
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise errors.ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        """Convert every parameter, its gradient and every buffer in place of the old data (the
        parameter objects stay the same, as with PyTorch's default)."""
        for module in self.children():
            module._apply(fn)
        with no_grad():
            for key, param in self._parameters.items():
                if param is None:
                    continue
                param.data = fn(param)
                if param.grad is not None:
                    param._grad = fn(param.grad)
            for key, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        from .. import dtypes
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, dtypes.DType):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            else:
                _check_device(a)
        if "device" in kwargs:
            _check_device(kwargs["device"])
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise errors.TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                   f"dtype={dtype}")
        if dtype is None:
            return self
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        return self

    def cuda(self, device=None):
        _check_device("cuda" if device is None else device)
        return self

    def share_memory(self):
        return self

    # ------------------------------------------------------------ state
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = collections.OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs):
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                input_param = state_dict[key]
                if not isinstance(input_param, Tensor):
                    error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                      f"Tensor-like object from checkpoint but received {type(input_param)}")
                    continue
                if len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
                    input_param = input_param[0]
                if input_param.shape != param.shape:
                    error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                                      f"from checkpoint, the shape in current model is {param.shape}.")
                    continue
                with no_grad():
                    param.copy_(input_param)
            elif strict:
                missing_keys.append(key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, collections.abc.Mapping):
            raise errors.TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        state_dict = collections.OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            module._load_from_state_dict(local_state_dict, prefix, True, missing_keys, unexpected_keys,
                                         error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise errors.RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------ printing
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)


def _check_device(device):
    """``module.to(device)``, ``.cuda()``: PyTorch's errors for a CPU-only build (gradexpr/device.py)."""
    if device is not None:
        from ..device import check_to
        check_to(device)
