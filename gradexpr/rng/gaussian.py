"""The normal distribution: the scalar Box-Muller path with the generator's cached sample,
and ``normal_fill``'s blocks of 16 (float64 through libm, float32 through avx_mathfun)."""
from __future__ import annotations

import math

import numpy as np

from ..exact import fma32 as _fma32, fma64 as _fma64
from .avx_mathfun import _MINUS_TWO, _ONE, _TWO_PI_F, _log256_ps, _sincos256_ps
from .engine import Generator, _gen
from .shapes import _FLOATS, _dtype, _inplace, _is_scalar, _numel, _shape

def _fma64_scalar_mean_std(v: np.ndarray, std: float, mean: float) -> np.ndarray:
    """fma(v, std, mean) with the common cheap cases done directly."""
    if std == 1.0:
        return v + mean                       # v*1 is exact
    if mean == 0.0 and math.copysign(1.0, mean) > 0:
        return v * std + 0.0                  # one rounding; +0.0 like the fma's exact -0 + +0
    return _fma64(v, std, mean)


def _fma32_scalar_mean_std(v: np.ndarray, std: np.float32, mean: np.float32) -> np.ndarray:
    if std == np.float32(1.0):
        return v + mean
    if mean == np.float32(0.0) and not np.signbit(mean):
        return v * std + np.float32(0.0)
    return _fma32(v, std, mean)


_TWO_PI_D = 2.0 * math.pi


