"""Argument normalisation shared by the distributions: shapes, dtypes, scalar operands."""
from __future__ import annotations

import numpy as np

def _shape(shape) -> tuple:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


_FLOATS = ("float16", "float32", "float64")


def _dtype(dtype) -> np.dtype:
    return np.dtype(dtype)


def _is_scalar(x) -> bool:
    return np.ndim(x) == 0 and not isinstance(x, np.ndarray)


def _inplace(out: np.ndarray, other, op) -> np.ndarray:
    """out.op_(other): computed in the promoted dtype, written back in out's dtype."""
    other = np.asarray(other)
    ct = np.result_type(out.dtype, other.dtype)
    res = op(out.astype(ct, copy=False), other.astype(ct, copy=False))
    return res.astype(out.dtype, copy=False)
