"""Reductions: sum, mean, prod, max/min, var/std, norms, cumulative ops. (Sorting, order statistics
and unique values: ``sorting.py``.)"""
from __future__ import annotations

import math

import numpy as np

from .. import corner_grads, dtypes, errors, reduction_order
from ..grad_layout import _dense
from ..tensor import Tensor, _wrap_dim
from .registry import batch_rules, op
from .common import EveryDim, _F, _dims, _exp, _floating_only, _log, _np_mean, _reduce_dim, _restore
from .pointwise import _F_


# ============================================================ reductions
def _sum_dtype(ts, params):
    """sum's and prod's dtype rule: the dtype asked for, else the input's with integers and bool as int64."""
    d = params.get("dtype")
    if d is None:
        d = ts[0]._dtype
        if d.category != 2:
            d = dtypes.int64
    return d, d


def _sum(a, dim=None, keepdim=False, dtype=None):
    return reduction_order.torch_sum(a, _dims(dim, a.ndim), keepdim)


def _dims_call(values):
    """A reduction over ``dim`` (None or ``()``: every dimension), checked and wrapped as ATen does."""
    self = values["self"]
    params = {k: v for k, v in values.items() if k not in ("self", "out") and v is not None}
    # None (every dimension) stays None, which the node shows as PyTorch's does
    params["dim"] = None if values["dim"] is None else _reduce_dim(values["dim"], self)
    return (self,), params


def _one_dim_call(values):
    """A reduction over one ``dim`` (``prod(x, -1)``), checked and kept as given (the node shows -1 raw)."""
    self = values["self"]
    params = {k: v for k, v in values.items() if k not in ("self", "out") and v is not None}
    _wrap_dim(values["dim"], self._data.ndim)
    params["dim"] = int(values["dim"])
    return (self,), params


sum_all = op("sum", "SumBackward0", lambda a, dtype=None: reduction_order.torch_sum(a),
             self=lambda grad, self_shape: grad.expand(self_shape), dtype=_sum_dtype, domain="real",
             schema="sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", variants="function method",
             forward_ad="linear")
sum_dim = op("sum_dim", "SumBackward1", _sum,
             self=lambda grad, self_shape, dim, keepdim: _restore(grad, self_shape, dim, keepdim).expand(self_shape),
             schema="sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
                    "Tensor(a!)? out=None) -> Tensor",
             variants="function method", prepare=_dims_call, dtype=_sum_dtype, domain="real", forward_ad="linear")


nansum = op("nansum", "NansumBackward0",
            lambda a, dim, keepdim=False, dtype=None: reduction_order.torch_nansum(a, dim, keepdim),
            self=lambda grad, self, self_shape, dim, keepdim:
            _restore(grad, self_shape, dim, keepdim).expand(self_shape) * self.isnan().logical_not(),
            schema="nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, "
                   "Tensor(a!)? out=None) -> Tensor",
            variants="function method", prepare=_dims_call, dtype=_sum_dtype, domain="real", samples=[((2, 3),)],
            forward_ad="transpose")


def _mean_dtype(ts, params):
    d = params.get("dtype") or ts[0]._dtype
    if d.category != 2:
        raise errors.RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                                  f"point or complex dtype. Got: {d._scalar_name}")
    return d, d


def _numel(shape, dim=None):
    n = 1
    for i in (range(len(shape)) if dim is None else _dims(dim, len(shape))):
        n *= shape[i]
    return n


def _divided_expansion(grad, shape, count):
    """The mean's gradient, ``grad.expand(shape) / count``: a new tensor laid out contiguously, as PyTorch's.
    (A broadcast view instead saves a pass but hands the next node other strides: a hook saw (1, 0) for
    PyTorch's (5, 1), and elu's backward, which vectorises by layout, took its scalar path.) Unrecorded,
    each distinct quotient is computed once and written out (the same bits: every element divides the
    same value by the same count), one pass instead of a division per element."""
    from ..forward_ad import ACTIVE as dual_levels
    from ..graph import is_grad_enabled
    if is_grad_enabled() or dual_levels or corner_grads.in_transform() or type(grad) is not Tensor:
        return grad.expand(shape) / count           # (recorded, or carrying a tangent: tensor ops)
    quotient = grad / count
    return Tensor._make(np.broadcast_to(quotient._data, shape).copy(), quotient._dtype)


mean_all = op("mean", "MeanBackward0", lambda a, dtype=None: _np_mean(a),
              self=lambda grad, self_shape: _divided_expansion(grad, self_shape, _numel(self_shape)),
              dtype=_mean_dtype, domain="real",
              schema="mean(Tensor self, *, ScalarType? dtype=None, Tensor(a!)? out=None) -> Tensor",
              variants="function method",
              forward_ad="linear")
