"""The interpreter of gradexpr programs (see ``core.py``)."""
from .core import Interpreter
from .located import located
from .policy import SAFE_ATTRIBUTES, attribute_getter

__all__ = ["Interpreter", "located", "attribute_getter", "SAFE_ATTRIBUTES"]
