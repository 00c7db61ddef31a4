"""``Tensor``: a NumPy array plus autograd state.

Data and dispatch only. Methods and operators are put on the class by ``surface.py``
(bound from the op table) and ``composites/methods.py`` (hand-written); no derivative
lives here. Views (``view``, ``t``, slicing, ``detach`` …) share their base's version
counter, as in PyTorch, so an in-place change through any alias is seen by saved
tensors. A differentiable view also remembers its root base (``_base``) and how it
was created (``_view_meta``), which the in-place rules of ``op.py`` read.
"""
from __future__ import annotations

import weakref
from weakref import ref as _weakref

import numpy as np

from . import dtypes, errors
from .forward_ad import ACTIVE as _DUAL_LEVEL, tangent_of as _tangent_of
from .graph import AccumulateGrad, InvalidGradFn, OutputEdge, _grad_enabled, output_nr as _output_nr
from .graph import is_inference_mode_enabled as _inference_on
from .zero_tensor import LIVE as _ZERO_TENSORS, alias as _zero_tensor_alias, check_storage as _check_storage
from .zero_tensor import is_zero as _is_zero_tensor


_LATE_METHODS = frozenset(("hardshrink", "prelu"))


class _TensorMeta(type):
    """``Tensor``'s type, named as PyTorch's (``torch._C._TensorMeta``). The hand-written methods of
    the composites a program has not used yet are bound on first lookup (``composites.methods``):
    through the class here (``torch.Tensor.sum``), through a tensor in ``Tensor.__getattr__``."""

    __module__ = "torch._C"

    def __getattr__(cls, name):
        if not name.startswith("__") and _bind_lazy_methods(name):
            return getattr(cls, name)
        raise AttributeError(f"type object '{cls.__name__}' has no attribute '{name}'")

    def __dir__(cls):
        _bind_lazy_methods()
        return type.__dir__(cls)


def _bind_lazy_methods(name=None) -> bool:
    """Bind the lazy methods of the composite holding method ``name`` (None: all); True if this
    call bound something."""
    from .composites import methods
    return methods.bind_lazy(name)


