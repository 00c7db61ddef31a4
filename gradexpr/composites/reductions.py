"""Reductions with overloads the parser cannot choose alone (``max(input)``, ``max(input, dim)``,
``max(input, other)``), variance, norms, cumulative ops and ``ReturnType`` (``torch.return_types``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import ops as D
from .. import dtypes, errors
from ..op import apply, apply_ex, share_node
from ..ops.common import _reduce_dim
from ..signatures import Overloads
from ..tensor import Tensor, _wrap_dim
from .arguments import _UNSET, _dtype_arg, _given_dim, _missing, _torch
from .linalg import movedim
from .shape import unsqueeze


def _int_dim(dim, name, position=None):
    if isinstance(dim, (tuple, list)):
        where = f" (position {position})" if position else ""
        raise errors.TypeError(f"{name}(): argument 'dim'{where} must be int, not {type(dim).__name__}")
    return dim


class ReturnType(tuple):
    """A named pair such as ``torch.return_types.max(values=…, indices=…)``."""

    _gx_exposed = True
    _fields = ("values", "indices")

    def __new__(cls, name, values, indices):
        self = tuple.__new__(cls, (values, indices))
        self._name = name
        return self

    def _rebuilt(self, parts):
        """The same kind of pair holding ``parts`` (torch.func's transforms rebuild their outputs)."""
        return type(self)(self._name, *parts)

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        first, second = self._fields
        return f"torch.return_types.{self._name}(\n{first}={self[0]!r},\n{second}={self[1]!r})"

    __str__ = __repr__


class MinMax(ReturnType):
    """``torch.return_types.aminmax(min=…, max=…)``."""

    _fields = ("min", "max")

    @property
    def min(self):
        return self[0]

    @property
    def max(self):
        return self[1]


class NamedResult(tuple):
    """``torch.return_types.<name>(field=…, …)`` of any fields: the classes ``named_result`` makes."""

    _gx_exposed = True
    _name = ""
    _fields: tuple = ()

    def __new__(cls, *parts):
        return tuple.__new__(cls, parts)

    def _rebuilt(self, parts):
        return type(self)(*parts)

    def __repr__(self):
        fields = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"torch.return_types.{self._name}(\n{fields})"

    __str__ = __repr__


_NAMED_RESULTS: dict = {}


def named_result(name, *fields):
    """The class of ``torch.return_types.<name>`` with ``fields`` (made once per name)."""
    cls = _NAMED_RESULTS.get(name)
    if cls is None:
        attributes = {"_name": name, "_fields": fields, "__slots__": ()}
        attributes.update({field: property(lambda self, k=k: self[k]) for k, field in enumerate(fields)})
        cls = _NAMED_RESULTS[name] = type(name, (NamedResult,), attributes)
    return cls


def _minmax(name, all_name, dim_name, binary_name):
    """``torch.max``/``Tensor.max`` (and ``min``): the overload is chosen by PyTorch's parser from the
    schema lines; the ``dim`` overload returns ``torch.return_types.max(values, indices)``. The entries
    are looked up on first use (their family loads then, not with the composites)."""
    entries = []

    def lines():
        if not entries:
            entries.extend((getattr(D, all_name), getattr(D, dim_name), getattr(D, binary_name)))
        all_entry, dim_entry, binary_entry = entries
        return [(f"{name}(Tensor self, *, Tensor(a!)? out=None) -> Tensor", all_entry),
                (f"{name}.other(Tensor self, Tensor other, *, Tensor(a!)? out=None) -> Tensor", binary_entry),
                (f"{name}.dim(Tensor self, int dim, bool keepdim=False, *, Tensor(a!)[]? out=None) -> "
                 "(Tensor values, Tensor indices)", dim_entry)]
    overloads = Overloads(name, lines)

    def run(args, kwargs, method):
        if not entries:
            lines()
        all_entry, dim_entry, binary_entry = entries
        if not kwargs and len(args) == 1 and type(args[0]) is Tensor:
            return apply(all_entry, args)
        sig, values = overloads.parse(args, kwargs, method=method)
        entry, input = sig.entry, values["self"]
        if entry is binary_entry:
            return apply(entry, (input, values["other"]))
        if entry is all_entry:
            return apply(entry, (input,))
        params = {"dim": _given_dim(values["dim"], input._data.ndim), "keepdim": values["keepdim"]}
        result, extras = apply_ex(dim_entry, (input,), params)
        indices = extras["indices"]         # (under vmap already a batched tensor)
        return ReturnType(name, result, indices if isinstance(indices, Tensor) else Tensor._make(indices, dtypes.int64))

    def function(*args, **kwargs):
        return run(args, kwargs, False)

    def method(self, *args, **kwargs):
        return run((self,) + args, kwargs, True)
    function.__name__ = function.__qualname__ = method.__name__ = method.__qualname__ = name
    return function, method


max, _max_method = _minmax("max", "max_all", "max_dim", "maximum")
min, _min_method = _minmax("min", "min_all", "min_dim", "minimum")


def amax(input, dim=(), keepdim=False, *, out=None):
    return apply(D.amax, (input,), {"dim": _reduce_dim(dim, input) if dim != () else (), "keepdim": keepdim})


def amin(input, dim=(), keepdim=False, *, out=None):
    return apply(D.amin, (input,), {"dim": _reduce_dim(dim, input) if dim != () else (), "keepdim": keepdim})


def aminmax(input, *, dim=None, keepdim=False):
    parts = [amin(input, () if dim is None else dim, keepdim), amax(input, () if dim is None else dim, keepdim)]
    share_node(D.aminmax, (input,), {"dim": dim, "keepdim": keepdim}, parts)
    return MinMax("aminmax", *parts)


def argmax(input, dim=None, keepdim=False, *, out=None):
    return apply(D.argmax, (input,), {"dim": _reduce_dim(_int_dim(dim, "argmax"), input), "keepdim": keepdim})


def argmin(input, dim=None, keepdim=False, *, out=None):
    return apply(D.argmin, (input,), {"dim": _reduce_dim(_int_dim(dim, "argmin"), input), "keepdim": keepdim})


def _var_args(input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):        # var(input, unbiased)
        unbiased, dim = dim, None
    if dim is _UNSET:
        dim = None
        if unbiased is None and correction is None:     # var() itself: ATen's node keeps no correction
            from ..saved_attributes import DefaultCorrection
            correction = DefaultCorrection(1)
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return {"dim": _reduce_dim(dim, input), "correction": correction, "keepdim": keepdim}


def var(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=None, out=None):
    return apply(D.var, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def std(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=None, out=None):
    return apply(D.std, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=None):
    params = _var_args(input, dim, unbiased, keepdim, correction)
    return tuple(share_node(D.var_mean, (input,), params,
                            [apply(D.var_mean_var, (input,), params), apply(D.var_mean_mean, (input,), params)]))


def std_mean(input, dim=_UNSET, unbiased=None, keepdim=False, *, correction=None):
    params = _var_args(input, dim, unbiased, keepdim, correction)
    return tuple(share_node(D.std_mean, (input,), params,
                            [apply(D.std_mean_std, (input,), params), apply(D.std_mean_mean, (input,), params)]))


def _ord(p):
    if p in ("fro", None):
        return 2
    if p == "nuc":
        raise errors.RuntimeError("nuclear norm is not supported in gradexpr")
    return p if type(p) in (int, float) else float(p)      # as given: the node shows it (ord 2, 2.0)


def _check_matrix_dims(input, dim):
    """A nuclear norm is a matrix norm: PyTorch refuses other than two dims first (LnStructured asks
    ``norm(t, p="nuc", dim=every other dim)``)."""
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 2:
        raise errors.RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")


def _norm_params(params, dtype):
    if dtype is not None:
        params["dtype"] = _dtype_arg(dtype)
    return params


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    if p == "nuc":
        _check_matrix_dims(input, dim)
    return apply(D.norm, (input,), _norm_params({"ord": _ord(p), "dim": _reduce_dim(dim, input), "keepdim": keepdim},
                                                dtype))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return apply(D.norm, (x,), _norm_params({"ord": _ord(ord), "dim": _reduce_dim(dim, x), "keepdim": keepdim},
                                            dtype))


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.norm``: a vector norm over one dim (or all, without ord), else a matrix norm."""
    n = A._data.ndim
    if isinstance(dim, (tuple, list)) and len(dim) not in (1, 2):
        raise errors.RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    if ord is None or isinstance(dim, int) or (dim is None and n == 1 and not isinstance(ord, str)):
        # (without ord, ATen's linalg.norm is the vector 2-norm over the dims given, a pair included)
        if isinstance(ord, str):
            raise errors.RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord}")
        return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)    # (ATen's default: 2.0)
    if dim is None:
        if n != 2 and not (n == 1 and isinstance(ord, str)):     # a string ord is a matrix norm's
            raise errors.RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                                      f"Got {n}D.")
        dim = (-2, -1)
    return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """PyTorch's composition: Frobenius as a vector norm, 1/inf norms as amax(sum(abs))."""
    n = A._data.ndim
    if n < 2:
        raise errors.RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (_wrap_dim(d, n) for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in (1, -1, math.inf, -math.inf):
        if ord in (math.inf, -math.inf):
            d0, d1 = d1, d0
        if not keepdim and d0 < d1:
            d1 -= 1
        summed = vector_norm(A, 1, d0, keepdim, dtype=dtype)      # (ATen's: the 1-norm of each column)
        return amax(summed, d1, keepdim) if ord > 0 else amin(summed, d1, keepdim)
    if ord in (2, -2, "nuc"):
        s = svdvals(movedim(A, (d0, d1), (-2, -1)))
        if ord == "nuc":
            out = _torch("sum")(s, -1)
        else:
            out = amax(s, -1) if ord == 2 else amin(s, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                out = unsqueeze(out, d)
        return out
    raise errors.RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def linalg_svd(A, full_matrices=True, *, driver=None):
    """``torch.linalg.svd``: (U, S, Vh) as ``torch.return_types.linalg_svd``, one LinalgSvdBackward0 node."""
    from ..op import share_node
    if A._data.ndim < 2:
        raise errors.RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if A._dtype.category != 2:
        raise errors.RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. Got "
                                  f"{A._dtype._scalar_name}")
    params = {"full_matrices": bool(full_matrices)}
    parts = [apply(D.linalg_svd_U, (A,), params), apply(D.linalg_svd_S, (A,), params),
             apply(D.linalg_svd_Vh, (A,), params)]
    share_node(D.linalg_svd, (A,), params, parts)
    return named_result("linalg_svd", "U", "S", "Vh")(*parts)


def svdvals(A, *, driver=None):
    if A._data.ndim < 2:
        raise errors.RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if A._dtype.category != 2:
        raise errors.RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. Got "
                                  f"{A._dtype._scalar_name}")
    from ..forward_ad import ACTIVE
    from ..graph import is_grad_enabled
    # ATen's _linalg_svd(A, full_matrices=False, compute_uv=True) when A needs a gradient: S an output of
    # linalg.svd's node (a forward-AD level keeps svdvals' own tangent: gradexpr's svd has none)
    if A.requires_grad and is_grad_enabled() and not ACTIVE:
        return linalg_svd(A, full_matrices=False)[1]
    return apply(D.svdvals, (A,), {"compute_uv": _may_require_grad(A)})


def _may_require_grad(A):
    """ATen's _may_require_fw_or_bw_grad: A requires grad in grad mode, or a forward-AD level is open."""
    from ..forward_ad import ACTIVE
    from ..graph import is_grad_enabled
    return bool((A.requires_grad and is_grad_enabled()) or ACTIVE)


def logsumexp(input, dim=None, keepdim=False, *, out=None):
    if dim is None:
        raise _missing("logsumexp", "dim")
    dims = _reduce_dim(dim, input)
    if not keepdim and type(dims) is not int and not dim and input._data.ndim and input._data.size:
        # ATen's kernel adds the maxima it kept with keepdim (here [1, 1]) into the sum over "every dim"
        # it made without, a 0-d result: an empty list of dims fails in its words
        raise errors.RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                                  f"[{', '.join(['1'] * input._data.ndim)}]")
    return apply(D.logsumexp, (input,), {"dim": dims, "keepdim": keepdim})


def cumsum(input, dim, *, dtype=None, out=None):
    params = {"dim": _given_dim(_int_dim(dim, "cumsum", 1), input._data.ndim)}
    if dtype is not None:
        params["dtype"] = _dtype_arg(dtype)
    return apply(D.cumsum, (input,), params)


def cumprod(input, dim, *, dtype=None, out=None):
    params = {"dim": _given_dim(_int_dim(dim, "cumprod", 1), input._data.ndim)}
    if dtype is not None:
        params["dtype"] = _dtype_arg(dtype)
    return apply(D.cumprod, (input,), params)


_NANMEAN = Overloads("nanmean", [("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, "
                                   "Tensor(a!)? out=None) -> Tensor", None)])


def _nanmean(args, kwargs, method):
    """ATen's composite nanmean: nansum over the count of the non-NaN elements (NansumBackward0 under a
    DivBackward0: PyTorch has no node of its own for it), argument errors from its schema line."""
    _, values = _NANMEAN.parse(args, kwargs, method=method)
    input, dim, keepdim, dtype = values["self"], values["dim"], values["keepdim"], values["dtype"]
    if input._dtype.category != 2:
        raise errors.RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                                  f"{input._dtype._scalar_name}")
    if dtype is not None and dtype.category != 2:
        raise errors.RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating "
                                  f"point or complex dtype. Got: {dtype._scalar_name}")
    T = _torch
    factor = T("sum")(T("logical_not")(T("isnan")(input)), dim, keepdim)
    return T("nansum")(input, dim, keepdim, dtype=dtype).div(factor)


