"""Aliases: another public name for a public name, one line each (``torch.absolute`` is ``torch.abs``)."""
from __future__ import annotations

from .registry import alias  # noqa: F401
