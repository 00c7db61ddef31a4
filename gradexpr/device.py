"""Devices, as a CPU-only build of PyTorch has them.

``torch.device`` parses and prints as PyTorch's (``device(type='cuda', index=1)``, ``cuda:1``);
tensors live on the CPU. Asking for a tensor anywhere else is PyTorch's error for a CPU build:
``AssertionError: Torch not compiled with CUDA enabled`` for CUDA; for MPS, the dispatcher's
``NotImplementedError`` when a factory makes one and ``RuntimeError: PyTorch is not linked
with support for mps devices`` when ``.to`` moves one. ``check`` is the one validation of a
``device=`` argument (factories, ``.to``); ``torch.cuda``, ``torch.backends.mps``,
``torch.accelerator`` answer as on a machine without accelerators.
"""
from __future__ import annotations

import builtins as _builtins

from . import errors

__all__ = ["device", "CPU", "check", "check_to", "set_default_device", "get_default_device", "namespaces"]

# PyTorch's list, in the order its error message gives it
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
NO_CUDA = "Torch not compiled with CUDA enabled"
NO_MPS = "PyTorch is not linked with support for mps devices"
# a bare index names the current accelerator (torch.device(0), .to(0), device=0, .cuda(0)): none here
NO_ACCELERATOR = "Cannot access accelerator device when none is available."
# the dispatch keys a CPU build registers for its factories (the MPS error lists them)
_CPU_BACKENDS = (
    "CPU, Meta, QuantizedCPU, QuantizedMeta, MkldnnCPU, SparseCPU, SparseMeta, SparseCsrCPU, SparseCsrMeta, "
    "BackendSelect, Python, FuncTorchDynamicLayerBackMode, Functionalize, Conjugate, Negative, ZeroTensor, "
    "ADInplaceOrView, AutogradOther, AutogradCPU, AutogradCUDA, AutogradHIP, AutogradXLA, AutogradMPS, AutogradIPU, "
    "AutogradXPU, AutogradHPU, AutogradVE, AutogradLazy, AutogradMTIA, AutogradMAIA, AutogradPrivateUse1, "
    "AutogradPrivateUse2, AutogradPrivateUse3, AutogradMeta, AutogradNestedTensor, Tracer, AutocastCPU, AutocastMTIA, "
    "AutocastMAIA, AutocastXPU, AutocastMPS, AutocastCUDA, FuncTorchBatched, BatchedNestedTensor, FuncTorchVmapMode, "
    "Batched, VmapMode, FuncTorchGradWrapper, PythonTLSSnapshot, FuncTorchDynamicLayerFrontMode, PreDispatch, "
    "PythonDispatcher")


def _parse(text: str):
    kind, sep, index = text.partition(":")
    if kind not in DEVICE_TYPES:
        raise errors.RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                                  f"{text}")
    if not sep:
        return kind, None
    if not index.isdigit() or (len(index) > 1 and index[0] == "0"):
        raise errors.RuntimeError(f"Invalid device string: '{text}'")
    return kind, int(index)


class device:
    """``torch.device('cuda:1')``, ``torch.device('cpu', 0)``, ``torch.device(other)``."""

    _gx_exposed = True
    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise errors.TypeError("device(): argument 'type' (position 1) must be str, not torch.device")
            kind, idx = type._type, type._index
        elif isinstance(type, int) and not isinstance(type, bool):     # an index alone: the accelerator's
            if type < 0:
                raise errors.RuntimeError("Device index must not be negative")
            raise errors.RuntimeError(NO_ACCELERATOR)
        elif isinstance(type, str):
            kind, idx = _parse(type)
            if index is not None:
                if idx is not None:
                    raise errors.RuntimeError(f"type (string) must not include an index because index was passed "
                                              f"explicitly: {type}")
                idx = index
        else:
            raise errors.TypeError(f"device(): argument 'type' (position 1) must be str, not "
                                   f"{_builtins.type(type).__name__}")
        if idx is not None and idx < 0:
            raise errors.RuntimeError("Device index must not be negative")
        object.__setattr__(self, "_type", kind)
        object.__setattr__(self, "_index", idx)

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    @property
    def type(self):
        return self._type

    @property
    def index(self):
        return self._index

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self):
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type, self._index))

    # ``with torch.device('cuda'):`` makes the device the default for the block (PyTorch's
    # DeviceContext): a CUDA one fails where a tensor is made, as after set_default_device('cuda')
    def __enter__(self):
        _entered.append(_default[0])
        _default[0] = self
        return self

    def __exit__(self, *exc):
        _default[0] = _entered.pop()
        return False


