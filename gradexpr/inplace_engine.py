"""The engine's part of in-place ops (``t.add_(x)``, ``t[i] = v``, ``v.unsqueeze_(0)``): PyTorch's
refusals (a leaf that requires grad, a view of one, views made under no_grad or by a multi-output op),
the new value written into the tensor and its base, and the graph rewritten as PyTorch rewrites it
(CopySlices on the base, a view's grad_fn regenerated from its base's). ``op.apply`` runs the op itself.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, errors
from .forward_ad import ACTIVE as _DUAL_LEVEL
from .grad_mode import VMAP_LEVELS as _VMAP
from .graph import CopySlices, InplaceViewResult, SavedTensor, _grad_enabled, check_not_inference
from .op import (_D, _EMPTY, _batching, _edge, _forward_ad, _move_retains, _refresh_views, _set_grad_fn,
                 _view_rebase_message, Op, ViewGeometry, apply, bump_version)
from .tensor import Tensor
from .zero_tensor import LIVE as _ZERO_TENSORS, check_mutable, inplace_operands

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_HINT_LEAF = "modify a leaf inside `with torch.no_grad():` (as optimisers do), or use an out-of-place op"
_HINT_VIEW = "clone() the view first (v = v.clone()), or use an out-of-place op"


def check_inplace(t: Tensor, others=()):
    """PyTorch's refusals of an in-place change of ``t`` by an op whose other inputs are ``others``:
    a leaf that requires grad, a view of one, and the views created under no_grad or by unbind/split."""
    if not _grad_enabled.get():
        return
    base = t._base
    t_requires = t._requires_grad or (base is not None and base._requires_grad)
    if not t_requires:
        for o in others:
            if type(o) is Tensor and o._requires_grad:
                break
        else:
            return
    if base is not None:
        meta = t._view_meta
        if meta is not None:
            raise errors.RuntimeError(_view_rebase_message(t, meta, indirect=False), hint=_HINT_VIEW)
        if t_requires and base._grad_fn is None:
            raise errors.RuntimeError(VIEW_OF_LEAF_INPLACE, hint=_HINT_LEAF)
    if t_requires and t._grad_fn is None:
        raise errors.RuntimeError(LEAF_INPLACE, hint=_HINT_LEAF)


def check_writeable(t: Tensor):
    """PyTorch's refusal to write into memory that several elements share (an ``expand``-ed view), and
    into an inference tensor outside inference mode."""
    check_not_inference(t)
    if not t._data.flags.writeable:
        check_mutable(t)
        raise errors.RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                                  "a single memory location. Please clone() the tensor before performing the "
                                  "operation.")


def _can_cast(src: dtypes.DType, dst: dtypes.DType) -> bool:
    return src.category <= dst.category


def write_inplace(t: Tensor, result: Tensor):
    """Store ``result`` into ``t``'s memory and give ``t`` the history of ``result``.

    ``result`` was computed out of place from ``t`` (its input 0) and the op's other inputs. When
    ``t`` is a view, the history goes to its base, as a ``CopySlices`` node over the op's node,
    and ``t`` (like every other view of the base) is then seen afresh from the base."""
    if _VMAP and _batching().level_of((t, result)) >= 0:
        return _batching().write_inplace(t, result)
    if not _can_cast(result._dtype, t._dtype):
        raise errors.RuntimeError(f"result type {result._dtype._scalar_name} can't be cast to the desired output type "
                                  f"{t._dtype._scalar_name}")
    if result._data.shape != t._data.shape:
        try:
            shape = np.broadcast_shapes(result._data.shape, t._data.shape)
        except ValueError:
            shape = result._data.shape
        if shape != t._data.shape:
            raise errors.RuntimeError(f"output with shape {list(t._data.shape)} doesn't match the broadcast shape "
                                      f"{list(shape)}")
    if not t._data.flags.writeable:
        check_writeable(t)
    np.copyto(t._data, result._data, casting="unsafe")
    if _DUAL_LEVEL:
        _forward_ad().move_tangent(result, t)
    fn = result._grad_fn
    if fn is not None:
        if t._base is not None:
            _rebase_history_of_view(t, fn)
        else:
            old = t._grad_fn
            t._grad_fn = fn
            t._requires_grad = True
            if old is not None and old._retains:
                _move_retains(t, old, fn)
    vc = t._version_counter             # bump_version, inline: this is every in-place op's path
    vc[0] += 1
    if len(vc) > 1:
        _refresh_views(vc, t, None)


def _rebase_history_of_view(view: Tensor, fn):
    """The base's new history after the in-place op recorded as ``fn`` changed ``view``: PyTorch's
    ``CopySlices``, whose edges are the base's old history and the op's other inputs, and whose
    backward runs ``fn`` on the view's part of the gradient."""
    base = view._base
    geometry = ViewGeometry(base._data, view._data)
    base_meta = (base._data.shape, base._dtype)
    if fn._next and fn._next[0] is view._grad_fn:
        inner = fn._edge_mask()
        node = CopySlices(_D().copy_slices, [_edge(base)] + list(fn._next[1:]), {"fn": fn, "geometry": geometry},
                          [base_meta] + list(fn._meta[1:]), fn._frees,
                          None if inner is None else (True,) + tuple(inner[1:]))
    else:
        # The op was recorded as several nodes (its last one does not take the view itself): wrap the
        # new value of the view as a whole, whose own history leads back to the view's old one.
        node = CopySlices(_D().copy_slices, [_edge(base), fn], {"fn": None, "geometry": geometry},
                          [base_meta, (view._data.shape, view._dtype)], False, None)
    _set_grad_fn(base, node)


