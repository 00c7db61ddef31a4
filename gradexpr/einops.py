"""``torch.func.rearrange`` (functorch.einops): einops' ``rearrange`` patterns, parsed and checked as
functorch/einops/_parsing.py does (its messages), computed as a reshape into the left side's
elementary axes, a permutation into the right side's order and a reshape into its groups. (PyTorch
runs it through first-class dimensions; the values are the same.)"""
from __future__ import annotations

import keyword

from . import errors
from . import functions as T

__all__ = ["rearrange"]

_ELLIPSIS = "…"


class _Anonymous:
    """An unnamed axis ``1`` of a pattern (each is its own axis)."""

    def __init__(self, value):
        self.value = int(value)
        if self.value < 1:
            raise errors.ValueError(f"Anonymous axis should have positive length, not {self.value}")

    def __repr__(self):
        return f"{self.value}-axis"


class _Parsed:
    def __init__(self, expression):
        self.has_ellipsis = False
        self.has_ellipsis_parenthesized = None
        self.identifiers = set()
        self.has_non_unitary_anonymous_axes = False
        self.composition = []
        if "." in expression:
            if "..." not in expression:
                raise errors.ValueError("Expression may contain dots only inside ellipsis (...)")
            if expression.count("...") != 1 or expression.count(".") != 3:
                raise errors.ValueError("Expression may contain dots only inside ellipsis (...); only one ellipsis "
                                        "for tensor ")
            expression = expression.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group = None

        def add(x):
            if x in self.identifiers:
                raise errors.ValueError(f"Indexing expression contains duplicate dimension '{x}'")
            if x == _ELLIPSIS:
                self.identifiers.add(_ELLIPSIS)
                if group is None:
                    self.composition.append(_ELLIPSIS)
                    self.has_ellipsis_parenthesized = False
                else:
                    group.append(_ELLIPSIS)
                    self.has_ellipsis_parenthesized = True
                return
            is_number = x.isdecimal()
            if is_number and int(x) == 1:
                if group is None:
                    self.composition.append([])
                return
            ok, reason = _check_axis_name(x)
            if not (is_number or ok):
                raise errors.ValueError(f"Invalid axis identifier: {x}\n{reason}")
            name = _Anonymous(x) if is_number else x
            self.identifiers.add(name)
            if is_number:
                self.has_non_unitary_anonymous_axes = True
            if group is None:
                self.composition.append([name])
            else:
                group.append(name)

        current = None
        for char in expression:
            if char in "() ":
                if current is not None:
                    add(current)
                current = None
                if char == "(":
                    if group is not None:
                        raise errors.ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
                    group = []
                elif char == ")":
                    if group is None:
                        raise errors.ValueError("Brackets are not balanced")
                    self.composition.append(group)
                    group = None
            elif char.isalnum() or char in ("_", _ELLIPSIS):
                current = char if current is None else current + char
            else:
                raise errors.ValueError(f"Unknown character '{char}'")
        if group is not None:
            raise errors.ValueError(f"Imbalanced parentheses in expression: '{expression}'")
        if current is not None:
            add(current)


def _check_axis_name(name):
    if not name.isidentifier():
        return False, "not a valid python identifier"
    if name[0] == "_" or name[-1] == "_":
        return False, "axis name should should not start or end with underscore"
    if keyword.iskeyword(name):
        from .warn import warn
        warn(f"It is discouraged to use axes names that are keywords: {name}", RuntimeWarning)
    return True, ""


def _parse(pattern, axes_lengths):
    parts = pattern.split("->")
    if len(parts) != 2:
        raise errors.ValueError("Pattern must contain a single '->' separator")
    left, right = _Parsed(parts[0]), _Parsed(parts[1])
    if not left.has_ellipsis and right.has_ellipsis:
        raise errors.ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.has_ellipsis_parenthesized:
        raise errors.ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise errors.TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.has_non_unitary_anonymous_axes or right.has_non_unitary_anonymous_axes:
        raise errors.ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise errors.ValueError(f"Identifiers only on one side of rearrange expression (should be on both): "
                                f"{difference}")
    unmatched = axes_lengths.keys() - left.identifiers
    if unmatched:
        raise errors.ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    return left, right


