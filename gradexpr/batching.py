"""``vmap``'s batched tensors and the batch rules that run an op once over a whole batch.

A ``BatchedTensor`` is what a function under ``vmap`` sees: a tensor of the *logical* shape (one
sample) standing for a *physical* tensor with one more dimension, the batch dimension ``bdim``, at
a vmap ``level`` (nested vmaps wrap wrappers, the innermost level outermost). Its ``_data`` is a
view of sample 0, so shapes, dtypes and the composites that read them see one sample; computation
never reads it: ``apply`` hands any op with a batched input to ``dispatch``, which runs the op's
batch rule on the physical tensors (``apply`` again, so a graph of the physical tensors is recorded
when they require grad, as for ``grad(vmap(f))``) and wraps the result. When a logical input
requires grad (``vmap(grad(f))``: grad's inputs are created inside vmap), the op's node is recorded
on the logical tensors too, so its backward formulas run batched again, as functorch's do.

The rule of an entry is its ``batch=`` declaration in the op table (``registry.batch_rules``);
elementwise entries need none (their tangent is ``element_wise`` or they broadcast). An entry
without a rule is mapped sample by sample (PyTorch's slow fallback), so every op is correct.
"""
from __future__ import annotations

import contextlib

import numpy as np

from . import errors, ops
from .forward_ad import ACTIVE as _DUAL_LEVELS, propagate as _propagate_tangent
from .zero_tensor import LIVE as _ZEROS
from .graph import INFERENCE as _INFERENCE, SavedTensor, _grad_enabled
from .inplace_engine import apply_inplace
from .op import _link_view, _record, apply, wrap
from .tensor import Tensor, _fresh, _new_object

from .grad_mode import VMAP_LEVELS as LEVELS     # [level, batch size, randomness] of each running vmap
_state = {"next": 0}


class BatchedTensor(Tensor):
    __slots__ = ("_phys", "_bdim", "_level")

    def _detached_alias(self):
        return batched(self._phys.detach(), self._bdim, self._level, self._version_counter)

    def _detached_copy(self):
        return batched(self._phys._detached_copy(), self._bdim, self._level)

    def _with_grad_fn(self, node):
        t = batched(self._phys, self._bdim, self._level, self._version_counter)
        t._requires_grad = True
        t._grad_fn = node
        t._base = self._base
        t._view_meta = self._view_meta
        return t

    def __repr__(self):
        inner = repr(self._phys).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n    {inner}\n)"

    __str__ = __repr__

    def item(self):
        raise errors.RuntimeError(_ITEM)

    tolist = __float__ = __int__ = __index__ = item

    def __bool__(self):
        raise errors.RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                                  "control flow. We don't support that yet, please file an issue at "
                                  "https://github.com/pytorch/pytorch/issues .")

    def numpy(self, force=False):
        raise errors.RuntimeError(_ITEM)


_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
         "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
         "inside PyTorch internals, please file a bug report.")


def batched(phys: Tensor, bdim: int, level: int, version_counter=None) -> BatchedTensor:
    """The logical tensor of ``phys`` batched along ``bdim`` at ``level``."""
    data = phys._data
    if data.shape[bdim]:
        # (an array, also for a 0-d sample: a view of phys, which in-place changes and view geometry rely on)
        sample = data[0, ...] if bdim == 0 else data[(slice(None),) * bdim + (0, Ellipsis)]
    else:
        sample = np.zeros(data.shape[:bdim] + data.shape[bdim + 1:], data.dtype)
    t = _new_object(BatchedTensor)
    t._data = sample
    t._dtype = phys._dtype
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._version_counter = [0] if version_counter is None else version_counter
    t._base = None
    t._view_meta = None
    t._wrapped = False
    t._acc = None
    t._leaf_hooks = None
    t._name = None
    t._phys = phys
    t._bdim = bdim
    t._level = level
    return t


def level_of(args) -> int:
    """The innermost vmap level among ``args`` (-1: none is batched)."""
    lv = -1
    for a in args:
        if type(a) is BatchedTensor and a._level > lv:
            lv = a._level
    return lv


def _size(level):
    for lv, size, _ in LEVELS:
        if lv == level:
            return size
    raise errors.RuntimeError("vmap: a BatchedTensor escaped the vmap that created it")


def levels(t) -> set:
    """The vmap levels ``t`` is batched at."""
    found = set()
    while type(t) is BatchedTensor:
        found.add(t._level)
        t = t._phys
    return found


