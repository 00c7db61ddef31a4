"""``torch.nn.functional`` with PyTorch's signatures (and the bare ``torch.X`` variants)."""
from __future__ import annotations

import warnings

from . import ops as D
from . import dtypes, errors
from . import functions as T
from .inplace_engine import apply_inplace
from .op import apply
from .tensor import Tensor


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        sa = True if size_average is None else size_average
        rd = True if reduce is None else reduce
        return "none" if not rd else ("mean" if sa else "sum")
    D._check_reduction(reduction)
    return reduction


def _implicit_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    T._wrap_dim(dim, input.dim())
    return apply(D.softmax, (input,), {"dim": int(dim)})       # as given: the node shows a negative dim raw


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    T._wrap_dim(dim, input.dim())
    return apply(D.log_softmax, (input,), {"dim": int(dim)})   # as given: the node shows a negative dim raw


def torch_softmax(input, dim=None, dtype=None):
    if dim is None:
        raise T._missing("softmax", "dim")
    return softmax(input, dim, dtype=dtype)


def torch_log_softmax(input, dim=None, dtype=None):
    if dim is None:
        raise T._missing("log_softmax", "dim")
    return log_softmax(input, dim, dtype=dtype)


# torch.softmax / torch.log_softmax are ATen ops (their parser takes axis=), F.softmax is not
torch_softmax = T._numpy_names(torch_softmax, "softmax")
torch_log_softmax = T._numpy_names(torch_log_softmax, "log_softmax")


def _inplace(entry, input, args=(), params=None):
    """``F.op(x, inplace=True)``: the op written into ``x``, whose node then reads ``x`` as its result."""
    out = apply_inplace(entry, input, args, params or {})
    T._save_inplace_result(out)
    return out


def relu(input, inplace=False):
    return _inplace(D.relu, input) if inplace else apply(D.relu, (input,))


def relu6(input, inplace=False):
    return apply(D.hardtanh, (input,), {"min_val": 0, "max_val": 6})


def leaky_relu(input, negative_slope=0.01, inplace=False):
    params = {"negative_slope": negative_slope} if negative_slope != 0.01 else {}
    if inplace:
        return _inplace(D.leaky_relu_inplace, input, (), params)
    return apply(D.leaky_relu, (input,), params)


def elu(input, alpha=1.0, inplace=False):
    params = {"alpha": alpha} if alpha != 1.0 else {}
    if inplace:
        return _inplace(D.elu_inplace, input, (), params)
    return apply(D.elu, (input,), params)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise errors.RuntimeError(f"approximate argument must be either none or tanh.")
    return apply(D.gelu, (input,), {"approximate": approximate} if approximate != "none" else {})


def softplus(input, beta=1.0, threshold=20.0):
    params = {}
    if beta != 1:
        params["beta"] = beta
    if threshold != 20:
        params["threshold"] = threshold
    return apply(D.softplus, (input,), params)


def silu(input, inplace=False):
    return _inplace(D.silu, input) if inplace else apply(D.silu, (input,))


def sigmoid(input):
    return T.sigmoid(input)


