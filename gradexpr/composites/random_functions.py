"""Random factories and in-place samplers (``rand``, ``randn``, ``randint``, ``normal_`` …) over the
process's generator (``gradexpr/rng``), seeded as PyTorch seeds.
"""
from __future__ import annotations


import numpy as np

from .. import dtypes, errors
from ..grad_mode import VMAP_LEVELS as _VMAP
from ..graph import _grad_enabled
from ..op import bump_version
from ..signatures import _check_device, binding_overloads
from ..tensor import Size, Tensor
from .arguments import _UNSET, _check_new_shape, _dtype_arg, _finish, _is_tensor, _no_overload, _scalar, _shape_args
from .creation import _size_keyword


def _checked(name, args, kwargs, known, **given):
    """PyTorch's TypeError for a keyword ``name``'s signatures do not take (or a value they refuse), and its
    error for a device other than the CPU. ``given``: the keywords the function names, where not None."""
    kwargs = dict(kwargs, **{k: v for k, v in given.items() if v is not None})
    if kwargs.keys() - known:       # PyTorch's binding signatures say why (recorded in ops/_bindings.py)
        binding_overloads(name, False).parse(args, kwargs)
    _check_device(kwargs.get("device"))


def _rng():
    from .. import rng as _random
    return _random


def _vmap():
    """vmap's randomness rules (vmap_random.py), loaded with vmap: non-empty ``_VMAP`` means a vmap runs."""
    from .. import vmap_random
    return vmap_random


def _drawn(draw, shape):
    """``draw(shape)``, a factory's tensor; under vmap, as its ``randomness=`` says."""
    return _vmap().factory(draw, shape) if _VMAP else draw(shape)


def _drawn_from(draw, *inputs):
    """``draw(*inputs)``, a sample drawn from tensors (``bernoulli(p)``); under vmap, as its ``randomness=`` says."""
    return _vmap().with_inputs(draw, inputs) if _VMAP else draw(*inputs)


def _filled(self, draw):
    """``self`` filled in place with ``draw(shape)``; under vmap, as its ``randomness=`` says."""
    if _VMAP:
        _vmap().fill(self, draw)
    else:
        self._data[...] = draw(self._data.shape)
    bump_version(self)
    return self


def manual_seed(seed):
    return _rng().manual_seed(int(seed))


def seed():
    return _rng().default_generator.seed()


def initial_seed():
    return _rng().default_generator.initial_seed()


def _random_factory(kind):
    def make(*args, size=_UNSET, generator=None, dtype=None, device=None, requires_grad=False, out=None,
             layout=None, pin_memory=False):
        shape = _size_keyword(kind, args, size, overloaded=True)
        if shape is None:
            raise _no_overload(kind)
        _check_device(device)
        _check_new_shape(shape)
        d = _dtype_arg(dtype, dtypes.default_float)
        return _finish(_drawn(lambda s: Tensor._make(getattr(_rng(), kind)(s, d.name, generator=generator), d),
                              shape), requires_grad)
    make.__name__ = kind
    return make


rand = _random_factory("rand")
randn = _random_factory("randn")


def _permuted_like(input, dtype, draw):
    """A ``*_like`` sample of a tensor not laid out row-major: PyTorch fills ``empty_like(input)``
    (the input's layout) in memory order, so ``draw(n)``'s values go in that order."""
    from ..result_layout import note, preserve_copy
    out = np.empty_like(preserve_copy(input._data), dtype=dtype.np)
    order = sorted(range(out.ndim), key=lambda d: out.strides[d], reverse=True)
    out.transpose(order)[...] = draw(out.size).reshape([out.shape[d] for d in order])
    return Tensor._make(note(out), dtype)


def _laid_out_row_major(input) -> bool:
    return _VMAP or input._data.ndim < 2 or input._data.flags.c_contiguous


_LIKE_KEYWORDS = frozenset(("dtype", "requires_grad", "generator", "memory_format", "layout", "device", "pin_memory"))