def made_like(t, like):
    """A new tensor ``t`` (zeros_like's, new_zeros') made from a batched ``like``: batched as ``like`` (a
    physical tensor of its own per level, as functorch's batch rules for the factories make it), so that
    per-sample values can be written into it."""
    wanted = levels(like)
    return with_levels(t, wanted).clone() if wanted else t


def on_physical(t, fn):
    """``fn`` of the plain physical tensor under a batched ``t`` with every batch dimension in front (the
    logical dims last, as a kernel run on the physical rows sees them), its result batched back at ``t``'s
    levels along dim 0."""
    if type(t) is not BatchedTensor:
        return fn(t)
    return batched(on_physical(_front(t._phys, t._bdim), fn), 0, t._level)


def records_physically(ts) -> bool:
    """Whether a physical tensor beneath one of the batched ``ts`` requires grad: the physical ops then
    record (grad of vmap), and an in-place op must keep the old value its formulas read."""
    for t in ts:
        while type(t) is BatchedTensor:
            t = t._phys
            if t._requires_grad:
                return True
    return False


def with_levels(t, wanted: set):
    """``t`` batched at every level of ``wanted`` too, expanded along the ones it was not batched at:
    functorch's ``_make_dual`` batch rule gives a tangent the batch dimensions of its primal, so that
    per-sample values can later be written into it in place (``y[1:] = x[1:] * x[0]`` under
    ``vmap(jacfwd(f))``)."""
    if not wanted:
        return t
    top = max(wanted)
    rest = wanted - {top}
    if type(t) is BatchedTensor and t._level >= top:
        return batched(with_levels(t._phys, wanted - {t._level}), t._bdim, t._level)
    return batched(_expanded(with_levels(t, rest), _size(top)), 0, top)


# ---------------------------------------------------------------- physical helpers
def _apply(entry_name, args, params=None):
    return apply(ops.TABLE[entry_name], tuple(args), params or {})


def _unwrap(a, level):
    """(physical tensor, bdim) of ``a`` at ``level``; (a, None) when ``a`` is not batched there."""
    if type(a) is BatchedTensor and a._level == level:
        return a._phys, a._bdim
    return a, None


def _front(phys, bdim):
    """``phys`` with its batch dimension first."""
    if bdim == 0:
        return phys
    n = phys._data.ndim
    return _apply("permute", (phys,), {"dims": (bdim,) + tuple(d for d in range(n) if d != bdim)})


def _view(phys, shape):
    """``phys.view(shape)``, a rule's intermediate (read by the next physical op, or the shape of a fresh
    result). A plain tensor (not an outer vmap's batched one) without history, outside forward AD and
    inference mode, has nothing for the view op to record: its array is reshaped directly (the view's
    memory and version counter are phys's)."""
    if type(phys) is not Tensor or phys._requires_grad or _DUAL_LEVELS or _INFERENCE or _ZEROS:
        return _apply("view", (phys,), {"shape": tuple(shape)})
    data = phys._data.view().reshape(shape)
    if data.ndim > 1 and not data.flags.c_contiguous:       # a strided view: the op notes its layout
        return _apply("view", (phys,), {"shape": tuple(shape)})
    return _fresh(data, phys._dtype, phys._version_counter)


def _fronted(args, level):
    """Each argument's physical tensor with the batch first, and which ones were batched."""
    out, flags = [], []
    for a in args:
        p, b = _unwrap(a, level)
        out.append(p if b is None else _front(p, b))
        flags.append(b is not None)
    return out, flags


def _expanded(p, size):
    """An unbatched tensor given a batch dimension of ``size`` (first)."""
    shape = tuple(p._data.shape)
    return _apply("expand", (_view(p, (1,) + shape),), {"shape": (size,) + shape})


# ---------------------------------------------------------------- rules: (op, args, params, level) -> (phys, bdim)
def _elementwise(op, args, params, level):
    """Batched inputs move their batch first and get the broadcast's missing dimensions after it;
    unbatched ones broadcast as they are (NumPy aligns trailing dimensions). A unary op keeps the
    batch dimension where it is, as PyTorch's unary batch rule does (what a print or an in-place
    sampler then sees)."""
    if len(args) == 1:
        p, b = _unwrap(args[0], level)
        return _call(op, [p], params), b
    ndim = max(a._data.ndim for a in args if isinstance(a, Tensor))
    return _call(op, _broadcast_physical(args, level, ndim), params), 0