class Tensor(metaclass=_TensorMeta):
    _gx_exposed = True
    _gx_settable = frozenset({"requires_grad", "data", "grad"})
    __array_priority__ = 1000      # as PyTorch's: NumPy's operators defer to the tensor's (np.float32(2) * t)
    __slots__ = ("_data", "_dtype", "_requires_grad", "_grad", "_grad_fn", "_version_counter", "_base",
                 "_view_meta", "_wrapped", "_acc", "_leaf_hooks", "_name", "__weakref__")

    # ------------------------------------------------------------ construction
    @classmethod
    def _make(cls, data: np.ndarray, dtype=None, requires_grad=False, grad_fn=None, version_counter=None,
              base=None):
        if type(data) is not np.ndarray:
            data = np.asarray(data)
        if dtype is None:
            dtype = dtypes.from_numpy(data.dtype)
        elif data.dtype is not dtype.np and data.dtype != dtype.np:
            data = data.astype(dtype.np)
        t = _fresh(data, dtype, version_counter)
        if cls is not Tensor:
            t.__class__ = cls
        if requires_grad:
            t._requires_grad = True
        if grad_fn is not None:
            t._grad_fn = grad_fn
        if base is not None:
            t._base = base
        return t

    def __getattr__(self, name):           # only for names the class lacks: the methods not bound yet
        if name in _LATE_METHODS:           # (hardshrink, prelu) are bound on first use (nn/functional_activations.py)
            from .nn.functional_activations import bind_tensor_methods
            bind_tensor_methods()
            return getattr(self, name)
        if not name.startswith("__") and _bind_lazy_methods(name):     # (the lazy composites', see _TensorMeta)
            return getattr(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        _bind_lazy_methods()
        return object.__dir__(self)

    def __new__(cls, *args, **kwargs):     # the legacy constructor: torch.Tensor(2, 3), torch.Tensor([1, 2])
        from .legacy import construct
        return construct(dtypes.float32, args, kwargs)

    def __init__(self, *args, **kwargs):
        pass

    def _detached_alias(self):
        """Same data and version counter, no autograd history (what ``detach()`` returns)."""
        # an alias sharing data and version counter, but not a differentiable view: writing
        # through it is allowed even when ``self`` is a leaf that requires grad
        t = _fresh(self._data, self._dtype, self._version_counter)
        return _zero_tensor_alias(self, t) if _ZERO_TENSORS else t

    def _detached_copy(self):
        return _fresh(np.array(self._data, copy=True), self._dtype)

    def _with_grad_fn(self, node):
        t = _fresh(self._data, self._dtype, self._version_counter)
        t._requires_grad = True
        t._grad_fn = node
        t._base = self._base
        t._view_meta = self._view_meta
        return _zero_tensor_alias(self, t) if _ZERO_TENSORS else t

    def _accumulator(self):
        """A leaf's AccumulateGrad. The tensor holds it weakly (``_acc``, as PyTorch's autograd meta
        holds a weak_ptr): the graphs that use it hold it, and it holds the tensor, so a leaf and its
        node never form a cycle only a full collection would free. Once no graph holds it, the next
        use makes a new one; the leaf's own hooks live on the tensor (``_leaf_hooks``) and so carry
        over. ``_acc`` is None, that weak reference, or (``accumulate_as``) the leaf whose
        accumulator this tensor feeds."""
        link = self._acc
        if link is not None:
            if type(link) is not _weakref:
                return link._accumulator()
            acc = link()
            if acc is not None:
                return acc
        meta = self._view_meta
        if meta is not None and meta.created_without_grad:
            # a view made under no_grad of a base that requires grad: it reports requires_grad, but
            # (as in PyTorch) gradients reaching it go nowhere
            return None
        acc = AccumulateGrad(self)
        self._acc = _weakref(acc)
        if self._leaf_hooks is not None:
            from .hooks import node_hooks
            node_hooks(acc)         # the node runs the leaf's hooks
        return acc

    def _accumulator_link(self):
        """What a tensor standing for ``self`` stores as its ``_acc`` so that gradients reaching it go
        to ``self``'s accumulator (an unpacked saved leaf, the old value of an in-place op's input);
        None when ``self`` is not a leaf that requires grad."""
        if self._grad_fn is not None or not self._requires_grad:
            return None
        link = self._acc
        return link if link is not None and type(link) is not _weakref else self

    # ------------------------------------------------------------ autograd state
    @property
    def requires_grad(self) -> bool:
        # a view requires grad when its base does, even if the base started to after the view was made
        base = self._base
        return self._requires_grad or (base is not None and base._requires_grad)

    @requires_grad.setter
    def requires_grad(self, value):
        if type(value) is not bool:
            raise errors.RuntimeError("requires_grad must be a bool")
        if self._grad_fn is not None and not value:
            raise errors.RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if value and not self._dtype.is_floating_point:
            raise errors.RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None and not requires_grad:
            raise errors.RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if requires_grad and not self._dtype.is_floating_point:
            raise errors.RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self.is_inference() and not _inference_on():
            raise errors.RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                                      "allowed.")
        if self._grad_fn is None:
            self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        g = self._grad
        if g is None and self._grad_fn is not None and not self.retains_grad:
            from .warn import non_leaf_grad
            non_leaf_grad()
        return g

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise errors.TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                       f"{type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise errors.RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                                          f"tensor of size '{list(self._data.shape)}'. Please ensure that the "
                                          "gradient and the tensor are the same size")
            if value._dtype is not self._dtype:
                raise errors.RuntimeError("assigned grad has data of a different type")
        self._grad = value

    @property
    def grad_fn(self):
        fn = self._grad_fn
        if type(fn) is InvalidGradFn:
            fn.fail()
        elif type(fn) is OutputEdge:
            return fn._fn       # every output of a custom Function shares its node
        return fn

    @property
    def output_nr(self) -> int:
        return _output_nr(self)

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        vc = self._version_counter
        if type(vc) is not list:
            raise errors.RuntimeError("Inference tensors do not track version counter.")
        return vc[0]

    def is_inference(self) -> bool:
        return type(self._version_counter) is not list

    def register_hook(self, hook):
        from .hooks import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        from .hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self):
        if self.grad_fn is None:
            if not self._requires_grad:
                raise errors.RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return None
        node = self._grad_fn
        if node._retains is None:
            node._retains = []
        node._retains.append(weakref.ref(self))
        return None

    @property
    def retains_grad(self) -> bool:
        node = self._grad_fn
        return bool(node is not None and node._retains and any(r() is self for r in node._retains))

    def detach(self):
        return self._detached_alias()

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise errors.RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                                      "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                                      "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                                      "be called on these gradients. To fix this error, please refer to the "
                                      "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        """The same values without history; changes through it are not tracked (no version bump)."""
        t = Tensor._make(self._data, self._dtype)
        return _zero_tensor_alias(self, t) if _ZERO_TENSORS else t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise errors.TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data
        self._dtype = value._dtype
        if _ZERO_TENSORS:
            _zero_tensor_alias(value, self)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ------------------------------------------------------------ metadata
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    ndim = property(dim)

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:     # (a method of its own, as in PyTorch: it prints under its name)
        return int(self._data.size)

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        from .device import CPU
        return CPU

    @property
    def layout(self):
        from .memory_format import strided
        return strided              # (every tensor here is dense)

    @property
    def is_cuda(self):
        return False

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_signed(self) -> bool:
        return self._dtype.is_signed

    def is_conj(self) -> bool:
        return False            # (no complex dtypes: never a conjugate view)

    def is_distributed(self) -> bool:
        return False

    def is_same_size(self, other) -> bool:
        return self._data.shape == other._data.shape

    def is_complex(self) -> bool:
        return False        # (no complex dtypes)

    def storage_offset(self) -> int:
        """Where a view starts in its base's storage, in elements (a tensor that is no view: 0)."""
        if self._base is None:
            return 0
        return (self.data_ptr() - self._base.data_ptr()) // self._dtype.itemsize

    def is_contiguous(self, *, memory_format=None) -> bool:
        if memory_format is None:
            return bool(self._data.flags.c_contiguous)
        from .memory_format import is_contiguous_for
        return is_contiguous_for(self._data.shape, self.stride(), memory_format)

    def dim_order(self, *, ambiguity_check=False):
        from .memory_format import dim_order
        return dim_order(self._data.shape, self.stride(), ambiguity_check)

    def element_size(self) -> int:
        return self._dtype.itemsize

    def stride(self, dim=None):
        st = tuple(s // self._dtype.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def data_ptr(self) -> int:
        return int(self._data.__array_interface__["data"][0])

    def __len__(self):
        if self._data.ndim == 0:
            raise errors.TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise errors.TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))        # as PyTorch's: the rows are UnbindBackward0's outputs

    def __hash__(self):
        return id(self)

    # ------------------------------------------------------------ conversion to Python
    def item(self):
        if self._data.size != 1:
            raise errors.RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        if _ZERO_TENSORS:
            _check_storage(self, "tolist")
        return self._data.tolist()

    def numpy(self, *, force=False):
        if _ZERO_TENSORS and _is_zero_tensor(self):
            if not force:
                _check_storage(self, "numpy")
            return self._data.copy()         # (force: the zeros, in memory of their own)
        if self._requires_grad and not force and _grad_enabled.get():     # (allowed under no_grad, as PyTorch)
            raise errors.RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                      "instead.")
        return self._data

    def __bool__(self):
        if self._data.size != 1:
            raise errors.RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()).item())

    def __float__(self):
        if self._data.size != 1:
            raise errors.ValueError("only one element tensors can be converted to Python scalars")
        return float(self._data.reshape(()).item())

    def __int__(self):
        if self._data.size != 1:
            raise errors.ValueError("only one element tensors can be converted to Python scalars")
        return int(self._data.reshape(()).item())

    def __index__(self):
        if self._dtype.category == 2 or self._data.size != 1:
            raise errors.TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()).item())

    def __complex__(self):
        return complex(self.item())

    # ------------------------------------------------------------ printing
    def __repr__(self):
        from .printing import format_tensor
        fn = self._grad_fn
        tangent = _tangent_of(self) if _DUAL_LEVEL else None
        return format_tensor(self._data, self._dtype.name, grad_fn=None if fn is None else _printed_node_name(fn),
                             requires_grad=self.requires_grad and fn is None,
                             tangent=None if tangent is None else repr(tangent))

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise errors.TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __reduce__(self):
        raise errors.TypeError("tensors cannot be pickled in gradexpr")

    def __deepcopy__(self, memo):
        from .tensor_copy import deepcopy_tensor
        return deepcopy_tensor(self, memo)

    def __copy__(self):
        from .tensor_copy import copy_tensor
        return copy_tensor(self)


