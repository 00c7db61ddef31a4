"""What a graph node saved, as a program reads it: ``y.grad_fn._saved_self``, ``_saved_result``,
``_saved_exponent``, ``_saved_self_sym_sizes`` … and ``_raw_saved_*`` (the saved tensor itself).

The names are the parameters of the op's backward formulas (the op table names them as PyTorch's
derivatives.yaml does), so ``_saved_<name>`` reads the node's saved context; a few values are
shown the way PyTorch stores them (sizes and strides as tuples, the reduction enum's number, a
list of dims as a tuple).
"""
from __future__ import annotations

import weakref

import numpy as np

from . import errors
from .graph import _RELEASED, SECOND_BACKWARD, SavedTensor, SavedTensors
from .ops.common import EveryDim
from .saved_hooks import RawSavedTensor

_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}
_SCALAR_SAVED = frozenset({("PowBackward2", "self")})
# nodes whose op takes ``dim`` as a list (PyTorch shows a tuple even for one dim)
_DIM_LIST_NODES = frozenset(("SumBackward1", "MeanBackward1", "LogsumexpBackward0", "AmaxBackward0",
                             "AminBackward0", "NansumBackward0"))


class DefaultCorrection(int):
    """var()/std() called with no argument at all compute with correction 1, but ATen's node keeps none (None)."""


# stand-ins for optional tensors a call did not give (by id; an entry goes when its tensor does)
_ABSENT = weakref.WeakValueDictionary()


def absent(t):
    """Mark ``t`` as the stand-in for an optional tensor the call did not give (layer_norm's weight,
    clamp's max): the op computes with it, and the node shows ``_saved_<name>`` as None, as PyTorch's
    node does for the undefined tensor it keeps."""
    _ABSENT[id(t)] = t
    return t


def is_absent(t) -> bool:
    """Whether ``t`` stands for an optional tensor the call did not give (``absent``)."""
    return _ABSENT.get(id(t)) is t


def _derived_saved(saved, key):
    """``X_sym_sizes`` / ``X_sym_strides`` / ``X_sym_numel`` of what the node saved of input X."""
    for suffix in ("_sym_sizes", "_sym_strides", "_sym_numel"):
        if key.endswith(suffix):
            base = key[:-len(suffix)]
            break
    else:
        return None
    shape = saved.get(base + "_shape")
    v = saved.get(base)
    if shape is None and type(v) is SavedTensor:
        shape = v.tensor._data.shape
    if shape is None:
        return None
    shape = tuple(int(s) for s in shape)
    if suffix == "_sym_sizes":
        return shape
    if suffix == "_sym_numel":
        n = 1
        for d in shape:
            n *= d
        return n
    if type(v) is not SavedTensor:
        return None
    data = v.tensor._data
    return tuple(int(st) // data.itemsize for st in data.strides)



def _saved_entry(node, key, attribute):
    saved = node._saved
    if saved is _RELEASED:
        return _released_value(node, key)
    derived = _derived_saved(saved, key)
    if derived is not None:
        return derived
    if key in saved:
        return saved[key]
    params = _formula_parameters(node)
    if key in params:
        # a parameter left at its default (add's alpha), or a tensor this call did not need (None)
        return params[key]
    raise errors.AttributeError(f"'{node.type_name()}' object has no attribute '{attribute}'")

def _freed():
    return errors.RuntimeError(SECOND_BACKWARD, hint="pass retain_graph=True to the first backward()")


def _live(node):
    """What the node still knows: its saved values, or once backward freed them, its call's parameters."""
    saved = node._saved
    return saved if saved is not _RELEASED else (getattr(node, "_params", None) or {})


def _released_value(node, key):
    """After backward freed the node's tensors, PyTorch's node still shows its numbers (dims, scalars,
    sizes); a tensor fails with the second-backward error."""
    params = getattr(node, "_params", None) or {}
    if key in params:
        return params[key]
    op = node._op
    for suffix in ("_sym_sizes", "_sym_numel", "_sym_strides"):
        base = key[:-len(suffix)]
        if key.endswith(suffix) and base in getattr(op, "inputs", ()):
            shape, dtype = node._meta[op.inputs.index(base)]
            if dtype is not None:
                shape = tuple(int(s) for s in shape)
                if suffix == "_sym_strides":        # (the strides of the input as laid out row-major)
                    return tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape)))
                return shape if suffix == "_sym_sizes" else int(np.prod(shape, dtype=np.int64))
    if key in getattr(op, "inputs", ()) or key == "result":
        raise _freed()
    if getattr(op, "formulas", None) and key in op._any_optional:
        return _formula_parameters(node)[key]          # a parameter left at its default
    raise _freed()


