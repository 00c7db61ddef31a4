"""Errors located in the program: any exception from evaluating a node becomes a located
``gradexpr.errors.GxError`` (Python's own exceptions keep their type name and message; the
object a program raised itself is kept as ``_gx_original``), and errors about a call's
arguments are worded as PyTorch words them.
"""
from __future__ import annotations

import builtins as _py
import re

from gradexpr import errors

from .. import ast


# ============================================================================ errors

_ERROR_CLASSES = {
    "RuntimeError": errors.RuntimeError, "TypeError": errors.TypeError, "ValueError": errors.ValueError,
    "IndexError": errors.IndexError, "KeyError": errors.KeyError, "NameError": errors.NameError,
    "AttributeError": errors.AttributeError, "AssertionError": errors.AssertionError,
    "NotImplementedError": errors.NotImplementedError, "ZeroDivisionError": errors.ZeroDivisionError,
    "RecursionError": errors.RecursionError,
}
_dynamic_classes: dict = {}


def _error_class(exc_type):
    cls = _ERROR_CLASSES.get(exc_type.__name__) if exc_type.__module__ == "builtins" else None
    if cls is not None:
        return cls
    cls = _dynamic_classes.get(exc_type)
    if cls is None:
        name = exc_type.__name__
        cls = None
        if exc_type.__module__ == "builtins":
            try:
                cls = type(name, (errors.GxError, exc_type), {"kind": name, "__module__": __name__})
                cls("probe")
            except Exception:
                cls = None
        if cls is None:
            kind = f"__main__.{exc_type.__qualname__}" if exc_type.__module__ == "__main__" else name
            cls = type(name, (errors.GxError,), {"kind": kind, "__module__": __name__})
        _dynamic_classes[exc_type] = cls
    return cls


def _convert(exc: BaseException) -> errors.GxError:
    """A GxError standing for Python exception ``exc`` (same type name and message)."""
    if isinstance(exc, errors.GxError):
        return exc
    if isinstance(exc, RecursionError):
        new = errors.RecursionError("maximum recursion depth exceeded")
    else:
        msg = errors.exception_text(exc)
        if msg.startswith("'Size' object"):     # Python names the class; PyTorch's is torch.Size
            msg = "'torch.Size'" + msg[6:]
        new = _error_class(type(exc))(msg)
        new._gx_original = exc      # what the program sees when it catches it
    new.__cause__ = exc
    return new


def located(exc: BaseException, filename: str, line: int, col: int, end_col: int | None = None) -> errors.GxError:
    """``exc`` as a ``GxError`` located at ``filename:line:col`` (unless it already has a
    location). Python's own exceptions become a GxError with their type name as ``kind``
    and their message (for KeyError, the repr of the key), chained with ``__cause__``."""
    err = _convert(exc)
    if err.line is None:
        err.at(filename, line, col, end_col)
    return err


def _loc(exc, filename, node):
    err = _convert(exc)
    if err.line is None:
        err.at(filename, node.line, node.col, node.end_col if node.end_line == node.line else None)
    return err


def _kind_error(kind: str, message: str, base=Exception) -> errors.GxError:
    return _error_class(getattr(_py, kind, None) or type(kind, (base,), {}))(message)


_COMPARISONS = frozenset(("<", ">", "==", "!=", "<=", ">=", "is", "is not", "in", "not in"))
_OPERAND_NAMES = {"**": "** or pow()"}


def _operand_error(exc, symbol, a, b):
    """``tensor + [1, 2]``: Python's words, as PyTorch's operators give them ("unsupported operand
    type(s) for +: 'Tensor' and 'list'"), not the engine's complaint about an argument."""
    if isinstance(exc, TypeError) and str(exc).startswith("expected Tensor as element"):
        if symbol in _COMPARISONS:
            new = errors.TypeError(f"'{symbol}' not supported between instances of '{type(a).__name__}' and "
                                   f"'{type(b).__name__}'")
        else:
            new = errors.TypeError(f"unsupported operand type(s) for {_OPERAND_NAMES.get(symbol, symbol)}: "
                                   f"'{type(a).__name__}' and '{type(b).__name__}'")
        new.__cause__ = exc
        return new
    return exc


