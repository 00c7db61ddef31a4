"""PyTorch's tensor ``repr``/``str`` as a pure function over NumPy arrays.

``format_tensor(data, dtype, grad_fn=..., requires_grad=...)`` returns exactly what
``repr(t)`` (== ``str(t)``) prints for the equivalent CPU, strided, dense torch
tensor under PyTorch 2.13's ``torch/_tensor_str.py`` rules.  The rules, in short:

* **Element formatter** (one per tensor, built from the values that will be shown,
  i.e. from the summarised data when the tensor is summarised).  Floats are looked
  at as the exact doubles of their stored values (float32/float16 are widened
  exactly, as ``tensor.item()``/``tolist()`` do); only the non-zero finite values
  count.  If all of them are integral the tensor is in *integer mode* (``3.``).
  Scientific mode is chosen when ``max/min > 1000`` or ``max > 1e8`` or
  ``min < 1e-4`` (absolute values, computed in float64), unless ``sci_mode`` is
  forced through :func:`set_printoptions`.  Every element is padded on the left to the
  widest formatted non-zero finite value (zeros, nan and inf do not widen it).
* **Layout**: ``tensor(`` is 7 columns; a 1-d row wraps after
  ``floor((linewidth - indent) / (width + 2))`` elements; each nesting level adds
  one column of indent; sub-tensors of a d-dim tensor are separated by ``d - 1``
  newlines (so ``d - 2`` blank lines).
* **Summarisation**: when ``numel > threshold`` every dimension longer than
  ``2 * edgeitems`` shows only its first and last ``edgeitems`` entries with
  ``...`` in between.
* **Suffixes** ``size=``, ``dtype=``, then ``grad_fn=<...>`` or
  ``requires_grad=True``; a suffix that would overflow ``linewidth`` goes onto a
  new line indented 7 columns.

Only NumPy and the standard library are used; nothing is computed at import time.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dtypes

__all__ = [
    "format_tensor",
    "format_item",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
]


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Mirror of ``torch.set_printoptions``.

    As in torch, ``sci_mode`` is always overwritten (so any call without
    ``sci_mode`` resets it to automatic), a ``profile`` is applied first and the
    explicit options override it.
    """
    if profile is not None:
        if profile == "default":
            _OPTS.precision, _OPTS.threshold, _OPTS.edgeitems, _OPTS.linewidth = 4, 1000, 3, 80
        elif profile == "short":
            _OPTS.precision, _OPTS.threshold, _OPTS.edgeitems, _OPTS.linewidth = 2, 1000, 2, 80
        elif profile == "full":
            _OPTS.precision, _OPTS.threshold, _OPTS.edgeitems, _OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """Current options as a dict accepted by :func:`set_printoptions`."""
    return {name: getattr(_OPTS, name) for name in _PrintOptions.__slots__}