def _broadcast_physical(args, level, ndim):
    """The physical tensors of ``args`` for an elementwise op over samples of ``ndim`` dims: batched
    ones with the batch first and the broadcast's missing dims after it, unbatched ones as they are."""
    phys = []
    for a in args:
        p, b = _unwrap(a, level)
        if b is not None:
            p = _front(p, b)
            missing = ndim - a._data.ndim
            if missing:
                p = _view(p, p._data.shape[:1] + (1,) * missing + p._data.shape[1:])
        phys.append(p)
    return phys


def _fill_value_rule(op, args, params, level):
    """``t.fill_(value)`` with a 0-d tensor value: the value copied over each sample (CopyBackwards on the
    physical tensors: its gradient sums over each sample's elements, where FillBackward3's ``grad.sum()``
    would sum over the whole batch)."""
    return _elementwise(ops.TABLE["copy"], args, params, level)


_DIM_KEYS = frozenset(("dim", "dims", "dim0", "dim1", "dim2", "dimension"))


def _shift(value, ndim):
    if isinstance(value, (tuple, list)):
        return type(value)(_shift(v, ndim) for v in value)
    return value % max(ndim, 1) + 1 if ndim else 1


def _dims_rule(new_dim=False, reduce=False):
    def rule(op, args, params, level):
        phys, flags = _fronted(args, level)
        if not op.variadic and any(flags[1:]):
            return _loop(op, args, params, level)
        logical = args[0]._data.ndim + (1 if new_dim else 0)
        if op.variadic:
            size = _size(level)
            phys = [p if f else _expanded(p, size) for p, f in zip(phys, flags)]
        params = {k: (_shift(v, logical) if k in _DIM_KEYS and v is not None else v) for k, v in params.items()}
        if reduce and params.get("dim") in (None, ()):
            params["dim"] = tuple(range(1, logical + 1))
        return _call(op, phys, params), 0
    return rule


def _reduce_all(target):
    """A reduction of every element: the entry ``target`` over every dimension but the batch's."""
    def rule(op, args, params, level):
        p, b = _unwrap(args[0], level)
        p = _front(p, b)
        flat = _view(p, (p._data.shape[0], -1))
        return _call(ops.TABLE[target], [flat], {**params, "dim": 1, "keepdim": False}), 0
    return rule


def _permute_rule(op, args, params, level):
    p, b = _unwrap(args[0], level)
    dims = params["dims"]
    return _call(op, [_front(p, b)], {**params, "dims": (0,) + tuple(_shift(dims, len(dims)))}), 0


def _arg_rule(op, args, params, level):
    """argmax/argmin: over a dim as the reductions, else over each sample's flattened elements."""
    if params.get("dim") is not None:
        return RULES["dims"](op, args, params, level)
    return _reduce_all(op.name)(op, args, params, level)


def _loss_rule(op, args, params, level):
    """A loss: the unreduced loss elementwise, then each sample's mean or sum."""
    reduction = params.get("reduction", "mean")
    phys, bdim = _elementwise(op, args, {**params, "reduction": "none"}, level)
    if reduction == "none":
        return phys, bdim
    dims = tuple(range(1, phys._data.ndim))
    if not dims:
        return phys, bdim
    return _apply("mean_dim" if reduction == "mean" else "sum_dim", (phys,), {"dim": dims, "keepdim": False}), 0


def _shape_rule(op, args, params, level):
    """view/expand/reshape: the batch's size before the shape asked for."""
    p, b = _unwrap(args[0], level)
    p = _front(p, b)
    shape = tuple(params["shape"])
    if op.name == "expand" and len(shape) > args[0]._data.ndim:      # expand adds leading dims: after the batch
        extra = len(shape) - args[0]._data.ndim
        p = _view(p, p._data.shape[:1] + (1,) * extra + p._data.shape[1:])
    return _call(op, [p], {**params, "shape": (p._data.shape[0],) + shape}), 0


def _repeat_rule(op, args, params, level):
    p, b = _unwrap(args[0], level)
    p = _front(p, b)
    repeats = tuple(params["repeats"])
    extra = len(repeats) - args[0]._data.ndim
    if extra > 0:
        p = _view(p, p._data.shape[:1] + (1,) * extra + p._data.shape[1:])
    return _call(op, [p], {**params, "repeats": (1,) + repeats}), 0