mean_dim = op("mean_dim", "MeanBackward1",
              lambda a, dim=None, keepdim=False, dtype=None: _np_mean(a, axis=_dims(dim, a.ndim), keepdims=keepdim,
                                                                     dtype=a.dtype),
              self=lambda grad, self_shape, dim, keepdim:
              _divided_expansion(_restore(grad, self_shape, dim, keepdim), self_shape, _numel(self_shape, dim)),
              schema="mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
                     "Tensor(a!)? out=None) -> Tensor",
              variants="function method", prepare=_dims_call, dtype=_mean_dtype, domain="real", forward_ad="linear")


def _prod(a, dim=None, keepdim=False):
    """PyTorch's product order for float16/32/64 (``reduction_product``), NumPy's for the rest."""
    if reduction_order._exact_kind(a) or (a.dtype == np.float16 and a.size):
        from .. import reduction_product     # (loaded by the first product: start-up stays lean)
        return reduction_product.torch_prod(a, () if dim is None else (dim % a.ndim,), keepdim)
    return np.prod(a, axis=dim, keepdims=keepdim)


def _ones_like_result(result):
    """``at::ones({}, result.options()).expand_as(result)``: prod's tangent formulas' unit cotangent."""
    return Tensor._make(np.ones((), result._dtype.np), result._dtype).expand_as(result)


prod_all = op("prod", "ProdBackward0", lambda a, dtype=None: _prod(a),
              self=corner_grads.prod_grad, dtype=_sum_dtype, domain="real",
              forward_ad=lambda self, self_t, result: (
                  corner_grads.prod_grad(_ones_like_result(result), self.to(result.dtype), result) * self_t).sum(),
              schema="prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", variants="function method")
prod_dim = op("prod_dim", "ProdBackward1",
              lambda a, dim, keepdim=False, dtype=None: _prod(a, dim, keepdim),
              self=corner_grads.prod_dim_grad,
              dtype=_sum_dtype, domain="real",
              forward_ad=lambda self, self_t, result, dim, keepdim=False: (corner_grads.prod_dim_grad(
                  _ones_like_result(result), self.to(result.dtype), result, dim, keepdim) * self_t).sum(dim, keepdim),
              schema="prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, "
                     "Tensor(a!)? out=None) -> Tensor",
              variants="function method", prepare=_one_dim_call)


_evenly = corner_grads.evenly_distribute


def _tie_order():
    """Which of equal values PyTorch's kernels keep (tie_order.py), loaded by the first max/min/amax."""
    from .. import tie_order
    return tie_order


def _check_nonempty(a, name):
    if a.size == 0:
        raise errors.RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                  "Specify the reduction dim with the 'dim' argument.")


def _max_all(a):
    _check_nonempty(a, "max")
    return _tie_order().pick_all(a, np.max(a)) if a.dtype.kind != "f" or not np.isnan(a).any() else np.array(np.nan, a.dtype)


def _min_all(a):
    _check_nonempty(a, "min")
    return _tie_order().pick_all(a, np.min(a)) if a.dtype.kind != "f" or not np.isnan(a).any() else np.array(np.nan, a.dtype)


max_all = op("max", "MaxBackward1", _max_all, self=_evenly, dtype="first", domain="distinct", forward_ad="transpose")
min_all = op("min", "MinBackward1", _min_all, self=_evenly, dtype="first", domain="distinct", forward_ad="transpose")


def _check_dims_nonempty(a, dim, name):
    """A reduction along a dim of size 0 has no value to pick: PyTorch's IndexError."""
    for d in (dim,) if isinstance(dim, int) else dim:
        if a.ndim and a.shape[d] == 0:
            raise errors.IndexError(f"{name}(): Expected reduction dim {d % a.ndim} to have non-zero size.")


def _index_reduce(fn, name):
    def forward(a, dim, keepdim=False):
        _check_dims_nonempty(a, dim, name)
        if a.ndim == 0:
            idx = np.zeros((), np.int64)
            return a.copy(), {"indices": idx}
        idx = fn(a, axis=dim, keepdims=True)
        vals = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            idx = np.squeeze(idx, axis=dim)
            vals = np.squeeze(vals, axis=dim)
        return vals, {"indices": idx.astype(np.int64)}
    return forward


def _value_selecting_grad(grad, self_shape, dim, keepdim, indices):
    F = _F()
    if len(self_shape) == 0:
        return grad
    g = grad if keepdim else grad.unsqueeze(dim)
    idx = indices if keepdim else indices.unsqueeze(dim)
    return F.zeros(self_shape, dtype=grad.dtype).scatter(dim, idx, g)


