"""The recurrent cells (``torch/nn/modules/rnn.py``): RNNCell, LSTMCell, GRUCell, and the sequence
code the full layers (``recurrent_layers.py``: RNN, LSTM, GRU) run.

The modules are PyTorch's Python (parameters made and initialised in its order, hence its seeded
numbers; its checks and printing). The computation is ATen's CPU path (aten/src/ATen/native/RNN.cpp)
written with torch calls, so the nodes and the order of every matmul and add are PyTorch's:
a cell is ``linear_hh(h).add_(linear_ih(x))`` then its gates (LSTM and GRU split the gates with
``unsafe_chunk`` and apply the nonlinearities in place); a full layer computes ``linear_ih`` over the
whole sequence first, unbinds it, runs the cell step by step (backwards for the reverse direction)
and stacks the outputs; layers are stacked with dropout between them, directions concatenated."""
from __future__ import annotations

import math
import numbers

from .. import errors
from .. import functions as T
from .. import nn_functional as NF
from . import init
from .module import Module
from .parameter import Parameter


def _unsafe_chunk(t, chunks):
    from ..ops.nn_recurrent import unsafe_chunk
    return unsafe_chunk(t, chunks, 1)


# ============================================================ the cells (ATen's SimpleCell, LSTMCell, GRUCell)
def _simple_cell(nonlinearity):
    def cell(x, h, w_ih, w_hh, b_ih, b_hh, projected=False):
        gates = NF.linear(h, w_hh, b_hh).add_(x if projected else NF.linear(x, w_ih, b_ih))
        return gates.tanh() if nonlinearity == "tanh" else gates.relu()
    return cell


rnn_tanh_cell, rnn_relu_cell = _simple_cell("tanh"), _simple_cell("relu")


def lstm_cell(x, hidden, w_ih, w_hh, b_ih, b_hh, projected=False):
    hx, cx = hidden
    gates = NF.linear(hx, w_hh, b_hh).add_(x if projected else NF.linear(x, w_ih, b_ih))
    ingate, forgetgate, cellgate, outgate = _unsafe_chunk(gates, 4)
    ingate, forgetgate = ingate.sigmoid_(), forgetgate.sigmoid_()
    cellgate, outgate = cellgate.tanh_(), outgate.sigmoid_()
    cy = (forgetgate * cx).add_(ingate * cellgate)
    hy = outgate * cy.tanh()
    return hy, cy


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh, projected=False):
    igates = _unsafe_chunk(x if projected else NF.linear(x, w_ih, b_ih), 3)
    hgates = _unsafe_chunk(NF.linear(h, w_hh, b_hh), 3)
    reset_gate = hgates[0].add_(igates[0]).sigmoid_()
    input_gate = hgates[1].add_(igates[1]).sigmoid_()
    new_gate = igates[2].add(hgates[2].mul_(reset_gate)).tanh_()
    return (h - new_gate).mul_(input_gate).add_(new_gate)


# ============================================================ the sequence (ATen's FullLayer, stacked layers)
def _full_layer(cell, inputs, hidden, params, reverse):
    """One direction of one layer over the sequence: ``linear_ih`` of all steps at once (the CPU path),
    then the cell step by step; the outputs stacked, and the last hidden state."""
    w_ih, w_hh, b_ih, b_hh = params
    steps = NF.linear(inputs, w_ih, b_ih).unbind(0)
    outputs = []
    for x in (reversed(steps) if reverse else steps):
        hidden = cell(x, hidden, w_ih, w_hh, b_ih, b_hh, projected=True)
        outputs.append(hidden[0] if isinstance(hidden, tuple) else hidden)
    if reverse:
        outputs.reverse()
    return T.stack(outputs, 0), hidden


def run_layers(cell, input, hiddens, params, num_layers, dropout, train, bidirectional, batch_first):
    """ATen's _rnn_impl: ``hiddens``/``params`` one per layer and direction; (output, last hiddens)."""
    if batch_first:
        input = input.transpose(0, 1)
    directions = 2 if bidirectional else 1
    finals = []
    layer_input = input
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            out, last = _full_layer(cell, layer_input, hiddens[k], params[k], reverse=d == 1)
            outs.append(out)
            finals.append(last)
        layer_input = outs[0] if directions == 1 else T.cat(outs, outs[0].dim() - 1)
        if dropout != 0 and train and layer < num_layers - 1:
            layer_input = NF.dropout(layer_input, dropout, True)
    if batch_first:
        layer_input = layer_input.transpose_(0, 1)
    return layer_input, finals


# ============================================================ the modules
def _uniform_reset(module):
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


def _factory(device, dtype):
    from .linear import _factory as factory
    return factory(device, dtype)


class RNNCellBase(Module):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory = _factory(device, dtype)
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(T.empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(T.empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(T.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(T.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        _uniform_reset(self)

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def _batched(self, input, hx):
        """(input with a batch dim, hx likewise, whether it had one): the cells' checks."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise errors.ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise errors.ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = T.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx)
        if self.nonlinearity == "tanh":
            ret = rnn_tanh_cell(input, hx, *self._weights())
        elif self.nonlinearity == "relu":
            ret = rnn_relu_cell(input, hx, *self._weights())
        else:
            raise errors.RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class GRUCell(RNNCellBase):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx)
        ret = gru_cell(input, hx, *self._weights())
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise errors.ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise errors.ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D "
                                            "instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = T.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        hy, cy = lstm_cell(input, hx, *self._weights())
        return (hy, cy) if is_batched else (hy.squeeze(0), cy.squeeze(0))


__all__ = NAMES = "RNNCellBase RNNCell LSTMCell GRUCell".split()
