"""Aliases: another public name for a public name, one line each (``torch.absolute`` is ``torch.abs``).

An alias is bound in every namespace its target is (``torch``, ``Tensor``, ``F``, ``linalg``);
an in-place alias names the in-place target (``absolute_`` of ``abs_``).
"""
from __future__ import annotations

from .registry import alias

alias("absolute", "abs")
alias("absolute_", "abs_")
alias("moveaxis", "movedim")