max_dim = op("max_dim", "MaxBackward0", _index_reduce(np.argmax, "max"),
             self=lambda grad, self_shape, dim, keepdim, indices:
             _value_selecting_grad(grad, self_shape, dim, keepdim, indices),
             dtype="first", domain="distinct", forward_ad="transpose")
min_dim = op("min_dim", "MinBackward0", _index_reduce(np.argmin, "min"),
             self=lambda grad, self_shape, dim, keepdim, indices:
             _value_selecting_grad(grad, self_shape, dim, keepdim, indices),
             dtype="first", domain="distinct", forward_ad="transpose")


def _restore_reduced_dims(t, dims, keepdim):
    """PyTorch's ``restore_reduced_dims``: the reduced ``dims`` back as size-1 axes by one reshape
    (a ``ViewBackward0`` in a graph built with ``create_graph=True``)."""
    if keepdim:
        return t
    total = t.dim() + len(dims)
    target = [0] * total
    for d in dims:
        target[d + total if d < 0 else d] = 1
    j = 0
    for size in t.shape:
        while target[j] > 0:
            j += 1
        target[j] = size
        j += 1
    return t.reshape(target)


def _scale_grad_by_count(grad, mask, dims):
    """PyTorch's ``scale_grad_by_count``: ``(grad / mask.sum(dims, True)) * mask`` (ties share)."""
    return (grad / mask.sum(dims, keepdim=True)) * mask


def _amax_grad(grad, self, result, dim, keepdim):
    """amax's/amin's ``derivatives.yaml`` formula; ``dim`` an int or a tuple (``()``: every dimension)."""
    dims = dim if isinstance(dim, tuple) else (dim,)
    mask = _restore_reduced_dims(result, dims, keepdim) == self
    return _scale_grad_by_count(_restore_reduced_dims(grad, dims, keepdim), mask, dims)


def _amax(fn, name):
    def forward(a, dim=(), keepdim=False):
        if a.size == 0 and dim == ():
            _check_nonempty(a, name)
        _check_dims_nonempty(a, dim, name)
        axes = _dims(None if dim == () else dim, a.ndim)
        return _tie_order().pick_over_dims(a, fn(a, axis=axes, keepdims=keepdim), axes, keepdim, fn is np.amax)
    return forward


amax = op("amax", "AmaxBackward0", _amax(np.amax, "amax"), self=_amax_grad,
          dtype="first", domain="distinct", forward_ad="transpose")
amin = op("amin", "AminBackward0", _amax(np.amin, "amin"), self=_amax_grad,
          dtype="first", domain="distinct", forward_ad="transpose")


def _aminmax_grad(grad, self, min, max, dim, keepdim):
    """PyTorch's ``aminmax_backward``: amin's and amax's formulas, summed (min's first) where both
    outputs got a gradient."""
    grad_min, grad_max = grad
    dims = () if dim is None else (dim,)
    out = None if grad_min is None else _amax_grad(grad_min, self, min, dims, keepdim)
    if grad_max is not None:
        g = _amax_grad(grad_max, self, max, dims, keepdim)
        out = g if out is None else out + g
    return out


# one node for both outputs (op.share_node); amin and amax compute them
aminmax = op("aminmax", "AminmaxBackward0", None, outputs=("min", "max"), self=_aminmax_grad, domain="distinct")


def _arg(fn, name):
    def forward(a, dim=None, keepdim=False):
        if a.dtype.kind == "b":
            raise errors.RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if a.size == 0:
                raise errors.IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            r = fn(a)
            return np.asarray(r, np.int64).reshape((1,) * a.ndim if keepdim else ())
        _check_dims_nonempty(a, dim, name)
        return np.asarray(fn(a, axis=dim, keepdims=keepdim), np.int64)
    return forward


argmax = op("argmax", "", _arg(np.argmax, "argmax"), dtype="keep")
argmin = op("argmin", "", _arg(np.argmin, "argmin"), dtype="keep")


def _var(a, dim=None, correction=1, keepdim=False):
    if a.dtype == np.float16 and a.size:
        return _var(reduction_order.widened(a), dim, correction, keepdim).astype(np.float16)
    if reduction_order._exact_kind(a):
        from .. import reduction_variance    # (loaded by the first variance: start-up stays lean)
        return reduction_variance.torch_var(a, _dims(dim, a.ndim), correction, keepdim)
    axis = _dims(dim, a.ndim)
    n = _numel(a.shape, dim)
    with np.errstate(all="ignore"):
        m = _np_mean(a, axis=axis, keepdims=True)
        s = np.sum((a - m) ** 2, axis=axis, keepdims=keepdim)
        # ATen divides by max(0, n - correction): inf where the sum of squares is positive, nan where 0
        return np.asarray(s / max(n - correction, 0), a.dtype)