def rand_like(input, *, dtype=None, requires_grad=False, generator=None, **kwargs):
    _checked("rand_like", (input,), kwargs, _LIKE_KEYWORDS, dtype=dtype)
    if _laid_out_row_major(input):
        return rand(input._data.shape, dtype=dtype or input._dtype, requires_grad=requires_grad, generator=generator)
    d = _dtype_arg(dtype, input._dtype)
    return _finish(_permuted_like(input, d, lambda n: _rng().rand((n,), d.name, generator=generator)), requires_grad)


def randn_like(input, *, dtype=None, requires_grad=False, generator=None, **kwargs):
    _checked("randn_like", (input,), kwargs, _LIKE_KEYWORDS, dtype=dtype)
    if _laid_out_row_major(input):
        return randn(input._data.shape, dtype=dtype or input._dtype, requires_grad=requires_grad, generator=generator)
    d = _dtype_arg(dtype, input._dtype)
    # normal_ on a tensor that is not contiguous takes the kernel's serial path at any size
    return _finish(_permuted_like(input, d, lambda n: _rng().randn_serial(n, d.name, generator=generator)),
                   requires_grad)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None, requires_grad=False,
            **kwargs):
    _checked("randint", args, kwargs, frozenset(("out", "layout", "pin_memory", "device")), device=device,
             low=low, high=high, size=size)
    # low=, high= and size= by keyword fill the places of randint(low, high, size) after the positional ones
    args = list(args)
    if low is not None or high is not None:
        if low is not None and not args:
            args.append(low)
        if high is not None:
            args.append(high)
    if size is None:
        if not args or (len(args) == 1 and not isinstance(args[0], (tuple, list, Size))):
            types = ", ".join(type(v).__name__ for v in args)
            raise _no_overload("randint", types)
        if not isinstance(args[-1], (tuple, list, Size)):
            raise errors.TypeError(f"randint(): argument 'size' (position {len(args)}) must be tuple of ints, not "
                                   f"{type(args[-1]).__name__}")
        size = args.pop()
    low, high = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    shape = _shape_args((size,))
    _check_new_shape(shape)
    if high <= low:
        raise errors.RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = _dtype_arg(dtype, dtypes.int64)
    return _finish(_drawn(lambda s: Tensor._make(_rng().randint(int(low), int(high), s, d.name, generator=generator),
                                                 d), shape), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, generator=None, **kwargs):
    _checked("randint_like", (input, low) + (() if high is None else (high,)), kwargs, _LIKE_KEYWORDS, dtype=dtype)
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input._dtype, generator=generator)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, **kwargs):
    _checked("randperm", (n,), kwargs, frozenset(("out", "layout", "pin_memory", "device")), device=device)
    _check_new_shape((n,))
    d = _dtype_arg(dtype, dtypes.int64)

    def draw(shape):            # under vmap(randomness="different"): one permutation per sample
        rows = [_rng().randperm(int(n), d.name, generator=generator) for _ in range(int(np.prod(shape[:-1])))]
        return Tensor._make(np.stack(rows).reshape(shape) if len(shape) > 1 else rows[0], d)
    return _finish(_drawn(draw, (int(n),)), requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False, **kwargs):
    _checked("normal", (mean, std) + (() if size is None else (size,)), kwargs,
             frozenset(("out", "layout", "pin_memory", "device")))
    if _is_tensor(mean) or _is_tensor(std):
        m = mean._data if _is_tensor(mean) else mean
        s = std._data if _is_tensor(std) else std
        d = mean._dtype if _is_tensor(mean) else std._dtype

        def draw(mean, std):
            m = mean._data if _is_tensor(mean) else mean
            s = std._data if _is_tensor(std) else std
            shape = np.broadcast_shapes(np.shape(m), np.shape(s))
            return Tensor._make(_rng().normal(m, s, shape, d.name, generator=generator), d)
        return _drawn_from(draw, mean, std)
    shape = _shape_args((size,)) if size is not None else ()
    _check_new_shape(shape)
    d = _dtype_arg(dtype, dtypes.default_float)
    return _finish(_drawn(lambda s: Tensor._make(_rng().normal(mean, std, s, d.name, generator=generator), d), shape),
                   requires_grad)