def _callee_error(exc, f, name, args, attribute_call=False, kwargs=None):
    """An error about the arguments of an engine function, in PyTorch's words and naming the
    function as the program wrote it: a TypeError about its signature (``zeros() got an
    unexpected keyword argument 'x'``, ``Tensor.float() takes ...``, not
    ``_factory.<locals>.make()``), and a number where a tensor was needed (``rand_like():
    argument 'input' (position 1) must be Tensor, not float``, not ``'float' object has no
    attribute '_data'``). ``attribute_call``: the program called it as ``obj.name(...)``."""
    kind = type(exc)
    if kind is not AttributeError and not isinstance(exc, (TypeError, ValueError)):
        return exc
    module = getattr(f, "__module__", None) or ""
    if not module.startswith("gradexpr.") or module.startswith("gradexpr.grammar"):
        return exc
    qualname = getattr(f, "__qualname__", None) or name
    if getattr(f, "__name__", None) == "linalg_" + name:
        name = f.__name__               # torch.linalg.X's parser says linalg_X(), its native name
    owner = getattr(f, "__self__", None)
    if not attribute_call and type(owner).__name__ in _TENSOR_CLASSES:
        name = _bound_name(owner, f, name)
    if isinstance(exc, (TypeError, ValueError)):
        # a call PyTorch's parser refuses fails there, before any kernel: a TypeError in its words
        parsed = _binding_error(f, owner, name, args, kwargs)
        if parsed is not None:
            parsed.__cause__ = exc
            return parsed
        if not isinstance(exc, TypeError):
            return exc
    if isinstance(exc, TypeError) and type(owner).__name__ in _TENSOR_CLASSES:
        worded = _tensor_method_error(kind, str(exc), f, owner, name, attribute_call)
        if worded is not None:
            new = errors.TypeError(worded)
            new.__cause__ = exc
            return new
    public = f"{type(owner).__name__}.{name}" if owner is not None and not isinstance(owner, type) else name
    message = str(exc)
    not_tensor = re.match(r"'(\w+)' object has no attribute '_\w+'$" if kind is AttributeError else
                          r"expected Tensor as element \d+ in argument \d+, but got (\w+)$", message)
    if not_tensor:
        position = next((i for i, a in enumerate(args) if type(a).__name__ == not_tensor[1]), None)
        if position is None:
            return exc
        new = errors.TypeError(f"{name}(): argument '{_parameter_name(f, position)}' (position {position + 1}) "
                               f"must be Tensor, not {not_tensor[1]}")
    elif kind is TypeError and (missing := _MISSING.match(message)) and \
            module.startswith(("gradexpr.composites.", "gradexpr.tensor")) and name not in _PYTHON_LEVEL:
        # PyTorch's argument parser, not Python, reports it: 'roll() missing 1 required positional
        # arguments: "shifts"' (its plural is on 1, not on more: that is how it reads)
        n = int(missing[1])
        names = ", ".join(f'"{a}"' for a in re.findall(r"'(\w+)'", missing[2]))
        new = errors.TypeError(f"{name}() missing {n} required positional argument{'s' if n == 1 else ''}: {names}")
    elif kind is TypeError and message.startswith(qualname + "() ") and public != qualname:
        new = errors.TypeError(public + message[len(qualname):])
    else:
        return exc
    new.__cause__ = exc
    return new


_TENSOR_CLASSES = frozenset(("Tensor", "Parameter"))
_TAKES = re.compile(r"[\w.<>]+\(\) takes (?:from (\d+) to )?(\d+) positional arguments? but (\d+) (?:was|were) given$")
_UNEXPECTED_KEYWORD = re.compile(r"[\w.<>]+\(\) got an unexpected keyword argument '\w+'$")