def _index_rule(op, args, params, level):
    """Basic indexing: every sample indexed the same way (a full slice first for the batch)."""
    p, b = _unwrap(args[0], level)
    index = params["index"]
    index = index if isinstance(index, tuple) else (index,)
    return _call(op, [_front(p, b)], {**params, "index": (slice(None),) + index}), 0


def _t_rule(op, args, params, level):
    p, b = _unwrap(args[0], level)
    p = _front(p, b)
    if p._data.ndim < 3:
        return p, 0
    return _apply("transpose", (p,), {"dim0": 1, "dim1": 2}), 0


def _squeeze_rule(op, args, params, level):
    p, b = _unwrap(args[0], level)
    p = _front(p, b)
    dims = tuple(i + 1 for i, s in enumerate(args[0]._data.shape) if s == 1)
    if not dims:
        return p, 0
    return _apply("squeeze_dims", (p,), {"dims": dims}), 0


# ---------------------------------------------------------------- matrix products
def _mm_phys(a, b, level):
    """(phys, bdim) of the matrix product of logical matrices ``a`` (n, k) and ``b`` (k, m)."""
    pa, ba = _unwrap(a, level)
    pb, bb = _unwrap(b, level)
    if ba is not None and bb is not None:
        return _apply("bmm", (_front(pa, ba), _front(pb, bb))), 0
    if ba is not None:
        pa = _front(pa, ba)
        size, n, k = pa._data.shape
        r = _apply("mm", (_view(pa, (size * n, k)), pb))
        return _view(r, (size, n, r._data.shape[1])), 0
    # only the right operand batched: functorch's matmul of a matrix with a batch is a bmm of the matrix
    # expanded. Small matrices as that bmm (ATen's own loop sums each entry from +0: a product of -0
    # and 0 gives +0, as PyTorch's); larger ones, where ATen calls gemm matrix by matrix, as one gemm
    pb = _front(pb, bb)
    size, k, m = pb._data.shape
    n = pa._data.shape[0]
    if n * k * m < 400:
        return _apply("bmm", (_expanded(pa, size), pb)), 0
    flat = _view(_apply("permute", (pb,), {"dims": (1, 0, 2)}), (k, size * m))
    r = _apply("mm", (pa, flat))
    return _view(r, (r._data.shape[0], size, m)), 1


def _mm_rule(op, args, params, level):
    return _mm_phys(args[0], args[1], level)


def _as_matrix(a, level, column):
    """A logical vector as a logical (k, 1) or (1, k) matrix (batched as it was)."""
    p, b = _unwrap(a, level)
    if b is None:
        return _view(p, (-1, 1) if column else (1, -1))
    p = _front(p, b)
    return batched(_view(p, (p._data.shape[0], -1, 1) if column else (p._data.shape[0], 1, -1)), 0, level)


def _mv_rule(op, args, params, level):
    phys, bdim = _mm_phys(args[0], _as_matrix(args[1], level, True), level)
    return _apply("squeeze_dim", (phys,), {"dim": phys._data.ndim - 1}), bdim


def _dot_rule(op, args, params, level):
    phys, bdim = _mm_phys(_as_matrix(args[0], level, False), _as_matrix(args[1], level, True), level)
    n = phys._data.ndim
    return _apply("squeeze_dims", (phys,), {"dims": tuple(d for d in range(n) if d != bdim)}), 0


def _bmm_rule(op, args, params, level):
    size = _size(level)
    phys, flags = _fronted(args, level)
    phys = [p if f else _expanded(p, size) for p, f in zip(phys, flags)]
    a, b = phys
    _, n_b, n, k = a._data.shape
    m = b._data.shape[3]
    r = _apply("bmm", (_view(a, (size * n_b, n, k)), _view(b, (size * n_b, k, m))))
    return _view(r, (size, n_b, n, m)), 0


def _addmm_rule(op, args, params, level):
    bias, m1, m2 = args
    prod = batched(*_mm_phys(m1, m2, level), level)
    alpha, beta = params.get("alpha", 1), params.get("beta", 1)
    if alpha != 1:
        prod = batched(_elementwise(ops.TABLE["mul"], (prod, alpha), {}, level)[0], 0, level)
    if beta != 1:
        bias = _apply("mul", (bias, beta)) if level_of((bias,)) != level else \
            batched(_elementwise(ops.TABLE["mul"], (bias, beta), {}, level)[0], 0, level)
    return _elementwise(ops.TABLE["add"], (bias, prod), {}, level)