def _formula_parameters(node):
    """The names the op's formulas read, with their defaults (None where there is none)."""
    out = {}
    for f in getattr(node._op, "formulas", {}).values():
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        names = code.co_varnames[:code.co_argcount]
        defaults = f.__defaults__ or ()
        first_default = len(names) - len(defaults)
        for i, a in enumerate(names):
            if a != "grad" and a not in out:
                out[a] = defaults[i - first_default] if i >= first_default else None
    return out

# ---------------------------------------------------------------- as PyTorch shows them
# PyTorch's int64 fields (dims, indices, sizes) print as unsigned: a saved -1 reads 18446744073709551615
# (its Scalars, alpha or min_val, print signed)
_INT64_FIELDS = frozenset(("dim", "dims", "dim0", "dim1", "dim2", "index", "ignore_index", "padding_idx", "start",
                           "end", "step", "shifts", "split_size", "source_dim", "offset", "repeats", "diagonal",
                           "dimension"))
_U64 = 1 << 64
# nodes whose op takes ``dim`` as a list (PyTorch shows a tuple even for one dim), beyond the sums
_DIM_TUPLE_NODES = frozenset(("VarBackward0", "StdBackward0", "VarMeanBackward0", "StdMeanBackward0",
                              "LinalgVectorNormBackward0"))


def _upsample_scales(nd):
    """The upsampling nodes keep one scale per dim (``scales_h``, ``scales_w`` …; ``scales`` in 1-d)."""
    names = ("scales",) if nd == 1 else ("scales_d", "scales_h", "scales_w")[3 - nd:]
    return {name: (lambda i: lambda n, s: s["scales"][i])(i) for i, name in enumerate(names)}