def nanmean(*args, **kwargs):
    return _nanmean(args, kwargs, False)


def _nanmean_method(self, *args, **kwargs):
    return _nanmean((self,) + args, kwargs, True)


def all(input, dim=None, keepdim=False):
    t = apply(D.all_, (input,), {"dim": _reduce_dim(dim, input, empty_means_all=False), "keepdim": keepdim})
    return t if input._dtype is not dtypes.uint8 else t.to(dtypes.uint8)


def any(input, dim=None, keepdim=False):
    return apply(D.any_, (input,), {"dim": _reduce_dim(dim, input, empty_means_all=False), "keepdim": keepdim})


def count_nonzero(input, dim=None):
    return _torch("sum")(apply(D.ne, (input, 0)), dim)


def nonzero(input, *, out=None, as_tuple=False):
    data = input._data
    if data.ndim == 0:          # a 0-d tensor: n rows of no columns, or as a 1-d tensor for as_tuple
        if as_tuple:
            return (Tensor._make(np.nonzero(data.reshape(1))[0].astype(np.int64)),)
        return Tensor._make(np.zeros((int(bool(data)), 0), np.int64))
    idx = np.nonzero(data)
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in idx)
    return Tensor._make(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((0, 0), np.int64))


# ---------------------------------------------------------------- sorting and order statistics
def _selection(name, entry, input, params):
    result, extras = apply_ex(entry, (input,), params)
    indices = extras["indices"]
    return ReturnType(name, result, indices if isinstance(indices, Tensor) else Tensor._make(indices, dtypes.int64))


