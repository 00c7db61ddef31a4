"""The op ATen's recurrent cells add beyond the table: ``unsafe_split`` (``Tensor.unsafe_chunk``),
which gives copies rather than views of its input so that the cells may change the gates in place
(``chunk[0].sigmoid_()``), recorded as one ``UnsafeSplitBackward0`` node for all its outputs."""
from __future__ import annotations

import numpy as np

from .common import _F
from .registry import op
from .shape import _slice, _slice_grad, _split_grad, _split_sizes

unsafe_split_part = op("unsafe_split", "UnsafeSplitBackward0",
                       lambda a, dim, start, end: np.array(_slice(a, dim, start, end)),
                       self=_slice_grad, dtype="first", domain="real", forward_ad="linear")
unsafe_split_outputs = op("unsafe_split_outputs", "UnsafeSplitBackward0", None, outputs="*", domain="real",
                          self=lambda grad, self_shape, dim, split_size: _split_grad(
                              grad, self_shape, dim, _split_sizes(self_shape[dim], split_size)))


def unsafe_chunk(input, chunks, dim):
    """``input.unsafe_chunk(chunks, dim)``: equal parts (the last smaller), not views."""
    from ..op import apply, share_node
    d = dim % input.dim()
    size = input.shape[d]
    step = -(-size // chunks)
    parts = [apply(unsafe_split_part, (input,), {"dim": d, "start": i, "end": min(i + step, size)})
             for i in range(0, size, step)]
    return tuple(share_node(unsafe_split_outputs, (input,), {"dim": d, "split_size": step}, parts))


# ============================================================ PyTorch's float32 LSTM layer on CPU (oneDNN)
# A float32 LSTM runs each layer and direction as one mkldnn_rnn_layer call: one node
# (MkldnnRnnLayerBackward0) for the layer's output, last hidden and last cell state. The values are
# computed here as ATen's LSTM cell computes them (oneDNN's own float32 sums may differ in the last bit);
# the gradient is the LSTM's back-propagation through time, written with Tensor ops.
_LSTM_INPUTS = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_")


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _lstm_layer(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse):
    """(output, hy, cy) of one LSTM layer direction over ``input`` (steps, batch, features)."""
    with np.errstate(over="ignore"):
        projected = input @ w_ih.T + b_ih
        h, c = hx, cx
        outputs = [None] * input.shape[0]
        for t in (range(input.shape[0] - 1, -1, -1) if reverse else range(input.shape[0])):
            gates = h @ w_hh.T + b_hh + projected[t]
            i, f, g, o = np.split(gates, 4, axis=1)
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = _sigmoid(o) * np.tanh(c)
            outputs[t] = h
    dtype = input.dtype
    return (np.stack(outputs).astype(dtype, copy=False), h.astype(dtype, copy=False), c.astype(dtype, copy=False))


def _lstm_part(k):
    return lambda input, weight0, weight1, weight2, weight3, hx_, cx_, reverse: _lstm_layer(
        input, weight0, weight1, weight2, weight3, hx_, cx_, reverse)[k]


def _lstm_layer_backward(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, output_mask=None):
    """The seven inputs' gradients from the (output, hy, cy) gradients (None where none came)."""
    F = _F()
    g_out, g_hy, g_cy = grads
    steps = input.shape[0]
    order = list(range(steps - 1, -1, -1)) if reverse else list(range(steps))
    projected = input.matmul(weight0.t()) + weight2
    h, c, saved = hx_, cx_, {}
    for t in order:
        i, f, g, o = (h.matmul(weight1.t()) + weight3 + projected[t]).chunk(4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        saved[t] = (h, c, i, f, g, o)
        c = f * c + i * g
        saved[t] += (c.tanh(),)
        h = o * saved[t][-1]
    dh = g_hy if g_hy is not None else F.zeros_like(hx_)
    dc = g_cy if g_cy is not None else F.zeros_like(cx_)
    d_gates = [None] * steps
    for t in reversed(order):
        h_prev, c_prev, i, f, g, o, tanh_c = saved[t]
        if g_out is not None:
            dh = dh + g_out[t]
        dc = dc + dh * o * (1 - tanh_c * tanh_c)
        d_gates[t] = F.cat([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                            dh * tanh_c * o * (1 - o)], 1)
        dh = d_gates[t].matmul(weight1)
        dc = dc * f
    gates = F.stack(d_gates, 0)
    rows = gates.flatten(0, 1)
    previous = F.stack([saved[t][0] for t in range(steps)], 0).flatten(0, 1)
    d_bias = rows.sum(0)
    return (gates.matmul(weight0), rows.t().matmul(input.flatten(0, 1)), rows.t().matmul(previous), d_bias, d_bias,
            dh, dc)


def _lstm_formulas(single=None):
    """The formula of every input: the joint backward, told which gradient came (``single``: the one
    output a part entry stands for)."""
    def formula(grad, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, output_mask=None):
        grads = grad if single is None else tuple(grad if k == single else None for k in range(3))
        return _lstm_layer_backward(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, output_mask)
    return {name: formula for name in _LSTM_INPUTS}


mkldnn_rnn_layer_output, mkldnn_rnn_layer_hy, mkldnn_rnn_layer_cy = (
    op(f"mkldnn_rnn_layer_{part}", "MkldnnRnnLayerBackward0", _lstm_part(k), _LSTM_INPUTS, dtype="first",
       broadcast=False, domain="real", **_lstm_formulas(k)) for k, part in enumerate(("output", "hy", "cy")))
mkldnn_rnn_layer = op("mkldnn_rnn_layer", "MkldnnRnnLayerBackward0", None, _LSTM_INPUTS, outputs=("", "", ""),
                      domain="real", **_lstm_formulas())


def lstm_layer(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse):
    """One float32 LSTM layer direction as PyTorch's oneDNN path records it: (output, hy, cy)."""
    from ..op import apply, share_node
    args = (input, w_ih, w_hh, b_ih, b_hh, hx, cx)
    params = {"reverse": bool(reverse)}
    parts = [apply(entry, args, params) for entry in (mkldnn_rnn_layer_output, mkldnn_rnn_layer_hy,
                                                      mkldnn_rnn_layer_cy)]
    return tuple(share_node(mkldnn_rnn_layer, args, params, parts))
