"""``torch.autograd.functional``: jacobian, hessian, vjp, jvp, hvp on the engine.

``jacobian`` (and so ``hessian``) does not run one backward pass per output
element: one pass carries a batch of basis cotangents through the graph, each
node applying its formulas to the whole batch where that gives the row-wise
result (checked per node) and row by row where it does not (see
``jacobian_blocks``). ``create_graph`` works the same way, so the Jacobian stays
differentiable.
"""
from __future__ import annotations

import numpy as np

from . import errors
from .autograd import grad as _grad
from .graph import _grad_enabled, _retain
from .limits import check_elements
from .tensor import Tensor
from .zero_tensor import LIVE as ZERO_TENSORS, materialized


def _tuple_in(inputs, fn="jacobian", what="inputs"):
    """(was it a tuple, the tensors as a tuple): only a tuple is several tensors, as in PyTorch's _as_tuple."""
    is_tuple = isinstance(inputs, tuple)
    ins = inputs if is_tuple else (inputs,)
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {what}"
            raise errors.TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but "
                                   f"{where} has type <class '{type(t).__name__}'>.")
    return is_tuple, ins


def _check_outputs_require_grad(outs, strict):
    """strict mode: every output must depend differentiably on the inputs."""
    if strict:
        for i, o in enumerate(outs):
            if not o._requires_grad:
                raise errors.RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                          f"outputs must be computed in a differentiable manner from the input when "
                                          f"running in strict mode.")


def _prepare(ins, create_graph):
    """Fresh leaves that require grad (views of the user's tensors, as PyTorch's _grad_preprocess)."""
    out = []
    for t in ins:
        if create_graph and t._requires_grad:
            out.append(t.view_as(t))
        else:
            d = t.detach()
            d._requires_grad = True
            out.append(d)
    return tuple(out)


def _call(func, ins):
    token = _grad_enabled.set(True)
    try:
        out = func(*ins)
    finally:
        _grad_enabled.reset(token)
    return out


def _tuple_out(out, what="outputs"):
    is_tuple = isinstance(out, (tuple, list))
    outs = tuple(out) if is_tuple else (out,)
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise errors.TypeError(f"The {what} of the user-provided function given to jacobian must be either a "
                                   f"Tensor or a tuple of Tensors but the value at index {i} has type "
                                   f"{type(o).__name__}.")
    return is_tuple, outs


def _zeros(t):
    return Tensor._make(np.zeros(t._data.shape, t._dtype.np), t._dtype)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    if strategy != "reverse-mode":
        from . import func as _func      # forward mode (torch.func's module, loaded when asked for)
        if _func.check_strategy(strategy, create_graph):
            return _func.forward_mode_jacobian(func, inputs, strict, vectorize)
    in_tuple, ins = _tuple_in(inputs)
    ins = _prepare(ins, create_graph)
    out_tuple, outs = _tuple_out(_call(func, ins))
    _check_outputs_require_grad(outs, strict)
    rows_per_out = []
    for i, out in enumerate(outs):
        blocks = jacobian_blocks(out, ins, create_graph=create_graph)
        for k, x in enumerate(ins):
            if blocks[k] is None:
                if strict:
                    raise errors.RuntimeError(f"Output {i} of the user-provided function is independent of "
                                              f"input {k}. This is not allowed in strict mode.")
                blocks[k] = Tensor._make(np.zeros(out._data.shape + x._data.shape, x._dtype.np), x._dtype)
            elif not create_graph:
                blocks[k] = blocks[k].detach()
            if ZERO_TENSORS and not vectorize:      # PyTorch stacks its rows: a ZeroTensor block is plain zeros
                blocks[k] = materialized(blocks[k])
        rows_per_out.append(tuple(blocks))
    if out_tuple:
        return tuple(r if in_tuple else r[0] for r in rows_per_out)
    r = rows_per_out[0]
    return r if in_tuple else r[0]


# ------------------------------------------------------------ batched vector–Jacobian products
# The Jacobian's rows are the VJPs of the basis vectors. Instead of one backward pass per
# row, one pass carries a whole batch of cotangents (a leading dimension of ``m`` rows):
# each node's formulas are applied to the batch at once, and accepted only when the result
# is right — the formulas are linear in ``grad``, so a batch-transparent application must
# agree with the formula applied to a random combination of the rows (a Schwartz–Zippel
# test: a wrong batched result passes it with probability zero). A node whose formulas are
# not batch-transparent (``grad.t()``, ``grad.sum(0)``, a reshape …) runs row by row; the
# result is exact either way.