def tanh(input):
    return T.tanh(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise errors.ValueError("min_val cannot be greater than max_val")
    return apply(D.hardtanh, (input,), {"min_val": min_val, "max_val": max_val})


def logsigmoid(input):
    return apply(D.log_sigmoid, (input,))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is None:
        return input / T.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    from .surface import write_out
    denom = T.norm(input, p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    return write_out(out, "div", (input, denom), lambda: T.div(input, denom))      # torch.div(input, denom, out=out)


def _check_same(input, target, name):
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.")


def _broadcast_pair(input, target):
    """Losses broadcast input and target (PyTorch warns; the message of a mismatch is the usual one), as
    torch.broadcast_tensors does: a tensor already of the common shape is passed on as it is (ATen's
    expand_outplace), the other expanded."""
    if input._data.shape == target._data.shape:
        return input, target
    from .op import _check_broadcast
    _check_broadcast([input._data, target._data])
    shape = T.np.broadcast_shapes(input._data.shape, target._data.shape)
    return tuple(t if t._data.shape == shape else t.expand(shape) for t in (input, target))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r = _reduction(size_average, reduce, reduction)
    input, target = _broadcast_pair(input, target)
    return apply(D.mse_loss, (input, target), {"reduction": r} if r != "mean" else {})


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r = _reduction(size_average, reduce, reduction)
    loss = (input - target).abs()
    if r == "mean":
        return loss.mean()
    if r == "sum":
        return loss.sum()
    return loss


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    r = _reduction(size_average, reduce, reduction)
    if beta == 0:
        return l1_loss(input, target, reduction=r)
    input, target = _broadcast_pair(input, target)
    params = {"reduction": r} if r != "mean" else {}
    if beta != 1.0:
        params["beta"] = beta
    return apply(D.smooth_l1_loss, (input, target), params)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    D._check_reduction(reduction)
    input, target = _broadcast_pair(input, target)
    params = {"reduction": reduction} if reduction != "mean" else {}
    if delta != 1.0:
        params["delta"] = delta
    return apply(D.huber_loss, (input, target), params)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise errors.ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                                f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if input._dtype.category == 2 and target._dtype is not input._dtype:
        raise errors.RuntimeError(f"Found dtype {target._dtype._scalar_name} but expected "
                                  f"{input._dtype._scalar_name}")
    params = {"reduction": r} if r != "mean" else {}
    if weight is not None:
        params["weight"] = weight.expand(input.shape)._data
    return apply(D.binary_cross_entropy, (input, target), params)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    r = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise errors.ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    params = {"reduction": r} if r != "mean" else {}
    if weight is not None:
        params["weight"] = T.wrap(weight)
    if pos_weight is not None:
        params["pos_weight"] = T.wrap(pos_weight)
    return apply(D.binary_cross_entropy_with_logits, (input, target), _to_arrays(params))


def _to_arrays(params):
    # weights are constants of the loss (as in PyTorch, no gradient flows into them here)
    return {k: (v._data if isinstance(v, Tensor) else v) if k in ("weight", "pos_weight") else v
            for k, v in params.items()}


def torch_binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    # the bare torch.binary_cross_entropy_with_logits does not reduce unless asked (checked on 2.13)
    names = {0: "none", 1: "mean", 2: "sum"}
    return binary_cross_entropy_with_logits(input, target, weight, reduction=names.get(reduction, reduction),
                                            pos_weight=pos_weight)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _nll_loss_nd(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def _nll_loss_nd(input, target, weight, r, ignore_index):
    """ATen's nll_loss_nd: 1-D and 2-D inputs use nll_loss, others nll_loss2d on an (N, C, 1, -1) view."""
    shape, target_shape = input._data.shape, target._data.shape       # (read once: .shape makes a Size)
    n = len(shape)
    if n < 1:
        raise errors.ValueError(f"Expected 1 or more dimensions (got {n})")
    if n != 1 and (not target_shape or target_shape[0] != shape[0]):
        raise errors.ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size "
                                f"({target.shape[0]}).")
    if n <= 2 and len(target_shape) > 1:     # nll_loss's shape checks come before its kernel's dtype check
        raise errors.RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target._dtype not in (dtypes.int64, dtypes.uint8):
        raise errors.RuntimeError(f"expected target dtype to be Long or Byte, but got {target._dtype._scalar_name}")
    classes = shape[0 if n == 1 else 1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise errors.RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes "
                                  f"but got weight tensor of shape: {list(weight.shape)}")
    if weight is not None and weight._dtype is not input._dtype:     # (the kernel reads weight as input's type)
        raise errors.RuntimeError(f"expected scalar type {input._dtype._scalar_name} but found "
                                  f"{weight._dtype._scalar_name}")
    params = {}
    if r != "mean":
        params["reduction"] = r
    if ignore_index != -100:
        params["ignore_index"] = ignore_index
    if weight is not None:
        params["weight"] = weight._data
    if n <= 2:
        return apply(D.nll_loss, (input, target), params)
    if n == 4:
        return apply(D.nll_loss2d, (input, target), params)
    out_size = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise errors.RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    flat_in = input.contiguous().view(input.shape[0], classes, 1, -1)
    flat_target = target.contiguous().view(target.shape[0], 1, -1)
    out = apply(D.nll_loss2d, (flat_in, flat_target), params)
    return out.view(out_size) if r == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """ATen's composition: probability targets, label smoothing, or nll_loss of log_softmax."""
    r = _reduction(size_average, reduce, reduction)
    class_dim = 0 if input._data.ndim == 1 else 1
    if input._data.shape == target._data.shape:           # class probabilities
        if target._dtype.category != 2:
            raise errors.RuntimeError(f"Expected floating point type for target with class probabilities, got "
                                      f"{target._dtype._scalar_name}")
        if ignore_index >= 0:
            raise errors.RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(input, target, weight, r, label_smoothing, class_dim)
    if label_smoothing > 0:
        if label_smoothing > 1:
            raise errors.RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _cross_entropy_smoothed(input, target, weight, r, ignore_index, label_smoothing, class_dim)
    return _nll_loss_nd(log_softmax(input, class_dim), target, weight, r, ignore_index)


def _weight_view(weight, ndim, class_dim):
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probabilities(input, target, weight, r, label_smoothing, class_dim):
    classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise errors.RuntimeError(f"cross_entropy: weight tensor should be defined either for all {classes} classes "
                                  f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0:
        if label_smoothing > 1:
            raise errors.RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        # ATen's target * (1 - label_smoothing) + label_smoothing / n_classes: mul.Scalar, then add.Scalar
        target = apply(D.add_scalar, (apply(D.mul_scalar, (target,), {"other": 1 - label_smoothing}),),
                       {"other": label_smoothing / classes})
    terms = logp * target
    if weight is not None:
        terms = terms * (_weight_view(weight, input.dim(), 1) if input.dim() > 1 else weight)
    if r == "mean":
        if input.numel() == 0:
            return -terms.sum() * float("nan")
        return apply(D.div_scalar, (-terms.sum(),), {"other": input.numel() // classes})
    return -terms.sum() if r == "sum" else -terms.sum(class_dim)


def _cross_entropy_smoothed(input, target, weight, r, ignore_index, label_smoothing, class_dim):
    logp = log_softmax(input, class_dim)
    nll = _nll_loss_nd(logp, target, weight, r, ignore_index)
    classes = input.shape[class_dim]
    if weight is not None:
        smooth = -(logp * _weight_view(weight, input.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignored = target == ignore_index
    smooth = smooth.masked_fill_(ignored, 0.0)
    if r == "mean":
        if weight is not None:
            total = weight.gather(0, target.masked_select(~ignored).flatten()).sum()
        else:
            total = (~ignored).sum()
        smooth = smooth.sum() / total
    elif r == "sum":
        smooth = smooth.sum()
    return apply(D.add, (apply(D.mul_scalar, (nll,), {"other": 1 - label_smoothing}),
                         apply(D.mul_scalar, (smooth,), {"other": label_smoothing / classes})))


def linear(input, weight, bias=None):
    """ATen's linear: addmm for a 2-D input with bias, a flattened addmm for contiguous inputs with a
    1-D bias, else matmul then an in-place add (hence the node names)."""
    if input.dim() == 0 or weight.dim() == 0:
        raise errors.RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D "
                                  f"and {weight.dim()}D")
    if bias is not None:
        if input.dim() == 2:
            return T.addmm(bias, input, weight.t())
        if input._data.flags.c_contiguous and (input.dim() == 3 or bias.dim() == 1):
            folded = input.reshape(int(T.np.prod(input.shape[:-1])), input.shape[-1])
            out = T.addmm(bias, folded, weight.t())
            return out.view(tuple(input.shape[:-1]) + (out.shape[1],))
    out = T.matmul(input, weight.t())
    if bias is not None:
        out = out.add_(bias)
    return out


def bilinear(input1, input2, weight, bias=None):
    from .nn import functional
    return functional.bilinear(input1, input2, weight, bias)


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0 or p > 1:
        raise errors.ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    from . import rng as _random
    from .composites.random_functions import _drawn      # under vmap: a factory of the sample's shape
    mask = _drawn(lambda s: Tensor._make(_random.dropout_mask(s, p, input._dtype.name), input._dtype),
                  tuple(input._data.shape))
    if inplace:
        return _inplace(D.dropout, input, (mask,))
    if p == 1:
        return input * mask
    return apply(D.dropout, (input, mask))


def torch_dropout(input, p=None, train=None):
    if p is None or train is None:
        raise errors.TypeError('dropout() missing 2 required positional argument: "p", "train"')
    return dropout(input, p, train)


def one_hot(tensor, num_classes=-1):
    a = tensor._data
    if tensor._dtype is not dtypes.int64:
        raise errors.RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1 and a.size == 0:
        raise errors.RuntimeError("Can not infer total number of classes from empty tensor.")
    if a.size and a.min() < 0:
        raise errors.RuntimeError("Class values must be non-negative.")
    n = int(a.max()) + 1 if num_classes == -1 else num_classes
    if a.size and a.max() >= n:
        raise errors.RuntimeError("Class values must be smaller than num_classes.")
    from .limits import check_elements
    check_elements(a.shape + (n,))
    return T.Tensor._make((tensor._data[..., None] == T.np.arange(n)).astype(T.np.int64), dtypes.int64)


_PAD_HELP = ("Supported combinations for non-constant padding:\n"
             "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
             "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
             "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """F.pad: constant_pad_nd, or the reflection / replication pads, or the circular composite."""
    from .ops import nn_layers as L
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise errors.RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise errors.RuntimeError("Padding length should be less than or equal to two times the input dimension "
                                  f"but got padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        return apply(D.constant_pad_nd, (input,), {"pad": pad, "value": 0.0 if value is None else float(value)})
    if mode not in ("reflect", "replicate", "circular"):
        raise errors.NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise errors.RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if input.dim() not in (k + 1, k + 2):
        raise errors.NotImplementedError(f"Padding size {len(pad)} is not supported for {input.dim()}D input "
                                         f"tensor.\n{_PAD_HELP}")
    if mode == "circular":
        return _pad_circular(input, pad)
    for i in range(k):
        dim = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (left >= input.shape[dim] or right >= input.shape[dim]):
            raise errors.RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                                      f"dimension, but got: padding ({left}, {right}) at dimension {dim} of input "
                                      f"{list(input.shape)}")
    entry = getattr(L, f"{mode}_pad{k}d")
    return apply(entry, (input,), {"pad": pad})


def _pad_circular(input, pad):
    """ATen's _pad_circular: the input copied into the middle, then each padded dimension's ends
    copied from the opposite side (so the graph ends in CopySlices, as PyTorch's)."""
    k = len(pad) // 2
    shape = list(input.shape)
    for i in range(k):
        dim = input.dim() - 1 - i
        if pad[2 * i] > shape[dim] or pad[2 * i + 1] > shape[dim]:
            raise errors.RuntimeError("Padding value causes wrapping around more than once.")
        shape[dim] += pad[2 * i] + pad[2 * i + 1]
    out = T.zeros(shape, dtype=input.dtype)
    core = [slice(None)] * input.dim()
    for i in range(k):
        dim = input.dim() - 1 - i
        core[dim] = slice(pad[2 * i], shape[dim] - pad[2 * i + 1])
    out[tuple(core)] = input
    for i in range(k):
        dim = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left > 0:
            out.narrow(dim, 0, left).copy_(out.narrow(dim, shape[dim] - right - left, left))
        if right > 0:
            out.narrow(dim, shape[dim] - right, right).copy_(out.narrow(dim, left, right))
    return out


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """ATen's composite: each input divided by its 2-norm (a clone clamped to ``eps`` outside the
    graph), multiplied, summed over ``dim``."""
    from .graph import no_grad
    common = dtypes.result_type((x1, x2))
    if common.category != 2:
        raise errors.RuntimeError("expected common dtype to be floating point, yet common dtype is "
                                  f"{common.name.capitalize() if common.name != 'int64' else 'Long'}")
    import numpy as np
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    if x1.dtype is not common:
        x1 = x1.to(common)
    if x2.dtype is not common:
        x2 = x2.to(common)
    n1 = T.vector_norm(x1, 2, dim=dim, keepdim=True).clone()
    n2 = T.vector_norm(x2, 2, dim=dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)
