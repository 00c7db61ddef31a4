"""Contractions PyTorch writes as composites of other ops: ``einsum`` (ATen's einsum: diagonals,
unsqueezes and permutes, then ``sumproduct_pair``'s permute/reshape/bmm left to right), ``tensordot``
(permute, reshape, mm, reshape) and ``kron`` (reshapes, mul, view). Written with the same ops in the
same order, so their graphs (grad_fn names, double-backward chains) and float results are PyTorch's.
"""
from __future__ import annotations

import numbers

from .. import errors
from ..tensor import Tensor, _wrap_dim
from .arithmetic import mul
from .linalg import bmm, mm

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS          # the subscript standing for "..."


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(subscript: int) -> str:
    return chr(ord("A") + subscript) if subscript < _LETTERS else chr(ord("a") + subscript - _LETTERS)


def _is_label(c: str) -> bool:
    return c.isascii() and c.isalpha()


def einsum(*args):
    """torch.einsum (torch/functional.py): the equation form, the old one-list form and the sublist form."""
    if len(args) < 2:
        raise errors.ValueError("einsum(): must specify the equation string and at least one operand, "
                                "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_sublist_label(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_sublist_label(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    if not isinstance(equation, str):
        raise errors.TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                               f"{type(equation).__name__}")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise errors.TypeError(f"einsum(): argument 'tensors' (position 2) must be tuple of Tensors, "
                                   f"not {type(t).__name__}")
    return _einsum(equation, list(operands))


def _sublist_label(n) -> str:
    if n is Ellipsis:
        return "..."
    if isinstance(n, numbers.Integral) and 0 <= n < 2 * _LETTERS:
        return _label(int(n))
    raise errors.ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _parse_operands(lhs: str, num_ops: int) -> list:
    """Each operand's subscripts (``_ELLIPSIS`` for "..."), with ATen's checks and words."""
    op_labels = [[] for _ in range(num_ops)]
    current, ellipsis_seen, i = 0, False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if ellipsis_seen:
                raise errors.RuntimeError(f"einsum(): found '.' for operand {current} for which an ellipsis "
                                          "was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise errors.RuntimeError(f"einsum(): found '.' for operand {current} that is not part of "
                                          "any ellipsis")
            i += 2
            op_labels[current].append(_ELLIPSIS)
            ellipsis_seen = True
        elif c == ",":
            current += 1
            if current >= num_ops:
                raise errors.RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ellipsis_seen = False
        else:
            if not _is_label(c):
                raise errors.RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                                          "string, subscripts must be in [a-zA-Z]")
            op_labels[current].append(_subscript(c))
        i += 1
    if current != num_ops - 1:
        raise errors.RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _einsum(equation: str, operands: list):
    if not operands:
        raise errors.RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_operands(lhs, num_ops)

    label_count = [0] * (2 * _LETTERS)
    ell_num_dim = 0
    for i, (t, labels) in enumerate(zip(operands, op_labels)):
        ndim = t.dim()
        nlabels = len(labels)
        has_ellipsis = _ELLIPSIS in labels
        for s in labels:
            if s == _ELLIPSIS:
                nlabels -= 1
                ell_num_dim = max(ell_num_dim, ndim - nlabels)
            else:
                label_count[s] += 1
        if not (nlabels <= ndim if has_ellipsis else nlabels == ndim):
            raise errors.RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) "
                + ("is more than" if has_ellipsis else "does not match") + f" the number of dimensions ({ndim}) "
                f"for operand {i}" + ("" if has_ellipsis else " and no ellipsis was given"))

    # every operand is aligned to the dims: output dims, then the dims summed out
    perm_index_of = [-1] * (2 * _LETTERS)
    perm_index = ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index, ell_in_output = ell_num_dim, True
        for s in range(2 * _LETTERS):
            if label_count[s] == 1:
                perm_index_of[s] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == " ":
                pass
            elif c == ".":
                if ell_in_output:
                    raise errors.RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already "
                                              "found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise errors.RuntimeError("einsum(): found '.' for output that is not part of any ellipsis "
                                              "(...)")
                i += 2
                ell_index, ell_in_output = perm_index, True
                perm_index += ell_num_dim
            else:
                if not _is_label(c):
                    raise errors.RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in "
                                              "the equation string, subscripts must be in [a-zA-Z]")
                s = _subscript(c)
                if not (label_count[s] > 0 and perm_index_of[s] == -1):
                    why = ("appears more than once in the output" if perm_index_of[s] > -1
                           else "does not appear in the equation for any input operand")
                    raise errors.RuntimeError(f"einsum(): output subscript {c} {why}")
                perm_index_of[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(2 * _LETTERS):
        if label_count[s] > 0 and perm_index_of[s] == -1:
            perm_index_of[s] = perm_index
            perm_index += 1

    label_size = [1] * (2 * _LETTERS)
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, (op, labels) in enumerate(zip(operands, op_labels)):
        permutation = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                covered = operands[i].dim() - (len(labels) - 1)
                for j in range(ell_num_dim - covered, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == size):
                            raise errors.RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size {size} "
                                f"which does not broadcast with previously seen ellipsis with size {ell_sizes[j]} "
                                "for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_index_of[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if not (label_size[s] == 1 or label_size[s] == size):
                        raise errors.RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} which does not "
                            f"broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_index_of[s]] += 1
                permutation[perm_index_of[s]] = dim
                dim += 1
            else:       # a repeated label: its diagonal
                prev = permutation[perm_index_of[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise errors.RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the sizes don't match, "
                        f"{op.shape[dim]} != {op.shape[prev]}")
                op = op.diagonal(0, prev, dim).movedim(-1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                op = op.unsqueeze(dim)
                permutation[k] = dim
                dim += 1
        ops.append(op.permute(permutation))

    while len(ops) > 1:        # left to right, each result put first
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_dims, b_dims = [], [], []
        for dim in range(out_num_dim, perm_index):
            if a.shape[dim] != 1 and b.shape[dim] != 1:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if a.shape[dim] != 1:
                    a_dims.append(dim)
                    dim_counts[dim] = 0
                elif b.shape[dim] != 1:
                    b_dims.append(dim)
                    dim_counts[dim] = 0
        if a_dims:
            a = a.sum(a_dims, True)
        if b_dims:
            b = b.sum(b_dims, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    result = ops[0]
    if perm_index > out_num_dim:
        if num_ops > 1:
            return result.view(list(result.shape[:out_num_dim]))
        return result.sum(list(range(out_num_dim, perm_index)))
    return result


def _sumproduct_pair(left, right, sum_dims):
    """ATen's sumproduct_pair with keepdim: ``(left * right).sum(sum_dims, keepdim=True)`` of two
    operands of equal rank, as one bmm between permutes and reshapes."""
    if not sum_dims:
        return mul(left, right)
    ndim = left.dim()
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise errors.RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise errors.RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(out_size)
    for position, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = position
    left = left.permute(lperm).reshape(lro_size, lo_size, sum_size)
    right = right.permute(rperm).reshape(lro_size, sum_size, ro_size)
    return bmm(left, right).view(out_size).permute(operm)


def tensordot(a, b, dims=2, *, out=None):
    """torch.tensordot (torch/functional.py picks the dims; ATen's tensordot contracts them with one mm)."""
    if not isinstance(dims, (tuple, list, Tensor, int)) or isinstance(dims, bool):
        raise errors.RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                                  f"list[list[int]] containing two lists, but got dims={dims}")
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.shape[0] != 2:
                raise errors.AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.shape[0]}")
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            count = int(dims.item())
            if count < 0:
                raise errors.RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-count, 0)), list(range(count))
    else:
        if dims < 0:
            raise errors.RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise errors.RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    if isinstance(dims_a, int):
        dims_a = [dims_a]
    if isinstance(dims_b, int):
        dims_b = [dims_b]
    return _tensordot(a, b, list(dims_a), list(dims_b))


