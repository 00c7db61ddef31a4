"""PyTorch's text for its functions and Tensor methods: ``print(torch.dot)`` shows
``<built-in method dot of type object at 0x…>``, ``print(F.relu)`` ``<function relu at 0x…>``,
``print(x.sum)`` ``<built-in method sum of Tensor object at 0x…>``,
``print(x.backward)`` ``<bound method Tensor.backward of tensor(…)>``.

gradexpr's functions are all Python functions, which Python prints as ``<function …>``; which
text PyTorch shows depends on whether it wrote the function in C++ or in Python, so it is
recorded from PyTorch (``torch_callables.py``, by ``tools/gen_torch_callables.py``). A function
is found by identity among the names the program's namespaces have made (and the prelude's),
the torch namespace first; one gradexpr function bound under two PyTorch names (an alias such as
``torch.swapaxes``, which is ``torch.transpose`` here; ``torch.Tensor.norm``, which is ``torch.norm``)
shows under the name it has, or the first found. The interpreter's ``str``/``repr``/``format`` call ``display``; only printing pays.
"""
from __future__ import annotations

import types

from .tensor import Tensor

# the namespaces searched, in this order, as paths from the torch namespace
_PATHS = (("torch",), ("torch", "nn", "functional"), ("torch", "linalg"), ("torch", "special"), ("torch", "fft"),
          ("torch", "autograd"), ("torch", "autograd", "functional"), ("torch", "func"), ("torch", "nn", "init"))


def _names(ns) -> dict:
    try:
        return object.__getattribute__(ns, "_names")
    except AttributeError:
        return {}


def _namespaces():
    """(PyTorch's name of the namespace, {name: value} made so far) for each searched namespace."""
    from . import api
    torch = api._made.get("torch")
    if torch is None:
        return
    # the prelude's torch names (``from torch import *``) and those made on first use
    yield "torch", {**(api._prelude or {}), **api._lazily_made}
    for path in _PATHS:
        ns = torch
        for part in path[1:]:
            ns = _names(ns).get(part)
            if ns is None:
                break
        if ns is not None:
            yield ".".join(path), _names(ns)


def _tensor_method_name(fn):
    members = vars(Tensor)
    name = getattr(fn, "__name__", None)
    if name is not None and members.get(name) is fn:
        return name
    for name, value in members.items():
        if value is fn:
            return name
    return None


def display(obj) -> str | None:
    """PyTorch's repr of ``obj`` if it is one of PyTorch's public functions or Tensor methods as
    gradexpr binds them, else None (the caller shows Python's)."""
    from .torch_callables import NAMESPACES, TEMPLATES, TENSOR
    if type(obj) is types.MethodType:
        owner = obj.__self__
        if not isinstance(owner, Tensor):
            return None
        name = _tensor_method_name(obj.__func__)
        if name is None or name not in TENSOR:
            return None
        return TEMPLATES[TENSOR[name][1]].format(n=name, a=hex(id(owner)), s=repr(owner),
                                                 t=type(owner).__name__)
    own_name = getattr(obj, "__name__", None)
    for space, names in _namespaces():
        recorded = NAMESPACES.get(space, {})
        if own_name in recorded and names.get(own_name) is obj:     # (of aliases, the one it is named)
            return TEMPLATES[recorded[own_name]].format(n=own_name, a=hex(id(obj)))
        for name, value in names.items():
            if value is obj and name in recorded:
                return TEMPLATES[recorded[name]].format(n=name, a=hex(id(obj)))
    name = _tensor_method_name(obj)          # torch.Tensor.sum
    if name is not None and name in TENSOR:
        return TEMPLATES[TENSOR[name][0]].format(n=name, a=hex(id(obj)))
    return None