# values PyTorch saves that gradexpr's formulas do not read (constants of the op, or the same
# value under PyTorch's name): node -> {name: f(node, saved)}
_PRESENTED = {
    **{node: {"scale": lambda n, s: _selu_constant(n, "SELU_SCALE", 1), "input_scale": lambda n, s: 1,
              "alpha": lambda n, s: _selu_constant(n, "SELU_ALPHA", s.get("alpha", 1.0))}
       for node in ("EluBackward0", "EluBackward1")},
    "NormBackward1": {"p": lambda n, s: s["ord"]},
    **{node: {"result1": lambda n, s: s["indices"]}
       for node in ("MaxPool2DWithIndicesBackward0", "MaxPool3DWithIndicesBackward0", "AdaptiveMaxPool2DBackward0",
                    "AdaptiveMaxPool3DBackward0")},
    **{f"Upsample{kind}{k}DBackward{order}": _upsample_scales(k) for order in ("0", "Backward0")
       for kind in ("Nearest", "NearestExact", "Linear", "Bilinear", "Trilinear") for k in (1, 2, 3)},
    **{f"{mode}Pad{k}DBackward{order}": {"padding": lambda n, s: tuple(s["pad"])} for order in ("0", "Backward0")
       for mode in ("Reflection", "Replication") for k in (1, 2, 3)},
    "NativeBatchNormBackward0": {"result1": lambda n, s: _batch_stat(n, s, "save_mean"),
                                 "result2": lambda n, s: _batch_stat(n, s, "save_invstd")},
    "NativeGroupNormBackward0": {"result1": lambda n, s: _group_norm_stat(n, s, "mean"),
                                 "result2": lambda n, s: _group_norm_stat(n, s, "rstd")},
    "LinalgSvdBackward0": {"S": lambda n, s: _as_output(n, s["S"]) if "S" in s else _singular_values(n, s),
                           "U": lambda n, s: _as_output(n, s["U"]), "Vh": lambda n, s: _as_output(n, s["Vh"]),
                           "full_matrices": lambda n, s: bool(s.get("full_matrices", False)),
                           "S_sym_argsize_minus_1": lambda n, s: int(_as_output(n, s["U"]).shape[-1])},
    "GatherBackward0": {"sparse_grad": lambda n, s: False},
    "EmbeddingBackward0": {"scale_grad_by_freq": lambda n, s: s.get("scale_grad_by_freq", False),
                           "sparse": lambda n, s: False,
                           "weight_sym_argsize_0": lambda n, s: int(s["weight_shape"][0]),
                           "padding_idx": lambda n, s: -1 if s.get("padding_idx") is None else s["padding_idx"]},
    "ConvolutionBackward0": {"transposed": lambda n, s: n._op.name.startswith("convolution_transposed"),
                             "output_padding": lambda n, s: tuple(s.get("output_padding", (0,) * len(s["stride"]))),
                             "bias_sym_sizes_opt": lambda n, s: _conv_bias_size(n, s)},
    # torch.diag of a matrix: the diagonal's copy, kept as diagonal(offset, 0, 1) keeps it
    "DiagonalBackward0_copy": {"offset": lambda n, s: s.get("diagonal", 0), "dim1": lambda n, s: 0,
                               "dim2": lambda n, s: 1},
    "LinalgInvExBackward0": {"inverse": lambda n, s: s["result"]},
    "StdMeanBackward0": {"result0": lambda n, s: s["result"]},
    "NllLossBackward0": {"total_weight": lambda n, s: _total_weight(n, s)},
    # index_add keeps the source's number of dims when the source needs a gradient
    "IndexAddBackward0": {"source_dim": lambda n, s: len(n._meta[2][0])},
    "NativeLayerNormBackward0": {"normalized_shape": lambda n, s: _layer_norm_stat(n, s, "shape"),
                                 "result1": lambda n, s: _layer_norm_stat(n, s, "mean"),
                                 "result2": lambda n, s: _layer_norm_stat(n, s, "rstd")},
    "LinalgDetBackward0": {"LU": lambda n, s: _lu(n, s, 0), "pivots": lambda n, s: _lu(n, s, 1)},
    "LinalgSlogdetBackward0": {"LU": lambda n, s: _lu(n, s, 0), "pivots": lambda n, s: _lu(n, s, 1),
                               "sign": lambda n, s: _slogdet_sign(n, s)},
    "LinalgSolveExBackward0": {"LU": lambda n, s: _lu(n, s, 0, transposed=False),
                               "pivots": lambda n, s: _lu(n, s, 1, transposed=False)},
    "LinalgCholeskyExBackward0": {"L": lambda n, s: s["result"]},
    "LinalgLstsqBackward0": {"self": lambda n, s: s["A"], "b": lambda n, s: s["B"]},
    "LinalgLuFactorExBackward0": {"LU": lambda n, s: s["result"], "pivot": lambda n, s: True},
    "LinalgLuBackward0": {"P": lambda n, s: _lu_permutation(n, s), "pivot": lambda n, s: True},
    "LuUnpackBackward0": {"LU_data_sym_argsize_minus_1": lambda n, s: int(s["LU_data_shape"][-1]),
                          "LU_data_sym_argsize_minus_2": lambda n, s: int(s["LU_data_shape"][-2])},
}


def _selu_constant(node, name, otherwise):
    """selu is ATen's elu(x, alpha, scale): its EluBackward0 keeps selu's two constants."""
    if not node._op.name.startswith("selu"):
        return otherwise
    from .ops import nn_activations
    return getattr(nn_activations, name)


def _as_output(node, value):
    """A value the node keeps that is one of its op's outputs: shown with the node as its grad_fn."""
    from .tensor import Tensor
    t = value.unpack(node) if type(value) is SavedTensor else value
    return Tensor._make(t._data, t._dtype, requires_grad=True, grad_fn=node)


def _batch_stat(node, saved, name):
    """native_batch_norm's batch mean / invstd (result1 / result2): empty in evaluation mode, as ATen's."""
    from .tensor import Tensor
    if saved.get("training", True):
        return saved[name]
    x = saved["input"].unpack(node)
    return Tensor._make(np.zeros(0, x._data.dtype), x._dtype)


