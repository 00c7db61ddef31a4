"""The losses PyTorch implements natively (their own node): soft_margin_loss, multi_margin_loss,
multilabel_margin_loss (kl_div is written with the pointwise xlogy). The other losses are ATen or
Python composites (``nn/functional_losses.py``) and record the nodes of their parts.

A late family (``registry.LATE_FAMILIES``): loaded with ``torch.nn``, not at start-up.
"""
from __future__ import annotations

import numpy as np

from ..graph import NOT_IMPLEMENTED_NODE
from . import backward_ops as _bw
from .common import _NOT_FLOAT, _apply, _exp, _kernel, _log
from .pointwise import _log1p
from .nn import _reduce
from .reductions import _norm, _norm_dtype, _norm_grad
from .registry import NotDifferentiable, op


# ---------------------------------------------------------------- soft margin
def _soft_margin(x, y, reduction="mean"):
    # ATen: neg_out(output, input).mul_(target).exp_().log1p_(), laid out as the input is: exp is VML's
    # (mkl.py), log1p the log1p kernel's (SLEEF's, sleef.py)
    with np.errstate(all="ignore"):
        loss = _log1p(_exp(np.asarray((-x) * y, x.dtype))).astype(x.dtype)
    return _reduce(loss, reduction, (x,))


soft_margin_loss = op("soft_margin_loss", "SoftMarginLossBackward0", _soft_margin, ("self", "target"),
                      self=lambda grad, self, target, reduction="mean": _bw.soft_margin_grad(grad, self, target,
                                                                                              reduction),
                      dtype=_kernel("soft_margin_loss", "promote", _NOT_FLOAT), domain="real")


# ---------------------------------------------------------------- multi margin
def _multi_margin_terms(x, target, p, margin, weight):
    """Per sample and class: max(0, margin - x[y] + x[j])^p (· w[y]), j != y (ATen's inner sum)."""
    c = x.dtype.type
    rows = np.arange(x.shape[0])
    z = c(margin) - x[rows, target][:, None] + x
    h = np.where(z > 0, z if p == 1 else z * z, c(0))
    if weight is not None:
        h = h * weight.astype(x.dtype)[target][:, None]
    h[rows, target] = 0
    return h, z