def _var_grad(grad, self, dim, correction, keepdim):
    # ATen's var_backward counts the elements of the dims it was given: none for an empty list
    # (reduced over every dim all the same), so 2 / (1 - correction): inf with the default correction
    # (no dims at all: the gradient broadcasts as it is, no reshape, as ATen's)
    n = 1 if type(dim) is EveryDim else _numel(self.shape, dim)
    g = _restore(grad, self.shape, dim, keepdim) if dim is not None else grad
    mean = self.mean(dim, keepdim=True) if dim is not None else self.mean()
    scale = 2.0 / (n - correction) if n != correction else math.inf      # inf * 0 = nan, as PyTorch
    return scale * g * (self - mean)


var = op("var", "VarBackward0", _var, self=_var_grad,
         dtype=_floating_only("std and var only support floating point and complex dtypes"), domain="real",
         # derivatives.yaml: var_backward(self_t, self_p, dim, correction, true).sum(dim.value_or({}), keepdim)
         forward_ad=lambda self, self_t, dim, correction, keepdim: _var_grad(self_t, self, dim, correction, True).sum(
             EveryDim() if dim is None else dim, keepdim))


def _std(a, dim=None, correction=1, keepdim=False):
    if a.dtype == np.float16 and a.size:
        return _std(reduction_order.widened(a), dim, correction, keepdim).astype(np.float16)
    if reduction_order._exact_kind(a):
        from .. import reduction_variance
        return reduction_variance.torch_var(a, _dims(dim, a.ndim), correction, keepdim, take_sqrt=True)
    with np.errstate(all="ignore"):
        return np.sqrt(_var(a, dim, correction, keepdim))


def _zeros_filled(t, mask):
    """``t.masked_fill_(mask, 0)``, in place as FunctionsManual's formulas fill (the result keeps t's layout);
    out of place under a torch.func transform, whose batched tensors take no in-place fill."""
    return t.masked_fill(mask, 0.0) if corner_grads.in_transform() else t.masked_fill_(mask, 0.0)


def _std_grad(grad, self, result, dim, correction, keepdim):
    g = _zeros_filled(grad / (result * 2), result == 0)
    return _var_grad(g, self, dim, correction, keepdim)


def _std_tangent(self, self_t, result, dim, correction, keepdim):
    """derivatives.yaml: (var's tangent / (2. * result)).masked_fill_(result == 0, 0)."""
    return _zeros_filled(var.tangent(self, self_t, dim, correction, keepdim) / (2.0 * result), result == 0)


std = op("std", "StdBackward0", _std, self=_std_grad, dtype=var.dtype, domain="real", forward_ad=_std_tangent)


def _mean_part(a, dim=None, correction=1, keepdim=False):
    return np.asarray(_np_mean(a, axis=_dims(dim, a.ndim), keepdims=keepdim))


def _mean_grad(grad, self_shape, dim=None, keepdim=False):
    return _restore(grad, self_shape, dim, keepdim).expand(self_shape) / _numel(self_shape, dim)


# var_mean / std_mean: the parts compute each output; the node is var_mean's / std_mean's, for both
# (op.share_node), whose formula reads the two outputs' gradients
var_mean_var = op("var_mean_var", "VarMeanBackward0", _var, self=_var_grad, domain="real",
                  dtype=_floating_only("var_mean only support floating point and complex dtypes"),
                  forward_ad="transpose")
var_mean_mean = op("var_mean_mean", "VarMeanBackward0", _mean_part, self=_mean_grad, dtype=var_mean_var.dtype,
                   domain="real", forward_ad="transpose")
std_mean_std = op("std_mean_std", "StdMeanBackward0", _std, self=_std_grad, domain="real",
                  dtype=_floating_only("std_mean only support floating point and complex dtypes"),
                  forward_ad="transpose")
std_mean_mean = op("std_mean_mean", "StdMeanBackward0", _mean_part, self=_mean_grad, dtype=std_mean_std.dtype,
                   domain="real", forward_ad="transpose")


def _moments_grad(grad, self, spread_grad, dim, keepdim):
    """The gradient of (variance or deviation, mean) from the two outputs' gradients."""
    g_spread, g_mean = grad
    out = None if g_spread is None else spread_grad(g_spread)
    if g_mean is not None:
        g = _mean_grad(g_mean, self.shape, dim, keepdim)
        out = g if out is None else out + g
    return out