class printoptions:
    """Context manager that temporarily changes the print options."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._old = None

    def __enter__(self):
        self._old = get_printoptions()
        set_printoptions(**self._kwargs)
        return self

    def __exit__(self, *exc):
        set_printoptions(**self._old)
        return False


# torch dtype name -> (NumPy dtype, category)
_DTYPES = {
    "float32": (np.float32, "f"),
    "float64": (np.float64, "f"),
    "float16": (np.float16, "f"),
    "int64": (np.int64, "i"),
    "int32": (np.int32, "i"),
    "int16": (np.int16, "i"),
    "int8": (np.int8, "i"),
    "uint8": (np.uint8, "i"),
    "bool": (np.bool_, "b"),
}
_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64",
    "int": "int32", "short": "int16",
}
# Dtypes repr leaves implicit for non-empty tensors: the default float dtype, int64, bool.
_IMPLICIT_DTYPES = ("int64", "bool")


def _resolve_dtype(dtype: str) -> str:
    name = str(dtype)
    if name.startswith("torch."):
        name = name[6:]
    name = _ALIASES.get(name, name)
    if name not in _DTYPES:
        raise ValueError(f"unsupported dtype for printing: {dtype!r}")
    return name


# --------------------------------------------------------------------------- formatter

_SMALL = 64  # up to this many values the formatter works on Python floats


class _Formatter:
    """Decides how every element is written and the common width (torch's ``_Formatter``)."""

    __slots__ = ("kind", "int_mode", "sci_mode", "width", "precision")

    def __init__(self, kind: str, values: np.ndarray, precision: int, sci_opt):
        # ``values``: the (possibly summarised) data, any shape, in the tensor's dtype.
        self.kind = kind
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        self.precision = precision
        if values.size == 0:
            return
        if kind != "f":
            if kind == "b":
                self.width = 5 if not values.all() else 4
            else:
                # len(str(n)) is monotone in |n| for each sign: the extremes decide.
                self.width = max(len(str(int(values.max()))), len(str(int(values.min()))), 1)
            return

        # All decisions are made on the exact float64 widening of the stored values
        # (what torch's ``item()``/``tolist()`` and its double-typed min/max give).
        # The formatted length is monotone in |x| for each sign (fixed notation), and
        # in sci notation depends only on the sign and the exponent's digit count, whose
        # extremes sit at the largest/smallest |x| of each sign.  So four candidates
        # (largest/smallest positive, most/least negative) give the maximum width.
        if values.size <= _SMALL:
            # Pure Python is faster than a dozen NumPy calls on a handful of values.
            isfinite = math.isfinite
            nz = [v for v in values.reshape(-1).tolist() if v != 0 and isfinite(v)]
            if not nz:
                return
            pos = [v for v in nz if v > 0]
            neg = [v for v in nz if v < 0]
            amax = max(max(pos) if pos else 0.0, -min(neg) if neg else 0.0)
            amin = min(min(pos) if pos else math.inf, -max(neg) if neg else math.inf)
            ceil = math.ceil
            self.int_mode = all(v == ceil(v) for v in nz)
            cands = []
            if pos:
                cands += (max(pos), min(pos))
            if neg:
                cands += (min(neg), max(neg))
        else:
            flat = values.reshape(-1).astype(np.float64)
            nz = flat[np.isfinite(flat) & (flat != 0)]
            if nz.size == 0:
                return
            absv = np.abs(nz)
            amin = float(absv.min())
            amax = float(absv.max())
            self.int_mode = bool((nz == np.ceil(nz)).all())
            pos = nz[nz > 0]
            neg = nz[nz < 0]
            cands = []
            if pos.size:
                cands += (float(pos.max()), float(pos.min()))
            if neg.size:
                cands += (float(neg.min()), float(neg.max()))
        if sci_opt is None:
            self.sci_mode = amax / amin > 1000.0 or amax > 1.0e8 or amin < 1.0e-4
        else:
            self.sci_mode = sci_opt
        if self.sci_mode:
            spec = f".{precision}e"
            extra = 0
        elif self.int_mode:
            spec = ".0f"
            extra = 1  # room for the trailing "."
        else:
            spec = f".{precision}f"
            extra = 0
        self.width = max(1, max(len(format(c, spec)) for c in cands) + extra)

    def element_fn(self):
        """A function turning one Python scalar (from ``tolist()``) into its padded text."""
        w = self.width
        if self.kind == "f":
            if self.sci_mode:
                spec = f"{w}.{self.precision}e"
                return lambda v: format(v, spec)
            if self.int_mode:
                isfinite = math.isfinite

                def fmt_int_mode(v):
                    s = format(v, ".0f")
                    if isfinite(v):
                        s += "."
                    return s.rjust(w)

                return fmt_int_mode
            spec = f"{w}.{self.precision}f"
            return lambda v: format(v, spec)
        return lambda v: str(v).rjust(w)


# --------------------------------------------------------------------------- layout


def _vector_str(row, cut, edge, indent, width, fmt, linewidth):
    element_length = width + 2
    per_line = max(1, math.floor((linewidth - indent) / element_length))
    if cut:
        data = [fmt(v) for v in row[:edge]] + [" ..."] + [fmt(v) for v in row[edge:]]
    else:
        data = [fmt(v) for v in row]
    if len(data) <= per_line:
        return "[" + ", ".join(data) + "]"
    sep = ",\n" + " " * (indent + 1)
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + sep.join(lines) + "]"


def _nested_str(nested, depth, ndim, cuts, edge, indent, width, fmt, linewidth):
    if ndim - depth == 1:
        return _vector_str(nested, cuts[depth], edge, indent, width, fmt, linewidth)
    parts = [_nested_str(sub, depth + 1, ndim, cuts, edge, indent + 1, width, fmt, linewidth)
             for sub in nested]
    if cuts[depth]:
        parts.insert(edge, "...")
    sep = "," + "\n" * (ndim - depth - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _tensor_body(arr: np.ndarray, kind: str, indent: int) -> str:
    """The bracketed contents of a non-empty tensor (torch's ``_tensor_str``)."""
    opts = _OPTS
    ndim = arr.ndim
    summarize = arr.size > opts.threshold
    edge = opts.edgeitems

    if ndim == 0:
        f = _Formatter(kind, arr, opts.precision, opts.sci_mode)
        return f.element_fn()(arr.item())

    if summarize and not edge:
        return "[...]"

    if summarize:
        cuts = [n > 2 * edge for n in arr.shape]
        if any(cuts):
            index = tuple(
                np.r_[0:edge, n - edge:n] if c else slice(None)
                for n, c in zip(arr.shape, cuts)
            )
            # Select one dimension at a time (basic slices stay views; integer arrays copy).
            shown = arr
            for axis, ix in enumerate(index):
                if not isinstance(ix, slice):
                    shown = np.take(shown, ix, axis=axis)
        else:
            shown = arr
    else:
        cuts = [False] * ndim
        shown = arr

    f = _Formatter(kind, shown, opts.precision, opts.sci_mode)
    nested = shown.tolist()
    return _nested_str(nested, 0, ndim, cuts, edge, indent, f.width, f.element_fn(),
                       opts.linewidth)


def _add_suffixes(text: str, suffixes, indent: int, linewidth) -> str:
    parts = [text]
    # torch's bookkeeping: the last line's length plus two.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        n = len(suffix)
        if last_line_len + n + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + n
        else:
            parts.append(", " + suffix)
            last_line_len += n + 2
    parts.append(")")
    return "".join(parts)


# --------------------------------------------------------------------------- public API


def format_tensor(data: np.ndarray, dtype: str, *, grad_fn: str | None = None,
                  requires_grad: bool = False, tangent: str | None = None) -> str:
    """``repr(t)`` of the torch tensor holding ``data`` with torch dtype ``dtype``.

    ``data`` is never modified; if its NumPy dtype differs from ``dtype``'s it is
    converted (as ``torch.tensor(data, dtype=...)`` would).
    """
    name = _resolve_dtype(dtype)
    np_dtype, kind = _DTYPES[name]
    arr = np.asarray(data)
    if arr.dtype != np_dtype:
        arr = arr.astype(np_dtype)

    prefix = "tensor("
    indent = 7
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if name != _dtypes.default_float.name:
            suffixes.append("dtype=torch." + name)
        body = "[]"
    else:
        if not _OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if name not in _IMPLICIT_DTYPES and name != _dtypes.default_float.name:
            suffixes.append("dtype=torch." + name)
        body = _tensor_body(arr, kind, indent)

    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:             # a dual tensor of forward-mode AD
        suffixes.append("tangent=" + tangent)

    return _add_suffixes(prefix + body, suffixes, indent, _OPTS.linewidth)


def format_item(value, dtype: str) -> str:
    """How Python prints ``t.item()`` for a one-element tensor of ``dtype``.

    Floats are first rounded to ``dtype`` and then shown as the Python float
    (double) they widen to, e.g. ``0.10000000149011612`` for float32 ``0.1``.
    """
    name = _resolve_dtype(dtype)
    np_dtype, kind = _DTYPES[name]
    v = np.asarray(value).astype(np_dtype, copy=False).reshape(-1)
    if v.size != 1:
        raise ValueError(f"a Tensor with {v.size} elements cannot be converted to Scalar")
    return repr(v.tolist()[0])
