"""Matrix products (``matmul``'s dispatch, written as PyTorch composes it), transposes and permutes,
``det``, ``inverse``, ``trace``.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import ops as D
from .. import errors, limits
from ..op import _check_broadcast, apply
from ..tensor import _wrap_dim
from .arguments import _UNSET, _given_dim, _int_list_arg, _missing, _need_tensors, _shape_args, _varargs_method
from .shape import contiguous, expand, reshape, squeeze, unsqueeze


def _ensure_float_matmul(a, b, name):
    if a._dtype is not b._dtype:
        raise errors.RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a._dtype._cpp_name} != {b._dtype._cpp_name}")


def mm(input, mat2, *, out=None):
    _need_tensors("mm", input, mat2, "mat2")
    if input._data.ndim != 2:
        raise errors.RuntimeError(f"self must be a matrix")
    if mat2._data.ndim != 2:
        raise errors.RuntimeError(f"mat2 must be a matrix")
    a, b = input._data.shape, mat2._data.shape
    if a[1] != b[0]:
        raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")
    _ensure_float_matmul(input, mat2, "mm")
    limits.check_elements((a[0], b[1]))
    return apply(D.mm, (input, mat2))


def bmm(input, mat2, *, out=None):
    _need_tensors("bmm", input, mat2, "mat2")
    if input._data.ndim != 3:
        raise errors.RuntimeError(f"batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise errors.RuntimeError(f"batch2 must be a 3D tensor")
    a, b = input._data.shape, mat2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise errors.RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a[0]}, {a[2]}] "
                                  f"but got: [{b[0]}, {b[1]}].")
    _ensure_float_matmul(input, mat2, "bmm")
    limits.check_elements((a[0], a[1], b[2]))
    return apply(D.bmm, (input, mat2))


def mv(input, vec, *, out=None):
    _need_tensors("mv", input, vec, "vec")
    a, b = input._data.shape, vec._data.shape
    if len(a) != 2 or len(b) != 1:
        raise errors.RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a)}, {len(b)}")
    if a[1] != b[0]:
        raise errors.RuntimeError(f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec ({b[0]})")
    return apply(D.mv, (input, vec))


def dot(input, tensor, *, out=None):
    _need_tensors("dot", input, tensor, "tensor")
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise errors.RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors")
    if input._data.shape[0] != tensor._data.shape[0]:
        raise errors.RuntimeError(f"inconsistent tensor size, expected tensor [{input._data.shape[0]}] and src "
                                  f"[{tensor._data.shape[0]}] to have the same number of elements, but got "
                                  f"{input._data.shape[0]} and {tensor._data.shape[0]} elements respectively")
    if input._dtype is not tensor._dtype:
        raise errors.RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                                  f"{input._dtype._scalar_name} and {tensor._dtype._scalar_name}")
    return apply(D.dot, (input, tensor))


vdot = dot


def inner(input, other, *, out=None):
    """ATen's inner: a product with a 0-d operand, else tensordot over both last dimensions (the
    operands permuted and reshaped to a matrix product, or a dot of two vectors), reshaped back."""
    _need_tensors("inner", input, other)
    a, b = input, other
    if a._data.ndim == 0 or b._data.ndim == 0:
        return a * b
    if a._data.shape[-1] != b._data.shape[-1]:
        raise errors.RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                                  f"{list(a._data.shape)} and {list(b._data.shape)}")
    k = a._data.shape[-1]
    ta = a.permute(*range(a._data.ndim))
    tb = b.permute(b._data.ndim - 1, *range(b._data.ndim - 1))
    if a._data.ndim == 1 and b._data.ndim == 1:
        return ta.dot(tb).reshape(())
    rows, columns = a._data.shape[:-1], b._data.shape[:-1]
    product = ta.reshape(int(np.prod(rows)), k).mm(tb.reshape(k, int(np.prod(columns))))
    return product.reshape(*rows, *columns)


def matmul(input, other, *, out=None):
    """PyTorch's matmul: dot, mv, mm, a folded mm/mv, or a broadcast bmm, chosen as ATen chooses
    (which is what decides the node names of the result)."""
    _need_tensors("matmul", input, other)
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise errors.RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        if input._data.shape[0] != other._data.shape[0]:
            raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{input._data.shape[0]} and "
                                      f"{other._data.shape[0]}x{other._data.shape[1]})")
        return apply(D.squeeze_inplace_dim, (mm(unsqueeze(input, 0), other),), {"dim": 0})
    if da == 2 and db == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _matmul_folded(input, other)
    return _matmul_batched(input, other)


def _batch_contiguous(t):
    a = t._data
    return builtins.all(a.strides[i] == a.strides[i + 1] * a.shape[i + 1] for i in range(a.ndim - 2))


def _should_fold(a, b):
    """ATen's should_fold: fold the larger operand's batch into rows and use mm/mv instead of bmm."""
    larger = a if a._data.ndim >= b._data.ndim else None
    smaller = b if larger is not None else a
    ndim_big = builtins.max(a._data.ndim, b._data.ndim)
    if not (ndim_big >= 3 and smaller._data.ndim <= 2):
        return False
    if smaller._requires_grad:
        return True
    if a._data.ndim == 2:
        return False
    big = larger if larger is not None else _mT(b)
    return big._data.size == 0 or _batch_contiguous(big)


def _matmul_folded(a, b):
    transpose = b._data.ndim > a._data.ndim
    t1 = _mT(b) if transpose else a
    t2 = (t(a) if a._data.ndim == 2 else a) if transpose else b
    k = t1._data.shape[-1]
    if t2._data.shape[0] != k:
        rows = int(np.prod(t1._data.shape[:-1]))
        cols = t2._data.shape[-1] if t2._data.ndim == 2 else 1
        raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                                  f"{t2._data.shape[0]}x{cols})")
    shape = t1._data.shape[:-1]
    folded = reshape(t1, int(np.prod(shape)), k)
    if t2._data.ndim == 2:
        out = apply(D.unsafe_view, (mm(folded, t2),), {"shape": shape + (t2._data.shape[1],)})
        return contiguous(_mT(out)) if transpose else out
    return apply(D.unsafe_view, (mv(folded, t2),), {"shape": shape})


def _matmul_batched(a, b):
    da, db = a._data.ndim, b._data.ndim
    sa, sb = a._data.shape, b._data.shape
    if da == 3 and db == 3 and sa[0] != sb[0]:
        if sa[0] == 1 and a._requires_grad:
            return matmul(squeeze(a, 0), b)
        if sb[0] == 1 and b._requires_grad:
            return matmul(a, squeeze(b, 0))
    n = sa[-2] if da > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if db > 1 else sb[0]
    p = sb[-1] if db > 1 else 1
    if m1 != m2:
        raise errors.RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                                  f"[{int(np.prod(sa[:-2])) if da > 2 else 1}, {m1}] but got: "
                                  f"[{int(np.prod(sb[:-2])) if db > 2 else 1}, {m2}].")
    try:
        batch = tuple(np.broadcast_shapes(sa[:builtins.max(da - 2, 0)], sb[:builtins.max(db - 2, 0)]))
    except ValueError:
        ba, bb = sa[:builtins.max(da - 2, 0)], sb[:builtins.max(db - 2, 0)]
        k = next(i for i in range(1, builtins.min(len(ba), len(bb)) + 1)
                 if ba[-i] != bb[-i] and ba[-i] != 1 and bb[-i] != 1)
        raise errors.RuntimeError(f"The size of tensor a ({ba[-k]}) must match the size of tensor b ({bb[-k]}) at "
                                  f"non-singleton dimension {builtins.max(len(ba), len(bb)) - k}") from None
    nb = int(np.prod(batch))
    a3 = reshape(expand(a, batch + (n, m1)), nb, n, m1)
    if db == 1:
        b3 = unsqueeze(reshape(expand(b, batch + (m2,)), nb, m2), 2)
    else:
        b3 = reshape(expand(b, batch + (m2, p)), nb, m2, p)
    shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    out = bmm(a3, b3)
    if db == 1:
        out = squeeze(out, -1)
    return apply(D.unsafe_view, (out,), {"shape": shape})


def outer(input, vec2, *, out=None):
    _need_tensors("outer", input, vec2, "vec2")
    return input.reshape(input._data.shape[0], 1) * vec2


ger = outer


def _scales(beta, alpha):
    """The op's parameters for ``beta``/``alpha``: only those that are not 1 (1 multiplies nothing)."""
    return {name: v for name, v in (("beta", beta), ("alpha", alpha)) if v != 1}


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    params = _scales(beta, alpha) if beta != 1 or alpha != 1 else {}
    a, b = mat1._data.shape, mat2._data.shape
    if len(a) != 2 or len(b) != 2:
        name, m = ("mat1", mat1) if len(a) != 2 else ("mat2", mat2)
        raise errors.RuntimeError(f"{name} must be a matrix, got {m._data.ndim}-D tensor")
    if a[1] != b[0]:
        raise errors.RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")
    if input._data.shape in ((b[1],), (a[0], b[1])):      # a bias row (Linear's) or a whole matrix
        limits.check_elements((a[0], b[1]))
    else:
        _check_broadcast([input._data, np.empty((a[0], b[1]), dtype=np.bool_)])
    return apply(D.addmm, (input, mat1, mat2), params)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``torch.baddbmm``: ``beta * input + alpha * (batch1 @ batch2)``, input broadcast to the product."""
    params = _scales(beta, alpha)
    for name, m in (("batch1", batch1), ("batch2", batch2)):
        if m._data.ndim != 3:
            raise errors.RuntimeError(f"{name} must be a 3D tensor")
    a, b = batch1._data.shape, batch2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise errors.RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a[0]}, {a[2]}] "
                                  f"but got: [{b[0]}, {b[1]}].")
    _check_broadcast([input._data, np.empty((a[0], a[1], b[2]), dtype=np.bool_)])
    limits.check_elements((a[0], a[1], b[2]))
    return apply(D.baddbmm, (input, batch1, batch2), params)


def t(input):
    if input._data.ndim > 2:
        raise errors.RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return apply(D.t, (input,))


def transpose(input, dim0, dim1):
    n = input._data.ndim
    return apply(D.transpose, (input,), {"dim0": _given_dim(dim0, n), "dim1": _given_dim(dim1, n)})


swapaxes = swapdims = transpose


def permute(input, dims=_UNSET, *extra):
    if extra:
        raise errors.TypeError(f"permute() takes 2 positional arguments but {2 + len(extra)} were given")
    if dims is _UNSET:
        raise _missing("permute", "dims")
    dims = _int_list_arg(dims, "permute", "dims", 2)
    n = input._data.ndim
    if len(dims) != n:
        raise errors.RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                                  f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
                                  f"to len(dims) = {len(dims)}")
    if len({_wrap_dim(d, n) for d in dims}) != n:
        raise errors.RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(D.permute, (input,), {"dims": tuple(int(d) for d in dims)})     # as given (the node shows them so)


_permute_method = _varargs_method("permute", "dims", permute)     # Tensor.permute


def movedim(input, source, destination):
    n = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(d, n) for d in dst]
    if n == 0:
        return apply(D.alias, (input,))         # as ATen: a 0-d tensor's dims go nowhere
    rest = [i for i in range(n) if i not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return permute(input, perm)


def det(A, *, out=None):
    _square(A, "linalg.det")
    return apply(D.det, (A,))


def inverse(A, *, out=None):
    _square(A, "linalg.inv")
    return apply(D.inverse, (A,))


def _square(A, name):
    s = A._data.shape
    if len(s) < 2:
        raise errors.RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if s[-1] != s[-2]:
        raise errors.RuntimeError(f"{name}: A must be batches of square matrices, but they are {s[-2] if len(s) > 1 else 1} by {s[-1] if s else 1} matrices")


def trace(input):
    if input._data.ndim != 2:
        raise errors.RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input._data.ndim))
    return apply(D.trace, (input,))


def _T(self):
    n = self._data.ndim
    return permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    if self._data.ndim == 0:
        return self                             # PyTorch's mT of a 0-d tensor is the tensor itself
    if self._data.ndim < 2:
        raise errors.RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                                  f"{self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """``torch.cdist`` (Python in PyTorch: the mode's name to ATen's number) and ATen's composite ``cdist``:
    the p-norm distance of every row of ``x1`` to every row of ``x2``, batched. For p = 2 with the matrix
    product asked for (or either side over 25 rows) it is ``_euclidean_dist`` (EuclideanDistBackward0)
    under views of the broadcast inputs, else ``_cdist_forward`` (CdistBackward0)."""
    if compute_mode not in _CDIST_MODES:
        raise errors.ValueError(f"{compute_mode} is not a valid value for compute_mode")
    _need_tensors("cdist", x1, x2, "x2")
    mode = _CDIST_MODES[compute_mode]
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.ndim < 2:
            raise errors.RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t._data.ndim}D")
    c1, c2 = x1._data.shape[-1], x2._data.shape[-1]
    if c1 != c2:
        raise errors.RuntimeError(f"X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t._dtype.is_floating_point:
            raise errors.RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {t._dtype._scalar_name}")
    p = float(p)
    if not p >= 0:
        raise errors.RuntimeError("cdist only supports non-negative p values")
    _check_broadcast([np.empty(x1._data.shape[:-2], np.int8), np.empty(x2._data.shape[:-2], np.int8)])
    if x1._dtype is not x2._dtype:
        raise errors.RuntimeError(f"expected scalar type {x1._dtype._scalar_name} but found {x2._dtype._scalar_name}")
    r1, r2 = x1._data.shape[-2], x2._data.shape[-2]
    batch = np.broadcast_shapes(x1._data.shape[:-2], x2._data.shape[:-2])
    euclid = p == 2 and (mode == 1 or (mode is None and (r1 > 25 or r2 > 25)))
    if not euclid or x1._data.size == 0 or x2._data.size == 0 or c1 == 0:
        return apply(D.cdist_forward, (x1, x2), {"p": p, "compute_mode": mode})
    out_shape = batch + (r1, r2)
    n = int(np.prod(batch, dtype=np.int64))
    if n == 1:
        return apply(D.euclidean_dist, (x1, x2)).view(out_shape)

    def flat(t, rows):
        t = expand(t, batch + (rows, c1))
        return contiguous(t).view(n, rows, c1)
    return apply(D.euclidean_dist, (flat(x1, r1), flat(x2, r2))).view(out_shape)


# ------------------------------------------------------------------ torch.linalg's compositions of products
def linalg_multi_dot(tensors, *, out=None):
    """ATen's multi_dot: a first (last) vector as a row (column), the product of two or three by mm in the
    cheaper order, of more in the order of the matrix-chain dynamic programme; the result viewed to the
    output's shape (ViewBackward0)."""
    n = len(tensors)
    if n < 2:
        raise errors.RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    out_shape = []
    if first._data.ndim not in (1, 2):
        raise errors.RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first._data.ndim}D")
    if last._data.ndim not in (1, 2):
        raise errors.RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last._data.ndim}D")
    matrices = list(tensors)
    if first._data.ndim == 1:
        matrices[0] = unsqueeze(first, 0)
    else:
        out_shape.append(first._data.shape[0])
    if last._data.ndim == 1:
        matrices[-1] = unsqueeze(last, -1)
    else:
        out_shape.append(last._data.shape[1])
    for i in range(1, n - 1):
        if tensors[i]._data.ndim != 2:
            raise errors.RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i]._data.ndim}D")
    for i in range(1, n):
        if matrices[i]._dtype is not matrices[0]._dtype:
            raise errors.RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                                      f"{matrices[0]._dtype} and tensor {i} {matrices[i]._dtype}")
        if matrices[i - 1]._data.shape[1] != matrices[i]._data.shape[0]:
            shapes = (list(tensors[i - 1]._data.shape), list(tensors[i]._data.shape))
            raise errors.RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {shapes[0]} and {shapes[1]} "
                                      "cannot be multiplied")
    if n == 2:
        result = mm(*matrices)
    elif n == 3:
        a, b = matrices[0]._data.shape[0], matrices[1]._data.shape[0]
        c, d = matrices[2]._data.shape
        if a * c * (b + d) < b * d * (a + c):
            result = mm(mm(matrices[0], matrices[1]), matrices[2])
        else:
            result = mm(matrices[0], mm(matrices[1], matrices[2]))
    else:
        result = _chain_product(matrices, _chain_order(matrices), 0, n - 1)
    from .shape import view
    return view(result, out_shape)