var_mean = op("var_mean", "VarMeanBackward0", None, outputs=("", ""), domain="real",
              self=lambda grad, self, dim, correction, keepdim: _moments_grad(
                  grad, self, lambda g: _var_grad(g, self, dim, correction, keepdim), dim, keepdim))
std_mean = op("std_mean", "StdMeanBackward0", None, outputs=("result", ""), domain="real",
              self=lambda grad, self, result, dim, correction, keepdim: _moments_grad(
                  grad, self, lambda g: _std_grad(g, self, result, dim, correction, keepdim), dim, keepdim))


def _norm2_rows(a, axis):
    """``a`` as the rows ATen's vectorized L2 kernel reduces (the reduction runs along memory:
    every dim of a dense array, or one dim of stride 1), with the result's shape;
    else None (the general reduction, not emulated)."""
    if a.dtype not in (np.float32, np.float64) or a.ndim == 0 or a.size == 0:
        return None
    if sorted(axis) == list(range(a.ndim)) and all(s > 0 for s in a.strides) and _dense(a):
        return a.ravel(order="K").reshape(1, -1), ()        # (TensorIterator coalesces it to one dim)
    if tuple(axis) == (a.ndim - 1,) and a.flags.c_contiguous:
        return a.reshape(-1, a.shape[-1]), a.shape[:-1]
    if len(axis) == 1 and a.strides[axis[0]] == a.itemsize:
        # one dim reduced along memory, whatever the others' layout (a transposed matrix's dim 0):
        # TensorIterator makes it the inner loop, contiguous, as a row-major matrix's last dim
        rest = np.moveaxis(a, axis[0], -1)
        return rest.reshape(-1, rest.shape[-1]), rest.shape[:-1]
    return None


def _norm(a, ord=2.0, dim=None, keepdim=False, dtype=None):
    if a.dtype == np.float16 and a.size:
        return _norm(reduction_order.widened(a), ord, dim, keepdim, dtype).astype(np.float16)
    axis = _dims(dim, a.ndim)
    with np.errstate(all="ignore"):
        x = np.abs(a)
        rows = _norm2_rows(a, axis) if ord == 2 else None
        if a.size and all(a.shape[d] == 1 for d in axis):
            # one element per norm: TensorIterator reduces nothing and ATen's kernel returns |x| (x != 0 for
            # the 0-"norm"), so 3e38's float32 norm is 3e38, not sqrt(inf)
            r = (x != 0) if ord == 0 else x
            r = r if keepdim else r.reshape([s for d, s in enumerate(a.shape) if d not in axis])
        elif rows is not None:
            r = reduction_order.torch_norm2_rows(rows[0]).reshape(rows[1])
            if keepdim:
                r = r.reshape([1 if d in axis else s for d, s in enumerate(a.shape)])
        elif a.dtype in (np.float32, np.float64) and ord not in (0, math.inf, -math.inf) and a.ndim:
            # ATen's NormOps: |x|^p (x*x, |x|) added in order, then the p-th root
            p = a.dtype.type(ord)
            terms = x if ord == 1 else a * a if ord == 2 else np.power(x, p)
            s = reduction_order.serial_sum(terms, axis, keepdim, a)
            r = s if ord == 1 else np.sqrt(s) if ord == 2 else np.power(s, a.dtype.type(1) / p)
        elif ord == 2:
            r = np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim))
        elif ord == 1:
            r = np.sum(x, axis=axis, keepdims=keepdim)
        elif ord == math.inf:
            r = np.amax(x, axis=axis, keepdims=keepdim) if x.size else np.zeros(())
        elif ord == -math.inf:
            r = np.amin(x, axis=axis, keepdims=keepdim)
        elif ord == 0:
            r = np.sum(x != 0, axis=axis, keepdims=keepdim)
        else:
            r = np.sum(x ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r, a.dtype)


def _norm_grad(grad, self, result, ord, dim, keepdim):
    """PyTorch's norm_backward, case by case (a subgradient 0 where the norm, or for p < 1 the
    element, is 0). A norm over every dim stays 0-d: it broadcasts, as ATen's does. The zeros are
    filled in place, as there: an out-of-place masked_fill lays its result out contiguously, and the
    gradient of a transposed input then reached the next sum in another order."""
    g = grad if dim is None else _restore(grad, self.shape, dim, keepdim)
    r = result if dim is None else _restore(result, self.shape, dim, keepdim)
    if ord == 0:
        return None         # PyTorch leaves the gradient of the 0-"norm" undefined
    if ord == 1:
        return self.sgn() * g
    if ord == 2:
        return g * _zeros_filled(self / r, r == 0)
    if ord in (math.inf, -math.inf):
        # the derivative of amax(abs(self)), nans counting as maxima
        self_abs = self.abs()
        mask = self_abs.eq(r).logical_or(self_abs.isnan())
        count = mask.sum(dim if dim is not None else tuple(range(self.dim())), keepdim=True)
        return self.sgn() * ((g / count) * mask)
    if ord < 1:
        self_scaled = self.sgn() * _zeros_filled(self.abs().pow(ord - 1), self == 0)
        return self_scaled * g * r.pow(1 - ord)
    if ord < 2:
        self_scaled = self.sgn() * self.abs().pow(ord - 1)
    else:
        self_scaled = self * self.abs().pow(ord - 2)
    return self_scaled * _zeros_filled(g / r.pow(ord - 1), r == 0)


