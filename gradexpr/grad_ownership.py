"""Which gradients the backward pass alone holds: a gradient made by a formula during the pass, referenced
only by the engine and owning its memory, may become a leaf's ``.grad`` without a copy or be added into in
place (reference counts tell, measured once per interpreter)."""
from __future__ import annotations

import sys

from numpy import add as np_add

from .grad_mode import _grad_enabled
from .zero_tensor import LIVE as ZERO_TENSORS, is_zero

# A gradient made by a formula during this pass, referenced only by the engine, whose array
# owns its memory and is referenced only by that tensor, cannot be observed by anyone else:
# the engine may keep it as a leaf's .grad (no copy) or add into it in place. Reference
# counts tell; the counts of an unshared object seen through the engine's own code pattern
# are measured once here (they differ between Python versions).
STEAL_MIN = 4096          # elements; below this a copy costs less than the checks


def refs(x):
    return sys.getrefcount(x)


class _Probe:
    __slots__ = ("_data",)


def _measure_refcounts():
    holder = {0: _Probe()}
    popped = holder.pop(0, None)
    sole_local = refs(popped)                 # held by a local only
    holder[0] = popped
    del popped
    got = holder.get(0)
    in_buffer = refs(got)                     # held by a dict and a local
    probe = _Probe()
    probe._data = object()
    sole_data = refs(probe._data)             # held by one slot only
    return sole_local, in_buffer, sole_data


# CPython up to 3.13 counts every reference the engine's code holds; later versions may borrow
# some (a count then reads low), so there the engine does not rely on counts and always copies.
if sys.implementation.name == "cpython" and sys.version_info < (3, 14):
    SOLE_LOCAL, _IN_BUFFER, _SOLE_DATA = _measure_refcounts()
else:
    SOLE_LOCAL = _IN_BUFFER = _SOLE_DATA = -1


def owns_memory(t) -> bool:
    """Whether ``t``'s array owns its memory and nothing but ``t`` refers to it."""
    if refs(t._data) != _SOLE_DATA:
        return False
    data = t._data
    return data.base is None and data.flags.writeable


def held_by(buffers, g) -> int:
    return sum(1 for v in buffers.values() if v is g)


def add_into(old, g):
    """``old + g``, written into ``old``'s memory when the engine alone holds it (``old`` in the
    buffers dict and in the caller's local, as measured) and no graph is being recorded.

    A ZeroTensor ``g`` (zero_tensor.py) follows ATen's InputBuffer: added in place into an ``old`` the engine
    alone holds, it is read as +0 zeros (a -0 there becomes +0); else ``old + g`` is a copy of ``old``."""
    if ZERO_TENSORS and is_zero(g) and not is_zero(old):
        if not _grad_enabled.get() and refs(old) == _IN_BUFFER + 1 and owns_memory(old):
            data = old._data
            np_add(data, 0, out=data)
            return old
        return old + g
    if (g._dtype is old._dtype and old._data.size >= STEAL_MIN and g._data.shape == old._data.shape
            and not _grad_enabled.get() and refs(old) == _IN_BUFFER + 1 and owns_memory(old)):
        data = old._data
        np_add(data, g._data, out=data)
        return old
    return old + g