def _chain_order(matrices):
    """ATen's matrix_chain_order: for each span, the split with the fewest multiplications (the first of
    equal ones)."""
    n = len(matrices)
    sizes = [m._data.shape[0] for m in matrices] + [matrices[-1]._data.shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_product(matrices, split, i, j):
    if i == j:
        return matrices[i]
    return mm(_chain_product(matrices, split, i, split[i][j]), _chain_product(matrices, split, split[i][j] + 1, j))


def linalg_vecdot(x, y, *, dim=-1, out=None):
    """ATen's linalg_vecdot for real tensors: (x * y).sum(dim)."""
    if x._dtype.category != 2:
        raise errors.RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                                  f"{x._dtype._scalar_name}")
    if x._dtype is not y._dtype:
        raise errors.RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                                  f"{x._dtype._scalar_name} and y of type {y._dtype._scalar_name} instead")
    from .arguments import _torch
    return _torch("sum")(x * y, dim)


def linalg_vander(x, *, N=None):
    """ATen's linalg_vander: a column of ones, then the cumulative products of x repeated N - 1 times (a 0-d
    x has no size to take N from; with N given, it is read as one element)."""
    if x._data.ndim == 0:
        if N is None:
            raise errors.RuntimeError("N must be greater than 1.")
        x = unsqueeze(x, 0)
    n = x._data.shape[-1] if N is None else N
    if n <= 1:
        raise errors.RuntimeError("N must be greater than 1.")
    from .reductions import cumprod
    from .shape import cat
    powers = cumprod(expand(unsqueeze(x, -1), *x._data.shape, n - 1), -1)
    return cat([powers.new_ones(tuple(x._data.shape) + (1,)), powers], -1)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from .shape import diagonal
    return diagonal(A, offset, dim1, dim2)