def bernoulli(input, p=None, *, generator=None):
    name = input._dtype.name
    if p is not None:
        return _drawn(lambda s: Tensor._make(_rng().bernoulli(float(p), s, name, generator=generator), input._dtype),
                      tuple(input._data.shape))
    return _drawn_from(lambda x: Tensor._make(_rng().bernoulli(x._data, x._data.shape, name, generator=generator),
                                              x._dtype), input)


def _uniform_(self, a=0.0, b=1.0, *, generator=None):
    with _NoGrad():
        return _filled(self, lambda s: _rng().uniform(a, b, s, self._dtype.name, generator=generator))


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    return _filled(self, lambda s: _rng().normal(mean, std, s, self._dtype.name, generator=generator))


def _random_(self, *bounds, generator=None):
    return _filled(self, lambda s: _rng().random_(s, self._dtype.name, *bounds, generator=generator))


def _bernoulli_(self, p=0.5, *, generator=None):
    return _filled(self, lambda s: _rng().bernoulli(float(_scalar(p)), s, self._dtype.name, generator=generator))


def _exponential_(self, lambd=1.0, *, generator=None):
    lambd = float(_scalar(lambd))
    if not lambd > 0.0:
        raise errors.RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _filled(self, lambda s: _rng().exponential(s, lambd, self._dtype.name, generator=generator))


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    median, sigma = float(_scalar(median)), float(_scalar(sigma))
    return _filled(self, lambda s: _rng().cauchy(s, median, sigma, self._dtype.name, generator=generator))


def _geometric_(self, p, *, generator=None):
    p = float(_scalar(p))
    if not 0.0 < p < 1.0:
        raise errors.RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _filled(self, lambda s: _rng().geometric(s, p, self._dtype.name, generator=generator))


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    std = float(_scalar(std))
    if not std > 0.0:
        raise errors.RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    mean = float(_scalar(mean))
    return _filled(self, lambda s: _rng().log_normal(s, mean, std, self._dtype.name, generator=generator))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``torch.multinomial``; under vmap, as its ``randomness=`` says (a batch of rows is more rows)."""
    return _drawn_from(lambda p: _multinomial(p, num_samples, replacement, generator), input)


def _multinomial(input, num_samples, replacement, generator):
    """Indices drawn from the rows of ``input`` (weights, not necessarily summing to 1). Without
    replacement, or for one sample: PyTorch's exponential trick, the top ``num_samples`` of
    ``input / q`` with ``q ~ Exp(1)``; with replacement: a binary search of each uniform draw in
    the normalized cumulative weights."""
    if not input._dtype.is_floating_point:
        raise errors.RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                                  f"{input._dtype._scalar_name}")
    n = int(num_samples)
    if n <= 0:
        raise errors.RuntimeError("cannot sample n_sample <= 0 samples")
    if input.dim() not in (1, 2):
        raise errors.RuntimeError("prob_dist must be 1 or 2 dim")
    categories = input._data.shape[-1]
    if not replacement and n > categories:
        raise errors.RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if categories > 2 ** 24:
        raise errors.RuntimeError("number of categories cannot exceed 2^24")
    data = input._data
    if not replacement or n == 1:
        if data.size and not (np.all(data >= 0) and np.all(data < np.inf)):
            raise errors.RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(data.sum(axis=-1) == 0):
            raise errors.RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = _rng().exponential(data.shape, 1.0, input._dtype.name, generator=generator)
        with np.errstate(all="ignore"):
            keys = data / q
        # topk: the largest first; equal keys keep their index order
        order = np.argsort(-keys, axis=-1, kind="stable")[..., :n]
        return Tensor._make(np.ascontiguousarray(order.astype(np.int64)), dtypes.int64)
    if np.any(data < 0):
        raise errors.RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    if not np.all(np.isfinite(data)):
        raise errors.RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    if np.any(data.sum(axis=-1) <= 0):
        raise errors.RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    out = _rng().multinomial_with_replacement(data, n, generator=generator)
    return Tensor._make(out, dtypes.int64)


class _NoGrad:
    def __enter__(self):
        self._t = _grad_enabled.set(False)

    def __exit__(self, *a):
        _grad_enabled.reset(self._t)