# ---------------------------------------------------------------- convolutions (functorch's batch rules)
def _conv_batch(level, x, w, bias, params, run):
    """A convolution-shaped call under vmap: a batch of inputs against one weight is one bigger batch
    of N·B samples; a batch of weights is a grouped convolution, the batch in the channels (B·groups
    groups). ``run(x, w, bias, params, merged)`` makes the physical call; ``merged`` tells which shape
    it got. Returns the result's physical tensor with its batch dimension first."""
    size = _size(level)
    (px, bx), (pw, bw) = _unwrap(x, level), _unwrap(w, level)
    pb, bb = _unwrap(bias, level) if bias is not None else (None, None)
    if bw is None and bb is None:
        px = _front(px, bx)
        out = run(px.reshape((-1,) + tuple(px._data.shape[2:])), pw, pb, params, "samples")
        return out.reshape((size, -1) + tuple(out._data.shape[1:]))
    px = _front(px, bx) if bx is not None else _expanded(px, size)         # B, N, C, *
    pw = _front(pw, bw) if bw is not None else _expanded(pw, size)         # B, O, C/g, *k
    n = px._data.shape[1]
    px = px.movedim(0, 1).reshape((n, -1) + tuple(px._data.shape[3:]))
    pw = pw.reshape((-1,) + tuple(pw._data.shape[2:]))
    if pb is not None:
        pb = (_front(pb, bb) if bb is not None else _expanded(pb, size)).reshape(-1)
    out = run(px, pw, pb, {**params, "groups": params.get("groups", 1) * size}, "groups")
    if out._data.shape[0] == n and out._data.ndim == px._data.ndim:          # N, B·O, *: the batch after N
        return out.reshape((n, size, -1) + tuple(out._data.shape[2:])).movedim(1, 0)
    return out.reshape((size, -1) + tuple(out._data.shape[1:]))              # B·O, C/g, *k: a weight


def _conv_rule(op, args, params, level):
    if args[0]._data.ndim != args[1]._data.ndim:            # an unbatched convolution's (C, *) input
        return _loop(op, args, params, level)

    def run(x, w, bias, params, merged):
        return _call(op, [x, w] + ([bias] if bias is not None else []), params)
    return _conv_batch(level, args[0], args[1], args[2] if len(args) > 2 else None, params, run), 0


def _conv_input_grad_rule(op, args, params, level):
    grad, weight = args
    shape = tuple(params["input_shape"])
    size = _size(level)

    def run(g, w, bias, params, merged):
        n = g._data.shape[0]
        given = (n,) + shape[1:] if merged == "samples" else (n, shape[1] * size) + shape[2:]
        return _call(op, [g, w], {**params, "input_shape": given})
    return _conv_batch(level, grad, weight, None, params, run), 0


def _conv_weight_grad_rule(op, args, params, level):
    """The weight's gradient: weight-shaped, so a batch of them is always the grouped form."""
    inp, grad = args
    size = _size(level)
    (pi, bi), (pg, bg) = _unwrap(inp, level), _unwrap(grad, level)
    pi = _front(pi, bi) if bi is not None else _expanded(pi, size)
    pg = _front(pg, bg) if bg is not None else _expanded(pg, size)
    n = pi._data.shape[1]
    pi = pi.movedim(0, 1).reshape((n, -1) + tuple(pi._data.shape[3:]))
    pg = pg.movedim(0, 1).reshape((n, -1) + tuple(pg._data.shape[3:]))
    shape = tuple(params["weight_shape"])
    out = _call(op, [pi, pg], {**params, "weight_shape": (shape[0] * size,) + shape[1:],
                               "groups": params.get("groups", 1) * size})
    return out.reshape((size,) + shape), 0


# ---------------------------------------------------------------- the fallback: sample by sample
def _loop(op, args, params, level):
    """Map ``op`` over the batch one sample at a time (PyTorch's fallback for ops without a rule); the
    samples' extras (solve's info, a factorization's other outputs) are stacked like the results."""
    size = _size(level)
    box = _BOXES[-1] if _BOXES else None
    start = len(box) if box is not None else 0
    results = []
    for i in range(size):
        sample = []
        for a in args:
            p, b = _unwrap(a, level)
            sample.append(p if b is None else _apply("select", (p,), {"dim": b, "index": i}))
        results.append(_call(op, sample, params))
    stacked = _apply("stack", results, {"dim": 0})
    if box is not None and size and len(box) - start == size:
        per_sample = box[start:]
        del box[start:]
        box.append(_stacked_extras(per_sample, level))
    return stacked, 0


