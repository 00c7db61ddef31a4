"""The values of ``torch.arange`` and ``torch.linspace`` as PyTorch's CPU kernels compute them
(aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp), bit for bit for float32 and float64.

The build contracts ``a + b*c`` into fused multiply-adds, which is why
``torch.arange(-8.0, 8.0, 0.1)[80]`` is ``4.4409e-16`` and not 0.  ``linspace`` computes each
element on its own, in the dtype, its second half back from the end (``end - step*(steps-1-i)``).
``arange`` runs ``cpu_serial_kernel_vec``: over each thread's range (ranges of 32768 elements or
more are split between the threads), pairs of vectors (8 floats or 4 doubles, AVX2) while 16 (8)
elements remain, then one element at a time.  A vector starts from ``start + step*idx`` in double,
rounded to the dtype, and steps on from there (``Vectorized::arange(base, step)``: element k is
``base + k*step``), so its later elements differ from the per-element formula in the last bits.
"""
from __future__ import annotations

import numpy as np

from .exact import fma
from .reduction_order import threads

__all__ = ["arange_values", "linspace_values", "logspace_values"]

_GRAIN = 32768
_VEC = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}


def _vector_starts(n: int, vec: int) -> np.ndarray:
    """Per index of one thread's range (length n): the index its vector starts at, or -1 for
    the elements done one at a time."""
    start = np.full(n, -1, np.int64)
    paired = (n // (2 * vec)) * 2 * vec if n >= 2 * vec else 0
    idx = np.arange(paired)
    start[:paired] = idx - idx % vec
    return start


def _thread_layout(n: int, vec: int):
    """(first index of its vector or -1, offset within it) per element, over all threads' ranges."""
    t = min(threads(), max(1, -(-n // _GRAIN)))
    chunk = -(-n // t) if n else 0
    base = np.empty(n, np.int64)
    for b in range(0, n, max(chunk, 1)):
        e = min(n, b + chunk)
        s = _vector_starts(e - b, vec)
        base[b:e] = np.where(s >= 0, s + b, -1)
    i = np.arange(n)
    offset = np.where(base >= 0, i - base, 0)
    return base, offset


def linspace_values(start: float, end: float, steps: int, dt: np.dtype) -> np.ndarray:
    """torch.linspace(start, end, steps) in float32/float64: each element on its own, fused (float16: as
    half's operators compute it)."""
    dt = np.dtype(dt)
    t = dt.type
    s, e = t(start), t(end)
    if steps == 1:
        return np.array([s], dt)
    if dt == np.float16:
        return _linspace_half(s, e, steps)
    with np.errstate(all="ignore"):
        step = t((e - s) / t(steps - 1))
        i = np.arange(steps)
        from_start = i < steps // 2
        k = np.where(from_start, i, steps - i - 1).astype(dt)
        return fma(np.where(from_start, step, -step), k, np.where(from_start, s, e)).astype(dt)


def _linspace_half(s, e, steps):
    """linspace in half precision: c10::Half's arithmetic, each operation computed in float32 and rounded to
    half (no fused multiply-add), from the start for the first half and from the end for the rest."""
    f32, half = np.float32, np.float16
    with np.errstate(all="ignore"):
        step = half(half(e - s) / half(steps - 1))
        i = np.arange(steps)
        from_start = i < steps // 2
        moved = (f32(step) * np.where(from_start, i, steps - 1 - i).astype(f32)).astype(half).astype(f32)
        return np.where(from_start, f32(s) + moved, f32(e) - moved).astype(half)


def arange_values(start: float, step: float, n: int, dt: np.dtype) -> np.ndarray:
    """torch.arange with n elements in float32/float64 (bases in double, stepped in the dtype)."""
    dt = np.dtype(dt)
    if n == 0:
        return np.empty(0, dt)
    with np.errstate(all="ignore"):
        base, offset = _thread_layout(n, _VEC[dt])
        i = np.arange(n)
        first = np.where(base >= 0, base, i).astype(np.float64)
        head = fma(np.float64(step), first, np.float64(start))             # start + step*idx, in double
        vec_head = head.astype(dt).astype(np.float64)                        # Vectorized<T>::arange's base
        stepped = fma(offset.astype(np.float64), np.float64(step), vec_head)  # base + k*step, in double
        return np.where(offset > 0, stepped, np.where(base >= 0, vec_head, head)).astype(dt)


def logspace_values(start: float, end: float, steps: int, base: float, dt: np.dtype) -> np.ndarray:
    """torch.logspace in float32/float64: ``pow(base, exponent)`` in double, the exponent taken
    from the start for the first half and from the end for the second, then rounded.  (This loop
    is in RangeFactories.cpp, built without FMA: the exponent is rounded twice.)"""
    dt = np.dtype(dt)
    t = dt.type
    b = np.float64(base)
    if steps == 1:
        return np.array([np.power(b, np.float64(start))], dt)
    with np.errstate(all="ignore"):
        s, e = t(start), t(end)
        step = np.float64(e - s) / np.float64(steps - 1)
        i = np.arange(steps)
        from_start = i < steps // 2
        k = np.where(from_start, i, steps - i - 1).astype(np.float64)
        exponent = np.where(from_start, np.float64(s) + step * k, np.float64(e) - step * k)
        return np.power(b, exponent).astype(dt)