def _multi_margin(x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    """ATen's CPU kernel: each row's terms summed in order in the input's type and divided by the
    class count; for sum/mean the rows are accumulated in double (mean then divides by the row count)."""
    squeeze = x.ndim < 2
    x2 = x.reshape(1, -1) if squeeze else x
    t = np.asarray(target).reshape(-1).astype(np.int64)
    h, _ = _multi_margin_terms(x2, t, p, margin, weight)
    return _rows_reduced(x2, h, reduction, squeeze)


def _rows_reduced(x2, terms, reduction, squeeze):
    c = x2.dtype.type
    rows = []
    for row in terms:
        s = c(0)
        for v in row:
            s = c(s + v)
        rows.append(c(s / c(x2.shape[1])))
    if reduction == "none":
        out = np.array(rows, x2.dtype)
        return out.reshape(()) if squeeze else out
    total = 0.0
    for r in rows:
        total += float(r)
    if reduction == "mean":
        total /= x2.shape[0]
    return np.asarray(total, x2.dtype)


def _margin_scaled(d, x, x2, reduction, g):
    """The margin losses' backward kernels' last step from ``d``, each sample's derivative of its summed
    margins (``x2``: the input as rows): averaged over the classes, and the batch for "mean", times
    grad_output ``g``."""
    d = d / x2.shape[1]
    if reduction == "mean":
        d = d / x2.shape[0]
    local = d.reshape(x.shape).astype(x.dtype)
    g = g if reduction != "none" or x.ndim < 2 else g[:, None]
    return local * g


def _multi_margin_backward(g, x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    x2 = x.reshape(1, -1) if x.ndim < 2 else x
    t = np.asarray(target).reshape(-1).astype(np.int64)
    _, z = _multi_margin_terms(x2, t, p, margin, None)
    rows = np.arange(x2.shape[0])
    d = np.where(z > 0, 1 if p == 1 else 2 * z, 0).astype(x.dtype)
    if weight is not None:
        d = d * weight.astype(x.dtype)[t][:, None]
    d[rows, t] = 0
    d[rows, t] = -d.sum(1)
    return _margin_scaled(d, x, x2, reduction, g)


def _not_implemented(name):
    return NotDifferentiable(f"derivative for aten::{name} is not implemented")


# ATen's multi_margin_loss_backward, which has no derivative (a second derivative fails, as PyTorch's)
multi_margin_loss_backward = op(
    "multi_margin_loss_backward", NOT_IMPLEMENTED_NODE, _multi_margin_backward, ("grad_output", "self"),
    grad_output=_not_implemented("multi_margin_loss_backward"), self=_not_implemented("multi_margin_loss_backward"),
    dtype="first", broadcast=False, domain="distinct", batch="loop")


def _multi_margin_grad(grad, self, target, p=1, margin=1.0, weight=None, reduction="mean"):
    return _apply(multi_margin_loss_backward, (grad, self), {"target": target._data, "p": p, "margin": margin,
                                                             "weight": weight, "reduction": reduction})


multi_margin_loss = op("multi_margin_loss", "MultiMarginLossBackward0", _multi_margin, ("self", "target"),
                       self=_multi_margin_grad,
                       dtype=_kernel("multi_margin_loss_cpu", "first", _NOT_FLOAT), domain="distinct", twice=False)


# ---------------------------------------------------------------- multilabel margin
def _label_sets(target):
    """Per row: the target classes (up to the first -1) and a mask of them."""
    t = np.asarray(target).astype(np.int64)
    labels, masks = [], np.zeros(t.shape, bool)
    for i, row in enumerate(t):
        chosen = []
        for v in row:
            if v < 0:
                break
            chosen.append(int(v))
        labels.append(chosen)
        masks[i, chosen] = True
    return labels, masks


def _multilabel_margin(x, target, reduction="mean"):
    squeeze = x.ndim < 2
    x2 = x.reshape(1, -1) if squeeze else x
    labels, masks = _label_sets(np.asarray(target).reshape(x2.shape))
    c = x.dtype.type
    terms = []
    for i, chosen in enumerate(labels):
        row = []
        for j in chosen:
            for k in range(x2.shape[1]):
                z = c(c(1) - x2[i, j] + x2[i, k])
                if not masks[i, k] and z > 0:
                    row.append(z)
        terms.append(row)
    return _rows_reduced(x2, terms, reduction, squeeze)


def _multilabel_margin_backward(g, x, target, reduction="mean"):
    x2 = x.reshape(1, -1) if x.ndim < 2 else x
    labels, masks = _label_sets(np.asarray(target).reshape(x2.shape))
    d = np.zeros(x2.shape, x.dtype)
    for i, chosen in enumerate(labels):
        for j in chosen:
            z = 1 - x2[i, j] + x2[i]
            hit = (z > 0) & ~masks[i]
            d[i, j] -= hit.sum()
            d[i] += hit
    return _margin_scaled(d, x, x2, reduction, g)


multilabel_margin_loss_backward = op(
    "multilabel_margin_loss_backward", NOT_IMPLEMENTED_NODE, _multilabel_margin_backward, ("grad_output", "self"),
    grad_output=_not_implemented("multilabel_margin_loss_backward"),
    self=_not_implemented("multilabel_margin_loss_backward"), dtype="first", broadcast=False, domain="distinct",
    batch="loop")


def _multilabel_margin_grad(grad, self, target, reduction="mean"):
    return _apply(multilabel_margin_loss_backward, (grad, self), {"target": target._data, "reduction": reduction})


multilabel_margin_loss = op("multilabel_margin_loss", "MultilabelMarginLossBackward0", _multilabel_margin,
                            ("self", "target"), self=_multilabel_margin_grad,
                            dtype=_kernel("multilabel_margin_loss_forward_out_frame", "first", _NOT_FLOAT),
                            domain="distinct", twice=False)


# at::norm(self, p, dim, keepdim) (pairwise_distance's): NormBackward1, the formula of linalg's vector norm
norm_dim = op("norm_dim", "NormBackward1", _norm,
              self=lambda grad, self, result, ord, dim, keepdim: _norm_grad(grad, self, result, ord, dim, keepdim),
              dtype=_norm_dtype, domain="nonzero", forward_ad="transpose")


# ---------------------------------------------------------------- CTC (ATen's LossCTC.cpp, CPU)
_NEGINF = -np.inf


def _target_primes(targets, offset, stride, length, blank):
    """The extended target l' (blank, l1, blank, l2, …, blank) of one sample."""
    primes = np.full(2 * length + 1, blank, np.int64)
    primes[1::2] = targets[offset + stride * np.arange(length)] if length else primes[1::2]
    return primes


def _lse3(a, b, c):
    """log(exp(a-m) + exp(b-m) + exp(c-m)) + m with m the largest (0 when all are -inf), in their dtype."""
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == _NEGINF, np.zeros_like(m), m)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m


def _ctc_layout(targets, target_lengths):
    """Each sample's (offset, stride) in ``targets``: rows of a 2-d padded batch, runs of a 1-d concatenation."""
    if targets.ndim == 1:
        offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
        return targets, offsets, 1
    return targets.reshape(-1), np.arange(targets.shape[0], dtype=np.int64) * targets.shape[1], 1


def _ctc_forward(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """``_ctc_loss``: each sample's negative log likelihood, and log_alpha (batch, T, 2·S+1) for backward."""
    lp = log_probs
    T, N = lp.shape[:2]
    flat, offsets, stride = _ctc_layout(targets, target_lengths)
    max_len = int(max(target_lengths)) if len(target_lengths) else 0
    log_alpha = np.full((N, T, 2 * max_len + 1), _NEGINF, lp.dtype)
    nll = np.zeros(N, lp.dtype)
    for b in range(N):
        il, tl = int(input_lengths[b]), int(target_lengths[b])
        if il == 0:
            nll[b] = 0 if tl == 0 else np.inf
            continue
        primes = _target_primes(flat, offsets[b], stride, tl, blank)
        S = 2 * tl + 1
        la = log_alpha[b]
        la[0, 0] = lp[0, b, blank]
        if tl > 0:
            la[0, 1] = lp[0, b, primes[1]]
        skip = np.zeros(S, bool)
        skip[2:] = primes[2:] != primes[:-2]
        neg = np.full(S, _NEGINF, lp.dtype)
        for t in range(1, il):
            prev = la[t - 1, :S]
            la2 = np.concatenate([neg[:1], prev[:-1]])
            la3 = np.where(skip, np.concatenate([neg[:2], prev[:-2]]), neg)
            la[t, :S] = _lse3(prev, la2, la3) + lp[t, b, primes]
        if tl == 0:
            nll[b] = -la[il - 1, 0]
        else:
            l1, l2 = la[il - 1, 2 * tl], la[il - 1, 2 * tl - 1]
            m = max(l1, l2)
            m = lp.dtype.type(0) if m == _NEGINF else m
            with np.errstate(invalid="ignore"):
                nll[b] = -(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m)
    return nll, {"log_alpha": log_alpha}


def _ctc_backward(grad_out, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank,
                  zero_infinity):
    """``_ctc_loss_backward`` (eq. 16 of Graves et al.): log_beta, the log-sums of alpha·beta per label in
    ATen's order (s descending within each t), then ``(exp(lp) - exp(lcab + nll - lp)) * grad``."""
    lp = log_probs
    T, N, C = lp.shape
    flat, offsets, stride = _ctc_layout(targets, target_lengths)
    grad = np.full(lp.shape, _NEGINF, lp.dtype)
    for b in range(N):
        il, tl = int(input_lengths[b]), int(target_lengths[b])
        if zero_infinity and nll[b] == np.inf:
            grad[:, b] = 0
            continue
        S = 2 * tl + 1
        primes = _target_primes(flat, offsets[b], stride, tl, blank)
        la = log_alpha[b, :, :S]
        lb = np.full((T, S), _NEGINF, lp.dtype)
        g = grad[:, b]
        if il > 0:
            lb[il - 1, 2 * tl] = lp[il - 1, b, blank]
            g[il - 1, blank] = la[il - 1, 2 * tl] + lb[il - 1, 2 * tl]
            if tl > 0:
                c = primes[2 * tl - 1]
                lb[il - 1, 2 * tl - 1] = lp[il - 1, b, c]
                g[il - 1, c] = la[il - 1, 2 * tl - 1] + lb[il - 1, 2 * tl - 1]
            skip = np.zeros(S, bool)
            skip[:-2] = primes[2:] != primes[:-2]
            neg = np.full(S, _NEGINF, lp.dtype)
            for t in range(il - 2, -1, -1):
                nxt = lb[t + 1]
                lb2 = np.concatenate([nxt[1:], neg[:1]])
                lb3 = np.where(skip, np.concatenate([nxt[2:], neg[:2]]), neg)
                lb[t] = _lse3(nxt, lb2, lb3) + lp[t, b, primes]
            if il > 1:
                rows = slice(0, il - 1)
                ab = la[rows] + lb[rows]
                for s in range(S - 1, -1, -1):          # each label's log-sum, s descending as ATen adds them
                    c = primes[s]
                    cur = g[rows, c]
                    first = cur == _NEGINF
                    m = np.maximum(cur, ab[:, s])
                    with np.errstate(invalid="ignore"):
                        added = np.log(np.exp(cur - m) + np.exp(ab[:, s] - m)) + m
                    g[rows, c] = np.where(first, ab[:, s], added)
        gr = grad_out[b]
        with np.errstate(invalid="ignore", over="ignore"):
            g[:il] = (np.exp(lp[:il, b]) - np.exp(g[:il] + nll[b] - lp[:il, b])) * gr
        g[il:] = 0
    return grad


# (its tensor inputs that can require grad: grad, log_probs and the loss itself, neg_log_likelihood,
# whose node the NotImplemented node's edges reach as PyTorch's do)
ctc_loss_backward = op("ctc_loss_backward", NOT_IMPLEMENTED_NODE,
                       lambda grad, log_probs, nll, targets, input_lengths, target_lengths, log_alpha, blank,
                       zero_infinity: _ctc_backward(grad, log_probs, targets, input_lengths, target_lengths, nll,
                                                    log_alpha, blank, zero_infinity),
                       ("grad", "log_probs", "neg_log_likelihood"), domain="real", broadcast=False, dtype="promote",
                       grad=_not_implemented("_ctc_loss_backward"), log_probs=_not_implemented("_ctc_loss_backward"),
                       neg_log_likelihood=_not_implemented("_ctc_loss_backward"))


def _ctc_grad(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result, log_alpha):
    return _apply(ctc_loss_backward, (grad, log_probs, result),
                  {"targets": targets, "input_lengths": input_lengths, "target_lengths": target_lengths,
                   "log_alpha": log_alpha._data, "blank": blank, "zero_infinity": zero_infinity})


ctc_loss = op("ctc_loss", "CtcLossBackward0",
              lambda lp, targets, input_lengths, target_lengths, blank, zero_infinity: _ctc_forward(
                  lp, targets, input_lengths, target_lengths, blank, zero_infinity),
              ("log_probs",), log_probs=_ctc_grad, dtype="first", domain="real", twice=False)