def _norm_dtype(ts, params, _check=_floating_only(
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}")):
    """A floating input, computed in ``dtype`` when one is given (``x.norm(dtype=torch.float64)``)."""
    d, _ = _check(ts, params)
    want = params.get("dtype")
    if want is not None and want is not d:
        if want.category != 2:
            raise errors.RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                                      f"{want._scalar_name}")
        if want.itemsize < d.itemsize:
            raise errors.RuntimeError(f"linalg.vector_norm: the dtype of the input ({d._scalar_name}) should be "
                                      f"convertible without narrowing to the specified dtype ({want._scalar_name})")
        d = want
    return d, d


def _norm_tangent(self_p, self_t, result, ord, dim, keepdim):
    """FunctionsManual's norm_jvp for the 1- and 2-norms (in place outside a transform, as ATen's); the
    other orders take the transpose of the backward (NotImplemented)."""
    dims = EveryDim() if dim is None else dim
    inplace = not corner_grads.in_transform()
    if ord == 1:
        s = self_p.sgn()
        return (s.mul_(self_t) if inplace else s * self_t).sum(dims, keepdim)
    if ord == 2:
        t = self_p.mul(self_t).sum(dims, keepdim)
        return _zeros_filled(t.div_(result) if inplace else t / result, result == 0)
    return NotImplemented


norm = op("norm", "LinalgVectorNormBackward0", _norm,
          self=lambda grad, self, result, ord, dim, keepdim, dtype=None: _norm_grad(grad, self, result, ord, dim, keepdim),
          domain="nonzero", dtype=_norm_dtype, forward_ad="transpose",
          tangent_formula=lambda self_p, self_t, result, ord, dim, keepdim: _norm_tangent(
              self_p, self_t, result, ord, dim, keepdim))


def _dist_grad(grad, self, other, result, p):
    return _norm_grad(grad, self - other, result, float(p), None, False)


dist = op("dist", "DistBackward0", lambda a, b, p=2: _norm(a - b, float(p)), ("self", "other"),
          self=lambda grad, self, other, result, p=2: _dist_grad(grad, self, other, result, p),
          other=lambda grad, self, other, result, p=2: -_dist_grad(grad, self, other, result, p),
          schema="dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", variants="function method",
          dtype=_floating_only("dist: Expected a floating point tensor as input. Got {}"), domain="real",
          samples=[((2, 3), (2, 3)), ((2, 3), (3,))], forward_ad="transpose")


def _logsumexp(a, dim, keepdim=False):
    """ATen's logsumexp: the maxima (infinite ones as 0) subtracted, exp, summed in PyTorch's order, log,
    and the maxima added back, each step an op of its own (exp and log are VML's, see mkl.py)."""
    axis = _dims(dim, a.ndim)
    with np.errstate(all="ignore"):
        m = np.amax(a, axis=axis, keepdims=True) if a.size else np.zeros((1,) * a.ndim, a.dtype)
        m = np.where(np.isinf(m), a.dtype.type(0), m).astype(a.dtype)
        exps = _exp(np.asarray(a - m, a.dtype))
        r = _log(np.asarray(reduction_order.torch_sum(exps, axis, True), a.dtype)) + m
    if not keepdim:
        r = np.squeeze(r, axis=axis)
    return np.asarray(r, a.dtype)


def logsumexp_jvp(self_p, self_t, dim, keepdim):
    """FunctionsManual's logsumexp_jvp (also softmax's and log_softmax's tangent): outside a torch.func
    transform it multiplies and divides in place, as ATen's, so a graph through it is PyTorch's (and
    backward through it fails as PyTorch's does: the exp it multiplies in place is saved by ExpBackward0)."""
    e = (self_p - self_p.amax(dim, keepdim=True)).exp() if self_p.numel() else self_p.exp()
    sumexp_p = e.sum(dim, keepdim)
    if corner_grads.in_transform():
        return (e * self_t).sum(dim, keepdim) / sumexp_p
    e.mul_(self_t)
    return e.sum(dim, keepdim).div_(sumexp_p)


