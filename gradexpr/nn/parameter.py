"""``nn.Parameter``: a tensor that a module registers as its parameter (a leaf that requires grad)."""
from __future__ import annotations

from .. import errors
from ..tensor import Tensor


class Parameter(Tensor):
    """PyTorch's ``Parameter``: ``Parameter(data, requires_grad=True)`` shares ``data``'s storage;
    operations on it give plain tensors (the subclass does not propagate, as in PyTorch)."""
    __slots__ = ()
    __module__ = "torch.nn.parameter"

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .. import functions as T
            data = T.empty(0)
        if not isinstance(data, Tensor):
            raise errors.TypeError(f"Parameter() received an invalid combination of arguments - got "
                                   f"({type(data).__name__}, ), but expected one of:\n"
                                   " * (Tensor data = None, bool requires_grad = True)")
        p = Tensor._make(data._data, data._dtype, version_counter=data._version_counter)
        p.__class__ = cls
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce__(self):       # copy.deepcopy(model) copies parameters as parameters
        return (_rebuild, (self._data.copy(), self._dtype, self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = _rebuild(self._data.copy(), self._dtype, self.requires_grad)
        if self._grad is not None:
            p._grad = Tensor._make(self._grad._data.copy(), self._grad._dtype)
        memo[id(self)] = p
        return p


def _rebuild(array, dtype, requires_grad):
    p = Tensor._make(array, dtype)
    p.__class__ = Parameter
    p._requires_grad = requires_grad
    return p