def _stacked_extras(per_sample, level):
    """One extras dict for a loop's sample calls: each array extra stacked, batched along dim 0."""
    first = per_sample[0]
    if not first:
        return first
    return {k: batched(Tensor._make(np.stack([s[k] for s in per_sample])), 0, level) if isinstance(v, np.ndarray)
            else v for k, v in first.items()}


_BOXES: list = []          # the extras of the op being dispatched (its physical call appends them)


def _call(op, phys, params):
    return apply(op, tuple(phys), params, _BOXES[-1] if _BOXES else None)


RULES = {
    "elementwise": _elementwise,
    "fill_value": _fill_value_rule,
    "dims": _dims_rule(),
    "new_dim": _dims_rule(new_dim=True),
    "reduce": _dims_rule(reduce=True),
    "shape": _shape_rule,
    "repeat": _repeat_rule,
    "index": _index_rule,
    "t": _t_rule,
    "squeeze": _squeeze_rule,
    "mm": _mm_rule,
    "mv": _mv_rule,
    "dot": _dot_rule,
    "bmm": _bmm_rule,
    "addmm": _addmm_rule,
    "arg": _arg_rule,
    "permute": _permute_rule,
    "loss": _loss_rule,
    "conv": _conv_rule,
    "conv_input_grad": _conv_input_grad_rule,
    "conv_weight_grad": _conv_weight_grad_rule,
    "loop": _loop,
}


def rule_of(op):
    """The batch rule of an entry: its declaration, elementwise for elementwise entries, else the loop."""
    kind = op.batch
    if kind is None:
        kind = "elementwise" if (op.tangent == "element_wise" or op.broadcast or op.pointwise) else "loop"
    if isinstance(kind, tuple):          # ("reduce_all", entry over dims)
        return _reduce_all(kind[1])
    return RULES[kind]


# ---------------------------------------------------------------- grad's leaves inside a vmap
INNER_LEAVES: dict = {}     # id(leaf) -> (leaf, its untracked alias, len(LEVELS) when made)


@contextlib.contextmanager
def inner_leaves(leaves):
    """While a transform nested in vmap runs, its unbatched leaves (``vmap(grad(f), in_dims=None)``'s
    weights) reach the batch rules as untracked aliases: their gradient flows through the logical
    nodes ``dispatch`` records, and a recording of the physical ops too would only be discarded.
    (A vmap nested inside the transform is deeper than the leaves: it keeps recording them; under a
    dual level the physical ops carry the tangents vmap returns, so they see the leaves themselves.)"""
    depth = len(LEVELS)
    added = []
    for t in leaves:
        if type(t) is Tensor and t._grad_fn is None and id(t) not in INNER_LEAVES:
            INNER_LEAVES[id(t)] = (t, t._detached_alias(), depth)
            added.append(id(t))
    try:
        yield
    finally:
        for key in added:
            del INNER_LEAVES[key]


def _untracked_leaves(ts, level):
    """``ts`` with the inner leaves of vmaps at or outside ``level`` replaced by their aliases."""
    for t in ts:
        if id(t) in INNER_LEAVES:
            break
    else:
        return ts               # (most ops: none is a leaf)
    depth = 0
    for running in LEVELS:
        if running[0] <= level:
            depth += 1
    out = []
    for t in ts:
        entry = INNER_LEAVES.get(id(t))
        out.append(entry[1] if entry is not None and entry[0] is t and entry[2] >= depth else t)
    return tuple(out)


# ---------------------------------------------------------------- dispatch (called by apply)
_RULE_OF: dict = {}         # op -> (its declaration, rule_of(op)): once per entry (a reduce_all rule is a new closure)


