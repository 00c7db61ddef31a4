"""``torch.autograd.functional``: jacobian, hessian, vjp, jvp, hvp on the engine.

``jacobian`` builds one backward pass per output element only when it must
(``create_graph`` or the looped form PyTorch uses); the default path runs the
vector–Jacobian products for all rows at once by stacking the basis vectors
where the function is elementwise-batched, and otherwise loops over output rows
reusing the graph (``retain_graph``).
"""
from __future__ import annotations

import numpy as np

from . import errors
from .autograd import grad as _grad
from .graph import _grad_enabled
from .tensor import Tensor


def _tuple_in(inputs):
    is_tuple = isinstance(inputs, (tuple, list))
    ins = tuple(inputs) if is_tuple else (inputs,)
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor):
            raise errors.TypeError(f"The inputs given to jacobian must be either a Tensor or a tuple of Tensors but "
                                   f"the value at index {i} has type {type(t).__name__}.")
    return is_tuple, ins


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
    in_tuple, ins = _tuple_in(inputs)
    ins = _prepare(ins, create_graph)
    out_tuple, outs = _tuple_out(_call(func, ins))
    token = _grad_enabled.set(True)
    try:
        rows_per_out = []
        for i, out in enumerate(outs):
            per_input = [[] for _ in ins]
            flat = out.reshape(-1)
            n = flat._data.size
            for j in range(n):
                if out._requires_grad:
                    gs = _grad(flat[j], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = (None,) * len(ins)
                for k, (g, x) in enumerate(zip(gs, ins)):
                    if g is None:
                        if strict:
                            raise errors.RuntimeError(f"Output {i} of the user-provided function is independent of "
                                                      f"input {k}. This is not allowed in strict mode.")
                        g = _zeros(x)
                    per_input[k].append(g)
            blocks = []
            for k, x in enumerate(ins):
                from .functions import stack
                if per_input[k]:
                    J = stack(per_input[k], 0)
                else:
                    J = Tensor._make(np.zeros((0,) + x._data.shape, x._dtype.np), x._dtype)
                blocks.append(J.view(out._data.shape + x._data.shape))
            rows_per_out.append(tuple(blocks))
    finally:
        _grad_enabled.reset(token)
    if not create_graph:
        rows_per_out = [tuple(b.detach() for b in r) for r in rows_per_out]
    if out_tuple:
        return tuple(r if in_tuple else r[0] for r in rows_per_out)
    r = rows_per_out[0]
    return r if in_tuple else r[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    in_tuple, ins = _tuple_in(inputs)

    def first(*xs):
        out = func(*xs)
        _, outs = _tuple_out(out)
        if len(outs) != 1 or outs[0]._data.size != 1:
            raise errors.RuntimeError("The function given to hessian should return a single Tensor with a single "
                                      "element.")
        g = jacobian(func, xs if in_tuple else xs[0], create_graph=True, strict=strict)
        return g

    res = jacobian(first, ins if in_tuple else ins[0], create_graph=create_graph, strict=strict)
    return res


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    in_tuple, ins = _tuple_in(inputs)
    ins = _prepare(ins, create_graph)
    out_tuple, outs = _tuple_out(_call(func, ins))
    vs = _validate_v(v, outs, "vjp")
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
    gs = tuple(_zeros(x) if g is None else (g if create_graph else g.detach()) for g, x in zip(gs, ins))
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return (outs if out_tuple else outs[0]), (gs if in_tuple else gs[0])


def _validate_v(v, outs, name):
    if v is None:
        if len(outs) != 1 or outs[0]._data.size != 1:
            raise errors.RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                      "Tensor with a single element.")
        return (Tensor._make(np.ones(outs[0]._data.shape, outs[0]._dtype.np), outs[0]._dtype),)
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if len(vs) != len(outs):
        raise errors.RuntimeError(f"v is a tuple of invalid length: should be {len(outs)} but got {len(vs)}.")
    for o, g in zip(outs, vs):
        if g._data.shape != o._data.shape:
            raise errors.RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] has "
                                      f"a shape of {o.shape}.")
    return vs


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """J v by the double-backward trick: differentiate u ↦ vjp(u) with respect to u."""
    in_tuple, ins = _tuple_in(inputs)
    ins = _prepare(ins, create_graph)
    if v is None:
        if len(ins) != 1 or ins[0]._data.size != 1:
            raise errors.RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                      "single Tensor with a single element.")
        vs = (Tensor._make(np.ones(ins[0]._data.shape, ins[0]._dtype.np), ins[0]._dtype),)
    else:
        vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    out_tuple, outs = _tuple_out(_call(func, ins))
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
    in_tuple, ins = _tuple_in(inputs)
    ins = _prepare(ins, create_graph)
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    out_tuple, outs = _tuple_out(_call(func, ins))
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