def _singular_values(node, saved):
    """svdvals' output S (a node that keeps only U and Vh, as gradexpr's svdvals entry): A's singular values;
    linalg.svd's node keeps S itself."""
    from .tensor import Tensor
    from .ops.linalg_orthogonal import _svdvals
    A = saved["A"].unpack(node)
    return _as_output(node, Tensor._make(_svdvals(A._data, compute_uv=True)[0], A._dtype))


def _group_norm_stat(node, saved, which):
    """native_group_norm's other outputs: per (sample, group), the mean (result1) and 1/sqrt(var + eps)
    (result2) of the input's group, outputs of the node as PyTorch shows them."""
    from .tensor import Tensor
    x = saved["input"].unpack(node)
    rows = x._data.reshape(saved.get("N", 1), saved.get("group", 1), -1).astype(np.float64)
    mean = rows.mean(axis=2)
    value = mean if which == "mean" else 1.0 / np.sqrt(((rows - mean[..., None]) ** 2).mean(axis=2)
                                                           + saved.get("eps", 1e-5))
    return _as_output(node, Tensor._make(value.astype(x._data.dtype), x._dtype))


def _conv_bias_size(node, saved):
    """The bias's size a convolution node keeps: its output channels ((0,) without a bias)."""
    weight_shape = saved.get("weight_shape")
    if weight_shape is None:        # the weight needs no gradient: its shape is the saved weight's
        weight = saved["weight"]
        weight_shape = (weight.unpack(node) if type(weight) is SavedTensor else weight).shape
    if node._op.name == "convolution":
        return (int(weight_shape[0]),)
    if node._op.name == "convolution_transposed":
        return (int(weight_shape[1]) * saved["groups"],)
    return (0,)


def _layer_norm_stat(node, saved, which):
    """What native_layer_norm saves besides its inputs: the normalized shape and, per normalized
    row, the mean (result1) and 1/sqrt(var + eps) (result2) it computed in the input's dtype."""
    from .tensor import Tensor
    x = saved["input"].unpack(node)
    k = saved.get("normalized_ndim", 1)
    if which == "shape":
        return tuple(int(d) for d in x._data.shape[x._data.ndim - k:])
    from .ops.nn_layers import layer_norm_stats
    mean, rstd = layer_norm_stats(x._data, k, saved.get("eps", 1e-5))
    return Tensor._make(mean if which == "mean" else rstd, x._dtype)


def _lu(node, saved, which, transposed=None):
    """The LU factorisation linalg.det and slogdet keep (of Aᵀ for a C-contiguous A), or linalg.solve's (of A
    itself: ``transposed=False``): packed LU, or the int32 pivots, as LAPACK gave it PyTorch."""
    from .ops.linalg_lu_decomposition import lu_packed
    from .tensor import Tensor
    A = saved["A"].unpack(node)
    part = lu_packed(A._data, transposed)[which]
    return Tensor._make(part, A._dtype if which == 0 else None)


def _lu_permutation(node, saved):
    """linalg.lu's P (gradexpr's node finds it again from A)."""
    from .ops.linalg_lu_decomposition import _pivoting_of
    return _pivoting_of(saved["A"].unpack(node))


def _slogdet_sign(node, saved):
    """slogdet's first output, the sign of det A (its formula reads only A), shown as the node's output."""
    from .ops.linalg_lu_decomposition import _slogdet
    from .tensor import Tensor
    A = saved["A"].unpack(node)
    return _as_output(node, Tensor._make(_slogdet(A._data)[0], A._dtype))


def _total_weight(node, saved):
    """nll_loss's total weight: the summed weight of the targets not ignored."""
    from .tensor import Tensor
    if saved.get("reduction", "mean") in ("none", 0):      # no reduction: ATen leaves it 0
        self = saved["self"].unpack(node)
        return Tensor._make(np.zeros((), self._data.dtype), self._dtype)
    target = saved["target"].unpack(node)._data
    self = saved["self"].unpack(node)
    ignore = saved.get("ignore_index", -100)
    kept = target != ignore
    weight = saved.get("weight")
    if type(weight) is SavedTensor:
        weight = weight.unpack(node)
    if weight is None:
        total = kept.sum()
    else:
        w = np.asarray(weight._data if isinstance(weight, Tensor) else weight)
        total = w[np.where(kept, target, 0)][kept].sum()
    return Tensor._make(np.asarray(total, dtype=self._data.dtype), self._dtype)