device.__module__ = "torch"

CPU = device("cpu")
_default = [CPU]
_entered: list = []          # the defaults that ``with torch.device(...)`` blocks replaced, innermost last


def _as_device(where) -> device:
    if isinstance(where, device):
        return where
    if isinstance(where, str):
        return device(where)
    if isinstance(where, int) and not isinstance(where, bool):
        return device(where)            # (raises: an index alone is an accelerator's)
    raise errors.TypeError(f"expected a torch.device or a device string, got {type(where).__name__}")


def check(where, op: str = "aten::empty.memory_format"):
    """A factory's ``device=`` argument: None (the default device), 'cpu', ``torch.device('cpu')``;
    returns the device. CUDA and MPS fail as a CPU build of PyTorch fails (``op`` is the ATen
    operator the MPS message names)."""
    if where is None:
        where = _default[0]
    d = _as_device(where)
    if d._type == "cpu":
        return d
    if d._type == "cuda":
        raise AssertionError(NO_CUDA)
    raise errors.NotImplementedError(
        f"Could not run '{op}' with arguments from the '{d._type.upper() if d._type == 'mps' else d._type}' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). If you are a Facebook employee using PyTorch on "
        f"mobile, please visit https://fburl.com/ptmfixes for possible resolutions. '{op}' is only available for "
        f"these backends: [{_CPU_BACKENDS}].")


def check_to(where):
    """``t.to(device)``, ``t.cuda()``: the device, if it is the CPU; PyTorch's errors otherwise."""
    d = _as_device(where)
    if d._type == "cpu":
        return d
    if d._type == "cuda":
        raise AssertionError(NO_CUDA)
    if d._type == "mps":
        raise errors.RuntimeError(NO_MPS)
    raise errors.RuntimeError(f"PyTorch is not linked with support for {d._type} devices")


def set_default_device(where):
    """``torch.set_default_device``: as PyTorch, a CUDA default is accepted here and fails where a
    tensor is made."""
    _default[0] = CPU if where is None else _as_device(where)


def get_default_device():
    d = _default[0]
    if d._type == "cuda":
        raise AssertionError(NO_CUDA)
    return d


def default_device_setting():
    """The default as set, a CUDA one included (a REPL session carries it from line to line)."""
    return _default[0]


def reset_default_device():
    _default[0] = CPU
    _entered.clear()


def _cuda_unavailable(*args, **kwargs):
    raise AssertionError(NO_CUDA)


def namespaces() -> dict:
    """``torch.cuda``, ``torch.backends`` (``.mps``, ``.cuda``), ``torch.accelerator``, and the
    device functions of ``torch``."""
    from .api import Namespace
    false = lambda: False  # noqa: E731
    cuda = Namespace("torch.cuda", {
        "is_available": false, "device_count": lambda: 0, "is_initialized": false,
        "current_device": _cuda_unavailable, "get_device_name": _cuda_unavailable, "set_device": _cuda_unavailable,
        "synchronize": _cuda_unavailable, "manual_seed": lambda seed: None, "manual_seed_all": lambda seed: None,
        "empty_cache": lambda: None})
    mps = Namespace("torch.backends.mps", {"is_available": false, "is_built": false})
    backends = Namespace("torch.backends", {"mps": mps, "cuda": Namespace("torch.backends.cuda", {"is_built": false})})
    accelerator = Namespace("torch.accelerator", {
        "is_available": false, "current_accelerator": lambda check_available=False: None,
        "device_count": lambda: 0})
    return {"device": device, "cuda": cuda, "backends": backends, "accelerator": accelerator,
            "set_default_device": set_default_device, "get_default_device": get_default_device}