logsumexp = op("logsumexp", "LogsumexpBackward0", _logsumexp,
               self=lambda grad, self, result, dim, keepdim:
               _restore(grad, self.shape, dim, keepdim) * (self - _restore(result, self.shape, dim, keepdim)).exp(),
               dtype=_F_, domain="real", forward_ad=lambda self, self_t, dim, keepdim: logsumexp_jvp(self, self_t, dim, keepdim))
cumsum = op("cumsum", "CumsumBackward0", lambda a, dim, dtype=None: reduction_order.torch_cumsum(a, dim),
            self=corner_grads.cumsum_grad,
            dtype=_sum_dtype, domain="real", forward_ad="linear")


def _cumprod_tangent(self_t, self_p, result, dim, dtype=None):
    """derivatives.yaml's ``cumprod_jvp(self_t, self_p, result, dim).to(dtype)``: (t / x).cumsum · result, and
    past each row's first zero the cumulative product of x with its tangent in the zero's place (the first
    form gives nan there; the ``where`` keeps its graph, whose gradient is then nan too, as PyTorch's)."""
    F = _F()
    gradient = (self_t / self_p).cumsum(dim) * result
    if self_p.dim() == 0:
        tangent = gradient.masked_fill_(self_p.eq(0), self_t)
    else:
        zeros = self_p.eq(0)
        first_zero = zeros.logical_and(zeros.cumsum(dim).eq(1))
        past_zero = F.where(first_zero, self_t, self_p).cumprod(dim)
        tangent = F.where(first_zero.cumsum(dim).to(dtypes.bool_), past_zero, gradient)
    return tangent.to(dtype if dtype is not None else self_p.dtype)


cumprod = op("cumprod", "CumprodBackward0", lambda a, dim, dtype=None: reduction_order.torch_cumprod(a, dim),
             self=corner_grads.cumprod_grad, dtype=_sum_dtype, domain="positive", forward_ad=_cumprod_tangent)
# ------------------------------------------------------------ running maximum / minimum
def _cumulative_extreme(take_maximum):
    """ATen's cummax/cummin kernel along ``dim``: the running value and the index it came from; a later
    equal value takes over (>= / <=), and so does every NaN, which then stays."""
    def forward(a, dim):
        if a.ndim == 0:
            return a.copy(), {"indices": np.zeros((), np.int64)}
        moved = np.moveaxis(a, dim, -1)
        values = np.empty(moved.shape, a.dtype)
        indices = np.zeros(moved.shape, np.int64)
        if moved.shape[-1]:
            current = moved[..., 0]
            where = np.zeros(current.shape, np.int64)
            floating = a.dtype.kind == "f"
            for k in range(moved.shape[-1]):
                x = moved[..., k]
                better = x >= current if take_maximum else x <= current
                if floating:
                    better = np.isnan(x) | (~np.isnan(current) & better)
                current = np.where(better, x, current)
                where = np.where(better, k, where)
                values[..., k] = current
                indices[..., k] = where
        return np.ascontiguousarray(np.moveaxis(values, -1, dim)), \
            {"indices": np.ascontiguousarray(np.moveaxis(indices, -1, dim))}
    return forward


def _cummaxmin_grad(grad, self, indices, dim):
    """FunctionsManual's cummaxmin_backward: each output's gradient added at the index it came from
    (a scatter_add into zeros: ScatterAddBackward0 under create_graph); an empty input is its own."""
    if self.numel() == 0:
        return self
    return _F().zeros(self.shape, dtype=grad.dtype).scatter_add(dim, indices, grad)


def _one_dim_raw(values):
    """One ``dim``, checked (IndexError out of range) and kept as given (the node shows -1 raw)."""
    self = values["self"]
    _wrap_dim(values["dim"], max(self._data.ndim, 1))
    return (self,), {"dim": int(values["dim"])}


cummax = op("cummax", "CummaxBackward0", _cumulative_extreme(True), self=_cummaxmin_grad, dtype="first",
            domain="distinct", forward_ad="transpose", prepare=_one_dim_raw,
            schema="cummax(Tensor self, int dim, *, Tensor(a!)[]? out=None) -> (Tensor values, Tensor indices)",
            variants="function method")
cummin = op("cummin", "CumminBackward0", _cumulative_extreme(False), self=_cummaxmin_grad, dtype="first",
            domain="distinct", forward_ad="transpose", prepare=_one_dim_raw,
            schema="cummin(Tensor self, int dim, *, Tensor(a!)[]? out=None) -> (Tensor values, Tensor indices)",
            variants="function method")