class DimensionBindError(errors.GxError):
    """functorch.dim's error when a pattern's sizes cannot bind (an Exception, not a ValueError)."""
    kind = "functorch.dim.DimensionBindError"
    __module__ = "functorch.dim"          # (print(type(e)) shows <class 'functorch.dim.DimensionBindError'>)


def _check_pack(item, size, known, unknown, axes_lengths, first):
    """functorch.dim's checks of a parenthesized group against its tensor dim (its first-class dims are
    named d0, d1, … in the order of the left side's axes)."""
    names = [f"d{first + k}" for k in range(len(item))]
    if len(unknown) > 1:
        a, b = (names[item.index(u)] for u in unknown[:2])
        raise DimensionBindError(f"cannot infer the sizes of two dimensions at once {a} and {b}")
    if not unknown and known != size:
        raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when matching dimension pack "
                                 f"({', '.join(names)})")
    if unknown and (known == 0 or size % known):
        sizes = tuple(axes_lengths[a] if a in axes_lengths else "?" for a in item)
        raise DimensionBindError(f"inferred dimension does not evenly fit into larger dimension: {size} vs {sizes}")


def rearrange(tensor, pattern, **axes_lengths):
    if not isinstance(tensor, T.Tensor):
        tensor = T.stack(tensor)
    left, right = _parse(pattern, axes_lengths)
    ndim = tensor.dim()
    if left.has_ellipsis:
        n_ellipsis = ndim - (len(left.composition) - 1)
        n_anon = sum(1 for d in left.composition if not d)
        pattern_ndim = n_anon + len(left.identifiers) - 1
        if pattern_ndim > ndim:
            raise errors.ValueError(f"Number of dimensions in pattern ({pattern_ndim}) must be less than or equal to "
                                    f"the number of dimensions in the tensor ({ndim})")
    else:
        n_ellipsis = 0
        if len(left.composition) != ndim:
            raise errors.ValueError(f"Number of dimensions in pattern ({len(left.composition)}) must be equal to the "
                                    f"number of dimensions in the tensor ({ndim})")
    # the left side's elementary axes and their sizes
    axes, sizes, squeezed = [], [], []
    dim = 0
    for item in left.composition:
        if item == _ELLIPSIS:
            for j in range(n_ellipsis):
                axes.append((_ELLIPSIS, j))
                sizes.append(tensor.size(dim))
                dim += 1
            continue
        size = tensor.size(dim)
        dim += 1
        if not item:                                  # "1": an axis of size one, dropped
            squeezed.append(len(axes))
            axes.append(object())
            sizes.append(size)
            continue
        known = 1
        unknown = [a for a in item if a not in axes_lengths]
        for a in item:
            if a in axes_lengths:
                known *= axes_lengths[a]
        _check_pack(item, size, known, unknown, axes_lengths, len(axes))
        for a in item:
            axes.append(a)
            sizes.append(axes_lengths[a] if a in axes_lengths else size // known)
    t = tensor.reshape(sizes)
    if squeezed:
        t = t.sum(squeezed, keepdim=False) if any(sizes[k] != 1 for k in squeezed) else t.squeeze(squeezed)
        keep = [k for k in range(len(axes)) if k not in squeezed]
        axes, sizes = [axes[k] for k in keep], [sizes[k] for k in keep]
    position = {a: k for k, a in enumerate(axes)}
    order, shape = [], []
    for item in right.composition:
        if item == _ELLIPSIS:
            for j in range(n_ellipsis):
                order.append(position[(_ELLIPSIS, j)])
                shape.append(sizes[position[(_ELLIPSIS, j)]])
            continue
        group = 1
        for a in item:
            for e in ([(_ELLIPSIS, j) for j in range(n_ellipsis)] if a == _ELLIPSIS else [a]):
                order.append(position[e])
                group *= sizes[position[e]]
        shape.append(group)
    return t.permute(order).reshape(shape)