def records_inplace(t: Tensor, args) -> bool:
    """Whether ``t.op_(*args)`` records a node: grad mode on, and ``t`` or another argument requiring grad
    (whose formula may read ``t``'s old value: ``h.mul_(w)``'s gradient for ``w``)."""
    return _grad_enabled.get() and (t._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args))


def apply_inplace(op: Op, t: Tensor, args=(), params=_EMPTY):
    """``t.op_(*args)``: compute out of place, then write back into ``t`` with its new history."""
    recording = records_inplace(t, args)
    if _VMAP and not recording and _batching().level_of((t,) + tuple(args)) >= 0:
        return _batching().dispatch_inplace(op, t, args, params)
    # (under vmap(grad(f)) a batched op that records goes the same way: apply batches it and records its
    # node on the logical tensors, write_inplace writes the physical values back)
    check_inplace(t, args)
    if _ZERO_TENSORS:
        args = inplace_operands(t, args)
    # the formula reads the old value of t: give it its own copy
    reads_old = recording and "self" in op.save_names((True,) * (len(args) + 1))
    old = copy_with_history(t) if reads_old else t
    result = _forward_ad().inplace_formula(old, lambda: apply(op, (old, *args), params)) if _DUAL_LEVEL else \
        apply(op, (old, *args), params)
    node = result._grad_fn
    if reads_old:
        save_original_self(node, old)
    write_inplace(t, result)
    if node is not None:
        save_inplace_result(t, node)
    return t


def save_original_self(node, old):
    """After ``t.op_()`` recorded ``node`` from ``old``, the copy of ``t``'s old value its formulas read:
    ATen's in-place kernels save that value as ``self.clone()``, made right after the op's node, a node
    of its own (CloneBackward0, the later sequence number) that a gradient taken through it reaches."""
    if node is None or not old._requires_grad or type(node._saved) is not dict:
        return
    saved = node._saved.get("self")
    if type(saved) is SavedTensor and saved.tensor is old:
        from .ops import TABLE
        node._saved["self"] = SavedTensor(apply(TABLE["clone"], (old,)))


def copy_with_history(t: Tensor) -> Tensor:
    """A copy of ``t``'s value carrying ``t``'s history: what a formula reading the old value of ``t``
    differentiates with once ``t`` is changed in place (the copy of a batched tensor is batched)."""
    old = t._detached_copy()
    old._requires_grad, old._grad_fn, old._acc = t._requires_grad, t._grad_fn, t._accumulator_link()
    if _DUAL_LEVEL:
        _forward_ad().copy_tangent(t, old)
    return old


def save_inplace_result(t: Tensor, node):
    """Right after ``t.op_()`` recorded ``node``: a formula that reads the op's result reads ``t`` itself, at
    its new version (as in PyTorch), so changing ``t`` in place again makes backward fail instead of using
    stale values."""
    saved = node._saved
    if type(saved) is not dict or "result" not in saved:
        return
    producer = node._op.node if t._base is None else InplaceViewResult(t._grad_fn, node._op.node)
    saved["result"] = SavedTensor(t, is_output=True, producer=producer)


def apply_inplace_view(op: Op, t: Tensor, params=_EMPTY):
    """``t.t_()``, ``t.squeeze_()`` …: ``t`` itself becomes the view ``op`` makes of it (same memory,
    new shape and strides), with the op's node as its history; the version counter moves, so other
    views of the same memory are seen afresh."""
    if _VMAP and _batching().level_of((t,)) >= 0:
        return _batching().inplace_view(op, t, params)
    check_inplace(t)
    result = apply(op, (t,), params)
    t._data = result._data
    if _DUAL_LEVEL:
        _forward_ad().move_tangent(result, t)
    if result._grad_fn is not None:
        _set_grad_fn(t, result._grad_fn)
    bump_version(t, keep=t)
    return t