_new_object = object.__new__


def _fresh(data: np.ndarray, dtype, version_counter=None) -> Tensor:
    """A tensor without history over ``data``, an ndarray already of ``dtype``: the constructor of
    the engine's hot paths (``apply``, saved tensors, gradients), where each op makes one or two."""
    t = _new_object(Tensor)
    t._data = data
    t._dtype = dtype
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._version_counter = [0] if version_counter is None else version_counter
    t._base = None
    t._view_meta = None
    t._wrapped = False
    t._acc = None
    t._leaf_hooks = None
    t._name = None
    return t


def _wrap_dim(dim, ndim):
    d = int(dim)
    n = max(ndim, 1)
    if not -n <= d < n:
        raise errors.IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d + n if d < 0 else d


class Size(tuple):
    """torch.Size: a tuple that prints as ``torch.Size([2, 3])``."""

    _gx_exposed = True
    __slots__ = ()

    def __repr__(self):
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    # tuple's operators, keeping the type, as torch.Size's do ((4,) + size is a Size too)
    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        if not hasattr(n, "__index__"):
            raise TypeError(f"can't multiply sequence by non-int of type '{type(n).__name__}'")
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


for _cls, _name in ((Tensor, "Tensor"), (Size, "Size")):
    _cls.__module__ = "torch"
    _cls.__qualname__ = _name
    _cls.__name__ = _name


def _printed_node_name(fn):
    """A node's name in a tensor's ``grad_fn=<…>``: its Python type's, the C++ name's tail for the nodes
    no Python class wraps (torch/_tensor_str.py's CppFunction case)."""
    name = fn.type_name()
    return fn.name().rsplit("::", 1)[-1] if name == "CppFunction" else name
