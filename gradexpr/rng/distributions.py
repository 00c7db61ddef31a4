"""Uniform floats, integers (``random_``/``randint``/``randperm``), Bernoulli draws and dropout
masks, as PyTorch's CPU kernels draw them from the generator."""
from __future__ import annotations

import numpy as np

from ..exact import fma32 as _fma32, fma64 as _fma64
from .engine import _U64, _gen
from .shapes import _FLOATS, _dtype, _is_scalar, _numel, _shape

def uniform(low=0.0, high=1.0, shape=None, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.uniform_(low, high) on a new tensor of the given shape."""
    g = _gen(generator)
    dt = _dtype(dtype)
    shp = _shape(shape)
    n = _numel(shp)
    low, high = float(low), float(high)
    if dt.name not in _FLOATS:
        raise TypeError(f"uniform_ is not implemented for dtype {dt.name}")
    info = np.finfo(dt)
    lo, hi = float(info.min), float(info.max)
    if not (lo <= low <= hi):
        raise ValueError(f"from is out of bounds for {dt.name}")
    if not (lo <= high <= hi):
        raise ValueError(f"to is out of bounds for {dt.name}")
    if not low <= high:
        raise ValueError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    if not (high - low) <= hi:
        raise ValueError(f"uniform_ expects to-from <= std::numeric_limits<{dt.name}>::max(), "
                         f"but found to={high} and from={low} which result in to-from to exceed the limit")
    if n == 0:
        return np.empty(shp, dtype=dt)
    if dt.name == "float64":
        x = g._uniform53(n)
        span = high - low
        if span == 1.0 and low == 0.0:
            v = x
        else:
            v = _fma64(x, span, low)
        v = np.where(v == high, low, v)
        return v.reshape(shp)
    f_lo, f_hi = np.float32(low), np.float32(high)
    x = g._uniform24(n)
    span = f_hi - f_lo
    if span == np.float32(1.0) and f_lo == np.float32(0.0):
        v = x
    else:
        v = _fma32(x, span, f_lo)
    if dt.name == "float16":
        v = v.astype(np.float16)
        # static_cast<at::Half>(double) goes through float
        to_s, from_s = np.float16(np.float32(high)), np.float16(np.float32(low))
    else:
        to_s, from_s = f_hi, f_lo
    v = np.where(v == to_s, from_s, v).astype(dt, copy=False)
    return v.reshape(shp)


def rand(shape, dtype="float32", generator=None) -> np.ndarray:
    return uniform(0.0, 1.0, shape, dtype, generator)


# ====================================================================== integers

def _update_from(frm: int, digits: int) -> int:
    # native/DistributionTemplates.h update_from<scalar_t>
    f1 = int(_cast_float_digits(frm + 1, digits))
    if f1 < frm:
        a = abs(frm + 1)
        k = a.bit_length() - 1
        frm = f1 + (1 << (k - digits + 1))
    return frm


def _update_to(to: int, digits: int) -> int:
    t1 = int(_cast_float_digits(to - 1, digits))
    if t1 >= to:
        a = abs(to - 1)
        k = a.bit_length() - 1
        to = t1 - (1 << (k - digits + 1))
    return to


def _cast_float_digits(v: int, digits: int) -> float:
    if digits == 53:
        return float(np.float64(v))
    v32 = np.float32(v)                       # int64 -> float (-> Half, via float)
    return float(v32 if digits == 24 else np.float16(v32))


_DIGITS = {"float16": 11, "float32": 24, "float64": 53}


def randint(low: int, high: int, shape, dtype="int64", generator=None) -> np.ndarray:
    """torch.randint(low, high, size): Tensor.random_(low, high)."""
    g = _gen(generator)
    dt = _dtype(dtype)
    shp = _shape(shape)
    n = _numel(shp)
    low, high = int(low), int(high)
    if not low < high:
        raise ValueError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt.name in _DIGITS:
        low = _update_from(low, _DIGITS[dt.name])
        high = _update_to(high, _DIGITS[dt.name])
        if not low < high:
            raise ValueError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype")
        info = np.finfo(dt)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"random_ bounds are out of range for {dt.name}")
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"from/to - 1 is out of bounds for {dt.name}")
    elif dt.kind == "b":
        if low < 0 or high - 1 > 1:
            raise ValueError("from/to - 1 is out of bounds for bool")
    else:
        raise TypeError(f"random_ is not implemented for dtype {dt.name}")
    rng = (high - low) & _U64
    if n == 0:
        return np.empty(shp, dtype=dt)
    w = g._random64(n) if rng >= (1 << 28) else g._words(n)
    if rng == 0:                               # range 2**64 (not reachable with int64 bounds)
        v = w.view(np.int64)
    else:
        v = (w % np.uint64(rng) + np.uint64(low & _U64)).view(np.int64)
    if dt.name == "float16":
        v = v.astype(np.float32)               # static_cast<at::Half>(int64_t) goes through float
    return v.astype(dt).reshape(shp)


def randperm(n: int, dtype="int64", generator=None) -> np.ndarray:
    """torch.randperm(n): Fisher-Yates, z = random() % (n - i), swapping i and i + z."""
    g = _gen(generator)
    dt = _dtype(dtype)
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if dt.kind == "f" and n > 2 ** _DIGITS.get(dt.name, 53) + 1:
        raise ValueError(f"n cannot be greater than 2^{_DIGITS[dt.name]}+1 for {dt.name} dtype")
    if dt.kind in "iu" and n > 0 and n - 1 > np.iinfo(dt).max:
        raise ValueError(f"n is too large for result tensor type: '{dt.name}'")
    perm = list(range(n))
    if n > 1:
        i = np.arange(n - 1, dtype=np.uint64)
        target = (g._words(n - 1) % (np.uint64(n) - i) + i).tolist()
        for i, z in enumerate(target):
            perm[i], perm[z] = perm[z], perm[i]
    return np.array(perm, dtype=np.int64).astype(dt)


# ====================================================================== bernoulli / dropout

def bernoulli(p, shape=None, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.bernoulli_(p) for a float p (shape required), or torch.bernoulli(p_array)."""
    g = _gen(generator)
    dt = _dtype(dtype)
    if _is_scalar(p):
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        shp = _shape(shape)
        u = g._uniform53(_numel(shp))
        return (u < p).astype(dt).reshape(shp)
    pa = np.asarray(p)
    if pa.dtype.kind != "f":
        raise TypeError(f"bernoulli expects a floating-point probability tensor, got {pa.dtype.name}")
    shp = pa.shape if shape is None else _shape(shape)
    pa = np.broadcast_to(pa, shp)
    if pa.size and not ((pa >= 0) & (pa <= 1)).all():
        raise ValueError("bernoulli expects all elements of p to be in [0, 1]")
    n = _numel(shp)
    if pa.dtype == np.float64:
        u = g._uniform53(n).reshape(shp)
        res = u < pa
    else:
        u = g._uniform24(n).reshape(shp)
        res = u < pa.astype(np.float32)
    return res.astype(dt)


def dropout_mask(shape, p: float, dtype="float32", generator=None) -> np.ndarray:
    """The tensor F.dropout(x, p, training=True) multiplies x by: bernoulli(1-p) / (1-p)."""
    dt = _dtype(dtype)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    shp = _shape(shape)
    if p == 0.0 or _numel(shp) == 0:
        return np.ones(shp, dtype=dt)
    if p == 1.0:
        return np.zeros(shp, dtype=dt)
    q = 1.0 - p
    noise = bernoulli(q, shp, dt, generator)
    if dt.kind == "f":
        with np.errstate(all="ignore"):
            return noise / dt.type(q)
    return noise


def random_(shape, dtype="float32", frm=None, to=None, generator=None) -> np.ndarray:
    """Tensor.random_(), random_(to), random_(from, to): integers drawn as ``randint`` draws them;
    with no bounds, [0, 2**mantissa] for floating dtypes and [0, 2**63) for int64."""
    dt = _dtype(dtype)
    if to is None and frm is not None:
        frm, to = 0, frm
    if frm is None:
        frm = 0
        to = (1 << _DIGITS[dt.name]) + 1 if dt.name in _DIGITS else (1 << 63 if dt.name == "int64" else
                                                                     int(np.iinfo(dt).max) + 1 if dt.kind in "iu" else 2)
    return randint(int(frm), int(to), shape, dt, generator)


# ====================================================================== exponential / multinomial

def exponential(shape, lambd: float = 1.0, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.exponential_(lambd): ``-1/lambd * log1p(-u)`` of a 53-bit uniform, for every dtype,
    then cast (at::exponential_distribution<double>, the CPU kernel's serial loop)."""
    lambd = float(lambd)
    if not lambd > 0.0:
        raise ValueError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    shp = _shape(shape)
    u = _gen(generator)._uniform53(_numel(shp))
    with np.errstate(all="ignore"):
        return ((-1.0 / lambd) * np.log1p(-u)).astype(_dtype(dtype)).reshape(shp)


def multinomial_with_replacement(probs: np.ndarray, n_sample: int, generator=None) -> np.ndarray:
    """torch.multinomial(p, n, replacement=True) for n > 1 (MultinomialKernel.cpp): per row, the
    cumulative sums in the input's dtype, divided by their total, the last bucket set to 1; each
    sample a 53-bit uniform placed by binary search (the first bucket not below it)."""
    g = _gen(generator)
    rows = probs.reshape(-1, probs.shape[-1])
    out = np.empty((rows.shape[0], n_sample), dtype=np.int64)
    for i, row in enumerate(rows):
        cum = np.cumsum(row, dtype=row.dtype)        # sequential, in the row's dtype
        total = cum[-1]
        if total > 0:
            cum = cum / total
        cum[-1] = 1
        u = g._uniform53(n_sample)
        out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return out.reshape(probs.shape[:-1] + (n_sample,))


def cauchy(shape, median: float = 0.0, sigma: float = 1.0, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.cauchy_: ``median + sigma * tan(pi * (u - 0.5))`` of a 53-bit uniform, then cast."""
    shp = _shape(shape)
    u = _gen(generator)._uniform53(_numel(shp))
    return (float(median) + float(sigma) * np.tan(np.pi * (u - 0.5))).astype(_dtype(dtype)).reshape(shp)


def geometric(shape, p: float, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.geometric_(p): ``ceil(log(u) / log1p(-p))`` of a 53-bit uniform, then cast."""
    shp = _shape(shape)
    u = _gen(generator)._uniform53(_numel(shp))
    with np.errstate(all="ignore"):
        return np.ceil(np.log(u) / np.log1p(-float(p))).astype(_dtype(dtype)).reshape(shp)


def log_normal(shape, mean: float = 1.0, std: float = 2.0, dtype="float32", generator=None) -> np.ndarray:
    """Tensor.log_normal_: ``exp`` of at::normal_distribution<double> samples, one at a time (the
    generator's cached second sample included), then cast."""
    from .gaussian import _normal_scalar_path
    shp = _shape(shape)
    v = _normal_scalar_path(_gen(generator), _numel(shp), float(mean), float(std))
    return np.exp(v).astype(_dtype(dtype)).reshape(shp)