def _tensordot(input1, input2, dims1, dims2):
    if len(dims1) != len(dims2):
        raise errors.RuntimeError("both dimension lists should have same length")
    if input1.dtype != input2.dtype:
        raise errors.RuntimeError("both inputs should have same dtype")
    csize = 1
    t1, t2 = input1, input2
    for d1, d2 in zip(dims1, dims2):
        s1, s2 = input1.shape[d1], input2.shape[d2]
        if s2 == 1:
            t1 = t1.sum(d1, True)
        elif s1 == 1:
            t2 = t2.sum(d2, True)
        else:
            if s1 != s2:
                raise errors.RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim "
                                          f"{d1} and second has size {s2} in dim {d2}")
            csize *= s1
    contracted1 = {_wrap_dim(d, input1.dim()) for d in dims1}
    contracted2 = {_wrap_dim(d, input2.dim()) for d in dims2}
    p1, p2, sizes = [], [], []
    size1 = size2 = 1
    for i in range(input1.dim()):
        if i not in contracted1:
            p1.append(i)
            size1 *= t1.shape[i]
            sizes.append(t1.shape[i])
    p1 += dims1
    p2 += dims2
    for i in range(input2.dim()):
        if i not in contracted2:
            p2.append(i)
            size2 *= t2.shape[i]
            sizes.append(t2.shape[i])
    t1 = t1.permute(p1).reshape(size1, csize)
    t2 = t2.permute(p2).reshape(csize, size2)
    return mm(t1, t2).reshape(sizes)


def kron(input, other, *, out=None):
    """ATen's kron: ``input`` viewed with a 1 after each of its dims, ``other`` with a 1 before each,
    their product viewed back as the Kronecker product (both padded to the larger rank)."""
    from .. import ops as D
    from ..op import apply
    maxdim = max(input.dim(), other.dim())
    pad_self, pad_other = maxdim - input.dim(), maxdim - other.dim()
    a_shape, b_shape, result_shape = [], [], []
    for i in range(maxdim):
        a = input.shape[i - pad_self] if i >= pad_self else 1
        b = other.shape[i - pad_other] if i >= pad_other else 1
        a_shape += [a, 1]
        b_shape += [1, b]
        result_shape.append(a * b)
    self_view = apply(D.unsafe_view, (input,), {"shape": tuple(a_shape)})
    other_view = apply(D.unsafe_view, (other,), {"shape": tuple(b_shape)})
    return apply(D.unsafe_view, (mul(self_view, other_view),), {"shape": tuple(result_shape)})
