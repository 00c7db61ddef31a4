"""The ``torch.nn.functional`` losses beyond ``nn_functional.py``'s, as PyTorch writes them: the native
ones over ``ops/nn_losses.py``, the ATen composites (kl_div, margin_ranking, hinge_embedding,
cosine_embedding, poisson_nll, triplet_margin, pairwise_distance) and the Python ones
(gaussian_nll, multilabel_soft_margin) with the same steps, so they record PyTorch's nodes."""
from __future__ import annotations

import math

import numpy as np

from .. import errors
from .. import functions as T
from .. import nn_functional as NF
from ..op import apply
from ..warn import warn
from .. import ops as D
from ..ops import nn_losses as L


def _reduction(size_average, reduce, reduction):
    return NF._reduction(size_average, reduce, reduction)


def _apply_reduction(loss, reduction):
    """ATen's apply_loss_reduction."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _plus(t, value):
    """C++'s ``Tensor + Scalar`` (add.Scalar, AddBackward1)."""
    return apply(D.add_scalar, (t,), {"other": value})


def _minus(t, value):
    """C++'s ``Tensor - Scalar`` (sub.Scalar, SubBackward1)."""
    return apply(D.sub_scalar, (t,), {"other": value})


def _times(value, t):
    """C++'s ``Scalar * Tensor`` (mul.Scalar, MulBackward1)."""
    from .. import ops
    return apply(ops.mul_scalar, (t,), {"other": value})