# ------------------------------------------------------------ running log-sum-exp
def _logcumsumexp(a, dim):
    """ATen's CPU kernel: along ``dim``, cum = log1p(exp(min - max)) + max of each element and the running
    value (from -inf), in its accumulation type on CPU (double for float32, float for float16) with the
    C library's exp and log1p, rounded once to the input's precision; a pair of equal infinities keeps
    the element."""
    from .. import special_math
    acc = np.float32 if a.dtype == np.float16 else np.float64
    exp, log1p = special_math._c("exp", acc), special_math._c("log1p", acc)

    def step(x, y):
        low = y if math.isnan(y) else min(x, y) if not y < x else y
        high = y if math.isnan(y) else max(x, y) if not x < y else y
        if low != high or math.isfinite(low):
            return float(acc(log1p(exp(acc(low) - acc(high)))) + acc(high))
        return x

    if a.ndim == 0:
        return a.copy()
    moved = np.moveaxis(a, dim, -1).astype(np.float64)
    out = np.empty(moved.shape, np.float64)
    rows, n = moved.reshape(-1, moved.shape[-1]), moved.shape[-1]
    flat = out.reshape(-1, n)
    for r in range(rows.shape[0]):
        cum = -math.inf
        for k in range(n):
            cum = step(float(rows[r, k]), cum)
            flat[r, k] = cum
    return np.ascontiguousarray(np.moveaxis(out.astype(a.dtype), -1, dim))


def _logcumsumexp_dtype(ts, params):
    d = ts[0]._dtype
    if d.category != 2:
        raise errors.NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{d._scalar_name}\'')
    return d, d


def _reverse_logcumsumexp(t, dim):
    return t.flip(dim).logcumsumexp(dim).flip(dim)


def _logcumsumexp_grad(grad, self, result, dim):
    """FunctionsManual's logcumsumexp_backward: the positive and the negative parts of the gradient each
    carried in log space (a reversed logcumsumexp), exp'd back and subtracted."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    F = _F()
    lowest = F.full((), float(np.finfo(grad.dtype.np).min), dtype=grad.dtype)
    log_abs_grad = grad.abs().log()
    log_grad_positive = F.where(grad > 0, log_abs_grad, lowest)
    log_grad_negative = F.where(grad < 0, log_abs_grad, lowest)
    output_pos = (_reverse_logcumsumexp(log_grad_positive - result, dim) + self).exp()
    output_neg = (_reverse_logcumsumexp(log_grad_negative - result, dim) + self).exp()
    return output_pos - output_neg


def _logcumsumexp_tangent(self_t, self, dim):
    """logcumsumexp_jvp: cumsum(exp(x - max) x_t) / (cumsum(exp(x - max)) + 1e-13) along ``dim``."""
    if self.dim() == 0:
        return self_t
    self_p_exp = (self - self.max(dim, keepdim=True).values).exp()
    cumsumexp_p = self_p_exp.cumsum(dim)
    if corner_grads.in_transform():
        return (self_p_exp * self_t).cumsum(dim) / (cumsumexp_p + 1e-13)
    self_p_exp.mul_(self_t)                 # FunctionsManual: in place, and eps added to the denominator
    return self_p_exp.cumsum(dim).div_(cumsumexp_p.add_(1e-13))


logcumsumexp = op("logcumsumexp", "LogcumsumexpBackward0", _logcumsumexp, self=_logcumsumexp_grad,
                  dtype=_logcumsumexp_dtype, domain="real", forward_ad=_logcumsumexp_tangent, prepare=_one_dim_raw,
                  schema="logcumsumexp(Tensor self, int dim, *, Tensor(a!)? out=None) -> Tensor",
                  variants="function method")
all_ = op("all", "", lambda a, dim=None, keepdim=False: np.all(a, axis=dim, keepdims=keepdim), dtype="keep")
any_ = op("any", "", lambda a, dim=None, keepdim=False: np.any(a, axis=dim, keepdims=keepdim), dtype="keep")



# ============================================================ vmap's batch rules (batching.py)
batch_rules("reduce", "sum_dim", "nansum", "mean_dim", "prod_dim", "max_dim", "min_dim", "amax", "amin", "var", "std",
            "var_mean_var", "var_mean_mean", "std_mean_std", "std_mean_mean", "norm", "logsumexp", "cumsum", "cumprod",
            "all", "any", "cummax", "cummin", "logcumsumexp")
batch_rules("arg", "argmax", "argmin")
for _all, _over_dims in (("sum", "sum_dim"), ("mean", "mean_dim"), ("prod", "prod_dim"), ("max", "amax"),
                         ("min", "amin")):
    batch_rules(("reduce_all", _over_dims), _all)
