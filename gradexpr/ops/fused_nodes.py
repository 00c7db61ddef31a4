"""Backward kernels that ATen records as ONE node with several outputs under ``create_graph``.

``native_batch_norm_backward`` and ``convolution_backward`` return the gradients of every input
at once; differentiated again they are one ``NativeBatchNormBackwardBackward0`` /
``ConvolutionBackwardBackward0`` node whose outputs are those gradients (``gx.grad_fn is
gw.grad_fn``) and whose edges are the kernel's inputs. gradexpr builds such a node from the
custom-Function machinery (one node, numbered outputs, saved tensors, create_graph), named and
printed as ATen's: the forward is the NumPy kernel, the backward formulas are Tensor ops, so a
third derivative works. The entries' formulas reach them through ``fused(...)`` below.
"""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def _node_base():
    from ..autograd_function import BackwardCFunction

    class AtenMultiOutputNode(BackwardCFunction):
        """A multi-output node printed as ATen's nodes print (not as a custom Function's)."""

        def __repr__(self):
            return f"<{self.name()} object at {hex(id(self))}>"

        def __getattr__(self, attribute):
            """``_saved_<name>``: the argument ATen's node keeps under that name (``names``)."""
            if attribute.startswith("_saved_"):
                from ..saved_attributes import fused_saved_value
                return fused_saved_value(self, attribute[7:], attribute)
            raise AttributeError(f"'{self.name()}' object has no attribute '{attribute}'")

    return AtenMultiOutputNode


def node_class(name, forward, backward, names=()):
    """A Function whose ``apply`` records one node called ``name``: ``forward(*args)`` gives the
    outputs (grad mode off), ``backward(ctx, *grads)`` the inputs' gradients (None grads stay None;
    the tensor arguments are ``ctx.saved_tensors`` in order, the others ``ctx.params`` at their
    positions). ``names``: ATen's name for each argument (None: not one its node shows)."""
    from ..autograd_function import Function, _FunctionOp

    def setup_context(ctx, inputs, output):
        ctx.set_materialize_grads(False)
        tensor = [hasattr(a, "_data") for a in inputs]
        ctx.save_for_backward(*(a for a, t in zip(inputs, tensor) if t))
        ctx.params = tuple(None if t else a for a, t in zip(inputs, tensor))
        ctx.tensor_args = tuple(tensor)

    cls = type(name, (Function,), {"forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
                                   "backward": staticmethod(backward), "__module__": "torch.autograd.function"})
    cls._backward_cls = type(name, (_node_base(),), {"_forward_cls": cls, "_record": _FunctionOp(name),
                                                      "_aten_names": tuple(names),
                                                      "__module__": "torch.autograd.function"})
    return cls