def _scalar_minus(value, t):
    """C++'s ``Scalar - Tensor`` (empty_like(t).fill_(value).sub_(t)): one SubBackward0 node."""
    return T.full_like(t, value) - t


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        r = _reduction(size_average, reduce, "mean")
    else:
        if reduction == "mean":
            warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                 "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                 "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
        r = "sum" if reduction == "batchmean" else _reduction(None, None, reduction)
    # ATen's `a op b` with both operands calls: GCC evaluates them right to left, so the right one's
    # node is made first (and runs last in the backward pass)
    if log_target:
        difference = target - input
        output = target.exp() * difference
    else:
        product = target * input
        output = apply(D.xlogy, (target, target)) - product
    reduced = _apply_reduction(output, r)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise errors.RuntimeError("margin_ranking_loss : All input tensors should have same dimension but got "
                                  f"sizes: input1: {input1.size()}, input2: {input2.size()}, target: "
                                  f"{target.size()} ")
    output = _plus(-target * (input1 - input2), margin).clamp_min_(0)
    return _apply_reduction(output, r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    zeros = T.zeros_like(input)
    margin_clamp = _scalar_minus(margin, input).clamp_min_(0)
    output_margin = T.where(target != 1, margin_clamp, zeros)
    output_self = T.where(target != -1, input, zeros)
    return _apply_reduction(output_margin + output_self, r)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    return apply(L.soft_margin_loss, (input, target), {"reduction": r})


_EPSILON = 1e-12


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise errors.RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise errors.RuntimeError("1D target tensor expects 2D input tensors, but found inputs with sizes "
                                  f"{list(input1.shape)} and {list(input2.shape)}.")
    if targ_dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise errors.RuntimeError("0D target tensor expects 1D input tensors, but found inputs with sizes "
                                  f"{list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = _plus((input1 * input1).sum(targ_dim), _EPSILON)
    mag_square2 = _plus((input2 * input2).sum(targ_dim), _EPSILON)
    denom = (mag_square1 * mag_square2).sqrt_()
    cos = prod_sum / denom
    zeros = T.zeros_like(cos)
    pos = _scalar_minus(1, cos)
    neg = _minus(cos, margin).clamp_min_(0)
    output_pos = T.where(target == 1, pos, zeros)
    output_neg = T.where(target == -1, neg, zeros)
    return _apply_reduction(output_pos + output_neg, r)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, "mean")
    if reduction not in ("none", "mean", "sum"):
        raise errors.ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * _plus(input, eps).log()
    if full:
        stirling = target * target.log() - target + _times(0.5, _times(2 * math.pi, target).log())
        loss += stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise errors.ValueError("var has negative entry/entries")
        var = var * T.ones_like(input)
    elif bool((var < 0).any()):
        raise errors.ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise errors.ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise errors.ValueError(reduction + " is not valid")
    var = var.clone()
    from ..graph import no_grad
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, "mean")
    loss = -(target * NF.logsigmoid(input) + (1 - target) * NF.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise errors.ValueError(reduction + " is not valid")
    return _apply_reduction(loss, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    innermost = max(x1.dim(), x2.dim()) - 1
    return apply(L.norm_dim, (_plus(x1 - x2, eps),), {"ord": float(p), "dim": (innermost,), "keepdim": keepdim})


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise errors.ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise errors.RuntimeError("The anchor, positive, and negative tensors are expected to have the same number "
                                  f"of dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, "
                                  f"and negative {negative.dim()}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = T.min(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction((_plus(dist_pos, margin) - dist_neg).clamp_min(0), r)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """As torch/nn/functional.py writes it, with torch calls: any distance function (a program's own too)."""
    if reduction not in ("mean", "sum", "none"):
        raise errors.ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise errors.ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                                "instead")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise errors.RuntimeError("The anchor, positive, and negative tensors are expected to have the same number "
                                  f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
                                  f"{n_dim}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = T.minimum(dist_neg, distance_function(positive, negative))
    loss = T.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return T.sum(loss)
    if reduction == "mean":
        return T.mean(loss)
    return loss


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """``F.linear_cross_entropy`` as torch/nn/functional.py computes it without ``options`` (its chunked
    path): ``cross_entropy(linear(input, W, b).reshape(N, C, *out_features), target)``."""
    if options is not None:
        raise errors.NotImplementedError("linear_cross_entropy(options=...) (the chunked path) is not supported in "
                                         "gradexpr")
    if input.dim() < 1 or input.dim() > 2:
        raise errors.RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise errors.RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise errors.RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                                  f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise errors.RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                                  f"{tuple(linear_bias.shape)}")
    if len(out_features) > 0 and len(num_batches) == 0:
        raise errors.RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
                                  f"requires batched input, (N, {in_features}), got unbatched input with shape "
                                  f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise errors.RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = NF.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return NF.cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                            label_smoothing=label_smoothing)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """``F.ctc_loss`` as ATen's ``ctc_loss``: ``_ctc_loss`` (CtcLossBackward0) per sample, inf set to zero
    with ``zero_infinity``, then the mean of the losses divided by the target lengths (at least 1), or
    their sum."""
    import numpy as _np
    from ..ops import nn_losses as LS
    if reduction not in ("mean", "sum", "none"):
        raise errors.ValueError(f"{reduction} is not a valid value for reduction")
    is_batched = log_probs.dim() == 3
    lp = log_probs if is_batched else log_probs.unsqueeze(1)

    def lengths(v, name):
        if isinstance(v, T.Tensor):
            return [int(x) for x in v._data.reshape(-1)]
        return [int(x) for x in v]
    il, tl = lengths(input_lengths, "input_lengths"), lengths(target_lengths, "target_lengths")
    tg = targets._data.astype(_np.int64) if isinstance(targets, T.Tensor) else _np.asarray(targets, _np.int64)
    T_, N = lp.shape[0], lp.shape[1]
    if len(il) != N:
        raise errors.RuntimeError(f"input_lengths must be of size batch_size")
    if len(tl) != N:
        raise errors.RuntimeError(f"target_lengths must be of size batch_size")
    for b in range(N):
        if il[b] < 0 or il[b] > T_:
            raise errors.RuntimeError(f"Expected input_lengths to have value at most {T_}, but got value {il[b]} "
                                      f"(while checking arguments for ctc_loss_cpu)")
        if tg.ndim == 2 and tl[b] > tg.shape[1]:
            raise errors.RuntimeError(f"Expected tensor to have size at least {tl[b]} at dimension 1, but got size "
                                      f"{tg.shape[1]} for argument #2 'targets' (while checking arguments for "
                                      "ctc_loss_cpu)")
    res = apply(LS.ctc_loss, (lp,), {"targets": tg, "input_lengths": il, "target_lengths": tl, "blank": int(blank),
                                     "zero_infinity": bool(zero_infinity)})
    if zero_infinity:
        res = T.where(res == float("inf"), T.zeros((), dtype=res.dtype), res)
    if reduction == "mean":
        return (res / T.tensor(tl, dtype=res.dtype).clamp_min(1)).mean()
    if reduction == "sum":
        return res.sum()
    return res if is_batched else res.squeeze(0)


def _check_targets(input, target, name):
    if input.dim() > 2 or (input.dim() == 2 and input.shape[0] == 0):
        raise errors.RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                                  f"{list(input.shape)}")
    if target.dtype.is_floating_point:
        raise errors.RuntimeError(f"expected scalar type Long but found {target.dtype._scalar_name}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise errors.ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise errors.ValueError("weight must be one-dimensional")
    _check_targets(input, target, "multi_margin_loss")
    classes = input.shape[-1] if input.dim() else 1
    t = np.asarray(target._data).reshape(-1)
    if t.size and (t.min() < 0 or t.max() >= classes):
        raise errors.RuntimeError("target out of range")
    params = {"p": p, "margin": margin, "reduction": r}
    if weight is not None:
        params["weight"] = weight._data
    return apply(L.multi_margin_loss, (input, target), params)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(size_average, reduce, reduction)
    _check_targets(input, target, "multilabel_margin_loss")
    if tuple(target.shape) != tuple(input.shape):
        raise errors.RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                                  f"{list(input.shape)}")
    return apply(L.multilabel_margin_loss, (input, target), {"reduction": r})


NAMES = ("kl_div margin_ranking_loss hinge_embedding_loss soft_margin_loss cosine_embedding_loss poisson_nll_loss "
         "gaussian_nll_loss multilabel_soft_margin_loss pairwise_distance triplet_margin_loss multi_margin_loss "
         "triplet_margin_with_distance_loss linear_cross_entropy ctc_loss "
         "multilabel_margin_loss").split()
