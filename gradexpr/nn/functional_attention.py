"""``F.multi_head_attention_forward`` and ``F.scaled_dot_product_attention`` as torch/nn/functional.py
and ATen's math attention (``_scaled_dot_product_attention_math``) compute them, with torch calls.

PyTorch runs some calls through fused kernels instead (``torch._native_multi_head_attention`` for an
eval-mode, batch-first self-attention without grad; the CPU flash kernel for attention without
dropout): the same mathematics, rounded differently in the last bits, and whose results print
``grad_fn`` of their own. gradexpr computes every call the unfused way."""
from __future__ import annotations

import math

from .. import errors
from .. import functions as T
from .. import nn_functional as NF

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention", "NAMES"]


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    if mask is not None:
        _mask_dtype = mask.dtype
        _mask_is_float = T.is_floating_point(mask)
        if _mask_dtype != T.dtypes.bool_ and not _mask_is_float:
            raise errors.AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and _mask_dtype != other_type:
            from ..warn import warn
            warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                 "instead.")
        if not _mask_is_float:
            mask = T.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, T.Tensor):
        return input.dtype
    raise errors.RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise errors.AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                        f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise errors.AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                                        f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise errors.AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                        f"but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise errors.AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                        f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise errors.AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or "
                                        f"1-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise errors.AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                                            f"3-D but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected_shape:
                    raise errors.AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got "
                                                f"{attn_mask.shape}")
        return False
    raise errors.AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                                "query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = NF.linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = NF.linear(q, w_q, b_q)
        kv_proj = NF.linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return NF.linear(q, w_q, b_q), NF.linear(k, w_k, b_k), NF.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for w, shape, name in ((w_q, (Eq, Eq), "query"), (w_k, (Eq, Ek), "key"), (w_v, (Eq, Ev), "value")):
        if tuple(w.shape) != shape:
            raise errors.AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for b, name in ((b_q, "query"), (b_k, "key"), (b_v, "value")):
        if b is not None and tuple(b.shape) != (Eq,):
            raise errors.AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    return NF.linear(q, w_q, b_q), NF.linear(k, w_k, b_k), NF.linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len, _, _ = key.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise errors.RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                                  "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise errors.AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise errors.AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise errors.AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                        f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise errors.AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise errors.AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for w, name in ((q_proj_weight, "q"), (k_proj_weight, "k"), (v_proj_weight, "v")):
            if w is None:
                raise errors.AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise errors.RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                          f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise errors.RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                          f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise errors.RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise errors.AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise errors.AssertionError("bias cannot be added to static value.")
        k = T.cat([k, bias_k.repeat(1, bsz, 1)])
        v = T.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = NF.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = NF.pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise errors.AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise errors.AssertionError("bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = static_v
    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = T.cat([k, T.zeros(zero_attn_shape, dtype=k.dtype)], dim=1)
        v = T.cat([v, T.zeros(zero_attn_shape, dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = NF.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = NF.pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise errors.AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                        f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise errors.AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                        f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        _B, _Nt, E = q.shape
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise errors.AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            attn_output_weights = T.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = T.bmm(q_scaled, k.transpose(-2, -1))
        attn_output_weights = NF.softmax(attn_output_weights, dim=-1)
        if dropout_p > 0.0:
            attn_output_weights = NF.dropout(attn_output_weights, p=dropout_p)
        attn_output = T.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = NF.linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = attn_output_weights.mean(dim=1)
        if not is_batched:
            attn_output = attn_output.squeeze(1)
            attn_output_weights = attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    attn_output = NF.linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """ATen's ``_scaled_dot_product_attention_math``: both sides scaled by sqrt(scale), a boolean mask
    turned into -inf, a causal mask from ``tril``, softmax (0 for a row masked entirely), dropout."""
    if is_causal and attn_mask is not None:
        raise errors.RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                                  "is_causal=True")
    E = query.size(-1)
    s = 1.0 / math.sqrt(E) if scale is None else scale
    scaling = math.sqrt(abs(s))
    q = query * (-scaling if s < 0 else scaling)
    if is_causal:
        L, S = query.size(-2), key.size(-2)
        attn_mask = T.ones(L, S, dtype=T.dtypes.bool_).tril()
    if attn_mask is not None and attn_mask.dtype == T.dtypes.bool_:
        attn_mask = T.zeros_like(attn_mask, dtype=query.dtype).masked_fill_(attn_mask.logical_not(), float("-inf"))
    if enable_gqa and key.size(-3) != query.size(-3):
        repeat = query.size(-3) // key.size(-3)
        key = key.repeat_interleave(repeat, dim=-3)
        value = value.repeat_interleave(repeat, dim=-3)
    attn = T.matmul(q, key.transpose(-2, -1) * scaling)
    if attn_mask is not None:
        attn = attn + attn_mask
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        attn = NF.dropout(attn, dropout_p, True)
    return T.matmul(attn, value)


def _safe_softmax(x):
    """``at::_safe_softmax``: softmax over the last dim, rows that are all -inf give zeros (not NaN)."""
    out = NF.softmax(x, dim=-1)
    masked = (x == float("-inf")).all(dim=-1, keepdim=True)
    return out.masked_fill(masked, 0.0) if bool(masked.any()) else out


NAMES = ["multi_head_attention_forward", "scaled_dot_product_attention"]