def dispatch(op, args, params, extras_out=None, level=None):
    """``apply(op, args)`` when an argument is batched (innermost at ``level``, which apply found): the
    rule on the physical tensors, the result wrapped, and the op's node recorded on the logical tensors
    when one of them requires grad."""
    if level is None:
        level = level_of(args)
    ts = tuple([a if isinstance(a, Tensor) else wrap(a) for a in args])
    known = _RULE_OF.get(op)
    if known is None or known[0] is not op.batch:
        known = _RULE_OF[op] = (op.batch, rule_of(op))
    rule = known[1]
    box = []
    _BOXES.append(box)
    try:
        phys, bdim = rule(op, _untracked_leaves(ts, level) if INNER_LEAVES and not _DUAL_LEVELS else ts,
                          params, level)
    finally:
        _BOXES.pop()
    result = batched(phys, bdim, level)
    if op.view and type(ts[0]) is BatchedTensor and ts[0]._level == level:
        _link_view(result, ts[0])
    extras = box[0] if len(box) == 1 else None
    if extras:
        extras = _batched_extras(extras, phys, bdim, level)
    if extras_out is not None:
        extras_out.append(extras)
    if op.differentiable and result._dtype.category == 2 and _grad_enabled.get():
        for t in ts:
            if t._requires_grad:
                _record(op, ts, params, result, extras)
                _keep_physical_in_saved_result(result._grad_fn, phys)
                break
    if _DUAL_LEVELS:
        _propagate_tangent(op, ts, params, result, extras)
    return result


def _keep_physical_in_saved_result(node, phys):
    """The result the op's node saved (``tanh``'s) stands for ``phys`` itself. The saved alias detaches
    the logical result (no cycle through the node), and with it ``phys``: that cut the physical history
    and tangents that a grad or jvp around the vmap differentiates (grad of per-sample gradients' norm,
    jvp of vmap(grad(f))). ``phys`` does not lead back to the logical node, so keeping it makes no cycle."""
    saved = getattr(node, "_saved", None)
    if type(saved) is not dict:
        return
    for v in saved.values():
        if type(v) is SavedTensor and v.is_output:
            alias = v.tensor
            if type(alias) is BatchedTensor and alias._phys._data is phys._data:
                alias._phys = phys


def _batched_extras(extras, phys, bdim, level):
    """The extras of the physical call (e.g. max's indices) as batched tensors like the result."""
    out = {}
    for k, v in extras.items():
        if isinstance(v, np.ndarray) and v.ndim == phys._data.ndim and v.shape[bdim] == phys._data.shape[bdim]:
            v = batched(Tensor._make(v), bdim, level)
        out[k] = v
    return out


def dispatch_inplace(op, t, args, params):
    """``t.op_(*args)`` with a batched argument: written into ``t``'s physical memory. An unbatched
    ``t`` receiving a batched value fails as PyTorch's does (the physical shapes don't broadcast)."""
    level = level_of((t,) + tuple(args))
    pt, bt = _unwrap(t, level)
    if bt is None:
        phys = [_unwrap(a, level) for a in args]
        apply_inplace(op, t, tuple(p if b is None else _front(p, b) for p, b in phys), params)
        return t
    target = _front(pt, bt)
    if rule_of(op) is _elementwise:
        apply_inplace(op, target, tuple(_broadcast_physical(args, level, t._data.ndim)), params)
        return t
    for i in range(_size(level)):
        sample = []
        for a in args:
            p, b = _unwrap(a, level)
            sample.append(p if b is None else _apply("select", (p,), {"dim": b, "index": i}))
        apply_inplace(op, _apply("select", (target,), {"dim": 0, "index": i}), tuple(sample), params)
    return t


def write_physical(t, result):
    """Store a batched ``result`` into ``t``'s physical memory (inplace_engine.write_inplace under vmap,
    which then gives the logical ``t`` its history): an unbatched ``t`` fails with the physical shapes, as
    PyTorch's does."""
    from .inplace_engine import write_inplace as write
    level = level_of((t, result))
    pr, br = _unwrap(result, level)
    pt, bt = _unwrap(t, level)
    if bt is None:
        write(t, pr if br is None else _front(pr, br))
        return
    source = _expanded(pr, _size(level)) if br is None else _front(pr, br)
    ndim = t._data.ndim
    missing = ndim - result._data.ndim
    if missing > 0:
        source = _view(source, source._data.shape[:1] + (1,) * missing + source._data.shape[1:])
    write(_front(pt, bt), source)


def become(t, view):
    """``t.t_()``, ``t.squeeze_()`` … on a batched ``t`` (inplace_engine.apply_inplace_view): ``t`` takes the
    batched ``view``'s physical tensor and layout."""
    t._phys, t._bdim, t._data = view._phys, view._bdim, view._data
