"""``torch.nn.functional`` with PyTorch's signatures (and the bare ``torch.X`` variants)."""
from __future__ import annotations

import warnings

from . import derivatives as D
from . import dtypes, errors
from . import functions as T
from .op import apply, apply_inplace
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
    return apply(D.softmax, (input,), {"dim": T._wrap_dim(dim, input.dim())})


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return apply(D.log_softmax, (input,), {"dim": T._wrap_dim(dim, input.dim())})


def torch_softmax(input, dim, dtype=None):
    return softmax(input, dim, dtype=dtype)


def torch_log_softmax(input, dim, dtype=None):
    return log_softmax(input, dim, dtype=dtype)


def relu(input, inplace=False):
    return apply_inplace(D.relu, input) if inplace else apply(D.relu, (input,))


def relu6(input, inplace=False):
    return T.clamp(input, 0.0, 6.0)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return apply(D.leaky_relu, (input,), {"negative_slope": negative_slope} if negative_slope != 0.01 else {})


def elu(input, alpha=1.0, inplace=False):
    return apply(D.elu, (input,), {"alpha": alpha} if alpha != 1.0 else {})


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
    return apply(D.silu, (input,))


def sigmoid(input):
    return T.sigmoid(input)


def tanh(input):
    return T.tanh(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return T.clamp(input, min_val, max_val)


def logsigmoid(input):
    return -softplus(-input)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    return input / T.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)


def _check_same(input, target, name):
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r = _reduction(size_average, reduce, reduction)
    if input.shape != target.shape:
        shape = T.np.broadcast_shapes(input._data.shape, target._data.shape)
        input, target = input.expand(shape), target.expand(shape)
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
    params = {"reduction": r} if r != "mean" else {}
    if beta != 1.0:
        params["beta"] = beta
    return apply(D.smooth_l1_loss, (input, target), params)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    return smooth_l1_loss(input, target, reduction=reduction, beta=delta) * delta


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise errors.ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                                f"({input.shape}) is deprecated. Please ensure they have the same size.")
    params = {"reduction": r} if r != "mean" else {}
    if weight is not None:
        params["weight"] = weight.expand(input.shape)._data
        return apply(D.binary_cross_entropy, (input, target), params)
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


def torch_binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    names = {0: "none", 1: "mean", 2: "sum"}
    return binary_cross_entropy_with_logits(input, target, weight, reduction=names.get(reduction, reduction),
                                            pos_weight=pos_weight)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    if target._dtype.category != 1:
        raise errors.RuntimeError(f"expected scalar type Long but found {T._cap_dtype(target._dtype)}")
    if input.dim() > 1 and target.shape[0] != input.shape[0]:
        raise errors.ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                                f"({target.shape[0]}).")
    params = {}
    if r != "mean":
        params["reduction"] = r
    if ignore_index != -100:
        params["ignore_index"] = ignore_index
    if weight is not None:
        params["weight"] = weight
        params["weight"] = weight._data
    return apply(D.nll_loss, (input, target), params)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    r = _reduction(size_average, reduce, reduction)
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    if target._dtype.category == 2:       # class probabilities
        loss = -(logp * target)
        if weight is not None:
            shape = [1] * input.dim()
            shape[class_dim] = -1
            loss = loss * weight.view(shape)
        loss = loss.sum(class_dim)
        return loss.mean() if r == "mean" else loss.sum() if r == "sum" else loss
    if label_smoothing:
        n = input.shape[class_dim]
        nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=r)
        smooth = -logp.sum(class_dim)
        smooth = smooth.mean() if r == "mean" else smooth.sum() if r == "sum" else smooth
        return (1 - label_smoothing) * nll + label_smoothing / n * smooth
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=r)


def linear(input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        return T.addmm(bias, input, weight.t())
    out = T.matmul(input, weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    raise errors.NotImplementedError("bilinear is not supported in gradexpr")


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0 or p > 1:
        raise errors.ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    from . import random as _random
    mask = Tensor._make(_random.dropout_mask(input._data.shape, p, input._dtype.name), input._dtype)
    if p == 1:
        return input * mask
    return apply(D.dropout, (input, mask))


def torch_dropout(input, p, train):
    return dropout(input, p, train)


def one_hot(tensor, num_classes=-1):
    n = int(tensor._data.max()) + 1 if num_classes == -1 else num_classes
    return T.Tensor._make((tensor._data[..., None] == T.np.arange(n)).astype(T.np.int64), dtypes.int64)


def pad(input, pad, mode="constant", value=0.0):
    raise errors.NotImplementedError("F.pad is not supported in gradexpr")
