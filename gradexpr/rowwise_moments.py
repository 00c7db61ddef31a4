"""ATen's ``RowwiseMoments`` (``native/cpu/moments_utils.h``): the mean and biased variance of each row,
as layer_norm's and group_norm's CPU kernels compute them — Welford updates on AVX2 vectors in chunks
of 16 (fused multiply-adds), the chunks combined in a cascade, the tail elements by scalar Welford,
then the vector lanes folded in — in the input's precision, so float32 and float64 results match
PyTorch's bit for bit (checked for row lengths 1 to 20000).

All rows are computed at once (NumPy over the row axis); the loops run over vectors and lanes only.
"""
from __future__ import annotations

import numpy as np

from .exact import fma

_CHUNK = 16          # kChunkSize
_VECTOR_BYTES = 32   # AVX2


def _ceil_log2(x: int) -> int:
    return 1 if x <= 2 else int(x - 1).bit_length()


def _add_moments(count_add, m1_add, m2_add, count, m1, m2, t):
    """AddMoments (scalar): fold (count_add, m1_add, m2_add) into (count, m1, m2); the compiler fuses
    its multiply-adds (checked against PyTorch), the scalar tail's Welford step it leaves unfused."""
    n = count + count_add
    c = t(0) if n == 0 else t(count_add) / t(n)
    delta = m1_add - m1
    m1 = fma(c, delta, m1).astype(delta.dtype)
    m2 = m2 + fma(delta * delta * c, t(count), m2_add).astype(delta.dtype)
    return n, m1, m2


def _add_moments_vec(count_add, m1_add, m2_add, count, m1, m2, t):
    """AddMomentsVec: the same fold on vectors, its last step fused."""
    n = count + count_add
    c = t(0) if n == 0 else t(count_add) / t(n)
    delta = m1_add - m1
    m2_sum = m2 + m2_add
    c_delta = c * delta
    return n, m1 + c_delta, fma(delta * t(count), c_delta, m2_sum).astype(m1.dtype)


def rowwise_moments(x: np.ndarray, ddof: int = 0):
    """(mean, variance) of each row of the 2-d array ``x`` (float32 or float64), as ATen computes them."""
    t = x.dtype.type
    rows, width = x.shape
    lanes = _VECTOR_BYTES // x.itemsize
    n = width // lanes
    chunks = -(-n // _CHUNK)
    depth = _ceil_log2(chunks)
    zero = np.zeros((rows, lanes), x.dtype)
    counts, firsts, seconds = [0] * depth, [zero] * depth, [zero] * depth
    inverse = [t(1) / t(i + 1) for i in range(_CHUNK)]
    for i in range(chunks):
        start = i * _CHUNK * lanes
        m0 = min(_CHUNK, n - i * _CHUNK)
        m1, m2 = zero, zero
        for j in range(m0):
            v = x[:, start + j * lanes:start + (j + 1) * lanes]
            delta = v - m1
            m1 = fma(inverse[j], delta, m1).astype(x.dtype)
            m2 = fma(delta, v - m1, m2).astype(x.dtype)
        counts[0], firsts[0], seconds[0] = _add_moments_vec(m0, m1, m2, counts[0], firsts[0], seconds[0], t)
        mask = i + 1
        j = 1
        while j < depth and (mask & 1) == 0:
            counts[j], firsts[j], seconds[j] = _add_moments_vec(counts[j - 1], firsts[j - 1], seconds[j - 1],
                                                            counts[j], firsts[j], seconds[j], t)
            counts[j - 1], firsts[j - 1], seconds[j - 1] = 0, zero, zero
            mask >>= 1
            j += 1
    for i in range(1, depth):
        counts[0], firsts[0], seconds[0] = _add_moments_vec(counts[i], firsts[i], seconds[i],
                                                        counts[0], firsts[0], seconds[0], t)
    count, m1, m2 = 0, np.zeros(rows, x.dtype), np.zeros(rows, x.dtype)
    for i in range(n * lanes, width):
        v = x[:, i]
        delta = v - m1
        count += 1
        m1 = m1 + delta / t(count)
        m2 = m2 + delta * (v - m1)
    lane_m1 = firsts[0] if depth else zero
    lane_m2 = seconds[0] if depth else zero
    for lane in range(lanes):
        count, m1, m2 = _add_moments(n, lane_m1[:, lane], lane_m2[:, lane], count, m1, m2, t)
    return m1, m2 / t(width - ddof)


def layer_norm_rows(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNormKernelImpl on rows: fma((x - mean)·rstd, gamma, beta), rstd = 1/sqrt(var + eps), in x's type."""
    t = x.dtype.type
    mean, var = rowwise_moments(np.ascontiguousarray(x))
    rstd = t(1) / np.sqrt(var + t(eps))
    return np.asarray(fma((x - mean[:, None]) * rstd[:, None], weight.astype(x.dtype), bias.astype(x.dtype)),
                      x.dtype)