def _binding_error(f, owner, name, args, kwargs):
    """PyTorch's parser's error for a call of a Tensor method or torch function, from its recorded binding
    signatures (None when none are recorded or PyTorch would take the call)."""
    from gradexpr.signatures import binding_call_error
    if type(owner).__name__ in _TENSOR_CLASSES:
        return binding_call_error(name, (owner,) + tuple(args), kwargs or {}, True)
    from gradexpr import api
    if owner is None and api.is_torch_function(f, name):     # (not one of F's of the same name)
        return binding_call_error(name, tuple(args), kwargs or {}, False)
    return None


def _bound_name(owner, method, fallback):
    """The name a tensor's method is bound under (``m = x.add; m()`` is add's call, as PyTorch's parser
    names it, not ``m``'s)."""
    func = getattr(method, "__func__", None)
    names = [key for cls in type(owner).__mro__ for key, value in vars(cls).items() if value is func]
    return next((key for key in names if not key.startswith("__")), names[0] if names else fallback)


def _tensor_method_error(kind, message, f, owner, name, attribute_call):
    """A Tensor method's complaint about its arguments in PyTorch's words, or None to keep it.

    A method of no parameters is METH_NOARGS in PyTorch, and CPython words its errors naming
    the class: ``TensorBase`` through ``x.item(1)`` (the method's descriptor), the tensor's own
    class through a bound method (``m = x.item; m(1)``). The others go through PyTorch's
    argument parser, which does not count ``self`` as Python does.
    """
    cls = "TensorBase" if attribute_call else type(owner).__name__
    if message.startswith("TensorBase."):             # the generated bindings' METH_NOARGS words
        return None if attribute_call else cls + message[len("TensorBase"):]
    if kind is not _py.TypeError:                     # not Python's own words about the call
        return None
    func = getattr(f, "__func__", None)
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    if not attribute_call and "<locals>" not in func.__qualname__ and not func.__name__.startswith("_"):
        name = func.__name__            # called through a bound method: the method's own name
    # (a keyword-only ``out`` is the torch function's: no method takes it)
    keyword_only = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    takes_nothing = code.co_argcount == 1 and keyword_only in ((), ("out",)) and not code.co_flags & 0x0C
    takes = _TAKES.match(message)
    if takes:
        given = int(takes[3]) - 1
        if takes_nothing:
            return f"{cls}.{name}() takes no arguments ({given} given)"
        most = int(takes[2]) - 1
        least = int(takes[1]) - 1 if takes[1] else most
        span = f"{most} positional argument{'s' if most != 1 else ''}" if least == most else \
            f"from {least} to {most} positional arguments"
        return f"{name}() takes {span} but {given} {'was' if given == 1 else 'were'} given"
    if takes_nothing and _UNEXPECTED_KEYWORD.match(message):
        return f"{cls}.{name}() takes no keyword arguments"
    return None


_MISSING = re.compile(r"[\w.<>]+\(\) missing (\d+) required positional arguments?: (.+)$")
# torch functions that PyTorch writes in Python: a missing argument is Python's own message there
_PYTHON_LEVEL = frozenset(("split", "norm", "meshgrid", "einsum", "tensordot", "broadcast_tensors", "cdist",
                           "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "unique"))


def _parameter_name(f, position):
    import inspect
    try:
        return list(inspect.signature(f).parameters)[position]
    except (TypeError, ValueError, IndexError):
        return "input"


def _callee_name(func):
    if type(func) is ast.Name:
        return func.id
    if type(func) is ast.Attribute:
        return func.attr
    return "function"


def original(err):
    """The exception a program sees for ``err``: what it raised itself, else ``err``."""
    return err.__dict__.get("_gx_original", err) if hasattr(err, "__dict__") else err


def catchable(err):
    """Whether a program may handle ``err`` (``except``, a ``with``'s ``__exit__``): never a limit."""
    return isinstance(err, Exception) and not isinstance(err, errors.LimitError)
