"""NumPy helpers and dtype rules shared by the op families."""
from __future__ import annotations

import numpy as np

from .. import dtypes, errors, mkl, reduction_order, sleef
from ..exact import fma  # noqa: F401  (the ops' fused multiply-add)
from ..tensor import _wrap_dim


def _F():
    from .. import functions
    return functions


def maybe_multiply(t, s):
    """derivatives.yaml's maybe_multiply: ``t * s`` (a Scalar product in a formula) unless s is 1."""
    return t if s == 1 else t * s


def _NN():
    from .. import nn_functional
    return nn_functional


_OP_APPLY = []      # [op.apply], imported on first use (op.py imports this package), then kept


def _apply(entry, args, params=None):
    if not _OP_APPLY:
        from ..op import apply
        _OP_APPLY.append(apply)
    return _OP_APPLY[0](entry, args, params or {})


# ============================================================ numpy helpers
def _ew(fn):
    """An elementwise forward (floating-point warnings are off engine-wide, see op.py)."""
    return fn


def _vml(name, fallback):
    """The forward of a function PyTorch computes with MKL's VML (see mkl.py): MKL's result for float32
    and float64 where the library is there, ``fallback``'s (NumPy) otherwise."""
    def forward(a):
        result = mkl.elementwise(name, a)
        return fallback(a) if result is None else result
    forward.__name__ = name
    return forward


def _sleef(name, fallback, float32=None, float64=None):
    """The forward of an op whose ATen kernel is ``cpu_kernel_vec`` with ``Vectorized::name`` (SLEEF's, or
    ATen's own) in the vector loop and ``std::name`` in the scalar one: ``float32`` / ``float64``, the
    vector function's emulation for that dtype, on the vector loop's runs and the C library's ``name`` on
    the rest (sleef.vectorized_map); ``fallback``'s (NumPy) for other dtypes."""
    vector = {np.dtype(np.float32): float32, np.dtype(np.float64): float64}

    def scalar(*arrays):
        return sleef.libm(name, *arrays)

    def forward(*arrays):
        kernel = vector.get(arrays[0].dtype)
        if kernel is None or any(a.dtype != arrays[0].dtype for a in arrays[1:]):
            return fallback(*arrays)
        return sleef.vectorized_map(arrays, kernel, scalar, reduction_order.threads())
    forward.__name__ = name
    return forward


def in_float32(kernel):
    """float16 computed as PyTorch's CPU kernels compute it (their opmath type): in float32, rounded once
    at the end, the vector loop's runs those of the halves (sleef.HALF_RUNS); a kernel's extras (a saved
    buffer) are float16 tensors too."""
    def half(v):
        return v.astype(np.float16) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v

    def forward(*arrays, **params):
        if arrays[0].dtype != np.float16:
            return kernel(*arrays, **params)
        token = sleef.HALF_RUNS.set(True)       # (the vector loop's runs are the halves')
        try:
            out = kernel(*(a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a
                           for a in arrays), **params)
        finally:
            sleef.HALF_RUNS.reset(token)
        if type(out) is tuple:
            return half(out[0]), {name: half(v) for name, v in out[1].items()}
        return half(np.asarray(out))
    forward.__name__ = getattr(kernel, "__name__", "forward")
    return forward


def _vector_or_scalar(arrays, vector, scalar, half=False):
    """``cpu_kernel_vec`` for a kernel whose vector and scalar lambdas differ (at nan, say): float32 or
    float64 ``arrays`` of one dtype split between ``vector`` and ``scalar`` as ATen's loop splits them
    (sleef.vectorized_map), other arrays all through ``scalar``. ``half``: float16 too (runs of two
    vectors of 16 halves), for a kernel whose Half lambdas only select (a clamp, a mask) or round each
    step to half as NumPy's float16 arithmetic does."""
    dtype = arrays[0].dtype
    if (dtype in (np.float32, np.float64) or (half and dtype == np.float16)) \
            and all(a.dtype == dtype for a in arrays[1:]):
        return sleef.vectorized_map(arrays, vector, scalar, reduction_order.threads())
    return scalar(*arrays)


# exp and log of arrays, as ATen's composites that call at::exp / at::log (exp_, log_) compute them
_exp, _log = _vml("exp", np.exp), _vml("log", np.log)