def _presented(node, key, attribute):
    """What PyTorch shows for ``key`` on ``node``: the saved value, reshaped where PyTorch keeps it
    another way, or a value PyTorch keeps and gradexpr's formulas do not need."""
    name = node._op.node
    extra = _PRESENTED.get(name)
    if extra is not None and key in extra:
        saved = node._saved
        if saved is _RELEASED:          # a constant or one of the call's numbers still shows; a tensor is gone
            try:
                return extra[key](node, _live(node))
            except (KeyError, AttributeError, TypeError):
                raise _freed() from None
        return extra[key](node, saved)
    if name == "SelectBackward0" and key in ("dim", "index"):
        return _select_from_getitem(node, key, attribute)
    if (name == "SliceBackward0" and key in ("dim", "start", "end", "step")) or (name == "UnsqueezeBackward0"
                                                                               and key == "dim"):
        return _step_from_getitem(node, key, attribute)
    if name == "IndexBackward0" and key == "indices":
        return _advanced_indices(node, attribute)
    if name == "RollBackward0" and key in ("dims", "shifts"):
        v = _saved_entry(node, key, attribute)
        return () if v is None else (v,) if type(v) is int else tuple(v)
    v = _saved_entry(node, key, attribute)
    if key == "correction" and type(v) is DefaultCorrection:
        return None     # x.var() with no arguments at all: PyTorch saves no correction
    if type(v) is EveryDim:
        return ()
    if key == "dim" and type(v) is int and name in _DIM_TUPLE_NODES:
        return (v,)
    return v


def _select_from_getitem(node, key, attribute):
    """``m[i]``, ``m[:, i]``: the node of an int index is select's, whose dim and index are that int's."""
    saved = _live(node)
    if "dim" in saved or key not in ("dim", "index") or type(saved.get("index")) is not tuple:
        return _saved_entry(node, key, attribute)
    for d, i in enumerate(saved["index"]):
        if type(i) is int:
            return d if key == "dim" else i
    return _saved_entry(node, key, attribute)


_INT64_MAX = (1 << 63) - 1       # a slice's end not given, as ATen keeps it


def _step_from_getitem(node, key, attribute):
    """``m[:, 1:]``, ``m[..., None]``: each step of a basic index is its own node, whose index ends with
    the step's own entry; a slice's dim/start/end/step (end not given: INT64_MAX), None's new dim."""
    saved = _live(node)
    index = saved.get("index")
    if key in saved or type(index) is not tuple or not index:
        return _saved_entry(node, key, attribute)
    last = index[-1]
    if last is None:
        return len(index) - 1
    dim = sum(1 for i in index[:-1] if i is not None)
    return {"dim": dim, "start": last.start or 0, "end": _INT64_MAX if last.stop is None else last.stop,
            "step": last.step or 1}[key]


def _advanced_indices(node, attribute):
    """``m[:, t]``: PyTorch's ``indices``, a tensor per indexed dim (None for a full slice), up to the last."""
    from .tensor import Tensor
    index = _saved_entry(node, "index", attribute)
    out = []
    for i in index if type(index) is tuple else (index,):
        if isinstance(i, np.ndarray):
            out.append(Tensor._make(i))
        elif isinstance(i, Tensor):
            out.append(i)
        elif isinstance(i, slice):
            out.append(None)
    while out and out[-1] is None:
        out.pop()
    return tuple(out)


def _unsigned(key, v):
    if key not in _INT64_FIELDS:
        return v
    if type(v) is int and v < 0:
        return v + _U64
    if type(v) is tuple and any(type(e) is int and e < 0 for e in v):
        return tuple(e + _U64 if type(e) is int and e < 0 else e for e in v)
    return v


def _check_declared(node, key, attribute):
    """PyTorch's node of this kind has no such attribute (its node classes declare what they save:
    node_attributes.py): AttributeError, as PyTorch's, whatever gradexpr's formulas keep."""
    declared = _declared(node._op.node)
    if declared is not None and key not in declared:
        raise errors.AttributeError(f"'{node.type_name()}' object has no attribute '{attribute}'")