_ROW_BUDGET = 1 << 22     # elements of the largest batched gradient of one pass
_AGREE_RTOL = {"float64": 1e-9, "float32": 1e-4}


def jacobian_blocks(output, inputs, *, create_graph=False, progress=None):
    """d ``output`` / d ``inputs[k]`` for each k, shaped ``output.shape + inputs[k].shape``.

    ``inputs`` must already be in ``output``'s graph (leaves or tensors it was computed
    from); a block is None where ``output`` does not depend on that input. Nothing is
    accumulated into ``.grad`` and the graph is retained. ``progress(rows done, rows)`` is
    called after each batch of rows (a command's progress bar).
    """
    shape = output._data.shape
    if output._data.size == 1:      # the plain pass's gradients, viewed as the blocks directly
        return stacked_vjps([output], inputs, create_graph=create_graph, block_shape=shape)
    rows = stacked_vjps([output], inputs, create_graph=create_graph, progress=progress)
    return [None if J is None else J.view(shape + x._data.shape) for J, x in zip(rows, inputs)]


def stacked_vjps(outputs, inputs, *, create_graph=False, progress=None, batch_one=False, block_shape=None):
    """The vector-Jacobian products of the basis of ``outputs`` flattened and concatenated (functorch's
    basis for jacrev) with each input: one tensor per input of shape ``(rows,) + input.shape``, or None where
    no output depends on it. Each batched pass gives every output its part of the rows (zero cotangents for
    the rows of the others), so the gradients of several outputs meet as in ``vmap(vjp_fn)(basis)``.
    One row is a plain backward pass (no batch dimension in a create_graph graph) unless ``batch_one``;
    ``block_shape`` then shapes it in place of ``(1,)``."""
    from .functions import cat
    from .graph import run_backward
    sizes = [o._data.size for o in outputs]
    m = sum(sizes)
    live = [o for o in outputs if o._requires_grad]
    if not live or m == 0:
        return [None] * len(inputs)
    for x in inputs:    # the blocks' size, before any row of them is computed
        check_elements((m,) + x._data.shape)
    if m == 1 and not batch_one:
        token = _grad_enabled.set(True)
        try:
            seed = Tensor._make(np.ones(live[0]._data.shape, live[0]._dtype.np), live[0]._dtype)
            grads = run_backward((live[0],), (seed,), retain_graph=True, create_graph=create_graph,
                                 inputs=tuple(inputs), accumulate=False, allow_unused=True)
        finally:
            _grad_enabled.reset(token)
        first = (1,) if block_shape is None else tuple(block_shape)
        return [None if g is None else g.view(first + x._data.shape) for g, x in zip(grads, inputs)]
    chunk = max(1, _ROW_BUDGET // max(1, max(_largest_tensor(o) for o in live)))
    offsets = np.cumsum([0] + sizes[:-1])
    parts = [[] for _ in inputs]
    token = _grad_enabled.set(True)
    try:
        for start in range(0, m, chunk):
            rows = min(m, start + chunk) - start
            roots, seeds = [], []
            for o, first, n in zip(outputs, offsets, sizes):
                if not o._requires_grad:
                    continue
                seed = np.zeros((rows, n), o._dtype.np)
                row = np.arange(rows)
                col = start + row - first
                mine = (col >= 0) & (col < n)
                seed[row[mine], col[mine]] = 1
                roots.append(o)
                seeds.append(Tensor._make(seed.reshape((rows,) + o._data.shape), o._dtype))
            grads = run_backward(tuple(roots), tuple(seeds), retain_graph=True, create_graph=create_graph,
                                 inputs=tuple(inputs), accumulate=False, allow_unused=True,
                                 node_apply=apply_batched)
            for k, g in enumerate(grads):
                parts[k].append((rows, g))
            if progress is not None:
                progress(start + rows, m)
    finally:
        _grad_enabled.reset(token)
    stacked = []
    for k, x in enumerate(inputs):
        if all(g is None for _, g in parts[k]):
            stacked.append(None)
            continue
        pieces = [g if g is not None else Tensor._make(np.zeros((rows,) + x._data.shape, x._dtype.np), x._dtype)
                  for rows, g in parts[k]]
        stacked.append(pieces[0] if len(pieces) == 1 else cat(pieces, 0))
    return stacked


def _largest_tensor(output) -> int:
    """Elements of the largest tensor in ``output``'s graph (to size the batches of rows)."""
    largest = output._data.size
    root = output._grad_fn
    seen, stack = {root}, [root]
    while stack:
        node = stack.pop()
        for nxt, meta in zip(getattr(node, "_next", ()), getattr(node, "_meta", ())):
            if nxt is None:     # no gradient flows to this input
                continue
            size = int(np.prod(meta[0]))
            if size > largest:
                largest = size
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return largest


def apply_batched(node, grad):
    """``node``'s input gradients for a batch of cotangents ``grad`` (rows along dimension 0)."""
    own = getattr(node, "_apply_batched", None)       # a custom Function's node batches itself
    if own is not None:
        return own(grad)
    m = grad._data.shape[0]
    if node._retains:       # as the row-by-row passes would: the rows' sum
        _retain(node, grad.sum(0))
    result = _apply_whole_batch(node, grad, m)     # (one row too: jacrev of a scalar, as functorch's vmap)
    if result is not None:
        return result
    return _apply_row_by_row(node, grad, m)


def _apply_row_by_row(node, grad, m):
    from .functions import stack
    rows = [node._apply(grad[i]) for i in range(m)]
    out = []
    for k, (nxt, (shape, dtype)) in enumerate(zip(node._next, node._meta)):
        column = [r[k] for r in rows]
        if nxt is None or all(g is None for g in column):
            out.append(None)
            continue
        out.append(stack([g if g is not None else Tensor._make(np.zeros(shape, dtype.np), dtype)
                          for g in column], 0))
    return out


def _apply_whole_batch(node, grad, m):
    """The formulas applied to all rows at once, or None when that is not the row-wise result."""
    needed = [n is not None for n in node._next]
    ctx = node._unpack()
    rules = _BATCH_RULES.get(node._op.name)
    if rules is not None:
        out = _apply_batch_rules(node, rules, ctx, needed, grad, m)
        if out is not None:
            return out
    try:
        ctx["grad"] = grad
        raw = node._op.backward(ctx, needed)
        out = []
        for g, nxt, (shape, dtype) in zip(raw, node._next, node._meta):
            if nxt is None or g is None:
                out.append(None)
                continue
            g = _sum_rows_to(g, shape, m)
            if g is None:
                return None
            out.append(g if g._dtype is dtype else g.to(dtype))
    except Exception:   # e.g. a formula that transposes or reshapes grad: run it row by row instead
        return None
    if node._op.name in _BATCH_TRANSPARENT:
        return out
    return out if _agrees_with_rows(node, ctx, needed, grad, out, m) else None


# Ops whose formulas are elementwise in grad (saved tensors broadcast against the rows): the
# batched application is the row-wise result by construction, so it is not checked.
_BATCH_TRANSPARENT = frozenset("add sub rsub rsub_tensor mul div neg exp log sin cos tanh sigmoid relu sqrt "
                               "pow_scalar".split())


# Batched forms of the formulas that move or contract grad's dimensions (so are not
# batch-transparent): exact by construction, they need no check. ``g`` has the rows along
# dimension 0; ``c`` is the node's saved context.
def _rows_reshaped(g, c):
    return g.reshape((g._data.shape[0],) + tuple(c["self_shape"]))


def _rows_expanded(g, c):
    shape = tuple(c["self_shape"])
    return g.reshape((g._data.shape[0],) + (1,) * len(shape)).expand((g._data.shape[0],) + shape)


def _numel_of(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _scaled(g, factor):
    return g if factor == 1 else g * factor


_RESHAPES = {"self": _rows_reshaped}
_BATCH_RULES = {
    "mv": {"self": lambda g, c: g.unsqueeze(2) * c["vec"], "vec": lambda g, c: g.matmul(c["self"])},
    "mm": {"self": lambda g, c: g.matmul(c["mat2"].t()), "mat2": lambda g, c: c["self"].t().matmul(g)},
    "addmm": {"self": lambda g, c: _scaled(g, c.get("beta", 1)),
              "mat1": lambda g, c: _scaled(g.matmul(c["mat2"].t()), c.get("alpha", 1)),
              "mat2": lambda g, c: _scaled(c["mat1"].t().matmul(g), c.get("alpha", 1))},
    "dot": {"self": lambda g, c: g.unsqueeze(1) * c["tensor"], "tensor": lambda g, c: g.unsqueeze(1) * c["self"]},
    "t": {"self": lambda g, c: g.transpose(1, 2) if g.dim() == 3 else g},
    "transpose": {"self": lambda g, c: g.transpose(c["dim0"] % (g.dim() - 1) + 1, c["dim1"] % (g.dim() - 1) + 1)},
    "permute": {"self": lambda g, c: g.permute((0,) + tuple(int(i) + 1 for i in np.argsort(c["dims"])))},
    "unsqueeze": {"self": lambda g, c: g.squeeze(c["dim"] % (g.dim() - 1) + 1)},
    "expand": {"self": lambda g, c: g},          # _sum_rows_to does the reduction
    "sum": {"self": _rows_expanded},
    "mean": {"self": lambda g, c: _rows_expanded(g, c) / _numel_of(c["self_shape"])},
    **{name: _RESHAPES for name in ("view", "reshape_alias", "unsafe_view", "squeeze", "squeeze_dim",
                                     "squeeze_dims", "squeeze_inplace_dim")},
}


def _apply_batch_rules(node, rules, ctx, needed, grad, m):
    """``node``'s input gradients by its batched rules, or None (then the general path)."""
    out = []
    try:
        for name, need, (shape, dtype) in zip(node._op.inputs, needed, node._meta):
            if not need:
                out.append(None)
                continue
            g = _sum_rows_to(rules[name](grad, ctx), shape, m)
            if g is None:
                return None
            out.append(g if g._dtype is dtype else g.to(dtype))
    except Exception:       # an input without a rule, an unexpected shape: the general path decides
        return None
    return out


def _sum_rows_to(g, shape, m):
    """Reduce a batched gradient (m, *broadcast_shape) to (m, *shape) as the engine's sum_to_size."""
    body = g._data.shape[1:]
    if g._data.ndim < 1 + len(shape) or g._data.shape[0] != m:
        return None
    lead = len(body) - len(shape)
    keep = []
    for k, (have, want) in enumerate(zip(body[lead:], shape)):
        if have != want:
            if want != 1:
                return None
            keep.append(1 + lead + k)
    if keep:
        g = g.sum(dim=tuple(keep), keepdim=True)
    if lead:
        g = g.sum(dim=tuple(range(1, 1 + lead)))
    return g


def _agrees_with_rows(node, ctx, needed, grad, batched, m):
    """Two random combinations of the rows: the batched results must combine to the formula's."""
    rng = np.random.default_rng(m)
    rtol = _AGREE_RTOL.get(grad._dtype.name, 1e-2)
    ws = rng.standard_normal((2, m))        # the two combinations (the same draws as one at a time)
    combos = ws @ grad._data.reshape(m, -1)         # both at once, in float64: one pass over the rows
    # each batched result combined the same two ways, and its scale, also one pass each
    mixed = [None if g is None else _combined(ws, g._data.reshape(m, -1)) for g in batched]
    token = _grad_enabled.set(False)
    try:
        for i in range(2):
            ctx["grad"] = Tensor._make(combos[i].reshape(grad._data.shape[1:]).astype(grad._dtype.np),
                                       grad._dtype)
            reference = node._op.backward(ctx, needed)
            for g, mix, r, (shape, _) in zip(batched, mixed, reference, node._meta):
                if g is None:
                    continue
                if r is None:
                    return False
                r = np.asarray(r._data, np.float64)
                if r.shape != shape:
                    r = _np_sum_to(r, shape)
                combined, scale = mix[0][i].reshape(shape), mix[1][i].reshape(shape)
                if not np.all(np.abs(combined - r) <= rtol * (scale + np.abs(r))):
                    return False
    finally:
        _grad_enabled.reset(token)
    return True


def _combined(ws, rows):
    """``ws @ rows`` and ``|ws| @ |rows|`` in float64."""
    rows64 = rows.astype(np.float64)
    combined = ws @ rows64
    np.abs(rows64, out=rows64)
    return combined, np.abs(ws) @ rows64


def _np_sum_to(a, shape):
    lead = a.ndim - len(shape)
    a = a.sum(axis=tuple(range(lead))) if lead > 0 else a
    axes = tuple(k for k, (have, want) in enumerate(zip(a.shape, shape)) if want == 1 and have != 1)
    return a.sum(axis=axes, keepdims=True) if axes else a


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    in_tuple, ins = _tuple_in(inputs)

    def first(*xs):
        out = func(*xs)
        _, outs = _tuple_out(out)
        if len(outs) != 1 or outs[0]._data.size != 1:
            raise errors.RuntimeError("The Tensor returned by the function given to hessian should contain a "
                                      "single element")
        g = jacobian(func, xs if in_tuple else xs[0], create_graph=True, strict=strict)
        return g

    res = jacobian(first, ins if in_tuple else ins[0], create_graph=create_graph, strict=strict)
    return res


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    in_tuple, ins = _tuple_in(inputs, "vjp")
    ins = _prepare(ins, create_graph)
    out_tuple, outs = _tuple_out(_call(func, ins))
    _check_outputs_require_grad(outs, strict)
    vs = _validate_v(v, outs, out_tuple, "vjp")
    token = _grad_enabled.set(True)
    try:
        diff_outs = [o for o in outs if o._requires_grad]
        if diff_outs:
            gs = _grad(tuple(o for o in outs if o._requires_grad),
                       ins, tuple(g for g, o in zip(vs, outs) if o._requires_grad),
                       retain_graph=create_graph, create_graph=create_graph, allow_unused=True)
        else:
            gs = (None,) * len(ins)
    finally:
        _grad_enabled.reset(token)
    _check_used(gs, strict, "The output of the user-provided function is independent of input {i}. This is not "
                            "allowed in strict mode.")
    gs = tuple(_zeros(x) if g is None else (g if create_graph else g.detach()) for g, x in zip(gs, ins))
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return (outs if out_tuple else outs[0]), (gs if in_tuple else gs[0])


def _check_used(grads, strict, message):
    if strict:
        for i, g in enumerate(grads):
            if g is None:
                raise errors.RuntimeError(message.format(i=i))


def _validate_v(v, others, others_tuple, fn, what="user-provided function returns"):
    """PyTorch's checks of ``v`` against the outputs (vjp) or the inputs (jvp, hvp)."""
    if v is None:
        if len(others) != 1 or others[0]._data.size != 1:
            raise errors.RuntimeError(f"The vector v can only be None if the {what} a single Tensor with a single "
                                      f"element.")
        return (Tensor._make(np.ones(others[0]._data.shape, others[0]._dtype.np), others[0]._dtype),)
    _, vs = _tuple_in(v, fn, "v")
    if len(vs) != len(others):
        if others_tuple:
            raise errors.RuntimeError(f"v is a tuple of invalid length: should be {len(others)} but got {len(vs)}.")
        raise errors.RuntimeError("The given v should contain a single Tensor.")
    for i, (o, g) in enumerate(zip(others, vs)):
        if g._data.shape != o._data.shape:
            entry = f"Entry {i} in " if others_tuple else ""
            raise errors.RuntimeError(f"{entry}v has invalid size: should be {o.shape} but got {g.shape}.")
    return vs


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """J v by the double-backward trick: differentiate u ↦ vjp(u) with respect to u."""
    in_tuple, ins = _tuple_in(inputs, "jvp")
    ins = _prepare(ins, create_graph)
    vs = _validate_v(v, ins, in_tuple, "jvp", "input to the user-provided function is")
    out_tuple, outs = _tuple_out(_call(func, ins))
    _check_outputs_require_grad(outs, strict)
    token = _grad_enabled.set(True)
    try:
        us = tuple(Tensor._make(np.zeros(o._data.shape, o._dtype.np), o._dtype, requires_grad=True) for o in outs)
        diff = [(o, u) for o, u in zip(outs, us) if o._requires_grad]
        if diff:
            gs = _grad(tuple(o for o, _ in diff), ins, tuple(u for _, u in diff), create_graph=True,
                       allow_unused=True)
            pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None and g._requires_grad]
            if pairs:
                jv = _grad(tuple(g for g, _ in pairs), us, tuple(vv for _, vv in pairs),
                           create_graph=create_graph, allow_unused=True)
            else:
                jv = (None,) * len(us)
        else:
            jv = (None,) * len(us)
    finally:
        _grad_enabled.reset(token)
    jv = tuple(_zeros(o) if g is None else (g if create_graph else g.detach()) for g, o in zip(jv, outs))
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return (outs if out_tuple else outs[0]), (jv if out_tuple else jv[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    in_tuple, ins = _tuple_in(inputs, "hvp")
    ins = _prepare(ins, create_graph)
    vs = _validate_v(v, ins, in_tuple, "hvp", "input to the user-provided function is")
    out_tuple, outs = _tuple_out(_call(func, ins))
    _check_outputs_require_grad(outs, strict)
    if len(outs) != 1 or outs[0]._data.size != 1:
        raise errors.RuntimeError("The Tensor returned by the function given to hvp should contain a single element")
    token = _grad_enabled.set(True)
    try:
        (g,) = (_grad(outs[0], ins, create_graph=True, allow_unused=True),)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and gi._requires_grad]
        if pairs:
            hv = _grad(tuple(p for p, _ in pairs), ins, tuple(q for _, q in pairs), create_graph=create_graph,
                       allow_unused=True)
        else:
            hv = (None,) * len(ins)
    finally:
        _grad_enabled.reset(token)
    hv = tuple(_zeros(x) if h is None else (h if create_graph else h.detach()) for h, x in zip(hv, ins))
    out = outs[0] if create_graph else outs[0].detach()
    return out, (hv if in_tuple else hv[0])


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    return hvp(func, inputs, v, create_graph, strict)
