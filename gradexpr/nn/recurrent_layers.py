"""The full recurrent layers (``torch/nn/modules/rnn.py``): RNNBase and RNN, LSTM, GRU, their
parameters named, made and initialised in PyTorch's order, their checks and printing; the
computation is ``recurrent.run_layers`` over the cells (ATen's CPU path)."""
from __future__ import annotations

import numbers

from .. import errors
from .. import functions as T
from .. import nn_functional as NF
from .module import Module
from .parameter import Parameter
from . import recurrent as R

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        factory = R._factory(device, dtype)
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise errors.ValueError("dropout should be a number in range [0, 1] representing the probability of "
                                    "an element being zeroed")
        if dropout > 0 and num_layers == 1:
            from ..warn import warn
            warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                 f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        self._check_sizes(bias, batch_first, input_size, hidden_size, num_layers, proj_size)
        if mode not in _GATES:
            raise errors.ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input_size = input_size if layer == 0 else hidden_size * directions
                params = [Parameter(T.empty((gate_size, layer_input_size), **factory)),
                          Parameter(T.empty((gate_size, hidden_size), **factory))]
                biases = [Parameter(T.empty(gate_size, **factory)), Parameter(T.empty(gate_size, **factory))]
                suffix = "_reverse" if direction == 1 else ""
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"] + (["bias_ih_l{}{}", "bias_hh_l{}{}"] if bias else [])
                names = [n.format(layer, suffix) for n in names]
                for name, param in zip(names, params + biases if bias else params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @staticmethod
    def _check_sizes(bias, batch_first, input_size, hidden_size, num_layers, proj_size):
        if not isinstance(bias, bool):
            raise errors.TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise errors.TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise errors.TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise errors.ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise errors.TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise errors.ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise errors.ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise errors.ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise errors.ValueError("proj_size has to be smaller than hidden_size")
        if proj_size:           # (LSTM's projections are not written yet: refused rather than ignored)
            raise errors.NotImplementedError("gradexpr: LSTM(proj_size=...) is not supported")

    def reset_parameters(self):
        R._uniform_reset(self)

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def _layer_params(self):
        """(w_ih, w_hh, b_ih, b_hh) per layer and direction, as ATen's gather_params pairs them."""
        flat = [getattr(self, n) for n in self._flat_weights_names]
        step = 4 if self.bias else 2
        groups = [flat[i:i + step] for i in range(0, len(flat), step)]
        return [tuple(g) if self.bias else (g[0], g[1], None, None) for g in groups]

    def _expected_hidden_size(self, input):
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def _check_input(self, input):
        weight = getattr(self, self._flat_weights_names[0])
        if input.dtype != weight.dtype:
            raise errors.ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                                    f"Convert input: input.to({weight.dtype}), or convert model: "
                                    f"model.to({input.dtype})")
        if input.dim() != 3:
            raise errors.RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise errors.RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                                      f"{input.size(-1)}")

    def _check_hidden(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected:
            raise errors.RuntimeError(msg.format(expected, list(hx.size())))

    def _batched(self, input, name):
        if input.dim() not in (2, 3):
            raise errors.ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                    + ("tensor instead" if name == "RNN" else "instead"))
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        return (input if is_batched else input.unsqueeze(batch_dim)), is_batched, batch_dim

    def _zeros(self, input):
        return T.zeros(*self._expected_hidden_size(input), dtype=input.dtype)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _run(self, cell, input, hiddens):
        return R.run_layers(cell, input, hiddens, self._layer_params(), self.num_layers, self.dropout, self.training,
                            self.bidirectional, self.batch_first)


class _SingleStateRNN(RNNBase):
    """RNN and GRU: one hidden state tensor."""

    def _forward(self, input, hx, cell, name):
        input, is_batched, batch_dim = self._batched(input, name)
        if not is_batched and hx is not None:
            if hx.dim() != 2:
                raise errors.RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                          "tensor")
            hx = hx.unsqueeze(1)
        elif is_batched and hx is not None and hx.dim() != 3:
            raise errors.RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(input)
        self._check_input(input)
        self._check_hidden(hx, self._expected_hidden_size(input))
        output, finals = self._run(cell, input, hx.unbind(0))
        hidden = T.stack(finals, 0)
        if not is_batched:
            output, hidden = output.squeeze(batch_dim), hidden.squeeze(1)
        return output, hidden


class RNN(_SingleStateRNN):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise errors.ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise errors.ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        cell = R.rnn_tanh_cell if self.mode == "RNN_TANH" else R.rnn_relu_cell
        return self._forward(input, hx, cell, "RNN")


class GRU(_SingleStateRNN):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise errors.ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, R.gru_cell, "GRU")


class LSTM(RNNBase):
    __module__ = "torch.nn.modules.rnn"

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        input, is_batched, batch_dim = self._batched(input, "LSTM")
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        elif is_batched and (hx[0].dim() != 3 or hx[1].dim() != 3):
            raise errors.RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                      f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        elif not is_batched:
            if hx[0].dim() != 2 or hx[1].dim() != 2:
                raise errors.RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                          f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self._check_input(input)
        expected = self._expected_hidden_size(input)
        self._check_hidden(hx[0], expected, "Expected hidden[0] size {}, got {}")
        self._check_hidden(hx[1], expected, "Expected hidden[1] size {}, got {}")
        if input.dtype.name == "float32" and input.numel():        # (ATen's use_mkldnn)
            output, h_n, c_n = self._onednn(input, hx[0], hx[1])
        else:
            output, finals = self._run(R.lstm_cell, input, list(zip(hx[0].unbind(0), hx[1].unbind(0))))
            h_n, c_n = T.stack([h for h, _ in finals], 0), T.stack([c for _, c in finals], 0)
        if not is_batched:
            output, h_n, c_n = output.squeeze(batch_dim), h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)

    def _onednn(self, input, hx, cx):
        """PyTorch's float32 CPU path (mkldnn_rnn): one mkldnn_rnn_layer per layer and direction."""
        from ..ops.nn_recurrent import lstm_layer
        if self.batch_first:
            input = input.transpose(0, 1)
        layer_input = input.contiguous()
        directions = 2 if self.bidirectional else 1
        params = self._layer_params()
        hys, cys = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                k = layer * directions + d
                w_ih, w_hh, b_ih, b_hh = params[k]
                if b_ih is None:        # (the layer takes zeros for the biases a model has not)
                    b_ih, b_hh = T.zeros(w_ih.shape[0], dtype=w_ih.dtype), T.zeros(w_hh.shape[0], dtype=w_hh.dtype)
                out, hy, cy = lstm_layer(layer_input, w_ih, w_hh, b_ih, b_hh, hx.select(0, k), cx.select(0, k), d == 1)
                outs.append(out)
                hys.append(hy)
                cys.append(cy)
            layer_input = outs[0] if directions == 1 else T.cat(outs, -1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                layer_input = NF.dropout(layer_input, self.dropout, True)
        output = layer_input.transpose(0, 1) if self.batch_first else layer_input
        return output, T.stack(hys, 0), T.stack(cys, 0)


__all__ = NAMES = "RNNBase RNN LSTM GRU".split()
