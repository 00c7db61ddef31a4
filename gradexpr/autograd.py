"""``backward`` and ``grad``: the user-facing entry points of the backward engine."""
from __future__ import annotations

import numpy as np

from . import errors
from .graph import run_backward
from .tensor import Size, Tensor


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs, create_graph):
    """Seed gradients: given ones checked against their outputs, implicit ones only for scalars."""
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None and i < len(grad_outputs) else None
        if g is None:
            if out._requires_grad and out._data.size != 1:
                raise errors.RuntimeError("grad can be implicitly created only for scalar outputs",
                                          hint="pass gradient= (a tensor shaped like the output), or reduce the "
                                               "output first, e.g. y.sum().backward()")
            if not out._dtype.is_floating_point and out._requires_grad:
                raise errors.RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                          f"{out._dtype}")
            g = Tensor._make(np.ones(out._data.shape, out._dtype.np), out._dtype)
        else:
            if not isinstance(g, Tensor):
                raise errors.TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            if g._data.shape != out._data.shape:
                raise errors.RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} "
                                          f"and output[{i}] has a shape of {Size(out._data.shape)}.")
            if g._dtype is not out._dtype and out._dtype.is_floating_point:
                g = g.to(out._dtype)
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    outputs = _as_tuple(tensors)
    gts = _as_tuple(grad_tensors) if not isinstance(grad_tensors, Tensor) else (grad_tensors,)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise errors.RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _make_grads(outputs, gts, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(outputs, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs,
                 accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise errors.RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for i, t in enumerate(ins):
        if not isinstance(t, Tensor):
            raise errors.TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise errors.RuntimeError("One of the differentiated Tensors does not require grad")
    gos = _as_tuple(grad_outputs) if not isinstance(grad_outputs, Tensor) else (grad_outputs,)
    grads = _make_grads(outs, gos, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    result = run_backward(outs, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=ins,
                          accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        result = tuple(g if g is not None else Tensor._make(np.zeros(t._data.shape, t._dtype.np), t._dtype)
                       for g, t in zip(result, ins))
    return result