def sort(input, dim=-1, descending=False, *, stable=None, out=None):
    """``torch.sort``: (values, indices); equal values keep their order with ``stable=True`` only
    (std::sort otherwise: std_sort.py); the node is SortBackward1 when ``stable=`` is given."""
    entry = D.sort if stable is None else D.sort_stable
    return _selection("sort", entry, input, {"dim": _given_dim(dim, input._data.ndim), "descending": bool(descending),
                                             "stable": bool(stable)})


def argsort(input, dim=-1, descending=False, *, stable=False):
    return sort(input, dim, descending, stable=stable).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    return _selection("topk", D.topk, input, {"k": int(k), "dim": _given_dim(dim, input._data.ndim), "largest": bool(largest),
                                             "sorted": bool(sorted)})


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """``torch.bucketize``: the index of each value's bucket among the 1-d sorted ``boundaries``
    (``boundaries[i-1] < v <= boundaries[i]``, or ``<= v <`` with ``right``); no gradient."""
    if boundaries._data.ndim != 1:
        raise errors.RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return _insertion_points(boundaries._data, input, "right" if right else "left", out_int32)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """``torch.searchsorted``: where each value would go in ``sorted_sequence`` (1-d, or one sorted row
    per row of ``input``), ordered through ``sorter`` where given; no gradient."""
    if side is not None and side not in ("left", "right"):
        raise errors.RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise errors.RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                                  "while right was True")
    sequence = sorted_sequence._data
    values_shape = input._data.shape if isinstance(input, Tensor) else ()
    if sequence.ndim > 1 and (len(values_shape) != sequence.ndim or values_shape[:-1] != sequence.shape[:-1]):
        raise errors.RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(sequence.shape)} and input "
            f"value tensor {list(values_shape)}")
    if sorter is not None:
        if sorter._data.shape != sequence.shape:
            raise errors.RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got "
                                      f"boundary tensor {list(sequence.shape)}and got sorter tensor "
                                      f"{list(sorter._data.shape)}")
        sequence = np.take_along_axis(sequence, sorter._data, -1)
    return _insertion_points(sequence, input, side or ("right" if right else "left"), out_int32)


def _insertion_points(sequence, values, side, out_int32):
    values = values._data if isinstance(values, Tensor) else np.asarray(values)
    if sequence.ndim <= 1:
        points = np.searchsorted(sequence, values, side=side)
    else:
        rows, row_values = sequence.reshape(-1, sequence.shape[-1]), values.reshape(-1, values.shape[-1])
        points = np.stack([np.searchsorted(r, v, side=side) for r, v in zip(rows, row_values)]).reshape(values.shape)
    return Tensor._make(np.asarray(points, np.int32 if out_int32 else np.int64),
                        dtypes.int32 if out_int32 else dtypes.int64)


def kthvalue(input, k, dim=-1, keepdim=False):
    return _selection("kthvalue", D.kthvalue, input, {"k": int(k), "dim": _given_dim(dim, input._data.ndim),
                                                     "keepdim": bool(keepdim)})


def median(input, dim=None, keepdim=False):
    """``torch.median``: of all elements (the lower of the two middle ones; NaN if any), or along ``dim``
    with the index of the median."""
    if dim is None:
        return apply(D.median, (input,))
    return _selection("median", D.median_dim, input, {"dim": _given_dim(dim, input._data.ndim), "keepdim": bool(keepdim)})