def _normal_scalar_path(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """at::normal_distribution<double>, one sample at a time with the generator's cache."""
    out = np.empty(n, dtype=np.float64)
    if n == 0:
        return out
    cached = g._next_double_normal
    fresh = n - (1 if cached is not None else 0)
    pairs = (fresh + 1) // 2
    u = g._uniform53(2 * pairs).tolist() if pairs else []
    log1p, sqrt, sin, cos = math.log1p, math.sqrt, math.sin, math.cos
    k = 0
    for i in range(n):
        if cached is not None:
            out[i] = cached
            cached = None
        else:
            u1 = u[k]
            u2 = u[k + 1]
            k += 2
            r = sqrt(-2.0 * log1p(-u2))
            theta = _TWO_PI_D * u1
            cached = r * sin(theta)
            out[i] = r * cos(theta)
    g._next_double_normal = cached
    return _fma64_scalar_mean_std(out, float(std), float(mean))


def _normal_fill16_double(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """The scalar NormalFill16<double> over rows of 16 uniforms (glibc log/sincos, std::fma)."""
    u1 = (1.0 - blocks[:, :8]).ravel().tolist()
    u2 = blocks[:, 8:].ravel().tolist()
    log, sqrt, sin, cos = math.log, math.sqrt, math.sin, math.cos
    radius = [sqrt(-2.0 * log(x)) for x in u1]
    theta = [_TWO_PI_D * x for x in u2]
    rc = np.array([r * cos(t) for r, t in zip(radius, theta)], dtype=np.float64)
    rs = np.array([r * sin(t) for r, t in zip(radius, theta)], dtype=np.float64)
    out = np.empty(blocks.shape, dtype=np.float64)
    out[:, :8] = _fma64_scalar_mean_std(rc, std, mean).reshape(-1, 8)
    out[:, 8:] = _fma64_scalar_mean_std(rs, std, mean).reshape(-1, 8)
    return out


_CHUNK_ROWS = 4096    # rows of 16 per pass: keeps the temporaries in cache


def _normal_fill16_float(blocks: np.ndarray, mean, std) -> np.ndarray:
    """NormalFill16<float> (AVX2) over rows of 16 float32 uniforms."""
    if len(blocks) > _CHUNK_ROWS:
        out = np.empty(blocks.shape, dtype=np.float32)
        for i in range(0, len(blocks), _CHUNK_ROWS):
            out[i:i + _CHUNK_ROWS] = _normal_fill16_float(blocks[i:i + _CHUNK_ROWS], mean, std)
        return out
    mean = np.float32(mean)
    std = np.float32(std)
    with np.errstate(all="ignore"):
        u1 = _ONE - blocks[:, :8].ravel()
        u2 = blocks[:, 8:].ravel()
        radius = np.sqrt(_MINUS_TWO * _log256_ps(u1))
        theta = _TWO_PI_F * u2
        s, c = _sincos256_ps(theta)
        n1 = radius * c
        n2 = radius * s
        out = np.empty(blocks.shape, dtype=np.float32)
        out[:, :8] = _fma32_scalar_mean_std(n1, std, mean).reshape(-1, 8)
        out[:, 8:] = _fma32_scalar_mean_std(n2, std, mean).reshape(-1, 8)
    return out


def _cast_serial(v: np.ndarray, dt: np.dtype) -> np.ndarray:
    """The serial path's doubles stored as ``dt`` (float16 through float32, as the kernel casts)."""
    if dt.name == "float16":
        return v.astype(np.float32).astype(np.float16)
    return v.astype(dt)


def randn_serial(n: int, dtype="float32", generator=None) -> np.ndarray:
    """``normal_`` on a tensor that is not contiguous (``randn_like`` of a transposed tensor): the
    kernel's serial path, one draw per element in memory order, whatever the size."""
    dt = _dtype(dtype)
    return _cast_serial(_normal_scalar_path(_gen(generator), n, 0.0, 1.0), dt)


def _normal_kernel(g: Generator, n: int, mean: float, std: float, dt: np.dtype) -> np.ndarray:
    """Tensor.normal_(mean, std) on a contiguous tensor of n elements of dtype dt."""
    mean = float(mean)
    std = float(std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")   # PyTorch's type and words
    if dt.name not in _FLOATS:
        raise TypeError(f"normal_ is not implemented for dtype {dt.name}")
    if n < 16:
        return _cast_serial(_normal_scalar_path(g, n, mean, std), dt)
    tail = n % 16
    full = n - tail
    # float/double fill the whole tensor with uniforms first; half (and bfloat16) go block
    # by block through a float buffer, so their tail block uses the next 16 draws after
    # the full blocks, not after n.
    drawn = full if dt.name == "float16" else n
    if dt.name == "float64":
        u = g._uniform53(drawn + (16 if tail else 0))
        fill = _normal_fill16_double
    else:
        u = g._uniform24(drawn + (16 if tail else 0))
        fill = _normal_fill16_float
    out = np.empty(n, dtype=u.dtype)
    out[:full] = fill(u[:full].reshape(-1, 16), mean, std).ravel()
    if tail:
        out[n - 16:] = fill(u[drawn:].reshape(1, 16), mean, std).ravel()
    if dt.name == "float16":
        out = out.astype(np.float16)
    return out


def normal(mean, std, shape=None, dtype="float32", generator=None) -> np.ndarray:
    """torch.normal: (float, float, size), (Tensor, float), (float, Tensor), (Tensor, Tensor)."""
    g = _gen(generator)
    dt = _dtype(dtype)
    m_scalar, s_scalar = _is_scalar(mean), _is_scalar(std)
    if m_scalar and s_scalar:
        shp = _shape(shape)
        return _normal_kernel(g, _numel(shp), mean, std, dt).reshape(shp)
    if not s_scalar:
        std_a = np.asarray(std)
        if std_a.size and not (std_a >= 0).all():
            raise ValueError("normal expects all elements of std >= 0.0")
    if s_scalar:                                   # Tensor mean, float std
        mean_a = np.asarray(mean)
        shp = mean_a.shape
        out = _normal_kernel(g, _numel(shp), 0.0, std, dt).reshape(shp)
        return _inplace(out, mean_a, np.add)
    if m_scalar:                                   # float mean, Tensor std
        shp = std_a.shape
        out = _normal_kernel(g, _numel(shp), 0.0, 1.0, dt).reshape(shp)
        out = _inplace(out, std_a, np.multiply)
        return _inplace(out, np.asarray(mean, dtype=dt), np.add)
    mean_a = np.asarray(mean)
    shp = np.broadcast_shapes(mean_a.shape, std_a.shape)
    out = _normal_kernel(g, _numel(shp), 0.0, 1.0, dt).reshape(shp)
    out = _inplace(out, std_a, np.multiply)
    return _inplace(out, mean_a, np.add)


def randn(shape, dtype="float32", generator=None) -> np.ndarray:
    shp = _shape(shape)
    return _normal_kernel(_gen(generator), _numel(shp), 0.0, 1.0, _dtype(dtype)).reshape(shp)