def _np_mean(a, axis=None, keepdims=False, dtype=None):
    """NumPy's mean in the input's precision; an empty reduction is nan (without NumPy's warning)."""
    n = a.size if axis is None else int(np.prod([a.shape[d] for d in axis], dtype=np.int64))
    if n == 0:
        return np.full(np.sum(a, axis=axis, keepdims=keepdims).shape, np.nan, a.dtype)
    return reduction_order.torch_mean(a, axis, keepdims)


def _scalar_like(value, a):
    return np.asarray(value, a.dtype) if a.dtype.kind == "f" else value


def _lerp(a, b, weight):
    """PyTorch's lerp: start + w (end - start) for |w| < 0.5, else end - (1 - w)(end - start), fused."""
    w = np.asarray(weight, a.dtype)
    small = np.abs(w) < 0.5
    return fma(np.where(small, w, w - 1), b - a, np.where(small, a, b)).astype(a.dtype)


# the unsigned integer of each float's size, for selecting by bit masks
_BITS = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def _zero_where(cond, values):
    """``cond ? +0. : values`` for float ``values`` (None for other dtypes): the values' bits and-ed
    with a mask, zeros where ``cond`` holds and all ones elsewhere, so nan and -0. pass unchanged.
    np.where picks element by element, several times slower on random signs."""
    bits = _BITS.get(values.dtype)
    if bits is None:
        return None
    mask = np.subtract(cond, bits(1), dtype=bits)          # True - 1 = 0, False - 1 = all ones
    mine = type(mask) is np.ndarray and (values.shape == mask.shape or values.ndim == 0)
    return np.bitwise_and(mask, values.view(bits), out=mask if mine else None).view(values.dtype)


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        return tuple(d % max(ndim, 1) for d in dim) if ndim else ()
    return (dim % max(ndim, 1),) if ndim else ()


def _restore(grad, shape, dim, keepdim):
    """Re-insert the reduced dimensions of ``grad`` so it broadcasts against an input of ``shape`` (the 0-d
    gradient of a whole-tensor reduction broadcasts as it is: ATen's formulas expand it, no reshape)."""
    if keepdim or dim is None or len(shape) == 0:
        return grad if dim is not None or grad.dim() in (0, len(shape)) else grad.reshape((1,) * len(shape))
    for d in sorted(_dims(dim, len(shape))):
        grad = grad.unsqueeze(d)
    return grad


def _kernel(kernel, base="first", refuse="b", on="first"):
    """A dtype rule for an op PyTorch has no CPU kernel for on some input dtypes (``refuse``: "b" bool,
    "iu" integers): PyTorch's ``NotImplementedError: "<kernel>" not implemented for 'Bool'``, else
    the ``base`` rule ("first": the input's dtype; "float": promoted, integers to the default float).
    ``on``: the dtype the kernel is chosen by, the "first" input's or the "promoted" one of all."""
    def rule(ts, params):
        d = ts[0]._dtype if on == "first" else dtypes.result_type(ts)
        if d.np.kind in refuse:
            name = kernel(ts, params) if callable(kernel) else kernel
            raise errors.NotImplementedError(f'"{name}" not implemented for \'{d._scalar_name}\'')
        if base == "first":
            return None, d
        out = dtypes.result_type(ts)
        if base == "float" and out.category != 2:
            out = dtypes.default_float
        return out, out
    return rule


def _floating_only(message):
    """A dtype rule for ops defined on floating tensors only: PyTorch's RuntimeError otherwise."""
    def rule(ts, params):
        d = ts[0]._dtype
        if d.category != 2:
            raise errors.RuntimeError(message.format(d._scalar_name))
        return d, d
    return rule


_NOT_FLOAT = "biu"


class EveryDim(tuple):
    """An empty list of dims (``x.sum(dim=[])``), which a reduction reads as every dimension: the
    kernels and formulas get every dim, the node shows what PyTorch's keeps, ``()``
    (saved_attributes.py), and var's formula counts the elements of no dimension, as ATen's does."""


def _reduce_dim(dim, t, empty_means_all=True):
    """``dim`` checked against the tensor's rank and kept as given (a node shows a saved -1 as PyTorch
    does; the kernels and formulas take negative dims); ``()`` reduces every dimension (as ``sum(())``)."""
    if dim is None:
        return None
    n = t._data.ndim
    if isinstance(dim, (tuple, list)):
        if not dim:
            return EveryDim(range(n)) if empty_means_all else ()
        dims = tuple(_wrap_dim(d, n) for d in dim)
        for k, d in enumerate(dims):
            if d in dims[:k]:
                raise errors.RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return tuple(int(d) for d in dim)
    _wrap_dim(dim, n)
    return int(dim)