_DECLARED = {}


def _declared(name):
    names = _DECLARED.get(name)
    if names is None:
        from .node_attributes import SAVED
        listed = SAVED.get(name)
        names = _DECLARED[name] = False if listed is None else frozenset(listed.split())
    return names if names is not False else None


def saved_value(node, key, attribute):
    _check_declared(node, key, attribute)
    return _unsigned(key, _shown(node, key, attribute))


def _shown(node, key, attribute):
    v = _presented(node, key, attribute)
    tv = type(v)
    if tv is SavedTensor:
        if _ABSENT.get(id(v.tensor)) is v.tensor:
            return None
        t = v.unpack(node)
        if t._wrapped and (node._op.node, key) in _SCALAR_SAVED:
            return t._data.item()       # a Python number PyTorch's overload takes as a Scalar
        return t
    if tv is SavedTensors:
        return tuple(x.unpack(node) for x in v)
    if tv is tuple and key.endswith(("_sym_sizes", "_sym_strides")):
        return tuple(int(s) for s in v)
    if tv is np.ndarray:
        from .tensor import Tensor
        return Tensor._make(v)                  # a tensor argument the op took as an array (running_mean)
    if key == "reduction" and tv is str:
        return _REDUCTION_ENUM.get(v, v)        # PyTorch saves the enum's value
    if key == "dim" and type(v) is int and node._op.node in _DIM_LIST_NODES:
        return (v,)                             # these ops take a list of dims
    return v

def fused_saved_value(node, key, attribute):
    """``_saved_<key>`` of a fused ATen node (ops/fused_nodes.py): the argument its class names ``key``,
    shown as the other nodes' values are (an absent tensor as None, an array as a tensor); a
    convolution's output_padding is worked out from the shapes."""
    _check_declared(node, key, attribute)
    names = type(node)._aten_names
    saved = node._saved_list
    if node._saved is _RELEASED:
        raise errors.RuntimeError(SECOND_BACKWARD, hint="pass retain_graph=True to the first backward()")
    args, k = [], 0
    for is_tensor, param in zip(node.tensor_args, node.params):
        if is_tensor:
            args.append(saved[k])
            k += 1
        else:
            args.append(param)
    values = dict(zip(names, args))
    if key == "output_padding" and "transposed" in values:
        return _conv_output_padding(node, values)
    if key not in values:
        raise errors.AttributeError(f"'{node.type_name()}' object has no attribute '{attribute}'")
    v = values[key]
    if type(v) is SavedTensor:
        if _ABSENT.get(id(v.tensor)) is v.tensor:
            return None
        return v.unpack(node)
    if type(v) is np.ndarray:
        from .tensor import Tensor
        return Tensor._make(v)
    return _unsigned(key, tuple(v) if type(v) is list else v)


def _conv_output_padding(node, values):
    """What a transposed convolution added past its computed output size (0s for a convolution)."""
    stride = values["stride"]
    if not values["transposed"]:
        return (0,) * len(stride)
    from .ops.nn_layers import transposed_size
    grad, x, w = (values[k].tensor for k in ("grad_output", "input", "weight"))
    size = transposed_size(x._data.shape[2:], w._data.shape[2:], stride, values["padding"], (0,) * len(stride),
                           values["dilation"])
    return tuple(int(o - t) for o, t in zip(grad._data.shape[2:], size))


def raw_saved_value(node, key, attribute):
    _check_declared(node, key, attribute)
    from .saved_hooks import RawSavedTensor
    if node._saved is _RELEASED and (key in getattr(node._op, "inputs", ()) or key == "result"):
        return RawSavedTensor(None, node)        # PyTorch's node keeps the emptied SavedVariable
    v = _saved_entry(node, key, attribute)
    if type(v) is SavedTensor:
        return RawSavedTensor(v, node)
    if type(v) is SavedTensors:
        return tuple(RawSavedTensor(x, node) for x in v)
    raise errors.AttributeError(f"'{node.type_name()}' object has no attribute '{attribute}'")
