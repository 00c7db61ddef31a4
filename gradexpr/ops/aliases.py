"""Aliases: another public name for a public name, one line each (``torch.absolute`` is ``torch.abs``).

An alias is bound in every namespace its target is (``torch``, ``Tensor``, ``F``, ``linalg``);
an in-place alias names the in-place target (``absolute_`` of ``abs_``).
"""
from __future__ import annotations

from .registry import alias

alias("absolute", "abs")
alias("absolute_", "abs_")
alias("moveaxis", "movedim")
alias("arcsin", "asin")
alias("arcsin_", "asin_")
alias("arccos", "acos")
alias("arccos_", "acos_")
alias("arctan", "atan")
alias("arctan_", "atan_")
alias("fix", "trunc")
alias("fix_", "trunc_")
alias("arctan2", "atan2")
alias("arctan2_", "atan2_")
alias("not_equal", "ne")
alias("not_equal_", "ne_")
alias("less", "lt")
alias("less_", "lt_")
alias("less_equal", "le")
alias("less_equal_", "le_")
alias("greater", "gt")
alias("greater_", "gt_")
alias("greater_equal", "ge")
alias("greater_equal_", "ge_")
alias("arcsinh", "asinh")
alias("arcsinh_", "asinh_")
alias("arccosh", "acosh")
alias("arccosh_", "acosh_")
alias("arctanh", "atanh")
alias("arctanh_", "atanh_")
